"""irecmodel: `stackcheck recommend` judges its line with every launch fact `stackcheck gate` sets from the model's
files. The gate judges its launch again with the facts its preflight read from the model (model_quant_method,
model_quant_loaded, checkpoint_quantized, moe_runner_auto, model_moe, ...); recommend copied some of them by hand, so
each new one was a false pass in recommend until copied (a Kimi-K2-shaped INT4 compressed-tensors checkpoint on an
offline B200: the gate reads SGLang's flashinfer_trtllm pick, recommend read 'unread' and proposed a line the gate
refused for its TRTLLM_GEN_BMM cubins). Both now call one function (gate_preflight.model_file_facts).

The test runs both in this process on model directories of its own (minimal config.json / hf_quant_config.json
files in the shape of the formats named) and case facts, records the launch facts each judges with (the gate's
reevaluate calls; recommend's line context), and asks that every fact the gate sets is set by recommend to the
same value for the same line; then that recommend proposes no line the gate refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
MLA = {"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "q_lora_rank": 1536}


def _config(arch: str, model_type: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"architectures": [arch], "model_type": model_type, "hidden_size": 2048,
                            "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 16,
                            "torch_dtype": "bfloat16", "vocab_size": 1024, "intermediate_size": 4096}  # fmt: skip
    base.update(extra)
    return base


DEEPSEEK = {"n_routed_experts": 16, "num_experts_per_tok": 4, "n_shared_experts": 1, "moe_intermediate_size": 512,
            "topk_method": "noaux_tc", "scoring_func": "sigmoid", "moe_layer_freq": 1, "first_k_dense_replace": 1,
            "n_group": 4, "topk_group": 2, "norm_topk_prob": True, **MLA}  # fmt: skip
QWEN3_MOE = {"num_experts": 16, "num_experts_per_tok": 4, "moe_intermediate_size": 512, "head_dim": 128,
             "norm_topk_prob": True}  # fmt: skip
DENSE = {"head_dim": 128}
INT4 = {"type": "int", "num_bits": 4, "group_size": 32, "strategy": "group", "symmetric": True, "dynamic": False}
GROUP_0 = {"targets": ["Linear"], "weights": INT4, "input_activations": None}
CT_INT4 = {"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {"group_0": GROUP_0}}
FP8_BLOCK = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
MIXED = {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "MIXED_PRECISION", "quantized_layers": {
    "model.layers.1.mlp.experts.0.gate_proj": {"quant_algo": "NVFP4", "group_size": 16},
    "model.layers.0.self_attn.o_proj": {"quant_algo": "FP8"}}}}  # fmt: skip
NVFP4 = {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "group_size": 16}}


def _tensor(dtype: str, qscheme: str, dynamic: bool, **more: Any) -> dict[str, Any]:
    return {"dtype": dtype, "qscheme": qscheme, "is_dynamic": dynamic, "symmetric": True, "ch_axis": None, **more}


_MX = {"qscheme": "per_group", "group_size": 32, "scale_format": "e8m0"}
QUARK_MXFP4 = {"quant_method": "quark", "layer_quant_config": {}, "layer_type_quant_config": {}, "exclude": [],
               "global_quant_config": {"weight": {**_tensor("fp4", "per_group", False), **_MX},
                                       "input_tensors": {**_tensor("fp4", "per_group", True), **_MX},
                                       "output_tensors": None, "bias": None}}  # fmt: skip
_FP8 = _tensor("fp8_e4m3", "per_tensor", False)
QUARK_FP8 = {**QUARK_MXFP4, "global_quant_config": {"weight": _FP8, "input_tensors": _FP8, "output_tensors": None,
                                                    "bias": None}}  # fmt: skip

#: name -> (config.json, hf_quant_config.json or None)
MODELS: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {
    "llama-bf16": (_config("LlamaForCausalLM", "llama", **DENSE), None),
    "qwen3moe-bf16": (_config("Qwen3MoeForCausalLM", "qwen3_moe", **QWEN3_MOE), None),
    "ds3-bf16": (_config("DeepseekV3ForCausalLM", "deepseek_v3", **DEEPSEEK), None),
    "ds3-fp8": (_config("DeepseekV3ForCausalLM", "deepseek_v3", quantization_config=FP8_BLOCK, **DEEPSEEK), None),
    "llama-fp8": (_config("LlamaForCausalLM", "llama", quantization_config=FP8_BLOCK, **DENSE), None),
    "ds3-nvfp4": (_config("DeepseekV3ForCausalLM", "deepseek_v3", **DEEPSEEK), NVFP4),
    "llama-nvfp4": (_config("LlamaForCausalLM", "llama", **DENSE), NVFP4),
    "gptoss-mxfp4": (
        _config(
            "GptOssForCausalLM",
            "gpt_oss",
            num_local_experts=8,
            experts_per_token=4,
            head_dim=64,
            quantization_config={"quant_method": "mxfp4"},
        ),
        None,
    ),
    "kimi-int4": (_config("DeepseekV3ForCausalLM", "deepseek_v3", quantization_config=CT_INT4, **DEEPSEEK), None),
    "llama-ct-int4": (_config("LlamaForCausalLM", "llama", quantization_config=CT_INT4, **DENSE), None),
    "ds3-modelopt-mixed": (_config("DeepseekV3ForCausalLM", "deepseek_v3", **DEEPSEEK), MIXED),
    "qwen3moe-quark-mxfp4": (
        _config("Qwen3MoeForCausalLM", "qwen3_moe", quantization_config=QUARK_MXFP4, **QWEN3_MOE),
        None,
    ),
    "llama-quark-fp8": (_config("LlamaForCausalLM", "llama", quantization_config=QUARK_FP8, **DENSE), None),
}
#: the gate's launch facts that are the command's or the box's, not the model's files' (set before the preflight)
NOT_MODEL = frozenset({"tp"})


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("irecmodel")
    for name, (config, hf_quant) in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(config), encoding="utf-8")
        if hf_quant is not None:
            (root / name / "hf_quant_config.json").write_text(json.dumps(hf_quant), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """B200 (SGLang 0.5.20, offline, no TRTLLM_GEN_BMM cubins), H200 (the newest stack) and that H200 box with A100s."""
    doc = json.loads((CASES / "h200-newest" / "facts.json").read_text())
    for gpu in (doc.get("facts") or doc)["gpus"]:
        gpu.update(name="NVIDIA A100-SXM4-80GB", compute_capability="8.0", memory_bytes=85899345920)
    a100 = tmp_path_factory.mktemp("irecmodel-facts") / "a100.json"
    a100.write_text(json.dumps(doc))
    return {"b200": CASES / "b200-cubins-offline" / "facts.json", "h200": CASES / "h200-newest" / "facts.json",
            "a100": a100}  # fmt: skip


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    from stackcheck.cli import main

    capsys.readouterr()
    main(argv)
    out = capsys.readouterr().out
    doc: dict[str, Any] = json.loads(out)
    return doc


def _recommend(model: Path, facts: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[
    dict[str, Any], list[tuple[list[str], dict[str, Any]]]
]:  # fmt: skip
    """recommend's answer and, for each line it judged, the line and the launch facts it judged it with."""
    import stackcheck.launch.recommend as rec

    seen: list[tuple[list[str], dict[str, Any]]] = []
    real = rec._with_moe_runner_auto

    def spy(ctx: Any, model_seen: Any, d: Any, mapping: Any, version: str | None) -> Any:
        out = real(ctx, model_seen, d, mapping, version)
        seen.append((list(d.command), dict(out.launch)))
        return out

    monkeypatch.setattr(rec, "_with_moe_runner_auto", spy)
    doc = _run(["recommend", "--facts", str(facts), "--model-path", str(model), "--no-plan", "--format", "json"],
               capsys)  # fmt: skip
    monkeypatch.setattr(rec, "_with_moe_runner_auto", real)
    return doc, seen


