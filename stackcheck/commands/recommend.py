"""`stackcheck recommend`: the launch that works and is fastest on this box (or --facts, or --assume-*):
the plan steps it needs, then the SGLang command line and environment, each setting with its reason, its
source and the upstream measurement behind it; the alternatives rejected and why; what never to do here.
With `-- COMMAND`, what that launch misses or should drop, as a diff of flags and environment.

Exit codes: 0 a recommendation was made (and, with a command, the command needs no change); 1 with a
command: the command misses something or should drop something (the diff is printed), or no launch is proposed
because the gate would refuse every line recommend can make on the target stack (`refused` names why: a refusal
rule, a needed feature, or a stack check the line needs that still fails after the plan); 2 usage
error or bad input; 3 a probe failed with --strict; 4 internal error."""

from __future__ import annotations

import argparse
import os
import posixpath
from collections.abc import Mapping
from typing import Any, NamedTuple

from stackcheck.commands.arguments import (
    add_facts_options,
    add_output_options,
    emit,
    file_name,
    format_choice,
    given,
    options_from,
    render_options,
)
from stackcheck.errors import EXIT_FINDING, EXIT_OK, UsageError
from stackcheck.render import RECOMMEND_FORMATS

SCHEMA_VERSION = 1  # of the recommendation document (--format json; schemas/recommendation.schema.json)
QUANTIZATIONS = ("none", "fp8", "mxfp4", "modelopt_fp4", "mxfp8", "awq", "gptq")
MAX_CONFIG_BYTES = 4 * 1024 * 1024


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_facts_options(p)
    add_output_options(p, RECOMMEND_FORMATS)
    p.add_argument(
        "--model-path",
        metavar="M",
        type=given,
        help="the model: a local directory, or a Hugging Face id in the hub cache (its config.json is read)",
    )
    p.add_argument("--tp", type=int, metavar="N", help="tensor-parallel size (default: the number of GPUs)")
    p.add_argument("--goal", choices=["latency", "throughput"], default="latency", help="what to optimise")
    p.add_argument(
        "--assume-quantization",
        choices=QUANTIZATIONS,
        metavar="Q",
        help=f"the model's quantization when it cannot be read ({', '.join(QUANTIZATIONS)})",
    )
    p.add_argument(
        "--assume-p2p-hang",
        action="store_true",
        help="GPU peer-to-peer hangs on this box (PCIe ACS / IOMMU): recommend NCCL_P2P_DISABLE=1",
    )
    p.add_argument(
        "--hold", action="append", metavar="COMPONENT", default=[], help="keep a component where it is (as in plan)"
    )
    p.add_argument("--to", action="append", metavar="COMPONENT==VERSION", default=[], help="pin a target (as in plan)")
    p.add_argument("--no-plan", action="store_true", help="recommend for the stack as installed (no upgrade steps)")
    p.add_argument(
        "--plan-facts",
        metavar="FILE",
        type=file_name,
        help="also write the facts of this box as the plan leaves it (a facts document: check the launch before "
        "upgrading with `stackcheck gate --facts FILE --dry-run -- COMMAND`)",
    )
    p.add_argument("server_command", metavar="-- COMMAND", nargs=argparse.REMAINDER, help="a launch to check, after --")


def _command(args: argparse.Namespace) -> list[str] | None:
    cmd = list(args.server_command or [])
    if not cmd:
        return None
    if cmd[0] != "--":
        raise UsageError(f"unexpected argument {cmd[0]!r}: put the server command after --")
    if len(cmd) == 1:
        raise UsageError("missing command after -- (expected, e.g., -- python -m sglang.launch_server ...)")
    from stackcheck.commands.gate import command_bounded

    return command_bounded(cmd[1:])


def find_model(spec: str | None, argv: list[str]) -> tuple[str | None, str | None]:
    """The model directory to read for `spec` and how it was found, the gate's way (SGLang's order): a local
    directory, else a Hugging Face repository id in the hub cache (--download-dir, HF_HUB_CACHE, HF_HOME, ...;
    --revision), never the network. (None, why not) when there is nothing local to read."""
    if not spec:
        return None, None
    from stackcheck.launch.preflight.model import home_dir, locate
    from stackcheck.readers.fsview import HostView

    env = dict(os.environ)
    directory, how = locate(
        HostView(), spec, env, _arg_value(argv, ("--download-dir",)), _arg_value(argv, ("--revision",)),
        os.getcwd(), home_dir(env),
    )  # fmt: skip
    return directory, how


