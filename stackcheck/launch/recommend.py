"""`stackcheck recommend`, the pure part: facts + manifests + launch facts -> the launch that works and is
fastest on this box, by the knowledge in manifests/recommend.json. No I/O; the caller passes everything in.

How a recommendation is made:
1. The plan: stackcheck.plan.plan_and_facts with the request's holds and pins (none: the planner's default
   target, the newest stack that keeps what is ok now). The launch is judged on the facts *after* the plan;
   a step that patches an installed package is never part of a recommendation.
2. The decisions of recommend.json, in order. Each option is considered when its `scope` holds; it is
   rejected, with what was observed, when its `releases`, its `when` conditions or its feature's verdict
   (evaluated by the rule engine on the target stack, with this launch) fail. The first option left is
   chosen; later ones that also hold are listed as alternatives. Whether a path *works* is never decided
   here: that is the feature verdicts' job (features.json); recommend.json only says which working path is
   the faster one, with its source and the measurement behind it.
3. The "never" entries whose conditions hold, each with its evidence.
4. The command line and environment: a fresh `python3 -m sglang.launch_server` launch, or, with a given
   command, that command with what it misses added and what it should drop removed (the diff).
5. The line judged as the gate judges it on the target stack (gate_problems; check_problems: the stack checks it
   needs that still fail after the plan): where the gate would refuse it, no line is proposed (`refused`).

Conditions use the rule language of features.json (stackcheck.verdicts.engine.evaluate_predicate) plus two predicates of
this file's own: {"verdict": F, "in": [...], "effect": [...]} and {"chosen": DECISION, "in": [OPTION...]}.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from stackcheck.facts.model import KERNEL_PACKAGES
from stackcheck.facts.versions import version_in
from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple
from stackcheck.record import field, record
from stackcheck.verdicts import REFUSED_EFFECTS, worst_effect
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_feature, evaluate_predicate, uses_gpu

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.facts.model import Facts
    from stackcheck.knowledge.types import Feature
    from stackcheck.plan import Plan
    from stackcheck.verdicts.types import FeatureVerdict

GOALS = ("latency", "throughput")
DEFAULT_ENTRYPOINT = ("python3", "-m", "sglang.launch_server")
MODEL_PLACEHOLDER = "MODEL"


# ---- the request and the answer --------------------------------------------------------------------


@record
class Request:
    """What the user asked for. `launch` holds the launch facts (tp, quantization, mla, ...) read from the
    command, the model's config or the --assume-* options; `assumptions` says which were assumed."""

    goal: str = "latency"
    model_path: str | None = None
    launch: dict[str, Any] = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)
    command: list[str] | None = None  # the given launch (-- COMMAND), env prefix included
    env: Mapping[str, str] = field(default_factory=dict)  # the environment that command would see
    plan: bool = True
    hold: list[str] = field(default_factory=list)
    pins: dict[str, str] = field(default_factory=dict)
    # the model as the gate reads it: its first architecture and config.json's attention keys (None: not read)
    architecture: str | None = None
    model_config: dict[str, Any] | None = None
    # flags the model itself needs to load on this release, each (flag, value, why, source): a ModelOpt checkpoint
    # whose quant_method the release keeps as written needs --quantization (launch.preflight.model.kept_modelopt)
    model_flags: list[tuple[str, str, str, Any]] = field(default_factory=list)
    # the features the checkpoint's own quantization needs on the target release, as the gate's preflight adds them
    # (launch.preflight.model.quantization_requirements: ModelRequirement each), judged with the line
    model_requirements: list[Any] = field(default_factory=list)
    # the served model as the gate's preflight reads it (preflight.model.ModelInfo; None: not read), whose launch facts
    # each line is judged with (gate_preflight.model_file_facts, as the gate judges its launch)
    model_info: Any = None
    # (irec3) the speculative draft model the given launch names (--speculative-draft-model-path), read by the same
    # reader (None: none named, or not read), whose launch facts (draft_*, and its experts in model_moe) each line is
    # judged with as the gate judges them
    draft_info: Any = None
    # judge the line proposed as the gate judges it (gate_problems) and propose none the gate refuses; the gate's own
    # advice leaves it out (the gate judges the given launch itself, and each attention option is judged anyway)
    judge_line: bool = True


@record
class ModelSeen:
    """The model as the gate reads it, for the options that set an attention backend: its first architecture and
    config.json's attention keys (None: not read), and the given launch's SGLang arguments (none: a fresh one)."""

    architecture: str | None = None
    config: dict[str, Any] | None = None
    args: list[str] = field(default_factory=list)
    release_flags: dict[str, Any] = field(default_factory=dict)  # gate._declared_in by release, once read
    requirements: list[Any] = field(default_factory=list)  # the checkpoint's quantization needs (Request's)
    info: Any = None  # the model as the gate's preflight reads it (Request.model_info)
    draft_info: Any = None  # the draft model the given launch names, read the same way (Request.draft_info)


_NOT_READ = object()


#: the flags that set an attention backend, whose values SGLang asserts per model
ATTENTION_FLAGS = ("--attention-backend", "--prefill-attention-backend", "--decode-attention-backend")
#: the facts of launch.json's refusal rules that come from the model's own assertions on its attention backend, and
#: from SGLang's check of the attention backend against a list for a flag of the launch (backend_list_refused:
#: --enable-deterministic-inference), which the advised backend must pass as well
_MODEL_FACTS = ("model_backend_refused", "hybrid_gdn_backend_refused", "backend_list_refused")


def _model_rule(rule: Mapping[str, Any]) -> bool:
    """Whether a launch.json refusal rule is a model's own assertion on its attention backend."""
    facts = {str(c.get("fact")) for c in rule.get("when") or [] if isinstance(c, dict)}
    return bool(facts & set(_MODEL_FACTS)) or {"model_architecture", "attention_backend"} <= facts


def _argv_with(model: ModelSeen, flags: Mapping[str, str | bool], unset: Sequence[str] = ()) -> list[str]:
    """The model's given launch (model.args) or a fresh one, with `flags` set in place of any given value and the
    flags of `unset` taken off (an option's unset: the split attention flags, which win over --attention-backend)."""
    base = list(model.args)
    for flag in [*flags, *unset]:
        base = _remove_flag(base, [flag], False)
    argv = [*DEFAULT_ENTRYPOINT, *base]
    if "--model-path" not in base and "--model" not in base:
        argv += ["--model-path", MODEL_PLACEHOLDER]
    for name, value in flags.items():
        argv += [name] if value is True else [name, str(value)]
    return argv


def _with_moe_runner_auto(ctx: Context, model: ModelSeen, d: Any, mapping: Any, version: str | None) -> Context:
    """ctx with launch.moe_runner_auto (and launch.model_moe, launch.model_moe_renormalize) for this line, as the gate
    sets them once its preflight read the model
    (refusals.moe_runner_auto: the MoE runner SGLang picks itself, whose kernels fp8-block-gemm's moe-bmm-cubins-auto
    rules judge; irev79: recommend never set it, so it proposed a DeepSeek FP8 line on an offline B200 without the
    TRTLLM_GEN_BMM cubins that the gate refused). The model's quantization is the launch's (ctx.launch
    `quantization`: the checkpoint's quant_method, or the flag that loads it). Unchanged where no model was read.
    The facts from the model's files come from the model as the gate's preflight reads it (model.info, which every
    caller passes where it read the model; imend15: no second reading of config.json here); a ModelSeen without it
    adds none of them (their rules stay unknown: never a line judged on a fact guessed)."""
    if model.architecture is None:
        return ctx
    quant = ctx.launch.get("quantization")
    added: dict[str, Any] = {}
    if model.info is not None and str(getattr(model.info, "role", "")) == "model":
        # (irecmodel) every launch fact the gate sets from the model's files, by the gate's own function on the model
        # as its preflight reads it, for this line (its --quantization): model_quant_loaded, checkpoint_quantized
        # (and the online quantization's needs on d), the Kimi INT4 group-0 weights of moe_runner_auto, ...
        from stackcheck.launch.gate_preflight import model_file_facts, model_launch_facts
        from stackcheck.launch.preflight import Preflight, model_launch

        flag = d.options.get("--quantization")
        # (irec3) and the draft model the line names, read by the same reader (the gate's preflight reads both roles):
        # its draft_* facts (model_launch_facts) and its experts (model_file_facts' model_moe, model_dsv3_routing)
        draft = model.draft_info if _draft_named(d) and _same_draft(model.draft_info, d) else None
        infos = [model.info] if draft is None else [model.info, draft]
        pre = Preflight([], infos, [], model_launch(model.info, ctx.manifests.preflight, flag, version), [])
        added = model_file_facts(pre, d, mapping, version)
        # and the facts on its MLA shapes, whether its config.json was read (model_config_read) and the flags SGLang
        # turns back off for it, as the gate judges them again (gate_preflight.model_launch_facts)
        added.update(model_launch_facts(pre, d, mapping))
        if isinstance(pre.launch.get("model_mla"), bool):
            added["mla"] = pre.launch["model_mla"]
        if draft is None and _draft_named(d):
            # the draft's config.json is not read here: a MoE draft runs MoE layers, perhaps the DeepSeek-V3 routing
            for key in ("model_moe", "model_dsv3_routing", "draft_model_moe"):  # (icute2: not the target's reading)
                if added.get(key) is False:
                    del added[key]
    # (irev81, irobust12) launch.model_moe_renormalize as the gate sets it from the same config.json keys (ifc64: the
    # BF16 trtllm-gen MoE asserts a renormalizing top-k); a value that is no boolean, which the gate judges both ways,
    # is taken as false here (_line_moe_renormalize): no line rests on it
    if "model_moe_renormalize" not in added and (renormalize := _line_moe_renormalize(model)) is not None:
        added["model_moe_renormalize"] = renormalize
    if "model_moe_topk_kept" not in added and model.config is not None:  # (imend17: as the gate sets it)
        from stackcheck.launch.refusals import launch_model_moe_topk_kept

        if (kept := launch_model_moe_topk_kept({"model": model.config})) is not None:
            added["model_moe_topk_kept"] = kept
    # (irev80) the quantization as the gate's facts hold it: launch.quantization is the line's --quantization alone,
    # the checkpoint's quant_method launch.model_quant_method; recommend's `quantization` is the checkpoint's ('none':
    # not quantized), under which a rule on a launch without --quantization (`not launch.quantization exists`, such
    # as moe-trtllm-gen-cubins' for an unquantized MoE model) never applied
    launch = {k: v for k, v in ctx.launch.items() if k != "quantization"}
    if isinstance(d.launch.get("quantization"), str):
        launch["quantization"] = d.launch["quantization"]
    if isinstance(quant, str) and quant != "none" and "model_quant_method" not in launch:
        launch["model_quant_method"] = quant
    launch.update(added)
    if launch == ctx.launch:
        return ctx
    return Context(facts=ctx.facts, manifests=ctx.manifests, launch=launch)


