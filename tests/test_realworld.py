"""The real-world corpus (tests/realworld/): reported environment failures, each as the reporter's facts, a
server log in the shape of theirs and what stackcheck must say. This test checks that every case is well
formed, prints the coverage table, and holds the ratchet: a case listed in CAUGHT.txt must stay caught
before launch, a case in NAMED.txt must stay named after the crash. Cases not yet caught are reported, not
failed. The scoring lives in bench/realworld_coverage.py (the same table goes into the README)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "realworld"
KINDS = ("feature", "check", "signature")


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("realworld_coverage", REPO / "bench" / "realworld_coverage.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


BENCH = _bench()
CASES = BENCH.load_cases(CORPUS)
CASE_IDS = [c.id for c in CASES]


def _listed(name: str) -> list[str]:
    path = CORPUS / name
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [ln.split("#", 1)[0].strip() for ln in lines if ln.split("#", 1)[0].strip()]


@lru_cache(maxsize=1)
def _outcomes() -> dict[str, Any]:
    return {o.case.id: o for o in BENCH.score_all(CASES)}


@lru_cache(maxsize=1)
def _known_ids() -> dict[str, set[str]]:
    """Ids the expectations may name: those in the shipped manifests, and those proposed in IDS.md."""
    manifests = REPO / "manifests"
    known: dict[str, set[str]] = {
        "feature": {f["id"] for f in json.loads((manifests / "features.json").read_text())["features"]},
        "check": {c["id"] for c in json.loads((manifests / "checks.json").read_text())["checks"]},
        "signature": {s["id"] for s in json.loads((manifests / "signatures.json").read_text())["signatures"]},
    }
    ids_md = (CORPUS / "IDS.md").read_text(encoding="utf-8")
    for kind, ident in re.findall(r"^\|\s*(feature|check|signature)\s*\|\s*`([a-z0-9-]+)`", ids_md, flags=re.M):
        known[kind].add(ident)
    return known


def test_corpus_is_large_enough_and_covers_every_class() -> None:
    assert len(CASES) >= 45
    classes = {c.klass for c in CASES}
    assert {str(k) for k in range(1, 11)} <= classes, f"classes without a case: {set(map(str, range(1, 11))) - classes}"


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_case_is_well_formed(case: Any) -> None:
    for name in ("facts.json", "server.log", "expected.json", "case.json"):
        assert (case.path / name).is_file(), f"{case.id}: {name} missing"
    assert (case.path / "server.log").read_text(encoding="utf-8").strip(), f"{case.id}: server.log is empty"
    exp = case.expected
    source = str(exp.get("source"))
    # a GitHub issue or pull request, or another public page (a forum thread, Q&A, a blog post: the `pages`
    # rounds); a GitHub address must be an issue or pull request, not a repository or file
    tracker = re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+/(issues|pull)/\d+", source)
    page = re.fullmatch(r"https://[\w.-]+\.[a-z]{2,}/\S*", source) and not source.startswith("https://github.com/")
    assert tracker or page, f"{case.id}: source {source}"
    assert BENCH.source_kind(source) == ("tracker" if tracker else "page"), f"{case.id}: source kind of {source}"
    assert exp.get("title") and exp.get("cause"), f"{case.id}: title and cause are required"
    assert case.klass in BENCH.CLASSES, f"{case.id}: class {case.klass!r}"
    known = _known_ids()
    audit = exp.get("audit")
    if audit is None:
        assert exp.get("audit_why_not"), f"{case.id}: audit is null, say why in audit_why_not"
    else:
        flags = audit["flag"]
        assert flags, f"{case.id}: audit.flag is empty"
        for flag in flags:
            kind = "feature" if "feature" in flag else "check"
            assert flag.get("status") == ("blocked" if kind == "feature" else "fail"), flag
            assert flag[kind] in known[kind], f"{case.id}: {kind} {flag[kind]} is neither in manifests/ nor in IDS.md"
            assert flag.get("mentions"), f"{case.id}: a flag needs the words that name the cause"
    triage = exp.get("triage")
    if triage is None:
        assert exp.get("triage_why_not"), f"{case.id}: triage is null, say why in triage_why_not"
    else:
        names = triage["name"] if isinstance(triage["name"], list) else [triage["name"]]
        for name in names:
            kind = next(k for k in KINDS if k in name)
            assert name[kind] in known[kind], f"{case.id}: {kind} {name[kind]} is neither in manifests/ nor in IDS.md"
            assert name.get("mentions"), f"{case.id}: a triage name needs the words that name the cause"


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_inferred_facts_of_caught_cases_name_their_paths(case: Any) -> None:
    """Every inferred entry of a case in CAUGHT.txt says which facts it wrote (`paths`, present in facts.json), so
    the bench measures the caught figure without inference for every caught case."""
    if case.id not in _listed("CAUGHT.txt"):
        return
    facts = json.loads((case.path / "facts.json").read_text(encoding="utf-8"))
    for entry in BENCH._inferred_entries(case):
        assert isinstance(entry.get("paths"), list), f"{case.id}: inferred {entry.get('fact')!r} has no paths"
        BENCH.strip_inferred(facts, [str(p) for p in entry["paths"]])  # a path that is not there raises


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_facts_pass_the_report_schema(case: Any) -> None:
    import jsonschema

    schema = json.loads((REPO / "schemas" / "report.schema.json").read_text(encoding="utf-8"))
    doc = json.loads((case.path / "facts.json").read_text(encoding="utf-8"))
    jsonschema.validate(doc, schema)


def test_ratchet_lists_name_real_cases() -> None:
    for listed in ("CAUGHT.txt", "NAMED.txt"):
        unknown = set(_listed(listed)) - set(CASE_IDS)
        assert not unknown, f"{listed} names cases that do not exist: {sorted(unknown)}"


def test_coverage_ratchet(capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = _outcomes()
    with capsys.disabled():
        print("\nreal-world corpus coverage (tests/realworld):\n" + BENCH.table(list(outcomes.values())))
    lost_caught = [c for c in _listed("CAUGHT.txt") if not outcomes[c].caught]
    lost_named = [c for c in _listed("NAMED.txt") if not outcomes[c].named]
    assert not lost_caught, "no longer caught before launch: " + "; ".join(
        f"{c}: {outcomes[c].audit_why}" for c in lost_caught
    )
    assert not lost_named, "no longer named after the crash: " + "; ".join(
        f"{c}: {outcomes[c].triage_why}" for c in lost_named
    )


def test_every_case_runs_without_an_internal_error() -> None:
    """audit exits 0 or 1 and triage exits 0 on every case: bad input or a crash of the tool is a bug here."""
    for cid, o in _outcomes().items():
        assert o.audit_exit in (None, 0, 1), f"{cid}: audit exit {o.audit_exit}: {o.audit_why}"
        assert o.triage_exit in (None, 0), f"{cid}: triage exit {o.triage_exit}: {o.triage_why}"


def test_mentions_are_matched_as_documented() -> None:
    ok, missing = BENCH.mentions_ok("Needs CUDA 12.9 for SM12x", ["cuda 12.9", "sm120|SM12x"])
    assert ok and not missing
    ok, missing = BENCH.mentions_ok("Needs CUDA 12.9", ["12.9", "toolkit|nvcc"])
    assert not ok and missing == ["toolkit|nvcc"]


def test_inference_line_counts_caught_cases_with_inferred_facts() -> None:
    """The README gives the caught figure with and without inference: the bench says how many caught cases hold a
    fact that case.json records as inferred (an entry '(no fact added)' adds none), and how many stay caught with
    those facts removed (measured where every entry names its `paths`)."""

    def outcome(cid: str, caught: bool, inferred: list[dict[str, Any]], without: bool | None) -> Any:
        case = BENCH.Case(cid, CORPUS / cid, {"class": "2"}, {"inferred": inferred})
        return BENCH.Outcome(case, caught=caught, without_inference=without)

    outcomes = [
        outcome("a", True, [{"fact": "packages.torch 2.9.1", "why": "a pin", "paths": ["packages/torch"]}], False),
        outcome("b", True, [], True),
        outcome("c", True, [{"fact": "(no fact added) the NCCL in use", "why": "-"}], True),
        outcome("d", False, [{"fact": "gpus (one entry)", "why": "-"}], None),
        outcome("e", True, [{"fact": "driver.cuda 12.4", "why": "a table"}], None),
        outcome("f", True, [{"fact": "gpus (one entry)", "why": "count not given", "paths": []}], True),
    ]
    assert [BENCH.leans_on_inference(o.case) for o in outcomes] == [True, False, False, True, True, False]
    line = BENCH.inference_line(outcomes)
    assert "2 of the 5 caught" in line
    assert "3 of 6 (50.0 %) are still caught and 1 rely" in line
    assert "1 are not measured" in line and "between 3 and 4" in line
    assert line in BENCH.table(outcomes)
    doc = json.loads(BENCH.as_json(outcomes))
    assert doc[0]["inferred_facts"] == 1 and doc[0]["caught_without_inference"] is False


def test_source_kinds_and_the_by_source_line() -> None:
    """A case's report is read on an issue tracker (a GitHub issue or pull request) or on another public page
    (a forum thread, Q&A, a blog post: the `pages` rounds); the table says how each source fares."""
    assert BENCH.source_kind("https://github.com/sgl-project/sglang/issues/8373") == "tracker"
    assert BENCH.source_kind("https://github.com/triton-lang/triton/pull/9734") == "tracker"
    assert BENCH.source_kind("https://forums.developer.nvidia.com/t/some-topic/350389") == "page"
    assert BENCH.source_kind("https://al-engr.com/sglang-deepseek-spark-pivot.html") == "page"
    # a GitHub repository or file is neither: test_case_is_well_formed refuses it as a source
    assert BENCH.source_kind("https://github.com/sgl-project/sglang") == "page"

    def outcome(cid: str, source: str, caught: bool, named: bool) -> Any:
        case = BENCH.Case(cid, CORPUS / cid, {"class": "4", "source": source}, {})
        return BENCH.Outcome(case, caught=caught, named=named)

    outcomes = [
        outcome("a", "https://github.com/o/r/issues/1", True, False),
        outcome("b", "https://github.com/o/r/issues/2", False, True),
        outcome("c", "https://example.org/thread/3", True, True),
    ]
    line = BENCH.source_line(outcomes)
    assert "issue trackers (GitHub issues and pull requests): 2 cases, 1 (50.0 %) caught, 1 (50.0 %) named" in line
    assert "web pages (forum threads, Q&A, blog posts): 1 case, 1 (100.0 %) caught, 1 (100.0 %) named" in line
    assert line in BENCH.table(outcomes)
    assert [d["source"] for d in json.loads(BENCH.as_json(outcomes))] == ["tracker", "tracker", "page"]


def test_inferred_paths_are_removed_and_measured() -> None:
    """strip_inferred drops exactly the named facts ('/'-separated, list indexes as numbers, keys with dots);
    caught_without_inference re-audits without them: vllm-49497 is caught only with its inferred
    flashinfer-jit-cache fact (jit-toolchain stays unknown without it), and a case with an entry lacking `paths`
    is not measured."""
    doc: dict[str, Any] = {
        "facts": {"gpus": [{"cc": "9.0"}, {"cc": "9.0"}], "cuda_libs": {"libnvrtc.so.12": None, "x": 1}}
    }
    out = BENCH.strip_inferred(doc, ["gpus/1", "cuda_libs/libnvrtc.so.12"])
    assert out == {"facts": {"gpus": [{"cc": "9.0"}], "cuda_libs": {"x": 1}}}
    assert doc["facts"]["gpus"][1] == {"cc": "9.0"}  # the input is not changed
    with pytest.raises(KeyError):
        BENCH.strip_inferred(doc, ["packages/torch"])
    nested = {"facts": {"packages": {"m": {"installed": True, "candidates": ["1.0"]}, "t": {"installed": True}}}}
    out = BENCH.strip_inferred(nested, ["packages/m", "packages/m/candidates"])  # a parent named before its child
    assert out == {"facts": {"packages": {"t": {"installed": True}}}}
    case = next(c for c in CASES if c.id == "vllm-49497-flashinfer-sampler-no-nvcc")
    assert _outcomes()[case.id].caught
    assert BENCH.caught_without_inference(case) is False
    unmeasured = BENCH.Case(case.id, case.path, case.expected, {"inferred": [{"fact": "x", "why": "y"}]})
    assert BENCH.caught_without_inference(unmeasured) is None


def test_a_share_just_under_a_goal_is_not_rounded_up_to_it() -> None:
    bench = _bench()
    assert bench._pct(67, 84) == "67 (79.7 %)"  # 79.76 %: cut, never shown as 80 %
    assert bench._pct(4, 5) == "4 (80.0 %)"
    assert bench._pct(0, 0) == "–"
