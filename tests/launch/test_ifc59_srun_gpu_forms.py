"""ifc59 (beside the fifty-ninth sample's population s): srun GPU forms the gate allowed without counting them.
`srun --tres-per-task=gres/gpu:1` (Slurm's TRES form of a task's GPUs) and `srun --gpus-per-socket=2` (as many GPUs
as the sockets the task spans, which are not read) gave a step GPUs the gate never compared with the launch's
--tp x --pp, so `... --tp 4` was allowed beside one GPU. `srun -N2 --gpus=4` gives the step 4 GPUs over its two
nodes (srun(1) -G, --gpus: "the total number of GPUs required for the job"), so a node's share is not 4: with -N
above one its count per node is not read (unknown), while -N1 or no -N keeps the count."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


#: (imend13) steps inside an allocation: outside one, an srun with no GPU option (`--tres-per-task=cpu=4`) starts a
#: job without GPUs (test_imend13_srun_outside_allocation.py)
JOB = {"SLURM_JOB_ID": "4242"}


def _srun(line: list[str], mapping: Any) -> list[str]:
    d = gate.derive(line, mapping, JOB)
    return [p.status for p in d.problems if p.subject == "srun"]


@pytest.mark.parametrize(
    "prefix",
    [
        ["srun", "-N1", "--tres-per-task=gres/gpu:1"],
        ["srun", "-N1", "--tres-per-task", "gres/gpu=1"],
        ["srun", "-N1", "--tres-per-ta=gres/gpu:h200:4"],
        ["srun", "-N1", "--gpus-per-socket=2"],
        ["srun", "-N1", "--gpus-per-socket", "4"],
        ["srun", "-N2", "--gpus=4"],
        ["srun", "-N2", "-G", "8"],
        ["srun", "-N", "2-4", "-G8"],
        ["srun", "--nodes=2", "--gpus=h200:8"],
    ],
)
def test_gpu_forms_not_counted_are_unknown(prefix: list[str], mapping: Any) -> None:
    # fails before: no srun problem (allowed)
    assert _srun([*prefix, *LAUNCH, "--tp", "4", "--nnodes", "1"], mapping) == ["unknown"]


def test_a_tres_per_task_without_a_gpu_is_not_a_gpu_count(mapping: Any) -> None:
    assert _srun(["srun", "-N1", "--tres-per-task=cpu=4", *LAUNCH, "--tp", "1"], mapping) == []


@pytest.mark.parametrize("prefix", [["srun", "-N1", "--gpus=4"], ["srun", "-G", "4"], ["srun", "-N", "1", "-G4"]])
def test_the_total_on_one_node_still_counts(prefix: list[str], mapping: Any) -> None:
    assert _srun([*prefix, *LAUNCH, "--tp", "4"], mapping) == []
    assert _srun([*prefix, *LAUNCH, "--tp", "8"], mapping) == ["unknown"]


def test_gpus_per_node_over_two_nodes_still_counts(mapping: Any) -> None:
    assert _srun(["srun", "-N2", "--gpus-per-node=4", *LAUNCH, "--tp", "4"], mapping) == []
