"""Probes on hostile files and tools: each gives data with a reason, quickly, in bounded memory."""

from __future__ import annotations

import os
import time
from pathlib import Path

from probes.test_probe_packages import dist, fake_torch, run

from stackcheck.probes.interface import OUTPUT_CAP, ProbeContext, run_command
from stackcheck.probes.toolkits import ToolkitsProbe


def test_huge_torch_version_py_is_refused_not_parsed(tmp_path: Path) -> None:
    sp = tmp_path / "sp"
    fake_torch(sp, "a = 1\n" * 400_000)  # 2.4 MB: parsing it would hold the interpreter lock for seconds
    dist(sp, "sglang", "0.5.9")
    start = time.process_time()  # CPU time: parsing 2.4 MB is work, which a loaded box does not inflate
    packages = run([sp])
    assert time.process_time() - start < 2
    assert "too large" in str(packages["torch"]["error"])
    assert packages["sglang"]["version"] == "0.5.9"


def test_pathological_version_py_only_marks_torch(tmp_path: Path) -> None:
    sp = tmp_path / "sp"
    fake_torch(sp, "x = " + "1+" * 20_000 + "1\n")  # deep nesting: RecursionError or MemoryError in the parser
    dist(sp, "sglang", "0.5.9")
    packages = run([sp])
    assert packages["sglang"]["version"] == "0.5.9" and "error" not in packages["sglang"]
    assert packages["torch"]["installed"] is True


def test_metadata_that_is_a_fifo_or_a_device(tmp_path: Path) -> None:
    sp = tmp_path / "sp"
    fifo_dist = sp / "sglang-0.5.9.dist-info"
    fifo_dist.mkdir(parents=True)
    os.mkfifo(fifo_dist / "METADATA")
    zero_dist = sp / "flashinfer_python-0.6.3.dist-info"
    zero_dist.mkdir()
    (zero_dist / "METADATA").symlink_to("/dev/zero")
    start, cpu = time.monotonic(), time.process_time()
    packages = run([sp])
    # reading /dev/zero is work (CPU time, which a loaded box does not inflate); opening the FIFO would block (wall
    # time: the failure is a hang, so a generous bound loses nothing)
    assert time.process_time() - cpu < 2 and time.monotonic() - start < 30
    assert "not a regular file" in str(packages["sglang"].get("error"))
    assert "not a regular file" in str(packages["flashinfer-python"].get("error"))


def test_tool_output_is_capped(tmp_path: Path) -> None:
    start = time.monotonic()
    try:
        rc, out, _ = run_command(["/usr/bin/yes"], timeout_s=1.0)
    except Exception as exc:  # the timeout: output was drained and dropped, not stored
        assert "timed out" in str(exc)
    else:
        assert len(out) <= OUTPUT_CAP
    assert time.monotonic() - start < 5
    rc, out, _ = run_command(["/bin/sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' x; echo"], timeout_s=10)
    assert rc == 0 and len(out) == OUTPUT_CAP


def test_cuda_home_that_is_a_file(tmp_path: Path) -> None:
    f = tmp_path / "cuda"
    f.write_text("not a toolkit")
    tks = ToolkitsProbe().run(ProbeContext(env={"PATH": "", "CUDA_HOME": str(f)}, root=Path("/"), path_dirs=[]))
    entry = next(t for t in tks.facts["cuda_toolkits"] if t["path"] == str(f))
    assert entry["error"].endswith("is not a directory")
