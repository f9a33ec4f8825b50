"""Wiring stackcheck/launch/preflight/ into `stackcheck gate`: what the gate checks besides the feature tables.

The order in commands/gate.py: the GPU-usage reading starts in a thread with the other probes (only when the facts are
this box's); `--config FILE` is merged into the server's arguments before they are derived (as SGLang merges
it); after the verdicts, `run_for_gate` reads the model(s), adds the features the model needs to the
launch's requirements (each with the line of the config that asks for it), runs the checks, and `merge`
turns their results into refusals and warnings: fail refuses; unknown refuses unless --allow-unknown; warn
warns. Every check is in the decision document (`preflight.checks`) with its observed and required values.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence

from stackcheck.errors import UsageError
from stackcheck.launch import usage as _usage
from stackcheck.launch.preflight import Inputs, Preflight, read_live, run
from stackcheck.launch.preflight.result import CheckResult
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.verdicts import REFUSED_EFFECTS

if TYPE_CHECKING:
    from typing import Any

PREFLIGHT_KIND = "preflight"

#: the GPU usage reading the gate's usual path starts (stackcheck.launch.usage: a hit starts it without this module)
start_usage = _usage.start_usage
EarlyUsage = _usage.EarlyUsage


def expand_config(
    command: list[str],
    mapping: Mapping[str, Any],
    data: Mapping[str, Any],
    env: Mapping[str, str],
    cwd: str | None = None,
    facts: bool = False,
) -> tuple[list[str], str | None, str | None]:
    """The command with an SGLang launch's `--config FILE` merged in (see preflight/configfile.py); a relative FILE
    is read from the directory the launch starts in: `cwd` (gate --cwd), else the gate's own working directory, after
    the command's `env -C DIR`s (gate.launch_cwd). `facts` (gate --facts): without `cwd` that directory is the facts'
    box's, not told: a relative FILE is left unread (the launch facts unknown, never this host's file)."""
    from stackcheck.launch import gate

    argv, _ = gate.split_env_prefix(command, env)
    entry, args = gate.find_entrypoint(argv, mapping)
    if entry is None or "--config" not in args:
        return command, None, None
    if not args or list(command[len(command) - len(args) :]) != args:
        # the launch is a simple command of a shell's command string (`bash -c "cd /x && python -m ... --config
        # c.yaml"`): its words are no tail of the command to merge into, and a relative path is the shell's `cd`'s;
        # left unread, the --config makes the launch facts unknown (derive), never guessed
        return command, None, None
    start: str | gate.CwdUnknown = cwd or (gate.CwdUnknown(gate.FACTS_CWD, shell=False) if facts else os.getcwd())
    where = gate.launch_cwd(command, mapping, env, start)
    at = args.index("--config")
    name = args[at + 1] if at + 1 < len(args) else ""
    if name and isinstance(where, gate.CwdUnknown) and not name.startswith("/"):
        return command, None, None  # (imend3: read from this process's directory under --facts before)
    from stackcheck.assembly.gate_cache import host_view
    from stackcheck.launch.preflight.configfile import expand_config as merge_config

    head = command[: len(command) - len(args)]
    merged, path, problem = merge_config(args, host_view(), where if isinstance(where, str) else "/", data)
    return [*head, *merged], path, problem


def server_env(command: Sequence[str], env: Mapping[str, str]) -> dict[str, str]:
    from stackcheck.launch import gate

    return gate.split_env_prefix(command, env)[1] if command else dict(env)


def run_for_gate(
    derived: Any,
    mapping: Mapping[str, Any],
    manifests: Any,
    report: Mapping[str, Any],
    sglang_version: str | None,
    env: Mapping[str, str],
    usage: Any,
    live: bool,
    opts: Any = None,
) -> Preflight:
    """Run the checks for a derived SGLang launch, and add the model's needs to its requirements."""
    from stackcheck.assembly import gate_cache
    from stackcheck.launch import gate

    facts: dict[str, Any] = report["facts"] if isinstance(report.get("facts"), dict) else {}
    data = manifests.preflight
    readings = None
    if live:
        py: dict[str, Any] = facts["python"] if isinstance(facts.get("python"), dict) else {}
        search = py.get("sys_path") if isinstance(py.get("sys_path"), list) else None
        # the target environment's sys.path (the python probe: the gated command's interpreter, --python, a
        # venv) read through the same view as the packages: --root DIR; an image is not read again here
        # (the facts name the home directory "~": pipeline.scrub_home; the directories are read again here)
        from stackcheck.paths import unscrub_home

        # (a "~" this process did not scrub is not opened: unscrub_home gives None, and a check that needs the
        # directory is then unknown, as for any directory the probe listed and the check did not)
        here = [unscrub_home(str(p)) for p in search] if search else None
        search_dirs: list[str] | None = [p for p in here if p is not None] if here else [p for p in sys.path if p]
        deps_view = None
        if getattr(opts, "image", None):
            search_dirs = None
        elif getattr(opts, "root", None):
            from stackcheck.assembly.target import open_view

            deps_view = open_view(opts)
        reading = gate_cache.note("usage", (), usage.get) if usage is not None else None
        readings = read_live(derived.options, data, reading, search_dirs, facts)
        readings.deps_view = deps_view
        own = set(readings.own_pids)
        if gate_cache.ACTIVE and any(p.pid in own for g in getattr(reading, "gpus", None) or [] for p in g.processes):
            gate_cache.ACTIVE[0].spoiled = True  # (the memory check leaves this process out: a pid of this run)
    known = set((manifests.components.get("packages") or {}).keys())
    for pkg in list(known):
        known.update(str(n) for n in (manifests.package(pkg).get("names") or []))
    # gate --root DIR: the model path and the Hugging Face cache are the root's files (igap42, issue 16; they were read
    # on this host), from the root's / (gate --cwd is refused with --root) and the root's environment (its default
    # PATH and the command's env prefix: `env`), never this host's HF_HOME; GPU memory, the port and /dev/shm stay
    # this host's readings (read_live: a root directory has no GPUs, sockets or mounts of its own)
    root_view = None
    if getattr(opts, "root", None):
        from stackcheck.assembly.target import open_view

        root_view = open_view(opts)
    # gate --image: the same inside the image's filesystem (igap43, issue 16: they were read on this host, so a host
    # directory decided the image's judgement): from its WorkingDir (where its containers start: pipeline.gather),
    # HF_HOME / HF_HUB_CACHE of its config's Env and the command's env prefix, "~" its User's home (runc's setupUser:
    # the image's /etc/passwd, image.view.runtime_environment). A model that is not in the image (a volume the
    # container mounts when it is made) is a note, never read on this host; GPU memory, the port and /dev/shm are not
    # read for an image (live is false there)
    image_view = None
    if getattr(opts, "image", None):
        from stackcheck.assembly.target import open_view

        image_view = open_view(opts)
    if root_view is not None:
        start = "/"
    elif image_view is not None:
        start = image_view.workdir() if hasattr(image_view, "workdir") else "/"
    else:
        start = getattr(opts, "cwd", None) or os.getcwd()  # gate --cwd: where it starts
    cwd: str | gate.CwdUnknown = start
    told = getattr(opts, "cwd", None) or root_view is not None or image_view is not None
    if getattr(opts, "facts_file", None) and not told:
        # gate --facts: the server starts on the box the facts describe, in a directory the gate is not told; a
        # relative --model-path is that directory's, never this process's (imend3: it was read from here)
        cwd = gate.CwdUnknown(gate.FACTS_CWD, shell=False)
    if derived.command:  # the environment the launch itself sees: a shell string's exports before it too
        argv, prefixed = gate.split_env_prefix(derived.command, env)
        # and the directory it runs in: a shell string's `cd` before it (a relative --model-path is read from there)
        cwd = gate.launch_cwd(derived.command, mapping, env, cwd)
        env = gate.find_launch(argv, mapping, prefixed)[2]
    inputs = Inputs(
        options=derived.options,
        env=env,
        facts=facts,
        data=data,
        # (this host's reads recorded when the decision is kept: stackcheck.assembly.gate_cache; a root's never kept)
        view=root_view or image_view or gate_cache.host_view(),
        cwd=cwd if isinstance(cwd, str) else start,
        cwd_unknown=cwd.words() if isinstance(cwd, gate.CwdUnknown) else None,
        home=env.get("HOME") or _box_home(root_view, image_view),
        sglang_version=sglang_version,
        known_packages=known,
        readings=readings,
        not_searched=IMAGE_MODEL_ABSENT if image_view is not None else None,
    )
    try:
        pre = run(inputs)
    finally:
        close = getattr(image_view, "close", None)
        if callable(close):  # (the image holds its file open; the model's reads are done)
            close()
    from stackcheck.verdicts.package_checks import (
        check_a2a_package,
        check_load_format_package,
        check_quant_package,
        check_storage_config,
        check_storage_config_file,
        check_transfer_package,
    )

    # the flags below as argparse reads them, abbreviated too (gate.option_value), the release's flags not taken
    # for abbreviations (gate.reading_flags)
    flags = gate.reading_flags(mapping, sglang_version)
    args = derived.sglang_args
    # the MoE all-to-all backend's own package (deep_ep, Mooncake EP), as the command gives the flag
    a2a = check_a2a_package(gate.option_value(args, ("--moe-a2a-backend",), flags), facts, data, sglang_version)
    if a2a is not None:
        pre.results.append(a2a)
    # (ishape) the served model's heads, MLP and experts against the launch's TP / EP sizes
    shape_table = (data.get("model") or {}).get("model_shape")
    pre.results.extend(model_shape_results(pre.models, derived, mapping, sglang_version, flags, shape_table))
    # the disaggregation transfer backend's package (--disaggregation-mode prefill / decode; SGLang's default backend
    # mooncake) and the HiCache storage backend's (--enable-hierarchical-cache --hicache-storage-backend)
    mode = gate.option_value(args, ("--disaggregation-mode",), flags)
    if mode in ("prefill", "decode"):
        backend = gate.option_value(args, ("--disaggregation-transfer-backend",), flags) or "mooncake"
        subject = f"--disaggregation-mode {mode} --disaggregation-transfer-backend {backend}"
        got = check_transfer_package("transfer_backend", backend, subject, facts, data, sglang_version)
        if got is not None:
            pre.results.append(got)
    # (--enable-hicache: 0.5.23's alias; a PD decode server with --disaggregation-decode-enable-offload-kvcache builds
    # the same HiCacheController with the storage backend as its scheduler starts, 0.5.3-0.5.23: scheduler.py 0.5.3
    # :808-812, disaggregation/decode_kvcache_offload_manager.py 0.5.3 :63-72, 0.5.23 :108; igap51)
    offload = mode == "decode" and gate.option_values(args, ("--disaggregation-decode-enable-offload-kvcache",), flags)
    if offload or gate.option_values(args, ("--enable-hierarchical-cache", "--enable-hicache"), flags):
        storage = gate.option_value(args, ("--hicache-storage-backend",), flags)
        subject = f"--hicache-storage-backend {storage}"
        got = check_transfer_package("storage_backend", storage, subject, facts, data, sglang_version)
        if got is not None:
            pre.results.append(got)
        # the configuration that backend reads as it is built (the Mooncake store: extra config or environment)
        extra = gate.option_value(args, ("--hicache-storage-backend-extra-config",), flags)
        live = not getattr(opts, "facts_file", None) and root_view is None and image_view is None
        reader = _storage_config_reader(inputs.view, inputs.cwd_unknown is None and inputs.cwd, live)
        from stackcheck.facts.sgl_prefix import sglang_environ

        # (the store reads its variables after SGLang 0.5.3rc2+ copied SGL_X over SGLANG_X: irev73)
        seen = sglang_environ(env, sglang_version)[0]
        texts = _storage_text_reader(inputs.view, inputs.cwd_unknown is None and inputs.cwd, live)
        # (imend17: the AWS shared credentials / config files botocore reads, on the box the server runs on only)
        config = check_storage_config(
            storage, extra if isinstance(extra, str) else None, seen, data, sglang_version, reader, not offload,
            texts if live else None,
        )  # fmt: skip
        if config is not None:
            pre.results.append(config)
        # the file the backend opens itself (EIC's YAML config: REMOTE_EIC_YAML or its default path; ifc63)
        own_file = check_storage_config_file(storage, seen, data, sglang_version, texts)
        if own_file is not None:
            pre.results.append(own_file)
    # the quantization method's own package (humming-kernels, bitsandbytes): --quantization as the command gives it,
    # else the checkpoint's own quant_method (SGLang builds that method's config at model load)
    method = gate.option_value(args, ("--quantization",), flags) or pre.launch.get("model_quant_method")
    quant = check_quant_package(method if isinstance(method, str) else None, facts, data, sglang_version)
    if quant is not None:
        pre.results.append(quant)
    # the load format's own loader package (--load-format bitsandbytes imports bitsandbytes with or without
    # --quantization), unless the method of that name was judged above (its floor is the higher one)
    fmt = gate.option_value(args, ("--load-format",), flags)
    loader = check_load_format_package(fmt, facts, data, sglang_version)
    if loader is not None and not (quant is not None and method == fmt):
        pre.results.append(loader)
    # a W4AFP8 MoE layer off Hopper: sgl-kernel's cutlass_w4a8_moe_mm runs its SM90 kernel only (unknown there)
    w4_table = (data.get("model") or {}).get("w4afp8_moe")
    if isinstance(w4_table, dict) and any(info.w4afp8_moe is not False for info in pre.models):
        from stackcheck.launch.preflight.w4afp8 import check_w4afp8_moe

        for info in pre.models:
            w4 = check_w4afp8_moe(info.w4afp8_moe, facts, w4_table, f"{info.role} {info.spec}")
            if w4 is not None:
                pre.results.append(w4)
    # a MIXED_PRECISION checkpoint the release loads as modelopt_mixed below that config's minimum capability
    if isinstance(w4_table, dict):
        from stackcheck.launch.preflight.w4afp8 import check_modelopt_mixed_min_cc, check_w4afp8_flag_mismatch

        flag = gate.option_value(args, ("--quantization",), flags)
        drafted = draft_checkpoint(pre, derived, args, flags)
        judged_models: list[tuple[Any, Any, str, bool]] = [
            (info, flag, f"{info.role} {info.spec}", True) for info in pre.models if info.role == "model"
        ]
        if drafted is not None:
            # the draft model's ModelConfig takes --speculative-draft-model-quantization, else --quantization; with no
            # draft path of its own, on the target's checkpoint (draft_checkpoint)
            used = draft_quant_flag(args, flags, flag)
            judged_models.append((drafted[0], used, f"draft model {drafted[0].spec}{drafted[1]}", False))
        for info, used, subject, served in judged_models:
            got = check_modelopt_mixed_min_cc(info.mixed_precision, used, facts, w4_table, sglang_version, subject)
            if got is not None:
                pre.results.append(got)
            if served:  # a draft takes its checkpoint's method instead (0.5.8 on)
                clash = check_w4afp8_flag_mismatch(
                    info.mixed_precision, flag, w4_table, sglang_version, f"{info.role} {info.spec}"
                )
                if clash is not None:
                    pre.results.append(clash)
    defaults = {str(o["flag"]): o.get("default") for o in gate._options(mapping) if "default" in o}
    for req in pre.requirements:
        if gate._conds(req.when, derived, defaults):
            gate._add(derived, req.feature, "explicit", req.why, rules=req.rules)
    for feature, why in draft_backend_features(derived, mapping):
        gate._add(derived, feature, "explicit", why)
    derived.problems.extend(draft_backend_problems(derived, mapping))
    derived.problems.extend(
        draft_backend_judged(
            derived, mapping, manifests, facts, pre, sglang_version, bool(getattr(opts, "facts_file", None))
        )
    )
    derived.problems.extend(draft_quant_judged(derived, manifests, facts, pre, sglang_version, args, flags))
    pre.launch.update(ignored_flag_facts(derived, mapping, sglang_version, pre))
    idle_flag_needs(derived, mapping, sglang_version, pre)
    idle_choice_needs(derived, mapping, sglang_version, pre)
    derived.launch.update(pre.launch)
    return pre


