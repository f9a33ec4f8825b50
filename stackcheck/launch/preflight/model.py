"""The model: find its files on this box (never the network), read its config, derive what it needs.

Where a model is looked for, in SGLang's order: `--model-path` as a local directory; else a Hugging Face
repository id in the hub cache (`--download-dir`, else HF_HUB_CACHE, else HF_HOME/hub, else
XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub), `models--ORG--NAME/refs/REVISION` naming
the snapshot in `snapshots/COMMIT/`. Read from it, each with a size cap and through the filesystem view
(non-regular files refused, links resolved): `config.json` (architectures, `quantization_config`,
`compression_config`) and, when config.json has no quantization, `hf_quant_config.json` (ModelOpt). The
weight files are only stat'ed, for their size.

What comes out: the features the model needs (manifests/preflight.json `model.quantization`, each with the
conditions under which SGLang takes that path, in launch.json's condition language), whether it is an MLA
model, the weights' size, and check results. Bad input: a config in a directory the user named (--model-path
DIR) that is not JSON, too large or unreadable is a usage error (exit 2, one line naming the file); the same
in the shared cache is recorded as unknown (the box's state), and the gate fails closed on it.
"""

from __future__ import annotations

import fnmatch
import json
import os
import posixpath
import re
from collections.abc import Mapping

from stackcheck.errors import BadInputError
from stackcheck.launch.preflight.memory import Weights
from stackcheck.launch.preflight.result import CheckResult, truthy
from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple
from stackcheck.record import field, record

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.launch.preflight.result import Status
    from stackcheck.readers.fsview import FileView

_REPO_ID = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9._-]*/)?[A-Za-z0-9][A-Za-z0-9._-]*$")
_COMMIT = _lazy(r"^[0-9a-f]{40}$")


class ModelRequirement(NamedTuple):
    feature: str
    why: str
    when: list[dict[str, Any]] | None = None  # launch.json conditions; None: always
    rules: list[str] | None = None  # the feature needed for these rules only (launch.json's `rules`); None: whole


def quantization_requirements(
    mdata: Mapping[str, Any], quant_method: str | None, qcfg: Mapping[str, Any], why: str
) -> list[ModelRequirement]:
    """The features a checkpoint's own quantization needs (preflight.json model.quantization: its quant_method, and
    the key of quantization_config an entry asks for), each with `why`; the gate's preflight and recommend's
    judging of its line (launch.recommend.gate_problems) read them alike."""
    out: list[ModelRequirement] = []
    for entry in mdata.get("quantization") or []:
        if not isinstance(entry, dict) or quant_method not in (entry.get("quant_method") or []):
            continue
        key = entry.get("has_key")
        if isinstance(key, str) and key not in qcfg:
            continue
        for req in entry.get("requires") or []:
            if isinstance(req, str):
                out.append(ModelRequirement(req, why))
            elif isinstance(req, dict) and isinstance(req.get("feature"), str):
                named = req.get("rules")
                rules = [str(x) for x in named if isinstance(x, str)] if isinstance(named, list) else None
                out.append(ModelRequirement(req["feature"], why, list(req.get("when") or []), rules))
    return out


@record
class ModelInfo:
    role: str  # "model" | "draft model"
    spec: str  # as given on the command line
    path: str | None = None  # the directory read (box path)
    found_by: str | None = None  # "local directory" | "Hugging Face cache (HF_HUB_CACHE)" | ...
    architectures: list[str] = field(default_factory=list)
    mla: bool | None = None
    mla_why: str | None = None  # how `mla` was decided (preflight.json model.mla_architectures, mla_of)
    multimodal: bool | None = None  # SGLang serves it as multimodal (ModelConfig.is_multimodal); None: not read
    quant_method: str | None = None
    quant_why: str | None = None
    # the schemes a compressed-tensors or Quark checkpoint's configs select (preflight.json
    # model.compressed_tensors_schemes, quark_schemes; "unknown" for one not read); None: not such a checkpoint
    quant_schemes: list[str] | None = None
    # whether a compressed-tensors checkpoint's kv_cache_scheme is one SGLang's KV-cache method takes (static
    # per-tensor FP8: model.compressed_tensors_schemes.kv_cache_scheme_fp8), which --kv-cache-dtype auto turns into
    # an FP8 KV cache on the releases whose config class says so; None: not such a checkpoint
    kv_cache_fp8: bool | None = None
    requirements: list[ModelRequirement] = field(default_factory=list)
    weights: Weights | None = None
    results: list[CheckResult] = field(default_factory=list)
    # config.json's attention keys as written (its text sub-configs too): what SGLang's attention backends read
    # for the head counts and dims (stackcheck/launch/refusals.py); None: config.json not read
    attention: dict[str, Any] | None = None
    # the MLA dims the trtllm_mla and flashmla kernels check, as launch facts (mla_dims, mla_prefill_dims); empty:
    # not read
    mla_dims: dict[str, Any] = field(default_factory=dict)
    # the query heads config.json states (query_heads), which the attention TP size splits; None: not read
    query_heads: int | None = None
    # whether its MoE layers run W4AFp8MoEMethod (preflight/w4afp8.py runs_w4afp8_moe); None: not decided
    w4afp8_moe: bool | None = False
    # a ModelOpt MIXED_PRECISION checkpoint's experts (preflight/w4afp8.py mixed_precision_experts); None: not one
    mixed_precision: dict[str, Any] | None = None
    # config.json's quantization_config.config_groups.group_0.weights as written (SGLang's Kimi K2 / K2.5 INT4 test
    # reads it: launch.json refusals.auto.moe_runner picks' checkpoint_weights); None: absent or not read
    quant_group0_weights: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "spec": self.spec,
            "path": self.path,
            "found_by": self.found_by,
            "architectures": self.architectures,
            "mla": self.mla,
            "multimodal": self.multimodal,
            "quant_method": self.quant_method,
            "quant_why": self.quant_why,
            "quant_schemes": self.quant_schemes,
            "requires": [{"feature": r.feature, "why": r.why} for r in self.requirements],
            "weights_bytes": self.weights.total_bytes if self.weights else None,
        }


class Unreadable(Exception):
    """A model file that could not be used; the message names it and why."""


def hub_cache_dirs(
    env: Mapping[str, str], download_dir: str | None, home: str, cwd: str | None = None
) -> list[tuple[str, str]]:
    """The hub cache directory huggingface_hub would use, with the rule that chose it, as its constants module
    computes it (huggingface_hub 2.4.0 constants.py:159-184): HF_HUB_CACHE, else the legacy HUGGINGFACE_HUB_CACHE,
    else HF_HOME/hub, HF_HOME being $HF_HOME, else $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface; a
    variable set to "" counts as set (os.getenv). HF_HOME and the hub cache are expanded as there (a leading "~"
    to `home`, then $VAR and ${VAR} from `env`; HUGGINGFACE_HUB_CACHE through HF_HUB_CACHE's expansion); a
    relative result is taken from `cwd` (the server's working directory). --download-dir (SGLang passes it as
    cache_dir) comes first and is used as given."""
    if download_dir:
        return [(download_dir, "--download-dir")]
    if "HF_HOME" in env:
        hf_home, rule = env["HF_HOME"], "HF_HOME/hub"
    elif "XDG_CACHE_HOME" in env:
        hf_home, rule = posixpath.join(env["XDG_CACHE_HOME"], "huggingface"), "XDG_CACHE_HOME/huggingface/hub"
    else:
        hf_home, rule = posixpath.join(home, ".cache", "huggingface"), "~/.cache/huggingface/hub"
    cache = posixpath.join(_expand(hf_home, env, home), "hub")
    if "HF_HUB_CACHE" in env:
        cache, rule = env["HF_HUB_CACHE"], "HF_HUB_CACHE"
    elif "HUGGINGFACE_HUB_CACHE" in env:
        cache, rule = env["HUGGINGFACE_HUB_CACHE"], "HUGGINGFACE_HUB_CACHE"
    cache = _expand(cache, env, home)
    if not cache.startswith("/"):
        cache = posixpath.normpath(posixpath.join(cwd or "/", cache))
    return [(cache, rule)]


