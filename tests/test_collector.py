"""The cyclic garbage collector is paused for a command (stackcheck.cli._paused_collector): the collections a run's
allocations triggered walked the manifests, facts and documents again and again and freed almost nothing
(~7 ms CPU of an audit --facts, ~7 of a gate of saved facts, ~11 of a plan with --want on the 2-core box,
bench/ab_trees.py-style interleaved runs). main() gives a library caller its collector back; the program leaves
with it paused; gate --watch, whose parent lives as long as the server, turns it back on before it watches."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent
FACTS = str(ROOT / "tests" / "cases" / "writeup-after" / "facts.json")


@pytest.mark.parametrize("enabled", [True, False])
def test_a_command_runs_paused_and_main_gives_the_state_back(
    enabled: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import stackcheck.commands.audit as audit_cmd

    seen: list[bool] = []
    real = audit_cmd.run

    def spy(args: Any) -> int:
        seen.append(gc.isenabled())
        return real(args)

    monkeypatch.setattr(audit_cmd, "run", spy)
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        assert main(["audit", "--facts", FACTS, "--format", "json"]) in (0, 1)
        assert seen == [False]
        assert gc.isenabled() is enabled  # the caller's state, as it was
        with pytest.raises(SystemExit):
            main(["audit", "--no-such-option"])  # argparse leaves through SystemExit: restored all the same
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
    capsys.readouterr()


def test_the_program_pauses_before_main_and_leaves_paused() -> None:
    code = (
        "import atexit, gc, sys\n"
        "import stackcheck.cli as cli\n"
        "seen = []\n"
        "cli.main = lambda argv=None: seen.append(gc.isenabled()) or 0\n"
        "atexit.register(lambda: print(seen, gc.isenabled()))  # (an atexit callback: the ordinary exit)\n"
        "cli.run()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "[False] False\n"


def test_gate_watch_turns_the_collector_back_on(monkeypatch: pytest.MonkeyPatch) -> None:
    import stackcheck.launch.watch as watch_mod

    seen: list[bool] = []

    def fake_watch(command: list[str], **_: Any) -> int:
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(watch_mod, "watch", fake_watch)
    was = gc.isenabled()
    try:
        gc.disable()  # as the program leaves it
        assert main(["gate", "--watch", "--quiet", "--facts", FACTS, "--", "true"]) == 0
        assert seen == [True]
    finally:
        (gc.enable if was else gc.disable)()


def test_the_entry_point_pauses_before_the_early_nvml_start() -> None:
    """`python -m stackcheck` and the `stackcheck` script start the NVML reader before stackcheck.cli is imported
    (stackcheck.__main__): the collector is paused by then, so that the forked reader, which inherits its state,
    and the imports before run() collect nothing (they did before run() paused it, in cli.main_inner)."""
    code = (
        "import gc, sys\n"
        "import stackcheck.probes.nvml_early as early\n"
        "import stackcheck.cli as cli\n"
        "seen = []\n"
        "early.start = lambda usage=False: seen.append(('start', gc.isenabled()))\n"
        "cli.run = lambda: seen.append(('run', gc.isenabled()))\n"
        "gc.enable()\n"
        "sys.argv = ['stackcheck', 'gate', '--dry-run', '--', 'python3', '-m', 'sglang.launch_server']\n"
        "import stackcheck.__main__ as entry\n"
        "entry.main()\n"
        "print(seen)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "[('start', False), ('run', False)]\n"
