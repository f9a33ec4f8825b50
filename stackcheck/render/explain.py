"""What a feature needs, release by release, for a reader (`stackcheck explain FEATURE`, text): the feature
and how it is turned on, then per architecture the ranges of releases with the same verdict, the reason and
its sources by id, the first release where it is ok, and the workaround where it answers a failing rule.
Text from the manifests (a user's may hold anything) is made terminal-safe."""

from __future__ import annotations

from typing import Any


def _range_label(r: dict[str, Any]) -> str:
    n = len(r["releases"])
    if n == 1:
        return f"{r['component']} {r['first']}"
    return f"{r['component']} {r['first']} … {r['last']} ({n} releases)"


def _path_lines(path: list[Any], width: int) -> list[str]:
    """The recorded hops in path order (admission first): where each applies, its check, and the file, gate,
    rules and source ids that establish it."""
    from stackcheck.knowledge.sources import source_tag
    from stackcheck.render.layout import wrap
    from stackcheck.verdicts.kernel_path import HOP_ORDER

    rank = {name: i for i, name in enumerate(HOP_ORDER)}
    hops = sorted((h for h in path if isinstance(h, dict)), key=lambda h: rank.get(str(h.get("hop")), len(rank)))
    lines: list[str] = []
    for hop in hops:
        where = " ".join(str(hop[k]) for k in ("package", "versions") if hop.get(k))
        if hop.get("majors"):
            where += f" on major {', '.join(map(str, hop['majors']))}"
        text = (f"{where}: " if where else "") + str(hop.get("check"))
        if hop.get("inferred"):
            text += " [inferred]"
        lines += wrap(text, width, "      ", f"  {hop.get('hop', '?')}: ")
        detail = [f"file {hop['file']}"] if hop.get("file") else []
        if hop.get("gate"):
            detail.append(f"gate {hop['gate']}")
        if hop.get("rules"):
            detail.append(f"rules {', '.join(map(str, hop['rules']))}")
        tag = source_tag(hop.get("source"))
        if tag:
            detail.append(f"source {tag}")
        if detail:
            lines += wrap("; ".join(detail), width, "      ", "      ")
    return lines


def render_text(doc: dict[str, Any], width: int | None = None, sources: bool = False) -> str:
    """The explanation, terminal-safe."""
    from stackcheck.redact import terminal_safe

    return terminal_safe(_render_text(doc, width, sources))


def _render_text(doc: dict[str, Any], width: int | None = None, sources: bool = False) -> str:
    from stackcheck.knowledge.sources import collect, source_tag
    from stackcheck.render.layout import output_width, wrap

    width = width or output_width()
    lines = wrap(f"{doc['feature']}: {doc.get('title')}", width, "    ", "")
    lines += wrap(f"GPUs: {doc['gpus_from']}", width, "    ", "")
    enable = doc.get("enable") or {}
    words = [*(enable.get("flags") or []), *(f"{k}={v}" for k, v in (enable.get("env") or {}).items())]
    if words:
        lines += wrap("turned on by: " + " ".join(words), width, "    ", "")
    if doc.get("path"):
        lines.append("")
        lines.append("path to the kernel (admission → dispatch → kernel → runtime):")
        lines += _path_lines(doc["path"], width)
    for arch in doc["architectures"]:
        lines.append("")
        head = f"on {arch['gpus']}"
        if arch.get("interconnect"):
            head += f" · interconnect {arch['interconnect']}"
        if arch.get("tp"):
            head += f" · tp {arch['tp']}"
        if arch.get("machine"):  # the machines' wheels differ for this feature: one section each
            head += f" · {arch['machine']} box ({'Arm' if arch['machine'] == 'aarch64' else 'x86'} wheels)"
        lines += wrap(head, width, "    ", "")
        for r in arch["ranges"]:
            verdict = r["status"] + (f" ({r['effect']})" if r.get("effect") else "")
            lines += wrap(f"{_range_label(r)}: {verdict}", width, "      ", "  ")
            if r.get("why"):
                tag = source_tag(r.get("source")) if r["status"] != "unknown" else ""  # unknown: a fact is missing
                lines += wrap(str(r["why"]) + (f" {tag}" if tag else ""), width, "      ", "      ")
            if r.get("hops"):
                chain = " → ".join(f"{h['hop']} {h['result']}" for h in r["hops"])
                lines += wrap(f"hops: {chain}", width, "            ", "      ")
        ok = arch.get("first_ok")
        if ok:
            last = f"first release where it is ok: {ok}"
        elif any(r["status"] == "unknown" for r in arch["ranges"]):
            last = f"not known on cc {arch['compute_capability']} with these facts (see above); no release is known ok"
            whys = " ".join(str(r.get("why")) for r in arch["ranges"] if r["status"] == "unknown")
            if "topology" in whys or "interconnect" in whys:
                last += "; --assume-interconnect KIND tells"
        else:
            last = f"no release in the manifests makes it ok on cc {arch['compute_capability']}"
        lines += wrap(last, width, "    ", "  ")
        w = arch.get("workaround")
        if isinstance(w, dict):
            label = "workaround" if w.get("upstream_supported") else "workaround (unsupported upstream)"
            lines += wrap(f"{label}: {w.get('text')}", width, "    ", "  ")
    if sources:
        found = collect(doc)
        lines += ["", f"sources: {len(found)}"]
        for ref in found.values():
            text = ref["title"] + (f" <{ref['url']}>" if ref.get("url") else "")
            lines += wrap(text, width, " " * 6, f"  {ref['id']}: ")
    return "\n".join(lines) + "\n"
