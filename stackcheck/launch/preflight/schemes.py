"""The schemes a compressed-tensors or Quark checkpoint selects (preflight.json model.compressed_tensors_schemes,
model.quark_schemes).

SGLang's CompressedTensorsConfig picks a scheme class per linear layer from the config group that targets it
(_get_scheme_from_parts), QuarkConfig from the layer's config (_get_scheme_from_config); each scheme class has its
own minimum compute capability, checked as the layers are built. The tables say which shapes select which scheme;
this module only matches against them. A group or config it cannot match, or a config it cannot read, is `unknown`
(the rules on it fail closed)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

UNKNOWN = "unknown"


def _same(value: Any, allowed: Any, fold: bool = True) -> bool:
    """`value` is one of `allowed`, with its JSON type (true is not 1); strings compared without case where
    `fold` (compressed-tensors' QuantizationArgs lower-cases its fields), as written otherwise (Quark's)."""
    if not isinstance(allowed, list):
        return False
    for a in allowed:
        if isinstance(value, str) and isinstance(a, str):
            if (value.lower() == a.lower()) if fold else value == a:
                return True
        elif type(value) is type(a) and value == a:
            return True
    return False


def _fields_match(args: Any, want: Any, defaults: Mapping[str, Any], fold: bool = True) -> bool:
    """A group's weights / input_activations (`args`) against a row's fields: null wants them absent."""
    if want is None:
        return args is None
    if not isinstance(args, Mapping) or not isinstance(want, Mapping):
        return False
    return all(_same(args.get(k, defaults.get(k)), v, fold) for k, v in want.items())


def _group_scheme(group: Any, top_format: Any, table: Mapping[str, Any], per_group: bool = False) -> str:
    """The scheme id of one config group. `per_group`: the config's top-level format is the one that says each group
    carries its own (table `per_group_format`, "mixed-precision"): the group is read by its own format and its
    targets may name modules or patterns (each group quantized the modules it names when the checkpoint was
    written; which layers take it is not read, so the scheme counts as taken: a rule it fails blocks)."""
    if not isinstance(group, Mapping):
        return UNKNOWN
    targets = group.get("targets")
    if per_group:
        if not isinstance(targets, list) or not targets or not all(isinstance(t, str) and t for t in targets):
            return UNKNOWN
        fmt = group.get("format")  # none written: the top-level "mixed-precision", which selects no scheme
        if not isinstance(fmt, str) or fmt == top_format:
            return UNKNOWN
        return _row_scheme(group, fmt, table)
    if not isinstance(targets, list) or "Linear" not in targets:
        return UNKNOWN  # a group for named or regex modules only: which layers take it is not read
    fmt = group.get("format")
    if fmt is None:
        fmt = top_format
    elif fmt != top_format:
        # releases differ in which of the two they read: up to 0.5.16 only the top-level one (a group's own
        # format, the top-level one absent, reads as None there: no scheme, NotImplementedError), from 0.5.17
        # the group's
        return UNKNOWN
    if not isinstance(fmt, str):
        return UNKNOWN
    return _row_scheme(group, fmt, table)


def _row_scheme(group: Mapping[str, Any], fmt: str, table: Mapping[str, Any]) -> str:
    """The id of the table row a group read under format `fmt` matches, else unknown."""
    defaults = table.get("defaults") or {}
    for row in table.get("shapes") or []:
        # the format is compared as written (is_activation_quantization_format and the pack-quantized tests
        # compare the string: "Float-Quantized" selects no activation scheme)
        if not isinstance(row, Mapping) or not isinstance(row.get("formats"), list) or fmt not in row["formats"]:
            continue
        if _fields_match(group.get("weights"), row.get("weights"), defaults) and _fields_match(
            group.get("input_activations"), row.get("input_activations"), defaults
        ):
            return str(row.get("id"))
    return UNKNOWN


def compressed_tensors_schemes(qcfg: Mapping[str, Any], table: Mapping[str, Any]) -> list[str]:
    """The sorted scheme ids of the config groups of a compressed-tensors quantization config `qcfg`, by `table`
    (preflight.json model.compressed_tensors_schemes); "unknown" among them for each group not read; empty where
    there is no config group (SGLang reads config_groups with a default of none: compressed_tensors.py 0.5.1:204,
    0.5.23:361)."""
    groups = qcfg.get("config_groups")
    sparsity = qcfg.get("sparsity_config")
    if isinstance(sparsity, Mapping) and sparsity and sparsity.get("format") not in (None, "dense"):
        return [UNKNOWN]  # a sparse (2:4) checkpoint takes other paths (CompressedTensors24)
    if sparsity is not None and not isinstance(sparsity, Mapping):
        return [UNKNOWN]
    if "linear_fp8_config" in qcfg:
        return [UNKNOWN]  # a second, FP8 config for some linear layers (SGLang 0.5.9+): not read
    if groups is None or groups == {}:
        return []  # no group: SGLang builds no scheme, every linear layer stays unquantized
    if not isinstance(groups, Mapping):
        return [UNKNOWN]
    top = qcfg.get("format")
    mixed = table.get("per_group_format")
    mixed_id = (
        mixed.get("id") if isinstance(mixed, Mapping) and isinstance(top, str) and top == mixed.get("value") else None
    )
    per_group = isinstance(mixed_id, str)
    found = {_group_scheme(g, top, table, per_group) for g in groups.values()}
    if isinstance(mixed_id, str):
        found.add(mixed_id)  # the rules on the releases that read the top-level format only
    ignore = qcfg.get("ignore")
    if isinstance(ignore, list) and any(isinstance(x, str) and "expert" in x.lower() for x in ignore):
        found.add(UNKNOWN)  # the experts may take no scheme (an ignored MoE layer stays unquantized): not read
    return sorted(found)


def kv_cache_scheme_fp8(qcfg: Mapping[str, Any], table: Mapping[str, Any]) -> bool:
    """Whether a compressed-tensors config's kv_cache_scheme is one SGLang's compressed-tensors KV-cache method
    takes (table `kv_cache_scheme_fp8`: each `equals` key equal to its value, each `truthy` / `falsy` key, absent:
    its default, true / false), compared as SGLang's is_supported_scheme compares them (Python equality and truth,
    no case folding). False where there is no scheme, or it is not a mapping."""
    scheme = qcfg.get("kv_cache_scheme")
    spec = table.get("kv_cache_scheme_fp8")
    if not isinstance(scheme, Mapping) or not isinstance(spec, Mapping):
        return False
    equals = spec.get("equals") or {}
    truthy = spec.get("truthy") or {}
    falsy = spec.get("falsy") or {}
    return (
        all(scheme.get(k) == v for k, v in equals.items())
        and all(bool(scheme.get(k, d)) for k, d in truthy.items())
        and not any(bool(scheme.get(k, d)) for k, d in falsy.items())
    )


def _in_releases(sglang_version: str | None, releases: Any) -> bool:
    """Whether the release is in `releases`; an unknown release (or one not read) counts as in them (the stricter
    reading: the checkpoint's FP8 KV cache is judged)."""
    from stackcheck.facts.versions import version_in

    if sglang_version is None:
        return True
    return version_in(sglang_version, str(releases or "")) is not False


def checkpoint_kv_cache_fp8(qcfg: Mapping[str, Any], table: Mapping[str, Any], sglang_version: str | None) -> bool:
    """A compressed-tensors kv_cache_scheme_fp8 (table: preflight.json model.compressed_tensors_schemes) in the
    releases whose config class reports it (kv_cache_scheme_fp8.versions)."""
    spec = table.get("kv_cache_scheme_fp8")
    if not isinstance(spec, Mapping) or not _in_releases(sglang_version, spec.get("versions")):
        return False
    return kv_cache_scheme_fp8(qcfg, table)


def modelopt_kv_cache_fp8(
    qcfg: Mapping[str, Any],
    quant_method: str,
    nested: bool,
    table: Mapping[str, Any],
    sglang_version: str | None,
) -> bool | None:
    """Whether SGLang's ModelOpt config class for `quant_method` reports kv_cache_quant_algo FP8 for the checkpoint
    (table: preflight.json model.modelopt_kv_cache_fp8), which turns --kv-cache-dtype auto into an FP8 KV cache.
    `qcfg` is hf_quant_config.json's quantization section (`nested`) or config.json's quantization_config (flat).
    None where no class of the table is the quant_method's (not modelled); False in a release before the class
    reports it. The KV algorithm is compared as the runner compares it (a string whose upper() is the value)."""
    row = next(
        (
            r
            for r in table.get("classes") or []
            if isinstance(r, Mapping) and quant_method in (r.get("quant_methods") or [])
        ),
        None,
    )
    if row is None:
        return None
    if not _in_releases(sglang_version, row.get("versions")):
        return False
    want = str(table.get("algo_value") or "FP8")
    algo = qcfg.get(str(table.get("algo_key") or "kv_cache_quant_algo"))
    algo_fp8 = isinstance(algo, str) and algo.upper() == want
    if nested:
        return algo_fp8
    scheme = qcfg.get(str(table.get("scheme_key") or "kv_cache_scheme"))
    if isinstance(scheme, Mapping):
        return all(scheme.get(k) == v for k, v in (table.get("scheme_equals") or {}).items())
    if isinstance(scheme, str) and scheme.strip().upper() in (row.get("scheme_strings") or []):
        return True
    return algo_fp8 and _in_releases(sglang_version, row.get("flat_algo_versions"))


def quark_schemes(qcfg: Mapping[str, Any], table: Mapping[str, Any]) -> list[str]:
    """The sorted scheme ids of a Quark quantization config `qcfg` by `table` (preflight.json model.quark_schemes):
    one per config it gives (global_quant_config, each value of layer_quant_config and layer_type_quant_config,
    the configs SGLang's _find_matched_config hands a layer); "unknown" for a config not read, or none at all."""
    configs: list[Any] = []
    if qcfg.get("global_quant_config") is not None:
        configs.append(qcfg.get("global_quant_config"))
    for key in ("layer_quant_config", "layer_type_quant_config"):
        part = qcfg.get(key)
        if isinstance(part, Mapping):
            configs.extend(part.values())
        elif part is not None:
            configs.append(None)  # not a mapping: not read
    if not configs:
        return [UNKNOWN]
    defaults = table.get("defaults") or {}
    found: set[str] = set()
    for cfg in configs:
        scheme = UNKNOWN
        if isinstance(cfg, Mapping) and not cfg.get("output_tensors") and not cfg.get("bias"):
            for row in table.get("shapes") or []:
                if not isinstance(row, Mapping):
                    continue
                # Quark's configs are plain dicts its predicates compare as written (quark.py _is_fp8_w8a8,
                # _is_mx_fp4: `== "fp8_e4m3"`, `== "per_group"`)
                if _fields_match(cfg.get("weight"), row.get("weight"), defaults, False) and _fields_match(
                    cfg.get("input_tensors"), row.get("input_tensors"), defaults, False
                ):
                    scheme = str(row.get("id"))
                    break
        found.add(scheme)
    return sorted(found)
