"""imend11: -G / --gpus is the step's total over its nodes (srun(1) -G; ifc59), and SLURM_GPUS is srun's -G from its
environment (Slurm src/srun/opt.c env_vars[]: {"SLURM_GPUS", 'G'}); srun_gpus gave the line's --gpus each node's
share rule, but srun_env_gpus read SLURM_GPUS as a task's count whatever the nodes, so `srun -N2 python -m
sglang.launch_server --tp 2` with SLURM_GPUS=2 was allowed where `srun -N2 --gpus=2 ...` was unknown. srun also takes
-N from its environment (SLURM_JOB_NUM_NODES since 17.11.1; SLURM_NNODES before), and a range -N 1-2 may take two
nodes: neither was read for the share."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import srun_line

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _srun(line: list[str], mapping: Any, env: dict[str, str]) -> list[str]:
    return [p.message for p in gate.derive(line, mapping, env).problems if p.subject == "srun" and "GPUs" in p.message]


@pytest.mark.parametrize(
    ("options", "env"),
    [
        (["-N2"], {"SLURM_GPUS": "2"}),  # (fails before: allowed)
        (["--nodes=2"], {"SLURM_GPUS": "h100:2"}),
        (["-N", "1-2"], {"SLURM_GPUS": "2"}),
        ([], {"SLURM_GPUS": "2", "SLURM_JOB_NUM_NODES": "2"}),
        ([], {"SLURM_GPUS": "2", "SLURM_NNODES": "2"}),
        ([], {"SLURM_GPUS": "2", "SLURM_JOB_NUM_NODES_HET_GROUP_0": "2"}),
        (["--gpus=2"], {"SLURM_JOB_NUM_NODES": "2"}),  # (fails before: the environment's -N not read)
        (["-G2", "-N1-2"], {}),  # (fails before: a range's low end read alone)
        (["-N", "x"], {"SLURM_GPUS": "2"}),
    ],
)
def test_the_step_total_over_more_than_one_node_is_unknown(
    options: list[str], env: dict[str, str], mapping: Any
) -> None:
    got = _srun(["srun", *options, *LAUNCH], mapping, env)
    assert len(got) == 1 and "over -N" in got[0], got


@pytest.mark.parametrize(
    ("options", "env"),
    [
        (["-N1"], {"SLURM_GPUS": "2"}),
        (["-N", "1-1"], {"SLURM_GPUS": "2"}),
        ([], {"SLURM_GPUS": "2"}),
        (["-N1"], {"SLURM_GPUS": "2", "SLURM_JOB_NUM_NODES": "4"}),  # (the line's -N wins: opt.c _opt_env, _opt_args)
        (["--gpus=2"], {"SLURM_JOB_NUM_NODES": "1"}),
        (["--gpus=2", "-N1"], {"SLURM_GPUS": "1"}),  # (the line's --gpus wins)
    ],
)
def test_one_node_gets_the_whole_count(options: list[str], env: dict[str, str], mapping: Any) -> None:
    assert _srun(["srun", *options, *LAUNCH], mapping, env) == []


def test_the_same_rule_from_the_line_and_the_environment() -> None:
    for nodes in (["-N2"], ["-N1"], [], ["-N1-2"]):
        line = srun_line(["srun", *nodes, "--gpus=2", *LAUNCH], 0)
        env_line = srun_line(["srun", *nodes, *LAUNCH], 0)
        on_line = [c for _, c in gate.srun_gpus([line])]
        from_env = [c for _, c in gate.srun_env_gpus(env_line, {"SLURM_GPUS": "2"})]
        assert on_line == from_env, nodes


def test_the_environment_srun_itself_had(mapping: Any) -> None:
    # (SLURM_JOB_NUM_NODES unset behind srun is still srun's -N: the launch's environment alone would miss it)
    line = ["srun", "--gpus=2", "env", "-u", "SLURM_JOB_NUM_NODES", *LAUNCH]
    assert len(_srun(line, mapping, {"SLURM_JOB_NUM_NODES": "2"})) == 1
