"""The gate's decision for a reader (`stackcheck gate`, text): the derived launch, every feature and check
that was required and its status, one line per refusal or warning with its reasons (observed, required, the
GPU, the source ids) and the plan step that fixes it, then the decision. Every control character from the
box (a GPU name, a version, an argument) is shown as an escape; lines are wrapped at the terminal's width
under their own indent, except a `fix:` line that names a plan step's commands (it pastes as it is)."""

from __future__ import annotations

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any


def _reason_text(r: dict[str, Any], shared: str | None = None) -> str:
    """A reason on one line: message, observed and required, the GPU, and the source ids (the JSON has the
    titles and addresses). An unknown one is a missing fact: no source; the driver's error, said once
    above, is not repeated."""
    text = str(r.get("message", ""))
    if shared and shared in text:
        text = text.replace(shared, "see the driver note above")
    bits = []
    if "observed" in r:
        bits.append(f"observed {r['observed']}")
    if "required" in r:
        bits.append(f"required {r['required']}")
    if bits:
        text += f" [{'; '.join(bits)}]"
    if r.get("gpu"):
        text += f" on {r['gpu']}"
    if r.get("result") == "unknown" or not r.get("source"):
        return text
    from stackcheck.knowledge.sources import source_tag

    return f"{text} {source_tag(r['source'])}"


def _line(prefix: str, b: dict[str, Any], shared: str | None = None) -> list[str]:
    status = b["status"] + (f" ({b['effect']})" if b.get("effect") else "")
    kind = {
        "default": " [default]",
        "default-warn": " [default]",
        "command": " [command]",
        "launch": " [every launch]",
        "preflight": " [preflight]",
    }.get(b["kind"], "")
    if b["kind"] == "launch" and b.get("why"):  # what makes this launch need it
        kind = f" [{'stack check: ' if b.get('check') else ''}{b['why']}]"
    elif b.get("check"):
        kind = " [stack check]"
    reasons = b.get("reasons") or [{"message": "not ok"}]
    if b["status"] == "note":
        return [f"note: {_reason_text(reasons[0], shared)}"]
    texts: list[str] = []
    for r in reasons:
        t = _reason_text(r, shared)
        if t not in texts:
            texts.append(t)
    out = [f"{prefix} {b['feature']}{kind}: {status}: {texts[0]}"]
    out += [f"    also: {t}" for t in texts[1:]]
    if b.get("fix"):
        out.append(f"    fix: {b['fix']}")
    return out


def render_text(
    doc: dict[str, Any], warnings_only: bool = False, verbose: bool = False, width: int | None = None
) -> str:
    """The decision for a reader (stackcheck.render's GATE_FORMATS mask it first: redact.public_document); every
    control character from the box (a GPU name, a version, an argument) is shown as an escape, never sent to the
    terminal. The note that
    lists the flags the gate does not read is printed with `verbose` only (it is in the JSON always)."""
    from stackcheck.redact import terminal_safe

    return terminal_safe(_fit(_render_text(doc, warnings_only, verbose), width))


def _fit(text: str, width: int | None = None) -> str:
    """Each line wrapped at the terminal's width under its own indent plus four (never cut); a `fix:` line
    that names a plan step's commands stays whole, so the commands paste as they are."""
    from stackcheck.render.layout import UNLIMITED, output_width, wrap

    width = width or output_width()
    if width >= UNLIMITED:
        return text
    out: list[str] = []
    for line in text.splitlines():
        lead = line[: len(line) - len(line.lstrip())]
        if len(line) <= width or line.lstrip().startswith("fix: plan step"):
            out.append(line)
        else:
            out += wrap(line.strip(), width, lead + "    ", lead)
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def _is_flags_note(b: dict[str, Any]) -> bool:
    return b.get("status") == "note" and b.get("feature") == "flags"


def _render_text(doc: dict[str, Any], warnings_only: bool = False, verbose: bool = False) -> str:
    lines: list[str] = []
    shared = doc.get("driver_error")
    warnings = [b for b in doc["warnings"] if verbose or not _is_flags_note(b)]
    if doc.get("assumed"):
        lines.append(f"assumed (a what-if, not measured here): {', '.join(doc['assumed'])}")
    if doc.get("filled"):
        lines.append(f"filled from the manifests, not stated: {'; '.join(doc['filled'])}")
    for shadow in doc.get("shadowed") or []:
        lines.append(f"note: {shadow}")
    if isinstance(doc.get("dry_run"), str):  # --root
        lines.append(f"note: --dry-run {doc['dry_run']}")
    if shared and (not warnings_only or any(b.get("status") != "note" for b in warnings)):
        lines.append(f"note: no GPU visible: {shared}")
    if not warnings_only:
        d = doc["derived"]
        if doc["command"]:
            launch = ", ".join(f"{k}={v}" for k, v in d["launch"].items()) or "-"
            lines.append(f"command: entrypoint {d['entrypoint'] or 'none'}; launch {launch}")
            for r in d["required"]:
                what = "check " if r.get("check") else ""
                lines.append(f"  needs {what}{r['feature']} ({r['kind']}: {r['why']})")
            for off in d["off"]:
                lines.append(f"  {off}")
        if doc.get("note"):
            lines.append(f"note: {doc['note']}")
        for f in doc["features"]:
            what = "check " if f.get("check") else ""
            lines.append(f"  {what}{f['feature']}: {f['status']}" + (f" ({f['effect']})" if f.get("effect") else ""))
        for c in (doc.get("preflight") or {}).get("checks") or []:
            subject = f" ({c['subject']})" if c.get("subject") else ""
            lines.append(f"  preflight {c['check']}{subject}: {c['status']}")
        for b in doc["reasons"]:
            lines += _line("REFUSE", b, shared)
    for b in warnings:
        lines += _line("warning:", b, shared)
    lines += [f"note: {a}" for a in doc.get("advice") or []]
    if not warnings_only:
        if doc.get("allowed"):
            lines.append(f"allowed on purpose (--allow): {', '.join(doc['allowed'])}")
        verb = "allow" if doc["decision"] == "allow" else "refuse"
        tail = " (dry run: nothing was run)" if doc["decision"] == "allow" and doc["command"] else ""
        lines.append(f"decision: {verb}{tail}")
    elif warnings:
        lines.insert(0, "stackcheck gate: allow, with warnings:")
    # (irobust11) every line one line: a newline inside a field (a --model-path, an srun variable's value, a path
    # from the box) is written `\n`, so a value cannot start a line of its own (`ALLOW: ...` at the margin)
    return "\n".join(line.replace("\n", "\\n") for line in lines) + ("\n" if lines else "")
