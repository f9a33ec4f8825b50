"""irobust8: a random-looking token inside a shell string's quoting or grouping (`$(echo TOKEN)`, `"TOKEN"`,
`` `echo TOKEN` ``) was split off with the punctuation around it (`TOKEN)`), which no longer read as random, so the
gate's decision showed it: in the command it echoes, and in the unknown of an expanded word (irobust8's
expanded_word_problems)."""

from __future__ import annotations

import pytest
from cli_process import run_stackcheck

from stackcheck.redact import MASK, looks_secret, redact_argv, redact_value

SECRET = "Zq8f3kLm9Pw2Rt7Yv4Bn6Hc1Xa"  # (made up: a random-looking word, as redact_value judges one)


@pytest.mark.parametrize("word", [f"$(echo {SECRET})", f'"{SECRET}"', f"`echo {SECRET}`", f"'{SECRET}'",
                                  f"[{SECRET}]", f"{{{SECRET}}}", f"<{SECRET}>"])  # fmt: skip
def test_a_token_in_shell_punctuation_is_masked(word: str) -> None:
    # fails before: shown as given
    assert looks_secret(word)
    assert SECRET not in redact_value(word)
    assert SECRET not in " ".join(redact_argv(["sh", "-c", f"python3 -m sglang.launch_server {word}"]))


@pytest.mark.parametrize("word", ["$(nproc)", '"fa3"', "`hostname`", "${TP:-2}", '"/models/Llama-3.1-8B-Instruct"',
                                  "(a)", "'meta-llama/Llama-3.1-8B'"])  # fmt: skip
def test_plain_words_stay(word: str) -> None:
    assert redact_value(word) == word != MASK
    assert not looks_secret(word)


def test_the_gate_shows_no_token_of_a_shell_string() -> None:
    line = f"python3 -m sglang.launch_server --model-path m $(echo {SECRET})"
    for fmt in ("json", "text"):
        r = run_stackcheck("gate", "--facts", "tests/cases/h200-newest/facts.json", "--dry-run", "--format", fmt,
                           "--", "sh", "-c", line)  # fmt: skip
        assert r.returncode == 1 and "expands" in r.stdout, r.stderr
        assert SECRET not in r.stdout + r.stderr, fmt