#: what a model not found inside an image says (gate --image): the container may well mount it
IMAGE_MODEL_ABSENT = (
    "not in the image; a volume the container mounts when it is made is not seen here, and this host's files are not "
    "read for it"
)


def _box_home(root_view: Any, image_view: Any) -> str:
    """The home "~" names for the server where its environment sets no HOME: a root's (_root_home), an image's (its
    User's, as its containers get it: the view's runtime environment), else this process's."""
    if root_view is not None:
        return _root_home(root_view)
    if image_view is not None:
        environment = getattr(image_view, "environment", None)
        home = environment().get("HOME") if callable(environment) else None
        return home if isinstance(home, str) and home.startswith("/") else "/"
    return os.path.expanduser("~")


def _root_home(view: Any) -> str:
    """The home directory "~" names for a root's server when its environment sets no HOME (the root's environment
    is its default PATH alone: pipeline.root_environment): huggingface_hub's default cache is
    os.path.expanduser("~/.cache/huggingface"), which without HOME takes the running user's /etc/passwd entry
    (Python's posixpath.expanduser: pwd.getpwuid(os.getuid()).pw_dir). The root's user is taken as uid 0, as a
    container of it runs by default (runc's setupUser; stackcheck.image.view.home_of reads the root's /etc/passwd,
    "/" without an entry): inferred, not read from any launch; `env HOME=...` on the command names another."""
    from stackcheck.image.view import home_of

    return home_of(view, None)


#: the launch facts on the served model's quantization, which the draft's judgement replaces with the draft's
_QUANT_KEYS = ("quantization", "model_quant_method", "model_quant_schemes", "model_quant_loaded", "model_kv_cache_fp8",
               "model_mixed_precision")  # fmt: skip


def draft_quant_flag(args: Any, flags: Any, target: object) -> str | None:
    """The quantization SGLang gives the speculative draft model's ModelConfig: --speculative-draft-model-quantization
    as given (`unquant`: none), else the target's --quantization (`target`; serving_hook / server_args copy it)."""
    from stackcheck.launch import gate

    own = gate.option_value(args, ("--speculative-draft-model-quantization",), flags)
    got = own if isinstance(own, str) else target
    return None if not isinstance(got, str) or got == "unquant" else got


def draft_loaded(derived: Any) -> bool:
    """Whether SGLang loads a speculative draft model: --speculative-algorithm given, and not NGRAM (no model)."""
    from stackcheck.launch.preflight import draft_loaded as loaded

    return loaded(derived.options)


#: what the subject of a draft judged on the target's checkpoint says (draft_checkpoint)
TARGET_AS_DRAFT = " (the target's checkpoint: no --speculative-draft-model-path is given)"


def draft_checkpoint(pre: Preflight, derived: Any, args: Any, flags: Any) -> tuple[Any, str] | None:
    """(the model info, the subject's suffix) of the checkpoint SGLang builds the speculative draft's ModelConfig
    from, where its quantization must be judged: the --speculative-draft-model-path read, else, where the command
    gives --speculative-draft-model-quantization with a quantization other than the target's, the target's own
    checkpoint. Every release that has the flag (0.5.7-0.5.23) builds the draft worker's ModelConfig with
    model_path=speculative_draft_model_path (tp_worker.py 0.5.7:232-245, 0.5.9:312-325, 0.5.23:468-481) and
    ModelConfig.from_server_args takes `model_path or server_args.model_path` with the draft's quantization
    (model_config.py 0.5.7:237-242, 0.5.9:241-251, 0.5.23:946-956); server_args never rejects the flag without a
    draft path (0.5.9 server_args.py:880-885, 0.5.18 :4275-4293, 0.5.23 arg_groups/serving_hook.py:676-708). So a
    draft with no path of its own is the target's checkpoint under the draft's flag; without the flag it loads
    as the target does (judged already). None where no draft model is loaded (draft_loaded) or there is none."""
    if not draft_loaded(derived):
        return None
    infos = {str(i.role): i for i in pre.models}
    if "draft model" in infos:
        return infos["draft model"], ""
    from stackcheck.launch import gate

    if not gate.option_given(args, ("--speculative-draft-model-quantization",), flags) or "model" not in infos:
        return None
    target = gate.option_value(args, ("--quantization",), flags)
    own = draft_quant_flag(args, flags, target)
    if own == (None if not isinstance(target, str) or target == "unquant" else target):
        return None  # the target's own quantization on the target's checkpoint: the target's judgement says it
    return infos["model"], TARGET_AS_DRAFT


