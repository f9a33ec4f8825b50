"""What changed between two reports of a box, for a reader (`stackcheck diff`): text and Markdown. Both
render a copy of the diff document whose strings went through `stackcheck.redact.safe_tree` (host names,
versions and ids come from files)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _v(verdict: Mapping[str, Any] | None) -> str:
    if verdict is None:
        return "absent"
    return str(verdict.get("status")) + (f" ({verdict['effect']})" if verdict.get("effect") else "")


def _who(side: Mapping[str, Any]) -> str:
    bits = [str(side.get("origin"))]
    if side.get("hostname"):
        bits.append(f"host {side['hostname']}")
    if side.get("collected_at"):
        bits.append(str(side["collected_at"]))
    if side.get("manifests"):
        bits.append(f"manifests {side['manifests']}")
    bits.append(f"judged {side.get('judged')}")
    return " · ".join(bits)


def render_text(doc: Mapping[str, Any], width: int | None = None) -> str:
    from stackcheck.render.layout import output_width, wrap

    width = width or output_width()
    out = wrap(_who(doc["a"]), width, "       ", "from:  ")
    out += wrap(_who(doc["b"]), width, "       ", "to:    ")
    if doc.get("manifests"):
        m = doc["manifests"]
        out += wrap(
            f"the manifests changed too ({m['before']} → {m['after']}): --rejudge judges both with today's",
            width,
            "       ",
            "note:  ",
        )
    out.append("")
    rows = doc["versions"]
    out.append(f"versions: {len(rows)} changed" if rows else "versions: no change")
    w = max((len(r["what"]) for r in rows), default=0)
    for r in rows:
        out += wrap(f"{r['before'] or 'none'} → {r['after'] or 'none'}", width, " " * (w + 4), f"  {r['what']:<{w}}  ")
    out.append("")
    feats = doc["features"]
    n_reg = len(doc["regressions"])
    head = f"features: {len(feats)} changed" + (f", {n_reg} no longer ok" if n_reg else "")
    out.append(head if feats else "features: no change")
    fw = max((len(c["id"]) for c in feats), default=0)
    for c in feats:
        mark = "✗" if c.get("regression") else ("✓" if (c.get("after") or {}).get("status") == "ok" else "·")
        tail = "  (was ok)" if c.get("regression") else ""
        out.append(f"{mark} {c['id']:<{fw}}  {_v(c['before'])} → {_v(c['after'])}{tail}")
    out.append("")
    checks = doc["checks"]
    out.append(f"stack checks: {len(checks)} changed" if checks else "stack checks: no change")
    cw = max((len(c["id"]) for c in checks), default=0)
    for c in checks:
        out.append(f"  {c['id']:<{cw}}  {_v(c['before'])} → {_v(c['after'])}")
    out.append("")
    plan = doc["plan"]
    if plan["added"] or plan["removed"]:
        out.append("plan:")
        out += [f"  - {s}" for s in plan["removed"]]
        out += [f"  + {s}" for s in plan["added"]]
    else:
        out.append("plan: no change" + (f" ({len(plan['after'])} steps)" if plan["after"] else " (nothing to upgrade)"))
    return "\n".join(out) + "\n"


def render_markdown(doc: Mapping[str, Any]) -> str:
    def cell(text: Any) -> str:
        t = "" if text is None else str(text)
        return t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")

    out = ["## stackcheck diff", "", f"- from: {cell(_who(doc['a']))}", f"- to: {cell(_who(doc['b']))}"]
    if doc["regressions"]:
        out.append(f"- **no longer ok: {', '.join(f'`{r}`' for r in doc['regressions'])}**")
    out += ["", "### Versions", ""]
    if doc["versions"]:
        out += ["| | before | after |", "|---|---|---|"]
        out += [f"| {cell(r['what'])} | {cell(r['before'])} | {cell(r['after'])} |" for r in doc["versions"]]
    else:
        out.append("no change")
    for title, key in (("Features", "features"), ("Stack checks", "checks")):
        out += ["", f"### {title}", ""]
        if doc[key]:
            out += ["| | before | after |", "|---|---|---|"]
            for c in doc[key]:
                name = f"`{cell(c['id'])}`" + (" (was ok)" if c.get("regression") else "")
                out.append(f"| {name} | {cell(_v(c['before']))} | {cell(_v(c['after']))} |")
        else:
            out.append("no change")
    out += ["", "### Plan", ""]
    plan = doc["plan"]
    if plan["added"] or plan["removed"]:
        out += ["```diff", *(f"- {s}" for s in plan["removed"]), *(f"+ {s}" for s in plan["added"]), "```"]
    else:
        out.append("no change")
    return "\n".join(out) + "\n"
