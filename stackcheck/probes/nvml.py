"""NVML probe: driver, GPUs and GPU-to-GPU topology through nvidia-ml-py (`import pynvml`, inside run()).

Every NVML situation becomes data. NVML errors are recognised by class *name* (pynvml generates
`NVMLError_<Name>` classes), so an injected NVML-shaped module works the same as the real one.
When NVML cannot start, `nvidia-smi` and then /proc/driver/nvidia/version are tried; facts.driver.source
says which answered, and facts.driver.nvml_init_error names NVML's error where it is one of nvml_read.REASONS
(`LibRmVersionMismatch`: the kernel module and libnvidia-ml come from different releases). Whatever answered,
the user-space driver's release is read from the files the loader would load (stackcheck.probes.driver_libs:
facts.driver.userspace_version and friends), for the check driver-userspace-match, and the flavour of the loaded
kernel modules from /proc/driver/nvidia/version (facts.driver.kernel_modules: open / proprietary), for the check
driver-kernel-modules.
"""

from __future__ import annotations

import contextlib
import re

from stackcheck.digits import whole_number
from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import (
    CommandTimeout,
    Probe,
    ProbeContext,
    ProbeResult,
    ProbeStatus,
    one_line,
    run_command,
)
from stackcheck.probes.nvml_read import REASONS, describe, read_nvml, unknown_topology

if TYPE_CHECKING:
    from typing import Any, ClassVar

SMI_FIELDS = "index,name,uuid,pci.bus_id,compute_cap,memory.total,persistence_mode,driver_version"
_PROC_VERSION = _lazy(r"NVRM version:.*?\s(\d+\.\d+(?:\.\d+)?)\s")


class NvmlProbe(Probe):
    name: ClassVar[str] = "nvml"
    timeout_s: ClassVar[float] = 6.0
    sections: ClassVar[tuple[str, ...]] = ("driver", "gpus", "topology")
    starts_first: ClassVar[bool] = True  # (the forked reader's answer is read as soon as it is ready)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        result = self._read(ctx)
        driver = result.facts.get("driver")
        if isinstance(driver, dict):
            from stackcheck.probes.driver_libs import read_userspace
            from stackcheck.probes.interface import view_of

            driver.update(read_userspace(ctx.loader_environ, view_of(ctx)))
            flavour = read_kernel_modules(ctx)
            if flavour is not None:
                driver["kernel_modules"] = flavour
        return result

    def _read(self, ctx: ProbeContext) -> ProbeResult:
        nv = ctx.nvml
        if nv is None:
            from stackcheck.probes.nvml_early import take

            early = take()  # the command line started NVML before anything else: adopt it
            if early is not None:
                return _adopt(ctx, early)
            try:
                import pynvml

                nv = pynvml
            except ImportError as exc:
                return _fallback(ctx, f"nvidia-ml-py (pynvml) cannot be imported: {one_line(exc)}")
        try:
            nv.nvmlInit()
        except Exception as exc:
            return _fallback(ctx, describe(exc))
        try:
            return read_nvml(nv)
        finally:
            with contextlib.suppress(Exception):  # shutting down is best effort
                nv.nvmlShutdown()


def _adopt(ctx: ProbeContext, early: Any) -> ProbeResult:
    """The result of an early NVML start (stackcheck.probes.nvml_early), read as run() reads NVML: the same
    fallbacks with the same reasons when pynvml cannot be imported or NVML cannot start. The wait is bounded
    by this probe's timeout: the runner abandons a probe that overruns."""
    result, fallback_reason = early.outcome()
    if fallback_reason is not None:
        return _fallback(ctx, fallback_reason)
    adopted: ProbeResult = result
    return adopted


# ---------------------------------------------------------------------------------------------------------
# Fallbacks when NVML cannot start.


def _fallback(ctx: ProbeContext, nvml_reason: str) -> ProbeResult:
    reasons = [f"NVML: {nvml_reason}"]
    smi = _from_nvidia_smi(ctx)
    if isinstance(smi, str):
        reasons.append(f"nvidia-smi: {smi}")
        gpus_from_smi: list[dict[str, Any]] | None = None
        smi_driver: str | None = None
    else:
        gpus_from_smi, smi_driver = smi
    driver: dict[str, Any] = {"version": None, "cuda": None, "nvml_version": None, "source": "none"}
    if smi_driver:
        driver.update(version=smi_driver, source="nvidia-smi")
    else:
        proc_version, proc_reason = _from_proc(ctx)
        if proc_version is not None:
            driver.update(version=proc_version, source="proc")
        elif proc_reason is not None:
            reasons.append(proc_reason)
    reason = "; ".join(reasons)
    driver["error"] = reason
    known = next((name for name, text in REASONS.items() if text == nvml_reason), None)
    if known is not None:  # NVML's own error, not the import's: its name is the observation (driver-userspace-match)
        driver["nvml_init_error"] = known.removeprefix("NVMLError_")
    if gpus_from_smi is not None:
        names = {g.get("name") for g in gpus_from_smi}
        count = len(gpus_from_smi)
        topology: dict[str, Any] = {
            "interconnect": "single-gpu" if count == 1 else None,
            "same_model": (len(names) == 1) if count else None,
            "gpu_count": count,
            "p2p": None,
            "pairs": [],
            "error": f"topology needs NVML: {nvml_reason}",
        }
        gpus: list[dict[str, Any]] = gpus_from_smi
    else:
        topology = unknown_topology(reason)
        gpus = []  # unknown: topology.gpu_count is null and topology.error says why
    found_anything = driver["version"] is not None
    status: ProbeStatus = "partial" if found_anything else "failed"
    return ProbeResult({"driver": driver, "gpus": gpus, "topology": topology}, status, reason)


