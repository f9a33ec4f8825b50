"""How a stack check's sweep of a package's releases concludes, rule by rule (the version installed is not known;
stackcheck.verdicts.engine._blocked_in_every_release judges the check once per release).

A check is failed when every release the box can hold fails SOME rule of it, not necessarily the same one:
Triton 3.0.0-3.2.0 on SM 12.x fail ptxas-knows-gpu (their ptxas does not know sm_120a), 3.3.0-3.5.1 fail
sm12x-tma-gather (gather4), so the check fails with each of them, each for its own reason. The reasons keep
their rule ids, each naming the releases it fails with, because a check's rules may have different scopes
(a rule's own `required_by`: the gate needs sm12x-tma-gather only of MXFP4 MoE launches). Each such reason
carries `sweep` ({"releases": every release swept, "fails_with": {release: effect}}), from which `rescope`
works the conclusion out again for the rules one launch needs: where those rules leave a release that fails
none of them, their reasons become unknown (fail closed), never ok. Pure."""

from __future__ import annotations

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.verdicts import EFFECT_ORDER

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from stackcheck.verdicts.types import Reason

#: the slot of the releases after the newest one swept, when the sweep is not bounded (no day left them out):
#: only a rule the check's `quantify.rules` names covers it, and only when the newest release fails that rule
LATER = "later releases"


def _rank(effect: str) -> int:
    return EFFECT_ORDER.get(effect, 0)


def _effect(reasons: list[Reason]) -> str:
    return max((str(r.get("effect", "crash")) for r in reasons), key=_rank, default="crash")


def cover(
    releases: list[str], fails_of: list[list[Reason]], named: set[str], bounded: bool
) -> tuple[list[str], dict[str, dict[str, str]], dict[str, Reason]] | None:
    """(slots, {rule: {slot: effect}}, {rule: its failing reason with the newest release it fails}) when every
    slot (each release swept, oldest first, and LATER unless `bounded`) fails some rule; None when one fails
    none. A rule's effect with a release is the strongest among its failing reasons there (one per GPU)."""
    slots = [*releases, *([] if bounded else [LATER])]
    covers: dict[str, dict[str, str]] = {}
    newest: dict[str, Reason] = {}
    for version, fails in reversed(list(zip(releases, fails_of, strict=True))):
        for fail in fails:
            rule = str(fail.get("rule"))
            if rule in covers and version in covers[rule]:
                continue
            same = [f for f in fails if str(f.get("rule")) == rule]
            covers.setdefault(rule, {})[version] = _effect(same)
            newest.setdefault(rule, fail)
    if not bounded and releases:
        for fail in fails_of[-1]:
            rule = str(fail.get("rule"))
            if rule in named:
                covers[rule][LATER] = covers[rule][releases[-1]]
    covered = {s for c in covers.values() for s in c}
    if any(s not in covered for s in slots):
        return None
    ordered = {rule: {s: c[s] for s in slots if s in c} for rule, c in covers.items()}
    return slots, ordered, newest


def level(slots: list[str], covers: Mapping[Any, Mapping[str, str]]) -> str:
    """The effect the check has whatever the release: with each release the strongest effect among the rules
    failing with it, and of those the mildest."""
    per_slot = [max((c[s] for c in covers.values() if s in c), key=_rank, default="crash") for s in slots]
    return min(per_slot, key=_rank, default="crash")


def span(versions: list[str]) -> str:
    """Versions (release order) as runs of the swept releases: '3.0.0-3.2.0'."""
    return versions[0] if len(versions) == 1 else f"{versions[0]}-{versions[-1]}"


def runs(versions: list[str], slots: list[str]) -> str:
    """The versions as runs of consecutive slots: '3.0.0-3.2.0, 3.5.1'."""
    out: list[list[str]] = []
    last = -2
    for i, s in enumerate(slots):
        if s in versions:
            if i == last + 1 and out:
                out[-1].append(s)
            else:
                out.append([s])
            last = i
    return ", ".join(span(r) for r in out)


def scope_note(rule: str, item: Any, slots: list[str], covers: Mapping[str, Mapping[str, str]]) -> str:
    """For a rule with a scope of its own (`required_by` on the rule): which launches it counts for, and which
    releases the check's other rules, those of the check's own scope, leave not failed for other launches."""
    rules = {str(r.get("id")): r for r in item.get("rules") or [] if isinstance(r, dict)}
    rb = (rules.get(rule) or {}).get("required_by")
    if not isinstance(rb, dict) or rb.get("launches") == "every":
        return ""
    wide = [r for r in covers if not _scoped(rules.get(r))]
    left = [s for s in slots if not any(s in covers[r] for r in wide)]
    if not left:
        return ""
    feats = rb.get("features")
    who = (
        f"launches that use {' or '.join(str(f) for f in feats)}"
        if isinstance(feats, list) and feats
        else "the launches its required_by names"
    )
    if isinstance(feats, list) and feats and rb.get("when"):  # (iasan: features and conditions together)
        who += " and the launches its required_by's conditions name"
    return (
        f"This rule counts only for {who} ({rb.get('why')}): for other launches no other rule of this check "
        f"fails with {runs(left, slots)}, so for them the check is not concluded (unknown)"
    )


def _scoped(rule: Any) -> bool:
    rb = rule.get("required_by") if isinstance(rule, dict) else None
    return isinstance(rb, dict) and rb.get("launches") != "every"


def rescope(reasons: list[Reason]) -> list[Reason]:
    """A check's reasons after the gate dropped those of rules a launch does not need: the sweep's per-rule
    reasons (`sweep`) still conclude only when every release swept fails some rule kept; where one fails none
    they turn unknown (their effect kept: the gate refuses an unknown that could crash unless --allow-unknown),
    else each takes the effect that holds whatever the release, among the rules kept."""
    swept = [r for r in reasons if r.get("result") == "fail" and _well_formed(r.get("sweep"))]
    if not swept:
        return reasons
    slots = [str(s) for s in swept[0]["sweep"].get("releases") or []]
    covers = {id(r): {str(k): str(v) for k, v in (r["sweep"].get("fails_with") or {}).items()} for r in swept}
    left = [s for s in slots if not any(s in c for c in covers.values())]
    out: list[Reason] = []
    if left:
        for r in reasons:
            if id(r) not in covers:
                out.append(r)
                continue
            out.append(
                {
                    **r,
                    "result": "unknown",
                    "message": f"not concluded for this launch: with {runs(left, slots)} no rule of this check that "
                    f"the launch needs fails. {r.get('message')}",
                }
            )
        return out
    floor = level(slots, covers)
    for r in reasons:
        c = covers.get(id(r))
        if c is not None and len(c) < len(slots):
            out.append({**r, "effect": min(min(c.values(), key=_rank), floor, key=_rank)})
        else:
            out.append(r)
    return out


def _well_formed(sweep: Any) -> bool:
    """A `sweep` as _every_release_some_rule writes it (a list of releases, a mapping of those it fails with)."""
    return (
        isinstance(sweep, dict)
        and isinstance(sweep.get("releases"), list)
        and isinstance(sweep.get("fails_with"), dict)
    )
