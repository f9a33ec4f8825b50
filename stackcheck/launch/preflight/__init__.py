"""Preflight: what stops a launch before the first byte of weights is read, beyond the feature tables.

`run(inputs)` is a pure function of what it is given: the launch options the gate derived from the command
line (gate.Derived.options), the server's environment, the facts, the preflight data (manifests/
preflight.json), a filesystem view, and the box's live readings (GPU usage, /dev/shm, the port, the locked
memory limit), which `read_live` gathers and tests inject. Each check returns `CheckResult`s (check id,
status ok|fail|unknown|warn, observed, required, message, source):

| check | what | module |
|---|---|---|
| gpu-count, parallel-layout | CUDA ordinals the ranks take vs devices visible after CUDA_VISIBLE_DEVICES | gpus.py |
| gpu-memory, gpu-memory-balance, gpu-compute-mode | free memory, processes and compute mode on those GPUs | memory.py |
| model, draft-model | the model's config from a local path or the HF cache; the features it needs | model.py |
| dependencies | SGLang's Requires-Dist in the target environment, as pip check judges them | deps.py |
| model-architecture | config.json's architectures against the classes the target's SGLang registers | architecture.py |
| shm, port, memlock | /dev/shm for NCCL, the server's port, ulimit -l across nodes | host.py |

Live checks (memory, port, shm, memlock, dependencies; model-architecture, which reads the target environment's
SGLang) run only when the facts are this box's (not with --facts FILE): a saved report says nothing about this
moment.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stackcheck.launch.preflight.host import ShmReading, check_memlock, check_port, check_shm
from stackcheck.launch.preflight.result import CheckResult, worst
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.record import field, record

if TYPE_CHECKING:  # the probes package is imported only where the box is read (not with --facts)
    from typing import Any

    from stackcheck.launch.preflight.model import ModelInfo, ModelRequirement
    from stackcheck.launch.preflight.result import Status
    from stackcheck.probes.gpu_usage import UsageReading
    from stackcheck.readers.fsview import FileView

__all__ = ["CheckResult", "Inputs", "Preflight", "Readings", "read_live", "run", "worst"]

LIVE_CHECKS = (
    "gpu-memory", "gpu-memory-balance", "gpu-compute-mode", "dependencies", "shm", "port", "memlock",
    "model-architecture",
)  # fmt: skip
#: the check ids this module's results carry (imend15: gate_preflight.preflight_checks derives --allow's from them)
CHECK_IDS = ("dependencies",)  # (its own: the dependencies result of a target not read)


@record
class Readings:
    """The box's state now; None where it was not read."""

    usage: UsageReading | None = None
    shm: ShmReading | None = None
    memlock: tuple[int | None, str | None] | None = None
    port: tuple[bool | None, str] | None = None
    search_dirs: list[str] | None = None  # the target environment's sys.path (dependencies)
    target: tuple[str | None, str | None] = (None, None)  # the target's Python version and machine (markers)
    deps_view: FileView | None = None  # where the target environment is read (--root DIR); None: inp.view
    own_pids: tuple[int, ...] = ()


@record
class Inputs:
    options: Mapping[str, Any]
    env: Mapping[str, str]
    facts: Mapping[str, Any]
    data: Mapping[str, Any]
    view: FileView
    cwd: str
    home: str
    sglang_version: str | None = None
    known_packages: set[str] = field(default_factory=set)
    readings: Readings | None = None  # None: facts from a file, live checks not run
    # why the launch's working directory is not known (a shell string's `cd $DIR`, `cd -`: gate.launch_cwd); then
    # `cwd` is the gate's own and a relative model path is not read
    cwd_unknown: str | None = None
    # where a model that is not found was not looked for, for its note where the facts are not this box's (gate
    # --image: IMAGE_MODEL_ABSENT); None: a facts file's
    not_searched: str | None = None


@record
class Preflight:
    results: list[CheckResult]
    models: list[ModelInfo]
    requirements: list[ModelRequirement]
    launch: dict[str, Any]  # launch facts the model adds (model_mla, model_mla_kv_rope, model_multimodal, ...)
    skipped: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "checks": [r.to_json() for r in self.results],
            "models": [m.to_json() for m in self.models],
            "skipped": list(self.skipped),
        }


