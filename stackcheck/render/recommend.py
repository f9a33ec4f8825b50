"""The recommendation for a reader (`stackcheck recommend`; the document is
stackcheck.launch.recommend.Recommendation.to_json() plus "box"): text for a person, shell for a copy-paste (one
command per line, every argument shlex-quoted). Its JSON is the one JSON writer's (render/jsonout.py)."""

from __future__ import annotations

import shlex
from typing import Any

from stackcheck.render.interface import source_text


def printable(text: Any) -> str:
    """No control characters from the box or the command line reach a terminal."""
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in str(text))


def shell_word(text: str) -> str:
    """One shell word: shlex.quote, or bash's $'...' with escapes when the text holds control characters
    (a quoted control character would still reach the terminal and the shell as it is)."""
    if text.isprintable():
        return shlex.quote(text)
    body = []
    for ch in text:
        if ch in "\\'":
            body.append("\\" + ch)
        elif ch.isprintable():
            body.append(ch)
        elif ord(ch) < 256:
            body.append(f"\\x{ord(ch):02x}")
        else:
            body.append(f"\\u{ord(ch):04x}")
    return "$'" + "".join(body) + "'"


def launch_line(doc: dict[str, Any]) -> str:
    """The launch as one shell command: NAME=VALUE assignments, then the argv, every word quoted."""
    words = [f"{k}={shell_word(str(v))}" for k, v in (doc.get("env") or {}).items()]
    words += [shell_word(str(a)) for a in doc.get("command") or []]
    return " ".join(words)


def gain_text(gain: Any, tp: Any = None) -> str:
    if not isinstance(gain, dict):
        return ""
    if gain.get("kind") == "expected":
        return f"expected (no published measurement): {gain.get('why')}"
    figures = [f for f in gain.get("figures") or [] if isinstance(f, dict)]
    same_tp = [f for f in figures if f.get("tp") == tp]
    shown = same_tp or figures
    parts = []
    for f in shown:
        if "change" in f:
            text = f"{f.get('metric')} {f.get('change')}"
        else:
            text = f"{f.get('metric')} {f.get('before')} → {f.get('after')} {f.get('unit')}"
        if f.get("tp") and not same_tp:
            text += f" (TP{f['tp']})"
        parts.append(text)
    whose = "upstream's measurement on upstream's machine" if gain.get("by") == "upstream" else "measured"
    out = f"{whose} ({gain.get('machine')}): " + "; ".join(parts)
    if same_tp and len(same_tp) < len(figures):
        out += f" [figures at TP{tp}; others in the JSON]"
    return out


def _setting_text(pick: dict[str, Any]) -> str:
    bits = [f"{k}={v}" for k, v in (pick.get("env") or {}).items()]
    bits += [k if v is True else f"{k} {v}" for k, v in (pick.get("flags") or {}).items()]
    if pick.get("advice"):
        return "advice"
    return " ".join(bits) or "(default: nothing to set)"


def plan_step_lines(plan: Any, indent: str = "  ") -> list[str]:
    lines: list[str] = []
    if not isinstance(plan, dict):
        return lines
    for i, s in enumerate(plan.get("steps") or [], 1):
        lines.append(f"{indent}{i}. {s.get('component')}: {s.get('from') or 'not installed'} → {s.get('to')}")
        if s.get("reason"):
            lines.append(f"{indent}   why: {s['reason']}")
        for w in s.get("warnings") or []:
            lines.append(f"{indent}   ! {w}")
        for cmd in s.get("commands") or []:
            lines.append(f"{indent}   $ {cmd}")
    return lines


