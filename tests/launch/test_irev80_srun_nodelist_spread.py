"""irev80: srun -w / --nodelist HOSTS and -F / --nodefile FILE give the step every node listed (srun(1) --nodelist:
"the job will contain all of these hosts"; slurm_opt.c: 'w' nodelist and 'F' nodefile take a value), so without -N
the launch runs on each of them. _srun_spread read -N alone: `srun -w n1,n2 python3 -m sglang.launch_server ...
--nnodes 2 --node-rank 0` was allowed, both nodes claiming rank 0 (as `srun -N 2 ...` is refused, ifc59). Now a
host list of more than one host (a `,` or a `[range]`; a path is a file of hosts) or a node file is more than one
node unless -N says one."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import srun_line

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "1"]
MULTI = ["--nnodes", "2", "--dist-init-addr", "h:5000"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize(
    "options",
    [["-w", "n1,n2"], ["-wn[1-2]"], ["--nodelist=n1,n2"], ["--nodelist", "/etc/hosts.txt"], ["-F", "hosts"],
     ["--nodefile=hosts"]],
)  # fmt: skip
def test_a_list_of_hosts_spreads_the_launch(options: list[str], mapping: Any) -> None:
    argv = ["srun", *options, *LAUNCH, *MULTI]
    assert gate._srun_spread([srun_line(argv, 0)], {}) is not None  # (fails before: None)
    problems = gate.derive(argv, mapping, {}).problems
    assert any(p.subject == "srun" and "--node-rank" in p.message for p in problems), problems


@pytest.mark.parametrize("options", [["-w", "n1"], ["-N", "1", "-w", "n1,n2"], []])
def test_one_host_or_one_node_does_not(options: list[str]) -> None:
    assert gate._srun_spread([srun_line(["srun", *options, *LAUNCH], 0)], {}) is None
