"""igap13: a ModelOpt checkpoint whose quantization config names an FP8 KV cache (hf_quant_config.json's
`kv_cache_quant_algo: FP8`, or config.json's FP8 `kv_cache_scheme`) makes SGLang run `--kv-cache-dtype auto` as an
fp8_e4m3 KV cache: the runner reads getattr(quant_config, 'kv_cache_quant_algo') (model_runner.py init_memory_pool
0.5.3-0.5.18, mem_cache/kv_cache_dtype.py from 0.5.19), which ModelOptFp8Config reports from 0.5.4 and
ModelOptFp4Config from 0.5.3. The gate read launch.model_kv_cache_fp8 for compressed-tensors only, so FA4 off SM100
with such a checkpoint passed (a false pass). Config files my own, in the shape ModelOpt writes them. On the parent
(dba752d) 7 of these 14 fail (the registry tests read the wheels only)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, ROOT, feature_rules, gate_tp8, model_dir, release_box
from registry_wheels import fetch_wheel, read_texts


def nested(tmp_path: Path, algo: str = "FP8", kv: Any = "FP8") -> Path:
    """A model directory with LLAMA3's config.json and an hf_quant_config.json (the legacy nested form)."""
    model = model_dir(tmp_path, "m", dict(LLAMA3))
    section: dict[str, Any] = {"quant_algo": algo, "exclude_modules": ["lm_head"]}
    if kv is not None:
        section["kv_cache_quant_algo"] = kv
    if "FP4" in algo:
        section["group_size"] = 16
    doc = {"producer": {"name": "modelopt", "version": "0.0.0"}, "quantization": section}
    (model / "hf_quant_config.json").write_text(json.dumps(doc))
    return model


def flat(tmp_path: Path, scheme: Any) -> Path:
    """config.json with a flat ModelOpt quantization_config (quant_method modelopt, quant_algo at the top)."""
    qc: dict[str, Any] = {"quant_method": "modelopt", "quant_algo": "FP8", "ignore": ["lm_head"]}
    if scheme is not None:
        qc["kv_cache_scheme"] = scheme
    return model_dir(tmp_path, "m", {**LLAMA3, "quantization_config": qc})


FP8_SCHEME = {"type": "float", "num_bits": 8, "dynamic": False}


@pytest.mark.parametrize(("release", "cc"), [("0.5.23", "9.0"), ("0.5.12", "9.0"), ("0.5.19", "12.0")])
def test_fa4_off_sm100_with_a_modelopt_fp8_kv_cache_is_refused(tmp_path: Path, release: str, cc: str) -> None:
    doc = gate_tp8(release_box(tmp_path, release, cc), nested(tmp_path), "--attention-backend", "fa4")
    assert doc["decision"] == "refuse"
    assert doc["derived"]["launch"].get("model_kv_cache_fp8") is True
    assert feature_rules(doc, "attention-fa4").get("fa4-fp8-kv-checkpoint-sm100-only") == "fail", doc.get("reasons")


def test_the_flat_config_json_form_is_read_too(tmp_path: Path) -> None:
    doc = gate_tp8(release_box(tmp_path, "0.5.23", "9.0"), flat(tmp_path, FP8_SCHEME), "--attention-backend", "fa4")
    assert doc["decision"] == "refuse"
    assert feature_rules(doc, "attention-fa4").get("fa4-fp8-kv-checkpoint-sm100-only") == "fail", doc.get("reasons")


def test_before_0_5_10_fa4_fails_the_dtype_assert_on_any_gpu(tmp_path: Path) -> None:
    doc = gate_tp8(release_box(tmp_path, "0.5.5", "10.0"), nested(tmp_path), "--attention-backend", "fa4")
    assert doc["decision"] == "refuse"
    assert feature_rules(doc, "attention-fa4").get("fa4-fp8-kv-checkpoint-dtype-mismatch") == "fail", doc.get("reasons")


