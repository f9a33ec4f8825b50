"""imend17: su / runuser read as util-linux su_main reads its words (irobust14's find).

`su -c python3 -m sglang.launch_server --model-path M` was allowed: su's getopt_long ("c:fg:G:lmpPs:u:hVw:", no `+`)
permutes, so -c takes the ONE word `python3`, `-m` is su's own --preserve-environment and `--model-path` an option su
refuses (exit 1): the server never starts. Now blocked with su named; a launch found among su's words after its -c
string (no refused option) is unknown; the quoted forms stay as they were (unknown for su's environment only)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import read_su

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]
TEXT = " ".join(LAUNCH)


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load().launch


def _got(line: list[str], mapping: Any) -> list[tuple[str, str]]:
    d = gate.derive(line, mapping, {})
    return [(p.subject, p.status) for p in d.problems if p.status != "note"]


@pytest.mark.parametrize(
    "line",
    [["su", "-c", *LAUNCH], ["su", "svc", "-c", *LAUNCH], ["su", "-", "svc", "-c", *LAUNCH],
     ["su", "svc", "-c", TEXT, "--model-path", "x"], ["su", "--s", "/bin/sh", "-c", TEXT],
     ["su", "-u", "svc", "-c", TEXT], ["su", "-h", "-c", TEXT], ["runuser", "-u", "svc", *LAUNCH],
     ["runuser", "-u", "svc", "-c", TEXT], ["nice", "-n", "5", "su", "-c", *LAUNCH],
     ["sh", "-c", "su -c python3 -m sglang.launch_server --model-path m"]],
)  # fmt: skip
def test_su_refusing_its_words_is_blocked(line: list[str], mapping: Any) -> None:
    # fails before: no su problem (`su -c python3 -m ... --model-path m`: entrypoint wrapper, nothing refused)
    got = _got(line, mapping)
    prog = "runuser" if "runuser" in line else "su"
    if line[0] == "sh":
        assert any(status in ("blocked", "unknown") for _, status in got), got
        return
    assert (prog, "blocked") in got, (line, got)


def test_a_launch_among_su_words_after_its_string_is_unknown(mapping: Any) -> None:
    # su runs `sh -c python3` as the user sglang.launch_server: the launch's words are not what it runs
    got = _got(["su", "-c", "python3", "-m", "sglang.launch_server"], mapping)
    assert ("su", "unknown") in got, got
    got = _got(["su", "svc", "-c", TEXT, "-c", "true"], mapping)  # (the last -c runs)
    assert ("su", "unknown") in got, got


@pytest.mark.parametrize(
    "line",
    [["su", "-c", TEXT, "svc"], ["su", "-", "svc", "-c", TEXT], ["su", "-c", TEXT, "-m", "svc"],
     ["su", "-l", "-c", TEXT, "svc"], ["su", "-c", TEXT, "svc", "extra"], ["su", "-c", TEXT, "svc", "--", "--x"],
     ["runuser", "-u", "svc", "--", *LAUNCH], ["sudo", "-u", "svc", "sh", "-c", TEXT],
     ["sudo", "-u", "su", *LAUNCH]],
)  # fmt: skip
def test_forms_su_runs_are_not_refused_for_su(line: list[str], mapping: Any) -> None:
    got = _got(line, mapping)
    assert not [p for p in got if p[0] in ("su", "runuser")], (line, got)
    assert ("env", "unknown") in got, got  # (su's / sudo's environment: as before)


def test_read_su_reads_as_getopt_long() -> None:
    got = read_su(["su", "-lc", "x y", "svc", "a"], 0)
    assert got.refused is None and got.command == "x y" and got.operands == (3, 4)
    got = read_su(["su", "--comm=x", "-", "svc"], 0)
    assert got.refused is None and got.command == "x" and got.operands == (2, 3)
    assert read_su(["su", "--p"], 0).refused is not None  # (--preserve-environment / --pty: ambiguous)
    assert read_su(["su", "-c"], 0).refused is not None
    assert read_su(["su", "--login=1"], 0).refused is not None
    assert read_su(["runuser", "-u", "svc"], 0).refused is not None


def test_many_su_words_are_read_once(mapping: Any) -> None:
    import time

    line = ["su"] * 20000 + ["-c", TEXT, "svc"]
    start = time.perf_counter()
    got = _got(line, mapping)
    assert time.perf_counter() - start < 5.0  # (each su reading to the end: quadratic, minutes)
    assert ("env", "unknown") in got, got
