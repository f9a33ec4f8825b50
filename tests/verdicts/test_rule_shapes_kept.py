"""engine.prepare keeps whether each shipped rule is judged per GPU between runs (knowledge/prepared.py, `rule-shapes`):
read back, every rule's answer is the one the rule itself gives; one of another shape is a miss, worked out again."""

from __future__ import annotations

import marshal
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge import prepared
from stackcheck.knowledge.loader import Manifests, load
from stackcheck.verdicts import engine


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(engine, "_SHAPES", {})
    return tmp_path / "cache" / "prepared" / prepared.file_name("rule-shapes")


def _rules(m: Manifests) -> list[Any]:
    return [r for item in (*m.features, *m.checks) for r in item.get("rules") or [] if isinstance(r, dict)]


def _own(rule: Any) -> bool:
    return engine.uses_gpu(rule.get("when")) or engine.uses_gpu(rule.get("require"))


def test_the_kept_shapes_are_each_rules_own(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine.prepare(load())
    assert cache.is_file()
    second = load()

    def refuse(rule: Any) -> bool:
        raise AssertionError("worked out again")

    with monkeypatch.context() as m:
        m.setattr(engine, "_rule_per_gpu", refuse)
        engine.prepare(second)
    rules = _rules(second)
    assert len(rules) > 100 and any(_own(r) for r in rules) and not all(_own(r) for r in rules)
    for rule in rules:
        kept_rule, per_gpu = engine._SHAPES[id(rule)]
        assert kept_rule is rule and per_gpu == _own(rule)
        assert engine._rule_per_gpu(rule) == _own(rule)


@pytest.mark.parametrize(
    "value",
    [
        {"rules": 1, "per_gpu": [True]},
        {"rules": "N", "per_gpu": "T"},  # (N and T: the count and flags of the shipped rules, then damaged)
        {"rules": "N", "per_gpu": "T-short"},
        {"rules": "N", "per_gpu": "T-int"},
        {"rules": "N"},
    ],
)
def test_kept_shapes_of_another_shape_are_a_miss(cache: Path, value: Any) -> None:
    engine.prepare(load())
    fmt, key, kept = marshal.loads(cache.read_bytes())
    n = kept["rules"]
    flags = {"T": kept["per_gpu"], "T-short": kept["per_gpu"][:-1], "T-int": [int(f) for f in kept["per_gpu"]]}
    value = {k: (n if v == "N" else flags.get(v, v) if isinstance(v, str) else v) for k, v in value.items()}
    if value.get("per_gpu") == kept["per_gpu"]:
        value["per_gpu"] = [not f for f in kept["per_gpu"]]  # right count and types, every answer wrong: see below
        value["rules"] = n + 1
    cache.write_bytes(marshal.dumps((fmt, key, value)))
    engine._SHAPES.clear()
    again = load()
    engine.prepare(again)
    for rule in _rules(again):
        assert engine._SHAPES[id(rule)][1] == _own(rule)
    assert marshal.loads(cache.read_bytes())[2] == kept  # kept anew
