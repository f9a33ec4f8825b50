"""irev79: `nohup -- python ...` (nohup's only options are --help / --version, `--` ends them) is allowed by the gate's
walk, which steps over the `--` (gate.unplaced_before; runners.chain_end too, where a `timeout` comes first), but the
target reader's _unwrap took the `--` for the program: no interpreter was named, the VIRTUAL_ENV's (or stackcheck's
own) was audited, and the readings of the launch's own Python (its option letters: `-P` on a Python older than 3.11
exits before SGLang starts; its first sys.path entry) were lost."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from stackcheck.assembly.target import choose_target, command_first_path, python_option_letters
from stackcheck.readers.fsview import HostView

HOST = HostView()


def _exe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize("prefix", [["nohup", "--"], ["nohup", "--", "nice"], ["env", "A=1", "nohup", "--"],
                                    ["nohup", "--", "nohup", "--"]])  # fmt: skip
def test_nohup_dashdash_names_the_launch_interpreter(tmp_path: Path, prefix: list[str]) -> None:
    launch = _exe(tmp_path / "srv/bin/python3")
    active = tmp_path / "active"
    _exe(active / "bin/python3")
    env = {"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": str(active)}
    command = [*prefix, str(launch), "-P", "-m", "sglang.launch_server", "--model-path", "m"]
    t = choose_target(HOST, env, command=command, cwd=str(tmp_path))
    assert (t.executable, t.chosen_by) == (str(launch), "the gated command")
    assert python_option_letters(command, env) == "Pm"
    assert command_first_path([*prefix, str(launch), "-m", "x"], env, str(tmp_path), HOST) == str(tmp_path)


def test_nohup_dashdash_alone_names_no_program(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin"}
    assert python_option_letters(["nohup", "--"], env) is None
