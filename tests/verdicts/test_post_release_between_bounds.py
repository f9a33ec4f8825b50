"""imend2: a post release of a range's bound V (0.5.23.post1, 0.5.19.post1.dev0) against `<=V` / `>V`: PEP 440 puts
it outside both (it is above V, and an exclusive `>V` takes no post release of V), so a rule pair split there
(`<=0.5.23` / `>0.5.23`, irev67: 20 feature rules so written) judged it by neither side and the feature got no
rule from the pair. The engine's version operator now says unknown, naming the ranges ("0.5.23.post1 falls between
<=0.5.23 and >0.5.23"); a pre-release, a dev release and a local tag of V at such a bound are judged as before
(`<=V` holds for them as for V and the releases below; `>V` for none). Never an ok the ranges do not give: on the
corpus case boxes, the verdicts that move move to unknown only."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.facts.versions import post_between, version_in
from stackcheck.verdicts import engine
from stackcheck.verdicts.context import Context, Missing
from stackcheck.verdicts.engine import _compare, evaluate_check, evaluate_feature, predicate_holds

MANIFESTS = load_manifests([])
CASES = Path(__file__).resolve().parents[1] / "cases"


def _version_specs(node: Any, out: set[str]) -> set[str]:
    """Every `value` of a `version` predicate under `node` (a feature's or check's rules)."""
    if isinstance(node, dict):
        if node.get("op") == "version" and isinstance(node.get("value"), str):
            out.add(node["value"])
        for value in node.values():
            _version_specs(value, out)
    elif isinstance(node, list):
        for value in node:
            _version_specs(value, out)
    return out


def _bounds() -> set[tuple[str, str]]:
    """(spec, V) for each `<=V` / `>V` clause (V no post release) of a feature's or check's rule."""
    specs: set[str] = set()
    for entry in [*MANIFESTS.features, *MANIFESTS.checks]:
        _version_specs(entry.get("rules"), specs)
    out = set()
    for spec in specs:
        for clause in SpecifierSet(spec):
            if clause.operator in ("<=", ">") and Version(clause.version).post is None:
                out.add((spec, str(Version(clause.version))))
    return out


BOUNDS = sorted(_bounds())


def test_the_manifests_have_such_bounds() -> None:
    # irev67's 20 `<=0.5.23` feature rules and their `>0.5.23` partners among them
    assert ("<=0.5.23", "0.5.23") in BOUNDS and (">0.5.23", "0.5.23") in BOUNDS and ("<=0.5.19", "0.5.19") in BOUNDS
    # (igap47 read 0.5.3.post1-3 and 0.5.6.post1-2 and moved the compressed-tensors rules' `<=0.5.3` / `<=0.5.6`
    # to `<0.5.4`, `<0.5.7` and `<0.5.6.post1`: 14 were left)
    assert len(BOUNDS) >= 10, BOUNDS


@pytest.mark.parametrize(("spec", "bound"), BOUNDS)
def test_each_bound(spec: str, bound: str) -> None:
    s, v = SpecifierSet(spec), Version(bound)
    above = f"{bound}.0.0.0.1"  # above every post release of V, below V's next release
    splits = s.contains(v, prereleases=True) != s.contains(Version(above), prereleases=True)
    for post in (f"{bound}.post1", f"{bound}.post1.dev0", f"{bound}.post2+local.7"):
        assert not s.contains(Version(post), prereleases=True)  # packaging: in neither `<=V` nor `>V`
        if splits:
            assert post_between(post, spec) == bound
            with pytest.raises(Missing) as err:
                _compare("version", post, spec)
            assert err.value.reason.startswith(f"{post} falls between <={bound} and >{bound}: "), err.value.reason
        else:  # another clause gives V and the releases above it the same answer: that answer stands
            assert post_between(post, spec) is None and _compare("version", post, spec) is False
    for built in (f"{bound}rc1", f"{bound}.dev0", f"{bound}+local.7"):
        assert post_between(built, spec) is None
        try:
            got = _compare("version", built, spec)
        except Missing as err:  # a pre-release the range splits from the release below (straddled_final's case)
            assert "pre-release or dev build" in err.reason and "falls between" not in err.reason
        else:
            assert got is version_in(built, spec)


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("0.5.23.post1", "<=0.5.23", "0.5.23"),
        ("0.5.23.post1", ">0.5.23", "0.5.23"),
        ("0.5.23.post1", ">=0.5.1,<=0.5.23", "0.5.23"),
        ("0.5.23.post1", "<=0.5.23,>=0.6", None),  # False for V and above: False
        ("0.5.23.post1", "<0.5.24", None),  # `<V+1` / `>=V` put V.postN on V's side
        ("0.5.23.post1", ">=0.5.23", None),
        ("0.5.23.post1", "<=0.5.23.post1", None),
        ("0.5.23.post2", ">0.5.23.post1", None),  # a post release bound takes the later ones
        ("0.5.22.post1", "<=0.5.23", None),
        ("0.5.23rc1.post1", "<=0.5.23", None),  # (a post release of a pre-release: straddled_final's)
        ("1!0.5.23.post1", "<=1!0.5.23", "1!0.5.23"),
        ("0.5.23.post1", "<=0.5.23.0", "0.5.23"),
        ("not a version", "<=0.5.23", None),
        ("0.5.23.post1", "<=<0.5", None),
    ],
)
def test_post_between(version: str, spec: str, expected: str | None) -> None:
    assert post_between(version, spec) == expected


def test_the_lean_path_says_unknown_too() -> None:
    facts = {"packages": {"sglang": {"installed": True, "version": "0.5.19.post1"}}}
    ctx = Context(facts=facts, manifests=MANIFESTS)  # type: ignore[arg-type]
    pred = {"fact": "pkg.sglang.version", "op": "version", "value": "<=0.5.19"}
    assert predicate_holds(pred, ctx, None) is None
    assert predicate_holds({**pred, "value": "<0.5.20"}, ctx, None) is True


def _box(name: str, sglang: str) -> Context:
    doc = json.loads((CASES / name / "facts.json").read_text())
    facts = copy.deepcopy(doc.get("facts", doc))
    facts["packages"]["sglang"]["version"] = sglang
    return Context(facts=facts, manifests=MANIFESTS)


def test_a_feature_between_its_ranges_is_unknown_naming_them() -> None:
    """attention-dual-chunk: `<=0.5.19` (the choice is gone from 0.5.20) left 0.5.19.post1 blocked (not <=0.5.19)."""
    feature = next(f for f in MANIFESTS.features if f["id"] == "attention-dual-chunk")
    got = evaluate_feature(feature, _box("h200-newest", "0.5.19.post1"))
    assert got["status"] == "unknown", got
    assert any("0.5.19.post1 falls between <=0.5.19 and >0.5.19" in str(r) for r in got["reasons"]), got["reasons"]
    assert evaluate_feature(feature, _box("h200-newest", "0.5.19"))["status"] == "ok"


def test_never_an_ok_the_ranges_do_not_give(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every feature and check on three corpus boxes, SGLang at a post release of a rule's bound: with post_between
    and without it (the verdicts before imend2), a verdict that moves moves to unknown."""
    real = post_between  # (the engine's, imported from versions)
    moved = 0
    for name in ("h200-newest", "b200", "rtxpro6000-pcie-iommu-translated"):
        for version in ("0.5.3.post1", "0.5.6.post1", "0.5.19.post1", "0.5.21.post1", "0.5.22.post1"):
            got: dict[bool, dict[str, str]] = {}
            for on in (False, True):
                monkeypatch.setattr(f"{engine.__name__}.post_between", real if on else (lambda _v, _s: None))
                ctx = _box(name, version)
                got[on] = {f["id"]: evaluate_feature(f, ctx)["status"] for f in MANIFESTS.features}
                got[on].update({c["id"]: evaluate_check(c, ctx)["status"] for c in MANIFESTS.checks})
            for key, status in got[True].items():
                if status != got[False][key]:
                    assert status == "unknown", (name, version, key, got[False][key], status)
                    moved += 1
    assert moved, "no verdict moved: the test reads nothing"
