"""The kept plan and gate decision do not depend on how the python probe learned its answer (issue 21)."""

from __future__ import annotations

import copy
from typing import Any

from stackcheck.assembly import gate_cache, plan_cache


def _facts(learned: str, sys_path: list[str] | None = None) -> dict[str, Any]:
    return {
        "python": {
            "executable": "/opt/env/bin/python3",
            "version": "3.12.3",
            "implementation": "cpython",
            "prefix": "/opt/env",
            "kind": "venv",
            "sys_path": sys_path
            if sys_path is not None
            else ["/usr/lib/python3.12", "/opt/env/lib/python3.12/site-packages"],
            "chosen_by": "the gated command",
            "learned": learned,
        },
        "packages": {"sglang": {"installed": True, "version": "0.5.6"}},
    }


def _key(facts: dict[str, Any]) -> str | None:
    return plan_cache.key_of(facts, {"tp": 1}, ["{}"])


def test_plan_key_same_whether_the_interpreter_ran_or_was_cached() -> None:
    assert _key(_facts("ran")) == _key(_facts("cache")) is not None


def test_plan_key_changes_with_what_the_answer_says() -> None:
    assert _key(_facts("cache")) != _key(_facts("cache", ["/usr/lib/python3.12", "/other/site-packages"]))
    changed = _facts("cache")
    changed["python"]["version"] = "3.12.4"
    assert _key(changed) != _key(_facts("ran"))


def test_gate_facts_digest_same_whether_the_interpreter_ran_or_was_cached() -> None:
    outcomes = [{"name": "python", "status": "ok", "reason": None, "duration_ms": 1.0}]
    ran = gate_cache.facts_digest((_facts("ran"), outcomes, {"hostname": "h"}))
    cached = gate_cache.facts_digest((_facts("cache"), copy.deepcopy(outcomes), {"hostname": "h"}))
    assert ran == cached is not None
    other = gate_cache.facts_digest((_facts("cache", ["/elsewhere"]), outcomes, {"hostname": "h"}))
    assert other != cached


def test_described_leaves_the_facts_it_was_given_alone() -> None:
    facts = _facts("ran")
    described = plan_cache._described(facts)
    assert "learned" not in described["python"]
    assert facts["python"]["learned"] == "ran"
