"""The manifests' records as types: what a validated document of manifests/*.json holds (schemas/*.json).

A document is validated once (the shipped set by the tests, a user's directory at every load, see
stackcheck.knowledge.loader) and from then on read through these types: `Manifests.features` is a
`list[Feature]`, `Manifests.releases(name)` a `list[Release]`, and so on, so a reader relies on the schema
instead of re-checking each value's type by hand.

They are TypedDicts, and this module is imported only for type checking (`if TYPE_CHECKING:`, and
`cast("list[Feature]", ...)` with the name as a string): a validated document is already these values, so
typing it costs nothing at run time (no conversion, no import, no class built at start: issue 21's budget;
frozen dataclasses would copy every record at load and import dataclasses and inspect, ~8 ms of a start).
Every key is optional here (`total=False`), as most are in the schemas; readers keep `.get()` where a key
may be absent. A predicate (`when`, `require`) and a `source` stay `Any`: their shapes are the rule
language's and the sources' own, read by the engine (stackcheck.verdicts.engine) and stackcheck.knowledge.sources.
"""

from __future__ import annotations

from typing import Any, TypedDict

#: a `source`: a sources.json id, an inline {title, url, ...}, or a list of them (common.schema.json)
Source = Any
#: a predicate of the rule language (features.schema.json `pred`)
Pred = Any


# ---- features.json / checks.json ------------------------------------------------------------------------


class RequiredBy(TypedDict, total=False):
    """Which launches need an item or a rule, and why (`required_by`): every launch, the launches that use
    `features`, or those whose launch facts meet `when`."""

    launches: str  # "every", or "none" on a rule no launch needs
    features: list[str]
    when: list[Pred]
    why: str
    source: Source
    inferred: bool
    note: str


class Derive(TypedDict, total=False):
    """A rule's `derive`: how the rule is read from an installed release's own files."""

    flag: str
    choice: str


class Rule(TypedDict, total=False):
    id: str
    when: Pred
    require: Pred
    effect: str  # features.schema.json $defs/effect: crash | wrong-output | disabled | degraded
    message: str
    source: Source
    inferred: bool
    note: str
    required_by: RequiredBy
    derive: Derive


class Enable(TypedDict, total=False):
    flags: list[str]
    env: dict[str, str]
    default_on: bool
    disable_flags: list[str]


class Workaround(TypedDict, total=False):
    text: str
    patch: dict[str, Any]
    flags: list[str]
    env: dict[str, str]
    source: Source
    upstream_supported: bool
    for_rules: list[str]
    inferred: bool
    note: str


class Fix(TypedDict, total=False):
    text: str
    component: str
    commands: list[str]
    source: Source


class QuantifyEarlier(TypedDict, total=False):
    """What every release older than the known ones does, for facts dated before all of them."""

    when: Pred
    effect: str
    rule: str
    why: str
    source: Source


class Quantify(TypedDict, total=False):
    """A verdict that holds for every known release of `package` when its version is not known."""

    package: str
    rules: list[str]
    why: str
    source: Source
    earlier: QuantifyEarlier


class Feature(TypedDict, total=False):
    id: str
    title: str
    needs: list[str]  # package names, `a|b` for alternatives
    assume_newer: list[str]
    rules: list[Rule]
    note: str
    enable: Enable
    workaround: Workaround
    upstream: dict[str, Any]
    required_by: RequiredBy
    path: list[Any]
    quantify: Quantify


class CheckExtension(TypedDict, total=False):
    """checks.json `extension` (builtin extension-torch-abi): the compiled extensions judged and their effect."""

    modules: list[str]
    effect: str
    imports: str
    launch_fact: str
    every_launch_releases: str
    module_effects: dict[str, str]
    release_symbols: dict[str, Any]
    library_loads: dict[str, Any]


class Check(TypedDict, total=False):
    id: str
    title: str
    needs: list[str]
    assume_newer: list[str]
    rules: list[Rule]
    note: str
    builtin: str
    extension: CheckExtension
    required_by: RequiredBy
    fix: Fix
    quantify: Quantify


# ---- gates.json -------------------------------------------------------------------------------------------


class SourceTableRelease(TypedDict, total=False):
    """One row of a gate's release table: the value the gate has in the releases `versions` admits."""

    versions: str
    value: Any
    source: Source
    inferred: bool
    note: str


class SourceTable(TypedDict, total=False):
    id: str
    title: str
    package: str
    probe: dict[str, Any] | None  # None: a manifest-only gate, known from its releases alone
    releases: list[SourceTableRelease]
    note: str


# ---- components.json --------------------------------------------------------------------------------------