_ENV_VAR = _lazy(r"\$(\w+|\{[^}]*\})")


def _expand(path: str, env: Mapping[str, str], home: str) -> str:
    """os.path.expandvars(os.path.expanduser(path)) with `home` for "~" and `env` for the variables (a "~user"
    or a variable not set is left as it is, as there)."""
    if path == "~" or path.startswith("~/"):
        path = home.rstrip("/") + path[1:] if home.rstrip("/") else path
    if "$" not in path:
        return path

    def var(m: re.Match[str]) -> str:
        name = m.group(1)[1:-1] if m.group(1).startswith("{") else m.group(1)
        return env[name] if name in env else m.group(0)

    return _ENV_VAR.sub(var, path)


def _read_json(view: FileView, path: str, cap: int) -> Any:
    try:
        st = view.stat(path)
        if st is None:
            # stat returns None for a missing file and for a link loop: tell them apart by the link itself
            if view.stat(path, follow_symlinks=False) is not None:
                raise Unreadable(f"{path}: a symbolic link that does not resolve (a loop, or a missing target)")
            raise FileNotFoundError(path)
        if st.kind == "link":  # a link left unresolved: a loop, or too many levels
            raise Unreadable(f"{path}: a symbolic link that does not resolve (a loop, or a missing target)")
        if st.kind != "file":
            raise Unreadable(f"{path}: not a regular file")
        if st.size > cap:
            raise Unreadable(f"{path}: {st.size} bytes, larger than the {cap}-byte cap: not read")
        data = view.read_bytes(path, cap + 1)
    except (FileNotFoundError, Unreadable):
        raise
    except OSError as exc:  # fsview.NotRegularFile too: a FIFO or a device swapped in after the stat
        raise Unreadable(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > cap:
        raise Unreadable(f"{path}: larger than the {cap}-byte cap: not read")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"{path}: byte {exc.start}: not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise Unreadable(f"{path}: line {exc.lineno} column {exc.colno}: not valid JSON: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        raise Unreadable(f"{path}: not valid JSON: {exc}") from None


def _snapshot(view: FileView, repo_dir: str, revision: str | None) -> tuple[str | None, str]:
    """The snapshot directory of a cached repository for the revision, or None and why not."""
    rev = revision or "main"
    if rev.startswith("/") or ".." in rev.split("/") or "\x00" in rev:  # (never a path out of refs/)
        return None, "a --revision that is not a ref name"
    if _COMMIT.match(rev):
        snap = posixpath.join(repo_dir, "snapshots", rev)
        return (snap, f"snapshot {rev}") if _is_dir(view, snap) else (None, f"no snapshot {rev}")
    ref = posixpath.join(repo_dir, "refs", rev)
    try:
        commit = view.read_bytes(ref, 256).decode("ascii", "replace").strip() if _is_file(view, ref) else ""
    except OSError:
        commit = ""
    if _COMMIT.match(commit):
        snap = posixpath.join(repo_dir, "snapshots", commit)
        if _is_dir(view, snap):
            return snap, f"refs/{rev} -> {commit[:12]}"
        return None, f"refs/{rev} names {commit[:12]}, which has no snapshot"
    try:
        snaps = sorted(view.listdir(posixpath.join(repo_dir, "snapshots")))
    except OSError:
        snaps = []
    if len(snaps) == 1 and revision is None:
        snap = posixpath.join(repo_dir, "snapshots", snaps[0])
        return snap, f"the only snapshot ({snaps[0][:12]}; no refs/main)"
    return None, f"no refs/{rev}" + (f" and {len(snaps)} snapshots to choose from" if snaps else "")


def _is_dir(view: FileView, path: str) -> bool:
    st = view.stat(path)
    return st is not None and st.kind == "dir"


def _is_file(view: FileView, path: str) -> bool:
    st = view.stat(path)
    return st is not None and st.kind == "file"


def locate(
    view: FileView,
    spec: str,
    env: Mapping[str, str],
    download_dir: str | None,
    revision: str | None,
    cwd: str,
    home: str,
) -> tuple[str | None, str]:
    """(directory, how it was found) for a model spec, or (None, why not). The reason never rewrites the spec
    (a URL with credentials must stay URL-shaped for the output's redaction to mask it)."""
    if "://" in spec:
        return None, "a URL, not a local directory or a Hugging Face repository id: not read"
    local = spec if spec.startswith("/") else posixpath.join(cwd, spec)
    if ".." not in spec.split("/"):  # (`..` after a symbolic link is its target's parent, as the server's open
        local = posixpath.normpath(local)  # resolves it: not normalised lexically; irev65)
    st = view.stat(local)
    if st is not None and st.kind == "dir":
        return local, "local directory"
    if st is not None:
        return None, f"{local} is a file (a GGUF checkpoint?), not a model directory: its config is not read"
    if spec.startswith(("/", "./", "../", "~")):
        return None, f"no directory {local}"
    if not _REPO_ID.match(spec):
        return None, "no such directory, and not a Hugging Face repository id"
    reasons = []
    for cache, rule in hub_cache_dirs(env, download_dir, home, cwd):
        repo_dir = posixpath.join(cache, "models--" + spec.replace("/", "--"))
        if not _is_dir(view, repo_dir):
            reasons.append(f"not in the Hugging Face cache {cache} ({rule})")
            continue
        snap, how = _snapshot(view, repo_dir, revision)
        if snap is not None:
            return snap, f"Hugging Face cache {cache} ({rule}), {how}"
        reasons.append(f"in the Hugging Face cache {cache} ({rule}) but {how}")
    return None, "; ".join(reasons)


def _modelopt_method(algo: Any, table: list[dict[str, Any]], sglang_version: str | None) -> str | None:
    """The quant_method SGLang gives a ModelOpt quant_algo: the first row of preflight.json model.modelopt_algos that
    holds for the release (a row without `versions` holds for every release; with the release not known, every row
    holds, the newest first, so the newest reading is the one checked)."""
    from stackcheck.facts.versions import version_in

    if not isinstance(algo, str):
        return None
    for row in table:
        versions = row.get("versions")
        if isinstance(versions, str) and sglang_version is not None and version_in(sglang_version, versions) is False:
            continue
        if isinstance(row.get("equals"), str) and algo == row["equals"]:
            return str(row["quant_method"])
        if any(isinstance(c, str) and c in algo for c in row.get("contains") or []):
            return str(row["quant_method"])
    return None


def read_config(view: FileView, directory: str, cap: int) -> dict[str, Any]:
    """A model directory's config.json (size-capped, through the view). Raises FileNotFoundError when there is none,
    Unreadable (the message names the file and the place) when it cannot be used."""
    path = posixpath.join(directory, "config.json")
    config = _read_json(view, path, cap)
    if not isinstance(config, dict):
        raise Unreadable(f"{path}: not a JSON object")
    return config


class Quantization(NamedTuple):
    """A checkpoint's quantization as SGLang's ModelConfig reads it (_parse_quant_hf_config, _verify_quantization)."""

    method: str | None  # SGLang's quant_method; None: not quantized (why None) or not one SGLang maps (why says)
    why: str | None  # where it was read, for the output; None: no quantization found anywhere
    config: dict[str, Any]  # the quantization config read (its keys decide some requirements: has_key)


def read_quantization(
    view: FileView,
    directory: str,
    config: Mapping[str, Any],
    mdata: Mapping[str, Any],
    sglang_version: str | None = None,
) -> Quantization:
    """The quantization of the model in `directory` whose config.json is `config`, the one reading the gate's
    preflight and `stackcheck recommend` share. As SGLang's ModelConfig: config.json's top-level
    quantization_config (never a text sub-config's: SGLang reads hf_config, not hf_text_config), else its
    compression_config (compressed-tensors), else hf_quant_config.json beside it (ModelOpt). A ModelOpt quant_algo
    is mapped by `mdata` (preflight.json model.modelopt_algos); a quantization_config whose quant_method is
    model.modelopt_quant_method.value is mapped by its quant_algo too, in the releases that do so
    (model.modelopt_quant_method.versions; the release not known: mapped, the stricter reading). Raises Unreadable
    for an hf_quant_config.json that cannot be used (a missing one is no quantization, never FileNotFoundError)."""
    from stackcheck.facts.versions import version_in

    table = [r for r in mdata.get("modelopt_algos") or [] if isinstance(r, dict)]
    qc = config.get("quantization_config")
    if isinstance(qc, dict):
        method = qc.get("quant_method")
        named = mdata.get("modelopt_quant_method") or {}
        if isinstance(method, str) and method == named.get("value"):
            algo = qc.get("quant_algo")
            releases = str(named.get("versions") or "")
            mapped = sglang_version is None or version_in(sglang_version, releases) is True
            derived = _modelopt_method(algo, table, sglang_version) if mapped else None
            if derived:
                release = f"SGLang {sglang_version}" if sglang_version else f"SGLang {releases} (release not known)"
                return Quantization(
                    derived,
                    f"config.json: quantization_config.quant_method = {method}, quant_algo = {algo} "
                    f"({release} maps it)",
                    dict(qc),
                )
        if isinstance(method, str):
            why = f"config.json: quantization_config.quant_method = {method}"
            if method == named.get("value") and sglang_version is not None:
                why += f" (kept as written by SGLang {sglang_version}; mapped by quant_algo in {named.get('versions')})"
            if "weight_block_size" in qc:
                why += f", weight_block_size {json.dumps(qc['weight_block_size'])}"
            return Quantization(method.lower(), why, dict(qc))
        derived = _modelopt_method(qc.get("quant_algo"), table, sglang_version)
        if derived:
            why = f"config.json: quantization_config.quant_algo = {qc.get('quant_algo')} (ModelOpt)"
            return Quantization(derived, why, dict(qc))
        return Quantization(None, "config.json: quantization_config without quant_method", dict(qc))
    cc = config.get("compression_config")
    if isinstance(cc, dict):
        return Quantization("compressed-tensors", "config.json: compression_config", dict(cc))
    path = posixpath.join(directory, "hf_quant_config.json")
    if view.stat(path) is None and view.stat(path, follow_symlinks=False) is None:
        return _text_config_quantization(config)
    cap = int(mdata.get("config_cap_bytes", 4 << 20))
    try:
        hq = _read_json(view, path, cap)
    except FileNotFoundError:  # gone between the stat and the read
        return Quantization(None, None, {})
    quant = hq.get("quantization") if isinstance(hq, dict) else None
    algo = quant.get("quant_algo") if isinstance(quant, dict) else None
    derived = _modelopt_method(algo, table, sglang_version)
    if derived:
        return Quantization(derived, f"hf_quant_config.json: quantization.quant_algo = {algo}", dict(quant or {}))
    return Quantization(
        None, f"hf_quant_config.json: quantization.quant_algo = {algo!r} (not a format SGLang maps)", {}
    )


class KeptModelopt(NamedTuple):
    message: str  # why the launch fails
    flag: str | None  # the --quantization value that loads it (None: none does)


def kept_modelopt(
    mdata: Mapping[str, Any],
    qcfg: Mapping[str, Any],
    quant_method: str | None,
    architectures: list[str],
    options: Mapping[str, Any],
    sglang_version: str | None,
) -> KeptModelopt | None:
    """Why the launch fails, and the --quantization that loads it, where a release keeps config.json's quant_method
    'modelopt' as written and so loads the checkpoint as ModelOpt FP8, which refuses its quant_algo (preflight.json
    model.modelopt_quant_method.kept); None where it loads: --quantization given, an FP8 quant_algo, an
    architecture the release maps itself, or the release not known (the method is then mapped: read_quantization)."""
    from stackcheck.facts.versions import version_in

    named = mdata.get("modelopt_quant_method") or {}
    kept = named.get("kept") or {}
    algo = qcfg.get("quant_algo")
    if sglang_version is None or quant_method != named.get("value") or not kept or not isinstance(algo, str):
        return None
    if options.get("--quantization") or any(c in algo for c in kept.get("accepts_contains") or []):
        return None
    for entry in kept.get("mapped_architectures") or []:
        if entry.get("architecture") in architectures[:1] and version_in(sglang_version, str(entry.get("versions"))):
            return None
    table = [r for r in mdata.get("modelopt_algos") or [] if isinstance(r, dict)]
    newer = _modelopt_method(algo, table, None)  # what the releases that map it make of it
    flag = newer if newer and newer != named.get("value") else None
    return KeptModelopt(
        f"quantization_config.quant_method = {quant_method} with quant_algo {algo}: SGLang {sglang_version} keeps "
        f"{quant_method} and loads it as {kept.get('loads_as')}, which refuses that quant_algo; "
        + (f"give --quantization {flag}" if flag else "it does not load"),
        flag,
    )


def unloadable_modelopt(
    mdata: Mapping[str, Any], qcfg: Mapping[str, Any], quant_method: str | None, sglang_version: str | None
) -> list[Mapping[str, Any]]:
    """The rows of preflight.json model.modelopt_unloadable that hold: the release maps the checkpoint's quant_algo to
    a quant_method whose config class accepts it but cannot load its weights (a ModelOpt MXFP8 checkpoint loaded as
    per-tensor FP8 before 0.5.18). None hold with the release not known."""
    from stackcheck.facts.versions import version_in

    algo = qcfg.get("quant_algo")
    if sglang_version is None or not isinstance(algo, str) or quant_method is None:
        return []
    return [
        row
        for row in mdata.get("modelopt_unloadable") or []
        if isinstance(row, dict)
        and row.get("quant_algo") == algo
        and quant_method in (row.get("quant_methods") or [])
        and version_in(sglang_version, str(row.get("versions"))) is True
    ]


def flag_checkpoint_conflicts(
    mdata: Mapping[str, Any],
    options: Mapping[str, Any],
    qcfg: Mapping[str, Any],
    quant_method: str | None,
    sglang_version: str | None,
) -> list[Mapping[str, Any]]:
    """The rows of preflight.json model.flag_checkpoint_conflicts that hold: --quantization names the row's flag, the
    checkpoint's quant_method (as read_quantization reads it; None only for a checkpoint with no quantization at
    all, not for a quantization_config without quant_method) is one of the row's, and the release is in its
    versions. None hold with the release not known, or without --quantization."""
    from stackcheck.facts.versions import version_in

    flag = options.get("--quantization")
    if sglang_version is None or not isinstance(flag, str):
        return []
    if quant_method is None and qcfg:
        return []  # quantized in a way read_quantization does not name: not judged
    return [
        row
        for row in mdata.get("flag_checkpoint_conflicts") or []
        if isinstance(row, dict)
        and row.get("flag") == flag
        and quant_method in (row.get("checkpoint") or [])
        and version_in(sglang_version, str(row.get("versions"))) is True
    ]


def _text_config_quantization(config: Mapping[str, Any]) -> Quantization:
    """No quantization where SGLang looks for it. A quantization_config in text_config only is not how SGLang
    chooses the method (ModelConfig reads hf_config's); its weight loader reads it (get_quant_config) only once
    --quantization names the method, so without the flag the checkpoint loads as if not quantized: said, not
    taken as 'none'."""
    text = config.get("text_config")
    sub = text.get("quantization_config") if isinstance(text, dict) else None
    if not isinstance(sub, dict):
        return Quantization(None, None, {})
    method = sub.get("quant_method")
    named = f" (quant_method {method})" if isinstance(method, str) else ""
    return Quantization(
        None,
        f"config.json: quantization_config in text_config only{named}: SGLang does not choose a method from it; "
        "its weight loader reads it when --quantization names the method",
        {},
    )


def _weights(view: FileView, directory: str, mdata: Mapping[str, Any]) -> tuple[Weights | None, str | None]:
    try:
        names = sorted(view.listdir(directory))
    except OSError as exc:
        return None, f"{directory}: cannot list: {exc.strerror or exc}"
    cap = int(mdata.get("max_weight_files", 10000))
    for pattern in mdata.get("weight_patterns") or ["*.safetensors"]:
        hits = [n for n in names if fnmatch.fnmatch(n, str(pattern))]
        if not hits:
            continue
        if len(hits) > cap:
            return None, f"{len(hits)} weight files, more than {cap}: not counted"
        total = 0
        for n in hits:
            st = view.stat(posixpath.join(directory, n))
            if st is None or st.kind != "file":
                # a dangling link (a blob not downloaded yet) or a loop: a partial sum would understate
                return None, f"{posixpath.join(directory, n)} does not resolve to a file: weights not counted"
            total += st.size
        return Weights(total, len(hits), directory), None
    return None, None


def read_model(
    view: FileView,
    spec: str,
    role: str,
    env: Mapping[str, str],
    options: Mapping[str, Any],
    data: Mapping[str, Any],
    cwd: str,
    home: str,
    this_box: bool = True,
    sglang_version: str | None = None,
    cwd_unknown: str | None = None,
    not_searched: str | None = None,
) -> ModelInfo:
    """Find and read one model (the served model, or the draft model of speculative decoding).

    `this_box` False (the gate judges saved facts of another box): a model that is not here is a note, never
    a refusal; the launch may well find it on the box the facts describe. `sglang_version`: the release that will
    serve it, which decides whether its architecture is MLA (mla_of). `cwd_unknown`: why the server's working
    directory is not known (a shell string's `cd` the gate cannot resolve, gate --facts without --cwd), in words
    that follow "which the gate cannot tell: " (CwdUnknown.words): a path relative to it is unknown, and
    a Hugging Face repository id is looked up in the caches alone. `not_searched`: what a model not found says where
    `this_box` is False (gate --image: it is not in the image; None: a facts file's box was not searched)."""
    mdata = data.get("model") or {}
    cache_src = (mdata.get("hf_cache") or {}).get("source")
    cap = int(mdata.get("config_cap_bytes", 4 << 20))
    info = ModelInfo(role, spec)
    check = "model" if role == "model" else "draft-model"
    if truthy(env.get("SGLANG_USE_MODELSCOPE")):
        info.results.append(
            CheckResult(
                check, "warn", {"SGLANG_USE_MODELSCOPE": env.get("SGLANG_USE_MODELSCOPE")}, "a local model",
                f"{role} {spec}: SGLANG_USE_MODELSCOPE is on: ModelScope's cache is not read, the model's needs are "
                "not derived", cache_src,
            )
        )  # fmt: skip
        return info
    download_dir = options.get("--download-dir") if isinstance(options.get("--download-dir"), str) else None
    revision = options.get("--revision") if isinstance(options.get("--revision"), str) else None
    if cwd_unknown is not None and not spec.startswith(("/", "~")) and "://" not in spec:
        if spec.startswith(("./", "../")) or not _REPO_ID.match(spec):
            info.results.append(
                CheckResult(
                    check, "unknown", {"path": spec, "cwd": None}, "a model directory the gate can find",
                    f"{role} {spec}: a path relative to the server's working directory, which the gate cannot tell: "
                    f"{cwd_unknown}; the model's needs are not derived",
                    cache_src,
                )
            )  # fmt: skip
            return info
        cwd = "/"  # a repository id: the caches only (a directory of that name in the unknown cwd is not looked for)
    directory, how = locate(view, spec, env, download_dir, revision, cwd, home)
    offline_env = str((mdata.get("hf_cache") or {}).get("offline_env", "HF_HUB_OFFLINE"))
    if directory is None:
        offline = truthy(env.get(offline_env), tuple((mdata.get("hf_cache") or {}).get("offline_true") or ("1",)))
        is_file = "is a file" in how
        looks_local = spec.startswith(("/", "./", "../", "~")) and not is_file
        if "://" in spec:
            looks_local = False
        status: Status
        if not this_box:
            status, tail = (
                "warn",
                not_searched or "the facts come from a file, so the box they describe is not searched",
            )
        elif "://" in spec or is_file:
            status, tail = "warn", "the model's needs are not derived"
        elif looks_local:
            status, tail = "fail", "SGLang cannot load it"
        elif offline:
            status, tail = "fail", f"and {offline_env}={env.get(offline_env)}: the server cannot fetch it"
        else:
            status, tail = "warn", "the server will download it; its config and needs were not read"
        info.results.append(
            CheckResult(
                check,
                status,
                {"found": False, offline_env: env.get(offline_env)},
                "a local model directory" if looks_local or offline else "a model the server can load",
                f"{role} {spec}: {how}; {tail}",
                cache_src,
            )
        )
        return info
    info.path, info.found_by = directory, how
    user_dir = how == "local directory"
    try:
        config = read_config(view, directory, cap)
        quant_method, quant_why, qcfg = read_quantization(view, directory, config, mdata, sglang_version)
    except FileNotFoundError:
        info.results.append(
            CheckResult(
                check, "warn", {"config": None}, "config.json",
                f"{role} {spec} ({how}, {directory}): no config.json: the model's needs are not derived", cache_src,
            )
        )  # fmt: skip
        return info
    except Unreadable as exc:
        if user_dir:
            raise BadInputError(f"{role} config: {exc}") from None
        info.results.append(
            CheckResult(check, "unknown", {"config": "unreadable"}, "a readable config.json", f"{role} {spec}: {exc}",
                        cache_src)
        )  # fmt: skip
        return info
    info.attention = attention_keys(config)
    arch = config.get("architectures")
    info.architectures = [str(a) for a in arch if isinstance(a, str)] if isinstance(arch, list) else []
    info.mla, info.mla_why = mla_of(mdata.get("mla_architectures") or {}, info.architectures, config, sglang_version)
    info.mla_dims = {**mla_dims(config), **mla_prefill_dims(config)}
    info.query_heads = query_heads(config)
    if role == "model":
        longer = context_length_result(config, options, env)
        if longer is not None:
            info.results.append(longer)
    unstated = config_keys_result(config, info.architectures, options, sglang_version, mdata, f"{role} {spec}")
    if unstated is not None:  # (ifc65: a DeepSeek-V3-shaped config.json without topk_method was allowed)
        info.results.append(unstated)
    mistyped = config_types_result(config, sglang_version, f"{role} {spec}")
    if mistyped is not None:  # (irev82: a Qwen3-MoE config.json with "norm_topk_prob": 0 was allowed off trtllm-gen)
        info.results.append(mistyped)
    info.multimodal = is_multimodal(
        info.architectures, options, mdata.get("multimodal_architectures") or {}, config, sglang_version
    )
    info.quant_method, info.quant_why = quant_method, quant_why
    info.quant_group0_weights = group0_weights(config)
    w4_table = mdata.get("w4afp8_moe")
    if isinstance(w4_table, Mapping) and "w4afp8" in (quant_method, options.get("--quantization")):
        from stackcheck.launch.preflight.w4afp8 import runs_w4afp8_moe
        from stackcheck.launch.refusals import _model_moe

        info.w4afp8_moe = runs_w4afp8_moe(w4_table, options.get("--quantization"), quant_method, qcfg, config,
                                          info.architectures, _model_moe(config), sglang_version)  # fmt: skip
    if isinstance(w4_table, Mapping) and quant_method == "w4afp8":  # a MIXED_PRECISION checkpoint's experts
        from stackcheck.launch.preflight.w4afp8 import mixed_precision_experts

        info.mixed_precision = mixed_precision_experts(w4_table, qcfg, config, info.architectures, sglang_version)
    info.quant_schemes, info.kv_cache_fp8 = quant_scheme_facts(mdata, quant_method, quant_why, qcfg, sglang_version)
    info.requirements.extend(quantization_requirements(mdata, quant_method, qcfg, f"{role} {quant_why}"))
    kept = kept_modelopt(mdata, qcfg, quant_method, info.architectures, options, sglang_version)
    if kept is not None:
        observed = {"quant_method": quant_method, "quant_algo": qcfg.get("quant_algo"), "sglang": sglang_version}
        source = ((mdata.get("modelopt_quant_method") or {}).get("kept") or {}).get("source")
        info.results.append(
            CheckResult(
                check, "fail", observed, "--quantization naming the format", f"{role} {spec}: {kept.message}", source
            )
        )
    for row in unloadable_modelopt(mdata, qcfg, quant_method, sglang_version):
        observed = {"quant_method": quant_method, "quant_algo": qcfg.get("quant_algo"), "sglang": sglang_version}
        message = str(row.get("message") or "").replace("{sglang}", str(sglang_version))
        info.results.append(
            CheckResult(check, "fail", observed, "a format this release loads", f"{role} {spec}: {message}",
                        row.get("source"))
        )  # fmt: skip
    for row in flag_checkpoint_conflicts(mdata, options, qcfg, quant_method, sglang_version):
        flag = options.get("--quantization")
        observed = {"quantization": flag, "quant_method": quant_method, "sglang": sglang_version}
        message = str(row.get("message") or "").replace("{sglang}", str(sglang_version))
        info.results.append(
            CheckResult(check, "fail", observed, "a --quantization this release serves on the checkpoint",
                        f"{role} {spec}: {message}", row.get("source"))
        )  # fmt: skip
    info.weights, weights_note = _weights(view, directory, mdata)
    parts = [f"{role} {spec}: {how}, {directory}"]
    if info.architectures:
        parts.append(
            f"architecture {', '.join(info.architectures)}"
            + (" (MLA)" if info.mla else " (MLA not known)" if info.mla is None else "")
            + (" (multimodal)" if info.multimodal else "")
        )
    if info.mla is None or info.mla_why.startswith("MLA:"):
        parts.append(info.mla_why)  # decided without the release's own data
    parts.append(quant_why or "not quantized (no quantization_config, compression_config or hf_quant_config.json)")
    if info.weights:
        parts.append(f"weights {info.weights.total_bytes / (1 << 30):.1f} GiB in {info.weights.files} file(s)")
    elif weights_note:
        parts.append(weights_note)
    observed = {
        "path": directory,
        "architectures": info.architectures,
        "mla": info.mla,
        "multimodal": info.multimodal,
        "quant_method": quant_method,
    }
    info.results.append(CheckResult(check, "ok", observed, "a readable model config", "; ".join(parts), cache_src))
    return info


CONFIG_KEYS_CHECK = "model-config-keys"
#: the check ids this module's results carry (imend15: gate_preflight.preflight_checks derives --allow's from them)
CHECK_IDS = ("model", "draft-model", CONFIG_KEYS_CHECK)


def config_keys_result(
    config: Mapping[str, Any],
    architectures: list[str],
    options: Mapping[str, Any],
    sglang_version: str | None,
    mdata: Mapping[str, Any],
    subject: str,
) -> CheckResult | None:
    """ifc65: unknown where the model's architecture is one whose SGLang module reads config.json keys as attributes
    that neither it nor the model_type's transformers config class defaults (model.registry.config_keys: DeepSeek's
    topk_method / scoring_func / moe_layer_freq) and the text config states one of them nowhere (the keys of
    --json-model-override-args count as stated: SGLang updates the config with them); None where no entry holds the
    architecture (config.json's first, or the override's), the release and the model_type, or config.json names a
    remote config class (auto_map: not read here)."""
    if sglang_version is None or "auto_map" in config:
        return None
    from stackcheck.facts.versions import version_in

    text = _text_config(config)
    override: Mapping[str, Any] = {}
    raw = options.get("--json-model-override-args")
    if isinstance(raw, str) and raw.strip():
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError):
            parsed = None
        override = parsed if isinstance(parsed, dict) else {}
    given = override.get("architectures")
    archs: list[Any] = given if isinstance(given, list) else architectures
    model_type = text.get("model_type")
    for entry in (mdata.get("registry") or {}).get("config_keys") or []:
        if not isinstance(entry, Mapping) or not set(entry.get("architectures") or []) & {str(a) for a in archs}:
            continue
        if version_in(sglang_version, str(entry.get("versions") or "")) is not True:
            continue
        keys = (entry.get("model_types") or {}).get(model_type) if isinstance(model_type, str) else None
        if not isinstance(keys, list):
            continue
        stated = {**text, **override}
        missing = [str(k) for k in keys if k not in stated]
        if not missing:
            bad = _unusable_router_values(stated, keys, entry)
            if bad:
                return _unusable_router_result(entry, model_type, bad, sglang_version, subject)
            continue
        names = ", ".join(missing)
        module = entry.get("module")
        return CheckResult(
            CONFIG_KEYS_CHECK, "unknown", {"model_type": model_type, "unstated": missing},
            f"config.json stating {', '.join(str(k) for k in keys)}",
            f"{subject}: config.json (model_type {model_type}) states no {names}, which SGLang {sglang_version}'s "
            f"sglang/srt/models/{module}.py reads as config attributes with no default, and transformers' config class "
            f"for {model_type} (5.12.1, 5.19.0 read) declares none of {names}: AttributeError as the model is built, "
            "unless the installed transformers defaults them (not read). Published checkpoints state them: add "
            f"{names} to config.json or --json-model-override-args", entry.get("source"),
        )  # fmt: skip
    return None


