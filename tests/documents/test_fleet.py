"""stackcheck fleet: aggregation, drift, waves, duplicates, bad inputs, formats, exit codes, workers."""

from __future__ import annotations

import copy
import csv
import io
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from stackcheck.cli import main
from stackcheck.documents import fleet as fleet_mod
from stackcheck.documents.fleet import NotAReport, parse_document, read_fleet
from stackcheck.documents.types import Report
from stackcheck.render.fleet import render_csv, render_markdown, render_text

ROOT = Path(__file__).resolve().parent.parent.parent
_BASE: dict[str, Report] = {}


def base(case: str) -> dict[str, Any]:
    if case not in _BASE:
        from stackcheck.assembly.options import Options
        from stackcheck.assembly.pipeline import build_report

        _BASE[case], _ = build_report(Options(facts_file=str(ROOT / "tests" / "cases" / case / "facts.json")))
    return cast("dict[str, Any]", copy.deepcopy(_BASE[case]))  # the fleet reads it as a saved report


def report(
    case: str,
    host: str,
    at: str = "2026-11-29T00:00:00Z",
    sglang: str | None = None,
    steps: Sequence[tuple[str, str | None, str]] | None = None,
) -> dict[str, Any]:
    r = base(case)
    r["host"] = {"hostname": host, "collected_at": at}
    if sglang is not None:
        r["facts"]["packages"]["sglang"]["version"] = sglang
    if steps is not None:
        r["plan"] = {
            "steps": [
                {"component": c, "from": f, "to": t, "commands": [], "unblocks": [], "reason": "test"}
                for c, f, t in steps
            ],
            "still_blocked": [],
        }
    return r


