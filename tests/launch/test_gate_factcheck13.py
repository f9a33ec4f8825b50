"""What the thirteenth fact-check sample found (tests/realworld/FACTCHECK.md, "Thirteenth sample").

Row f1: `--attention-backend minicpm_flashinfer` with Llama 3 on 8x H200 and SGLang 0.5.22 passed the gate. SGLang
registers both MiniCPM sparse backends to MiniCPMSparseBackend, which raises ValueError 'MiniCPM model must have
sparse attention enabled.' unless the model's config is its MiniCPM SALA config with sparse attention (0.5.19-0.5.23
layers/attention/minicpm/backend.py). New refusal minicpm-sparse-backend-minicpm-models-only, judged on config.json's
first architecture.

Row f3: `--attention-backend cutedsl_mla` with DeepSeek R1 on 8x H200 and SGLang 0.5.19 passed the gate (launch.json
mapped cutedsl_mla to no feature). The backend is SGLang's TRT-LLM MLA backend with FlashInfer's backend='cute-dsl':
its decode raises ValueError 'cute-dsl backend (MLA decode kernel) requires SM100+' below SM100 and its prefill is
trtllm-gen's, SM100/SM103 (SM107) only. New refusal cutedsl-mla-sm100-family, judged on the box's GPU major.

Row e1: a ModelOpt MXFP8 checkpoint (config.json quantization_config quant_method modelopt, quant_algo MXFP8) with
`--quantization modelopt_fp8` on 8x H200 and SGLang 0.5.17 passed the gate. Before 0.5.18 SGLang maps any quant_algo
containing 'FP8' to modelopt_fp8 and ModelOptFp8Config accepts it, with per-tensor scales that the checkpoint's block
scales do not fit (layers/parameter.py asserts a scale's first dimension is 1). New preflight.json
model.modelopt_unloadable row: the preflight fails such a checkpoint in 0.5.1-0.5.17.

Row f2: `--attention-backend dsv4` with DeepSeek R1 on 8x H200 and SGLang 0.5.14 passed the gate: the DeepSeek-V4
backend asserts head_dim 512. The fix is ileft's (refusal dsv4-attention-backend-dsv4-models-only, merged at stop
36); the test is skipped only where launch.json lacks that rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import DEEPSEEK_R1, LLAMA3, model_dir
from gate_cli import gate_json as _gate_json

from stackcheck.knowledge.loader import load

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"  # SGLang 0.5.23, cc 9.0
MINICPM = "refusal minicpm-sparse-backend-minicpm-models-only"
CUTEDSL = "refusal cutedsl-mla-sm100-family"
#: a MiniCPM SALA checkpoint's config.json as SGLang's MiniCPMHybridConfig reads it (sparse_config set)
MINICPM_SALA: dict[str, Any] = {
    "architectures": ["MiniCPMSALAForCausalLM"], "model_type": "minicpm_sala", "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32,
    "sparse_config": {"kernel_size": 32, "kernel_stride": 16, "init_blocks": 1, "block_size": 64,
                      "window_size": 2048, "topk": 64, "dense_len": 8192},
}  # fmt: skip


def _box(tmp_path: Path, version: str, cc: str | None = None) -> Path:
    doc = json.loads(H200.read_text())
    doc["facts"]["packages"]["sglang"].update(version=version, dist_version=version)
    for gpu in doc["facts"]["gpus"] if cc is not None else []:
        gpu.update(compute_capability=cc)
    facts = tmp_path / f"box-{version}-{cc}.json"
    facts.write_text(json.dumps(doc))
    return facts


def gate_json(facts: Path, *args: str) -> dict[str, Any]:
    return _gate_json(facts, *args, dry_run=True)


def _statuses(doc: dict[str, Any]) -> dict[str, str]:
    return {str(r.get("feature")): str(r.get("status")) for r in doc.get("reasons") or []}


def _has_rule(rule: str) -> bool:
    return any(r.get("id") == rule for r in load([], env={}).launch["refusals"]["rules"])


@pytest.mark.parametrize("version", ["0.5.19", "0.5.22", "0.5.23"])
@pytest.mark.parametrize("backend", ["minicpm_flashinfer", "minicpm_flashattn"])
def test_the_gate_does_not_allow_row_f1(tmp_path: Path, version: str, backend: str) -> None:
    model = model_dir(tmp_path, "llama3", LLAMA3)
    doc = gate_json(_box(tmp_path, version), "--model-path", str(model), "--tp", "8", "--attention-backend", backend)
    assert doc["decision"] != "allow"
    assert _statuses(doc).get(MINICPM) == "blocked", json.dumps(doc.get("reasons"))[:800]
    assert "MiniCPM model must have sparse attention enabled" in json.dumps(doc["reasons"])


def test_the_minicpm_rule_passes_a_minicpm_sparse_model_and_says_unknown_for_one_not_read(tmp_path: Path) -> None:
    sala = model_dir(tmp_path, "sala", MINICPM_SALA)
    doc = gate_json(_box(tmp_path, "0.5.22"), "--model-path", str(sala), "--tp", "8", "--attention-backend",
                    "minicpm_flashinfer")  # fmt: skip
    assert MINICPM not in _statuses(doc)
    absent = gate_json(_box(tmp_path, "0.5.22"), "--model-path", str(tmp_path / "absent"), "--tp", "8",
                       "--attention-backend", "minicpm_flashinfer")  # fmt: skip
    assert _statuses(absent).get(MINICPM) == "unknown"
    assert absent["decision"] != "allow"
    old = gate_json(_box(tmp_path, "0.5.18"), "--model-path", str(model_dir(tmp_path, "l", LLAMA3)), "--tp", "8",
                    "--attention-backend", "minicpm_flashinfer")  # fmt: skip
    assert MINICPM not in _statuses(old)  # no such backend yet: attention-minicpm-sparse's minicpm-choice says so
    # SGLang picks a MiniCPM backend itself for a MiniCPM sparse model only: a launch without the flag is not unknown
    plain = gate_json(_box(tmp_path, "0.5.22"), "--model-path", str(model_dir(tmp_path, "p", LLAMA3)), "--tp", "8")
    assert MINICPM not in _statuses(plain)
    assert plain["decision"] == "allow", json.dumps(plain.get("reasons"))[:800]


@pytest.mark.parametrize(("version", "cc"), [("0.5.19", "9.0"), ("0.5.13", "9.0"), ("0.5.23", "9.0"),
                                             ("0.5.19", "12.0"), ("0.5.23", "8.0")])  # fmt: skip
def test_the_gate_does_not_allow_row_f3(tmp_path: Path, version: str, cc: str) -> None:
    model = model_dir(tmp_path, "deepseek-r1", DEEPSEEK_R1)
    doc = gate_json(_box(tmp_path, version, cc), "--model-path", str(model), "--tp", "8", "--attention-backend",
                    "cutedsl_mla")  # fmt: skip
    assert doc["decision"] != "allow"
    assert _statuses(doc).get(CUTEDSL) == "blocked", json.dumps(doc.get("reasons"))[:800]
    decode_only = gate_json(_box(tmp_path, version, cc), "--model-path", str(model), "--tp", "8",
                            "--decode-attention-backend", "cutedsl_mla")  # fmt: skip
    assert _statuses(decode_only).get(CUTEDSL) == "blocked"


def test_the_cutedsl_rule_passes_sm100_and_not_before_0_5_13(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "deepseek-r1", DEEPSEEK_R1)
    for version in ("0.5.19", "0.5.23"):
        doc = gate_json(_box(tmp_path, version, "10.0"), "--model-path", str(model), "--tp", "8",
                        "--attention-backend", "cutedsl_mla")  # fmt: skip
        assert CUTEDSL not in _statuses(doc)
    old = gate_json(_box(tmp_path, "0.5.12", "9.0"), "--model-path", str(model), "--tp", "8", "--attention-backend",
                    "cutedsl_mla")  # fmt: skip
    assert CUTEDSL not in _statuses(old)


MXFP8 = {"quant_method": "modelopt", "quant_algo": "MXFP8"}


@pytest.mark.parametrize("flags", [["--quantization", "modelopt_fp8"], [], ["--quantization", "modelopt"]])
@pytest.mark.parametrize("version", ["0.5.17", "0.5.10"])
def test_the_gate_does_not_allow_row_e1(tmp_path: Path, version: str, flags: list[str]) -> None:
    model = model_dir(tmp_path, "mxfp8", {**LLAMA3, "quantization_config": MXFP8})
    doc = gate_json(_box(tmp_path, version), "--model-path", str(model), "--tp", "8", *flags)
    assert doc["decision"] != "allow"
    assert _statuses(doc).get("model") == "fail", json.dumps(doc.get("reasons"))[:800]
    assert "ModelOptFp8Config" in json.dumps(doc["reasons"])


def test_the_mxfp8_row_spares_fp8_checkpoints_and_the_releases_that_map_mxfp8(tmp_path: Path) -> None:
    fp8 = model_dir(
        tmp_path, "fp8", {**LLAMA3, "quantization_config": {"quant_method": "modelopt", "quant_algo": "FP8"}}
    )
    doc = gate_json(_box(tmp_path, "0.5.17"), "--model-path", str(fp8), "--tp", "8", "--quantization", "modelopt_fp8")
    assert _statuses(doc).get("model") != "fail"
    mx = model_dir(tmp_path, "mx", {**LLAMA3, "quantization_config": MXFP8})
    new = gate_json(_box(tmp_path, "0.5.18"), "--model-path", str(mx), "--tp", "8")
    assert "ModelOptFp8Config" not in json.dumps(new.get("reasons"))  # 0.5.18 maps it to mxfp8 (judged there)


@pytest.mark.skipif(
    not _has_rule("dsv4-attention-backend-dsv4-models-only"),
    reason="dsv4 with a model that is no DeepSeek-V4 is ileft's refusal, absent here",
)
def test_the_gate_does_not_allow_row_f2(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "deepseek-r1", DEEPSEEK_R1)
    doc = gate_json(_box(tmp_path, "0.5.14"), "--model-path", str(model), "--tp", "8", "--attention-backend", "dsv4")
    assert doc["decision"] != "allow", json.dumps(doc.get("reasons"))[:800]


# ---- beside the draw: the other attention choices population (f) allowed that fail the same way ----------------


def test_llada2_cfg_flashinfer_with_an_mla_model_is_refused(tmp_path: Path) -> None:
    """0.5.22-0.5.23 attention_registry.py: ValueError 'LLaDA2 CFG attention does not use an MLA backend'."""
    r1 = model_dir(tmp_path, "deepseek-r1", DEEPSEEK_R1)
    rule = "refusal llada2-cfg-flashinfer-non-mla-models-only"
    for version in ("0.5.22", "0.5.23"):
        doc = gate_json(_box(tmp_path, version), "--model-path", str(r1), "--tp", "8", "--attention-backend",
                        "llada2_cfg_flashinfer")  # fmt: skip
        assert _statuses(doc).get(rule) == "blocked", json.dumps(doc.get("reasons"))[:800]
    llama = model_dir(tmp_path, "llama3", LLAMA3)
    ok = gate_json(_box(tmp_path, "0.5.23"), "--model-path", str(llama), "--tp", "8", "--attention-backend",
                   "llada2_cfg_flashinfer")  # fmt: skip
    assert rule not in _statuses(ok)


@pytest.mark.parametrize(
    ("version", "cc", "extra"),
    [("0.5.19", "9.0", []), ("0.5.19", "9.0", ["--kv-cache-dtype", "fp8_e4m3"]), ("0.5.14", "12.0", []),
     ("0.5.22", "10.0", ["--kv-cache-dtype", "auto"])],
)  # fmt: skip
def test_tokenspeed_mla_off_blackwell_or_without_fp8_kv_is_refused(
    tmp_path: Path, version: str, cc: str, extra: list[str]
) -> None:
    """0.5.12-0.5.22 raise while reading the arguments: not Blackwell, or --kv-cache-dtype other than fp8_e4m3."""
    r1 = model_dir(tmp_path, "deepseek-r1", DEEPSEEK_R1)
    doc = gate_json(_box(tmp_path, version, cc), "--model-path", str(r1), "--tp", "8", "--attention-backend",
                    "tokenspeed_mla", *extra)  # fmt: skip
    assert _statuses(doc).get("refusal tokenspeed-mla-blackwell-fp8-kv") == "blocked"
    good = gate_json(_box(tmp_path, version, "10.0"), "--model-path", str(r1), "--tp", "8", "--attention-backend",
                     "tokenspeed_mla", "--kv-cache-dtype", "fp8_e4m3")  # fmt: skip
    assert "refusal tokenspeed-mla-blackwell-fp8-kv" not in _statuses(good)


def test_tokenspeed_mla_as_0_5_23_aliases_it_is_judged_as_cutedsl_mla(tmp_path: Path) -> None:
    rule = "refusal tokenspeed-mla-alias-cutedsl-mla"
    llama, r1 = model_dir(tmp_path, "llama3", LLAMA3), model_dir(tmp_path, "deepseek-r1", DEEPSEEK_R1)
    for model, cc in ((llama, "10.0"), (r1, "9.0")):
        doc = gate_json(_box(tmp_path, "0.5.23", cc), "--model-path", str(model), "--tp", "8", "--attention-backend",
                        "tokenspeed_mla")  # fmt: skip
        assert _statuses(doc).get(rule) == "blocked", json.dumps(doc.get("reasons"))[:800]
    b200 = gate_json(_box(tmp_path, "0.5.23", "10.0"), "--model-path", str(r1), "--tp", "8", "--attention-backend",
                     "tokenspeed_mla")  # fmt: skip
    assert rule not in _statuses(b200)
