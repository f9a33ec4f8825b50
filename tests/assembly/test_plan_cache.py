"""The audit's plan cache (stackcheck.assembly.plan_cache): the same output with and without it, a new key for any
change of what the plan reads, and a cache that is corrupt, foreign or unwritable is no cache."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import stackcheck.plan
from stackcheck.assembly import plan_cache
from stackcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = [
    "examples/facts/h200-cu130.json",
    "tests/cases/writeup-after/facts.json",
    "tests/cases/writeup-before/facts.json",
    "tests/cases/b200/facts.json",
    "tests/cases/no-driver/facts.json",
]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "c"))
    # the kept answers of whole `plan` command lines (tests/commands/test_plan_answer.py) would serve a plan run
    # again before it reads the entries these tests are about: none here
    monkeypatch.setattr(plan_cache, "answer_for", lambda *a, **k: None)
    return tmp_path / "c" / "plan"


def audit(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["audit", *argv])
    return code, capsys.readouterr().out


def no_planner(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: Any, **k: Any) -> Any:
        raise AssertionError("the planner ran")

    monkeypatch.setattr(stackcheck.plan, "make_plan", boom)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("fmt", ["json", "text", "markdown"])
def test_cached_plan_prints_what_a_fresh_one_does(
    case: str, fmt: str, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = str(ROOT / case)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    fresh = audit(capsys, "--facts", facts, "--format", fmt)
    assert not cache.exists()
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    assert audit(capsys, "--facts", facts, "--format", fmt) == fresh  # a miss: computed and kept
    assert len(list(cache.glob("*.json"))) == 1
    with monkeypatch.context() as m:
        no_planner(m)
        assert audit(capsys, "--facts", facts, "--format", fmt) == fresh  # a hit: the planner does not run


def count_judgements(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the engine's whole-stack judgements (evaluate_all: the audit's own, and a facts file's implied ones)."""
    import stackcheck.verdicts.engine as engine

    calls = [0]
    real = engine.evaluate_all

    def counted(ctx: Any) -> Any:
        calls[0] += 1
        return real(ctx)

    monkeypatch.setattr(engine, "evaluate_all", counted)
    return calls


