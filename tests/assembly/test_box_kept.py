"""The box's own verdicts a plan with a request keeps beside its ok-elsewhere answers (plan_cache.keep_upstream's
`box`, iperf38; from the second request on the same facts, so a box planned once pays nothing): a later request
(another --want, --hold or format) reads the verdicts its way ("features" for a text plan, "all" for JSON) instead
of judging every feature of the box again, and prints what a plan with the caches off prints, on every case
folder's facts; the verdicts kept are the ones read (a changed kept verdict shows); a kept item of another shape,
an old format or a box without a facts file's merge where one is needed is judged again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly import plan_cache
from stackcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = sorted(p.parent.name for p in (ROOT / "tests" / "cases").glob("*/facts.json"))
WU = str(ROOT / "tests" / "cases" / "writeup-before" / "facts.json")
#: requests of each case, in order: a first one keeps the text way, the second the JSON way, the rest read them
REQUESTS = (
    ("--want", "torch-symm-mem"),
    ("--want", "torch-symm-mem", "--format", "json"),
    ("--want", "fp8-block-gemm"),
    ("--hold", "torch", "--format", "json"),
    ("--want", "attention-fa4", "--hold", "driver"),
    ("--want", "torch-symm-mem"),
)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(plan_cache, "answer_for", lambda *a, **k: None)  # no whole answer served before the plan
    return tmp_path / "c" / "upstream"


def plan(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["plan", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def fresh(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str, str]:
    with monkeypatch.context() as m:
        m.setenv("STACKCHECK_PLAN_CACHE", "0")
        return plan(capsys, *argv)


def kept_doc(cache: Path) -> dict[str, Any]:
    files = list(cache.glob("*.json"))
    assert len(files) == 1
    doc = json.loads(files[0].read_text())
    assert isinstance(doc, dict)
    return doc


@pytest.mark.parametrize("case", CASES)
def test_later_requests_print_what_a_plan_without_caches_prints(
    case: str, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = str(ROOT / "tests" / "cases" / case / "facts.json")
    for request in REQUESTS:
        want = fresh(capsys, monkeypatch, "--facts", facts, *request)
        assert plan(capsys, "--facts", facts, *request) == want, (case, request)
    if any(cache.glob("*.json")):  # (a plan that stops before the verdicts, e.g. no packages, keeps nothing)
        box = kept_doc(cache).get("box")
        assert isinstance(box, dict) and set(box) <= {"features", "all"}


def test_the_kept_verdicts_are_the_ones_read(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan(capsys, "--facts", WU, "--want", "attention-fa4", "--format", "json")
    assert "box" not in kept_doc(cache)  # (a first request keeps its answers alone: a box planned once pays nothing)
    first = plan(capsys, "--facts", WU, "--want", "torch-symm-mem", "--format", "json")
    doc = kept_doc(cache)
    box = doc["box"]
    assert isinstance(box, dict) and set(box) == {"all"}
    report = json.loads(first[1])
    assert box["all"]["features"][0]["id"] == report["features"][0]["id"]
    # a kept verdict changed by hand is what the next request of that way reports (so it was read, not judged)
    box["all"]["features"][0]["title"] = "CHANGED BY THE TEST"
    doc.pop("mark")  # (iperf42: the edit written with the document's mark made again)
    (next(iter(cache.glob("*.json")))).write_bytes(plan_cache._marked_doc(json.dumps(doc)))
    again = json.loads(plan(capsys, "--facts", WU, "--want", "fp8-block-gemm", "--format", "json")[1])
    assert again["features"][0]["title"] == "CHANGED BY THE TEST"
    # the text way was not kept: judged now, and kept beside it
    assert plan(capsys, "--facts", WU, "--want", "fp8-block-gemm") == fresh(
        capsys, monkeypatch, "--facts", WU, "--want", "fp8-block-gemm"
    )
    later = kept_doc(cache)["box"]
    assert isinstance(later, dict) and set(later) == {"all", "features"}


@pytest.mark.parametrize(
    "spoil",
    [
        lambda doc: doc.__setitem__("format", 1),
        lambda doc: doc["box"]["features"].__setitem__("features", {"not": "a list"}),
        lambda doc: doc["box"]["features"].pop("merged"),  # (a facts file's merge needed, not there)
        lambda doc: doc["box"]["features"].__setitem__("merged", {"features": "no"}),
        lambda doc: doc.__setitem__("box", []),
    ],
)
def test_a_kept_box_of_another_shape_is_judged_again(
    spoil: object, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan(capsys, "--facts", WU, "--want", "attention-fa4")
    plan(capsys, "--facts", WU, "--want", "torch-symm-mem")
    doc = kept_doc(cache)
    doc["box"]["features"]["features"][0]["title"] = "CHANGED BY THE TEST"
    spoil(doc)  # type: ignore[operator]
    (next(iter(cache.glob("*.json")))).write_text(json.dumps(doc))
    want = fresh(capsys, monkeypatch, "--facts", WU, "--want", "fp8-block-gemm")
    assert plan(capsys, "--facts", WU, "--want", "fp8-block-gemm") == want


def test_keep_upstream_writes_a_box_without_answers_and_reads_it_back(tmp_path: Path) -> None:
    d = str(tmp_path)
    key = "k" * 64
    features = [{"id": "a", "status": "ok", "reasons": []}, {"id": "b", "status": "blocked", "reasons": []}]
    merged = {"features": [features[0], {"id": "b", "status": "unknown", "reasons": []}], "implied": []}
    assert plan_cache.keep_upstream(d, key, {}, {"features": (features, [], merged)})
    answers, box = plan_cache.load_upstream_doc(d, key)
    assert answers == {} and box == {"features": (features, [], merged)}
    stored = json.loads((tmp_path / f"{key}.json").read_text())
    assert stored["box"]["features"]["merged"]["features"][0] is None  # (thin: the same verdict is a null)
    assert not plan_cache.keep_upstream(d, key, {}, {})
