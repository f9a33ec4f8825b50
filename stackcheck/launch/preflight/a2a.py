"""The MoE all-to-all backend's own package (preflight.json a2a_packages): SGLang imports DeepEP (`deep_ep`) or
Mooncake's EP buffer (`mooncake.mooncake_ep_buffer`) in a try block when its token dispatcher module loads and
raises ImportError ('DeepEP is not installed', 'Mooncake EP is not installed') when a MoE layer builds the
dispatcher (model load, before serving). The packages probe reads whether the distribution is installed; a list
that does not name it (a hand-written or older report) leaves the check unknown. Pure."""

from __future__ import annotations

from collections.abc import Mapping

from stackcheck.launch.preflight.result import CheckResult
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

CHECK = "moe-a2a-package"


def _version_in(version: str | None, spec: str) -> bool | None:
    if version is None:
        return None
    from stackcheck.facts.versions import version_in

    return version_in(version, spec)


def check_a2a_package(
    backend: str | None, facts: Mapping[str, Any], data: Mapping[str, Any], sglang_version: str | None
) -> CheckResult | None:
    """The result for `--moe-a2a-backend BACKEND` (as the command gives it; None: not given), None where no entry
    of a2a_packages names that backend or the installed release is known to be outside its range."""
    table = data.get("a2a_packages")
    spec: Mapping[str, Any] = table if isinstance(table, Mapping) else {}
    entry = next((e for e in spec.get("entries") or [] if isinstance(e, Mapping) and e.get("backend") == backend), None)
    if backend is None or entry is None:
        return None
    if _version_in(sglang_version, str(entry.get("versions", ""))) is False:
        return None
    dists = [str(d) for d in entry.get("distributions") or []]
    module = str(entry.get("module"))
    source = entry.get("source")
    packages = facts.get("packages") if isinstance(facts.get("packages"), Mapping) else None
    listed = {d: packages[d] for d in dists if packages is not None and isinstance(packages.get(d), Mapping)}
    installed = [d for d, p in listed.items() if p.get("installed") is True]
    subject = f"--moe-a2a-backend {backend}"
    if installed:
        unread = entry.get("installed_unknown")
        if isinstance(unread, str):
            return CheckResult(CHECK, "unknown", f"{installed[0]} installed", module, unread, source, subject)
        return CheckResult(CHECK, "ok", f"{installed[0]} installed", module, f"{installed[0]} is installed", source,
                           subject)  # fmt: skip
    names = " or ".join(dists)
    if len(listed) == len(dists) and all(p.get("installed") is False for p in listed.values()):
        return CheckResult(CHECK, "fail", "not installed", module, str(entry.get("message")), source, subject)
    return CheckResult(
        CHECK,
        "unknown",
        None,
        module,
        f"--moe-a2a-backend {backend} needs {names} (SGLang imports {module}), and the facts do not say whether it "
        "is installed (a packages list that does not name it)",
        source,
        subject,
    )