@pytest.mark.parametrize("case", CASES)
def test_a_hit_judges_nothing_again_and_prints_the_same(
    case: str, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The entry keeps the verdicts with the plan: the audit that finds it does not judge the stack (only a
    facts file's implied versions are judged, as before) and prints what a fresh audit prints."""
    facts = str(ROOT / case)
    calls = count_judgements(monkeypatch)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    fresh = audit(capsys, "--facts", facts, "--format", "json")
    fresh_calls = calls[0]
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    assert audit(capsys, "--facts", facts, "--format", "json") == fresh  # the miss keeps plan and verdicts
    (entry,) = cache.iterdir()
    kept = json.loads(entry.read_text())["verdicts"]
    report = json.loads(fresh[1])
    assert [v["id"] for v in kept["features"]] == [v["id"] for v in report["features"]]
    assert [v["id"] for v in kept["checks"]] == [v["id"] for v in report["checks"]]
    calls[0] = 0
    no_planner(monkeypatch)
    assert audit(capsys, "--facts", facts, "--format", "json") == fresh
    assert calls[0] == fresh_calls - 1  # the stated facts were not judged again


def test_kept_verdicts_of_the_wrong_shape_are_judged_again(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = str(ROOT / CASES[1])
    fresh = audit(capsys, "--facts", facts, "--format", "json")
    (entry,) = cache.iterdir()
    good = entry.read_text()
    doc = json.loads(good)
    calls = count_judgements(monkeypatch)
    wrong: list[Any] = [None, [], {"features": []}, {"features": [1], "checks": []}, {"features": [], "checks": "x"}]
    for verdicts in wrong:
        entry.write_text(json.dumps({**doc, "verdicts": verdicts}))
        stored = plan_cache.load_entry(str(cache), entry.stem)
        assert stored is not None and stored.verdicts is None and stored.plan == doc["plan"]
        calls[0] = 0
        with monkeypatch.context() as m:
            no_planner(m)  # the plan is still read from the entry
            assert audit(capsys, "--facts", facts, "--format", "json") == fresh
        assert calls[0] >= 1  # judged again
        assert json.loads(entry.read_text()) == doc  # and kept again, with the plan it had


def test_an_entry_the_gate_kept_gets_the_verdicts_of_the_audit(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate keeps a plan without verdicts (it judges with its own launch facts); an audit with the same
    key reads that plan and adds its verdicts to the entry."""
    facts = str(ROOT / CASES[2])
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    fresh = audit(capsys, "--facts", facts, "--format", "json")
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    audit(capsys, "--facts", facts, "--format", "json")
    (entry,) = cache.iterdir()
    doc = json.loads(entry.read_text())
    entry.write_text(json.dumps({k: v for k, v in doc.items() if k != "verdicts"}))  # as the gate keeps it
    with monkeypatch.context() as m:
        no_planner(m)
        assert audit(capsys, "--facts", facts, "--format", "json") == fresh
    assert json.loads(entry.read_text()) == doc


def test_the_facts_order_is_part_of_the_key() -> None:
    """Kept verdicts are read back only for facts in the same order: a verdict that lists what it found in
    the facts' order never comes back in another order."""
    facts = _facts()
    texts = ["manifests/a.json", "{}"]
    reordered = dict(reversed(list(facts.items())))
    assert reordered == facts
    assert plan_cache.key_of(reordered, {}, texts) != plan_cache.key_of(facts, {}, texts)
    assert plan_cache.key_of(dict(facts), {}, texts) == plan_cache.key_of(facts, {}, texts)


def test_verdicts_are_kept_only_as_plain_json(tmp_path: Path) -> None:
    d = str(tmp_path / "p")
    assert plan_cache.store(d, "t", {"steps": []}, ([{"id": "f", "observed": (1, 2)}], []))
    entry = plan_cache.load_entry(d, "t")
    assert entry is not None and entry.plan == {"steps": []} and entry.verdicts is None  # the plan alone
    assert plan_cache.store(d, "u", {"steps": []}, ([{"id": "f"}], [{"id": "c"}]))
    entry = plan_cache.load_entry(d, "u")
    assert entry is not None and entry.verdicts == ([{"id": "f"}], [{"id": "c"}])


GATE = ["--", "python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "8", "--enable-torch-symm-mem"]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_the_gate_fixes_from_a_cached_plan_as_from_a_fresh_one(
    fmt: str, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["gate", "--dry-run", "--facts", str(ROOT / "tests/cases/writeup-after/facts.json"), "--format", fmt, *GATE]
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    fresh = main(argv), capsys.readouterr()
    assert fresh[0] == 1 and "plan step" in fresh[1].out  # refused, with the step that fixes it
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    assert (main(argv), capsys.readouterr()) == fresh
    assert len(list(cache.glob("*.json"))) == 1
    with monkeypatch.context() as m:
        no_planner(m)
        assert (main(argv), capsys.readouterr()) == fresh
    # the audit of the same box and launch facts shares the entry (the same plan)


def test_entries_are_private_and_atomic(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    audit(capsys, "--facts", str(ROOT / CASES[0]))
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    (entry,) = cache.iterdir()  # no temporary file left behind
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert json.loads(entry.read_text())["key"] == entry.stem


def _facts(case: str = CASES[0]) -> dict[str, Any]:
    doc = json.loads((ROOT / case).read_text())
    return dict(doc["facts"])


def test_any_change_of_an_input_is_a_new_key(monkeypatch: pytest.MonkeyPatch) -> None:
    facts = _facts()
    texts = ["manifests/a.json", '{"x": 1}', "manifests/b.json", "[]"]
    base = plan_cache.key_of(facts, {}, texts)
    assert base is not None and base == plan_cache.key_of(json.loads(json.dumps(facts)), {}, list(texts))
    changed = json.loads(json.dumps(facts))
    changed["driver"]["version"] = "580.159.05"
    other_gpu = json.loads(json.dumps(facts))
    other_gpu["gpus"][0]["compute_capability"] = "10.0"
    keys = {
        base,
        plan_cache.key_of(changed, {}, texts),
        plan_cache.key_of(other_gpu, {}, texts),
        plan_cache.key_of({**facts, "extra": None}, {}, texts),
        plan_cache.key_of(facts, {"tp_size": 2}, texts),
        plan_cache.key_of(facts, {}, [*texts[:3], "[ ]"]),  # one manifest's text
        plan_cache.key_of(facts, {}, [texts[0], texts[1] + texts[2], texts[3], ""]),  # the same bytes, split apart
        plan_cache.key_of(facts, {}, texts[:2]),  # a file fewer
        plan_cache.key_of(facts, {}, ["manifests/c.json", *texts[1:]]),  # another origin
    }
    real_stamp = plan_cache._code_stamp()
    monkeypatch.setattr(plan_cache, "_code_stamp", lambda: [*real_stamp[:-1], ["x.py", 1, 2]])  # stackcheck edited
    keys.add(plan_cache.key_of(facts, {}, texts))
    assert len(keys) == 10
    assert plan_cache.key_of({"not json": object()}, {}, texts) is None


def test_a_deep_audit_finds_its_plan_again(cache: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The binary probe's time per package (binaries.<package>.duration_ms) differs on every --deep run; no
    rule and no plan reads it, so it is not part of the key: the second run with another time reads the
    plan the first kept (the planner is not run) and prints what a fresh audit does. What the plan does read
    (sass, ptx, files, truncated) still makes a new key."""
    doc = json.loads((ROOT / "examples/facts/h200-cu130.json").read_text())
    assert "duration_ms" in doc["facts"]["binaries"]["torch"]  # the case holds the measurement
    slow = tmp_path / "slow.json"
    slow_doc = json.loads(json.dumps(doc))
    slow_doc["facts"]["binaries"]["torch"]["duration_ms"] = 98765.4
    slow.write_text(json.dumps(slow_doc))
    fast = tmp_path / "fast.json"
    doc["facts"]["binaries"]["torch"]["duration_ms"] = 1.5
    fast.write_text(json.dumps(doc))
    fresh = audit(capsys, "--facts", str(slow), "--format", "json")  # the miss: computes and keeps
    assert len(list(cache.glob("*.json"))) == 1
    with pytest.MonkeyPatch.context() as mp:
        no_planner(mp)
        again = audit(capsys, "--facts", str(fast), "--format", "json")
    assert json.loads(again[1])["plan"] == json.loads(fresh[1])["plan"]
    assert again[0] == fresh[0]
    facts = doc["facts"]
    key = plan_cache.key_of(facts, {}, [])
    assert key == plan_cache.key_of(slow_doc["facts"], {}, [])
    assert facts["binaries"]["torch"]["duration_ms"] == 1.5  # the caller's facts are not changed
    for field, value in (("sass", ["sm_80"]), ("truncated", "time budget spent"), ("files", [])):
        other = json.loads(json.dumps(facts))
        other["binaries"]["torch"][field] = value
        assert plan_cache.key_of(other, {}, []) != key, field
    no_duration = json.loads(json.dumps(facts))
    del no_duration["binaries"]["torch"]["duration_ms"]
    assert plan_cache.key_of(no_duration, {}, []) == key


def test_no_manifest_reads_a_per_run_measurement() -> None:
    """What the key leaves out must be something no rule can read: no shipped manifest names it."""
    paths = sorted((ROOT / "stackcheck" / "manifests").glob("*.json"))
    assert len(paths) >= 5
    for path in paths:
        text = path.read_text()
        for measure in plan_cache._PER_RUN.values():
            assert measure not in text, (path.name, measure)


def test_code_stamp_sees_every_source_file() -> None:
    stamp = plan_cache._code_stamp()
    names = {row[0] for row in stamp[2:]}
    package = ROOT / "stackcheck"
    assert {str(p.relative_to(package)) for p in package.rglob("*.py") if "__pycache__" not in p.parts} <= names
    assert stamp[0] == __import__("stackcheck").__version__
    assert stamp[2][:2] == ["packaging", __import__("packaging").__file__]  # (by its files: _library_stamp)


def test_a_user_manifest_change_is_a_new_plan(
    cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = str(ROOT / CASES[1])
    user = tmp_path / "m"
    user.mkdir()
    (user / "meta.json").write_text(json.dumps({"data_version": "2099.01.01", "date": "2099-01-01"}))
    first = audit(capsys, "--facts", facts, "--manifests", str(user))
    (user / "meta.json").write_text(json.dumps({"data_version": "2099.01.02", "date": "2099-01-02"}))
    second = audit(capsys, "--facts", facts, "--manifests", str(user))
    assert len(list(cache.glob("*.json"))) == 2
    assert first[0] == second[0] == 1 and first != second  # writeup-after fails triton-ptxas (gather4 on 12.0)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    assert audit(capsys, "--facts", facts, "--manifests", str(user)) == second


def test_corrupt_foreign_or_wrong_entries_are_ignored(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = str(ROOT / CASES[0])
    fresh = audit(capsys, "--facts", facts)
    (entry,) = cache.iterdir()
    good = entry.read_text()
    doc = json.loads(good)
    for bad in [
        "{not json",
        "",
        json.dumps({**doc, "key": "0" * 64}),
        json.dumps({**doc, "format": 99}),
        json.dumps({**doc, "plan": ["a list"]}),
        "[" * 100000,
    ]:
        entry.write_text(bad)
        assert plan_cache.load(str(cache), entry.stem) is None
        assert audit(capsys, "--facts", facts) == fresh
        assert entry.read_text() == good  # computed again and kept again
    entry.chmod(0o644)
    cache.chmod(0o777)  # others may write the directory: nothing in it is trusted
    assert plan_cache.load(str(cache), entry.stem) is None
    cache.chmod(0o700)
    entry.chmod(0o620)
    assert plan_cache.load(str(cache), entry.stem) is None


def test_an_unwritable_cache_is_no_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(blocker))  # a file where the directory would be
    facts = str(ROOT / CASES[1])
    cached = audit(capsys, "--facts", facts)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    assert audit(capsys, "--facts", facts) == cached
    assert not plan_cache.store(str(blocker / "plan"), "k", {"a": 1})


def test_turned_off_writes_nothing(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "off")
    audit(capsys, "--facts", str(ROOT / CASES[0]))
    assert not cache.exists()
    assert plan_cache.cache_dir({"STACKCHECK_PLAN_CACHE": "0", "HOME": "/h"}) is None
    assert plan_cache.cache_dir({"HOME": "/h"}) == "/h/.cache/stackcheck/plan"
    assert plan_cache.cache_dir({"HOME": "/h", "XDG_CACHE_HOME": "/x"}) == "/x/stackcheck/plan"
    # a relative XDG_CACHE_HOME is ignored (XDG spec): before, the cache landed under the working directory
    assert plan_cache.cache_dir({"HOME": "/h", "XDG_CACHE_HOME": "."}) == "/h/.cache/stackcheck/plan"


def test_only_plain_json_is_kept_and_old_entries_go(tmp_path: Path) -> None:
    d = str(tmp_path / "p")
    assert not plan_cache.store(d, "t", {"steps": ("a tuple",)})
    assert not plan_cache.store(d, "f", {"x": float("nan")})
    assert not plan_cache.store(d, "k", {1: "int key"})  # type: ignore[dict-item]
    for i in range(plan_cache.MAX_ENTRIES + 5):
        assert plan_cache.store(d, f"k{i:03d}", {"i": i})
        os.utime(os.path.join(d, f"k{i:03d}.json"), ns=(i * 10**9, i * 10**9))
    plan_cache.store(d, "last", {"i": -1})
    left = sorted(os.listdir(d))
    assert len(left) == plan_cache.MAX_ENTRIES and "last.json" in left and "k000.json" not in left
    assert plan_cache.load(d, "last") == {"i": -1}


def test_a_hit_imports_neither_the_planner_nor_heavy_modules(cache: Path) -> None:
    code = (
        "import sys, io, contextlib\n"
        "from stackcheck.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['audit', '--facts', {str(ROOT / CASES[0])!r}, '--format', 'json'])\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)  # the miss
    mods = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    loaded = set(mods.stdout.split())
    assert "stackcheck.assembly.plan_cache" in loaded
    assert not {m for m in loaded if m.startswith("stackcheck.plan.") or m == "stackcheck.plan"}
    assert not loaded & {"hashlib", "tempfile", "pathlib", "subprocess", "dataclasses", "stackcheck.verdicts.engine"}


def test_a_probing_audit_from_the_cache_imports_no_dataclasses(cache: Path) -> None:
    """The probing audit's own modules are plain classes and NamedTuples: with the plan read from the
    cache, dataclasses (and inspect, ast's dis and tokenize with it: ~8 ms) are never imported."""
    code = (
        "import sys, io, contextlib\n"
        "from stackcheck.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['audit', '--format', 'json'])\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)  # the miss
    mods = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    loaded = set(mods.stdout.split())
    assert "stackcheck.probes.runner" in loaded  # it did probe
    assert not loaded & {"dataclasses", "inspect", "dis", "tokenize", "stackcheck.plan"}


def test_the_probe_records_keep_their_contract(tmp_path: Path) -> None:
    from stackcheck.assembly.target import Target
    from stackcheck.probes.interface import ProbeContext, ProbeResult
    from stackcheck.readers.fsview import FileStat, HostView

    ctx = ProbeContext(env={"A": "1"}, root=tmp_path)
    assert isinstance(ctx.view, HostView) and ctx.facts == {} and ctx.subprocess_timeout_s == 3.0
    assert ProbeContext().env == dict(os.environ)
    later = ctx.replace(facts={"python": {}}, deadline=5.0)
    assert (later.facts, later.deadline, later.env, later.root, later.view) == (
        {"python": {}},
        5.0,
        ctx.env,
        tmp_path,
        ctx.view,
    )
    assert ctx.facts == {} and ctx.deadline is None  # the original is unchanged
    assert later == ctx.replace(facts={"python": {}}, deadline=5.0) and later != ctx
    assert repr(ctx).startswith("ProbeContext(env={'A': '1'}, root=")
    assert ProbeResult({"x": 1}) == ProbeResult(facts={"x": 1}, status="ok", reason=None)
    assert FileStat("file", 1, 2.0) == FileStat(kind="file", size=1, mtime=2.0, mode=0o644)
    t = Target("/usr/bin/python3", "PATH")
    assert t.env == {} and t.notes == () and not t.explicit
    with pytest.raises(AttributeError):
        t.executable = "x"  # type: ignore[misc]


# ---- `stackcheck plan` of the box as it is: the audit's plan, from the same entry ----------------------------

#: its implied version (a sglang 0.5.x pin) turns a verdict bad: `plan` plans the verdicts as reported, not the
#: audit's (the stated facts'), so it plans again rather than read the audit's entry
IMPLIED_CHANGES = "tests/realworld/sglang-35080-gdn-flashinfer-gate-b300/facts.json"


def plan(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["plan", *argv])
    return code, capsys.readouterr().out


def count_plans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = stackcheck.plan.make_plan

    def counted(*a: Any, **k: Any) -> Any:
        calls[0] += 1
        return real(*a, **k)

    monkeypatch.setattr(stackcheck.plan, "make_plan", counted)
    return calls


@pytest.mark.parametrize("case", [*CASES, IMPLIED_CHANGES])
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_plan_reads_the_audits_entry_and_prints_what_a_fresh_plan_does(
    case: str, fmt: str, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = str(ROOT / case)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    fresh = plan(capsys, "--facts", facts, "--format", fmt)
    assert not cache.exists()
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    audit(capsys, "--facts", facts, "--format", "json")  # keeps the audit's plan and verdicts
    calls = count_plans(monkeypatch)
    assert plan(capsys, "--facts", facts, "--format", fmt) == fresh
    assert plan(capsys, "--facts", facts, "--format", fmt) == fresh
    assert calls[0] == (2 if case == IMPLIED_CHANGES else 0)  # the audit's plan, unless the verdicts it plans differ


def test_plan_keeps_its_plan_for_the_next_plan(cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    facts = str(ROOT / CASES[1])
    first = plan(capsys, "--facts", facts)
    assert len(list(cache.glob("*.json"))) == 1
    assert plan(capsys, "--facts", facts) == first


@pytest.mark.parametrize("request_args", [["--want", "attention-fa4"], ["--hold", "driver"], ["--to", "sglang==0.5.9"]])
def test_a_plan_with_a_request_plans_again(
    request_args: list[str], cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = str(ROOT / CASES[2])
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    fresh = plan(capsys, "--facts", facts, "--format", "json", *request_args)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    audit(capsys, "--facts", facts, "--format", "json")
    calls = count_plans(monkeypatch)
    assert plan(capsys, "--facts", facts, "--format", "json", *request_args) == fresh
    assert calls[0] == 1
    assert '"request"' in fresh[1]


def test_a_plan_from_the_cache_imports_no_planner(cache: Path) -> None:
    code = (
        "import sys, io, contextlib\n"
        "from stackcheck.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['plan', '--facts', {str(ROOT / CASES[1])!r}])\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)  # the miss
    mods = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    loaded = set(mods.stdout.split())
    assert "stackcheck.assembly.plan_cache" in loaded
    assert not {m for m in loaded if m.startswith("stackcheck.plan.") or m == "stackcheck.plan"}
    assert "stackcheck.verdicts.engine" not in loaded


def test_a_prepared_key_is_the_same_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """prepare() (the loading thread's share of the key: the manifests' texts and the code stamp, issue 21) gives
    the key key_of gives without it; it serves only the list it was given, while that list is as it was, once."""
    monkeypatch.setattr(plan_cache, "_PREPARED", [])
    facts = _facts()
    texts = ["manifests/a.json", '{"x": 1}', "manifests/b.json", "[]"]
    want = plan_cache.key_of(facts, {}, texts)
    stamps: list[int] = []
    real_stamp = plan_cache._code_stamp

    def counted() -> list[Any]:
        stamps.append(1)
        return real_stamp()

    monkeypatch.setattr(plan_cache, "_code_stamp", counted)
    plan_cache.prepare(texts)
    assert len(stamps) == 1
    assert plan_cache.key_of(facts, {}, texts) == want and len(stamps) == 1  # served by prepare
    assert plan_cache.key_of(facts, {}, texts) == want and len(stamps) == 2  # once: then computed again
    plan_cache.prepare(texts)
    assert plan_cache.key_of(facts, {}, list(texts)) == want and len(stamps) == 4  # another list: not served
    plan_cache.prepare(texts)
    texts += ["manifests/c.json", "{}"]
    assert plan_cache.key_of(facts, {}, texts) != want  # the list grew after prepare: not served its old part
    plan_cache.prepare(texts)
    grown = plan_cache.key_of(facts, {}, texts)
    assert grown == plan_cache.key_of(facts, {}, list(texts)) != want


def test_a_live_audit_hashes_the_manifests_beside_the_probes(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The live audit's and the live gate's key hash the manifests' texts in the thread that reads them, while the
    probes wait on the driver; the key is the one a plain key_of gives (the audit then reads the entry it kept)."""
    import threading

    where: list[str] = []
    real = plan_cache.prepare

    def noted(texts: list[str], stamp: Any = None) -> None:
        where.append(threading.current_thread().name)
        real(texts, stamp)

    monkeypatch.setattr(plan_cache, "prepare", noted)
    monkeypatch.setattr(plan_cache, "_PREPARED", [])
    argv = ["--assume-gpu", "9.0", "--assume-driver", "580.82.07", "--format", "json"]
    code, first = audit(capsys, *argv)
    assert code in (0, 1) and where and "MainThread" not in where
    entries = list(cache.glob("*.json"))
    assert len(entries) == 1
    monkeypatch.setattr(plan_cache, "prepare", lambda texts: None)  # no prepare: key_of computes it all
    code2, second = audit(capsys, *argv)
    assert code2 == code and list(cache.glob("*.json")) == entries  # the same key: the entry read, none added
    a, b = json.loads(first), json.loads(second)  # (the probes' durations differ from run to run)
    assert [a[k] for k in ("features", "checks", "plan")] == [b[k] for k in ("features", "checks", "plan")]
    where.clear()
    monkeypatch.setattr(plan_cache, "prepare", noted)
    main(["gate", "--dry-run", *argv[:4], "--", "python", "-m", "sglang.launch_server", "--model-path", "m"])
    capsys.readouterr()
    assert where and "MainThread" not in where


def test_the_kernel_symbol_probe_time_is_not_part_of_the_key() -> None:
    """facts.kernel_symbols.ms (the probe's own time) differs on every live audit of a box with a kernel
    package: with it in the key the plan cache never hit there. What the checks read (the files' counts and
    missing names) still makes a new key."""
    section = {
        "package": "sgl-kernel",
        "version": "0.3.0",
        "files": [{"path": "sgl_kernel/common_ops.abi3.so", "torch_symbols": 3, "torch_missing_count": 0}],
        "bytes_read": 4096,
        "ms": 5.31,
    }
    facts: dict[str, Any] = {"packages": {}, "kernel_symbols": section}
    key = plan_cache.key_of(facts, {}, [])
    assert plan_cache.key_of({**facts, "kernel_symbols": {**section, "ms": 7.02}}, {}, []) == key
    assert section["ms"] == 5.31  # the caller's facts are not changed
    other = json.loads(json.dumps(facts))
    other["kernel_symbols"]["files"][0]["torch_missing_count"] = 1
    assert plan_cache.key_of(other, {}, []) != key


def _shipped_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the shipped manifests, read by the loader as the package directory's."""
    from stackcheck.knowledge import package_data

    copy = tmp_path / "pkg-manifests"
    copy.mkdir()
    for name in package_data.MANIFEST_FILES:
        (copy / name).write_bytes((ROOT / "manifests" / name).read_bytes())
    real = package_data._package_dir
    monkeypatch.setattr(package_data, "_package_dir", lambda n: str(copy) if n == "manifests" else real(n))
    # (the copies were written just now, within a tick of the file system's clock, where no stamp is trusted and
    # each run's key is its own: package_data.shipped_files; these runs come later)
    monkeypatch.setattr(package_data, "_now_ns", lambda: time.time_ns() + 60 * 10**9)
    return copy


def _key_and_manifests(facts: dict[str, Any]) -> tuple[str | None, Any]:
    from stackcheck.knowledge.loader import load

    texts: list[str] = []
    m = load([], env={}, texts_out=texts)
    return plan_cache.key_of(facts, {}, texts), m


def test_a_shipped_manifest_edited_in_place_is_a_new_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped files enter the key by their stamp (size, modification and change times, inode, device), not
    their text: an unchanged set gives the same key (the cache still hits); an edit that keeps the size and
    sets the modification time back still changes the key (the change time moves), as does a replaced file;
    and the documents read later are the files' texts as they are."""
    copy = _shipped_copy(tmp_path, monkeypatch)
    facts = _facts()
    base, m = _key_and_manifests(facts)
    assert base is not None and base == _key_and_manifests(facts)[0]
    assert m.doc("meta.json") == json.loads((copy / "meta.json").read_text())
    meta = copy / "meta.json"
    text = meta.read_text()
    before = meta.stat()
    date = json.loads(text)["date"]
    edited = text.replace(f'"{date}"', f'"{date[:-1]}{"1" if date[-1] != "1" else "2"}"', 1)  # the same size
    assert edited != text and len(edited) == len(text)
    meta.write_text(edited)
    os.utime(meta, ns=(before.st_atime_ns, before.st_mtime_ns))  # the same modification time as before
    assert meta.stat().st_mtime_ns == before.st_mtime_ns
    same_size_edit, m2 = _key_and_manifests(facts)
    assert same_size_edit not in (None, base)
    assert m2.date == json.loads(meta.read_text())["date"]
    replaced = tmp_path / "meta.json.new"
    replaced.write_text(text)
    os.replace(replaced, meta)
    assert _key_and_manifests(facts)[0] not in (None, base, same_size_edit)


def test_shipped_documents_are_read_when_first_used_and_a_vanished_file_is_a_manifest_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stackcheck.errors import ManifestError

    copy = _shipped_copy(tmp_path, monkeypatch)
    _key, m = _key_and_manifests(_facts())
    (copy / "signatures.json").unlink()
    assert m.doc("meta.json") is not None
    with pytest.raises(ManifestError, match=r"manifests/signatures.json: cannot be read"):
        m.doc("signatures.json")


def count_merges(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the merges of a facts file's implied versions into the verdicts (facts.implied.apply)."""
    import stackcheck.facts.implied as implied

    calls = [0]
    real = implied.apply

    def counted(*a: Any, **k: Any) -> Any:
        calls[0] += 1
        return real(*a, **k)

    monkeypatch.setattr(implied, "apply", counted)
    return calls


@pytest.mark.parametrize("verb", ["audit", "plan"])
@pytest.mark.parametrize("fmt", ["json", "text", "markdown"])
def test_the_implied_merge_is_kept_with_the_verdicts(
    verb: str, fmt: str, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A facts file's implied versions merged into the kept verdicts are kept in the entry (per way: features
    and checks, or the features alone for a plan's text): a run that finds them merges nothing again (so reads
    no release) and prints what a fresh run prints; a merge of the wrong shape is made again."""
    facts = str(ROOT / "tests" / "cases" / "writeup-before" / "facts.json")
    run = audit if verb == "audit" else plan
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    fresh = run(capsys, "--facts", facts, "--format", fmt)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    calls = count_merges(monkeypatch)
    assert run(capsys, "--facts", facts, "--format", fmt) == fresh  # a miss: merged and kept
    assert calls[0] == 1
    (entry,) = cache.iterdir()
    kept = json.loads(entry.read_text())
    assert kept["merged"] and all(ways.get("implied") for ways in kept["merged"].values())
    assert run(capsys, "--facts", facts, "--format", fmt) == fresh  # a hit: nothing merged again
    assert calls[0] == 1
    kept["merged"] = {way: {"features": "not a list"} for way in kept["merged"]}
    entry.write_text(json.dumps(kept))
    assert run(capsys, "--facts", facts, "--format", fmt) == fresh  # the wrong shape: merged again, and kept
    assert calls[0] == 2
    assert run(capsys, "--facts", facts, "--format", fmt) == fresh
    assert calls[0] == 2


@pytest.mark.parametrize("fmt", ["json", "text"])
@pytest.mark.parametrize("case", [CASES[1], CASES[2]])
def test_a_plan_with_a_request_judges_from_the_kept_verdicts(
    case: str, fmt: str, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`plan --want` plans again (no kept plan answers a request), from the verdicts (and the implied merge) of
    the entry an audit kept: the stack is not judged again, and it prints what it prints without the cache. With
    no entry it keeps none (nothing is kept without the plan of the box)."""
    facts = str(ROOT / case)
    want = ("--want", "torch-symm-mem")
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    fresh = plan(capsys, "--facts", facts, "--format", fmt, *want)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    assert plan(capsys, "--facts", facts, "--format", fmt, *want) == fresh  # no entry: judged, nothing kept
    assert not cache.exists() or not list(cache.glob("*.json"))
    audit(capsys, "--facts", facts, "--format", "json")
    judged = count_judgements(monkeypatch)
    merges = count_merges(monkeypatch)
    calls = count_plans(monkeypatch)
    assert plan(capsys, "--facts", facts, "--format", fmt, *want) == fresh
    assert plan(capsys, "--facts", facts, "--format", fmt, *want) == fresh
    assert calls[0] == 2 and judged[0] == 0
    assert merges[0] <= 1  # (text merges into the features alone: once, then kept with the entry)


def test_a_fifo_at_an_entry_is_not_waited_on(tmp_path: Path) -> None:
    """A FIFO where an entry would be (made by hand, or a leftover): before, load_entry opened it for reading and
    waited for a writer forever; now it is no entry (not a regular file)."""
    directory = tmp_path / "plan"
    directory.mkdir(mode=0o700)
    os.mkfifo(directory / "k.json")
    code = "import sys; from stackcheck.assembly import plan_cache; print(plan_cache.load_entry(sys.argv[1], 'k'))"
    done = subprocess.run(
        [sys.executable, "-c", code, str(directory)],
        capture_output=True,
        text=True,
        timeout=20,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0 and done.stdout.strip() == "None", done.stderr


def _entries(directory: Path, count: int) -> list[str]:
    names = []
    for n in range(count):
        path = directory / f"{n:04d}.json"
        path.write_text("{}")
        os.utime(path, ns=(n * 10**9, n * 10**9))  # 0000 oldest
        names.append(path.name)
    return names


def test_prune_keeps_the_newest_entries_of_a_private_directory(tmp_path: Path) -> None:
    cache = tmp_path / "plan"
    cache.mkdir(mode=0o700)
    names = _entries(cache, plan_cache.MAX_ENTRIES + 3)
    plan_cache._prune(str(cache))
    assert sorted(p.name for p in cache.iterdir()) == names[3:]


def test_prune_removes_nothing_through_a_link_or_in_a_shared_directory(tmp_path: Path) -> None:
    # a cache directory whose parent others may write can be swapped for a link to another directory of the user's:
    # pruning it must not delete that directory's .json files (iadv: plan_cache's clean-up followed the link)
    victim = tmp_path / "work"
    victim.mkdir(mode=0o700)
    names = _entries(victim, plan_cache.MAX_ENTRIES + 3)
    link = tmp_path / "plan"
    link.symlink_to(victim, target_is_directory=True)
    plan_cache._prune(str(link))
    assert sorted(p.name for p in victim.iterdir()) == names
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    names = _entries(shared, plan_cache.MAX_ENTRIES + 3)
    plan_cache._prune(str(shared))
    assert sorted(p.name for p in shared.iterdir()) == names


@pytest.mark.parametrize("want", [("torch-symm-mem",), ("attention-fa4",), ("deepgemm", "mxfp8")])
def test_a_plan_with_a_request_reads_the_kept_upstream_answers(
    want: tuple[str, ...], cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which stack would unblock a feature is a function of the facts and the manifests: an audit keeps the answers
    with its verdicts (plan_cache.Entry.upstream: the features blocked after its plan and on the box as it is),
    and `plan --want` reads them instead of judging one stack per SGLang release again. It prints what it
    prints without the cache; an entry whose answers are not of their shape is read without them."""
    from stackcheck.plan import planner

    facts = str(ROOT / "tests/cases/writeup-before/facts.json")
    argv = ("--facts", facts, "--want", *want)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    fresh = plan(capsys, *argv)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    audit(capsys, "--facts", facts, "--format", "json")
    (entry,) = cache.glob("*.json")
    doc = json.loads(entry.read_text())
    assert doc["upstream"].get("torch-symm-mem", "x") is None  # no release makes it ok
    assert isinstance(doc["upstream"].get("attention-fa4"), str)  # blocked on the box, ok on a newer stack
    asked: list[str] = []
    real = planner._upstream_ok

    def upstream_ok(*a: Any) -> Any:
        asked.extend(f for f in a[4] if f not in (a[5] or {}))  # a feature whose answer the planner lacks
        return real(*a)

    monkeypatch.setattr(planner, "_upstream_ok", upstream_ok)
    assert plan(capsys, *argv) == fresh
    assert asked == []  # every blocked feature's answer was kept
    bad: Any
    for bad in ([], {"attention-fa4": 1}, "x"):
        entry.write_text(json.dumps({**doc, "upstream": bad}))
        assert plan_cache.load_entry(str(cache), entry.stem).upstream == {}  # type: ignore[union-attr]
        assert plan(capsys, *argv) == fresh
