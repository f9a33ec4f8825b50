"""Implied facts: the versions a facts file leaves out that a stated release pins exactly. Pure.

A hand-written report (or a fleet's partial facts file) often gives SGLang's release and not the torch,
kernel package or FlashInfer it runs with. SGLang's wheel pins them (`torch==2.9.1`, `sgl-kernel==0.3.21`,
`flashinfer_python==0.6.3`), torch's wheel pins its Triton, and components.json records those pins (`requires`,
read from each wheel's METADATA). This step fills such an absent version with the pinned one, marked as implied
with the pin and its source, and judges the stack twice: on the stated facts and with the implied ones.

The rules that keep it safe (a false pass is the worst bug):
- an implied fact can make a check fail or a feature blocked (the reason then says "implied: sglang 0.5.9 pins
  flashinfer-python==0.6.3 (source)"), never make anything ok: a verdict that is ok only with implied facts stays
  as the stated facts leave it (unknown, with a reason saying "only implied facts");
- only a value the facts file lacks is implied (the package entry missing, or its version null/missing); a stated
  version is never replaced and `installed: false` stays not installed;
- a pin is used only when it is exact (`==X`), on a package the manifests know, from a release record whose pins
  were read (a record marked `inferred` is used only when its `requires_read` says the pins were read from the
  wheel); a pin with an environment marker (`requires_read.markers`) only when the facts decide the marker
  (the machine, the Python version; a pin under an extra never); for a release with CUDA variants, only when
  the stated variant is the PyPI build the pins were read from; a stated build's own pins (`variants[].requires`:
  torch 2.9.1+cu128 pins nvidia-cudnn-cu12==9.10.2.21 on x86_64) only when its record says they were read from
  that build's wheel (`requires_read` not marked inferred); two stated releases that pin different versions of
  one package imply neither;
- live probes never produce implied facts: the pipeline calls this for `--facts` input only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from stackcheck.facts.versions import readable, same_public, variant_of
from stackcheck.knowledge.loader import Manifests, pypi_variant
from stackcheck.lazy_re import lazy
from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple, cast
from stackcheck.verdicts.context import Context

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.documents.types import ImpliedRecord, Report
    from stackcheck.facts.model import Facts
    from stackcheck.knowledge.types import Release
    from stackcheck.verdicts.types import CheckVerdict, FeatureVerdict

#: verdicts that say "this will not work": the only ones an implied fact may produce
BAD = frozenset({"blocked", "failed", "warning"})
#: the environment markers a facts file can decide; any other name in a marker leaves the pin not implied
_MARKER_NAMES = (
    "python_full_version",
    "python_version",
    "platform_machine",
    "platform_system",
    "sys_platform",
    "os_name",
    "platform_python_implementation",
    "implementation_name",
    "implementation_version",
    "platform_release",
    "platform_version",
    "extra",
)
_MARKER_WORDS = lazy(r"\b(" + "|".join(_MARKER_NAMES) + r")\b")
_EXACT = lazy(r"^\s*===?\s*([A-Za-z0-9][A-Za-z0-9.+!_-]*)\s*$")


class Implied(NamedTuple):
    """One implied fact: `package`'s version is `version` because `by` `by_version` pins it. (A NamedTuple,
    not a dataclass: importing dataclasses costs ~8 ms of every start.)"""

    package: str
    version: str
    by: str
    by_version: str
    pin: str
    source: Any
    entry_missing: bool  # the facts file had no entry for the package: its being installed is implied too
    by_implied: bool  # `by`'s own version was implied (a chain: sglang -> torch -> triton)

    def text(self) -> str:
        """ "sglang 0.5.9 pins flashinfer-python==0.6.3 (sglang-wheels)"."""
        by = f"{self.by} {self.by_version}" + (" (itself implied)" if self.by_implied else "")
        return f"{by} pins {self.package}{self.pin} ({source_text(self.source)})"

    def record(self) -> ImpliedRecord:
        """The report's `implied[]` entry (schemas/report.schema.json)."""
        return {
            "fact": f"pkg.{self.package}.version",
            "value": self.version,
            "installed_implied": self.entry_missing,
            "from": {"package": self.by, "version": self.by_version, "implied": self.by_implied},
            "pin": f"{self.package}{self.pin}",
            "source": self.source,
            "text": f"implied: {self.text()}",
        }


