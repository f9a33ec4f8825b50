"""irobust13: `stdbuf -o SIZE` with a size past what stdbuf's size type holds (`999999999999G`, about 2^70 bytes):
GNU stdbuf exits 125 ("invalid mode") before running the command (coreutils 9.1 run on this box), and irobust12's
reading took any 12 digits with a unit: the launch was allowed (a false pass). Now unknown from 2^63 bytes on; the
sizes below run the launch as before (`-o 100000G` ran here: the child's buffer is allocated, or warned about, in the
child itself)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _stdbuf(prefix: list[str], mapping: Any) -> list[str]:
    d = gate.derive([*prefix, *LAUNCH], mapping, {})
    assert d.entrypoint == "launch-server", prefix
    return [p.status for p in d.problems if p.subject == "stdbuf"]


@pytest.mark.parametrize(
    "prefix", [["stdbuf", "-o", "999999999999G"], ["stdbuf", "-e999999999999GiB"], ["stdbuf", "--output=8589934592G"]]
)
def test_a_size_past_the_size_type_is_unknown(prefix: list[str], mapping: Any) -> None:
    assert _stdbuf(prefix, mapping) == ["unknown"]  # (fails before: [], the launch judged)


@pytest.mark.parametrize(
    "prefix",
    [["stdbuf", "-o", "100000G"], ["stdbuf", "-o", "999999999999"], ["stdbuf", "-o", "8589934591G"],
     ["stdbuf", "-oL", "-e", "1KB"], ["stdbuf", "-i", "64KiB"], ["stdbuf", "-o0"]],
)  # fmt: skip
def test_a_size_stdbuf_takes_runs_the_launch(prefix: list[str], mapping: Any) -> None:
    assert _stdbuf(prefix, mapping) == []
