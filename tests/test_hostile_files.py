"""Hostile files where stackcheck reads directories (issue 14, items 2 and 10): a FIFO, a link loop, a
100,000-deep document, a 3 GB sparse direct_url.json, a 1 GB first line. Each is refused or skipped with a
line, quickly, in bounded memory; none hangs, none is exit 4."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_process import clean_env, run_stackcheck
from probes.test_probe_packages import dist, fake_torch, run

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"


def stackcheck(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return run_stackcheck(*args, env=clean_env(**(env or {})), timeout=timeout)


def one_line_exit_2(proc: subprocess.CompletedProcess[str], needle: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert needle in proc.stdout + proc.stderr, proc.stdout + proc.stderr


# ---- item 10: manifest directories ------------------------------------------------------------------


@pytest.fixture
def fifo_manifests(tmp_path: Path) -> Path:
    d = tmp_path / "m"
    d.mkdir()
    os.mkfifo(d / "features.json")
    return d


def test_fifo_in_a_manifest_directory_is_refused_everywhere(fifo_manifests: Path) -> None:
    d = str(fifo_manifests)
    one_line_exit_2(stackcheck("manifests", "validate", d), "not a regular file")
    one_line_exit_2(stackcheck("audit", "--facts", str(H200), "--manifests", d), "not a regular file")
    one_line_exit_2(
        stackcheck("gate", "--facts", str(H200), "--dry-run", "--", "python", "-m", "sglang.launch_server",
                   env={"STACKCHECK_MANIFESTS": d}),
        "not a regular file",
    )  # fmt: skip


def test_symlink_loops_are_exit_2(tmp_path: Path) -> None:
    d = tmp_path / "m"
    d.mkdir()
    (d / "features.json").symlink_to("checks.json")
    (d / "checks.json").symlink_to("features.json")
    one_line_exit_2(stackcheck("manifests", "validate", str(d)), "link loop")
    one_line_exit_2(stackcheck("audit", "--facts", str(H200), "--manifests", str(d)), "link loop")
    loop_dir = tmp_path / "loopdir"
    loop_dir.symlink_to(loop_dir.name)
    one_line_exit_2(stackcheck("manifests", "validate", str(loop_dir)), str(loop_dir))


@pytest.mark.parametrize("depth", [100, 900, 100_000])
def test_deep_manifests_are_exit_2(tmp_path: Path, depth: int) -> None:
    d = tmp_path / "m"
    d.mkdir()
    (d / "features.json").write_text('{"features": [{"id": "x", "rules": ' + "[" * depth + "]" * depth + "}]}")
    one_line_exit_2(stackcheck("manifests", "validate", str(d)), "nested")
    one_line_exit_2(stackcheck("audit", "--facts", str(H200), "--manifests", str(d)), "nested")


def test_deep_predicate_is_exit_2_not_a_recursion_error(tmp_path: Path) -> None:
    """Nested `not`s parse as JSON, but the schema validator and the engine both recurse: refused first."""
    pred = '{"not": ' * 2000 + '{"fact": "gpu.cc", "op": "==", "value": "9.0"}' + "}" * 2000
    rule = '{"id": "r", "require": ' + pred + ', "effect": "crash", "message": "m", "source": "CUDA-GPUS"}'
    feature = '{"id": "deep", "title": "t", "needs": [], "enable": {"flags": [], "env": {}}, "rules": [' + rule + "]}"
    d = tmp_path / "m"
    d.mkdir()
    (d / "features.json").write_text('{"features": [' + feature + "]}")
    one_line_exit_2(stackcheck("audit", "--facts", str(H200), "--manifests", str(d)), "nested")


# ---- item 10: fleet directories and JSON Lines ------------------------------------------------------


def test_fifo_in_a_reports_directory_is_skipped(tmp_path: Path) -> None:
    report = stackcheck("audit", "--facts", str(H200), "--format", "json").stdout
    (tmp_path / "good.json").write_text(report)
    os.mkfifo(tmp_path / "stuck.json")
    os.mkfifo(tmp_path / "stuck.jsonl")
    (tmp_path / "loop.json").symlink_to("loop.json")
    proc = stackcheck("fleet", str(tmp_path), "--format", "json", "--jobs", "1", timeout=60)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["inputs"]["hosts"] == 1
    reasons = {Path(b["input"]).name: b["reason"] for b in summary["bad"]}
    assert "not a regular file" in reasons["stuck.json"] and "not a regular file" in reasons["stuck.jsonl"]
    assert "loop.json" in reasons


def test_a_pipe_named_on_the_command_line_is_read_as_a_stream(tmp_path: Path) -> None:
    report = json.loads(stackcheck("audit", "--facts", str(H200), "--format", "json").stdout)
    fifo = tmp_path / "reports"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "stackcheck", "fleet", str(fifo), "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    with open(fifo, "w") as fh:
        for i in range(3):
            report["host"]["hostname"] = f"h{i}"
            fh.write(json.dumps(report) + "\n")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert json.loads(out)["inputs"]["hosts"] == 3


def test_a_1_gib_first_line_is_skipped_in_bounded_memory(tmp_path: Path) -> None:
    report = stackcheck("audit", "--facts", str(H200), "--format", "json").stdout
    big = tmp_path / "reports.jsonl"
    with big.open("wb") as fh:
        fh.truncate(2**30)  # sparse: a 1 GiB line of NUL bytes, no disk blocks
        fh.seek(2**30)
        fh.write(b"\n" + json.dumps(json.loads(report)).encode() + b"\n")

    def measured() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, resource.RLIM_INFINITY))  # < 2 GB

    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", "fleet", str(big), "--format", "json", "--jobs", "1"],
        capture_output=True, text=True, timeout=300, cwd=ROOT, preexec_fn=measured,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    summary = json.loads(proc.stdout)
    assert summary["inputs"]["hosts"] == 1 and summary["inputs"]["bad"] == 1
    assert "larger than 16 MiB" in summary["bad"][0]["reason"]
    assert time.monotonic() - start < 120


# ---- item 2: one bad dist-info costs one entry ------------------------------------------------------


def test_hostile_dist_infos_cost_one_entry_each(tmp_path: Path) -> None:
    sp = tmp_path / "sp"
    fake_torch(sp)
    dist(sp, "sglang", "0.5.9")
    fi = dist(sp, "flashinfer-python", "0.6.3")
    with (fi / "direct_url.json").open("wb") as fh:
        fh.truncate(3 * 2**30)  # a 3 GB sparse direct_url.json
    os.mkfifo(sp / "sgl_kernel.egg-link")  # a FIFO .egg-link
    deep = dist(sp, "flashinfer-cubin", "0.6.3")
    (deep / "direct_url.json").write_text("[" * 50_000 + "]" * 50_000)
    start, cpu = time.monotonic(), time.process_time()
    packages: dict[str, dict[str, Any]] = run([sp])
    # reading the 3 GB of holes or the nesting is work (CPU time, which a loaded box does not inflate); opening the
    # FIFO would block (wall time: the failure is a hang, so a generous bound loses nothing)
    assert time.process_time() - cpu < 2 and time.monotonic() - start < 30
    assert packages["torch"]["version"] == "2.11.0+cu130" and "error" not in packages["torch"]
    assert packages["sglang"]["version"] == "0.5.9" and "error" not in packages["sglang"]
    fi_entry = packages["flashinfer-python"]
    assert fi_entry["version"] == "0.6.3" and "larger than" in fi_entry["error"]
    assert packages["flashinfer-cubin"]["version"] == "0.6.3"
    assert packages["sgl-kernel"]["error"].endswith("unreadable egg-link")
