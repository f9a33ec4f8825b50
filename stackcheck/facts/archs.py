"""CUDA compilation targets and whether they run on a GPU of a given compute capability.

The binary-compatibility rules are data: manifests/architectures.json `rules`, each with its source, says
for a kind of target (SASS `sm_XY<suffix>` or PTX `compute_XY<suffix>`) and its suffixes where it runs:
`same-major-minor-ge` (X.Z for Z >= Y, same major), `exact` (only X.Y) or `cc-ge` (any capability >= X.Y,
PTX JIT-compiled by the driver). A target whose kind and suffix no rule names runs nowhere, and a target
spelling with a suffix no rule names is not a target: a new suffix is a data change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from stackcheck import lean_json
from stackcheck.lazy_re import lazy
from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any, Literal

    Coverage = Literal["sass", "ptx", "none"]

_TARGET = lazy(r"^(sm|compute)_(\d+)(\d)([a-z]?)$")


class Target(NamedTuple):
    """One compiled target: kind 'sass' (sm_...) or 'ptx' (compute_...). Ordered and hashed by its fields,
    in this order (a NamedTuple, not a dataclass: importing dataclasses costs ~8 ms of every start)."""

    major: int
    minor: int
    suffix: str  # "", "a" or "f"
    kind: Literal["sass", "ptx"]

    @property
    def name(self) -> str:
        prefix = "sm" if self.kind == "sass" else "compute"
        return f"{prefix}_{self.major}{self.minor}{self.suffix}"


@lru_cache(maxsize=2048)
def parse_target(text: str) -> Target | None:
    """'sm_120a' -> Target(12, 0, 'a', 'sass'); 'compute_90' -> PTX; also accepts '12.0', '12.0a', '9.0+PTX'.
    Memoised (a Target is immutable): the engine reads the same arch lists for every candidate stack."""
    t = text.strip().lower()
    m = _target_groups(t)
    if m:
        if m[3] not in shipped_rules().suffixes:
            return None
        kind: Literal["sass", "ptx"] = "sass" if m[0] == "sm" else "ptx"
        return Target(int(m[1]), int(m[2]), m[3], kind)
    # TORCH_CUDA_ARCH_LIST style: "12.0", "9.0a", "8.6+PTX" (the +PTX part is handled by expand_arch_list)
    m2 = re.match(r"^(\d{1,9})\.(\d)([a-z]?)$", t)  # (more digits: int() may refuse them, igap26)
    if m2 and m2.group(3) in shipped_rules().suffixes:
        return Target(int(m2.group(1)), int(m2.group(2)), m2.group(3), "sass")
    return None


def _target_groups(t: str) -> tuple[str, str, str, str] | None:
    """_TARGET's groups of `t` (stripped: no newline for its `$` to stop before), by string methods: `sm` or `compute`,
    `_`, two or more decimal digits (Unicode's Nd, as `\\d` reads them) of which the last is the minor, an optional
    letter a-z; None where _TARGET does not match (tests/facts/test_string_readings.py holds the two equal). No pattern
    compiled: the planner reads targets on a plan's first run."""
    kind, sep, rest = t.partition("_")
    if not sep or kind not in ("sm", "compute"):
        return None
    suffix = rest[-1:] if rest[-1:] and "a" <= rest[-1] <= "z" else ""
    digits = rest[: len(rest) - len(suffix)]
    if len(digits) < 2 or not digits.isdecimal():
        return None
    return kind, digits[:-1], digits[-1], suffix


def sort_targets(names: set[str] | list[str]) -> list[str]:
    """Target names in capability order (major, minor, suffix), names that are no target last; each once."""

    def key(n: str) -> tuple[int, int, int, str, str]:
        t = parse_target(n)
        return (0, t.major, t.minor, t.suffix, n) if t else (1, 0, 0, "", n)

    return sorted(set(names), key=key)


def expand_arch_list(items: list[str]) -> list[Target]:
    """Parse a list of targets; 'X.Y+PTX' yields both sm_XY and compute_XY. Unknown items are skipped."""
    out: list[Target] = []
    for item in items:
        base, plus, rest = item.strip().partition("+")
        t = parse_target(base)
        if t is None:
            continue
        out.append(t)
        if plus and rest.strip().lower() == "ptx":
            out.append(Target(t.major, t.minor, t.suffix, "ptx"))
    return out


#: how a target's capability X.Y relates to a GPU's (major, minor) where it runs (architectures.json `runs_on`)
RELATIONS: dict[str, Any] = {
    "same-major-minor-ge": lambda t, cc: t.major == cc[0] and cc[1] >= t.minor,
    "exact": lambda t, cc: (t.major, t.minor) == cc,
    "cc-ge": lambda t, cc: cc >= (t.major, t.minor),
}


class TargetRules(NamedTuple):
    """The binary-compatibility rules of architectures.json, indexed: (kind, suffix) -> relation name."""

    relation: Mapping[tuple[str, str], str]
    suffixes: frozenset[str]


def target_rules(rules: Iterable[Mapping[str, Any]]) -> TargetRules:
    """Index architectures.json's `rules` (schema-valid: kind, suffixes, runs_on). The first rule that names a
    (kind, suffix) wins; a relation this module does not know is left out (such targets run nowhere)."""
    relation: dict[tuple[str, str], str] = {}
    for rule in rules:
        if rule.get("runs_on") not in RELATIONS:
            continue
        for suffix in rule.get("suffixes") or []:
            relation.setdefault((str(rule.get("kind")), str(suffix)), str(rule["runs_on"]))
    return TargetRules(relation, frozenset(suffix for _, suffix in relation))


def rules_of(rules: Any) -> TargetRules:
    """The indexed rules of a manifests set's architectures.json `rules` list (memoised on their content)."""
    if not isinstance(rules, list):
        return target_rules([])
    key = tuple(
        (str(r.get("kind")), tuple(map(str, r.get("suffixes") or [])), str(r.get("runs_on")))
        for r in rules
        if isinstance(r, dict)
    )
    return _indexed(key)


@lru_cache(maxsize=8)
def _indexed(key: tuple[tuple[str, tuple[str, ...], str], ...]) -> TargetRules:
    return target_rules({"kind": kind, "suffixes": list(suffixes), "runs_on": how} for kind, suffixes, how in key)


@lru_cache(maxsize=1)
def shipped_rules() -> TargetRules:
    """The rules of the shipped architectures.json (read once, when a target is first parsed or judged)."""
    from stackcheck.knowledge.package_data import shipped_texts

    doc = lean_json.loads(shipped_texts(["architectures.json"])["architectures.json"][1])
    return rules_of(doc.get("rules"))


def runs_on(target: Target, cc: tuple[int, int], rules: TargetRules | None = None) -> bool:
    """Whether the target runs on a GPU of capability cc, by the rule for its kind and suffix (default: the
    shipped rules); none: it does not."""
    name = (rules or shipped_rules()).relation.get((target.kind, target.suffix))
    return name is not None and bool(RELATIONS[name](target, cc))


def coverage(targets: list[Target], cc: tuple[int, int], rules: TargetRules | None = None) -> Coverage:
    """'sass' if some SASS runs on cc, else 'ptx' if some PTX can be JIT-compiled for it, else 'none'."""
    if any(t.kind == "sass" and runs_on(t, cc, rules) for t in targets):
        return "sass"
    if any(t.kind == "ptx" and runs_on(t, cc, rules) for t in targets):
        return "ptx"
    return "none"


def covering(targets: list[Target], cc: tuple[int, int], rules: TargetRules | None = None) -> list[str]:
    """Names of the targets that serve cc (for a verdict's 'observed' text)."""
    return sorted({t.name for t in targets if runs_on(t, cc, rules)})
