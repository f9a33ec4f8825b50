"""The model's shape against the launch's parallelism (ishape): what SGLang divides by the TP / EP sizes as it builds
the model, before any weight loads, read in the 0.5.9 and 0.5.23 wheels (pip download --no-deps, 2026-12-07):

- the query heads by the attention TP size, the KV heads by it or it by them (QKVParallelLinear: `divide`, an
  assert; the model modules assert the same: llama.py, qwen3_moe.py, deepseek_v2.py for MLA's query heads);
- a dense MLP's intermediate_size by the TP size (MergedColumnParallelLinear / RowParallelLinear `divide`), and its
  share per rank by a block-FP8 checkpoint's weight_block_size (Fp8LinearMethod.validate_block_quant_shapes:
  ValueError 'is not divisible by weight quantization block_n / block_k'); judged for the architectures whose MLP
  was read (preflight.json model.model_shape.dense_mlp: Llama, Mistral, Phi-3, Qwen2, Qwen3, Gemma 2 / 3, GLM-4;
  and DENSE_ARCHITECTURES here: Llama, Mistral, Qwen2, Qwen3, Qwen2-VL, Qwen2.5-VL, read by irobust15; the MoE
  experts' share is launch.json's refusal fp8-block-moe-tp-split);
- the routed experts by the expert parallel size (FusedMoE.__init__ asserts it), with --ep-num-redundant-experts
  added where the architecture adds them (model.model_shape.redundant_experts; another: not judged);
- (ishape3) an AWQ MoE checkpoint's group_size against the MoE share per rank (moe_wna16's create_weights asserts
  the halved group >= 32; a GPTQ one off its group: unknown), Mixtral's intermediate_size as its experts' size;
- a head count or size in config.json that is not a positive whole number (NaN, true, 32.5, "128"): unknown, naming
  the key (SGLang takes the attribute as the config class gives it; transformers' handling of such a value is not
  read here, so never a pass).

Pure: the config.json keys as the preflight read them (model.attention_keys) and the launch's sizes in, CheckResults
out. A value the file does not state is not guessed: its rule gives no result (never an ok). Where SGLang may run
the step at more than one size (full TP or attention TP; a given --ep-size or the TP size an all-to-all backend or a
model override sets), a launch failing at every size fails and one failing at some is unknown."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from stackcheck.launch.preflight.result import CheckResult
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.launch.preflight.result import Status

SHAPE_CHECK = "model-shape"
#: the check ids this module's results carry (gate_preflight.preflight_checks reads them)
CHECK_IDS = (SHAPE_CHECK,)

#: the releases whose sources were read (0.5.9, 0.5.14, 0.5.18, 0.5.23: ishape2 read the middle two's linear.py, MoE
#: layer, fp8 / awq / gptq checks and model classes, the same code) and those between them (inferred from the reads on
#: each side); a release outside them makes a failing shape unknown, not failed
READ_VERSIONS = ">=0.5.9,<=0.5.23"

_WHEEL_09 = "https://pypi.org/project/sglang/0.5.9/"
_WHEEL_23 = "https://pypi.org/project/sglang/0.5.23/"
#: (irobust15) the dense MLPs read beside Llama's: the same two layers split by the full TP size
_DENSE_MODELS = {
    "title": "sglang 0.5.9 wheel: srt/models/qwen2.py:62-84 (Qwen2MLP: MergedColumnParallelLinear [intermediate_size] "
    "* 2, RowParallelLinear intermediate_size, the full TP) and :224-226 (config.intermediate_size), "
    "srt/models/qwen3.py:29, :235-237 (Qwen2MLP as Qwen3MLP), srt/models/mistral.py:25 "
    "(MistralForCausalLM(LlamaForCausalLM)); 0.5.23 wheel: qwen2.py:74-98, :295-297, qwen3.py:37, :403-405, "
    "mistral.py:33; Qwen2Model built on the whole config by srt/models/qwen2_vl.py (0.5.9 :466, 0.5.23 :478) and, "
    "unless --encoder-only, qwen2_5_vl.py (0.5.9 :602-603, 0.5.23 :719-720)",
    "url": _WHEEL_23,
}
_MIDDLE = [
    {
        "title": "sglang 0.5.14 wheel (ishape2): srt/layers/linear.py:949-954 (QKVParallelLinear), :350 and :1396 "
        "(divide by tp_size), srt/distributed/utils.py:59-70 (divide asserts), srt/layers/quantization/fp8.py:369-406 "
        "(validate_block_quant_shapes), awq/schemes/awq_linear.py:41, gptq/schemes/gptq_linear.py:50, "
        "srt/layers/moe/fused_moe_triton/layer.py:210 (assert (num_experts - num_shared_slots) % moe_ep_size == 0)",
        "url": "https://pypi.org/project/sglang/0.5.14/",
    },
    {
        "title": "sglang 0.5.18 wheel (ishape2): srt/layers/linear.py:1000-1005 (QKVParallelLinear at kv_tp_size, "
        "tp_size when not given), :362 and :1465, srt/distributed/utils.py:53-64, srt/layers/quantization/fp8.py:"
        "485-522, awq_linear.py:41, gptq_linear.py:50, srt/layers/moe/fused_moe_triton/layer.py:294-305 (assert "
        "_num_global_routed % storage_ep_size == 0)",
        "url": "https://pypi.org/project/sglang/0.5.18/",
    },
]
SOURCES: dict[str, list[dict[str, str]]] = {
    "heads": [
        {
            "title": "sglang 0.5.9 wheel: srt/layers/linear.py:890-896 (QKVParallelLinear: divide(total_num_heads, "
            "tp_size); tp_size >= total_num_kv_heads: divide(tp_size, total_num_kv_heads), else "
            "divide(total_num_kv_heads, tp_size)), srt/distributed/utils.py:21-32 (divide asserts), "
            "srt/models/llama.py:139-149 (tp_size), srt/models/qwen3_moe.py:432-438 (attn_tp_size), "
            "srt/models/deepseek_v2.py:1109 (MLA: num_heads % attn_tp_size)",
            "url": _WHEEL_09,
        },
        {
            "title": "sglang 0.5.23 wheel: srt/layers/linear.py:1139-1144, srt/distributed/utils.py:68-79, "
            "srt/models/llama.py:183-193, srt/models/qwen3_moe.py:506-512, srt/models/deepseek_v2.py:2057",
            "url": _WHEEL_23,
        },
    ],
    "dense": [
        {
            "title": "sglang 0.5.9 wheel: srt/models/llama.py:78-88 (LlamaMLP: MergedColumnParallelLinear "
            "[intermediate_size] * 2, RowParallelLinear), srt/layers/linear.py:336 and :1337 (divide by tp_size), "
            "srt/layers/quantization/fp8.py:278-294 (validate_block_quant_shapes: block_k per rank of a row-parallel "
            "input, block_n per output partition of a merged column)",
            "url": _WHEEL_09,
        },
        {
            "title": "sglang 0.5.23 wheel: srt/models/llama.py:98-107, srt/layers/linear.py:488 and :1611, "
            "srt/layers/quantization/fp8.py:591-610",
            "url": _WHEEL_23,
        },
        _DENSE_MODELS,
    ],
    "groups": [
        {
            "title": "sglang 0.5.9 wheel: srt/layers/quantization/awq.py:373-378 (AWQLinearMethod: ValueError 'The "
            "input size is not aligned with the quantized weight shape') and :485 with marlin_utils.py:196-199 "
            "(AWQ Marlin: group_size < input_size and input_size_per_partition % group_size), gptq.py:460-465 "
            "(GPTQLinearMethod)",
            "url": _WHEEL_09,
        },
        {
            "title": "sglang 0.5.23 wheel: srt/layers/quantization/awq/schemes/awq_linear.py:39-44, "
            "awq/schemes/awq_marlin.py:49 with marlin_utils.py:187-188, gptq/schemes/gptq_linear.py:47-52",
            "url": _WHEEL_23,
        },
        _DENSE_MODELS,
        {
            "title": "sglang 0.5.9 wheel: srt/layers/quantization/compressed_tensors/compressed_tensors.py:491-502, "
            ":545-555 (a symmetric static int group / channel weight with no input quantization, pack-quantized: "
            "CompressedTensorsWNA16), schemes/compressed_tensors_wNa16.py:118-128 (assert input_size_per_partition "
            "% group_size == 0 where the scales are split, no act order) and :219-224 (check_marlin_supports_shape "
            "after loading); 0.5.23 wheel: compressed_tensors.py:633-652, :733-746, compressed_tensors_wNa16.py:"
            "119-129, :220-226, marlin_utils.py:187-192 (irobust15)",
            "url": _WHEEL_23,
        },
    ],
    "experts": [
        {
            "title": "sglang 0.5.9 wheel: srt/layers/moe/fused_moe_triton/layer.py:219 (FusedMoE: assert "
            "(num_experts - num_fused_shared_experts) % moe_ep_size == 0), srt/server_args.py:2178-2219 (an "
            "all-to-all backend sets ep_size to tp_size)",
            "url": _WHEEL_09,
        },
        {
            "title": "sglang 0.5.23 wheel: srt/layers/moe/fused_moe_triton/layer.py:399-413 (assert "
            "_num_global_routed % storage_ep_size == 0), srt/arg_groups/model_overrides/deepseek_v2.py:118, :202 "
            "(ep_size set to tp_size)",
            "url": _WHEEL_23,
        },
        {
            "title": "sglang 0.5.23 wheel: srt/arg_groups/overrides.py:1596-1620 (_a2a_backend_overrides: "
            "--enable-waterfill makes the backend deepep; _a2a_ep_size: ep_size set to tp_size), "
            "arg_groups/mega_moe_hook.py:259-277 (--moe-runner-backend megamoe is --moe-a2a-backend megamoe), "
            "arg_groups/model_overrides/minimax_m3.py:18-34, :104-112 (a MiniMax-M3 mxfp8 / NVFP4-expert "
            "checkpoint takes megamoe on Blackwell) (irev83)",
            "url": _WHEEL_23,
        },
    ],
    "moe_groups": [
        {
            "title": "sglang 0.5.9 wheel: srt/layers/quantization/awq.py:269-281 (an AWQ checkpoint is served as "
            "awq_marlin where is_awq_marlin_compatible, :328-350, and --quantization is unset, marlin or "
            "awq_marlin), :313-324 (FusedMoE: check_moe_marlin_supports_layer, else MoeWNA16Config's method), "
            "marlin_utils.py:236-257 (intermediate_size_per_partition % max(64, group_size)), "
            "moe_wna16.py:258-261 (create_weights halves the group until it divides the MoE intermediate size per "
            "partition and the hidden size: assert group_size >= 32), gptq.py:404-407 (GPTQ Marlin: "
            "GPTQMarlinMoEMethod, no check) and :1022-1032 (the w2 scales sized by floor division)",
            "url": _WHEEL_09,
        },
        {
            "title": "sglang 0.5.14 / 0.5.18 wheels: srt/layers/quantization/awq/awq.py:347-361 / :349-363, "
            "marlin_utils.py:245, moe_wna16.py:260-263, gptq/gptq.py:417, gptq/schemes/gptq_moe.py:170 / :201 (the "
            "same code)",
            "url": "https://pypi.org/project/sglang/0.5.18/",
        },
        {
            "title": "sglang 0.5.23 wheel: srt/layers/quantization/awq/awq.py:378-392, marlin_utils.py:227-262, "
            "moe_wna16.py:276-279, gptq/gptq.py:444-447, gptq/schemes/gptq_moe.py:190-201",
            "url": _WHEEL_23,
        },
    ],
    "attention_blocks": [
        {
            "title": "sglang 0.5.9 wheel: srt/layers/linear.py:834-920 (QKVParallelLinear: num_heads = divide(heads, "
            "tp_size), num_kv_heads 1 where tp_size >= the KV heads, output_sizes q / k / v), :1337 (RowParallelLinear "
            "input_size_per_partition), srt/layers/quantization/fp8.py:257-295 (validate_block_quant_shapes: every "
            "output partition a multiple of block_n where the layer merges more than one, block_k for a row-parallel "
            "input per rank), :316-325 (called for a block-quantized checkpoint)",
            "url": _WHEEL_09,
        },
        {
            "title": "sglang 0.5.23 wheel: srt/layers/linear.py:1105-1176 (QKVParallelLinear, skip_block_quant_check "
            "False unless a model passes it: models/mimo_v2.py only), srt/layers/quantization/fp8.py:570-610, "
            ":640-648; 0.5.14 / 0.5.18 fp8.py:369-406 / :485-522 (the same check)",
            "url": _WHEEL_23,
        },
    ],
    "dense_layers": [
        {
            "title": "sglang 0.5.9 wheel: srt/models/deepseek_v2.py:2301-2314 (a layer below first_k_dense_replace "
            "builds DeepseekV2MLP(config.intermediate_size), tp_size None: the full TP, unless "
            "enable_moe_dense_fully_dp (--moe-dense-tp-size 1) makes it 1), srt/layers/linear.py:327-328, "
            "srt/layers/quantization/fp8.py:257-295 "
            "(validate_block_quant_shapes: ValueError 'is not divisible by weight quantization block_n / block_k'), "
            "server_args.py:5150-5153 (moe_dense_tp_size 1 or None)",
            "url": _WHEEL_09,
        },
        {
            "title": "sglang 0.5.23 wheel: srt/models/deepseek_v2.py:2654-2676 (parallel_group 'tp' unless "
            "is_dense_ffn_fully_dp, layers/layer_boundary/layout.py:83-84: moe_dense_tp_size == 1), "
            "srt/layers/linear.py:111-130, srt/layers/quantization/fp8.py:570-609 (the layer's tp_group size), "
            "arg_groups/validation_hook.py:207-211 (None, 1 or tp_size) (irev83)",
            "url": _WHEEL_23,
        },
    ],
    "per_layer": [
        {
            "title": "sglang 0.5.9 wheel: srt/models/gemma3n_causal.py:66-90 (Gemma3nTextMLP: "
            "MergedColumnParallelLinear [intermediate_size] * 2, RowParallelLinear intermediate_size, the full TP), "
            ":517 (intermediate_size = config.intermediate_size[layer_id]); 0.5.23 wheel: gemma3n_causal.py:66-91, "
            ":523 (irev83: a per-layer list is the config's own shape, refused as unknown before)",
            "url": _WHEEL_23,
        },
    ],
    "omni-encoders": [
        {
            "title": "sglang 0.5.9 wheel: srt/models/qwen3_omni_moe.py:61 and :429 (the thinker always builds "
            "Qwen3OmniMoeAudioEncoder, its layers' VisionAttention with num_heads=config.encoder_attention_heads), "
            "srt/layers/attention/vision.py:600-609 (tp_size = the attention TP size; dist_utils.divide(num_heads, "
            "tp_size) asserts), srt/configs/qwen3_omni.py:14 (encoder_attention_heads=20 where audio_config does not "
            "state it)",
            "url": _WHEEL_09,
        },
        {
            "title": "sglang 0.5.23 wheel: srt/models/qwen3_omni_moe.py:83-100 and :496-502 (audio tower and vision "
            "encoder always built), srt/layers/attention/vision.py:1123-1137 (divide by attn_tp_size, an assert), "
            "srt/configs/update_config.py:343-390 (the heads padded to the TP size on CPU only: "
            "model_executor/model_runner.py:1301-1304); transformers 5.19.0 configuration_qwen3_omni_moe.py:59 "
            "(encoder_attention_heads 20), :98 (vision num_heads 16), :246-247 (audio_config None: the defaults)",
            "url": _WHEEL_23,
        },
        {
            "title": "vllm-project/vllm-omni PR #4322: Qwen3-Omni audio encoder init failure at TP=8 (20 heads not "
            "divisible by the TP size)",
            "url": "https://github.com/vllm-project/vllm-omni/pull/4322",
        },
    ],
}
#: (ifc70) Qwen3-Omni's encoders as SGLang builds them at every launch: their head key and the config classes'
#: default where config.json does not state it (SGLang's configs/qwen3_omni.py and transformers 5.19.0 agree)
OMNI_ARCHITECTURES = ("Qwen3OmniMoeForConditionalGeneration",)
OMNI_ENCODERS = (("audio_config", "encoder_attention_heads", 20), ("vision_config", "num_heads", 16))

STRICT_SOURCE = [
    {
        "title": "transformers 5.19.0 wheel: models/llama/configuration_llama.py:30 @strict, :65-84 (hidden_size, "
        "intermediate_size, num_attention_heads: int; num_key_value_heads, head_dim: int | None); huggingface_hub "
        "1.4.0 wheel: dataclasses.py:557-562 (_validate_simple_type: isinstance, so a bool passes as int)",
        "url": "https://pypi.org/project/transformers/5.19.0/",
    }
]
#: the head counts and sizes a positive whole number must be, where config.json states them (null: the config class
#: derives it, not judged)
INT_KEYS = (
    "num_attention_heads", "num_key_value_heads", "n_head_kv", "num_kv_heads", "multi_query_group_num",
    "num_attention_groups", "head_dim", "hidden_size", "intermediate_size",
)  # fmt: skip
#: SGLang's order for the KV heads (configs/model_config.py get_total_num_kv_heads)
KV_KEYS = ("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num", "num_attention_groups")
#: the routed experts' count, by the keys the model families state it under
EXPERT_KEYS = ("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts")
#: the architectures whose dense MLP was read (a plain intermediate_size split by the TP size): Llama and Mistral (its
#: subclass), Qwen2 / Qwen3 (Qwen2MLP, the same two layers; irobust15: a Qwen2.5-72B AWQ at --tp 8 was allowed)
DENSE_ARCHITECTURES = (
    "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
    "Qwen2VLForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration",
)  # fmt: skip
#: those of them that build no language model with --encoder-only (an encode worker of EPD serving)
ENCODER_ONLY_SKIPS = ("Qwen2_5_VLForConditionalGeneration",)
#: (irev83) the MoE architectures whose first_k_dense_replace layers build a dense MLP of intermediate_size split by
#: the full TP size unless --moe-dense-tp-size 1 (deepseek_v2.py; DeepSeek-V3 FP8 at --tp 32: 576 per rank)
DENSE_LAYER_ARCHITECTURES = ("DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM")
#: (irev83) the architectures whose model reads intermediate_size per layer (config.intermediate_size[layer_id]): a
#: list of whole numbers is their config's own shape, each layer's MLP split by the full TP size as Llama's
PER_LAYER_ARCHITECTURES = ("Gemma3nForCausalLM", "Gemma3nForConditionalGeneration")
TEXT_CONFIG_KEYS = ("thinker_config", "llm_config", "language_config", "text_config")
#: the head counts a transformers config class gives a text config that states none, by its model_type: (query heads,
#: KV heads). SGLang builds the model from that class, so its default is what the TP size splits (gemma-3-4b-it's
#: text_config states neither: 8 and 4). A model_type not listed: unstated_heads' unknown.
HEAD_DEFAULTS: dict[str, tuple[int, int]] = {"gemma3_text": (8, 4)}
HEAD_DEFAULTS_SOURCE = [
    {
        "title": "transformers 4.57.1 wheel (the pin of SGLang 0.5.9; pip download --no-deps 2026-12-07): "
        "models/gemma3/configuration_gemma3.py:175-176 (Gemma3TextConfig.__init__ num_attention_heads=8, "
        "num_key_value_heads=4); transformers 5.8.1 wheel: :81-82 (the same class attributes); 5.19.0 (the pin of "
        "0.5.22-0.5.23) not read, taken to keep them",
        "url": "https://pypi.org/project/transformers/4.57.1/",
    }
]


def _moe_share(
    judged: Callable[..., None], table: Mapping[str, Any] | None, first: Any, text: Mapping[str, Any], tp: int,
    eps: Sequence[int] | None,
) -> None:  # fmt: skip
    """(ishape2) The MoE layer's intermediate size (the key model.model_shape.moe_intermediate names for the
    architecture) by the MoE TP size tp // ep at each expert parallel size SGLang may take (FusedMoE asserts it,
    whatever the quantization). Not judged where the sizes are not known or the architecture was not read."""
    row = table.get("moe_intermediate") if isinstance(table, Mapping) else None
    keys = row.get("keys") if isinstance(row, Mapping) else None
    key = keys.get(first) if isinstance(keys, Mapping) and isinstance(first, str) else None
    size = _whole(text.get(key)) if isinstance(key, str) else None
    if size is None or not eps:
        return
    every = sorted({max(1, int(e)) for e in eps})
    moe_tps = {e: max(1, int(tp) // e) for e in every}
    bad = [e for e in every if size % moe_tps[e]]
    at = ", ".join(f"{moe_tps[e]} (EP {e})" for e in bad)
    judged("moe", {key: size}, f"{key} divisible by the MoE TP size (TP / EP)",
           f"the MoE layer's {key} {size} is not divisible by the MoE TP size {at}, at the expert parallel size",
           bad, every)  # fmt: skip


def _quant_method(qc: Any) -> str | None:
    """config.json quantization_config's quant_method as SGLang reads it: lower-cased (ModelConfig's
    _verify_quantization, 0.5.9-0.5.23; "AWQ" is awq, "FP8" fp8: irev86); None where there is none."""
    method = qc.get("quant_method") if isinstance(qc, Mapping) else None
    return method.lower() if isinstance(method, str) else None


#: (ishape3) the --quantization values under which SGLang serves an AWQ checkpoint's MoE layers with AWQ Marlin or
#: moe_wna16 (awq.py override_quantization_method; moe_wna16 directly); another value: the MoE method is not read
AWQ_MOE_QUANTIZATIONS = (None, "awq_marlin", "marlin", "moe_wna16")


def _moe_groups(
    judged: Callable[..., None], table: Mapping[str, Any] | None, first: Any, text: Mapping[str, Any],
    qc: Any, tp: int, eps: Sequence[int] | None, quantization: str | None,
) -> None:  # fmt: skip
    """(ishape3) An AWQ / GPTQ MoE checkpoint's group_size against the MoE intermediate size per rank (the key
    model.model_shape.moe_intermediate names, split by tp // ep at each EP size SGLang may take). AWQ (bits 4, the
    group Marlin takes): AWQ Marlin's MoE method where the share is a multiple of max(64, group), else moe_wna16,
    whose create_weights halves the group until it divides the share and the hidden size and asserts it stays >= 32:
    fail where it would not. GPTQ: GPTQ Marlin's MoE method checks nothing and sizes its scales by floor division;
    what follows at load was not read: unknown where the share is not a multiple of the group. A checkpoint leaving
    modules unquantized (modules_to_not_convert, dynamic) is not judged (the experts may be among them)."""
    row = table.get("moe_intermediate") if isinstance(table, Mapping) else None
    keys = row.get("keys") if isinstance(row, Mapping) else None
    key = keys.get(first) if isinstance(keys, Mapping) and isinstance(first, str) else None
    size = _whole(text.get(key)) if isinstance(key, str) else None
    if size is None or not eps or not isinstance(qc, Mapping) or qc.get("modules_to_not_convert") or qc.get("dynamic"):
        return
    method, group, bits = _quant_method(qc), _whole(qc.get("group_size")), qc.get("bits")
    if method not in ("awq", "gptq") or group is None:
        return
    hidden = _whole(text.get("hidden_size"))
    every = sorted({max(1, int(e)) for e in eps})
    shares = {e: size // max(1, int(tp) // e) for e in every if size % max(1, int(tp) // e) == 0}

    def wna16_fails(per: int) -> bool:
        g = group
        while per % g or (hidden is not None and hidden % g):
            g //= 2
            if g < 32:
                return True
        return False

    if method == "awq":
        marlin = bits == 4 and group in (32, 64, 128) and qc.get("zero_point") is True
        bad = [e for e in every if e in shares and wna16_fails(shares[e])]
        partial = None
        if not marlin or quantization not in AWQ_MOE_QUANTIZATIONS:
            partial = (
                f" (--quantization {quantization}: the MoE method SGLang then takes is not read)"
                if marlin
                else " (a checkpoint AWQ Marlin does not take, bits 4, group 32 / 64 / 128 and zero_point: its MoE "
                "method is not read)"
            )
        error = "AssertionError in MoeWNA16Method.create_weights, 'group_size >= 32', after AWQ Marlin's MoE check"
    else:
        bad = [e for e in every if e in shares and shares[e] % group and group < size]
        partial = (
            " (GPTQ Marlin's MoE method checks nothing and sizes its scales by floor division; the load was not read)"
        )
        error = "a group would straddle two ranks"
    if not bad:
        return
    at = ", ".join(f"{shares[e]} (MoE TP {max(1, int(tp) // e)}, EP {e})" for e in bad)
    judged("moe_groups", {key: size, "group_size": group}, f"the MoE {key} per rank a multiple of the "
           f"{str(method).upper()} group_size (moe_wna16 may halve it down to 32)", f"the MoE layer's {key} {size} "
           f"per rank, {at}, takes no {str(method).upper()} group_size {group} ({error}), at the expert parallel size",
           bad, every, partial)  # fmt: skip


def _attention_blocks(
    judged: Callable[..., None], qc: Any, text: Mapping[str, Any], sizes: Sequence[int]
) -> None:  # fmt: skip
    """(ishape3) A block-FP8 checkpoint's attention projections per rank, for the dense architectures read: the QKV
    projection's partitions (query heads / t and max(1, KV heads / t), times head_dim: each a multiple of block_n,
    checked for any merged layer whatever t) and o_proj's input per rank (query heads / t x head_dim, block_k, t > 1).
    head_dim only where config.json states it (a config class's default, Gemma's 256 beside hidden / heads, is not
    guessed); a size whose heads do not split is the heads rule's."""
    block = qc.get("weight_block_size") if isinstance(qc, Mapping) and _quant_method(qc) == "fp8" else None
    heads, dim = _whole(text.get("num_attention_heads")), _whole(text.get("head_dim"))
    kv = _whole(next((text.get(k) for k in KV_KEYS if text.get(k) is not None), None))
    if not (isinstance(block, list) and len(block) == 2 and all(_whole(b) for b in block)):
        return
    if heads is None or dim is None or kv is None:
        return
    bn, bk = int(block[0]), int(block[1])
    bad: list[int] = []
    parts: list[str] = []
    for t in sizes:
        if heads % t or (t % kv if t >= kv else kv % t):
            continue
        q, k = heads // t * dim, max(1, kv // t) * dim
        if q % bn or k % bn or (t > 1 and q % bk):
            bad.append(t)
            parts.append(f"{q} (query) / {k} (KV)")
    what = (
        f"the attention projections' partitions per rank {'; '.join(parts)} are not all multiples of the FP8 weight "
        f"block {bn}x{bk} (ValueError 'is not divisible by weight quantization block_n / block_k'), at the attention "
        "TP size"
    )
    required = "the attention projections' partitions per rank (heads x head_dim) multiples of the FP8 weight block"
    judged("attention_blocks", {"head_dim": dim, "weight_block_size": [bn, bk]}, required, what, bad, list(sizes))


