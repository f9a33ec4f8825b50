"""The model's shape against the launch's parallelism (ishape): what SGLang divides by the TP / EP sizes as it builds
the model, before any weight loads, read in the 0.5.9 and 0.5.23 wheels (pip download --no-deps, 2026-12-07):

- the query heads by the attention TP size, the KV heads by it or it by them (QKVParallelLinear: `divide`, an
  assert; the model modules assert the same: llama.py, qwen3_moe.py, deepseek_v2.py for MLA's query heads);
- a dense MLP's intermediate_size by the TP size (MergedColumnParallelLinear / RowParallelLinear `divide`), and its
  share per rank by a block-FP8 checkpoint's weight_block_size (Fp8LinearMethod.validate_block_quant_shapes:
  ValueError 'is not divisible by weight quantization block_n / block_k'); judged for the architectures whose MLP
  was read (preflight.json model.model_shape.dense_mlp: Llama, Mistral, Phi-3, Qwen2, Qwen3, Gemma 2 / 3, GLM-4;
  LlamaForCausalLM alone without the table; the MoE experts' share is launch.json's refusal fp8-block-moe-tp-split);
- the routed experts by the expert parallel size (FusedMoE.__init__ asserts it), with --ep-num-redundant-experts
  added where the architecture adds them (model.model_shape.redundant_experts; another: not judged);
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
    ],
}

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
#: the architectures whose dense MLP was read (a plain intermediate_size split by the TP size)
DENSE_ARCHITECTURES = ("LlamaForCausalLM",)
TEXT_CONFIG_KEYS = ("thinker_config", "llm_config", "language_config", "text_config")


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
    """(ishape2) num_attention_heads not stated where SGLang reads it (the text sub-config where config.json has one,
    else the top level) at a TP or attention TP size above 1: the transformers config class's default (or the
    parent's value, which SGLang does not read for a text sub-config) decides how the heads split, and it is not read
    here: unknown, never an ok. At TP 1 nothing is split, and a config.json not read gives no result. (The gate's;
    recommend's fitting TP reads shape_results alone, which gives nothing here.)"""
    if keys is None:
        return None
    text = _text(keys)
    sizes = sorted({max(1, int(tp)), *(max(1, int(t)) for t in attn_tps)})
    if "num_attention_heads" in text or max(sizes, default=1) <= 1:
        return None
    sub = next((k for k in TEXT_CONFIG_KEYS if isinstance(keys.get(k), Mapping)), None)
    sub = sub or next((k for k in TEXT_CONFIG_KEYS if k in keys), None)
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


def _text(keys: Mapping[str, Any]) -> Mapping[str, Any]:
    for key in TEXT_CONFIG_KEYS:
        sub = keys.get(key)
        if isinstance(sub, Mapping):
            return sub
    return keys


def _shown(value: Any) -> str:
    try:
        return json.dumps(value)[:40]
    except (TypeError, ValueError):
        return repr(value)[:40]


def _grouped(judged: Callable[..., None], qc: Any, size: int, tp: int) -> None:
    """An AWQ / GPTQ checkpoint's down projection (row parallel: input intermediate_size / tp per rank) against its
    group_size: AWQ's linear method and its Marlin path both raise where group_size < intermediate_size and the share
    is not a multiple of it (fail); GPTQ's linear method raises too, its Marlin path (the one SGLang usually takes on
    CUDA) was not read in 0.5.9, so GPTQ is unknown."""
    method = qc.get("quant_method") if isinstance(qc, Mapping) else None
    group = _whole(qc.get("group_size")) if isinstance(qc, Mapping) else None
    if method not in ("awq", "gptq") or group is None or tp <= 1 or group >= size or (size // tp) % group == 0:
        return
    judged("groups", {"intermediate_size": size, "group_size": group}, "the MLP's intermediate_size per TP rank a "
           f"multiple of the {method.upper()} group_size", f"the MLP's intermediate_size per rank {size} / {tp} = "
           f"{size // tp} is not a multiple of the {method.upper()} group_size {group} (ValueError: 'The input size "
           "is not aligned with the quantized weight shape')", [tp], [tp],
           None if method == "awq" else " (GPTQ's linear method; its Marlin path not read)")  # fmt: skip


def shape_results(
    keys: Mapping[str, Any] | None,
    mla: bool | None,
    tp: int,
    attn_tps: Sequence[int],
    eps: Sequence[int] | None,
    sglang_version: str | None,
    subject: str,
    *,
    table: Mapping[str, Any] | None = None,
    redundant: int = 0,
) -> list[CheckResult]:
    """The refusals of the model's shape for this launch (check model-shape). `keys`: config.json's keys as the
    preflight read them (model.attention_keys; None: not read, no result). `mla`: whether SGLang serves it as MLA
    (its KV heads are then not split; None: not known, the KV rule not judged). `tp`: the TP size; `attn_tps`: the
    attention TP sizes the launch can run at (tp // dp with DP attention; every divisor with a flag that splits
    attention further); `eps`: the expert parallel sizes SGLang may take (None: not known, the experts rule not
    judged). Fail on a release read (READ_VERSIONS), unknown on another. `table`: preflight.json model.model_shape
    (the architectures whose dense MLP and redundant experts were read; None: LlamaForCausalLM's MLP alone, redundant
    experts not judged); `redundant`: --ep-num-redundant-experts (added to the routed experts where the architecture
    adds it, else the experts rule is not judged)."""
    if keys is None:
        return []
    from stackcheck.facts.versions import version_in

    text = _text(keys)
    read = sglang_version is not None and version_in(sglang_version, READ_VERSIONS) is True
    release = f"SGLang {sglang_version}" if sglang_version is not None else "SGLang (release not known)"
    for key in INT_KEYS:
        value = text.get(key)
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
    archs = keys.get("architectures")
    first = archs[0] if isinstance(archs, list) and archs else None
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
        what = f"{heads} query heads (num_attention_heads) are not divisible by the attention TP size"
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
    size = _whole(text.get("intermediate_size"))
    if first in dense_archs and experts is None and size is not None:
        t = max(1, int(tp))
        if size % t:
            judged("dense", {"intermediate_size": size}, "intermediate_size divisible by the TP size",
                   f"the MLP's intermediate_size {size} is not divisible by the TP size", [t], [t])  # fmt: skip
        else:
            qc = keys.get("quantization_config")
            _grouped(judged, qc, size, t)
            block = qc.get("weight_block_size") if isinstance(qc, Mapping) and qc.get("quant_method") == "fp8" else None
            if isinstance(block, list) and len(block) == 2 and all(_whole(b) for b in block):
                per, (bn, bk) = size // t, (int(block[0]), int(block[1]))
                if per % bn or (t > 1 and per % bk):
                    judged("dense", {"intermediate_size": size, "weight_block_size": [bn, bk]},
                           "the MLP's intermediate_size per TP rank a multiple of the FP8 weight block",
                           f"the MLP's intermediate_size per rank {size} / {t} = {per} is not a multiple of the FP8 "
                           f"weight block {bn}x{bk} (ValueError 'is not divisible by weight quantization "
                           f"block_{'n' if per % bn else 'k'}')", [t], [t])  # fmt: skip
    return out
