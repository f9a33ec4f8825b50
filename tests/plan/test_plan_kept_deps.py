"""The planner's dependency answers kept between runs (hypothetical.prime, iperf17): what a run reads back from the
`plan-deps` twin is what the planner works out from the manifests (deps.feature_components of every feature and
check, _check_reads, predicate_components of every rule's `when` and `require`), with and without GPUs; a damaged
twin is not used; nothing is kept for manifests that are not the shipped ones (a user's merged in, the caches off);
and a plan made with the answers read back is the plan made from scratch."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge import prepared
from stackcheck.knowledge.loader import Manifests, load
from stackcheck.plan import hypothetical
from stackcheck.plan.deps import EVERY, feature_components, predicate_components
from stackcheck.plan.planner import plan_and_facts
from stackcheck.verdicts import engine
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def caches_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("STACKCHECK_PLAN_CACHE", raising=False)
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path))
    return tmp_path / "prepared"


@pytest.fixture(autouse=True)
def _room_for_the_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    """engine._SHAPES stops memoising at 65536 rules, which the gate tests before these fill in one process (the
    read-back below would then find no shape kept): each test starts with it empty (irev51)."""
    monkeypatch.setattr(engine, "_SHAPES", {})


def _twins(where: Path, has_gpus: bool) -> list[Path]:
    return sorted(where.glob(f"plan-deps-{int(has_gpus)}-*.marshal")) if where.is_dir() else []


def _expected(m: Manifests, has_gpus: bool) -> list[Any]:
    """Every item's answers worked out with no memo at all."""
    out = []
    for i, item in enumerate([*m.features, *m.checks]):
        exact, presence = feature_components(item, m, has_gpus)
        reads = None
        if i >= len(m.features):
            reads = EVERY if item.get("builtin") is not None else exact | presence
        parts = [
            predicate_components(rule[part], m, has_gpus)
            for rule in item.get("rules") or []
            if isinstance(rule, dict)
            for part in ("when", "require")
            if isinstance(rule.get(part), dict | list)
        ]
        out.append((exact, presence, reads, parts))
    return out


def _memos(m: Manifests, has_gpus: bool) -> list[Any]:
    """The same, read from the memos prime filled (a KeyError where it filled none)."""
    components = m.derived("plan.feature_components")
    checks = m.derived("plan.check_reads")
    nodes = m.derived(f"plan.node_components.{has_gpus}")
    no_component = m.derived("plan.reads_no_component")
    out = []
    for i, item in enumerate([*m.features, *m.checks]):
        got = components[(id(item), has_gpus)]
        assert got[0] is item
        reads = checks[(id(item), has_gpus)][1] if i >= len(m.features) else None
        parts = []
        for rule in item.get("rules") or []:
            if not isinstance(rule, dict):
                continue
            for part in ("when", "require"):
                if isinstance(rule.get(part), dict | list):
                    node = nodes[id(rule[part])]
                    assert node[0] is rule[part]
                    assert no_component[(id(rule[part]), has_gpus)][1] == (node[1] == frozenset())
                    parts.append(node[1])
        out.append((got[1][0], got[1][1], reads, parts))
    return out


@pytest.mark.parametrize("has_gpus", [True, False])
def test_the_answers_read_back_are_the_ones_worked_out(caches_on: Path, has_gpus: bool) -> None:
    first = load([], env={})
    hypothetical.prime(first, has_gpus)
    assert len(_twins(caches_on, has_gpus)) == 1  # worked out and kept
    assert _memos(first, has_gpus) == _expected(first, has_gpus)
    again = load([], env={})  # a later run: fresh documents, the answers read back
    hypothetical.prime(again, has_gpus)
    # the checks' answers are read back when the planner first judges a check (iperf40: a plan may judge none)
    assert not any(key[1] == has_gpus for key in again.derived("plan.check_reads"))
    hypothetical.prime_checks(again, has_gpus)
    parts = {
        id(r[p])
        for item in [*again.features, *again.checks]
        for r in item.get("rules") or []
        for p in ("when", "require")
        if isinstance(r, dict) and isinstance(r.get(p), dict | list)
    }
    # the read-back filled the rule parts only: nothing was worked out
    assert not again.derived(f"plan.node_components.{has_gpus}").keys() - parts
    assert _memos(again, has_gpus) == _expected(again, has_gpus)
    # and which rules are judged per GPU model (engine.prepare, read back with them) is what the rules say
    for item in [*again.features, *again.checks]:
        for rule in item.get("rules") or []:
            if isinstance(rule, dict):
                kept = engine._SHAPES[id(rule)]
                assert kept[0] is rule
                assert kept[1] == (engine.uses_gpu(rule.get("when")) or engine.uses_gpu(rule.get("require")))