def model_facts(
    path: str | None,
    model_data: Mapping[str, Any] | None = None,
    sglang_version: str | None = None,
    quantization_flag: str | None = None,
) -> tuple[dict[str, Any], str | None, dict[str, Any] | None]:
    """Launch facts read from a model directory: quantization, MLA, attention sinks, dtype. (facts, where they came
    from, config.json itself) or ({}, None, None) when there is no config.json to read. config.json and the
    quantization are read by the gate's own reader (launch.preflight.model read_config, read_quantization, with
    `model_data`: manifests/preflight.json `model`), so that recommend and the gate's preflight say the same of one
    model: `quantization` is SGLang's quant_method for the checkpoint in `sglang_version` ('none': not quantized),
    absent (with `quantization_why`) where the checkpoint names one SGLang does not map. MLA is decided as the
    gate's preflight and SGLang's ModelConfig decide it, by the architecture and the release (model_data's
    mla_architectures; launch.preflight.model.mla_of), None (with `mla_why`) where that is not known; a config that
    names no architecture falls back to the presence of kv_lora_rank. Where the release keeps a ModelOpt
    checkpoint's quant_method 'modelopt' and so cannot load it without --quantization (`quantization_flag`: the
    given launch's; launch.preflight.model.kept_modelopt, the gate's check), `quantization_flag` in the facts is
    the value that loads it (and `quantization`), with `quantization_flag_why` and its source."""
    if not path:
        return {}, None, None
    from stackcheck.launch.preflight.model import Unreadable, kept_modelopt, read_config, read_quantization
    from stackcheck.readers.fsview import HostView

    mdata: Mapping[str, Any] = model_data or {}
    view = HostView()
    try:
        data = read_config(view, path, int(mdata.get("config_cap_bytes", MAX_CONFIG_BYTES)))
        quant = read_quantization(view, path, data, mdata, sglang_version)
    except FileNotFoundError:
        return {}, None, None
    except Unreadable as exc:
        raise UsageError(f"--model-path {path}: {exc}") from None
    text: dict[str, Any] = data["text_config"] if isinstance(data.get("text_config"), dict) else data
    out: dict[str, Any] = {}
    from stackcheck.launch.preflight.model import quantization_requirements

    # the features the checkpoint's own quantization needs, as the gate's preflight adds them (launch_facts takes
    # them out of the facts: recommend judges its line with them, launch.recommend.gate_problems)
    out["model_requirements"] = quantization_requirements(mdata, quant.method, quant.config, f"model {quant.why}")
    # (irecmodel) the model as the gate's preflight reads it, by its own reader, whose launch facts each line is
    # judged with (gate_preflight.model_file_facts): the facts recommend copied by hand missed some
    from stackcheck.launch.preflight.model import read_model

    info = read_model(view, path, "model", {}, {}, {"model": mdata}, "/", os.path.expanduser("~"), True, sglang_version)
    if info.attention is not None:
        out["model_info"] = info
    from stackcheck.launch.gate_preflight import checkpoint_quant_facts
    from stackcheck.launch.preflight import model_launch

    # (irev81) the checkpoint's schemes and KV-cache format as the gate's preflight reads them (launch.model_quant_
    # schemes, launch.model_kv_cache_fp8), which checks.json's sglang-gpu-min-cc and the features' rules read: taken
    # from that one reading (imend15: no second call of preflight.model.quant_scheme_facts here)
    read = checkpoint_quant_facts(model_launch(info, {"model": mdata}, quantization_flag, sglang_version))
    out.update({k: read[k] for k in ("model_quant_schemes", "model_kv_cache_fp8") if k in read})
    if quant.method is not None:
        out["quantization"] = quant.method
    elif quant.why is None:
        out["quantization"] = "none"
    else:
        out["quantization_why"] = quant.why
    listed = data.get("architectures")
    names = [a for a in listed if isinstance(a, str)] if isinstance(listed, list) else []
    given = {"--quantization": quantization_flag} if quantization_flag else {}
    kept = kept_modelopt(mdata, quant.config, quant.method, names, given, sglang_version)
    if kept is not None and kept.flag is not None:
        out["quantization"] = out["quantization_flag"] = kept.flag
        out["quantization_flag_why"] = kept.message
        out["quantization_flag_source"] = ((mdata.get("modelopt_quant_method") or {}).get("kept") or {}).get("source")
    elif kept is not None:
        out.pop("quantization", None)
        out["quantization_why"] = kept.message
    mla_table = mdata.get("mla_architectures")
    if names and isinstance(mla_table, dict):
        from stackcheck.launch.preflight.model import mla_of

        out["mla"], why = mla_of(mla_table, names, data, sglang_version)
        if out["mla"] is None:
            out["mla_why"] = why
    else:
        out["mla"] = bool(text.get("kv_lora_rank"))
    from stackcheck.launch.preflight.model import mla_dims, mla_prefill_dims, query_heads

    out.update(mla_dims(data))  # the MLA dims the trtllm_mla and flashmla kernels check, as the gate reads them
    out.update(mla_prefill_dims(data))  # and those trtllm_mla's ragged prefill checks
    if (heads := query_heads(data)) is not None:
        out["query_heads"] = heads  # split by the attention TP size in launch_facts (launch.mla_heads_per_gpu)
    out["attention_sinks"] = str(text.get("model_type") or data.get("model_type")) == "gpt_oss"
    from stackcheck.launch.preflight.model import attention_keys

    if attention_keys(data).get("dual_chunk_attention_config") is not None:  # the gate's reading (model_dual_chunk)
        out["dual_chunk"] = True  # (absent otherwise: recommend.json's option for it asks whether it exists)
    dtype = text.get("torch_dtype") or data.get("torch_dtype") or text.get("dtype")
    if isinstance(dtype, str):
        out["model_dtype"] = dtype
    return out, posixpath.join(path, "config.json"), data


