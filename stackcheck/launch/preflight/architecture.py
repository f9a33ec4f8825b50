"""model-architecture: does the installed SGLang implement the model's architecture (config.json `architectures`)?

SGLang's path (manifests/preflight.json model.registry has the sources): config.json's architectures, after
`--json-model-override-args` (ModelConfig updates the config with it before the architectures are read), are
looked up in the model registry, the EntryClass names of sglang/srt/models/*.py (read here without importing
SGLang: stackcheck/readers/entryclasses.py). The first registered one is loaded. Where none is registered:
- a release that registers the fallback class (TransformersForCausalLM) loads the model through the Transformers
  backend, which works only where the installed transformers implements the architecture (or config.json's
  auto_map names custom code): not read here, so unknown (the gate refuses unless --allow-unknown);
- a release without it raises "Model architectures [...] are not supported for now" at load: fail.
`--model-impl transformers` always takes the Transformers backend (unknown), `mindspore` another runtime
(unknown). SGLANG_EXTERNAL_MODEL_PACKAGE may register more classes, SGLANG_DISABLED_MODEL_ARCHS drops modules,
and a module whose EntryClass could not be read may register anything: an architecture not found is then unknown,
never fail. A module that fails to import at run time registers nothing; reading cannot see that (a false pass
the check cannot rule out, said in the note).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from stackcheck.launch.preflight.result import CheckResult
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.launch.preflight.result import Status
    from stackcheck.readers.entryclasses import Registry

CHECK = "model-architecture"
#: the check ids this module's results carry (imend15: gate_preflight.preflight_checks derives --allow's from them)
CHECK_IDS = (CHECK,)


def override_architectures(options: Mapping[str, Any]) -> tuple[list[str] | None, str | None]:
    """config.json's architectures as --json-model-override-args replaces them: (the list, None), (None, None)
    when the flag does not name them, (None, why) when it cannot be read."""
    raw = options.get("--json-model-override-args")
    if not isinstance(raw, str) or not raw.strip():
        return None, None
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        return None, f"--json-model-override-args is not JSON ({str(exc)[:80]})"
    if not isinstance(value, dict):
        if not value:  # null, [], "", 0: SGLang's get_config applies no override (it tests the value first)
            return None, None
        # SGLang's get_config walks the value's items(): anything else ends the launch as the config loads
        return None, f"--json-model-override-args is JSON but not an object ({type(value).__name__})"
    if "architectures" not in value:
        return None, None
    arch = value["architectures"]
    if isinstance(arch, list) and all(isinstance(a, str) for a in arch):
        return list(arch), None
    return None, "--json-model-override-args sets architectures to something other than a list of names"


def check_architecture(
    role: str,
    spec: str,
    architectures: list[str],
    registry: Registry | None,
    registry_why: str | None,
    options: Mapping[str, Any],
    env: Mapping[str, str],
    sglang_version: str | None,
    data: Mapping[str, Any],
    config: Mapping[str, Any] | None = None,
    packages: Mapping[str, Any] | None = None,
) -> CheckResult:
    """The verdict for one model (see the module docstring). `registry` None: not read (`registry_why` says why);
    `config`: the model's config.json, for the renames SGLang makes by its values (model.registry.renames);
    `packages`: the facts' packages, for the modules the registry drops beside them (model.registry.import_failures)."""
    reg_data = (data.get("model") or {}).get("registry") or {}
    source = reg_data.get("source")
    fallback = str(reg_data.get("fallback_class") or "TransformersForCausalLM")
    subject = None if role == "model" else role
    release = f"SGLang {sglang_version}" if sglang_version else "the installed SGLang"
    archs, bad = override_architectures(options)
    origin = "--json-model-override-args" if archs is not None else "config.json"
    if archs is None:
        archs = list(architectures)
        raw = config.get("architectures") if config is not None else None
        if bad is None and isinstance(raw, list) and len(raw) != len(archs):
            bad = "config.json's architectures holds entries that are not names (what SGLang makes of them is not read)"
    renamed = rename(archs, config, sglang_version, reg_data.get("renames") or [])
    if renamed is not None:
        archs, origin = [renamed[0]], f"{origin}, renamed by SGLang ({renamed[1]})"
    impl = str(options.get("--model-impl") or "auto").lower()
    observed: dict[str, Any] = {"architectures": archs, "from": origin, "sglang": sglang_version, "model_impl": impl}
    required = "an architecture the SGLang release registers (sglang/srt/models EntryClass)"

    def result(status: Any, message: str, **more: Any) -> CheckResult:
        observed.update(more)
        return CheckResult(CHECK, status, dict(observed), required, f"{role} {spec}: {message}", source, subject)

    if bad:
        return result("unknown", bad)
    if not archs:
        return result("unknown", f"{origin} names no architectures: which class {release} loads is not known")
    if registry is None or registry.error:
        why = registry.error if registry is not None else registry_why
        return result("unknown", f"the model registry of {release} was not read: {why}")
    names = registry.names
    disabled = {m.strip() for m in (env.get("SGLANG_DISABLED_MODEL_ARCHS") or "").split(",") if m.strip()}
    hit = next((a for a in archs if a in names), None)
    if impl == "transformers":
        return result(
            "unknown",
            f"--model-impl transformers: {release} loads {names_text(archs)} through the Transformers backend, which "
            "works only where the installed transformers implements it (not read)",
            registered=hit,
        )
    if impl == "mindspore":
        return result("unknown", f"--model-impl mindspore: {release} loads it through MindSpore (not judged here)")
    if hit is not None:
        module = names[hit]
        if module in disabled:
            return result(
                "unknown",
                f"{hit} is registered by sglang/srt/models/{module}.py, which SGLANG_DISABLED_MODEL_ARCHS names",
                registered=hit,
            )
        dropped = import_failure(module, hit, packages, sglang_version, reg_data, config)
        if dropped is not None:
            observed.update(registered=hit)
            return CheckResult(CHECK, dropped[0], dict(observed), required, f"{role} {spec}: {dropped[1]}", dropped[2],
                               subject)  # fmt: skip
        return result("ok", f"{release} implements {hit} (sglang/srt/models/{module}.py)", registered=hit)
    listed = names_text(archs)
    maybe = []
    if registry.unresolved:
        maybe.append(
            f"{len(registry.unresolved)} model module(s) whose EntryClass was not read ({registry.unresolved[0]})"
        )
    if env.get("SGLANG_EXTERNAL_MODEL_PACKAGE"):
        maybe.append("SGLANG_EXTERNAL_MODEL_PACKAGE names a package that may register it")
    if fallback in names and names[fallback] not in disabled:
        why = (
            f"{release} registers none of {listed}: it falls back to the Transformers backend ({fallback}), which "
            "loads only where the installed transformers implements the architecture, or config.json's auto_map "
            "names custom code (with --trust-remote-code): not read here"
        )
        return result("unknown", "; ".join([why, *maybe]), registered=None, fallback=fallback)
    if maybe:
        return result("unknown", f"{release} registers none of {listed}; but " + "; ".join(maybe), registered=None)
    return result(
        "fail",
        f"{release} registers none of {listed} and has no Transformers fallback ({fallback} not registered): "
        "the launch fails at load ('Model architectures [...] are not supported for now')",
        registered=None,
        fallback=None,
    )