def _unusable_router_values(stated: Mapping[str, Any], keys: list[Any], entry: Mapping[str, Any]) -> dict[str, Any]:
    """ifc66: the entry's keys config.json states with a value SGLang cannot use: null (the attribute is None: the
    sparse test's `layer_id % None` raises TypeError, a None topk_method / scoring_func is no router a checkpoint
    defines) or, for a key of `nonzero_numbers`, anything but a number other than 0 (`layer_id % 0` raises
    ZeroDivisionError, a string TypeError)."""
    numbers = {str(k) for k in entry.get("nonzero_numbers") or []}
    strings = entry.get("string_values") or {}  # (irobust14: scoring_func 'Sigmoid' raised ValueError, was ok)
    bad: dict[str, Any] = {}
    for key in (str(k) for k in keys):
        value = stated.get(key)
        allowed = strings.get(key) if isinstance(strings, Mapping) else None
        no_divisor = key in numbers and (not isinstance(value, (int, float)) or value == 0 or str(value) == "nan")
        if value is None or no_divisor or (isinstance(allowed, list) and value not in allowed):
            bad[key] = value
    return bad


def _unusable_router_result(
    entry: Mapping[str, Any], model_type: Any, bad: dict[str, Any], sglang_version: str, subject: str
) -> CheckResult:
    shown = ", ".join(f"{k} {json.dumps(v)[:40]}" for k, v in bad.items())
    return CheckResult(
        CONFIG_KEYS_CHECK, "unknown", {"model_type": model_type, "unusable": dict(bad)},
        "config.json stating each router key with a value SGLang reads (moe_layer_freq a number other than 0)",
        f"{subject}: config.json (model_type {model_type}) states {shown}: SGLang {sglang_version}'s "
        f"sglang/srt/models/{entry.get('module')}.py reads them as config attributes (moe_layer_freq in "
        "`layer_id % config.moe_layer_freq` for every layer past first_k_dense_replace: null raises TypeError, 0 "
        "ZeroDivisionError as the model is built); a null topk_method / scoring_func is no router a published "
        "checkpoint states, and a scoring_func other than softmax / sigmoid / sqrtsoftplus raises ValueError in the "
        "top-k routines. Give the values the checkpoint was trained with", entry.get("source"),
    )  # fmt: skip