def read_as_gate(path: str, role: str, mdata: Mapping[str, Any], sglang_version: str | None) -> Any:
    """A model directory as the gate's preflight reads it (launch.preflight.model.read_model, the one reader of the
    served model and the speculative draft model, `role` "model" or "draft model"): its ModelInfo, None where its
    config.json was not read."""
    from stackcheck.launch.preflight.model import read_model
    from stackcheck.readers.fsview import HostView

    info = read_model(HostView(), path, role, {}, {}, {"model": mdata}, "/", os.path.expanduser("~"), True,
                      sglang_version)  # fmt: skip
    return info if info.attention is not None else None


def _arg_value(argv: list[str], names: tuple[str, ...]) -> str | None:
    value = None
    for i, tok in enumerate(argv):
        name, eq, inline = tok.partition("=")
        if name in names:
            value = inline if eq else (argv[i + 1] if i + 1 < len(argv) else None)
    return value


class LaunchFacts(NamedTuple):
    launch: dict[str, Any]  # the launch facts of the request
    assumptions: list[str]  # what was assumed
    model_path: str | None
    config: dict[str, Any] | None  # the model's config.json (None: not read)
    model_flags: list[tuple[str, str, str, Any]]  # flags the model needs to load (recommend.Request.model_flags)
    model_requirements: list[Any]  # the checkpoint's quantization needs (recommend.Request.model_requirements)
    model_info: Any = None  # the model as the gate's preflight reads it (recommend.Request.model_info)
    draft_info: Any = None  # (irec3) the draft model the given launch names, read the same way (Request.draft_info)


def fitting_tp(info: Any, gpus: int, sglang_version: str | None, table: Mapping[str, Any] | None = None) -> int:
    """(ishape) The largest tensor-parallel size up to `gpus` at which the gate's model-shape check
    (preflight.shapes.shape_results: the heads and a dense MLP at that size, no expert parallelism) finds nothing
    for the model as read; `gpus` itself where none does (the line is then refused, the check named)."""
    from stackcheck.launch.preflight.shapes import shape_results

    keys = getattr(info, "attention", None)
    for tp in range(gpus, 0, -1):
        if not shape_results(keys, info.mla, tp, [tp], None, sglang_version, "model", table=table):
            return tp
    return gpus


