"""Shared test set-up: make helper modules in tests/ (fake_nvml) importable under importlib import mode."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from stackcheck.knowledge.loader import Manifests

_TESTS = str(Path(__file__).parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

# The audit's plan cache (stackcheck.assembly.plan_cache) is off for the suite: a test that patches the planner in
# process must see the planner run. tests/assembly/test_plan_cache.py turns it on, in a directory of its own.
os.environ.setdefault("STACKCHECK_PLAN_CACHE", "0")

# stackcheck's caches (the python probe's interpreter answers, derive's per-file readings, the model registry, plan
# answers) are the suite's own, in a directory made for this run: before, tests that gate a venv they made wrote
# their answers into the user's ~/.cache/stackcheck (156 python-*.json entries on the shared 2-core box after a day),
# and what a run found there depended on every earlier run and on the user's STACKCHECK_CACHE_DIR/XDG_CACHE_HOME.
# Tests that test the cache set their own directory. The downloaded wheels stay shared (tests/registry_wheels.py).
_CACHE_HOME = tempfile.mkdtemp(prefix="stackcheck-tests-cache-")
atexit.register(shutil.rmtree, _CACHE_HOME, True)
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME
os.environ.pop("STACKCHECK_CACHE_DIR", None)


# The suite runs in two passes (.ci/run, the README's test command): tests that read the wall clock run alone in a
# one-process pass (`-m serial`), everything else spread over the cores (`-n auto -m "not serial"`). A module that
# reads the wall clock (time.monotonic(), time.perf_counter(), time.time()) bounds how long something takes, and a
# second worker on the same 2 cores makes such a bound a matter of luck; its CPU time (time.process_time()) does not
# move with a neighbour, so those stay in the parallel pass. The rule reads the module's text, so a new timing test
# goes to the right pass without a list to keep; `pytestmark = pytest.mark.serial` puts a module there by hand.
_WALL_CLOCK = re.compile(r"\b(?:monotonic|perf_counter|time\.time)\(\)")
_READS_WALL_CLOCK: dict[str, bool] = {}


def reads_wall_clock(path: Path) -> bool:
    """Whether the test module at PATH reads the wall clock (the serial pass's rule)."""
    key = str(path)
    if key not in _READS_WALL_CLOCK:
        try:
            _READS_WALL_CLOCK[key] = bool(_WALL_CLOCK.search(path.read_text(encoding="utf-8")))
        except OSError:
            _READS_WALL_CLOCK[key] = False
    return _READS_WALL_CLOCK[key]


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if reads_wall_clock(item.path):
            item.add_marker(pytest.mark.serial)


@pytest.fixture(autouse=True)
def _no_runner_terminal_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """COLUMNS and LINES removed for every test: pytest-xdist's workers set COLUMNS=80, which a child stackcheck then
    wraps its human output to, where a plain `pytest` (CI) leaves lines whole; eight gate, preflight, explain and
    image tests that read whole lines failed under `-n 2` only. A test that wants a width sets it itself."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(scope="module")
def manifests() -> Manifests:
    """The shipped manifests (load([])), read once per test module. A module that needs others defines its own."""
    from stackcheck.knowledge.loader import load

    return load([])


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The caches on (STACKCHECK_PLAN_CACHE=1) in a directory of this test's own, TMP/cache; the directory of the kept
    parsed manifests and readings (knowledge/prepared.py) in it. A module that reads another of the cache's directories
    (the plan's, the gate's) defines its own `cache`, which pytest takes over this one."""
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "prepared"


# Property tests: in CI (CI set, as .ci/run does) every run draws the same examples, so a landing never fails
# for a bug it did not touch; locally they explore at random. An example a random run finds goes into the
# test as an explicit @example, so it is checked forever.
try:
    from hypothesis import HealthCheck as _HealthCheck
    from hypothesis import settings as _settings

    # (and timing never decides a CI result: no per-example deadline, no "input generation is slow" health check,
    # which a loaded 2-core box tripped once in test_gate_release_runs)
    _settings.register_profile(
        "ci",
        derandomize=True,
        database=None,
        print_blob=True,
        deadline=None,
        suppress_health_check=[_HealthCheck.too_slow],
    )
    _settings.register_profile("dev", print_blob=True)
    _ci = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")
    _settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if _ci else "dev"))
except ImportError:  # hypothesis is in the test extras
    pass
