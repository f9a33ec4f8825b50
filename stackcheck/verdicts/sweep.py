"""The release sweep by the facts' day: a feature or stack check left unknown because a package it reads is
installed with its version not known (a hand-written report, an image tagged `latest`, a fleet inventory
without versions) is judged once for every release of that package the facts' day admits, and concludes
only when every one of them agrees. Pure (facts + manifests in, reasons out); stackcheck.verdicts.engine
calls it after an item's own `quantify` sweep did not conclude.

Which releases: those the facts narrow the package to (`packages.NAME.candidates`), else every release the
manifests know that was uploaded by the facts' day (`collected_at`, components.json `uploaded`), and, for a
package boxes run from a git checkout (`dev_builds`), the first release after the day, which stands for the
code of that day. Releases the manifests do not know (older than the oldest they record, or a `.postN` they
skip) are not judged: the verdict's text says so.

When it concludes (a false pass is the worst bug):
- blocked / failed: every release swept is blocked (failed, per rule for a check), and a release the
  manifests know was uploaded after the day (or the facts narrow the release), so no release newer than the
  manifests know can be on the box. A day after the newest known release never concludes here (an item's own
  `quantify.rules` may, in the engine, where the data argues the failure holds for later releases).
- ok: every release swept is ok, and nothing unjudged can be on the box: the facts narrow the release, or
  components.json `every_release` says the manifests record every release the index served from the
  package's first through one uploaded after the day.
- A release judged unknown on the stated facts is judged again with the pins that release declares filled in
  for packages the facts do not mention (an exact pin as that version; a range pin marks the package
  installed, narrowed to the known releases in the range uploaded by the day): such a judgement counts only
  when it is blocked (failed), never ok, as implied facts never make anything ok (stackcheck.facts.implied).
- No day, no release swept, or any release unknown, not applicable, or disagreeing: None (the item stays
  unknown, as before).

Every reason it writes is marked `inferred` and says it is inferred from the facts' date (or candidates)
and which releases were swept."""

from __future__ import annotations

from stackcheck.facts.versions import parse_specifier, parse_version, version_in
from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple, cast
from stackcheck.verdicts import EFFECT_ORDER
from stackcheck.verdicts.context import Context

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from stackcheck.facts.model import Facts
    from stackcheck.knowledge.types import Check, Feature, Release
    from stackcheck.verdicts.types import Reason

    #: evaluates an item (a feature or a check) on other facts: the engine's evaluate_feature / evaluate_check
    Judge = Callable[[Feature | Check, Context], Mapping[str, Any]]

_BAD = frozenset({"blocked", "failed", "warning"})


class Judged(NamedTuple):
    """One release's verdict: its status, the failing reasons, and whether it rests on the release's
    implied pins (then only a bad status counts)."""

    version: str
    status: str
    reasons: list[Reason]
    implied: bool


class Swept(NamedTuple):
    """What the sweep concluded: "bad" (blocked / failed) or "ok", and the reasons to put first."""

    outcome: str
    effect: str | None
    reasons: list[Reason]


def swept_package(item: Feature | Check, ctx: Context, needs: list[str]) -> str | None:
    """The package the sweep runs over: the first of the item's `needs` (each alternative), its path's hops
    and its `quantify` package that is installed with its version not known and that the manifests have
    releases of (a package with builds on its own index only when it is the item's `quantify` package), then
    one the facts narrow to candidates; None when there is none."""
    names = [a for n in needs for a in n.split("|")]
    hops = cast("dict[str, Any]", item).get("path")
    if isinstance(hops, list):
        names += [str(h["package"]) for h in hops if isinstance(h, dict) and isinstance(h.get("package"), str)]
    quantify = item.get("quantify")
    own = str(quantify["package"]) if isinstance(quantify, dict) and isinstance(quantify.get("package"), str) else None
    # and a package the facts narrow to a few releases (packages.NAME.candidates: stated, or a release's range
    # pin filled in by _with_pins), which a rule may read though no `needs` names it
    narrowed = [
        str(n) for n, e in (ctx.facts.get("packages") or {}).items() if isinstance(e, dict) and "candidates" in e
    ]
    for name in dict.fromkeys([*names, *([own] if own else []), *narrowed]):
        if not (ctx.is_installed(name) and ctx.installed_version(name) is None and ctx.manifests.releases(name)):
            continue
        if name != own and "index_url" in ctx.manifests.package(name):
            # builds for other CUDA releases on its own index (torch, sgl-kernel): the version alone does not
            # say which build is there, and judging PyPI's build is an assumption only a `quantify` argues
            continue
        return name
    return None