def _gate(line: list[str], facts: Path, cwd: Path, monkeypatch: pytest.MonkeyPatch,
          capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], dict[str, Any]]:  # fmt: skip
    """The gate's answer on `line` and the launch facts it judged the launch again with (every reevaluate call)."""
    import stackcheck.assembly.pipeline as pipeline

    read: dict[str, Any] = {}
    real = pipeline.reevaluate

    def spy(report: Any, ctx: Any, opts: Any, launch: dict[str, Any], only: Any = None) -> Any:
        read.update(launch)
        return real(report, ctx, opts, launch, only)

    monkeypatch.setattr(pipeline, "reevaluate", spy)
    doc = _run(["gate", "--facts", str(facts), "--cwd", str(cwd), "--dry-run", "--format", "json", "--", *line], capsys)
    monkeypatch.setattr(pipeline, "reevaluate", real)
    return doc, read


def _refusals(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(str(c.get("feature")), str(c.get("status"))) for c in doc.get("reasons") or []
            if c.get("status") in ("blocked", "unknown")]  # fmt: skip


@pytest.mark.parametrize("box", ["b200", "h200", "a100"])
def test_recommend_judges_its_line_with_every_model_fact_the_gate_sets(
    box: str, models: Path, facts: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    differ: dict[str, Any] = {}
    for name in sorted(MODELS):
        _doc, judged = _recommend(models / name, facts[box], monkeypatch, capsys)
        assert judged, name  # (recommend judges at least one line for a model it read)
        line, launch = judged[-1]
        _gate_doc, read = _gate(line, facts[box], models, monkeypatch, capsys)
        missing = {k: (v, launch.get(k, "<not set>")) for k, v in read.items()
                   if k not in NOT_MODEL and launch.get(k, "<not set>") != v}  # fmt: skip
        if missing:
            differ[name] = missing
    assert differ == {}  # (fails before: model_quant_loaded, checkpoint_quantized, Kimi INT4's moe_runner_auto)


@pytest.mark.parametrize("box", ["b200", "h200", "a100"])
def test_recommend_proposes_no_line_the_gate_refuses(
    box: str, models: Path, facts: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    refused: dict[str, Any] = {}
    for name in sorted(MODELS):
        doc, _judged = _recommend(models / name, facts[box], monkeypatch, capsys)
        line = [str(w) for w in doc.get("command") or []]
        if not line:
            continue
        gate_doc, _read = _gate(line, facts[box], models, monkeypatch, capsys)
        if _refusals(gate_doc):
            refused[name] = (line, _refusals(gate_doc))
    assert refused == {}
