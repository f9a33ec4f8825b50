"""The thirtieth fact-check sample (tests/realworld/FACTCHECK.md), row s0: a Llama 3 with `--attention-backend fa4
--kv-cache-dtype fp8_e4m3` on a B200 (SM100) was allowed. Every release 0.5.10-0.5.23 skips the FP8 query cast for
FA4 in the prefill (forward_extend: `and self.fa_impl_ver != 4` in 0.5.10-0.5.18, `prepare_paged_mha_query`'s `(not
is_prefill or self.fa_impl_ver != 4)` from 0.5.19) and hands FA4 the FP8 KV cache of an MHA model; every FA4 those
releases run (flash-attn-4 4.0.0b4-b36, the vendored copies 0.5.16-0.5.23) asserts q, k and v of one dtype: an
AssertionError at the first prefill on any GPU, SM100 included. Only the decode casts the query. The rule
fa4-fp8-kv-dtype-mismatch (0.5.3-0.5.9 before) now covers them; its checkpoint twin likewise. On the parent the
refusal tests fail (the launches were allowed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_R1, LLAMA3, feature_rules, gate_checkpoint, gate_tp8, model_dir, release_box

EAGLE3 = ("--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
          "--speculative-num-draft-tokens", "4")  # fmt: skip


@pytest.mark.parametrize(
    ("release", "cc", "kv", "extra"),
    [
        ("0.5.16", "10.0", "fp8_e4m3", EAGLE3),  # row s0 (with its EAGLE-3 draft)
        ("0.5.16", "10.0", "fp8_e4m3", ()),  # the same without speculation
        ("0.5.10", "10.0", "fp8_e5m2", ()),
        ("0.5.18", "10.0", "fp8_e4m3", ()),
        ("0.5.19", "10.0", "fp8_e4m3", ()),  # prepare_paged_mha_query keeps the prefill query BF16 for FA4
        ("0.5.23", "10.0", "fp8_e4m3", ()),
        ("0.5.23", "9.0", "fp8_e4m3", ()),  # off SM100 both rules fire
    ],
)  # fmt: skip
def test_fa4_prefill_on_an_fp8_kv_cache_refused(
    tmp_path: Path, release: str, cc: str, kv: str, extra: tuple[str, ...]
) -> None:
    llama = model_dir(tmp_path, "llama3", LLAMA3)
    flags = ("--attention-backend", "fa4", "--kv-cache-dtype", kv, *extra)
    if extra:
        draft = model_dir(tmp_path, "eagle3", {**LLAMA3, "architectures": ["LlamaForCausalLMEagle3"]})
        flags = (*flags, "--speculative-draft-model-path", str(draft))
    doc = gate_tp8(release_box(tmp_path, release, cc), llama, *flags)
    assert doc["decision"] == "refuse", doc.get("reasons")
    assert feature_rules(doc, "attention-fa4").get("fa4-fp8-kv-dtype-mismatch") == "fail", doc.get("reasons")


def test_prefill_only_fa4_is_refused_too(tmp_path: Path) -> None:
    llama = model_dir(tmp_path, "llama3", LLAMA3)
    box = release_box(tmp_path, "0.5.20", "10.0")
    doc = gate_tp8(box, llama, "--prefill-attention-backend", "fa4", "--kv-cache-dtype", "fp8_e4m3")
    assert feature_rules(doc, "attention-fa4").get("fa4-fp8-kv-dtype-mismatch") == "fail", doc.get("reasons")


def test_a_modelopt_fp8_kv_checkpoint_on_sm100_is_refused(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "m", dict(LLAMA3))
    section = {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]}
    doc = {"producer": {"name": "modelopt", "version": "0.0.0"}, "quantization": section}
    (model / "hf_quant_config.json").write_text(json.dumps(doc))
    out = gate_tp8(release_box(tmp_path, "0.5.23", "10.0"), model, "--attention-backend", "fa4")
    assert out["decision"] == "refuse"
    assert feature_rules(out, "attention-fa4").get("fa4-fp8-kv-checkpoint-dtype-mismatch") == "fail"


def test_a_compressed_tensors_fp8_kv_checkpoint_on_sm100_is_refused(tmp_path: Path) -> None:
    # a static per-tensor FP8 kv_cache_scheme (my own config, in llm-compressor's shape): FP8 KV from 0.5.19
    kv = {"num_bits": 8, "type": "float", "strategy": "tensor", "symmetric": True, "dynamic": False}
    args = {"num_bits": 8, "type": "float", "symmetric": True}
    group = {"targets": ["Linear"], "weights": {**args, "strategy": "channel", "dynamic": False},
             "input_activations": {**args, "strategy": "token", "dynamic": True}}  # fmt: skip
    qc = {"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"group_0": group},
          "ignore": ["lm_head"], "kv_cache_scheme": kv}  # fmt: skip
    out = gate_checkpoint(
        tmp_path, "0.5.23", "10.0", {**LLAMA3, "quantization_config": qc}, "--attention-backend", "fa4"
    )
    assert out["decision"] == "refuse"
    assert feature_rules(out, "attention-fa4").get("fa4-fp8-kv-checkpoint-dtype-mismatch") == "fail"


@pytest.mark.parametrize("release", ["0.5.16", "0.5.23"])
def test_bf16_kv_and_mla_models_are_not_judged_by_it(tmp_path: Path, release: str) -> None:
    box = release_box(tmp_path, release, "10.0")
    doc = gate_tp8(box, model_dir(tmp_path, "llama3", LLAMA3), "--attention-backend", "fa4")
    assert "fa4-fp8-kv-dtype-mismatch" not in feature_rules(doc, "attention-fa4")
    assert doc["decision"] == "allow", doc.get("reasons")
    r1 = model_dir(tmp_path, "dsr1", DEEPSEEK_R1)
    doc = gate_tp8(box, r1, "--prefill-attention-backend", "fa4", "--kv-cache-dtype", "fp8_e4m3")
    assert feature_rules(doc, "attention-fa4").get("fa4-fp8-kv-dtype-mismatch") in (None, "ok")