def _oldest_first(versions: list[str]) -> list[str]:
    zero = parse_version("0")
    return sorted(versions, key=lambda v: parse_version(v) or zero)  # type: ignore[arg-type,return-value]


class _Window(NamedTuple):
    versions: list[str]  # oldest first
    later: list[str]  # known releases left out by the day, oldest first
    nearest: str | None  # the first release after the day, swept for a development build of that day
    narrowed: bool  # the facts' own candidates
    complete: bool  # nothing unjudged can be on the box (ok may conclude)


def _window(ctx: Context, name: str, day: str | None, candidates: list[str] | None) -> _Window | None:
    if candidates is not None:
        return _Window(_oldest_first(candidates), [], None, True, True)
    if day is None:
        return None
    records = ctx.manifests.releases(name)
    later = [r for r in records if isinstance(r.get("uploaded"), str) and str(r["uploaded"]) > day]
    if not later:
        return None  # the day admits releases newer than the manifests know
    held = [r for r in records if r not in later]
    if not held:
        return None  # every known release came later: the box holds an older one (quantify.earlier's case)
    package = ctx.manifests.package(name)
    first_after = min(later, key=lambda r: str(r.get("uploaded")))
    nearest = str(first_after.get("version")) if isinstance(package.get("dev_builds"), dict) else None
    versions = _oldest_first([str(r.get("version")) for r in held] + ([nearest] if nearest else []))
    left = _oldest_first([str(r.get("version")) for r in later if str(r.get("version")) != nearest])
    return _Window(versions, left, nearest, False, _complete(package, versions, first_after))


def _complete(package: Any, versions: list[str], first_after: Release) -> bool:
    """components.json `every_release`: the manifests record every release the index served from the
    package's first (`from`) through `through`; the window is complete when it starts at the first and a
    release inside that record bounds it (a release between `through` and the day could be unknown)."""
    every = package.get("every_release")
    if not isinstance(every, dict) or not versions:
        return False
    first, through = parse_version(str(every.get("from"))), parse_version(str(every.get("through")))
    oldest, bound = parse_version(versions[0]), parse_version(str(first_after.get("version")))
    if first is None or through is None or oldest is None or bound is None:
        return False
    return bool(oldest == first and bound <= through)


def _with_version(facts: Facts, name: str, version: str) -> Facts:
    packages: dict[str, Any] = dict(facts.get("packages") or {})
    entry = {**dict(packages.get(name) or {}), "installed": True, "version": version}
    entry.pop("candidates", None)
    packages[name] = entry
    return cast("Facts", {**facts, "packages": packages})


