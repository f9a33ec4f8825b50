"""triage --facts / --probe: the root cause is matched to the plan step that fixes it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
LOGS = HERE / "data" / "logs"
BEFORE = HERE / "cases" / "writeup-before" / "facts.json"

DEEPGEMM_LOG = """\
[2026-11-29 10:00:00 TP0] Load weight begin.
[2026-11-29 10:00:05 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 2400, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank)
  File "/opt/venv/lib/python3.12/site-packages/deep_gemm/jit/compiler.py", line 88, in build
    raise RuntimeError(msg)
RuntimeError: Assertion error (csrc/jit_kernels/heuristics/layout.hpp:56): Unknown recipe

[2026-11-29 10:00:06] Rank 0 scheduler is dead. Please check if there are relevant logs.
"""


def triage(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stackcheck", "triage", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
        cwd="/",
    )


def test_unsupported_upstream_root_cause_names_the_workaround() -> None:
    proc = triage(str(LOGS / "symm_mem_keyerror.log"), "--facts", str(BEFORE), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["root_cause"]["signature"]["feature"] == "torch-symm-mem"
    assert doc["fix"]["still_blocked"] is True
    assert "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES" in doc["fix"]["workaround"]["text"]


def test_fixable_root_cause_names_the_plan_step_and_its_commands() -> None:
    proc = triage("-", "--facts", str(BEFORE), stdin=DEEPGEMM_LOG)
    assert proc.returncode == 0, proc.stderr
    assert "Unknown recipe" in proc.stdout
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("plan: step"))
    assert "sglang 0.5.9 -> " in line
    assert "$ pip install sglang==" in proc.stdout


def test_without_facts_there_is_no_plan_line() -> None:
    proc = triage(str(LOGS / "symm_mem_keyerror.log"))
    assert proc.returncode == 0 and "plan:" not in proc.stdout
    assert "fix" not in json.loads(triage(str(LOGS / "symm_mem_keyerror.log"), "--format", "json").stdout)


def test_gzip_logs_are_read_and_broken_ones_are_exit_2(tmp_path: Path) -> None:
    import gzip

    gz = tmp_path / "server.log.gz"
    gz.write_bytes(gzip.compress((LOGS / "symm_mem_keyerror.log").read_bytes()))
    proc = triage(str(gz), "--format", "json")
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["root_cause"]["signature"]["feature"] == "torch-symm-mem"
    broken = tmp_path / "broken.log.gz"
    broken.write_bytes(gz.read_bytes()[:40])
    proc = triage(str(broken))
    assert proc.returncode == 2 and "gzip" in proc.stderr and "Traceback" not in proc.stderr


def test_output_file(tmp_path: Path) -> None:
    out = tmp_path / "triage.json"
    assert triage(str(LOGS / "symm_mem_keyerror.log"), "--format", "json", "--output", str(out)).returncode == 0
    assert json.loads(out.read_text())["root_cause"] is not None