def draft_quant_judged(
    derived: Any,
    manifests: Any,
    facts: Mapping[str, Any],
    pre: Preflight,
    version: str | None,
    args: Any,
    flags: Any,
) -> list[Any]:
    """The speculative draft model's own quantization against the GPU (checks.json sglang-gpu-min-cc, its quant-*
    rules): SGLang builds the draft's ModelConfig with the draft's quantization flag (draft_quant_flag) and its own
    checkpoint, and its model loader applies the same get_min_capability test to the draft's config class. The
    rules are judged against the draft's view (the target's quantization facts replaced by the draft's: its
    checkpoint's quant_method and schemes, whether the release loads it as modelopt_mixed). Where a flag and a
    checkpoint method that differ are both there, the draft takes the flag where SGLang lists it as compatible and
    the checkpoint's own otherwise (0.5.8 on: the draft's auto-detection, model_config.py 0.5.8:850, 0.5.23:2122;
    earlier a mismatch raises), which the gate does not read: both are judged, and a rule failing one way only is
    unknown. One problem per failing rule; none where the draft's checkpoint was not read, neither a flag nor a
    checkpoint quantizes it, or no draft model is loaded (no --speculative-algorithm, or NGRAM)."""
    from stackcheck.launch import gate
    from stackcheck.launch.preflight.w4afp8 import loaded_method
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_check

    found = draft_checkpoint(pre, derived, args, flags)
    check = next((c for c in manifests.checks if c.get("id") == "sglang-gpu-min-cc"), None)
    if found is None or check is None or found[0].attention is None:
        return []
    draft, suffix = found
    flag = draft_quant_flag(args, flags, gate.option_value(args, ("--quantization",), flags))
    held = draft.quant_method
    if flag is None and held is None:
        return []
    table = (manifests.preflight.get("model") or {}).get("w4afp8_moe") or {}
    base = {k: v for k, v in derived.launch.items() if k not in _QUANT_KEYS}
    own: dict[str, Any] = {}
    if held is not None:
        own["model_quant_method"] = held
        if draft.quant_schemes is not None:
            own["model_quant_schemes"] = draft.quant_schemes
    cases: list[dict[str, Any]] = []
    for given in [flag] if held is None or flag in (None, held) else [flag, None]:
        case = {**base, **own}
        if given is not None:
            case["quantization"] = given
        loaded = loaded_method(table, draft.mixed_precision, given, version)
        if loaded is not None:
            case["model_quant_loaded"] = loaded
        cases.append(case)
    stated: Any = facts
    judged = [
        _failing(evaluate_check(check, Context(facts=stated, manifests=manifests, launch=c)), set()) for c in cases
    ]
    out: list[Any] = []
    subject = f"draft model {draft.spec}{suffix}"
    for rid in sorted({r for j in judged for r in j}):
        if not rid.startswith("quant-"):
            continue
        got = [j.get(rid) for j in judged]
        first = next(r for r in got if r is not None)
        status = "blocked" if all(r is not None and r.get("result") == "fail" for r in got) else "unknown"
        how = (
            ""
            if status == "blocked"
            else f" (one of the methods the draft may take: --quantization {flag} where SGLang lists it as compatible"
            f" with the checkpoint's {held}, else {held}; which one is not read)"
        )
        out.append(
            gate.Problem(
                subject, status, "crash" if status == "blocked" else None,
                f"the speculative draft model's own quantization (sglang-gpu-min-cc, rule {rid}){how}: "
                f"{first.get('message')}",
                first.get("source"),
                observed=None if first.get("observed") is None else str(first.get("observed")),
                required=None if first.get("required") is None else str(first.get("required")),
            )
        )  # fmt: skip
    return out


def model_entries(
    entries: Any, version: str, archs: Sequence[str], args: Any, flags: Any
) -> Iterator[Mapping[str, Any]]:
    """The entries of a launch.json option's per-model list (`idle_for_models`, `ignored_for_models`) that hold for
    this launch: the installed release within the entry's `versions`, every architecture of `archs` among its
    `architectures`, and no flag of its `kept_where_given` given (a flag given counts whatever its value)."""
    from stackcheck.facts.versions import version_in
    from stackcheck.launch import gate

    for entry in entries or []:
        if version_in(version, str(entry.get("versions"))) is not True:
            continue
        if not set(archs) <= {str(a) for a in entry.get("architectures") or []}:
            continue
        if any(gate.option_given(args, (str(f),), flags) for f in entry.get("kept_where_given") or []):
            continue
        yield entry


# The two readers of the model's architecture below differ on purpose. idle_for_models asks which model classes run
# the flag's path, so every architecture of every model SGLang loads counts (the target's and a speculative draft's,
# running_architectures); ignored_for_models follows the server-args hook that turns the flag back off, which
# reads the served model's hf_config.architectures[0] only (refusals.model_architecture, as the launch rules do).


def running_models(pre: Preflight, derived: Any) -> list[Any] | None:
    """The preflight's model infos of each model SGLang runs under the command's server args: the served model's,
    then a speculative draft model's where SGLang loads one (draft_loaded: --speculative-draft-model-path runs its own
    layers under the same args, a STANDALONE Qwen3 draft calls the communicator). Without --speculative-algorithm no
    draft worker is built (scheduler.py 0.5.5:342-347 create_draft_worker of NONE, which registers no factory,
    spec_info.py:176-179, :292; 0.5.9 maybe_init_draft_worker :534-536; 0.5.23 :1035-1039), and NGRAM's worker loads
    no model (spec_info.py 0.5.5:282-285, 0.5.9:95-102 NGRAMWorker): the path is never loaded and runs nothing. None
    where the command names no served model the preflight looked for. The readers of these infos (architectures,
    config.json's model_type) fail closed where one of them was not read."""
    model = next((i for i in pre.models if i.role == "model"), None)
    if model is None:
        return None
    loaded = draft_loaded(derived)
    return [model, *(i for i in pre.models if loaded and i.role == "draft model")]


def running_architectures(pre: Preflight, derived: Any) -> list[str] | None:
    """Every architecture of the config.json of each model SGLang runs (running_models), the served model's first.
    None where one of them was not read (fail closed)."""
    archs: list[str] = []
    for info in running_models(pre, derived) or [None]:
        read = [str(a) for a in getattr(info, "architectures", None) or []]
        if not read:
            return None
        archs.extend(a for a in read if a not in archs)
    return archs


def idle_flag_needs(derived: Any, mapping: Mapping[str, Any], version: str | None, pre: Preflight) -> None:
    """Drop the needs of a flag (launch.json option `idle_for_models`) where the installed SGLang's models never run
    the path it turns on: every architecture of the served model's config.json and of a speculative draft model's
    listed for the release (running_architectures), and no flag of `kept_where_given` given (model_entries;
    refusals.drop_idle_needs: the feature listed as off, or needed as launch.json's defaults say). Kept where the
    release or a model was not read (fail closed)."""
    from stackcheck.launch import gate
    from stackcheck.launch.refusals import drop_idle_needs

    archs = running_architectures(pre, derived)
    if version is None or not archs:
        return
    flags = gate.reading_flags(mapping, version)
    for option in mapping.get("options") or []:
        flag = str(option.get("flag")) if isinstance(option, Mapping) else ""
        if not flag or flag not in derived.options:
            continue
        held = model_entries(option.get("idle_for_models"), version, archs, derived.sglang_args, flags)
        if next(held, None) is not None:
            reason = f"SGLang {version}'s {', '.join(archs)} never runs the path {flag} turns on"
            drop_idle_needs(derived, mapping, flag, reason)


def config_model_types(attention: Any) -> set[str] | None:
    """Every model_type a config.json the preflight read states: its own and its text sub-configs' (thinker_config,
    llm_config, language_config, text_config, at any depth). None where it was not read or states no top-level
    model_type (SGLang's config class, which these keys choose, is then not known)."""
    from stackcheck.launch.preflight.model import TEXT_CONFIG_KEYS

    if not isinstance(attention, Mapping) or not isinstance(attention.get("model_type"), str):
        return None
    out: set[str] = set()
    todo: list[Any] = [attention]
    while todo:
        node = todo.pop()
        if isinstance(node, Mapping):
            if isinstance(node.get("model_type"), str):
                out.add(str(node["model_type"]))
            todo.extend(node.get(k) for k in TEXT_CONFIG_KEYS)
    return out


def idle_choice_needs(derived: Any, mapping: Mapping[str, Any], version: str | None, pre: Preflight) -> None:
    """Drop the needs of a flag's value that only a model of some config classes runs (launch.json option
    `model_types_only`: the releases, the values, the model_types whose config classes build the path), where the
    served model's config.json, and a loaded speculative draft's, were read and state none of them (config_model_types:
    the top level's and the text sub-configs'); refusals.drop_idle_needs lists the feature as off. Kept where the
    release is not covered, or a model that runs under the command's server args was not read (fail closed)."""
    from stackcheck.facts.versions import version_in
    from stackcheck.launch.refusals import drop_idle_needs

    if version is None:
        return
    read = [config_model_types(getattr(info, "attention", None)) for info in running_models(pre, derived) or [None]]
    if any(types is None for types in read):
        return
    stated = set().union(*(t for t in read if t is not None))
    for option in mapping.get("options") or []:
        flag = str(option.get("flag")) if isinstance(option, Mapping) else ""
        value = derived.options.get(flag) if flag else None
        for entry in option.get("model_types_only") or [] if flag else []:
            if value not in (entry.get("choices") or []) or version_in(version, str(entry.get("versions"))) is not True:
                continue
            if stated & {str(t) for t in entry.get("model_types") or []}:
                continue
            reason = (
                f"the model's config.json states model_type {', '.join(sorted(stated))}, none of those whose config "
                f"classes SGLang {version} builds the path of {flag} {value} for"
            )
            drop_idle_needs(derived, mapping, f"{flag} {value}", reason)


