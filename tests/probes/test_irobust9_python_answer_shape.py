"""irobust9: an interpreter (a `python3` wrapper script, a shim) that prints a large literal that is no answer of
stackcheck's one-liner (`[1,1,1,...]`, up to the 1 MiB output cap). parse_answer handed it to ast's parser, which
builds ~500,000 nodes holding the interpreter lock: ~5 s on the 2-core box, during which the probes' other threads
and the budget's clock stood still (`audit --python ... --timeout 3` ended after 9.2 s). The one-liner always prints
a dict holding 'stackcheck': 1 (a repr: it opens with "{'"), so anything else is refused before it is parsed."""

from __future__ import annotations

import time

import pytest

from stackcheck.probes.python_env import ONELINER, parse_answer

GOOD = (
    "{'stackcheck': 1, 'executable': '/x', 'version': '3.12.3', 'implementation': 'cpython', 'prefix': '/x', "
    "'base_prefix': '/x', 'path': ['/a'], 'platlibdir': 'lib', 'base_site': [], 'user_site': None, "
    "'no_user_site': False}"
)


def test_the_one_liner_prints_what_is_accepted() -> None:
    assert "repr({'stackcheck':1," in ONELINER
    assert parse_answer("noise\n" + GOOD + "\n")["version"] == "3.12.3"


@pytest.mark.parametrize(
    "last",
    ["[" + "1," * 500_000 + "1]", "{" + "1:1," * 250_000 + "1:1}", "(" + "1," * 500_000 + "1)", "-" * 1_000_000 + "1"],
)
def test_a_large_literal_that_is_no_answer_is_refused_at_once(last: str) -> None:
    start = time.perf_counter()
    with pytest.raises(ValueError, match="not the expected answer"):
        parse_answer(last + "\n")
    assert time.perf_counter() - start < 0.5
