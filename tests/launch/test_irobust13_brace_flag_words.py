"""irobust13: a brace expansion among the launch's own arguments in a shell string. bash, zsh and ksh make several
words of `--{enable-dp-attention,enable-torch-compile}` or `{--enable-dp-attention,--dp-size=2}` (bash(1) Brace
Expansion), flags the gate never read, with the features they turn on; the gate read one word (a flag it did not know:
a note; a bare word: nothing) and allowed the launch (a false pass). irobust12 read braces in the program word alone.
Now unknown as a `$X` there is (irobust8), and after a flag that takes a value where a word the braces make starts
with `-`; a value with braces in it (`--served-model-name {a,b}`, a JSON object) is judged as before, and an int
value with braces (`--tp-size={2,4}`: the last word wins in bash) is unknown, not a usage error."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = "python -m sglang.launch_server --model-path m --tp 2"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _unknown(tail: str, mapping: Any) -> list[str]:
    d = gate.derive(["bash", "-c", f"{LAUNCH} {tail}"], mapping, {})
    assert d.entrypoint == "launch-server", tail
    return [p.message for p in d.problems if p.status == "unknown"]


@pytest.mark.parametrize(
    "tail",
    ["--{enable-dp-attention,enable-torch-compile}", "{--enable-dp-attention,--dp-size=2}", "--dp{,-size} 2",
     "--enable-dp-attention --dp-size 2 --served-model-name {x,--enable-torch-compile}",
     "--enable-{dp-attention,torch-compile}", "--disable-{radix-cache,cuda-graph}", "--tp-size={2,4}"],
)  # fmt: skip
def test_a_brace_expansion_where_flags_stand_is_unknown(tail: str, mapping: Any) -> None:
    got = _unknown(tail, mapping)
    assert len(got) == 1 and "expands" in got[0], got  # (fails before: [], allowed with a note at most)


@pytest.mark.parametrize(
    "tail",
    ["--served-model-name {x,y}", "--json-model-override-args '{\"a\":1,\"b\":2}'", "--served-model-name x{1..3}",
     "--port 30000", ""],
)  # fmt: skip
def test_a_value_with_braces_is_judged_as_before(tail: str, mapping: Any) -> None:
    assert _unknown(tail, mapping) == []
