"""Text for `stackcheck manifests derive`: what each release's files say, and with --against what
differs from the manifests. Returns strings; the command prints them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stackcheck.derive.compare import KINDS, Comparison


def printable(text: str) -> str:
    """Text from a release (file names, flags, choices) with control and bidi characters shown as escapes:
    nothing a wheel holds reaches the terminal as a control sequence."""
    import unicodedata

    out = []
    for char in text:
        if unicodedata.category(char) in ("Cc", "Cf", "Cs") and char != "\t":
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(char)
    return "".join(out)


def _value(v: Any) -> str:
    return json.dumps(v) if not isinstance(v, str) else v


def summary(derived: Mapping[str, Any]) -> list[str]:
    lines = [f"{derived.get('package')} {derived.get('version')} ({derived.get('kind')}: {derived.get('origin')})"]
    pins = derived.get("pins")
    if isinstance(pins, Mapping):
        reqs = pins.get("requires") or {}
        text = ", ".join(f"{d}{s} (line {(pins.get('lines') or {}).get(d)})" for d, s in sorted(reqs.items()))
        lines.append(f"  pins ({pins.get('file')}): {text or 'none on the packages the data tracks'}")
        if pins.get("requires_python"):
            lines.append(f"  requires-python: {pins['requires_python']}")
        for extra, deps in sorted((pins.get("optional_requires") or {}).items()):
            lines.append(f"  pins under [{extra}]: " + ", ".join(f"{d}{s}" for d, s in sorted(deps.items())))
    for gate_id, reading in sorted((derived.get("gates") or {}).items()):
        if reading.get("status") == "ok":
            lines.append(
                f"  gate {gate_id} = {_value(reading.get('value'))} ({reading.get('file')} line {reading.get('line')})"
            )
        else:
            lines.append(f"  gate {gate_id}: {reading.get('status')} ({reading.get('reason')})")
    flags = derived.get("flags")
    if isinstance(flags, Mapping):
        options = flags.get("options") or {}
        present = [f for f, e in options.items() if e.get("present")]
        absent = [f for f, e in options.items() if not e.get("present")]
        lines.append(
            f"  flags: {len(flags.get('declared') or [])} declared; of launch.json's {len(options)}: "
            f"{len(present)} present" + (f", absent: {', '.join(sorted(absent))}" if absent else "")
        )
    archs = derived.get("archs")
    if isinstance(archs, Mapping):
        targets = [*archs.get("sass", []), *archs.get("ptx", [])]
        lines.append(
            f"  archs: {', '.join(targets) or 'no GPU code'} ({len(archs.get('files') or [])} of "
            f"{archs.get('scanned')} binaries carry GPU code; libcudart {archs.get('cudart') or '-'})"
        )
    if derived.get("torch_cuda"):
        lines.append(
            f"  torch CUDA build: {derived['torch_cuda']} (torch/version.py line {derived.get('torch_cuda_line')})"
        )
    for u in derived.get("undecided") or []:
        lines.append(f"  not decided by the files: {u.get('feature')}: " + "; ".join(u.get("hand") or []))
    for problem in derived.get("problems") or []:
        lines.append(f"  not read: {problem}")
    return lines


def differences(cmp: Comparison, where: str) -> list[str]:
    counts = cmp.agreement()
    head = "known release" if cmp.known else "release not in the data"
    lines = [f"  against {where} ({head}):"]
    for kind in KINDS:
        c = counts[kind]
        if c:
            lines.append(f"    {kind:5s} " + ", ".join(f"{n} {status}" for status, n in sorted(c.items())))
    mark = {"differs": "≠", "derived-only": "+", "shipped-only": "-", "new": "+"}
    for f in cmp.differences:
        text = f"    {mark.get(f.status, '?')} {f.kind} {f.key}: derived {_value(f.derived)}"
        if f.status != "new":
            text += f", data {_value(f.shipped)}"
        if f.where:
            text += f" [{f.where}]"
        if f.note:
            text += f" ({f.note})"
        lines.append(text)
    return lines
