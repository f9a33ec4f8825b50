"""ifc59 (beside the fifty-ninth sample's population s, which allowed `srun -N2 -n2 --gpus-per-task=4 ... --tp 8
--nnodes 2 --node-rank 0`): srun runs its command unchanged on every node of its step, and SGLang reads a node's rank
from --node-rank alone (0 by default; no SLURM variable is read in 0.5.13 or 0.5.23), so `srun -N2 python -m
sglang.launch_server --nnodes 2 --node-rank 0 ...` starts two node-0 halves and no node 1: the rendezvous never
completes. Unknown now where srun spans more than one node (-N / --nodes above 1, SLURM_NNODES, or several tasks)
and the launch asks for --nnodes above 1 with one literal --node-rank; one node and one server a node (--nnodes 1)
are judged as before."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "8"]
NODES = ["--nnodes", "2", "--dist-init-addr", "10.0.0.1:5000"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _problems(line: list[str], mapping: Any, env: dict[str, str] | None = None) -> list[str]:
    d = gate.derive(line, mapping, env or {})
    return [p.message for p in d.problems if p.subject == "srun" and "--node-rank" in p.message]


@pytest.mark.parametrize(
    "prefix",
    [
        ["srun", "-N2"],
        ["srun", "-N", "2"],
        ["srun", "--nodes=2-4"],
        ["srun", "-N2", "-n2", "--gpus-per-task=4"],
        ["srun", "-n2", "-N2"],
        ["srun", "--nodes", "2", "--gpus-per-node=4"],
    ],
)
@pytest.mark.parametrize("rank", [["--node-rank", "0"], ["--node-rank=1"], []])
def test_one_node_rank_on_several_nodes_is_unknown(prefix: list[str], rank: list[str], mapping: Any) -> None:
    # fails before: no such problem (allowed)
    got = _problems([*prefix, *LAUNCH, *NODES, *rank], mapping)
    assert len(got) == 1 and "same --node-rank" in got[0], got


def test_an_allocation_of_two_nodes_counts(mapping: Any) -> None:
    # (srun inside an sbatch / salloc of two nodes: SLURM_NNODES=2, the step spans both)
    assert len(_problems(["srun", *LAUNCH, *NODES, "--node-rank", "0"], mapping, {"SLURM_NNODES": "2"})) == 1


@pytest.mark.parametrize(
    "line",
    [
        ["srun", "-N1", *LAUNCH, *NODES, "--node-rank", "1"],  # (this node's half; the other launched elsewhere)
        ["srun", *LAUNCH, *NODES, "--node-rank", "0"],  # (no node count: one task on one node)
        ["srun", "-N2", *LAUNCH],  # (--nnodes 1: a whole server on each node)
    ],
)
def test_one_node_or_one_server_a_node_is_judged_as_before(line: list[str], mapping: Any) -> None:
    assert _problems(line, mapping) == []
