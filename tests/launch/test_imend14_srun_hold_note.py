"""imend14: `srun -H` / `--hold` submits the job srun starts in a held state (Slurm slurm_opt.c: priority 0 in the job
description srun's allocate_nodes sends): the job pends, and srun with it, until someone releases it. The gate allowed
such a launch as a plain one, with no word of it. Now a note (not a refusal: the launch is the one judged, started
when released). A step inside an existing job (SLURM_JOB_ID set, or --jobid) asks for no job: no note; a `-H` that is
another option's value (`-J -H`: a job named -H) is none either."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "1"]
GPU = ["--gpus-per-task=1"]  # (outside an allocation srun must ask for the GPU: test_imend13_srun_outside_allocation)


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _srun(words: list[str], mapping: Any, env: dict[str, str]) -> list[tuple[str, str]]:
    d = gate.derive([*words, *LAUNCH], mapping, env)
    assert d.entrypoint == "launch-server", words
    return [(p.status, p.message) for p in d.problems if p.subject == "srun"]


@pytest.mark.parametrize(
    "words",
    [
        ["srun", "-H", *GPU],
        ["srun", "--hold", *GPU],
        ["srun", "--ho", *GPU],  # (getopt_long's unique prefix)
        ["srun", "-lH", *GPU],  # (in a cluster)
        ["srun", *GPU, "-N1", "-H"],
        ["nohup", "srun", "-H", *GPU],
    ],
)
def test_a_held_srun_job_is_noted(words: list[str], mapping: Any) -> None:
    # fails before: no srun problem at all (allowed without a word)
    got = _srun(words, mapping, {})
    assert [s for s, _ in got] == ["note"] and "held" in got[0][1] and "--hold" in got[0][1], (words, got)


@pytest.mark.parametrize(
    ("words", "env"),
    [
        (["srun", "-H", *GPU], {"SLURM_JOB_ID": "4242"}),  # (a step: --hold sets no job's priority)
        (["srun", "--hold"], {"SLURM_JOB_ID": "4242"}),
        (["srun", "--jobid=4242", "-H"], {}),
        (["srun", "-J", "-H", *GPU], {}),  # (a job named -H)
        (["srun", "--job-name", "--hold", *GPU], {}),
        (["srun", *GPU], {}),
    ],
)
def test_no_note_where_no_job_is_held(words: list[str], env: dict[str, str], mapping: Any) -> None:
    assert _srun(words, mapping, env) == [], words


def test_the_note_does_not_refuse(mapping: Any) -> None:
    d = gate.derive(["srun", "-H", *GPU, *LAUNCH], mapping, {})
    assert [p.status for p in d.problems if p.status not in ("note",)] == [
        p.status for p in gate.derive(["srun", *GPU, *LAUNCH], mapping, {}).problems if p.status != "note"
    ]