def _draft_named(d: Any) -> bool:
    """Whether the line names a speculative draft model (its config.json is the draft's own, not the target's)."""
    return any(str(w).startswith("--speculative-draft-model") for w in d.command)


def _same_draft(info: Any, d: Any) -> bool:
    """Whether `info` (Request.draft_info) is the draft the line names: its spec is the line's
    --speculative-draft-model-path (a line that names another draft is judged without one read)."""
    if info is None:
        return False
    given = d.options.get("--speculative-draft-model-path")
    return isinstance(given, str) and given in (str(getattr(info, "spec", "")), str(getattr(info, "path", "")))


def _line_moe_renormalize(model: ModelSeen) -> bool | None:
    """launch.model_moe_renormalize for this line, as the gate sets it (refusals.launch_model_moe_renormalize, ifc64)
    from the model's config.json. irobust12: recommend never set it, so it proposed a BF16 Qwen3-MoE line (no
    norm_topk_prob: transformers' default false) on a B200 with every cubin ready that the gate refused (check
    moe-trtllm-gen-cubins, rule unquantized-auto-renormalize, crash). A value that is no boolean, which the gate
    leaves unknown (refusals.moe_renormalize_unread), is taken as false here: no line rests on it."""
    if model.config is None:
        return None
    from stackcheck.launch.refusals import launch_model_moe_renormalize, moe_renormalize_unread

    found = launch_model_moe_renormalize({"model": model.config})
    if found is None and moe_renormalize_unread({"model": model.config}) is not None:
        return False
    return found


def gate_problems(ctx: Context, model: ModelSeen, argv: Sequence[str]) -> list[Any]:
    """What the gate's own judging finds against this SGLang launch on ctx's stack (its release, GPUs and torch), with
    the model as the gate's preflight reads it: every launch.json refusal rule (launch.refusals.refusal_problems, all
    of them, as `stackcheck gate` calls it), the attention kernels SGLang picks itself where no flag names one and the
    kernel paths it takes for the model whatever the flags (auto_backend_features, model_kernel_features: the
    gate's "default" requirements) whose feature is blocked on ctx's stack, the features the launch's own flags turn
    on that are blocked there (its "explicit" requirements), and flags or values the release does not have
    (gate.release_problems, release_choice_problems). Each a gate.Problem, blocked or unknown."""
    from stackcheck.launch.gate import Problem, derive, release_choice_problems, release_problems, worst_rule_effect
    from stackcheck.launch.refusals import (
        auto_backend_features,
        box_memory,
        gpu_majors,
        known_gpu_majors,
        lowest_gpu_sm,
        model_kernel_features,
        refusal_problems,
    )

    mapping = ctx.manifests.launch
    d = derive(list(argv), mapping, {})
    version = ctx.installed_version("sglang")
    if version is not None and model.release_flags.get(version, _NOT_READ) is _NOT_READ:
        from stackcheck.launch.gate import _declared_in

        model.release_flags[version] = _declared_in(mapping, version)  # read once for every launch judged
    ctx = _with_moe_runner_auto(ctx, model, d, mapping, version)
    mla = ctx.launch.get("mla") if model.architecture is not None else None
    found = refusal_problems(
        d, mapping, version, gpu_majors(ctx.facts), model.architecture, {"model": model.config},
        model.release_flags.get(version) if version is not None else None, ctx.torch_cuda(),
        model_mla=mla if isinstance(mla, bool) else None, gpu_sm=lowest_gpu_sm(ctx.facts),
        box_memory=box_memory(ctx.facts),
    )  # fmt: skip
    found += [p for p in release_problems(d, mapping, version) if p.status == "blocked"]
    found += [p for p in release_choice_problems(d, mapping, version) if p.status == "blocked"]
    found += model_config_problems(model)
    shape_table = (ctx.manifests.preflight.get("model") or {}).get("model_shape")
    found += model_shape_problems(model, d, mapping, version, shape_table)
    majors = known_gpu_majors(ctx.facts)
    needs = auto_backend_features(
        d, mapping, version, majors, ctx.torch_cuda(), mla if isinstance(mla, bool) else None, model.architecture,
        model.config,
    )  # fmt: skip
    needs += model_kernel_features(mapping, version, model.architecture, d, majors)[0]
    explicit = [(r.feature, r.why) for r in d.required if r.kind == "explicit" and not r.check]
    # a feature the launch needs for some of its rules only (gate.Requirement.rules), judged on those as the gate does
    scoped = {r.feature: dict(r.rules) for r in d.required if not r.check and r.rules is not None}
    if model.requirements:  # the checkpoint's own quantization, as the gate's preflight requires it (explicit)
        from stackcheck.launch.gate import _conds, _options

        defaults = {str(o["flag"]): o.get("default") for o in _options(mapping) if "default" in o}
        for r in model.requirements:
            if not _conds(r.when, d, defaults):
                continue
            if r.rules is None:
                scoped.pop(r.feature, None)  # the whole feature
            elif r.feature not in scoped and r.feature not in {f for f, _ in explicit}:
                scoped[r.feature] = dict.fromkeys(r.rules, "explicit")
            elif r.feature in scoped:
                scoped[r.feature].update(dict.fromkeys(r.rules, "explicit"))
            explicit.append((r.feature, r.why))
    features = {str(f.get("id")): f for f in ctx.manifests.features}
    seen: set[str] = set()
    for fid, why in [*explicit, *needs]:
        spec = features.get(fid)
        if spec is None or fid in seen:
            continue
        seen.add(fid)
        v = evaluate_feature(spec, ctx)
        if fid in scoped and fid not in {f for f, _ in needs}:
            from stackcheck.launch.gate import scoped_feature_verdict

            v = scoped_feature_verdict(v, scoped[fid], spec)  # type: ignore[assignment]
        status, effect = v.get("status"), v.get("effect")
        if status == "blocked" and effect in REFUSED_EFFECTS:  # (a slower or no-op explicit feature only warns)
            found.append(Problem(fid, "blocked", effect, f"{why}: {fid} is blocked ({effect}): {_first_failure(v)}"))
        elif status == "unknown" and ((fid, why) in explicit or worst_rule_effect(spec) in REFUSED_EFFECTS):
            found.append(Problem(fid, "unknown", None, f"{why}: {fid} is unknown: {_first_failure(v)}"))
    return found


def model_config_problems(model: ModelSeen) -> list[Any]:
    """(irev82) The gate preflight's refusals of the model's config.json whatever the launch's flags (check
    model-config-keys: ifc65's router keys SGLang reads with no default, irev82's typed keys transformers 5 refuses),
    as gate_problems' Problems: recommend read the model with the gate's read_model and judged its line without them,
    so it proposed a line (exit 0) for a config the gate refuses on every line (unknown)."""
    from stackcheck.launch.gate import Problem
    from stackcheck.launch.preflight.model import CONFIG_KEYS_CHECK

    results = getattr(model.info, "results", None) or []
    return [
        Problem(r.check, "unknown" if r.status == "unknown" else "blocked", None, str(r.message), r.source)
        for r in results
        if r.check == CONFIG_KEYS_CHECK and r.status in ("unknown", "fail")
    ]


def model_shape_problems(
    model: ModelSeen, d: Any, mapping: Any, version: str | None, table: Mapping[str, Any] | None = None
) -> list[Any]:
    """(ishape) The gate preflight's model-shape refusals for this line (gate_preflight.model_shape_results, the
    gate's own function: the heads, the dense MLP and the experts at the line's TP / attention TP / EP sizes), as
    gate_problems' Problems, so that no --tp is proposed that SGLang's divisibility asserts refuse. None where the
    model was not read (model.info)."""
    from stackcheck.launch.gate import Problem, reading_flags
    from stackcheck.launch.gate_preflight import model_shape_results

    if model.info is None:
        return []
    results = model_shape_results([model.info], d, mapping, version, reading_flags(mapping, version), table)
    return [
        Problem(r.check, "unknown" if r.status == "unknown" else "blocked", None, str(r.message), r.source)
        for r in results
        if r.status in ("unknown", "fail")
    ]


