"""The gate's reading of GPU usage, started with the probes: the forked NVML reader's answer where it took one, else
a reading in a thread. Its own small module (stackcheck.launch.gate_preflight re-exports it): a gate served from its
kept decision starts it to replay that decision's usage read, and imported gate_preflight (~90 KB of bytecode, the
preflight's wiring) for these two names alone."""

from __future__ import annotations

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


def start_usage(facts_file: str | None, command: Sequence[str] | None) -> Any:
    """Read GPU usage in a thread now (NVML calls release the GIL); None when the facts come from a file."""
    if facts_file or not command:
        return None
    from stackcheck.probes import nvml_early

    early = nvml_early.take_usage()
    if early is not None:  # the command line's forked NVML reader read it already, off this process
        return EarlyUsage(early)
    from stackcheck.assembly.pipeline import Background
    from stackcheck.probes.gpu_usage import read_gpu_usage

    return Background(read_gpu_usage)


class EarlyUsage:
    """GPU usage as the forked NVML reader read it (stackcheck.probes.nvml_early); where it has none, the reason
    why not: it gave no answer within the NVML probe's timeout (a hung driver), or it ended without an answer (the
    driver killed it: a crash in libnvidia-ml, which a reading here would repeat in the gate itself, ending it
    without a word). Only where it answered without a usage reading (NVML failed to start or to read, in its
    own words) is usage read here, as the gate reads it without a forked reader."""

    def __init__(self, early: Any) -> None:
        self._early = early

    def get(self) -> Any:
        from stackcheck.probes.gpu_usage import UsageReading, read_gpu_usage
        from stackcheck.probes.nvml import NvmlProbe

        timeout_s = NvmlProbe.timeout_s
        reading = self._early.usage_reading(timeout_s)
        if reading is not None:
            return reading
        if not self._early.done.is_set():  # still no answer: a hung driver; reading it here would hang too
            return UsageReading([], f"NVML: no answer within {timeout_s:g} s")
        failure = getattr(self._early, "failure", None)
        if failure:  # (the NVML probe failed on the same answer: the GPUs are unknown to the gate already)
            return UsageReading([], f"NVML: {failure}")
        return read_gpu_usage()