def ignored_flag_facts(derived: Any, mapping: Mapping[str, Any], version: str | None, pre: Preflight) -> dict[str, str]:
    """The launch facts `<fact>_ignored` (why, as text) of the flags the installed SGLang turns back off for the model
    the preflight read (launch.json option `ignored_for_models`: the releases, the model's first architecture, as
    config.json names it, the flags that keep it (kept_where_given; model_entries) and the CUDA-graph phases, one of
    which must have none of its flags given; a flag given counts whatever its value, so a value that keeps graphs on
    is judged as the flag kept). None where the release or the model was not read: the flag is kept (fail closed)."""
    from stackcheck.launch import gate
    from stackcheck.launch.refusals import model_architecture

    architecture = model_architecture(pre)
    if version is None or architecture is None:
        return {}
    flags = gate.reading_flags(mapping, version)
    args = derived.sglang_args
    out: dict[str, str] = {}
    for option in mapping.get("options") or []:
        fact = option.get("fact") if isinstance(option, Mapping) else None
        if not fact or not derived.launch.get(fact):
            continue
        for entry in model_entries(option.get("ignored_for_models"), version, [architecture], args, flags):
            phases = entry.get("graph_phases") or {}
            eager = [p for p, fs in phases.items() if any(gate.option_given(args, (str(f),), flags) for f in fs)]
            if phases and len(eager) == len(phases):
                continue  # every phase's graph may be off: the flag kept
            why = (
                f"SGLang {version} turns {option['flag']} back off for {architecture} with CUDA graphs on "
                f"({', '.join(sorted(set(phases) - set(eager)))} not disabled by the command)"
            )
            out[f"{fact}_ignored"] = why
            derived.off.append(f"{option['flag']}: ignored ({why})")
            break
    return out


#: the speculative algorithms whose draft runs no attention backend of the target's kind: NGRAM has no draft model,
#: DFLASH and DSPARK resolve the draft's backend from their own list, which has neither trtllm_mla nor flashmla
#: (sglang 0.5.23 arg_groups/speculative_hook.py _resolve_dflash_draft_attention_backend, arg_groups/choices.py
#: DRAFT_ATTENTION_BACKEND_CHOICES, speculative/draft_worker_common.py resolve_draft_worker_attention_backend)
#: (a DFLASH or DSPARK draft on a value their list keeps as given is judged by draft_backend_judged: launch.json
#: draft_attention_backend `own_list`)
NO_DRAFT_BACKEND = ("NGRAM", "DFLASH", "DSPARK")

#: the draft attention backends whose feature's own draft-* rules judge the draft model (features.json draft-mla-*,
#: draft-flashmla-*): their features are required as they are (draft_backend_features); every other value's
#: features are judged against the draft's view of the launch (draft_backend_judged)
DRAFT_JUDGED_BACKENDS = ("trtllm_mla", "flashmla")


def _draft_backend(derived: Any, mapping: Mapping[str, Any]) -> tuple[bool, str | None]:
    """(whether the launch's speculative decoding builds a draft attention backend of the target's kind: an algorithm
    given and not one of NO_DRAFT_BACKEND; --speculative-draft-attention-backend as argparse takes it, None: absent)."""
    from stackcheck.launch.gate import option_value, reading_flags

    algorithm = derived.options.get("--speculative-algorithm")
    drafts = algorithm is not None and str(algorithm).upper() not in NO_DRAFT_BACKEND
    flags = reading_flags(mapping, derived.release)
    return drafts, option_value(derived.sglang_args, ("--speculative-draft-attention-backend",), flags)


def draft_backend_features(derived: Any, mapping: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The features a speculative draft's own attention backend needs (--speculative-draft-attention-backend, a flag
    launch.json does not list, read as argparse takes it): the --attention-backend choice's features, for the
    backends whose rules judge the draft model (DRAFT_JUDGED_BACKENDS), so that a draft on trtllm_mla beside a target
    on flashinfer is judged too. None without speculative decoding or with an algorithm of NO_DRAFT_BACKEND."""
    from stackcheck.launch import gate

    drafts, backend = _draft_backend(derived, mapping)
    if not drafts or backend not in DRAFT_JUDGED_BACKENDS:
        return []
    option: Mapping[str, Any] = next((o for o in gate._options(mapping) if o.get("flag") == "--attention-backend"), {})
    why = f"--speculative-draft-attention-backend {backend}: the draft model's attention"
    return [(str(f), why) for f in (option.get("choices") or {}).get(backend) or []]


def draft_backend_problems(derived: Any, mapping: Mapping[str, Any]) -> list[Any]:
    """A speculative draft's --speculative-draft-attention-backend whose value is none of the --attention-backend
    choices the manifests know: unknown, as an unknown --attention-backend value is (it may be new, or SGLang
    rejects it, or builds the draft on a backend whose needs were not judged); never passed silently. None
    without a draft backend of the target's kind (_draft_backend)."""
    from stackcheck.launch import gate

    drafts, backend = _draft_backend(derived, mapping)
    if not drafts or backend is None:
        return []
    option: Mapping[str, Any] = next((o for o in gate._options(mapping) if o.get("flag") == "--attention-backend"), {})
    choices = option.get("choices") or {}
    if not isinstance(choices, Mapping) or backend in choices:
        return []
    flag = "--speculative-draft-attention-backend"
    return [
        gate.Problem(
            f"{flag}={backend}",
            "unknown",
            None,
            f"{flag} {backend!r} is not an attention backend the manifests know (known: {', '.join(sorted(choices))}):"
            " it may be new, or SGLang rejects it, and what the draft's backend needs is not judged",
            option.get("source"),
        )
    ]


#: the launch facts about the served model that the draft's view replaces with the draft model's (model_launch_facts)
_MODEL_KEYS = (
    "mla",
    "mla_kv_rope",
    "mla_qk_nope_head_dim",
    "mla_prefill_dims",
    "mla_heads_per_gpu",
    "model_config_read",
)
_BACKEND_KEYS = ("attention_backend", "prefill_attention_backend", "decode_attention_backend")


def _factory_backends(spec: Mapping[str, Any], version: str | None) -> tuple[list[str] | None, str | None]:
    """The values the installed release's draft worker builds a backend for (launch.json draft_attention_backend
    `factory`): (the list, None); for a release newer than the runs read, the newest run's list with a note; (None,
    why) where it is not known; ([], None) for a release older than the flag (release_flags refuses the flag)."""
    from stackcheck.facts.versions import parse_specifier, version_in

    runs = [r for r in spec.get("factory") or [] if isinstance(r, dict)]
    if not runs:
        return None, "launch.json has no draft backend factory data"
    if not version:
        return None, "the installed SGLang release is not known"
    hit = next((r for r in runs if version_in(version, str(r.get("versions"))) is True), None)
    if hit is not None:
        return [str(b) for b in hit.get("backends") or []], None
    bounds = [t for r in runs for op, t in parse_specifier(str(r.get("versions"))) or () if op in ("==", "<=")]
    lows = [t for r in runs for op, t in parse_specifier(str(r.get("versions"))) or () if op in (">=", "==")]
    newest = max(bounds, key=lambda t: tuple(int(x) for x in t.split(".") if x.isdecimal()), default=None)
    oldest = min(lows, key=lambda t: tuple(int(x) for x in t.split(".") if x.isdecimal()), default=None)
    if oldest is not None and version_in(version, f"<{oldest}") is True:
        return [], None
    if newest is not None and version_in(version, f">{newest}") is True:
        last = next(r for r in runs if newest in str(r.get("versions")))
        return [str(b) for b in last.get("backends") or []], f"newer than {newest}, the newest release read"
    return None, f"SGLang {version} is in no run of releases the draft backend factory was read for"


def draft_launch_view(launch: Mapping[str, Any], backend: str, model: Mapping[str, Any]) -> dict[str, Any]:
    """The launch facts as the speculative draft's runner sees them: `backend` for prefill and decode (SGLang's
    draft runner builds that one backend for both, and the draft worker's factory the same for draft extend and
    decode), and the draft model's MLA kind and dims in place of the target's (`model`: model_launch_facts'
    answer, whose draft_* keys are the draft's; none: not known)."""
    view = {k: v for k, v in launch.items() if k not in _MODEL_KEYS and k not in _BACKEND_KEYS}
    view = {k: v for k, v in view.items() if not k.startswith("draft_")}
    view.update({k: backend for k in _BACKEND_KEYS})
    for key in _MODEL_KEYS:
        draft_key = "draft_config_read" if key == "model_config_read" else f"draft_{key}"
        if draft_key in model:
            view[key] = model[draft_key]
    return view


def _failing(verdict: Mapping[str, Any], skip: set[str]) -> dict[str, dict[str, Any]]:
    return {
        str(r.get("rule")): dict(r)
        for r in verdict.get("reasons") or []
        if r.get("result") in ("fail", "unknown") and str(r.get("rule")) not in skip
    }


