"""The fact paths: one resolver per first part (stackcheck.verdicts.context.FACT_PREFIXES), their documentation
under the same keys (stackcheck.verdicts.fact_paths.FACT_DOCS), and the three readers of that list:
manifests/README.md's
table, the validator and the shipped manifests' rules."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge import loader
from stackcheck.knowledge.validate import validate_documents
from stackcheck.verdicts.context import FACT_PREFIXES, Context, GpuModel, Missing
from stackcheck.verdicts.fact_paths import FACT_DOCS, documented_fact_paths, fact_path_documented, fact_path_table

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = sorted(p for d in ("cases", "plan_cases") for p in (ROOT / "tests" / d).glob("*/facts.json"))


def _leaves(pred: Any) -> Iterator[dict[str, Any]]:
    if isinstance(pred, dict):
        for key in ("all", "any"):
            for sub in pred.get(key) or []:
                yield from _leaves(sub)
        if "not" in pred:
            yield from _leaves(pred["not"])
        yield pred


def _shipped_fact_paths() -> set[str]:
    """Every fact path a rule of features.json or checks.json reads (both sides of a comparison)."""
    out: set[str] = set()
    for name, key in (("features.json", "features"), ("checks.json", "checks")):
        doc = json.loads((ROOT / "manifests" / name).read_text(encoding="utf-8"))
        for item in doc[key]:
            for rule in item["rules"]:
                for part in ("when", "require"):
                    for leaf in _leaves(rule.get(part)):
                        for side in (leaf, leaf.get("value")):
                            if isinstance(side, dict) and isinstance(side.get("fact"), str):
                                out.add(side["fact"])
    return out


def test_readme_table_is_the_generated_one() -> None:
    text = (ROOT / "manifests" / "README.md").read_text(encoding="utf-8")
    start = text.index("| path | value |\n")
    end = text.index("\n\n", start) + 1
    assert text[start:end] == fact_path_table()


def test_every_resolver_documents_its_paths_and_only_its_own() -> None:
    assert list(FACT_DOCS) == list(FACT_PREFIXES)  # same prefixes, same order
    for head, docs in FACT_DOCS.items():
        assert docs, f"{head}: no documented path"
        for doc in docs:
            assert doc.value.strip() and "\n" not in doc.value and "|" not in doc.value
            for path in doc.paths:
                assert path.split(".")[0] == head, f"{path} is documented under {head}"
    paths = documented_fact_paths()
    assert len(paths) == len(set(paths))


@pytest.mark.parametrize(
    ("path", "documented"),
    [
        ("gpu.cc", True),
        ("gpu.ccc", False),
        ("pkg.flashinfer-python.version", True),
        ("pkg.sgl-kernel.lib.flashmla_ops.archs", True),
        ("kernel.lib.flash_ops.archs", True),
        ("kernel.version", True),
        ("kernel", False),
        ("cudalib.cudart.12", True),
        ("release.sgl-deep-gemm.arch_majors", True),
        ("env.SGLANG_DISABLE_CUDNN_CHECK", True),
        ("launch.tp", True),
        ("launch.tpp", False),
        ("tpu.cc", False),
        ("toolkit.version", False),
    ],
)
def test_documented_patterns(path: str, documented: bool) -> None:
    assert fact_path_documented(path) is documented


def test_shipped_rules_read_only_documented_paths() -> None:
    paths = _shipped_fact_paths()
    assert len(paths) > 40
    undocumented = sorted(p for p in paths if not fact_path_documented(p))
    assert not undocumented


@pytest.fixture(scope="module")
def manifests() -> loader.Manifests:
    return loader.load()


def test_every_shipped_path_resolves(manifests: loader.Manifests) -> None:
    """On the case folders' facts no shipped fact path is an unknown path, and each one gives a value on some
    box under every resolver (rules over gpu.* are asked per GPU model, as the engine does)."""
    assert len(CASES) > 20
    resolved: set[str] = set()
    paths = _shipped_fact_paths()
    env = {p.partition(".")[2]: "1" for p in paths if p.startswith("env.")}
    for case in CASES:
        facts: Any = load_facts_file(case)
        if "system" in facts:  # the variables the rules read, set (no case folder sets them)
            facts["system"] = {**facts["system"], "env": {**(facts["system"].get("env") or {}), **env}}
        ctx = Context(facts, manifests, {"tp": 2, "attention_backend": "fa3"})
        for path in paths:
            gpus: list[GpuModel | None] = [*ctx.gpu_models()] or [None]
            for gpu in gpus:
                try:
                    ctx.lookup(path, gpu)
                except Missing as exc:
                    assert not exc.reason.startswith("unknown fact path"), f"{case}: {path}: {exc.reason}"
                else:
                    resolved.add(path)
    # a value on some box from every resolver the rules use (a given path may need a launch option or a
    # package that no case folder has)
    assert {p.split(".")[0] for p in resolved} == {p.split(".")[0] for p in paths}


@pytest.mark.parametrize("path", ["tpu.cc", "gpu.ccc", "torch.abi", "toolkit.version", "triton.ptxas", "nothing"])
def test_unknown_paths_are_missing(manifests: loader.Manifests, path: str) -> None:
    ctx = Context(load_facts_file(ROOT / "tests/cases/writeup-after/facts.json"), manifests)
    gpu = ctx.gpu_models()[0]
    with pytest.raises(Missing, match="unknown fact path"):
        ctx.lookup(path, gpu)


def test_validator_rejects_an_undocumented_path() -> None:
    origin = "my/features.json"
    doc = json.loads((ROOT / "manifests" / "features.json").read_text(encoding="utf-8"))
    assert not validate_documents({"features.json": (origin, doc)}, partial=True)
    bad = copy.deepcopy(doc)
    rule = bad["features"][0]["rules"][0]
    rule["require"] = {"all": [rule["require"], {"fact": "gpu.ccc", "op": "==", "value": {"fact": "tpu.cc"}}]}
    problems = validate_documents({"features.json": (origin, bad)}, partial=True)
    where = "$.features[0].rules[0].require.all[1]"
    assert problems == [
        f"{origin}: {where}.fact: unknown fact path 'gpu.ccc' (manifests/README.md lists them)",
        f"{origin}: {where}.value.fact: unknown fact path 'tpu.cc' (manifests/README.md lists them)",
    ]