def check_problems(
    ctx: Context,
    argv: Sequence[str],
    env: Mapping[str, str],
    failing: set[str] | None = None,
    model: ModelSeen | None = None,
) -> list[Any]:
    """The stack checks (checks.json) this SGLang launch needs, as the gate adds them (gate.add_launch_requirements:
    the manifests' `required_by`, per rule where a rule has its own), that fail on ctx's stack so that the gate
    refuses the launch (gate._decide_check: a needed rule that fails with effect crash or wrong-output): each a
    gate.Problem, blocked, naming the rule's observed and required values and the check's fix. A check that is
    unknown is not one (recommend does not propose for a box the gate cannot read; the gate says so of the launch
    itself).
    `failing`: the ids of the checks known to fail on ctx's facts (the plan's still_failing_checks, judged on the
    same facts); only those are judged again (None: every check the launch needs). `model`: the model as read, whose
    launch facts (launch.moe_runner_auto, launch.model_moe: _with_moe_runner_auto) the checks are judged with, every
    needed one where they add any."""
    from stackcheck.launch.gate import Blocker, Problem, _decide_check, add_launch_requirements, derive
    from stackcheck.verdicts.engine import evaluate_check

    d = derive(list(argv), ctx.manifests.launch, dict(env))  # (env: NCCL_P2P_DISABLE=1 scopes pcie-p2p-path out)
    read: dict[str, Any] = {}
    # (irecmodel) where the model was read, a needed check that is unknown refuses as the gate refuses it (its
    # _decide_check without --allow-unknown), as gate_problems' unknown features do (_refusing): recommend proposed
    # a Quark MXFP4 MoE line on an H200 that the gate refused for sglang-gpu-min-cc unknown
    model_read = model is not None and model.architecture is not None
    if model is not None:  # (irev80: the launch facts the gate sets once its preflight read the model, as
        # gate_problems judges with them; a check failing only with them is in no plan's still_failing_checks)
        line = _with_moe_runner_auto(ctx, model, d, ctx.manifests.launch, ctx.installed_version("sglang"))
        if line is not ctx:
            ctx, failing = line, None
        # (iasan: the gate's scopes read them too, flashinfer-jit-asan-header's launch.model_moe; irec3: and
        # launch.model_dsv3_routing)
        keys = ("moe_runner_auto", "model_moe", "model_dsv3_routing")
        read = {k: ctx.launch[k] for k in keys if ctx.launch.get(k) is not None}
        from stackcheck.launch.refusals import auto_pick_off_gpus, gpu_majors

        version = ctx.installed_version("sglang")
        if auto_pick_off_gpus(read.get("moe_runner_auto"), ctx.manifests.launch, version, gpu_majors(ctx.facts)):
            read["moe_runner_auto"] = "auto"  # (irec3) as the gate's scope reads it: an SM100-only pick off SM100
    add_launch_requirements(d, ctx.manifests.features, ctx.manifests.checks, read)
    checks = {str(c.get("id")): c for c in ctx.manifests.checks}
    out: list[Any] = []
    for r in d.required:
        spec = checks.get(r.feature) if r.check else None
        if spec is None or (failing is not None and r.feature not in failing):
            continue
        v = evaluate_check(spec, ctx)
        if v.get("status") != "failed" and not (v.get("status") == "unknown" and model_read):
            continue
        blocking: list[Blocker] = []
        _decide_check(r, v, not model_read, blocking, [], [])
        for b in blocking:
            if b.status == "unknown" and model_read:  # (irecmodel) as the gate refuses it without --allow-unknown
                open_rules = [x for x in b.reasons if x.get("result") == "unknown"] or b.reasons
                said = (open_rules[0].get("message") or open_rules[0].get("requirement")) if open_rules else None
                message = f"{r.why}: check {r.feature} is unknown: {said or 'not established'}"
                source = open_rules[0].get("source") if open_rules else None
                out.append(Problem(f"check {r.feature}", "unknown", None, message, source))
                continue
            if b.status != "blocked":
                continue
            fails = [x for x in b.reasons if x.get("result") == "fail" and x.get("effect", "crash") in REFUSED_EFFECTS]
            first = fails[0] if fails else (b.reasons[0] if b.reasons else {})
            seen = (
                f" (observed {first.get('observed')}, required {first.get('required')})"
                if "observed" in first and "required" in first
                else ""
            )
            fix = (v.get("fix") or {}).get("text")
            message = f"{r.why}: check {r.feature} fails ({b.effect}): {first.get('message', '')}{seen}" + (
                f"; fix: {fix}" if fix else ""
            )
            out.append(
                Problem(f"check {r.feature}", "blocked", b.effect, message, first.get("source"),
                        _text_or_none(first.get("observed")), _text_or_none(first.get("required")))
            )  # fmt: skip
    return out


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _refusing(problems: Sequence[Any], model: ModelSeen) -> list[Any]:
    """The problems that make the gate refuse: blocked ones, and unknown ones where the model was read (for a model
    not read, recommend says what it assumed)."""
    return [p for p in problems if p.status == "blocked" or (p.status == "unknown" and model.architecture is not None)]


def model_refusal(
    ctx: Context,
    model: ModelSeen,
    flags: Mapping[str, str | bool],
    base: Sequence[Any] | None = None,
    unset: Sequence[str] = (),
) -> str | None:
    """Why the gate refuses these attention flags for this model on this release, set in the model's given launch
    (model.args) or a fresh one; None when it does not. Every refusal rule of launch.json counts (gate_problems):
    a model's own assertions on its attention backend (model_backend_refused, hybrid_gdn_backend_refused,
    backend_list_refused, or the architecture with an attention backend) refuse blocked or unknown (an unread model
    is refused where any model's assertion would refuse the backend: the gate says unknown there); any other rule
    refuses where it is blocked, or unknown for a model read, unless `base` (gate_problems of the launch without
    these flags) already holds it with the same status: the given launch's own, which no attention flag causes."""
    mapping = ctx.manifests.launch
    rules = {str(r.get("id")): r for r in (mapping.get("refusals") or {}).get("rules") or [] if isinstance(r, dict)}
    before = {(p.subject, p.status) for p in base or []}
    for p in gate_problems(ctx, model, _argv_with(model, flags, unset)):
        rid = p.subject.removeprefix("refusal ")
        own = p.subject.startswith("refusal ") and rid in rules and _model_rule(rules[rid])
        if own and p.status in ("blocked", "unknown"):
            if p.status == "blocked":
                return f"the gate refuses it for {model.architecture}: {p.message}"
            return f"the gate cannot pass it for this model ({p.subject}: unknown): {p.message}"
        if own or (p.subject, p.status) in before or p not in _refusing([p], model):
            continue
        if p.status == "blocked":
            return f"the gate refuses it ({p.subject}): {p.message}"
        return f"the gate cannot pass it ({p.subject}: unknown): {p.message}"
    return None


@record
class Pick:
    """One option of one decision: chosen, an alternative that also holds, or rejected with why."""

    decision: str
    decision_title: str
    option: str
    title: str
    status: str  # chosen | alternative | rejected
    why: str
    flags: dict[str, str | bool] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    unset_flags: list[str] = field(default_factory=list)
    unset_env: list[str] = field(default_factory=list)
    advice: bool = False
    gain: dict[str, Any] | None = None
    source: Any = None
    inferred: bool = False
    note: str | None = None
    hint: str | None = None  # how to make a rejected option possible (a --to pin)
    model_refused: bool = False  # rejected by the model's own assertion on its attention backend (not shown)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "decision": self.decision,
            "option": self.option,
            "title": self.title,
            "status": self.status,
            "why": self.why,
        }
        if self.flags:
            out["flags"] = dict(self.flags)
        if self.env:
            out["env"] = dict(self.env)
        if self.advice:
            out["advice"] = True
        if self.gain is not None:
            out["gain"] = self.gain
        if self.source is not None:
            out["source"] = self.source
        if self.inferred:
            out["inferred"] = True
        if self.note:
            out["note"] = self.note
        if self.hint:
            out["hint"] = self.hint
        return out


@record
class Change:
    """One line of the diff against a given launch."""

    action: str  # add | change | drop
    kind: str  # flag | env
    name: str
    value: str | bool | None = None
    old: str | bool | None = None
    why: str = ""
    source: Any = None
    title: str = ""  # the option or never entry behind the change
    gain: str = ""  # its measurement in a few words, when there is one

    def text(self) -> str:
        """'add SGLANG_X=1', 'change --attention-backend fa3 -> flashinfer', 'drop --enable-torch-symm-mem'."""
        if self.action == "change":
            sep = "=" if self.kind == "env" else " "
            return f"change {self.name}{sep}{self.old} -> {self.value}"
        if self.action == "drop":
            if self.kind == "env":
                return f"drop {self.name}={self.old}"
            return f"drop {self.name}" + (f" {self.old}" if self.old not in (None, True) else "")
        if self.kind == "env":
            return f"add {self.name}={self.value}"
        return f"add {self.name}" + (f" {self.value}" if self.value is not True else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "kind": self.kind,
            "name": self.name,
            "value": self.value,
            "old": self.old,
            "why": self.why,
            "source": self.source,
            "title": self.title,
            "gain": self.gain or None,
        }


