"""A triage for a reader (`stackcheck triage`, text): the root cause with its process, log line and
traceback, the signature that names it (why, fix, source), the other errors, the secondary failures and the
known warnings; with facts, the plan step that fixes the root cause. Secrets in the log's text are masked
and every control character from the log is shown as an escape (stackcheck.redact), so a log cannot leak a
token or drive the terminal."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stackcheck.launch.triage import LINE_CAP, Event, TriageReport, TriageResult


def render_report(report: TriageReport) -> str:
    """The text format: the log's triage, then (when facts were given) the plan's answer for its root cause."""
    text = render_text(report.result)
    if report.asked:
        feature, check = report.result.feature, report.result.check
        cause = report.cause
        if cause is not None:
            text += render_cause(cause)
            if cause.get("alone") and feature is None and check is None:
                feature, check = cause["causes"][0].get("feature"), cause["causes"][0].get("check")
        text += render_launch(report.launch) if feature is not None or check is not None else ""
        text += render_fix(report.fix, feature, check)
    return text


def render_launch(launch: Mapping[str, Any] | None) -> str:
    """Which launch the plan's answer was judged for: the one SGLang logged (its flags), else the default one."""
    from stackcheck.redact import redact_text, terminal_safe

    if launch is None:
        return ""
    import shlex

    flags = shlex.join(str(f) for f in launch.get("flags") or []) or "no flag launch.json reads"
    return terminal_safe(redact_text(f"launch: as logged at line {launch.get('line')} (server_args): {flags}\n"))


def render_cause(cause: Mapping[str, Any]) -> str:
    """The causes of a generic root cause that fail on the box, as text lines (secrets masked, terminal-safe)."""
    from stackcheck.redact import redact_text, terminal_safe

    return terminal_safe(redact_text(_render_cause(cause)))


def _label(entry: Mapping[str, Any]) -> str:
    bits = [f"feature {entry['feature']}" if entry.get("feature") else "",
            f"check {entry['check']}" if entry.get("check") else ""]  # fmt: skip
    return " / ".join(b for b in bits if b)


def _render_cause(cause: Mapping[str, Any]) -> str:
    named = [c for c in cause.get("causes") or [] if isinstance(c, Mapping)]
    sig = cause.get("signature")
    if cause.get("alone"):
        out = [f"cause on this box: {_label(named[0])} fails on the facts given, and it produces this error "
               f"({sig}, an error with several causes)"]  # fmt: skip
    else:
        out = [f"causes on this box: {len(named)} of the causes of this error ({sig}) fail on the facts given, "
               "and the log cannot tell which of them it comes from:"]  # fmt: skip
    for c in named:
        if not cause.get("alone"):
            out.append(f"  {_label(c)}")
        for r in c.get("reasons") or []:
            where = f" ({r['gpu']})" if r.get("gpu") else ""
            out.append(f"  {r.get('in')}, rule {r.get('rule')}{where}: observed {r.get('observed')!s}, "
                       f"required {r.get('required')!s}")  # fmt: skip
            if r.get("message"):
                out.append(f"    {_short(str(r['message']), 300)}")
            if r.get("source"):
                out.append(f"    source: {_source_text(r['source'])}")
        if c.get("gpus_differ_in"):
            out.append(f"    (counted because the GPUs differ in {c['gpus_differ_in']})")
        out.append(f"    why it gives this error: {_source_text(c.get('source'))}")
    if cause.get("not_ruled_out"):
        out.append(f"  not ruled out (not judged on these facts): {'; '.join(map(str, cause['not_ruled_out']))}")
    launch = cause.get("launch_rules")
    for label, rules in launch.items() if isinstance(launch, Mapping) else ():
        out.append(f"    {label}: rule(s) {', '.join(map(str, rules))} read the launch's options, which triage does "
                   "not know (no command line in a log or facts): `stackcheck gate --dry-run` judges them")  # fmt: skip
    if cause.get("ruled_out"):
        out.append(f"  ruled out (they pass on these facts): {'; '.join(map(str, cause['ruled_out']))}")
    return "\n".join(out) + "\n"