def _table(table: Mapping[str, Any] | None) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, list[Any]]]:
    """preflight.json model.model_shape: the architectures whose dense MLP is judged, those whose MoE layers add the
    redundant experts, and each rule's sources from the table (None: LlamaForCausalLM's MLP, no redundant experts)."""
    if not isinstance(table, Mapping):
        return DENSE_ARCHITECTURES, (), {}
    out: list[tuple[str, ...]] = []
    extra: dict[str, list[Any]] = {}
    for key, rule in (("dense_mlp", "dense"), ("redundant_experts", "redundant"), ("moe_intermediate", "moe")):
        row = table.get(key)
        row = row if isinstance(row, Mapping) else {}
        out.append(tuple(str(a) for a in row.get("architectures") or ()))
        extra[rule] = list(row.get("source") or [])
    return out[0], out[1], extra


def unstated_heads(
    keys: Mapping[str, Any] | None, tp: int, attn_tps: Sequence[int], subject: str
) -> CheckResult | None:
    """(ishape2) num_attention_heads not stated where SGLang reads it (the text sub-config where config.json has one;
    a top-level config stating none is not judged: see below) at a TP or attention TP size above 1: the
    transformers config class's default (or the parent's value, which SGLang does not read for a text sub-config)
    decides how the heads split, and it is not read here: unknown, never an ok. At TP 1 nothing is split, and a
    config.json not read gives no result. (The gate's; recommend's fitting TP reads shape_results alone, which gives
    nothing here.)"""
    if keys is None:
        return None
    text = _with_head_defaults(_text(keys))
    sizes = sorted({max(1, int(tp)), *(max(1, int(t)) for t in attn_tps)})
    if "num_attention_heads" in text or max(sizes, default=1) <= 1:
        return None
    sub = next((k for k in TEXT_CONFIG_KEYS if isinstance(keys.get(k), Mapping)), None)
    sub = sub or next((k for k in TEXT_CONFIG_KEYS if k in keys), None)
    if sub is None:
        # a top-level config stating no head count: its model type's config class default decides (LlamaConfig's
        # 32, ...), not read here; judged only where a text sub-config leaves it out, the shape of the published
        # multimodal checkpoints (gemma-3-4b-it, llava-v1.6-mistral) whose parent states it or not
        return None
    where = f"its {sub}" if sub is not None else "config.json"
    also = (
        f" (config.json's top level states {_shown(keys['num_attention_heads'])}, which SGLang does not read for a "
        f"model with a {sub})"
        if sub is not None and "num_attention_heads" in keys
        else ""
    )
    if sub is not None and not isinstance(keys.get(sub), Mapping):
        where = f"config.json's {sub} ({_shown(keys.get(sub))}, not an object)"
    split = ", ".join(str(s) for s in sizes if s > 1)
    return CheckResult(
        SHAPE_CHECK, "unknown", {"num_attention_heads": None, "sizes": [s for s in sizes if s > 1]},
        "num_attention_heads stated, divisible by the attention TP size",
        f"{subject}: {where} states no num_attention_heads{also}: SGLang splits the query heads by the attention TP "
        f"size ({split}) as it builds the model, and the config class's default that then decides is not read here. "
        "Write the checkpoint's own num_attention_heads",
        [*SOURCES["heads"], *_MIDDLE],
    )  # fmt: skip


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _per_layer(value: Any) -> list[int] | None:
    """A per-layer intermediate_size (a non-empty list of positive whole numbers), else None."""
    if not isinstance(value, list) or not value or any(_whole(v) is None for v in value):
        return None
    return list(value)


