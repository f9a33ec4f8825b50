"""The suite's two passes (tests/conftest.py): modules that read the wall clock run alone (`-m serial`), the rest
over the cores; the README's test command is the one .ci/run runs, and both run both passes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import reads_wall_clock

ROOT = Path(__file__).resolve().parent.parent
CALL = "()\n"


def _readme_test_command() -> str:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    at = lines.index("# install the test dependencies and run the tests (this is what .ci/run runs)")
    return lines[at + 1]


def test_the_readme_command_is_what_ci_runs_and_it_runs_both_passes() -> None:
    command = _readme_test_command()
    assert command in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    passes = re.findall(r"\.venv/bin/pytest ([^&]*)", command)
    assert [p.strip() for p in passes] == [
        "-n auto --maxprocesses 4 --dist loadfile -m 'not serial'",
        "-p no:xdist -m serial",
    ]


@pytest.mark.parametrize(
    ("text", "serial"),
    [
        ("start = time.monotonic" + CALL, True),  # (built here so that this module's own text reads no clock)
        ("t0 = time.perf_counter" + CALL, True),
        ("now = time.time" + CALL, True),
        ("cpu = time.process_time" + CALL, False),  # CPU time does not move with a neighbouring worker
        ("# no clock here: time.sleep(1)\n", False),
    ],
)
def test_a_module_that_reads_the_wall_clock_is_serial(tmp_path: Path, text: str, serial: bool) -> None:
    module = tmp_path / "test_x.py"
    module.write_text(text, encoding="utf-8")
    assert reads_wall_clock(module) is serial


def test_the_timing_tests_are_in_the_serial_pass(request: pytest.FixtureRequest) -> None:
    # the forked NVML reader's timeouts (0.9 s < took < 1.95 s) failed under a second worker before the split
    assert reads_wall_clock(ROOT / "tests" / "probes" / "test_nvml_early.py")
    assert not reads_wall_clock(ROOT / "tests" / "verdicts" / "test_quantify_dates.py")
    assert request.node.get_closest_marker("serial") is None  # this module reads no clock
