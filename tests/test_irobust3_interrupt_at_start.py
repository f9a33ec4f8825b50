"""irobust3: Ctrl-C before the command starts or after it ends. cli._run_main turns a KeyboardInterrupt into one line
and exit 130 (README, exit codes: 130 is the shell's code for SIGINT, as cli documents), but only inside the command:
a SIGINT in the imports and the early NVML start of stackcheck/__main__.py (some 0.05-0.18 s of every live command on
the 2-core box, measured here by sending SIGINT to `python -m stackcheck probe` at 5 ms steps) printed a traceback and
the process died of the signal. A real SIGINT is sent to the process at those points (its handler is Python's own)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cli_process import ROOT, clean_env

#: runs `python -m stackcheck ARGS` with a real SIGINT sent to itself where HOOK is called
_DRIVER = """
import os, runpy, signal, sys
# (a parent that ignores SIGINT hands that on to its children, and Python then installs no handler of its own: the
# whole suite's run once did, and the command ran to exit 0; a terminal's Ctrl-C reaches a Python that handles it)
signal.signal(signal.SIGINT, signal.default_int_handler)
import {module} as target
real = target.{name}
def hooked(*a, **k):
    os.kill(os.getpid(), signal.SIGINT)
    return real(*a, **k)
target.{name} = hooked
sys.argv = ["stackcheck", *sys.argv[1:]]
runpy.run_module("stackcheck", run_name="__main__")
"""


@pytest.mark.parametrize(
    ("module", "name", "args"),
    [
        ("stackcheck.driver_words", "reads_driver", ["probe", "--format", "json"]),  # before the driver's start
        ("stackcheck.cli", "_flushed", ["audit", "--facts", "tests/cases/h200-newest/facts.json"]),  # after the command
    ],
)
def test_an_interrupt_outside_the_command_is_one_line_and_130(module: str, name: str, args: list[str]) -> None:
    code = _DRIVER.format(module=module, name=name)
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          env=clean_env(), cwd=ROOT, check=False)  # fmt: skip
    assert proc.returncode == 130, (proc.returncode, proc.stderr)
    assert proc.stderr == "stackcheck: interrupted\n", proc.stderr
