"""CI's property tests are reproducible: the "ci" hypothesis profile (tests/conftest.py; .ci/run sets CI) draws the
same examples on every run and lets no timing decide a result, so a landing never fails for a slow moment of a
shared box: no per-example deadline, and no "input generation is slow" health check (a loaded 2-core box tripped it
once in tests/launch/test_gate_release_runs.py)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings


def test_the_ci_profile_is_deterministic_and_timing_free() -> None:
    ci = settings.get_profile("ci")
    assert ci.derandomize is True
    assert ci.database is None
    assert ci.deadline is None
    assert HealthCheck.too_slow in ci.suppress_health_check