def launch_facts(
    args: argparse.Namespace,
    derived: Any,
    gpu_count: int,
    model_data: Mapping[str, Any] | None = None,
    sglang_version: str | None = None,
    launch_map: Mapping[str, Any] | None = None,
) -> LaunchFacts:
    """The launch facts of the request, what was assumed, the model path, the model's config.json and the flags
    the model needs. `sglang_version`: the release that reads the model; `launch_map`: manifests/launch.json (the
    flags that split attention, for the heads per GPU)."""
    launch: dict[str, Any] = {"goal": args.goal, "dtype": "auto", "deterministic": False}
    assumptions: list[str] = []
    model_flags: list[tuple[str, str, str, Any]] = []
    model_path = args.model_path
    if derived is not None:
        launch.update({k: v for k, v in derived.launch.items() if v is not None})
        argv = list(derived.sglang_args)
        model_path = model_path or _arg_value(argv, ("--model-path", "--model"))
        launch["dtype"] = _arg_value(argv, ("--dtype",)) or "auto"
        launch["deterministic"] = "--enable-deterministic-inference" in argv
        if args.tp is not None and "tp" in derived.launch and derived.launch["tp"] != args.tp:
            raise UsageError(f"--tp {args.tp} and the command's tensor-parallel size {derived.launch['tp']} differ")
    if args.tp is not None:
        if args.tp < 1:
            raise UsageError(f"--tp {args.tp}: expected a positive integer")
        launch["tp"] = args.tp
    every_gpu = (derived is None or "tp" not in derived.launch) and args.tp is None
    if derived is None or "tp" not in derived.launch:
        launch.setdefault("tp", max(1, gpu_count))
        if args.tp is None:
            assumptions.append(f"tensor-parallel size {launch['tp']}: every visible GPU (give --tp N)")
    if gpu_count and launch["tp"] > gpu_count:
        raise UsageError(f"tensor-parallel size {launch['tp']} is larger than the {gpu_count} GPU(s) of this box")
    argv = list(derived.sglang_args) if derived is not None else []
    directory, how = find_model(model_path, argv)
    model, where, config = model_facts(directory, model_data, sglang_version, _arg_value(argv, ("--quantization",)))
    model_requirements = model.pop("model_requirements", None) or []
    model_info = model.pop("model_info", None)
    if every_gpu and model_info is not None and launch["tp"] > 1:  # (ishape) a size the model's shape admits
        fitted = fitting_tp(model_info, launch["tp"], sglang_version, (model_data or {}).get("model_shape"))
        if fitted != launch["tp"]:
            assumptions[-1] = (
                f"tensor-parallel size {fitted}: the largest up to the {launch['tp']} visible GPUs that the model's "
                "shape admits as SGLang splits it (its heads; a dense MLP's share per rank) (give --tp N)"
            )
            launch["tp"] = fitted
    # (irec3) the speculative draft model the given launch names, read as the gate's preflight reads it (read_as_gate):
    # the draft_* facts and its experts each line is judged with (recommend.Request.draft_info); None: not read
    draft_info = None
    draft_spec = _arg_value(argv, ("--speculative-draft-model-path",))
    if draft_spec:
        draft_dir, _how = find_model(draft_spec, argv)
        draft_info = read_as_gate(draft_dir, "draft model", model_data or {}, sglang_version) if draft_dir else None
        if draft_info is not None:
            draft_info.spec = draft_spec  # (the line names it so: recommend's lines keep the given flags)
    flag = model.pop("quantization_flag", None)
    flag_why, flag_source = model.pop("quantization_flag_why", None), model.pop("quantization_flag_source", None)
    if flag is not None and not args.assume_quantization:
        model_flags.append(("--quantization", flag, f"model {model_path}: {flag_why}", flag_source))
    quant_why = model.pop("quantization_why", None)
    if quant_why is not None and not args.assume_quantization:
        assumptions.append(f"model {model_path}: quantization not known ({quant_why}; give --assume-quantization Q)")
    heads = model.pop("query_heads", None)
    if isinstance(heads, int):  # the query heads per GPU FlashInfer's trtllm-gen MLA decode checks, as the gate reads
        from stackcheck.launch.gate_preflight import heads_per_gpu, split_flags

        given = dict(derived.options) if derived is not None else {}
        args_given = list(derived.sglang_args) if derived is not None else []
        per_gpu = heads_per_gpu(heads, {**given, "--tp-size": launch["tp"]}, args_given, split_flags(launch_map or {}))
        if per_gpu is not None:
            model["mla_heads_per_gpu"] = per_gpu
    mla_why = model.pop("mla_why", None)
    if mla_why is not None:
        model.pop("mla")  # not known: no choice that hangs on it is taken for granted
        assumptions.append(f"model {model_path}: {mla_why}; the choices that differ for an MLA model are not made")
    if where is not None and how != "local directory":
        assumptions.append(f"model {model_path}: config read from the {how}")
    for key, value in model.items():
        if key == "model_dtype":
            if launch["dtype"] == "auto":
                launch["dtype"] = value
            continue
        launch.setdefault(key, value)
    if args.assume_quantization:
        launch["quantization"] = args.assume_quantization
        assumptions.append(f"quantization {args.assume_quantization} (--assume-quantization)")
    if where is None:
        launch.setdefault("mla", False)
        launch.setdefault("attention_sinks", False)
        why = f" ({how})" if how else ""  # (not the spec itself: a URL may carry credentials)
        assumptions.append(
            f"a standard (MHA) model without attention sinks: no local model config was read{why} "
            "(give --model-path DIR with its config.json)"
        )
    if args.assume_p2p_hang:
        launch["p2p_hangs"] = True
        assumptions.append("GPU peer-to-peer hangs on this box (--assume-p2p-hang)")
    else:
        launch["p2p_hangs"] = False
    return LaunchFacts(launch, assumptions, model_path, config, model_flags, model_requirements, model_info, draft_info)


