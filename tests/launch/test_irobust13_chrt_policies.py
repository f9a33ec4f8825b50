"""irobust13: chrt before the launch with -a / --all-tasks (the tasks of a pid: 0 without -p, chrt exits 1 "cannot
obtain the list of tasks"), with -T / -P / -D under a policy other than SCHED_DEADLINE (chrt exits 1), or with
SCHED_DEADLINE (-d: refused without a runtime; with one, the process cannot fork or start a thread unless -R, where
the server starts its schedulers and threads; the kernel's admission not read). irobust12 checked the priority alone
and the gate allowed these launches (a false pass: util-linux 2.38.1 run on this box: `chrt -a -f 5 touch F`, `chrt -T
5 -f 5 touch F`, `chrt -d 0 touch F` exit 1 with F not made; `chrt -d -T 1000000 -D 2000000 -P 2000000 0 sh -c 'true
& wait'` prints "Cannot fork"). Now unknown; the other policies and priorities are judged as before."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _chrt(prefix: list[str], mapping: Any) -> list[str]:
    d = gate.derive([*prefix, *LAUNCH], mapping, {})
    assert d.entrypoint == "launch-server", prefix
    return [p.status for p in d.problems if p.subject == "chrt"]


@pytest.mark.parametrize(
    "prefix",
    [["chrt", "-a", "-f", "5"], ["chrt", "--all-tasks", "-o", "0"], ["chrt", "--all", "-r", "1"],
     ["chrt", "-d", "0"], ["chrt", "--deadline", "0"], ["chrt", "--d", "0"],
     ["chrt", "-d", "-T", "1000000", "-D", "2000000", "-P", "2000000", "0"],
     ["chrt", "-R", "-d", "-T", "1000000", "-D", "2000000", "-P", "2000000", "0"],
     ["chrt", "-T", "5", "-f", "5"], ["chrt", "--sched-period=5", "-o", "0"]],
)  # fmt: skip
def test_a_chrt_that_exits_or_starves_the_server_is_unknown(prefix: list[str], mapping: Any) -> None:
    assert _chrt(prefix, mapping) == ["unknown"]  # (fails before: [], the launch judged)


@pytest.mark.parametrize(
    "prefix",
    [["chrt", "-f", "5"], ["chrt", "-o", "0"], ["chrt", "--other", "0"], ["chrt", "-R", "-b", "0"],
     ["chrt", "-v", "-r", "10"], ["chrt", "-i", "0"], ["chrt", "5"], ["chrt", "-f", "099"]],
)  # fmt: skip
def test_a_chrt_that_runs_the_launch_is_judged_as_before(prefix: list[str], mapping: Any) -> None:
    assert _chrt(prefix, mapping) == []