#: (irev82) the config.json keys whose transformers config class declares a boolean under huggingface_hub's
#: @strict (each field validated as it is set, StrictDataclassFieldValidationError on another type), by model_type:
#: (key, whether null is taken). transformers 5.19.0 wheel: models/qwen2_moe/configuration_qwen2_moe.py :24 @strict, :98
#: `norm_topk_prob: bool = False`; qwen3_moe :24, :106 `bool = False`; deepseek_v2 :29, :117 `bool | None = False`;
#: deepseek_v3 :26, :102 `bool | None = True`; glm4_moe :28, :115 `bool = True` (read 2026-12-07 by irev82, pip download
#: --no-deps); transformers 5.12.1 the same (irobust12's reading, refusals.moe_renormalize_unread). huggingface_hub
#: 2.4.0's strict run here on a class of this shape: 0, 1, null and "false" raise for `bool`. These are the model types
#: of refusals.MOE_RENORMALIZE_DEFAULTS, whose value irobust12 judged only on the trtllm-gen rule.
STRICT_BOOL_KEYS: dict[str, tuple[str, bool]] = {
    "qwen2_moe": ("norm_topk_prob", False),
    "qwen3_moe": ("norm_topk_prob", False),
    "deepseek_v2": ("norm_topk_prob", True),
    "deepseek_v3": ("norm_topk_prob", True),
    "glm4_moe": ("norm_topk_prob", True),
}
#: the SGLang releases whose transformers pin is 5.12.1 or 5.19.0 (components.json's sglang requires, igap30:
#: 0.5.15-0.5.21 pin 5.12.1, 0.5.22 / 0.5.23 5.19.0): the installed transformers is taken to be the pin's (not read:
#: unknown, not fail)
STRICT_BOOL_VERSIONS = ">=0.5.15,<=0.5.23"
STRICT_BOOL_SOURCE = [
    {
        "title": "transformers 5.19.0 wheel, transformers/models/{qwen2_moe,qwen3_moe,deepseek_v2,deepseek_v3,"
        "glm4_moe}/configuration_*.py: @strict config classes with norm_topk_prob typed bool (DeepSeek: bool | None); "
        "huggingface_hub 2.4.0 dataclasses.strict (a field of another type raises StrictDataclassFieldValidationError)",
        "url": "https://pypi.org/project/transformers/5.19.0/",
    }
]


