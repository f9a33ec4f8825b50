"""imend14: `timeout infh python -m sglang.launch_server ...` runs the server with no limit: GNU coreutils'
parse_duration takes `inf` by strtod and multiplies it by the `h` suffix (inf), and uutils since 0.0.13 saturates
(Duration::MAX), its later num_parser reading Infinity as Duration::MAX with any suffix. The gate's reader left
`infh` / `infm` / `infd` / `infinityh` and a value with m / h / d past 2^64 seconds unknown (a false refusal); they are
read as no limit now, as `inf` is. The forms the readers disagree on stay unknown."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import _timeout_seconds, read_timeout

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _timeout_problems(line: list[str], mapping: Any) -> list[tuple[str, str]]:
    d = gate.derive(line, mapping, {})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, line
    return [(p.status, p.message) for p in d.problems if p.subject == "timeout"]


@pytest.mark.parametrize("duration", ["infh", "infm", "infd", "infinityh", "infinityd", "1e19d", "1e30h", "6e17m"])
def test_an_infinite_duration_with_a_suffix_sets_no_limit(duration: str, mapping: Any) -> None:
    # fails before: _timeout_seconds None, the gate's timeout unknown (its DURATION is not read as one)
    assert _timeout_seconds(duration) == float("inf"), duration
    assert read_timeout(["timeout", duration, "x"], 0)[:3] == (2, None, 0.0)
    assert _timeout_problems(["timeout", duration, *LAUNCH], mapping) == [], duration


def test_a_kill_after_with_a_suffix_of_inf_sends_no_kill(mapping: Any) -> None:
    assert read_timeout(["timeout", "-k", "infm", "5", "x"], 0).kill_after is None  # fails before: not read
    got = _timeout_problems(["timeout", "-k", "infh", "30m", *LAUNCH], mapping)
    assert [s for s, _ in got] == ["note"] and "KILL" not in got[0][1], got


@pytest.mark.parametrize("duration", ["25m", "1.5h", "2d", "1e3s"])
def test_a_finite_duration_with_a_suffix_is_read_as_before(duration: str, mapping: Any) -> None:
    assert [s for s, _ in _timeout_problems(["timeout", duration, *LAUNCH], mapping)] == ["note"], duration


@pytest.mark.parametrize("duration", ["INFh", "Infh", "infx", "infhh", "nanh", "-infh", "infs5", "in"])
def test_a_form_still_not_read_stays_unknown(duration: str, mapping: Any) -> None:
    got = _timeout_problems(["timeout", duration, *LAUNCH], mapping)
    assert [s for s, _ in got] == ["unknown"], (duration, got)
