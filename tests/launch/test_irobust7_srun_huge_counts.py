"""irobust7: srun's counts were read with int() of any run of ASCII digits: `srun -n <5,000 digits> python -m
sglang.launch_server ...` (or -N, --gpus-per-task, --gres=gpu:N, SLURM_NTASKS) raised ValueError (Python's 4,300-digit
limit) and the gate stopped with an internal error, exit 4. Now a count of more than 9 digits is not read: unknown
(fail closed), as a count that is no whole number was."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
BIG = "9" * 5000
#: (imend13) steps inside an allocation (an sbatch script's, an salloc shell's): outside one, an srun with no GPU
#: option starts a job without GPUs (test_imend13_srun_outside_allocation.py)
JOB = {"SLURM_JOB_ID": "4242"}


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize(
    ("words", "env"),
    [
        (["srun", "-n", BIG], {}),
        (["srun", "-n", "2", "-N", BIG], {}),
        (["srun", "-n", "2", f"--nodes={'1' * 12}"], {}),
        (["srun", f"--gpus-per-task={BIG}"], {}),
        (["srun", f"--gres=gpu:{BIG}"], {}),
        (["srun", "-G", BIG], {}),
        (["srun"], {"SLURM_NTASKS": BIG}),
    ],
)
def test_a_huge_count_is_unknown_not_a_crash(words: list[str], env: dict[str, str], mapping: Any) -> None:
    # fails before: ValueError (Exceeds the limit (4300 digits)), or -N 111111111111 read as enough nodes
    d = gate.derive([*words, *LAUNCH], mapping, {**JOB, **env})
    # (irunner3: a -N past INT_MAX is one srun refuses, src/common/proc_args.c str_to_nodes: blocked before the unknown)
    refused = ["blocked"] if "-N" in words or any(w.startswith("--nodes=") for w in words) else []
    assert [p.status for p in d.problems if p.subject == "srun"] == [*refused, "unknown"], d.problems


def test_small_counts_read_as_before(mapping: Any) -> None:
    for words in (["srun", "-n", "2", "-N", "2"], ["srun", "--gpus-per-task=2"], ["srun", "--gres=gpu:a100:2"]):
        d = gate.derive([*words, *LAUNCH], mapping, JOB)
        assert not [p for p in d.problems if p.subject == "srun"], (words, d.problems)
