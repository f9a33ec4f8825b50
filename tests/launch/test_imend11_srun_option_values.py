"""imend11: srun_line listed a word that another option takes as its value as an option of its own (`srun -N1 -J
--overlap srun python ...`: getopt_long gives -J the word `--overlap`, a job's name, so the inner srun has no
--overlap, and the outer one none either), and read a short option with an optional value (-I, -K, -k: `::` in the
string slurm_opt.c's slurm_option_table_create builds) as one without, so `-kN2`'s `N2` (--no-kill's value) was read
as -N 2. Each option's value is now taken by its has_arg."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import srun_line, srun_options

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize(
    "options",
    [
        ["-J", "--overlap"],
        ["--job-name", "--overlap"],
        ["--job-n", "--overlap"],  # (a prefix getopt_long takes for --job-name)
        ["-vJ", "--overlap"],
        ["-o", "--overlap"],
        ["--comment", "--overlap"],
    ],
)
def test_a_value_word_is_no_option(options: list[str], mapping: Any) -> None:
    argv = ["srun", "-N1", *options, *LAUNCH]
    assert srun_options(argv, 0) == [(("job-name",), "--overlap")] * (options[0].startswith("--job")) + [
        (("comment",), "--overlap")
    ] * (options[0] == "--comment")
    # the nested srun's --overlap is only a job's name: refused (fails before: allowed)
    nested = ["srun", "-N1", "--overlap", "srun", "-N1", *options, *LAUNCH]
    problems = gate.derive(nested, mapping, {}).problems
    assert any(p.subject == "srun" and "--overlap" in p.message for p in problems), problems


def test_a_real_overlap_still_counts(mapping: Any) -> None:
    nested = ["srun", "-N1", "srun", "-N1", "-J", "x", "--overlap", *LAUNCH]
    assert not any("--overlap" in p.message for p in gate.derive(nested, mapping, {}).problems)


def test_a_gpu_option_as_a_value_is_none() -> None:
    line = srun_line(["srun", "-J", "--gpus-per-task=1", *LAUNCH], 0)
    assert gate.srun_gpus([line]) == []
    line = srun_line(["srun", "--comment", "--gpus=1", "--gpus-per-task=2", *LAUNCH], 0)
    assert [c for _, c in gate.srun_gpus([line])] == [2]


@pytest.mark.parametrize(
    ("options", "nodes"),
    [
        (["-kN2"], None),  # (--no-kill=N2: fails before, read as -N 2)
        (["-IN2"], None),  # (--immediate=N2)
        (["-KN2"], None),  # (--kill-on-bad-exit=N2)
        (["-k", "-N2"], "2"),
        (["-vN2"], "2"),
        (["-bN2"], None),  # (--begin=N2: -b takes a value, slurm_opt.c's "b:")
        (["-r", "-N2"], None),  # (--relative=-N2)
    ],
)
def test_short_values_by_has_arg(options: list[str], nodes: str | None) -> None:
    assert srun_line(["srun", *options, *LAUNCH], 0).counts.get("nodes") == nodes
