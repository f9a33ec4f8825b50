"""A Kubernetes Node Feature Discovery feature file (the `local` source's features.d directory):

    stackcheck audit --format nfd --output /etc/kubernetes/node-feature-discovery/features.d/stackcheck

One `name=value` per line; lines starting with `#` are comments. Labels use the `stackcheck.io/` prefix,
which nfd-master must allow (`-extra-label-ns=stackcheck.io` on releases that need it). Every name and value
is made valid by Kubernetes' label rules: name at most 63 characters of `[A-Za-z0-9_.-]`, starting and
ending alphanumeric; value empty or the same. Versions are sanitised (`2.9.1+cu130` becomes `2.9.1-cu130`).
The file is written atomically by --output through a hidden temporary file, which NFD ignores.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stackcheck.facts.model import KERNEL_PACKAGES

if TYPE_CHECKING:
    from stackcheck.documents.types import Report

PREFIX = "stackcheck.io/"
NAME_RE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
PREFIX_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
MAX_NAME = 63
MAX_VALUE = 63
STACK_PACKAGES = {
    "torch": "torch",
    **{name: name for name in KERNEL_PACKAGES},
    "flashinfer-python": "flashinfer",
    "sglang": "sglang",
}

_BAD = re.compile(r"[^A-Za-z0-9_.-]+")


def sanitize(text: Any, limit: int) -> str:
    """Any text as a valid label name part or value: invalid runs become '-', trimmed to alphanumeric ends;
    an over-long result keeps its head and a short hash of the whole, so distinct inputs stay distinct."""
    raw = "" if text is None else str(text)
    s = _BAD.sub("-", raw).strip("-_.")
    if len(s) > limit:
        digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        s = s[: limit - 9].rstrip("-_.") + "-" + digest
    return s


def valid_name(name: str) -> bool:
    prefix, _, local = name.rpartition("/")
    if prefix and (len(prefix) > 253 or not PREFIX_RE.match(prefix)):
        return False
    return len(local) <= MAX_NAME and bool(NAME_RE.match(local))


def valid_value(value: str) -> bool:
    return value == "" or (len(value) <= MAX_VALUE and bool(NAME_RE.match(value)))


def nfd_labels(report: Report) -> dict[str, str]:
    """The labels, name -> value, every one valid; a name that sanitises to nothing is left out."""
    facts = report.get("facts") or {}
    labels: dict[str, str] = {}

    def put(name: str, value: Any) -> None:
        local = sanitize(name, MAX_NAME)
        if not local:
            return
        labels[PREFIX + local] = sanitize(value, MAX_VALUE)

    for f in report.get("features") or []:
        if isinstance(f, dict) and f.get("id"):
            put(f"feature.{f['id']}", f.get("status"))
    for c in report.get("checks") or []:
        if isinstance(c, dict) and c.get("id"):
            put(f"check.{c['id']}", c.get("status"))
    gpus = [g for g in facts.get("gpus") or [] if isinstance(g, dict)]
    put("gpu.count", len(gpus))
    ccs = sorted({str(g.get("compute_capability")) for g in gpus if g.get("compute_capability")})
    if ccs:
        # sm: the compute capability as CUDA names it (12.0 -> 120); several models: joined with '_'
        put("gpu.sm", "_".join(cc.replace(".", "") for cc in ccs))
        put("gpu.cc", "_".join(ccs))
    names = sorted({str(g.get("name")) for g in gpus if g.get("name")})
    if names:
        put("gpu.model", "_".join(names))
    topo = facts.get("topology") or {}
    if topo.get("interconnect"):
        put("gpu.interconnect", topo["interconnect"])
    driver = facts.get("driver") or {}
    if driver.get("version"):
        put("stack.driver", driver["version"])
    if driver.get("cuda"):
        put("stack.driver-cuda", driver["cuda"])
    pkgs = facts.get("packages") or {}
    for pkg, short in STACK_PACKAGES.items():
        p = pkgs.get(pkg)
        if isinstance(p, dict) and p.get("installed") and p.get("version"):
            put(f"stack.{short}", p["version"])
    summary: Mapping[str, Any] = report.get("summary") or {}
    put("consistent", "true" if summary.get("consistent") else "false")
    # a what-if (--assume-*) must never pass for this node's measurement: a scheduler can exclude it
    put("assumed", "true" if facts.get("assumed") else "false")
    manifests: Mapping[str, Any] = report.get("manifests") or {}
    if manifests.get("data_version"):
        put("manifests", manifests["data_version"])
    return labels


def render_nfd(report: Report) -> str:
    host = report.get("host") or {}
    head = [
        "# stackcheck node features for Node Feature Discovery (local source, features.d)",
        f"# host {_comment(host.get('hostname'))}, collected {_comment(host.get('collected_at'))}",
    ]
    assumed = (report.get("facts") or {}).get("assumed")
    if assumed:
        head.append(f"# ASSUMED, not measured on this node (--assume-*): {_comment(', '.join(map(str, assumed)))}")
    body = [f"{k}={v}" for k, v in sorted(nfd_labels(report).items())]
    return "\n".join(head + body) + "\n"


def _comment(value: Any) -> str:
    """Text for a comment line: printable, one line, short."""
    text = "" if value is None else str(value)
    return "".join(ch if ch.isprintable() else "?" for ch in text)[:120] or "?"
