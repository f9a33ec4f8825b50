"""irobust10: the shell's `exec` with options before the launch (`bash -c 'exec -a sglang /srv/venv/bin/python -m
sglang.launch_server ...'`) was stepped over as if absent. bash's exec -a NAME / -l hand the interpreter another
zeroth argument, from which CPython finds its prefix (run here, CPython 3.11: `exec -a foo VENV/bin/python` printed an
empty sys.executable and the base interpreter's prefix, the venv's packages gone), and -c runs it with an empty
environment; `exec -a $NAME` with NAME unset takes the launch's first word as the name. Each is now unknown, naming
exec; a NAME that is the program's own word and exec without options keep their reading. Likewise a word the shell
expands among flock's words (its lock file): `flock $L python ...` with L unset locks a file named python and runs
`-m`."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = "-m sglang.launch_server --model-path m --tp 2"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _unknowns(text: str, mapping: Any) -> list[str]:
    d = gate.derive(["bash", "-c", text], mapping, {})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, text
    return [p.subject for p in d.problems if p.status == "unknown"]


@pytest.mark.parametrize(
    "text",
    [f"exec -a sglang-server /srv/venv/bin/python {LAUNCH}", f"exec -a python3 /srv/venv/bin/python {LAUNCH}",
     f"cd /srv && exec -l python3 {LAUNCH}", f"exec -c python3 {LAUNCH}", f"exec -c nice -n 5 python3 {LAUNCH}",
     f"exec -cl python3 {LAUNCH}", f"exec -a $NAME python3 {LAUNCH}", f"exec -a \"$NAME\" nice python3 {LAUNCH}"],
)  # fmt: skip
def test_exec_with_options_before_the_launch_is_unknown(text: str, mapping: Any) -> None:
    assert "exec" in _unknowns(text, mapping), text  # fails before: allowed, exec's options stepped over


@pytest.mark.parametrize(
    "text",
    [f"exec python3 {LAUNCH}", f"exec -- python3 {LAUNCH}", f"exec -a python3 python3 {LAUNCH}",
     f"exec -a srv nice -n 5 python3 {LAUNCH}"],
)  # fmt: skip
def test_exec_that_changes_nothing_read_keeps_its_reading(text: str, mapping: Any) -> None:
    assert "exec" not in _unknowns(text, mapping), text


def test_exec_a_moves_the_interpreters_prefix() -> None:
    # (the fact the unknown rests on, on this box's interpreter: its prefix comes from argv[0])
    code = "import sys; print(sys.prefix)"
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True)
    named = subprocess.run(["bash", "-c", 'exec -a no-such-name-irobust10 "$0" -c "$1"', sys.executable, code],
                           capture_output=True, text=True, timeout=30, check=True)  # fmt: skip
    if sys.prefix == sys.base_prefix:
        pytest.skip("not run from a virtual environment: the prefix has nowhere else to go")
    assert plain.stdout.strip() == sys.prefix and named.stdout.strip() != sys.prefix


@pytest.mark.parametrize(
    "prefix", ["flock $LOCK", "flock -w $W /tmp/l", "flock ${LOCK}", "timeout 60 flock `cat lockname`", "flock -n $L"]
)
def test_an_expanded_word_among_flocks_words_is_unknown(prefix: str, mapping: Any) -> None:
    # fails before: allowed (flock $L with L unset locks a file named python and runs `-m`: flock fails to execute it);
    # a value flock refuses as written (`-w $W`: not a number) already leaves the launch unread (a wrapper)
    d = gate.derive(["bash", "-c", f"{prefix} python3 {LAUNCH}"], mapping, {})
    unread = d.entrypoint != "launch-server"
    assert unread or ("flock", "unknown") in [(p.subject, p.status) for p in d.problems], prefix


@pytest.mark.parametrize("prefix", ["flock /tmp/l", "flock -w 5 /tmp/l", "flock /tmp/l env A=$B"])
def test_flock_written_out_keeps_its_reading(prefix: str, mapping: Any) -> None:
    assert "flock" not in _unknowns(f"{prefix} python3 {LAUNCH}", mapping), prefix


@pytest.mark.parametrize(
    ("prefix", "subject"),
    [("taskset -c {0..3}", "taskset"), ("numactl -C {0,1}", "numactl"), ("nice -n 5 env -u {A,B}", "env"),
     ("timeout -s {TERM,KILL} 60", "timeout")],
)  # fmt: skip
def test_a_brace_expansion_among_a_runners_words_is_unknown(prefix: str, subject: str, mapping: Any) -> None:
    # fails before: allowed (bash makes `{0..3}` four words: taskset takes 0 and runs `1`)
    assert subject in _unknowns(f"{prefix} python3 {LAUNCH}", mapping), prefix


@pytest.mark.parametrize("prefix", ["taskset -c 0-3", "numactl -C 0,1", "systemd-run --scope --unit srv{1}"])
def test_words_without_a_brace_list_keep_their_reading(prefix: str, mapping: Any) -> None:
    assert _unknowns(f"{prefix} python3 {LAUNCH}", mapping) == [], prefix


def test_exec_options_not_read_are_named_without_a_secret(mapping: Any) -> None:
    text = f"exec -x -HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz01234 python3 {LAUNCH}"
    d = gate.derive(["bash", "-c", text], mapping, {})
    (message,) = [p.message for p in d.problems if p.subject == "exec"]
    assert "are not exec's" in message and "hf_abcdefghijklmnop" not in message, message


def test_a_long_word_with_an_open_brace_is_read_in_linear_time(mapping: Any) -> None:
    import time

    start = time.process_time()
    _unknowns(f"taskset -c {{{',0' * 20_000} python3 {LAUNCH}", mapping)
    assert time.process_time() - start < 1.0  # fails before: ~6 s (a regex backtracking over the commas)
