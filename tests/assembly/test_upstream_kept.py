"""The ok-elsewhere answers a plan with a request keeps (stackcheck.assembly.plan_cache.keep_upstream, iperf37): a later
request on the same facts reads them instead of searching again, and prints what a full search prints; on generated
boxes each kept answer is the full search's; a manifest changed since is another key (nothing stale is read), and a
cache that is corrupt, names another key, is not private or cannot be written is no cache (the full search runs)."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.assembly import plan_cache
from stackcheck.cli import main
from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load
from stackcheck.plan import planner
from stackcheck.plan.hypothetical import Engine
from stackcheck.plan.solver import Restrict, Space, Stack, enumerate_stacks, read_box
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

ROOT = Path(__file__).resolve().parent.parent.parent
WU = str(ROOT / "tests" / "cases" / "writeup-before" / "facts.json")
M = load([], env={})
FEATURES = [str(f["id"]) for f in M.features]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(plan_cache, "answer_for", lambda *a, **k: None)  # no whole answer served before the plan
    return tmp_path / "c" / "upstream"


def plan(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["plan", *argv])
    return code, capsys.readouterr().out


def fresh(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str]:
    with monkeypatch.context() as m:
        m.setenv("STACKCHECK_PLAN_CACHE", "0")
        return plan(capsys, *argv)


def searches(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The features each ok-elsewhere search of the planner evaluated (those not read from `kept`)."""
    asked: list[list[str]] = []
    real = planner._upstream_ok

    def spy(space: Any, engine: Any, restrict: Any, stacks: Any, fids: list[str], kept: Any = None) -> Any:
        asked.append([f for f in fids if kept is None or f not in kept])
        return real(space, engine, restrict, stacks, fids, kept)

    monkeypatch.setattr(planner, "_upstream_ok", spy)
    return asked


