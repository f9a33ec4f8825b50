"""SGLang's Requires-Python against the Python that runs it (igap5, item 1): the wheels of 0.5.1-0.5.21 declare
>=3.10 and 0.5.22-0.5.23 >=3.11 (.dist-info/METADATA), and pip finds no 0.5.22 file for Python 3.10. The audit
and the gate did not compare them: a 0.5.22 box on Python 3.10 was allowed. Check sglang-requires-python reads
components.json requires_python (or, for a release newer than the data, its installed METADATA: facts.derived)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, gate_tp8, model_dir, reason_status, release_box
from registry_wheels import fetch_wheel, run_all

CHECK = "sglang-requires-python"
ROOT = Path(__file__).resolve().parents[2]


def _box(tmp_path: Path, release: str, python: str, derived: dict[str, Any] | None = None) -> Path:
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["system"]["python"] = python
    if derived is not None:
        doc["facts"]["derived"] = derived
    out = tmp_path / f"facts-{release}-py{python}.json"
    out.write_text(json.dumps(doc))
    return out


def _gate(tmp_path: Path, release: str, python: str, derived: dict[str, Any] | None = None) -> dict[str, Any]:
    return gate_tp8(_box(tmp_path, release, python, derived), model_dir(tmp_path, "llama3", LLAMA3))


@pytest.mark.parametrize(("release", "python"), [("0.5.22", "3.10.12"), ("0.5.23", "3.10.12"), ("0.5.21", "3.9.18")])
def test_below_requires_python_refused(tmp_path: Path, release: str, python: str) -> None:
    # fails on the parent: the check did not exist and the launch was allowed
    doc = _gate(tmp_path, release, python)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(CHECK) == ("blocked", "crash")


@pytest.mark.parametrize(("release", "python"), [("0.5.21", "3.10.12"), ("0.5.22", "3.11.9"), ("0.5.23", "3.13.0rc2")])
def test_meeting_requires_python_allowed(tmp_path: Path, release: str, python: str) -> None:
    # guard: a Python at or above the release's Requires-Python (a pre-release too, as pip admits it) is not refused
    doc = _gate(tmp_path, release, python)
    assert CHECK not in reason_status(doc)


def test_audit_names_observed_required_and_source(tmp_path: Path) -> None:
    # fails on the parent: no such check in the audit
    rc, doc = cli_json(["audit", "--facts", str(_box(tmp_path, "0.5.22", "3.10.12")), "--format", "json"])
    check = next(c for c in doc["checks"] if c["id"] == CHECK)
    assert rc == 1 and check["status"] == "failed"
    reason = check["reasons"][0]
    assert (reason["observed"], reason["required"]) == ("3.10.12", "version >=3.11")
    assert reason["source"]


def test_newer_release_read_from_its_metadata(tmp_path: Path) -> None:
    # fails on the parent: no check; a release newer than the data is judged by its installed METADATA's Requires-Python
    derived = {"sglang": {"version": "0.5.24", "pins": {"requires": {}, "requires_python": ">=3.12"}}}
    assert reason_status(_gate(tmp_path, "0.5.24", "3.11.9", derived)).get(CHECK) == ("blocked", "crash")
    _, doc = cli_json(["audit", "--facts", str(_box(tmp_path, "0.5.24", "3.12.3", derived)), "--format", "json"])
    assert next(c for c in doc["checks"] if c["id"] == CHECK)["status"] == "ok"
    # without the derived METADATA (or for another version) it stays unknown, never ok
    _, doc = cli_json(["audit", "--facts", str(_box(tmp_path, "0.5.24", "3.12.3")), "--format", "json"])
    assert next(c for c in doc["checks"] if c["id"] == CHECK)["status"] == "unknown"


def test_every_sglang_release_records_requires_python() -> None:
    # fails on the parent: 0.5.1.post3 recorded none (the check was unknown there)
    data = json.loads((ROOT / "manifests" / "components.json").read_text())
    missing = [r["version"] for r in data["packages"]["sglang"]["releases"] if not r.get("requires_python")]
    assert missing == []


_SGLANG = json.loads((ROOT / "manifests" / "components.json").read_text())["packages"]["sglang"]["releases"]
_READ = [str(r["version"]) for r in _SGLANG] if run_all() else ["0.5.1.post3", "0.5.21", "0.5.22"]


@pytest.mark.registry
@pytest.mark.parametrize("release", _READ)
def test_requires_python_matches_the_wheels(release: str) -> None:
    # the data against the wheel's own METADATA (every release with STACKCHECK_REGISTRY_ALL=1)
    with zipfile.ZipFile(fetch_wheel("sglang", release)) as whl:
        meta = whl.read(next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    declared = [line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Requires-Python:")]
    assert declared == [next(r for r in _SGLANG if r["version"] == release)["requires_python"]]
