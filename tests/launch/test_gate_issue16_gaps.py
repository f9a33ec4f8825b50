"""The gate's launch flags the sixteenth fact-check sample left 'not judged' (tests/realworld/FACTCHECK.md,
"Sixteenth sample", noticed and left alone), each read in the sglang wheels:

- `--speculative-moe-runner-backend` (0.5.5-0.5.23): SGLang builds and runs the draft model inside
  speculative_moe_backend_context, which hands its MoE layers this runner in place of --moe-runner-backend; 0.5.7-0.5.11
  assert at argument parsing that it is not flashinfer_trtllm. The gate passed the flag through unchecked.

The model configs are written for the tests in the shape of the published ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_R1, LLAMA3, QWEN3_MOE, cli_json, gate_tp8, model_dir, reason_status, release_box

SPEC_ASSERT = "refusal spec-moe-runner-trtllm-asserted"
SPEC_TRTLLM = "refusal spec-moe-runner-trtllm-gen-sm100-family"
SPEC_DEEPGEMM_OFF = "refusal spec-moe-runner-deep-gemm-deepgemm-off"
EAGLE3_DRAFT: dict[str, Any] = {
    "architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
}  # fmt: skip
DEEPSEEK_MOE: dict[str, Any] = {**DEEPSEEK_R1, "n_routed_experts": 256}


_reasons = reason_status


def _mtp(*extra: str) -> list[str]:
    return ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
            "--speculative-num-draft-tokens", "2", *extra]  # fmt: skip


@pytest.mark.parametrize("release", ["0.5.7", "0.5.9", "0.5.11"])
@pytest.mark.parametrize("cc", ["10.0", "9.0"])
def test_spec_moe_runner_flashinfer_trtllm_asserted_0_5_7_to_0_5_11(tmp_path: Path, release: str, cc: str) -> None:
    # asserted at argument parsing on every GPU and model, with or without speculative decoding
    dense = model_dir(tmp_path, "llama3", LLAMA3)
    doc = gate_tp8(release_box(tmp_path, release, cc), dense, "--speculative-moe-runner-backend", "flashinfer_trtllm")
    assert doc["decision"] == "refuse"
    assert _reasons(doc).get(SPEC_ASSERT) == ("blocked", "crash")


@pytest.mark.parametrize("release", ["0.5.6", "0.5.12", "0.5.23"])
def test_spec_moe_runner_flashinfer_trtllm_not_asserted_elsewhere(tmp_path: Path, release: str) -> None:
    moe = model_dir(tmp_path, "dsr1", DEEPSEEK_MOE)  # MTP: the draft is the target's checkpoint
    doc = gate_tp8(
        release_box(tmp_path, release, "10.0"), moe, *_mtp("--speculative-moe-runner-backend", "flashinfer_trtllm")
    )
    assert SPEC_ASSERT not in _reasons(doc) and SPEC_TRTLLM not in _reasons(doc)


@pytest.mark.parametrize(
    ("release", "runner"),
    [
        ("0.5.15", "flashinfer_trtllm"),
        ("0.5.23", "flashinfer_trtllm"),
        ("0.5.23", "flashinfer_trtllm_routed"),
        ("0.5.6", "flashinfer_trtllm"),
        ("0.5.10", "flashinfer_trtllm_routed"),  # passes 0.5.7-0.5.11's assertion, which tests flashinfer_trtllm
    ],
)
def test_spec_moe_runner_trtllm_gen_moe_draft_off_sm100_refused(tmp_path: Path, release: str, runner: str) -> None:
    moe = model_dir(tmp_path, "dsr1", DEEPSEEK_MOE)
    doc = gate_tp8(release_box(tmp_path, release, "9.0"), moe, *_mtp("--speculative-moe-runner-backend", runner))
    assert doc["decision"] == "refuse"
    assert _reasons(doc).get(SPEC_TRTLLM) == ("blocked", "crash")


def test_spec_moe_runner_trtllm_gen_dense_draft_or_no_speculation_not_refused(tmp_path: Path) -> None:
    target = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    draft = model_dir(tmp_path, "eagle3", EAGLE3_DRAFT)  # a dense EAGLE-3 head: no MoE layer takes the runner
    box = release_box(tmp_path, "0.5.23", "9.0")
    args = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", str(draft),
            "--speculative-moe-runner-backend", "flashinfer_trtllm"]  # fmt: skip
    assert SPEC_TRTLLM not in _reasons(gate_tp8(box, target, *args))
    # no speculative decoding: no draft model runs the flag
    doc = gate_tp8(box, target, "--speculative-moe-runner-backend", "flashinfer_trtllm")
    assert SPEC_TRTLLM not in _reasons(doc)


@pytest.mark.parametrize(
    ("release", "cc", "why"),
    [("0.5.15", "8.0", SPEC_DEEPGEMM_OFF), ("0.5.23", "8.0", SPEC_DEEPGEMM_OFF), ("0.5.15", "12.1", "deepgemm")],
)
def test_spec_moe_runner_deep_gemm_judged_as_the_target_flag(tmp_path: Path, release: str, cc: str, why: str) -> None:
    moe = model_dir(tmp_path, "dsr1", DEEPSEEK_MOE)
    doc = gate_tp8(release_box(tmp_path, release, cc), moe, *_mtp("--speculative-moe-runner-backend", "deep_gemm"))
    assert doc["decision"] == "refuse"
    assert _reasons(doc).get(why, ("", None))[0] == "blocked"


def test_spec_moe_runner_deep_gemm_on_hopper_allowed(tmp_path: Path) -> None:
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    doc = gate_tp8(release_box(tmp_path, "0.5.23", "9.0"), moe, "--speculative-moe-runner-backend", "deep_gemm")
    assert doc["decision"] == "allow"
    assert next(f for f in doc["features"] if f["feature"] == "deepgemm")["kind"] == "explicit"


JIT_OFF = "refusal moe-runner-deep-gemm-jit-off"


@pytest.mark.parametrize(
    ("release", "cc"), [("0.5.15", "9.0"), ("0.5.23", "10.0"), ("0.5.23", "9.0"), ("0.5.12", "9.0")]
)
@pytest.mark.parametrize("off", ["0", "false"])
def test_deep_gemm_runner_with_jit_deepgemm_off_refused(tmp_path: Path, release: str, cc: str, off: str) -> None:
    # SGLANG_ENABLE_JIT_DEEPGEMM off: deep_gemm never imported, the runner's grouped GEMMs fail by name
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    line = [
        "env",
        f"SGLANG_ENABLE_JIT_DEEPGEMM={off}",
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        str(moe),
    ]
    args = ["gate", "--facts", str(release_box(tmp_path, release, cc)), "--dry-run", "--format", "json", "--"]
    doc = cli_json([*args, *line, "--tp", "8", "--moe-runner-backend", "deep_gemm"])[1]
    assert doc["decision"] == "refuse"
    assert _reasons(doc).get(JIT_OFF) == ("blocked", "crash")


def test_deep_gemm_runner_with_jit_deepgemm_on_or_dense_model_not_refused_by_it(tmp_path: Path) -> None:
    box = release_box(tmp_path, "0.5.23", "9.0")
    doc = gate_tp8(box, model_dir(tmp_path, "qwen3moe", QWEN3_MOE), "--moe-runner-backend", "deep_gemm")
    assert JIT_OFF not in _reasons(doc) and doc["decision"] == "allow"
    line = ["env", "SGLANG_ENABLE_JIT_DEEPGEMM=0", "python3", "-m", "sglang.launch_server"]
    dense = model_dir(tmp_path, "llama3", LLAMA3)
    args = ["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line, "--model-path", str(dense)]
    doc = cli_json([*args, "--tp", "8", "--moe-runner-backend", "deep_gemm"])[1]
    assert JIT_OFF not in _reasons(doc)


TRT_QUANT = "refusal moe-runner-trtllm-quantization"
TRT_NO_QUANT = "refusal moe-runner-trtllm-no-quantization"
NEMOTRON_H: dict[str, Any] = {
    "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
}  # fmt: skip


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags", "want"),
    [
        # 0.5.2-0.5.4: no --quantization is no quantization on any GPU, for a dense model too
        ("0.5.4", "10.0", QWEN3_MOE, [], (TRT_NO_QUANT, "blocked")),
        ("0.5.3", "10.0", LLAMA3, [], (TRT_NO_QUANT, "blocked")),
        ("0.5.4", "10.0", QWEN3_MOE, ["--quantization", "modelopt_fp8"], (TRT_QUANT, "blocked")),
        ("0.5.2", "10.0", DEEPSEEK_MOE, ["--quantization", "awq"], (TRT_QUANT, "blocked")),
        # 0.5.5-0.5.6: an architecture whose quantization SGLang fills from the checkpoint on SM100 is unknown
        ("0.5.5", "10.0", QWEN3_MOE, [], (TRT_NO_QUANT, "blocked")),  # Qwen3 MoE filled only from 0.5.6
        ("0.5.6", "10.0", QWEN3_MOE, [], (TRT_NO_QUANT, "unknown")),
        ("0.5.5", "10.0", DEEPSEEK_MOE, [], (TRT_NO_QUANT, "unknown")),
        ("0.5.6", "9.0", DEEPSEEK_MOE, [], (TRT_NO_QUANT, "blocked")),  # no fill off SM100
        ("0.5.6", "10.0", LLAMA3, [], (TRT_NO_QUANT, "blocked")),
        ("0.5.6", "10.0", QWEN3_MOE, ["--quantization", "w8a8_fp8"], (TRT_QUANT, "blocked")),
        ("0.5.6", "10.0", NEMOTRON_H, ["--quantization", "modelopt"], (TRT_QUANT, "unknown")),
        ("0.5.5", "10.0", NEMOTRON_H, ["--quantization", "modelopt"], (TRT_QUANT, "blocked")),
    ],
)
def test_flashinfer_trtllm_quantization_assertion_0_5_2_to_0_5_6(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: list[str], want: tuple[str, str]
) -> None:
    model = model_dir(tmp_path, "m", config)
    doc = gate_tp8(release_box(tmp_path, release, cc), model, "--moe-runner-backend", "flashinfer_trtllm", *flags)
    assert doc["decision"] == "refuse"
    assert _reasons(doc).get(want[0], ("", None))[0] == want[1]


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.4", ["--quantization", "fp8"]),
        ("0.5.6", ["--quantization", "modelopt_fp8"]),
        ("0.5.1", []),  # no assertion yet
        ("0.5.7", []),  # BF16 (None) admitted from 0.5.7
        ("0.5.23", []),
    ],
)
def test_flashinfer_trtllm_quantization_admitted(tmp_path: Path, release: str, flags: list[str]) -> None:
    model = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    doc = gate_tp8(release_box(tmp_path, release, "10.0"), model, "--moe-runner-backend", "flashinfer_trtllm", *flags)
    assert TRT_QUANT not in _reasons(doc) and TRT_NO_QUANT not in _reasons(doc)


@pytest.mark.parametrize(("release", "cc"), [("0.5.3", "10.0"), ("0.5.6", "9.0"), ("0.5.8", "10.0"), ("0.5.9", "9.0")])
@pytest.mark.parametrize("kv", ["fp8_e4m3", "fp8_e5m2"])
def test_fa4_with_fp8_kv_on_0_5_3_to_0_5_9_refused_for_mha_models(
    tmp_path: Path, release: str, cc: str, kv: str
) -> None:
    # sgl-kernel's FA4 (0.5.3-0.5.8) and 0.5.9's vendored copy assert q, k, v of one FP16/BF16 dtype; the backend
    # keeps q in BF16 for FA4 and hands it the FP8 cache
    llama = model_dir(tmp_path, "llama3", LLAMA3)
    doc = gate_tp8(
        release_box(tmp_path, release, cc), llama, "--prefill-attention-backend", "fa4", "--kv-cache-dtype", kv
    )
    assert doc["decision"] == "refuse"
    fa4 = next(r for r in doc["reasons"] if r["feature"] == "attention-fa4")
    assert "fa4-fp8-kv-dtype-mismatch" in {x.get("rule") for x in fa4["reasons"]}


@pytest.mark.parametrize("release", ["0.5.5", "0.5.9"])
def test_fa4_fp8_kv_dtype_rule_not_for_bf16_kv_or_mla_models(tmp_path: Path, release: str) -> None:
    box = release_box(tmp_path, release, "10.0")
    doc = gate_tp8(box, model_dir(tmp_path, "llama3", LLAMA3), "--prefill-attention-backend", "fa4")
    fa4 = [r for r in doc.get("reasons") or [] if r["feature"] == "attention-fa4"]
    assert "fa4-fp8-kv-dtype-mismatch" not in {x.get("rule") for r in fa4 for x in r.get("reasons") or []}
    r1 = model_dir(tmp_path, "dsr1", DEEPSEEK_R1)
    doc = gate_tp8(box, r1, "--prefill-attention-backend", "fa4", "--kv-cache-dtype", "fp8_e4m3")
    fa4 = [r for r in doc.get("reasons") or [] if r["feature"] == "attention-fa4"]
    assert "fa4-fp8-kv-dtype-mismatch" not in {x.get("rule") for r in fa4 for x in r.get("reasons") or []}
