"""triage --facts / --probe: the root cause is matched to the plan step that fixes it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent.parent
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

TRTLLM_MHA_LOG = """\
[2026-11-29 10:00:00] server_args=ServerArgs(model_path='m', attention_backend='trtllm_mha', tp_size=8)
Traceback (most recent call last):
  File "/opt/venv/lib/python3.12/site-packages/sglang/launch_server.py", line 11, in <module>
    server_args = prepare_server_args(sys.argv[1:])
  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/server_args.py", line 1905, in _handle_attention
    raise ValueError(
ValueError: TRTLLM MHA backend is only supported on Blackwell GPUs (SM100). Please use a different backend.
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
    proc = triage("-", "--facts", str(BEFORE), stdin=TRTLLM_MHA_LOG)
    assert proc.returncode == 0, proc.stderr
    assert "TRTLLM MHA backend" in proc.stdout
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("plan: step"))
    assert "sglang 0.5.9 -> " in line  # SGLang 0.5.19+ run trtllm_mha on SM120 (XQA decode, fmha_v2 prefill)
    assert "$ pip install sglang==" in proc.stdout


def test_root_cause_no_upgrade_makes_ok_says_so() -> None:
    """DeepGEMM on SM120: newer SGLang turns it off (0.5.13-0.5.19) or takes a path not established (0.5.20+,
    open upstream bug #39063), so no plan step makes the feature ok; the signature's own fix still shows."""
    proc = triage("-", "--facts", str(BEFORE), stdin=DEEPGEMM_LOG)
    assert proc.returncode == 0, proc.stderr
    assert "Unknown recipe" in proc.stdout
    assert "SGLANG_ENABLE_JIT_DEEPGEMM=0" in proc.stdout
    assert "plan: no step in the plan changes deepgemm on this box" in proc.stdout


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
