"""irobust7: srun's task, node and GPU counts were read in two passes, the long options first and the short ones
after, each word alone: a short option given before a long one won though srun (getopt_long, each option read in
turn) keeps the last, and a value that looked like an option (`-J -n1`, `--job-name -n1`: a job named -n1) was read
as one. `srun -n 1 --ntasks=4`, `srun -n 2 -N 2 --nodes=1`, `srun -n 4 -J -n1`, `srun -n 4 --job-name -n1` (4
servers, or 2 on one node) and `srun --gpus=2 -G 1 ... --tp 2` (1 GPU) were allowed. Now one pass in the order
written, each option's value skipped (srun(1): each option sets its value, the last given counts)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
#: (imend13) steps inside an allocation (an sbatch script's, an salloc shell's): outside one, an srun with no GPU
#: option starts a job without GPUs (test_imend13_srun_outside_allocation.py)
JOB = {"SLURM_JOB_ID": "4242"}


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _srun(words: list[str], mapping: Any) -> list[str]:
    d = gate.derive([*words, *LAUNCH], mapping, JOB)
    assert d.entrypoint == "launch-server"
    return [p.status for p in d.problems if p.subject == "srun"]


@pytest.mark.parametrize(
    "words",
    [
        ["srun", "-n", "1", "--ntasks=4"],
        ["srun", "-n1", "--ntasks", "4"],
        ["srun", "-n", "2", "-N", "2", "--nodes=1"],
        ["srun", "-n", "4", "-J", "-n1"],
        ["srun", "-n", "4", "--job-name", "-n1"],
        ["srun", "-n", "4", "--job-name", "-N4"],
        ["srun", "--gpus=2", "-G", "1"],
        ["srun", "-G", "2", "--gpus", "1"],
    ],
)
def test_the_last_option_counts(words: list[str], mapping: Any) -> None:
    # fails before: no srun problem (allowed)
    assert _srun(words, mapping) == ["unknown"], words


@pytest.mark.parametrize(
    "words",
    [
        ["srun", "--ntasks=4", "-n", "1"],
        ["srun", "-n", "2", "--nodes=1", "-N", "2"],
        ["srun", "-J", "-n4", "-n", "1"],
        ["srun", "-G", "1", "--gpus=2"],
        ["srun", "--gpus=1", "-G2"],
    ],
)
def test_read_as_srun_reads_them(words: list[str], mapping: Any) -> None:
    assert _srun(words, mapping) == [], words
