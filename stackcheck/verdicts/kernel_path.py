"""A feature's path to the kernel (features.json `path`): which hops apply to a box, and how each came out.

A hop is one check on the way from SGLang's admission gate to the kernel (admission, dispatch, kernel,
runtime), recorded for a release range of one package and, optionally, some GPU majors. The rules named by
a hop judge it; its result on a box is the worst result of those rules in the feature's verdict. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from stackcheck.facts.model import cc_tuple
from stackcheck.facts.versions import version_in
from stackcheck.verdicts.context import Context

HOP_ORDER = ("admission", "dispatch", "kernel", "runtime")
HopResult = Literal["fail", "unknown", "pass", "not reached", "no rule"]


def hop_applies(hop: Mapping[str, Any], ctx: Context, majors: Iterable[int]) -> bool:
    """The hop describes the installed release of its package, and (when it names majors) one of `majors`."""
    package = hop.get("package")
    if isinstance(package, str):
        installed = ctx.installed_version(package)
        if installed is None:
            return False
        versions = hop.get("versions")
        if isinstance(versions, str) and version_in(installed, versions) is not True:
            return False
    hop_majors = hop.get("majors")
    if isinstance(hop_majors, list):
        return any(m in hop_majors for m in majors)
    return True


def box_majors(ctx: Context) -> list[int]:
    return sorted({t[0] for m in ctx.gpu_models() if (t := cc_tuple(m.cc)) is not None})


def applicable_hops(feature: Mapping[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """The hops of the feature's path that describe this box, in path order (admission first)."""
    majors = box_majors(ctx)
    hops = [h for h in feature.get("path") or [] if isinstance(h, dict) and hop_applies(h, ctx, majors)]
    rank = {name: i for i, name in enumerate(HOP_ORDER)}
    return sorted(hops, key=lambda h: rank.get(str(h.get("hop")), len(rank)))


def hop_result(hop: Mapping[str, Any], reasons: Iterable[Mapping[str, Any]]) -> HopResult:
    """fail > unknown > pass over the hop's rules in the verdict; `not reached` when none of them applied."""
    rules = [r for r in hop.get("rules") or [] if isinstance(r, str)]
    if not rules:
        return "no rule"
    seen = {str(r.get("result")) for r in reasons if r.get("rule") in rules}
    ranked: tuple[HopResult, ...] = ("fail", "unknown", "pass")
    return next((result for result in ranked if result in seen), "not reached")


def path_summary(
    feature: Mapping[str, Any], ctx: Context, reasons: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """One entry per applicable hop: hop kind, package and versions, the check, its result on this box."""
    reasons = list(reasons)
    out = []
    for hop in applicable_hops(feature, ctx):
        entry: dict[str, Any] = {
            k: hop[k] for k in ("hop", "package", "versions", "file", "check", "gate", "source") if k in hop
        }
        entry["result"] = hop_result(hop, reasons)
        if hop.get("inferred"):
            entry["inferred"] = True
        out.append(entry)
    return out