def _tree_copy(value: Any) -> Any:
    """A copy of a facts tree (dicts and lists copied, the rest shared: facts are JSON values, so this is what
    copy.deepcopy gives, without importing copy and weakref into every report from saved facts)."""
    if isinstance(value, dict):
        return {k: _tree_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tree_copy(v) for v in value]
    return value


def source_text(source: Any) -> str:
    """A short name for a source: its id, else its title (first of a list)."""
    if isinstance(source, list) and source:
        return source_text(source[0]) + (f" +{len(source) - 1}" if len(source) > 1 else "")
    if isinstance(source, str):
        return source
    if isinstance(source, Mapping):
        title = source.get("title")
        short = str(title).split(" (", 1)[0] if isinstance(title, str) and title else None
        return str(source.get("id") or short or source.get("url") or source.get("path") or "source")
    return "source"


# ---- which facts are implied -----------------------------------------------------------------------


def imply(facts: Facts, manifests: Manifests) -> tuple[Facts, list[Implied]]:
    """The facts with every implied version filled in, and what was implied (empty: nothing to imply)."""
    packages = facts.get("packages")
    if not isinstance(packages, dict):
        return facts, []
    banned: set[str] = set()
    while True:
        filled, implied, conflicts = _fill(facts, packages, manifests, banned)
        if not conflicts - banned:
            break
        banned |= conflicts  # two releases pin different versions: imply neither (and what follows from them)
    if not implied:
        return facts, []
    out = cast("Facts", {**facts, "packages": filled})
    return out, implied


def _fill(
    facts: Facts, packages: Mapping[str, Any], manifests: Manifests, banned: set[str]
) -> tuple[dict[str, Any], list[Implied], set[str]]:
    out: dict[str, Any] = _tree_copy(dict(packages))
    known = set(manifests.components.get("packages") or {})
    implied: dict[str, Implied] = {}
    conflicts: set[str] = set()
    changed = True
    while changed:  # chains: sglang pins torch, torch pins triton
        changed = False
        for name in sorted(out):
            version = _version(out.get(name))
            rel = _release(manifests, name, version) if version else None
            if rel is None or version is None:
                continue
            for requires, markers, source, curated in _pin_sets(rel, out.get(name), version):
                for dep, spec in requires.items():
                    pinned = _exact(spec)
                    if (dep not in known and not curated) or dep in banned or pinned is None:
                        continue
                    if dep in markers and not marker_holds(str(markers[dep]), facts):
                        continue
                    if dep in implied:
                        if not same_public(implied[dep].version, pinned):
                            conflicts.add(dep)
                        continue
                    if not _absent(packages.get(dep)):
                        continue  # stated (a version, or not installed): never replaced
                    implied[dep] = Implied(
                        package=dep,
                        version=pinned,
                        by=name,
                        by_version=version,
                        pin=f"=={pinned}",
                        source=source,
                        entry_missing=not isinstance(packages.get(dep), dict),
                        by_implied=name in implied,
                    )
                    entry = dict(out.get(dep) or {}) if isinstance(out.get(dep), dict) else {}
                    entry.pop("error", None)
                    entry.update(installed=True, version=pinned, implied=True)  # implied: its build is not known
                    out[dep] = entry
                    changed = True
    return out, list(implied.values()), conflicts


def _version(entry: Any) -> str | None:
    if not isinstance(entry, dict) or entry.get("installed") is False:
        return None
    v = entry.get("version")
    return v if isinstance(v, str) and v else None


def _absent(entry: Any) -> bool:
    """The facts file does not give this package's version: no entry, or one without a version that does
    not say `installed: false`."""
    if not isinstance(entry, dict):
        return entry is None
    return entry.get("installed") is not False and not isinstance(entry.get("version"), str)


def _release(manifests: Manifests, name: str, version: str) -> Release | None:
    """The release whose version is the stated one without its local tag (a release version with a tag of
    its own is never it); versions in packaging's written form are compared without importing packaging."""
    for rel in manifests.releases(name):
        rv = str(rel.get("version", ""))
        if "+" not in rv and readable(rv) and same_public(version, rv):
            return rel
    return None