def test_trtllm_mha_prefill_on_sm120_with_it_is_unknown(tmp_path: Path) -> None:
    doc = gate_tp8(release_box(tmp_path, "0.5.23", "12.0"), nested(tmp_path), "--attention-backend", "trtllm_mha")
    assert doc["decision"] == "refuse"
    assert feature_rules(doc, "attention-trtllm-mha").get("sm120-prefill-fp8-kv-checkpoint") == "unknown"


@pytest.mark.parametrize(
    ("release", "cc", "kv", "flags"),
    [
        ("0.5.23", "9.0", None, ()),  # no KV algorithm: the model dtype
        ("0.5.23", "9.0", "FP8", ("--kv-cache-dtype", "bf16")),  # the flag keeps it BF16
        ("0.5.3", "9.0", "FP8", ()),  # ModelOptFp8Config keeps it as kv_cache_quant_method: not read by the runner
    ],
)
def test_where_the_kv_cache_stays_bf16_or_fa4_takes_fp8_no_checkpoint_rule_fires(
    tmp_path: Path, release: str, cc: str, kv: Any, flags: tuple[str, ...]
) -> None:
    doc = gate_tp8(release_box(tmp_path, release, cc), nested(tmp_path, kv=kv), "--attention-backend", "fa4", *flags)
    fired = {k for k, v in feature_rules(doc, "attention-fa4").items() if "checkpoint" in k and v != "ok"}
    assert not fired, doc.get("reasons")
    if release == "0.5.23":
        assert doc["decision"] == "allow", doc.get("reasons")


def test_the_reader_compares_as_the_releases_do() -> None:
    from stackcheck.launch.preflight.schemes import modelopt_kv_cache_fp8

    table = json.loads((ROOT / "manifests" / "preflight.json").read_text())["model"]["modelopt_kv_cache_fp8"]
    algo = {"quant_algo": "FP8", "kv_cache_quant_algo": "fp8"}  # the runner compares upper()
    assert modelopt_kv_cache_fp8(algo, "modelopt_fp8", True, table, "0.5.9") is True
    assert modelopt_kv_cache_fp8(algo, "modelopt", True, table, "0.5.3") is False
    assert modelopt_kv_cache_fp8(algo, "modelopt_fp4", True, table, "0.5.3") is True
    assert modelopt_kv_cache_fp8(algo, "modelopt_fp8", True, table, None) is True  # release unknown: the stricter
    # the flat form: the scheme decides where it is a mapping; the flat KV algorithm counts for FP8 from 0.5.15
    assert modelopt_kv_cache_fp8({**algo, "kv_cache_scheme": FP8_SCHEME}, "modelopt_fp8", False, table, "0.5.4")
    assert modelopt_kv_cache_fp8(algo, "modelopt_fp8", False, table, "0.5.14") is False
    assert modelopt_kv_cache_fp8(algo, "modelopt_fp8", False, table, "0.5.15") is True
    assert modelopt_kv_cache_fp8({"kv_cache_scheme": " float8 "}, "modelopt_fp4", False, table, "0.5.23") is True
    assert modelopt_kv_cache_fp8({"kv_cache_scheme": {"type": "int", "num_bits": 8}}, "modelopt_fp4", False, table,
                                 "0.5.23") is False  # fmt: skip
    assert modelopt_kv_cache_fp8(algo, "w4afp8", True, table, "0.5.23") is None  # not modelled


@pytest.mark.registry
@pytest.mark.parametrize(("release", "fp8_reports"), [("0.5.3", False), ("0.5.4", True), ("0.5.23", True)])
def test_the_wheels_report_the_kv_algorithm_per_release(release: str, fp8_reports: bool) -> None:
    mo = "sglang/srt/layers/quantization/modelopt_quant.py"
    texts = read_texts(fetch_wheel("sglang", release), lambda n: n == mo)
    fp8_class = texts[mo].split("class ModelOptFp8Config", 1)[1].split("\nclass ", 1)[0]
    assert ("self.kv_cache_quant_method = kv_cache_quant_method" in fp8_class) is not fp8_reports
    assert "self.kv_cache_quant_algo = kv_cache_quant_algo" in texts[mo]  # the FP4 class (or the shared base)
    assert 'quantization_section.get("kv_cache_quant_algo")' in fp8_class
