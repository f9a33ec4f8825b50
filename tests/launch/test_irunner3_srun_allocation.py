"""irunner3: srun's -N / -w values srun refuses before the launch starts. Slurm's verify_node_count (src/common/
proc_args.c) refuses a node count that is no number (`abc`), negative, past INT_MAX, or whose maximum is below its
minimum (`3-2`); inside a job srun refuses a step on more nodes than the job holds ("Only allocated %d nodes asked for
%d", src/srun/srun_job.c) and the step manager one naming a node outside the job (src/stepmgr/stepmgr.c). The gate
allowed all of them (a false pass): now blocked; -N 0 (a step of no node, not read) is unknown."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]
JOB = {"SLURM_JOB_ID": "7", "SLURM_JOB_NODELIST": "n[1-4,7]", "SLURM_JOB_NUM_NODES": "5", "SLURM_NNODES": "5"}


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _srun(words: list[str], env: dict[str, str], mapping: Any) -> list[tuple[str, str | None]]:
    d = gate.derive([*words, *LAUNCH], mapping, env)
    return [(p.status, p.effect) for p in d.problems if p.subject == "srun"]


@pytest.mark.parametrize(
    "words",
    [["srun", "-N", "abc"], ["srun", "-N", "3-2"], ["srun", "--nodes=2x"], ["srun", "-N", "3-"], ["srun", "-N1O"]],
)
def test_a_node_count_srun_refuses_is_blocked_anywhere(words: list[str], mapping: Any) -> None:
    for env in ({}, JOB):
        assert _srun(words, env, mapping)[:1] == [("blocked", "crash")], (words, env)  # (fails before: [])


@pytest.mark.parametrize(
    "words", [["srun", "-N", "6"], ["srun", "-N6-8"], ["srun", "--nodes", "1k"], ["srun", "-N", "2", "--jobid", "7"]]
)
def test_more_nodes_than_the_job_holds_is_blocked(words: list[str], mapping: Any) -> None:
    env = {**JOB, "SLURM_JOB_NUM_NODES": "1", "SLURM_NNODES": "1"} if "--jobid" in words else JOB
    assert _srun(words, env, mapping)[:1] == [("blocked", "crash")], words  # (fails before: [])


@pytest.mark.parametrize("hosts", ["n9", "n[1-2],n5", "n[3-8]", "m1", "n01"])
def test_a_node_outside_the_job_is_blocked(hosts: str, mapping: Any) -> None:
    statuses = _srun(["srun", "-N1", "-n1", "-w", hosts], JOB, mapping)
    assert statuses[:1] == [("blocked", "crash")], hosts  # (fails before: [] or only the spread's unknown)
    from stackcheck.launch.runners import srun_line

    got = gate.srun_allocation_problem(srun_line(["srun", "-w", hosts, *LAUNCH], 0), JOB)
    assert got is not None and "not one of the job's nodes" in got.message


@pytest.mark.parametrize(
    ("words", "env"),
    [(["srun", "-N", "1", "-w", "n7"], JOB), (["srun", "-N", "5"], JOB), (["srun", "-N", "1-5"], JOB),
     (["srun", "-N", "8"], {}), (["srun", "-w", "n9"], {}), (["srun", "-N", "4"], {"SLURM_JOB_ID": "7"}),
     (["srun", "-N", "-1"], JOB), (["srun", "-w", "n03"], {**JOB, "SLURM_JOB_NODELIST": "n[01-04]"})],
)  # fmt: skip
def test_what_srun_takes_is_not_refused(words: list[str], env: dict[str, str], mapping: Any) -> None:
    assert ("blocked", "crash") not in _srun(words, env, mapping), words


def test_a_step_of_no_node_or_a_host_list_not_read_is_unknown(mapping: Any) -> None:
    assert _srun(["srun", "-N", "0"], {}, mapping)[:1] == [("unknown", None)]
    assert _srun(["srun", "-N1", "-w", "n[1-"], JOB, mapping)[:1] == [("unknown", None)]


def test_slurm_host_lists_and_node_counts() -> None:
    assert gate.slurm_hostlist("n[1-2,7],gpu[09-10]") == ["n1", "n2", "n7", "gpu09", "gpu10"]
    assert gate.slurm_hostlist("r[1-2]n[1-2]") == ["r1n1", "r1n2", "r2n1", "r2n2"]
    assert gate.slurm_hostlist("n[1-") is None and gate.slurm_hostlist("n[3-1]") is None
    assert gate.srun_node_count("2-4") == (2, 4) and gate.srun_node_count("2k") == (2048, 2048)
    assert gate.srun_node_count("-1") == (1, 1)  # (a range from nothing to 1: verify_node_count takes it as 1-1)
    assert isinstance(gate.srun_node_count("9" * 12), str) and gate.srun_node_count("1,3") is None
