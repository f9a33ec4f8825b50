"""A facts document found valid is remembered between runs by its text's digest (facts.schema_check, issue 21): a
later read of the same text skips the schema check and gives the same facts as checking it; a changed text, an
invalid one, one whose integral floats the check turns into ints, one masking changed, and a run with the caches off
are checked in full every time."""

from __future__ import annotations

import json
import marshal
from pathlib import Path
from typing import Any

import pytest

from stackcheck.errors import BadInputError
from stackcheck.facts import minischema, schema_check
from stackcheck.facts.model import load_facts_document, load_report_document, text_digest
from stackcheck.knowledge import prepared
from stackcheck.paths import forget_code_stamps

ROOT = Path(__file__).resolve().parents[2]
WRITEUP = ROOT / "tests" / "cases" / "writeup-after" / "facts.json"


def _kept_digests(cache: Path) -> list[str]:
    path = cache / prepared.file_name(schema_check.KEPT_NAME)
    if not path.is_file():
        return []
    digests = marshal.loads(path.read_bytes())[2]["digests"]
    assert isinstance(digests, list)
    return digests


def _checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the built-in checker's top-level calls (the check run, not skipped)."""
    calls: list[int] = []
    real = minischema.is_valid

    def counted(value: Any, schema: Any, root: Any) -> bool:
        if schema is root["$defs"]["facts"]:
            calls.append(1)
        return real(value, schema, root)

    monkeypatch.setattr(minischema, "is_valid", counted)
    return calls


def _reference(path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as c:
        c.setenv("STACKCHECK_PLAN_CACHE", "0")
        return load_facts_document(path)


def test_a_valid_text_is_checked_once_and_read_alike_after(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reference = _reference(WRITEUP, monkeypatch)
    calls = _checks(monkeypatch)
    first = load_facts_document(WRITEUP)
    assert len(calls) == 1
    assert _kept_digests(cache) == [text_digest(WRITEUP.read_text(encoding="utf-8"))]
    second = load_facts_document(WRITEUP)
    assert len(calls) == 1  # skipped
    assert first == second == reference
    assert json.dumps(second, sort_keys=True) == json.dumps(reference, sort_keys=True)
    # a saved report's reader takes the same path
    assert load_report_document(WRITEUP)["facts"] == reference[0]
    assert len(calls) == 1


def test_a_changed_text_is_checked_again(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _checks(monkeypatch)
    doc = json.loads(WRITEUP.read_text(encoding="utf-8"))
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    load_facts_document(path)
    doc["facts"]["packages"]["torch"]["version"] = "not a version?"
    path.write_text(json.dumps(doc), encoding="utf-8")
    load_facts_document(path)  # (a string is valid there: checked, and kept too)
    assert len(calls) == 2
    assert len(_kept_digests(cache)) == 2
    doc["facts"]["gpus"] = "none"  # invalid: worded on every read, never kept
    path.write_text(json.dumps(doc), encoding="utf-8")
    for _ in range(2):
        with pytest.raises(BadInputError, match=r"facts\.json: \$\.facts\.gpus"):
            load_facts_document(path)
    assert len(calls) == 4
    assert len(_kept_digests(cache)) == 2


def test_integral_floats_are_turned_into_ints_on_every_read(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = json.loads(WRITEUP.read_text(encoding="utf-8"))
    gpus = doc["facts"]["gpus"]
    assert isinstance(gpus, list) and isinstance(gpus[0].get("index"), int)
    gpus[0]["index"] = float(gpus[0]["index"])
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert '"index": 0.0' in path.read_text(encoding="utf-8")
    calls = _checks(monkeypatch)
    for n in (1, 2):
        facts, _ = load_facts_document(path)
        assert type(facts["gpus"][0]["index"]) is int
        assert len(calls) == n
    assert _kept_digests(cache) == []


def test_a_masked_document_is_not_kept(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = json.loads(WRITEUP.read_text(encoding="utf-8"))
    doc["facts"]["system"].setdefault("env", {})["HF_TOKEN"] = "hf_" + "a" * 34
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    calls = _checks(monkeypatch)
    for n in (1, 2):
        facts, _ = load_facts_document(path)
        assert "HF_TOKEN" not in json.dumps(facts)
        assert len(calls) == n
    assert _kept_digests(cache) == []


def test_nothing_is_kept_with_the_caches_off(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    calls = _checks(monkeypatch)
    load_facts_document(WRITEUP)
    load_facts_document(WRITEUP)
    assert len(calls) == 2
    assert not (cache / prepared.file_name(schema_check.KEPT_NAME)).exists()


def test_another_key_or_shape_is_a_miss(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    load_facts_document(WRITEUP)
    path = cache / prepared.file_name(schema_check.KEPT_NAME)
    fmt, key, value = marshal.loads(path.read_bytes())
    calls = _checks(monkeypatch)
    for other in ((fmt, key + "x", value), (fmt, key, {"digests": "x"}), (fmt, key, {"digests": [1]})):
        path.write_bytes(marshal.dumps(other))
        load_facts_document(WRITEUP)
    assert len(calls) == 3
    assert _kept_digests(cache) == value["digests"]  # written anew


def test_an_edited_checker_is_a_new_key(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key names the stamps of the report schema and of the modules that read and check the text: another stamp
    of any (here the schema, as a copy of the package would have) is a miss."""
    load_facts_document(WRITEUP)
    calls = _checks(monkeypatch)
    load_facts_document(WRITEUP)
    assert calls == []
    schemas = tmp_path / "pkg" / "schemas"
    schemas.mkdir(parents=True)
    (schemas / "report.schema.json").write_text((ROOT / "stackcheck/schemas/report.schema.json").read_text())
    monkeypatch.setattr("stackcheck.knowledge.package_data._package_dir", lambda name: str(schemas))
    forget_code_stamps()
    load_facts_document(WRITEUP)
    assert len(calls) == 1