def config_types_result(config: Mapping[str, Any], sglang_version: str | None, subject: str) -> CheckResult | None:
    """irev82: unknown (check model-config-keys) where config.json states a key of STRICT_BOOL_KEYS with a value its
    transformers 5 config class refuses (norm_topk_prob 0, 1, a string; null for Qwen-MoE and GLM-4-MoE) on a release
    pinning such a transformers: AutoConfig raises as the config is loaded, before any kernel runs, whichever MoE
    runner the launch takes. irobust12 made only the BF16 trtllm-gen rule unknown for it (refusals.
    moe_renormalize_unread), so the same config was allowed with any other runner. Unknown, not fail: the installed
    transformers is the pin's only by inference (a transformers 4 passes the value on). None otherwise."""
    if sglang_version is None:
        return None
    from stackcheck.facts.versions import version_in

    if version_in(sglang_version, STRICT_BOOL_VERSIONS) is not True:
        return None
    text = _text_config(config)
    for read in (config, text) if text is not config else (config,):
        kind = read.get("model_type")
        typed = STRICT_BOOL_KEYS.get(kind) if isinstance(kind, str) else None
        if typed is None or typed[0] not in read:
            continue
        key, null_taken = typed
        value = read[key]
        if isinstance(value, bool) or (value is None and null_taken):
            continue
        shown = json.dumps(value)[:40]
        return CheckResult(
            CONFIG_KEYS_CHECK, "unknown", {"model_type": kind, key: value},
            f"config.json's {key} a boolean" + (" or null" if null_taken else ""),
            f"{subject}: config.json (model_type {kind}) states {key} {shown}, which transformers 5's config class for "
            f"{kind} (5.12.1 and 5.19.0, the pins of SGLang {STRICT_BOOL_VERSIONS}) types as a boolean under "
            "huggingface_hub's @strict: loading the config raises StrictDataclassFieldValidationError before the "
            "server starts, whichever MoE runner it takes (a transformers 4 would pass the value on: the installed "
            f"transformers is not read). Write {key} as true or false",
            STRICT_BOOL_SOURCE,
        )  # fmt: skip
    return None


