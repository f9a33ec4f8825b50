"""SGLANG_NCCL_SO_PATH naming an NCCL of torch's X.Y.Z but another CUDA build (igap40, issue 16 item 2: 2.27.7+cuda13.0
beside a cu12 torch's nvidia-nccl-cu12 2.27.7 was allowed: only X.Y.Z was compared). Probe stackcheck/probes/jit.py
nccl_library_build (keys jit.nccl_so_path_cuda / _cuda_major); rules nccl-so-path-cuda-driver (new) and
symm-mem-nccl-so-path-same-nccl.

The nvidia-nccl-cu12 / -cu13 2.27.7 wheels' libnccl.so.2 link the CUDA runtime in (readelf -d: no libcudart NEEDED)
and say "NCCL version 2.27.7+cuda12.9" / "+cuda13.0". That runtime needs a driver of its CUDA major: under an older
one ncclCommInitRank's first cudaGetDevice fails, and pynccl, which the TP group builds at tp > 1 whatever the flags,
raises RuntimeError as the server starts (a crash). Where the driver is new enough, one build's comm in the other
build's window functions (--enable-symm-mem on 0.5.8 or later) was not read or run: unknown. The libraries are our own
(tests/elfwriter.py) with a version string of that shape."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from elfwriter import build_so
from gate_cli import nccl_named_box

from stackcheck.probes.jit import PYNCCL_FUNCTIONS, nccl_so_path
from stackcheck.readers.fsview import HostView

DRIVER = "nccl-so-path-cuda-driver"
SAME = "symm-mem-nccl-so-path-same-nccl"


def _probe(tmp_path: Path, tail: bytes) -> dict[str, object]:
    lib = tmp_path / "libnccl.so.2"
    lib.write_bytes(build_so(defined=list(PYNCCL_FUNCTIONS), soname="libnccl.so.2") + tail)
    return nccl_so_path({"SGLANG_NCCL_SO_PATH": str(lib)}, HostView())


def test_the_probe_reads_the_cuda_build(tmp_path: Path) -> None:
    got = _probe(tmp_path, b"\0NCCL version 2.27.7+cuda13.0\0")
    assert (got["nccl_so_path_version"], got["nccl_so_path_cuda"], got["nccl_so_path_cuda_major"]) == (
        "2.27.7", "13.0", 13), got  # fmt: skip
    # the CUDA build is read where the patch is not told apart from a digit-led suffix
    got = _probe(tmp_path, b"\0NCCL version 2.27.20+cuda12.9\0")
    assert (got["nccl_so_path_version"], got["nccl_so_path_cuda_major"]) == (None, 12), got
    got = _probe(tmp_path, b"\0NCCL version 2.27.7 compiled with CUDA 13.0\0")
    assert "nccl_so_path_cuda" not in got and "nccl_so_path_cuda_major" not in got, got


def _gate(tmp_path: Path, release: str, cuda: str, driver: str, *flags: str) -> tuple[int, dict[str, str]]:
    """h200-newest as a cu12 torch box (nvidia-nccl-cu12 2.27.7), the driver at CUDA `driver`, SGLANG_NCCL_SO_PATH
    naming an NCCL 2.27.7 built with CUDA `cuda`."""
    rc, results, _ = nccl_named_box(tmp_path, release, "2.27.7", "2.27.7", cuda, "--tp", "2", *flags,
                                    wheel="nvidia-nccl-cu12", driver_cuda=driver)  # fmt: skip
    return rc, results


def test_a_cuda13_build_beside_a_cu12_torch_is_refused_as_unknown(tmp_path: Path) -> None:
    # fails on the parent: the same X.Y.Z passed rule symm-mem-nccl-so-path-same-nccl (the CUDA build not compared)
    rc, results = _gate(tmp_path, "0.5.11", "13.0", "13.0", "--enable-symm-mem")
    assert rc == 1 and results.get(SAME) == "unknown", results
    assert DRIVER not in results, results  # the driver is CUDA 13.0


@pytest.mark.parametrize("flags", [(), ("--enable-symm-mem",)])
@pytest.mark.parametrize("release", ["0.5.1", "0.5.11", "0.5.23"])
def test_a_cuda13_build_under_a_cuda12_driver_fails(tmp_path: Path, release: str, flags: tuple[str, ...]) -> None:
    # fails on the parent: no rule read the build's CUDA (allowed without --enable-symm-mem)
    rc, results = _gate(tmp_path, release, "13.0", "12.8", *flags)
    assert rc == 1 and results.get(DRIVER) == "fail", results


def test_the_driver_message_names_both_cudas(tmp_path: Path) -> None:
    _, _, reasons = nccl_named_box(tmp_path, "0.5.11", "2.27.7", "2.27.7", "13.0", "--tp", "2",
                                   wheel="nvidia-nccl-cu12", driver_cuda="12.8")  # fmt: skip
    text = " ".join(str(x.get("message")) for x in reasons if x.get("rule") == DRIVER)
    assert "CUDA 13" in text and "12.8" in text and "RuntimeError" in text, text


def test_the_wheels_own_cuda_major_passes(tmp_path: Path) -> None:
    _, results = _gate(tmp_path, "0.5.11", "12.9", "12.8", "--enable-symm-mem")
    assert DRIVER not in results and SAME not in results, results


def test_a_newer_minor_of_the_drivers_major_passes_the_driver_rule(tmp_path: Path) -> None:
    # minor-version compatibility: an NCCL built with CUDA 13.5 (as nvidia-nccl-cu13 2.32.6) under a 13.0 driver
    _, results, _ = nccl_named_box(tmp_path, "0.5.11", "2.32.6", "2.32.6", "13.5", "--tp", "2",
                                   driver_cuda="13.0")  # fmt: skip
    assert DRIVER not in results, results


def test_not_judged_at_tp_1(tmp_path: Path) -> None:
    _, results, _ = nccl_named_box(tmp_path, "0.5.11", "2.27.7", "2.27.7", "13.0", "--tp", "1",
                                   wheel="nvidia-nccl-cu12", driver_cuda="12.8")  # fmt: skip
    assert DRIVER not in results, results


def test_a_pipeline_group_is_judged_too(tmp_path: Path) -> None:
    _, results, _ = nccl_named_box(tmp_path, "0.5.11", "2.27.7", "2.27.7", "13.0", "--pp-size", "2",
                                   wheel="nvidia-nccl-cu12", driver_cuda="12.8")  # fmt: skip
    assert results.get(DRIVER) == "fail", results
