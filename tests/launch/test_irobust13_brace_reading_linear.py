"""irobust13: irobust12's brace-expansion pattern backtracked over every comma of an unclosed group; read over every
argument word of a shell string (irobust13's brace flag words, 2bdfe2ab), `bash -c "python -m sglang.launch_server ...
{a,a,a,..."` took 10 s on a 40,000-byte word and minutes on an argument's 128 KiB (a hang of the gate). The group is
now read first and its comma looked for after, in linear time; what it finds is the same."""

from __future__ import annotations

import time
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = "python -m sglang.launch_server --model-path m"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize("where", ["argument", "program"])
def test_an_unclosed_brace_group_of_many_commas_is_read_at_once(where: str, mapping: Any) -> None:
    word = "{" + "a," * 20_000
    line = f"{LAUNCH} {word}" if where == "argument" else f"{word}{LAUNCH}"
    start = time.perf_counter()
    gate.derive(["bash", "-c", line], mapping, {})
    assert time.perf_counter() - start < 2.0  # (fails before, the argument: about 10 s on the 2-core box)


@pytest.mark.parametrize(
    ("word", "found"),
    [("{a,b}", ["a,b"]), ("x{1..3}", ["1..3"]), ("{a,{b,c}}", ["b,c"]), ("{a}", []), ("{a, b}", []), ("{a,b", [])],
)
def test_the_groups_found_are_the_brace_expansions(word: str, found: list[str]) -> None:
    assert gate._brace_groups(word) == found