#: (ifc61) SGLang's get_context_length (0.5.1 hf_transformers_utils.py:234-250, 0.5.13
#: utils/hf_transformers/common.py:369-395, 0.5.23 :678-694): the first of these attributes of hf_text_config that is
#: not None, times rope_scaling's factor (1 with original_max_position_embeddings or rope_type llama3), else 2048;
#: ModelConfig._derive_context_length (0.5.1 model_config.py:167-183, 0.5.13 :556-582, 0.5.23 :1293-1315) raises
#: ValueError for a --context-length above it unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN (or CI) is set
CONTEXT_LENGTH_KEYS = (
    "max_sequence_length",
    "seq_length",
    "max_seq_len",
    "model_max_length",
    "max_position_embeddings",
)
CONTEXT_LENGTH_SOURCE = {
    "title": "sglang 0.5.1 / 0.5.13 / 0.5.23 wheels: get_context_length (hf_transformers_utils.py, "
    "utils/hf_transformers/common.py) and ModelConfig._derive_context_length (configs/model_config.py: ValueError "
    "for a longer --context-length unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN)",
    "url": "https://pypi.org/project/sglang/0.5.23/",
}


def context_length_result(
    config: Mapping[str, Any], options: Mapping[str, Any], env: Mapping[str, str]
) -> CheckResult | None:
    """The refusal of a --context-length above the model's own, as SGLang derives it from config.json (ifc61: the
    gate allowed `--context-length 8192` on a config stating 2048 or none, and the server raises ValueError while
    building its ModelConfig). None where the flag is absent, within what config.json states, or the override is
    set. Unknown, not failed: the value SGLang reads is an attribute of the loaded config class, whose defaults and
    renames (a key config.json leaves out) are not read here, so a stated value is read as the attribute's."""
    wanted = options.get("--context-length")
    if not isinstance(wanted, int) or isinstance(wanted, bool) or wanted <= 0:
        return None
    if truthy(env.get("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN")) or truthy(env.get("SGLANG_IS_IN_CI")):
        return None
    text = _text_config(config)
    stated = next(((k, text[k]) for k in CONTEXT_LENGTH_KEYS if text.get(k) is not None), None)
    scaling = text.get("rope_scaling")
    factor: Any = 1
    if isinstance(scaling, Mapping) and scaling:
        factor = scaling.get("factor", 1)
        if "original_max_position_embeddings" in scaling or scaling.get("rope_type") == "llama3":
            factor = 1
    if stated is None:
        derived, where = None, "config.json states none of " + ", ".join(CONTEXT_LENGTH_KEYS)
    elif isinstance(stated[1], int | float) and not isinstance(stated[1], bool) and isinstance(factor, int | float):
        derived, where = (
            int(factor * stated[1]),
            f"config.json's {stated[0]} {stated[1]}" + (f" x rope_scaling factor {factor}" if factor != 1 else ""),
        )
    else:
        derived, where = None, f"config.json's {stated[0]} {stated[1]!r} is not read as a number"
    if derived is not None and wanted <= derived:
        return None
    if derived is None and wanted <= 2048 and stated is None:
        return None  # (no key stated: SGLang's own fallback is 2048; a class default is not read)
    return CheckResult(
        "model", "unknown", {"context_length": derived, "from": where},
        f"--context-length {wanted} within the model's context length, or SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
        f"--context-length {wanted} is above the model's context length as SGLang derives it ({where}"
        + (f": {derived}" if derived is not None else ": the config class's default decides, not read") + "): "
        "SGLang raises ValueError ('is greater than the derived context_length') while building the model config, "
        "unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1",
        CONTEXT_LENGTH_SOURCE,
    )  # fmt: skip