def model_launch(info: ModelInfo, data: Mapping[str, Any], flag: object, sglang_version: str | None) -> dict[str, Any]:
    """The launch facts the preflight holds of the served model `info` as read (Preflight.launch): MLA or not and its
    dims, multimodal, the checkpoint's quant_method, schemes, KV-cache format, ModelOpt mixed-precision experts and the
    config class the release loads those with (`flag`: the launch's --quantization). One function, which recommend
    calls for each line it judges as the gate's preflight does for the launch (irecmodel)."""
    launch: dict[str, Any] = {}
    if info.mla is not None:
        launch["model_mla"] = info.mla
    launch.update({f"model_{k}": v for k, v in info.mla_dims.items()})
    if info.multimodal is not None:
        launch["model_multimodal"] = info.multimodal
    if info.quant_method:
        launch["model_quant_method"] = info.quant_method
    if info.quant_schemes is not None:
        launch["model_quant_schemes"] = info.quant_schemes
    if info.kv_cache_fp8 is not None:
        launch["model_kv_cache_fp8"] = info.kv_cache_fp8
    if info.mixed_precision is not None:
        launch["model_mixed_precision"] = info.mixed_precision
        launch.update(_quant_loaded(data, info.mixed_precision, flag, sglang_version))
    return launch


def _quant_loaded(
    data: Mapping[str, Any], mixed: Mapping[str, Any], flag: object, sglang_version: str | None
) -> dict[str, Any]:
    """launch.model_quant_loaded: the config class the release loads the served model's ModelOpt MIXED_PRECISION
    checkpoint with where the gate decides it (preflight.json model.w4afp8_moe; w4afp8.loaded_method):
    `modelopt_mixed` whatever --quantization says, or `w4afp8`, so that the quantization rules hold it to that
    class's minimum, not the flag's; empty otherwise."""
    table = (data.get("model") or {}).get("w4afp8_moe")
    if not isinstance(table, Mapping):
        return {}
    from stackcheck.launch.preflight.w4afp8 import loaded_method

    flag = flag.lower() if isinstance(flag, str) else None
    got = loaded_method(table, mixed, flag, sglang_version)
    return {"model_quant_loaded": got} if got is not None else {}


def draft_loaded(options: Mapping[str, Any]) -> bool:
    """Whether SGLang loads the speculative draft model: --speculative-algorithm given, and not NGRAM. Without an
    algorithm no draft worker is built (scheduler.py 0.5.5:342-347, NONE registers no factory: spec_info.py:176-179,
    :292; 0.5.9 maybe_init_draft_worker :534-536; 0.5.23 :1035-1039), and NGRAM's worker loads no model (spec_info.py
    0.5.5:282-285, 0.5.9:95-102): --speculative-draft-model-path is then read by nothing (read in the wheels)."""
    algorithm = options.get("--speculative-algorithm")
    return algorithm is not None and str(algorithm).upper() not in ("NONE", "NGRAM")


#: what a draft model's check says where no draft is loaded (draft_loaded)
NOT_LOADED = "; no draft model is loaded (no --speculative-algorithm, or NGRAM), so SGLang never reads this path"


#: the first release whose server args read the draft path's config whatever the algorithm (irev56): the algorithm's
#: alias is resolved with get_config(--speculative-draft-model-path) whenever a path is given (0.5.12
#: server_args.py:319-332 from _handle_speculative_decoding :3564-3568; 0.5.13 arg_groups/speculative_hook.py:13-25,
#: :72-77; 0.5.23 :81-95, :150-159 from arg_groups/pipeline.py:304-306; none in 0.5.9-0.5.11)
DRAFT_CONFIG_READ = ">=0.5.12"
#: what a check that reaches the draft's config says where it is read although no draft is loaded
CONFIG_READ = (
    "; no draft model is loaded, but SGLang 0.5.12 and later read this path's config at startup whatever "
    "--speculative-algorithm says (server args resolve the algorithm's alias with get_config), so the launch fails"
)


