"""imend8: srun takes its GPU options from its environment too (Slurm src/srun/opt.c env_vars[]: SLURM_GPUS,
SLURM_GPUS_PER_NODE, SLURM_GPUS_PER_TASK, SLURM_GRES, SLURM_TRES_PER_TASK, read before the command line, which wins),
and sbatch exports them to a batch script; the gate read the line alone, so `srun python -m sglang.launch_server --tp
2` inside `sbatch --gpus-per-task=1` was allowed (a task sees 1 GPU: the server fails at start). --tres-per-task's
gres/gpu entry was not read on the line either."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


#: (imend13) steps inside an allocation (an sbatch script's, which exports SLURM_GPUS_PER_TASK and the like): outside
#: one, an srun with no GPU option starts a job without GPUs (test_imend13_srun_outside_allocation.py)
JOB = {"SLURM_JOB_ID": "4242"}


def _srun(line: list[str], mapping: Any, env: dict[str, str], inside: bool = True) -> list[str]:
    d = gate.derive(line, mapping, {**JOB, **env} if inside else env)
    return [p.message for p in d.problems if p.subject == "srun"]


@pytest.mark.parametrize(
    "env",
    [
        {"SLURM_GPUS_PER_TASK": "1"},
        {"SLURM_GPUS": "1"},
        {"SLURM_GPUS": "a100:1"},
        {"SLURM_GPUS_PER_NODE": "1"},
        {"SLURM_GRES": "gpu:1"},
        {"SLURM_TRES_PER_TASK": "cpu=4,gres/gpu=1"},
        {"SLURM_TRES_PER_TASK": "gres/gpu:h100=1"},
        {"SLURM_GPUS_PER_TASK": "4", "SLURM_GPUS_PER_TASK_HET_GROUP_0": "1"},
        {"SLURM_GPUS_PER_TASK": "x"},  # (not read: fail closed)
    ],
)
def test_too_few_gpus_from_the_environment(env: dict[str, str], mapping: Any) -> None:
    # fails before: no srun problem (the environment was not read)
    got = _srun(["srun", *LAUNCH], mapping, env)
    assert len(got) == 1 and "in its environment" in got[0] and "fewer than the 2" in got[0]


def test_the_environment_of_a_shell_string_and_an_assignment(mapping: Any) -> None:
    assert _srun(["bash", "-c", "export SLURM_GPUS_PER_TASK=1; srun " + " ".join(LAUNCH)], mapping, {})
    assert _srun(["env", "SLURM_GPUS_PER_TASK=1", "srun", *LAUNCH], mapping, {})
    # (set behind srun: the server's environment, not srun's)
    assert _srun(["srun", "--gpus-per-task=2", "env", "SLURM_GPUS_PER_TASK=1", *LAUNCH], mapping, {}) == []


def test_the_line_wins(mapping: Any) -> None:
    assert _srun(["srun", "--gpus-per-task=2", *LAUNCH], mapping, {"SLURM_GPUS_PER_TASK": "1"}) == []
    assert _srun(["srun", "--gpus-per-task=2", *LAUNCH], mapping, {"SLURM_TRES_PER_TASK": "gres/gpu=1"}) == []
    assert _srun(["srun", "--gres=gpu:2", *LAUNCH], mapping, {"SLURM_GRES": "gpu:1"}) == []
    assert _srun(["srun", "-G", "2", *LAUNCH], mapping, {"SLURM_GPUS": "1"}) == []
    # (inside a job, --gpus on the line drops SLURM_GPUS_PER_NODE: opt.c)
    env = {"SLURM_GPUS_PER_NODE": "1", "SLURM_JOB_ID": "7"}
    assert _srun(["srun", "--gpus=2", *LAUNCH], mapping, env) == []
    assert _srun(["srun", "--gpus=2", *LAUNCH], mapping, {"SLURM_GPUS_PER_NODE": "1"}, inside=False)


def test_enough_or_no_gpu_in_the_environment(mapping: Any) -> None:
    for env in (
        {"SLURM_GPUS_PER_TASK": "2"},
        {"SLURM_TRES_PER_TASK": "cpu=8"},
        {"SLURM_GRES": "shard:2"},
        {"SLURM_TRES_PER_TASK": "gres/gpu=2"},
        {},
    ):
        assert _srun(["srun", *LAUNCH], mapping, env) == [], env
    assert _srun(LAUNCH, mapping, {"SLURM_GPUS_PER_TASK": "1"}) == []  # (no srun: the variable is the job's)


def test_tres_per_task_on_the_line(mapping: Any) -> None:
    # fails before: --tres-per-task was not read
    assert _srun(["srun", "--tres-per-task=gres/gpu=1", *LAUNCH], mapping, {})
    assert _srun(["srun", "--tres-per-task=gres/gpu=2k", *LAUNCH], mapping, {})  # (a suffix: not read)
    assert _srun(["srun", "--tres-per-task=gres/gpu:a100=2", *LAUNCH], mapping, {}) == []
    assert _srun(["srun", "--tres-per-task=cpu=2", *LAUNCH], mapping, {}) == []