def import_failure(
    module: str,
    arch: str,
    packages: Mapping[str, Any] | None,
    sglang_version: str | None,
    reg_data: Mapping[str, Any],
    config: Mapping[str, Any] | None,
) -> tuple[Status, str, Any] | None:
    """(status, message, source) where the module registering `arch` is one SGLang's registry drops beside the
    installed transformers and kernels (model.registry.import_failures: transformers 4.50-4.55's hub-kernel table, which
    kernels 0.15.1+ refuse to build, imported by the transformers modeling modules some SGLang model modules import;
    the registry catches the error and registers nothing of the module): fail where SGLang's fallback fails too (the
    architecture's own transformers module imports the table, or transformers has no such class and config.json's
    auto_map names no AutoModel), unknown where the fallback's result, the SGLang release's modules or a version is
    not read (entries hold the transformers and kernels pair but none holds this SGLang release: transformers 4.53
    beside SGLang 0.5.1, say); None where no entry applies (kernels or transformers not installed or outside the
    entries' ranges, or the module imports none)."""
    from stackcheck.facts.versions import version_in_settled

    pk: Mapping[str, Any] = packages if isinstance(packages, Mapping) else {}
    tf, kn = pk.get("transformers"), pk.get("kernels")
    if not isinstance(tf, Mapping) or not isinstance(kn, Mapping):
        return None  # a packages list that does not name them (an older report): not judged, as the kernels rule
    if tf.get("installed") is not True or kn.get("installed") is not True:
        return None
    tv, kv = tf.get("version"), kn.get("version")
    unread: tuple[Status, str, Any] | None = None  # an entry of the pair whose SGLang releases are not this one
    for entry in reg_data.get("import_failures") or []:
        if not isinstance(entry, Mapping):
            continue
        source = entry.get("source")
        spec_tf, spec_k, spec_sg = (str(entry.get(k)) for k in ("transformers", "kernels", "sglang"))
        in_tf = version_in_settled(tv, spec_tf) if isinstance(tv, str) else None
        in_k = version_in_settled(kv, spec_k) if isinstance(kv, str) else None
        if in_tf is False or in_k is False:
            continue
        pair = f"transformers {tv or '(version not given)'} beside kernels {kv or '(version not given)'}"
        table = (f"{pair}: transformers' hub_kernels.py builds its kernel table with LayerRepository entries that name "
                 "no revision or version, which kernels 0.15.1+ refuse with ValueError 'Either a revision or a version "
                 "must be specified.' outside the table's ImportError handler, wherever a module that takes "
                 "use_kernel_forward_from_hub is imported")  # fmt: skip
        fix = "uninstall kernels (transformers treats it as optional) or install kernels<0.15.1"
        if in_tf is None or in_k is None:
            return ("unknown", f"{table}, if these are the releases read (transformers {spec_tf}, kernels {spec_k}): "
                    "a version is not given or is a pre-release whose code is not known", source)  # fmt: skip
        in_sg = version_in_settled(sglang_version, spec_sg) if isinstance(sglang_version, str) else None
        if in_sg is not True:
            release = f"SGLang {sglang_version}" if sglang_version else "the installed SGLang (its release not known)"
            unread = unread or ("unknown", f"{table}; SGLang's registry drops each model module whose imports reach "
                                f"one (SGLang {spec_sg} read beside transformers {spec_tf}), and which modules of "
                                f"{release} do, {module}.py among them, was not read; {fix}", source)  # fmt: skip
            if in_sg is None:
                return unread
            continue  # another entry may hold this release beside the same pair (transformers 4.52-4.54)
        via = (entry.get("modules") or {}).get(module)
        if not isinstance(via, str):
            return None
        head = (f"{table}; SGLang {sglang_version}'s registry drops sglang/srt/models/{module}.py, which registers "
                f"{arch} ({via}): the error is caught and logged ('Ignore import error when loading'), so {arch} is "
                "not registered and SGLang falls back to looking it up in transformers")  # fmt: skip
        if arch in (entry.get("fallback_fails") or []):
            return ("fail", f"{head}, whose own modeling module for {arch} takes use_kernel_forward_from_hub too: the "
                    f"model load fails with the same ValueError; {fix}", source)  # fmt: skip
        if arch in (entry.get("not_in_transformers") or []):
            auto_map = config.get("auto_map") if isinstance(config, Mapping) else None
            if config is not None and not (isinstance(auto_map, Mapping) and "AutoModel" in auto_map):
                return ("fail", f"{head}, which has no {arch}, and config.json's auto_map names no AutoModel: the "
                        f"model load fails with ValueError 'Cannot find model module'; {fix}", source)  # fmt: skip
            why = "config.json was not read" if config is None else "config.json's auto_map names custom code"
            return ("unknown", f"{head}, which has no {arch}; {why}, whose result is not read; {fix}", source)
        return ("unknown", f"{head}, whose {arch} loads through the Transformers backend (TransformersForCausalLM) "
                f"where it is compatible: how that serves this model is not read; {fix}", source)  # fmt: skip
    return unread


