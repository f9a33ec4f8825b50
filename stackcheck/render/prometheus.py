"""The Prometheus text exposition format, for node_exporter's textfile collector
(`stackcheck audit --format prometheus --output /var/lib/node_exporter/textfile_collector/stackcheck.prom`).

Every status is one-hot: a feature has one series per possible status, 1 for its status and 0 for the
others, so `stackcheck_feature_status{status="blocked"} == 1` alerts and `sum by (feature)` counts.
Label values are escaped per the exposition format (backslash, double quote, newline).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stackcheck.documents.report import CHECK_STATUSES, FEATURE_STATUSES, parse_timestamp
from stackcheck.facts.model import KERNEL_PACKAGES

if TYPE_CHECKING:
    from stackcheck.documents.types import Report

PACKAGE_LABELS = {
    "torch": "torch",
    **{name: name.replace("-", "_") for name in KERNEL_PACKAGES},
    "flashinfer-python": "flashinfer",
    "sglang": "sglang",
    "triton": "triton",
}


def escape_label(value: Any) -> str:
    """A label value as the exposition format wants it (backslash, double quote, newline escaped: the value
    round-trips). The file is node_exporter's but the same text goes to a terminal without --output: a
    control character, a bidi override or a lone surrogate from the box (a GPU or host name) is written as
    the visible escape stackcheck.redact.terminal_safe gives it (`\\x1b`, read back as those four
    characters), so the file is always valid UTF-8 and never drives the terminal that shows it."""
    from stackcheck.redact import terminal_safe

    text = "" if value is None else terminal_safe(str(value))
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def escape_help(text: str) -> str:
    return _encodable(text).replace("\\", "\\\\").replace("\n", "\\n")


def _encodable(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="backslashreplace").decode("utf-8")
    return text


class _Out:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def family(self, name: str, help_text: str, kind: str = "gauge") -> None:
        self.lines.append(f"# HELP {name} {escape_help(help_text)}")
        self.lines.append(f"# TYPE {name} {kind}")

    def sample(self, name: str, labels: dict[str, Any], value: float) -> None:
        body = ",".join(f'{k}="{escape_label(v)}"' for k, v in labels.items())
        text = repr(float(value)) if not float(value).is_integer() else str(int(value))
        self.lines.append(f"{name}{{{body}}} {text}" if body else f"{name} {text}")


def render_prometheus(report: Report) -> str:
    facts = report.get("facts") or {}
    host = report.get("host") or {}
    driver = facts.get("driver") or {}
    pkgs = facts.get("packages") or {}
    tool: Mapping[str, Any] = report.get("tool") or {}
    manifests: Mapping[str, Any] = report.get("manifests") or {}
    out = _Out()

    info: dict[str, Any] = {
        "hostname": host.get("hostname") or "",
        "driver": driver.get("version") or "",
        "cuda": driver.get("cuda") or "",
    }
    for pkg, label in PACKAGE_LABELS.items():
        p = pkgs.get(pkg)
        info[label] = p.get("version") or "" if isinstance(p, dict) and p.get("installed") else ""
    toolkits = [t for t in facts.get("cuda_toolkits") or [] if isinstance(t, dict) and t.get("active_for_build")]
    info["toolkit"] = toolkits[0].get("version") or "" if toolkits else ""
    info["stackcheck_version"] = tool.get("version") or ""
    info["manifests"] = manifests.get("data_version") or ""
    assumed = [str(a) for a in facts.get("assumed") or []]
    info["assumed"] = "true" if assumed else "false"
    out.family("stackcheck_info", "The serving stack of this box as labels (value always 1).")
    out.sample("stackcheck_info", info, 1)
    out.family(
        "stackcheck_assumed",
        "1 for each fact given by --assume-* instead of measured: this report is a what-if, not this box.",
    )
    for a in assumed:
        out.sample("stackcheck_assumed", {"what": a}, 1)

    models: dict[tuple[str, str], int] = {}
    for g in facts.get("gpus") or []:
        if isinstance(g, dict):
            key = (str(g.get("name") or "unknown"), str(g.get("compute_capability") or "unknown"))
            models[key] = models.get(key, 0) + 1
    out.family("stackcheck_gpus", "Visible GPUs per model and compute capability.")
    for (model, cc), n in sorted(models.items()):
        out.sample("stackcheck_gpus", {"model": model, "cc": cc}, n)

    out.family(
        "stackcheck_feature_status",
        "Serving feature status, one-hot over ok|blocked|unknown|not-applicable;"
        " effect is what a blocked feature does.",
    )
    for f in report.get("features") or []:  # the verdicts the engine built: dicts (no re-check)
        status = str(f.get("status"))
        statuses: tuple[str, ...] = FEATURE_STATUSES if status in FEATURE_STATUSES else (*FEATURE_STATUSES, status)
        for s in statuses:
            labels = {"feature": f.get("id"), "status": s, "effect": f.get("effect") or ""}
            out.sample("stackcheck_feature_status", labels, 1 if s == status else 0)

    out.family("stackcheck_check_status", "Stack check status, one-hot over ok|failed|warning|unknown|skipped.")
    for c in report.get("checks") or []:
        status = str(c.get("status"))
        statuses = CHECK_STATUSES if status in CHECK_STATUSES else (*CHECK_STATUSES, status)
        for s in statuses:
            out.sample("stackcheck_check_status", {"check": c.get("id"), "status": s}, 1 if s == status else 0)

    summary: Mapping[str, Any] = report.get("summary") or {}
    blocked = sum(1 for f in report.get("features") or [] if f.get("status") == "blocked")
    out.family("stackcheck_features_blocked", "Number of blocked serving features.")
    out.sample("stackcheck_features_blocked", {}, blocked)
    out.family("stackcheck_audit_consistent", "1 when every stack check passed (audit exit code 0), else 0.")
    out.sample("stackcheck_audit_consistent", {}, 1 if summary.get("consistent") else 0)

    out.family("stackcheck_probes_failed", "Probes that failed, timed out or were partial in this audit.")
    out.sample(
        "stackcheck_probes_failed",
        {},
        sum(
            1
            for p in report.get("probes") or []
            if isinstance(p, dict) and p.get("status") in ("failed", "timeout", "partial")
        ),
    )

    ts = parse_timestamp(host.get("collected_at"))
    if not math.isfinite(ts):
        ts = time.time()
    out.family("stackcheck_audit_timestamp_seconds", "When the facts of this audit were collected (Unix time).")
    out.sample("stackcheck_audit_timestamp_seconds", {}, round(ts, 3))
    return "\n".join(out.lines) + "\n"
