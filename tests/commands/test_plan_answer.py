"""The kept answer of `stackcheck plan --facts FILE ...` (stackcheck.assembly.plan_cache, Answer; served by
stackcheck.cli before any parser is built): it prints what the ordinary path prints, with its exit status; its key
moves with everything the text reads; a command line that reads or writes anything else has none; nothing is kept
that wrote to standard error or that shows the moment of the run; a corrupt or foreign answer is no answer."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck import cli
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
REQUESTS = [
    (),
    ("--want", "torch-symm-mem"),
    ("--format", "json"),
    ("--format", "markdown", "--sources"),
    ("--want", "attention_fa4", "--hold", "driver", "--to", "sglang==0.5.9"),
]


@pytest.fixture
def answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("STACKCHECK_MANIFESTS", raising=False)
    return tmp_path / "c" / "answer"


def plan(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["plan", *argv])
    got = capsys.readouterr()
    return code, got.out, got.err


def no_ordinary_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: Any, **k: Any) -> int:
        raise AssertionError("the ordinary path ran")

    monkeypatch.setattr(cli, "_verb", boom)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: " ".join(r) or "plain")
def test_an_answer_prints_what_the_plan_prints(
    case: str, request_: tuple[str, ...], answers: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    argv = ("--facts", str(ROOT / case), *request_)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    fresh = plan(capsys, *argv)
    assert fresh[0] in (0, 1) and fresh[2] == ""
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    assert plan(capsys, *argv) == fresh  # a miss: the ordinary path, its answer kept
    assert len(list(answers.iterdir())) == 1
    with monkeypatch.context() as m:
        no_ordinary_path(m)
        assert plan(capsys, *argv) == fresh  # a hit: the same text and exit status, nothing judged


def test_a_plan_that_no_release_makes_is_served_with_its_status(answers: Path, capsys: Any, monkeypatch: Any) -> None:
    argv = ("--facts", str(ROOT / "tests/cases/writeup-before/facts.json"), "--want", "torch-symm-mem")
    first = plan(capsys, *argv)
    assert first[0] == 1 and "no plan: torch-symm-mem" in first[1]
    no_ordinary_path(monkeypatch)
    assert plan(capsys, *argv) == first


FACTS = str(ROOT / "tests/cases/writeup-after/facts.json")


@pytest.mark.parametrize(
    "argv",
    [
        ["plan"],
        ["audit", "--facts", FACTS],
        ["plan", "--facts", "-"],
        ["plan", "--facts"],
        ["plan", "--facts", FACTS, "--facts", FACTS],
        ["plan", "--facts", FACTS, "--output", "/tmp/x"],
        ["plan", "--facts", FACTS, "--manifests", "/tmp"],
        ["plan", "--fact", FACTS],  # an abbreviation: argparse's to read, not this one's
        ["plan", "--facts", FACTS, "-h"],
        ["plan", "--facts", FACTS, "--assume-gpu", "9.0"],
        ["plan", "--facts", FACTS, "--", "x"],
        ["plan", "--facts", str(ROOT / "tests")],
        ["plan", "--facts", str(ROOT / "no-such-file.json")],
    ],
)
def test_a_command_line_that_reads_or_writes_more_has_no_answer(argv: list[str], answers: Path) -> None:
    assert plan_cache.answer_for(argv) is None


def test_no_answer_for_a_pipe(answers: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "facts.fifo"
    os.mkfifo(fifo)
    assert plan_cache.answer_for(["plan", "--facts", str(fifo)]) is None  # (and it was not read: no writer waits)


def test_no_answer_without_the_cache_or_with_user_manifests(answers: Path, monkeypatch: Any) -> None:
    argv = ["plan", "--facts", FACTS]
    assert plan_cache.answer_for(argv) is not None
    assert plan_cache.answer_for(argv, {**os.environ, "STACKCHECK_MANIFESTS": "/tmp"}) is None
    assert plan_cache.answer_for(argv, {**os.environ, "STACKCHECK_PLAN_CACHE": "off"}) is None
    assert plan_cache.answer_for(["plan", f"--facts={FACTS}", "--want", "fa3"]) is not None


def _key(argv: list[str], env: dict[str, str] | None = None) -> str:
    answer = plan_cache.answer_for(argv, env)
    assert answer is not None
    return answer.key


def test_the_key_moves_with_what_the_text_reads(answers: Path, tmp_path: Path, monkeypatch: Any) -> None:
    argv = ["plan", "--facts", FACTS]
    base = _key(argv)
    assert _key(argv) == base
    env = dict(os.environ)
    assert _key(argv, {**env, "NO_COLOR": "1"}) != base
    assert _key(argv, {**env, "COLUMNS": "100"}) != base
    assert _key(argv, {**env, "LC_ALL": "C"}) != base
    assert _key(["plan", "--facts", FACTS, "--format", "json"]) != base
    assert _key(["plan", "--format", "json", "--facts", FACTS]) != _key(["plan", "--facts", FACTS, "--format", "json"])
    copy = tmp_path / "facts.json"
    text = Path(FACTS).read_text(encoding="utf-8")
    copy.write_text(text, encoding="utf-8")
    same = _key(["plan", "--facts", str(copy)])
    copy.write_text(text + " ", encoding="utf-8")  # other bytes, the same facts: another key
    assert _key(["plan", "--facts", str(copy)]) != same
    monkeypatch.chdir(tmp_path)
    assert _key(argv) != base  # (a relative path names another file there)
    monkeypatch.chdir(ROOT)
    assert _key(argv) == base
    with monkeypatch.context() as m:
        m.setattr(plan_cache, "_code_stamp", lambda: ["another stackcheck"])
        assert _key(argv) != base
    assert _key(argv) == base
    from stackcheck.knowledge import package_data

    real = package_data.shipped_files

    def edited() -> Any:
        files = dict(real() or {})
        files["features.json"] = (*files["features.json"][:2], "\0file edited")
        return files

    monkeypatch.setattr(package_data, "shipped_files", edited)
    assert _key(argv) != base


def test_an_answer_that_wrote_to_standard_error_is_not_kept(
    answers: Path, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    code, out, err = plan(capsys, "--facts", FACTS, "--format", "table")  # the old name: a note on stderr
    assert "is now called text" in err
    assert not answers.exists() or not list(answers.iterdir())
    doc = json.loads(Path(FACTS).read_text(encoding="utf-8"))
    doc["facts"]["pakages"] = {}  # a typo: a warning
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(doc), encoding="utf-8")
    code, out, err = plan(capsys, "--facts", str(odd))
    assert "unknown facts section" in err
    assert not answers.exists() or not list(answers.iterdir())
    assert plan(capsys, "--facts", str(odd)) == (code, out, err)  # the warning again: still the ordinary path


@pytest.mark.parametrize("host", [{}, None, "absent"])
def test_an_answer_that_shows_the_moment_is_not_kept(
    host: Any, answers: Path, tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    doc = json.loads(Path(FACTS).read_text(encoding="utf-8"))
    if host == "absent":
        doc.pop("host", None)
    else:
        doc["host"] = host
    path = tmp_path / "box.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    first = plan(capsys, "--facts", str(path), "--format", "json")
    kept = answers.exists() and len(list(answers.iterdir())) == 1
    # an empty block is shown as this host now (its name, the time of the run); no block, or null, as the file
    assert kept == (host != {})
    if host == {}:
        assert json.loads(first[1])["host"]["collected_at"]
    else:
        assert json.loads(first[1])["host"] == {"facts_file": str(path)}


def test_a_corrupt_or_foreign_answer_is_no_answer(answers: Path, capsys: Any, monkeypatch: Any) -> None:
    argv = ("--facts", FACTS)
    first = plan(capsys, *argv)
    (entry,) = answers.iterdir()
    good = entry.read_bytes()
    head, _, body = good.partition(b"\n")
    for bad in (
        b"",
        b"garbage",
        head.replace(b" 0 ", b" 2 ") + b"\n" + body,  # an exit status never kept
        head + b"\n" + body + b"more",  # not the length it says
        head.replace(entry.name.encode(), b"0" * 64) + b"\n" + body,  # another key's
    ):
        entry.write_bytes(bad)
        assert plan(capsys, *argv) == first
        assert entry.read_bytes() == good  # made again and kept again
    entry.chmod(0o666)  # others may write it: never read
    entry.write_bytes(head + b"\n" + body.replace(b"plan:", b"PLAN:"))
    assert plan(capsys, *argv) == first


def test_a_miss_scans_the_code_once(answers: Path, capsys: Any, monkeypatch: Any) -> None:
    real = plan_cache._code_stamp
    scans: list[int] = []

    def counted() -> list[Any]:
        scans.append(1)
        return real()

    monkeypatch.setattr(plan_cache, "_code_stamp", counted)
    first = plan(capsys, "--facts", FACTS)  # the answer's key and the plan entry's key: one stamp
    assert len(scans) == 1 and len(list(answers.iterdir())) == 1
    assert len(list((answers.parent / "plan").iterdir())) == 1
    monkeypatch.setattr(plan_cache, "answer_for", lambda *a, **k: None)
    assert plan(capsys, "--facts", FACTS) == first  # the plan entry kept under that stamp is found again
    assert len(scans) == 2 and len(list((answers.parent / "plan").iterdir())) == 1


def test_facts_changed_while_planning_are_not_kept(answers: Path, tmp_path: Path) -> None:
    path = tmp_path / "box.json"
    path.write_text(Path(FACTS).read_text(encoding="utf-8"), encoding="utf-8")
    answer = plan_cache.answer_for(["plan", "--facts", str(path)])
    assert answer is not None
    answer.text = "the plan\n"
    path.write_text(Path(FACTS).read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert not plan_cache.keep_answer(answer, 0)
    path.write_text(Path(FACTS).read_text(encoding="utf-8"), encoding="utf-8")
    assert not plan_cache.keep_answer(answer, 2)  # a usage error or bad input is never kept
    assert plan_cache.keep_answer(answer, 0)
    assert plan_cache.read_answer(answer) == ("the plan\n", 0)


def test_a_served_answer_imports_no_parser_nor_manifests(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "from stackcheck.cli import main\n"
        "rc = main(sys.argv[1:])\n"
        "sys.stderr.write(json.dumps([rc, sorted(sys.modules)]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STACKCHECK_PLAN_CACHE": "1"}
    env["STACKCHECK_CACHE_DIR"] = str(tmp_path / "cache")
    argv = ["plan", "--facts", "tests/cases/writeup-before/facts.json", "--want", "torch-symm-mem"]
    runs = [
        subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, cwd=ROOT)
        for _ in range(2)
    ]
    (rc0, first), (rc1, second) = (json.loads(r.stderr.strip().splitlines()[-1]) for r in runs)
    assert rc0 == rc1 == 1 and runs[0].stdout == runs[1].stdout and "no plan" in runs[1].stdout
    # the first run plans (manifests read) with its arguments read without the parser (commands.plan.args_of)
    assert "argparse" not in first and "stackcheck.knowledge.loader" in first
    served = set(second) - {"json", "json.decoder", "json.scanner", "json.encoder", "re", "enum"}  # (the -c's json)
    for heavy in ("argparse", "stackcheck.knowledge.loader", "stackcheck.assembly.pipeline", "stackcheck.render"):
        assert heavy not in served


def _sglang_releases() -> list[str]:
    from stackcheck.knowledge.loader import load

    return [str(r["version"]) for r in load([]).releases("sglang")]


@st.composite
def generated(draw: st.DrawFn) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A case's facts document with its driver, GPUs and SGLang release drawn, and a request."""
    doc = json.loads((ROOT / draw(st.sampled_from(CASES))).read_text(encoding="utf-8"))
    facts = doc["facts"]
    if draw(st.booleans()):
        version = draw(st.sampled_from(["535.288.01", "570.172.08", "575.57.08", "580.95.05", "590.44.01"]))
        facts["driver"] = {"version": version, "cuda": None, "source": "nvml"}
    if draw(st.booleans()):
        cc, name = draw(st.sampled_from([("9.0", "NVIDIA H100"), ("10.0", "NVIDIA B200"), ("12.0", "RTX PRO 6000")]))
        n = draw(st.sampled_from([1, 2, 8]))
        facts["gpus"] = [{"index": i, "name": name, "compute_capability": cc} for i in range(n)]
    if draw(st.booleans()) and isinstance(facts.get("packages"), dict):
        version = draw(st.sampled_from(_sglang_releases()))
        facts["packages"]["sglang"] = {"installed": True, "version": version, "dist_version": version}
    return doc, draw(st.sampled_from(REQUESTS))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=generated())
def test_generated_boxes_are_served_what_the_ordinary_path_prints(case: tuple[dict[str, Any], tuple[str, ...]]) -> None:
    doc, request = case
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as m:
        path = Path(tmp) / "box.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        m.setenv("STACKCHECK_CACHE_DIR", str(Path(tmp) / "c"))
        m.delenv("STACKCHECK_MANIFESTS", raising=False)
        argv = ["plan", "--facts", str(path), *request]
        runs = []
        for cache in ("0", "1", "1"):  # the reference (no cache), the miss that keeps the answer, the hit
            m.setenv("STACKCHECK_PLAN_CACHE", cache)
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(argv)
            runs.append((code, out.getvalue(), err.getvalue()))
        assert runs[0] == runs[1] == runs[2]
        answers = Path(tmp) / "c" / "answer"
        kept = answers.exists() and len(list(answers.iterdir())) == 1
        assert kept == (runs[0][0] in (0, 1) and not runs[0][2])
