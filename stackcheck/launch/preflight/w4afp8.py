"""W4AFP8 MoE layers off Hopper (preflight.json model.w4afp8_moe; check w4afp8-moe-gpu).

SGLang's W4AFp8 config (min capability 90) runs a MoE layer through W4AFp8MoEMethod, whose forward calls
sgl-kernel's cutlass_w4a8_moe_mm, and that entry point runs its SM90 kernel whatever the GPU: on a GPU of another
major (Blackwell, 10 and 12) no source read says what happens, so the check is unknown there, never ok.

Which checkpoints run it: `--quantization w4afp8` on a checkpoint that is not ModelOpt MIXED_PRECISION, or a
MIXED_PRECISION one that the release maps to w4afp8 rather than modelopt_mixed (0.5.10-0.5.14: a NemotronH model is
modelopt_mixed; 0.5.15 on: one whose hf_quant_config.json `quantized_layers` name an NVFP4 layer is), the flag given
or not: SGLang overrides --quantization w4afp8 with modelopt_mixed for a checkpoint it maps there. Pure."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from stackcheck.launch.preflight.result import CheckResult
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

CHECK = "w4afp8-moe-gpu"
#: a ModelOpt MIXED_PRECISION checkpoint the release loads as modelopt_mixed on a GPU below that config's minimum
MIXED_CC_CHECK = "modelopt-mixed-min-cc"


def _mixed(rule: Mapping[str, Any], qcfg: Mapping[str, Any], config: Mapping[str, Any], archs: Sequence[str]) -> bool:
    """Whether one modelopt_mixed rule of the table takes the checkpoint as modelopt_mixed."""
    model_type = rule.get("model_type")
    prefix = rule.get("architecture_prefix")
    if isinstance(model_type, str) and config.get("model_type") == model_type:
        return True
    if isinstance(prefix, str) and any(a.startswith(prefix) for a in archs):
        return True
    algos = {str(a).upper() for a in rule.get("quantized_layer_algos") or []}
    layers = qcfg.get("quantized_layers")
    if algos and isinstance(layers, Mapping):
        return any(isinstance(v, Mapping) and str(v.get("quant_algo", "")).upper() in algos for v in layers.values())
    return False


def maps_to_modelopt_mixed(
    table: Mapping[str, Any],
    qcfg: Mapping[str, Any],
    config: Mapping[str, Any],
    archs: Sequence[str],
    version: str | None,
) -> bool | None:
    """Whether the release maps a ModelOpt MIXED_PRECISION checkpoint to modelopt_mixed (True) rather than w4afp8
    (False), by the table's modelopt_mixed rules; None where the release is not known and its rules disagree."""
    from stackcheck.facts.versions import version_in

    answers = set()
    for rule in table.get("modelopt_mixed") or []:
        if not isinstance(rule, Mapping):
            continue
        held = version_in(version, str(rule.get("versions"))) if version is not None else None
        if held is False:
            continue
        answers.add(_mixed(rule, qcfg, config, archs))
        if held is None:
            answers.add(False)  # the release may be one that no rule covers (w4afp8 then)
    return None if len(answers) > 1 else (answers.pop() if answers else False)


def mixed_precision_experts(
    table: Mapping[str, Any],
    qcfg: Mapping[str, Any],
    config: Mapping[str, Any],
    archs: Sequence[str],
    version: str | None,
) -> dict[str, Any] | None:
    """A ModelOpt MIXED_PRECISION checkpoint's experts as SGLang's ModelOptMixedPrecisionConfig resolves them (the
    launch fact model_mixed_precision): whether the release maps it to modelopt_mixed (`modelopt_mixed`: True,
    False: w4afp8, None: not decided), the upper-cased quant_algo of every quantized_layers entry under an
    `experts` module (`expert_algos`; a FusedMoE layer takes the algo of an entry under its prefix, and one with
    none is left unquantized) and the group_size values of the entries of each algo as JSON text (`group_sizes`,
    "null" where an entry has none: a block-FP8 layer's weight block from 0.5.21). None for any other checkpoint."""
    if str(qcfg.get("quant_algo", "")).upper() != "MIXED_PRECISION":
        return None
    layers = qcfg.get("quantized_layers")
    entries = layers.items() if isinstance(layers, Mapping) else ()
    algos: set[str] = set()
    sizes: dict[str, set[str]] = {}
    for name, info in entries:
        if not isinstance(info, Mapping):
            continue
        algo = str(info.get("quant_algo", "")).upper()
        if "experts" in str(name).split("."):
            algos.add(algo)
        sizes.setdefault(algo, set()).add(json.dumps(info.get("group_size")))
    return {
        "modelopt_mixed": maps_to_modelopt_mixed(table, qcfg, config, archs, version),
        "expert_algos": sorted(algos),
        "group_sizes": {algo: sorted(got) for algo, got in sorted(sizes.items())},
    }


