"""Probes: each reads one part of the box and returns facts sections (see interface.py, runner.py).

`PROBES` maps a probe name to its class. The probe modules import only the standard library at module
level (pynvml is imported inside NvmlProbe.run), so importing this registry is cheap.
"""

from __future__ import annotations

from stackcheck.probes.cudalibs import CudaLibsProbe
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult
from stackcheck.probes.nvml import NvmlProbe
from stackcheck.probes.packages import PackagesProbe
from stackcheck.probes.pcie import PcieProbe
from stackcheck.probes.system import SystemProbe
from stackcheck.probes.toolkits import ToolkitsProbe

PROBES: dict[str, type[Probe]] = {
    "nvml": NvmlProbe,
    "toolkits": ToolkitsProbe,
    "packages": PackagesProbe,
    "system": SystemProbe,
    "cuda_libs": CudaLibsProbe,
    "pcie": PcieProbe,
    # The probes that need the first round's results (package locations, toolkits) run after it, from
    # stackcheck.pipeline.post_probes: source_tables and jit (stackcheck.probes.jit) always; binaries and
    # libs with --deep.
}

DEFAULT_PROBES: tuple[str, ...] = ("nvml", "toolkits", "packages", "system", "cuda_libs", "pcie")

__all__ = ["DEFAULT_PROBES", "PROBES", "Probe", "ProbeContext", "ProbeResult"]
