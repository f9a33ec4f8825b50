"""irobust13: numactl before the launch with a node or CPU list libnuma does not parse (`-N abc`, `-C x`, `--membind=`,
`-C 0-`): numactl prints "<VALUE> is invalid" and exits 1 through usage() before running its command (numactl/numactl
93c1fe5 numactl.c :544-650, libnuma.c __numa_parse_nodestring / __numa_parse_cpustring; read, not run: no numactl on
this box). The gate took any value and allowed the launch (a false pass). Now unknown, as a device's name
(netdev:eth0), whose nodes the gate does not read; numbers, ranges, `all`, `!` / `+` and `same` are judged as
before."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _numactl(prefix: list[str], mapping: Any) -> list[str]:
    d = gate.derive([*prefix, *LAUNCH], mapping, {})
    assert d.entrypoint == "launch-server", prefix
    return [p.status for p in d.problems if p.subject == "numactl"]


@pytest.mark.parametrize(
    "prefix",
    [["numactl", "-N", "abc"], ["numactl", "-C", "x"], ["numactl", "--membind="], ["numactl", "--physcpubind=0-"],
     ["numactl", "-i", "0,,1"], ["numactl", "--preferred", "node0"], ["numactl", "--cpunodebind=netdev:eth0"]],
)  # fmt: skip
def test_a_list_numactl_does_not_parse_is_unknown(prefix: list[str], mapping: Any) -> None:
    assert _numactl(prefix, mapping) == ["unknown"]  # (fails before: [], the launch judged)


@pytest.mark.parametrize(
    "prefix",
    [["numactl", "-N", "0", "-m", "0"], ["numactl", "--interleave=all"], ["numactl", "-C", "0-7,16-23"],
     ["numactl", "-C", "+0-3"], ["numactl", "-N", "!0"], ["numactl", "-N0", "--membind", "same"], ["numactl", "-l"],
     ["numactl", "-p", "1"]],
)  # fmt: skip
def test_a_list_numactl_parses_runs_the_launch(prefix: list[str], mapping: Any) -> None:
    assert _numactl(prefix, mapping) == []