def runs_w4afp8_moe(
    table: Mapping[str, Any],
    flag: object,
    quant_method: str | None,
    qcfg: Mapping[str, Any],
    config: Mapping[str, Any],
    archs: Sequence[str],
    moe: object,
    version: str | None,
) -> bool | None:
    """Whether the model's MoE layers run W4AFp8MoEMethod: `flag` is --quantization as given (None: not given),
    `quant_method` the checkpoint's as the preflight reads it (a MIXED_PRECISION one reads w4afp8: the release's
    mapping decides it, --quantization w4afp8 or not, since the release overrides the flag), `moe` whether
    the model has routed experts (refusals._model_moe: True, False or unknown). None where it is not decided (the
    release not known and its rules disagree, the experts not read)."""
    if flag not in (None, "w4afp8") or (flag is None and quant_method != "w4afp8"):
        return False
    mixed: bool | None = False
    if quant_method == "w4afp8" and str(qcfg.get("quant_algo")) == "MIXED_PRECISION":
        # the flag given or not: ModelOptMixedPrecisionConfig.override_quantization_method turns it into
        # modelopt_mixed where the release maps the checkpoint there (preflight.json model.w4afp8_moe source)
        mixed = maps_to_modelopt_mixed(table, qcfg, config, archs, version)
    if mixed is True or moe is False:
        return False
    if mixed is None or moe is not True:
        return None
    return True


def check_w4afp8_moe(
    runs: bool | None, facts: Mapping[str, Any], table: Mapping[str, Any], subject: str
) -> CheckResult | None:
    """unknown where the model's MoE layers run (or may run) W4AFp8MoEMethod on a GPU of a major the kernel's
    source does not decide (table `majors`: 9), or whose major was not read; None otherwise (GPUs below 9 are the
    config's minimum capability's: refused by the quantization method's own rule)."""
    if runs is False or not table:
        return None
    from stackcheck.launch.refusals import gpu_majors

    decided = {int(m) for m in table.get("majors") or []}
    majors = gpu_majors(facts)
    source = table.get("source")
    required = f"a GPU of major {', '.join(str(m) for m in sorted(decided))}"
    if majors is None:
        why = "the GPUs' compute capability was not all read"
    else:
        other = sorted(m for m in majors if m not in decided and m >= min(decided, default=9))
        if not other:
            return None
        why = f"this box has major {', '.join(str(m) for m in other)}"
    what = "run" if runs else "may run (not decided: see the message)"
    observed = {"majors": sorted(majors) if majors is not None else None, "w4afp8_moe": runs}
    message = str(table.get("message") or "").replace("{why}", why).replace("{what}", what)
    return CheckResult(CHECK, "unknown", observed, required, f"{subject}: {message}", source, subject)


def loads_modelopt_mixed(
    table: Mapping[str, Any], mixed: Mapping[str, Any] | None, flag: object, version: str | None
) -> bool | None:
    """Whether the release loads the checkpoint as modelopt_mixed, whatever --quantization `flag` says (`mixed`:
    mixed_precision_experts' reading, None for a checkpoint that is not ModelOpt MIXED_PRECISION): the release maps
    it to modelopt_mixed and the flag is absent or one it replaces (every flag but those of the table's
    `modelopt_mixed_flag_kept` for the release: ModelOptMixedPrecisionConfig.override_quantization_method answers
    first). None where the mapping or the release is not decided."""
    if mixed is None or mixed.get("modelopt_mixed") is False:
        return False
    if mixed.get("modelopt_mixed") is not True:
        return None
    if flag is None:
        return True
    kept = flag_kept(table.get("modelopt_mixed_flag_kept"), flag, version)
    return None if kept is None else not kept


def flag_kept(rows: Any, flag: object, version: str | None) -> bool | None:
    """Whether a table's rows (`flags`, `versions`) keep --quantization `flag` on the release: True where a row that
    lists the flag holds for it, None where none does but one's release range is not decided (or the release is not
    read), False where no row lists the flag for it."""
    from stackcheck.facts.versions import version_in

    held: set[bool | None] = set()
    for row in rows or []:
        if isinstance(row, Mapping) and flag in (row.get("flags") or []):
            held.add(version_in(version, str(row.get("versions"))) if version is not None else None)
    if True in held:
        return True
    return None if None in held else False


def loaded_method(
    table: Mapping[str, Any], mixed: Mapping[str, Any] | None, flag: object, version: str | None
) -> str | None:
    """The config class SGLang loads a ModelOpt MIXED_PRECISION checkpoint with, where the gate decides it (the
    launch fact model_quant_loaded): `modelopt_mixed` (loads_modelopt_mixed), `w4afp8` where the release parses it
    to w4afp8 and --quantization `flag` is absent or w4afp8 (another flag is a mismatch SGLang raises: check
    modelopt-mixed-flag-mismatch); None otherwise, or for a checkpoint that is not one."""
    if loads_modelopt_mixed(table, mixed, flag, version) is True:
        return "modelopt_mixed"
    if mixed is not None and mixed.get("modelopt_mixed") is False and flag in (None, "w4afp8"):
        return "w4afp8"
    return None


