"""What changed between two reports of a box (`stackcheck diff A B`), and between two collections of a
fleet (`stackcheck fleet --since DIR`). Pure: the reports come in, a diff document (schemas/diff.schema.json)
goes out; the command reads the files and renders.

A report is compared as it was judged when it was saved (its features, checks and plan); a facts-only
document (`stackcheck probe`), or both sides with --rejudge, are judged now with the manifests at hand, so
that a change of the manifests does not pass for a change of the box. A regression is a feature that was
`ok` and is not any more: the exit status of `diff` is 1 when there is one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from stackcheck.facts.model import KERNEL_PACKAGES

if TYPE_CHECKING:
    from stackcheck.documents.types import HostChange

SCHEMA_VERSION = 1
PACKAGES = (
    "torch",
    *KERNEL_PACKAGES[::-1],
    "flashinfer-python",
    "flashinfer-cubin",
    "flashinfer-jit-cache",
    "sglang",
    "triton",
    "vllm",
    "nvidia-nccl-cu13",
    "nvidia-nccl-cu12",
)


def _gpus_text(facts: Mapping[str, Any]) -> str | None:
    gpus = facts.get("gpus")
    if gpus is None:
        return None
    models: dict[str, int] = {}
    for g in gpus:
        if isinstance(g, dict):
            key = f"{g.get('name') or 'GPU'} (cc {g.get('compute_capability') or '?'})"
            models[key] = models.get(key, 0) + 1
    return ", ".join(f"{n}× {k}" for k, n in models.items()) or "none"


def versions(facts: Mapping[str, Any]) -> dict[str, str | None]:
    """What a box is made of, as comparable text: GPUs, link, driver, toolkit, each serving package."""
    driver = facts.get("driver") or {}
    topo = facts.get("topology") or {}
    out: dict[str, str | None] = {
        "gpus": _gpus_text(facts),
        "interconnect": topo.get("interconnect") if isinstance(topo, dict) else None,
        "driver": (f"{driver['version']} (CUDA {driver.get('cuda') or '?'})" if driver.get("version") else None),
    }
    tks = [t for t in facts.get("cuda_toolkits") or [] if isinstance(t, dict) and t.get("active_for_build")]
    out["toolkit"] = str(tks[0].get("version")) if tks else None
    pkgs = facts.get("packages") or {}
    names = [n for n in PACKAGES if n in pkgs] + sorted(n for n in pkgs if n not in PACKAGES)
    for name in names:
        p = pkgs.get(name)
        out[name] = str(p.get("version")) if isinstance(p, dict) and p.get("installed") else None
    python = facts.get("python")
    if isinstance(python, dict) and python.get("version"):
        out["python"] = str(python["version"])
    return out


def _verdict(item: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if item is None:
        return None
    out = {"status": item.get("status")}
    if item.get("effect"):
        out["effect"] = item["effect"]
    return out


def _by_id(items: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Verdicts by id; an id listed twice (a report edited by hand, or two merged) keeps an entry that is not
    ok, so a later ok entry never hides a blocked one (that hid a regression: exit 0)."""
    out: dict[str, Mapping[str, Any]] = {}
    for x in items:
        fid = str(x.get("id"))
        kept = out.get(fid)
        if kept is None or (kept.get("status") == "ok" and x.get("status") != "ok"):
            out[fid] = x
    return out


def verdict_changes(
    before: Iterable[Mapping[str, Any]], after: Iterable[Mapping[str, Any]], feature: bool = True
) -> list[dict[str, Any]]:
    """Every id whose status (or effect) differs, in id order; a feature ok before and not after is a
    regression. A feature new in B (or gone) counts as a change from (or to) nothing."""
    a, b = _by_id(before), _by_id(after)
    out = []
    for fid in sorted(set(a) | set(b)):
        va, vb = _verdict(a.get(fid)), _verdict(b.get(fid))
        if va == vb:
            continue
        change: dict[str, Any] = {"id": fid, "before": va, "after": vb}
        if feature:
            change["regression"] = bool(va and va["status"] == "ok" and (vb is None or vb["status"] != "ok"))
        out.append(change)
    return out


def _steps(plan: Any) -> list[str]:
    if not isinstance(plan, dict):
        return []
    return [
        f"{s.get('component')}: {s.get('from') or 'not installed'} → {s.get('to')}"
        for s in plan.get("steps") or []
        if isinstance(s, dict)
    ]


def _side(report: Mapping[str, Any], origin: str, judged: str) -> dict[str, Any]:
    host = report.get("host") or {}
    man = report.get("manifests") or {}
    return {
        "origin": origin,
        "hostname": host.get("hostname"),
        "collected_at": host.get("collected_at"),
        "manifests": man.get("data_version"),
        "judged": judged,
    }


def diff_reports(
    a: Mapping[str, Any], b: Mapping[str, Any], origin_a: str, origin_b: str, judged_a: str, judged_b: str
) -> dict[str, Any]:
    """The diff document of two judged reports (each with facts, features, checks and plan)."""
    va, vb = versions(a.get("facts") or {}), versions(b.get("facts") or {})
    rows = [
        {"what": k, "before": va.get(k), "after": vb.get(k)}
        for k in dict.fromkeys([*va, *vb])
        if va.get(k) != vb.get(k)
    ]
    features = verdict_changes(a.get("features") or [], b.get("features") or [])
    checks = verdict_changes(a.get("checks") or [], b.get("checks") or [], feature=False)
    sa, sb = _steps(a.get("plan")), _steps(b.get("plan"))
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "a": _side(a, origin_a, judged_a),
        "b": _side(b, origin_b, judged_b),
        "versions": rows,
        "features": features,
        "checks": checks,
        "plan": {
            "before": sa,
            "after": sb,
            "added": [s for s in sb if s not in sa],
            "removed": [s for s in sa if s not in sb],
        },
        "regressions": [c["id"] for c in features if c.get("regression")],
    }
    ma, mb = doc["a"]["manifests"], doc["b"]["manifests"]
    if ma != mb:
        doc["manifests"] = {"before": ma, "after": mb}
    return doc


# ---- text, markdown -------------------------------------------------------------------------------------


# ---- fleets ---------------------------------------------------------------------------------------------


def fleet_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[HostChange]:
    """Hosts whose feature verdicts changed between two collections. `before`/`after`: hostname ->
    (collected_at text, [(feature, status, effect), ...]); a host in only one collection is listed too."""
    out: list[HostChange] = []
    for name in sorted(set(before) | set(after)):
        ta, fa = before.get(name, (None, None))
        tb, fb = after.get(name, (None, None))
        ia = [{"id": f, "status": s, "effect": e} for f, s, e in fa or []]
        ib = [{"id": f, "status": s, "effect": e} for f, s, e in fb or []]
        if fa is None or fb is None:  # a host that came or went: said, its features not listed one by one
            only = "before" if fb is None else "after"
            out.append(
                {"hostname": name, "before": ta, "after": tb, "features": [], "regressions": [], "only_in": only}
            )
            continue
        changes = verdict_changes(ia, ib)
        if changes:
            out.append(
                {
                    "hostname": name,
                    "before": ta,
                    "after": tb,
                    "features": changes,
                    "regressions": [c["id"] for c in changes if c.get("regression")],
                }
            )
    return out