def render_text(doc: dict[str, Any]) -> str:
    launch = doc.get("launch") or {}
    tp = launch.get("tp")
    lines = [f"stackcheck recommend · {doc.get('box')} · goal {doc.get('goal')} · tp {tp}"]
    for a in doc.get("assumptions") or []:
        lines.append(f"assumed: {a}")
    for n in doc.get("notes") or []:
        lines.append(f"note: {n}")
    plan = doc.get("plan")
    steps = (plan or {}).get("steps") or [] if isinstance(plan, dict) else []
    stack = ", ".join(f"{k} {v}" for k, v in (doc.get("stack") or {}).items())
    lines.append("")
    refused = doc.get("refused") or []
    if steps:
        lines.append(f"first, the plan ({len(steps)} step{'s' if len(steps) != 1 else ''}, as `stackcheck plan`):")
        lines += plan_step_lines(plan)
        lines.append("")
    if isinstance(plan, dict) and plan.get("still_failing_checks"):  # what the plan leaves failing, and its fix
        from stackcheck.render.text import failing_check_lines

        lines += failing_check_lines(plan)
        lines.append("")
    if steps:
        lines.append(f"then no launch (on {stack}):" if refused else f"then launch (on {stack}):")
    else:
        lines.append(f"no launch (on {stack}):" if refused else f"launch (on {stack}; no upgrade step needed):")
    if refused:  # the gate would refuse the line: none is proposed, and what stands in its way is named
        for r in refused:
            lines.append(f"  refused by the gate: {r.get('subject')} ({r.get('status')}): {r.get('message')}")
    else:
        lines.append(f"  {launch_line(doc)}")
    diff = doc.get("diff")
    if diff is not None:
        lines.append("")
        if diff:
            lines.append("changes to the given launch:")
            for c in diff:
                lines.append(f"  {_change_text(c)}" + (f"  ({c['title']})" if c.get("title") else ""))
                lines.append(f"      why: {c.get('why')}")
        else:
            lines.append("the given launch needs no change")
    lines.append("")
    lines.append("each choice")
    for p in doc.get("choices") or []:
        lines.append(f"  + [{p.get('decision')}] {_setting_text(p)}: {p.get('title')}")
        lines.append(f"      why: {p.get('why')}")
        g = gain_text(p.get("gain"), tp)
        if g:
            lines.append(f"      gain: {g}")
        if p.get("inferred") and p.get("note"):
            lines.append(f"      inferred: {p['note']}")
        lines += _source_lines("source", p.get("source"))
    by_why: dict[str, list[str]] = {}
    for u in doc.get("undecided") or []:  # decisions left open for one reason share a line
        by_why.setdefault(str(u.get("why")), []).append(str(u.get("decision")))
    for why, ids in by_why.items():
        lines.append(f"  ? [{', '.join(ids)}] not decided: {why}")
    alts = doc.get("alternatives") or []
    if alts:
        lines.append("")
        lines.append("alternatives considered")
        for p in alts:
            word = "rejected" if p.get("status") == "rejected" else "not chosen"
            lines.append(f"  - [{p.get('decision')}] {p.get('title')}: {word}: {p.get('why')}")
            if p.get("hint"):
                lines.append(f"      possible with: {p['hint']}")
    never = doc.get("never") or []
    if never:
        lines.append("")
        lines.append("never on this box")
        for n in never:
            what = " ".join(n.get("flags") or n.get("env") or []) or f"patch: {n.get('patch')}"
            lines.append(f"  ✗ {n.get('title')} ({n.get('effect')}): {n.get('why')}")
            if n.get("flags") or n.get("env"):
                lines.append(f"      drop: {what}")
            v = n.get("verdict")
            if isinstance(v, dict):
                eff = f" ({v.get('effect')})" if v.get("effect") else ""
                lines.append(f"      verdict: {v.get('feature')} {v.get('status')}{eff}")
            lines += _source_lines("evidence", n.get("evidence"))
    return "\n".join(printable(line) for line in lines) + "\n"


def _source_lines(label: str, source: Any) -> list[str]:
    """Sources one per line, by title (the addresses are in the JSON)."""
    items = source if isinstance(source, list) else [source]
    out = []
    for i, src in enumerate(items):
        text = source_text(src)
        if isinstance(src, dict) and src.get("title") and src.get("url"):
            text = str(src["title"])
        out.append(f"      {label}: {text}" if i == 0 else f"      {' ' * len(label)}  {text}")
    return out


def _change_text(c: dict[str, Any]) -> str:
    name, kind, action = c.get("name"), c.get("kind"), c.get("action")
    sep = "=" if kind == "env" else " "
    if action == "change":
        return f"change {name}{sep}{c.get('old')} -> {c.get('value')}"
    if action == "drop":
        old = c.get("old")
        return f"drop {name}" + (f"{sep}{old}" if old not in (None, True) else "")
    value = c.get("value")
    return f"add {name}" + (f"{sep}{value}" if value is not True else "")


def render_shell(doc: dict[str, Any]) -> str:
    """Copy-pasteable: comments, the plan's commands and the launch, one command per line."""
    out = [
        f"# stackcheck recommend: {doc.get('box')}; goal {doc.get('goal')}, tp {(doc.get('launch') or {}).get('tp')}"
    ]
    for a in doc.get("assumptions") or []:
        out.append(f"# assumed: {a}")
    plan = doc.get("plan")
    for i, s in enumerate((plan or {}).get("steps") or [] if isinstance(plan, dict) else [], 1):
        out.append(f"# plan step {i}: {s.get('component')} {s.get('from') or 'not installed'} -> {s.get('to')}")
        for w in s.get("warnings") or []:
            out.append(f"#   {w}")
        out.extend(str(c) for c in s.get("commands") or [])
    for p in doc.get("choices") or []:
        if not p.get("advice") and (p.get("flags") or p.get("env")):
            gain = gain_text(p.get("gain"), (doc.get("launch") or {}).get("tp"))
            out.append(f"# {_setting_text(p)}: {p.get('decision')}" + (f"; {gain}" if gain else ""))
    for r in doc.get("refused") or []:
        out.append(f"# no launch: the gate would refuse it: {r.get('subject')} ({r.get('status')}): {r.get('message')}")
    if not doc.get("refused"):
        out.append(launch_line(doc))
    # comments are made printable; commands are quoted by shlex (plan commands are quoted by the planner)
    return "\n".join(printable(line) if line.startswith("#") else _command_line(line) for line in out) + "\n"


def _command_line(line: str) -> str:
    """A plan command as it is (the planner quoted it), or, where it holds a character a terminal would act on (a
    user manifest's text), its words each quoted by shell_word ($'...' escapes: the same words to bash, nothing
    raw on the terminal); a line shlex cannot split is shown as a comment with its controls escaped."""
    if line.isprintable():
        return line
    try:
        words = shlex.split(line)
    except ValueError:
        return "# " + printable(line)
    return " ".join(w if w in _OPERATORS else shell_word(w) for w in words)


_OPERATORS = frozenset({"&&", "||", "|", ";"})
