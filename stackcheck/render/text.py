"""The human format: the box in a few lines, then blocked features first with their one-line reason,
stack checks, the plan. Plain text when piped or NO_COLOR; rich colours on a terminal."""

from __future__ import annotations

from typing import Any

from stackcheck.facts import serving_elsewhere, target_text
from stackcheck.render.interface import source_text, value_text

STATUS_ORDER = {"blocked": 0, "unknown": 1, "ok": 2, "not-applicable": 3}
CHECK_ORDER = {"failed": 0, "warning": 1, "unknown": 2, "ok": 3, "skipped": 4}
MARK = {"blocked": "✗", "unknown": "?", "ok": "✓", "not-applicable": "-", "failed": "✗", "warning": "!", "skipped": "-"}
STYLE = {
    "blocked": "bold red",
    "unknown": "yellow",
    "ok": "green",
    "not-applicable": "dim",
    "failed": "bold red",
    "warning": "yellow",
    "skipped": "dim",
}

PACKAGE_ORDER = [
    "torch",
    "sglang-kernel",
    "sgl-kernel",
    "flashinfer-python",
    "flashinfer-cubin",
    "flashinfer-jit-cache",
    "sglang",
    "vllm",
    "triton",
    "nvidia-nccl-cu13",
    "nvidia-nccl-cu12",
]


def box_lines(report: dict[str, Any]) -> list[str]:
    facts = report.get("facts") or {}
    lines = []
    tool = report.get("tool") or {}
    man = report.get("manifests") or {}
    host = report.get("host") or {}
    lines.append(
        f"stackcheck {tool.get('version', '?')} · manifests {man.get('data_version', '?')} ({man.get('date', '?')})"
        f" · host {host.get('hostname') or 'unknown'} · {host.get('collected_at', '?')}"
    )
    gpus = facts.get("gpus")
    driver = facts.get("driver") or {}
    topo = facts.get("topology") or {}
    if gpus:
        models: dict[str, int] = {}
        for g in gpus:
            key = f"{g.get('name') or 'GPU'} (cc {g.get('compute_capability') or '?'})"
            models[key] = models.get(key, 0) + 1
        gpu_text = ", ".join(f"{n}× {k}" for k, n in models.items())
    elif gpus is None:
        gpu_text = "GPUs unknown"
    else:
        gpu_text = "no GPU visible"
    link = topo.get("interconnect")
    link_text = f" · interconnect {link}" if link else ""
    p2p = topo.get("p2p")
    p2p_text = f" · P2P {p2p}" if p2p else ""
    if driver.get("version"):
        drv = f"driver {driver['version']} (CUDA {driver.get('cuda') or '?'})"
    else:
        drv = "driver unknown" + (f": {driver['error']}" if driver.get("error") else "")
    lines.append(f"box:   {gpu_text}{link_text}{p2p_text} · {drv}")
    pkgs = facts.get("packages") or {}
    stack = []
    for name in PACKAGE_ORDER:
        p = pkgs.get(name)
        if isinstance(p, dict) and p.get("installed"):
            stack.append(f"{name} {p.get('version')}")
    tk = [t for t in facts.get("cuda_toolkits") or [] if t.get("active_for_build")]
    if tk:
        stack.append(f"toolkit {tk[0].get('version')}")
    lines.append(
        "stack: "
        + (" · ".join(stack) if stack else ("packages unknown" if not pkgs else "none of the serving packages"))
    )
    target = target_text(facts)
    if target:
        lines.append(f"env:   {target}")
    elsewhere = serving_elsewhere(facts)
    if elsewhere:
        lines.append(f"note:  {elsewhere}")
    if facts.get("assumed"):
        lines.append("assumed: " + ", ".join(facts["assumed"]))
    return lines


def first_reason(item: dict[str, Any]) -> dict[str, Any] | None:
    for r in item.get("reasons") or []:
        if r.get("result") in ("fail", "unknown"):
            return dict(r)
    return None


