"""irobust5: a server command of tens of thousands of words (a generated line, a hostile one) was read word by word in
each of the gate's passes, ~0.1-0.4 ms a word each: 100,000 words took half a minute or more before a decision (gate,
recommend). Now a command longer than MAX_COMMAND_WORDS is refused unread: exit 2, one line, nothing run. irobust6: the
words inside a shell string (`bash -c "..."`, read word by word as the command is) count too."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from cli_process import run_stackcheck

from stackcheck.commands.gate import MAX_COMMAND_WORDS

ROOT = Path(__file__).resolve().parent.parent
FACTS = str(ROOT / "examples" / "facts" / "h200-cu130.json")
LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "/m"]


@pytest.mark.parametrize("verb", [["gate", "--dry-run"], ["recommend"]])
def test_a_command_of_too_many_words_is_refused_at_once(verb: list[str]) -> None:
    # fails before: 60,000 words: rc 1 after ~20 s (gate) and the same for recommend
    words = [*LAUNCH, *["--served-model-name=a"] * 60000]
    start = time.monotonic()
    proc = run_stackcheck(*verb, "--facts", FACTS, "--format", "json", "--", *words, timeout=300)
    took = time.monotonic() - start
    err = proc.stderr.strip()
    assert proc.returncode == 2 and "60005 words" in err and len(err.splitlines()) == 1, (proc.returncode, err[-300:])
    assert took < 15, took


def test_a_long_but_ordinary_command_is_read() -> None:
    words = [*LAUNCH, *["--tp", "2"] * ((MAX_COMMAND_WORDS - len(LAUNCH)) // 2)]
    proc = run_stackcheck("gate", "--dry-run", "--facts", FACTS, "--format", "json", "--", *words, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-300:]


@pytest.mark.parametrize("verb", [["gate", "--dry-run"], ["recommend"]])
def test_a_shell_string_of_too_many_words_is_refused_at_once(verb: list[str]) -> None:
    # irobust6: fails before: one `bash -c` argument of 40,005 words (under the cap as one word) read word by word,
    # rc 1 after ~15 s
    text = " ".join([*LAUNCH, *["-a"] * 40000])
    start = time.monotonic()
    proc = run_stackcheck(*verb, "--facts", FACTS, "--format", "json", "--", "bash", "-c", text, timeout=300)
    took = time.monotonic() - start
    err = proc.stderr.strip()
    assert proc.returncode == 2 and "40007 words" in err and len(err.splitlines()) == 1, (proc.returncode, err[-300:])
    assert took < 10, took


def test_a_shell_string_of_an_ordinary_launch_is_read() -> None:
    text = " ".join([*LAUNCH, *["--tp", "2"] * ((MAX_COMMAND_WORDS - len(LAUNCH) - 2) // 2)])
    proc = run_stackcheck("gate", "--dry-run", "--facts", FACTS, "--format", "json", "--", "bash", "-c", text,
                          timeout=300)  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr[-300:]
