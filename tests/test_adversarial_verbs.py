"""An adversarial pass over the verbs from the outside (task iadv): each test plants one hostile input a user or a
box can give and runs the real command line in process (`stackcheck.cli.main`). Each one failed before the fix
its docstring names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "cases"
SM120 = CASES / "writeup-after" / "facts.json"  # 8x RTX PRO 6000 (cc 12.0), SGLang 0.5.9


def facts_with(tmp_path: Path, base: Path, **edits: Any) -> Path:
    """A copy of a facts document with `packages.NAME.version` (and dist_version) set: edits as name=version."""
    doc = json.loads(base.read_text())
    for name, version in edits.items():
        entry = doc["facts"]["packages"][name.replace("_", "-")]
        entry["version"] = version
        if "dist_version" in entry:
            entry["dist_version"] = version
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    return path


def audit_json(capsys: pytest.CaptureFixture[str], facts: Path) -> dict[str, Any]:
    main(["audit", "--facts", str(facts), "--format", "json"])
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def status(doc: dict[str, Any], feature: str) -> str:
    return str(next(f["status"] for f in doc["features"] if f["id"] == feature))


@pytest.mark.parametrize("version", ["0.5.9.dev0", "0.5.9rc1", "0.5.9a1.dev3"])
def test_a_pre_release_between_two_rules_is_not_judged_ok(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    """attention-fa4 on sm_120 crashes in SGLang 0.5.3-0.5.8 (sgl-kernel's FA4 majors, rule `when <0.5.9`) and in
    0.5.9 (the vendored FA4's majors, `when >=0.5.9`). A pre-release of 0.5.9 is neither `<0.5.9` nor `>=0.5.9` by
    PEP 440, so neither rule applied and the feature was judged ok (a false pass): a build from SGLang's tree
    before the 0.5.9 tag has one code or the other, which the data cannot say."""
    released = audit_json(capsys, facts_with(tmp_path, SM120, sglang="0.5.9"))
    assert status(released, "attention-fa4") == "blocked"
    pre = audit_json(capsys, facts_with(tmp_path, SM120, sglang=version))
    assert status(pre, "attention-fa4") in ("blocked", "unknown")
    fa4 = next(f for f in pre["features"] if f["id"] == "attention-fa4")
    assert any(version in json.dumps(r) for r in fa4["reasons"]), "the reason names the pre-release it read"


def test_a_pre_release_far_from_every_bound_is_judged_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fix makes only a straddled bound unknown: 0.5.9.dev0 against >=0.5.3 (fa4-choice) still passes."""
    doc = audit_json(capsys, facts_with(tmp_path, SM120, sglang="0.5.9.dev0"))
    fa4 = next(f for f in doc["features"] if f["id"] == "attention-fa4")
    choice = next(r for r in fa4["reasons"] if r["rule"] == "fa4-choice")
    assert choice["result"] == "pass"
