"""irobust7: the reasons of launch/elsewhere.py quoted a word of the command line whole, where the decision's own
command line (redact.redact_argv) masks it: `ssh gpu1 X=<random-looking value> python ...` showed `X=***` in the
command and the value itself in the ssh refusal's message (text and JSON); a secret flag's value with a shell
character (`--api-key 'p@ss$word...'`) likewise; mpirun's host list and -np value too. Now each quoted word is
shown as redact_argv / redact_value show it, at most 80 characters."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
SECRET = "Zq8f3kLm9Pw2Rt7Yv4Bn6Hc1Xa"  # (made up: a random-looking value, as redact_value judges one)


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _messages(argv: list[str], mapping: Any, subject: str) -> list[str]:
    d = gate.derive(argv, mapping, {})
    got = [p.message for p in d.problems if p.subject == subject]
    assert got, d.problems
    return got


@pytest.mark.parametrize(
    "words",
    [
        ["ssh", "gpu1", f"X={SECRET}"],
        ["ssh", "gpu1", "env", f"X={SECRET}$"],
        ["pdsh", "-w", "h1", f"DB_PASSWORD={SECRET}"],
    ],
)
def test_the_word_ssh_quotes_is_masked(words: list[str], mapping: Any) -> None:
    # fails before: the message holds the value (`X=Zq8f...`)
    name = words[0]
    for message in _messages([*words, *LAUNCH], mapping, name):
        assert SECRET not in message, message
        assert "***" in message, message


def test_a_secret_flags_value_with_a_shell_character_is_masked(mapping: Any) -> None:
    value = "p@ss$word-of-mine"
    for message in _messages(["ssh", "gpu1", *LAUNCH, "--api-key", value], mapping, "ssh"):
        assert value not in message and "***" in message, message


def test_a_long_word_is_cut(mapping: Any) -> None:
    word = "a;" * 5000
    for message in _messages(["ssh", "gpu1", word, *LAUNCH], mapping, "ssh"):
        assert len(message) < 1000, len(message)


def test_mpiruns_hosts_and_copies_are_masked(mapping: Any) -> None:
    for message in _messages(["mpirun", "-np", "1", "-H", f"{SECRET}.example", *LAUNCH], mapping, "mpirun"):
        assert SECRET not in message, message
    for message in _messages(["mpirun", "-np", SECRET, *LAUNCH], mapping, "mpirun"):
        assert SECRET not in message, message


def test_a_plain_word_is_still_named(mapping: Any) -> None:
    (message,) = _messages(["ssh", "gpu1", "a b", *LAUNCH], mapping, "ssh")
    assert "(`a b`)" in message, message
    (message,) = _messages(["mpirun", "-np", "4", *LAUNCH], mapping, "mpirun")
    assert "4 copies" in message, message
