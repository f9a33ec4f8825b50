"""Launches SGLang refuses before it serves (manifests/launch.json `refusals`). Pure.

SGLang checks some combinations of its settings before it loads a model (ServerArgs.__post_init__, and from 0.5.13
the hooks of arg_groups/): EAGLE tree drafting (top-k > 1) with pages larger than one token on a backend that
cannot page the tree, trtllm_mha with top-k > 1, STANDALONE or NGRAM with DP attention, Flex Attention with
speculative decoding, --speculative-eagle-topk without --speculative-num-steps (an assert) and the reverse (the
unset top-k compared with 1). One more is checked as the trtllm_mha attention backend starts (0.5.17-0.5.23, rule
trtllm-mha-page-128-heads): pages of 128 tokens off XQA (SM100/SM103/SM110) need more query heads than KV heads per
GPU and equal QK/V head dims. Another as the model loads (0.5.3-0.5.23, rule hybrid-gdn-blackwell-backend): a model
SGLang gives a hybrid GDN config (by config.json's model_type; Qwen3-Next, Qwen3.5) runs on Blackwell GPUs only on
the attention backends that release admits for the GPU's major. Such a launch never serves, so the gate refuses it.

Each rule is a list of conditions on the values SGLang holds when it checks, read from the command:
- a value the flags give (`--speculative-eagle-topk 4`, `--page-size 16`, `--attention-backend fa3`) is known;
  a flag launch.json does not list is read from the command as argparse would (--speculative-draft-attention-backend);
- a value SGLang sets itself from a flag is derived here, from launch.json's data (`refusals.auto`): the page size
  an attention backend forces (trtllm_mla: 64; trtllm_mha: 64 unless it keeps the one given, 128 from 0.5.17), the
  top-k of STANDALONE (1), the default page size (1);
- SGLang's own top-k follows the model's first architecture (config.json), which the gate's preflight reads when
  it finds the model; the attention backend SGLang picks for the GPU and the model (from 0.5.5) is unknown, except
  that it never is a backend it picks only on other GPUs (trtllm_mha off SM100-SM120) or never picks at all;
- the model's attention heads (query and KV heads, QK and V head dims) are read from the config.json the preflight
  read, as SGLang's ModelConfig reads them, but only what the file states (a value the transformers config class
  would default is unknown), split by the attention TP size (tp, over dp with DP attention; each divisor of tp
  where a flag splits attention further); the draft model's too when its backend is trtllm_mha. These are judged
  facts (`is` conditions): they hold, do not, or are unknown when the config was not read;
- whether trtllm_mha decodes with XQA follows the box's GPU majors (unknown without a GPU);
- whether the model is a hybrid GDN model follows its config.json's model_type (unknown when not read, unless no
  backend that could fail is given); the backend SGLang picks itself for it is admitted only where launch.json's
  `auto_admitted` says (its model override on SM100, its default on other GPUs), else unknown;
- two equal split flags (--prefill-attention-backend X --decode-attention-backend X) are attention_backend X from
  0.5.5 (launch.json refusals.auto.attention_backend.equal_split), for every rule but the model assertions
  (`before_equal_split`), which SGLang runs before it sets it;
- a model's own assertion on its attention backend (GPT-OSS, Olmo2, Llama 4) is judged on the architecture the
  preflight read; where it read none, a backend one of them would refuse is unknown (the model may be it);
- a value SGLang chooses from what the gate does not see is unknown.
A rule whose conditions all hold is `blocked` (effect crash, or the rule's `effect` wrong-output where the
release serves the combination with no error); one where none fails and some are unknown is
`unknown` (refused unless --allow-unknown); a release no range of the rule covers is not judged (the rule is
silent rather than guess: the flags themselves are judged by release_problems).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence

from stackcheck.digits import whole_number
from stackcheck.launch.gate import Derived, Problem, option_given, option_value, reading_flags
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, TypeGuard

_UNKNOWN = object()  # a value SGLang chooses at start that the command does not give


#: the spellings of SGLang's expert parallel size, one argparse action (dest ep_size): sglang 0.5.1
#: server_args.py:1477-1479 and 0.5.10 :4901-4903 ("--expert-parallel-size", "--ep-size", "--ep"), 0.5.19
#: server_args.py:2361 and 0.5.23 arg_groups/fields/parallel.py:285 (--ep-size with aliases --expert-parallel-size
#: and --ep); the last occurrence of any of them wins
EP_SPELLINGS = ("--ep-size", "--expert-parallel-size", "--ep")


class _Unset:
    """launch_values' `declared` not given (None is an answer: the release's flags are not known)."""


_UNSET = _Unset()


class _AutoBackend:
    """The attention backend SGLang chooses at start: which values it can take on this box (launch.json
    refusals.auto.attention_backend), for the conditions that ask whether it is one backend."""

    def __init__(self, spec: Mapping[str, Any], majors: set[int] | None) -> None:
        # never its own pick on an NVIDIA GPU: never_picks, and the backends of another accelerator (other_platforms)
        self.never = {str(x) for x in spec.get("never_picks") or []}
        self.never |= {str(x) for x in spec.get("other_platforms") or {}}
        self.only_on = {str(k): {int(m) for m in v} for k, v in (spec.get("picks_only_on_majors") or {}).items()}
        self.majors = majors

    def can_be(self, backend: str) -> bool:
        if backend in self.never:
            return False
        on = self.only_on.get(backend)
        return on is None or self.majors is None or bool(on & self.majors)


class _AutoA2A(_AutoBackend):
    """The MoE all-to-all backend where SGLang may set it itself (_a2a_values): its own settings are deepep
    (waterfill, prefill context parallelism), megamoe (DeepGEMM's mega MoE, the megamoe runner alias, MiniMax M3)
    or none, never another backend."""

    def __init__(self) -> None:
        super().__init__({}, None)

    def can_be(self, backend: str) -> bool:
        return backend in ("none", "deepep", "megamoe")


class _Judged:
    """A condition the gate decides from what it read beyond the flags (the model's attention heads in its
    config.json): whether it holds (None: not read), and what was read, for the verdict's observed value."""

    def __init__(self, holds: bool | None, text: str, required: str | None = None, missing: str | None = None) -> None:
        self.holds = holds
        self.text = text
        self.required = required  # what would pass on this box, where the rule's data alone cannot say it
        self.missing = missing  # what the gate could not read, where holds is None (else _AUTO_WORDS says it)


# the flags whose values the rules read, by fact name
_FLAG_FACTS = {
    "speculative_algorithm": "--speculative-algorithm",
    "attention_backend": "--attention-backend",
    "decode_attention_backend": "--decode-attention-backend",
    "prefill_attention_backend": "--prefill-attention-backend",
    "kv_cache_dtype": "--kv-cache-dtype",
    "moe_runner_backend": "--moe-runner-backend",
    "quantization": "--quantization",
    "speculative_moe_runner_backend": "--speculative-moe-runner-backend",
    "fp8_gemm_backend": "--fp8-gemm-backend",
    "bf16_gemm_backend": "--bf16-gemm-backend",
}


def _version_in(version: str, spec: str) -> bool | None:
    from stackcheck.facts.versions import version_in

    return version_in(version, spec)


def _for_release(entries: Any, version: str) -> Mapping[str, Any] | None:
    """The first entry of a per-release list whose `versions` take `version` (None: no entry covers it)."""
    return next(
        (e for e in entries or [] if isinstance(e, dict) and _version_in(version, str(e.get("versions", ""))) is True),
        None,
    )


def _post_between_entries(entries: Any, version: str) -> tuple[str, list[Mapping[str, Any]]] | None:
    """(V, the applying entries of V and of the releases just above V's post releases) where `version` is a post
    release of V (or a dev build of one) that no entry of a per-release list takes; None otherwise (not a post
    release, or neither neighbour's entry applies). The release above is versions.above_post_releases' over the
    entries' ranges, the one the engine's version operator reads (post_between)."""
    from stackcheck.facts.versions import above_post_releases

    specs = [str(e.get("versions", "")) for e in entries or [] if isinstance(e, dict)]
    found = above_post_releases(version, specs)
    if found is None:
        return None
    base, above = found
    neighbours = [e for e in (_for_release(entries, base), _for_release(entries, above)) if e and e.get("applies")]
    return (base, neighbours) if neighbours else None


def _forced_page_size(options: Mapping[str, Any], page: Mapping[str, Any], version: str) -> int | None:
    """The page size an attention backend of the command sets before SGLang's checks run (None: none does)."""
    given = options.get("--page-size")
    forced: int | None = None
    for backend, spec in (page.get("forced_by") or {}).items():
        if not isinstance(spec, dict) or _version_in(version, str(spec.get("versions", ""))) is not True:
            continue
        if not any(options.get(str(flag)) == backend for flag in spec.get("flags") or []):
            continue
        keeps = [int(x) for x in (_for_release(spec.get("keeps_by_release"), version) or spec).get("keeps") or []]
        value = given if isinstance(given, int) and given in keeps else int(spec["value"])
        forced = value if forced is None else forced  # the first backend that forces decides (all force > 1)
    return forced


def _auto_topk(spec: Mapping[str, Any], version: str, algorithm: Any, architecture: str | None) -> Any:
    """The top-k SGLang picks when the command gives none (launch.json refusals.auto.speculative_topk)."""
    entry = _for_release(spec.get("by_release"), version)
    if entry is None:
        return _UNKNOWN
    if algorithm == "STANDALONE" and isinstance(entry.get("standalone"), int):
        return int(entry["standalone"])
    if architecture is None:
        return _UNKNOWN
    picked = (entry.get("architectures") or {}).get(architecture, entry.get("otherwise"))
    return int(picked) if isinstance(picked, int) else _UNKNOWN


_DTYPE_NAMES = {"half": "float16", "float16": "float16", "bfloat16": "bfloat16", "float": "float32",
                "float32": "float32"}  # fmt: skip
_TEXT_SUBCONFIGS = ("thinker_config", "llm_config", "language_config", "text_config")


def _model_dtype(flag: str | None, read: Any) -> Any:
    """The dtype SGLang runs the model in (configs/model_config.py _get_and_verify_dtype): --dtype as given, else
    config.json's dtype / torch_dtype, float32 or none of them becoming float16 (bfloat16 for a Gemma). Unknown
    where config.json was not read, a name is not one of SGLang's, or the config nests a text config (whose dtype
    a multimodal model's class may read instead)."""
    if flag is not None and flag.lower() != "auto":
        return _DTYPE_NAMES.get(flag.lower(), _UNKNOWN)
    if not isinstance(read, Mapping) or any(key in read for key in _TEXT_SUBCONFIGS):
        return _UNKNOWN
    raw = read.get("dtype") or read.get("torch_dtype")
    name = _DTYPE_NAMES.get(raw.removeprefix("torch.").lower(), _UNKNOWN) if isinstance(raw, str) else None
    if raw is not None and not isinstance(raw, str):
        return _UNKNOWN
    if name in (None, "float32"):
        return "bfloat16" if str(read.get("model_type") or "").startswith("gemma") else "float16"
    return name


def _attn_tp_sizes(
    opts: Mapping[str, Any], args: Sequence[str], split_flags: Sequence[str], declared: set[str] | None = None
) -> list[int]:
    """The attention TP sizes the launch can run at: tp // (dp with DP attention) // attention CP. With a flag that
    splits attention further (`split_flags`, values the gate does not read) every divisor of tp."""
    tp = opts.get("--tp-size")
    tp = tp if isinstance(tp, int) and not isinstance(tp, bool) and tp > 0 else 1
    if any(option_given(args, (f,), declared) for f in split_flags):
        return _divisors(tp)
    dp = opts.get("--dp-size") if opts.get("--enable-dp-attention") else 1
    dp = dp if isinstance(dp, int) and not isinstance(dp, bool) and dp > 0 else 1
    return [max(1, tp // dp)]


#: the largest tp whose divisors are all tried (10**6 trial divisions); past it, no box has the GPUs, and 1 and tp
#: stand for the rest
DIVISORS_UP_TO = 10**12


def _divisors(n: int) -> list[int]:
    """The divisors of n in increasing order, in O(sqrt(n)) steps (a command's --tp 100000000 took minutes and
    gigabytes as range(1, n + 1)); for an n past DIVISORS_UP_TO only 1 and n."""
    if n > DIVISORS_UP_TO:
        return [1, n]
    from math import isqrt

    low = [t for t in range(1, isqrt(n) + 1) if n % t == 0]
    return sorted({*low, *(n // t for t in low)})


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def model_heads(
    attention: Mapping[str, Any] | None, spec: Mapping[str, Any]
) -> tuple[int, int, int | None, int | None] | str:
    """(query heads, KV heads, QK head dim, V head dim) as SGLang's ModelConfig derives them from config.json, or
    why the gate cannot say (a string). Only what config.json states is taken: a key it lacks that the transformers
    config class would default is not guessed. `spec`: the rule's data for the release (architectures whose
    shapes SGLang sets itself, model types whose KV heads it reads elsewhere)."""
    if attention is None:
        return "config.json not read"
    listed = attention.get("architectures")  # as the preflight reads it: a list's strings, else none
    archs = [str(a) for a in listed if isinstance(a, str)] if isinstance(listed, list) else []
    own = sorted(set(archs) & {str(a) for a in spec.get("shapes_set_by_sglang") or []})
    if own:
        return f"SGLang sets the head dims of {own[0]} itself"
    model_type = attention.get("model_type")
    if model_type in (spec.get("kv_heads_elsewhere") or []):
        return f"SGLang reads the KV heads of model type {model_type} from elsewhere"
    text: Mapping[str, Any] = attention
    if not (archs and archs[0].startswith("Llava") and archs[0].endswith("ForCausalLM")):
        for key in ("thinker_config", "llm_config", "language_config", "text_config"):  # SGLang's order
            if key in attention:
                sub = attention[key]
                if not isinstance(sub, dict) or key == "thinker_config":
                    return f"{key} is not read"
                text = sub
                break
    if text.get("multi_query"):
        return "a multi-query config (multi_query)"
    heads = _int(text.get("num_attention_heads"))
    if heads is None or heads <= 0:
        return "no num_attention_heads in config.json"
    kv: int | None = None
    for key in ("n_head_kv", "num_kv_heads", "num_key_value_heads", "multi_query_group_num", "num_attention_groups"):
        if text.get(key) is not None:
            kv = _int(text.get(key))
            break
    if kv is None or kv <= 0:
        return "no KV head count in config.json"
    head_dim = _int(text.get("head_dim"))
    if head_dim is None and text.get("head_dim") is None and _int(text.get("hidden_size")):
        head_dim = int(text["hidden_size"]) // heads
    v_head_dim = text.get("v_head_dim")
    if v_head_dim is None:
        return heads, kv, head_dim, head_dim
    if _int(v_head_dim) is None or v_head_dim == 0 or head_dim is None:
        return "head dims not read (v_head_dim without a head_dim)"
    return heads, kv, head_dim, int(v_head_dim)


def _trtllm_gen_heads(
    values: Mapping[str, Any],
    models: Mapping[str, Any],
    spec: Mapping[str, Any],
    tp_sizes: Sequence[int],
) -> _Judged:
    """Whether a model that trtllm_mha serves lacks what trtllm-gen's pages of 128 need: more query heads than KV
    heads per GPU and equal QK/V head dims (True: fails; None: not read; False: every such model has it). The
    target model when one of its backends is or may be trtllm_mha; the draft model of speculative decoding when its
    backend is or may be (its own flag, else the target's)."""
    target_flags = [
        values.get(f) for f in ("attention_backend", "decode_attention_backend", "prefill_attention_backend")
    ]
    target = any(v == "trtllm_mha" or isinstance(v, _AutoBackend) for v in target_flags)
    checked: list[tuple[str, Any]] = [("model", models.get("model"))] if target else []
    algorithm = values.get("speculative_algorithm")
    if algorithm not in (None, "NGRAM"):
        draft_flag = values.get("speculative_draft_attention_backend")
        if draft_flag == "trtllm_mha" or (draft_flag is None and target):
            draft = models.get("draft model") if "draft model" in models else models.get("model")
            checked.append(("draft model", draft))
    verdicts: list[bool | None] = []
    parts: list[str] = []
    for role, attention in checked:
        read = model_heads(attention, spec)
        if isinstance(read, str):
            verdicts.append(None)
            parts.append(f"{role}: heads not read ({read})")
            continue
        heads, kv, qk, v = read
        fails = {(heads // t) // max(1, kv // t) <= 1 or qk != v for t in tp_sizes}
        verdicts.append(fails.pop() if len(fails) == 1 else None)
        per_gpu = ", ".join(f"{heads // t}/{max(1, kv // t)} at attention TP {t}" for t in tp_sizes)
        dims = f"{qk}/{v}" if qk is not None else "equal"
        parts.append(f"{role}: {heads} query / {kv} KV heads (per GPU {per_gpu}), QK/V head dims {dims}")
    holds = True if True in verdicts else None if None in verdicts else False
    return _Judged(holds, "; ".join(parts) or "no model on trtllm_mha")


def _method_named(
    values: Mapping[str, Any], method: str, flags: tuple[str, ...] = (), name: str = ""
) -> tuple[Any, Any, _Judged | None]:
    """(the --quantization flag, the checkpoint's quant_method, a False verdict where neither names `method`: a
    --quantization other than FLAGS (default: the method alone), or none on a checkpoint not of that method, shown as
    NAME (default: the method upper-cased)); the verdict None where one of them does."""
    flag = values.get("quantization")
    held = values.get("model_quant_method")
    if flag is not None and flag not in (flags or (method,)):
        return flag, held, _Judged(False, f"--quantization {flag}")
    if flag is None and held != method:
        return flag, held, _Judged(False, f"no {name or method.upper()} checkpoint read")
    return flag, held, None


def _fp8_config_moe(values: Mapping[str, Any], read: Any) -> _Judged:
    """Whether SGLang loads the served model's experts through Fp8Config (Fp8MoEMethod): --quantization fp8, or no
    --quantization on a checkpoint whose quant_method is fp8, on a model with routed experts. True: it does; None: a
    --quantization fp8 launch whose config.json was not read (dense or MoE not known); False otherwise (a checkpoint
    not read without the flag is not judged, as the preflight's checkpoint entries are not)."""
    flag, _held, judged = _method_named(values, "fp8")
    if judged is not None:
        return judged
    moe = _model_moe(read)
    what = "--quantization fp8" if flag == "fp8" else "an FP8 checkpoint (quant_method fp8)"
    if moe is _UNKNOWN:
        return _Judged(None, f"{what}, model not read", missing="whether the model has routed experts (config.json)")
    return _Judged(bool(moe), f"{what} on {'an MoE' if moe else 'a dense'} model")


def _deepep_v2_fp8_block(values: Mapping[str, Any], read: Any) -> _Judged:
    """Whether the served model's experts take Fp8MoEMethod (Fp8Config, not MXFP8) with a weight block other than
    128x128, which DeepEP v2's check of the MoE method refuses: --quantization fp8 on an unquantized checkpoint (the
    online Fp8Config() has no weight block), or an FP8 checkpoint (quant_method fp8, no --quantization or
    --quantization fp8) whose quantization_config.weight_block_size is not [128, 128] (per-tensor: none). True: it
    does; None: the checkpoint or its experts not read, or an ignore list that may name the experts; False
    otherwise."""
    _flag, held, judged = _method_named(values, "fp8")
    if judged is not None:
        return judged
    if held not in (None, "fp8", _UNKNOWN):
        return _Judged(False, f"--quantization fp8 on a {held} checkpoint")
    moe = _model_moe(read)
    if held is _UNKNOWN or not isinstance(read, Mapping) or moe is _UNKNOWN:
        return _Judged(None, "--quantization fp8, model not read", missing="the checkpoint's quantization_config "
                       "(weight_block_size) and whether the model has routed experts (config.json)")  # fmt: skip
    if moe is not True:
        return _Judged(False, "FP8 on a dense model")
    if held is None:
        return _Judged(True, "--quantization fp8 on an unquantized MoE checkpoint (online FP8: no weight block)")
    qc = read.get("quantization_config")
    if not isinstance(qc, Mapping):
        return _Judged(None, "an FP8 checkpoint", missing="its quantization_config (weight_block_size)")
    block, act = qc.get("weight_block_size"), qc.get("activation_scheme")
    shown = ["none" if v is None else str(v) for v in (block, act)]
    what = f"an FP8 MoE checkpoint, weight_block_size {shown[0]}, activation_scheme {shown[1]}"
    if isinstance(block, list) and block == [128, 128]:
        return _Judged(False, what)
    ignored = qc.get("ignored_layers") or qc.get("modules_to_not_convert")
    if isinstance(ignored, list) and any("expert" in str(x) for x in ignored):
        return _Judged(None, what, missing="whether its ignored layers cover every MoE layer (those get "
                       "UnquantizedFusedMoEMethod)")  # fmt: skip
    return _Judged(True, what)


def _mxfp8_moe(values: Mapping[str, Any], read: Any) -> _Judged:
    """Whether the served model's experts take Fp8MoEMethod with MXFP8 weights: --quantization mxfp8 on an
    unquantized or MXFP8 checkpoint, or an MXFP8 checkpoint (quant_method mxfp8, a ModelOpt MXFP8 export included)
    without --quantization, on a model with routed experts. True: they do; None: the model not read; False
    otherwise."""
    flag, held, judged = _method_named(values, "mxfp8")
    if judged is not None:
        return judged
    if held not in (None, "mxfp8", _UNKNOWN):
        return _Judged(False, f"--quantization mxfp8 on a {held} checkpoint")
    moe = _model_moe(read)
    what = "--quantization mxfp8" if flag == "mxfp8" else "an MXFP8 checkpoint (quant_method mxfp8)"
    if held is _UNKNOWN or moe is _UNKNOWN:
        return _Judged(None, f"{what}, model not read", missing="the checkpoint's quantization and whether the "
                       "model has routed experts (config.json)")  # fmt: skip
    return _Judged(bool(moe), f"{what} on {'an MoE' if moe else 'a dense'} model")


def _modelopt_mixed_moe(values: Mapping[str, Any], d: Derived, read: Any, spec: Mapping[str, Any]) -> _Judged:
    """Whether DeepEP v2's check of the MoE method refuses the experts of a W4AFP8 launch: --quantization w4afp8, or
    a checkpoint read as w4afp8 (a ModelOpt MIXED_PRECISION one included), on a model with routed experts. Where the
    release maps the MIXED_PRECISION checkpoint to modelopt_mixed (an NVFP4 layer; --quantization w4afp8 is then
    overridden to modelopt_mixed too), each MoE layer's method follows its experts' quant_algo (launch fact
    model_mixed_precision) as the release entry's `spec` says: `methods` (algo -> refused, taken, or unquantized:
    SGLang returns no method), `unquantized` (whether UnquantizedFusedMoEMethod is refused or taken: also the method
    of a MoE layer with no entry), `block_algos` whose group_size must be `block` (None: the release fixes the block
    itself). Else every MoE layer gets W4AFp8MoEMethod, which the check refuses. Another --quantization that the
    release replaces by modelopt_mixed (launch fact model_quant_loaded; e.g. modelopt_fp8, fp8) loads the same
    per-layer methods, so it is judged as well (ifc34: it was taken as no W4AFP8 launch). True: refused; None: not
    decided."""
    flag, held = values.get("quantization"), values.get("model_quant_method")
    replaced = d.launch.get("model_quant_loaded") == "modelopt_mixed"
    if flag not in (None, "w4afp8") and not replaced:
        return _Judged(False, f"--quantization {flag}")
    if flag is None and held != "w4afp8":
        return _Judged(False, "no W4AFP8 (ModelOpt MIXED_PRECISION) checkpoint read")
    info = d.launch.get("model_mixed_precision")
    what = f"--quantization {flag}" if flag else "a W4AFP8 checkpoint (quant_method w4afp8)"
    if isinstance(info, Mapping):
        what = (f"--quantization {flag} on " if flag else "") + "a ModelOpt MIXED_PRECISION checkpoint"
    dense = _dense_or_not_read(read, what)
    if dense is not None:
        return dense
    mapped = info.get("modelopt_mixed") if isinstance(info, Mapping) else False
    if mapped is None:
        return _Judged(None, f"{what} on an MoE model", missing="whether this SGLang release maps the checkpoint to "
                       "modelopt_mixed (per-layer methods) or w4afp8 (W4AFp8MoEMethod)")  # fmt: skip
    if mapped is not True:
        return _Judged(True, f"{what} on an MoE model, loaded as w4afp8: W4AFp8MoEMethod on every MoE layer")
    assert isinstance(info, Mapping)
    algos = [str(a) for a in info.get("expert_algos") or []]
    methods = spec.get("methods") or {}
    block_algos = [str(a) for a in spec.get("block_algos") or []]
    unquantized = str(spec.get("unquantized"))
    shown = ", ".join(algos) or "none listed"
    what = f"{what} (modelopt_mixed, an NVFP4 layer) on an MoE model, experts' quant_algo {shown}"
    verdicts: list[bool | None] = []
    missing: list[str] = []
    for algo in algos:
        method = methods.get(algo)
        if method == "unquantized":
            method = unquantized
        if method == "refused":
            verdicts.append(True)
        elif method != "taken":
            verdicts.append(None)
            missing.append(f"the MoE method SGLang builds for {algo} experts (not read)")
        elif algo in block_algos and spec.get("block") is not None:
            # one weight block for every block-FP8 layer: their group_size, 128 where none is given (two: ValueError)
            groups = info.get("group_sizes") or {}
            sizes = {"128" if x == "null" else str(x) for a in block_algos for x in groups.get(a) or []}
            verdicts.append(sizes != {str(spec["block"])})
            if verdicts[-1]:
                what += f" (block-FP8 group_size {', '.join(sorted(sizes))}, not {spec['block']})"
    if unquantized == "refused":  # a MoE layer with no entry, or one the checkpoint excludes, is unquantized
        if not algos:
            verdicts.append(True)
        else:
            verdicts.append(None)
            missing.append("whether quantized_layers name the experts of every MoE layer (one without an entry gets "
                           "UnquantizedFusedMoEMethod, which this release refuses)")  # fmt: skip
    holds = True if True in verdicts else None if None in verdicts else False
    return _Judged(holds, what, missing="; ".join(missing) if holds is None else None)


def _modelopt_mixed_load_moe(values: Mapping[str, Any], d: Derived, read: Any, spec: Mapping[str, Any]) -> _Judged:
    """Whether a ModelOpt MIXED_PRECISION checkpoint the release loads as modelopt_mixed has experts whose quant_algo
    gets no MoE method it can load (any a2a backend): ModelOptMixedPrecisionConfig's FusedMoE branch returns None for
    an algo it does not map and FusedMoE builds UnquantizedFusedMoEMethod, whose BF16 weights the quantized
    checkpoint's tensors do not fit. SPEC is the release's `methods` / `unquantized` table, read as _modelopt_mixed_moe
    reads it. A checkpoint the release loads as w4afp8 is not the rule's (False); not decided where the mapping is
    not. True: the load fails; None: not decided."""
    info = d.launch.get("model_mixed_precision")
    if not isinstance(info, Mapping) or info.get("modelopt_mixed") is False:
        return _Judged(False, "no ModelOpt MIXED_PRECISION checkpoint loaded as modelopt_mixed")
    return _modelopt_mixed_moe(values, d, read, spec)


def _w4afp8_non_gated_moe(
    values: Mapping[str, Any], d: Derived, read: Any, spec: Mapping[str, Any], architecture: str | None
) -> _Judged:
    """Whether every MoE layer runs W4AFp8MoEMethod (--quantization w4afp8, or a checkpoint read as w4afp8 that the
    release does not map to modelopt_mixed) on a model of SPEC's `architectures`, whose experts SGLang builds
    non-gated (is_gated=False): W4AFp8MoEMethod's fused gate/up weight is two projections wide whatever the layer
    says, so the single up projection of a non-gated expert does not fit it as FusedMoE loads it. True: the load
    fails; None: not decided."""
    flag, held = values.get("quantization"), values.get("model_quant_method")
    if flag not in (None, "w4afp8") or (flag is None and held != "w4afp8"):
        return _Judged(False, "no W4AFP8 experts")
    info = d.launch.get("model_mixed_precision")
    mapped = info.get("modelopt_mixed") if isinstance(info, Mapping) else False
    if mapped is True:
        return _Judged(False, "a MIXED_PRECISION checkpoint loaded as modelopt_mixed (per-layer methods)")
    what = "--quantization w4afp8" if flag else "a W4AFP8 checkpoint (quant_method w4afp8)"
    dense = _dense_or_not_read(read, what)
    if dense is not None:
        return dense
    archs = [str(a) for a in spec.get("architectures") or []]
    if architecture is None:
        return _Judged(None, f"{what} on an MoE model", missing="the model's architecture (config.json)")
    if architecture not in archs:
        return _Judged(False, f"{what} on {architecture} (gated experts)")
    if mapped is None:
        return _Judged(None, f"{what} on {architecture}", missing="whether this SGLang release maps the checkpoint "
                       "to modelopt_mixed (per-layer methods) or w4afp8 (W4AFp8MoEMethod)")  # fmt: skip
    return _Judged(True, f"{what} on {architecture}, whose experts are non-gated: W4AFp8MoEMethod on every MoE layer")


def _quark_block_fp8(layer: Any) -> list[Any] | None:
    """The weight block of a Quark layer config that SGLang's QuarkConfig hands to Fp8MoEMethod (FP8 weights per
    block with a two-number block_size, FP8 dynamic input, no output or bias quantization); None for any other."""
    if not isinstance(layer, Mapping):
        return None
    weight, inputs = layer.get("weight") or {}, layer.get("input_tensors") or {}
    if not isinstance(weight, Mapping) or not isinstance(inputs, Mapping):
        return None
    block = weight.get("block_size")
    fp8 = {"fp8_e4m3", "fp8_e4m3fn"}
    if (
        not layer.get("output_tensors") and not layer.get("bias") and weight.get("dtype") in fp8
        and weight.get("qscheme") == "per_block" and weight.get("is_dynamic") is False
        and isinstance(block, list) and len(block) == 2 and inputs.get("dtype") in fp8
        and inputs.get("is_dynamic") is True
    ):  # fmt: skip
        return list(block)
    return None


def _quark_moe(values: Mapping[str, Any], read: Any, *, block_fp8: bool) -> _Judged:
    """Whether SGLang's QuarkConfig gives the served model's experts a MoE method other than Fp8MoEMethod with a
    128x128 block, which DeepEP v2's check refuses: --quantization quark / quark_mxfp4, or a Quark checkpoint
    (quant_method quark) without --quantization, on a model with routed experts. `block_fp8`: as the releases
    that hand a block-FP8 layer config Fp8MoEMethod (0.5.21 on) do, judged from a checkpoint whose quantization_config
    has only a global_quant_config (no per-layer or per-type entries, no exclude naming experts); else every Quark
    MoE layer gets QuarkFusedMoEMethod. True: refused; None: not read, or the layer config of the experts not known."""
    flag, _held, judged = _method_named(values, "quark", ("quark", "quark_mxfp4"), "Quark")
    if judged is not None:
        return judged
    what = f"--quantization {flag}" if flag else "a Quark checkpoint (quant_method quark)"
    dense = _dense_or_not_read(read, what)
    if dense is not None:
        return dense
    if not block_fp8:
        return _Judged(True, f"{what} on an MoE model (QuarkFusedMoEMethod)")
    qc = read.get("quantization_config") if isinstance(read, Mapping) else None
    if flag == "quark_mxfp4" or not isinstance(qc, Mapping):
        return _Judged(None, f"{what} on an MoE model", missing="the Quark layer config the experts take")
    per_layer = qc.get("layer_quant_config") or qc.get("layer_type_quant_config")
    exclude = qc.get("exclude")
    if per_layer or (isinstance(exclude, list) and any("expert" in str(x) or "mlp" in str(x) for x in exclude)):
        return _Judged(None, f"{what} with per-layer configs on an MoE model",
                       missing="which Quark layer config the experts take")  # fmt: skip
    block = _quark_block_fp8(qc.get("global_quant_config"))
    if block is None:
        return _Judged(True, f"{what} on an MoE model, not block FP8 (QuarkFusedMoEMethod)")
    shown = f"{what} on an MoE model, block FP8 {block}"
    return _Judged(block != [128, 128], shown)


def _ct_moe(values: Mapping[str, Any], d: Derived, read: Any, schemes: tuple[str, ...]) -> _Judged:
    """Whether the served model's experts take a compressed-tensors MoE scheme for one of `schemes` (the ids of
    launch.model_quant_schemes): no --quantization or --quantization compressed-tensors, a compressed-tensors
    checkpoint whose groups the preflight read as one of them, on a model with routed experts. True: they do; None:
    such a checkpoint on a model whose experts are not known, or a mixed-precision one on an MoE model (its groups
    name modules: which the experts take is not read); False otherwise (not read: not judged)."""
    flag = values.get("quantization")
    if flag not in (None, "compressed-tensors"):
        return _Judged(False, f"--quantization {flag}")
    got = d.launch.get("model_quant_schemes")
    if d.launch.get("model_quant_method") != "compressed-tensors" or not isinstance(got, list):
        return _Judged(False, "no compressed-tensors checkpoint read")
    hit = sorted(set(schemes) & {str(x) for x in got})
    if not hit:
        return _Judged(False, f"a compressed-tensors checkpoint of schemes {', '.join(map(str, got)) or 'none'}")
    mixed = "mixed-precision" in got  # groups by module names or patterns: which one the experts take is not read
    what = f"a {'mixed-precision ' if mixed else ''}compressed-tensors {', '.join(hit)} checkpoint"
    moe = _model_moe(read)
    if moe is _UNKNOWN:
        return _Judged(None, f"{what}, model not read", missing="whether the model has routed experts (config.json)")
    if moe and mixed:
        return _Judged(None, f"{what} on an MoE model", missing="which config group the experts take (the groups' "
                       "targets are not matched against the model's modules)")  # fmt: skip
    return _Judged(bool(moe), f"{what} on {'an MoE' if moe else 'a dense'} model")


def _ct_mixed_packed_moe(values: Mapping[str, Any], d: Derived, read: Any) -> _Judged:
    """Whether the served model's experts may take the pack-quantized (WNA16) group of a compressed-tensors
    checkpoint whose top-level format is mixed-precision: SGLang's WNA16 MoE scheme tests the top-level format.
    None where the model has routed experts or was not read (which group its experts take is not matched against
    its modules), False for a dense model or another checkpoint."""
    got = d.launch.get("model_quant_schemes")
    if not isinstance(got, list) or "mixed-precision" not in got:
        return _Judged(False, "no mixed-precision compressed-tensors checkpoint read")
    return _ct_moe(values, d, read, ("wna16",))  # never True for a mixed-precision checkpoint (unknown on an MoE)


def _ct_fp8_block_linear(values: Mapping[str, Any], d: Derived) -> _Judged:
    """Whether the served model's linear layers take compressed-tensors' block FP8 scheme (CompressedTensorsW8A8Fp8
    with a block_structure, whose constructor picks the block FP8 GEMM through the --fp8-gemm-backend dispatch): no
    --quantization or --quantization compressed-tensors on a compressed-tensors checkpoint whose groups the preflight
    read as fp8-block. True: they do; None: a group not read beside no fp8-block one; False otherwise (not read: not
    judged, as the preflight's checkpoint entries are not)."""
    flag = values.get("quantization")
    if flag not in (None, "compressed-tensors"):
        return _Judged(False, f"--quantization {flag}")
    got = d.launch.get("model_quant_schemes")
    if d.launch.get("model_quant_method") != "compressed-tensors" or not isinstance(got, list):
        return _Judged(False, "no compressed-tensors checkpoint read")
    schemes = {str(x) for x in got}
    if "fp8-block" in schemes:
        return _Judged(True, "a compressed-tensors fp8-block checkpoint")
    if "unknown" in schemes:
        return _Judged(None, "a compressed-tensors checkpoint with a group not read", missing="its groups' scheme")
    return _Judged(False, f"a compressed-tensors checkpoint of schemes {', '.join(sorted(schemes)) or 'none'}")


def _keeps_float16_class(values: Mapping[str, Any], read: Any, spec: Mapping[str, Any]) -> _Judged:
    """Whether SGLang keeps the served GPTQ / AWQ checkpoint (no --quantization) on GPTQConfig / AWQConfig, whose
    activations are float16 only, rather than converting it to gptq_marlin / awq_marlin: the conversion needs the
    checkpoint's keys (GPTQ: bits, group_size, sym, desc_act, not already Marlin-format; AWQ: bits, group_size,
    zero_point) to name a type and group size Marlin takes, and a GPU of compute capability `min_sm` or more
    (`spec`: the release entry's marlin_conversion). True: it keeps it; None: a checkpoint Marlin takes on GPUs whose
    capability was not read; False: it converts (or the checkpoint is no GPTQ / AWQ one read)."""
    qc = read.get("quantization_config") if isinstance(read, Mapping) else None
    if not isinstance(qc, Mapping):
        return _Judged(False, "no quantization_config read")
    method = str(qc.get("quant_method") or "").lower()
    sizes = list(spec.get("group_sizes") or [])
    group = qc.get("group_size")
    if method == "gptq":
        bits, sym, desc = qc.get("bits"), qc.get("sym"), qc.get("desc_act")
        what = f"GPTQ bits={bits} group_size={group} sym={sym} desc_act={desc}"
        marlin_format = qc.get("checkpoint_format") == "marlin" or bool(qc.get("is_marlin_format", False))
        types = [list(t) for t in spec.get("gptq_types") or [] if isinstance(t, list)]
        takes = not marlin_format and None not in (bits, group, sym, desc) and [bits, sym] in types
        if marlin_format:
            what += " (Marlin format)"
    elif method == "awq":
        bits, zero = qc.get("bits"), qc.get("zero_point")
        what = f"AWQ bits={bits} group_size={group} zero_point={zero}"
        allowed = spec.get("awq_bits_zero_point" if zero else "awq_bits_no_zero_point") or []
        takes = None not in (bits, group, zero) and bits in allowed
    else:
        return _Judged(False, f"quant_method {method or 'none'}")
    if not (takes and group in sizes):
        return _Judged(True, f"{what}: not a checkpoint Marlin takes")
    sm, floor = values.get("gpu_sm"), spec.get("min_sm")
    if not isinstance(sm, int) or not isinstance(floor, int):
        return _Judged(None, what, missing="the compute capability of the box's GPUs (Marlin needs 8.0)")
    return _Judged(sm < floor, f"{what} on sm_{sm}")


def _fp8_block_moe_split(
    values: Mapping[str, Any], d: Derived, read: Any, spec: Mapping[str, Any], majors: set[int] | None,
    declared: set[str] | None,
) -> _Judged:  # fmt: skip
    """Whether Fp8MoEMethod.create_weights refuses the launch's split of a block-quantized FP8 checkpoint's experts:
    the experts' intermediate size per MoE tensor-parallel rank (tp / ep) not a multiple of the weight block
    (ValueError 'The output_size of gate's and up's weight = N is not divisible by weight quantization block_n').
    True: it does at every expert parallel size the launch may get; None: not known (the model not read under
    --quantization fp8, an expert size not in config.json, an all-to-all backend or MoE runner SGLang sets
    itself); False otherwise. `spec`: the release entry's fp8_block_moe (ep_spanning_a2a: the all-to-all backends
    that set ep to tp; padded_runners: the MoE runners that round the size per rank up to 128 first;
    sm100_auto_runner: SGLang may pick such a runner itself on SM100 for some architectures, those of
    sm100_auto_runner_architectures always)."""
    flag = values.get("quantization")
    if flag not in (None, "fp8"):
        return _Judged(False, f"--quantization {flag}")
    args = d.sglang_args
    tp_opt = d.options.get("--tp-size")
    tp = tp_opt if isinstance(tp_opt, int) and not isinstance(tp_opt, bool) and tp_opt > 0 else 1
    raw_ep = option_value(args, EP_SPELLINGS, declared)
    ep_given: int | None = 1
    if raw_ep is not None:
        ep_given = size if (size := _whole(raw_ep)) is not None and size > 0 else None
    if not isinstance(read, Mapping):
        if flag == "fp8" and tp > 1:
            return _Judged(None, "--quantization fp8, model not read", missing="the checkpoint's expert size and "
                           "weight block (config.json)")  # fmt: skip
        return _Judged(False, "no block-FP8 checkpoint read")
    qc = read.get("quantization_config")
    method = qc.get("quant_method") if isinstance(qc, Mapping) else None  # (irev86) lower-cased, as SGLang reads it
    fp8 = isinstance(method, str) and method.lower() == "fp8"
    block = qc.get("weight_block_size") if isinstance(qc, Mapping) and fp8 else None
    if block is not None and not (
        isinstance(block, list) and len(block) == 2 and all(type(b) is int and b > 0 for b in block)
    ):  # (irobust11: [0, 0], "128", [128]: a block this reading does not take, read as no block before: unknown)
        return _Judged(None, f"an FP8 checkpoint with weight_block_size {str(block)[:40]}",
                       missing="a weight_block_size of two positive whole numbers")  # fmt: skip
    if block is None:
        return _Judged(False, "not a block-quantized FP8 checkpoint")
    moe = _model_moe(read)
    if moe is _UNKNOWN:
        return _Judged(None, "a block-FP8 checkpoint, experts not read", missing="whether the model has routed experts")
    if moe is not True:
        return _Judged(False, "a dense block-FP8 checkpoint")
    subs = [read.get(k) for k in ("thinker_config", "llm_config", "language_config", "text_config")]
    confs = [c for c in [read, *subs] if isinstance(c, Mapping)]
    sizes = [c.get(k) for k in ("moe_intermediate_size", "intermediate_size") for c in confs]  # the MoE key first
    size = next((n for n in sizes if isinstance(n, int) and not isinstance(n, bool) and n > 0), None)
    if size is None:
        return _Judged(None, "the experts' intermediate size not in config.json", missing="the experts' size")
    a2a = values.get("moe_a2a_backend")
    spanning = [str(x) for x in spec.get("ep_spanning_a2a") or []]
    enable_ep = "--enable-ep-moe" in _GivenFlags(d, declared)
    if enable_ep or (isinstance(a2a, str) and a2a in spanning):
        eps: set[int | None] = {tp}
    elif isinstance(a2a, _AutoBackend):
        eps = {ep_given, tp}
    else:
        eps = {ep_given}
    bn, bk = block
    outcomes: set[bool | None] = set()
    for ep in eps:
        if ep is None or tp % ep:
            outcomes.add(None)
            continue
        moe_tp = tp // ep
        per = size // moe_tp
        outcomes.add(size % moe_tp != 0 or per % bn != 0 or (tp > 1 and per % bk != 0))
    runner = values.get("moe_runner_backend")
    padded = [str(x) for x in spec.get("padded_runners") or []]
    ep_text = "/".join(sorted(str(e) for e in eps))
    text = f"experts' intermediate size {size}, weight block {bn}x{bk}, tp {tp}, ep {ep_text}"
    if True in outcomes and runner in padded:
        return _Judged(False, f"{text}; --moe-runner-backend {runner} rounds the size per rank up to 128")
    if True in outcomes and runner in (None, "auto") and spec.get("sm100_auto_runner") and a2a == "none":
        archs = read.get("architectures")
        first = archs[0] if isinstance(archs, list) and archs else None
        if majors == {10} and first in (spec.get("sm100_auto_runner_architectures") or []):
            return _Judged(False, f"{text}; on SM100 SGLang picks flashinfer_trtllm for {first}, which rounds it up")
        if majors is None or 10 in majors:
            return _Judged(None, f"{text}; on SM100 SGLang may pick flashinfer_trtllm itself, which rounds it up",
                           missing="the MoE runner SGLang picks on SM100 for this architecture")  # fmt: skip
    holds = True if outcomes == {True} else False if outcomes == {False} else None
    return _Judged(holds, text, missing="the expert parallel size SGLang sets")


def _trtllm_mha_page_size(
    values: Mapping[str, Any],
    opts: Mapping[str, Any],
    page: Mapping[str, Any],
    version: str,
    others: Sequence[str],
    own: Any = None,
) -> Any:
    """The page size SGLang holds when a trtllm_mha backend starts: the one given if trtllm_mha keeps it in this
    release, else its own (launch.json refusals.auto.page_size.forced_by.trtllm_mha); unknown when another backend
    of the command sets a page size of its own as well (`others`: their order is not modelled). `own`: the page
    size the model's architecture sets itself when --page-size is not given (None: it sets none)."""
    spec = (page.get("forced_by") or {}).get("trtllm_mha") or {}
    if _version_in(version, str(spec.get("versions", ""))) is not True:
        return _UNKNOWN
    backends = {
        values.get(f)
        for f in ("attention_backend", "decode_attention_backend", "prefill_attention_backend",
                  "speculative_draft_attention_backend")
    }  # fmt: skip
    if backends & {str(b) for b in others}:
        return _UNKNOWN
    keeps = [int(x) for x in (_for_release(spec.get("keeps_by_release"), version) or spec).get("keeps") or []]
    given = opts.get("--page-size")
    if given is None and own is not None:  # the model's own override sets a page size on some GPUs (MiniMax-M3)
        return own
    return given if isinstance(given, int) and given in keeps else int(spec["value"])


def _model_page_size(spec: Mapping[str, Any], architecture: str | None, majors: set[int] | None) -> Any:
    """The page size a model override sets when --page-size is not given (launch.json `model_page_size`: its
    architectures, value and GPU majors): None where it sets none, unknown where the GPU is not read or mixed."""
    if architecture is None or architecture not in (spec.get("architectures") or []):
        return None
    on = {int(m) for m in spec.get("majors") or []}
    if majors is None or (majors & on and majors - on):
        return _UNKNOWN
    return int(spec["value"]) if majors <= on else None


def _is_hybrid_gdn(spec: Mapping[str, Any], attention: Any, architecture: str | None) -> tuple[bool | None, str]:
    """Whether SGLang gives the model a hybrid GDN config (None: not read), and what was read. From 0.5.4 by the
    config class its registry maps config.json's top-level `model_type` to (`model_types`: those whose class, or
    whose text sub-config's class, is one SGLang lists); in 0.5.3 by the first architecture (`architectures`)."""
    if "architectures" in spec:
        if architecture is None:
            return None, "architecture not read"
        return architecture in (spec.get("architectures") or []), f"architecture {architecture}"
    if not isinstance(attention, Mapping):
        return None, "config.json not read"
    model_type = attention.get("model_type")
    if not isinstance(model_type, str):
        return None, "no model_type in config.json"
    return model_type in (spec.get("model_types") or []), f"model_type {model_type}"


def _hybrid_gdn_backends(values: Mapping[str, Any], mode: str) -> list[Any]:
    """The attention backends SGLang's hybrid GDN check reads (None: the one SGLang chooses itself): the
    attention backend (0.5.3-0.5.15); the prefill and decode backends when both are given, else the attention
    backend (0.5.16-0.5.17); the prefill and decode backends, each falling back to the attention backend (0.5.18+)."""
    attn, prefill, decode = (
        values.get(f) for f in ("attention_backend", "prefill_attention_backend", "decode_attention_backend")
    )
    attn = attn if isinstance(attn, str) and attn != "unset" else None
    if mode == "prefill_decode":
        return [prefill or attn, decode or attn]
    if mode == "split_if_both" and prefill and decode:
        return [prefill, decode]
    return [attn]


def _hybrid_gdn_refused(
    values: Mapping[str, Any],
    spec: Mapping[str, Any],
    majors: set[int] | None,
    architecture: str | None,
    models: Mapping[str, Any],
) -> _Judged:
    """Whether SGLang's hybrid GDN check refuses the launch's attention backends on this box's GPUs (True: it
    does; None: the model, the GPU or SGLang's own choice of backend is not known; False: it does not). Where the
    release checks a draft runner's own backend (`draft_checked`, 0.5.18+), the draft model too: with speculative
    decoding (not NGRAM) and --speculative-draft-attention-backend given, the draft model's config.json (the
    target's when the command names no draft model, as SGLang loads it) against that backend."""
    gdn, read = _is_hybrid_gdn(spec, models.get("model"), architecture)
    backends = _hybrid_gdn_backends(values, str(spec.get("checks", "attention_backend")))
    checked = {int(m) for m in spec.get("blackwell_majors") or []}
    allowed = {int(k): {str(b) for b in v} for k, v in (spec.get("allowed_by_major") or {}).items()}

    def on(major: int, backends: Sequence[Any]) -> bool | None:
        if major not in checked:
            return False
        verdicts: set[bool | None] = set()
        for backend in backends:
            if backend is not None:
                verdicts.add(backend not in allowed.get(major, set()))
                continue
            # SGLang's own choice: known to be admitted only where launch.json says so; its default picker and
            # model overrides key on --attention-backend alone, so a split flag given does not change the pick
            own = [
                a
                for a in spec.get("auto_admitted") or []
                if major in {int(m) for m in a.get("majors") or []}
                and ("architectures" not in a or architecture in (a.get("architectures") or []))
            ]
            verdicts.add(False if own else None)
        return True if True in verdicts else None if None in verdicts else False

    def refused(gdn: bool | None, backends: Sequence[Any]) -> bool | None:
        # every GPU of the box refuses: True; none does: False; else (GPUs of both kinds, or none read) not known
        per = {on(m, backends) for m in (majors if majors is not None else checked)}
        per |= {False} if majors is None else set()
        gpu = per.pop() if len(per) == 1 else None
        holds = False if gdn is False or gpu is False else True if gdn and gpu else None
        if gdn is None and all(b is None for b in backends):
            holds = False  # nothing given that a GDN model could fail with, and the model not read: not guessed
        return holds

    holds = refused(gdn, backends)
    kind = {True: "a hybrid GDN model", False: "not a hybrid GDN model", None: "hybrid GDN or not"}
    names = [b if b is not None else "chosen by SGLang" for b in backends]
    shown = names[0] if len(set(names)) == 1 else f"prefill {names[0]}, decode {names[1]}"
    gpus = f"GPU majors {', '.join(str(m) for m in sorted(majors))}" if majors is not None else "GPU not known"
    text = f"{read} ({kind[gdn]}), {gpus}, attention backend {shown}"
    draft_backend = values.get("speculative_draft_attention_backend")
    if spec.get("draft_checked") and values.get("speculative_algorithm") not in (None, "NGRAM") and draft_backend:
        draft_config = models.get("draft model") if "draft model" in models else models.get("model")
        draft_gdn, draft_read = _is_hybrid_gdn(spec, draft_config, None)
        draft = refused(draft_gdn, [str(draft_backend)])
        holds = True if True in (holds, draft) else None if None in (holds, draft) else False
        text += f"; draft model: {draft_read} ({kind[draft_gdn]}), draft attention backend {draft_backend}"
    on_box = sorted(checked & majors) if majors is not None else sorted(checked)
    sets = "; ".join(f"SM{m}x: {', '.join(sorted(allowed.get(m, set())))}" for m in on_box)
    return _Judged(holds, text, sets or None)


#: the backend an assertion reads where the command gives no --attention-backend and nothing picked one before it
_NO_BACKEND = "none (no --attention-backend, and SGLang has picked none when it asserts)"


def _model_backend_refused(values: Mapping[str, Any], spec: Mapping[str, Any], architecture: str | None) -> _Judged:
    """Whether SGLang's assertion on a model architecture's attention backends (launch.json `model_backend`:
    GPT-OSS's list `allowed`, Olmo2's `refused` flashinfer) refuses the backends the command gives (True), cannot
    be known (None: a side SGLang holds no value for yet), or passes (False). With no attention flag the model's
    own override picks a backend the assertion takes, unless the range says `unset: refused` (SGLang asserts
    before its default picker runs, so no attention flag reads as None, which the list refuses). Where the model's
    architecture is not read, a launch the assertion would refuse for that model is unknown (fail closed: the
    model may be it), as the model overrides' picks are (auto_backend_unread); one it would pass, or one with no
    attention flag under `unset: refused`, is not judged further."""
    archs = [str(a) for a in spec.get("architectures") or []]
    allowed = {str(b) for b in spec.get("allowed") or []}
    rejected = {str(b) for b in spec.get("refused") or []}  # a list of backends SGLang rejects (Olmo2: flashinfer)
    attn, prefill, decode = (
        values.get(f) for f in ("attention_backend", "prefill_attention_backend", "decode_attention_backend")
    )
    attn = attn if isinstance(attn, str) and attn != "unset" else None
    if spec.get("checks") == "attention_backend":
        sides: list[Any] = [attn] if attn is not None else []
        if attn is None and spec.get("unset") == "refused":  # asserted before any pick fills it (Exaone 4)
            sides = [_NO_BACKEND]
    elif attn is None and prefill is None and decode is None:
        sides = []  # the override fills the backend with one it lists
    else:
        sides = [prefill or attn, decode or attn]
    verdicts = {None if b is None else b in rejected if rejected else b not in allowed for b in sides}
    refused = True if True in verdicts else None if None in verdicts else False
    names = [b if b is not None else "none yet (left to SGLang)" for b in sides]
    shown = names[0] if len(set(names)) == 1 else f"prefill {names[0]}, decode {names[1]}" if names else "none given"
    missing = None
    if architecture is None:  # not read: the model may be one of the rule's, so a refusal it would make is unknown
        read = "architecture not read"
        holds: bool | None = None if refused is not False else False
        if sides == [_NO_BACKEND]:
            holds = False  # no attention flag and the model not read: not judged (launch.json says why)
        if holds is None:
            missing = (
                f"the model's architecture, which the gate could not read (SGLang asserts this for "
                f"{', '.join(archs)}: give --attention-backend a backend it takes, or make the model's config.json "
                "readable)"
            )
    else:
        read = f"architecture {architecture}"
        holds = refused if architecture in archs else False
    listed = ", ".join(sorted(allowed)) if not rejected else "any but " + ", ".join(sorted(rejected))
    how = "refused" if rejected else "listed"
    shown_list = ", ".join(sorted(rejected)) if rejected else listed
    text = f"{read}, attention backend {shown} ({how} for {', '.join(archs)}: {shown_list})"
    return _Judged(holds, text, listed, missing)


class _GivenFlags:
    """The flags a command gives, for `given` conditions: a flag launch.json lists (in the parsed options) or one
    the gate passes through unread, spelt in full or abbreviated as argparse takes it."""

    def __init__(self, d: Derived, declared: set[str] | None) -> None:
        self.d = d
        self.declared = declared

    def __contains__(self, flag: object) -> bool:
        if not isinstance(flag, str):
            return False
        if flag in self.d.options:
            return True
        return option_given(self.d.sglang_args, (flag,), self.declared)

    def __str__(self) -> str:
        return "the command's flags"


def _overrides_of(
    mapping: Mapping[str, Any], version: str, architecture: str | None, keys: Mapping[str, Any] | None
) -> Iterator[dict[str, Any]]:
    """The entries of launch.json refusals.auto.attention_backend.model_overrides that may be the model's, in
    order: those of the release whose architectures hold `architecture` (as SGLang sees it) and whose config_keys,
    if any, the config.json keys `keys` have one of; `architecture` None (not read): every entry of the release."""
    auto = ((mapping.get("refusals") or {}).get("auto") or {}).get("attention_backend") or {}
    for entry in auto.get("model_overrides") or []:
        if not isinstance(entry, dict) or _version_in(version, str(entry.get("versions") or "")) is not True:
            continue
        if architecture is not None:
            if architecture not in [str(a) for a in entry.get("architectures") or []]:
                continue
            wanted = [str(k) for k in entry.get("config_keys") or []]
            if wanted and not any(k in (keys or {}) for k in wanted):
                continue
        yield entry


def _override_backends(
    d: Derived,
    mapping: Mapping[str, Any],
    version: str,
    majors: set[int] | None,
    architecture: str | None,
    keys: Mapping[str, Any] | None,
) -> set[str | None]:
    """The attention backends a model's own override (launch.json refusals.auto.attention_backend.model_overrides)
    can set before SGLang's later checks run, None for a GPU (or model) where it sets none. `architecture` None
    (not read): every override of the release may be the model's, and the model may have none. An unknown torch
    CUDA or GPU keeps every pick that may hold."""
    seen = _seen_architecture(mapping, version, architecture, keys) if architecture is not None else None
    out: set[str | None] = set()
    for entry in _overrides_of(mapping, version, seen, keys):
        if any(_given(d, str(f)) for f in entry.get("unless_flags") or []):
            if seen is not None:
                return {None}  # the model's own override, turned off by a flag
            continue
        for major in sorted(majors) if majors else [None]:
            stopped = False
            for pick in entry.get("picks") or []:
                if major is not None and major not in {int(m) for m in pick.get("majors") or []}:
                    continue
                out.add(str(pick["backend"]))
                if major is not None and pick.get("torch_cuda_min") is None:
                    stopped = True  # the first pick that holds decides (one with a CUDA minimum may fall through)
                    break
            if not stopped:
                other = entry.get("otherwise")
                out.add(None if other is None else str(other))
        if seen is not None:
            return out  # the first entry that matches is the model's
    out.add(None)  # no override (or, unread, the model may have none)
    return out


def _backend_list_refused(
    values: Mapping[str, Any],
    spec: Mapping[str, Any],
    d: Derived,
    mapping: Mapping[str, Any],
    version: str,
    majors: set[int] | None,
    architecture: str | None,
    keys: Mapping[str, Any] | None,
    torch_cuda: str | None = None,
    unrunnable: Mapping[str, str] | None = None,
) -> _Judged:
    """Whether SGLang's check of attention_backend against a list (launch.json `backend_list`: deterministic
    inference's) refuses the launch: the backend given, else the one a model override set before the check, else
    what the release holds there (`unset`: refused, the check raises on None; fallback, it picks one of its list;
    default_pick, the default picker ran first: outside the list only on default_outside_majors). `models`: a second
    check for the architectures it lists (SGLang's DeepSeek list), with its own allowed list, backends allowed on
    some GPU majors only (`majors_only`; with a torch CUDA build of at least `majors_only_torch_cuda_min`, which
    SGLang's platform test reads too: `torch_cuda`, None when not known, is then unknown) and the majors where
    the default pick is outside it. `unrunnable`: backends the box cannot run, with why (backends_not_running),
    left out of what the refusal tells the user to give."""
    allowed = {str(b) for b in spec.get("allowed") or []}
    narrow = spec.get("models") if isinstance(spec.get("models"), dict) else {}
    listed: bool | None = None  # whether the model is one of the second check's architectures
    seen: str | None = None
    if narrow:
        seen = _seen_architecture(mapping, version, architecture, keys) if architecture is not None else None
        listed = None if seen is None else seen in [str(a) for a in narrow.get("architectures") or []]
        if listed is False:
            narrow = {}
    own = {str(b) for b in narrow.get("allowed") or []} if narrow else allowed
    only = {str(b): {int(m) for m in ms} for b, ms in (narrow.get("majors_only") or {}).items()} if narrow else {}
    cuda_min = (
        {str(b): numeric(v) for b, v in (narrow.get("majors_only_torch_cuda_min") or {}).items()} if narrow else {}
    )
    cuda = numeric(torch_cuda)

    def torch_short(backend: str) -> bool | None:
        """Whether the torch CUDA build is below what the platform test of `backend`'s majors asks for."""
        need = cuda_min.get(backend)
        if need is None:
            return False
        return None if cuda is None else cuda < need

    def refused(backend: str) -> bool | None:
        if backend not in allowed:
            return True
        if not narrow:
            return False
        ok = backend in own and (backend not in only or (majors is not None and majors <= only[backend]))
        if backend in own and backend in only and majors is None:
            return None  # the GPU decides
        if ok and backend in only:
            short = torch_short(backend)
            if short is None:
                return None  # the torch CUDA build decides
            ok = not short
        return False if ok else listed

    # what to give: the list's backends that hold on this box (fa4 for a DeepSeek-list model only on SM100/SM110,
    # with a torch CUDA build of 12.8 or later)
    fits = {b for b in own if b not in only or majors is None or (majors <= only[b] and torch_short(b) is not True)}
    runs = {b for b in fits if b not in (unrunnable or {})}
    required = ", ".join(sorted(runs))
    if fits and not runs:  # none of the list runs here: say so, with why, rather than name them
        why = "; ".join(f"{b}: {(unrunnable or {})[b]}" for b in sorted(fits))
        required = f"none that runs on this box ({why})"
    given = values.get("attention_backend")
    if isinstance(given, str) and given != "unset":
        holds = refused(given)
        text = f"attention backend {given}"
        if narrow and holds is not False:
            who = "architecture not read" if listed is None else f"architecture {architecture}"
            text += f" ({who}; SGLang's DeepSeek check takes {required} only here)"
            if given in own and given in only and torch_short(given) is not False:
                need = ".".join(map(str, cuda_min[given] or ()))
                seen_cuda = f"torch's CUDA build {torch_cuda}" if torch_cuda else "torch's CUDA build (not known)"
                text += f"; {given} also needs a torch CUDA build of {need} or later there: {seen_cuda}"
        missing = None if holds is not None else "the model's architecture, the GPU and torch's CUDA build"
        return _Judged(holds, text, required, missing)
    outside_on = {int(m) for m in spec.get("default_outside_majors") or []}
    if narrow:
        outside_on |= {int(m) for m in narrow.get("default_outside_majors") or []}
    verdicts: set[bool | None] = set()
    names: list[str] = []
    for backend in sorted(_override_backends(d, mapping, version, majors, architecture, keys), key=str):
        if backend is not None:
            verdicts.add(refused(backend))
            names.append(f"{backend} (a model override's pick)")
        elif spec.get("unset") == "refused":
            verdicts.add(True)
            names.append("none (SGLang has picked none yet when it checks)")
        elif spec.get("unset") == "default_pick" and (majors is None or majors & outside_on):
            verdicts.add(None)
            names.append("the default pick, which may be outside the list on this GPU")
        elif narrow and listed is not False and _fallback_outside(narrow, majors, seen):
            verdicts.add(None)  # the fallback's own DeepSeek list lacks the model: flashinfer there (torch CUDA)
            names.append("the fallback's pick, which may be outside the DeepSeek list on this GPU")
        else:
            verdicts.add(False)
            names.append("none given (SGLang falls back to one of its list)")
    if architecture is None and True in verdicts:
        verdicts = (verdicts - {True}) | {None}  # the model may or may not be one whose override picks it
    holds = None if None in verdicts else True if verdicts == {True} else False if verdicts == {False} else None
    read = "architecture not read" if architecture is None else f"architecture {architecture}"
    text = f"{read}, attention backend at the check: {' or '.join(names)}"
    missing = None
    if holds is None:
        missing = "the attention backend SGLang holds when it checks (give --attention-backend one of the list)"
    return _Judged(holds, text, required, missing)


def _fallback_outside(narrow: Mapping[str, Any], majors: set[int] | None, seen: str | None) -> bool:
    """Whether deterministic inference's fallback may pick a backend outside the DeepSeek check's list for this
    model and box (backend_list.models.fallback_outside: architectures of the check that the fallback's own list
    lacks, on the majors where it then picks flashinfer); an unread model or GPU may be one of them."""
    spec = narrow.get("fallback_outside")
    if not isinstance(spec, dict):
        return False
    if seen is not None and seen not in [str(a) for a in spec.get("architectures") or []]:
        return False
    return majors is None or bool(majors & {int(m) for m in spec.get("majors") or []})


def _uses_xqa(majors: set[int] | None, xqa_majors: Sequence[int]) -> Any:
    """Whether trtllm_mha decodes with XQA on this box's GPUs (unknown: no GPU read, or GPUs of both kinds)."""
    if majors is None:
        return _UNKNOWN
    xqa = {m in {int(x) for x in xqa_majors} for m in majors}
    return xqa.pop() if len(xqa) == 1 else _UNKNOWN


def launch_values(
    d: Derived,
    mapping: Mapping[str, Any],
    version: str,
    entry: Mapping[str, Any],
    majors: set[int] | None = None,
    architecture: str | None = None,
    models: Mapping[str, Any] | None = None,
    declared: set[str] | _Unset | None = _UNSET,
    after_equal_split: bool = True,
    torch_cuda: str | None = None,
    unrunnable: Mapping[str, str] | None = None,
    model_mla: bool | None = None,
    memo: dict[tuple[bool, ...], dict[str, Any]] | None = None,
    gpu_sm: int | None = None,
    box_memory: BoxMemory | None = None,
) -> dict[str, Any]:
    """The values SGLang's argument checks read, for the release range `entry`: known, derived or unknown (SGLang
    chooses it at start). `majors`: the GPU majors of the box (None: not known); `architecture`: the model's first
    architecture (config.json), when the gate could read it; `models`: the attention keys of config.json by role
    ("model", "draft model"), None for a model found whose config was not read (model_attention); `declared`:
    gate._declared_in(mapping, version), when the caller has it (refusal_problems reads it once for every rule);
    `after_equal_split`: the check runs after two equal split flags set attention_backend (launch.json
    refusals.auto.attention_backend.equal_split), as every check but the model assertions does. `memo`: a dict
    the caller keeps while every other argument but `entry` stays the same (refusal_problems, over its rules): the
    values that do not depend on the entry are worked out once per (after_equal_split, attention_backend_auto). The
    MoE and linear methods the checkpoint's quantization selects (_moe_method_values: the flags' --quantization, the
    checkpoint's quant_method and config.json alone) likewise (iperf35: ten readings of config.json for each of
    ~120 rules a launch).
    `gpu_sm`: the lowest compute capability of the box's GPUs, major * 10 + minor (None: not known)."""
    if isinstance(declared, _Unset) or declared is None:
        declared = reading_flags(mapping, version)
    key = (after_equal_split, entry.get("attention_backend_auto") == "unset")
    base = memo.get(key) if memo is not None else None
    if base is None:
        base = _entry_free_values(
            d, mapping, version, key[1], majors, architecture, models, declared, after_equal_split, model_mla
        )
        if memo is not None:
            memo[key] = base
    values = dict(base)
    # the lowest compute capability of the box's GPUs (major * 10 + minor, as SGLang's model loader compares it with a
    # quantization's get_min_capability) when every GPU was read; unknown else
    values["gpu_sm"] = gpu_sm if gpu_sm is not None else _UNKNOWN
    # torch's CUDA build ("12.6"), which SGLang's platform tests read (is_sm100_supported: major 10 and CUDA 12.8+);
    # unknown when the facts do not say
    values["torch_cuda"] = torch_cuda if numeric(torch_cuda) is not None else _UNKNOWN
    # igap55: whether HiCache's host pool, per rank x the ranks on this node, exceeds the box's memory (a box other
    # than a GB10, whose rule is hicache-unified-memory-host-pool)
    values["hicache_host_pool_over_memory"] = _hicache_host_over_memory(d, declared, values, box_memory, version)
    opts = d.options
    page = ((mapping.get("refusals") or {}).get("auto") or {}).get("page_size") or {}
    heads_spec = entry.get("trtllm_gen_heads")
    if isinstance(heads_spec, dict):  # the rules on trtllm_mha's pages of 128 (launch.json says which releases)
        others = [str(b) for b in heads_spec.get("other_page_backends") or []]
        own = _model_page_size(heads_spec.get("model_page_size") or {}, architecture, majors)
        values["trtllm_mha_page_size"] = _trtllm_mha_page_size(values, opts, page, version, others, own)
        values["gpu_uses_xqa"] = _uses_xqa(majors, heads_spec.get("xqa_majors") or [])
        tp_sizes = _attn_tp_sizes(opts, d.sglang_args, heads_spec.get("attention_split_flags") or [], declared)
        values["trtllm_gen_heads_unsupported"] = _trtllm_gen_heads(values, models or {}, heads_spec, tp_sizes)
    backend_spec = entry.get("model_backend")
    if isinstance(backend_spec, dict):  # a model architecture's own list of attention backends (GPT-OSS)
        read = (models or {}).get("model")
        archs = read.get("architectures") if isinstance(read, Mapping) else None
        first = str(archs[0]) if isinstance(archs, list) and archs and isinstance(archs[0], str) else None
        values["model_backend_refused"] = _model_backend_refused(values, backend_spec, architecture or first)
    list_spec = entry.get("backend_list")
    if isinstance(list_spec, dict):  # a check of --attention-backend against a list, after the model overrides
        keys = (models or {}).get("model")
        values["backend_list_refused"] = _backend_list_refused(
            values, list_spec, d, mapping, version, majors, architecture,
            keys if isinstance(keys, Mapping) else None, torch_cuda, unrunnable,
        )  # fmt: skip
    gdn_spec = entry.get("hybrid_gdn")
    if isinstance(gdn_spec, dict):  # the hybrid GDN model's attention backends on Blackwell GPUs
        values["hybrid_gdn_backend_refused"] = _hybrid_gdn_refused(values, gdn_spec, majors, architecture, models or {})
    split_spec = entry.get("fp8_block_moe")
    if isinstance(split_spec, dict):  # a block-FP8 checkpoint's experts split across the MoE tensor-parallel ranks
        values["fp8_block_moe_split_misaligned"] = _fp8_block_moe_split(
            values, d, (models or {}).get("model"), split_spec, majors, declared
        )
    read = (models or {}).get("model")
    tail_key = (*key, True)
    methods = memo.get(tail_key) if memo is not None else None
    if methods is None:
        methods = _moe_method_values(values, d, read)
        if memo is not None:
            memo[tail_key] = methods
    for fact in _MOE_METHOD_FACTS:  # (in the order the facts were always set)
        values[fact] = methods[fact]
    mixed_spec = entry.get("modelopt_mixed_moe")
    if isinstance(mixed_spec, dict):  # a W4AFP8 / ModelOpt MIXED_PRECISION checkpoint's experts, layer by layer
        values["deepep_v2_mixed_moe"] = _modelopt_mixed_moe(values, d, read, mixed_spec)
    load_spec = entry.get("modelopt_mixed_load")
    if isinstance(load_spec, dict):  # a modelopt_mixed checkpoint's experts as the release loads them, any a2a backend
        values["modelopt_mixed_unloadable_moe"] = _modelopt_mixed_load_moe(values, d, read, load_spec)
    routing_spec = entry.get("trtllm_softmax_routing")
    if isinstance(routing_spec, dict):  # imodel3: a softmax-routed DeepSeek-V2-style MoE on the trtllm-gen runner
        values["trtllm_softmax_routing"] = _trtllm_softmax_routing(values, read, routing_spec, majors, architecture)
    activation_spec = entry.get("trtllm_moe_activation")
    if isinstance(activation_spec, dict):  # imodel4: a model whose experts take an activation trtllm-gen refuses
        values["trtllm_moe_activation_refused"] = _trtllm_moe_activation(values, read, activation_spec, architecture)
    backend_moe_spec = entry.get("transformers_backend_moe")
    if isinstance(backend_moe_spec, dict):  # itfm1: a Gemma 4 MoE through SGLang's Transformers backend
        values["transformers_backend_moe_refused"] = _transformers_backend_moe(
            opts.get("--model-impl"), read, backend_moe_spec, architecture
        )
    gated_spec = entry.get("non_gated_moe")
    if isinstance(gated_spec, dict):  # W4AFp8MoEMethod on a model whose experts SGLang builds non-gated
        archs = read.get("architectures") if isinstance(read, Mapping) else None
        first = str(archs[0]) if isinstance(archs, list) and archs and isinstance(archs[0], str) else None
        values["w4afp8_non_gated_moe"] = _w4afp8_non_gated_moe(values, d, read, gated_spec, architecture or first)
    for fact in _CT_METHOD_FACTS:
        values[fact] = methods[fact]
    marlin_spec = entry.get("marlin_conversion")
    if isinstance(marlin_spec, dict):  # a GPTQ / AWQ checkpoint SGLang converts to Marlin, or keeps float16-only
        values["checkpoint_keeps_float16_class"] = _keeps_float16_class(
            values, (models or {}).get("model"), marlin_spec
        )
    return values


#: the facts _moe_method_values sets, in two groups (launch_values sets them where they always stood among its facts)
_MOE_METHOD_FACTS = (
    "fp8_config_moe",
    "deepep_v2_fp8_block",
    "mxfp8_moe",
    "deepep_v2_quark_moe",
    "deepep_v2_quark_fp8_moe",
)
_CT_METHOD_FACTS = ("ct_fp8_moe", "ct_int8_moe", "ct_mixed_packed_moe", "ct_fp8_w8a16_moe", "ct_fp8_block_linear")


def _moe_method_values(values: Mapping[str, Any], d: Derived, read: Any) -> dict[str, _Judged]:
    """The MoE and linear methods the served checkpoint's quantization selects, for launch_values: each reads only
    values' `quantization` (the flag) and `model_quant_method` (launch_values' entry-free values), the command and
    config.json (`read`), so one reading serves every rule and release entry of one launch."""
    out: dict[str, _Judged] = {}
    # the Fp8Config MoE method on the served model (a rule on a kernel's instruction set below a minor reads gpu_sm)
    out["fp8_config_moe"] = _fp8_config_moe(values, read)
    # the experts' Fp8MoEMethod block, MXFP8 and Quark methods, for the rules on DeepEP v2's check of the MoE method
    out["deepep_v2_fp8_block"] = _deepep_v2_fp8_block(values, read)
    out["mxfp8_moe"] = _mxfp8_moe(values, read)
    out["deepep_v2_quark_moe"] = _quark_moe(values, read, block_fp8=False)  # QuarkFusedMoEMethod for every layer
    out["deepep_v2_quark_fp8_moe"] = _quark_moe(values, read, block_fp8=True)  # block FP8 layers: Fp8MoEMethod
    # a compressed-tensors checkpoint's FP8 or int8 W8A8 experts (the schemes the preflight read from config_groups)
    out["ct_fp8_moe"] = _ct_moe(values, d, read, ("fp8-w8a8", "fp8-block"))
    out["ct_int8_moe"] = _ct_moe(values, d, read, ("int8-w8a8",))
    out["ct_mixed_packed_moe"] = _ct_mixed_packed_moe(values, d, read)
    out["ct_fp8_w8a16_moe"] = _ct_moe(values, d, read, ("fp8-w8a16",))
    # a compressed-tensors block FP8 checkpoint's linear layers (the explicit --fp8-gemm-backend dispatch they call)
    out["ct_fp8_block_linear"] = _ct_fp8_block_linear(values, d)
    return out


def _dsa_dcp_phase(values: Mapping[str, Any]) -> _Judged:
    """Whether SGLang's DSA backend runs a phase of a DSA model under decode context parallel, as SGLang 0.5.15-0.5.21
    resolve the backends: the DSA model override sets attention_backend dsa only where none of --attention-backend,
    --prefill- and --decode-attention-backend is given; two equal split flags are the attention backend; otherwise
    SGLang's default pick, never dsa. A DSA decode side fails the DCP decode (no LSE; ifc29); a DSA prefill side
    (extend, and target verify unless --speculative-attention-mode decode) reads the DCP-sharded KV cache by global
    slot (no DCP code in the backend; ifc32), so either side on dsa is True, neither False."""
    dsa = ("dsa", "nsa")
    given = values.get("attention_backend_given")
    prefill, decode = values.get("prefill_attention_backend"), values.get("decode_attention_backend")
    if given is None and prefill is None and decode is None:
        base: Any = "dsa"  # the DSA model override
    elif given is not None:
        base = given
    else:
        base = prefill if prefill is not None and prefill == decode else None  # None: the default pick, never dsa
    decode_side, prefill_side = decode or base, prefill or base
    shown = f"decode on {decode_side or 'SGLang default (not dsa)'}, prefill on {prefill_side or 'its default'}"
    if decode_side in dsa:
        return _Judged(True, f"{shown}: the DSA backend decodes")
    if prefill_side in dsa:
        return _Judged(True, f"{shown}: the DSA backend prefills")
    return _Judged(False, shown)


def _dsa_dcp_side_no_lse(values: Mapping[str, Any]) -> _Judged:
    """SGLang 0.5.22-0.5.23: whether a DSA kernel other than trtllm runs a phase the DeepSeek MLA forward asks an LSE of
    under decode context parallel (decode, target verify, extend). Each DSA side is the --dsa-*-backend given, else
    trtllm (the DSA DCP model override); the sides reached are those _dsa_dcp_phase reads (the DSA backend's decode
    runs the decode kernel; its extend the prefill kernel, and target verify the decode kernel where speculative
    decoding is on). Only the trtllm path returns (out, lse) under DCP."""
    dsa = ("dsa", "nsa")
    given = values.get("attention_backend_given")
    prefill, decode = values.get("prefill_attention_backend"), values.get("decode_attention_backend")
    if given is None and prefill is None and decode is None:
        base: Any = "dsa"
    elif given is not None:
        base = given
    else:
        base = prefill if prefill is not None and prefill == decode else None
    decode_side, prefill_side = decode or base, prefill or base
    kernels = {side: values.get(f"dsa_{side}_backend") or "trtllm" for side in ("prefill", "decode")}
    reached = []
    if decode_side in dsa or (prefill_side in dsa and values.get("speculative_algorithm") is not None):
        reached.append("decode")
    if prefill_side in dsa:
        reached.append("prefill")
    other = [f"--dsa-{side}-backend {kernels[side]}" for side in reached if kernels[side] != "trtllm"]
    if other:
        return _Judged(True, f"{', '.join(other)} on the DSA backend's {'/'.join(reached)} side")
    shown = ", ".join(f"{side} {kernels[side]}" for side in reached) or "the DSA backend serves no side"
    return _Judged(False, shown)


def _decode_side(values: Mapping[str, Any]) -> Any:
    """The attention backend of the decode side as SGLang 0.5.15-0.5.23 resolve it (see _dsa_dcp_phase): the decode
    flag, else --attention-backend, else dsa for a DSA model given no attention flag (its model override), else the
    attention backend value (the equal split, or SGLang's pick: _AutoBackend)."""
    for key in ("decode_attention_backend", "attention_backend_given"):
        if values.get(key) is not None:
            return values[key]
    none_given = values.get("prefill_attention_backend") is None
    return "dsa" if values.get("model_dsa") is True and none_given else values.get("attention_backend")


def _verify_side(values: Mapping[str, Any], mode: str | None) -> Any:
    """The attention backend that runs a speculative target verify: the decode side (_decode_side) where
    --speculative-attention-mode is decode, else the prefill side: the prefill flag, else --attention-backend, else the
    attention backend value (the equal split, or SGLang's pick: _AutoBackend). The DeepSeek MLA forward picks its
    method by the same side (models/deepseek_v2.py dispatch_attn_forward_method, 0.5.12:1554-1562)."""
    if mode == "decode":
        return _decode_side(values)
    for key in ("prefill_attention_backend", "attention_backend_given"):
        if values.get(key) is not None:
            return values[key]
    return values.get("attention_backend")


def _elastic_ep_scaling(d: Derived, declared: set[str] | None, tp_size: int) -> Any:
    """Whether SGLang's Elastic EP scale-up is on (an --elastic-ep-backend other than none and an --max-ep-size
    larger than the TP size: its parallel hook's scaling_active); unknown for an --max-ep-size not a whole number."""
    backend = option_value(d.sglang_args, ("--elastic-ep-backend",), declared)
    raw = option_value(d.sglang_args, ("--max-ep-size",), declared)
    if backend is None or backend == "none" or raw is None:
        return False
    size = _whole(raw)
    return _UNKNOWN if size is None else size > tp_size


def _entry_free_values(
    d: Derived,
    mapping: Mapping[str, Any],
    version: str,
    backend_unset: bool,
    majors: set[int] | None,
    architecture: str | None,
    models: Mapping[str, Any] | None,
    declared: set[str] | None,
    after_equal_split: bool,
    model_mla: bool | None,
) -> dict[str, Any]:
    """launch_values' values that read no release entry but its attention_backend_auto (`backend_unset`: SGLang
    0.5.2-0.5.4 check the backend before choosing one)."""
    auto = (mapping.get("refusals") or {}).get("auto") or {}
    opts = d.options
    values: dict[str, Any] = {fact: opts.get(flag) for fact, flag in _FLAG_FACTS.items()}
    prefill, hop = values["prefill_attention_backend"], (auto.get("attention_backend") or {}).get("equal_split")
    if after_equal_split and prefill is not None and prefill == values["decode_attention_backend"]:
        if isinstance(hop, dict) and _version_in(version, str(hop.get("versions", ""))) is True:
            values["attention_backend"] = prefill  # --prefill-/--decode-attention-backend X: attention_backend X
    values["speculative_draft_attention_backend"] = option_value(
        d.sglang_args, ("--speculative-draft-attention-backend",), declared
    )
    values["dp_attention"] = bool(opts.get("--enable-dp-attention"))
    values["speculative_moe_a2a_backend"] = option_value(d.sglang_args, ("--speculative-moe-a2a-backend",), declared)
    values["moe_ep_below_tp"] = _ep_below_tp(d, declared)
    values["flags_given"] = _GivenFlags(d, declared)
    algorithm = values["speculative_algorithm"]
    # the attention backend when the check runs: given, or not yet chosen (0.5.2-0.5.4), or chosen at start
    if values["attention_backend"] is None:
        if backend_unset:
            values["attention_backend"] = "unset"
        else:
            values["attention_backend"] = _AutoBackend(auto.get("attention_backend") or {}, majors)
    # top-k: given, or SGLang's own choice (STANDALONE's, or the one for the model's architecture)
    topk = opts.get("--speculative-eagle-topk")
    if topk is None and "--speculative-num-steps" not in opts:  # SGLang picks all three only when no steps given
        topk = _auto_topk(auto.get("speculative_topk") or {}, version, algorithm, architecture)
    values["speculative_topk"] = topk
    # page size: forced by a backend, given, or the default (launch.json says why that default is taken)
    page = auto.get("page_size") or {}
    forced = _forced_page_size(opts, page, version)
    given = opts.get("--page-size")
    values["page_size"] = forced if forced is not None else given if isinstance(given, int) else page.get("default", 1)
    # which of the three speculative settings the command gives (SGLang picks them together only when none is)
    for flag in ("--speculative-num-steps", "--speculative-eagle-topk", "--speculative-num-draft-tokens"):
        values[flag.removeprefix("--").replace("-", "_") + "_given"] = flag in opts
    values["speculative_adaptive"] = bool(opts.get("--speculative-adaptive"))
    values["model_architecture"] = architecture if architecture is not None else _UNKNOWN
    # the box's GPU major when every GPU was read and all share one (a rule on a kernel's architecture); unknown else
    values["gpu_major"] = next(iter(majors)) if majors is not None and len(majors) == 1 else _UNKNOWN
    # whether this release runs the served model as MLA (the gate's preflight: config.json against the release's
    # MLA architectures); not known for a model not read or a release newer than the MLA data
    values["model_mla"] = model_mla if isinstance(model_mla, bool) else _UNKNOWN
    # --attention-backend as the command gives it (None: not given), for a rule on a backend SGLang picks itself only
    # where the rule cannot fail (dsa: for DSA models alone), and whether SGLang's DSA backend takes the model
    values["attention_backend_given"] = opts.get("--attention-backend")
    values["model_dsa"] = _model_dsa(mapping, version, architecture, (models or {}).get("model"))
    # igap53: whether the model's rotary base is lost (SGLang 0.5.10-0.5.23's EXAONE 4 / K-EXAONE files read
    # config.rope_theta, which transformers 5 keeps only in rope_parameters: the file's default runs instead)
    values["rope_theta_lost"] = _rope_theta_lost(architecture, (models or {}).get("model"))
    # the DSA split backends as given (--nsa-* the older spelling; None: not given, SGLang picks them for a DSA
    # model) and whether HiSparse is on, for a rule on the backend/KV-cache checks SGLang's DSA overrides run
    for side in ("prefill", "decode"):
        spellings = (f"--dsa-{side}-backend", f"--nsa-{side}-backend")
        values[f"dsa_{side}_backend"] = option_value(d.sglang_args, spellings, declared)
    values["hisparse"] = "--enable-hisparse" in values["flags_given"]
    # the decode context parallel size as given (1 where not given, unknown where it is no whole number: argparse's
    # int refuses it), for the rules on what SGLang's DSA and HYV4 overrides refuse beside --dcp-size > 1
    values["dcp_size"] = _dcp_size(d, declared)
    # whether the DSA backend serves a DCP decode phase (decode, target verify), from the three attention flags
    values["dsa_dcp_on_dsa"] = _dsa_dcp_phase(values)
    # 0.5.22-0.5.23: whether a DSA side the backend runs under DCP is a kernel other than trtllm (no LSE returned)
    values["dsa_dcp_side_no_lse"] = _dsa_dcp_side_no_lse(values)
    # the backend that decodes: --decode-attention-backend, else --attention-backend, else the DSA model override's
    # dsa (no attention flag at all), else the equal split or SGLang's own pick (_AutoBackend), for the rule on the
    # DeepSeek MLA forward's DCP decode (it unpacks an LSE the decode backend must return)
    values["mla_dcp_decode_backend"] = _decode_side(values)
    # imend20: the backend that runs a speculative target verify (the prefill side unless --speculative-attention-mode
    # decode), for the rule on the FlashAttention backend's FA3-only MLA verify branch (fa4, SGLang 0.5.8-0.5.16)
    mode = option_value(d.sglang_args, ("--speculative-attention-mode",), declared)
    values["mla_verify_backend"] = _verify_side(values, mode)
    # (irev72: --enable-hicache, 0.5.23's alias of the flag, one dest: arg_groups/fields/memory.py:98-101)
    values["hierarchical_cache"] = any(f in values["flags_given"] for f in ("--enable-hierarchical-cache",
                                                                           "--enable-hicache"))  # fmt: skip
    # ifc53: whether a flag given bounds HiCache's host pool or the device pool it is sized from (--hicache-size,
    # --hicache-ratio, --mem-fraction-static, --max-total-tokens), for the rule on the host pool of a GPU whose memory
    # is the host's (GB10): without one, SGLang asks for twice the device pool in host memory
    values["hicache_host_pool_bounded"] = _hicache_host_pool_bounded(d, declared, values)
    # igap49: --hicache-host-memory-mode as given (None: not given, SGLang's default cache) and whether attention runs
    # in more than one data-parallel group (SGLang 0.5.22-0.5.23's attn_dp_enabled), for the rules on what SGLang's
    # argument checks refuse beside --enable-lmcache
    values["hicache_host_memory_mode"] = option_value(d.sglang_args, ("--hicache-host-memory-mode",), declared)
    values["attention_dp_groups"] = _attention_dp_groups(d, declared)
    # the flags as given that keep or turn off the radix cache (SGLang also turns it off itself for multi-item scoring,
    # deterministic inference on some backends and a PD decode server), for the rule on HiSparse's radix-cache check
    values["disable_radix_cache"] = "--disable-radix-cache" in values["flags_given"]
    values["enable_mis"] = "--enable-mis" in values["flags_given"]
    values["deterministic_inference"] = "--enable-deterministic-inference" in values["flags_given"]
    # DeepEP v2's ElasticBuffer topology as given (None: SGLang's default, direct in 0.5.19-0.5.23) and the node
    # count, for the rule on direct mode across nodes
    values["deepep_v2_mode"] = option_value(d.sglang_args, ("--deepep-v2-mode",), declared)
    nnodes = opts.get("--nnodes")
    values["nnodes"] = nnodes if isinstance(nnodes, int) and not isinstance(nnodes, bool) else 1
    # whether a flag with which SGLang sets the all-to-all backend itself is given (waterfill moves deepep_v2 to
    # deepep: 0.5.23 arg_groups/overrides.py _a2a_backend_overrides), for the rules on a given backend alone
    values["a2a_set_by_flags"] = any(flag in values["flags_given"] for flag in _A2A_SET_BY)
    # whether config.json turns on dual chunk attention (Qwen2.5-1M), which SGLang 0.5.1-0.5.19 check against any
    # attention backend, given or picked: judged only where the gate read config.json (an unread model taken for
    # unknown would leave every launch of a model not yet downloaded unknown on those releases)
    read = (models or {}).get("model")
    values["model_dual_chunk"] = isinstance(read, Mapping) and read.get("dual_chunk_attention_config") is not None
    # whether the model has routed experts (config.json), for a rule on the MoE runner: unknown when not read
    values["model_moe"] = _model_moe(read)
    # the checkpoint's own quantization (the preflight's quant_method; a full config.json's quantization_config where
    # a caller hands one), for a rule on a --quantization SGLang may fill from it: None for a model read without one
    held = d.launch.get("model_quant_method")
    qcfg = read.get("quantization_config") if isinstance(read, Mapping) else None
    if held is None and isinstance(qcfg, Mapping) and isinstance(qcfg.get("quant_method"), str):
        held = qcfg["quant_method"]
    values["model_quant_method"] = held if held is not None or isinstance(read, Mapping) else _UNKNOWN
    # the same where the gate read it, None where it did not: for a rule that judges a read checkpoint alone, as the
    # preflight's checkpoint entries do (an unread model's quantization would leave every launch of a model not yet
    # downloaded unknown on the GPUs the rule names)
    values["model_quant_method_read"] = held
    # the checkpoint's quantization_config.routed_experts_quant_method (None: read without one), by which SGLang's
    # ModelConfig marks MXFP4-packed routed experts in an FP8 checkpoint (is_fp4_experts)
    routed = qcfg.get("routed_experts_quant_method") if isinstance(qcfg, Mapping) else None
    values["routed_experts_quant_method"] = routed if isinstance(read, Mapping) else _UNKNOWN
    # and its store_dtype, lower-cased (None: none), by which ModelConfig marks a MiMo-V2 checkpoint's MXFP4 experts
    store = str(qcfg.get("store_dtype") or "").lower() if isinstance(qcfg, Mapping) else ""
    values["quant_store_dtype"] = (store or None) if isinstance(read, Mapping) else _UNKNOWN
    # --load-format as argparse takes it (None: not given) and the TP size, for a rule on the bitsandbytes loader
    values["load_format"] = option_value(d.sglang_args, ("--load-format",), declared)
    tp = d.options.get("--tp-size")
    values["tp_size"] = tp if isinstance(tp, int) and not isinstance(tp, bool) else 1
    # --lora-backend as given (None: not given, SGLang's default), for a rule on the triton_v2 LoRA path's modes
    values["lora_backend"] = option_value(d.sglang_args, ("--lora-backend",), declared)
    values["elastic_ep_scaling"] = _elastic_ep_scaling(d, declared, values["tp_size"])
    # whether SGLang captures decode CUDA graphs: not with --disable-cuda-graph; else the backend it resolves (its
    # attention and parallel hooks may turn it off) is not read
    values["decode_cuda_graph"] = False if "--disable-cuda-graph" in values["flags_given"] else _UNKNOWN
    # the dtype SGLang runs the model in, for a rule on a quantization's activation dtypes
    values["model_dtype"] = _model_dtype(option_value(d.sglang_args, ("--dtype",), declared), read)
    # the same for the speculative draft model (the target's config.json when the command names no draft model, as
    # SGLang loads it), for a rule on --speculative-moe-runner-backend
    draft = (models or {}).get("draft model") if "draft model" in (models or {}) else read
    values["draft_model_moe"] = _model_moe(draft)
    for name, on in d.env.items():  # each variable launch.json reads, parsed (its default where unset): env_<name>
        values["env_" + name.lower()] = on
    values.update(_a2a_values(d, declared, architecture))
    for spec in mapping.get("env") or []:  # a variable with which SGLang sets the all-to-all backend itself
        sets = spec.get("sets_a2a") if isinstance(spec, dict) else None
        if not isinstance(sets, dict) or d.env.get(str(spec.get("name"))) is not True:
            continue
        given_a2a = option_value(d.sglang_args, ("--moe-a2a-backend",), declared)

        def within(key: str, releases: dict[str, Any] = sets) -> bool:  # an absent key names no release
            return key in releases and _version_in(version, str(releases[key])) is True

        if within("versions"):
            values["moe_a2a_backend"] = str(sets.get("value"))
        elif within("unset_versions") and given_a2a is None:
            values["moe_a2a_backend"] = str(sets.get("value"))  # a given backend: the raw-field checks read it
        elif within("unknown_versions") and given_a2a is None:
            values["moe_a2a_backend"] = _AutoA2A()  # set in an override whose order against the checks is not read
    for spec in mapping.get("env") or []:  # a variable that is a launch fact, where this release reads it
        if isinstance(spec, dict) and isinstance(spec.get("fact"), str) and isinstance(spec.get("name"), str):
            reads = "versions" not in spec or _version_in(version, str(spec["versions"])) is True
            values.setdefault(spec["fact"], d.env.get(spec["name"], False) if reads else bool(spec.get("default")))
    # igap51: --dwdp-size above 1 turns DP attention on before the checks read it (0.5.17-0.5.21 enable_dp_attention
    # and dp_size = dwdp_size, 0.5.22-0.5.23 attn_dp_size = dwdp_size; launch.json refusals.auto.dwdp)
    dwdp = _dwdp_sets_dp_attention(d, declared, mapping, version)
    if dwdp is not False:
        for fact in ("dp_attention", "attention_dp_any", "attention_dp_groups"):
            if dwdp is True or values.get(fact) is False:
                values[fact] = dwdp
    values["dwdp_conflicts"] = _dwdp_conflicts(d, declared, values)
    return values


#: (igap53) GB10's memory, the host's and the GPU's at once: 128 GB nominal (DGX Spark), 121.7 GiB as the box reports
#: it (vllm-project/vllm#56824, the rule's issue): 128 x 10^9 bytes is taken below it (what a fraction leaves, for a
#: pool that fits for certain) and 128 GiB above it (the most a pool check can ever find free); SGLang keeps
#: HICACHE_HOST_MEMORY_RESERVE_BYTES (10 GiB) of the available memory out of every host pool (0.5.23
#: mem_cache/pool_host/base.py:28, :104-107, checked at :248-257)
_GB10_BYTES = 128 * 10**9
_GB10_MOST_BYTES = 128 * 2**30
_HICACHE_RESERVE_BYTES = 10 * 2**30


def _hicache_host_pool_bounded(d: Derived, declared: set[str] | None, values: Mapping[str, Any]) -> Any:
    """Whether a flag given bounds HiCache's host pool or the device pool it is sized from (ifc53):
    --max-total-tokens given, a --hicache-size above 0, or a --hicache-ratio below SGLang's default 2.0. irev72: a
    --hicache-size of 0 or less is SGLang's default (the pool is sized from the ratio: 0.5.18 mem_cache/pool_host/
    base.py:119-124, 0.5.1 memory_pool_host.py:74-77, 0.5.23 pool_host/base.py:221-226) and a ratio of 2.0 or more asks
    for at least the default pool, so neither bounds it (both were taken as bounds); unknown where a value given is no
    number. ifc54: a bound given is unknown, not True: at the default --mem-fraction-static a GB10's device pools leave
    about SGLang's reserve (at least 10 GiB, 0.5.18 server_args.py:4974-4983), and the host pool's check keeps 10 GiB
    of the available memory back (0.5.18 pool_host/base.py:25, :141-150), so a --hicache-size of some GB raises
    ValueError; a ratio below 2.0 still asks for most of the memory; --max-total-tokens fits or not by the weights
    and the size asked (not computed).

    igap53: --mem-fraction-static F is no bound by itself. The device pool takes what F leaves after the weights
    (F x the memory, less the weights), and on a GB10 the host pool's check then finds about (1 - F) x the memory
    available (plus page cache the kernel can free), less the 10 GiB reserve: at F = 0.95 that is below zero. The
    pool (ratio x the device pool, or --hicache-size) fits for certain only where it fits at the largest device pool
    (no weights, no page cache): ratio x F x M <= (1 - F) x M - 10 GiB; else it depends on the weights and the
    page cache, which the facts lack: unknown. A --hicache-size larger than the whole memory less the reserve never
    fits (the rule holds: refused). Merged beside ifc54: even that best case is unknown, not True, since the host's
    own use and SGLang's memory beyond the static pools (activations, CUDA graphs) share the one memory and are not
    in the facts (at F = 0.3 the best case leaves 2.1 GB to spare); the message gives both figures."""
    given = values.get("flags_given")
    tokens_given = isinstance(given, _GivenFlags) and "--max-total-tokens" in given
    size, ratio, unread = _hicache_request(d, declared)  # (igap55: the reading hicache-host-pool-memory shares)
    size_raw = option_value(d.sglang_args, ("--hicache-size",), declared)
    ratio_raw = option_value(d.sglang_args, ("--hicache-ratio",), declared)
    if size is not None and size * 10**9 > _GB10_MOST_BYTES - _HICACHE_RESERVE_BYTES:
        # (a _Judged holds where the rule's condition does: the pool unbounded)
        return _Judged(True, f"--hicache-size {size_raw} (GB): more than the whole memory less SGLang's 10 GiB "
                       "reserve")  # fmt: skip
    fraction_raw = option_value(d.sglang_args, ("--mem-fraction-static",), declared)
    if fraction_raw is not None and not unread:
        try:
            fraction: float | None = float(fraction_raw)
        except ValueError:
            fraction = None
        if fraction is None or not 0.0 < fraction < 1.0:
            return _Judged(None, f"--mem-fraction-static {fraction_raw!r}",
                           missing="the device pool's share of the memory, which is no fraction")  # fmt: skip
        left = (1.0 - fraction) * _GB10_BYTES - _HICACHE_RESERVE_BYTES
        asked = size * 10**9 if size is not None else (ratio or 0.0) * fraction * _GB10_BYTES
        what = f"--hicache-size {size}" if size is not None else f"--hicache-ratio {ratio:g}"
        if asked <= left:  # (no weights, no host use: the best case only, so not an allow)
            return _Judged(None, f"--mem-fraction-static {fraction_raw} with {what}",
                           missing=f"whether the host pool fits: it asks for up to {asked / 1e9:.1f} GB against "
                           f"about {left / 1e9:.1f} GB a GB10 has left above SGLang's 10 GiB reserve with that "
                           "share, counting no weights, none of the host's own use and none of SGLang's memory "
                           "beyond the static pools (activations, CUDA graphs), which share the one memory and are "
                           "not in the facts (not computed)")  # fmt: skip
        return _Judged(None, f"--mem-fraction-static {fraction_raw} with {what}",
                       missing="whether the host pool fits: with the device pool at that share, a GB10 has about "
                       f"{max(left, 0) / 1e9:.1f} GB left above SGLang's 10 GiB reserve plus the page cache the "
                       "kernel frees, and the pool asks for up to "
                       f"{asked / 1e9:.1f} GB, less as the weights take more of the share (the model's size and "
                       "the page cache are not in the facts: not computed)")  # fmt: skip
    if unread:
        return _Judged(None, ", ".join(unread), missing="the host pool's size, whose flag is no number")
    bounds: list[str] = ["--max-total-tokens"] if tokens_given else []
    if size is not None:
        bounds.append(f"--hicache-size {size_raw}")  # (the size overrides the ratio)
    elif ratio is not None and ratio < 2.0:
        bounds.append(f"--hicache-ratio {ratio_raw}")
    if bounds:
        return _Judged(
            None,
            ", ".join(bounds),
            missing="whether HiCache's host pool fits the memory a GB10's device pools leave (not computed: the "
            "default --mem-fraction-static leaves about SGLang's 10 GiB reserve, which the host pool's check keeps "
            "back)",
        )
    return False


class BoxMemory:
    """What the facts say of the box's memory (igap55): the memory a process may take (this host's MemTotal, or its
    cgroup's limit where lower; None: not read), the largest GPU's memory (None: a GPU's not read, or none) and the
    memory available when probed (imend8: MemAvailable, or the cgroup's headroom where lower; None: not read)."""

    __slots__ = ("available", "budget", "gpu_max", "read_available")

    def __init__(self, budget: int | None, gpu_max: int | None, available: int | None = None) -> None:
        self.budget = budget
        self.gpu_max = gpu_max
        self.available = available
        self.read_available = False  # (set where a rule read `available`: a decision the gate cache may not keep)


def _memory_bytes(value: Any) -> TypeGuard[int]:
    """Whether a facts file's memory size is one read: an int (no bool) above 0 and below 2**62, cgroup v1's "no
    limit" (irobust7: a size of 10**400 raised OverflowError where the refusal wrote it in GB, the gate's exit 4)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**62


def _gb(n: float) -> str:
    """n bytes in GB, one decimal; an int too large for a float as its digit count (irobust7: `--hicache-size` of 400
    digits raised OverflowError, the gate's exit 4)."""
    if isinstance(n, int) and n >= 10**300:
        return f"a number of GB of about {int(n.bit_length() * 0.30103) + 1 - 9} digits"
    return f"{n / 1e9:.1f} GB"


def box_memory(facts: Mapping[str, Any]) -> BoxMemory:
    """BoxMemory from a report's facts: system.memory_total_bytes, system.memory_limit_bytes, gpus[].memory_bytes,
    system.memory_available_bytes."""
    system = facts.get("system") if isinstance(facts.get("system"), Mapping) else {}
    total = system.get("memory_total_bytes") if isinstance(system, Mapping) else None
    limit = system.get("memory_limit_bytes") if isinstance(system, Mapping) else None
    free = system.get("memory_available_bytes") if isinstance(system, Mapping) else None
    budget = total if _memory_bytes(total) else None
    if budget is not None and _memory_bytes(limit) and limit < budget:
        budget = limit
    sizes = [g.get("memory_bytes") if isinstance(g, Mapping) else None for g in facts.get("gpus") or []]
    known = [m for m in sizes if _memory_bytes(m)]
    gpu_max = max(known) if known and len(known) == len(sizes) else None
    available = free if _memory_bytes(free) and budget is not None else None
    return BoxMemory(budget, gpu_max, min(available, budget) if available is not None and budget is not None else None)


#: (imend8) what the server's own processes take of the host's memory before each rank builds its HiCache pool, kept
#: back from the memory available when probed: 4 GiB a rank on the node (its Python, torch and CUDA runtime; a
#: scheduler process's resident size is some 1-3 GiB before its pools, inferred from the processes' makeup, not
#: measured here; weights read through the page cache stay in MemAvailable, which counts reclaimable cache)
_HICACHE_RANK_MARGIN_BYTES = 4 * 2**30


def _hicache_available(
    asked: int | float, ranks: int, memory: BoxMemory, what: str, room: str, other_cgroup: str | None = None
) -> Any:
    """A HiCache request that fits the box's memory less the reserve (the rule's upper bound) against what SGLang
    checks it against: the memory available when each rank builds its pool (0.5.10-0.5.20 psutil.virtual_memory()
    .available less the 10 GiB reserve, 0.5.10 memory_pool_host.py:187-197, 0.5.19 pool_host/base.py; 0.5.21+ the
    lower of that and the cgroup headroom, 0.5.23 mem_cache/host_memory.py:136-162, pool_host/base.py:83-108). The
    facts give it at the probe's time only (imend8: the rule compared with MemTotal, and allowed a pool the memory in
    use at launch leaves no room for): False where it fits that less the reserve and a margin for the server's own
    processes (_HICACHE_RANK_MARGIN_BYTES a rank; memory freed later only adds room), unknown else, and unknown where
    the facts lack it."""
    memory.read_available = True  # (a measurement of this run: the gate keeps no decision that read it)
    if other_cgroup is not None:  # (irev76: the probe read its own cgroup's headroom, not the server's)
        return _Judged(None, f"{what}, within the box's {room}",
                       missing=f"whether the memory available at launch holds it: {other_cgroup}, whose headroom "
                       "SGLang 0.5.21+ checks the pools against, not the cgroup the memory available was read "
                       "in")  # fmt: skip
    if memory.available is None:
        return _Judged(None, f"{what}, within the box's {room}",
                       missing="whether the memory available at launch holds it: SGLang checks the pool against the "
                       "available memory (psutil's, 0.5.21+ also the cgroup's headroom), which the facts lack (a "
                       "report before imend8, --root, --image, or not read)")  # fmt: skip
    margin = _HICACHE_RANK_MARGIN_BYTES * ranks
    free = memory.available - _HICACHE_RESERVE_BYTES - margin
    told = (f"{_gb(memory.available)} available when probed, less SGLang's 10 GiB reserve and {_gb(margin)} for the "
            f"server's own {ranks} process(es)")  # fmt: skip
    if asked <= free:
        return _Judged(False, f"{what}, within the {told} ({_gb(free)})")
    return _Judged(None, f"{what}, within the box's {room}",
                   missing=f"whether the memory available at launch holds it: {told} leave {_gb(max(free, 0))}, and "
                   "SGLang checks each rank's pool against the memory available when it builds it (what other "
                   "processes free or take by then is not read)")  # fmt: skip


def _hicache_request(d: Derived, declared: set[str] | None) -> tuple[int | None, float | None, list[str]]:
    """HiCache's host pool as the flags ask for it, read as the GB10 rule reads them (_hicache_host_pool_bounded):
    --hicache-size in GB above 0 (None: 0 or less, or not given: SGLang sizes the pool from the ratio, 0.5.23
    pool_host/base.py:221-226), --hicache-ratio (2.0 where not given), and the values that are no number."""
    unread: list[str] = []
    size: int | None = None
    size_raw = option_value(d.sglang_args, ("--hicache-size",), declared)
    if size_raw is not None:
        text = size_raw.strip()
        size = whole_number(text[1:] if text[:1] in ("-", "+") else text, None, ascii_only=True)
        if size is None:
            unread.append(f"--hicache-size {size_raw!r}")
        elif text[:1] == "-" or size <= 0:
            size = None
    ratio: float | None = 2.0
    ratio_raw = option_value(d.sglang_args, ("--hicache-ratio",), declared)
    if ratio_raw is not None:
        try:
            ratio = float(ratio_raw)
        except ValueError:
            ratio = None
        if ratio is None or math.isnan(ratio):
            ratio = None
            unread.append(f"--hicache-ratio {ratio_raw!r}")
    return size, ratio, unread


def _hicache_host_over_memory(
    d: Derived, declared: set[str] | None, values: Mapping[str, Any], memory: BoxMemory | None, version: str | None
) -> Any:
    """Whether HiCache's host pool cannot fit the box's memory (igap55; refusal hicache-host-pool-memory). Each rank
    pins its own pool: --hicache-size GB (1e9 bytes) per rank, else --hicache-ratio x its device KV pool (0.5.23
    pool_host/base.py:221-226), and checks it against the host's available memory less a 10 GiB reserve, which
    0.5.19+ split among the ranks of the node (0.5.19 pool_host/base.py:32-59, 0.5.23 :84-108: ranks_per_host = the
    world size // nnodes; 0.5.21+ bound by the cgroup's limit), raising ValueError 'Not enough host memory
    available'; 0.5.18 :141-150 and 0.5.1 memory_pool_host.py:95 check each rank against psutil's whole available
    memory. True where one rank's pool exceeds the box's memory (MemTotal, or the cgroup limit) less that reserve,
    or on 0.5.19+ the pools of the node's ranks together do; unknown where they do before 0.5.19 (oversubscribed,
    not checked by SGLang).
    With the ratio the pool follows the device KV pool, which the facts lack: False where even a device pool of the
    whole GPU fits, unknown else; 0.5.21-0.5.23 size the pool from --hicache-host-memory-fraction (0.8 of the memory
    less the reserve, for all ranks of the node) where neither --hicache-ratio nor --hicache-size is given, lowering
    the default ratio until the pools fit (0.5.23 arg_groups/fields/memory.py:117-120,
    arg_groups/hicache_hook.py:100-126): False there. False (not judged) where the box's memory was not read, on a
    GB10 (its own rule) and without the flag."""
    if not values.get("hierarchical_cache") or values.get("gpu_sm") == 121:
        return False
    if memory is None or memory.budget is None:
        return False  # (not judged: a report without the box's memory, as before igap55)
    size, ratio, unread = _hicache_request(d, declared)
    if unread:
        return _Judged(None, ", ".join(unread), missing="the host pool's size, whose flag is no number")
    tp, pp, nnodes = values.get("tp_size"), values.get("pp_size"), values.get("nnodes")
    ints = [v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None for v in (tp, pp, nnodes)]
    if any(v is None for v in ints):
        return _Judged(None, "--tp-size / --pp-size / --nnodes", missing="the ranks on this node, no whole numbers")
    ranks = max((int(ints[0] or 1) * int(ints[1] or 1)) // int(ints[2] or 1), 1)
    # (irev74: --dp-size without --enable-dp-attention starts that many replicas of tp x pp ranks on the node, each
    # with its own pools and its own WORLD group, whose size ranks_per_host reads: 0.5.23 pool_host/base.py:68-81,
    # managers/data_parallel_controller.py:421-449; they were left out, so the node's pools together were not judged)
    dp_raw = d.options.get("--dp-size", 1)  # (parse_flags' reading: aliases, abbreviations, the last one wins)
    dp = dp_raw if isinstance(dp_raw, int) and not isinstance(dp_raw, bool) else None
    if dp is None:
        return _Judged(None, f"--dp-size {dp_raw!r}", missing="the DP replicas on this node, no whole number")
    groups = dp if dp > 1 and not values.get("dp_attention") else 1
    left = memory.budget - _HICACHE_RESERVE_BYTES
    # 0.5.19+ split the budget among the node's ranks (0.5.19 pool_host/base.py:32-59); unknown release: not assumed
    split = _version_in(version, ">=0.5.19") if version is not None else None
    room = f"{_gb(memory.budget)} of memory less SGLang's 10 GiB reserve ({_gb(max(left, 0))})"
    if size is not None:
        asked = size * 10**9 * ranks
        what = f"--hicache-size {_theta_text(size)} (GB per rank) x {ranks} rank(s) on this node = {_gb(asked)}"
        if size * 10**9 > left or (asked > left and split is True):
            return _Judged(True, f"{what}, more than the box's {room}")
        if asked > left:  # (0.5.1-0.5.18: each rank checks against the whole memory, so the node is oversubscribed)
            return _Judged(None, f"{what}, more than the box's {room}",
                           missing="whether the pools pin: before 0.5.19 each rank checks its own pool against the "
                           "whole available memory, so the node's ranks together ask for more than it has and the "
                           "pinning or the kernel's OOM killer decides (not read)")  # fmt: skip
        if asked * groups > left:
            return _Judged(None, f"{what}, x {groups} DP replicas (--dp-size without --enable-dp-attention) = "
                           f"{asked * groups / 1e9:.1f} GB, more than the box's {room}",
                           missing="whether the pools pin: each DP replica checks its own ranks' pools against the "
                           "memory available when it starts, so the replicas together ask for more than the box "
                           "has and which one fails, or the kernel's OOM killer, is not read")  # fmt: skip
        return _hicache_available(asked * groups, ranks * groups, memory, what, room, d.other_cgroup)
    if ratio is None or ratio <= 0:
        return False
    ratio_given = option_value(d.sglang_args, ("--hicache-ratio",), declared) is not None
    if not ratio_given and version is not None and _version_in(version, ">=0.5.21") is True:
        if groups == 1:
            return _Judged(False, "no --hicache-ratio or --hicache-size: SGLang sizes the pools to fit the memory")
        # (ifc59: each DP replica sizes its own ranks' pools to 0.8 of the memory available when it starts, split
        # among its own WORLD group's ranks alone (0.5.23 mem_cache/hicache_auto_size.py:83-123 budget =
        # host_memory_budget_bytes x fraction, pool_host/base.py:68-81 ranks_per_host = launch_world_size // nnodes,
        # launch_world_size = tp x pp: runtime_context.py:173-178), and the replicas start together as threads
        # (managers/data_parallel_controller.py:421-466), so their pools are not sized to fit together)
        most = ratio * memory.gpu_max * ranks * groups if memory.gpu_max is not None else None
        what = (f"no --hicache-ratio or --hicache-size, with {groups} DP replicas (--dp-size without "
                "--enable-dp-attention)")  # fmt: skip
        if most is not None and most <= left:
            # (irev76: compared with the memory available when probed, as imend8's reading does, not with MemTotal:
            # each replica sizes its pools to what is available as if alone, so together they may pass it)
            told = (f"{what}: the default ratio {ratio:g} x a device pool of the whole GPU for each of "
                    f"{ranks * groups} rank(s) is at most {_gb(most)}")  # fmt: skip
            return _hicache_available(most, ranks * groups, memory, told, room, d.other_cgroup)
        return _Judged(
            None,
            what,
            missing="whether the replicas' pools fit together: each replica sizes its own "
            "ranks' pools to --hicache-host-memory-fraction (0.8) of the memory available when it starts, "
            "as if it were alone on the host, and the replicas start together (the default ratio "
            f"{ratio:g} x the device KV pools may ask for up to "
            f"{_gb(most) if most is not None else 'an amount not read'} against the box's {room})",
        )
    if memory.gpu_max is None:
        return _Judged(None, f"--hicache-ratio {ratio:g}", missing="the GPUs' memory, which bounds the device pool")
    most = ratio * memory.gpu_max * ranks * groups
    what = f"--hicache-ratio {ratio:g} x the device KV pool of each of {ranks * groups} rank(s)"
    if most <= left:
        told = f"{what}: at most {_gb(most)} (a pool of the whole GPU)"
        return _hicache_available(most, ranks * groups, memory, told, room, d.other_cgroup)
    return _Judged(None, what, missing=f"whether the host pool fits: it asks for up to {_gb(most)} (a "
                   f"device pool of the whole GPU) against the box's {room}, and the device KV pool's size (the "
                   "GPU memory left after the weights at --mem-fraction-static) is not in the facts")  # fmt: skip


def _dwdp_size(d: Derived, declared: set[str] | None) -> tuple[str | None, int | None]:
    """--dwdp-size as the gate reads it, the one reading _dwdp_sets_dp_attention and _dwdp_conflicts share: (the
    value as written, None where not given; the size, None where it is no whole number). The value is the one
    option_value reads as SGLang's argparse does (`--dwdp-size=N`, a unique abbreviation, the last occurrence wins);
    the size is _whole's (decimal digits, surrounding space; a sign or '_', which int() also takes, leaves it None, so
    both readers say unknown there, never DWDP off)."""
    raw = option_value(d.sglang_args, ("--dwdp-size",), declared)
    return raw, None if raw is None else _whole(raw)


def _dwdp_conflicts(d: Derived, declared: set[str] | None, values: Mapping[str, Any]) -> _Judged:
    """What SGLang's DWDP handler asserts against where --dwdp-size is above 1 (launch.json refusal dwdp-constraints):
    a size other than --tp-size, --disaggregation-mode decode, --enable-eplb, a speculative algorithm, --pp-size above
    1, --enable-two-batch-overlap; holds None where the size or --pp-size is no whole number."""
    raw, size = _dwdp_size(d, declared)
    if raw is None or (size is not None and size <= 1):
        return _Judged(False, "DWDP off")
    if size is None:
        return _Judged(None, f"--dwdp-size {raw!r}", missing="the DWDP size, which is no whole number")
    tp_opt = d.options.get("--tp-size")
    tp = tp_opt if isinstance(tp_opt, int) and not isinstance(tp_opt, bool) else 1
    given = values.get("flags_given")
    algorithm = values.get("speculative_algorithm")
    found = [
        *([f"--dwdp-size {size} with --tp-size {tp}"] if size != tp else []),
        *(["--disaggregation-mode decode"] if values.get("disaggregation_mode") == "decode" else []),
        *(["--enable-eplb"] if isinstance(given, _GivenFlags) and "--enable-eplb" in given else []),
        *([f"--speculative-algorithm {algorithm}"] if isinstance(algorithm, str) and algorithm else []),
        *([f"--pp-size {values['pp_size']}"] if isinstance(values.get("pp_size"), int) and values["pp_size"] > 1
          else []),
        *(["--enable-two-batch-overlap"] if isinstance(given, _GivenFlags) and "--enable-two-batch-overlap" in given
          else []),
    ]  # fmt: skip
    if found:
        return _Judged(True, "; ".join(found))
    if values.get("pp_size") is _UNKNOWN:
        return _Judged(None, "--pp-size not read", missing="the pipeline-parallel size, which is no whole number")
    return _Judged(False, f"--dwdp-size {size} with --tp-size {tp}")


def _dwdp_sets_dp_attention(d: Derived, declared: set[str] | None, mapping: Mapping[str, Any], version: str) -> Any:
    """Whether --dwdp-size turns DP attention on in this release (launch.json refusals.auto.dwdp: the releases whose
    argument handling does so where the size is above 1): True or False; unknown where the size is no whole number, or
    where the release is in no range the entry lists as read (a release newer than the data)."""
    raw, size = _dwdp_size(d, declared)
    if raw is None:
        return False
    if size is None:
        return _UNKNOWN
    if size <= 1:
        return False
    spec = ((mapping.get("refusals") or {}).get("auto") or {}).get("dwdp") or {}
    sets = _version_in(version, str(spec.get("versions", "")))
    if sets is True:
        return True
    read = _version_in(version, str(spec.get("read", "")))
    return False if read is True else _UNKNOWN


# the flags with which SGLang sets the MoE all-to-all backend (and DP attention) itself: waterfill (deepep), prefill
# context parallelism (deepep, DP attention); read in 0.5.9-0.5.23. SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE (megamoe, 0.5.13-
# 0.5.17) is read from launch.json's env entry (sets_a2a) after these, in _entry_free_values
_A2A_SET_BY = ("--enable-waterfill", "--enable-deepep-waterfill", "--enable-prefill-cp",
               "--enable-nsa-prefill-context-parallel")  # fmt: skip


def _a2a_values(d: Derived, declared: set[str] | None, architecture: str | None) -> dict[str, Any]:
    """The values SGLang's checks of two-batch overlap, PD multiplexing and the MoE all-to-all backends read
    (launch.json refusals): --moe-a2a-backend as given, else SGLang's default none, unknown where a flag, the
    megamoe runner alias or the model (not read, or a MiniMax one, whose override may set megamoe) may make SGLang
    set it itself; whether attention runs data parallel (--enable-dp-attention or --attn-dp-size;
    unknown where such a flag may set it); --deepep-mode (default auto); --chunked-prefill-size as written ("unset":
    not given, SGLang then sizes it itself); whether --disable-overlap-schedule is given; --pp-size (default 1,
    unknown where not a whole number) and --disaggregation-mode as written (default "null")."""
    given = _GivenFlags(d, declared)
    args = d.sglang_args
    sets_it = any(flag in given for flag in _A2A_SET_BY) or d.options.get("--moe-runner-backend") == "megamoe"
    a2a: Any = option_value(args, ("--moe-a2a-backend",), declared)
    if a2a is None:
        model_may = architecture is None or architecture.startswith("MiniMax")
        a2a = _AutoA2A() if sets_it or model_may else "none"
    dp: Any = bool(d.options.get("--enable-dp-attention")) or "--attn-dp-size" in given
    if not dp and sets_it:
        dp = _UNKNOWN
    chunked = option_value(args, ("--chunked-prefill-size",), declared)
    pp = d.options.get("--pp-size", 1)
    return {
        "moe_a2a_backend": a2a,
        "deepep_mode": option_value(args, ("--deepep-mode",), declared) or "auto",
        "attention_dp_any": dp,
        "chunked_prefill_size": chunked if chunked is not None else "unset",
        "overlap_schedule_disabled": "--disable-overlap-schedule" in given,
        # PD multiplexing's other two assertions: --pp-size (default 1) and --disaggregation-mode (default "null")
        "pp_size": pp if isinstance(pp, int) and not isinstance(pp, bool) else _UNKNOWN,
        "disaggregation_mode": option_value(args, ("--disaggregation-mode",), declared) or "null",
    }


# config.json keys that count a model's routed experts (Qwen2/3-MoE num_experts, DeepSeek n_routed_experts,
# Mixtral / GPT-OSS / Llama 4 num_local_experts, ERNIE / others moe_num_experts), in the file or a text sub-config
_MOE_KEYS = ("num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts")


def _dense_or_not_read(read: Any, what: str) -> _Judged | None:
    """None where the served model has routed experts (_model_moe); else WHAT's verdict: not decided where config.json
    was not read, False on a dense model."""
    moe = _model_moe(read)
    if moe is _UNKNOWN:
        return _Judged(None, f"{what}, model not read", missing="whether the model has routed experts (config.json)")
    if moe is not True:
        return _Judged(False, f"{what} on a dense model")
    return None


def _model_moe(read: Any) -> Any:
    """Whether the served model has routed experts: True where config.json (or a text sub-config, at any depth:
    Qwen3-Omni's thinker_config.text_config) gives more than one expert under one of _MOE_KEYS, as a number or a
    list of numbers (ERNIE-4.5-VL's moe_num_experts [text, vision]: sglang 0.5.23 models/ernie45_moe_vl.py:169-170
    takes max()); unknown where it was not read or such a key holds anything else; False otherwise."""
    if not isinstance(read, Mapping):
        return _UNKNOWN
    found: Any = False
    for key in _MOE_KEYS:
        if key not in read:
            continue
        n = read[key]
        values = n if isinstance(n, list) else [n]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            found = _UNKNOWN  # a shape this reading does not know: fail closed
        elif any(v > 1 for v in values):
            return True
    for sub in ("thinker_config", "llm_config", "language_config", "text_config"):
        inner = _model_moe(read.get(sub)) if isinstance(read.get(sub), Mapping) else False
        if inner is True:
            return True
        if inner is not False:
            found = _UNKNOWN
    archs = read.get("architectures")
    if found is False and not any(k in read for k in _MOE_KEYS) and isinstance(archs, list):
        # (irobust11) an architecture named as MoE (Qwen3MoeForCausalLM, OlmoeForCausalLM) whose config.json states
        # no expert count anywhere: its transformers config class then takes its own default, which for such a class
        # is more than one expert (inferred from the class names, not read per class): unknown, never dense
        if any(isinstance(a, str) and "moe" in a.lower() for a in archs):
            return _UNKNOWN
    return found


def _trtllm_softmax_routing(
    values: Mapping[str, Any], read: Any, spec: Mapping[str, Any], majors: set[int] | None, architecture: str | None
) -> Any:
    """imodel3: whether the trtllm-gen MoE runner routes the served model with a router it was not trained with.
    SGLang's deepseek_v2.py MoE (DeepSeek-V2 / V3 / V3.2 architectures) passes routing_method_type DeepSeekV3 to every
    trtllm-gen path unless config.json names another, and gives its grouped top-k an e_score_correction_bias only
    for topk_method noaux_tc. A DeepSeek-V2-style checkpoint (topk_method greedy / group_limited_greedy: softmax
    scores, no bias) then gets FlashInfer's DeepSeekV3 router where the release hands it the router logits
    (`spec` wrong: the quantizations whose path was read so, "none" for a BF16 model): sigmoid scores, groups by
    their top-2 sum, other experts and other weights, no error; or an assertion on a path the release refuses it.
    `right`: the quantizations whose path takes SGLang's own top-k (0.5.23's _can_bypass_trtllm_routing needs the
    bias). True where it is wrong, False where it is right or the rule is not concerned (another runner, another
    architecture, noaux_tc, a dense model), unknown where config.json was not read on this runner, its routing keys
    are not ones read here, the quantization's path was not read, or SGLang may pick the runner itself."""
    runner = values.get("moe_runner_backend")
    given = runner == "flashinfer_trtllm"
    if runner not in (None, "auto", "flashinfer_trtllm"):
        return False  # another runner given (flashinfer_trtllm_routed takes SGLang's own top-k)
    if not isinstance(read, Mapping):
        if not given:
            return False
        return _Judged(None, "the model's config.json not read",
                       missing="whether the model routes as DeepSeek-V2 does (softmax scores, no correction bias), "
                       "which FlashInfer's DeepSeekV3 router on this runner does not compute")  # fmt: skip
    archs = read.get("architectures")
    first = str(archs[0]) if isinstance(archs, list) and archs and isinstance(archs[0], str) else None
    arch = architecture or first
    if arch not in [str(a) for a in spec.get("architectures") or []] or _model_moe(read) is False:
        return False
    if not given:  # auto: SGLang's own pick on SM100 for the DeepSeek family (never DeepseekV2ForCausalLM)
        if arch not in [str(a) for a in spec.get("picked_by") or []]:
            return False
        if majors is not None and 10 not in majors:
            return False
    kind = read.get("model_type")
    if "routing_method_type" in read:
        return _Judged(None, f"{arch}: config.json names routing_method_type {read['routing_method_type']!r}",
                       missing="the router that routing_method_type selects on the trtllm-gen runner")  # fmt: skip
    topk: Any = read.get("topk_method")
    defaults = spec.get("topk_method_defaults") or {}
    if topk is None and isinstance(kind, str) and kind in defaults:
        topk = defaults[kind]  # the transformers config class's default
    if topk is None:
        return False  # no topk_method at all: the config-keys check (ifc65) or the class's own default judge it
    if topk == "noaux_tc":
        return False
    quant = values.get("quantization") or values.get("model_quant_method")
    if quant is _UNKNOWN:
        return _Judged(None, f"{arch}: topk_method {topk!r}", missing="the checkpoint's quantization")
    q = str(quant) if quant is not None else "none"
    shown = f"{arch} (model_type {kind}) routes with topk_method {topk!r}: softmax scores, no e_score_correction_bias"
    shown += f"; {'no quantization' if q == 'none' else 'quantization ' + q}"
    if q in [str(x) for x in spec.get("right") or []]:
        return _Judged(False, shown + ", whose trtllm-gen path takes SGLang's own grouped top-k")
    if q not in [str(x) for x in spec.get("wrong") or []]:
        return _Judged(None, shown, missing=f"which router this release's {q} MoE path on the trtllm-gen runner runs")
    if not given:
        return _Judged(None, shown + ", on flashinfer_trtllm if SGLang picks it",
                       missing="whether SGLang picks flashinfer_trtllm for this checkpoint itself (not modelled for "
                       "a DeepSeek-V2-style routing)")  # fmt: skip
    return _Judged(True, shown)


def _moe_block_on(read: Mapping[str, Any], spec: Mapping[str, Any], architecture: str | None) -> Any:
    """(the architecture, the key) where the served model is one of `spec`'s architectures (the gate's reading, else
    config.json's first) and config.json turns its MoE block on (`spec`'s moe_key, default enable_moe_block, at the
    top or in text_config: true in one, never anything but a boolean); False where not concerned (another
    architecture, or the key absent or false: the config class's default, no MoE block and no experts module);
    unknown (_Judged) where the key holds something else. Shared by the two Gemma 4 expert readings below."""
    archs = read.get("architectures")
    first = str(archs[0]) if isinstance(archs, list) and archs and isinstance(archs[0], str) else None
    arch = architecture or first
    if arch not in [str(a) for a in spec.get("architectures") or []]:
        return False
    key = str(spec.get("moe_key") or "enable_moe_block")
    found = [c[key] for c in (read, read.get("text_config")) if isinstance(c, Mapping) and key in c]
    if not found or all(v is False for v in found):
        return False
    if not all(isinstance(v, bool) for v in found):
        return _Judged(None, f"{arch}: config.json's {key} is no boolean", missing=f"whether {key} turns the MoE on")
    return arch, key


def _trtllm_moe_activation(
    values: Mapping[str, Any], read: Any, spec: Mapping[str, Any], architecture: str | None
) -> Any:
    """imodel4: whether the trtllm-gen MoE runner refuses the activation the served model's SGLang file gives its
    experts. SGLang's Gemma4MoE builds its fused MoE with activation "gelu" (models/gemma4_causal.py), and the
    release's trtllm-gen paths assert their own activation lists at the first MoE forward (layers/moe/moe_runner/
    flashinfer_trtllm.py _SUPPORTED_BF16_ACTIVATIONS {silu, relu2}; FP4 adds gelu from 0.5.13). `spec`: the
    architectures, the model file's activation, the text config key that turns the MoE block on, the quantizations
    ("none": no quantization) whose path refuses it (wrong) and those whose path takes it (right); any other is
    unknown. True where refused, False where taken or not concerned (another runner, another architecture, no MoE
    block), unknown where config.json was not read or the quantization's path was not read. (ifc71) `spec` may name
    other runners (`runners`, default the two trtllm-gen ones) and the path's name for the message (`path`): the
    FlashInfer CUTLASS MoE of 0.5.12-0.5.14, whose BF16 call passes every activation but relu2 as SwiGLU."""
    runner = values.get("moe_runner_backend")
    runners = [str(r) for r in spec.get("runners") or ("flashinfer_trtllm", "flashinfer_trtllm_routed")]
    path = str(spec.get("path") or "trtllm-gen")
    if runner not in runners:
        return False  # (SGLang's own pick for these models is FP4 only, which spec's `right` covers where it holds)
    if not isinstance(read, Mapping):
        return _Judged(None, "the model's config.json not read",
                       missing=f"whether the model's experts take an activation the {path} MoE refuses")  # fmt: skip
    on = _moe_block_on(read, spec, architecture)
    if not isinstance(on, tuple):
        return on
    arch, key = on
    quant = values.get("quantization") or values.get("model_quant_method")
    if quant is _UNKNOWN:
        return _Judged(None, f"{arch}: MoE block", missing="the checkpoint's quantization")
    q = str(quant) if quant is not None else "none"
    act = str(spec.get("activation"))
    shown = f"{arch} ({key} true): SGLang's MoE runs its experts with activation {act!r}; "
    shown += "no quantization" if q == "none" else f"quantization {q}"
    if q in [str(x) for x in spec.get("right") or []]:
        return _Judged(False, shown + f", whose {path} path takes {act!r}")
    if q not in [str(x) for x in spec.get("wrong") or []]:
        return _Judged(None, shown, missing=f"whether this release's {q} {path} MoE path takes {act!r}")
    return _Judged(True, shown)


def _transformers_backend_moe(impl: Any, read: Any, spec: Mapping[str, Any], architecture: str | None) -> Any:
    """itfm1: whether SGLang's Transformers backend fails to build, or builds wrong, the served model's experts.
    Its MoE mixin (models/transformers.py MoEMixin.recursive_replace) takes the top-k from the text config's
    num_experts_per_tok or top_k alone and asserts one was found ('Cannot determine top_k from config.'), and gives
    SGLang's fused MoE activation 'silu' for every architecture but gpt-oss and Grok-1. Gemma 4's config class names
    its top-k top_k_experts, and transformers 5 pops a config.json's top_k with the other generation parameters,
    so a Gemma 4 MoE fails at load unless config.json states num_experts_per_tok; where it does, its GELU-tanh
    experts run as gated SiLU. `spec`: the architectures, the key that turns the MoE block on (at the top or in
    text_config), the keys whose value the mixin takes as its top-k (`top_k_keys`), the activation it gives
    (`activation`), the config key of the experts' own activation and its default in the config class, and the
    --model-impl values that reach the backend (`impls`: transformers, and auto where the release has no class of its
    own for the architecture). True where refused, False where not concerned, unknown where config.json was not read
    or says something the gate cannot judge."""
    chosen = str(impl).strip().lower() if isinstance(impl, str) and impl.strip() else "auto"
    if chosen not in [str(i) for i in spec.get("impls") or ("transformers",)]:
        return False
    if not isinstance(read, Mapping):
        if chosen == "auto":  # (every model of the release would be unknown here: the model check speaks for it)
            return False
        return _Judged(None, "the model's config.json not read",
                       missing="whether the model is a MoE whose top-k the Transformers backend reads")  # fmt: skip
    on = _moe_block_on(read, spec, architecture)
    if not isinstance(on, tuple):
        return on
    arch, key = on
    text = read.get("text_config")
    sub = text if isinstance(text, Mapping) else read
    where = f"--model-impl {chosen}: {arch} ({key} true)"
    named = {str(k): sub.get(str(k)) for k in spec.get("top_k_keys") or ("num_experts_per_tok",)}
    given = {k: v for k, v in named.items() if v is not None}
    if not given:
        own = sub.get("top_k_experts")
        top = f"top_k_experts {own}" if isinstance(own, int) and not isinstance(own, bool) else "no top_k_experts"
        return _Judged(True, f"{where}; config.json states {top} and no {' or '.join(named)}: SGLang's Transformers "
                       "backend asserts it found a top-k ('Cannot determine top_k from config.') while it builds the "
                       "model")  # fmt: skip
    act_key = str(spec.get("activation_key") or "hidden_activation")
    own_act = sub.get(act_key, spec.get("activation_default"))
    gives = str(spec.get("activation") or "silu")
    if not isinstance(own_act, str):
        return _Judged(None, f"{where}; config.json's {act_key} is no string", missing="the experts' own activation")
    if own_act == gives:
        return False
    return _Judged(True, f"{where}; config.json states {', '.join(f'{k} {v}' for k, v in given.items())}: the "
                   f"Transformers backend runs the experts with gated {gives!r}, the checkpoint's {act_key} is "
                   f"{own_act!r}")  # fmt: skip


def _model_dsa(mapping: Mapping[str, Any], version: str, architecture: str | None, keys: Any) -> Any:
    """Whether SGLang's DSA (NSA) attention backend takes the served model: configs/model_config.py is_deepseek_dsa
    (is_deepseek_nsa before 0.5.13) asks for one of its architectures and an index_topk in config.json. False where
    the gate read config.json and it has no index_topk (nor a text sub-config one); True where the release's DSA
    entry of model_overrides matches; unknown otherwise (not read, or an index_topk beside an architecture the data
    does not list)."""
    if architecture is None or not isinstance(keys, Mapping):
        return _UNKNOWN
    subs = [keys.get(k) for k in ("thinker_config", "llm_config", "language_config", "text_config")]
    if all(c.get("index_topk") is None for c in [keys, *subs] if isinstance(c, Mapping)):
        return False
    seen = _seen_architecture(mapping, version, architecture, keys)
    return True if _is_dsa(mapping, version, seen, keys) else _UNKNOWN


#: (igap53) the architectures whose SGLang model file reads `getattr(config, "rope_theta", DEFAULT)` alone, with the
#: default, where transformers 5's config class of that model_type has rope_parameters (so rope_theta is popped into
#: it and is no attribute): exaone4.py (0.5.10 :232, 0.5.14 :231, 0.5.19 :227, 0.5.23 :232) and exaone_moe.py (0.5.10
#: :452, 0.5.14 :455, 0.5.19 :446, 0.5.23 :436), default 1000000 in each (launch.json refusal rope-theta-file-default)
_ROPE_THETA_FILE_DEFAULT = {
    "Exaone4ForCausalLM": 1000000.0,
    "ExaoneMoEForCausalLM": 1000000.0,
    "ExaoneMoeForCausalLM": 1000000.0,
}
#: (igap55) the architectures whose model file reads config.rope_theta alone but whose config classes keep a top-level
#: rope_theta of config.json as an attribute, so the base is lost only where config.json states it inside
#: rope_parameters / rope_scaling alone: MiMo-V2 (mimo_v2_flash.py 0.5.10 :576, mimo_v2.py 0.5.11 :615, 0.5.14 :622,
#: 0.5.19 :767, 0.5.23 :867, default 10000; its SWA layers take getattr(config, "swa_rope_theta", rope_theta), 0.5.23
#: :897) and ZAYA1 (zaya.py 0.5.14 :896, 0.5.19 :895, 0.5.23 :959, default 1000000, one base for every layer). Their
#: config classes: transformers 5.13.0-5.19.0 MiMoV2FlashConfig and ZayaConfig return the kwargs untouched from
#: convert_rope_params_to_dict (5.19.0 configuration_mimo_v2_flash.py:134-135, configuration_zaya.py:114-120), which
#: PreTrainedConfig then sets as attributes (5.19.0 configuration_utils.py:349-350, :376-383); SGLang's own
#: ZayaConfig takes rope_theta as a parameter (0.5.23 configs/zaya.py:62, :197). The value: the file's default base,
#: which it serves every layer. MiMo-V2 was read here by igap55 (with a per-layer override for its SWA layers); at the
#: merge with ifc56 it moved to _ROPE_THETA_NOT_READ (unknown), since 5.19.0's class also fills rope_parameters, which
#: mimo_v2.py hands get_rope as rope_scaling; imend8 removed the override, which no architecture here had left.
_ROPE_THETA_TOP_KEPT: dict[str, float] = {
    "ZayaForCausalLM": 1000000.0,
}


def _theta_text(value: float) -> str:
    """A rotary base as shown: `:g` for a float or an int a float holds; the digit count of a longer int (irev73:
    float() and the `:g` format raised OverflowError for an int past 1e308, the gate's exit 4)."""
    if isinstance(value, int) and abs(value) >= 10**15:  # (bit_length: no str() of an int past its digit limit)
        return f"{'-' if value < 0 else ''}an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    return f"{value:g}"


#: (ifc56) the architectures of SGLang's mimo_v2.py (EntryClass MiMoV2ForCausalLM, MiMoV2FlashForCausalLM; the same
#: `getattr(config, "rope_theta", 10000)` and `getattr(config, "rope_scaling", None)` handed to get_rope: 0.5.14
#: :622-623, 0.5.23 :867-868), which the rule's note left "not judged, and may be affected" while the gate allowed
#: them (fifty-sixth sample, rows t1 / t3). transformers 5.8.1 (SGLang 0.5.14's pin) has no mimo_v2_flash config
#: class (models/auto/configuration_auto.py:404-416 raises "does not recognize this architecture" without the
#: checkpoint's remote code); 5.19.0
#: (0.5.23's) has MiMoV2FlashConfig, which keeps config.json's rope_theta as an attribute (its
#: convert_rope_params_to_dict returns the kwargs untouched, configuration_mimo_v2_flash.py:134-135) but fills
#: rope_parameters, when config.json states none, with per-layer-type bases (:123-127), which the rope_scaling
#: property hands mimo_v2.py (configuration_utils.py:584-586), and get_rope raises on a dict with no rope_type (0.5.23
#: layers/rotary_embedding/factory.py:192-199; inferred, not run). What the server reads then depends on the
#: checkpoint's remote code and the transformers installed: unknown, not allowed.
_ROPE_THETA_NOT_READ = ("MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM")


def _rope_theta_lost(architecture: str | None, keys: Any) -> Any:
    """Whether the served model's rotary base differs from the one SGLang's model file falls back to (igap53): True
    where the base transformers 5 keeps from config.json is other than the file's default, False where it is that
    default or the architecture is none of _ROPE_THETA_FILE_DEFAULT / _ROPE_THETA_TOP_KEPT (or was not read: no
    architecture, no rule), unknown where config.json states none (transformers' own default decides) or one that is
    no number.

    irev73: the base kept is transformers 5's, not the first one written: convert_rope_params_to_dict (5.3.0 and
    5.19.0 modeling_rope_utils.py) takes a non-empty rope_scaling in place of rope_parameters, then sets the
    top-level rope_theta into that dict only where it states none (setdefault; 5.19.0 into each per-layer-type
    dict alike). igap53 read the top-level value first: 1000000 there beside another base in rope_parameters was
    allowed, and served with 1000000.

    igap55: for _ROPE_THETA_TOP_KEPT a top-level rope_theta is kept (False); a base stated only inside
    rope_parameters / rope_scaling (flat, or per layer type) is compared with what the file serves each layer.

    ifc56: unknown for the architectures of _ROPE_THETA_NOT_READ (MiMo-V2: what the config class transformers 5
    builds hands mimo_v2.py was not read to the end)."""
    if architecture in _ROPE_THETA_NOT_READ:
        return _Judged(None, f"{architecture}: mimo_v2.py's rotary base and scaling under transformers 5",
                       missing="the rotary base and scaling SGLang's mimo_v2.py gets from the config class "
                       "transformers 5 builds (none in 5.8.1; 5.19.0's fills per-layer rope_parameters, which "
                       "get_rope does not take), not read for these releases")  # fmt: skip
    if not isinstance(keys, Mapping):
        return False
    top_kept = _ROPE_THETA_TOP_KEPT.get(architecture or "")
    if top_kept is not None:
        return _rope_theta_top_kept(str(architecture), keys, top_kept)
    default = _ROPE_THETA_FILE_DEFAULT.get(architecture or "")
    if default is None:
        return False
    top: Any = keys.get("rope_theta")
    scaling, parameters = keys.get("rope_scaling"), keys.get("rope_parameters")
    kept: Any = scaling or parameters  # (transformers 5: `rope_scaling or self.rope_parameters`)
    if kept and not isinstance(kept, Mapping):
        return _Judged(None, f"{architecture}: {'rope_scaling' if scaling else 'rope_parameters'} {kept!r}",
                       missing="the model's rotary base, in a rope dict that is no mapping")  # fmt: skip
    parts: list[Mapping[str, Any]] = []
    if isinstance(kept, Mapping) and kept:
        nested = [v for v in kept.values() if isinstance(v, Mapping)]  # (per layer type, 5.19.0)
        parts = ([kept] if "rope_theta" in kept or not nested else []) + nested
    stated = [p.get("rope_theta", top) for p in parts] if parts else [top]
    if all(x is None for x in stated):
        return _Judged(None, f"{architecture}: no rope_theta in config.json",
                       missing="the model's rotary base, which config.json does not state")  # fmt: skip
    odd = next((x for x in stated if x is not None and (isinstance(x, bool) or not isinstance(x, int | float))), None)
    if odd is not None:
        return _Judged(None, f"{architecture}: rope_theta {odd!r}", missing="the model's rotary base, no number")
    lost = next((x for x in stated if x is not None and x != default), None)  # (int against float: exact, no float())
    if lost is not None:
        shown = _theta_text(lost)
        return _Judged(True, f"{architecture}: rope_theta {shown} kept from config.json, {default:g} served")
    if any(x is None for x in stated):
        return _Judged(None, f"{architecture}: a rope dict without rope_theta and none at the top level",
                       missing="the model's rotary base for that dict, which config.json does not state")  # fmt: skip
    return _Judged(False, f"{architecture}: rope_theta {default:g} (the file's default)")


def _is_number(value: Any) -> bool:
    """An int (no bool) or a finite float (irobust7: config.json's `NaN` / `Infinity`, which json.loads takes, was
    read as a base kept, and the launch allowed with a base that is no number)."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int) and not isinstance(value, bool)


def _rope_theta_top_kept(architecture: str, keys: Mapping[str, Any], default: float) -> Any:
    """_rope_theta_lost for an architecture whose config classes keep a top-level rope_theta and whose model file
    serves every layer one base (igap55)."""
    top = keys.get("rope_theta")
    if top is not None:
        if not _is_number(top):
            return _Judged(None, f"{architecture}: rope_theta {top!r}", missing="the model's rotary base, no number")
        # (irev74: a base config.json also states inside rope_parameters / rope_scaling, flat or per layer type, other
        # than the top-level one the file serves: transformers 5.19.0's ZayaConfig keeps that dict, its own modeling
        # reads the per-layer bases from it, so which one the checkpoint was trained with is not read: unknown, not
        # allowed)
        other = next(
            (f"{where} {_theta_text(value) if _is_number(value) else repr(value)}"
             for where, value in _rope_dict_bases(keys) if value != top),
            None,
        )  # fmt: skip
        if other is not None:
            return _Judged(None, f"{architecture}: rope_theta {_theta_text(top)} at the top of config.json, {other}",
                           missing="which rotary base the checkpoint was trained with: the file serves the top-level "
                           "one to every layer, the rope dict states another")  # fmt: skip
        return _Judged(
            False, f"{architecture}: rope_theta {_theta_text(top)} at the top of config.json (kept by the config class)"
        )
    # (what the file serves every layer where config.json has no top-level rope_theta: the default)
    stated: list[tuple[str, Any, Any]] = []
    for nested in ("rope_parameters", "rope_scaling"):
        sub = keys.get(nested)
        if not isinstance(sub, Mapping):
            continue
        if "rope_theta" in sub:
            stated.append((f"{nested}.rope_theta", sub.get("rope_theta"), default))
        for layer, value in sub.items():
            if isinstance(value, Mapping) and "rope_theta" in value:
                stated.append((f"{nested}.{layer}.rope_theta", value.get("rope_theta"), default))
        if stated:
            break
    if not stated:
        return _Judged(None, f"{architecture}: no rope_theta in config.json",
                       missing="the model's rotary base, which config.json does not state")  # fmt: skip
    for where, value, _served in stated:
        if not _is_number(value):
            return _Judged(None, f"{architecture}: {where} {value!r}", missing="the model's rotary base, no number")
    # (int against float: exact, no float(): an int past 1e308 overflows it, irev73)
    wrong = [f"{where} {_theta_text(value)}, {_theta_text(served)} served" for where, value, served in stated
             if value != served]  # fmt: skip
    if wrong:
        return _Judged(True, f"{architecture}: no top-level rope_theta in config.json; " + "; ".join(wrong))
    return _Judged(False, f"{architecture}: the bases in config.json are the ones the file serves")


def _rope_dict_bases(keys: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Every rope_theta config.json states inside rope_parameters / rope_scaling, flat or one level down (per layer
    type), with where it stands."""
    out: list[tuple[str, Any]] = []
    for nested in ("rope_parameters", "rope_scaling"):
        sub = keys.get(nested)
        if not isinstance(sub, Mapping):
            continue
        if "rope_theta" in sub:
            out.append((f"{nested}.rope_theta", sub.get("rope_theta")))
        out.extend(
            (f"{nested}.{layer}.rope_theta", value.get("rope_theta"))
            for layer, value in sub.items()
            if isinstance(value, Mapping) and "rope_theta" in value
        )
    return out


def _whole(raw: str) -> int | None:
    """int(raw) for a whole number in decimal digits (surrounding space allowed), else None: also where int() refuses
    it for its length (more digits than sys.get_int_max_str_digits(), 4,300 by default; irev57: `--dcp-size` or
    `--ep-size` of 5,000 digits ended the gate in an internal error, exit 4)."""
    return whole_number(raw.strip(), None)


def _dcp_size(d: Derived, declared: set[str] | None) -> Any:
    """--dcp-size (--decode-context-parallel-size) as argparse keeps it: 1 where not given, unknown where the value
    is no whole number."""
    raw = option_value(d.sglang_args, ("--dcp-size", "--decode-context-parallel-size"), declared)
    if raw is None:
        return 1
    text = raw.strip()
    digits = text[1:] if text[:1] in ("-", "+") else text  # (one sign, as int() reads: '-+5' is none; irev59)
    size = whole_number(digits, None, ascii_only=True)
    if size is None:
        return _UNKNOWN
    return -size if text[:1] == "-" else size


def _attention_dp_groups(d: Derived, declared: set[str] | None) -> Any:
    """Whether SGLang's attention runs in more than one data-parallel group (its attn_dp_size > 1) or the server joins
    an elastic EP group to scale it up (--elastic-ep-join-mode scale): --attn-dp-size as given, else --dp-size where
    --enable-dp-attention is given (the spelling SGLang turns into attn_dp_size before its checks); unknown where a
    size is no whole number, or where none is above 1 but a flag with which SGLang sets attention DP itself is given."""
    if option_value(d.sglang_args, ("--elastic-ep-join-mode",), declared) == "scale":
        return True
    raw = option_value(d.sglang_args, ("--attn-dp-size", "--attention-data-parallel-size"), declared)
    size = 1 if raw is None else _whole(raw)
    if size is None:
        return _UNKNOWN
    if size == 1 and d.options.get("--enable-dp-attention"):
        dp = d.options.get("--dp-size")
        if dp is not None and (not isinstance(dp, int) or isinstance(dp, bool)):
            return _UNKNOWN
        size = 1 if dp is None else dp
    if size > 1:
        return True
    return _UNKNOWN if any(flag in _GivenFlags(d, declared) for flag in _A2A_SET_BY) else False


def _ep_below_tp(d: Derived, declared: set[str] | None) -> Any:
    """Whether the command's expert parallel size (--ep-size / --ep, default 1) is below a --tp-size above 1, as
    given (an all-to-all backend of the target may raise it to tp: not read here); unknown where --ep-size is not a
    positive whole number."""
    tp_opt = d.options.get("--tp-size")
    tp = tp_opt if isinstance(tp_opt, int) and not isinstance(tp_opt, bool) and tp_opt > 0 else 1
    raw = option_value(d.sglang_args, EP_SPELLINGS, declared)
    if raw is None:
        return tp > 1
    size = _whole(raw)
    if size is None or size <= 0:
        return _UNKNOWN
    return size < tp


def _holds(cond: Mapping[str, Any], values: Mapping[str, Any], entry: Mapping[str, Any]) -> bool | None:
    """One condition, three-valued: None when it reads a value SGLang chooses at start."""
    if "any" in cond:
        parts = [_holds(c, values, entry) for c in cond.get("any") or [] if isinstance(c, dict)]
        if any(p is True for p in parts):
            return True
        return None if any(p is None for p in parts) else False
    if "given" in cond:  # a flag the command gives (a boolean flag launch.json may not list)
        given = values.get("flags_given")
        return isinstance(given, _GivenFlags) and str(cond["given"]) in given
    value = values.get(str(cond.get("fact")))
    if isinstance(value, _AutoBackend):
        if "in" in cond and not any(value.can_be(str(x)) for x in cond.get("in") or []):
            return False  # SGLang never picks any of them here by itself
        return None
    if isinstance(value, _Judged):
        return None if value.holds is None else value.holds is bool(cond.get("is", True))
    if value is _UNKNOWN:
        return None
    if "unknown_in" in cond:  # holds, but for the values where SGLang decides from what the gate does not read
        return None if value in (cond.get("unknown_in") or []) else True
    if "in" in cond:
        return value in (cond.get("in") or [])
    if "below" in cond:  # a version (torch's CUDA build) below the given one, compared as numbers ("12.10" > "12.8")
        seen, bound = numeric(value), numeric(cond.get("below"))
        return None if seen is None or bound is None else seen < bound
    if "not_in" in cond:
        allowed = entry.get("allowed") if cond["not_in"] == "allowed" else cond["not_in"]
        return value is not None and value not in (allowed or [])
    if "op" in cond:
        rhs = cond.get("value")
        if not isinstance(value, int | float) or isinstance(value, bool) or not isinstance(rhs, int | float):
            return False
        return {
            "==": value == rhs,
            "!=": value != rhs,
            "<": value < rhs,
            "<=": value <= rhs,
            ">": value > rhs,
            ">=": value >= rhs,
        }.get(str(cond["op"]), False)
    return False


def _unknown(value: Any) -> bool:
    return value is _UNKNOWN or isinstance(value, _AutoBackend) or (isinstance(value, _Judged) and value.holds is None)


_OBSERVE_LABEL = {
    "trtllm_mha_page_size": "page size ",
    "trtllm_gen_heads_unsupported": "",
    "hybrid_gdn_backend_refused": "",
    "model_backend_refused": "",
    "backend_list_refused": "",
    "trtllm_moe_activation_refused": "",
    "transformers_backend_moe_refused": "",
}
_UNKNOWN_SHOWN = {
    "model_architecture": "not read (the model was not found)",
    "gpu_uses_xqa": "not known (no GPU read, or GPUs of both kinds)",
    "torch_cuda": "not known",
    "trtllm_mha_page_size": "not known (another backend of the command sets one too)",
}


def _shown(value: Any, fact: str = "") -> str:
    if isinstance(value, _Judged):
        return value.text
    if _unknown(value):
        return _UNKNOWN_SHOWN.get(fact, "chosen by SGLang at start")
    if value == "unset":
        return "none given"
    return str(value)


def _observed(conds: Sequence[Any], values: Mapping[str, Any]) -> str:
    """The values the conditions read, in the order of launch.json's facts."""
    parts = []
    for fact, value in values.items():
        if not any(_mentions(c, fact) for c in conds):
            continue
        if fact.endswith("_given"):  # --speculative-num-steps given / not given
            flag = "--" + fact.removesuffix("_given").replace("_", "-")
            parts.append(f"{flag} {'given' if value else 'not given'}")
        else:
            parts.append(f"{fact.replace('speculative_', '')} {_shown(value, fact)}")
    return ", ".join(parts)


def _mentions(cond: Any, fact: str) -> bool:
    if not isinstance(cond, dict):
        return False
    if "any" in cond:
        return any(_mentions(c, fact) for c in cond.get("any") or [])
    return cond.get("fact") == fact


def _unknown_facts(conds: Sequence[Any], values: Mapping[str, Any]) -> list[str]:
    return [f for f, v in values.items() if _unknown(v) and any(_mentions(c, f) for c in conds)]


def _unknown_in_whys(conds: Sequence[Any], values: Mapping[str, Any], entry: Mapping[str, Any]) -> list[str]:
    """The `why` of each `unknown_in` condition (inside `any` too) that is unknown for a value the gate read."""
    out: list[str] = []
    for c in conds:
        if not isinstance(c, dict):
            continue
        if "any" in c:
            out += _unknown_in_whys(c.get("any") or [], values, entry)
        elif "unknown_in" in c and not _unknown(values.get(str(c.get("fact")))) and _holds(c, values, entry) is None:
            out.append(str(c.get("why") or c.get("fact")))
    return out


_AUTO_WORDS = {
    "gpu_sm": "the compute capability of every GPU of the box, which was not read (a GPU NVML or nvidia-smi could not "
    "read may be of any capability)",
    "torch_cuda": "the CUDA version torch was built for, which the facts do not say (a torch of no +cuXXX tag, or not "
    "read)",
    "speculative_topk": "the top-k SGLang picks from the model's architecture, which the gate could not read (give "
    "--speculative-eagle-topk, or make the model's config.json readable)",
    "attention_backend": "the attention backend SGLang picks for the GPU and the model (give --attention-backend)",
    "mla_dcp_decode_backend": "the decode attention backend SGLang picks for the GPU and the model (give "
    "--attention-backend or --decode-attention-backend)",
    "mla_verify_backend": "the attention backend SGLang picks for the GPU and the model, which runs the target verify "
    "(give --attention-backend or --prefill-attention-backend)",
    "model_architecture": "the model's architecture, which the gate could not read (make its config.json readable)",
    "moe_ep_below_tp": "the expert parallel size, which the gate could not read (give --ep-size as a whole number)",
    "model_mla": "whether this SGLang runs the model as MLA, which the gate could not tell (its config.json not read, "
    "or a release newer than the MLA data)",
    "model_dsa": "whether the model is one SGLang's DSA backend takes (an architecture it lists with index_topk in "
    "config.json), which the gate could not tell (its config.json not read)",
    "trtllm_gen_heads_unsupported": "the model's attention heads, which the gate could not read from its config.json",
    "trtllm_mha_page_size": "the page size, which another backend of the command sets as well (give one backend)",
    "gpu_uses_xqa": "the GPU, which the gate could not read (SM90 and SM120 decode with XQA and take any page size)",
    "hybrid_gdn_backend_refused": "the model's config.json (model_type), the GPU, or the attention backend SGLang "
    "picks itself, which the gate could not read (give --attention-backend, make the model's config.json readable)",
    "model_backend_refused": "the backend of a side the command leaves open while giving another attention flag "
    "(give --attention-backend, or both --prefill- and --decode-attention-backend)",
    "model_moe": "whether the model has routed experts, which the gate could not tell (its config.json not read)",
    "model_quant_method": "the checkpoint's own quantization, which the gate could not tell (its config.json not read)",
    "model_dtype": "the dtype the model runs in, which the gate could not tell (give --dtype, or make the model's "
    "config.json readable)",
    "draft_model_moe": "whether the speculative draft model has routed experts, which the gate could not tell (its "
    "config.json not read)",
    "moe_a2a_backend": "the MoE all-to-all backend, which SGLang may set itself for this model or these flags (give "
    "--moe-a2a-backend, or make the model's config.json readable)",
    "attention_dp_any": "whether attention runs data parallel, which a flag of the command may make SGLang set itself",
    "elastic_ep_scaling": "whether Elastic EP scale-up is on, which needs --max-ep-size as a whole number",
    "decode_cuda_graph": "whether SGLang captures decode CUDA graphs (the backend its hooks resolve, which the gate "
    "does not read; --disable-cuda-graph turns them off)",
}


def gpu_majors(facts: Mapping[str, Any]) -> set[int] | None:
    """The GPU majors of the box from its facts; None when they are not all known: no GPU listed, or a GPU whose
    compute capability was not read (NVML or nvidia-smi failed on it). Such a GPU may be of any major, and the
    rules judged on the majors say unknown then; before, it was dropped, and a box of H200s with one GPU not read
    was judged as Hopper alone (a rule that refuses on SM120 passed: fail open)."""
    from stackcheck.facts.model import cc_tuple

    ccs = [cc_tuple(g.get("compute_capability")) if isinstance(g, dict) else None for g in facts.get("gpus") or []]
    if not ccs or any(t is None for t in ccs):
        return None
    return {t[0] for t in ccs if t is not None}


def lowest_gpu_sm(facts: Mapping[str, Any]) -> int | None:
    """The lowest compute capability among the box's GPUs as major * 10 + minor (SGLang's model loader compares that
    number with the quantization's get_min_capability on each rank's GPU); None when a GPU's capability was not read
    or no GPU is listed (gpu_majors' rule: such a GPU may be of any capability)."""
    from stackcheck.facts.model import cc_tuple

    ccs = [cc_tuple(g.get("compute_capability")) if isinstance(g, dict) else None for g in facts.get("gpus") or []]
    if not ccs or any(t is None for t in ccs):
        return None
    return min(t[0] * 10 + t[1] for t in ccs if t is not None)


def known_gpu_majors(facts: Mapping[str, Any]) -> set[int] | None:
    """The majors of the GPUs whose compute capability was read (None when none was): for the attention backends
    SGLang picks on them (auto_backend_features, auto_backend_unread), where a pick is a requirement and requiring
    the picks of the GPUs read never passes a launch; the GPUs not read make the verdicts' per-GPU rules unknown."""
    from stackcheck.facts.model import cc_tuple

    ccs = [cc_tuple(g.get("compute_capability")) for g in facts.get("gpus") or [] if isinstance(g, dict)]
    return {t[0] for t in ccs if t is not None} or None


def backends_not_running(mapping: Mapping[str, Any], statuses: Mapping[str, str]) -> dict[str, str]:
    """The attention backends this box cannot run, with why, for the advice of a refusal: those of another
    platform (refusals.auto.attention_backend.other_platforms: Ascend NPU, Intel XPU) and those whose feature
    (--attention-backend's choices) is blocked here by its verdict (`statuses`: feature id -> status), such as
    fa3 outside SGLang's FA3 majors. A backend with no feature and no platform is not judged (left in)."""
    auto = ((mapping.get("refusals") or {}).get("auto") or {}).get("attention_backend") or {}
    out = {str(b): f"a backend for {p}, not this box's GPUs" for b, p in (auto.get("other_platforms") or {}).items()}
    option: Mapping[str, Any] = next(
        (o for o in mapping.get("options") or [] if o.get("flag") == "--attention-backend"), {}
    )
    for backend, features in (option.get("choices") or {}).items():
        blocked = [str(f) for f in features or [] if statuses.get(str(f)) == "blocked"]
        if blocked and str(backend) not in out:
            out[str(backend)] = f"{', '.join(blocked)} blocked on this box"
    return out


def idle_moe_choice(
    d: Derived, mapping: Mapping[str, Any], version: str | None, architecture: str | None, models: Mapping[str, Any]
) -> tuple[str, str] | None:
    """Where the command's --moe-runner-backend value runs only in MoE layers (launch.json option `moe_only`) and
    this launch gives it none: (the requirement's `why`, the reason). A model whose config.json the preflight read
    and which names no routed experts; or, on the releases of `unquantized_idle`, a MoE model loaded unquantized
    (no --quantization, no quant_method in the checkpoint) with no MoE all-to-all backend, whose unquantized MoE
    method builds a Triton runner whatever the flag. None otherwise (not read: the need stays, fail closed)."""
    option = next((o for o in mapping.get("options") or [] if o.get("flag") == "--moe-runner-backend"), None)
    spec = option.get("moe_only") if isinstance(option, Mapping) else None
    value = d.options.get("--moe-runner-backend")
    if not isinstance(spec, Mapping) or value not in (spec.get("choices") or []):
        return None
    why = f"--moe-runner-backend {value}"
    # a draft model the command names runs its MoE layers on this runner too unless --speculative-moe-runner-backend
    # says otherwise (sglang 0.5.9 layers/moe/utils.py:160-164, 0.5.23 :471-496; 0.5.4 has one runner for both):
    # the need stays unless that draft is read as dense
    if "draft model" in models and d.options.get("--speculative-moe-runner-backend") is None:
        if _model_moe(models.get("draft model")) is not False:
            return None
    read = models.get("model")
    moe = _model_moe(read)
    if moe is False:
        return why, "the model's config.json names no routed experts, so no MoE layer runs this runner"
    idle = spec.get("unquantized_idle")
    if moe is not True or version is None or not isinstance(idle, str) or _version_in(version, idle) is not True:
        return None
    qcfg = read.get("quantization_config") if isinstance(read, Mapping) else None
    quantized = d.options.get("--quantization") is not None or d.launch.get("model_quant_method") is not None
    if quantized or qcfg is not None:
        return None
    if _a2a_values(d, reading_flags(mapping, version), architecture)["moe_a2a_backend"] != "none":
        return None
    return why, (
        f"SGLang {version} runs an unquantized MoE model's MoE layers on Triton whatever this runner (its unquantized "
        "MoE method has no DeepGEMM path), and the command gives no --quantization, the checkpoint no quant_method "
        "and no MoE all-to-all backend"
    )


def drop_idle_needs(d: Derived, mapping: Mapping[str, Any], why: str, reason: str) -> None:
    """Drop the features a flag value asked for (`why`: the requirement's flag and value) where it never runs for
    this launch: each is needed then only as launch.json's defaults say (DeepGEMM's warning), else listed as off."""
    from stackcheck.launch import gate

    dropped = [r for r in d.required if not r.check and r.why == why and r.kind == "explicit"]
    for r in dropped:
        d.required.remove(r)
    for feature in dict.fromkeys(r.feature for r in dropped):
        kept = False
        for spec in mapping.get("defaults") or []:
            if (
                isinstance(spec, dict)
                and spec.get("feature") == feature
                and gate._conds(spec.get("when"), d, d.defaults)
            ):
                kind = "default" if spec.get("refuse", True) else "default-warn"
                text = (
                    "on by default" if kind == "default" else "on by default; fails only with some models, so it warns"
                )
                gate._add(d, feature, kind, text)
                kept = True
        if not kept and not any(r.feature == feature and not r.check for r in d.required):
            d.off.append(f"{feature}: off ({why}: {reason})")


def checkpoint_quantized(pre: Any) -> bool | None:
    """Whether the served model's checkpoint carries a quantization, as the gate's preflight read its config.json:
    False where it was read and holds none (no quant_method, nothing SGLang would not map), True where it holds
    one, None where it was not read."""
    for info in getattr(pre, "models", None) or []:
        if getattr(info, "role", None) == "model":
            if getattr(info, "attention", None) is None:
                return None
            return getattr(info, "quant_method", None) is not None or getattr(info, "quant_why", None) is not None
    return None


def online_quantization_needs(d: Derived, mapping: Mapping[str, Any], quantized: bool | None) -> None:
    """--quantization of a value launch.json's option lists under `checkpoint_unquantized`, on a checkpoint the
    preflight read and found unquantized (SGLang quantizes it while loading): the choice's needs replaced by those."""
    from stackcheck.launch import gate

    option = next((o for o in mapping.get("options") or [] if o.get("flag") == "--quantization"), None)
    spec = option.get("checkpoint_unquantized") if isinstance(option, Mapping) else None
    value = d.options.get("--quantization")
    if quantized is not False or not isinstance(spec, Mapping) or value not in (spec.get("choices") or {}):
        return
    why = f"--quantization {value}"
    d.required = [r for r in d.required if r.check or r.why != why or r.kind != "explicit"]
    gate._add_requirements(d, spec["choices"][value], f"{why} on a checkpoint without quantization", d.defaults)


def model_architecture(pre: Any) -> str | None:
    """The target model's first architecture (config.json `architectures[0]`, what SGLang's auto choices read), from
    the gate's preflight; None when it did not read the model."""
    for info in getattr(pre, "models", None) or []:
        if getattr(info, "role", None) == "model" and getattr(info, "architectures", None):
            return str(info.architectures[0])
    return None


def moe_runner_auto(d: Derived, mapping: Mapping[str, Any], version: str | None, pre: Any) -> str | None:
    """launch.moe_runner_auto: the MoE runner SGLang picks itself for the served model where --moe-runner-backend
    is auto or not given (launch.json refusals.auto.moe_runner, ireal2): a `picks` entry's backend where the
    release, the model's first architecture, its quantization (--quantization, else the checkpoint's quant_method;
    the checkpoint's alone with `quantization_from` checkpoint) and, where the pick names one, the resolved
    all-to-all backend match; "unread" where an override not modelled may pick one (an
    `unmodelled` architecture, a quantization of `unmodelled_quantizations`, an all-to-all backend set or possibly
    set, a picks architecture with another quantization) or the model was not read; "auto" where SGLang picks none
    (imoe6: also a checkpoint without quantization under an `a2a_leave_auto` backend, where the architecture's pick
    is `a2a_only` or no override is listed). None where the runner is given, no model is named, or the release is
    outside the entry's `read` (not modelled). The GPU side of a pick (majors, torch CUDA) is the reading rule's
    `when`."""
    spec = ((mapping.get("refusals") or {}).get("auto") or {}).get("moe_runner")
    if not isinstance(spec, Mapping) or version is None or d.entrypoint is None:
        return None
    if _version_in(version, str(spec.get("read", ""))) is not True:
        only = spec.get("read_checkpoint_weights")  # (absent: no release read so; an empty specifier admits all)
        if isinstance(only, str) and only and _version_in(version, only) is True:
            return _checkpoint_weights_pick(d, mapping, version, pre, spec)  # imodel3 (none since imoe5)
        return None
    if d.options.get("--moe-runner-backend") not in (None, "auto"):
        return None  # the flag decides: launch.moe_runner_backend
    roles = {str(getattr(i, "role", "")) for i in getattr(pre, "models", None) or []}
    if "model" not in roles:
        return None
    architecture = model_architecture(pre)
    if architecture is None:
        return "unread"
    flag = d.options.get("--quantization")
    held = getattr(pre, "launch", {}).get("model_quant_method")
    quant = flag if isinstance(flag, str) else held if isinstance(held, str) else None
    declared = reading_flags(mapping, version)
    a2a = _a2a_values(d, declared, architecture)["moe_a2a_backend"]
    for entry in mapping.get("env") or []:  # a variable with which SGLang sets the all-to-all backend itself
        if isinstance(entry, Mapping) and isinstance(entry.get("sets_a2a"), Mapping):
            if d.env.get(str(entry.get("name"))) is True:
                a2a = _UNKNOWN
    # (imoe6) a checkpoint without quantization under an all-to-all backend whose hooks leave an auto runner alone
    # (irev86) a checkpoint whose quantization the preflight saw but could not map (quant_why, no quant_method: an
    # unmapped hf_quant_config.json quant_algo, a quantization_config without quant_method, one in text_config only)
    # is not known to be unquantized: no reading that rests on SGLang's `quantization is None` holds for it
    unsure = quant is None and checkpoint_quantized(pre) is True
    leaves = quant is None and not unsure and isinstance(a2a, str) and a2a in _a2a_leaving_auto(spec, version)
    a2a_other = False  # a pick of this architecture for another all-to-all backend only
    for pick in spec.get("picks") or []:
        if not isinstance(pick, Mapping) or _version_in(version, str(pick.get("versions", ""))) is not True:
            continue
        if architecture in [str(a) for a in pick.get("architectures") or []]:
            own = held if isinstance(held, str) else None  # quantization_from checkpoint: the flag is not read
            method = own if pick.get("quantization_from") == "checkpoint" else quant
            if "a2a" in pick and a2a != pick.get("a2a"):
                # (imoe6) another pick of the architecture may name this backend; an `a2a_only` override picks
                # nothing under a backend that leaves the runner auto
                a2a_other = a2a_other or not (leaves and pick.get("a2a_only") is True)
                continue
            if _checkpoint_weights_match(pick.get("checkpoint_weights"), held, pre):
                return str(pick.get("backend"))  # SGLang's Kimi K2 / K2.5 INT4 test, whatever --quantization (imodel2)
            if method is None and unsure:
                return "unread"  # (irev86) `unquantized` true or false would read an unknown quantization as none
            if method is None and pick.get("unquantized") is True:
                return str(pick.get("backend"))  # no quantization at all: the pick's `quantization is None` (icubin3)
            if method is None and pick.get("unquantized") is False:
                break  # (imoe6) the override makes no pick for a checkpoint without quantization
            if method not in [str(q) for q in pick.get("quantizations") or []]:
                return "unread"
            return str(pick.get("backend"))
    if a2a_other:
        return "unread"
    for entry in spec.get("unmodelled") or []:
        if isinstance(entry, Mapping) and _version_in(version, str(entry.get("versions", ""))) is True:
            if architecture in [str(a) for a in entry.get("architectures") or []]:
                return "unread"
    if quant in [str(q) for q in spec.get("unmodelled_quantizations") or []] or (a2a != "none" and not leaves):
        return "unread"
    return "auto"


def _a2a_leaving_auto(spec: Mapping[str, Any], version: str) -> set[str]:
    """The all-to-all backends whose argument hooks leave an auto MoE runner alone in this release
    (refusals.auto.moe_runner a2a_leave_auto, imoe6: deepep on SGLang 0.5.20-0.5.23)."""
    found: set[str] = set()
    for entry in spec.get("a2a_leave_auto") or []:
        if isinstance(entry, Mapping) and _version_in(version, str(entry.get("versions", ""))) is True:
            found.update(str(b) for b in entry.get("backends") or [])
    return found


def _checkpoint_weights_pick(
    d: Derived, mapping: Mapping[str, Any], version: str, pre: Any, spec: Mapping[str, Any]
) -> str | None:
    """moe_runner_auto for a release of `read_checkpoint_weights` (imodel3): only its picks with checkpoint_weights were
    read (SGLang 0.5.10-0.5.11's Kimi K2 / K2.5 INT4 test, until imoe5 read 0.5.9 on), so the pick's backend where
    one holds for the served model's first architecture, its checkpoint and the resolved all-to-all backend, and None
    (the fact absent, as for any release outside `read`) everywhere else."""
    if d.options.get("--moe-runner-backend") not in (None, "auto"):
        return None
    roles = {str(getattr(i, "role", "")) for i in getattr(pre, "models", None) or []}
    architecture = model_architecture(pre) if "model" in roles else None
    if architecture is None:
        return None
    held = getattr(pre, "launch", {}).get("model_quant_method")
    a2a = _a2a_values(d, reading_flags(mapping, version), architecture)["moe_a2a_backend"]
    for entry in mapping.get("env") or []:  # a variable with which SGLang sets the all-to-all backend itself
        if isinstance(entry, Mapping) and isinstance(entry.get("sets_a2a"), Mapping):
            if d.env.get(str(entry.get("name"))) is True:
                a2a = _UNKNOWN
    for pick in spec.get("picks") or []:
        if not isinstance(pick, Mapping) or "checkpoint_weights" not in pick:
            continue
        if _version_in(version, str(pick.get("versions", ""))) is not True:
            continue
        if architecture not in [str(a) for a in pick.get("architectures") or []]:
            continue
        if "a2a" in pick and a2a != pick.get("a2a"):
            continue  # (another or an unknown all-to-all backend: not this pick; the fact stays absent, as before)
        if _checkpoint_weights_match(pick.get("checkpoint_weights"), held, pre):
            return str(pick.get("backend"))
    return None


def auto_pick_off_gpus(
    picked: str | None, mapping: Mapping[str, Any], version: str | None, majors: set[int] | None
) -> bool:
    """(irec3) True where SGLang's own MoE runner pick (moe_runner_auto's `picked`) cannot happen on this box: every
    refusals.auto.moe_runner pick of the release with that backend names its GPU majors (the is_sm100 test of
    arg_groups/overrides.py: majors [10]) and no GPU of the box has one of them. moe_runner_auto leaves the GPU to the
    rules that read it; a launch requirement's scope (required_by) that reads the pick has no GPU, so it reads "auto"
    where this holds. False where the majors are not all known (gpu_majors None), the pick is "unread" or "auto", or a
    pick of that backend names no majors."""
    if picked in (None, "auto", "unread") or version is None or not majors:
        return False
    spec = ((mapping.get("refusals") or {}).get("auto") or {}).get("moe_runner")
    if not isinstance(spec, Mapping):
        return False
    picks = [p for p in spec.get("picks") or [] if isinstance(p, Mapping) and p.get("backend") == picked]
    picks = [p for p in picks if _version_in(version, str(p.get("versions", ""))) is True]
    if not picks:
        return False
    for pick in picks:
        named = pick.get("majors")
        if not isinstance(named, list) or not named or majors & {m for m in named if isinstance(m, int)}:
            return False
    return True


def _checkpoint_weights_match(spec: Any, held: Any, pre: Any) -> bool:
    """Whether a pick's `checkpoint_weights` holds (imodel2): the checkpoint's own quant_method is its quant_method
    and config.json's quantization_config.config_groups.group_0.weights has each of its group_0_weights values (the
    gate's preflight ModelInfo.quant_group0_weights); False where the pick has none or the weights were not read."""
    if not isinstance(spec, Mapping) or held != spec.get("quant_method"):
        return False
    weights = next((getattr(i, "quant_group0_weights", None) for i in getattr(pre, "models", None) or []
                    if getattr(i, "role", None) == "model"), None)  # fmt: skip
    wanted = spec.get("group_0_weights")
    if not isinstance(weights, Mapping) or not isinstance(wanted, Mapping):
        return False
    return all(k in weights and weights[k] == v for k, v in wanted.items())  # Python's ==, as SGLang's test


def launch_model_moe(models: Mapping[str, Any]) -> bool | None:
    """launch.model_moe (icubin3): whether the launch runs any MoE layer, from the config.json keys the gate's
    preflight read by role (model_attention): True where the served model or the speculative draft model it names
    has routed experts (_model_moe), False where the model and that draft were both read as dense (a launch without a
    draft model runs the target's own layers as its draft, SGLang's default), None where either was not read or
    its experts could not be told (the rules on the MoE runners stay as they were: fail closed)."""
    if "model" not in models:
        return None
    found = [_model_moe(models.get(role)) for role in ("model", "draft model") if role in models]
    if any(m is True for m in found):
        return True
    return False if all(m is False for m in found) else None


def launch_draft_model_moe(models: Mapping[str, Any]) -> bool | None:
    """launch.draft_model_moe (icute2): whether the speculative draft model has routed experts, read as the refusals'
    draft_model_moe is (the draft model's config.json, the target's where the command names no draft model, as SGLang
    loads it for MTP / NEXTN); None where it was not read or its experts could not be told (fail closed)."""
    role = "draft model" if "draft model" in models else "model"
    if role not in models:
        return None
    found = _model_moe(models.get(role))
    return found if isinstance(found, bool) else None


#: (irec3) the architectures whose SGLang model file builds its routed top-k without grouped top-k and without a
#: correction bias, so that select_experts never reaches biased_grouped_topk_gpu and FlashInfer's fused_topk_deepseek
#: (the DeepSeek-V3 fused routing, whose JIT module compiles memoryUtils.cu): sglang 0.5.1-0.5.23 models/qwen3_moe.py
#: `TopK(top_k=..., renormalize=..., use_grouped_topk=False[, layer_id=...])` (0.5.9 :230-233, 0.5.16 :256-259, 0.5.23
#: :258-261) and models/qwen2_moe.py `TopK(top_k=..., renormalize=...[, layer_id=...])` (0.5.23 :307-311), TopK's
#: defaults use_grouped_topk False and correction_bias None (0.5.23 layers/moe/topk.py :694-700), every wheel of the
#: shared test cache 0.5.1-0.5.23 read (2026-12-07). Any other MoE architecture is not read for this: unknown.
NO_DSV3_ROUTING_ARCHITECTURES = frozenset({"Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM"})
NO_DSV3_ROUTING_RELEASES = ">=0.5.1,<=0.5.23"


def launch_model_dsv3_routing(models: Mapping[str, Any], version: str | None) -> bool | None:
    """launch.model_dsv3_routing (irec3): whether the launch may take SGLang's DeepSeek-V3 routing (FlashInfer's
    fused_topk_deepseek, a JIT build of memoryUtils.cu) for the served model or the speculative draft model the gate
    read (model_attention's roles). False where every role read is dense, or has routed experts under an architecture
    of NO_DSV3_ROUTING_ARCHITECTURES on a release read for it; None (not known: the scope that reads it is met, fail
    closed) where the model or a named draft was not read, its experts could not be told, another MoE architecture
    is served (the DeepSeek-V3 family and every architecture not read), or the installed SGLang is not one read."""
    if "model" not in models:
        return None
    for role in ("model", "draft model"):
        if role not in models:
            continue
        read = models.get(role)
        moe = _model_moe(read)
        if moe is False:
            continue
        if moe is not True or not isinstance(read, Mapping) or version is None:
            return None
        archs = read.get("architectures")
        if not (isinstance(archs, list) and archs and all(a in NO_DSV3_ROUTING_ARCHITECTURES for a in archs)):
            return None
        if _version_in(version, NO_DSV3_ROUTING_RELEASES) is not True:
            return None
    return False


#: (ifc64) the model types whose SGLang model file passes config.norm_topk_prob as its routed top-k's renormalize
#: (sglang 0.5.20 / 0.5.23 models/qwen2_moe.py :315 / :309, qwen3_moe.py :251 / :254 `getattr(config,
#: "norm_topk_prob", True)`, deepseek_v2.py :663 / :789 (DeepSeek-V2 and V3), glm4_moe.py :437 / :452), with the
#: default transformers' config class of that model type gives where config.json has no norm_topk_prob (5.12.1 and
#: 5.19.0 models/*/configuration_*.py: Qwen2MoeConfig and Qwen3MoeConfig False, DeepseekV2Config False,
#: DeepseekV3Config True, Glm4MoeConfig True; the attribute is always set, so SGLang's getattr default never applies)
MOE_RENORMALIZE_DEFAULTS: dict[str, bool] = {
    "qwen2_moe": False,
    "qwen3_moe": False,
    "deepseek_v2": False,
    "deepseek_v3": True,
    "glm4_moe": True,
    # (imodel4) Cohere2-MoE (Command A+, North): transformers has no cohere2_moe class in the pins SGLang 0.5.13-0.5.19
    # carry (4.57.1 / 5.6.0 / 5.8.1: no models/cohere2_moe), so SGLang registers its own (configs/cohere2_moe.py,
    # 0.5.13-0.5.23: `norm_topk_prob: bool = True`, CONFIG_MAPPING.register at the end), and models/cohere2_moe.py
    # passes getattr(config, "norm_topk_prob", True) as the top-k's renormalize (0.5.13-0.5.22 :248 / :277, 0.5.23
    # :248 / :279)
    "cohere2_moe": True,
}


#: (imodel3) the model types whose SGLang model file hard-codes its routed top-k's renormalize, whatever config.json
#: says: Llama 4 (sglang 0.5.9-0.5.23 models/llama4.py Llama4MoE's TopK(renormalize=False, custom_routing_function=
#: Llama4MoE.custom_routing_function): 0.5.9 :110, 0.5.12 :115, 0.5.16 :114, 0.5.20 :113, 0.5.22 :115, 0.5.23 :116).
#: Llama 4's config.json names model_type llama4 at the top and llama4_text in its text_config (a text-only
#: checkpoint: llama4_text at the top)
MOE_RENORMALIZE_FIXED: dict[str, bool] = {
    "llama4": False,
    "llama4_text": False,
}


def launch_model_moe_renormalize(models: Mapping[str, Any]) -> bool | None:
    """launch.model_moe_renormalize (ifc64): whether the served model's routed top-k renormalizes its weights, which
    SGLang 0.5.20-0.5.23's BF16 trtllm-gen MoE asserts (layers/moe/moe_runner/flashinfer_trtllm.py
    fused_experts_none_to_flashinfer_trtllm_bf16: 'Renormalize is required for flashinfer trtllm moe'): config.json's
    norm_topk_prob, else its model type's default (MOE_RENORMALIZE_DEFAULTS); the model file's own value where it
    hard-codes one (MOE_RENORMALIZE_FIXED: Llama 4's False, imodel3); None where the model was not read, its
    model type is not one listed, or the value is no boolean (no verdict: the other rules stand)."""
    read = models.get("model")
    if not isinstance(read, Mapping):
        return None
    kind = read.get("model_type")
    if isinstance(kind, str) and kind in MOE_RENORMALIZE_FIXED:
        return MOE_RENORMALIZE_FIXED[kind]  # imodel3: the model file's own value, config.json not read for it
    if not isinstance(kind, str) or kind not in MOE_RENORMALIZE_DEFAULTS:
        return None
    value = read.get("norm_topk_prob", MOE_RENORMALIZE_DEFAULTS[kind])
    return value if isinstance(value, bool) else None


#: (imend17) the model types whose routed top-k SGLang 0.5.23 keeps in SGLang on the trtllm-gen runner when it does not
#: renormalize, so the BF16 path's renormalize assertion is never reached: 0.5.23 layers/moe/topk.py:613-650
#: _can_bypass_trtllm_routing hands the top-k to FlashInfer (TopKOutputFormat.BYPASSED, :793-804) only where the
#: routing method the model binds matches it: Renormalize / RenormalizeNaive need renormalize true (:642-643),
#: DeepSeekV3 grouped top-k with a correction bias and renormalize true (:633-639); otherwise the output is STANDARD and
#: layers/moe/moe_runner/flashinfer_trtllm.py fused_experts_none_to_flashinfer_trtllm_bf16 takes the routed call
#: (materialized_topk :1692-1695), whose assertion :1719-1722 stands under `if not use_routed_topk`. The methods bound:
#: models/qwen3_moe.py:273 Renormalize, qwen2_moe.py:336 RenormalizeNaive, deepseek_v2.py:763 getattr(config,
#: "routing_method_type", DeepSeekV3) (DeepSeek-V2 and V3), glm4_moe.py:445 DeepSeekV3. Llama 4 (llama4.py:128
#: Llama4) is handed on with one expert per token (:624-630) and reaches it. 0.5.20-0.5.22 hand every top-k on
#: (topk.py 0.5.20 :655-658, 0.5.21 :682-685, 0.5.22 :735-738: BYPASSED for flashinfer_trtllm whatever the routing).
#: Read in the wheels (~/.cache/stackcheck-tests/wheels), not run.
MOE_TOPK_KEPT_0523: frozenset[str] = frozenset({"qwen2_moe", "qwen3_moe", "deepseek_v2", "deepseek_v3", "glm4_moe"})

#: (imodel4) the Cohere2-MoE routing SGLang 0.5.23 keeps in SGLang where its top-k does not renormalize: models/
#: cohere2_moe.py:247-268 reads config.expert_selection_fn (default "softmax"); "sigmoid" without norm_topk_prob binds
#: RoutingMethodType.Sigmoid with its own cohere2_sigmoid_topk as custom routing function (:251-253), which
#: _can_bypass_trtllm_routing never hands on (topk.py:632-633: a custom routing function other than Llama 4's), so the
#: routed BF16 call runs (no assertion); any other value binds Default (softmax -> top-k, :262-267), which it hands on
#: (:646-647: Default with softmax and no renormalize), and the BF16 path asserts (flashinfer_trtllm.py:1719-1722).
#: 0.5.13-0.5.22 hand either on (the custom function then unused: topk.py BYPASSED for flashinfer_trtllm whatever the
#: routing, 0.5.13 :479-482 ... 0.5.22 :735-738).
COHERE2_KEPT_SELECTION_0523 = "sigmoid"


def launch_model_moe_topk_kept(models: Mapping[str, Any]) -> bool | None:
    """launch.model_moe_topk_kept (imend17): whether SGLang 0.5.23 keeps the served model's non-renormalizing routed
    top-k in SGLang on the trtllm-gen runner (MOE_TOPK_KEPT_0523), so its BF16 renormalize assertion is not reached:
    true for those model types where config.json states no routing_method_type (deepseek_v2.py reads one from the
    config), false for Llama 4 (MOE_RENORMALIZE_FIXED: handed on); for Cohere2-MoE true where expert_selection_fn is
    sigmoid and false for any other string (imodel4: COHERE2_KEPT_SELECTION_0523); None otherwise (not read: the rules
    stand)."""
    read = models.get("model")
    if not isinstance(read, Mapping):
        return None
    kind = read.get("model_type")
    if isinstance(kind, str) and kind in MOE_RENORMALIZE_FIXED:
        return False
    if isinstance(kind, str) and kind in MOE_TOPK_KEPT_0523 and "routing_method_type" not in read:
        return True
    if kind == "cohere2_moe":  # (imodel4) kept only for a sigmoid selection (COHERE2_KEPT_SELECTION_0523)
        selection = read.get("expert_selection_fn", "softmax")
        return selection == COHERE2_KEPT_SELECTION_0523 if isinstance(selection, str) else None
    return None


def moe_renormalize_unread(models: Mapping[str, Any]) -> str | None:
    """Why launch.model_moe_renormalize is not known although config.json states norm_topk_prob (irobust12): a model
    type of MOE_RENORMALIZE_DEFAULTS whose value is no boolean (0, 1, null, a string, a list). transformers 5.12.1 /
    5.19.0 (SGLang 0.5.20-0.5.23's pins) validate the config class's `norm_topk_prob: bool` with huggingface_hub's
    @strict (DeepseekV2Config `bool | None`) and raise on another type; transformers 4 passes the value on and SGLang's
    assert reads its truth (read in the wheels and huggingface_hub 2.4.0's strict run here, irobust12; inferred for
    the pins between). None where the value is a boolean, absent, or the model not read or of another type."""
    read = models.get("model")
    if not isinstance(read, Mapping):
        return None
    kind = read.get("model_type")
    if not isinstance(kind, str) or kind not in MOE_RENORMALIZE_DEFAULTS or "norm_topk_prob" not in read:
        return None
    value = read["norm_topk_prob"]
    if isinstance(value, bool):
        return None
    if value is None:
        shown = "null"
    elif isinstance(value, str):
        shown = f"the string {value[:30]!r}"
    elif isinstance(value, int | float):
        shown = f"the number {value!r}"[:40]
    else:
        shown = "an array" if isinstance(value, list) else "an object"
    if kind == "cohere2_moe":  # (imodel4) SGLang's own config class, not transformers' strict one
        return (
            f"config.json's norm_topk_prob is {shown}, no boolean (SGLang's own Cohere2MoeConfig keeps it as written; "
            "what its truth does on each runner is not read)"
        )
    return (
        f"config.json's norm_topk_prob is {shown}, no boolean (transformers 5's strict {kind} config raises on it at "
        "load; transformers 4 passes it on and SGLang's BF16 trtllm-gen MoE asserts its truth)"
    )


def model_attention(pre: Any) -> dict[str, Any]:
    """The attention keys of each model's config.json the gate's preflight read, by role ("model", "draft model");
    a role the preflight looked for but could not read maps to None, one the command does not name is absent."""
    return {str(info.role): getattr(info, "attention", None) for info in getattr(pre, "models", None) or []}


def refusal_problems(
    d: Derived,
    mapping: Mapping[str, Any],
    sglang_version: str | None,
    majors: set[int] | None = None,
    architecture: str | None = None,
    models: Mapping[str, Any] | None = None,
    release_flags: set[str] | _Unset | None = _UNSET,
    torch_cuda: str | None = None,
    unrunnable: Mapping[str, str] | None = None,
    model_mla: bool | None = None,
    gpu_sm: int | None = None,
    box_memory: BoxMemory | None = None,
) -> list[Problem]:
    """The launch's flag combinations that the installed SGLang refuses at argument parsing (blocked, effect
    crash), or may refuse depending on a value it chooses at start (unknown). Nothing without a release, for a
    command that is no SGLang launch, or for a release no range of a rule covers. `release_flags`:
    gate._declared_in(mapping, sglang_version), where the caller judges several launches of one release;
    `torch_cuda`: torch's CUDA build ("12.9"; None: not known), which SGLang's platform tests read; `unrunnable`:
    the attention backends the box cannot run, with why (backends_not_running), which a refusal does not advise;
    `model_mla`: whether the release runs the served model as MLA (None: not known); `gpu_sm`: the lowest compute
    capability of the box's GPUs, major * 10 + minor (lowest_gpu_sm; None: not known)."""
    if sglang_version is None or d.entrypoint is None:
        return []
    table = mapping.get("refusals") or {}
    out: list[Problem] = []
    declared = release_flags  # the release's flags, read when a rule first applies (unless given)
    memo: dict[tuple[bool, ...], dict[str, Any]] = {}  # launch_values' entry-free values, the same for every rule

    def judge(rule: Mapping[str, Any], entry: Mapping[str, Any]) -> Problem | None:
        """The rule's problem with this launch under one of its release entries (None: its conditions do not hold)."""
        nonlocal declared
        if isinstance(declared, _Unset) or declared is None:
            declared = reading_flags(mapping, sglang_version)
        after = not entry.get("before_equal_split", rule.get("before_equal_split"))
        values = launch_values(
            d,
            mapping,
            sglang_version,
            entry,
            majors,
            architecture,
            models,
            declared,
            after,
            torch_cuda,
            unrunnable,
            model_mla,
            memo,
            gpu_sm,
            box_memory,
        )
        conds = [c for c in [*(rule.get("when") or []), *(entry.get("also") or [])] if isinstance(c, dict)]
        results = [_holds(c, values, entry) for c in conds]
        if not results or any(r is False for r in results):
            return None
        allowed = [str(a) for a in entry.get("allowed") or []]
        observe = rule.get("observe")
        if isinstance(observe, list):  # several facts, each with its name
            observed = "; ".join(
                _OBSERVE_LABEL.get(str(f), f"{f} ") + _shown(values.get(str(f)), str(f)) for f in observe
            )
        elif observe:
            observed = _shown(values.get(str(observe)), str(observe))
        else:
            observed = _observed(conds, values)
        judged = [values.get(str(f)) for f in (observe if isinstance(observe, list) else [observe])]
        own = next((j.required for j in judged if isinstance(j, _Judged) and j.required), None)
        fallback = str(entry.get("required_value") or rule.get("required_value", ""))
        required: str | None = ", ".join(allowed) if allowed else own or fallback or None
        shown = {fact: _shown(value, fact) for fact, value in values.items()}
        message = str(rule.get("message", "")).format(
            **shown, required=required or "", observed=observed, first=allowed[0] if allowed else ""
        )
        sources = [*(entry.get("source") or []), *(rule.get("issues") or [])]
        subject = f"refusal {rule.get('id')}"
        # crash: SGLang refuses the combination or the launch stops; wrong-output: nothing refuses it, the server
        # starts and serves wrong results (launch.schema.json refusal_rule.effect, a release entry's own effect
        # first; the gate refuses both)
        effect = "wrong-output" if entry.get("effect", rule.get("effect")) == "wrong-output" else "crash"
        if all(r is True for r in results):
            return Problem(subject, "blocked", effect, message, sources, observed, required)
        missing = "; ".join(
            [
                *(getattr(values[f], "missing", None) or _AUTO_WORDS.get(f, f) for f in _unknown_facts(conds, values)),
                *_unknown_in_whys(conds, values, entry),
            ]
        )
        return Problem(
            subject,
            "unknown",
            None,
            f"SGLang {sglang_version} {_what_it_does(effect, rule.get('checked'))} when {missing} makes it hold: "
            f"{message}",
            sources,
            observed,
            required,
        )

    for rule in table.get("rules") or []:
        if not isinstance(rule, dict):
            continue
        entry = _for_release(rule.get("releases"), sglang_version)
        if entry is None:
            # a post release of a release V that the entries' ranges leave out (PEP 440 puts V.postN in neither <=V
            # nor >V): its code is V's or a later release's, not read; where the rule holds under V's entry or the
            # next releases' one, it is unknown, never silently no rule (imend2: eagle-topk-page-size blocked 0.5.12
            # and said nothing for 0.5.12.post1)
            between = _post_between_entries(rule.get("releases"), sglang_version)
            if between is None:
                continue
            base, neighbours = between
            found = [p for p in (judge(rule, e) for e in neighbours) if p is not None]
            if found:
                first = found[0]
                out.append(
                    Problem(
                        first.subject,
                        "unknown",
                        None,
                        f"SGLang {sglang_version} is a post release of {base}, which this rule's release ranges leave "
                        f"out (PEP 440 puts it in neither <={base} nor >{base}) and whose wheel was not read: it "
                        f"refuses this combination where its code is {base}'s or the next release's: {first.message}",
                        first.source,
                        first.observed,
                        first.required,
                    )
                )
            continue
        if not entry.get("applies"):
            continue
        problem = judge(rule, entry)
        if problem is not None:
            out.append(problem)
    return out


def _what_it_does(effect: str, checked: Any) -> str:
    """What the release does with a combination a refusal rule names, for an unknown verdict's words."""
    if effect == "wrong-output":
        return f"starts and serves wrong output with no error for this combination ({checked or 'never checked'})"
    return f"refuses this combination {checked or 'at argument parsing'}"


def _override_features(
    d: Derived,
    mapping: Mapping[str, Any],
    sglang_version: str,
    majors: set[int],
    torch_cuda: str | None,
    architecture: str | None,
    keys: Mapping[str, Any] | None = None,
) -> tuple[bool, list[tuple[str, str]]]:
    """The attention features a model's own override (launch.json refusals.auto.attention_backend.model_overrides)
    picks on this box when the command leaves the backend open: (whether an override of the model's architecture
    sets the backend on every GPU of the box, (feature, why) for its picks). With the architecture read, the first
    entry of the release whose architectures and config_keys (keys of `keys`, the model's config.json) match is the
    model's override: a flag of its unless_flags, or a GPU where no pick holds and `otherwise` is null, leaves the
    backend to the defaults. `architecture` None (not read): the picks of every override of the release, which the
    model may or may not have (the caller judges them as unknown, not ok)."""
    option: Mapping[str, Any] = next(
        (o for o in mapping.get("options") or [] if o.get("flag") == "--attention-backend"), {}
    )
    choices = option.get("choices") or {}
    cuda = numeric(torch_cuda)
    applies = False
    out: list[tuple[str, str]] = []
    for entry in _overrides_of(mapping, sglang_version, architecture, keys):
        if any(str(f) in d.options for f in entry.get("unless_flags") or []):
            if architecture is not None:
                break  # the model's own override, turned off by a flag: the defaults decide
            continue
        picked: set[str] = set()
        falls = False  # a GPU of the box where the override sets nothing (otherwise null)
        for major in sorted(majors):
            for pick in entry.get("picks") or []:
                if major not in {int(m) for m in pick.get("majors") or []}:
                    continue
                need = numeric(pick.get("torch_cuda_min"))
                if cuda is None or need is None or cuda >= need:
                    picked.add(str(pick["backend"]))
                if need is None or (cuda is not None and cuda >= need):
                    break  # the first pick that holds decides; an unknown CUDA may also fall through
            else:
                if entry.get("otherwise") is None:
                    falls = True
                else:
                    picked.add(str(entry.get("otherwise")))
        who = architecture or " / ".join(str(a) for a in entry.get("architectures") or [])
        for backend in sorted(picked):
            for feature in choices.get(backend) or []:
                why = f"without an attention flag SGLang {sglang_version}'s override for {who} picks {backend} here"
                out.append((str(feature), why))
        if architecture is not None:
            return not falls, out  # the first entry that matches is the model's
    return applies, out


def _per_major(judge: Callable[[set[int]], list[tuple[str, str]]], majors: set[int]) -> list[tuple[str, str]]:
    """(feature, why) for a box with GPUs of several majors: what `judge` finds for each major alone, every major's
    features together (one why per feature, naming each major it holds on). SGLang picks the attention backend
    once, on the GPU the server starts on, and every GPU then runs that pick, so the pick of any major must run on
    the whole box. Before, only entries covering every major counted: a major's own pick counted nowhere (fail
    open). A major where no entry holds requires nothing, as on a box of that major alone."""
    whys: dict[str, list[str]] = {}
    for major in sorted(majors):
        for feature, why in judge({major}):
            texts = whys.setdefault(feature, [])
            text = f"{why} (on the GPUs of major {major}, where the server may start)"
            if text not in texts:
                texts.append(text)
    return [(feature, "; ".join(texts)) for feature, texts in whys.items()]


def auto_backend_unread(
    d: Derived,
    mapping: Mapping[str, Any],
    sglang_version: str | None,
    majors: set[int] | None,
    torch_cuda: str | None,
    architecture: str | None,
    mla_only: bool = False,
) -> list[tuple[str, str]]:
    """Where the gate could not read the model's architecture: the attention features a model override of this
    release would pick on the box, those of the defaults marked `"unread": "unknown"` (SGLang's pick for an MLA
    model) and the DSA kernels SGLang would pick for a DSA model (dsa_defaults; only while no attention flag is
    given, as for the overrides), (feature, why), which the gate judges as unknown where they are not ok.
    `mla_only`: the architecture (`architecture`) was read but not whether SGLang serves it as MLA: the defaults'
    MLA picks alone."""
    if sglang_version is None or d.entrypoint is None or not majors or (architecture is not None and not mla_only):
        return []
    if len(majors) > 1:  # GPUs of several majors: each major's own picks count
        return _per_major(
            lambda one: auto_backend_unread(d, mapping, sglang_version, one, torch_cuda, architecture, mla_only),
            majors,
        )
    if all(f in d.options for f in ("--prefill-attention-backend", "--decode-attention-backend")):
        return []  # every side has its flag
    if mla_only:
        if "--attention-backend" in d.options:
            return []
        return _default_features(d, mapping, sglang_version, majors, torch_cuda, None, True, architecture)
    whys: dict[str, list[str]] = {}  # one entry per feature, naming every override that picks it
    for feature, why in _override_features(d, mapping, sglang_version, majors, torch_cuda, None)[1]:
        whys.setdefault(feature, []).append(why)
    if "--attention-backend" not in d.options:  # the defaults that hold for one kind of model only (MLA)
        for feature, why in _default_features(d, mapping, sglang_version, majors, torch_cuda, None, unread=True):
            whys.setdefault(feature, []).append(why)
        # and the DSA kernels, for a DSA model; like the overrides, judged only while the command leaves the
        # attention choice to SGLang: with a backend named, every unread launch on SM11x/SM12x would be unknown
        for feature, why in dsa_kernel_features(d, mapping, sglang_version, majors, None, None):
            whys.setdefault(feature, []).append(why + " if the model is a DSA one")
    return [(feature, "; ".join(texts)) for feature, texts in whys.items()]


def auto_backend_features(
    d: Derived,
    mapping: Mapping[str, Any],
    sglang_version: str | None,
    majors: set[int] | None,
    torch_cuda: str | None,
    mla: bool | None,
    architecture: str | None = None,
    keys: Mapping[str, Any] | None = None,
) -> list[tuple[str, str]]:
    """The attention features SGLang's own choice of backend needs on this box: a model override's pick where the
    model's first architecture has one (launch.json refusals.auto.attention_backend.model_overrides), else
    (refusals.auto.attention_backend.defaults) (feature, why) for each entry whose release, GPU majors, torch CUDA,
    model kind (`mla`: the model's attention, None when the gate could not read it) and speculative flags match a
    launch that names no attention backend; `keys`: the model's config.json keys the preflight read (the override
    entries' config_keys). Where the override sets nothing on a GPU of the box, its picks and the defaults both
    count. What is unknown counts as a match (the requirement is then judged by the feature's verdict: fail
    closed)."""
    if sglang_version is None or d.entrypoint is None or not majors:
        return []
    if len(majors) > 1:  # GPUs of several majors: each major's own pick counts (SGLang picks on one of them)
        return _per_major(
            lambda one: auto_backend_features(d, mapping, sglang_version, one, torch_cuda, mla, architecture, keys),
            majors,
        )
    if architecture is not None:
        architecture = _seen_architecture(mapping, sglang_version, architecture, keys)
    dsa = [] if architecture is None else dsa_kernel_features(d, mapping, sglang_version, majors, architecture, keys)
    split = [f for f in ("--prefill-attention-backend", "--decode-attention-backend") if f in d.options]
    if "--attention-backend" in d.options or len(split) == 2:
        return dsa  # every side has its flag: neither a model override's pick nor the default is used
    picks: list[tuple[str, str]] = []
    if architecture is not None:
        applies, picks = _override_features(d, mapping, sglang_version, majors, torch_cuda, architecture, keys)
        if applies:
            return dsa + picks
    return dsa + picks + _default_features(d, mapping, sglang_version, majors, torch_cuda, mla, False, architecture)


def _given(d: Derived, flag: str) -> bool:
    """Whether the command gives `flag` (a flag launch.json lists, or one it passes through unread)."""
    return flag in d.options or option_given(d.sglang_args, (flag,), None, abbreviations=False)


def _is_dsa(mapping: Mapping[str, Any], sglang_version: str, architecture: str, keys: Mapping[str, Any] | None) -> bool:
    """Whether SGLang takes the model for a DSA one: an entry of model_overrides whose config_keys name index_topk
    matches its release, architecture (as SGLang sees it) and config.json keys."""
    entries = _overrides_of(mapping, sglang_version, architecture, keys)
    return any("index_topk" in (entry.get("config_keys") or []) for entry in entries)


def model_kernel_features(
    mapping: Mapping[str, Any],
    sglang_version: str | None,
    architecture: str | None,
    d: Derived | None = None,
    majors: set[int] | None = None,
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The kernel paths SGLang takes for a model by its first architecture whatever the flags (launch.json
    refusals.auto.attention_backend.model_features: DeepSeek-V4's FlashMLA sparse prefill, the FlashInfer all-reduce
    fusion SGLang turns on by itself): (required, unread), each (feature, why). `required`: the model was read and
    its architecture and the release match an entry; `unread`: the model was not read (`architecture` None), so
    each entry of the release may hold (the caller judges it as unknown where the feature is blocked). Nothing where
    the SGLang release is not known. An entry's launch conditions (`majors`, `tp_min`, `unless_flags`,
    `unless_values`) are read from `d` and `majors` (the box's GPU majors; None: not known, so a condition on them
    holds); without `d` an entry with launch conditions is left out."""
    from stackcheck.facts.versions import version_in

    auto = ((mapping.get("refusals") or {}).get("auto") or {}).get("attention_backend") or {}
    required: list[tuple[str, str]] = []
    unread: list[tuple[str, str]] = []
    if sglang_version is None:
        return required, unread
    flags: list[set[str]] = []  # the names that are flags of their own, read once where an entry reads a value
    for entry in auto.get("model_features") or []:
        if not isinstance(entry, dict) or version_in(sglang_version, str(entry.get("versions") or "")) is not True:
            continue
        if d is not None and entry.get("unless_values") and not flags:
            flags.append(reading_flags(mapping, sglang_version))
        if not _launch_holds(entry, d, majors, flags[0] if flags else None):
            continue
        names = [str(a) for a in entry.get("architectures") or []]
        why = f"{entry.get('why') or 'a kernel path SGLang takes for this model'} (SGLang {sglang_version})"
        if architecture is None:
            unread.append((str(entry["feature"]), f"{why}; models: {', '.join(names)}"))
        elif architecture in names:
            required.append((str(entry["feature"]), why))
    return required, unread


def _launch_holds(
    entry: Mapping[str, Any], d: Derived | None, majors: set[int] | None, flags: set[str] | None = None
) -> bool:
    """Whether a model_features entry's launch conditions hold: a GPU major of the box among `majors` (the box's
    majors not known: holds), tp at least `tp_min`, none of `unless_flags` given, and each flag of `unless_values`
    absent or given one of its values (`--nnodes 1`, `--moe-a2a-backend none`; a flag given in full is read at its
    last occurrence, abbreviated ones included: `flags`, gate.reading_flags). An entry without conditions holds."""
    keys = ("majors", "tp_min", "unless_flags", "unless_values")
    if not any(k in entry for k in keys):
        return True
    if d is None:
        return False
    wanted = entry.get("majors")
    if isinstance(wanted, list) and majors is not None and not majors & {int(m) for m in wanted}:
        return False
    tp = d.launch.get("tp", 1)
    if isinstance(entry.get("tp_min"), int) and not (isinstance(tp, int) and tp >= entry["tp_min"]):
        return False
    if any(_given(d, str(f)) for f in entry.get("unless_flags") or []):
        return False
    for flag, keep in (entry.get("unless_values") or {}).items():
        value = d.options.get(flag)
        value = option_value(d.sglang_args, (flag,), flags) if value is None and _given(d, flag) else value
        if value is not None and str(value) not in [str(k) for k in keep or []]:
            return False
    return True


def dsa_kernel_features(
    d: Derived,
    mapping: Mapping[str, Any],
    sglang_version: str,
    majors: set[int],
    architecture: str | None,
    keys: Mapping[str, Any] | None,
) -> list[tuple[str, str]]:
    """The DSA prefill/decode kernel SGLang picks itself (launch.json refusals.auto.attention_backend.dsa_defaults):
    (feature, why) for each entry that holds for this launch and box. `architecture` (as SGLang sees it) None: the
    model was not read, so whether it is a DSA model is not known: the entries whose flags and box hold count (the
    caller judges them as unknown); otherwise they count only for a DSA model, less the except clauses. An attention
    flag that names none of an entry's `backends` (SGLang's DSA attention backend) keeps its kernels off. An entry
    with `dcp_size_above` holds only where --dcp-size is above it (or not a whole number)."""
    from stackcheck.facts.versions import version_in

    auto = ((mapping.get("refusals") or {}).get("auto") or {}).get("attention_backend") or {}
    if architecture is not None and not _is_dsa(mapping, sglang_version, architecture, keys):
        return []
    kv = str(d.options.get("--kv-cache-dtype", "auto"))
    flags = ("--attention-backend", "--prefill-attention-backend", "--decode-attention-backend")
    named = {str(d.options[f]) for f in flags if d.options.get(f) is not None}  # the attention backends given

    def holds(clause: Mapping[str, Any]) -> bool:
        if any(_given(d, str(f)) for f in clause.get("flags_absent") or []):
            return False
        if "kv_cache_dtype_in" in clause and kv not in (clause.get("kv_cache_dtype_in") or []):
            return False
        return not ("kv_cache_dtype_not_in" in clause and kv in (clause.get("kv_cache_dtype_not_in") or []))

    out: list[tuple[str, str]] = []
    dcp: list[Any] = []  # --dcp-size as argparse keeps it, read once where an entry asks for it
    for entry in auto.get("dsa_defaults") or []:
        if not isinstance(entry, dict) or version_in(sglang_version, str(entry.get("versions") or "")) is not True:
            continue
        if not majors <= {int(m) for m in entry.get("majors") or []}:
            continue
        if isinstance(entry.get("dcp_size_above"), int):  # an entry for SGLang's DSA DCP override (unknown: holds)
            if not dcp:
                dcp.append(_dcp_size(d, reading_flags(mapping, sglang_version)))
            if isinstance(dcp[0], int) and dcp[0] <= entry["dcp_size_above"]:
                continue
        if any(_given(d, str(f)) for f in entry.get("unless_flags") or []):
            continue
        if not all(_given(d, str(f)) for f in entry.get("only_with_flags") or []):
            continue  # an entry for a mode a flag turns on (--enable-hisparse's own DSA backends)
        if named and entry.get("backends") and not named & {str(b) for b in entry.get("backends") or []}:
            continue  # an attention flag names another backend: SGLang does not pick the DSA one (these kernels)
        if not any(holds(c) for c in entry.get("when_any") or [] if isinstance(c, dict)):
            continue
        if architecture is not None:
            if any((keys or {}).get(str(k)) for k in entry.get("unless_config_true") or []):
                continue
            if any(
                architecture in (x.get("architectures") or [])
                and majors <= {int(m) for m in x.get("majors") or []}
                and holds(x)
                for x in entry.get("except") or []
                if isinstance(x, dict)
            ):
                continue
        why = str(entry.get("why") or "the DSA kernel SGLang picks here")
        out.append((str(entry["feature"]), f"{why} (SGLang {sglang_version})"))
    return out


def _seen_architecture(
    mapping: Mapping[str, Any], sglang_version: str, architecture: str, keys: Mapping[str, Any] | None
) -> str:
    """The architecture SGLang's backend choices see: config.json's, or the one it reloads a config of this
    model_type as (launch.json refusals.auto.attention_backend.architecture_aliases: DeepSeek V3.2)."""
    from stackcheck.facts.versions import version_in

    auto = ((mapping.get("refusals") or {}).get("auto") or {}).get("attention_backend") or {}
    model_type = (keys or {}).get("model_type")
    for alias in auto.get("architecture_aliases") or []:
        if not isinstance(alias, dict) or version_in(sglang_version, str(alias.get("versions") or "")) is not True:
            continue
        if model_type is not None and model_type == alias.get("model_type"):
            return str(alias.get("architecture"))
    return architecture


def _default_features(
    d: Derived,
    mapping: Mapping[str, Any],
    sglang_version: str,
    majors: set[int],
    torch_cuda: str | None,
    mla: bool | None,
    unread: bool = False,
    architecture: str | None = None,
) -> list[tuple[str, str]]:
    """(feature, why) for each entry of refusals.auto.attention_backend.defaults that matches the launch (see
    auto_backend_features). An entry with `"unread": "unknown"` is left out when the model's kind is not known
    (`mla` None): it is what auto_backend_unread judges as unknown instead (`unread` True: those entries only).
    `architecture`: the model's, as SGLang sees it, for entries keyed on an architecture list (architectures,
    except_architectures: deterministic inference's DeepSeek list); None (not read) matches both (fail closed)."""
    split = [f for f in ("--prefill-attention-backend", "--decode-attention-backend") if f in d.options]
    # one split flag alone: the other side is --attention-backend, which SGLang then picks as for a bare launch
    # (its default picker and model overrides key on attention_backend alone, read in 0.5.5-0.5.23)
    side = {"--prefill-attention-backend": "decode", "--decode-attention-backend": "prefill"}.get(
        split[0] if split else ""
    )
    from stackcheck.facts.versions import version_in

    auto = ((mapping.get("refusals") or {}).get("auto") or {}).get("attention_backend") or {}
    cuda = numeric(torch_cuda)
    spec = "--speculative-algorithm" in d.options
    topk = numeric(d.options.get("--speculative-eagle-topk"))
    out: list[tuple[str, str]] = []
    entries = [
        e
        for e in auto.get("defaults") or []
        if isinstance(e, dict) and version_in(sglang_version, str(e.get("versions") or "")) is True
    ]

    # an entry with when_flags holds only while the command gives all of them (an item that is a list: one of its
    # flags), and then it replaces the entries without when_flags (a step of SGLang that picks before its default
    # picker: deterministic inference's fallback, which --rl-on-policy-target turns on too)
    def gives(item: Any) -> bool:
        return any(_given(d, str(f)) for f in item) if isinstance(item, list) else _given(d, str(item))

    flagged = [e for e in entries if e.get("when_flags") and all(gives(f) for f in e["when_flags"])]
    entries = flagged or [e for e in entries if not e.get("when_flags")]
    for entry in entries:
        if (mla is None and entry.get("unread") == "unknown") is not unread:
            continue
        if not majors <= {int(m) for m in entry.get("majors") or []}:
            continue
        need = numeric(entry.get("torch_cuda_min"))
        if cuda is not None and need is not None and cuda < need:
            continue
        below = numeric(entry.get("torch_cuda_below"))
        if cuda is not None and below is not None and cuda >= below:
            continue
        if architecture is not None:
            if "architectures" in entry and architecture not in (entry.get("architectures") or []):
                continue
            if architecture in (entry.get("except_architectures") or []):
                continue
        if mla is not None and entry.get("model") in ("mla", "mha") and (entry["model"] == "mla") is not mla:
            continue
        limit = entry.get("unless_topk_above")
        if spec and isinstance(limit, int) and topk is not None and topk > (limit,):
            continue
        if spec and entry.get("needs_topk_with_speculation") and topk is None:
            continue
        why = str(entry.get("why") or "the attention backend SGLang picks here")
        if side:
            why += f" (the {side} side: {split[0]} alone leaves it to SGLang)"
        out.append((str(entry["feature"]), why))
    return out


def numeric(text: Any) -> tuple[int, ...] | None:
    """'12.3' -> (12, 3); '4' -> (4,); None for anything else (igap26: also a part of more than 9 digits, which int()
    may refuse for its length: a facts file's torch CUDA of 5,000 digits ended the gate in an internal error)."""
    parts = str(text).split(".")[:2] if text is not None else []
    numbers = [whole_number(x) for x in parts]
    return tuple(n for n in numbers if n is not None) if numbers and None not in numbers else None
