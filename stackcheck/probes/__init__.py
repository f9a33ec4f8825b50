"""Probes: each reads one part of the box and returns facts sections (see interface.py, runner.py).

`PROBES` maps a probe name to its class; each class declares the sections it produces and the sections it
needs, and the runner starts it once those are there (see runner.py). The probe modules import only the
standard library at module level (pynvml is imported inside NvmlProbe.run, the ELF and fatbin readers inside
the deep probes), and the registry itself is built on first use (PEP 562): importing one module of this package
(gpu_usage) does not import every probe. The filesystem view the probes read through is
stackcheck/readers/fsview.py, below the probes, so the readers and `gate --facts FILE` use it without this package.
"""

from __future__ import annotations

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult

#: what every audit runs (`stackcheck probe` and the verbs that judge); --deep adds DEEP_PROBES
#: the python probe comes first: it is quick (cached or this process) and the packages wait for it, so it
#: gets the interpreter lock before NVML's library loading does
DEFAULT_PROBES: tuple[str, ...] = (
    "python", "nvml", "toolkits", "packages", "system", "source_tables", "derived", "environments", "jit",
    "cuda_libs", "pcie", "kernel_symbols", "container_toolkit",
)  # fmt: skip
DEEP_PROBES: tuple[str, ...] = ("binaries", "libs")
#: the probes that read the host itself whatever the view: the driver and the GPUs, and the PCIe path between
#: them (--host-facts replaces them)
HOST_PROBES: tuple[str, ...] = ("nvml", "pcie", "container_toolkit")


def _registry() -> dict[str, type[Probe]]:
    from stackcheck.probes.container_toolkit import ContainerToolkitProbe
    from stackcheck.probes.cudalibs import CudaLibsProbe
    from stackcheck.probes.deep import BinariesProbe, LibsProbe
    from stackcheck.probes.derived import DerivedProbe
    from stackcheck.probes.environments import EnvironmentsProbe
    from stackcheck.probes.jit import JitProbe
    from stackcheck.probes.kernel_symbols import KernelSymbolsProbe
    from stackcheck.probes.nvml import NvmlProbe
    from stackcheck.probes.packages import PackagesProbe
    from stackcheck.probes.pcie import PcieProbe
    from stackcheck.probes.python_env import PythonProbe
    from stackcheck.probes.source_tables import SourceTablesProbe
    from stackcheck.probes.system import SystemProbe
    from stackcheck.probes.toolkits import ToolkitsProbe

    return {
        "nvml": NvmlProbe,
        "python": PythonProbe,
        "toolkits": ToolkitsProbe,
        "packages": PackagesProbe,
        "system": SystemProbe,
        "source_tables": SourceTablesProbe,
        "derived": DerivedProbe,
        "environments": EnvironmentsProbe,
        "jit": JitProbe,
        "cuda_libs": CudaLibsProbe,
        "pcie": PcieProbe,
        "kernel_symbols": KernelSymbolsProbe,
        "binaries": BinariesProbe,
        "libs": LibsProbe,
        "container_toolkit": ContainerToolkitProbe,
    }


def __getattr__(name: str) -> Any:
    if name == "PROBES":
        value: Any = _registry()
    elif name in ("Probe", "ProbeContext", "ProbeResult"):
        from stackcheck.probes import interface

        value = getattr(interface, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = ["DEEP_PROBES", "DEFAULT_PROBES", "HOST_PROBES", "PROBES", "Probe", "ProbeContext", "ProbeResult"]
