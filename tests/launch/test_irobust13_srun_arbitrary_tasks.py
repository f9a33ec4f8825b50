"""irobust13: srun with the arbitrary distribution (-m / --distribution / SLURM_DISTRIBUTION `arbitrary` or `hostfile`,
Slurm src/common/proc_args.c _parse_dist_base) and a node list on its line (-w / -F) runs a task per host listed
(src/srun/opt.c _opt_verify), as SLURM_HOSTFILE does: `srun -m arbitrary -w n1,n1 --gpus-per-task=1 python -m
sglang.launch_server ...` runs two servers on n1, the second on a taken --port, and was allowed (a false pass). Now
unknown unless -n 1 is on the line or the list names each host once; another distribution is judged as before."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "1"]
JOB = {"SLURM_JOB_ID": "4242"}


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _arbitrary(prefix: list[str], mapping: Any, env: dict[str, str]) -> list[str]:
    d = gate.derive([*prefix, *LAUNCH], mapping, {**JOB, **env})
    assert d.entrypoint == "launch-server", prefix
    return [p.message for p in d.problems if p.subject == "srun" and "arbitrary distribution" in p.message]


@pytest.mark.parametrize(
    ("prefix", "env"),
    [(["srun", "-m", "arbitrary", "-w", "n1,n1", "--gpus-per-task=1"], {}),
     (["srun", "--distribution=Hostfile", "-w", "n[1-2]", "--gpus-per-task=1"], {}),
     (["srun", "-marbitrary,pack", "-F", "/shared/hosts", "--gpus-per-task=1"], {}),
     (["srun", "-n", "2", "-m", "arbitrary", "-w", "n1,n1", "--gpus-per-task=1"], {}),
     (["srun", "-w", "n1,n1", "--gpus-per-task=1"], {"SLURM_DISTRIBUTION": "arbitrary"})],
)  # fmt: skip
def test_the_arbitrary_distribution_over_a_list_is_unknown(
    prefix: list[str], env: dict[str, str], mapping: Any
) -> None:
    assert len(_arbitrary(prefix, mapping, env)) == 1  # (fails before: [], allowed)


@pytest.mark.parametrize(
    ("prefix", "env"),
    [(["srun", "-n", "1", "-m", "arbitrary", "-w", "n1,n1", "--gpus-per-task=1"], {}),
     (["srun", "-m", "arbitrary", "-w", "n1,n2", "--gpus-per-task=1"], {}),
     (["srun", "-m", "block", "-w", "n1,n1", "--gpus-per-task=1"], {}),
     (["srun", "-w", "n1,n1", "--gpus-per-task=1"], {}), (["srun", "-m", "arbitrary", "--gpus-per-task=1"], {})],
)  # fmt: skip
def test_one_task_distinct_hosts_or_another_distribution_is_judged_as_before(
    prefix: list[str], env: dict[str, str], mapping: Any
) -> None:
    assert _arbitrary(prefix, mapping, env) == []
