"""irev69: a post release of V against `==V` / `!=V`. PEP 440 puts V.postN outside `==V` (and inside `!=V`), as it
puts it outside `<=V` and `>V` (imend2's post_between, which read only those two operators): a rule written for one
release (`==0.5.8`) judged V.postN by neither V's answer nor the next releases', silently. attention-fa4's
mla-decode-fa3-kernel (SGLang 0.5.8's FA4 backend decodes an MLA model with FA3's kernel: 'no kernel image' on
SM100) said nothing for 0.5.8.post1, whose flashattention_backend.py is 0.5.8's byte for byte (both wheels read,
pip download --no-deps, 2026-12-06; both pin sgl-kernel==0.3.21). Now unknown, naming V, as for `<=V` / `>V`."""

from __future__ import annotations

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.facts.versions import post_between
from stackcheck.verdicts.context import Context, Missing
from stackcheck.verdicts.engine import _compare, predicate_holds

MANIFESTS = load_manifests([])


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("0.5.8.post1", "==0.5.8", "0.5.8"),  # fails before: None (V.postN judged not V, silently)
        ("0.5.8.post1.dev0", "==0.5.8", "0.5.8"),
        ("0.5.8.post1", "!=0.5.8", "0.5.8"),
        ("0.5.8.post1", "==0.5.8.post1", None),  # (the post release itself named)
        ("0.5.8.post2", "==0.5.8.post1", None),
        ("0.5.8.post1", "==0.5.*", None),  # (a wildcard takes V's post releases)
        ("0.5.8.post1", "==0.5.9", None),  # (V and the releases above V.postN alike: False)
        ("0.5.8", "==0.5.8", None),
        ("0.5.8.post1", "<=0.5.8,===foo", None),  # (an arbitrary-equality clause: no AssertionError)
    ],
)
def test_post_between_exact(version: str, spec: str, expected: str | None) -> None:
    assert post_between(version, spec) == expected


def test_an_exact_pin_is_unknown_for_its_post_release() -> None:
    with pytest.raises(Missing) as err:
        _compare("version", "0.5.8.post1", "==0.5.8")
    assert "post release of 0.5.8" in err.value.reason
    facts = {"packages": {"sglang": {"installed": True, "version": "0.5.8.post1"}}}
    ctx = Context(facts=facts, manifests=MANIFESTS)  # type: ignore[arg-type]
    assert predicate_holds({"fact": "pkg.sglang.version", "op": "version", "value": "==0.5.8"}, ctx, None) is None


def test_the_manifests_rule_that_moved() -> None:
    """attention-fa4's mla-decode-fa3-kernel was the rule written `==0.5.8` (a release with a post release): unknown
    for 0.5.8.post1 here; imend4 read the post wheel (FlashAttentionBackend identical, the same sgl-kernel pin) and
    wrote `>=0.5.8,<=0.5.8.post1`, so 0.5.8.post1 is judged as 0.5.8 (tests/knowledge/
    test_imend4_post_release_equal_clauses.py)."""
    feature = next(f for f in MANIFESTS.features if f["id"] == "attention-fa4")
    rule = next(r for r in feature["rules"] if r.get("id") == "mla-decode-fa3-kernel")
    spec = rule["when"]["all"][0]
    assert spec == {"fact": "pkg.sglang.version", "op": "version", "value": ">=0.5.8,<=0.5.8.post1"}
    facts = {"packages": {"sglang": {"installed": True, "version": "0.5.8.post1"}}}
    ctx = Context(facts=facts, manifests=MANIFESTS)  # type: ignore[arg-type]
    assert predicate_holds(spec, ctx, None) is True
    assert predicate_holds({**spec, "value": "==0.5.8"}, ctx, None) is None  # (the engine's reading of `==V` stays)
