"""irobust13: `taskset -c LIST` with a range whose end is below its start (`1-0`) or a stride of 0 (`0-3:0`). taskset
exits 1 on them before running the command (util-linux 2.38.1 run on this box), and irobust12's reading took any
digits in the range's shape: the launch was allowed (a false pass). Now unknown; ordered ranges and strides above 0
run the launch as before. (Whether the CPUs listed exist on the node is still not read: `taskset -c 9999` exits 1 where
no CPU of the list is there.)"""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _taskset(prefix: list[str], mapping: Any) -> list[str]:
    d = gate.derive([*prefix, *LAUNCH], mapping, {})
    assert d.entrypoint == "launch-server", prefix
    return [p.status for p in d.problems if p.subject == "taskset"]


@pytest.mark.parametrize(
    "prefix",
    [["taskset", "-c", "1-0"], ["taskset", "-c", "0-3:0"], ["taskset", "--cpu-list", "0-7,9-8"],
     ["taskset", "-ac", "5-2"]],
)  # fmt: skip
def test_a_cpu_range_taskset_refuses_is_unknown(prefix: list[str], mapping: Any) -> None:
    assert _taskset(prefix, mapping) == ["unknown"]  # (fails before: [], the launch judged)


@pytest.mark.parametrize(
    "prefix",
    [["taskset", "-c", "0-3:2"], ["taskset", "-c", "00"], ["taskset", "-c", "0-7,8-15"], ["taskset", "-c", "3-3"],
     ["taskset", "0xff"]],
)  # fmt: skip
def test_a_cpu_list_taskset_takes_runs_the_launch(prefix: list[str], mapping: Any) -> None:
    assert _taskset(prefix, mapping) == []
