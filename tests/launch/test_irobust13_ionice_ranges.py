"""irobust13: `ionice -c CLASS -n LEVEL` before the launch with a class outside 0-3, a level outside 0-7 for the
realtime / best-effort class, or a class written with a sign (`-c -1`, `-c +2`, which ionice reads as a class name it
does not know). util-linux ionice exits 1 at ioprio_set (or on the name) before it runs the command, so the launch never
starts; irobust12's check read any signed number as taken and the gate allowed the launch (a false pass). Now unknown;
`-t` / `--ignore` (ionice runs the command whatever ioprio_set answers), the none / idle classes (which set their own
level) and the values ionice takes run the launch as before. Run on this box (util-linux 2.38.1, kernel 6.18)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _ionice(prefix: list[str], mapping: Any) -> list[str]:
    d = gate.derive([*prefix, *LAUNCH], mapping, {})
    assert d.entrypoint == "launch-server", prefix
    return [p.status for p in d.problems if p.subject == "ionice"]


@pytest.mark.parametrize(
    "prefix",
    [["ionice", "-c", "7"], ["ionice", "-c4"], ["ionice", "--class", "9"], ["ionice", "--class=12", "-n", "3"],
     ["ionice", "-n", "-1"],
     ["ionice", "-c", "-1"], ["ionice", "-c", "+2"], ["ionice", "-t", "-c", "-1"], ["ionice", "-c", "0", "-c", "5"]],
)  # fmt: skip
def test_a_class_or_level_ionice_refuses_is_unknown(prefix: list[str], mapping: Any) -> None:
    assert _ionice(prefix, mapping) == ["unknown"]  # (fails before: [], the launch judged)


@pytest.mark.parametrize(
    "prefix",
    [["ionice", "-c", "2", "-n", "7"], ["ionice", "-c", "3"], ["ionice", "-c", "0", "-n", "99"],
     ["ionice", "-c", "idle", "-n", "-5"], ["ionice", "-t", "-c", "7"], ["ionice", "-tc7"],
     ["ionice", "--class=7", "--ignore"], ["ionice", "-c", "02", "-n", "+3"], ["ionice", "-c", "Realtime", "-n", "0"],
     ["ionice", "-c", "5", "-c", "2"], ["ionice"]],
)  # fmt: skip
def test_a_class_and_level_ionice_takes_run_the_launch(prefix: list[str], mapping: Any) -> None:
    assert _ionice(prefix, mapping) == []