def draft_backend_judged(
    derived: Any,
    mapping: Mapping[str, Any],
    manifests: Any,
    facts: Mapping[str, Any],
    pre: Preflight,
    sglang_version: str | None,
    facts_file: bool = False,
) -> list[Any]:
    """What a speculative draft's --speculative-draft-attention-backend needs, judged for the draft (launch.json
    draft_attention_backend says the path): the installed release's draft worker must build that value (its
    backend factory, else ValueError as the draft worker starts: blocked), and the value's features must hold for
    the draft: each feature's rules judged against the draft's view of the launch (draft_launch_view: that backend
    for prefill and decode, the draft model's MLA kind and dims), less the rules that are checks on the target's
    flags only (`target_only_rules`: 'dropped', or 'unknown' where they would fail). A draft model whose MLA kind
    is not known is judged both ways: a rule failing one way only is unknown. A known value with no feature is
    unknown (what it needs is not judged). The values whose own draft-* rules judge the draft (trtllm_mla,
    flashmla: DRAFT_JUDGED_BACKENDS, required by draft_backend_features) are only checked against the factory.
    DFLASH and DSPARK, which resolve the draft's backend from their own list, are judged for the values they keep
    as given (_own_list_judged). Each failing reason is one problem on the flag: blocked (crash), a note for an
    effect short of a crash, or unknown; none where the draft's backend is ok."""
    from stackcheck.launch import gate

    drafts, backend = _draft_backend(derived, mapping)
    option: Mapping[str, Any] = next((o for o in gate._options(mapping) if o.get("flag") == "--attention-backend"), {})
    choices = option.get("choices") or {}
    if backend is None:
        if not drafts or not isinstance(choices, Mapping):
            return []
        return _inherited_judged(derived, mapping, manifests, facts, pre, sglang_version, facts_file, choices)
    if not isinstance(choices, Mapping) or backend not in choices:
        return []  # draft_backend_problems: unknown
    spec: Mapping[str, Any] = mapping.get("draft_attention_backend") or {}
    if not drafts:
        return _own_list_judged(derived, manifests, facts, pre, sglang_version, facts_file, spec, backend, choices)
    flag = "--speculative-draft-attention-backend"
    subject = f"{flag}={backend}"
    path_source = [s for hop in spec.get("path") or [] if isinstance(hop, dict) for s in hop.get("source") or []]
    factory_source = [
        s for hop in (spec.get("path") or [])[2:3] if isinstance(hop, dict) for s in hop.get("source") or []
    ]
    built, why = _factory_backends(spec, sglang_version)
    if built == [] and why is None:
        return []  # a release without the flag: release_problems refuses it
    if built is None or (why is not None and backend not in built):
        reason = why or "not known"
        return [
            gate.Problem(
                subject, "unknown", None,
                f"whether SGLang's draft worker builds a draft attention backend for {backend!r} is not known"
                f" ({reason}), and what the draft's backend needs is not judged",
                factory_source,
            )
        ]  # fmt: skip
    if backend not in built:
        return [
            gate.Problem(
                subject, "blocked", "crash",
                f"SGLang {sglang_version}'s speculative draft worker builds no draft backend for {backend!r}"
                f" (it builds {', '.join(sorted(built))}): ValueError 'EAGLE is not supported in attention backend"
                f" {backend}' as the draft worker starts; give {flag} one of those that this GPU runs, or leave it"
                " out (the draft then takes the target's backend)",
                factory_source,
            )
        ]  # fmt: skip
    if backend in DRAFT_JUDGED_BACKENDS:
        # draft_backend_features requires their features, whose draft-* rules judge the draft model; the kernel
        # rules their features tie to the target's backend flags are judged on the draft's view (draft_view_rules)
        only = {
            str(e.get("feature")): {str(r) for r in e.get("rules") or []}
            for e in spec.get("draft_view_rules") or []
            if isinstance(e, dict)
        }
        if not only:
            return []
        dims = model_launch_facts(pre, derived, mapping)
        features = [str(f) for f in choices.get(backend) or [] if str(f) in only]
        return _judge_draft_features(
            derived, manifests, facts, spec, backend, features, dims, draft_mla_unknown(pre, dims), facts_file,
            only=only,
        )  # fmt: skip
    features = [str(f) for f in choices.get(backend) or []]
    if not features:
        return [
            gate.Problem(
                subject, "unknown", None,
                f"the speculative draft's attention backend {backend!r} maps to no feature the manifests judge:"
                " what it needs on this box is not known",
                path_source,
            )
        ]  # fmt: skip
    dims = model_launch_facts(pre, derived, mapping)
    why = draft_mla_unknown(pre, dims)
    return _judge_draft_features(derived, manifests, facts, spec, backend, features, dims, why, facts_file)


def _inherited_judged(
    derived: Any,
    mapping: Mapping[str, Any],
    manifests: Any,
    facts: Mapping[str, Any],
    pre: Preflight,
    sglang_version: str | None,
    facts_file: bool,
    choices: Mapping[str, Any],
) -> list[Any]:
    """An EAGLE-family draft without --speculative-draft-attention-backend takes the target's backend (its runner
    the target's pair, the draft worker's factory its decode or prefill backend): where the command gives one
    --attention-backend (no other prefill or decode backend), the factory must build it (else blocked), and the
    rules of its features that fail for the draft model (--speculative-draft-model-path) but not for the target's
    are said (an MLA draft on fa3 on an A100 beside a non-MLA target). Without an attention flag (SGLang picks)
    nothing is judged here."""
    from stackcheck.launch import gate

    options = derived.options
    backend = options.get("--attention-backend")
    split = {options.get("--prefill-attention-backend"), options.get("--decode-attention-backend")} - {None}
    if not isinstance(backend, str) or backend not in choices or split - {backend}:
        return []
    spec: Mapping[str, Any] = mapping.get("draft_attention_backend") or {}
    subject = f"--attention-backend={backend} (the speculative draft's too)"
    built, why = _factory_backends(spec, sglang_version)
    if not built or why is not None:
        return []  # not known, or a release without the factory read: the target's judgement stands
    if backend not in built:
        factory_source = [
            src for hop in (spec.get("path") or [])[2:3] if isinstance(hop, dict) for src in hop.get("source") or []
        ]
        return [
            gate.Problem(
                subject, "blocked", "crash",
                f"SGLang {sglang_version}'s speculative draft worker takes the target's attention backend {backend}"
                f" and builds no draft backend for it (it builds {', '.join(sorted(built))}): ValueError 'EAGLE is"
                f" not supported in attention backend {backend}' as the draft worker starts; give"
                " --speculative-draft-attention-backend one of those that this GPU runs",
                factory_source,
            )
        ]  # fmt: skip
    dims = model_launch_facts(pre, derived, mapping)
    if backend in DRAFT_JUDGED_BACKENDS or "draft_config_read" not in dims:
        return []  # their draft-* rules judge the draft; no draft model: the draft is the target's model
    target: dict[str, Any] = {"draft_config_read": dims.get("model_config_read")}
    if isinstance(pre.launch.get("model_mla"), bool):
        target["draft_mla"] = pre.launch["model_mla"]
    target.update({f"draft_{k}": v for k, v in dims.items() if k in _MODEL_KEYS and k != "model_config_read"})
    features = [str(f) for f in choices.get(backend) or []]
    return _judge_draft_features(
        derived, manifests, facts, spec, backend, features, dims, draft_mla_unknown(pre, dims), facts_file,
        target=target, subject=subject,
    )  # fmt: skip


def _own_list_judged(
    derived: Any,
    manifests: Any,
    facts: Mapping[str, Any],
    pre: Preflight,
    sglang_version: str | None,
    facts_file: bool,
    spec: Mapping[str, Any],
    backend: str,
    choices: Mapping[str, Any],
) -> list[Any]:
    """A draft backend of an algorithm that resolves it from its own list (DFLASH, DSPARK: launch.json
    draft_attention_backend `own_list`): a value its draft runner builds as given in the installed release is
    judged as draft_backend_judged judges it, on the model --speculative-draft-model-path names (with the entry's
    `condition`, where it would be blocked it is unknown); other values, algorithms and releases are not judged
    (they fall back, or depend on the draft's config)."""
    from stackcheck.facts.versions import version_in

    algorithm = str(derived.options.get("--speculative-algorithm") or "").upper()
    entry: Mapping[str, Any] = next(
        (
            e
            for e in spec.get("own_list") or []
            if isinstance(e, dict)
            and e.get("algorithm") == algorithm
            and sglang_version
            and version_in(sglang_version, str(e.get("versions"))) is True
        ),
        {},
    )
    if backend not in (entry.get("as_given") or []):
        return []
    draft = next((i for i in pre.models if str(i.role) == "draft model"), None)
    dims: dict[str, Any] = {}
    mla_why = None
    if draft is not None:
        dims["draft_config_read"] = draft.attention is not None
        if isinstance(draft.mla, bool):
            dims["draft_mla"] = draft.mla
        elif draft.attention is not None:
            mla_why = f"the speculative draft model {draft.spec}: {draft.mla_why}"
    features = [str(f) for f in choices.get(backend) or []]
    condition = str(entry["condition"]) if entry.get("condition") else None
    return _judge_draft_features(
        derived, manifests, facts, spec, backend, features, dims, mla_why, facts_file, condition
    )


