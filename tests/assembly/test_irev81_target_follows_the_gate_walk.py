"""irev81: the target reader (assembly/target.py _placed_command) follows the programs the gate's walk
(gate.unplaced_before) steps through to the launch, so that the interpreter audited is the launch's (irev78). Two of
the walk's steps were not followed: a local `mpirun -np 1` (elsewhere.command_at), and srun / strace with a long
option not listed, whose value may be the next word, where the walk passes over the option words to the program
(`srun --my-spank-opt /srv/bin/python3 ...`). There the reader named no interpreter, fell back to the active
VIRTUAL_ENV or stackcheck's own, and the gate's comparison (interpreter_mismatch_problems) refused a launch of the
audited environment as another one's. The walk and the reader now place the same word."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from stackcheck.assembly.target import choose_target
from stackcheck.readers.fsview import HostView

HOST = HostView()
PREFIXES = [
    ["mpirun", "-np", "1"],
    ["mpiexec", "-n", "1"],
    ["srun", "--my-spank-opt"],
    ["srun", "-n1", "--my-spank-opt", "--overlap"],
    ["nice", "srun", "--my-spank-opt"],
]


def _exe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize("prefix", PREFIXES, ids=[" ".join(p) for p in PREFIXES])
def test_the_interpreter_the_walk_places_is_the_target(tmp_path: Path, prefix: list[str]) -> None:
    launch = _exe(tmp_path / "srv/bin/python3")
    active = tmp_path / "active"
    _exe(active / "bin/python3")
    env = {"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": str(active)}
    command = [*prefix, str(launch), "-m", "sglang.launch_server", "--model-path", "m"]
    t = choose_target(HOST, env, command=command, cwd=str(tmp_path))
    assert (t.executable, t.chosen_by) == (str(launch), "the gated command"), (t, prefix)  # (fails before)


@pytest.mark.parametrize(
    "prefix", [["mpirun", "-np", "2"], ["mpirun", "-H", "other", "-np", "1"], ["srun", "--my-spank-opt", "value"]],
    ids=["two ranks", "another host", "an option's value maybe"],
)  # fmt: skip
def test_where_the_walk_does_not_place_it_nothing_is_named(tmp_path: Path, prefix: list[str]) -> None:
    launch = _exe(tmp_path / "srv/bin/python3")
    active = tmp_path / "active"
    _exe(active / "bin/python3")
    env = {"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": str(active)}
    t = choose_target(HOST, env, command=[*prefix, str(launch), "-m", "sglang.launch_server"], cwd=str(tmp_path))
    assert t.executable != str(launch), t