@record
class Recommendation:
    goal: str
    launch: dict[str, Any]
    assumptions: list[str]
    plan: Plan | None
    facts_after: Facts  # the facts the launch is judged on (after the plan)
    stack: dict[str, str]  # the stack the launch runs on
    command: list[str]
    env: dict[str, str]
    picks: list[Pick]
    never: list[dict[str, Any]]
    undecided: list[dict[str, str]]
    diff: list[Change] | None = None
    notes: list[str] = field(default_factory=list)
    # what the gate refuses in the line recommend would have proposed (then command is empty): subject, status, message
    refused: list[dict[str, str]] = field(default_factory=list)

    @property
    def chosen(self) -> list[Pick]:
        return [p for p in self.picks if p.status == "chosen"]

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "goal": self.goal,
            "launch": dict(self.launch),
            "assumptions": list(self.assumptions),
            "stack": dict(self.stack),
            "plan": self.plan.to_json() if self.plan is not None else None,
            "command": list(self.command),
            "env": dict(self.env),
            "choices": [p.to_json() for p in self.picks if p.status == "chosen"],
            "alternatives": [p.to_json() for p in self.picks if p.status != "chosen"],
            "never": list(self.never),
            "undecided": list(self.undecided),
            "notes": list(self.notes),
        }
        if self.diff is not None:
            doc["diff"] = [c.to_json() for c in self.diff]
        if self.refused:
            doc["refused"] = [dict(r) for r in self.refused]
        return doc


# ---- conditions --------------------------------------------------------------------------------------


@record
class Cond:
    value: bool | None  # None: a fact it needs is not known
    text: str = ""  # what was observed (for a rejection) or what is missing


def with_check_crashes(v: FeatureVerdict, fid: str, ctx: Context) -> FeatureVerdict:
    """(irec3) A feature's verdict as recommend.json's `verdict` conditions read it: where a stack check's rule that
    names this feature in its own required_by (jit-toolchain's deepgemm-nvcc, deepgemm-upstream-sm100f: DeepGEMM's JIT
    build) fails with effect crash, the feature is blocked with that crash, though its own rules pass. The gate needs
    such a rule only as strongly as the feature's default (deepgemm: default-warn, 'fails only with some models'), so
    it warns of the crash and allows the launch, and recommend skipped the warning: it kept DeepGEMM on (deepgemm-
    default) on a box whose nvcc cannot build it. The recommended line now takes the option for a crashing feature
    (deepgemm-off: SGLANG_ENABLE_JIT_DEEPGEMM=0). A verdict already blocked with a crash, or not ok, is kept. A rule
    that serves wrong output (effect wrong-output) counts as a crash does, and the verdict takes its effect where
    no crash fails beside it."""
    if v.get("status") not in ("ok", "not-applicable"):
        return v
    from stackcheck.verdicts.engine import evaluate_check

    crashes: list[Any] = []
    for check in ctx.manifests.checks:
        named = [
            str(r.get("id"))
            for r in check.get("rules") or []
            if isinstance(r, dict)
            and isinstance(r.get("required_by"), dict)
            and fid in (r["required_by"].get("features") or [])
        ]
        if not named:
            continue
        verdict = evaluate_check(check, ctx)
        crashes += [
            {**dict(x), "check": str(check.get("id"))}
            for x in verdict.get("reasons") or []
            if x.get("rule") in named and x.get("result") == "fail" and x.get("effect", "crash") in REFUSED_EFFECTS
        ]
    if not crashes:
        return v
    worst = worst_effect(str(x.get("effect", "crash")) for x in crashes)
    return {**v, "status": "blocked", "effect": worst, "reasons": [*crashes, *(v.get("reasons") or [])]}


class Judge:
    """Evaluates recommend.json conditions on one Context; feature verdicts are cached per launch variant."""

    def __init__(self, ctx: Context, features: Mapping[str, Feature], model: ModelSeen | None = None) -> None:
        self.ctx = ctx
        self.features = features
        self.model = model or ModelSeen()
        self.chosen: dict[str, str] = {}
        self._verdicts: dict[tuple[str, tuple[tuple[str, Any], ...]], FeatureVerdict] = {}
        self._bases: dict[tuple[str, ...], list[Any]] = {}

    def model_refusal(self, flags: Mapping[str, str | bool], unset: Sequence[str] = ()) -> str | None:
        names = tuple(sorted({*flags, *unset}))
        if names not in self._bases:  # the launch without these flags: what the gate finds there no flag causes
            args = list(self.model.args)
            for flag in names:
                args = _remove_flag(args, [flag], False)
            without = ModelSeen(self.model.architecture, self.model.config, args, self.model.release_flags,
                                self.model.requirements, self.model.info)  # fmt: skip
            self._bases[names] = gate_problems(self.ctx, without, _argv_with(without, {}))
        return model_refusal(self.ctx, self.model, flags, self._bases[names], unset)

    def verdict(self, fid: str, extra_launch: Mapping[str, Any] | None = None) -> FeatureVerdict | None:
        spec = self.features.get(fid)
        if spec is None:
            return None
        key = (fid, tuple(sorted((extra_launch or {}).items())))
        if key not in self._verdicts:
            ctx = self.ctx
            if extra_launch:
                ctx = Context(facts=self.ctx.facts, manifests=self.ctx.manifests, launch={**ctx.launch, **extra_launch})
            self._verdicts[key] = with_check_crashes(evaluate_feature(spec, ctx), fid, ctx)
        return self._verdicts[key]

    def cond(self, pred: Any) -> Cond:
        if pred is None:
            return Cond(True)
        if not isinstance(pred, dict):
            return Cond(None, f"malformed condition {pred!r}")
        if "all" in pred or "any" in pred:
            is_all = "all" in pred
            parts = [self.cond(p) for p in pred.get("all" if is_all else "any") or []]
            decisive = [p for p in parts if p.value is (not is_all)]
            if decisive:
                return decisive[0] if is_all else Cond(True)
            missing = [p for p in parts if p.value is None]
            if missing:
                return missing[0]
            if is_all:
                return Cond(True)
            return Cond(False, "; ".join(p.text for p in parts if p.text))
        if "not" in pred:
            inner = self.cond(pred["not"])
            if inner.value is None:
                return inner
            return Cond(not inner.value, f"{inner.text} (excluded)" if inner.value else inner.text)
        if "verdict" in pred:
            v = self.verdict(str(pred["verdict"]))
            if v is None:
                return Cond(None, f"feature {pred['verdict']} is not in the manifests")
            status, effect = v.get("status"), v.get("effect")
            ok = status in (pred.get("in") or []) and ("effect" not in pred or effect in (pred.get("effect") or []))
            shown = f"{status} ({effect})" if effect else str(status)
            return Cond(ok, f"{pred['verdict']} is {shown}")
        if "chosen" in pred:
            got = self.chosen.get(str(pred["chosen"]))
            return Cond(got in (pred.get("in") or []), f"{pred['chosen']}: {got or 'nothing'} chosen")
        return self._rule_pred(pred)

    def _rule_pred(self, pred: dict[str, Any]) -> Cond:
        """A features.json comparison, once per GPU model when it reads the GPU's own facts."""
        models = self.ctx.gpu_models()
        targets = list(models) if uses_gpu(pred) and models else [None]
        seen = ""
        for gpu in targets:
            out = evaluate_predicate(pred, self.ctx, gpu)
            if out.value is None:
                return Cond(None, str(out.missing))
            subject = out.subject or pred.get("fact") or f"gate {pred.get('gate')}"
            shown = out.observed if not isinstance(out.observed, list) else ", ".join(map(str, out.observed))
            if not out.value:
                return Cond(False, f"{subject} = {shown} (needs {_required(out.required)})")
            seen = f"{subject} = {shown}"
        return Cond(True, seen)