#: how many architecture names a message lists, and how much of each (config.json may hold any number, of any size)
_NAMES_SHOWN = 5
_NAME_CHARS = 120


def names_text(archs: list[str]) -> str:
    """The architectures for a message: the first few, each cut to a readable length, and how many more."""
    shown = [a if len(a) <= _NAME_CHARS else a[:_NAME_CHARS] + "..." for a in archs[:_NAMES_SHOWN]]
    more = len(archs) - len(shown)
    return ", ".join(shown) + (f" (+{more} more)" if more > 0 else "")


def rename(
    archs: list[str], config: Mapping[str, Any] | None, sglang_version: str | None, renames: list[Any]
) -> tuple[str, str] | None:
    """(the architecture SGLang looks up instead of config.json's, why) where a rename of model.registry.renames holds
    for the release (known) and the config's text sub-config; None otherwise (a release not known: not renamed, so
    an architecture only the rename makes servable stays unknown, never ok)."""
    if config is None or sglang_version is None:
        return None
    from stackcheck.facts.versions import version_in
    from stackcheck.launch.preflight.model import _text_config

    text = _text_config(config)
    for entry in renames:
        if not isinstance(entry, Mapping) or version_in(sglang_version, str(entry.get("versions") or "")) is not True:
            continue
        if text.get("model_type") == entry.get("model_type") and bool(text.get(str(entry.get("config_true")))):
            why = f"model_type {entry.get('model_type')} with {entry.get('config_true')}"
            return str(entry.get("to")), why
    return None


