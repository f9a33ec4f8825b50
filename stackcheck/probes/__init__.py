"""Probes: each reads one part of the box and returns facts sections (see interface.py, runner.py).

`PROBES` maps a probe name to its class; each class declares the sections it produces and the sections it
needs, and the runner starts it once those are there (see runner.py). The probe modules import only the
standard library at module level (pynvml is imported inside NvmlProbe.run, the ELF and fatbin readers inside
the deep probes), and the registry itself is built on first use (PEP 562): importing one module of this package
(gpu_usage) does not import every probe, and the runner imports each probe's module only when it starts it. The
filesystem view the probes read through is stackcheck/readers/fsview.py, below the probes, so the readers and
`gate --facts FILE` use it without this package.
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
    "cuda_libs", "pcie", "kernel_symbols", "container_toolkit", "docker_daemon", "flashinfer_cubins",
)  # fmt: skip
DEEP_PROBES: tuple[str, ...] = ("binaries", "libs")
#: the probes that read the host itself whatever the view: the driver and the GPUs, and the PCIe path between
#: them (--host-facts replaces them)
HOST_PROBES: tuple[str, ...] = ("nvml", "pcie", "container_toolkit", "docker_daemon")


#: where each probe's class lives, the sections it sets and the sections it reads: the runner orders the waves from
#: this table and imports a probe's module only when the probe starts, so the first wave (the target's Python, NVML)
#: starts before the later waves' modules are imported (tests/probes/test_probe_runner.py checks it against the
#: classes' own `sections` and `needs`)
_TABLE: tuple[tuple[str, str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("nvml", "nvml", "NvmlProbe", ("driver", "gpus", "topology"), ()),
    ("python", "python_env", "PythonProbe", ("python",), ()),
    ("toolkits", "toolkits", "ToolkitsProbe", ("cuda_toolkits",), ("python",)),
    ("packages", "packages", "PackagesProbe", ("packages",), ("python",)),
    ("system", "system", "SystemProbe", ("system",), ("python",)),
    ("source_tables", "source_tables", "SourceTablesProbe", ("source_tables",), ("packages",)),
    ("derived", "derived", "DerivedProbe", ("derived",), ("packages",)),
    ("environments", "environments", "EnvironmentsProbe", ("other_environments",), ("python", "packages")),
    ("jit", "jit", "JitProbe", ("jit",), ("cuda_toolkits", "packages")),
    ("cuda_libs", "cudalibs", "CudaLibsProbe", ("cuda_libs",), ()),
    ("pcie", "pcie", "PcieProbe", ("pcie",), ()),
    ("kernel_symbols", "kernel_symbols", "KernelSymbolsProbe", ("kernel_symbols",), ("packages", "python")),
    ("binaries", "deep", "BinariesProbe", ("binaries",), ("packages",)),
    ("libs", "deep", "LibsProbe", ("libs",), ("packages", "cuda_toolkits")),
    ("container_toolkit", "container_toolkit", "ContainerToolkitProbe", ("container_toolkit",), ()),
    ("docker_daemon", "docker_daemon", "DockerDaemonProbe", ("docker_daemon",), ()),
    ("flashinfer_cubins", "flashinfer_cubins", "FlashinferCubinsProbe", ("flashinfer_cubins",),
     ("packages", "python", "gpus")),
)  # fmt: skip


#: the probes started before the others ready at the same time (Probe.starts_first): the NVML probe takes the forked
#: reader's answer (nvml_early) and only waits on its pipe, so it goes first and reads the answer as soon as it is there
_STARTS_FIRST = frozenset({"nvml"})
#: the probes that read the host only for an image audit (`--image`: the view has image_facts), and the reason they are
#: skipped with on any other view: the runner says so without importing their modules or starting their threads
#: (the modules' own run() says the same, for a registry of classes)
IMAGE_ONLY: dict[str, str] = {
    "container_toolkit": "only an image audit (--image) judges NVIDIA_REQUIRE_*",
    "docker_daemon": "only an image audit (--image) judges how its container starts",
}
#: the probes whose `prepare` the runner calls when the first wave starts (Probe.prepares): the toolkits probe runs
#: `nvcc --version` then, while the target's Python is read, instead of after it; the cubin probe takes its kept
#: directories' stamps and odd names (iperf42)
_PREPARES = frozenset({"toolkits", "flashinfer_cubins"})


class LazyProbe:
    """A probe named by the table above: its sections and needs without its module; `load` imports the class."""

    __slots__ = ("cls_name", "image_only", "module", "name", "needs", "prepares", "sections", "starts_first")

    def __init__(self, name: str, module: str, cls_name: str, sections: tuple[str, ...], needs: tuple[str, ...]):
        self.name, self.module, self.cls_name = name, f"stackcheck.probes.{module}", cls_name
        self.sections, self.needs = sections, needs
        self.starts_first, self.prepares = name in _STARTS_FIRST, name in _PREPARES
        self.image_only: str | None = IMAGE_ONLY.get(name)  # (the reason it is skipped outside an image audit)

    def load(self) -> type[Probe]:
        from importlib import import_module

        cls: type[Probe] = getattr(import_module(self.module), self.cls_name)
        return cls


def lazy_registry() -> dict[str, LazyProbe]:
    """The registry the runner uses by default: every probe, none of their modules imported yet."""
    return {row[0]: LazyProbe(*row) for row in _TABLE}


def _registry() -> dict[str, type[Probe]]:
    return {name: spec.load() for name, spec in lazy_registry().items()}


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


__all__ = [
    "DEEP_PROBES", "DEFAULT_PROBES", "HOST_PROBES", "IMAGE_ONLY", "PROBES", "LazyProbe", "Probe", "ProbeContext",
    "ProbeResult", "lazy_registry",
]  # fmt: skip
