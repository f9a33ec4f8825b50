"""The stack checks failing on the box as it is, kept beside the ok-elsewhere answers (plan_cache.keep_upstream's
`failing`, iperf40): a plan with a request whose target replaces no component (`--want` of a feature no release
fixes) judged every check of the manifests on the box's own facts again on every request (~3.6 ms CPU and the
imports of the builtin checks' modules on the 2-core box); a later request on the same facts reads them. Held here:
a later request judges no check (a call count, not a timing), prints what a plan with the caches off prints, the
kept list is the one read (a changed kept verdict shows), and a kept list of another shape is judged again; such a
request reads no checks.json (prime restores the checks' kept dependency answers only when the planner first judges a
check: prime_checks), and a request that judges checks after it prints what a plan without caches prints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly import plan_cache
from stackcheck.cli import main
from stackcheck.plan import hypothetical

ROOT = Path(__file__).resolve().parent.parent.parent
WU = str(ROOT / "tests" / "cases" / "writeup-before" / "facts.json")
WANT = ("--want", "torch-symm-mem")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(plan_cache, "answer_for", lambda *a, **k: None)  # no whole answer served before the plan
    return tmp_path / "c" / "upstream"


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the planner judged the stack checks (Engine.failing_checks started)."""
    count = [0]
    real = hypothetical.Engine.failing_checks

    def counted(self: Any, *a: Any, **k: Any) -> Any:
        count[0] += 1
        return real(self, *a, **k)

    monkeypatch.setattr(hypothetical.Engine, "failing_checks", counted)
    return count


def plan(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["plan", "--facts", WU, *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def fresh(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str, str]:
    with monkeypatch.context() as m:
        m.setenv("STACKCHECK_PLAN_CACHE", "0")
        return plan(capsys, *argv)


def kept(cache: Path) -> tuple[Path, dict[str, Any]]:
    files = list(cache.glob("*.json"))
    assert len(files) == 1
    return files[0], json.loads(files[0].read_text())


@pytest.mark.parametrize("fmt", [(), ("--format", "json")])
def test_a_later_request_judges_no_check_and_prints_the_same(
    fmt: tuple[str, ...],
    cache: Path,
    judged: list[int],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    want = fresh(capsys, monkeypatch, *WANT, *fmt)
    assert plan(capsys, *WANT, *fmt) == want  # a first request
    assert plan(capsys, *WANT, *fmt) == want  # the second keeps the failing checks
    way = "all" if fmt else "features"
    assert way in kept(cache)[1].get("failing", {})
    judged[0] = 0
    assert plan(capsys, *WANT, *fmt) == want
    assert judged[0] == 0  # read, not judged (before iperf40: judged on every request)
    assert plan(capsys, "--want", "attention-flashmla", *fmt) == fresh(
        capsys, monkeypatch, "--want", "attention-flashmla", *fmt
    )


def test_the_kept_list_is_the_one_read(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan(capsys, *WANT, "--format", "json")
    plan(capsys, *WANT, "--format", "json")
    where, doc = kept(cache)
    failing = doc["failing"]["all"]
    assert failing, "the write-up box has a stack check failing (triton-ptxas): the test needs one"
    failing[0]["title"] = "CHANGED BY THE TEST"
    doc["failing_marks"]["all"] = plan_cache._failing_mark(where.stem, "all", failing)  # (imend16: its mark with it)
    where.write_text(json.dumps(doc))
    report = json.loads(plan(capsys, *WANT, "--format", "json")[1])
    assert report["plan"]["still_failing_checks"][0]["title"] == "CHANGED BY THE TEST"


@pytest.mark.parametrize(
    "spoil",
    [
        lambda doc: doc["failing"].__setitem__("features", {"not": "a list"}),
        lambda doc: doc["failing"]["features"][0].__setitem__("status", "ok"),
        lambda doc: doc.__setitem__("failing", []),
    ],
)
def test_a_kept_list_of_another_shape_is_judged_again(
    spoil: object,
    cache: Path,
    judged: list[int],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan(capsys, *WANT)
    plan(capsys, *WANT)
    where, doc = kept(cache)
    doc["failing"]["features"][0]["title"] = "CHANGED BY THE TEST"
    spoil(doc)  # type: ignore[operator]
    where.write_text(json.dumps(doc))
    want = fresh(capsys, monkeypatch, *WANT)
    judged[0] = 0
    assert plan(capsys, *WANT) == want
    assert judged[0] > 0


def test_a_later_request_reads_no_checks_json(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from stackcheck.knowledge import loader

    want = fresh(capsys, monkeypatch, *WANT)
    plan(capsys, *WANT)
    plan(capsys, *WANT)
    read: list[str] = []
    real = loader.Manifests.list_of

    def seen(self: Any, file: str, key: str) -> Any:
        read.append(file)
        return real(self, file, key)

    monkeypatch.setattr(loader.Manifests, "list_of", seen)
    assert plan(capsys, *WANT) == want
    assert "features.json" in read
    assert "checks.json" not in read  # (before iperf40: read by prime and the engine on every plan)
    # a request that judges checks after it: the checks' answers restored then (prime_checks), the same plan
    for request in (("--want", "attention-fa4"), ("--want", "fp8-block-gemm", "--format", "json"), ("--hold", "torch")):
        assert plan(capsys, *request) == fresh(capsys, monkeypatch, *request), request


def test_prime_restores_the_checks_answers_when_a_check_is_first_judged(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stackcheck.facts.model import load_facts_file
    from stackcheck.knowledge.loader import load
    from stackcheck.verdicts.context import Context

    plan(capsys, "--want", "attention-fa4")  # (keeps the dependency answers and the rule shapes)
    manifests = load()
    facts = load_facts_file(WU)
    engine = hypothetical.Engine(Context(facts=facts, manifests=manifests, launch={}))
    has_gpus = engine._has_gpus
    assert has_gpus
    assert manifests.derived("plan.primed_checks").get(has_gpus) is not None  # pending: no check judged yet
    reads = manifests.derived("plan.check_reads")
    assert not any(key[1] == has_gpus for key in reads)
    engine.checks_failing_on(facts, {})
    assert manifests.derived("plan.primed_checks").get(has_gpus) is None
    assert {key[0] for key in reads if key[1] == has_gpus} == {id(c) for c in manifests.checks}


def test_the_rule_shapes_are_read_once_for_the_features_and_then_the_checks(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from stackcheck.facts.model import load_facts_file
    from stackcheck.knowledge import prepared
    from stackcheck.knowledge.loader import load
    from stackcheck.verdicts import engine
    from stackcheck.verdicts.context import Context

    plan(capsys, "--want", "attention-fa4")  # (keeps the dependency answers and the rule shapes)
    names: list[str] = []
    real = prepared.kept_for

    def seen(manifests: Any, name: str, *a: Any) -> Any:
        names.append(name)
        return real(manifests, name, *a)

    monkeypatch.setattr(prepared, "kept_for", seen)
    monkeypatch.setattr(engine, "_SHAPES", {})  # (the process-wide memo stops filling at 65,536 rules: other tests')
    manifests = load()
    facts = load_facts_file(WU)
    hypothetical.Engine(Context(facts=facts, manifests=manifests, launch={})).checks_failing_on(facts, {})
    assert names.count("rule-shapes") == 1  # (the features' part, then the checks' from the same read)
    for item in manifests.checks:
        for rule in item.get("rules") or []:
            if isinstance(rule, dict):
                assert engine._SHAPES[id(rule)][0] is rule
