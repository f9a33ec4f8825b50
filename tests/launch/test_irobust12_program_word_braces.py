"""irobust12: imend12 reads a program word's patterns and a leading `~` in an argv. In a shell string two more of the
shell's expansions change the program word: a brace expansion (`bash -c '/opt/{a,b}/bin/python -m ...'`: bash, zsh
and ksh make it two words, so /opt/a/bin/python runs /opt/b/bin/python as its script) and a `~NAME` (that user's home
directory; `~+` / `~-`: PWD / OLDPWD), which the gate read as a relative path. Both were judged as the launch; now
they are unknown, naming the word. `~/...` (HOME's value) and braces in an argv (no shell: a literal name) are read as
before."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

TAIL = "-m sglang.launch_server --model-path m"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _unknown_words(argv: list[str], mapping: Any) -> list[str]:
    # (irunner3: HOME set, as a session's is: a shell string's `~/...` with HOME unset is unknown since, the user
    # database's home not read)
    return [p.message for p in gate.derive(argv, mapping, {"HOME": "/home/u"}).problems if "program word" in p.message]


@pytest.mark.parametrize(
    "program",
    ["/opt/{a,b}/bin/python", "/opt/v{1..2}/bin/python", "~root/venv/bin/python", "~+/venv/bin/python",
     "~svc/bin/python3"],
)  # fmt: skip
def test_a_shell_expansion_of_the_program_word_is_unknown(program: str, mapping: Any) -> None:
    found = _unknown_words(["bash", "-c", f"{program} {TAIL}"], mapping)
    assert found and program in found[0]  # (fails before: [])


def test_a_word_not_read_as_python_stays_unknown(mapping: Any) -> None:
    problems = gate.derive(["bash", "-c", f"python{{,3}} {TAIL}"], mapping, {}).problems
    assert [p.status for p in problems] == ["unknown"]


@pytest.mark.parametrize(
    "argv",
    [["bash", "-c", f"~/venv/bin/python {TAIL}"], ["bash", "-c", f"/opt/venv/bin/python {TAIL}"],
     ["/opt/{a,b}/bin/python", *TAIL.split()], ["bash", "-c", f"python {TAIL} --json-model-override-args '{{}}'"]],
)  # fmt: skip
def test_what_was_read_before_stays(argv: list[str], mapping: Any) -> None:
    assert _unknown_words(argv, mapping) == []
