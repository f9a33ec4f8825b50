"""irobust12: irev80 made srun's -w / -F node lists spread the launch, but srun takes its node list from
SLURM_HOSTFILE too where neither is given (Slurm src/srun/opt.c _opt_verify: `if (!opt.nodelist)` the variable's
file becomes the node list, with the arbitrary distribution, and the task count follows the file's hosts): `env
SLURM_HOSTFILE=/shared/hosts srun python3 -m sglang.launch_server ... --nnodes 2` was allowed with every node claiming
--node-rank 0. A host list whose hosts are separated by blanks (`-w "n1 n2"`) was read as one host. Both now spread
the launch unless -N says one node."""

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


def _spread(argv: list[str], mapping: Any, env: dict[str, str]) -> bool:
    problems = gate.derive(argv, mapping, env).problems
    return any(p.subject == "srun" and "--node-rank" in p.message for p in problems)


@pytest.mark.parametrize(
    "argv",
    [["env", "SLURM_HOSTFILE=/shared/hosts", "srun", *LAUNCH, *MULTI],
     ["srun", "-w", "n1 n2", *LAUNCH, *MULTI], ["srun", "-w", "n1\tn2", *LAUNCH, *MULTI]],
)  # fmt: skip
def test_the_hostfile_variable_or_a_blank_list_spreads_the_launch(argv: list[str], mapping: Any) -> None:
    assert _spread(argv, mapping, {})  # (fails before: allowed)


def test_the_hostfile_variable_of_the_environment(mapping: Any) -> None:
    assert _spread(["srun", *LAUNCH, *MULTI], mapping, {"SLURM_HOSTFILE": "hosts"})  # (fails before)
    assert gate._srun_spread([srun_line(["srun", *LAUNCH], 0)], {"SLURM_HOSTFILE": "/h"}) is not None


@pytest.mark.parametrize(
    "argv",
    [["env", "SLURM_HOSTFILE=/shared/hosts", "srun", "-N", "1", *LAUNCH, *MULTI],
     ["env", "SLURM_HOSTFILE=/shared/hosts", "srun", "-w", "n1", *LAUNCH, *MULTI], ["srun", "-w", " n1 ", *LAUNCH]],
)  # fmt: skip
def test_one_node_said_otherwise_does_not(argv: list[str], mapping: Any) -> None:
    assert not _spread(argv, mapping, {})
