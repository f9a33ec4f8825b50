"""The shipped feature, check and gate manifests: schema-valid and internally consistent.

Covers manifests/features.json, manifests/checks.json and manifests/gates.json with
schemas/features.schema.json and schemas/gates.schema.json (which refer to schemas/common.schema.json).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from stackcheck.verdicts.engine import uses_gpu
from stackcheck.verdicts.fact_paths import fact_path_documented

ROOT = Path(__file__).resolve().parent.parent.parent
MANIFESTS = ROOT / "manifests"
SCHEMAS = ROOT / "schemas"

REQUIRED_FEATURES = {
    "torch-cuda-arch",
    "torch-symm-mem",
    "flashinfer-allreduce-fusion",
    "custom-allreduce",
    "nccl-nvls",
    "attention-fa3",
    "attention-fa4",
    "attention-flashinfer",
    "attention-triton",
    "attention-trtllm-mha",
    "attention-trtllm-mla",
    "attention-cutlass-mla",
    "attention-flashmla",
    "deepgemm",
    "fp8-block-gemm",
    "mxfp4-moe",
    "nvfp4",
    "mxfp8",
    "eagle3",
    "cuda-graph",
}

REQUIRED_CHECKS = {
    "driver-vs-torch-cuda",
    "driver-vs-toolkit",
    "torch-arch",
    "sgl-kernel-cuda",
    "sgl-kernel-torch-pair",
    "sglang-pins",
    "flashinfer-cubin-match",
    "mixed-gpus",
}

READ_KINDS = {
    "dict_keys",
    "subscript_style",
    "class_attr_dict_keys",
    "call_keyword_list",
    "guard_list",
    "cpp_check_ints",
}
SOURCE_SUFFIXES = {"cpp_check_ints": (".h", ".hh", ".hpp", ".cuh", ".cu", ".cc", ".cpp")}
EFFECTS = {"crash", "wrong-output", "disabled", "degraded"}
PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
ALLOWED_PLACEHOLDERS = {"observed", "required"}
#: filled only where the rule is judged per GPU (verdicts.uses_gpu): elsewhere there is no one GPU to name
GPU_PLACEHOLDERS = {"gpu.cc", "gpu.sm"}


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _features() -> list[dict[str, Any]]:
    return list(_load(MANIFESTS / "features.json")["features"])


def _checks() -> list[dict[str, Any]]:
    return list(_load(MANIFESTS / "checks.json")["checks"])


def _gates() -> list[dict[str, Any]]:
    return list(_load(MANIFESTS / "gates.json")["gates"])


def _entries() -> list[tuple[str, dict[str, Any]]]:
    return [("feature", f) for f in _features()] + [("check", c) for c in _checks()]


def _rules() -> Iterator[tuple[str, dict[str, Any]]]:
    for kind, entry in _entries():
        for r in entry["rules"]:
            yield f"{kind} {entry['id']} rule {r['id']}", r


def _preds(pred: Any) -> Iterator[dict[str, Any]]:
    """Every leaf comparison in a predicate tree."""
    if not isinstance(pred, dict):
        return
    for key in ("all", "any"):
        if key in pred:
            for sub in pred[key]:
                yield from _preds(sub)
            return
    if "not" in pred:
        yield from _preds(pred["not"])
        return
    yield pred


def _rule_preds(r: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from _preds(r.get("when"))
    yield from _preds(r["require"])


def _fact_paths(r: dict[str, Any]) -> Iterator[str]:
    for p in _rule_preds(r):
        if "fact" in p:
            yield p["fact"]
        value = p.get("value")
        if isinstance(value, dict) and "fact" in value:
            yield value["fact"]


def _gate_refs(r: dict[str, Any]) -> Iterator[str]:
    for p in _rule_preds(r):
        if "gate" in p:
            yield p["gate"]
        value = p.get("value")
        if isinstance(value, dict) and "gate" in value:
            yield value["gate"]


def _validator(schema_file: str) -> Any:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource

    if not (SCHEMAS / "common.schema.json").is_file():
        pytest.skip("schemas/common.schema.json (the source definition) is not there yet")
    registry: Registry[Any] = Registry()
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        schema = _load(path)
        registry = registry.with_resource(schema["$id"], Resource.from_contents(schema))
    schema = _load(SCHEMAS / schema_file)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=registry)


def _errors(validator: Any, doc: Any) -> list[str]:
    return [f"{'/'.join(str(p) for p in e.absolute_path)}: {e.message[:300]}" for e in validator.iter_errors(doc)]


# ---------------------------------------------------------------- schemas


@pytest.mark.parametrize(
    ("manifest", "schema_file"),
    [
        ("features.json", "features.schema.json"),
        ("checks.json", "features.schema.json"),
        ("gates.json", "gates.schema.json"),
    ],
)
def test_manifest_matches_schema(manifest: str, schema_file: str) -> None:
    validator = _validator(schema_file)
    assert _errors(validator, _load(MANIFESTS / manifest)) == []


def test_features_schema_rejects_bad_rules() -> None:
    validator = _validator("features.schema.json")
    good_rule = {
        "id": "r",
        "require": {"fact": "gpu.cc_major", "op": "in", "value": {"gate": "sglang.fa3_majors"}},
        "effect": "crash",
        "message": "major {observed}",
        "source": {"title": "t", "url": "https://example.org/x"},
    }
    feature = {"id": "f", "title": "F", "enable": {"flags": [], "env": {}}, "needs": ["sglang"], "rules": [good_rule]}
    assert _errors(validator, {"features": [feature]}) == []

    def with_rule(**change: Any) -> dict[str, Any]:
        r = {**good_rule, **change}
        r = {k: v for k, v in r.items() if v is not None}
        return {"features": [{**feature, "rules": [r]}]}

    assert _errors(validator, with_rule(source=None))  # no source
    assert _errors(validator, with_rule(effect="explodes"))
    assert _errors(validator, with_rule(require={"fact": "gpu.cc", "op": "approximately", "value": 1}))
    assert _errors(validator, with_rule(require={"fact": "gpu.cc", "op": "=="}))  # no value
    assert _errors(validator, with_rule(require={"fact": "gpu.cc", "op": "exists", "value": 1}))
    assert _errors(validator, with_rule(require={"fact": "gpu.cc", "gate": "a.b", "op": "==", "value": 1}))
    assert _errors(validator, with_rule(inferred=True))  # inferred needs a note
    assert _errors(validator, {"features": [{**feature, "enable": {"flags": "--x", "env": {}}}]})
    check = {"id": "c", "title": "C", "needs": [], "builtin": "pins", "rules": [good_rule]}
    assert _errors(validator, {"checks": [check]})  # a builtin check has no rules
    assert _errors(validator, {"checks": [{**check, "builtin": None, "rules": []}]})


def test_gates_schema_rejects_bad_probes() -> None:
    validator = _validator("gates.schema.json")
    release = {"versions": ">=1.0", "value": [9, 10], "source": {"title": "t", "url": "https://example.org/x"}}
    gate = {"id": "pkg.table", "title": "T", "package": "sglang", "probe": None, "releases": [release]}
    assert _errors(validator, {"gates": [gate]}) == []
    probe = {"files": ["a/b.py"], "read": "call_keyword_list", "function": "f"}  # no keyword
    assert _errors(validator, {"gates": [{**gate, "probe": probe}]})
    assert _errors(validator, {"gates": [{**gate, "probe": {"files": ["a/b.py"], "read": "eval", "symbol": ["X"]}}]})
    assert _errors(validator, {"gates": [{**gate, "releases": [{**release, "versions": "one point oh"}]}]})


# ---------------------------------------------------------------- consistency


def test_required_ids_present() -> None:
    assert {f["id"] for f in _features()} >= REQUIRED_FEATURES
    assert {c["id"] for c in _checks()} >= REQUIRED_CHECKS


def test_ids_unique() -> None:
    for name, entries in (("features", _features()), ("checks", _checks()), ("gates", _gates())):
        ids = [e["id"] for e in entries]
        assert len(ids) == len(set(ids)), f"duplicate ids in {name}.json"
    for where, entry in _entries():
        rule_ids = [r["id"] for r in entry["rules"]]
        assert len(rule_ids) == len(set(rule_ids)), f"duplicate rule ids in {where} {entry['id']}"


def test_every_rule_has_source_effect_and_note_when_inferred() -> None:
    for where, r in _rules():
        assert r.get("source"), f"{where}: no source"
        assert r["effect"] in EFFECTS, where
        if r.get("inferred"):
            assert r.get("note"), f"{where}: inferred without a note"


def test_messages_use_only_known_placeholders() -> None:
    for where, r in _rules():
        used = set(PLACEHOLDER.findall(r["message"]))
        per_gpu = uses_gpu(r.get("when")) or uses_gpu(r["require"])
        allowed = ALLOWED_PLACEHOLDERS | (GPU_PLACEHOLDERS if per_gpu else set())
        assert used <= allowed, f"{where}: unknown placeholders {used - allowed}"


def test_gpu_placeholders_name_the_gpu() -> None:
    """torch-arch's message names the GPU's own architecture (pytorch#152077: sm_120 on an RTX 5090), not
    a placeholder."""
    from stackcheck.verdicts.context import GpuModel
    from stackcheck.verdicts.engine import _format

    gpu = GpuModel("12.0", "NVIDIA GeForce RTX 5090", (0,))
    text = _format("torch {observed}: 'sm_{gpu.sm} is not compatible' (cc {gpu.cc})", "11.8", ">= 12.8", gpu)
    assert text == "torch 11.8: 'sm_120 is not compatible' (cc 12.0)"
    assert "sm_103a" in _format("Value 'sm_{gpu.sm}a'", None, None, GpuModel("10.3", None, (0,)))


def test_fact_paths_are_documented() -> None:
    for where, r in _rules():
        for path in _fact_paths(r):
            assert fact_path_documented(path), f"{where}: undocumented fact path {path!r}"


def test_referenced_gates_exist() -> None:
    gate_ids = {g["id"] for g in _gates()}
    for where, r in _rules():
        for ref in _gate_refs(r):
            assert ref in gate_ids, f"{where}: gate {ref!r} is not in gates.json"


def test_every_gate_is_used() -> None:
    used = {ref for _, r in _rules() for ref in _gate_refs(r)}
    unused = {g["id"] for g in _gates()} - used
    assert not unused, f"gates no rule reads: {sorted(unused)}"


def _specifiers() -> Iterator[tuple[str, str]]:
    for where, r in _rules():
        for p in _rule_preds(r):
            if p.get("op") == "version" and not (isinstance(p["value"], dict) and "fact" in p["value"]):
                yield where, p["value"]  # a {"fact"} value reads a specifier from data (release.*.requires_python)
    for g in _gates():
        for rel in g["releases"]:
            yield f"gate {g['id']}", rel["versions"]


def test_version_specifiers_parse() -> None:
    for where, spec in _specifiers():
        assert isinstance(spec, str), where
        try:
            parsed = SpecifierSet(spec)
        except InvalidSpecifier:
            pytest.fail(f"{where}: {spec!r} is not a PEP 440 specifier set")
        assert len(parsed) > 0, f"{where}: empty specifier"


def _boundary_versions(specs: list[SpecifierSet]) -> list[Version]:
    """Every version named in the specifiers, plus neighbours either side, to probe for overlaps."""
    out: set[Version] = set()
    for spec_set in specs:
        for spec in spec_set:
            v = Version(spec.version.replace(".*", ""))
            rel = list(v.release) + [0] * (3 - len(v.release))
            out.add(v)
            out.add(Version(f"{v.public}.post1") if not v.is_postrelease else v)
            out.add(Version(".".join(str(x) for x in [*rel[:-1], rel[-1] + 1])))
            if rel[-1] > 0:
                out.add(Version(".".join(str(x) for x in [*rel[:-1], rel[-1] - 1])))
    return sorted(out)


def test_gate_release_ranges_do_not_overlap() -> None:
    for g in _gates():
        specs = [SpecifierSet(rel["versions"]) for rel in g["releases"]]
        for v in _boundary_versions(specs):
            matching = [str(s) for s in specs if s.contains(v, prereleases=True)]
            assert len(matching) <= 1, f"gate {g['id']}: {v} is in several ranges {matching}"


def test_gate_probes_use_known_read_kinds() -> None:
    for g in _gates():
        probe = g["probe"]
        if probe is not None:
            assert probe["read"] in READ_KINDS, g["id"]
            suffixes = SOURCE_SUFFIXES.get(probe["read"], (".py",))
            assert all(f.endswith(suffixes) and not f.startswith("/") for f in probe["files"]), g["id"]


def test_gate_values_match_read_kind() -> None:
    for g in _gates():
        probe = g["probe"]
        kind = probe["read"] if probe else None
        for rel in g["releases"]:
            value = rel["value"]
            if kind == "subscript_style":
                assert value in ("index", "get"), g["id"]
            elif kind in ("dict_keys", "class_attr_dict_keys", "call_keyword_list", "guard_list", "cpp_check_ints"):
                assert isinstance(value, list), g["id"]
                assert all(isinstance(x, int) and not isinstance(x, bool) for x in value), g["id"]
                if kind != "call_keyword_list":
                    assert value == sorted(value), f"{g['id']}: {kind} values are read sorted"


def test_needs_and_assume_newer_are_package_names() -> None:
    for where, entry in _entries():
        for key in ("needs", "assume_newer"):
            for name in entry.get(key, []):
                alternatives = name.split("|") if key == "needs" else [name]
                for alt in alternatives:
                    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", alt), f"{where} {entry['id']}: {key} {name!r}"


def test_enable_flags_are_separate_arguments() -> None:
    for f in _features():
        enable = f["enable"]
        for flag in [*enable["flags"], *enable.get("disable_flags", [])]:
            assert "=" not in flag and " " not in flag, f"{f['id']}: flag {flag!r} should be split"


def test_symm_mem_workaround_targets_the_gate_table() -> None:
    feature = next(f for f in _features() if f["id"] == "torch-symm-mem")
    patch = feature["workaround"]["patch"]
    gate = next(g for g in _gates() if g["id"] == "sglang.torch_symm_mem_sizes")
    assert patch["symbol"] in gate["probe"]["symbol"]
    assert patch["file"] in gate["probe"]["files"]
    assert feature["workaround"]["upstream_supported"] is False
    assert all(patch["add_key"] not in rel["value"] for rel in gate["releases"])


# ---------------------------------------------------------------- the motivating box, through the engine


def test_writeup_box_verdicts() -> None:
    """8x RTX PRO 6000 (SM120, PCIe), SGLang 0.5.9: the verdicts the data is written to give."""
    case = ROOT / "tests" / "cases" / "writeup-before" / "facts.json"
    if not case.is_file():
        pytest.skip("tests/cases/writeup-before/facts.json is not there")
    from stackcheck.facts.model import load_facts_file
    from stackcheck.knowledge.loader import load
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_all

    features, _ = evaluate_all(Context(load_facts_file(str(case)), load([]), {}))
    got = {f["id"]: (f["status"], f.get("effect")) for f in features}
    assert got["torch-symm-mem"] == ("blocked", "crash")
    assert got["flashinfer-allreduce-fusion"] == ("blocked", "disabled")
    assert got["custom-allreduce"] == ("blocked", "disabled")
    assert got["eagle3"] == ("blocked", "degraded")
    assert got["deepgemm"] == ("blocked", "crash")
    assert got["attention-fa3"] == ("blocked", "crash")
    assert got["attention-flashinfer"] == ("ok", None)
    assert got["attention-triton"] == ("ok", None)
    assert got["torch-cuda-arch"] == ("ok", None)
    symm = next(f for f in features if f["id"] == "torch-symm-mem")
    assert any("KeyError: 12" in r.get("message", "") for r in symm["reasons"])