class Variant(TypedDict, total=False):
    variant: str
    cuda: str
    arch_list: str
    archs: list[str]
    archs_aarch64: list[str]
    pypi: bool
    index_only: bool
    nccl: str
    experimental: bool
    source: Source
    inferred: bool
    note: str
    libs: dict[str, Any]
    libs_source: Source
    libs_aarch64: dict[str, Any]  # the same, read from the build's manylinux aarch64 wheel
    libs_aarch64_source: Source
    requires: dict[str, str]  # this build's own exact pins on untracked packages (torch's cuDNN), for implied facts
    requires_read: dict[str, Any]


class Release(TypedDict, total=False):
    version: str
    date: str
    uploaded: str  # the UTC day of its first file on PyPI (left out of a sweep of facts collected earlier)
    pypi_variant: str | None
    cuda: str
    archs: list[str]
    variants: list[Variant]
    requires: dict[str, str]  # normalised distribution name -> PEP 440 specifier set
    requires_extras: dict[str, Any]
    optional_requires: dict[str, Any]
    requires_python: str
    wheel_glibc: dict[str, Any]  # {min, source}: no file of the release installs on an older glibc
    renamed_to: str
    notes: list[str]
    source: Source
    inferred: bool
    note: str
    tools: dict[str, Any]
    tool_env: dict[str, Any]
    tool_min_sm: dict[str, int]
    arch_majors: list[int]
    min_jit_cuda: str
    kernel_min_at_start: str
    flashinfer_min_at_start: str
    requires_read: dict[str, Any]
    #: not in the schema: a release derived from an installed package's own files (stackcheck.derive.judge)
    derived: str


class Package(TypedDict, total=False):
    names: list[str]
    import_name: str
    index_url: str
    index_source: Source
    renamed_from: str
    renamed_to: str
    notes: list[str]
    releases: list[Release]
    tool_env: dict[str, Any]
    tool_min_sm: dict[str, int]
    uploaded_source: Source
    dev_builds: dict[str, Any]
    every_release: dict[str, Any]  # every release the index served, from its first: a sweep may conclude ok


class CudaRelease(TypedDict, total=False):
    version: str
    min_driver: str | None
    updates: list[dict[str, Any]]
    family_min_driver: str
    archs_added: list[str]
    archs_removed: list[str]
    compilable: list[str]
    host_gnu_max: dict[str, Any]  # the newest GCC major its nvcc takes (include/crt/host_config.h; igap24)
    released: bool
    notes: list[str]
    source: Source
    inferred: bool
    note: str


class Cuda(TypedDict, total=False):
    releases: list[CudaRelease]
    minor_version_compatibility: list[dict[str, Any]]
    notes: list[str]


class Components(TypedDict, total=False):
    driver: dict[str, Any]
    cuda: Cuda
    packages: dict[str, Package]


# ---- architectures.json -----------------------------------------------------------------------------------


class ArchTarget(TypedDict, total=False):
    target: str
    min_cuda: str
    how: str
    source: Source
    inferred: bool
    note: str


class Architecture(TypedDict, total=False):
    id: str
    compute_capability: str  # "12.0"
    name: str
    generation: str
    nvml_architecture: int
    gpus: list[str]
    gpu_name_sources: list[dict[str, Any]]
    min_cuda: str
    min_driver: str
    kernel_modules: dict[str, Any]
    proprietary_kernel_modules: dict[str, Any]
    targets: list[ArchTarget]
    incompatible_targets: list[Any]
    notes: list[str]
    source: Source
    inferred: bool
    note: str


class CompatRule(TypedDict, total=False):
    """A binary-compatibility rule (architectures.json `rules`, applied by stackcheck.facts.archs.runs_on)."""

    id: str
    text: str
    kind: str
    suffixes: list[str]
    runs_on: str
    min_cuda: str
    source: Source
    inferred: bool
    note: str


# ---- meta.json --------------------------------------------------------------------------------------------


class Meta(TypedDict, total=False):
    data_version: str  # YYYY.M.D, required
    date: str  # required
    note: str


# ---- signatures.json (stackcheck triage) ------------------------------------------------------------------


class SignatureExample(TypedDict, total=False):
    text: str
    file: str
    function: str  # with where_function: the frame's function


class SignatureCause(TypedDict, total=False):
    """One cause of a generic error (signatures.json `caused_by`): a feature and/or a check whose failing verdict
    on the box produces it."""

    feature: str
    check: str
    rules: list[str]  # only these rules of the verdict count (default: any)
    gpus_differ_in: str  # counted only where the facts' GPUs differ in this field
    source: Source
    inferred: bool
    note: str