def _text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The sub-config SGLang reads as hf_text_config (the first of TEXT_CONFIG_KEYS that is an object), else
    config.json itself."""
    for key in TEXT_CONFIG_KEYS:
        sub = config.get(key)
        if isinstance(sub, dict):
            return sub
    return config


def _entry_holds(entry: Mapping[str, Any], text: Mapping[str, Any]) -> bool:
    """Whether an MLA entry's condition on the text config holds (no condition: it does)."""
    off = entry.get("unless_text_config_false")
    if isinstance(off, str) and text.get(off) is False:
        return False
    need = entry.get("needs_text_config")
    return not (isinstance(need, str) and text.get(need) is None)


def mla_of(
    table: Mapping[str, Any], architectures: list[str], config: Mapping[str, Any], sglang_version: str | None
) -> tuple[bool | None, str]:
    """Whether SGLang `sglang_version` serves the model as MLA (ModelConfig attention_arch), from preflight.json's
    model.mla_architectures: (True/False/None, why). A release the data read: MLA exactly where an entry of that
    release names one of config.json's architectures and its condition holds. A release newer (or older) than the
    data, or none known: MLA where an entry of any release does; where none names the architecture but config.json
    has kv_lora_rank (the MLA latent rank), None: the release may make it MLA, so the MLA rules must fail closed."""
    from stackcheck.facts.versions import version_in

    entries = [e for e in table.get("entries") or [] if isinstance(e, dict) and e.get("architecture") in architectures]
    text = _text_config(config)
    read = str((table.get("read") or {}).get("versions") or "")
    if sglang_version is not None and read and version_in(sglang_version, read) is True:
        for entry in entries:
            if version_in(sglang_version, str(entry.get("versions") or "")) is True and _entry_holds(entry, text):
                return True, f"MLA in SGLang {sglang_version} ({entry['architecture']}, versions {entry['versions']})"
        return False, f"not MLA in SGLang {sglang_version}"
    release = f"SGLang {sglang_version}" if sglang_version is not None else "the SGLang release (not known)"
    where = f"{release} is not among the releases read ({read or 'none'})"
    held = [e for e in entries if _entry_holds(e, text)]
    if held:
        return True, f"MLA: {where}, and SGLang {held[-1]['versions']} makes {held[-1]['architecture']} MLA"
    if text.get("kv_lora_rank") is not None or config.get("kv_lora_rank") is not None:
        return None, (
            f"MLA not known: {where}, no release read makes {', '.join(architectures) or 'its architecture'} MLA, "
            "and config.json has kv_lora_rank"
        )
    return False, f"not MLA: {where}, no release read makes it MLA and config.json has no kv_lora_rank"