def _not_loaded(result: CheckResult, version: str | None) -> CheckResult:
    """A check of a draft model SGLang does not load: a failure (or an unknown) is a note (warn), never a refusal;
    except the checks that reach its config (not found, unreadable, not known where a relative path leads) on a
    release that reads it all the same (DRAFT_CONFIG_READ; an unknown release too), which stay as they are."""
    if result.status in ("ok", "warn"):
        return result
    observed = result.observed if isinstance(result.observed, Mapping) else {}
    reaches_config = (
        observed.get("found") is False
        or observed.get("config") == "unreadable"
        or ("cwd" in observed and observed["cwd"] is None)  # a relative path in a working directory not known
    )
    if reaches_config:
        from stackcheck.facts.versions import version_in

        if version is None or version_in(version, DRAFT_CONFIG_READ) is not False:
            return result._replace(message=result.message + CONFIG_READ)
    return result._replace(status="warn", message=result.message + NOT_LOADED)


def _float_option(options: Mapping[str, Any], flag: str) -> float | None:
    value = options.get(flag)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def run(inp: Inputs) -> Preflight:
    # (the checks' modules, imported here: a gate served from its kept decision imports this package for the
    # host's readers only, stackcheck.assembly.gate_cache)
    from stackcheck.launch.preflight.gpus import (
        MAX_NODE_RANKS,
        Layout,
        check_gpu_count,
        gpu_ordinals,
        layout_problems,
        ranks_on_node,
        visible_devices,
    )
    from stackcheck.launch.preflight.memory import check_memory
    from stackcheck.launch.preflight.model import read_model

    if any(name.startswith("SGL_") for name in inp.env):
        # the server's environment as the release reads it after importing sglang.srt.environ: 0.5.3rc2 and later
        # copy each SGL_X over SGLANG_X (facts/sgl_prefix.py; irev73: imend5 read the copy for launch.json's
        # variables only, and `SGL_DISABLED_MODEL_ARCHS=...` left model-architecture ok)
        import copy

        from stackcheck.facts.sgl_prefix import sglang_environ

        inp = copy.copy(inp)  # (the caller's inputs left as given)
        inp.env = sglang_environ(inp.env, inp.sglang_version)[0]
    data = inp.data
    options = inp.options
    layout = Layout.from_options(options)
    results: list[CheckResult] = list(layout_problems(layout, (data.get("gpu_layout") or {}).get("source")))
    gpus = [g for g in inp.facts.get("gpus") or [] if isinstance(g, dict)]
    driver = inp.facts.get("driver") if isinstance(inp.facts.get("driver"), dict) else {}
    topology = inp.facts.get("topology") if isinstance(inp.facts.get("topology"), dict) else {}
    nvml_error = (topology or {}).get("error") or (driver or {}).get("error")
    system = inp.facts.get("system") if isinstance(inp.facts.get("system"), dict) else {}
    visible = visible_devices(inp.env.get("CUDA_VISIBLE_DEVICES"), gpus)
    count, nvml_indices = check_gpu_count(
        layout, visible, gpus, nvml_error, inp.env, (system or {}).get("container"), data, inp.sglang_version
    )
    results.append(count)

    models: list[ModelInfo] = []
    requirements: list[ModelRequirement] = []
    launch: dict[str, Any] = {}
    for flag, role in (("--model-path", "model"), ("--speculative-draft-model-path", "draft model")):
        spec = options.get(flag)
        if not isinstance(spec, str) or not spec:
            continue
        this_box = inp.readings is not None
        info = read_model(
            inp.view, spec, role, inp.env, options, data, inp.cwd, inp.home, this_box, inp.sglang_version,
            inp.cwd_unknown, inp.not_searched,
        )  # fmt: skip
        models.append(info)
        if role == "model" or draft_loaded(options):
            results.extend(info.results)
            requirements.extend(info.requirements)
        else:  # a draft SGLang never loads: what it would need is noted, never required
            results.extend(_not_loaded(r, inp.sglang_version) for r in info.results)
        if role == "model":
            launch.update(model_launch(info, data, options.get("--quantization"), inp.sglang_version))

    skipped: list[str] = []
    r = inp.readings
    if r is None:
        skipped = list(LIVE_CHECKS)
        return Preflight(results, models, requirements, launch, skipped)
    import os

    from stackcheck.launch.preflight.architecture import check_models

    if r.search_dirs is not None:  # the target environment is readable here (not an image read once already)
        arch_view = r.deps_view or inp.view
        results.extend(
            check_models(models, inp.facts, arch_view, options, inp.env, inp.sglang_version, data, os.environ, inp.view)
        )
    else:
        skipped.append("model-architecture")
    weights = models[0].weights if models and models[0].role == "model" else None
    if options.get("--quantization") and models and models[0].quant_method is None:
        weights = None  # quantised while loading: the checkpoint's size overstates what the GPU holds
    results.extend(
        check_memory(
            r.usage,
            nvml_indices,
            _float_option(options, "--mem-fraction-static"),
            layout,
            weights,
            inp.env,
            data,
            inp.sglang_version,
            r.own_pids,
        )
    )
    host = data.get("host") or {}
    if r.search_dirs is not None:
        from stackcheck.launch.preflight.deps import check_dependencies

        try:
            view = r.deps_view or inp.view
            deps = check_dependencies(view, r.search_dirs, None, inp.known_packages, target=r.target)
            results.extend(deps or _dependencies_unread(inp.facts, r.search_dirs))
        except ImportError as exc:  # packaging is a dependency of stackcheck; a broken install says so
            results.append(CheckResult("dependencies", "unknown", None, "SGLang's Requires-Dist", f"packaging: {exc}"))
    if r.shm is not None:
        ranks = ranks_on_node(layout)
        gpus_here = ranks if ranks > MAX_NODE_RANKS else len(set(gpu_ordinals(layout)))
        shm = check_shm(r.shm, gpus_here, host.get("shm") or {})
        if shm is not None:
            results.append(shm)
    if r.memlock is not None:
        ml = check_memlock(r.memlock, layout.nnodes, host.get("memlock") or {})
        if ml is not None:
            results.append(ml)
    if r.port is not None:
        port_spec = host.get("port") or {}
        host_value = str(options.get("--host") or port_spec.get("default_host", "127.0.0.1"))
        port_value = int(options.get("--port") or port_spec.get("default_port", 30000))
        results.append(check_port(host_value, port_value, r.port, port_spec))
    return Preflight(results, models, requirements, launch, skipped)


