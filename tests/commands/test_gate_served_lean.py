"""A gate served from its kept decision starts the GPU usage reading from stackcheck.launch.usage, without importing
stackcheck.launch.gate_preflight (~90 KB of bytecode, the preflight's wiring, which a hit never runs); the gate's
usual path still finds the reading where it did (gate_preflight.start_usage, EarlyUsage)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent

CHILD = r"""
import os, sys
sys.argv = ["stackcheck", *sys.argv[1:]]
_exit = os._exit
def leave(code):
    with open(os.environ["MODULES_OUT"], "w") as fh:
        fh.write("\n".join(sys.modules))
    _exit(code)
os._exit = leave
from stackcheck.__main__ import main
main()
"""
GATE = ("gate", "--dry-run", "--", "python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1")


def _modules(tmp_path: Path) -> set[str]:
    out = tmp_path / "modules.txt"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "STACKCHECK_CACHE_DIR": str(tmp_path / "cache"),
        "STACKCHECK_PLAN_CACHE": "1",
        "MODULES_OUT": str(out),
    }
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *GATE], env=env, cwd=tmp_path, capture_output=True, timeout=120, check=False
    )
    assert done.returncode in (0, 1), done.stderr[-500:]
    return set(out.read_text().split("\n"))


def test_a_served_gate_imports_no_gate_preflight(tmp_path: Path) -> None:
    first = _modules(tmp_path)  # (decides, and keeps the decision)
    assert "stackcheck.launch.gate_preflight" in first
    served = _modules(tmp_path)
    assert "stackcheck.assembly.gate_cache" in served and "stackcheck.launch.refusals" not in served  # (a hit)
    assert "stackcheck.launch.gate_preflight" not in served
    assert "stackcheck.launch.usage" in served  # (its usage read replayed)


def test_the_usual_path_finds_the_reading_where_it_did() -> None:
    from stackcheck.launch import gate_preflight, usage

    assert gate_preflight.start_usage is usage.start_usage and gate_preflight.EarlyUsage is usage.EarlyUsage
