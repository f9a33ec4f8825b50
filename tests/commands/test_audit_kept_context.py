"""Issue 21 (iperf24): an audit whose plan cache entry holds the verdicts and the plan imports no evaluation context
(stackcheck.verdicts.context, and the version and architecture readers it imports: ~5-7 M instructions of the
probed audit's process); its report is the one the audit that judged and kept them printed. A miss (the first run,
the cache off) judges as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import stackcheck

TREE = os.path.dirname(os.path.dirname(stackcheck.__file__))
MODS = """import os, sys
sys.argv = ["stackcheck", *sys.argv[1:]]
command = os.getpid()
_exit = os._exit
def record():
    if os.getpid() == command:
        with open(os.environ["KEPT_MODULES"], "w") as fh:
            fh.write(" ".join(sorted(m for m in sys.modules if m.startswith("stackcheck."))))
def leave(code):
    record()
    _exit(code)
os._exit = leave
import atexit
atexit.register(record)
from stackcheck.__main__ import main
main()
"""
# (the per-run measurements: memory_available_bytes, imend8, is MemAvailable when the probe ran: two runs differ)
TIMING = ("duration_ms", "generated_at", "elapsed_ms", "ms", "collected_at", "memory_available_bytes")


def _audit(tmp: Path, argv: list[str], n: int, plan_cache: bool = True) -> tuple[dict[str, object], set[str]]:
    mods = tmp / f"mods-{n}"
    env = {**os.environ, "PYTHONPATH": TREE, "KEPT_MODULES": str(mods), "STACKCHECK_CACHE_DIR": str(tmp / "cache")}
    env.pop("STACKCHECK_PLAN_CACHE", None)
    if not plan_cache:
        env["STACKCHECK_PLAN_CACHE"] = "0"
    done = subprocess.run(
        [sys.executable, "-c", MODS, *argv], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode in (0, 1), done.stderr[-500:]
    return json.loads(done.stdout), set(mods.read_text().split())


def _strip(x: object) -> object:
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k not in TIMING}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


@pytest.mark.parametrize(
    ("argv", "assumed"),
    [
        (["audit", "--format", "json"], False),
        # (--assume-gpu reads the GPU table through verdicts.context: imported for that, the report the same)
        (["audit", "--assume-gpu", "9.0x2", "--assume-driver", "580.82.07", "--format", "json"], True),
    ],
)
def test_a_kept_audit_imports_no_context_and_reports_the_same(tmp_path: Path, argv: list[str], assumed: bool) -> None:
    first, first_mods = _audit(tmp_path, argv, 1)
    second, second_mods = _audit(tmp_path, argv, 2)
    assert "stackcheck.verdicts.engine" in first_mods  # a miss judges
    assert "stackcheck.verdicts.engine" not in second_mods, "the entry was not kept: the test shows nothing"
    assert ("stackcheck.verdicts.context" in second_mods) is assumed
    assert _strip(second) == _strip(first)
    off, off_mods = _audit(tmp_path, argv, 3, plan_cache=False)  # the plan cache off: judged every time
    assert "stackcheck.verdicts.engine" in off_mods
    assert _strip(off) == _strip(first)
