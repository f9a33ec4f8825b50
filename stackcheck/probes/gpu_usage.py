"""What is running on the GPUs now: free memory, the processes holding memory, the compute mode.

Used by `stackcheck gate` (not by `audit`: a report describes the box, not this moment). One NVML session,
three or four calls per GPU (memory info, compute mode, running compute and graphics processes) and one
per process for its name; the gate runs it in a thread beside the other probes, so its wall time mostly
hides behind theirs (bench/bench_gate.py measures it). Every NVML error becomes data.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.nvml_read import _text, describe
from stackcheck.record import field, record

if TYPE_CHECKING:
    from typing import Any


@record
class GpuProcess:
    pid: int
    name: str | None  # None when NVML does not give it (another PID namespace, no permission)
    used_bytes: int | None  # None when NVML does not report it (NVML_VALUE_NOT_AVAILABLE)
    kind: str  # compute | graphics


@record
class GpuUsage:
    index: int
    name: str | None = None
    total: int | None = None
    free: int | None = None
    used: int | None = None
    compute_mode: int | None = None
    processes: list[GpuProcess] = field(default_factory=list)
    error: str | None = None


@record
class UsageReading:
    gpus: list[GpuUsage]
    error: str | None = None  # NVML could not be used at all
    duration_ms: float = 0.0

    def by_index(self) -> dict[int, GpuUsage]:
        return {g.index: g for g in self.gpus}


def _processes(nv: Any, handle: Any, notes: list[str]) -> list[GpuProcess]:
    out: dict[int, GpuProcess] = {}
    for kind, fn_name in (
        ("compute", "nvmlDeviceGetComputeRunningProcesses"),
        ("graphics", "nvmlDeviceGetGraphicsRunningProcesses"),
    ):
        fn = getattr(nv, fn_name, None)
        if fn is None:
            continue
        try:
            infos = fn(handle)
        except Exception as exc:
            if type(exc).__name__ != "NVMLError_NotSupported":
                notes.append(f"{kind} processes: {describe(exc)}")
            continue
        for info in infos or []:
            pid = getattr(info, "pid", None)
            if not isinstance(pid, int) or pid in out:
                continue
            used = getattr(info, "usedGpuMemory", None)
            out[pid] = GpuProcess(pid, None, int(used) if isinstance(used, int) else None, kind)
    for proc in out.values():
        try:
            proc.name = _text(nv.nvmlSystemGetProcessName(proc.pid)) or None
        except Exception:  # another PID namespace, or the process has exited: the name stays unknown
            proc.name = None
    return list(out.values())


def read_gpu_usage(nv: Any = None, indices: Iterable[int] | None = None) -> UsageReading:
    """Free memory, compute mode and processes of each GPU (all of them, or `indices`), by NVML index."""
    start = time.perf_counter()
    if nv is None:
        try:
            import pynvml

            nv = pynvml
        except ImportError as exc:
            return UsageReading([], f"nvidia-ml-py (pynvml) cannot be imported: {exc}")
    try:
        nv.nvmlInit()
    except Exception as exc:
        return UsageReading([], f"NVML: {describe(exc)}")
    gpus: list[GpuUsage] = []
    try:
        wanted = list(indices) if indices is not None else list(range(int(nv.nvmlDeviceGetCount())))
        for index in wanted:
            gpu = GpuUsage(index)
            notes: list[str] = []
            try:
                handle = nv.nvmlDeviceGetHandleByIndex(index)
                gpu.name = _text(nv.nvmlDeviceGetName(handle))
                mem = nv.nvmlDeviceGetMemoryInfo(handle)
                gpu.total = int(mem.total)
                gpu.free = int(mem.free)
                gpu.used = int(mem.used)
            except Exception as exc:
                gpu.error = describe(exc)
                gpus.append(gpu)
                continue
            try:
                gpu.compute_mode = int(nv.nvmlDeviceGetComputeMode(handle))
            except Exception as exc:
                if type(exc).__name__ != "NVMLError_NotSupported":
                    notes.append(f"compute mode: {describe(exc)}")
            gpu.processes = _processes(nv, handle, notes)
            if notes:
                gpu.error = "; ".join(notes)
            gpus.append(gpu)
    except Exception as exc:
        return UsageReading(gpus, f"NVML: {describe(exc)}", (time.perf_counter() - start) * 1000)
    finally:
        with contextlib.suppress(Exception):
            nv.nvmlShutdown()
    return UsageReading(gpus, None, round((time.perf_counter() - start) * 1000, 2))


def reading_to_plain(reading: UsageReading) -> tuple[Any, ...]:
    """A reading as plain data (tuples, numbers, text), to pass between processes (as JSON)."""
    gpus = tuple(
        (
            g.index,
            g.name,
            g.total,
            g.free,
            g.used,
            g.compute_mode,
            tuple((p.pid, p.name, p.used_bytes, p.kind) for p in g.processes),
            g.error,
        )
        for g in reading.gpus
    )
    return gpus, reading.error, reading.duration_ms


def reading_from_plain(plain: tuple[Any, ...]) -> UsageReading:
    """The reading `reading_to_plain` gave."""
    gpus, error, duration_ms = plain
    return UsageReading(
        [
            GpuUsage(index, name, total, free, used, mode, [GpuProcess(*p) for p in procs], gpu_error)
            for index, name, total, free, used, mode, procs, gpu_error in gpus
        ],
        error,
        duration_ms,
    )