def _short(text: str, width: int = 160) -> str:
    text = text.replace("\t", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def _where(ev: Event) -> str:
    bits = [f"log line {ev.line}", f"process {ev.stream}"]
    if ev.timestamp:
        bits.append(ev.timestamp)
    return ", ".join(bits)


def _source_text(source: Any) -> str:
    if isinstance(source, list):
        return "; ".join(_source_text(x) for x in source)
    if isinstance(source, dict):
        if "url" in source:
            return f"{source.get('title', '')} <{source['url']}>".strip()
        if "repo" in source:
            return f"{source['repo']}:{source.get('path', '')}@{source.get('ref', '')}"
    return str(source)


def render_text(result: TriageResult) -> str:
    """The result for a reader: secrets in the log's text masked and every control character from the
    log shown as an escape (stackcheck.redact), so a log cannot leak a token or drive the terminal."""
    from stackcheck.redact import redact_text, terminal_safe

    return terminal_safe(redact_text(_render_text(result)))


def _render_text(result: TriageResult) -> str:
    out: list[str] = []
    size = f"{result.lines_read} lines, {result.bytes_read} bytes"
    if result.truncated_lines:
        size += f", {result.truncated_lines} over-long lines cut to {LINE_CAP // 1024} KiB"
    out.append(f"triage of {result.log} ({size})")
    rc = result.root_cause
    if rc is None and not result.secondary:
        out.append("no errors found in this log")
    elif rc is None:
        out.append("no root cause in this log: it holds only secondary failures (the real error is probably "
                   "in another process's log, or earlier than this log starts)")  # fmt: skip
    else:
        out.append("")
        out.append(f"root cause ({_where(rc)}):")
        if rc.header:
            out.append(f"  {_short(rc.header)}")
        out.append(f"  {_short(rc.text, 300)}")
        if rc.kind == "stall":
            out.append("  (the log stops here and no process reports an error: the run hung, or was stopped)")
        for line in rc.parts[0].message_lines[:5] if rc.parts else []:
            out.append(f"    {_short(line)}")
        inner = rc.innermost
        if inner is not None:
            func = f" in {inner.function}" if inner.function else ""
            where = inner.file if inner.line is None else f"{inner.file}:{inner.line}"
            out.append(f"  at {where}{func}")
        for p in rc.parts[1:]:
            how = "which caused" if p.relation == "cause" else "then, while handling it"
            out.append(f"  {how}: {_short(p.exception or '?')}")
        if rc.truncated:
            out.append("  (the traceback is cut off in the log)")
        if result.also_in:
            shown = ", ".join(result.also_in[:8]) + (f" and {len(result.also_in) - 8} more"
                                                      if len(result.also_in) > 8 else "")  # fmt: skip
            out.append(f"  the same error in: {shown}")
        if rc.repeats:
            out.append(f"  repeated {rc.repeats} more times in this process")
        sig = rc.signature
        if sig is None:
            out.append("  signature: none known (unknown error)")
        else:
            feat = f" [feature {sig.feature}]" if sig.feature else f" [check {sig.check}]" if sig.check else ""
            out.append(f"  signature: {sig.id}{feat}: {sig.title}")
            out.append(f"  why: {sig.explanation}")
            out.append(f"  fix: {sig.fix}")
            out.append(f"  source: {_source_text(sig.source)}")
    others = [e for e in result.errors if e is not rc]
    if others:
        out.append("")
        out.append(f"other errors: {len(others) + result.dropped['errors']}")
        for e in others[:10]:
            sig_id = f" [{e.signature.id}]" if e.signature else ""
            out.append(f"  line {e.line} {e.stream}: {_short(e.text, 120)}{sig_id}")
        if len(others) > 10:
            out.append(f"  … and {len(others) - 10 + result.dropped['errors']} more")
    if result.secondary:
        out.append("")
        out.append(f"secondary failures: {len(result.secondary) + result.dropped['secondary']}")
        for e in result.secondary[:20]:
            detail = f" (logging: {_short(e.logged_message, 80)})" if e.logged_message else ""
            out.append(f"  line {e.line} {e.stream} {e.secondary}: {_short(e.text, 120)}{detail}")
        if len(result.secondary) > 20:
            out.append(f"  … and {len(result.secondary) - 20 + result.dropped['secondary']} more")
    if result.warnings:
        out.append("")
        out.append(f"known warnings: {len(result.warnings) + result.dropped['warnings']}")
        for e in result.warnings[:10]:
            sig_id = f" [{e.signature.id}]" if e.signature else ""
            out.append(f"  line {e.line} {e.stream}: {_short(e.text, 120)}{sig_id}")
    return "\n".join(out) + "\n"


def render_fix(fix: Mapping[str, Any] | None, feature: str | None, check: str | None = None) -> str:
    """The plan's answer for the root cause, as text lines for render_text's output (terminal-safe)."""
    from stackcheck.redact import terminal_safe

    return terminal_safe(_render_fix(fix, feature, check))


def _render_fix(fix: Mapping[str, Any] | None, feature: str | None, check: str | None = None) -> str:
    if feature is None and check is None:
        return ""
    if fix is None:
        what = feature or check
        return f"plan: no step in the plan changes {what} on this box\n"
    if fix.get("check"):
        out = f"check {fix['check']} on this box: {fix.get('status')}"
        out += f": {fix['message']}\n" if fix.get("message") else "\n"
        how = fix.get("fix")
        if isinstance(how, Mapping) and how.get("text"):
            out += f"  fix: {how['text']}\n"
            for cmd in how.get("commands") or []:
                out += f"  $ {cmd}\n"
        step = fix.get("plan_step")
        if isinstance(step, Mapping):
            out += f"plan: step {fix.get('step')}: {step.get('component')} {step.get('from')} -> {step.get('to')}\n"
            for cmd in step.get("commands") or []:
                out += f"  $ {cmd}\n"
        return out
    if fix.get("still_blocked"):
        out = f"plan: {feature} stays blocked after every upgrade the manifests know: {fix.get('why')}\n"
        w = fix.get("workaround")
        if isinstance(w, dict) and w.get("text"):
            out += f"  workaround (unsupported upstream): {w['text']}\n"
        return out
    out = f"plan: step {fix.get('step')} fixes it: {fix.get('component')} {fix.get('from')} -> {fix.get('to')}\n"
    for cmd in fix.get("commands") or []:
        out += f"  $ {cmd}\n"
    return out