def write(path: Path, doc: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


UPGRADE = [("sglang", "0.5.9", "0.5.23"), ("flashinfer-python", "0.6.4", "0.7.2")]


@pytest.fixture
def fleet_dir(tmp_path: Path) -> Path:
    d = tmp_path / "reports"
    for i in range(5):
        write(d / f"rtx{i}.json", report("writeup-after", f"rtx{i}", steps=UPGRADE))
    write(d / "rtx5.json", report("writeup-after", "rtx5", sglang="0.5.20", steps=UPGRADE[1:]))
    write(d / "sub" / "h200-a.json", report("h200-newest", "h200-a", steps=[]))
    write(d / "sub" / "deeper" / "h200-b.json", report("h200-newest", "h200-b", steps=[]))
    # rtx0 reported twice: the older report is in a later file
    write(d / "zz-old" / "rtx0.json", report("writeup-before", "rtx0", at="2026-01-01T00:00:00Z"))
    (d / "notes.txt").write_text("not json, and not *.json: never read")
    return d


def test_summary_counts(fleet_dir: Path) -> None:
    f = read_fleet([str(fleet_dir)], jobs=1)
    s = f.summary()
    assert s["inputs"] == {"documents": 9, "reports": 9, "hosts": 8, "duplicates_dropped": 1, "bad": 0}
    models = {m["model"]: (m["hosts"], m["gpus"]) for m in s["gpu_models"]}
    assert models == {"NVIDIA RTX PRO 6000 Blackwell Server Edition": (6, 48), "NVIDIA H200": (2, 16)}
    rtx_stacks = [st for st in s["stacks"] if st["model"].startswith("NVIDIA RTX")]
    assert [(st["sglang"], st["hosts"], st["common"]) for st in rtx_stacks] == [
        ("0.5.9", 5, True),
        ("0.5.20", 1, False),
    ]
    assert rtx_stacks[0]["torch"] == "2.9.1+cu130"
    assert rtx_stacks[0]["driver"] == "580.95.05"
    assert rtx_stacks[0]["kernels"] == "sgl-kernel 0.3.21+cu130"
    symm = next(x for x in s["features"] if x["feature"] == "torch-symm-mem")
    assert symm["hosts"]["blocked"] == 6
    assert symm["blocked_effects"] == {"crash": 6}
    assert sum(symm["hosts"].values()) == 8
    # the write-up box's metadata pin (flashinfer 0.6.4 where 0.6.3 is pinned) is a warning; its Triton 3.5.1 on
    # SM 12.0 fails triton-ptxas (TMA gather4: MXFP4 MoE launches crash), so the 6 RTX hosts are not consistent
    assert s["consistent"] == {"false": 6, "true": 2}


def test_drift(fleet_dir: Path) -> None:
    s = read_fleet([str(fleet_dir)], jobs=1).summary()
    assert len(s["drift"]) == 1
    d = s["drift"][0]
    assert d["hosts"] == ["rtx5"]
    assert d["differs_in"] == ["sglang"]
    assert d["common_stack"]["sglang"] == "0.5.9"
    assert d["stack"]["sglang"] == "0.5.20"


def test_drift_tie_takes_the_newer_stack_as_the_common_one(tmp_path: Path) -> None:
    """One host on the write-up's old stack, one already upgraded: the old one is the drift, not the new."""
    d = tmp_path / "tie"
    write(d / "old.json", report("writeup-before", "old-host"))
    write(d / "new.json", report("writeup-after", "new-host"))
    s = read_fleet([str(d)], jobs=1).summary()
    assert [x["hosts"] for x in s["drift"]] == [["old-host"]]


def test_waves(fleet_dir: Path) -> None:
    s = read_fleet([str(fleet_dir)], jobs=1).summary()
    waves = s["waves"]
    assert [w["count"] for w in waves] == [5, 1]
    assert waves[0]["hosts"] == ["rtx0", "rtx1", "rtx2", "rtx3", "rtx4"]
    assert [(x["component"], x["from"], x["to"]) for x in waves[0]["steps"]] == UPGRADE
    assert waves[1]["hosts"] == ["rtx5"]
    assert [w["wave"] for w in waves] == [1, 2]


def test_duplicates_keep_newest_whatever_the_order(tmp_path: Path) -> None:
    new = report("writeup-after", "box", at="2026-11-29T10:00:00+00:00")
    old = report("writeup-before", "box", at="2026-11-29T09:00:00Z")
    for first, second in ((new, old), (old, new)):
        d = tmp_path / f"order{first is new}"
        write(d / "a.json", first)
        write(d / "b.json", second)
        f = read_fleet([str(d)], jobs=1)
        s = f.summary()
        assert s["inputs"]["hosts"] == 1
        assert s["inputs"]["duplicates_dropped"] == 1
        assert s["stacks"][0]["driver"] == "580.95.05"  # writeup-after's driver
        dup = s["duplicates"][0]
        assert dup["hostname"] == "box"
        assert dup["kept"]["collected_at"] == "2026-11-29T10:00:00+00:00"
        assert [x["collected_at"] for x in dup["dropped"]] == ["2026-11-29T09:00:00Z"]
        assert "duplicates" in render_text(s)


def test_duplicate_tie_and_missing_timestamp(tmp_path: Path) -> None:
    a = report("writeup-after", "box", at="2026-11-29T00:00:00Z")
    b = report("writeup-before", "box", at="2026-11-29T00:00:00Z")
    c = report("h200-newest", "box")
    del c["host"]["collected_at"]
    write(tmp_path / "1.json", a)
    write(tmp_path / "2.json", b)
    write(tmp_path / "3.json", c)
    s = read_fleet([str(tmp_path)], jobs=1).summary()
    assert s["inputs"]["hosts"] == 1
    # a tie goes to the later input; no timestamp is older than any timestamp
    assert s["duplicates"][0]["kept"]["input"].endswith("2.json")
    assert s["stacks"][0]["driver"] == "570.172.08"


BAD_DOCS: dict[str, bytes] = {
    "truncated.json": json.dumps({"schema_version": 1, "facts": {}}).encode()[:20],
    "foreign.json": b'{"apiVersion": "v1", "kind": "ConfigMap"}',
    "array.json": b"[1, 2, 3]",
    "newer.json": json.dumps({"schema_version": 2, "facts": {}, "host": {"hostname": "x"}}).encode(),
    "garbage.json": bytes(range(256)) * 4,
    "empty.json": b"",
    "blank.json": b"  \n\n ",
    "no-host.json": json.dumps({"schema_version": 1, "facts": {}}).encode(),
    "string-version.json": json.dumps({"schema_version": "1", "facts": {}}).encode(),
    "deep.json": b"[" * 100000 + b"]" * 100000,
    "utf16.json": '{"schema_version": 1}'.encode("utf-16"),
}


def test_bad_files_are_listed_and_good_ones_counted(fleet_dir: Path) -> None:
    for name, data in BAD_DOCS.items():
        (fleet_dir / "bad" / name).parent.mkdir(exist_ok=True)
        (fleet_dir / "bad" / name).write_bytes(data)
    missing = str(fleet_dir / "missing.json")
    f = read_fleet([str(fleet_dir), missing], jobs=1)
    s = f.summary()
    assert s["inputs"]["hosts"] == 8
    assert s["inputs"]["bad"] == len(BAD_DOCS) + 1
    reasons = {Path(b["input"]).name: b["reason"] for b in s["bad"]}
    assert reasons["missing.json"] == "no such file or directory"
    assert reasons["truncated.json"].startswith("not valid JSON")
    assert "no schema_version" in reasons["foreign.json"]
    assert "a JSON list" in reasons["array.json"]
    assert "newer" in reasons["newer.json"]
    assert reasons["empty.json"] == "empty"
    assert reasons["blank.json"] == "empty"
    assert "host.hostname" in reasons["no-host.json"]
    assert "not an integer" in reasons["string-version.json"]
    assert reasons["garbage.json"]
    assert reasons["deep.json"]
    text = render_text(s)
    assert "bad inputs (skipped)" in text
    assert "missing.json: no such file or directory" in text


def test_hostile_shapes_never_crash(tmp_path: Path) -> None:
    good = report("writeup-after", "good")
    shapes = []
    mutations: tuple[Callable[[dict[str, Any]], None], ...] = (
        lambda r: r.__setitem__("features", "oops"),
        lambda r: r.__setitem__("features", [1, None, {"id": ["x"], "status": {}}]),
        lambda r: r["facts"].__setitem__("gpus", {"a": 1}),
        lambda r: r["facts"].__setitem__("gpus", [None, 3, {"name": 7}]),
        lambda r: r["facts"].__setitem__("packages", ["torch"]),
        lambda r: r["facts"]["packages"].__setitem__("torch", "2.9"),
        lambda r: r["facts"].__setitem__("driver", "580"),
        lambda r: r.__setitem__("plan", {"steps": "x"}),
        lambda r: r.__setitem__("plan", {"steps": [None, {"component": {"a": 1}}]}),
        lambda r: r.__setitem__("summary", []),
        lambda r: r.__setitem__("host", {"hostname": "h", "collected_at": 12}),
        lambda r: r.__setitem__("checks", {"a": 1}),
    )
    for mutate in mutations:
        r = copy.deepcopy(good)
        mutate(r)
        shapes.append(r)
    for i, r in enumerate(shapes):
        r["host"] = r.get("host") if isinstance(r.get("host"), dict) else {}
        r["host"]["hostname"] = f"h{i}"
        write(tmp_path / f"{i}.json", r)
    f = read_fleet([str(tmp_path)], jobs=1)
    s = f.summary()
    assert s["inputs"]["documents"] == len(shapes)
    assert s["inputs"]["reports"] + s["inputs"]["bad"] == len(shapes)
    for fmt in (render_text, render_markdown):
        assert fmt(s)
    assert render_csv(f, s)
    json.dumps(s)


def test_parse_document_random_bytes_hypothesis() -> None:
    import hypothesis as hyp  # in the test extras
    from hypothesis import strategies as st

    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
        max_leaves=20,
    )
    keys = st.sampled_from(["schema_version", "facts", "host", "features", "checks", "plan", "summary"])

    @hyp.settings(max_examples=300, deadline=None, database=None)
    @hyp.given(st.binary(max_size=300), st.dictionaries(keys, json_values, max_size=7))
    def check(data: bytes, doc: dict[str, Any]) -> None:
        for blob in (data, json.dumps(doc).encode(), json.dumps({**doc, "schema_version": 1}).encode()):
            try:
                parse_document(blob)
            except NotAReport as exc:
                assert str(exc)

    check()