def _with_pins(ctx: Context, facts: Facts, name: str, version: str, day: str | None) -> Facts | None:
    """The facts with what `name` `version` declares (components.json `requires`, read from its wheel) filled
    in for packages the manifests know and the facts do not mention: an exact pin as that version, marked
    implied as stackcheck.facts.implied marks its own; a range as installed, narrowed to the known releases in
    the range uploaded by the day (only when a known release came after it). Left alone: a pin under an
    environment marker, a release whose pins were not read, one with CUDA builds of its own (`variants`: the
    pins differ by build). None when nothing was filled. (Not stackcheck.facts.implied itself, which imports
    the engine: this module sits below it.)"""
    rel = next((r for r in ctx.manifests.releases(name) if str(r.get("version")) == version), None)
    if rel is None or day is None or rel.get("variants") or (rel.get("inferred") and "requires_read" not in rel):
        return None
    markers = dict((rel.get("requires_read") or {}).get("markers") or {})
    known = ctx.manifests.components.get("packages") or {}
    again = Context(facts=facts, manifests=ctx.manifests, launch=ctx.launch)
    packages: dict[str, Any] = dict(facts.get("packages") or {})
    added = False
    for dep, spec in dict(rel.get("requires") or {}).items():
        if dep not in known or dep in markers or not isinstance(spec, str) or again.package_state(dep) != "unknown":
            continue
        clauses = parse_specifier(spec)
        if clauses is not None and len(clauses) == 1 and clauses[0][0] in ("==", "===") and "*" not in spec:
            packages[dep] = {"installed": True, "version": clauses[0][1], "implied": True}
            added = True
            continue
        records = ctx.manifests.releases(dep)
        by_day = [r for r in records if not (isinstance(r.get("uploaded"), str) and str(r["uploaded"]) > day)]
        if len(by_day) == len(records):
            continue  # nothing known came after the day: a newer unknown release may be there
        inside = [str(r.get("version")) for r in by_day if version_in(str(r.get("version")), spec) is True]
        if inside:
            by = f"{name} {version} requires ({dep}{spec}) that was uploaded by {day}, the day of these facts"
            packages[dep] = {"installed": True, "candidates": inside, "implied": True, "candidates_from": by}
            added = True
    return cast("Facts", {**facts, "packages": packages}) if added else None


def _judge(item: Feature | Check, ctx: Context, name: str, version: str, judge: Judge, day: str | None) -> Judged:
    facts = _with_version(ctx.facts, name, version)

    def status_of(f: Facts) -> tuple[str, list[Reason]]:
        v = judge(item, Context(facts=f, manifests=ctx.manifests, launch=ctx.launch))
        return str(v.get("status")), [r for r in v.get("reasons") or [] if r.get("result") == "fail"]

    status, fails = status_of(facts)
    if status == "unknown":
        pinned = _with_pins(ctx, facts, name, version, day)
        if pinned is not None:
            status2, fails2 = status_of(pinned)
            if status2 in _BAD:
                return Judged(version, status2, fails2, True)
    return Judged(version, status, fails, False)


def sweep(
    item: Feature | Check,
    ctx: Context,
    needs: list[str],
    judge: Judge,
    day: str | None,
    candidates: Callable[[Context, str], list[str] | None],
    check: bool = False,
) -> Swept | None:
    """The item judged for every release of its swept package the facts admit (module docstring); None when
    the releases do not all agree or the sweep does not apply. The engine passes its own pieces in (this
    module imports nothing of it): `judge` evaluates the item on other facts, `day` is the facts' UTC day
    (engine.collected_day), `candidates` reads packages.NAME.candidates (engine.package_candidates)."""
    name = swept_package(item, ctx, needs)
    if name is None:
        return None
    window = _window(ctx, name, day, candidates(ctx, name))
    if window is None or not window.versions:
        return None
    judged: list[Judged] = []
    for version in reversed(window.versions):  # newest first: where releases differ, that is where most often
        j = _judge(item, ctx, name, version, judge, day)
        if j.status not in _BAD and not (j.status == "ok" and window.complete):
            return None  # unknown, not applicable, or ok where an unjudged release may be on the box
        if judged and (j.status == "ok") != (judged[0].status == "ok"):
            return None  # the releases disagree
        judged.append(j)
    judged.reverse()
    head = _head(ctx, name, day, window)
    implied = [j.version for j in judged if j.implied]
    if implied:
        head += (
            f"; {', '.join(implied)} judged with the packages {'it pins' if len(implied) == 1 else 'they pin'} "
            "filled in where the facts say nothing (implied, which can only block)"
        )
    span = _span(window.versions)
    if judged[0].status == "ok":
        reason: Reason = {
            "rule": "release-sweep",
            "result": "pass",
            "inferred": True,
            "observed": _observed(name, day),
            "required": f"{name} {span}",
            "message": f"{head}: ok with every one of them",
        }
        return Swept("ok", None, [reason])
    if check:
        return _check_reasons(name, day, span, head, judged)
    effects = [_effect(j.reasons) for j in judged]
    mildest = min(effects, key=lambda e: EFFECT_ORDER.get(e, 0))
    newest = judged[-1]
    first = newest.reasons[0] if newest.reasons else {}
    reason = _swept_reason("release-sweep", mildest, "blocked", name, day, span, head, newest.version, first)
    return Swept("bad", mildest, [reason])