def sglang_site(facts: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """(the site directory SGLang is installed in, as the facts' packages probe found it; or None and why)."""
    pkgs = facts.get("packages") if isinstance(facts.get("packages"), Mapping) else None
    pkg = pkgs.get("sglang") if pkgs is not None else None
    if not isinstance(pkg, Mapping):
        return None, "the facts have no sglang package entry"
    if pkg.get("installed") is not True:
        return None, "SGLang is not installed in the target environment"
    location = pkg.get("location")
    if not isinstance(location, str) or not location:
        return None, "the facts do not say where SGLang is installed"
    from stackcheck.paths import unscrub_home

    site = unscrub_home(location)  # (read again here: the facts name the home directory "~")
    if site is None:
        return None, f"the facts name SGLang's location {location} under a home directory this run did not probe"
    return site, None


def check_models(
    models: list[Any],
    facts: Mapping[str, Any],
    view: Any,
    options: Mapping[str, Any],
    env: Mapping[str, str],
    sglang_version: str | None,
    data: Mapping[str, Any],
    cache_env: Mapping[str, str],
    model_view: Any = None,
) -> list[CheckResult]:
    """The check for each model whose config.json was read (ModelInfo.attention set), the registry read once from
    the target environment's SGLang (through `view`, cached per file set in the user cache of `cache_env`); the
    model's config.json is read again through `model_view` (where the preflight found it) for the renames."""
    read = [m for m in models if m.attention is not None]
    if not read:
        return []
    site, why = sglang_site(facts)
    registry = None
    if site is not None:
        from stackcheck.assembly.gate_cache import ACTIVE, note
        from stackcheck.readers.entryclasses import read_registry_cached
        from stackcheck.readers.fsview import is_host

        if ACTIVE and not is_host(view):  # (a registry read elsewhere is not read again on lookup: nothing kept)
            ACTIVE[0].spoiled = True

        # (recorded whole when the gate's decision is kept: its cache's stamp reads the directory directly)
        registry = note("registry", (site,), lambda s: read_registry_cached(view, s, cache_env))
    out = []
    for m in read:
        out.append(
            check_architecture(
                m.role, m.spec, m.architectures, registry, why, options, env, sglang_version, data,
                _config(model_view if model_view is not None else view, m.path, data),
                facts.get("packages") if isinstance(facts.get("packages"), Mapping) else None,
            )
        )  # fmt: skip
    return out


def _config(view: Any, directory: str | None, data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    from stackcheck.launch.preflight.model import Unreadable, read_config

    if directory is None:
        return None
    try:
        return read_config(view, directory, int((data.get("model") or {}).get("config_cap_bytes", 4 << 20)))
    except (OSError, Unreadable):  # read once already; gone or changed since: the renames are not applied
        return None