def _judge_draft_features(
    derived: Any,
    manifests: Any,
    facts: Mapping[str, Any],
    spec: Mapping[str, Any],
    backend: str,
    features: list[str],
    dims: Mapping[str, Any],
    mla_why: str | None,
    facts_file: bool,
    condition: str | None = None,
    target: Mapping[str, Any] | None = None,
    subject: str | None = None,
    only: Mapping[str, set[str]] | None = None,
) -> list[Any]:
    """draft_backend_judged's judging of the draft backend's features against the draft's view of the launch
    (`dims`: the draft model's facts, draft_* keys; `mla_why`: why its MLA kind is not known where it was read).
    With `condition` (SGLang builds the draft on this backend only where it holds, and the gate does not know
    whether it does), what would be blocked is unknown, the condition said. With `target` (the target model's
    facts in the draft_* form: the draft takes the target's backend), only the rules that fail for the draft and
    not for the target are said (the target's own verdict says the others). With `only` (feature -> rule ids), the
    features' other rules are left out, and so is what fails on the launch as the target's flags give it (the
    feature's own verdict says that; a feature blocked there is not judged again)."""
    from stackcheck.launch import gate

    flag = "--speculative-draft-attention-backend"
    subject = subject or f"{flag}={backend}"
    path_source = [src for hop in spec.get("path") or [] if isinstance(hop, dict) for src in hop.get("source") or []]
    view = draft_launch_view(derived.launch, backend, dims)
    unknown_why = None
    if not isinstance(view.get("mla"), bool):
        unknown_why = mla_why or (
            "the gate could not read the speculative draft model's config.json, so whether it is MLA is not known"
        )
    dropped: dict[str, set[str]] = {}
    unknown_rules: set[str] = set()
    for entry in spec.get("target_only_rules") or []:
        if not isinstance(entry, dict):
            continue
        for rule in entry.get("rules") or []:
            key = f"{entry.get('feature')}/{rule}"
            (dropped.setdefault(str(entry.get("feature")), set())).add(str(rule))
            if entry.get("draft") == "unknown":
                unknown_rules.add(key)
    hint = "" if target is not None else ", or leave it out"
    out: list[Any] = []
    by_id = {str(f.get("id")): f for f in manifests.features}
    for fid in features:
        feature = by_id.get(fid)
        if feature is None:
            out.append(gate.Problem(subject, "unknown", None, f"feature {fid} not in the manifests"))
            continue
        cases = [view] if unknown_why is None else [{**view, "mla": True}, {**view, "mla": False}]
        judged = [_judge_draft(feature, manifests, facts, case, facts_file) for case in cases]
        skip: set[str] = set()
        if target is not None:  # what fails for the target too: its own verdict says it
            own = draft_launch_view(derived.launch, backend, target)
            own_cases = [own] if isinstance(own.get("mla"), bool) else [{**own, "mla": True}, {**own, "mla": False}]
            for case in own_cases:
                skip |= set(_failing(_judge_draft(feature, manifests, facts, case, facts_file), set()))
        if only is not None:
            own_failing = _failing(_judge_draft(feature, manifests, facts, dict(derived.launch), facts_file), set())
            if any(r.get("result") == "fail" for r in own_failing.values()):
                continue  # the feature is blocked on this box already: its own verdict refuses the launch
            skip |= {str(r.get("id")) for r in feature.get("rules") or []} - only.get(fid, set())
            skip |= set(own_failing)
        failing = [_failing(v, skip) for v in judged]
        rules = dict(failing[0])
        for other in failing[1:]:
            for rid, r in other.items():
                rules.setdefault(rid, r)
        for rid, r in rules.items():
            both = all(rid in f for f in failing)
            message = str(r.get("message") or "")
            status = "unknown" if r.get("result") == "unknown" or not both else "blocked"
            if not both:
                side = "if it is" if rid in failing[0] else "if it is not"
                message = f"{unknown_why}; {side}, {message}"
            if rid in dropped.get(fid, set()):
                if f"{fid}/{rid}" not in unknown_rules:
                    continue  # a check on the target's flags only: the feature's other rules judge the draft
                status = "unknown"
                message = f"{message} (SGLang checks this on the target's backend only; for the draft it was not read)"
            if condition is not None and status == "blocked":
                status, message = "unknown", f"{condition}; where it builds this backend, {message}"
            effect = str(r.get("effect", "crash")) if status == "blocked" else None
            if status == "blocked" and effect not in REFUSED_EFFECTS:
                status = "note"
            out.append(
                gate.Problem(
                    subject, status, effect,
                    f"the speculative draft's attention backend {backend} ({fid}, rule {rid}): {message}; for the"
                    f" draft, give {flag} a backend this GPU and the draft model take{hint}",
                    r.get("source") or path_source,
                    observed=None if r.get("observed") is None else str(r.get("observed")),
                    required=None if r.get("required") is None else str(r.get("required")),
                )
            )  # fmt: skip
    return out


def _judge_draft(
    feature: Any, manifests: Any, facts: Mapping[str, Any], launch: dict[str, Any], facts_file: bool
) -> Mapping[str, Any]:
    """The feature's verdict against the draft's view of the launch; with a facts file, the implied versions too
    (as build_report merges them): the worse of the two."""
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_feature

    stated: Any = facts
    verdict: Mapping[str, Any] = evaluate_feature(feature, Context(facts=stated, manifests=manifests, launch=launch))
    if not facts_file or verdict.get("status") != "ok":
        return verdict
    from stackcheck.facts.implied import imply

    implied_facts, implied = imply(stated, manifests)
    if not implied:
        return verdict
    return evaluate_feature(feature, Context(facts=implied_facts, manifests=manifests, launch=launch))


def mla_unknown(pre: Preflight) -> str | None:
    """Why the served model's attention kind is not known where its config.json was read (model.mla_of gave
    None: an architecture no SGLang release read makes MLA, with kv_lora_rank, on a release the data does not
    cover); None when it is known or the model was not read (the unread paths judge that case)."""
    for info in pre.models:
        if info.role == "model" and info.attention is not None and info.mla is None:
            return str(info.mla_why)
    return None


def draft_mla_unknown(pre: Preflight, facts: Mapping[str, Any]) -> str | None:
    """Why the speculative draft model's attention kind is not known where its config.json was read (`facts`:
    model_launch_facts' answer, which gives draft_config_read true and no draft_mla then: an architecture no
    SGLang release read makes MLA, with kv_lora_rank, on a release the data does not cover). The draft-* rules on
    launch.draft_mla are then unknown, as the target's are on launch.mla (mla_unknown); None otherwise."""
    if facts.get("draft_config_read") is not True or "draft_mla" in facts:
        return None
    infos = {str(i.role): i for i in pre.models}
    draft = infos.get("draft model") or infos.get("model")  # no draft path: the draft worker reads the target's
    if draft is None or draft.mla is not None:
        return None
    return f"the speculative draft model {draft.spec}: {draft.mla_why}"


def mla_unread(pre: Preflight) -> str | None:
    """Why the served model's attention kind is not known where its config.json was not read (a Hugging Face id
    not in the cache, a path that is not there, facts from a file): the rules on launch.mla (attention-fa3's
    mla-needs-hopper, attention-fa4's MLA rules) are then neither met nor not, never dropped as if the model
    were not MLA; None when the model was read or no model is named."""
    for info in pre.models:
        if info.role == "model" and info.attention is None:
            return (
                f"the gate could not read the model {info.spec}'s config.json, so whether it is MLA is not known: "
                f"{how_to_read(info)}"
            )
    return None


def unread_hint(pre: Preflight | None) -> str:
    """How to make the served model readable to the gate (how_to_read), or the plain advice where no model is
    named or it was read."""
    for info in pre.models if pre is not None else []:
        if info.role == "model" and info.attention is None:
            return how_to_read(info)
    return "make the model's config.json readable"


def how_to_read(info: Any) -> str:
    """What makes a model the gate did not read readable: on the box itself where the facts come from a file;
    a Hugging Face id not in the hub cache the server reads (model.hub_cache_dirs) downloaded there; a directory
    found without a usable config.json given one; else a local directory as --model-path."""
    from stackcheck.launch.preflight.model import _REPO_ID

    said = " ".join(str(getattr(r, "message", "")) for r in getattr(info, "results", []) or [])
    spec = str(info.spec)
    if "the facts come from a file" in said:
        return "run the gate on the box that serves the model (a facts file's box is not searched for it)"
    if info.path is not None:
        return f"make {info.path}/config.json a readable JSON object (the model's own config, under the size cap)"
    if "://" not in spec and _REPO_ID.match(spec) and "/" in spec:
        return (
            f"download it into the Hugging Face cache the server reads (`hf download {spec}`, run with the server's "
            "HF_HUB_CACHE / HF_HOME; with --revision, that revision), or give --model-path its local directory"
        )
    return "give --model-path a local model directory that holds its config.json"


def blocker_of(result: CheckResult) -> Any:
    from stackcheck.assembly.pipeline import scrub_home
    from stackcheck.launch.gate import Blocker

    subject = f"{result.check} ({result.subject})" if result.subject else result.check
    reason = {"message": scrub_home(result.message), "source": result.source}
    return Blocker(subject, PREFLIGHT_KIND, result.status, None, [reason])


def document(pre: Preflight) -> dict[str, Any]:
    """The preflight part of the decision document, with the home directory shown as ~ (as in reports)."""
    from stackcheck.assembly.pipeline import scrub_home

    doc: dict[str, Any] = scrub_home(pre.to_json())
    return doc


def merge(decision: Any, pre: Preflight, allow_unknown: bool) -> None:
    """Preflight results into the gate's decision: fail refuses, unknown refuses unless --allow-unknown."""
    for r in pre.results:
        if r.status == "ok":
            continue
        b = blocker_of(r)
        if r.status == "fail" or (r.status == "unknown" and not allow_unknown):
            decision.blocking.append(b)
        else:
            decision.warnings.append(b)
    decision.allow = not decision.blocking


#: the modules whose checks build preflight results (CheckResult), each exporting CHECK_IDS, the ids its results carry
#: (imend15: preflight_checks listed the ids by hand, and ifc65's model-config-keys was missed: dd397032's CI failure;
#: tests/launch/test_imend15_preflight_check_ids.py reads every module that builds a CheckResult and its ids)
PREFLIGHT_CHECK_MODULES = (
    "stackcheck.launch.preflight", "stackcheck.launch.preflight.gpus", "stackcheck.launch.preflight.memory",
    "stackcheck.launch.preflight.host", "stackcheck.launch.preflight.deps", "stackcheck.launch.preflight.architecture",
    "stackcheck.launch.preflight.model", "stackcheck.launch.preflight.shapes",
    "stackcheck.launch.preflight.w4afp8", "stackcheck.verdicts.package_checks",
)  # fmt: skip


def preflight_checks() -> tuple[str, ...]:
    """Every check id a preflight result (and so a refusal the gate prints as `CHECK (subject)`) can carry: each
    check module's CHECK_IDS (PREFLIGHT_CHECK_MODULES: the live checks, the ones read from the command and the
    models, and the package checks, verdicts/package_checks.py, w4afp8.py), and the live checks a preflight skips."""
    from importlib import import_module

    from stackcheck.launch.preflight import LIVE_CHECKS

    ids = [str(i) for name in PREFLIGHT_CHECK_MODULES for i in import_module(name).CHECK_IDS]
    return tuple(dict.fromkeys((*LIVE_CHECKS, *ids)))