def run(args: argparse.Namespace) -> int:
    from stackcheck.assembly.pipeline import apply_assumptions, gather
    from stackcheck.commands.plan import parse_to
    from stackcheck.knowledge.loader import load
    from stackcheck.launch.recommend import Request, recommend
    from stackcheck.plan import component_name
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_feature

    command = _command(args)
    pins = parse_to(list(args.to or []))
    for h in args.hold or []:
        component_name(h)
    for name in pins:
        component_name(name, "--to")
    if args.no_plan and (args.hold or pins):
        raise UsageError("--no-plan with --hold/--to: nothing is planned, so there is nothing to hold or pin")
    opts = options_from(args)
    opts.command = command  # a given launch is judged on its own interpreter's packages
    manifests = load(opts.manifests_dirs)
    facts, _outcomes, _host = gather(opts, lambda: manifests)
    facts = apply_assumptions(facts, opts, manifests)
    if opts.facts_file:  # what the facts file leaves out that the manifests' tables decide, as the audit fills it
        from stackcheck.facts.filled import fill

        facts = fill(facts, manifests)[0]
    derived = None
    env: dict[str, str] = {}
    if command is not None:
        from stackcheck.launch import gate

        env = dict(os.environ)
        derived = gate.derive(command, manifests.launch, env)
        if derived.entrypoint is None:
            raise UsageError("the command after -- is not an SGLang launch (python -m sglang.launch_server ...)")
    model_data = manifests.preflight.get("model")
    ctx = Context(facts=facts, manifests=manifests)
    required = [(r.feature, r.why) for r in derived.required if r.kind == "explicit"] if derived else []
    installed = ctx.installed_version("sglang")

    def read(release: str | None) -> LaunchFacts:
        """The launch facts with the model read as SGLang `release` reads it (MLA, quantization, the flags it needs
        to load: each depends on the release; the gate reads the model the same way)."""
        gpus = len(facts.get("gpus") or [])
        return launch_facts(args, derived, gpus, model_data if isinstance(model_data, dict) else None, release,
                            manifests.launch)  # fmt: skip

    def advise(lf: LaunchFacts) -> Any:
        from stackcheck.launch.preflight.model import attention_keys

        listed = lf.config.get("architectures") if lf.config is not None else None
        first = listed[0] if isinstance(listed, list) and listed and isinstance(listed[0], str) else None
        ctx.launch = lf.launch
        features_now = [evaluate_feature(f, ctx) for f in manifests.features]
        request = Request(
            goal=args.goal,
            model_path=lf.model_path,
            launch=lf.launch,
            assumptions=lf.assumptions,
            command=command,
            env=env,
            plan=not args.no_plan,
            hold=list(args.hold or []),
            pins=pins,
            architecture=first,  # what the gate reads of the model, so that no line is one it refuses for the model
            model_config=attention_keys(lf.config) if lf.config is not None else None,
            model_flags=lf.model_flags,
            model_requirements=lf.model_requirements,
            model_info=lf.model_info,
            draft_info=lf.draft_info,
        )
        return recommend(ctx, request, features_now, required)

    first_read = read(installed)
    rec = advise(first_read)
    # the plan may install another SGLang: the launch it proposes runs there, so the model is read again as that
    # release reads it, and, where that reading differs, the recommendation made again on it (said as an assumption)
    planned = Context(facts=rec.facts_after, manifests=manifests).installed_version("sglang")
    if first_read.config is not None and planned is not None and planned != installed:
        note = (
            f"model {first_read.model_path}: read as SGLang {planned} reads it (the release the plan installs), "
            f"not as the installed {installed or 'release (not known)'}"
        )
        again = read(planned)
        same = (again.launch, again.model_flags, again.assumptions)
        if same == (first_read.launch, first_read.model_flags, first_read.assumptions):
            rec.assumptions.append(note)  # the same reading: the recommendation stands (no second plan)
        else:
            again.assumptions.append(note)
            rec = advise(again)
            moved = Context(facts=rec.facts_after, manifests=manifests).installed_version("sglang")
            if moved != planned:  # the new reading moved the plan again: say which release the reading assumed
                rec.assumptions.append(
                    f"model {first_read.model_path}: the plan on that reading installs SGLang "
                    f"{moved or 'not known'}; the model was read as {planned} reads it"
                )
    doc = rec.to_json()
    doc["box"] = box_summary(facts)
    from stackcheck.facts.filled import filled_texts

    filled = filled_texts(facts)
    if filled:
        doc["notes"].append("filled from the manifests, not stated: " + "; ".join(filled))
    if derived is not None:
        doc["given"] = list(command or [])
        doc["notes"] += [p.message for p in derived.problems]
    plan_text = None
    if args.plan_facts:
        from stackcheck.render.jsonout import json_document

        after = {
            "schema_version": 1,
            "note": "the facts of this box as `stackcheck recommend`'s plan leaves it (hypothetical: nothing was run)",
            "facts": rec.facts_after,
        }
        from stackcheck.redact import public_document

        plan_text = json_document(public_document(after))  # the box's facts: masked as shown
    _mask_secrets(doc)
    from stackcheck.knowledge.sources import normalize

    doc = {"schema_version": SCHEMA_VERSION, **normalize(doc, manifests.sources)}  # every `source` and `evidence`
    _write(args, RECOMMEND_FORMATS[format_choice(args)](doc, render_options(args)), plan_text)  # as [{id, ...}]
    return EXIT_FINDING if rec.diff or rec.refused else EXIT_OK


