"""imend11: srun takes -N from SLURM_JOB_NUM_NODES (Slurm src/srun/opt.c env_vars[], from 17.11.1; SLURM_NNODES
before), but _srun_spread and _srun_copies read SLURM_NNODES alone: a launch srun spreads over two nodes by
SLURM_JOB_NUM_NODES=2 was judged as one node (every node the same --node-rank: allowed), and a range -N 1-2 too."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import srun_line

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "1"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize(
    ("options", "env"),
    [
        ([], {"SLURM_JOB_NUM_NODES": "2"}),  # (fails before: allowed)
        ([], {"SLURM_JOB_NUM_NODES_HET_GROUP_0": "2"}),
        (["-N", "1-2"], {}),  # (fails before: allowed)
        ([], {"SLURM_NNODES": "2"}),
    ],
)
def test_spread_by_the_environment_or_a_range(options: list[str], env: dict[str, str], mapping: Any) -> None:
    argv = ["srun", *options, *LAUNCH, "--nnodes", "2", "--dist-init-addr", "h:5000"]
    assert gate._srun_spread([srun_line(argv, 0)], env) is not None
    problems = gate.derive(argv, mapping, env).problems
    assert any(p.subject == "srun" and "--node-rank" in p.message for p in problems), problems


def test_one_node_is_not_spread() -> None:
    for options, env in (([], {"SLURM_JOB_NUM_NODES": "1"}), (["-N1"], {"SLURM_JOB_NUM_NODES": "2"}), ([], {})):
        assert gate._srun_spread([srun_line(["srun", *options, *LAUNCH], 0)], env) is None


def test_copies_read_the_fewest_nodes() -> None:
    line = srun_line(["srun", "-n2", *LAUNCH], 0)
    # (fails before: SLURM_NNODES=2 read alone, two tasks on two nodes; srun 17.11.1+ reads SLURM_JOB_NUM_NODES=1)
    assert gate._srun_copies(line, {"SLURM_NNODES": "2", "SLURM_JOB_NUM_NODES": "1"}) == "-n 2 on -N 1"
    assert gate._srun_copies(line, {"SLURM_JOB_NUM_NODES": "2"}) is None
    assert gate._srun_copies(line, {"SLURM_JOB_NUM_NODES": "1"}) == "-n 2 on -N 1"