def test_a_second_request_reads_the_answers_the_first_kept(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    wants = [("torch-symm-mem",), ("torch-symm-mem", "--format", "json"), ("attention-fa4",)]
    reference = [fresh(capsys, monkeypatch, "--facts", WU, "--want", *w) for w in wants]
    asked = searches(monkeypatch)
    got = []
    for w in wants:
        got.append(plan(capsys, "--facts", WU, "--want", *w))
        assert len(list(cache.glob("*.json"))) == 1  # one file for the facts, whatever the request
    assert got == reference
    assert len(asked[0]) > 20 and asked[1] == []  # the same request again: every answer kept
    assert not set(asked[2]) & set(asked[0])  # another request: only what the first did not answer is searched


def _forge(cache: Path) -> str:
    """The kept file with torch-symm-mem's answer (none: ok on no release) replaced by a made-up stack."""
    (path,) = cache.glob("*.json")
    data = json.loads(path.read_text())
    assert data["upstream"]["torch-symm-mem"] is None
    data["upstream"]["torch-symm-mem"] = "FORGED STACK"
    path.write_text(json.dumps(data))
    return str(path)


def test_the_kept_answer_is_what_is_printed_and_a_manifest_change_is_another_key(
    cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "m"
    user.mkdir()
    (user / "meta.json").write_text(json.dumps({"data_version": "2099.01.01", "date": "2099-01-01"}))
    args = ("--facts", WU, "--manifests", str(user))
    plan(capsys, *args, "--want", "attention-fa4")
    _forge(cache)
    assert "FORGED STACK" in plan(capsys, *args, "--want", "attention-trtllm-mha")[1]  # read: the key is the same
    (user / "meta.json").write_text(json.dumps({"data_version": "2099.01.02", "date": "2099-01-02"}))
    stale = plan(capsys, *args, "--want", "attention-trtllm-mha")
    assert "FORGED STACK" not in stale[1]
    assert stale == fresh(capsys, monkeypatch, *args, "--want", "attention-trtllm-mha")
    assert len(list(cache.glob("*.json"))) == 2


@pytest.mark.parametrize("damage", ["garbage", "another-key", "another-format", "bad-shape", "not-private", "a-dir"])
def test_a_damaged_or_foreign_file_is_no_answer(
    damage: str, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    plan(capsys, "--facts", WU, "--want", "attention-fa4")
    path = _forge(cache)
    data = json.loads(Path(path).read_text())
    if damage == "garbage":
        Path(path).write_bytes(b"\x00{not json")
    elif damage == "another-key":
        data["key"] = "0" * 64
        Path(path).write_text(json.dumps(data))
    elif damage == "another-format":
        data["format"] = 99
        Path(path).write_text(json.dumps(data))
    elif damage == "bad-shape":
        data["upstream"]["attention-fa3"] = ["a list"]
        Path(path).write_text(json.dumps(data))
    elif damage == "not-private":
        os.chmod(path, 0o666)
    else:
        os.unlink(path)
        os.mkdir(path)
    got = plan(capsys, "--facts", WU, "--want", "torch-symm-mem")
    assert "FORGED STACK" not in got[1]
    assert got == fresh(capsys, monkeypatch, "--facts", WU, "--want", "torch-symm-mem")


def test_an_unwritable_cache_is_no_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(blocker))
    monkeypatch.setattr(plan_cache, "answer_for", lambda *a, **k: None)
    for want in ("attention-fa4", "torch-symm-mem"):
        assert plan(capsys, "--facts", WU, "--want", want) == fresh(capsys, monkeypatch, "--facts", WU, "--want", want)


# ---- on generated boxes: each kept answer against a full search, and the plans made from them --------------------

BASES = [
    ROOT / "tests" / "cases" / c / "facts.json" for c in ("writeup-before", "writeup-after", "b200", "h200-newest")
]
ARCHS = [(str(a["compute_capability"]), str(a.get("name"))) for a in M.architectures]
SGLANG = [str(r["version"]) for r in M.releases("sglang") if isinstance(r.get("version"), str)]


@st.composite
def boxes(draw: st.DrawFn) -> tuple[dict[str, Any], list[str], list[str], list[str]]:
    facts: dict[str, Any] = copy.deepcopy(dict(load_facts_file(str(draw(st.sampled_from(BASES))))))
    if draw(st.booleans()):
        cc, name = draw(st.sampled_from(ARCHS))
        n = draw(st.sampled_from([1, 2, 8]))
        facts["gpus"] = [{"index": i, "name": name, "compute_capability": cc} for i in range(n)]
        link = draw(st.sampled_from(["nvlink", "pcie-host-bridge", "cross-socket"]))
        facts["topology"] = {"interconnect": link, "same_model": True, "gpu_count": n, "pairs": []}
    if draw(st.booleans()):
        pkgs = dict(facts.get("packages") or {})
        version = draw(st.sampled_from(SGLANG))
        pkgs["sglang"] = {"installed": True, "version": version, "dist_version": version}
        facts["packages"] = pkgs
    first = draw(st.lists(st.sampled_from(FEATURES), min_size=1, max_size=2, unique=True))
    second = draw(st.lists(st.sampled_from(FEATURES), min_size=0, max_size=2, unique=True))
    hold = draw(st.lists(st.sampled_from(["driver", "torch", "sglang", "flashinfer"]), max_size=1))
    return facts, first, second, hold


def _full_search(facts: dict[str, Any], fid: str) -> str | None:
    """planner._upstream_ok's answer for one feature, on a fresh engine, with nothing kept."""
    ctx = Context(facts=copy.deepcopy(facts), manifests=M)  # type: ignore[arg-type]
    space = Space(ctx, read_box(ctx))
    stacks = sorted(enumerate_stacks(space, Restrict()), key=Stack.key)
    return planner._upstream_ok(space, Engine(ctx), Restrict(), stacks, [fid])[fid]


def _plan(facts: dict[str, Any], want: list[str], kept: dict[str, str | None], hold: list[str] | None = None) -> str:
    ctx = Context(facts=copy.deepcopy(facts), manifests=M)  # type: ignore[arg-type]
    features, _checks = evaluate_all(ctx)
    try:
        got = planner.make_plan(ctx, list(features), want=want or None, hold=hold, upstream_kept=kept).to_json()
    except Exception as exc:  # (a UsageError: the same either way)
        return f"error {type(exc).__name__} {exc}"
    return json.dumps(got, sort_keys=True)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(boxes())
def test_generated_boxes_kept_answers_are_the_full_search(
    box: tuple[dict[str, Any], list[str], list[str], list[str]],
) -> None:
    facts, first, second, hold = box
    kept: dict[str, str | None] = {}
    _plan(facts, first, kept)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="iperf37-upstream-") as d:
        os.chmod(d, 0o700)
        key = "k" * 64
        if kept:
            assert plan_cache.keep_upstream(d, key, kept)
        read = plan_cache.load_upstream(d, key)
    assert read == kept
    for fid, answer in sorted(read.items())[:6]:  # (a few per box: each is a search of its own)
        assert answer == _full_search(facts, fid), fid
    # a later request (with a hold: the search ignores holds and pins) reads them and plans what a full search plans
    assert _plan(facts, second, dict(read), hold) == _plan(facts, second, {}, hold)
