"""imend8: read_runner and read_flock walked their options in two twin loops; runners.walk_options is now the one
walk both read through (`--` ends the options, `-` or a plain word is the first other word, a long option's and a
short cluster's letters answered by the caller: words taken, or a reading that ends the walk)."""

from __future__ import annotations

from stackcheck.launch.runners import read_flock, read_runner, walk_options


def test_the_walk_answers_where_the_options_end() -> None:
    def long_option(i: int, word: str) -> int | str:
        return "stop" if word == "--stop" else 2 if word == "--value" else 1

    def short_option(i: int, word: str, j: int) -> int | str:
        return 2 if word[j] == "v" and j + 1 == len(word) else 1 if word[j] == "v" else 0

    argv = ["prog", "-ab", "--value", "x", "-v", "y", "-vz", "--flag", "cmd", "--value"]
    assert walk_options(argv, 0, long_option, short_option) == (8, None)
    assert walk_options(["prog", "-a", "--", "-b"], 0, long_option, short_option) == (3, None)
    assert walk_options(["prog", "-", "x"], 0, long_option, short_option) == (1, None)
    assert walk_options(["prog", "-a", "--stop", "x"], 0, long_option, short_option) == (2, "stop")
    assert walk_options(["prog", "-a"], 0, long_option, short_option) == (2, None)


def test_both_readers_keep_their_readings() -> None:
    assert read_runner(["nice", "-n", "5", "python"], 0).command == 3
    assert read_runner(["nice", "-5", "python"], 0).command == 2
    assert read_runner(["taskset", "-c", "0-3", "python"], 0).command == 3
    assert read_runner(["taskset", "-p", "1"], 0).command is None
    assert read_runner(["srun", "--exclusive=user", "-N1", "python"], 0).command == 3
    assert read_flock(["flock", "-xw", "5", "/tmp/l", "python"], 0) == ("argv", 4, None, None)
    assert read_flock(["flock", "--wait=0x10", "/tmp/l", "-c", "s"], 0).kind == "string"
    assert read_flock(["flock", "-w"], 0).kind == "refused"
    assert read_flock(["flock", "-Fo", "/tmp/l", "x"], 0).kind == "refused"
