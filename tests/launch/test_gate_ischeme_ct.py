"""ischeme: the gate reads a compressed-tensors checkpoint's config_groups and judges the scheme SGLang picks.

SGLang's compressed-tensors loader picks a scheme class per linear layer from the group that targets it
(CompressedTensorsConfig._get_scheme_from_parts) and refuses a GPU below that class's minimum. The parent judged
the method only: unknown below 8.0, silent from 8.0 (unknown below 8.9 under 0.5.3-0.5.6). The config.json files
below are my own, in the shape of the exports named in each helper (config_groups / weights / input_activations /
format as llm-compressor writes them). Fail on the parent: the refusals it missed (block FP8 and int8 W8A8 and
NVFP4 on GPUs SGLang refuses, FP8 W8A8 under 0.5.1-0.5.3 without vLLM), the shapes not read (unknown), the
over-refusals it made (W4A16 / FP8 on 8.0 under 0.5.3-0.5.6) and the reader itself; the 0.5.23 admissions guard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import QWEN3_MOE, ROOT, gate_checkpoint, quant_rules, quantized, scheme_table
from registry_wheels import fetch_wheel, read_texts

CT = "sglang/srt/layers/quantization/compressed_tensors/"


def _args(num_bits: int, kind: str, strategy: str, dynamic: Any = False, **more: Any) -> dict[str, Any]:
    return {"num_bits": num_bits, "type": kind, "strategy": strategy, "symmetric": True, "dynamic": dynamic, **more}


def _ckpt(fmt: str, weights: dict[str, Any], inputs: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
    group: dict[str, Any] = {"targets": ["Linear"], "weights": weights, "input_activations": inputs}
    qc = {"quant_method": "compressed-tensors", "format": fmt, "config_groups": {"group_0": group}}
    return quantized({**qc, "ignore": ["lm_head"], "kv_cache_scheme": None, **extra})


def fp8_dynamic() -> dict[str, Any]:
    """The shape of RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8-dynamic: FP8 channel weights, dynamic FP8 tokens."""
    return _ckpt("float-quantized", _args(8, "float", "channel"), _args(8, "float", "token", True))


def fp8_block() -> dict[str, Any]:
    """The shape of RedHatAI/Qwen3-8B-FP8-block (llm-compressor FP8_BLOCK): 128x128 blocks, dynamic 1x128 groups."""
    weights = _args(8, "float", "block", block_structure=[128, 128])
    return _ckpt("float-quantized", weights, _args(8, "float", "group", True, group_size=128))


def w4a16() -> dict[str, Any]:
    """The shape of RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16: packed int4 weights by groups of 128."""
    return _ckpt("pack-quantized", _args(4, "int", "group", group_size=128, actorder="weight"), None)


def int8_w8a8() -> dict[str, Any]:
    """The shape of RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8: int8 channel weights, dynamic int8 tokens."""
    return _ckpt("int-quantized", _args(8, "int", "channel"), _args(8, "int", "token", True))


def nvfp4() -> dict[str, Any]:
    """The shape of RedHatAI/Llama-3.1-8B-Instruct-NVFP4: FP4 weights and activations by groups of 16."""
    weights = _args(4, "float", "tensor_group", group_size=16)
    return _ckpt("nvfp4-pack-quantized", weights, _args(4, "float", "tensor_group", "local", group_size=16))


def mxfp4_weight_only() -> dict[str, Any]:
    """A shape the reader does not know: MXFP4 weights by groups of 32 (as amd/*-MXFP4 exports of llm-compressor)."""
    return _ckpt("mxfp4-pack-quantized", _args(4, "float", "group", group_size=32), None)


# --- refused where SGLang refuses ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("release", "cc", "config", "rule"),
    [
        ("0.5.23", "8.0", fp8_block, "quant-ct-fp8-block"),  # W8A16 FP8 fallback has no block strategy
        ("0.5.9", "8.6", fp8_block, "quant-ct-fp8-block"),
        ("0.5.2", "8.0", fp8_dynamic, "quant-ct-fp8-w8a8-vllm"),  # the W8A16 FP8 fallback needs vLLM there
        ("0.5.5", "8.0", int8_w8a8, "quant-ct-int8-w8a8-89"),  # 89 in 0.5.3-0.5.6
        ("0.5.15", "9.0", nvfp4, "quant-ct-nvfp4-w4a4-100"),  # NotImplementedError below 10.0 in 0.5.7-0.5.21
        ("0.5.23", "7.5", w4a16, "quant-ct-wna16"),  # T4: WNA16 asks 80
    ],
)
def test_a_scheme_sglang_refuses_on_this_gpu_is_blocked(
    tmp_path: Path, release: str, cc: str, config: Any, rule: str
) -> None:
    doc = gate_checkpoint(tmp_path, release, cc, config())
    assert doc["decision"] == "refuse"
    assert quant_rules(doc) == {rule: "fail"}, doc.get("reasons")


def test_the_refusal_names_observed_required_and_source(tmp_path: Path) -> None:
    doc = gate_checkpoint(tmp_path, "0.5.23", "8.0", fp8_block())
    got = [x for r in doc.get("reasons") or [] for x in r.get("reasons") or [] if x.get("rule") == "quant-ct-fp8-block"]
    text = json.dumps(got)
    assert "80" in text and "89" in text, got
    assert "compressed_tensors_w8a16_fp8.py" in text and "Unsupported weight strategy" in text


# --- admitted where it runs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("config", [fp8_dynamic, w4a16, int8_w8a8])
def test_a_scheme_that_runs_on_ampere_is_admitted_under_0_5_23(tmp_path: Path, config: Any) -> None:
    doc = gate_checkpoint(tmp_path, "0.5.23", "8.0", config())
    assert quant_rules(doc) == {}, doc.get("reasons")
    assert doc["decision"] == "allow", doc.get("reasons")


@pytest.mark.parametrize(("release", "config"), [("0.5.5", w4a16), ("0.5.4", fp8_dynamic), ("0.5.6", w4a16)])
def test_w4a16_and_fp8_on_ampere_under_0_5_3_to_0_5_6_are_no_longer_unknown(
    tmp_path: Path, release: str, config: Any
) -> None:
    """The parent's int8 rule made every compressed-tensors checkpoint unknown below 8.9 there; these load."""
    assert quant_rules(gate_checkpoint(tmp_path, release, "8.0", config())) == {}


@pytest.mark.parametrize(("release", "cc"), [("0.5.23", "9.0"), ("0.5.22", "8.0"), ("0.5.15", "10.0")])
def test_nvfp4_where_it_loads(tmp_path: Path, release: str, cc: str) -> None:
    """From 0.5.22 NVFP4 W4A4 falls back to weight-only FP4 Marlin (80); 10.0 takes the W4A4 scheme."""
    assert quant_rules(gate_checkpoint(tmp_path, release, cc, nvfp4())) == {}


def test_the_flag_with_the_checkpoint_is_judged_by_its_schemes(tmp_path: Path) -> None:
    doc = gate_checkpoint(tmp_path, "0.5.23", "8.0", fp8_block(), "--quantization", "compressed-tensors")
    assert quant_rules(doc) == {"quant-ct-fp8-block": "fail"}


# --- unknown where the shape is not read --------------------------------------------------------------------------


@pytest.mark.parametrize("cc", ["9.0", "10.0"])
def test_an_unknown_shape_is_unknown_never_ok(tmp_path: Path, cc: str) -> None:
    doc = gate_checkpoint(tmp_path, "0.5.23", cc, mxfp4_weight_only())
    assert doc["decision"] == "refuse"
    assert quant_rules(doc) == {"quant-ct-scheme-unread": "unknown"}, doc.get("reasons")
    assert doc["derived"]["launch"]["model_quant_schemes"] == ["unknown"]


@pytest.mark.parametrize(
    ("release", "config"),
    [("0.5.5", fp8_block), ("0.5.2", int8_w8a8), ("0.5.6", nvfp4)],
)
def test_a_release_without_the_scheme_is_unknown(tmp_path: Path, release: str, config: Any) -> None:
    got = quant_rules(gate_checkpoint(tmp_path, release, "9.0", config()))
    assert set(got.values()) == {"unknown"}, got


# --- the MoE layers ---------------------------------------------------------------------------------------------


def _moe(config: dict[str, Any]) -> dict[str, Any]:
    """The same quantization on a Qwen3-MoE-shaped model (RedHatAI/Qwen3-30B-A3B-FP8-dynamic and -quantized.w8a8)."""
    return quantized(config["quantization_config"], QWEN3_MOE)


def _refusals(doc: dict[str, Any]) -> dict[str, str]:
    return {
        str(r.get("feature")): str(r.get("status"))
        for r in doc.get("reasons") or []
        if str(r.get("feature", "")).startswith("refusal ct-")
    }


@pytest.mark.parametrize(("release", "cc"), [("0.5.23", "8.0"), ("0.5.9", "8.6"), ("0.5.3", "8.0")])
@pytest.mark.parametrize("config", [fp8_dynamic, fp8_block])
def test_fp8_experts_below_8_9_are_refused(tmp_path: Path, release: str, cc: str, config: Any) -> None:
    """The dense layers fall back to W8A16 FP8; the experts run Triton's FP8 MoE kernel, which has no fp8e4nv there."""
    doc = gate_checkpoint(tmp_path, release, cc, _moe(config()))
    assert doc["decision"] == "refuse"
    assert _refusals(doc) == {"refusal ct-fp8-moe-triton-below-sm89": "blocked"}, doc.get("reasons")


@pytest.mark.parametrize("release", ["0.5.23", "0.5.8", "0.5.5"])
def test_int8_experts_are_refused_on_any_nvidia_gpu(tmp_path: Path, release: str) -> None:
    doc = gate_checkpoint(tmp_path, release, "9.0", _moe(int8_w8a8()))
    assert doc["decision"] == "refuse"
    assert _refusals(doc) == {"refusal ct-int8-moe-cuda": "blocked"}, doc.get("reasons")


def test_moe_guards(tmp_path: Path) -> None:
    """FP8 experts on Hopper, int8 on a dense model and W4A16 experts on Ampere meet neither refusal."""
    assert _refusals(gate_checkpoint(tmp_path, "0.5.23", "9.0", _moe(fp8_dynamic()))) == {}
    assert _refusals(gate_checkpoint(tmp_path, "0.5.23", "8.0", int8_w8a8())) == {}
    assert _refusals(gate_checkpoint(tmp_path, "0.5.23", "8.0", _moe(w4a16()))) == {}


def test_experts_in_the_ignore_list_are_not_read() -> None:
    config = _moe(int8_w8a8())
    config["quantization_config"]["ignore"] = ["lm_head", "re:.*mlp.experts.*"]
    assert _schemes(config) == ["int8-w8a8", "unknown"]


# --- the reader ---------------------------------------------------------------------------------------------------


def _schemes(config: dict[str, Any]) -> list[str]:
    from stackcheck.launch.preflight.schemes import compressed_tensors_schemes

    return compressed_tensors_schemes(config["quantization_config"], scheme_table("compressed_tensors_schemes"))


def test_the_reader_names_each_shape() -> None:
    assert _schemes(fp8_dynamic()) == ["fp8-w8a8"]
    assert _schemes(fp8_block()) == ["fp8-block"]
    assert _schemes(w4a16()) == ["wna16"]
    assert _schemes(int8_w8a8()) == ["int8-w8a8"]
    assert _schemes(nvfp4()) == ["nvfp4-w4a4"]
    assert _schemes(mxfp4_weight_only()) == ["unknown"]


def test_the_reader_fails_closed_on_what_it_does_not_read() -> None:
    base = fp8_dynamic()
    qc = base["quantization_config"]
    group = qc["config_groups"]["group_0"]
    no_strategy = {**group, "weights": {k: v for k, v in group["weights"].items() if k != "strategy"}}
    assert _schemes({"quantization_config": {**qc, "config_groups": {}}}) == []  # no group: nothing quantized
    cases = [
        {**qc, "linear_fp8_config": {"quant_method": "fp8"}},
        {**qc, "config_groups": {"g": {**group, "targets": ["re:.*mlp.*"]}}},
        {**qc, "config_groups": {"g": {**group, "format": "int-quantized"}}},  # group and top formats differ
        {**qc, "config_groups": {"g": no_strategy}},
        {**qc, "sparsity_config": {"format": "sparse-24-bitmask", "sparsity_structure": "2:4"}},
        {**qc, "config_groups": {"g": {**group, "weights": {**group["weights"], "num_bits": True}}}},
    ]
    for case in cases:
        assert "unknown" in _schemes({"quantization_config": case}), case
    two = {**qc, "config_groups": {"a": group, "b": w4a16()["quantization_config"]["config_groups"]["group_0"]}}
    assert _schemes({"quantization_config": {**two, "format": None}}) == ["unknown"]  # no format written: not read


def test_every_scheme_rule_is_sourced() -> None:
    checks = json.loads((ROOT / "manifests" / "checks.json").read_text())
    rules = next(c for c in checks["checks"] if c["id"] == "sglang-gpu-min-cc")["rules"]
    ours = [r for r in rules if r["id"].startswith("quant-ct-")]
    table = scheme_table("compressed_tensors_schemes")
    ids = {row["id"] for row in table["shapes"]} | {"unknown", table["per_group_format"]["id"]}
    assert len(ours) >= 10
    for r in ours:
        assert r["source"] and all(s.get("title") and s.get("url") for s in r["source"]), r["id"]
        assert isinstance(r["inferred"], bool) and r.get("note")
        scheme = next(p["value"] for p in r["when"]["all"] if p.get("op") == "contains")
        assert scheme in ids, r["id"]


# --- the wheels ---------------------------------------------------------------------------------------------------


@pytest.mark.registry
@pytest.mark.parametrize("release", ["0.5.2", "0.5.5", "0.5.7", "0.5.15", "0.5.21", "0.5.22", "0.5.23"])
def test_the_wheels_hops(release: str) -> None:
    """In the real wheel: the check of the chosen scheme's minimum, the FP8 W8A8 -> W8A16 fallback, W8A16 FP8's
    minimum and its refusal of block weights, and the NVFP4 W4A4 branch (refusal to 0.5.21, fallback from 0.5.22)."""
    texts = read_texts(fetch_wheel("sglang", release), lambda n: n.startswith(CT) and n.endswith(".py"))
    config = texts[CT + "compressed_tensors.py"]
    w8a16 = texts[CT + "schemes/compressed_tensors_w8a16_fp8.py"]
    v = tuple(int(x) for x in release.split("."))
    assert "self._check_scheme_supported(scheme.get_min_capability())" in config
    assert "return CompressedTensorsW8A16Fp8(" in config and "is_fp8_w8a8_supported" in config
    assert "return 80" in w8a16 and "Unsupported weight strategy" in w8a16
    assert ("QuantizationStrategy.BLOCK" in config) is (v >= (0, 5, 7))
    assert ("please install vllm" in w8a16) is (v <= (0, 5, 3))
    if v >= (0, 5, 7):
        assert ("does not support w4a4 nvfp4" in config) is (v <= (0, 5, 21))
        assert ("CompressedTensorsW4A16Fp4(has_input_global_scale=True)" in config) is (v >= (0, 5, 22))