def check_allow(
    allow: Sequence[str], features: Sequence[Mapping[str, Any]], stack_checks: Sequence[Mapping[str, Any]] = ()
) -> list[str]:
    """--allow values: feature ids, stack check ids (checks.json) or preflight check ids (preflight_checks), every id
    a refusal of the gate names; anything else is a usage error that lists the valid ids. A refusal of the command's
    own reading (`-tp`, `--attention-backend=x`, `SGLANG_X=maybe`: the server would not start, or the gate cannot
    read it) names no id and is not allowed: the command is fixed instead (an unknown one: --allow-unknown)."""
    out = [x.strip() for item in allow for x in item.split(",") if x.strip()]
    if not out:  # (no --allow: the check modules' ids are not imported for it, the live checks' modules among them)
        return out
    ids = {str(f.get("id")) for f in features}
    stack = {str(c.get("id")) for c in stack_checks}
    pre = set(preflight_checks())
    bad = [x for x in out if x not in ids and x not in stack and x not in pre]
    if bad:
        raise UsageError(
            f"--allow: unknown feature or check {', '.join(bad)} (features: {', '.join(sorted(ids)) or 'none'}; "
            f"stack checks: {', '.join(sorted(stack)) or 'none'}; preflight checks: {', '.join(sorted(pre))})"
        )
    return out


#: FlashInfer's trtllm-gen MLA decode refuses this many query heads per GPU (64 < heads < 128, both ends out):
#: features.json attention-trtllm-mla mla-heads-per-gpu says from which release, with the source
_TRTLLM_GEN_HEADS_GAP = range(65, 128)


def split_flags(mapping: Mapping[str, Any]) -> set[str]:
    """The flags that split attention beyond tp // dp (attention CP, DCP, ...), as launch.json's refusals list them
    for trtllm-gen's heads (refusals.rules[].releases[].trtllm_gen_heads.attention_split_flags), every release's."""
    out: set[str] = set()
    for rule in (mapping.get("refusals") or {}).get("rules") or []:
        for entry in rule.get("releases") or [] if isinstance(rule, dict) else []:
            heads = entry.get("trtllm_gen_heads") if isinstance(entry, dict) else None
            if isinstance(heads, dict):
                out.update(str(f) for f in heads.get("attention_split_flags") or [])
    return out