class Signature(TypedDict, total=False):
    """A known failure in a server log: `pattern` (a regular expression; `literal`, a plain substring every
    match contains, lets triage skip the regex) names the feature or check it comes from."""

    id: str
    title: str
    pattern: str
    literal: str
    where: str
    feature: str | None
    check: str
    level: str  # "error" | "warning"
    explanation: str
    fix: str
    examples: list[SignatureExample]  # texts the pattern must match (the tests check them)
    source: Source
    inferred: bool
    note: str
    at_end: bool  # a run that stopped without an error (a hang): matched in the log's last lines only
    after_not: str  # with at_end: a later line of that tail that shows the run went on
    where_function: str  # with where: the function of the frame whose file matches where
    stack_fix: bool  # false: no upgrade the manifests know removes this cause on the GPU the message names
    explains: list[str]  # signatures whose errors this one causes: its earlier error is their root cause
    caused_by: list[SignatureCause]  # a generic error's causes: triage --facts names the one failing on the box


# ---- launch.json (stackcheck gate reads an SGLang command line) -------------------------------------------

#: a launch condition (launch.schema.json `condition`): {option, in}, {flag, present}, {env, in},
#: {launch, op, value} or {any: [...]}; read by stackcheck.launch.gate
LaunchCondition = dict[str, Any]


class FeatureWhen(TypedDict):
    feature: str
    when: list[LaunchCondition]


#: a requirement: a feature id, or a feature needed only when its conditions hold
Requirement = str | FeatureWhen


class LaunchEntrypoint(TypedDict, total=False):
    id: str
    python_module: str  # one of python_module and program
    program: str
    subcommand: str
    source: Source
    inferred: bool
    note: str


class OptionRelease(TypedDict, total=False):
    versions: str  # a version specifier
    present: bool  # whether the flag exists in those releases
    source: Source
    inferred: bool
    note: str


class LaunchOption(TypedDict, total=False):
    flag: str
    aliases: list[str]
    value: str  # "bool" | "int" | "float" | "choice" | "str"
    fact: str
    default: str | float | bool
    choices: dict[str, list[Requirement]]
    choices_of: str
    requires: list[Requirement]
    releases: list[OptionRelease]
    min: float
    max: float
    source: Source
    inferred: bool
    note: str
    moe_only: dict[str, Any]  # choices that run only in MoE layers (choices, unquantized_idle, source, note)
    checkpoint_unquantized: dict[str, Any]  # a choice's needs on a checkpoint without quantization (choices, source)
    ignored_for_models: list[dict[str, Any]]  # releases that turn the flag back off for some models (versions, ...)
    idle_for_models: list[dict[str, Any]]  # releases whose listed models never run the flag's path (versions, ...)
    model_types_only: list[dict[str, Any]]  # values only models of some config classes run (versions, ...)


class LaunchEnvA2A(TypedDict, total=False):
    """launch.json env `sets_a2a`: the MoE all-to-all backend SGLang sets where the variable is on."""

    value: str
    versions: str  # the releases where the override runs before the checks
    unknown_versions: str  # releases where its order against the checks was not followed
    unset_versions: str  # releases where it is set only when the command gives no --moe-a2a-backend


class LaunchEnv(TypedDict, total=False):
    """An environment variable SGLang reads as a bool: the values in `true` / `false`, else `otherwise`."""

    name: str
    value: str  # "bool"
    default: bool
    true: list[str]
    false: list[str]
    otherwise: bool
    fact: str
    versions: str  # the SGLang releases that read it (a specifier); the fact is its default on another release
    source: Source
    inferred: bool
    note: str
    sets_a2a: LaunchEnvA2A  # where the variable is on, SGLang sets --moe-a2a-backend itself
    set_fact: str  # a second launch fact: whether the variable is set at all (igap47)
    strip: bool  # the value is matched with surrounding whitespace stripped (LMCache's LMCACHE_*: igap47)


class LaunchDefault(TypedDict, total=False):
    feature: str
    when: list[LaunchCondition]
    refuse: bool
    source: Source
    inferred: bool
    note: str


class ReleaseFlags(TypedDict, total=False):
    """launch.json `release_flags`: every flag each SGLang release declares (tools/sglang_flags.py)."""

    releases: list[str]  # oldest first
    builtin: list[str]  # argparse's own (--help)
    source: Source
    flags: dict[str, list[str]]  # flag -> runs of consecutive releases ("0.5.1-0.5.9", "0.5.4")
    nargs: dict[str, list[dict[str, Any]]]  # flag -> [{nargs: "0" | "?" | "*" | "+" | N, releases}] (not one value)
    plugins: list[str]  # runs of releases whose launcher loads plugins before parsing (they may add flags)
    plugins_source: Source