def _with_head_defaults(text: Mapping[str, Any]) -> Mapping[str, Any]:
    """`text` with HEAD_DEFAULTS' head counts where it states no num_attention_heads and its model_type is listed
    (the KV heads' default only where it states none either)."""
    found = HEAD_DEFAULTS.get(str(text.get("model_type"))) if "num_attention_heads" not in text else None
    if found is None:
        return text
    heads, kv = found
    return {**text, "num_attention_heads": heads, "num_key_value_heads": text.get("num_key_value_heads", kv)}


def _text(keys: Mapping[str, Any]) -> Mapping[str, Any]:
    """The text model's keys as SGLang's get_hf_text_config picks them (0.5.9 utils/hf_transformers_utils.py:132-170,
    0.5.23 utils/hf_transformers/common.py:547-600): the whole config for a Llava*ForCausalLM; a thinker_config's own
    text_config where it has one (irobust15: Qwen2.5-Omni / Qwen3-Omni state the heads only there, and none was
    judged)."""
    archs = keys.get("architectures")
    first = archs[0] if isinstance(archs, list) and archs and isinstance(archs[0], str) else ""
    if first.startswith("Llava") and first.endswith("ForCausalLM"):
        return keys
    for key in TEXT_CONFIG_KEYS:
        sub = keys.get(key)
        if isinstance(sub, Mapping):
            inner = sub.get("text_config") if key == "thinker_config" else None
            return inner if isinstance(inner, Mapping) else sub
    return keys


