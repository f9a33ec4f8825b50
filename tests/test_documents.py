"""Every JSON document stackcheck prints has `schema_version`, validates against its schema in schemas/, and
carries every `source` (outside `facts`) as [{id, title, url}]; every JSON block of the README validates too
(issue 20). Also `stackcheck diff`, `fleet --since` and `facts template` end to end."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.validate import schema_problems

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "cases"
AFTER = str(CASES / "writeup-after" / "facts.json")
BEFORE = str(CASES / "writeup-before" / "facts.json")
NO_DRIVER = str(CASES / "no-driver" / "facts.json")
LOG = str(ROOT / "tests" / "data" / "logs" / "symm_mem_keyerror.log")
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "M", "--tp", "8", "--enable-torch-symm-mem"]


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    env.pop("COLUMNS", None)
    return subprocess.run(
        [sys.executable, "-m", "stackcheck", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        input=stdin,
        cwd=str(ROOT),
    )


def _sources(doc: Any, path: str = "$") -> list[tuple[str, Any]]:
    """Every (path, value) of a `source` or `evidence` key outside `facts` and `probes`."""
    found: list[tuple[str, Any]] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k in ("facts", "probes"):
                continue
            if k in ("source", "evidence"):
                found.append((f"{path}.{k}", v))
            else:
                found += _sources(v, f"{path}.{k}")
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            found += _sources(v, f"{path}[{i}]")
    return found


def _check(schema: str, doc: Any, origin: str) -> None:
    assert isinstance(doc.get("schema_version"), int), origin
    assert schema_problems(schema, doc, origin) == []
    for where, value in _sources(doc):
        assert isinstance(value, list), where
        for ref in value:
            assert set(ref) == {"id", "title", "url"}, (where, ref)


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("reports")
    out = {}
    for name, facts in (("before", BEFORE), ("after", AFTER)):
        path = d / f"{name}.json"
        run_cli("audit", "--facts", facts, "--format", "json", "--output", str(path))
        out[name] = str(path)
    return out


DOCUMENTS = [
    ("audit", "report.schema.json", ["audit", "--facts", AFTER, "--format", "json"]),
    ("audit-no-gpu", "report.schema.json", ["audit", "--facts", NO_DRIVER, "--format", "json"]),
    ("probe", "report.schema.json", ["probe", "--facts", AFTER, "--format", "json"]),
    ("plan", "report.schema.json", ["plan", "--facts", BEFORE, "--format", "json"]),
    ("gate", "gate.schema.json", ["gate", "--facts", AFTER, "--dry-run", "--format", "json", "--", *LAUNCH]),
    ("gate-require", "gate.schema.json", ["gate", "--facts", NO_DRIVER, "--require", "deepgemm", "--format", "json"]),
    ("triage", "triage.schema.json", ["triage", LOG, "--facts", BEFORE, "--format", "json"]),
    ("explain", "explain.schema.json", ["explain", "torch-symm-mem", "--assume-gpu", "12.0x8", "--format", "json"]),
    ("explain-box", "explain.schema.json", ["explain", "deepgemm", "--facts", AFTER, "--format", "json"]),
    ("recommend", "recommendation.schema.json", ["recommend", "--facts", BEFORE, "--format", "json"]),
]


@pytest.mark.parametrize(("name", "schema", "argv"), DOCUMENTS, ids=[d[0] for d in DOCUMENTS])
def test_every_document_validates_against_its_schema(name: str, schema: str, argv: list[str]) -> None:
    proc = run_cli(*argv)
    assert proc.returncode in (0, 1), proc.stderr
    _check(schema, json.loads(proc.stdout), name)


def test_fleet_and_diff_documents_validate(saved: dict[str, str], tmp_path: Path) -> None:
    proc = run_cli("diff", saved["before"], saved["after"], "--format", "json")
    assert proc.returncode == 0, proc.stderr
    _check("diff.schema.json", json.loads(proc.stdout), "diff")
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    for d, src in ((old, saved["before"]), (new, saved["after"])):
        (d / "h1.json").write_text(Path(src).read_text())
    proc = run_cli("fleet", str(new), "--since", str(old), "--format", "json", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    _check("fleet.schema.json", json.loads(proc.stdout), "fleet")


def test_old_format_name_is_an_alias_with_a_note() -> None:
    old = run_cli("audit", "--facts", AFTER, "--format", "table")
    new = run_cli("audit", "--facts", AFTER, "--format", "text")
    assert old.stdout == new.stdout
    assert "--format table is now called text" in old.stderr and not new.stderr


def test_readme_json_blocks_validate() -> None:
    """A ```json block of the README is preceded by `<!-- schema: NAME -->` and validates against NAME."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"(?:<!-- schema: (\S+) -->\n)?```json\n(.*?)```", text, re.S)
    assert blocks, "the README shows no JSON document"
    for schema, body in blocks:
        assert schema, f"a JSON block without its <!-- schema: NAME --> line: {body[:60]!r}"
        _check(schema, json.loads(body), f"README block ({schema})")


# ---- stackcheck diff ------------------------------------------------------------------------------------


def test_diff_of_two_reports(saved: dict[str, str]) -> None:
    proc = run_cli("diff", saved["before"], saved["after"], "--format", "json")
    doc = json.loads(proc.stdout)
    rows = {r["what"]: (r["before"], r["after"]) for r in doc["versions"]}
    assert rows["driver"] == ("570.172.08 (CUDA 12.8)", "580.95.05 (CUDA 13.0)")
    assert rows["torch"] == ("2.9.1+cu128", "2.9.1+cu130")
    # a metadata pin mismatch warns (issue 16)
    assert {"id": "sglang-pins", "before": {"status": "ok"}, "after": {"status": "warning"}} in doc["checks"]
    assert "driver: 570.172.08 (CUDA 12.8) → 580 branch (CUDA 13.0)" in doc["plan"]["removed"]
    assert doc["regressions"] == [] and proc.returncode == 0
    text = run_cli("diff", saved["before"], saved["after"]).stdout
    assert "driver             570.172.08 (CUDA 12.8) → 580.95.05 (CUDA 13.0)" in text
    md = run_cli("diff", saved["before"], saved["after"], "--format", "markdown").stdout
    assert md.startswith("## stackcheck diff") and "| driver | 570.172.08 (CUDA 12.8) | 580.95.05 (CUDA 13.0) |" in md


def test_diff_exits_1_when_a_feature_that_was_ok_is_not(tmp_path: Path) -> None:
    h200 = str(CASES / "h200-newest" / "facts.json")
    proc = run_cli("diff", h200, AFTER, "--format", "json")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert "attention-fa3" in doc["regressions"]
    fa3 = next(c for c in doc["features"] if c["id"] == "attention-fa3")
    assert fa3 == {"id": "attention-fa3", "before": {"status": "ok"}, "after": {"status": "blocked", "effect": "crash"},
                   "regression": True}  # fmt: skip
    back = json.loads(run_cli("diff", AFTER, h200, "--format", "json").stdout)
    assert "attention-fa3" not in back["regressions"]  # blocked -> ok is no loss
    # ok on SM120 (its Triton 3.5.1 knows sm_120a), unknown on the H200 stack (whose facts name no Triton)
    assert set(back["regressions"]) == {"attention-triton"}


def test_diff_reads_one_side_from_stdin(saved: dict[str, str]) -> None:
    proc = run_cli("diff", saved["before"], "-", "--format", "json", stdin=Path(saved["after"]).read_text())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["b"]["origin"] == "<stdin>"


def test_diff_judges_a_facts_document_now_and_rejudges_on_request(saved: dict[str, str]) -> None:
    doc = json.loads(run_cli("diff", saved["after"], AFTER, "--format", "json").stdout)
    assert doc["a"]["judged"] == "as saved" and doc["b"]["judged"] == "now"
    assert doc["features"] == [] and doc["versions"] == []
    doc = json.loads(run_cli("diff", saved["before"], saved["after"], "--rejudge", "--format", "json").stdout)
    assert doc["a"]["judged"] == doc["b"]["judged"] == "now"


def test_diff_against_this_box_now(saved: dict[str, str]) -> None:
    proc = run_cli("diff", saved["after"], "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    assert json.loads(proc.stdout)["b"]["origin"] == "this box now"


def test_fleet_since_names_the_hosts_whose_verdicts_changed(saved: dict[str, str], tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    base = json.loads(Path(saved["after"]).read_text())
    for i in range(3):
        for d, when in ((old, "2026-11-01T00:00:00Z"), (new, "2026-11-29T00:00:00Z")):
            doc = json.loads(json.dumps(base))
            doc["host"] = {"hostname": f"node{i}", "collected_at": when}
            if d is new and i == 1:
                for f in doc["features"]:
                    if f["id"] == "attention-flashinfer":
                        f["status"], f["effect"] = "blocked", "crash"
            (d / f"node{i}.json").write_text(json.dumps(doc))
    gone = json.loads(json.dumps(base))
    gone["host"] = {"hostname": "old-node", "collected_at": "2026-11-01T00:00:00Z"}
    (old / "old-node.json").write_text(json.dumps(gone))
    doc = json.loads(run_cli("fleet", str(new), "--since", str(old), "--format", "json", "--jobs", "1").stdout)
    changes = {c["hostname"]: c for c in doc["changes"]}
    assert set(changes) == {"node1", "old-node"}
    assert changes["node1"]["regressions"] == ["attention-flashinfer"]
    assert changes["old-node"]["only_in"] == "before"
    text = run_cli("fleet", str(new), "--since", str(old), "--jobs", "1").stdout
    assert "node1 (2026-11-01T00:00:00Z → 2026-11-29T00:00:00Z); no longer ok: attention-flashinfer" in text


# ---- facts template ---------------------------------------------------------------------------------------


def test_facts_template_is_shipped_commented_and_reads_as_facts(tmp_path: Path) -> None:
    proc = run_cli("facts", "template")
    assert proc.returncode == 0 and proc.stdout.startswith("//")
    path = tmp_path / "box.json"
    path.write_text(proc.stdout)
    check = run_cli("facts", "check", str(path))
    assert check.returncode == 0, check.stderr
    assert "gpus: 2" in check.stdout
    audit = run_cli("audit", "--facts", str(path), "--format", "json")
    assert audit.returncode in (0, 1), audit.stderr
    report = json.loads(audit.stdout)
    assert report["facts"]["gpus"][0]["compute_capability"] == "12.0"
    assert report["facts"]["packages"]["sglang"]["installed"] is True


def test_facts_template_is_package_data() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert '"facts_template.jsonc"' in text
    from stackcheck.commands.facts import template_text

    assert "stackcheck audit --facts box.json" in template_text()