def _pin_sets(rel: Release, entry: Any, version: str) -> list[tuple[Mapping[str, Any], Mapping[str, Any], Any, bool]]:
    """The pins of a stated release that may imply facts, as (requires, markers, source, curated): the
    release's own `requires` where _pins_usable allows them (only packages the manifests know), and the pins
    of the stated CUDA build (`variants[].requires`, read from that build's wheel METADATA: torch 2.9.1+cu128
    pins nvidia-cudnn-cu12==9.10.2.21), which name packages the manifests do not track (curated: recorded for
    the rules that read them). A build's pins are used only when the facts state the build and its record
    says they were read from that build's wheel (`requires_read`, not marked inferred)."""
    out: list[tuple[Mapping[str, Any], Mapping[str, Any], Any, bool]] = []
    if _pins_usable(rel, entry, version):
        read = rel.get("requires_read")
        markers = dict((read or {}).get("markers") or {})
        out.append((rel.get("requires") or {}, markers, (read or {}).get("source") or rel.get("source"), False))
    stated = entry.get("variant") if isinstance(entry, dict) and isinstance(entry.get("variant"), str) else None
    variant = stated or variant_of(version)
    for record in rel.get("variants") or []:
        if not isinstance(record, dict) or variant is None or record.get("variant") != variant:
            continue
        build_read = record.get("requires_read")
        pins = record.get("requires")
        if not isinstance(build_read, dict) or build_read.get("inferred") or record.get("inferred"):
            continue  # pins not read from the build's own wheel (second-hand) never imply a fact
        if isinstance(pins, dict):
            out.append((pins, dict(build_read.get("markers") or {}), build_read.get("source"), True))
    return out


def _pins_usable(rel: Release, entry: Any, version: str) -> bool:
    """The release's pins were read (not inferred), and, for a release with CUDA variants, the installed
    build is the one they were read from (PyPI's: a CPU build of torch pins no Triton at all)."""
    if rel.get("inferred") and "requires_read" not in rel:
        return False
    variants = rel.get("variants") or []
    if not variants:
        return True
    stated = entry.get("variant") if isinstance(entry, dict) and isinstance(entry.get("variant"), str) else None
    variant = stated or variant_of(version)
    return variant is not None and variant == pypi_variant(rel)


def _exact(spec: Any) -> str | None:
    return _exact_group(spec) if isinstance(spec, str) and "," not in spec and "*" not in spec else None


#: what follows the first character of _EXACT's version (ASCII letters and digits, then these too)
_EXACT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.+!_-")


def _exact_group(spec: str) -> str | None:
    """`_EXACT.match(spec).group(1)`, None where it does not match, by string methods: `==` or `===` (the longer
    first, as the pattern tries it; the shorter leaves a `=` no version starts with), whitespace, a version of
    _EXACT_CHARS starting with a letter or digit. No pattern compiled on a plan's first run
    (tests/facts/test_string_readings.py holds the two equal on generated texts)."""
    t = spec.strip()
    for op in ("===", "=="):
        if t.startswith(op):
            rest = t[len(op) :].lstrip()
            if rest and rest[0].isascii() and rest[0].isalnum() and all(c in _EXACT_CHARS for c in rest):
                return rest
    return None


_CLAUSE = lazy(r'^\s*([a-z_]+)\s*(==|!=|<=|>=|<|>)\s*"([^"\\]*)"\s*$')
_COMPARE: dict[str, Any] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def simple_marker(marker: str, env: Mapping[str, str]) -> bool | None:
    """The markers the wheels in components.json carry (`platform_system == "Linux" and python_version <
    "3.13"`), decided without importing packaging (its markers module pulls in subprocess, dataclasses and
    tags: ~20 ms of a start): clauses `name OP "value"` joined by `and`, string names compared with == and !=,
    python_version as X.Y numbers. None for anything else, which packaging then decides
    (tests/facts/test_implied.py holds the two equal)."""
    if " or " in marker or "(" in marker:
        return None
    result = True
    for clause in marker.split(" and "):
        m = _CLAUSE.match(clause)
        if m is None or m.group(1) not in env:
            return None
        name, op, value = m.groups()
        if name == "python_version":
            if not re.fullmatch(r"\d{1,9}\.\d{1,9}", value) or not re.fullmatch(r"\d{1,9}\.\d{1,9}", env[name]):
                return None
            left: Any = tuple(int(x) for x in env[name].split("."))
            right: Any = tuple(int(x) for x in value.split("."))
        elif op in ("==", "!=") and not re.match(r"^\d", value):
            left, right = env[name], value
        else:
            return None
        result = result and bool(_COMPARE[op](left, right))
    return result


