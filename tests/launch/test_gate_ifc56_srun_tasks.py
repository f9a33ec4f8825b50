"""ifc56 (the fifty-sixth fact-check sample, rows s1 / s3: `srun -n2 python3 -m sglang.launch_server ... --tp 2` at
0.5.23 and `srun --ntasks 2 ... --tp 1` at 0.5.13 allowed). srun runs its command once per task, and without -N it
takes as few nodes as the tasks fit (srun(1), -N), so two servers start on one node's GPUs and --port: the second
finds them taken. Such a launch is unknown now; one task a node (-N at least -n, --ntasks-per-node=1) is judged as
before. srun reads SLURM_NTASKS / SLURM_NNODES / SLURM_NTASKS_PER_NODE from its environment as the options."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
#: (imend13) these sruns run steps inside an allocation (an sbatch script's, an salloc shell's): outside one, an srun
#: with no GPU option starts a job without GPUs (test_imend13_srun_outside_allocation.py)
JOB = {"SLURM_JOB_ID": "4242"}


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load().launch


def _srun(line: list[str], mapping: Any, env: dict[str, str] | None = None) -> list[Any]:
    d = gate.derive(line, mapping, {**JOB, **(env or {})})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, (line, d.entrypoint)
    return [p for p in d.problems if p.subject == "srun" and p.status == "unknown"]


@pytest.mark.parametrize(
    "prefix",
    [
        ["srun", "-n2"],
        ["srun", "-n", "2"],
        ["srun", "--ntasks", "2"],
        ["srun", "--ntasks=2"],
        ["srun", "--ntasks-per-n=2"],  # (a prefix getopt_long takes for --ntasks-per-node alone)
        ["srun", "-ln2"],  # (a short option cluster: -l, then -n 2)
        ["srun", "-N1", "-n2"],
        ["srun", "-N", "2", "--ntasks=4"],
        ["srun", "--ntasks-per-node=2"],
        ["srun", "-n", "x"],  # (no number: fail closed)
        ["nohup", "srun", "-n2", "--exp=ALL"],
        ["nohup", "srun", "-N1", "-n", "3"],
    ],
)
def test_more_than_one_task_a_node_is_unknown(prefix: list[str], mapping: Any) -> None:
    # fails before: no srun problem (the launch judged as one server)
    got = _srun([*prefix, *LAUNCH], mapping)
    assert got and "once per task" in got[0].message, prefix


def test_the_task_count_srun_reads_from_its_environment(mapping: Any) -> None:
    assert _srun(["srun", "-N1", *LAUNCH], mapping, {"SLURM_NTASKS": "4"})
    assert _srun(["srun", *LAUNCH], mapping, {"SLURM_NTASKS_PER_NODE": "2"})
    assert not _srun(["srun", *LAUNCH], mapping, {"SLURM_NTASKS": "2", "SLURM_NNODES": "2"})


@pytest.mark.parametrize(
    "prefix",
    [
        ["srun"],
        ["srun", "-n1"],
        ["srun", "--ntasks=1", "--exp=ALL"],
        ["srun", "-N2"],
        ["srun", "-N2", "-n2"],
        ["srun", "--nodes=2", "--ntasks-per-node=1"],
        ["srun", "-N", "2-4", "--ntasks", "2"],
        ["srun", "-N1", "--exp=ALL"],
    ],
)
def test_one_task_a_node_is_judged_as_before(prefix: list[str], mapping: Any) -> None:
    assert not _srun([*prefix, *LAUNCH], mapping), prefix


def test_a_task_count_after_the_command_is_the_servers(mapping: Any) -> None:
    assert not _srun(["srun", "-N1", *LAUNCH, "-n2"], mapping)


@pytest.mark.parametrize(("release", "prefix"), [("0.5.23", ["srun", "-n2"]), ("0.5.13", ["srun", "--ntasks", "2"])])
def test_the_drawn_rows_are_no_longer_allowed(tmp_path: Path, release: str, prefix: list[str]) -> None:
    model = model_dir(tmp_path, "m", LLAMA3)
    facts = release_box(tmp_path, release, "9.0")
    line = [*prefix, "python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1"]
    doc = cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]
    assert doc["decision"] != "allow", doc["decision"]
    line = ["srun", "-n1", *line[len(prefix) :]]
    doc = cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]
    assert not [r for r in doc.get("reasons") or [] if "once per task" in str(r)], doc.get("reasons")


@pytest.mark.parametrize(
    "prefix",
    [
        ["srun", "-N1", "srun", "--exp=ALL"],
        ["nohup", "setsid", "srun", "-N1", "srun"],
        ["srun", "-N1", "env", "NCCL_DEBUG=INFO", "srun", "-n1"],
    ],
)
def test_an_srun_inside_another_without_overlap_is_unknown(prefix: list[str], mapping: Any) -> None:
    # ifc56 row i2; fails before: allowed (the inner srun's step waits for the CPUs the outer step holds)
    got = _srun([*prefix, *LAUNCH], mapping)
    assert got and "--overlap" in got[0].message, prefix


@pytest.mark.parametrize(
    "prefix", [["srun", "-N1", "srun", "--overlap"], ["srun", "-N1", "srun", "--overl"], ["srun", "-N1", "nice"]]
)
def test_an_inner_srun_with_overlap_or_one_srun_is_judged_as_before(prefix: list[str], mapping: Any) -> None:
    assert not _srun([*prefix, *LAUNCH], mapping), prefix


def _gpus(line: list[str], mapping: Any) -> list[Any]:
    d = gate.derive(line, mapping, JOB)
    return [p for p in d.problems if p.subject == "srun" and "GPUs srun gives it" in p.message]


BASE = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.mark.parametrize(
    ("prefix", "flags"),
    [
        (["srun", "--gpus-per-task=1"], ["--tp", "2"]),
        (["srun", "-N1", "--gres=gpu:2"], ["--tp", "4"]),
        (["srun", "-G", "1"], ["--tp", "2"]),
        (["srun", "--gpus=a100:4"], ["--tp", "4", "--pp", "2"]),
        (["srun", "--gres=gpu"], ["--tp", "2"]),
        (["srun", "--gpus=a100:x"], ["--tp", "1"]),  # (a count not read: fail closed)
        (["srun", "-N2", "--gpus-per-node=2"], ["--tp", "8", "--nnodes", "2"]),
    ],
)
def test_fewer_srun_gpus_than_the_launch_asks_for_is_unknown(prefix: list[str], flags: list[str], mapping: Any) -> None:
    # (population s, beside the drawn rows) fails before: allowed; the task sees only the GPUs srun gives it
    assert _gpus([*prefix, *BASE, *flags], mapping), (prefix, flags)


@pytest.mark.parametrize(
    ("prefix", "flags"),
    [
        (["srun", "--gpus-per-task=2"], ["--tp", "2"]),
        (["srun", "-N1", "--gres=gpu:h100:8"], ["--tp", "8"]),
        (["srun", "-G2"], ["--tp", "2"]),
        (["srun", "-N2", "--gpus-per-node=4"], ["--tp", "8", "--nnodes", "2"]),
        (["srun", "--gres=nic:1"], ["--tp", "8"]),
        (["srun", "-N1"], ["--tp", "8"]),
    ],
)
def test_enough_srun_gpus_or_none_given_is_judged_as_before(prefix: list[str], flags: list[str], mapping: Any) -> None:
    assert not _gpus([*prefix, *BASE, *flags], mapping), (prefix, flags)
