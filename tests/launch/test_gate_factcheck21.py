"""The twenty-first fact-check sample's false passes (tests/realworld/FACTCHECK.md, "Twenty-first sample"; the rows
in bench/factcheck21_drawn.json), read in the real sglang wheels:

- a0, a5: --moe-runner-backend flashinfer_megamoe on SGLang 0.5.14 / 0.5.16, whose MOE_RUNNER_BACKEND_CHOICES has
  no such value (it joins in 0.5.20): argparse ends the launch with 'invalid choice' (exit status 2) unless a
  plugin, loaded before the parser from 0.5.11, adds it (add_moe_runner_backend_choices): unknown, refused;
- a2: --moe-a2a-backend flashinfer_megamoe on 0.5.15, whose MOE_A2A_BACKEND_CHOICES lacks it (it joins in 0.5.20;
  no hook extends that list): blocked.

launch.json lists the union of the releases' choices for these flags; release_choices now names each release's own
list (read with an AST scan of every sglang wheel 0.5.1-0.5.23). The DeepSeek config is written for the tests in the
published shape, not copied."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_R1, gate_tp8, model_dir, reason_status, release_box

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

DSR1_FP8: dict[str, Any] = {
    **DEEPSEEK_R1, "n_routed_experts": 256, "num_experts_per_tok": 8, "moe_intermediate_size": 2048,
    "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                            "weight_block_size": [128, 128]},
}  # fmt: skip
MTP = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
       "--speculative-num-draft-tokens", "2"]  # fmt: skip


@pytest.mark.parametrize(
    ("release", "cc", "flags", "subject", "status"),
    [
        ("0.5.14", "9.0", ["--moe-runner-backend", "flashinfer_megamoe"], "--moe-runner-backend", "unknown"),  # a0
        ("0.5.15", "12.0", ["--moe-a2a-backend", "flashinfer_megamoe"], "--moe-a2a-backend", "blocked"),  # a2
        ("0.5.16", "9.0", ["--moe-runner-backend", "flashinfer_megamoe", *MTP], "--moe-runner-backend", "unknown"),
        # beside the draw: the draft's runner flag, and a value the release lacks on a release before plugins
        ("0.5.19", "10.0", ["--moe-a2a-backend", "flashinfer_megamoe"], "--moe-a2a-backend", "blocked"),
        ("0.5.17", "9.0", ["--speculative-moe-runner-backend", "megamoe", *MTP], "--speculative-moe-runner-backend",
         "unknown"),
        ("0.5.9", "9.0", ["--moe-runner-backend", "marlin"], "--moe-runner-backend", "blocked"),
    ],
)  # fmt: skip
def test_a_moe_backend_the_release_does_not_offer_is_refused(
    tmp_path: Path, release: str, cc: str, flags: list[str], subject: str, status: str
) -> None:
    # fails on the parent: allowed (the choices were the union of every release's)
    doc = gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "dsr1", DSR1_FP8), *flags)
    assert doc["decision"] == "refuse", doc["reasons"]
    assert reason_status(doc).get(subject, ("", None))[0] == status, reason_status(doc)


def test_values_the_release_offers_are_not_judged_so() -> None:
    # guards (pass on the parent too): each release's own values, the spellings argparse takes, other releases
    mapping = dict(load([], env={}).launch)

    def problems(version: str, *flags: str) -> list[tuple[str, str]]:
        d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *flags], mapping, {})
        return [(p.subject, p.status) for p in gate.release_choice_problems(d, mapping, version)]

    assert problems("0.5.20", "--moe-runner-backend", "flashinfer_megamoe") == []
    assert problems("0.5.23", "--moe-a2a-backend=flashinfer_megamoe") == []
    assert problems("0.5.12", "--moe-a2a-backend", "megamoe") == []
    assert problems("0.5.9", "--moe-a2a-backend", "flashinfer", "--moe-runner-backend", "deep_gemm") == []
    assert problems("0.5.23", "--moe-runner-backend", "lora_marlin") == []


def test_the_release_lists_as_release_choice_problems() -> None:
    # fails on the parent: no problem named (an '=' spelling and the newest runners too)
    mapping = dict(load([], env={}).launch)

    def problems(version: str, *flags: str) -> list[tuple[str, str]]:
        d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *flags], mapping, {})
        return [(p.subject, p.status) for p in gate.release_choice_problems(d, mapping, version)]

    assert problems("0.5.11", "--moe-a2a-backend=megamoe") == [("--moe-a2a-backend", "blocked")]
    assert problems("0.5.22", "--moe-runner-backend", "lora_marlin") == [("--moe-runner-backend", "unknown")]
    assert problems("0.5.10", "--moe-runner-backend", "aiter") == [("--moe-runner-backend", "blocked")]


LLAMA3_BF16: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
    "num_key_value_heads": 8, "head_dim": 128, "torch_dtype": "bfloat16",
}  # fmt: skip
GPTQ = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True}
AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
DTYPE = "refusal quant-act-dtype-float16-only"


def _gate1(tmp_path: Path, release: str, cc: str, config: dict[str, Any], *flags: str) -> dict[str, Any]:
    from gate_cli import cli_json

    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", config)),
            "--tp", "1", *flags]  # fmt: skip
    args = ["gate", "--facts", str(release_box(tmp_path, release, cc)), "--dry-run", "--format", "json", "--"]
    return cli_json([*args, *line])[1]


@pytest.mark.parametrize(
    ("release", "cc", "qcfg", "flags"),
    [
        ("0.5.14", "8.0", GPTQ, ["--quantization", "gptq"]),  # a8
        ("0.5.23", "9.0", AWQ, ["--quantization", "awq"]),
        ("0.5.5", "8.9", GPTQ, ["--quantization", "gptq", "--dtype", "bfloat16"]),
    ],
)
def test_gptq_awq_with_bfloat16_activations_refused(
    tmp_path: Path, release: str, cc: str, qcfg: dict[str, Any], flags: list[str]
) -> None:
    # fails on the parent: allowed; SGLang's loader raises 'torch.bfloat16 is not supported for quantization method'
    doc = _gate1(tmp_path, release, cc, {**LLAMA3_BF16, "quantization_config": qcfg}, *flags)
    assert doc["decision"] == "refuse" and reason_status(doc).get(DTYPE) == ("blocked", "crash"), doc["reasons"]


def test_float16_and_marlin_are_not_refused_so(tmp_path: Path) -> None:
    # guards (pass on the parent too): --dtype float16, a float16 checkpoint, the Marlin methods, no flag
    gptq = {**LLAMA3_BF16, "quantization_config": GPTQ}
    for config, flags in [
        (gptq, ["--quantization", "gptq", "--dtype", "float16"]),
        ({**gptq, "torch_dtype": "float16"}, ["--quantization", "gptq"]),
        ({**gptq, "torch_dtype": "float32"}, ["--quantization", "gptq"]),
        (gptq, ["--quantization", "gptq_marlin"]),
        (gptq, []),
        ({**LLAMA3_BF16, "quantization_config": AWQ}, ["--quantization", "awq_marlin"]),
    ]:
        assert DTYPE not in reason_status(_gate1(tmp_path, "0.5.14", "8.0", config, *flags)), (config, flags)