def marker_holds(marker: str, facts: Facts) -> bool:
    """Whether a Requires-Dist environment marker holds for the box the facts describe; False when it reads
    anything the facts do not say (an extra: the pin is not part of the base install). The boxes stackcheck
    audits run Linux."""
    system: Mapping[str, Any] = facts.get("system") or {}
    python = system.get("python") if isinstance(system.get("python"), str) else None
    impl = system.get("python_implementation")
    env: dict[str, str] = {"platform_system": "Linux", "sys_platform": "linux", "os_name": "posix", "extra": ""}
    if isinstance(system.get("machine"), str) and system.get("machine"):
        env["platform_machine"] = str(system["machine"])
    if python and re.match(r"^\d+\.\d+", python):
        env["python_version"] = ".".join(python.split(".")[:2])
        if python.count(".") >= 2:
            env["python_full_version"] = python
    if isinstance(impl, str) and impl:
        env["platform_python_implementation"] = impl
        env["implementation_name"] = impl.lower()
    used = set(_MARKER_WORDS.findall(marker))  # (one pattern: each name a whole word, as a search per name)
    if "extra" in used or used - set(env):
        return False
    simple = simple_marker(marker, env)
    if simple is not None:
        return simple
    from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName

    try:
        return bool(Marker(marker).evaluate(env))
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return False


# ---- the verdicts with implied facts -----------------------------------------------------------------


def apply(report: Report, ctx: Context, checks: bool = True) -> None:
    """Judge the stack again with the implied facts and merge into the report (features, checks, `implied`):
    a verdict the implied facts turn bad takes their reasons, each marked implied; every other verdict stays
    as the stated facts leave it. `ctx` holds the stated facts. `checks` False leaves the checks as the stated
    facts judged them (for a caller that shows no checks: `stackcheck plan`'s text, whose plan reads only the
    features), and their judging with the implied facts is not done."""
    facts, implied = imply(ctx.facts, ctx.manifests)
    if not implied:
        return
    from stackcheck.verdicts.engine import evaluate_check, evaluate_feature

    with_implied = Context(facts=facts, manifests=ctx.manifests, launch=ctx.launch)
    # evaluate_all's lists, less the items _merge never reads again: those the stated facts already make bad, and
    # those the report does not hold (a part of a report: pipeline.reevaluate's verdicts judged again)
    stated_features = {str(v.get("id")) for v in report.get("features") or []} - _bad_only(report.get("features") or [])
    features = [
        evaluate_feature(f, with_implied) for f in ctx.manifests.features if str(f.get("id")) in stated_features
    ]
    blame = _Blame(ctx, implied)
    report["implied"] = [i.record() for i in implied]
    # _merge copies the verdicts (of either kind) and adds `implied` to them and their reasons: the same shape
    report["features"] = cast(
        "list[FeatureVerdict]", _merge(report.get("features") or [], features, implied, blame, "features")
    )
    if not checks:
        return
    stated_checks = {str(v.get("id")) for v in report.get("checks") or []} - _bad_only(report.get("checks") or [])
    judged = [evaluate_check(c, with_implied) for c in ctx.manifests.checks if str(c.get("id")) in stated_checks]
    report["checks"] = cast("list[CheckVerdict]", _merge(report.get("checks") or [], judged, implied, blame, "checks"))