def test_jsonl_line_numbers_across_chunks_and_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = []
    for i in range(40):
        if i % 10 == 7:
            lines.append("{broken")
        elif i == 20:
            lines.append("")  # a blank line is not a document
        else:
            lines.append(json.dumps(report("writeup-after", f"h{i}", sglang=f"0.5.{i % 3}")))
    path = tmp_path / "fleet.jsonl"
    path.write_text("\n".join(lines) + "\n")
    expected_bad = [f"{path}:{i + 1}" for i in range(40) if i % 10 == 7]
    results = []
    for chunk, jobs in ((1 << 30, 1), (50_000, 1), (50_000, 2), (1, 2)):
        monkeypatch.setattr(fleet_mod, "JSONL_CHUNK_BYTES", chunk)
        f = read_fleet([str(path)], jobs=jobs)
        s = f.summary()
        assert [b["input"] for b in s["bad"]] == expected_bad, (chunk, jobs)
        assert s["inputs"]["hosts"] == 35
        kept = {d["hostname"]: d["kept"]["input"] for d in s["duplicates"]}
        assert kept == {}
        results.append(json.dumps(s, sort_keys=True))
    assert len(set(results)) == 1


def test_workers_match_serial(fleet_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fleet_mod, "BATCH_DOCS", 2)
    (fleet_dir / "bad.json").write_bytes(b"\x00\x01")
    serial = read_fleet([str(fleet_dir)], jobs=1).summary()
    parallel = read_fleet([str(fleet_dir)], jobs=2).summary()
    assert serial == parallel