def _write(args: argparse.Namespace, text: str, plan_text: str | None) -> None:
    """The recommendation (stdout or --output) and the --plan-facts file: both rendered first, the plan facts
    staged beside their file, then the recommendation written, then the plan facts renamed into place. A
    recommendation that cannot be written (exit 2) leaves the plan-facts file as it was; a plan-facts file that
    is a FIFO or a device cannot be staged and is written last."""
    if plan_text is None:
        emit(text, args)
        return
    from stackcheck.atomic import stage_atomic, write_atomic

    output = getattr(args, "output", None)
    if output and os.path.realpath(output) == os.path.realpath(args.plan_facts):
        raise UsageError(f"--output and --plan-facts name the same file ({output}): one would replace the other")
    staged = stage_atomic(args.plan_facts, plan_text)
    try:
        emit(text, args)
    except BaseException:
        if staged is not None:
            staged.abort()
        raise
    if staged is None:
        write_atomic(args.plan_facts, plan_text)
    else:
        staged.commit()


def _mask_secrets(doc: dict[str, Any]) -> None:
    """Nothing secret from the given command line leaves the box: the values of secret flags (--api-key, ...),
    credentials in URLs and secret assignments (HF_TOKEN=...) are masked in the given and the recommended
    command, and in every message; a note says so, since the printed line then needs the value put back."""
    from stackcheck.redact import MASK, redact_argv, redact_tree

    masked = False
    for key in ("given", "command"):
        if isinstance(doc.get(key), list):
            shown = redact_argv([str(a) for a in doc[key]])
            masked = masked or shown != [str(a) for a in doc[key]]
            doc[key] = shown
    for key, value in list(doc.items()):
        if key not in ("given", "command"):
            doc[key] = redact_tree(value)
    if masked and isinstance(doc.get("notes"), list):
        doc["notes"].append(f"secret values of the given command are shown as {MASK}: put them back before running it")


def box_summary(facts: Any) -> str:
    """'8x NVIDIA RTX PRO 6000 ... (cc 12.0), cross-socket, P2P all'."""
    gpus = facts.get("gpus") or []
    models: dict[str, int] = {}
    for g in gpus:
        key = f"{g.get('name') or 'GPU'} (cc {g.get('compute_capability') or '?'})"
        models[key] = models.get(key, 0) + 1
    parts = [", ".join(f"{n}x {k}" for k, n in models.items()) or "no GPU visible"]
    topo = facts.get("topology") or {}
    if len(gpus) > 1:
        parts.append(f"{topo.get('interconnect') or 'interconnect unknown'}, P2P {topo.get('p2p') or 'unknown'}")
    return ", ".join(parts)
