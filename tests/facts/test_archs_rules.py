"""archs.runs_on reads its binary-compatibility rules from manifests/architectures.json: the data gives the
answers the hard-coded rules gave, and a new suffix or a changed rule is a data change that reaches the
verdicts."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Literal

import pytest

from stackcheck.facts import archs
from stackcheck.facts.archs import Target, coverage, parse_target, rules_of, runs_on, shipped_rules
from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge import loader
from stackcheck.verdicts.context import Context, GpuModel
from stackcheck.verdicts.engine import evaluate_predicate

ROOT = Path(__file__).resolve().parent.parent.parent
DATA = json.loads((ROOT / "manifests" / "architectures.json").read_text(encoding="utf-8"))
KINDS: tuple[Literal["sass", "ptx"], ...] = ("sass", "ptx")


def _hard_coded(target: Target, cc: tuple[int, int]) -> bool:
    """The rules archs.runs_on spelled in code before they were read from the data (the reference)."""
    major, minor = cc
    if target.suffix == "a":
        return (target.major, target.minor) == (major, minor)
    if target.kind == "sass" or target.suffix == "f":
        return target.major == major and minor >= target.minor
    return (major, minor) >= (target.major, target.minor)


def _ccs() -> list[tuple[int, int]]:
    out = set()
    for arch in DATA["architectures"]:
        major, minor = arch["compute_capability"].split(".")
        out.add((int(major), int(minor)))
    return sorted(out)


def _targets() -> list[Target]:
    """Every target the data names, and every architecture's X.Y in both kinds with each suffix."""
    out: set[Target] = set()
    for arch in DATA["architectures"]:
        for entry in arch["targets"]:
            t = parse_target(entry["target"])
            assert t is not None, entry["target"]
            out.add(t)
    for major, minor in _ccs():
        for kind in KINDS:
            for suffix in ("", "a", "f"):
                out.add(Target(major, minor, suffix, kind))
    return sorted(out)


def test_every_pair_answers_as_before() -> None:
    ccs, targets = _ccs(), _targets()
    assert len(ccs) == len(DATA["architectures"]) and len(targets) == 6 * len(ccs)  # 8 ccs x 2 kinds x 3 suffixes
    loaded = rules_of(loader.load().list_of("architectures.json", "rules"))
    assert loaded == shipped_rules()
    pairs = 0
    for target in targets:
        for cc in ccs:
            want = _hard_coded(target, cc)
            assert runs_on(target, cc) is want, (target.name, cc)
            assert runs_on(target, cc, loaded) is want, (target.name, cc)
            pairs += 1
    assert pairs == len(targets) * len(ccs)


def test_the_rules_cover_every_kind_and_suffix() -> None:
    rules = shipped_rules()
    assert rules.suffixes == {"", "a", "f"}
    assert set(rules.relation) == {(k, s) for k in KINDS for s in ("", "a", "f")}


def _rules(edit: Any) -> Any:
    rules = copy.deepcopy(DATA["rules"])
    edit(rules)
    return rules_of(rules)


def test_a_new_suffix_is_a_data_change() -> None:
    def add(rules: list[dict[str, Any]]) -> None:
        rules.append({"id": "x", "kind": "sass", "suffixes": ["x"], "runs_on": "exact", "text": "t", "source": "s"})

    rules = _rules(add)
    x = Target(12, 0, "x", "sass")
    assert runs_on(x, (12, 0), rules) and not runs_on(x, (12, 1), rules)
    assert not runs_on(x, (12, 0))  # the shipped data names no "x" suffix
    assert parse_target("sm_120x") is None and parse_target("sm_120f") == Target(12, 0, "f", "sass")


def test_a_target_no_rule_names_runs_nowhere() -> None:
    def drop_family(rules: list[dict[str, Any]]) -> None:
        rules[:] = [r for r in rules if r["suffixes"] != ["f"]]

    rules = _rules(drop_family)
    fam = [Target(12, 0, "f", "sass"), Target(12, 0, "f", "ptx")]
    assert coverage(fam, (12, 1)) == "sass"
    assert coverage(fam, (12, 1), rules) == "none"


def test_an_unknown_relation_is_left_out() -> None:
    def bogus(rules: list[dict[str, Any]]) -> None:
        rules[0]["runs_on"] = "any"

    assert ("sass", "") not in _rules(bogus).relation


@pytest.mark.parametrize(("relation", "runs"), [("exact", False), ("same-major-minor-ge", True)])
def test_covered_by_follows_the_manifests_rules(relation: str, runs: bool) -> None:
    """A covered_by rule judged through verdicts.engine.evaluate_predicate reads the rules of the context's
    manifests: making sm_120a a family target lets it run on a 12.1 GPU (GB10)."""
    manifests = copy.deepcopy(loader.load())
    for rule in manifests.docs["architectures.json"]["rules"]:
        if rule["kind"] == "sass" and "a" in rule["suffixes"]:
            rule["runs_on"] = relation
    ctx = Context(load_facts_file(ROOT / "tests/cases/writeup-after/facts.json"), manifests)
    pred = {"fact": "gpu.cc", "op": "covered_by", "value": ["sm_120a"]}
    out = evaluate_predicate(pred, ctx, GpuModel("12.1", "NVIDIA GB10", (0,)))
    assert out.value is runs
    assert archs.shipped_rules().relation[("sass", "a")] == "exact"