def _bad_only(stated: list[Any]) -> set[str]:
    """The ids whose every stated verdict is bad: _merge keeps such a verdict as it is, whatever the implied
    facts make of it, so judging it again with them would be thrown away."""
    bad = {str(v.get("id")) for v in stated if v.get("status") in BAD}
    return bad - {str(v.get("id")) for v in stated if v.get("status") not in BAD}


def _key(reason: Mapping[str, Any]) -> tuple[str, str]:
    return str(reason.get("rule")), str(reason.get("gpu") or "")


def _merge(
    stated: list[Any], judged: list[Any], implied: list[Implied], blame: _Blame, kind: str
) -> list[dict[str, Any]]:
    by_id = {str(v.get("id")): v for v in judged}
    out: list[dict[str, Any]] = []
    for a in stated:
        b = by_id.get(str(a.get("id")))
        if b is None or a.get("status") in BAD or b.get("status") not in BAD:
            item = dict(a)
            if b is not None and a.get("status") == "unknown" and b.get("status") == "ok":
                texts = [f"implied: {i.text()}" for i in implied]
                item["reasons"] = [
                    *(a.get("reasons") or []),
                    {
                        "rule": "implied-facts",
                        "result": "unknown",
                        "message": "only implied facts would make this ok ("
                        + "; ".join(texts)
                        + "): an implied fact never makes a verdict ok, state the versions to decide it",
                        "implied": texts,
                    },
                ]
            out.append(item)
            continue
        before = {_key(r): r.get("result") for r in a.get("reasons") or []}
        item = dict(b)
        reasons: list[dict[str, Any]] = []
        used: list[str] = []
        for r in b.get("reasons") or []:
            reason = dict(r)
            if before.get(_key(r)) != r.get("result"):
                texts = [f"implied: {i.text()}" for i in blame.of(kind, str(b.get("id")), _key(r), implied)]
                reason["implied"] = texts
                used += [t for t in texts if t not in used]
                if r.get("result") == "fail":
                    reason["message"] = f"{r.get('message', '')} [{'; '.join(texts)}]"
            reasons.append(reason)
        item["reasons"] = reasons
        item["implied"] = used or [f"implied: {i.text()}" for i in implied]
        out.append(item)
    return out


class _Blame:
    """Which implied facts a newly failing reason rests on: the stack is judged with each implied fact alone
    (on top of the stated facts); the facts whose addition alone fails the rule are named, else all of them.
    Each kind (features, checks) is judged alone only when a reason of that kind asks."""

    def __init__(self, ctx: Context, implied: list[Implied]) -> None:
        self.ctx = ctx
        self.implied = implied
        self._alone: dict[tuple[int, str], dict[str, set[tuple[str, str]]]] = {}

    def _failing_with(self, index: int, kind: str) -> dict[str, set[tuple[str, str]]]:
        if (index, kind) not in self._alone:
            from stackcheck.verdicts.engine import evaluate_check, evaluate_feature

            fact = self.implied[index]
            packages: dict[str, Any] = _tree_copy(dict(self.ctx.facts.get("packages") or {}))
            entry = dict(packages.get(fact.package) or {}) if isinstance(packages.get(fact.package), dict) else {}
            entry.pop("error", None)
            entry.update(installed=True, version=fact.version, implied=True)
            packages[fact.package] = entry
            facts = cast("Facts", {**self.ctx.facts, "packages": packages})
            alone = Context(facts=facts, manifests=self.ctx.manifests, launch=self.ctx.launch)
            # evaluate_all's verdicts of the one kind
            verdicts: list[Any] = (
                [evaluate_feature(f, alone) for f in self.ctx.manifests.features]
                if kind == "features"
                else [evaluate_check(c, alone) for c in self.ctx.manifests.checks]
            )
            self._alone[index, kind] = {
                str(v.get("id")): {_key(r) for r in v.get("reasons") or [] if r.get("result") == "fail"}
                for v in verdicts
            }
        return self._alone[index, kind]

    def of(self, kind: str, item: str, key: tuple[str, str], implied: list[Implied]) -> list[Implied]:
        if len(implied) == 1:  # those named alone, else all of them: the one fact either way, nothing to judge
            return list(implied)
        alone = [f for i, f in enumerate(implied) if key in self._failing_with(i, kind).get(item, set())]
        return alone or list(implied)