def heads_per_gpu(heads: int, options: Mapping[str, Any], args: Sequence[str], splitters: set[str]) -> int | None:
    """The query heads TRTLLMMLABackend hands FlashInfer's MLA decode on each GPU: heads // attention TP size, that
    being tp // dp with DP attention (refusals._attn_tp_sizes, as SGLang's dp_attention.py derives it; `options`:
    the launch's canonical flags, `args` its SGLang arguments). With a flag that splits attention further
    (attention CP; DCP, whose decode all-gathers the query across its group) the count at tp // dp is given only
    where every split (each divisor t of tp, times each divisor of t for DCP) lands outside FlashInfer's 65-127
    gap, else None (not known: the rule on it is unknown, never passed)."""
    from stackcheck.launch.refusals import _attn_tp_sizes, _divisors

    plain = _attn_tp_sizes(options, [], [])[0]
    sizes = _attn_tp_sizes(options, args, sorted(splitters))
    if sizes == [plain]:
        return heads // plain
    counts = {heads // t * d for t in sizes for d in _divisors(t)}
    return heads // plain if not counts & set(_TRTLLM_GEN_HEADS_GAP) else None


def launch_expert_sizes(derived: Any, flags: Any, tp: int, redundant_ok: bool = False) -> list[int] | None:
    """The expert parallel sizes SGLang may build the MoE layers at for this launch: --ep-size as given (1 when not),
    and the TP size as well where an all-to-all backend is given (server_args sets ep_size to tp_size for each: 0.5.9
    server_args.py:2178-2219) or a prefill context-parallel flag is (the DeepSeek overrides set it then: 0.5.23
    arg_groups/model_overrides/deepseek_v2.py:118, :202; 0.5.9 server_args.py:1221-1225): both are offered, so such
    a launch is refused only where every size fails. None (not judged) where the count of experts SGLang builds is
    not config.json's: --ep-num-redundant-experts (added to it), --moe-data-parallel-size, an elastic EP join (another
    storage size). `redundant_ok` (ishape2): the sizes even with --ep-num-redundant-experts, which the caller adds
    (launch_redundant_experts) where the architecture does."""
    from stackcheck.launch import gate
    from stackcheck.launch.refusals import EP_SPELLINGS, _whole

    args = derived.sglang_args
    redundant = gate.option_value(args, ("--ep-num-redundant-experts",), flags)
    if (redundant is not None and redundant.strip() != "0" and not redundant_ok) or gate.option_value(
        args, ("--moe-data-parallel-size",), flags
    ) is not None:
        return None
    if any(str(a).startswith("--elastic-ep") for a in args):
        return None
    raw = gate.option_value(args, EP_SPELLINGS, flags)
    given = 1 if raw is None else _whole(raw)
    if given is None or given <= 0:
        return None  # (a value argparse refuses: the gate's reading says so)
    a2a = gate.option_value(args, ("--moe-a2a-backend",), flags)
    prefill_cp = any("prefill" in str(a) and ("-cp" in str(a) or "context-parallel" in str(a)) for a in args)
    # (irev83) 0.5.23 arg_groups/overrides.py _a2a_backend_overrides: --enable-waterfill without deepep / megamoe
    # makes it deepep; mega_moe_hook.py handle_moe_runner_backend_alias: --moe-runner-backend megamoe is
    # --moe-a2a-backend megamoe; either then spans the EP over the TP group (_a2a_ep_size)
    forced = gate.option_given(args, ("--enable-waterfill",), flags) or (
        gate.option_value(args, ("--moe-runner-backend",), flags) == "megamoe"
    )
    return [given, tp] if (a2a is not None and a2a != "none") or prefill_cp or forced else [given]


def launch_redundant_experts(derived: Any, flags: Any) -> int | None:
    """(ishape2) --ep-num-redundant-experts as a whole number (0 when not given; None: a value argparse refuses)."""
    from stackcheck.launch import gate
    from stackcheck.launch.refusals import _whole

    raw = gate.option_value(derived.sglang_args, ("--ep-num-redundant-experts",), flags)
    if raw is None:
        return 0
    got = _whole(raw)
    return got if got is not None and got >= 0 else None


def model_shape_results(
    models: Sequence[Any], derived: Any, mapping: Mapping[str, Any], version: str | None, flags: Any,
    table: Mapping[str, Any] | None = None,
) -> list[CheckResult]:  # fmt: skip
    """(ishape) preflight.shapes' refusals of the served model's shape at this launch's TP, attention TP and EP sizes
    (irobust13: 33 heads at --tp 2 were allowed). One function for the gate and recommend's lines. `table`:
    preflight.json model.model_shape (ishape2: the dense MLPs and redundant experts read). (ishape2) A speculative
    draft model that SGLang loads (--speculative-draft-model-path with an algorithm other than NGRAM) is judged
    as the target is, at the target's TP and attention TP sizes (its worker builds it in the target's TP group:
    0.5.9 speculative/eagle_worker.py:142-155; 0.5.23 draft_parallel.py resolve_draft_parallel_layout: the
    target's attention TP size, or a whole group's with DP attention: both sizes are offered, so a draft is refused
    only where every size fails); its experts are not judged (the draft's MoE backends are its own)."""
    from stackcheck.launch import gate
    from stackcheck.launch.preflight import draft_loaded
    from stackcheck.launch.preflight.shapes import shape_results, unstated_heads
    from stackcheck.launch.refusals import _attn_tp_sizes, _whole

    tp_opt = derived.options.get("--tp-size")
    tp = tp_opt if isinstance(tp_opt, int) and not isinstance(tp_opt, bool) and tp_opt > 0 else 1
    attn = _attn_tp_sizes(derived.options, derived.sglang_args, sorted(split_flags(mapping)), flags)
    redundant = launch_redundant_experts(derived, flags) if table is not None else 0
    eps = launch_expert_sizes(derived, flags, tp, redundant_ok=bool(redundant))
    encoder_only = gate.option_given(derived.sglang_args, ("--encoder-only",), flags)
    # (irev83) the dense layers' TP size: --moe-dense-tp-size, or 1 where --dwdp-size > 1 sets it (0.5.23
    # arg_groups/parallel_hook.py handle_dwdp); None: the TP size
    raw_dense, dwdp = (
        gate.option_value(derived.sglang_args, (o,), flags) for o in ("--moe-dense-tp-size", "--dwdp-size")
    )
    dense = 1 if dwdp is not None and (_whole(dwdp) or 0) > 1 else None if raw_dense is None else _whole(raw_dense)
    # (ishape3) --quantization decides which MoE method serves an AWQ checkpoint (shapes._moe_groups)
    quant = gate.option_value(derived.sglang_args, ("--quantization",), flags)
    out: list[CheckResult] = []
    for info in models:
        role = str(getattr(info, "role", ""))
        if role not in ("model", "draft model") or (role != "model" and not draft_loaded(derived.options)):
            continue
        keys = getattr(info, "attention", None)
        sizes = [*eps, tp] if eps is not None and tp not in eps and _megamoe_auto(keys) else eps
        subject = f"{role} {info.spec}"
        unstated = unstated_heads(keys, tp, attn, subject)
        if unstated is not None:
            out.append(unstated)
        out.extend(
            shape_results(keys, info.mla, tp, attn, sizes if role == "model" else None, version, subject,
                          encoder_only, dense, table=table, redundant=redundant or 0,
                          quantization=None if quant is None else str(quant))
        )  # fmt: skip
    return out


def _megamoe_auto(keys: Any) -> bool:
    """(irev83) Whether SGLang 0.5.23 may pick the megamoe all-to-all backend itself for this model (so the EP size
    becomes the TP size): a MiniMax-M3 checkpoint declaring mxfp8 with NVFP4-packed experts is served as
    minimax_m3_nvfp4, and on Blackwell, unless the flashinfer_trtllm_routed runner is given, its overrides set
    moe_a2a_backend megamoe (arg_groups/model_overrides/minimax_m3.py _resolve_quant_method, _minimax_m3_overrides).
    The GPU and the runner are not read here: the TP size is offered beside the given one."""
    if not isinstance(keys, Mapping):
        return False
    archs = keys.get("architectures")
    first = archs[0] if isinstance(archs, list) and archs else None
    qc = keys.get("quantization_config")
    return (
        first in ("MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration")
        and isinstance(qc, Mapping)
        and qc.get("quant_method") == "mxfp8"
        and str(qc.get("moe_quant_algo", "")).upper() == "NVFP4"
        and qc.get("moe_quant_format") == "nvfp4-pack-quantized"
    )


def model_launch_facts(pre: Preflight, derived: Any, mapping: Mapping[str, Any]) -> dict[str, Any]:
    """The launch facts on the served models' MLA shapes that features.json's trtllm_mla and flashmla rules read,
    from the config.json(s) the preflight read: the target's MLA dims (mla_kv_rope, mla_qk_nope_head_dim,
    mla_prefill_dims) and query heads per GPU (mla_heads_per_gpu); whether its config.json was read
    (model_config_read, where a model is named); and the same for a speculative draft model that SGLang builds its
    own attention backend for (draft_*): the one --speculative-draft-model-path names, or the target's config when
    only --speculative-draft-attention-backend is given (the draft worker reads the target's path then).
    `draft_attention_backend` is that flag's value (the draft's backend; absent: the target's)."""
    split = split_flags(mapping)
    infos = {str(i.role): i for i in pre.models}
    out: dict[str, Any] = {}

    def shape(info: Any, prefix: str) -> None:
        for key, value in (info.mla_dims or {}).items():
            out[f"{prefix}{key}"] = value
        heads = info.query_heads
        per_gpu = heads_per_gpu(heads, derived.options, derived.sglang_args, split) if isinstance(heads, int) else None
        if per_gpu is not None:
            out[f"{prefix}mla_heads_per_gpu"] = per_gpu

    target = infos.get("model")
    if target is not None:
        out["model_config_read"] = target.attention is not None
        shape(target, "")
    # the flags SGLang turns back off for this model (ignored_flag_facts), judged again with the model's facts
    out.update({k: v for k, v in pre.launch.items() if k.endswith("_ignored")})
    drafts, draft_backend = _draft_backend(derived, mapping)
    if not drafts:
        return out
    draft = infos.get("draft model")
    if draft is None and draft_backend is not None:
        draft = target  # no draft path: the draft worker loads the target's (NEXTN/MTP), on its own backend
    if draft is None:
        return out
    if draft_backend is not None:
        out["draft_attention_backend"] = draft_backend
    out["draft_config_read"] = draft.attention is not None
    if isinstance(draft.mla, bool):
        out["draft_mla"] = draft.mla
    shape(draft, "draft_")
    return out


def _storage_text_reader(view: Any, cwd: str | bool, live: bool) -> Callable[[str], tuple[str, str]]:
    """The text of a storage backend's own configuration file (a YAML file: check_storage_config_file), read as
    _storage_config_reader reads a file: ("read", the text), ("absent", why) on the live host, ("unread", why)."""
    read = _storage_reader(view, cwd, live, True)

    def text(path: str) -> tuple[str, str]:
        how, got = read(path)
        return (how, f"{path} does not exist") if how == "absent" else (how, str(got))

    return text


def _storage_config_reader(view: Any, cwd: str | bool, live: bool) -> Callable[[str], tuple[str, Any]]:
    """The reader check_storage_config takes for the file a storage backend's configuration variable names
    (SGLANG_HICACHE_MOONCAKE_CONFIG_PATH): ("read", the parsed JSON) through the box's view, ("absent", why) where the
    server would fail to open it (a file absent on the live host), ("missing", why) where it is not JSON, ("unread",
    why) where it was not read (a relative path in a directory not known, a file not found under --facts / --root /
    --image, which the box's own filesystem or a volume may hold, a file over 1 MiB)."""

    return _storage_reader(view, cwd, live, False)


def _storage_reader(view: Any, cwd: str | bool, live: bool, raw: bool) -> Callable[[str], tuple[str, Any]]:
    """_storage_config_reader's reading; `raw`: the file's text instead of its parsed JSON."""

    def read(path: str) -> tuple[str, Any]:
        import json
        import posixpath

        if not path.startswith("/"):
            if not isinstance(cwd, str) or not cwd:
                return ("unread", f"the relative path {path!r} is the server's directory's, which is not known")
            path = posixpath.join(cwd, path)
        try:
            st = view.stat(path)
        except OSError:
            st = None
        if st is None:
            if live:
                return ("absent", f"{path} does not exist (open fails: RuntimeError 'Failed to load config')")
            return ("unread", f"{path} is not on the filesystem the gate reads (the box the facts describe, or a "
                    "volume mounted at start, may hold it)")  # fmt: skip
        try:
            data = view.read_bytes(path, 1 << 20)
        except OSError as exc:
            return ("unread", f"{path} could not be read ({exc.strerror or exc})")
        if len(data) >= 1 << 20:
            return ("unread", f"{path} is over 1 MiB (not read)")
        if raw:  # (the text as it is: a YAML file, read by the caller)
            return ("read", data.decode("utf-8", "replace"))
        try:
            return ("read", json.loads(data.decode("utf-8")))
        except ValueError:
            return ("missing", f"{path} is not JSON (json.load raises: RuntimeError 'Failed to load config')")
        except RecursionError:  # (irev72: nested deeper than the interpreter's limit; a traceback before)
            return ("unread", f"{path} nests deeper than this reader goes (whether the server's json.load does is "
                    "not known)")  # fmt: skip

    return read


def checkpoint_quant_facts(launch: Mapping[str, Any]) -> dict[str, Any]:
    """The checkpoint's quantization facts of the preflight's launch facts of the served model (Preflight.launch,
    preflight.model_launch): model_quant_method and with it model_quant_schemes (compressed-tensors / Quark),
    model_kv_cache_fp8 and model_quant_loaded (the config class the release loads it with), each where it is known.
    One reading for the gate (model_file_facts) and recommend's model facts (imend15: recommend read the schemes a
    second time, by its own call)."""
    out: dict[str, Any] = {}
    if isinstance(launch.get("model_quant_method"), str):
        out["model_quant_method"] = launch["model_quant_method"]
        if isinstance(launch.get("model_quant_schemes"), list):  # compressed-tensors / Quark: the schemes
            out["model_quant_schemes"] = launch["model_quant_schemes"]
        if isinstance(launch.get("model_kv_cache_fp8"), bool):  # compressed-tensors: its kv_cache_scheme
            out["model_kv_cache_fp8"] = launch["model_kv_cache_fp8"]
        if isinstance(launch.get("model_quant_loaded"), str):  # the flag replaced by the release
            out["model_quant_loaded"] = launch["model_quant_loaded"]
    return out


def model_file_facts(pre: Any, derived: Any, mapping: Mapping[str, Any], version: str | None) -> dict[str, Any]:
    """Every launch fact the gate judges again once its preflight read the served model's files (irecmodel: one
    function, which `stackcheck gate` and `stackcheck recommend`'s judging of its line both call, so that a fact
    the gate learns from the model is never one recommend's line is judged without): the checkpoint's quantization
    as read (model_quant_method; with it model_quant_schemes, model_kv_cache_fp8, model_quant_loaded), whether it is
    quantized at all (checkpoint_quantized), the MoE runner SGLang picks itself for it (moe_runner_auto: the
    checkpoint's group-0 weights included), whether the launch runs MoE layers (model_moe), whether their top-k
    renormalizes (model_moe_renormalize), whether SGLang 0.5.23 keeps that top-k (model_moe_topk_kept) and whether it
    may take the DeepSeek-V3 fused routing (model_dsv3_routing, irec3: set only where it is known not to), and whether
    the speculative draft has routed experts (draft_model_moe, icute2). A fact not
    known is absent. It also replaces, on `derived`, the needs of a --quantization SGLang applies while loading an
    unquantized checkpoint (refusals.online_quantization_needs)."""
    from stackcheck.launch.refusals import (
        checkpoint_quantized,
        launch_draft_model_moe,
        launch_model_dsv3_routing,
        launch_model_moe,
        launch_model_moe_renormalize,
        launch_model_moe_topk_kept,
        model_attention,
        moe_runner_auto,
        online_quantization_needs,
    )

    out: dict[str, Any] = {}
    quantized = checkpoint_quantized(pre)
    online_quantization_needs(derived, mapping, quantized)
    if isinstance(quantized, bool):
        out["checkpoint_quantized"] = quantized
    out.update(checkpoint_quant_facts(getattr(pre, "launch", None) or {}))
    picked = moe_runner_auto(derived, mapping, version, pre)
    if picked is not None:
        out["moe_runner_auto"] = picked
    models = model_attention(pre)
    moe = launch_model_moe(models)
    if moe is not None:
        out["model_moe"] = moe
    draft_moe = launch_draft_model_moe(models)  # (icute2: the draft's MoE runner rules)
    if draft_moe is not None:
        out["draft_model_moe"] = draft_moe
    renormalize = launch_model_moe_renormalize(models)
    if renormalize is not None:
        out["model_moe_renormalize"] = renormalize
    if launch_model_dsv3_routing(models, version) is False:  # (irec3) never True: absent is not known
        out["model_dsv3_routing"] = False
    kept = launch_model_moe_topk_kept(models)  # (imend17: SGLang 0.5.23 keeps such a top-k: no assertion)
    if kept is not None:
        out["model_moe_topk_kept"] = kept
    return out