class OwnFlagChoice(TypedDict, total=False):
    """launch.json `own_flag_choices`: a release's own flag whose name a listed flag abbreviates, and its choices."""

    flag: str
    versions: str
    choices: list[str]
    source: Source
    note: str


class ReleaseChoiceRun(TypedDict, total=False):
    """One run of releases of launch.json `release_choices`: the choices their parser offers."""

    versions: str
    choices: list[str]
    source: Source
    note: str


class ReleaseChoices(TypedDict, total=False):
    """launch.json `release_choices`: listed choice flags whose choices a release's parser narrows."""

    flags: list[str]
    runs: list[ReleaseChoiceRun]
    known: list[str]  # values no run offers that are still judged (for a flag launch.json lists without choices)
    every_value: bool  # the runs name every value the parser accepts: any other value is judged too
    plugins_extend: bool  # whether a plugin can add choices (default true)
    type: str  # "int": argparse converts each value with int() before it looks it up (the choices written as text)
    nargs: str  # "*": every token after the flag up to the next option is a value, each looked up
    note: str


class ReleaseTypes(TypedDict, total=False):
    """launch.json `release_types`: the flags each release's parser converts with type=int or type=float."""

    description: str
    releases: list[str]
    source: Source
    flags: dict[str, list[dict[str, Any]]]  # flag -> [{type, releases (runs), file, nargs?, names?}]


class Refusals(TypedDict, total=False):
    """launch.json `refusals`: flag combinations SGLang refuses while it reads its arguments (launch/refusals.py)."""

    description: str
    auto: dict[str, Any]  # how SGLang fills the values the flags leave out (top-k, page size, attention backend)
    rules: list[dict[str, Any]]


class Launch(TypedDict, total=False):
    entrypoints: list[LaunchEntrypoint]
    options: list[LaunchOption]
    env: list[LaunchEnv]
    defaults: list[LaunchDefault]
    release_flags: ReleaseFlags
    own_flag_choices: list[OwnFlagChoice]
    release_choices: list[ReleaseChoices]
    release_types: ReleaseTypes
    draft_attention_backend: dict[str, Any]  # how a speculative draft's own backend is built (gate_preflight.py)
    refusals: Refusals


# ---- recommend.json (stackcheck recommend) ----------------------------------------------------------------


class Settings(TypedDict, total=False):
    flags: dict[str, str | bool]  # flag -> value, or true for a bare flag
    env: dict[str, str]


class Unset(TypedDict, total=False):
    flags: list[str]
    env: list[str]


class RecommendOption(TypedDict, total=False):
    id: str
    title: str
    scope: Pred
    releases: Any  # common.schema.json `requires`: package -> specifier
    when: Pred
    feature: str
    goals: list[str]  # "latency" | "throughput"
    set: Settings
    unset: Unset
    advice: bool
    reason: str
    gain: dict[str, Any]  # {kind: measured, by, machine, figures, source} or {kind: expected, why}
    source: Source
    inferred: bool
    note: str


class Decision(TypedDict, total=False):
    id: str
    title: str
    applies: Pred
    if_unknown: str
    options: list[RecommendOption]
    note: str


class Never(TypedDict, total=False):
    id: str
    title: str
    flags: list[str]
    env: list[str]
    patch: str
    when: Pred
    feature: str
    effect: str  # "crash" | "disabled" | "wrong-output" | "slower"
    why: str
    evidence: Source
    inferred: bool
    note: str


class Recommend(TypedDict, total=False):
    decisions: list[Decision]
    never: list[Never]


# ---- preflight.json (what the gate checks before exec beyond the feature tables) ---------------------------
# Its sections are read each by one check in stackcheck.launch.preflight; typed here to the first level.


class Preflight(TypedDict, total=False):
    gpu_layout: dict[str, Any]  # formula, versions, dp_offset[]: preflight/gpus.py
    visible_devices: dict[str, Any]  # mig_multi_device: preflight/gpus.py
    memory: dict[str, Any]  # rule, imbalance, default_mem_fraction[], compute_modes: preflight/memory.py
    model: dict[str, Any]  # config_cap_bytes, weight_patterns, quantization[] ...: preflight/model.py
    config_file: dict[str, Any]  # suffixes, rule, cap_bytes: preflight/configfile.py
    host: dict[str, Any]  # shm, memlock, port: preflight/host.py
    a2a_packages: dict[str, Any]  # the MoE all-to-all backends, modules, releases, messages: package_checks.py
    quant_packages: dict[
        str, Any
    ]  # the --quantization methods' own packages (humming, bitsandbytes): package_checks.py
    transfer_packages: dict[str, Any]  # disaggregation transfer / HiCache storage backends' packages: package_checks.py
    storage_configs: dict[str, Any]  # HiCache storage backends' required configuration: package_checks.py
