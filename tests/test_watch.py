"""gate --watch: output passes through unchanged, readiness is reported, an early death is triaged."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

H200 = str(Path(__file__).parent / "cases" / "h200-newest" / "facts.json")

READY_THEN_EXIT = r"""
import sys
sys.stdout.write("stdout line\n"); sys.stdout.flush()
sys.stderr.write("[2026-11-29 10:00:00] The server is fired up and ready to roll!\n"); sys.stderr.flush()
sys.stdout.buffer.write(b"bytes \xff\xfe kept\n")
"""

CRASH = r"""
import sys
sys.stderr.write('''[2026-11-29 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/distributed/parallel_state.py", line 300, in __init__
    self.torch_symm_mem_comm = TorchSymmMemCommunicator(group=self.device_group, device=self.device)
  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/distributed/device_communicators/torch_symm_mem.py", \
line 58, in __init__
    self.max_size = TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES[self.device_capability][self.world_size]
KeyError: 12

[2026-11-29 10:00:02] Rank 0 scheduler is dead. Please check if there are relevant logs.
''')
sys.exit(3)
"""


def gate(*cmd: str, **kw: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "stackcheck", "gate", "--facts", H200, "--watch", "--", *cmd],
        capture_output=True,
        timeout=120,
        cwd="/",
        **kw,
    )  # type: ignore[call-overload]


def test_output_passes_through_and_ready_is_reported() -> None:
    proc = gate(sys.executable, "-c", READY_THEN_EXIT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"stdout line\nbytes \xff\xfe kept\n"
    assert b"The server is fired up and ready to roll!\n" in proc.stderr
    assert b"stackcheck: the server is ready after" in proc.stderr
    assert b"root cause" not in proc.stderr


def test_early_death_is_triaged_and_the_status_is_the_servers() -> None:
    proc = gate(sys.executable, "-c", CRASH)
    assert proc.returncode == 3
    err = proc.stderr.decode()
    assert "the server ended with exit status 3 before it was ready" in err
    root = err[err.index("root cause") :]
    assert "KeyError: 12" in root and "torch_symm_mem.py:58" in root


def test_signals_are_forwarded_to_the_server(tmp_path: Path) -> None:
    marker = tmp_path / "got-term"
    script = (
        "import signal, sys, time\n"
        f"signal.signal(signal.SIGTERM, lambda *a: (open({str(marker)!r}, 'w').close(), sys.exit(0)))\n"
        "print('up', flush=True)\n"
        "time.sleep(60)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-m", "stackcheck", "gate", "--facts", H200, "--watch", "--", sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd="/",
    ) as p:
        assert p.stdout is not None
        assert p.stdout.readline() == b"up\n"
        os.kill(p.pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        while p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert p.returncode == 0
    assert marker.exists()


def test_missing_command_is_127() -> None:
    assert gate("/nonexistent/server").returncode == 127