def mla_dims(config: Mapping[str, Any]) -> dict[str, Any]:
    """The MLA dims the trtllm_mla and flashmla kernels check, as the launch facts features.json's rules read:
    `mla_kv_rope` ("kv_lora_rank/qk_rope_head_dim", e.g. "512/64") and `mla_qk_nope_head_dim`. SGLang's
    ModelConfig takes them from the text sub-config (hf_text_config) for the DeepSeek family and from config.json
    itself for the others (MiniCPM3); the text sub-config is read where it has the key, else config.json. Only what
    the file states, as an integer: a key it lacks (which the transformers config class might default) leaves its
    fact out, and a rule that reads it is then unknown (fail closed)."""
    out: dict[str, Any] = {}
    rank, rope, nope = (_stated_int(config, k) for k in ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim"))
    if rank is not None and rope is not None:
        out["mla_kv_rope"] = f"{rank}/{rope}"
    if nope is not None:
        out["mla_qk_nope_head_dim"] = nope
    return out


def _stated_int(config: Mapping[str, Any], key: str) -> int | None:
    """`key` as an integer, from the text sub-config where it has the key, else from config.json itself; None when
    neither states it as an integer."""
    text = _text_config(config)
    value = text.get(key) if text.get(key) is not None else config.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def mla_prefill_dims(config: Mapping[str, Any]) -> dict[str, Any]:
    """The head dims trtllm_mla's ragged prefill hands FlashInfer's trtllm_ragged_attention_deepseek, which checks
    them: `mla_prefill_dims`, "QK/V" with QK = qk_nope_head_dim + qk_rope_head_dim (the key is the no-PE part and
    the rope part concatenated, the query likewise) and V = v_head_dim (SGLang's DeepSeek attention views V with
    v_head_dim). Only what config.json states: a dim it lacks leaves the fact out (unknown)."""
    nope, rope, v = (_stated_int(config, k) for k in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"))
    if nope is None or rope is None or v is None:
        return {}
    return {"mla_prefill_dims": f"{nope + rope}/{v}"}


def query_heads(config: Mapping[str, Any]) -> int | None:
    """The model's query heads as SGLang's ModelConfig reads them (num_attention_heads of hf_text_config: the text
    sub-config, else config.json), which TRTLLMMLABackend splits by the attention TP size; None when not stated as
    a positive integer."""
    heads = _stated_int(config, "num_attention_heads")
    return heads if heads is not None and heads > 0 else None


# the keys of config.json (and of a text sub-config) that SGLang's ModelConfig reads for the attention heads and
# their dims (configs/model_config.py _derive_model_shapes, get_total_num_kv_heads; hf_transformers get_hf_text_config),
# and index_topk, whose presence makes a DeepSeek-family model a DSA one (configs/model_config.py is_deepseek_nsa/_dsa:
# SGLang then sets the nsa/dsa attention backend itself, launch.json refusals.auto.attention_backend.model_overrides),
# and learnable_sink, which keeps a DSA model off the trtllm kernel (dsa_defaults), and sparse_config, whose presence
# makes a MiniCPM SALA model one SGLang serves on its MiniCPM sparse backends (arg_groups/model_overrides/minicpm.py),
# and the experts' intermediate size (moe_intermediate_size, else intermediate_size) with quantization_config, whose
# weight_block_size SGLang's FP8 MoE weights must divide per rank (refusal fp8-block-moe-tp-split), and the rotary
# base as written (rope_theta, or inside rope_parameters / rope_scaling: refusal rope-theta-file-default, igap53;
# swa_rope_theta, the base MiMo-V2's sliding-window layers read: igap55), and norm_topk_prob, whose false value the BF16
# trtllm-gen MoE asserts against (refusals.launch_model_moe_renormalize: ifc64), and topk_method / routing_method_type,
# by which SGLang's DeepSeek MoE routes (refusal moe-trtllm-deepseek-softmax-routing: imodel3), and expert_selection_fn,
# by which SGLang's Cohere2-MoE routes (refusals.launch_model_moe_topk_kept: imodel4), and enable_moe_block, which
# gives a Gemma 4 its gelu experts (refusal moe-trtllm-gelu-experts: imodel4), and num_experts_per_tok / top_k_experts /
# hidden_activation, the top-k SGLang's Transformers backend looks for, Gemma 4's own name for it and its experts'
# activation (refusal transformers-backend-gemma4-moe: itfm1)
ATTENTION_KEYS = (
    "architectures", "model_type", "num_attention_heads", "n_head_kv", "num_kv_heads", "num_key_value_heads",
    "multi_query_group_num", "num_attention_groups", "multi_query", "head_dim", "v_head_dim", "hidden_size",
    "index_topk", "learnable_sink", "sparse_config", "dual_chunk_attention_config",
    "num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts",
    "moe_intermediate_size", "intermediate_size", "quantization_config", "torch_dtype", "dtype",
    "rope_theta", "rope_parameters", "rope_scaling", "swa_rope_theta", "norm_topk_prob",
    "topk_method", "routing_method_type", "expert_selection_fn", "enable_moe_block", "first_k_dense_replace",
    "num_experts_per_tok", "top_k_experts", "hidden_activation",
)  # fmt: skip
TEXT_CONFIG_KEYS = ("thinker_config", "llm_config", "language_config", "text_config")
#: (ifc70) an encoder sub-config's head count, kept where config.json states it: Qwen3-Omni's thinker builds its audio
#: and vision encoders' attention split by the attention TP size (shapes.py: omni-encoders)
ENCODER_HEAD_KEYS = {"audio_config": "encoder_attention_heads", "vision_config": "num_heads"}


def group0_weights(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """config.json's quantization_config.config_groups.group_0.weights, the one group SGLang's DeepSeek-family MoE
    runner pick reads for its Kimi K2 / K2.5 INT4 test (hf_config.quantization_config, never compression_config);
    None where any step is absent or not a mapping."""
    node: Any = config
    for key in ("quantization_config", "config_groups", "group_0", "weights"):
        node = node.get(key) if isinstance(node, Mapping) else None
    return dict(node) if isinstance(node, Mapping) else None


def quant_scheme_facts(
    mdata: Mapping[str, Any], quant_method: str | None, quant_why: str | None, qcfg: Any, sglang_version: str | None
) -> tuple[Any, bool | None]:
    """(launch.model_quant_schemes, launch.model_kv_cache_fp8) of a checkpoint's quantization config `qcfg`: its
    compressed-tensors or Quark schemes (preflight.json model.compressed_tensors_schemes / quark_schemes) and whether
    its KV cache is FP8 (those tables, else model.modelopt_kv_cache_fp8); None where not read. One reading for the
    gate's preflight and recommend's model facts (irev81: recommend read neither, and proposed a compressed-tensors
    block-FP8 checkpoint on an A100 that the gate refused: sglang-gpu-min-cc's quant-ct-fp8-block)."""
    schemes: Any = None
    kv_cache_fp8: bool | None = None
    ct_table = mdata.get("compressed_tensors_schemes") or {}
    quark_table = mdata.get("quark_schemes") or {}
    if quant_method is not None and quant_method == ct_table.get("quant_method"):
        from stackcheck.launch.preflight.schemes import checkpoint_kv_cache_fp8, compressed_tensors_schemes

        schemes = compressed_tensors_schemes(qcfg, ct_table)
        kv_cache_fp8 = checkpoint_kv_cache_fp8(qcfg, ct_table, sglang_version)
    elif quant_method is not None and quant_method == quark_table.get("quant_method"):
        from stackcheck.launch.preflight.schemes import quark_schemes

        schemes = quark_schemes(qcfg, quark_table)
    mo_kv = mdata.get("modelopt_kv_cache_fp8")
    if quant_method is not None and isinstance(mo_kv, Mapping) and kv_cache_fp8 is None:
        from stackcheck.launch.preflight.schemes import modelopt_kv_cache_fp8

        nested = bool(quant_why and quant_why.startswith("hf_quant_config.json"))
        kv_cache_fp8 = modelopt_kv_cache_fp8(qcfg, quant_method, nested, mo_kv, sglang_version)
    return schemes, kv_cache_fp8


def attention_keys(config: Mapping[str, Any]) -> dict[str, Any]:
    """config.json's attention keys as written, and those of its text sub-configs (absent keys stay absent: a value
    the transformers config class would default is not known here)."""
    out: dict[str, Any] = {k: config[k] for k in ATTENTION_KEYS if k in config}
    for key, head in ENCODER_HEAD_KEYS.items():
        sub = config.get(key)
        if key in config:
            out[key] = {head: sub[head]} if isinstance(sub, dict) and head in sub else {}
    for key in TEXT_CONFIG_KEYS:
        sub = config.get(key)
        if key in config:
            out[key] = attention_keys(sub) if isinstance(sub, dict) else None
    return out


def is_multimodal(
    architectures: list[str],
    options: Mapping[str, Any],
    data: Mapping[str, Any],
    config: Mapping[str, Any] | None = None,
    sglang_version: str | None = None,
) -> bool:
    """SGLang's ModelConfig.is_multimodal: an architecture of the list, unless the first architecture is one
    SGLang loads as text only without a flag (--enable-multimodal: Gemma3, Llama4, Step3-VL). From the releases of
    data's from_release (ifc68; a release not known counts as one of them, fail closed): the later releases'
    architectures, the text-only list lifted by --model-impl transformers, and a config.json stating a text
    sub-config (with --model-impl transformers also a vision or audio one)."""
    import re

    from stackcheck.facts.versions import version_in

    off = data.get("off_unless_flag") or {}
    later = data.get("from_release") or {}
    first = architectures[0] if architectures else None
    newer = bool(later) and (
        sglang_version is None or version_in(sglang_version, str(later.get("versions"))) is not False
    )
    lift = later.get("off_lifted_by") or {} if newer else {}
    lifted = bool(lift) and str(options.get(str(lift.get("flag"))) or "") in (lift.get("values") or [])
    if first in (off.get("first_architecture") or []) and not options.get(str(off.get("flag"))) and not lifted:
        return False
    names = set(data.get("values") or []) | (set(later.get("values") or []) if newer else set())
    if names & set(architectures):
        return True
    if isinstance(config, Mapping) and _states_vision_layers(config, later.get("vision_layers"), sglang_version):
        return True
    if not newer or not isinstance(config, Mapping):
        return False
    skip = later.get("subconfig_skip_pattern")
    if isinstance(first, str) and isinstance(skip, str) and re.match(skip, first):
        return False
    keys = list(later.get("subconfig_keys") or []) + (
        list(later.get("subconfig_keys_with_lift") or []) if lifted else []
    )
    return any(isinstance(config.get(k), Mapping) for k in keys)


def _states_vision_layers(config: Mapping[str, Any], rule: Any, sglang_version: str | None) -> bool:
    """Whether `config` states vision encoder layers in a release of `rule` (preflight.json's vision_layers: DeepSeek
    V4.1's has_dsv41_vision, irev84): its model_type one of the rule's, and `key` above 0, read as the release's
    normalizer does (the config's own, else its text sub-config's, else its vision sub-config's `subconfig_key`); a
    release not known counts as one of them, and a value that is not a number as layers (fail closed)."""
    from stackcheck.facts.versions import version_in

    if not isinstance(rule, Mapping) or config.get("model_type") not in (rule.get("model_types") or []):
        return False
    if sglang_version is not None and version_in(sglang_version, str(rule.get("versions"))) is False:
        return False
    key = str(rule.get("key"))
    text = config.get("text_config")
    vision = config.get(str(rule.get("subconfig")))
    if key in config:
        value = config[key]
    elif isinstance(text, Mapping) and key in text:
        value = text[key]
    elif isinstance(vision, Mapping) and str(rule.get("subconfig_key")) in vision:
        value = vision[str(rule.get("subconfig_key"))]
    else:
        return False
    if type(value) is bool or not isinstance(value, (int, float)):
        return value is not None
    return value > 0


def home_dir(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")
