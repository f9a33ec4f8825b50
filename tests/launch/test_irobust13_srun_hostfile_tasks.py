"""irobust13: srun with SLURM_HOSTFILE in its environment and no -w / -F on its line takes the file as its node list
with the arbitrary distribution (Slurm src/common/slurm_opt.c _validate_nodelist), and then (src/srun/opt.c
_opt_verify) a task per host listed where -n is not on its line: a host listed twice runs two servers on that node's
GPUs and --port. With -N on its line srun exits from Slurm 23.11 on (_validate_arbitrary), and an empty SLURM_HOSTFILE
is read as the file `./` (no host: srun exits). irobust12 read the variable for the spread alone (an empty one not at
all), so `SLURM_HOSTFILE=... srun --gpus-per-task=2 python -m sglang.launch_server --tp 2` was allowed. Now unknown
unless -n 1 is on the line; -w / -F on the line (srun ignores the variable then) are judged as before."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
JOB = {"SLURM_JOB_ID": "4242"}


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _hostfile(prefix: list[str], mapping: Any, env: dict[str, str]) -> list[str]:
    d = gate.derive([*prefix, *LAUNCH], mapping, {**JOB, **env})
    assert d.entrypoint == "launch-server", prefix
    return [p.message for p in d.problems if p.subject == "srun" and "SLURM_HOSTFILE" in p.message]


@pytest.mark.parametrize(
    ("prefix", "env", "said"),
    [(["srun", "--gpus-per-task=2"], {"SLURM_HOSTFILE": "/shared/hosts"}, "a task per host"),
     (["srun", "--gpus-per-task=2"], {"SLURM_HOSTFILE": "/shared/hosts", "SLURM_NTASKS": "1"}, "a task per host"),
     (["srun", "-n", "2", "--gpus-per-task=2"], {"SLURM_HOSTFILE": "hosts"}, "a task per host"),
     (["srun", "--gpus-per-task=2"], {"SLURM_HOSTFILE": ""}, "set and empty"),
     (["srun", "-N1", "--gpus-per-task=2"], {"SLURM_HOSTFILE": "/shared/hosts"}, "23.11"),
     (["env", "SLURM_HOSTFILE=", "srun", "--gpus-per-task=2"], {}, "set and empty")],
)  # fmt: skip
def test_the_hostfile_variable_makes_the_tasks_unknown(
    prefix: list[str], env: dict[str, str], said: str, mapping: Any
) -> None:
    got = _hostfile(prefix, mapping, env)
    assert len(got) == 1 and said in got[0], got  # (fails before: [], allowed)


@pytest.mark.parametrize(
    ("prefix", "env"),
    [(["srun", "-n", "1", "--gpus-per-task=2"], {"SLURM_HOSTFILE": "/shared/hosts"}),
     (["srun", "-w", "n1", "--gpus-per-task=2"], {"SLURM_HOSTFILE": "/shared/hosts"}),
     (["srun", "-F", "/shared/hosts", "--gpus-per-task=2"], {"SLURM_HOSTFILE": ""}),
     (["srun", "--gpus-per-task=2"], {}),
     (["env", "-u", "SLURM_HOSTFILE", "srun", "--gpus-per-task=2"], {"SLURM_HOSTFILE": ""})],
)  # fmt: skip
def test_a_line_that_sets_its_hosts_or_one_task_is_judged_as_before(
    prefix: list[str], env: dict[str, str], mapping: Any
) -> None:
    assert _hostfile(prefix, mapping, env) == []