def check_modelopt_mixed_min_cc(
    mixed: Mapping[str, Any] | None,
    flag: object,
    facts: Mapping[str, Any],
    table: Mapping[str, Any],
    version: str | None,
    subject: str,
) -> CheckResult | None:
    """fail where the release loads the served model's ModelOpt MIXED_PRECISION checkpoint as modelopt_mixed (`mixed`:
    mixed_precision_experts' reading, `modelopt_mixed` True; --quantization `flag` not given or one the release
    replaces: loads_modelopt_mixed) and the box's lowest GPU is below ModelOptMixedPrecisionConfig's minimum
    capability for the release (table `modelopt_mixed_min_capability`): SGLang's model loader raises 'The
    quantization method modelopt_mixed is not supported for the current GPU'. unknown where a GPU's capability was
    not read; None otherwise (the quantization rules judge W4AFp8Config's 90, which the preflight's quant_method
    w4afp8 names)."""
    from stackcheck.facts.versions import version_in
    from stackcheck.launch.refusals import lowest_gpu_sm

    if loads_modelopt_mixed(table, mixed, flag, version) is not True or version is None:
        return None
    entry = next(
        (
            e
            for e in table.get("modelopt_mixed_min_capability") or []
            if isinstance(e, Mapping) and version_in(version, str(e.get("versions"))) is True
        ),
        None,
    )
    if entry is None:
        return None
    least = int(entry["min_sm"])
    sm = lowest_gpu_sm(facts)
    required = (
        f"compute capability {least // 10}.{least % 10} or higher (ModelOptMixedPrecisionConfig, SGLang {version})"
    )
    what = (
        f"{subject}: SGLang {version} loads this ModelOpt MIXED_PRECISION checkpoint as modelopt_mixed (it maps it so"
        f"{f'; --quantization {flag} is replaced' if flag else ''}), whose config asks for {required}"
    )
    source = entry.get("source")
    if sm is None:
        why = "the GPUs' compute capability was not all read"
        return CheckResult(MIXED_CC_CHECK, "unknown", {"sm": None}, required, f"{what}; {why}", source, subject)
    if sm >= least:
        return None
    message = (
        f"{what}, and this box's lowest GPU is sm_{sm}: the model loader raises ValueError 'The quantization method "
        "modelopt_mixed is not supported for the current GPU' as the model loads; the server does not start. Serve "
        "it on a GPU of that capability, or on a release that asks for less"
    )
    return CheckResult(MIXED_CC_CHECK, "fail", {"sm": sm}, required, message, source, subject)


#: another --quantization on a MIXED_PRECISION checkpoint the release parses to w4afp8: a mismatch SGLang raises
MISMATCH_CHECK = "modelopt-mixed-flag-mismatch"
#: the check ids this module's results carry (imend15: gate_preflight.preflight_checks derives --allow's from them)
CHECK_IDS = (CHECK, MIXED_CC_CHECK, MISMATCH_CHECK)


def check_w4afp8_flag_mismatch(
    mixed: Mapping[str, Any] | None,
    flag: object,
    table: Mapping[str, Any],
    version: str | None,
    subject: str,
) -> CheckResult | None:
    """fail where the served model's ModelOpt MIXED_PRECISION checkpoint is one the release parses to w4afp8
    (`mixed`: mixed_precision_experts' reading, `modelopt_mixed` False) and --quantization `flag` is another method
    that no override answers for and no compatibility entry lets through (all but w4afp8 and the table's
    `w4afp8_flag_mismatch.kept` for the release): SGLang's model config raises ValueError 'Quantization method
    specified in the model config (w4afp8) does not match ...' before the model loads. unknown where the mapping is
    not decided; None otherwise (a checkpoint the release maps to modelopt_mixed takes any flag:
    loads_modelopt_mixed)."""
    spec = table.get("w4afp8_flag_mismatch")
    if mixed is None or not isinstance(flag, str) or flag == "w4afp8" or not isinstance(spec, Mapping):
        return None
    mapped = mixed.get("modelopt_mixed")
    if mapped is True or version is None:
        return None
    if flag_kept(spec.get("kept"), flag, version) is not False:
        return None  # kept, or not known to raise
    required = "--quantization w4afp8, or none (the checkpoint's own method)"
    what = (
        f"{subject}: --quantization {flag} on a ModelOpt MIXED_PRECISION checkpoint that SGLang {version} parses to "
        "w4afp8: no quantization class overrides the flag for it and none lists w4afp8 as compatible, so the model "
        "config raises ValueError 'Quantization method specified in the model config (w4afp8) does not match the "
        f"quantization method specified in the `quantization` argument ({flag})' before the model loads"
    )
    source = spec.get("source")
    if mapped is None:
        why = "; whether the release parses it to w4afp8 or modelopt_mixed (which takes any flag) is not decided"
        return CheckResult(MISMATCH_CHECK, "unknown", {"flag": flag}, required, what + why, source, subject)
    message = f"{what}. Leave --quantization out, or give w4afp8"
    return CheckResult(MISMATCH_CHECK, "fail", {"flag": flag}, required, message, source, subject)
