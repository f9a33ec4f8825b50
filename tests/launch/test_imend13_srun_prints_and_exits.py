"""imend13: `srun -h` / `--help`, `--usage` and `-V` / `--version` print and exit (Slurm src/common/slurm_opt.c
arg_set_help / arg_set_usage / arg_set_version: exit(0)), and `--test-only` asks when the job would start and exits
(src/srun/srun_job.c): srun runs no command. The gate read them as plain options and judged the launch after them
as the one that runs (allowed). Now unknown: nothing is launched. A value that only looks like one (`-J -h`: a job
named -h) is read as before."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "1"]
JOB = {"SLURM_JOB_ID": "4242"}  # (a step inside an allocation: test_imend13_srun_outside_allocation.py)


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _srun(words: list[str], mapping: Any) -> list[str]:
    d = gate.derive([*words, *LAUNCH], mapping, JOB)
    assert d.entrypoint == "launch-server", words
    return [p.message for p in d.problems if p.subject == "srun" and p.status == "unknown"]


@pytest.mark.parametrize(
    "words",
    [
        ["srun", "-h"],
        ["srun", "--help"],
        ["srun", "--hel"],  # (getopt_long's unique prefix)
        ["srun", "-V"],
        ["srun", "--version"],
        ["srun", "--vers"],
        ["srun", "--usage"],
        ["srun", "--test-only"],
        ["srun", "-N1", "-lh"],  # (in a cluster)
        ["srun", "--gpus-per-task=1", "-Vl"],
        ["nohup", "srun", "-n1", "--usage"],
    ],
)
def test_an_srun_that_prints_and_exits_is_unknown(words: list[str], mapping: Any) -> None:
    # fails before: no srun problem (allowed: the launch after them judged as the one srun runs)
    got = _srun(words, mapping)
    assert len(got) == 1 and "runs no command" in got[0], (words, got)


@pytest.mark.parametrize(
    "words",
    [["srun", "-J", "-h"], ["srun", "--job-name", "--help"], ["srun", "-N1", "-l"], ["srun", "--verbose", "-v"]],
)
def test_a_value_or_another_option_is_read_as_before(words: list[str], mapping: Any) -> None:
    assert _srun(words, mapping) == [], words