def _from_nvidia_smi(ctx: ProbeContext) -> tuple[list[dict[str, Any]], str | None] | str:
    """GPUs and the driver version from nvidia-smi, or a one-line reason why not."""
    env = ctx.host_environ  # the host's tool, whatever environment the audited image starts with
    import shutil  # the fallback only

    exe = shutil.which("nvidia-smi", path=env.get("PATH", ""))
    if exe is None:
        return "not found on PATH"
    argv = [exe, f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader,nounits"]
    try:
        rc, out, err = run_command(argv, ctx.subprocess_timeout_s, env)
    except CommandTimeout as exc:
        return str(exc)
    except OSError as exc:
        return f"cannot run: {exc.strerror or exc}"
    if rc != 0:
        first = (err.strip() or out.strip()).splitlines()
        return f"exited {rc}" + (f": {first[0][:200]}" if first else "")
    gpus: list[dict[str, Any]] = []
    driver: str | None = None
    for n, line in enumerate(out.splitlines(), 1):
        if not line.strip():
            continue
        cols = [c.strip() for c in line.split(",")]
        index = whole_number(cols[0], ascii_only=True) if len(cols) == 8 else None
        if index is None:
            return f"output line {n} not understood: {line.strip()[:80]!r}"
        _, name, uuid, bus, cc, mem, pm, drv = cols
        mib = whole_number(mem, 18)
        gpus.append(
            {
                "index": index,
                "name": name or None,
                "uuid": uuid or None,
                "pci_bus_id": bus or None,
                "compute_capability": cc if re.fullmatch(r"\d+\.\d+", cc) else None,
                "memory_bytes": mib * 1024 * 1024 if mib is not None else None,
                "persistence_mode": {"enabled": True, "disabled": False}.get(pm.lower()),
                "mig_mode": None,
            }
        )
        driver = driver or (drv if re.fullmatch(r"\d+\.\d+(\.\d+)?", drv) else None)
    if not gpus:
        return "no GPUs listed"
    return gpus, driver


def kernel_modules_flavour(text: str) -> str | None:
    """The flavour of the loaded NVIDIA kernel modules from the NVRM line of /proc/driver/nvidia/version:
    `open` where it names the 'Open Kernel Module' (the open flavour's line: 'NVIDIA UNIX Open Kernel Module for
    x86_64  <version>  Release Build ...'), `proprietary` where it names a 'Kernel Module' without 'Open' (the
    proprietary flavour's: 'NVIDIA UNIX x86_64 Kernel Module  <version>  <date>'), else None (not read)."""
    for line in text.splitlines():
        if line.startswith("NVRM version:"):
            if "Open Kernel Module" in line:
                return "open"
            if "Kernel Module" in line:
                return "proprietary"
            return None
    return None


def read_kernel_modules(ctx: ProbeContext) -> str | None:
    """facts.driver.kernel_modules: the loaded modules' flavour (kernel_modules_flavour), None where the file
    is absent or unreadable (no module loaded: the fact is left out)."""
    try:
        with open(ctx.rooted_text("/proc/driver/nvidia/version"), encoding="utf-8", errors="replace") as fh:
            text = fh.read(4096)
    except OSError:
        return None
    return kernel_modules_flavour(text)


def _from_proc(ctx: ProbeContext) -> tuple[str | None, str | None]:
    """The kernel module's driver version from /proc/driver/nvidia/version, or a reason why not."""
    try:
        with open(ctx.rooted_text("/proc/driver/nvidia/version"), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except FileNotFoundError:
        return None, "/proc/driver/nvidia/version: absent (no NVIDIA kernel module loaded)"
    except OSError as exc:
        return None, f"/proc/driver/nvidia/version: cannot read: {exc.strerror or exc}"
    m = _PROC_VERSION.search(text + " ")
    if m is None:
        return None, "/proc/driver/nvidia/version: no version found"
    return m.group(1), None