def _required(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


def _first_failure(v: FeatureVerdict) -> str:
    for r in v.get("reasons") or []:
        if r.get("result") in ("fail", "unknown"):
            return str(r.get("message", ""))
    return str(v.get("status"))


# ---- the decisions ---------------------------------------------------------------------------------------


def _launch_effect(
    flags: Mapping[str, Any], launch_map: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The launch facts a set of flags and environment variables changes (launch.json: --attention-backend →
    attention_backend, SGLANG_ENABLE_PCIE_IPC_ALLREDUCE=1 → pcie_ipc_allreduce)."""
    out: dict[str, Any] = {}
    for opt in launch_map.get("options") or []:
        if isinstance(opt, dict) and opt.get("flag") in flags and isinstance(opt.get("fact"), str):
            out[str(opt["fact"])] = flags[str(opt["flag"])]
    for spec in launch_map.get("env") or []:
        if isinstance(spec, dict) and isinstance(spec.get("fact"), str) and spec.get("name") in (env or {}):
            raw = str((env or {})[str(spec["name"])]).lower()
            if raw in [str(x) for x in spec.get("true") or []]:
                out[str(spec["fact"])] = True
            elif raw in [str(x) for x in spec.get("false") or []]:
                out[str(spec["fact"])] = False
    return out


def _installed(ctx: Context, name: str) -> str | None:
    return ctx.installed_version(name)


def _releases_ok(ctx: Context, releases: Mapping[str, str]) -> tuple[bool, str, dict[str, str]]:
    """Whether the target stack satisfies an option's release ranges; else why, and the pins that would."""
    why: list[str] = []
    pins: dict[str, str] = {}
    for pkg, spec in releases.items():
        have = _installed(ctx, pkg)
        if have is None or version_in(have, spec) is not True:
            why.append(f"needs {pkg}{spec} (the target stack has {have or 'none'})")
            newest = _newest_in(ctx, pkg, spec)
            if newest:
                pins[pkg] = newest
    return not why, "; ".join(why), pins


def _newest_in(ctx: Context, pkg: str, spec: str) -> str | None:
    from stackcheck.facts.versions import parse_version

    best = None
    for rel in ctx.manifests.releases(pkg):
        v = str(rel.get("version", ""))
        pv = parse_version(v)
        if pv is not None and version_in(v, spec) is True and (best is None or pv > best[0]):
            best = (pv, v)
    return best[1] if best else None


def decide(
    ctx: Context, doc: Mapping[str, Any], goal: str, model: ModelSeen | None = None
) -> tuple[list[Pick], list[dict[str, str]], Judge]:
    """Every decision of recommend.json on one context: the picks and the decisions left undecided. `model`: the
    model as the gate reads it and the given launch's SGLang arguments (an unread model when None)."""
    features = {str(f.get("id")): f for f in ctx.manifests.features}
    judge = Judge(ctx, features, model)
    launch_map = ctx.manifests.launch
    picks: list[Pick] = []
    undecided: list[dict[str, str]] = []
    for dec in doc.get("decisions") or []:
        if not isinstance(dec, dict):
            continue
        did, dtitle = str(dec.get("id")), str(dec.get("title", dec.get("id")))
        applies = judge.cond(dec.get("applies"))
        if applies.value is False:
            continue
        if applies.value is None:
            undecided.append({"decision": did, "title": dtitle, "why": str(dec.get("if_unknown") or applies.text)})
            continue
        chosen: Pick | None = None
        for opt in dec.get("options") or []:
            if not isinstance(opt, dict):
                continue
            goals = opt.get("goals")
            if isinstance(goals, list) and goal not in goals:
                continue
            scope = judge.cond(opt.get("scope"))
            if scope.value is False:
                continue
            pick = _pick(dec, opt)
            ok, why = _option_holds(judge, opt, scope, launch_map, pick)
            if not ok:
                if pick.advice:
                    continue  # advice that does not apply is not an alternative anyone would try
                pick.status, pick.why = "rejected", why
            elif chosen is None:
                pick.status, chosen = "chosen", pick
                judge.chosen[did] = pick.option
            else:
                pick.status = "alternative"
                pick.why = f"also works here; {chosen.title} comes first in the knowledge's order"
            picks.append(pick)
        if chosen is None:
            model_why = next((f"{p.title}: {p.why}" for p in picks if p.decision == did and p.model_refused), None)
            why = "no option holds on this box (see alternatives)"
            if model_why:  # the gate's own refusal ruled out an option that works on the box: say which
                why = f"no option holds on this box for this model (see alternatives); {_short(model_why)}"
            undecided.append({"decision": did, "title": dtitle, "why": why})
    return picks, undecided, judge


def _pick(dec: Mapping[str, Any], opt: Mapping[str, Any]) -> Pick:
    settings = opt.get("set") or {}
    unset = opt.get("unset") or {}
    return Pick(
        decision=str(dec.get("id")),
        decision_title=str(dec.get("title", dec.get("id"))),
        option=str(opt.get("id")),
        title=str(opt.get("title", opt.get("id"))),
        status="",
        why=str(opt.get("reason", "")),
        flags=dict(settings.get("flags") or {}),
        env={str(k): str(v) for k, v in (settings.get("env") or {}).items()},
        unset_flags=[str(f) for f in unset.get("flags") or []],
        unset_env=[str(e) for e in unset.get("env") or []],
        advice=bool(opt.get("advice")),
        gain=opt.get("gain"),
        source=opt.get("source"),
        inferred=bool(opt.get("inferred")),
        note=str(opt["note"]) if opt.get("note") else None,
    )


def _option_holds(
    judge: Judge, opt: Mapping[str, Any], scope: Cond, launch_map: Mapping[str, Any], pick: Pick
) -> tuple[bool, str]:
    if scope.value is None:
        return False, f"not known whether it applies: {scope.text}"
    releases = opt.get("releases") or {}
    if releases:
        ok, why, pins = _releases_ok(judge.ctx, releases)
        if not ok:
            if "sglang" in pins:  # SGLang's own pins choose the rest of the stack
                pins = {"sglang": pins["sglang"]}
            if pins:
                pick.hint = "stackcheck recommend " + " ".join(f"--to {k}=={v}" for k, v in sorted(pins.items()))
            return False, why
    when = judge.cond(opt.get("when"))
    if when.value is None:
        return False, f"not known: {when.text}"
    if when.value is False:
        return False, when.text or "its conditions do not hold"
    fid = opt.get("feature")
    if isinstance(fid, str):
        v = judge.verdict(fid, _launch_effect(pick.flags, launch_map, pick.env))
        if v is None:
            return False, f"feature {fid} is not in the manifests"
        if v.get("status") != "ok":
            effect = f" ({v.get('effect')})" if v.get("effect") else ""
            return False, f"{fid} is {v.get('status')}{effect}: {_first_failure(v)}"
    if any(str(f) in ATTENTION_FLAGS for f in pick.flags):  # never a line the gate refuses for this model
        refused = judge.model_refusal(pick.flags, pick.unset_flags)
        if refused:
            pick.model_refused = True
            if judge.model.architecture is None:
                pick.hint = "give the model (--model-path DIR with its config.json) for the choice made for it"
            return False, refused
    return True, pick.why


# ---- never -------------------------------------------------------------------------------------------------


def never_entries(judge: Judge, doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for entry in doc.get("never") or []:
        if not isinstance(entry, dict) or judge.cond(entry.get("when")).value is not True:
            continue
        item: dict[str, Any] = {
            "id": entry.get("id"),
            "title": entry.get("title"),
            "effect": entry.get("effect"),
            "why": entry.get("why"),
            "evidence": entry.get("evidence"),
        }
        for key in ("flags", "env", "patch", "inferred", "note"):
            if entry.get(key):
                item[key] = entry[key]
        fid = entry.get("feature")
        if isinstance(fid, str):
            v = judge.verdict(fid)
            if v is not None:
                item["verdict"] = {"feature": fid, "status": v.get("status"), "effect": v.get("effect")}
                if v.get("status") != "ok":
                    item["verdict"]["why"] = _first_failure(v)
        out.append(item)
    return out


# ---- the command line -------------------------------------------------------------------------------------


def _never_title(entry: Mapping[str, Any]) -> str:
    return f"never: {entry.get('title')} ({entry.get('effect')})"


def _option_specs(launch_map: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Every launch.json flag name (aliases too) -> its option entry."""
    out: dict[str, dict[str, Any]] = {}
    for opt in launch_map.get("options") or []:
        if isinstance(opt, dict) and isinstance(opt.get("flag"), str):
            for name in [opt["flag"], *(opt.get("aliases") or [])]:
                out[str(name)] = opt
    return out


class GivenPrefix(NamedTuple):
    """A command's `env` prefix as recommend edits it, read by assembly/env_prefix.read_env (GNU env's reading,
    the gate's and the target's too). `options`: the given words before the prefix's own assignments (`env` and
    its options, -S strings and what they assign included; [] without `env`); `assigns`: the assignments after
    them, word by word; `argv`: the command env runs; `env`: the environment it runs with; `fixed`: the names
    assigned inside `options` (an -S string's), which no word written after them can unset; `inherits`: the
    environment before the assignments (-i, -u and -S applied), which a dropped assignment leaves; `inline`: whether
    `argv` stands in the given words as they are (not inside an -S string); `stop`: (why, whether env fails) where
    the reading stopped (then `argv` is the words from there on: no command recommend edits)."""

    options: list[str]
    assigns: dict[str, str]
    argv: list[str]
    env: dict[str, str]
    fixed: frozenset[str]
    inherits: dict[str, str]
    inline: bool
    stop: tuple[str, bool] | None


def read_prefix(command: Sequence[str], env: Mapping[str, str]) -> GivenPrefix:
    """`command`'s `env` prefix (GivenPrefix), `env` the environment the command starts with."""
    args = list(command)
    if not args or os.path.basename(args[0]) != "env":
        return GivenPrefix([], {}, args, dict(env), frozenset(), dict(env), True, None)
    from stackcheck.assembly.env_prefix import read_env  # (only for an `env` prefix, as the gate: no late import)

    read = read_env(args[1:], env)
    if read.stop is not None:
        stop = (read.stop, read.fails)
        return GivenPrefix([], {}, read.command, dict(read.env), frozenset(), dict(read.env), False, stop)
    at = len(args) - len(read.command)
    if at < 1 or args[at:] != read.command:  # the command starts inside an -S string
        return GivenPrefix(args, {}, read.command, read.env, frozenset(), read.env, False, None)
    first = at
    while first > 1 and "=" in args[first - 1]:
        first -= 1
    end, head = at, read_env(args[1:at], env)
    for end in range(first, at + 1):  # where the options end: the words before read alone, no option left open
        head = read_env(args[1:end], env)
        if head.stop is None and not head.command:
            break
    assigns = {w.partition("=")[0]: w.partition("=")[2] for w in args[end:at]}
    fixed = frozenset(n for n, _ in head.assignments)
    return GivenPrefix(args[:end], assigns, read.command, read.env, fixed, head.env, True, None)


def fresh_command(model_path: str | None, tp: int, flags: Sequence[tuple[str, str | bool]]) -> list[str]:
    argv = [*DEFAULT_ENTRYPOINT, "--model-path", model_path or MODEL_PLACEHOLDER]
    if tp > 1:
        argv += ["--tp-size", str(tp)]
    for name, value in flags:
        argv += [name] if value is True else [name, str(value)]
    return argv


def _flag_value(argv: Sequence[str], names: Sequence[str], boolean: bool) -> tuple[bool, str | bool | None]:
    """(present, last value) of a flag in argv, by exact name or `name=value`."""
    present = False
    value: str | bool | None = None
    i = 0
    while i < len(argv):
        tok = argv[i]
        name, eq, inline = tok.partition("=")
        if name in names:
            present = True
            if boolean:
                value = True
            elif eq:
                value = inline
            elif i + 1 < len(argv):
                value = argv[i + 1]
                i += 1
        i += 1
    return present, value


def _remove_flag(argv: list[str], names: Sequence[str], boolean: bool) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        name, eq, _ = tok.partition("=")
        if name in names:
            i += 1 if (boolean or eq) else 2
            continue
        out.append(tok)
        i += 1
    return out


def _names_of(flag: str, specs: Mapping[str, dict[str, Any]]) -> list[str]:
    spec = specs.get(flag)
    if spec is None:
        return [flag]
    return [str(spec["flag"]), *[str(a) for a in spec.get("aliases") or []]]


def _is_bool(flag: str, specs: Mapping[str, dict[str, Any]], value: Any = None) -> bool:
    spec = specs.get(flag)
    if spec is not None:
        return spec.get("value") == "bool"
    return value is True


class CannotEdit(Exception):
    """The launch stands in a shell's command string that the changes cannot be written into (a string the reader
    cannot follow back to its words): the command is not proposed, the changes are listed to make by hand."""

    def __init__(self, why: str, changes: Sequence[Change] = ()) -> None:
        super().__init__(why)
        self.changes = list(changes)


def _shell_site(argv: Sequence[str], launch_map: Mapping[str, Any]) -> tuple[int, list[str]] | None:
    """Where the launch of `argv` is a simple command inside a shell's command string (`bash -c "cd /x && python -m
    sglang.launch_server ..."`), as the gate reads it (gate.find_launch): (the index of the string in argv, the
    launch's SGLang arguments). None for a launch whose arguments are argv's own tail."""
    from stackcheck.launch import gate

    if gate._entrypoint_at(argv, launch_map)[0] is not None:
        return None
    shell = os.path.basename(argv[0]) in gate._C_RUNNERS if argv else False
    strings, stop = gate.flock_sites(argv)
    for i in range(1, len(argv) if stop != 0 else 1):
        if i == stop:
            break
        prog = os.path.basename(argv[i])
        if gate._PYTHON.match(prog) or any(e.get("program") == prog for e in gate._entries(launch_map)):
            if gate._entrypoint_at(argv[i:], launch_map)[0] is not None:
                return None
        at = gate._shell_string_at(argv, i) if shell and gate._shell_c(argv[i]) else i if i in strings else None
        if at is not None:
            inner = gate._shell_launch(argv[at], launch_map, {})
            return (at, list(inner[1])) if inner is not None else None
        shell = shell or prog in gate._C_RUNNERS
    return None


def _word_span(text: str, word: str, start: int) -> tuple[int, int] | None:
    """The first place at or after `start` where `word` is written as one whole shell word (as is, shlex-quoted, or
    double-quoted): (begin, end); None where it is not."""
    import shlex

    best: tuple[int, int] | None = None
    for form in dict.fromkeys((word, shlex.quote(word), f'"{word}"')):
        at = start
        while (at := text.find(form, at)) >= 0:
            end = at + len(form)
            if (at == 0 or text[at - 1] in " \t\n") and (end == len(text) or text[end] in " \t\n;&|)<>"):
                if best is None or at < best[0]:
                    best = (at, end)
                break
            at += 1
    return best


def _rewrite_string(
    argv: Sequence[str], at: int, old: Sequence[str], new: Sequence[str], launch_map: Mapping[str, Any]
) -> list[str]:
    """argv with its shell string argv[at] rewritten so that the launch inside reads `new` (its arguments `old`
    with some removed and some appended, as edit_command changes them): the removed words cut out where they are
    written, the appended ones (shlex-quoted) after the launch's last word, before any redirection or operator.
    Read back with the gate's reader: raises CannotEdit where the launch's arguments are not exactly `new`."""
    import shlex

    from stackcheck.launch import gate

    text = argv[at]
    keep, j = [], 0
    for word in old:  # the words of `old` kept, in order (edit_command only removes and appends)
        if j < len(new) and word == new[j]:
            keep.append(True)
            j += 1
        else:
            keep.append(False)
    added = list(new[j:])
    module = next(
        (str(e[k]) for e in gate._entries(launch_map) for k in ("python_module", "subcommand", "program")
         if isinstance(e.get(k), str) and str(e[k]) in text),
        None,
    )  # fmt: skip
    cursor = text.find(module) + len(module) if module else -1
    if cursor < 0:
        raise CannotEdit("the launch's entrypoint is not written as one word in the string")
    spans = []
    for word in old:
        span = _word_span(text, word, cursor)
        if span is None:
            raise CannotEdit(f"the argument {word!r} is not written as one word in the string")
        spans.append(span)
        cursor = span[1]
    point = spans[-1][1] if spans else cursor  # the launch's last word ends here
    rewritten = text[:point] + ((" " + shlex.join(added)) if added else "") + text[point:]
    for (first, stop), kept in reversed(list(zip(spans, keep, strict=True))):  # right to left: offsets stay valid
        if not kept:
            cut = first
            while cut > 0 and text[cut - 1] in " \t":
                cut -= 1
            rewritten = rewritten[:cut] + rewritten[stop:]
    line = [*argv[:at], rewritten, *argv[at + 1 :]]
    read = _shell_site(line, launch_map)
    if read is None or read[1] != list(new):
        raise CannotEdit("the rewritten string does not read back as the launch (the gate's reader)")
    return line


def edit_command(
    command: Sequence[str],
    env: Mapping[str, str],
    picks: Sequence[Pick],
    never: Sequence[dict[str, Any]],
    blocked_flags: Mapping[str, str],
    launch_map: Mapping[str, Any],
    extra: Sequence[tuple[str, str, str, Any]] = (),
) -> tuple[list[str], dict[str, str], list[Change]]:
    """The given launch with what it misses added and what it should drop removed (and `extra`: flag, value, why,
    source of what the model needs that the launch lacks, added last).

    `env` is the environment the command would see (the caller's, with the command's `env` prefix applied);
    only the prefix's own assignments are written back. Returns (argv with the env prefix, env to export in
    front of it, the diff). A launch inside a shell's command string (`bash -c "..."`) is edited inside the string
    (its words after the string would be the shell's $0, $1, ...); CannotEdit, with the diff, where the string
    cannot be rewritten so that the gate's reader finds the edited launch in it."""
    specs = _option_specs(launch_map)
    given = read_prefix(command, env)
    if given.stop is not None:  # (recommend says so before: never an edit of words env would not run as given)
        raise CannotEdit(f"the command's env prefix is read no further: {given.stop[0]}")
    options, assigns, argv = list(given.options), given.assigns, given.argv
    outer: list[str] | None = None
    site = _shell_site(argv, launch_map)
    if site is not None:  # edit the launch's own arguments, then write them back into the string
        outer, argv = argv, list(site[1])
    out_env = dict(assigns)
    seen_env = given.env  # what the command sees: -i, -u, -S and the assignments applied
    changes: list[Change] = []
    chosen = [p for p in picks if p.status == "chosen" and not p.advice]
    setting: dict[str, Pick] = {}
    for p in chosen:
        for flag in p.flags:
            setting[str(specs.get(flag, {}).get("flag", flag))] = p
    # drops: never entries, flags whose feature is blocked, and what a chosen option unsets
    for entry in never:
        for flag in entry.get("flags") or []:
            names = _names_of(flag, specs)
            present, old = _flag_value(argv, names, _is_bool(flag, specs, True))
            if present and str(specs.get(flag, {}).get("flag", flag)) not in setting:
                argv = _remove_flag(argv, names, _is_bool(flag, specs, True))
                changes.append(
                    Change(
                        "drop",
                        "flag",
                        flag,
                        None,
                        old,
                        str(entry.get("why")),
                        entry.get("evidence"),
                        _never_title(entry),
                    )
                )
        for name in entry.get("env") or []:
            if name in seen_env:
                out_env.pop(name, None)
                changes.append(
                    Change(
                        "drop",
                        "env",
                        name,
                        None,
                        seen_env[name],
                        str(entry.get("why")),
                        entry.get("evidence"),
                        _never_title(entry),
                    )
                )
    for flag, why in blocked_flags.items():
        canon = str(specs.get(flag, {}).get("flag", flag))
        if canon in setting or any(c.name == flag and c.action == "drop" for c in changes):
            continue  # a chosen option sets this flag: it is changed below
        names = _names_of(flag, specs)
        boolean = _is_bool(flag, specs)
        present, old = _flag_value(argv, names, boolean)
        if present:
            argv = _remove_flag(argv, names, boolean)
            changes.append(Change("drop", "flag", flag, None, old, why, None, "its feature is blocked on this stack"))
    for p in chosen:
        for flag in p.unset_flags:
            names = _names_of(flag, specs)
            boolean = _is_bool(flag, specs, True)
            present, old = _flag_value(argv, names, boolean)
            if present:
                argv = _remove_flag(argv, names, boolean)
                changes.append(Change("drop", "flag", flag, None, old, f"{p.title}: {p.why}", p.source, p.title))
        for name in p.unset_env:
            if name in seen_env:
                out_env.pop(name, None)
                changes.append(
                    Change("drop", "env", name, None, seen_env[name], f"{p.title}: {p.why}", p.source, p.title)
                )
    # adds and changes
    for p in chosen:
        for flag, value in p.flags.items():
            names = _names_of(flag, specs)
            boolean = value is True
            present, old = _flag_value(argv, names, boolean)
            if present and (boolean or str(old) == str(value)):
                continue
            if present:
                argv = _remove_flag(argv, names, boolean)
                changes.append(
                    Change("change", "flag", flag, value, old, p.why, p.source, p.title, _gain_short(p.gain))
                )
            else:
                changes.append(Change("add", "flag", flag, value, None, p.why, p.source, p.title, _gain_short(p.gain)))
            argv += [flag] if boolean else [flag, str(value)]
        for name, value in p.env.items():
            if seen_env.get(name) == value:
                continue
            action = "change" if name in seen_env else "add"
            changes.append(
                Change(action, "env", name, value, seen_env.get(name), p.why, p.source, p.title, _gain_short(p.gain))
            )
            out_env[name] = value
    for flag, value, why, source in extra:  # only those the given launch lacks
        argv += [flag, value]
        changes.append(Change("add", "flag", flag, value, None, why, source, "what the model needs to load"))
    if changes and not given.inline:
        raise CannotEdit("the launch stands in env's -S string, which is not rewritten here", changes)
    if not given.inline:
        return list(command), {}, changes
    fixed = [c.name for c in changes if c.kind == "env" and c.action == "drop" and c.name in given.fixed]
    if fixed:  # env applies -u before every assignment: one in an -S string is unset by no word written here
        raise CannotEdit(f"{', '.join(fixed)} is assigned in env's -S string, which is not rewritten here", changes)
    if outer is not None and site is not None:
        try:
            argv = _rewrite_string(outer, site[0], site[1], argv, launch_map) if changes else outer
        except CannotEdit as exc:
            raise CannotEdit(str(exc), changes) from None
    # a dropped variable the command inherits (also where one of its own assignments, dropped, set it again) is
    # unset with `env -u`, written first after `env`: an option there whatever follows (`--`, `-C DIR`, `-S STRING`)
    inherited = [c.name for c in changes if c.kind == "env" and c.action == "drop" and c.name in given.inherits]
    if inherited and not options:
        options = ["env"]
    if inherited:
        options[1:1] = [w for name in inherited for w in ("-u", name)]
    if options:  # an `env` prefix: kept as given, its assignments after its options
        full = [*options, *[f"{k}={v}" for k, v in out_env.items()], *argv]
        _env_reaches_launch(full, {}, env, changes, launch_map)
        return full, {}, changes
    _env_reaches_launch(argv, out_env, env, changes, launch_map)
    return argv, out_env, changes


def _env_reaches_launch(
    line: Sequence[str],
    exported: Mapping[str, str],
    env: Mapping[str, str],
    changes: list[Change],
    launch_map: Mapping[str, Any],
) -> None:
    """CannotEdit where a variable the diff sets or drops would not reach the server so (irobust4): the line's
    environment (`env` with `exported` in front of it) read as the gate reads the launch's (gate.find_launch: an `env`
    behind a launcher, a shell string's exports, unset and `env -i`), a variable set must hold its value there and one
    dropped must be gone; a launch behind sudo / doas / pkexec (gate.ENV_POLICY) runs in an environment not known.
    Before, the variables were written in front of the whole command, where `timeout 600 env -u NAME`, `nohup env -i`,
    `bash -c "export NAME=..."` or sudo's env_reset took them away again: the advice never reached the server."""
    wanted = [c for c in changes if c.kind == "env"]
    if not wanted:
        return
    from stackcheck.launch.gate import find_launch, split_env_prefix

    stops: list[tuple[str, bool]] = []
    argv, start = split_env_prefix(line, {**env, **exported}, stops=stops)
    trace: dict[str, Any] = {"env_stops": stops}
    seen = find_launch(argv, launch_map, start, trace)[2]
    policy = trace.get("env_policy") or []
    if policy:
        raise CannotEdit(f"the launch runs behind `{policy[0]}`, which rebuilds the environment by its own policy: "
                         "the variables set here may not reach the server", changes)  # fmt: skip
    lost = [c.name for c in wanted if (c.name in seen if c.action == "drop" else seen.get(c.name) != c.value) or stops]
    # SGLang 0.5.3+ copies SGL_X over SGLANG_X at import (facts/sgl_prefix.py): an SGL_ twin the command sets to
    # another value undoes the change (whatever the release: where it is not copied, the change is only made by hand)
    twins = [c.name for c in wanted if c.name.startswith("SGLANG_") and f"SGL_{c.name[7:]}" in seen
             and (c.action == "drop" or seen[f"SGL_{c.name[7:]}"] != c.value)]  # fmt: skip
    if twins:
        raise CannotEdit(f"{', '.join(dict.fromkeys(twins))} would not reach the server as the changes say: the "
                         f"command sets SGL_{twins[0][7:]}, which SGLang 0.5.3 and later copy over {twins[0]} when "
                         "they start", changes)  # fmt: skip
    if lost:
        raise CannotEdit(f"{', '.join(dict.fromkeys(lost))} would not reach the server as the changes say: the "
                         "command's own words before the launch (an `env` behind a launcher, a shell string's "
                         "export or unset) set the variable again", changes)  # fmt: skip


# ---- the whole recommendation ------------------------------------------------------------------------------


def stack_of(ctx: Context) -> dict[str, str]:
    out: dict[str, str] = {}
    driver = ctx.facts.get("driver") or {}
    if isinstance(driver.get("version"), str):
        out["driver"] = str(driver["version"])
    for name in ("torch", *KERNEL_PACKAGES[::-1], "flashinfer-python", "sglang"):
        v = ctx.installed_version(name)
        if v:
            out[name] = v
    return out


def blocked_command_flags(judge: Judge, required: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Flags of a given launch that turn on a feature blocked on the target stack: flag -> why.
    `required` is (feature, why) for each explicit requirement the gate derived ("--attention-backend fa3")."""
    out: dict[str, str] = {}
    for fid, why in required:
        flag = why.split()[0] if why.startswith("--") else None
        if flag is None:
            continue
        v = judge.verdict(fid)
        # crash: the launch fails; wrong-output: it serves wrong results; disabled: the flag does nothing. A
        # degraded feature still works, slower: whether to keep it is a decision of recommend.json (speculative
        # decoding is advice, never dropped)
        if v is not None and v.get("status") == "blocked" and v.get("effect") in ("crash", "wrong-output", "disabled"):
            out[flag] = f"{fid} is blocked ({v.get('effect')}): {_first_failure(v)}"
    return out


def _launcher(name: str) -> bool:
    """Whether a problem's subject is the launch's own program (an interpreter, SGLang's `sglang`) or `env` (its
    stop is recommend's own note), not a program before the launch."""
    from stackcheck.assembly.target import PY_NAME

    return name in ("sglang", "env") or bool(PY_NAME.match(name))


def recommend(
    ctx: Context,
    request: Request,
    features_now: list[FeatureVerdict] | None = None,
    required: Sequence[tuple[str, str]] = (),
) -> Recommendation:
    """The recommendation for the box in `ctx` (facts as they are; launch facts in ctx.launch)."""
    notes: list[str] = []
    plan: Plan | None = None
    facts_after: Facts = ctx.facts
    failing: set[str] | None = None  # the checks that fail on the target stack, when the plan has judged them
    if request.plan:
        from stackcheck.plan import plan_and_facts
        from stackcheck.record import replace  # the plan's records are frozen values (stackcheck.record.Frozen)

        features = (
            features_now if features_now is not None else [evaluate_feature(f, ctx) for f in ctx.manifests.features]
        )
        # which other stack would unblock a still-blocked feature is `stackcheck plan`'s question, not this one
        plan, after = plan_and_facts(
            ctx, features, hold=request.hold or None, pins=request.pins or None, upstream=False
        )
        plan = replace(plan, steps=tuple(s for s in plan.steps if not s.is_patch))  # never a local patch
        if plan.error:
            notes.append(f"no plan: {plan.error}; the launch is for the stack as installed")
        elif after is not None:
            facts_after = after
            failing = {c.id for c in plan.still_failing_checks}  # judged on these facts: no other check fails
    target = Context(facts=facts_after, manifests=ctx.manifests, launch=dict(ctx.launch))
    if not target.gpu_models():
        notes.append("no GPU visible: the choices that depend on the GPU stay open; give --assume-gpu CC[xN]")
    doc = ctx.manifests.recommend
    args: list[str] = []
    prefix_refused: list[Any] = []  # the gate's refusals of the given command's words before the launch
    if request.command:
        from stackcheck.launch.gate import ASSIGNMENT_SOURCE, derive

        given_derived = derive(list(request.command), ctx.manifests.launch, dict(request.env))
        args = list(given_derived.sglang_args)
        # a NAME=VALUE word a runner execs as its program (`nice -n 5 A=1 python ...`, `nohup A=1 ...`; irobust5,
        # ifc49): recommend keeps the words before the launch as given, so a line it wrote would be refused too (imend5)
        # (irev82) and any other refusal of a program before the launch, named by its word: a runner that prints and
        # exits (imend14: `nice --help`), refuses its values (irobust12: `nice -n abc`, `ionice -c 4`), srun's
        # allocation and -h (imend13), timeout's DURATION (imend12): recommend wrote the command back unchanged with
        # the gate's refusal as a note and exit 0, a line the gate refuses (unknown)
        programs = {os.path.basename(str(w)) for w in request.command if not str(w).startswith("-")}
        prefix_refused = [
            p for p in given_derived.problems
            if p.status in ("blocked", "unknown")
            and (ASSIGNMENT_SOURCE in (p.source or []) or (p.subject in programs and not _launcher(p.subject)))
        ]  # fmt: skip
    model = ModelSeen(request.architecture, request.model_config, args, requirements=request.model_requirements,
                      info=request.model_info, draft_info=request.draft_info)  # fmt: skip
    picks, undecided, judge = decide(target, doc, request.goal, model)
    never = never_entries(judge, doc)
    launch_map = ctx.manifests.launch
    diff: list[Change] | None = None
    stop = read_prefix(request.command, request.env).stop if request.command else None
    command: list[str]
    env: dict[str, str]
    if stop is not None:  # env fails there or does what is not read: no advice on the words after it (the gate's too)
        command, env = [], {}  # (diff None: no "needs no change" said of a command not edited)
        notes.append(
            f"no launch written: the command's env prefix is read no further ({stop[0]}); recommend does not edit "
            "the words after it, which env would not run as given"
        )
    elif request.command:
        blocked = blocked_command_flags(judge, required)
        try:
            command, env, diff = edit_command(
                request.command, request.env, picks, never, blocked, launch_map, request.model_flags
            )
            if prefix_refused:
                first = prefix_refused[0]
                raise CannotEdit(
                    f"the gate refuses the command's own words before the launch ({first.subject} {first.status}: "
                    f"{_short(first.message, 300)}), which recommend does not edit",
                    diff or [],
                )
        except CannotEdit as exc:  # never a wrong command: the changes are listed, to make by hand
            command, env, diff = [], {}, exc.changes
            notes.append(
                f"no launch written: the changes cannot be written into the given command ({exc}); make the "
                "changes below by hand"
            )
    else:
        tp = ctx.launch.get("tp")
        flags: list[tuple[str, str | bool]] = []
        env = {}
        for p in picks:
            if p.status != "chosen" or p.advice:
                continue
            flags += list(p.flags.items())
            env.update(p.env)
        flags += [(flag, value) for flag, value, _why, _source in request.model_flags]
        command = fresh_command(request.model_path, tp if isinstance(tp, int) else 1, flags)
    # the line proposed, judged as the gate judges it on the target stack: a refusal the gate knows is never proposed
    # (for a given launch, one it has already is its own: the gate says so of it)
    refused = []
    if stop is not None:
        from stackcheck.launch.gate import _env_stop_problem

        refused.append(_env_stop_problem(*stop))  # the gate's own refusal of the given command (exit 1, not 0)
    line_env = {**(request.env if request.command else {}), **env}  # the line runs with `env` exported
    if request.judge_line and stop is None:
        given = (
            _refusing(gate_problems(target, model, read_prefix(request.command, request.env).argv), model)
            if request.command
            else []
        )
        known = {(p.subject, p.status) for p in given}
        found = _refusing(gate_problems(target, model, read_prefix(command, line_env).argv), model) if command else []
        refused = [p for p in found if (p.subject, p.status) not in known]
    refused += [p for p in prefix_refused if p not in refused]  # (exit 1 even where no other change is needed)
    if request.judge_line and command and (failing is None or failing or model.architecture is not None):
        # the stack checks the line needs that still fail on the target stack (the plan's still_failing_checks
        # among them): the gate refuses the launch for them whatever its flags, so no line is proposed either
        read = read_prefix(command, line_env)  # what the line's SGLang sees: its env prefix applied
        refused += check_problems(target, read.argv, read.env, failing, model)
    told = [p for p in refused if p not in prefix_refused]  # (the words before the launch: said above)
    if told and stop is None:  # (a stop's note is written above)
        what = "; ".join(f"{p.subject} ({p.status}): {_short(p.message, 300)}" for p in told)
        notes.append(f"no launch proposed: the gate would refuse it on the target stack: {what}")
        command, env = [], {}
    return Recommendation(
        goal=request.goal,
        launch=dict(ctx.launch),
        assumptions=list(request.assumptions),
        plan=plan,
        facts_after=facts_after,
        stack=stack_of(target),
        command=command,
        env=env,
        picks=picks,
        never=never,
        undecided=undecided,
        diff=diff,
        notes=notes,
        refused=[{"subject": p.subject, "status": p.status, "message": p.message} for p in refused],
    )


# ---- the gate's advice ---------------------------------------------------------------------------------------

#: launch facts recommend reads that a gate launch does not carry: the model is not read there
GATE_DEFAULTS: dict[str, Any] = {
    "goal": "latency",
    "dtype": "auto",
    "deterministic": False,
    "mla": False,
    "attention_sinks": False,
    "p2p_hangs": False,
}


def gate_advice(
    ctx: Context,
    command: Sequence[str],
    sglang_args: Sequence[str],
    required: Sequence[tuple[str, str]],
    env: Mapping[str, str],
    show_all: bool = False,
    architecture: str | None = None,
    model_config: dict[str, Any] | None = None,
    model_info: Any = None,
) -> list[str]:
    """`stackcheck gate`'s notes: what this launch misses or should drop on the stack as installed (no plan),
    one line each; with `show_all`, every choice, alternative and never entry too. `architecture`,
    `model_config`: the model as the gate's preflight read it (None: not read), so that no note suggests a line
    the gate refuses for that model; where the model rules every option of a decision out, a note says so.
    `model_info`: the served model as that preflight read it (preflight.model.ModelInfo), whose launch facts each
    line is judged with, as recommend judges its own (imend15: without it the advice read config.json again)."""
    launch = {**GATE_DEFAULTS, **{k: v for k, v in ctx.launch.items() if v is not None}}
    from stackcheck.launch.gate import option_given, option_value, reading_flags

    # as SGLang's argparse reads them: the last --dtype, abbreviated or not (the parent read the first one)
    flags = reading_flags(ctx.manifests.launch, None)
    dtype = option_value(sglang_args, ("--dtype",), flags)
    if dtype is not None:
        launch["dtype"] = dtype
    launch["deterministic"] = option_given(sglang_args, ("--enable-deterministic-inference",), flags)
    here = Context(facts=ctx.facts, manifests=ctx.manifests, launch=launch)
    request = Request(goal="latency", command=list(command), env=env, plan=False, architecture=architecture,
                      model_config=model_config, model_info=model_info, judge_line=False)  # fmt: skip
    rec = recommend(here, request, None, required)
    lines = []
    for c in rec.diff or []:
        lines.append(f"recommend: {c.text()} ({c.title}" + (f"; {c.gain})" if c.gain else ")"))
    # the line the advice leads to, if the model's own assertions still refuse its attention backend (no option
    # holds here for this model, or none is known on this box): said, never left as if it were fine
    from stackcheck.launch.gate import derive

    advised = read_prefix(rec.command, env).argv
    refused = None
    if not any(p.decision == "attention" and p.status == "chosen" for p in rec.picks):  # a chosen one was judged
        advised_args = list(derive(advised, ctx.manifests.launch, {}).sglang_args)
        refused = model_refusal(here, ModelSeen(architecture, model_config, advised_args, info=model_info), {})
    why = next((u["why"] for u in rec.undecided if u["decision"] == "attention"), None)
    if refused or (why and any(p.decision == "attention" and p.model_refused for p in rec.picks)):
        what = _short(why or refused or "", 300)
        lines.append(f"recommend [attention]: no attention backend can be advised for this model here: {what}")
    if show_all:
        for p in rec.picks:
            if p.status == "chosen":
                gain = _gain_short(p.gain)
                lines.append(f"recommend [{p.decision}]: {p.title}: {_short(p.why)}" + (f" ({gain})" if gain else ""))
            else:
                lines.append(f"recommend [{p.decision}]: not {p.title}: {_short(p.why)}")
        for u in rec.undecided:
            lines.append(f"recommend [{u['decision']}]: undecided: {u['why']}")
        for n in rec.never:
            lines.append(f"never: {n.get('title')} ({n.get('effect')}): {_short(str(n.get('why')))}")
    elif lines:
        lines.append("recommend: `stackcheck gate --advise` shows every choice with its source")
    return lines


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _gain_short(gain: Any) -> str:
    if not isinstance(gain, dict) or gain.get("kind") != "measured":
        return ""
    f = next((x for x in gain.get("figures") or [] if isinstance(x, dict) and "before" in x), None)
    if f is None:
        return ""
    whose = "upstream" if gain.get("by") == "upstream" else "measured"
    return f"{whose}: {f.get('metric')} {f.get('before')} -> {f.get('after')} {f.get('unit')}"
