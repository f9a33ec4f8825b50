"""imend12: a program word the shell expands (POSIX Shell Command Language 2.6.1 tilde expansion, 2.13 pathname
expansion) was read as the program it names: `/opt/*/bin/python -m sglang.launch_server ...` and `~/bin/nice python
...` were allowed. In an argv no shell reads them (execvp takes `~/venv/bin/python` and `/opt/*/bin/python` as
written: no such file, exit 127); in a shell string `~` is HOME's value (the program named), but a pattern is the
files it matches (none: as written; several: the first runs the others as its arguments). Now a pattern is unknown
in either, a leading `~` in an argv is unknown, and a leading `~` in a shell string is read as before."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _unknown(argv: list[str], mapping: Any) -> list[tuple[str, str]]:
    d = gate.derive(argv, mapping, {"HOME": "/root"})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, argv
    return [(p.subject, p.message) for p in d.problems if p.status == "unknown"]


@pytest.mark.parametrize(
    "argv",
    [["~/venv/bin/python", *LAUNCH], ["/opt/*/bin/python", *LAUNCH], ["/opt/v[12]/bin/python", *LAUNCH],
     ["nice", "-n", "5", "~/venv/bin/python", *LAUNCH], ["~/bin/nice", "python", *LAUNCH],
     ["/usr/*/nice", "python", *LAUNCH], ["timeout", "60", "/opt/venv?/bin/python", *LAUNCH],
     ["bash", "-c", "/opt/*/bin/python " + " ".join(LAUNCH)],
     ["bash", "-c", "nice /opt/*/bin/python " + " ".join(LAUNCH)],
     ["bash", "-c", "/usr/*/nice python " + " ".join(LAUNCH)]],
)  # fmt: skip
def test_a_program_word_not_run_as_written_is_unknown(argv: list[str], mapping: Any) -> None:
    got = _unknown(argv, mapping)
    assert any("program word" in message for _, message in got), (argv, got)  # fails before: allowed


@pytest.mark.parametrize(
    "argv",
    [["bash", "-c", "~/venv/bin/python " + " ".join(LAUNCH)], ["bash", "-c", "nice ~/bin/python " + " ".join(LAUNCH)],
     ["python", *LAUNCH], ["/usr/bin/python3", *LAUNCH], ["nice", "python", *LAUNCH],
     ["/opt/venv/bin/python", *LAUNCH[:-2], "--tp", "2", "--served-model-name", "a*"]],
)  # fmt: skip
def test_a_tilde_in_a_shell_string_and_plain_words_are_read_as_before(argv: list[str], mapping: Any) -> None:
    assert not any("program word" in message for _, message in _unknown(argv, mapping)), argv
