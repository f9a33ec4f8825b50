"""The component and architecture data (manifests/) against its schemas (schemas/) and a few facts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from referencing import Registry, Resource

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "manifests"
SCHEMAS = ROOT / "schemas"
BASE = "https://stackcheck.dev/schemas/"

OWNED = {
    "meta.json": "meta.schema.json",
    "sources.json": "sources.schema.json",
    "architectures.json": "architectures.schema.json",
    "components.json": "components.schema.json",
}
OWNED_SCHEMAS = [*OWNED.values(), "common.schema.json"]


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _registry() -> Registry:
    resources = []
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        schema = _load(path)
        resource = Resource.from_contents(schema)
        resources.append((schema.get("$id", BASE + path.name), resource))
    return Registry().with_resources(resources)


def _walk(node: Any, path: str = "$") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            yield from _walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{path}[{i}]")


def _source_ids(src: Any) -> Iterator[str]:
    if isinstance(src, str):
        yield src
    elif isinstance(src, list):
        for item in src:
            yield from _source_ids(item)


@pytest.mark.parametrize("schema_name", OWNED_SCHEMAS)
def test_schema_is_valid_against_metaschema(schema_name: str) -> None:
    schema = _load(SCHEMAS / schema_name)
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == BASE + schema_name
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("data_name", sorted(OWNED))
def test_manifest_validates(data_name: str) -> None:
    schema = _load(SCHEMAS / OWNED[data_name])
    validator = Draft202012Validator(schema, registry=_registry())
    errors = sorted(validator.iter_errors(_load(MANIFESTS / data_name)), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{data_name} {e.json_path}: {e.message}" for e in errors[:20])


def test_common_source_definition_accepts_the_three_forms() -> None:
    validator = Draft202012Validator({"$ref": BASE + "common.schema.json#/$defs/source"}, registry=_registry())
    assert validator.is_valid("CUDA-RN")
    assert validator.is_valid({"title": "t", "url": "https://example.org/x"})
    assert validator.is_valid({"repo": "owner/name", "path": "a/b.py", "ref": "v1"})
    assert not validator.is_valid({"title": "t"})
    assert not validator.is_valid({"repo": "owner/name", "path": "a.py"})


def test_inferred_needs_a_note() -> None:
    schema = {"$ref": BASE + "architectures.schema.json#/$defs/rule"}
    validator = Draft202012Validator(schema, registry=_registry())
    rule = {"id": "x", "text": "t", "kind": "sass", "suffixes": [""], "runs_on": "exact", "source": "BW-COMPAT"}
    assert validator.is_valid(rule)
    assert not validator.is_valid({**rule, "inferred": True})
    assert validator.is_valid({**rule, "inferred": True, "note": "why"})


@pytest.mark.parametrize("data_name", ["architectures.json", "components.json"])
def test_every_source_id_resolves(data_name: str) -> None:
    known = set(_load(MANIFESTS / "sources.json")["sources"])
    missing = []
    for path, obj in _walk(_load(MANIFESTS / data_name)):
        for key in ("source", "index_source"):
            for sid in _source_ids(obj.get(key)):
                if sid not in known:
                    missing.append(f"{path}.{key}: {sid}")
    assert not missing, missing


def test_versions_and_specifiers_parse() -> None:
    comp = _load(MANIFESTS / "components.json")
    for name, package in comp["packages"].items():
        seen = set()
        for rel in package["releases"]:
            version = Version(rel["version"])
            assert version not in seen, f"{name} {version} listed twice"
            seen.add(version)
            for spec in rel.get("requires", {}).values():
                SpecifierSet(spec)
            for extra in rel.get("optional_requires", {}).values():
                for spec in extra.values():
                    SpecifierSet(spec)
            if "requires_python" in rel:
                SpecifierSet(rel["requires_python"])
    for rel in comp["cuda"]["releases"]:
        Version(rel["version"])
        for upd in rel.get("updates", []):
            Version(upd["version"])


def test_sglang_pins_refer_to_known_releases() -> None:
    packages = _load(MANIFESTS / "components.json")["packages"]
    known = {name: {Version(r["version"]) for r in p["releases"]} for name, p in packages.items()}
    for rel in packages["sglang"]["releases"]:
        for dep in ("torch", "sgl-kernel", "sglang-kernel", "flashinfer-python"):
            spec = rel["requires"].get(dep)
            if spec is None:
                continue
            assert any(v in SpecifierSet(spec, prereleases=True) for v in known[dep]), (rel["version"], dep, spec)


def test_sglang_059_pins_and_the_writeup_mismatch() -> None:
    packages = _load(MANIFESTS / "components.json")["packages"]
    rel = next(r for r in packages["sglang"]["releases"] if r["version"] == "0.5.9")
    assert rel["requires"]["torch"] == "==2.9.1"
    assert rel["requires"]["sgl-kernel"] == "==0.3.21"
    assert rel["requires"]["flashinfer-python"] == "==0.6.3"
    assert Version("0.6.4") not in SpecifierSet(rel["requires"]["flashinfer-python"])
    assert any(r["version"] == "0.6.4" for r in packages["flashinfer-python"]["releases"])


def test_torch_releases_cover_the_digest() -> None:
    torch = _load(MANIFESTS / "components.json")["packages"]["torch"]
    versions = {r["version"] for r in torch["releases"]}
    for v in ("2.4.0", "2.9.0", "2.9.1", "2.10.0", "2.11.0", "2.12.0", "2.13.0", "2.14.0", "2.14.1", "2.15.0"):
        assert v in versions
    for rel in torch["releases"]:
        assert sum(1 for v in rel["variants"] if v.get("pypi")) == 1, rel["version"]
        assert rel["pypi_variant"] in {v["variant"] for v in rel["variants"]}


def test_sm120_entry() -> None:
    data = _load(MANIFESTS / "architectures.json")
    sm120 = next(a for a in data["architectures"] if a["id"] == "sm120")
    assert sm120["compute_capability"] == "12.0"
    assert sm120["min_cuda"] == "12.8"
    assert sm120["min_driver"] == "570.26"
    for gpu in (
        "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
        "NVIDIA GeForce RTX 5090",
    ):
        assert gpu in sm120["gpus"]
    served = {t["target"] for t in sm120["targets"]}
    assert {"sm_120", "sm_120a", "sm_120f", "compute_120"} <= served
    assert "sm_100" in sm120["incompatible_targets"]
    rule_ids = {r["id"] for r in data["rules"]}
    assert rule_ids >= {"sass-same-major", "sass-arch-specific-exact", "sass-family-specific", "ptx-jit-forward"}


def test_architecture_gpu_names_have_sources() -> None:
    for arch in _load(MANIFESTS / "architectures.json")["architectures"]:
        named = {n for s in arch.get("gpu_name_sources", []) for n in s["names"]}
        assert set(arch["gpus"]) <= named, (arch["id"], set(arch["gpus"]) - named)
        assert len(set(arch["gpus"])) == len(arch["gpus"])


def test_meta() -> None:
    meta = _load(MANIFESTS / "meta.json")
    assert meta["data_version"] == "2026.11.29"
    assert meta["date"] == "2026-11-29"


def test_pairings_no_wheel_declares_stay_inferred() -> None:
    """The kernel packages' torch pins and flashinfer-cubin's flashinfer-python pin are read from the SGLang
    release that pins both, not from the wheel (stackcheck manifests derive finds none in sgl-kernel 0.3.x,
    sglang-kernel 0.4.0-0.4.6.post1, flashinfer-cubin): such an entry is inferred, with a note, unless its note
    says the wheel declares the pin (sglang-kernel 0.4.7 on). The registry test
    (tests/derive/test_derive_registry.py) excuses a pin the wheel lacks only while it is marked so."""
    packages = _load(MANIFESTS / "components.json")["packages"]
    seen = 0
    for name, pin in (("sgl-kernel", "torch"), ("sglang-kernel", "torch"), ("flashinfer-cubin", "flashinfer-python")):
        for rel in packages[name]["releases"]:
            if pin not in (rel.get("requires") or {}):
                continue
            seen += 1
            declared = "wheel declares Requires-Dist" in str(rel.get("note") or "")
            assert declared or (rel.get("inferred") is True and rel.get("note")), f"{name} {rel['version']}: {pin}"
    assert seen >= 30