def test_overlong_document(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fleet_mod, "MAX_DOCUMENT_BYTES", 1000)
    big = json.dumps(report("writeup-after", "big"))
    (tmp_path / "big.json").write_text(big)
    (tmp_path / "lines.jsonl").write_text(
        big + "\n" + '{"schema_version": 1, "facts": {}, "host": {"hostname": "s"}}\n'
    )
    s = read_fleet([str(tmp_path)], jobs=1).summary()
    reasons = {b["input"]: b["reason"] for b in s["bad"]}
    assert reasons[str(tmp_path / "big.json")].startswith("larger than")
    assert reasons[f"{tmp_path / 'lines.jsonl'}:1"].startswith("larger than")
    assert s["inputs"]["hosts"] == 1


def test_stdin_jsonl(fleet_dir: Path) -> None:
    docs = [report("writeup-after", f"s{i}") for i in range(3)]
    data = ("\n".join(json.dumps(d) for d in docs) + "\nnot json\n").encode()
    s = read_fleet(["-"], jobs=1, stdin=io.BytesIO(data)).summary()
    assert s["inputs"]["hosts"] == 3
    assert s["bad"] == [{"input": "<stdin>:4", "reason": s["bad"][0]["reason"]}]


class _FakeStdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


def test_cli_stdin_and_exit_codes(
    fleet_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    line = json.dumps(report("writeup-after", "piped")) + "\n"
    monkeypatch.setattr("sys.stdin", _FakeStdin(line.encode()))
    assert main(["fleet", "-", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["inputs"]["hosts"] == 1
    assert out["schema_version"] == out["fleet_schema_version"] == 2

    (fleet_dir / "bad.json").write_text("{")
    assert main(["fleet", str(fleet_dir)]) == 0
    assert main(["fleet", str(fleet_dir), "--strict"]) == 1
    capsys.readouterr()

    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["fleet", str(empty)]) == 2
    assert "no input documents" in capsys.readouterr().err
    only_bad = tmp_path / "only-bad"
    only_bad.mkdir()
    (only_bad / "x.json").write_text("[")
    assert main(["fleet", str(only_bad)]) == 2
    err = capsys.readouterr().err
    assert "none of them a readable report" in err
    assert "x.json" in err
    assert main(["fleet", str(tmp_path / "nope")]) == 2


def test_cli_formats(fleet_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (fleet_dir / "bad.json").write_text("{")
    for fmt in ("text", "json", "markdown", "csv"):
        out = tmp_path / f"out.{fmt}"
        assert main(["fleet", str(fleet_dir), "--format", fmt, "--output", str(out), "--jobs", "1"]) == 0
        text = out.read_text()
        if fmt == "json":
            doc = json.loads(text)
            assert doc["inputs"]["hosts"] == 8
        elif fmt == "csv":
            rows = list(csv.DictReader(io.StringIO(text)))
            assert len(rows) == 10  # 8 hosts, 1 dropped duplicate, 1 bad file
            by_status: dict[str, int] = {}
            for r in rows:
                by_status[r["status"]] = by_status.get(r["status"], 0) + 1
            assert by_status == {"counted": 8, "duplicate-dropped": 1, "bad": 1}
            rtx5 = next(r for r in rows if r["hostname"] == "rtx5")
            assert rtx5["drift"] == "yes"
            assert rtx5["wave"] == "2"
            assert rtx5["sglang"] == "0.5.20"
            assert "torch-symm-mem" in rtx5["blocked"].split()
        elif fmt == "markdown":
            assert "| model | cc | hosts | gpus |" in text
            assert "### Upgrade waves" in text
        else:
            assert text.startswith("stackcheck fleet: 8 hosts from 9 reports")
            assert "wave 1: 5 host(s): sglang 0.5.9 → 0.5.23; flashinfer-python 0.6.4 → 0.7.2" in text


def test_hostile_strings_in_text_formats(tmp_path: Path) -> None:
    r = report("writeup-after", "evil\nhost|\x1b[31m", sglang="0.5.9|x\ny")
    write(tmp_path / "a.json", r)
    f = read_fleet([str(tmp_path)], jobs=1)
    s = f.summary()
    table = render_text(s)
    assert "\x1b" not in table
    assert "evil\\nhost" in table
    md = render_markdown(s)
    assert "| 0.5.9\\|x\\ny |" in md  # the stacks table cell: pipe escaped, newline shown
    assert "\x1b" not in md
    rows = list(csv.DictReader(io.StringIO(render_csv(f, s))))
    # CSV quotes the separator; controls (ESC, newline) are shown as escapes: `cat report.csv` is safe too
    assert rows[0]["hostname"] == "evil\\nhost|\\x1b[31m"


def test_keys_are_interned(tmp_path: Path) -> None:
    for i in range(3):
        write(tmp_path / f"{i}.json", report("writeup-after", f"h{i}", steps=UPGRADE))
    f = read_fleet([str(tmp_path)], jobs=1)
    recs = list(f.hosts.values())
    for slot in (3, 4, 5, 6):
        assert all(r[slot] is recs[0][slot] for r in recs)
