"""irobust3: the `env -S` reader (assembly/env_prefix.py) on strings that never end or grow without bound.

GNU env reads each -S string's words again, a new -S among them too, with no bound (coreutils src/env.c aa0c0de35:
parse_split_string :784-814 sets optind to 0, "Tell getopt to restart from first argument"; a `${NAME}` is the
variable's value, build_argv :719-744). So a variable whose value holds `-S${NAME}` again splits for ever: coreutils
9.1 run here, `X='-S${X}' env -S '${X}' true`, was still running at `timeout 3`. Found: the gate read it the same way
and never answered (a hang of `stackcheck gate`, and of every `gate --image` whose Cmd holds it); and a word the split
builds from many pieces (a `${NAME}` repeated, a long quoted word) was grown one piece at a time, a copy per piece, so
a 1 MB word took 15-25 s. Now the reading follows at most MAX_SPLITS -S strings and MAX_SPLIT_CHARS characters of
their words, and stops past them (the gate refuses: fail closed); a word is built in linear time."""

from __future__ import annotations

import json
import time

from cli_process import clean_env, run_stackcheck

from stackcheck.assembly.env_prefix import MAX_SPLIT_CHARS, MAX_SPLITS, read_env

FACTS = "tests/cases/h200-newest/facts.json"
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "/m"]


def test_a_split_string_that_splits_for_ever_stops() -> None:
    read = read_env(["-S", "${X}", *LAUNCH], {"X": "-S${X}"})
    assert read.stop is not None and f"more than {MAX_SPLITS} -S strings" in read.stop
    assert read.command[-len(LAUNCH) :] == LAUNCH


def test_a_split_string_that_grows_stops() -> None:
    """Each -S adds words: `-S${X} a` splits into `-S${X}` and `a`, again and again."""
    read = read_env(["-S", "${X}", *LAUNCH], {"X": "-S${X} " + "a" * 5000})
    assert read.stop is not None and "-S" in read.stop


def test_a_huge_word_is_read_in_linear_time_or_stops() -> None:
    start = time.monotonic()
    read = read_env(["-S", '"' + "a" * 1_000_000 + '"', *LAUNCH], {})
    assert read.stop is None and read.command == ["a" * 1_000_000, *LAUNCH]
    read = read_env(["-S", "A=${H}" * 200, *LAUNCH], {"H": "b" * 100_000})
    assert read.stop is not None and f"{MAX_SPLIT_CHARS}" in read.stop.replace(",", "")
    assert time.monotonic() - start < 10


def test_many_splits_below_the_bound_are_read() -> None:
    """A chain of nested -S strings within the bound is read as env reads it."""
    env = {f"V{n}": f"-S${{V{n + 1}}}" for n in range(MAX_SPLITS - 2)}
    env[f"V{MAX_SPLITS - 2}"] = "A=1"
    read = read_env(["-S", "${V0}", *LAUNCH], env)
    assert read.stop is None and read.command == LAUNCH and read.env["A"] == "1"


def test_the_gate_refuses_a_launch_that_splits_for_ever() -> None:
    env = clean_env(X="-S${X}")
    args = ["gate", "--facts", FACTS, "--dry-run", "--format", "json", "--", "env", "-S", "${X}", *LAUNCH]
    r = run_stackcheck(*args, env=env, timeout=60)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["decision"] == "refuse"
    assert any("-S strings" in p["message"] for p in doc["derived"]["problems"])
