"""The --deep probes: the CUDA targets compiled into the packages' binaries (facts.binaries) and where each
package's CUDA libraries would be loaded from (facts.libs). Both read the package locations from the
packages probe, and every file through the probe's filesystem view; the heavy modules (ELF, fatbin,
ld.so.cache) are imported only when a probe runs."""

from __future__ import annotations

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult, ProbeStatus

if TYPE_CHECKING:
    from typing import Any, ClassVar


def _status(section: dict[str, Any], what: str) -> tuple[ProbeStatus, str | None]:
    skipped = sorted(
        name
        for name, value in section.items()
        if isinstance(value, dict) and ("skipped" in value or "truncated" in value)
    )
    if skipped:
        return "partial", f"{what} not fully read for {', '.join(skipped)}"
    return "ok", None


class BinariesProbe(Probe):
    """facts.binaries: SASS and PTX targets per package file, from ELF and fatbin headers (--deep)."""

    name: ClassVar[str] = "binaries"
    timeout_s: ClassVar[float] = 20.0
    sections: ClassVar[tuple[str, ...]] = ("binaries",)
    needs: ClassVar[tuple[str, ...]] = ("packages",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        import time

        from stackcheck.readers.binaries import DEFAULT_BUDGET_S, kept_binaries, probe_binaries
        from stackcheck.readers.fsview import is_host

        budget = DEFAULT_BUDGET_S
        if ctx.deadline is not None:  # stop cleanly (marked truncated) before the runner gives up on us
            budget = max(0.0, min(budget, ctx.deadline - time.monotonic() - 0.2))
        # what earlier runs read of this host's files, by file stamp (stackcheck.readers.kept)
        kept = kept_binaries(ctx.cache_dir) if is_host(ctx.fs) else None
        section = probe_binaries(ctx.facts, budget_s=budget, view=ctx.fs, kept=kept)
        status, reason = _status(section, "binaries")
        return ProbeResult({"binaries": section}, status, reason)


class LibsProbe(Probe):
    """facts.libs: which libcudart / libnccl / libcudnn / libcublas each package's libraries would load,
    following the loader's search order in the server's environment and the box's own ld.so.cache (--deep)."""

    name: ClassVar[str] = "libs"
    timeout_s: ClassVar[float] = 10.0
    sections: ClassVar[tuple[str, ...]] = ("libs",)
    needs: ClassVar[tuple[str, ...]] = ("packages", "cuda_toolkits")

    def run(self, ctx: ProbeContext) -> ProbeResult:
        from stackcheck.readers.fsview import is_host
        from stackcheck.readers.libs import kept_libs, probe_libs

        # the loader's search follows the environment the server will be started from: the gated command's own (its
        # `env LD_LIBRARY_PATH=...` prefix), as the cuda_libs probe's (igap45: it was the audit's own environment)
        env = {"LD_LIBRARY_PATH": ctx.loader_environ.get("LD_LIBRARY_PATH", "")}
        # what earlier runs read of this host's files, by file stamp (stackcheck.readers.kept)
        kept = kept_libs(ctx.cache_dir) if is_host(ctx.fs) else None
        section = probe_libs(ctx.facts, env, view=ctx.fs, kept=kept, cwd=ctx.launch_cwd)
        status, reason = _status(section.get("packages") or {}, "libraries")
        if str(section.get("ld_cache", "")).startswith("unavailable"):
            status, reason = "partial", f"ld.so.cache {section['ld_cache']}"
        return ProbeResult({"libs": section}, status, reason)
