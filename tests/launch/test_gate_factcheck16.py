"""The sixteenth fact-check sample's false passes (tests/realworld/FACTCHECK.md, "Sixteenth sample"; the rows in
bench/factcheck16_drawn.json), each read in the real wheels:

- a11, a15: `--moe-runner-backend flashinfer_trtllm` with a BF16 MoE model on a GB10 (12.1), SGLang 0.5.15. The MoE
  layers run FlashInfer's trtllm-gen fused MoE, whose kernels are SM100-family cubins only (refusal
  moe-runner-trtllm-gen-sm100-family). The gate judged no feature for the runner flag and allowed it.
- a7, a8, a12: `--moe-runner-backend deep_gemm` with a BF16 MoE model on the GB10, SGLang 0.5.14/0.5.15. The MoE
  layers call DeepGEMM's grouped GEMMs whatever SGLang's own DeepGEMM switch says, and the pinned sgl-deep-gemm has
  no SM12x kernels (the runner now needs the deepgemm feature; refusal moe-runner-deep-gemm-deepgemm-off where
  SGLang keeps DeepGEMM off, which the feature reports as a no-op).
- found checking c3 (sglang-23985): FA4 with an FP8 KV cache off SM100. The FA4 CuTe forward asserts major 10 for
  FP8 inputs in every release 0.5.14-0.5.23 (rule fa4-fp8-kv-sm100-only of attention-fa4); the gate allowed it.
- c3: triage's fix for that crash named the plan step that makes attention-fa4 ok on SM120 (SGLang 0.5.23), which
  does not fix it (the signature's stack_fix false: the feature stays blocked).
- c4 (a missing condition): the fix line of attention-trtllm-mha-sm100 now says that trtllm_mha prefill on SM120
  refuses an fp8_e4m3 KV cache in every release.

The model configs are written for the tests in the shape of the published ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, QWEN3_MOE, cli_json, gate_tp8, model_dir, reason_status, release_box

ROOT = Path(__file__).resolve().parent.parent.parent
TRTLLM = "refusal moe-runner-trtllm-gen-sm100-family"
DEEPGEMM_OFF = "refusal moe-runner-deep-gemm-deepgemm-off"


def _run(args: list[str]) -> dict[str, Any]:
    return cli_json(args)[1]


_box = release_box
_gate = gate_tp8


def _model(tmp_path: Path, name: str, config: dict[str, Any]) -> Path:
    return model_dir(tmp_path, name, config)


_reasons = reason_status


@pytest.mark.parametrize(
    ("release", "cc", "runner"),
    [
        ("0.5.15", "12.1", "flashinfer_trtllm"),  # a11, a15 (GB10)
        ("0.5.23", "12.0", "flashinfer_trtllm"),
        ("0.5.23", "12.0", "flashinfer_trtllm_routed"),
        ("0.5.23", "9.0", "flashinfer_trtllm"),
        ("0.5.9", "8.0", "flashinfer_trtllm"),
    ],
)
def test_trtllm_gen_moe_runner_off_sm100_family_refused(tmp_path: Path, release: str, cc: str, runner: str) -> None:
    doc = _gate(_box(tmp_path, release, cc), _model(tmp_path, "qwen3moe", QWEN3_MOE), "--moe-runner-backend", runner)
    assert doc["decision"] == "refuse"
    assert _reasons(doc).get(TRTLLM) == ("blocked", "crash")


def test_trtllm_gen_moe_runner_on_sm100_or_dense_model_not_refused(tmp_path: Path) -> None:
    moe = _model(tmp_path, "qwen3moe", QWEN3_MOE)
    doc = _gate(_box(tmp_path, "0.5.23", "10.0"), moe, "--moe-runner-backend", "flashinfer_trtllm")
    assert doc["decision"] == "allow"
    dense = _model(tmp_path, "llama3", LLAMA3)  # no MoE layer ever reaches the runner
    doc = _gate(_box(tmp_path, "0.5.23", "12.0"), dense, "--moe-runner-backend", "flashinfer_trtllm")
    assert TRTLLM not in _reasons(doc)
    assert doc["decision"] == "allow"


@pytest.mark.parametrize(
    ("release", "cc", "why"),
    [
        ("0.5.15", "12.1", "deepgemm"),  # a7, a12 (GB10): DeepGEMM on, no SM12x kernels in sgl-deep-gemm 0.1.4
        ("0.5.14", "12.1", "deepgemm"),  # a8
        ("0.5.15", "12.0", DEEPGEMM_OFF),  # SGLang keeps DeepGEMM off on sm 120: deep_gemm never imported
        ("0.5.15", "8.0", DEEPGEMM_OFF),
        ("0.5.23", "8.0", DEEPGEMM_OFF),
    ],
)
def test_deep_gemm_moe_runner_without_deepgemm_refused(tmp_path: Path, release: str, cc: str, why: str) -> None:
    doc = _gate(
        _box(tmp_path, release, cc), _model(tmp_path, "qwen3moe", QWEN3_MOE), "--moe-runner-backend", "deep_gemm"
    )
    assert doc["decision"] == "refuse"
    assert _reasons(doc).get(why, ("", None))[0] == "blocked"


@pytest.mark.parametrize("cc", ["9.0", "10.0"])
def test_deep_gemm_moe_runner_on_hopper_and_blackwell_allowed(tmp_path: Path, cc: str) -> None:
    doc = _gate(
        _box(tmp_path, "0.5.23", cc), _model(tmp_path, "qwen3moe", QWEN3_MOE), "--moe-runner-backend", "deep_gemm"
    )
    assert doc["decision"] == "allow"
    assert next(f for f in doc["features"] if f["feature"] == "deepgemm")["kind"] == "explicit"


@pytest.mark.parametrize(("cc", "kv"), [("12.0", "fp8_e4m3"), ("12.0", "fp8_e5m2"), ("9.0", "fp8_e4m3")])
def test_fa4_with_fp8_kv_off_sm100_refused(tmp_path: Path, cc: str, kv: str) -> None:
    llama = _model(tmp_path, "llama3", LLAMA3)
    doc = _gate(_box(tmp_path, "0.5.23", cc), llama, "--attention-backend", "fa4", "--kv-cache-dtype", kv)
    assert doc["decision"] == "refuse"
    fa4 = next(r for r in doc["reasons"] if r["feature"] == "attention-fa4")
    assert "fa4-fp8-kv-sm100-only" in {x.get("rule") for x in fa4["reasons"]}


def test_fa4_with_fp8_kv_on_sm100_refused_by_the_prefill_and_bf16_kv_on_sm120_allowed(tmp_path: Path) -> None:
    llama = _model(tmp_path, "llama3", LLAMA3)
    doc = _gate(_box(tmp_path, "0.5.23", "10.0"), llama, "--attention-backend", "fa4", "--kv-cache-dtype", "fp8_e4m3")
    # the thirtieth sample: the decode casts the query to FP8, the prefill does not (fa4-fp8-kv-dtype-mismatch)
    assert doc["decision"] == "refuse"
    fa4 = next(r for r in doc["reasons"] if r["feature"] == "attention-fa4")
    assert {x.get("rule"): x.get("result") for x in fa4["reasons"]}.get("fa4-fp8-kv-dtype-mismatch") == "fail"
    doc = _gate(_box(tmp_path, "0.5.23", "12.0"), llama, "--attention-backend", "fa4")
    assert doc["decision"] == "allow"


def test_triage_names_no_upgrade_for_fa4_fp8_off_sm100() -> None:
    case = ROOT / "tests" / "realworld" / "sglang-23985-fa4-fp8-kv-sm120-5090"
    doc = _run(["triage", str(case / "server.log"), "--facts", str(case / "facts.json"), "--format", "json"])
    fix = doc["fix"]
    assert fix["still_blocked"] is True and fix["feature"] == "attention-fa4"
    assert "step" not in fix


def test_trtllm_mha_signature_fix_says_fp8_prefill_on_sm120() -> None:
    sigs = json.loads((ROOT / "manifests" / "signatures.json").read_text())["signatures"]
    fix = next(s for s in sigs if s["id"] == "attention-trtllm-mha-sm100")["fix"]
    assert "fp8_e4m3" in fix and "SM120" in fix


@pytest.mark.parametrize(
    ("config", "moe"),
    [
        ({"architectures": ["DeepseekV3ForCausalLM"], "n_routed_experts": 256}, True),
        ({"architectures": ["X"], "text_config": {"num_local_experts": 16}}, True),
        ({"architectures": ["MixtralForCausalLM"], "num_local_experts": 8}, True),
        ({"architectures": ["LlamaForCausalLM"], "num_experts": 1}, False),
        (LLAMA3, False),
    ],
)
def test_model_moe_reading(config: dict[str, Any], moe: bool) -> None:
    from stackcheck.launch.preflight.model import attention_keys
    from stackcheck.launch.refusals import _model_moe

    assert _model_moe(attention_keys(config)) is moe