def _shown(value: Any) -> str:
    try:
        return json.dumps(value)[:40]
    except (TypeError, ValueError):
        return repr(value)[:40]


def _grouped(judged: Callable[..., None], qc: Any, size: int, tp: int) -> None:
    """An AWQ / GPTQ / compressed-tensors WNA16 checkpoint's down projection (row parallel: input
    intermediate_size / tp per rank) against its group_size: AWQ's linear method and its Marlin path both raise where
    group_size < intermediate_size and the share is not a multiple of it (fail); GPTQ's linear method raises too, its
    Marlin path (the one SGLang usually takes on CUDA) was not read in 0.5.9, so GPTQ is unknown; compressed-tensors'
    WNA16 scheme asserts it as it creates the weights (_wna16_group: fail)."""
    method = _quant_method(qc)
    group = _whole(qc.get("group_size")) if isinstance(qc, Mapping) else None
    name, error = str(method).upper(), "ValueError: 'The input size is not aligned with the quantized weight shape'"
    if method == "compressed-tensors" and isinstance(qc, Mapping):
        group = _wna16_group(qc)
        name, error = "compressed-tensors WNA16", "AssertionError in CompressedTensorsWNA16.create_weights"
    elif method not in ("awq", "gptq"):
        return
    if group is None or tp <= 1 or group >= size or (size // tp) % group == 0:
        return
    judged("groups", {"intermediate_size": size, "group_size": group}, "the MLP's intermediate_size per TP rank a "
           f"multiple of the {name} group_size", f"the MLP's intermediate_size per rank {size} / {tp} = "
           f"{size // tp} is not a multiple of the {name} group_size {group} ({error})", [tp], [tp],
           " (GPTQ's linear method; its Marlin path not read)" if method == "gptq" else None)  # fmt: skip


def _wna16_group(qc: Mapping[str, Any]) -> int | None:
    """(irobust15) The group size of a compressed-tensors checkpoint SGLang serves with CompressedTensorsWNA16 on
    every Linear (an llm-compressor W4A16 / W8A16 export): one config group targeting Linear, its weights a static
    symmetric int quantization by group of 4 or 8 bits, no input activations, pack-quantized, nothing ignored but
    lm_head; else None (not judged: another scheme, or a down projection left unquantized)."""
    groups = qc.get("config_groups")
    ignore = qc.get("ignore")
    if not isinstance(groups, Mapping) or len(groups) != 1 or ignore not in (None, [], ["lm_head"]):
        return None
    group = next(iter(groups.values()))
    weights = group.get("weights") if isinstance(group, Mapping) else None
    if not isinstance(weights, Mapping) or group.get("targets") != ["Linear"] or group.get("input_activations"):
        return None
    form = group.get("format") or qc.get("format")
    if form != "pack-quantized" or weights.get("type") != "int" or weights.get("strategy") != "group":
        return None
    if weights.get("num_bits") not in (4, 8) or weights.get("symmetric") is not True or weights.get("dynamic"):
        return None
    return _whole(weights.get("group_size"))


def shape_results(
    keys: Mapping[str, Any] | None,
    mla: bool | None,
    tp: int,
    attn_tps: Sequence[int],
    eps: Sequence[int] | None,
    sglang_version: str | None,
    subject: str,
    encoder_only: bool = False,
    dense_tp: int | None = None,
    *,
    table: Mapping[str, Any] | None = None,
    redundant: int = 0,
    quantization: str | None = None,
) -> list[CheckResult]:
    """The refusals of the model's shape for this launch (check model-shape). `keys`: config.json's keys as the
    preflight read them (model.attention_keys; None: not read, no result). `mla`: whether SGLang serves it as MLA
    (its KV heads are then not split; None: not known, the KV rule not judged). `tp`: the TP size; `attn_tps`: the
    attention TP sizes the launch can run at (tp // dp with DP attention; every divisor with a flag that splits
    attention further); `eps`: the expert parallel sizes SGLang may take (None: not known, the experts rule not
    judged); `encoder_only`: the launch gives --encoder-only (ENCODER_ONLY_SKIPS build no MLP then); `dense_tp`: the
    TP size of DENSE_LAYER_ARCHITECTURES' dense layers (--moe-dense-tp-size; None: the TP size). Fail on a
    release read (READ_VERSIONS), unknown on another. `table`: preflight.json model.model_shape (the architectures
    whose dense MLP and redundant experts were read, beside DENSE_ARCHITECTURES; None: DENSE_ARCHITECTURES alone,
    redundant experts not judged); `redundant`: --ep-num-redundant-experts (added to the routed experts where the
    architecture adds it, else the experts rule is not judged); `quantization`: --quantization (None: not given;
    (ishape3) which MoE method serves an AWQ checkpoint)."""
    if keys is None:
        return []
    from stackcheck.facts.versions import version_in

    text = _with_head_defaults(_text(keys))
    read = sglang_version is not None and version_in(sglang_version, READ_VERSIONS) is True
    release = f"SGLang {sglang_version}" if sglang_version is not None else "SGLang (release not known)"
    archs = keys.get("architectures")
    first = archs[0] if isinstance(archs, list) and archs else None
    layers = _per_layer(text.get("intermediate_size")) if first in PER_LAYER_ARCHITECTURES else None
    for key in INT_KEYS:
        value = text.get(key)
        if key == "intermediate_size" and layers is not None:
            continue
        if key in text and value is not None and _whole(value) is None:
            return [
                CheckResult(
                    SHAPE_CHECK, "unknown", {key: _shown(value)}, f"config.json's {key} a positive whole number",
                    f"{subject}: config.json states {key} {_shown(value)}, not a positive whole number: SGLang splits "
                    "the heads and sizes by the TP size as it builds the model. A transformers 5 config class typing "
                    "it int under @strict (LlamaConfig in 5.19.0, the pin of SGLang 0.5.22-0.5.23) raises TypeError "
                    "at config load for a fraction, NaN or a string; true passes as an int (1 head); other classes "
                    "and the installed transformers are not read. Write the checkpoint's own value",
                    [*SOURCES["heads"], *STRICT_SOURCE],
                )
            ]  # fmt: skip
    out: list[CheckResult] = []
    dense_archs, redundant_archs, extra = _table(table)
    sizes = sorted({max(1, int(tp)), *(max(1, int(t)) for t in attn_tps)})

    def judged(
        rule: str, observed: dict[str, Any], required: str, what: str, bad: list[int], every: list[int],
        partial: str | None = None,
    ) -> None:  # fmt: skip
        """A result where `bad` (of the sizes `every` SGLang may take) fail; `partial`: why it is unknown anyway."""
        if not bad:
            return
        at_all = len(bad) == len(every) and partial is None
        status: Status = "fail" if at_all and read else "unknown"
        at = ", ".join(str(b) for b in bad)
        where = "" if read else f" ({release} is not among the releases read, {READ_VERSIONS}: taken to do the same)"
        also = partial or (
            "" if at_all else f" (SGLang may run it at {', '.join(str(e) for e in every if e not in bad)} instead)"
        )
        out.append(
            CheckResult(
                SHAPE_CHECK, status, {**observed, "sizes": bad}, required,
                f"{subject}: {what} at {at}{also}: SGLang raises while building the model on every GPU, and the "
                f"server does not start{where}",
                [*SOURCES.get(rule, SOURCES["experts"]), *_MIDDLE, *extra.get(rule, [])],
            )
        )  # fmt: skip

    heads = _whole(text.get("num_attention_heads"))
    if heads is not None:
        bad = [t for t in sizes if heads % t]
        defaulted = "num_attention_heads" not in _text(keys)
        if defaulted:
            extra = {**extra, "heads": [*extra.get("heads", []), *HEAD_DEFAULTS_SOURCE]}
        named = "the config class's default, config.json states none" if defaulted else "num_attention_heads"
        what = f"{heads} query heads ({named}) are not divisible by the attention TP size"
        judged("heads", {"num_attention_heads": heads}, "num_attention_heads divisible by the attention TP size",
               what, bad, sizes)  # fmt: skip
        kv = _whole(next((text.get(k) for k in KV_KEYS if text.get(k) is not None), None))
        if mla is False and kv is not None:
            n = kv
            bad = [t for t in sizes if (t % n if t >= n else n % t)]
            judged("heads", {"num_key_value_heads": n}, "the TP size a multiple of the KV heads (replicated), or "
                   "the KV heads a multiple of it", f"{n} KV heads and the attention TP size divide neither way",
                   bad, sizes)  # fmt: skip
    experts = next((text.get(k) for k in EXPERT_KEYS if text.get(k) is not None), None)
    routed = _whole(experts)
    if routed is not None and eps and redundant > 0 and first in redundant_archs:
        every = sorted({max(1, int(e)) for e in eps})
        total = routed + redundant
        bad = [e for e in every if total % e]
        judged("redundant", {"experts": experts, "ep_num_redundant_experts": redundant},
               "the routed experts plus --ep-num-redundant-experts divisible by the expert parallel size",
               f"{experts} routed experts + {redundant} redundant experts (--ep-num-redundant-experts) = {total} are "
               "not divisible by the expert parallel size", bad, every)  # fmt: skip
    elif routed is not None and eps and redundant <= 0:
        every = sorted({max(1, int(e)) for e in eps})
        bad = [e for e in every if routed % e]
        judged("experts", {"experts": experts}, "the routed experts divisible by the expert parallel size",
               f"{experts} routed experts are not divisible by the expert parallel size", bad, every)  # fmt: skip
    _moe_share(judged, table, first, text, tp, eps)
    _moe_groups(judged, table, first, text, keys.get("quantization_config"), tp, eps, quantization)
    thinker = keys.get("thinker_config")
    if first in OMNI_ARCHITECTURES and isinstance(thinker, Mapping):
        for sub_key, head_key, default in OMNI_ENCODERS:
            sub = thinker.get(sub_key)
            stated = sub.get(head_key) if isinstance(sub, Mapping) else None
            count: int | None = default if stated is None else _whole(stated)
            if count is None:
                continue
            bad = [t for t in sizes if count % t]
            how = "stated" if stated is not None else "the config class's default, config.json states none"
            judged("omni-encoders", {f"thinker_config.{sub_key}.{head_key}": count}, f"the {sub_key[:-7]} encoder's "
                   "heads divisible by the attention TP size", f"the {sub_key[:-7]} encoder's {count} heads "
                   f"(thinker_config.{sub_key}.{head_key}, {how}) are not divisible by the attention TP size",
                   bad, sizes)  # fmt: skip
    if layers is not None:
        t = max(1, int(tp))
        odd = sorted({n for n in layers if n % t})
        if odd:
            judged("per_layer", {"intermediate_size": odd}, "every layer's intermediate_size divisible by the TP size",
                   f"the per-layer MLP intermediate_size {', '.join(map(str, odd))} is not divisible by the TP size",
                   [t], [t])  # fmt: skip
    size = _whole(text.get("intermediate_size"))
    dense = (
        (first in DENSE_ARCHITECTURES or first in dense_archs)
        and not (encoder_only and first in ENCODER_ONLY_SKIPS)
        and experts is None
    )
    if dense:
        _attention_blocks(judged, keys.get("quantization_config"), text, sizes)
    # (irev83) a DeepSeek MoE's first_k_dense_replace layers: the same two layers, at --moe-dense-tp-size's size
    layered = first in DENSE_LAYER_ARCHITECTURES and _whole(text.get("first_k_dense_replace")) is not None
    if (dense or layered) and size is not None:
        t = max(1, int(tp if dense_tp is None or not layered else dense_tp))
        rule, mlp = ("dense", "the MLP's") if dense else ("dense_layers", "the dense layers' MLP (--moe-dense-tp-size "
                                                          "1 keeps it whole on each rank):")  # fmt: skip
        if size % t:
            judged(rule, {"intermediate_size": size}, "intermediate_size divisible by the TP size",
                   f"{mlp} intermediate_size {size} is not divisible by the TP size", [t], [t])  # fmt: skip
        else:
            qc = keys.get("quantization_config")
            _grouped(judged, qc, size, t)
            block = qc.get("weight_block_size") if isinstance(qc, Mapping) and _quant_method(qc) == "fp8" else None
            if isinstance(block, list) and len(block) == 2 and all(_whole(b) for b in block):
                per, (bn, bk) = size // t, (int(block[0]), int(block[1]))
                if per % bn or (t > 1 and per % bk):
                    judged(rule, {"intermediate_size": size, "weight_block_size": [bn, bk]},
                           "the MLP's intermediate_size per TP rank a multiple of the FP8 weight block",
                           f"{mlp} intermediate_size per rank {size} / {t} = {per} is not a multiple of the FP8 "
                           f"weight block {bn}x{bk} (ValueError 'is not divisible by weight quantization "
                           f"block_{'n' if per % bn else 'k'}')", [t], [t])  # fmt: skip
    return out
