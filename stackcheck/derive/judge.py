"""Judging a feature whose package is newer than the data, from what the installed release's own files
say (the facts section `derived`, and the gate tables the source_tables probe read).

Called by stackcheck.verdicts.engine for a feature that needs a package newer than every release the manifests
know (and does not list it in `assume_newer`). Each rule is classed by stackcheck.derive.decide: rules
read from the files are evaluated as usual (gate tables probed from the installed sources; a rule with
`derive.flag` against the installed release's declared flags); rules that need hand-written knowledge
leave the feature unknown with that reason, unless the box alone makes their `when` false. A feature none
of whose rules its files decide stays unknown. Every reason carries `derived`: "derived from the
installed release (... newer than the data of DATE)"."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from stackcheck.derive.decide import rule_basis

if TYPE_CHECKING:
    from stackcheck.knowledge.types import Feature, Release, Rule
    from stackcheck.verdicts.context import Context, GpuModel
    from stackcheck.verdicts.types import Reason

#: reads one rule from the installed release's files: (rule, GPU, the reason so far, its `when` outcome)
#: -> the reason, or None to evaluate the rule as usual (stackcheck.verdicts.engine.RuleHook)
NewerHook = Callable[["Rule", "GpuModel | None", "Reason", Any], "Reason | None"]


class NewerRules(NamedTuple):
    """How to judge a feature from the files of its installed releases that are newer than the data: the
    head reason, the marker every reason carries, and the hook that reads a rule from the files (None: no
    rule is read from them, and the feature is unknown with the head reason alone)."""

    head: Reason
    mark: str
    hook: NewerHook | None


def derived_section(ctx: Context, package: str) -> Mapping[str, Any] | None:
    section = ctx.facts.get("derived")
    entry = section.get(package) if isinstance(section, Mapping) else None
    return entry if isinstance(entry, Mapping) and not entry.get("error") else None


def marker(ctx: Context, package: str, version: str) -> str:
    return f"derived from the installed release ({package} {version}, newer than the data of {ctx.manifests.date})"


def _flag_reason(
    rule: Mapping[str, Any],
    derive: Mapping[str, Any],
    flags: Mapping[str, Any] | None,
    base: Reason,
    package: str,
    version: str,
) -> Reason:
    flag = str(derive.get("flag"))
    choice = derive.get("choice")
    required = f"{flag} {choice}" if isinstance(choice, str) else flag
    if not isinstance(flags, Mapping):
        return {**base, "result": "unknown", "message": f"the flags of the installed {package} {version} were not read"}
    declared = set(flags.get("declared") or [])
    option = (flags.get("options") or {}).get(flag) if isinstance(flags.get("options"), Mapping) else None
    src: Any = base.get("source")
    if isinstance(option, Mapping) and option.get("file"):
        src = {
            "title": f"{package} {version} installed, {option.get('file')} line {option.get('line')}",
            "url": f"https://pypi.org/project/{package}/{version.split('+', 1)[0]}/",
        }
    if flag not in declared:
        observed = f"{package} {version} declares no {flag}"
        ok = False
    elif isinstance(choice, str):
        choices = option.get("choices") if isinstance(option, Mapping) else None
        if not isinstance(choices, list):
            return {
                **base,
                "result": "unknown",
                "source": src,
                "message": f"the choices of {flag} in the installed {package} {version} could not be read",
            }
        ok = choice in choices
        observed = f"{flag} accepts {choice}" if ok else f"{flag} does not accept {choice}"
    else:
        ok, observed = True, f"{package} {version} declares {flag}"
    if ok:
        return {
            **base,
            "result": "pass",
            "observed": observed,
            "required": required,
            "source": src,
            "message": "requirement met",
        }
    message = str(rule.get("message", "requirement not met"))
    message = message.replace("{observed}", version).replace("{required}", required)
    return {**base, "result": "fail", "observed": observed, "required": required, "source": src, "message": message}


def newer_rules(feature: Feature, ctx: Context, newer: list[tuple[str, str]]) -> NewerRules | None:
    """How stackcheck.verdicts.engine judges `feature` when the installed releases `newer` ((package, version)
    pairs) are newer than the data; None when nothing was derived for them (the caller then reports the
    feature unknown as before). A rule is read from the files only when it is so for every newer package."""
    section = ctx.facts.get("derived")
    entries = {p: section.get(p) if isinstance(section, Mapping) else None for p, _ in newer}
    if all(not isinstance(e, Mapping) for e in entries.values()):
        return None
    names = ", ".join(f"{p} {v}" for p, v in newer)
    date = ctx.manifests.date
    mark = f"derived from the installed release ({names}, newer than the data of {date})"
    head: Reason = {
        "rule": "known-release",
        "result": "pass",
        "observed": names,
        "required": ", ".join(f"{p} <= {ctx.newest_known(p)}" for p, _ in newer),
        "message": f"{names}: newer than the data of {date}; judged from the installed release's own files",
        "derived": mark,
    }
    for package, version in newer:
        entry = entries[package]
        if not isinstance(entry, Mapping) or entry.get("error"):
            why = entry.get("error") if isinstance(entry, Mapping) else "nothing was read from it"
            head = {**head, "result": "unknown",
                    "message": f"{package} {version} is newer than the data of {date} and its files could not be "
                               f"read: {why}"}  # fmt: skip
            return NewerRules(head, mark, None)
    gates = {str(g.get("id")): g for g in ctx.manifests.gates}
    bases: dict[str, list[tuple[str, str, Any]]] = {}
    for rule in feature.get("rules") or []:
        for package, version in newer:
            basis = rule_basis(rule, package, gates, package in (feature.get("assume_newer") or []))
            bases.setdefault(str(rule.get("id")), []).append((package, version, basis))
    read_rules = [rid for rid, bs in bases.items() if all(b.kind == "read" for _, _, b in bs)]
    if not read_rules:
        why = "; ".join(f"{rid}: {b.reason}" for rid, bs in bases.items() for _, _, b in bs if b.kind != "read")
        head = {**head, "result": "unknown",
                "message": f"{names}: newer than the data of {date}, and none of this feature's rules is read "
                           f"from the release's files ({why or 'it has no rules'})"}  # fmt: skip
        return NewerRules(head, mark, None)

    def hook(rule: Rule, gpu: GpuModel | None, base: Reason, when: Any) -> Reason | None:
        derive = rule.get("derive")
        for package, version, basis in bases.get(str(rule.get("id")), []):
            if derive is not None and "flag" in derive and package == "sglang":
                flags = entries[package].get("flags")  # type: ignore[union-attr]
                return _flag_reason(rule, derive, flags if isinstance(flags, Mapping) else None, base, package, version)
            if basis.kind != "read":
                return {**base, "result": "unknown",
                        "message": f"needs hand-written knowledge of {package} {version} (newer than the data of "
                                   f"{date}): {basis.reason}"}  # fmt: skip
        return None

    return NewerRules(head, mark, hook)


def derived_release(ctx: Context, package: str) -> Release | None:
    """A release record (as components.json would hold it) from the installed METADATA of a package newer
    than the data: its pins, for the builtin pin checks. None when they were not derived."""
    derived = derived_section(ctx, package)
    pins = derived.get("pins") if derived is not None else None
    if not isinstance(pins, Mapping) or not isinstance(pins.get("requires"), Mapping):
        return None
    version = str(derived.get("version")) if derived is not None else ""
    return {
        "version": version,
        "requires": dict(pins["requires"]),
        "source": list(pins.get("sources") or [])
        or {"title": f"{package} {version} installed METADATA", "url": f"https://pypi.org/project/{package}/"},
        "derived": marker(ctx, package, version),
    }