def reason_line(r: dict[str, Any]) -> str:
    text = str(r.get("message", ""))
    if r.get("result") == "fail" and ("observed" in r or "required" in r):
        text += f" [observed {value_text(r.get('observed'))}; required {value_text(r.get('required'))}]"
    if r.get("gpu"):
        text += f" on {r['gpu']}"
    if r.get("patched"):
        text += f" (locally patched: {r['patched']})"
    if r.get("inferred"):
        text += " (inferred)"
    if r.get("source"):
        src = r["source"][0] if isinstance(r["source"], list) and r["source"] else r["source"]
        more = f" (+{len(r['source']) - 1} more)" if isinstance(r["source"], list) and len(r["source"]) > 1 else ""
        text += f" — source: {source_text(src)}{more}"
    return text


def feature_rows(report: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    rows = []
    for f in sorted(
        report.get("features") or [], key=lambda f: (STATUS_ORDER.get(f.get("status", ""), 9), f.get("id", ""))
    ):
        r = first_reason(f)
        status = f.get("status", "?")
        effect = f.get("effect") or ""
        if status == "ok":
            patched = [x for x in f.get("reasons") or [] if x.get("patched")]
            notes = [
                x.get("message")
                for x in f.get("reasons") or []
                if x.get("result") == "pass" and x.get("message") not in (None, "requirement met")
            ]
            text = ("locally patched: " + str(patched[0]["patched"])) if patched else (str(notes[0]) if notes else "")
        elif status == "not-applicable":
            text = str((f.get("reasons") or [{}])[0].get("message", ""))
        else:
            text = reason_line(r) if r else ""
        rows.append((status, str(f.get("id")), effect, text))
    return rows


def check_rows(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    rows = []
    for c in sorted(
        report.get("checks") or [], key=lambda c: (CHECK_ORDER.get(c.get("status", ""), 9), c.get("id", ""))
    ):
        r = first_reason(c)
        rows.append((str(c.get("status")), str(c.get("id")), reason_line(r) if r else ""))
    return rows


def plan_lines(report: dict[str, Any]) -> list[str]:
    plan = report.get("plan")
    if not isinstance(plan, dict):
        return []
    lines: list[str] = []
    steps = plan.get("steps") or []
    if plan.get("note"):
        lines.append(f"  note: {plan['note']}")
    if plan.get("error"):
        lines.append(f"  no plan: {plan['error']}")
    if not steps and not plan.get("error"):
        if plan.get("elsewhere"):
            lines.append(f"  nothing planned for this environment: audit the serving one ({plan['elsewhere'][0]})")
        elif plan.get("note") and "would block what is ok now" in str(plan.get("note")):
            lines.append("  nothing to upgrade without losing a feature that is ok now (see the note)")
        else:
            lines.append("  nothing to upgrade: the stack is the newest the manifests know for these GPUs")
    for i, s in enumerate(steps, 1):
        lines.append(f"  {i}. {s.get('component')}: {s.get('from') or 'not installed'} → {s.get('to')}")
        if s.get("reason"):
            lines.append(f"     why: {s['reason']}")
        for w in s.get("warnings") or []:
            lines.append(f"     ! {w}")
        for cmd in s.get("commands") or []:
            lines.append(f"     $ {cmd}")
        if s.get("unblocks"):
            lines.append(f"     unblocks: {', '.join(s['unblocks'])}")
    for b in plan.get("still_blocked") or []:
        lines.append(f"  still blocked: {b.get('feature')}: {b.get('why')}")
        w = b.get("workaround")
        if isinstance(w, dict):
            lines.append(f"     workaround (unsupported upstream): {w.get('text', '')}".rstrip())
            patch = w.get("patch")
            if isinstance(patch, dict):
                lines.append(
                    f"     patch: {patch.get('file')}: add key {patch.get('add_key')} to {patch.get('symbol')}"
                )
        elif w:
            lines.append(f"     workaround (unsupported upstream): {w}")
    return lines


def probe_line(report: dict[str, Any]) -> str:
    parts = []
    for p in report.get("probes") or []:
        s = f"{p.get('name')} {p.get('status')}"
        if p.get("status") != "ok" and p.get("reason"):
            s += f" ({p['reason']})"
        parts.append(s)
    return "probes: " + ", ".join(parts) if parts else ""


def render_plain(report: dict[str, Any]) -> str:
    out = box_lines(report)
    if "features" in report:
        out.append("")
        out.append("features")
        for status, fid, effect, text in feature_rows(report):
            eff = f" ({effect})" if effect else ""
            out.append(f"  {MARK.get(status, '?')} {fid:<28} {status}{eff}" + (f": {text}" if text else ""))
    if "checks" in report:
        out.append("")
        out.append("stack checks")
        for status, cid, text in check_rows(report):
            out.append(f"  {MARK.get(status, '?')} {cid:<28} {status}" + (f": {text}" if text else ""))
    if "plan" in report:
        out.append("")
        out.append("plan")
        out.extend(plan_lines(report))
    if "features" not in report and "plan" not in report:
        out.extend(facts_lines(report))
    line = probe_line(report)
    if line:
        out.append("")
        out.append(line)
    return "\n".join(out) + "\n"


def facts_lines(report: dict[str, Any]) -> list[str]:
    facts = report.get("facts") or {}
    out = ["", "gpus"]
    for g in facts.get("gpus") or []:
        mem = g.get("memory_bytes")
        out.append(
            f"  {g.get('index')}: {g.get('name')} cc {g.get('compute_capability')} "
            f"{(mem or 0) / 2**30:.0f} GiB {g.get('pci_bus_id') or ''}"
            + (f" error: {g['error']}" if g.get("error") else "")
        )
    topo = facts.get("topology") or {}
    for pair in topo.get("pairs") or []:
        out.append(f"  GPU{pair.get('a')}↔GPU{pair.get('b')}: {pair.get('link')} p2p {pair.get('p2p_read')}")
    out.append("cuda toolkits")
    for t in facts.get("cuda_toolkits") or []:
        flags = [k for k in ("active_for_build", "active_for_torch") if t.get(k)]
        out.append(
            f"  {t.get('version')} {t.get('path') or ''} ({t.get('source')})"
            + (f" [{', '.join(flags)}]" if flags else "")
        )
    out.append("packages")
    for name, p in sorted((facts.get("packages") or {}).items()):
        if p.get("installed"):
            extra = f" cuda {p['cuda']}" if p.get("cuda") else ""
            out.append(
                f"  {name} {p.get('version')}{extra} at {p.get('location')}"
                + (" (editable)" if p.get("editable") else "")
                + (f" ({p['copies']} copies)" if (p.get("copies") or 1) > 1 else "")
            )
    system = facts.get("system") or {}
    out.append("system")
    out.append(
        f"  {system.get('os')} · kernel {system.get('kernel')} · glibc {system.get('glibc')} · "
        f"{system.get('python_implementation')} {system.get('python')} · {system.get('machine')}"
        + (f" · container {system['container']}" if system.get("container") else "")
    )
    return out


def render_table(report: dict[str, Any], *, color: bool = False) -> str:
    if not color:
        return render_plain(report)
    import io

    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    import shutil

    width = shutil.get_terminal_size((140, 40)).columns
    console = Console(file=buf, force_terminal=True, width=width, highlight=False)
    for line in box_lines(report):
        console.print(line, markup=False)
    if "features" in report:
        t = Table(title="features", title_justify="left", show_lines=False, expand=False)
        t.add_column("", no_wrap=True)
        t.add_column("feature", no_wrap=True)
        t.add_column("status", no_wrap=True)
        t.add_column("why")
        for status, fid, effect, text in feature_rows(report):
            st = STYLE.get(status, "")
            t.add_row(
                f"[{st}]{MARK.get(status, '?')}[/]",
                fid,
                f"[{st}]{status}{' (' + effect + ')' if effect else ''}[/]",
                _escape(text),
            )
        console.print(t)
    if "checks" in report:
        t = Table(title="stack checks", title_justify="left")
        t.add_column("")
        t.add_column("check", no_wrap=True)
        t.add_column("status", no_wrap=True)
        t.add_column("why")
        for status, cid, text in check_rows(report):
            st = STYLE.get(status, "")
            t.add_row(f"[{st}]{MARK.get(status, '?')}[/]", cid, f"[{st}]{status}[/]", _escape(text))
        console.print(t)
    if "plan" in report:
        console.print("[bold]plan[/]")
        for line in plan_lines(report):
            console.print(line, markup=False)
    if "features" not in report and "plan" not in report:
        for line in facts_lines(report):
            console.print(line, markup=False)
    line = probe_line(report)
    if line:
        console.print(line, markup=False, style="dim")
    return buf.getvalue()


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
