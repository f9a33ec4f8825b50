"""irev80: srun's short options were read from two tables: imend11's SRUN_SHORT_VALUE / SRUN_SHORT_OPTIONAL (Slurm
src/common/slurm_opt.c's getopt string for srun, master 284c3b95f0) by srun_line, and RUNNERS["srun"]'s own letters
by read_runner, which places the command for the gate's walk and the target reader. They differed: -b / -F / -r
(values) were no option there (unknown), -I / -K / -k (optional values: the rest of the cluster only) were unknown
or plain, so `srun -kn python3 ...` (getopt: --no-kill's value `n`) took python3 for -n's value and placed the
command at its `-m`; and -j, which that getopt string has not, was plain (srun refuses it: a launch that never
starts was placed). Now read_runner reads the same table."""

from __future__ import annotations

import pytest

from stackcheck.launch.runners import RUNNERS, SRUN_SHORT_OPTIONAL, SRUN_SHORT_VALUE, read_runner, srun_line

CMD = ["python3", "-m", "sglang.launch_server"]


def test_one_table_of_value_letters() -> None:
    assert set(RUNNERS["srun"].short_value) == set(SRUN_SHORT_VALUE)
    assert not set(RUNNERS["srun"].short_plain) & set(SRUN_SHORT_VALUE + SRUN_SHORT_OPTIONAL)


@pytest.mark.parametrize("letter", list(SRUN_SHORT_VALUE))
def test_every_value_letter_takes_the_next_word(letter: str) -> None:
    argv = ["srun", f"-{letter}", "v", *CMD]
    assert read_runner(argv, 0).command == 3 == srun_line(argv, 0).command


@pytest.mark.parametrize("letter", list(SRUN_SHORT_OPTIONAL))
def test_an_optional_value_is_the_rest_of_its_cluster_only(letter: str) -> None:
    for words in ([f"-{letter}"], [f"-{letter}n"], [f"-{letter}5"]):
        argv = ["srun", *words, *CMD]
        got = read_runner(argv, 0)
        assert got.command == 2 and got.unsure is None, (words, got)  # (fails before: -kn placed at 3; -I unknown)


def test_a_letter_srun_has_not_is_unknown() -> None:
    got = read_runner(["srun", "-j", *CMD], 0)
    assert got.command is None and got.unsure is not None  # (fails before: placed)