def test_a_damaged_twin_is_not_used(caches_on: Path) -> None:
    hypothetical.prime(load([], env={}), True)
    assert len(_twins(caches_on, True)) == 1
    m = load([], env={})
    readers = hypothetical.deps_readers()
    kept = prepared.kept_for(m, "plan-deps-1", hypothetical._DEPS_DOCS, *readers)
    assert kept is not None and kept[2] is not None
    value = kept[2]
    shifted = {**value, "items": value["items"][1:] + value["items"][:1]}  # every answer on the wrong item
    assert prepared.keep(kept[0], "plan-deps-1", kept[1], shifted)
    hypothetical.prime(m, True)
    assert _memos(m, True) == _expected(m, True)  # the shapes differ: worked out again, not read
    again = prepared.kept_for(load([], env={}), "plan-deps-1", hypothetical._DEPS_DOCS, *readers)
    assert again is not None and again[2] == value  # and kept again as worked out


def test_nothing_is_kept_for_a_users_manifests_or_with_the_caches_off(
    caches_on: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "user"
    user.mkdir()
    (user / "checks.json").write_text(json.dumps({"checks": []}))
    merged = load([str(user)], env={})
    hypothetical.prime(merged, True)
    assert _twins(caches_on, True) == []
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    hypothetical.prime(load([], env={}), True)
    assert _twins(caches_on, True) == []


@pytest.mark.parametrize("case", ["writeup-after", "writeup-before"])
@pytest.mark.parametrize("want", [None, ["torch-symm-mem"], ["attention-fa4"]])
def test_a_plan_with_the_answers_read_back_is_the_plan_from_scratch(
    caches_on: Path, monkeypatch: pytest.MonkeyPatch, case: str, want: list[str] | None
) -> None:
    facts = load_facts_file(str(ROOT / "tests" / "cases" / case / "facts.json"))
    plans = []
    for n in range(3):  # no twin (the reference: nothing kept, the memos filled on use), kept, read back
        if n == 0:
            monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
        else:
            monkeypatch.delenv("STACKCHECK_PLAN_CACHE", raising=False)
        ctx = Context(facts=copy.deepcopy(facts), manifests=load([], env={}))
        features, checks = evaluate_all(ctx)
        plan, after = plan_and_facts(ctx, list(features), want=want, box_checks=list(checks))
        plans.append((json.dumps(plan.to_json(), sort_keys=True), json.dumps(after, sort_keys=True)))
    assert len(_twins(caches_on, True)) == 1
    assert plans[0] == plans[1] == plans[2]


def test_an_edit_of_the_kernel_package_names_is_a_new_key(caches_on: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """irev51: deps.py's package -> component table and _components read facts/model.py's KERNEL_PACKAGES, so an edit
    there (a renamed kernel package) must not read back the answers worked out with the old names."""
    import stackcheck.facts.model as facts_model
    from stackcheck import paths

    hypothetical.prime(load([], env={}), True)
    assert len(_twins(caches_on, True)) == 1
    restored: list[bool] = []
    real = hypothetical._restore

    def spy(*args: Any) -> bool:
        restored.append(real(*args))
        return restored[-1]

    monkeypatch.setattr(hypothetical, "_restore", spy)
    hypothetical.prime(load([], env={}), True)
    assert restored == [True]  # the same files: read back
    path = str(facts_model.__file__)
    stamp = paths.code_stamp(path)
    assert stamp is not None
    monkeypatch.setitem(paths._CODE_STAMPS, path, (stamp[0] + 1, *stamp[1:]))  # facts/model.py edited
    m = load([], env={})
    hypothetical.prime(m, True)
    assert restored == [True]  # another key: worked out again, not read back
    assert _memos(m, True) == _expected(m, True)