def _swept_reason(
    rule: str, effect: str, verb: str, name: str, day: str | None, span: str, head: str, version: str, last: Reason
) -> Reason:
    """The inferred reason of a sweep that concludes the worse way: `rule` with its mildest `effect` among the releases
    swept, the newest release's own reason (`last`) quoted with its source."""
    reason: Reason = {
        "rule": rule,
        "result": "fail",
        "effect": effect,
        "inferred": True,
        "observed": _observed(name, day),
        "required": f"{name} {span}",
        "message": f"{head}: {verb} with every one of them (effect at least {effect}); with {version}: "
        + str(last.get("message", verb)),
    }
    if last.get("source") is not None:
        reason["source"] = last["source"]
    if last.get("filled"):  # the newest release's reason read a value filled from the manifests' tables
        reason["filled"] = list(last["filled"])
    return reason


def _check_reasons(name: str, day: str | None, span: str, head: str, judged: list[Judged]) -> Swept | None:
    """A check concludes per rule: each rule that fails with every release swept, keeping its id (the gate's
    per-rule scopes apply to it), with the mildest effect it has among them."""
    out: list[Reason] = []
    newest = judged[-1]
    for fail in newest.reasons:
        rule = fail.get("rule")
        if any(r.get("rule") == rule for r in out):
            continue
        if not all(any(f.get("rule") == rule for f in j.reasons) for j in judged):
            continue
        effects = [str(f.get("effect", "crash")) for j in judged for f in j.reasons if f.get("rule") == rule]
        effect = min(effects, key=lambda e: EFFECT_ORDER.get(e, 0))
        out.append(_swept_reason(str(rule), effect, "failed", name, day, span, head, newest.version, fail))
    if not out:
        return None
    severe = [r for r in out if r.get("effect") != "degraded"]
    return Swept("bad", str(severe[0].get("effect")) if severe else "degraded", out)


def _effect(reasons: list[Reason]) -> str:
    return max((str(r.get("effect", "crash")) for r in reasons), key=lambda e: EFFECT_ORDER.get(e, 0), default="crash")


def _span(versions: list[str]) -> str:
    return versions[0] if len(versions) == 1 else f"{versions[0]}-{versions[-1]}"


def _observed(name: str, day: str | None) -> str:
    return f"{name} version not known" + (f" (facts of {day})" if day else "")


def _head(ctx: Context, name: str, day: str | None, window: _Window) -> str:
    """What was swept, and that the verdict is inferred from the day (or the facts' candidates)."""
    span = _span(window.versions)
    if window.narrowed:
        entry = (ctx.facts.get("packages") or {}).get(name)
        by = entry.get("candidates_from") if isinstance(entry, dict) else None
        if isinstance(by, str):
            return (
                f"inferred from a pin and the facts' date: {name}'s version is not known; for every {name} release "
                f"{by} ({', '.join(window.versions)})"
            )
        return (
            f"inferred from the releases the facts allow: {name}'s version is not known; for every {name} release "
            f"in packages.{name}.candidates ({', '.join(window.versions)})"
        )
    text = (
        f"inferred from the facts' date: {name}'s version is not known; for every {name} release the manifests "
        f"know up to {day} ({span}"
    )
    if window.nearest is not None:
        text += f", {window.nearest} standing for a development build of that day"
    text += ")"
    if window.later:
        text += f" ({_span(window.later)} came later and cannot be installed here"
        oldest = min((str(r.get("version")) for r in ctx.manifests.releases(name)), key=_key)
        if not window.complete:
            text += f"; releases older than {oldest} or not recorded were not judged"
        text += ")"
    return text


def _key(version: str) -> Any:
    return parse_version(version) or parse_version("0")
