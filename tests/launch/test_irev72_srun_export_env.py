"""irev72 (a review of irobust5's runners): srun(1) reads SLURM_EXPORT_ENV from its own environment as --export's
value where the command line gives none ("SLURM_EXPORT_ENV: Same as --export"). With SLURM_EXPORT_ENV=NONE in the
environment the gate reads, `srun python -m sglang.launch_server ...` runs the server without the variables the gate
judged it with (LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES, SGLANG_*): the gate passed srun over as a plain runner."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load().launch


def _env_problems(line: list[str], env: dict[str, str], mapping: Any) -> list[Any]:
    d = gate.derive(line, mapping, env)
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, (line, d.entrypoint)
    return [p for p in d.problems if p.subject == "env" and p.status == "unknown"]


@pytest.mark.parametrize(
    ("line", "env"),
    [
        (["srun", "-N1", *LAUNCH], {"SLURM_EXPORT_ENV": "NONE"}),
        (["srun", *LAUNCH], {"SLURM_EXPORT_ENV": "ALL,LD_LIBRARY_PATH=/opt/cuda/lib"}),
        (["nohup", "srun", "-n1", *LAUNCH], {"SLURM_EXPORT_ENV": "NIL"}),
        (["env", "SLURM_EXPORT_ENV=NONE", "srun", *LAUNCH], {}),
    ],
)
def test_slurm_export_env_in_the_environment_is_an_env_policy(
    line: list[str], env: dict[str, str], mapping: Any
) -> None:
    got = _env_problems(line, env, mapping)
    assert got and "fail closed" in got[0].message, line


@pytest.mark.parametrize(
    ("line", "env"),
    [
        (["srun", *LAUNCH], {}),
        (["srun", *LAUNCH], {"SLURM_EXPORT_ENV": "ALL"}),
        (["srun", "--export=ALL", *LAUNCH], {"SLURM_EXPORT_ENV": "NONE"}),  # the command line wins
    ],
)
def test_srun_passing_the_whole_environment_is_judged(line: list[str], env: dict[str, str], mapping: Any) -> None:
    assert not _env_problems(line, env, mapping), line
