"""iallow2: in a shell's command string the gate reads the words unexpanded; a word the shell expands among the options
of a program before the launch (`bash -c "systemd-run --scope --unit $NAME python -m sglang.launch_server ..."`,
`nice -n $N`, `sudo -u $U env -i ...`) was read as the option's value and the launch placed after it: with NAME unset
the word is gone, systemd-run takes `python` as the unit's name and refuses `-m`, and with blanks in it another word
is the program. Now such a word is unknown, naming the program (gate.unplaced_before with `unexpanded`); the same
words in a command's argv (no shell: nothing expands them) keep their reading, and an expansion in the launch's own
values stays parse_flags' (irobust8)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = "python3 -m sglang.launch_server --model-path m --tp 2"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _refusals(line: list[str], mapping: Any) -> list[tuple[str, str]]:
    d = gate.derive(line, mapping, {})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, line
    return [(p.subject, p.status) for p in d.problems if p.status != "note"]


@pytest.mark.parametrize(
    ("prefix", "subject"),
    [("systemd-run --scope --unit $NAME", "systemd-run"), ("systemd-run --scope --unit=${NAME}", "systemd-run"),
     ("systemd-run --scope -u $NAME env -i PATH=/usr/bin", "systemd-run"), ("nice -n $N", "nice"),
     ("exec nice -n ${N}", "nice"), ("sudo -u $U env -i PATH=/usr/bin", "sudo"), ("taskset -c $CPUS", "taskset"),
     ("numactl --cpunodebind=$NODE", "numactl"), ("timeout -k $K 60", "timeout"),
     ("nohup nice -n `cat n`", "nice"), ("nice env -u $X", "env"), ("timeout 60 env -C $DIR", "env"),
     ("env -u $X", "env"), ("cd /x && env -C ${D} A=1", "env")],
)  # fmt: skip
def test_an_expanded_word_among_a_programs_options_is_unknown(prefix: str, subject: str, mapping: Any) -> None:
    # fails before: allowed (the word read as the option's value, the launch placed after it)
    got = _refusals(["bash", "-c", f"{prefix} {LAUNCH}"], mapping)
    assert (subject, "unknown") in got, (prefix, got)


@pytest.mark.parametrize(
    "prefix",
    ["systemd-run --scope --unit sglang", "nice -n 5", "env A=$B", "timeout 60", "sudo -u svc env -i PATH=$P",
     "nice env -u X A=$B", "env -u X A=${B} C=$(cat c)", "env -u $X true; nice"],
)  # fmt: skip
def test_written_out_options_in_a_string_are_placed(prefix: str, mapping: Any) -> None:
    assert _refusals(["bash", "-c", f"{prefix} {LAUNCH}"], mapping) == [], prefix


def test_the_same_words_as_argv_keep_their_reading(mapping: Any) -> None:
    line = ["systemd-run", "--scope", "--unit", "$NAME", *LAUNCH.split()]
    assert _refusals(line, mapping) == []