def _dependencies_unread(facts: Mapping[str, Any], search_dirs: Sequence[str]) -> list[CheckResult]:
    """No dependency check where SGLang's dist-info is not in the search directories: none where the packages
    probe says SGLang is not installed (the features' needs say so), unknown where it says it is (the check
    read other directories than the probe did, as it did for every environment under the home directory
    while those were named "~/..." in the facts: fail closed, never a silent pass)."""
    packages = facts.get("packages") if isinstance(facts.get("packages"), Mapping) else {}
    sglang = packages.get("sglang") if isinstance(packages, Mapping) else None
    if not isinstance(sglang, Mapping) or sglang.get("installed") is not True:
        return []
    where = sglang.get("location")
    return [
        CheckResult(
            "dependencies", "unknown", {"sglang_location": where, "search_directories": len(search_dirs)},
            "SGLang's dist-info in the target environment's search directories",
            f"SGLang is installed ({where}, the packages probe), but its dist-info is not in the "
            f"{len(search_dirs)} search directories the dependency check lists: its requirements were not "
            "checked", None,
        )
    ]  # fmt: skip


def read_live(
    options: Mapping[str, Any],
    data: Mapping[str, Any],
    usage: UsageReading | None,
    search_dirs: Sequence[str] | None,
    facts: Mapping[str, Any],
) -> Readings:
    """The live readings for a launch on this box (the GPU usage is read by the caller, in a thread)."""
    import os

    from stackcheck.launch.host_readers import SHM_PATH, port_free, read_memlock, read_shm

    host = data.get("host") or {}
    port_spec = host.get("port") or {}
    host_value = str(options.get("--host") or port_spec.get("default_host", "127.0.0.1"))
    port_value = int(options.get("--port") or port_spec.get("default_port", 30000))
    system: Mapping[str, Any] = facts["system"] if isinstance(facts.get("system"), dict) else {}
    from stackcheck.assembly.gate_cache import note  # (each reading recorded when the gate's decision is kept)

    return Readings(
        usage=usage,
        shm=note("shm", (str((host.get("shm") or {}).get("path", SHM_PATH)),), read_shm),
        memlock=note("memlock", (), read_memlock),
        port=note("port", (host_value, port_value), port_free),
        search_dirs=list(search_dirs) if search_dirs is not None else None,
        target=(system.get("python"), system.get("machine")),
        own_pids=(os.getpid(),),
    )


def summary_status(results: Sequence[CheckResult]) -> Status:
    return worst(results)
