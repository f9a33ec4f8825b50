"""igap12: a compressed-tensors checkpoint whose kv_cache_scheme is static per-tensor FP8 makes SGLang 0.5.19+ run
`--kv-cache-dtype auto` as an fp8_e4m3 KV cache, and the FP8-KV rules apply to it.

CompressedTensorsConfig.kv_cache_quant_algo reports 'FP8' for the scheme its KV-cache method takes
(compressed_tensors.py 0.5.19:138-145, 0.5.23:143-150), which mem_cache/kv_cache_dtype.py's auto branch turns into
float8_e4m3fn (0.5.19:39-45, 0.5.23:51-57) and model_runner hands the attention backends (kv_cache_dtype_str). The
gate read the flag only, so FA4 off SM100 with such a checkpoint passed (a false pass); SGLang's own SM120 check of
trtllm_mha prefill reads the flag, so that launch is unknown. Config files my own, in the shape llm-compressor writes
(an FP8 W8A8 recipe with `kv_cache_scheme`). On the parent (b33a6f2) 5 of these fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, ROOT, feature_rules, gate_checkpoint
from registry_wheels import fetch_wheel, read_texts

STATIC_KV = {"num_bits": 8, "type": "float", "strategy": "tensor", "symmetric": True, "dynamic": False}


def fp8_kv(kv: Any = STATIC_KV) -> dict[str, Any]:
    args = {"num_bits": 8, "type": "float", "symmetric": True}
    group = {
        "targets": ["Linear"],
        "weights": {**args, "strategy": "channel", "dynamic": False},
        "input_activations": {**args, "strategy": "token", "dynamic": True},
    }
    qc = {
        "quant_method": "compressed-tensors",
        "format": "float-quantized",
        "config_groups": {"group_0": group},
        "ignore": ["lm_head"],
        "kv_cache_scheme": kv,
    }
    return {**LLAMA3, "quantization_config": qc}


@pytest.mark.parametrize(("release", "cc"), [("0.5.23", "9.0"), ("0.5.19", "12.0"), ("0.5.21", "8.0")])
def test_fa4_off_sm100_with_a_checkpoint_fp8_kv_cache_is_refused(tmp_path: Path, release: str, cc: str) -> None:
    doc = gate_checkpoint(tmp_path, release, cc, fp8_kv(), "--attention-backend", "fa4")
    assert doc["decision"] == "refuse"
    assert feature_rules(doc, "attention-fa4").get("fa4-fp8-kv-checkpoint-sm100-only") == "fail", doc.get("reasons")


def test_trtllm_mha_prefill_on_sm120_with_it_is_unknown(tmp_path: Path) -> None:
    doc = gate_checkpoint(tmp_path, "0.5.23", "12.0", fp8_kv(), "--attention-backend", "trtllm_mha")
    assert doc["decision"] == "refuse"
    assert feature_rules(doc, "attention-trtllm-mha").get("sm120-prefill-fp8-kv-checkpoint") == "unknown"


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags"),
    [
        ("0.5.18", "9.0", fp8_kv(), ()),  # no kv_cache_quant_algo on the config class: the KV cache stays BF16
        ("0.5.23", "9.0", fp8_kv(), ("--kv-cache-dtype", "bf16")),  # the flag keeps it BF16
        ("0.5.23", "9.0", fp8_kv({**STATIC_KV, "dynamic": True}), ()),  # ignored with a warning: BF16
        ("0.5.23", "9.0", fp8_kv({**STATIC_KV, "strategy": "head"}), ()),
        ("0.5.23", "9.0", fp8_kv(None), ()),
    ],
)
def test_where_the_kv_cache_stays_bf16_or_fa4_takes_fp8_it_is_allowed(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: tuple[str, ...]
) -> None:
    doc = gate_checkpoint(tmp_path, release, cc, config, "--attention-backend", "fa4", *flags)
    assert doc["decision"] == "allow", doc.get("reasons")


def test_the_reader_compares_as_sglang_does() -> None:
    import json

    from stackcheck.launch.preflight.schemes import kv_cache_scheme_fp8

    table = json.loads((ROOT / "manifests" / "preflight.json").read_text())["model"]["compressed_tensors_schemes"]
    assert kv_cache_scheme_fp8({"kv_cache_scheme": STATIC_KV}, table) is True
    short = {"num_bits": 8, "type": "float", "strategy": "tensor"}  # symmetric and dynamic by their defaults
    assert kv_cache_scheme_fp8({"kv_cache_scheme": short}, table) is True
    assert kv_cache_scheme_fp8({"kv_cache_scheme": {**STATIC_KV, "type": "Float"}}, table) is False
    assert kv_cache_scheme_fp8({"kv_cache_scheme": {**STATIC_KV, "symmetric": False}}, table) is False
    assert kv_cache_scheme_fp8({}, table) is False


@pytest.mark.registry
@pytest.mark.parametrize(("release", "has"), [("0.5.18", False), ("0.5.19", True), ("0.5.23", True)])
def test_the_wheels_report_the_scheme_as_fp8_from_0_5_19(release: str, has: bool) -> None:
    ct = "sglang/srt/layers/quantization/compressed_tensors/compressed_tensors.py"
    kv = "sglang/srt/mem_cache/kv_cache_dtype.py"
    texts = read_texts(fetch_wheel("sglang", release), lambda n: n in (ct, kv))
    assert ("def kv_cache_quant_algo(self)" in texts[ct]) is has
    assert ('kv_cache_scheme.get("strategy") == "tensor"' in texts[ct]) is has
    assert 'getattr(quant_config, "kv_cache_quant_algo", None)' in texts[kv]


def test_a_quark_kv_cache_config_stays_unknown_and_makes_no_fp8_kv_fact(tmp_path: Path) -> None:
    """Quark: QuarkConfig has no kv_cache_quant_algo (quark.py 0.5.12-0.5.23), so auto keeps the model dtype; its
    KV-cache configs quantize output_tensors, which _get_scheme_from_config refuses for a linear layer
    (quark.py 0.5.23:999-1003) while the fused qkv_proj compares its shards' configs: not read, unknown (a guard:
    the parent reads it the same way)."""
    import json

    from stackcheck.launch.preflight.schemes import quark_schemes

    table = json.loads((ROOT / "manifests" / "preflight.json").read_text())["model"]["quark_schemes"]
    fp8 = {"dtype": "fp8_e4m3", "qscheme": "per_tensor", "is_dynamic": False}
    kv = {"weight": fp8, "input_tensors": fp8, "output_tensors": fp8}
    qc = {
        "quant_method": "quark",
        "global_quant_config": {"weight": fp8, "input_tensors": fp8, "output_tensors": None, "bias": None},
        "layer_quant_config": {"*k_proj": kv, "*v_proj": kv},
        "export": {"kv_cache_group": ["*k_proj", "*v_proj"], "pack_method": "reorder"},
    }
    assert "unknown" in quark_schemes(qc, table)
    doc = gate_checkpoint(
        tmp_path, "0.5.23", "9.0", {**LLAMA3, "quantization_config": qc}, "--attention-backend", "fa4"
    )
    assert "model_kv_cache_fp8" not in doc["derived"]["launch"]
    assert doc["decision"] != "allow"
