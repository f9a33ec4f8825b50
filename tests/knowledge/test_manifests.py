"""The shipped manifests and user manifests: validation reports every error with file and JSON path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.errors import ManifestError
from stackcheck.knowledge.loader import load
from stackcheck.knowledge.package_data import MANIFEST_FILES, shipped_texts
from stackcheck.knowledge.validate import check_schemas_against_metaschema, validate_documents


def test_every_manifest_file_is_shipped_and_valid() -> None:
    texts = shipped_texts()
    assert set(texts) == set(MANIFEST_FILES)
    docs = {name: (origin, json.loads(text)) for name, (origin, text) in texts.items()}
    assert check_schemas_against_metaschema() == []
    assert validate_documents(docs) == []


def test_shipped_manifests_nest_within_the_limit() -> None:
    # load() does not walk the shipped documents for their depth at every start: this test is that check
    from stackcheck.knowledge.loader import MAX_MANIFEST_DEPTH, too_deep

    for name, (_origin, text) in shipped_texts().items():
        assert too_deep(json.loads(text), MAX_MANIFEST_DEPTH) is None, name


def test_package_data_read_directly_or_through_importlib_resources_is_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import stackcheck.knowledge.package_data as ml

    direct_texts, direct_schemas, direct = ml.shipped_texts(), ml.schema_texts(), load([], env={})
    assert ml._package_dir("manifests") is not None  # a checkout or a wheel: files on disk
    monkeypatch.setattr(ml, "_package_dir", lambda name: None)  # as from a zip: importlib.resources
    assert ml.shipped_texts() == direct_texts
    assert ml.schema_texts() == direct_schemas
    assert load([], env={}) == direct
    assert len(direct_schemas) >= len(set(MANIFEST_FILES.values()))


def test_manifests_validate_command_ok() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", "manifests", "validate"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_rule_and_release_has_a_source() -> None:
    m = load([], env={})
    missing = []
    for f in [*m.features, *m.checks]:
        for r in f.get("rules") or []:
            if not r.get("source"):
                missing.append(f"{f['id']}/{r.get('id')}")
    for name, spec in (m.components.get("packages") or {}).items():
        for rel in spec.get("releases") or []:
            if not rel.get("source"):
                missing.append(f"{name} {rel.get('version')}")
    for g in m.gates:
        for row in g.get("releases") or []:
            if not row.get("source") and not g.get("source"):
                missing.append(f"gate {g['id']} {row.get('versions')}")
    for s in m.signatures:
        if not s.get("source"):
            missing.append(f"signature {s.get('id')}")
    assert missing == []


def test_user_manifest_overrides_by_id_and_adds(tmp_path: Path) -> None:
    (tmp_path / "gates.json").write_text(
        json.dumps(
            {
                "gates": [
                    {
                        "id": "sglang.torch_symm_mem_sizes",
                        "title": "site patch: key 12 added",
                        "package": "sglang",
                        "probe": None,
                        "releases": [
                            {
                                "versions": ">=0.5.3,<=0.5.23",
                                "value": [9, 10, 12],
                                "source": {"title": "our site's patch", "url": "https://example.invalid/patch"},
                            }
                        ],
                    }
                ]
            }
        )
    )
    m = load([tmp_path], env={})
    gate = next(g for g in m.gates if g["id"] == "sglang.torch_symm_mem_sizes")
    assert gate["releases"][0]["value"] == [9, 10, 12]
    assert len([g for g in m.gates if g["id"] == "sglang.torch_symm_mem_sizes"]) == 1


def test_user_manifests_from_the_environment(tmp_path: Path) -> None:
    (tmp_path / "meta.json").write_text(json.dumps({"data_version": "2026.12.1", "date": "2026-12-01"}))
    m = load(None, env={"STACKCHECK_MANIFESTS": str(tmp_path)})
    assert m.data_version == "2026.12.1"


def test_every_error_reported_with_file_and_path(tmp_path: Path) -> None:
    (tmp_path / "features.json").write_text(
        json.dumps(
            {
                "features": [
                    {
                        "id": "x",
                        "title": "x",
                        "rules": [
                            {
                                "id": "r",
                                "require": {"gate": "no.such.gate", "op": "in", "value": [1]},
                                "effect": "explode",
                                "message": "m",
                                "source": "nope-source",
                            }
                        ],
                    },
                    {"id": "x", "title": "dup"},
                ]
            }
        )
    )
    (tmp_path / "gates.json").write_text('{"gates": [}')
    with pytest.raises(ManifestError) as err:
        load([tmp_path], env={})
    problems = err.value.problems
    assert any("gates.json" in p and "line 1" in p for p in problems)
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", "manifests", "validate", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    out = proc.stdout
    assert "features.json: $.features[0].rules[0].effect" in out
    assert "features.json: $.features[1].id: duplicate id 'x'" in out
    assert "unknown gate 'no.such.gate'" in out
    assert "gates.json" in out


def test_symlink_escape_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"data_version": "evil", "date": "2026-01-01"}))
    d = tmp_path / "m"
    d.mkdir()
    os.symlink(outside, d / "meta.json")
    with pytest.raises(ManifestError) as err:
        load([d], env={})
    assert "outside the manifest directory" in err.value.problems[0]


def test_unknown_file_and_missing_dir(tmp_path: Path) -> None:
    (tmp_path / "evil.json").write_text("{}")
    with pytest.raises(ManifestError):
        load([tmp_path], env={})
    with pytest.raises(ManifestError):
        load([tmp_path / "nope"], env={})


def test_bad_user_manifest_via_cli_exits_2_with_one_line_per_problem(tmp_path: Path) -> None:
    (tmp_path / "meta.json").write_text('{"data_version": 5}')
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "stackcheck",
            "audit",
            "--manifests",
            str(tmp_path),
            "--facts",
            str(Path(__file__).parent.parent / "cases" / "writeup-after" / "facts.json"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "meta.json" in proc.stderr and "Traceback" not in proc.stderr


def test_overlapping_gate_ranges_are_a_contradiction(tmp_path: Path) -> None:
    (tmp_path / "gates.json").write_text(
        json.dumps(
            {
                "gates": [
                    {
                        "id": "sglang.torch_symm_mem_sizes",
                        "title": "t",
                        "package": "sglang",
                        "probe": None,
                        "releases": [
                            {"versions": ">=0.5.3,<=0.5.10", "value": [9, 10], "source": "sglang-wheels"},
                            {"versions": ">=0.5.9,<=0.5.23", "value": [9, 10, 12], "source": "sglang-wheels"},
                        ],
                    }
                ]
            }
        )
    )
    with pytest.raises(ManifestError) as err:
        load([tmp_path], env={})
    assert any("overlaps" in p and "sglang 0.5.9" in p for p in err.value.problems)


@pytest.mark.parametrize(
    ("driver", "cuda"),
    [("580.95.05", "13.0"), ("580.65.06", "13.0"), ("580.65.05", "12.9"), ("535.54.03", "12.2"), ("450.80.02", None)],
)
def test_driver_cuda_is_read_from_the_cuda_minimum_drivers(driver: str, cuda: str | None) -> None:
    """The highest CUDA a driver supports comes from components.json's CUDA releases (their min_driver)."""
    assert load([], env={}).driver_cuda(driver) == cuda


def test_a_signature_cause_naming_an_unknown_check_or_feature_is_reported() -> None:
    """signatures.json `caused_by` (itriage2): a cause whose check or feature id exists nowhere would never name
    anything; validation says so with the file and the JSON path, as it does for a signature's own check."""
    texts = shipped_texts()
    docs = {name: (origin, json.loads(text)) for name, (origin, text) in texts.items()}
    origin, sigs = docs["signatures.json"]
    entry = next(s for s in sigs["signatures"] if s.get("caused_by"))
    i = sigs["signatures"].index(entry)
    entry["caused_by"] = [
        {**entry["caused_by"][0], "check": "kernel-arhc"},
        {**entry["caused_by"][0], "feature": "torch-cuda-archs", "check": None},
    ]
    problems = validate_documents(docs)
    assert f"{origin}: $.signatures[{i}].caused_by[0].check: unknown check 'kernel-arhc'" in problems, problems
    assert f"{origin}: $.signatures[{i}].caused_by[1].feature: unknown feature 'torch-cuda-archs'" in problems
