"""irobust7: flock's -w / --timeout and -E / --conflict-exit-code values were skipped unread, so a value flock refuses
before running anything (util-linux 2.38.1, run here: `flock -w abc F true` "invalid timeout value", exit 64; `-w -1`,
`-w inf`, `-w 1e19` "cannot set up timer", exit 71; `-E 256`, `-E -1` "exit code out of range", `-E '5 '`, exit 64)
let `flock -w abc /tmp/l python -m sglang.launch_server ...` through: the server never starts. Now such a flock is
read as refusing its command line (blocked); the values flock takes are read as before."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import read_flock

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


REFUSED = [
    ["-w", "abc"], ["-w", ""], ["-wabc"], ["--timeout=1x"], ["--wait", "3 "], ["-w", "inf"], ["-w", "nan"],
    ["-w", "-1"], ["-w", "1e19"], ["-w", "1e400"], ["-w", "١"], ["-E", "256"], ["-E", "-1"], ["-E5 "],
    ["--conflict-exit-code", "x"], ["--conflict-exit-code=99999999999"], ["-nw", "x"],
]  # fmt: skip
TAKEN = [
    ["-w", "0.5"], ["-w", "0"], ["-w", "-0"], ["-w", "+3"], ["-w", " 2"], ["-w", "1e1"], ["-w", ".5"],
    ["-w", "5."], ["-w", "99999999999"], ["--timeout=10"], ["-E", "3"], ["-E", "+5"], ["-E", " 5"], ["-E", "010"],
    ["-E0"], ["-nw", "1"],
]  # fmt: skip


@pytest.mark.parametrize("options", REFUSED)
def test_a_value_flock_refuses_blocks_the_launch(options: list[str], mapping: Any) -> None:
    # fails before: read as "argv" (the launch runs), no problem
    argv = ["flock", *options, "/tmp/l", *LAUNCH]
    assert read_flock(argv, 0).kind == "refused", options
    d = gate.derive(argv, mapping, {})
    assert [p.status for p in d.problems if p.subject == "flock"] == ["blocked"], d.problems


@pytest.mark.parametrize("options", TAKEN)
def test_a_value_flock_takes_is_read_as_before(options: list[str], mapping: Any) -> None:
    argv = ["flock", *options, "/tmp/l", *LAUNCH]
    assert read_flock(argv, 0).kind == "argv", options
    d = gate.derive(argv, mapping, {})
    assert d.entrypoint == "launch-server" and not [p for p in d.problems if p.subject == "flock"], d.problems
