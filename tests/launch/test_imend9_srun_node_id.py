"""imend9 (ifc59's leftover): `srun -N2 bash -c "python -m sglang.launch_server ... --nnodes 2 --node-rank
$SLURM_NODEID"`, the usual way to give each node its rank, was refused twice (the expansion not read; every node
taken to claim rank 0). srun sets SLURM_NODEID (and SLURM_PROCID) in each task (srun(1) OUTPUT ENVIRONMENT
VARIABLES), so where srun runs the shell itself, one task on each of exactly --nnodes nodes, and nothing else names the
variable, each node expands its own rank: no refusal of either kind. Any other shape stays unknown (fail closed)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LINE = "python3 -m sglang.launch_server --model-path m --tp 8 --nnodes 2 --dist-init-addr h:5000 --node-rank "


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _refusals(line: list[str], mapping: Any) -> list[tuple[str, str]]:
    # (imend13: a step inside an allocation; outside one, an srun with no GPU option starts a job without GPUs)
    d = gate.derive(line, mapping, {"PATH": "/usr/bin", "SLURM_JOB_ID": "4242"})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 8
    return [(p.subject, p.status) for p in d.problems if p.status != "note"]


@pytest.mark.parametrize(
    "line",
    [["srun", "-N2", "bash", "-c", LINE + "$SLURM_NODEID"],
     # (bash -c, not -lc: a login shell's start files are irev76's unknown, env, which this test does not judge)
     ["srun", "-N", "2", "bash", "-c", LINE + '"${SLURM_NODEID}" 2>&1 | tee log'],
     ["nohup", "srun", "--nodes=2", "--ntasks-per-node=1", "bash", "-c", LINE + "$SLURM_NODEID"],
     ["srun", "-N2", "-n2", "sh", "-c", LINE + '"$SLURM_PROCID"']],
)  # fmt: skip
def test_each_node_expands_its_own_rank(line: list[str], mapping: Any) -> None:
    assert _refusals(line, mapping) == []


@pytest.mark.parametrize(
    "line",
    [["srun", "-N3", "bash", "-c", LINE + "$SLURM_NODEID"],  # (3 nodes, --nnodes 2)
     ["srun", "-N2", "-n4", "bash", "-c", LINE + "$SLURM_NODEID"],  # (two tasks a node)
     ["srun", "-N2", "bash", "-c", LINE + "'$SLURM_NODEID'"],  # (single-quoted: no expansion)
     ["srun", "-N2", "bash", "-c", LINE + "\\$SLURM_NODEID"],  # (escaped)
     ["srun", "-N2", "bash", "-c", "export SLURM_NODEID=0; " + LINE + "$SLURM_NODEID"],  # (set by the string)
     ["srun", "-N2", "sudo", "bash", "-c", LINE + "$SLURM_NODEID"],  # (sudo's environment between)
     ["srun", "-N2", "env", "-i", "bash", "-c", LINE + "$SLURM_NODEID"],  # (cleared)
     ["bash", "-c", "srun -N2 bash -c '" + LINE + "$SLURM_NODEID'"],  # (srun inside another string: not read)
     ["bash", "-c", "srun -N2 " + LINE + "$SLURM_NODEID"],  # (expanded before srun runs)
     ["srun", "-N2-4", "bash", "-c", LINE + "$SLURM_NODEID"],  # (a node range)
     ["srun", "-N2", "bash", "-c", LINE + "$SLURM_NODEIDS"]],
)  # fmt: skip
def test_other_shapes_stay_unknown(line: list[str], mapping: Any) -> None:
    assert ("--node-rank", "unknown") in _refusals(line, mapping) or ("srun", "unknown") in _refusals(line, mapping)
