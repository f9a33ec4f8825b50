"""Packages probe: the installed distributions that matter for serving, read from metadata as text.

Nothing probed is imported. Instead of enumerating every distribution, each directory of the target's
sys.path (facts.python.sys_path) is listed once and only the `*.dist-info` / `*.egg-info` / `*.egg-link`
entries of the wanted names are read (the METADATA headers up to the first blank line). torch's own version
comes from `torch/version.py`, parsed with `ast`. Every file is read through the probe's filesystem view
(the host, a root directory, an image) with a size cap, and only if it is a regular file: a FIFO, a device or
a huge file costs the one distribution an `error`, never the probe.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping

from stackcheck import lean_json
from stackcheck.facts.model import KERNEL_PACKAGES, SERVING_PACKAGES
from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult, ProbeStatus, SearchPathUnknown
from stackcheck.readers.fsview import FileView, HostView, NotRegularFile, is_dir, is_file, listdir_or_empty, read_text

if TYPE_CHECKING:
    from typing import Any, ClassVar

WANTED = (
    "torch",
    "torchvision",
    "triton",
    "pytorch-triton",
    *KERNEL_PACKAGES,
    "flashinfer-python",
    "flashinfer-cubin",
    "flashinfer-jit-cache",
    "sglang",
    "vllm",
    "nvidia-nccl-cu12",
    "nvidia-nccl-cu13",
    # an old CUDA 11 NCCL wheel left beside them writes the same libnccl.so.2 (check nccl, rule one-nccl-wheel-cu11)
    "nvidia-nccl-cu11",
    "nvidia-cuda-runtime",
    "nvidia-cuda-runtime-cu12",
    "nvidia-ml-py",
    "cuda-python",
    "sgl-deep-gemm",
    "deep-gemm",
    "nvidia-cudnn-cu12",
    "nvidia-cudnn-cu13",
    # cuDNN's Python frontend (module `cudnn`): FlashInfer's cudnn_batch_prefill_with_kv_cache runs its cuDNN graph
    # where `import cudnn` works and its CUDNN_SDPA cubins otherwise (feature mm-attention-flashinfer-cudnn; Name:
    # nvidia-cudnn-frontend in the 1.32.0 wheel's METADATA, read 2026-12-07)
    "nvidia-cudnn-frontend",
    "nvidia-cuda-nvrtc-cu12",
    "nvidia-cuda-nvrtc",
    "nvidia-cublas-cu12",
    "nvidia-cublas",
    "flash-attn-4",
    # SGLang 0.5.9-0.5.17 JIT-build their kernels through it; 0.1.9-0.1.12 take a stray ROCm home for ROCm
    # (check jit-toolchain, rule tvm-ffi-rocm-home)
    "apache-tvm-ffi",
    # modules SGLang imports when its server starts that an install can leave out (check sglang-start-imports)
    "pybase64",
    "gguf",
    "partial-json-parser",
    "compressed-tensors",
    "sentencepiece",
    # the MoE all-to-all backends' packages SGLang imports when --moe-a2a-backend deepep / mooncake builds its
    # dispatcher (the gate's preflight check moe-a2a-package, preflight.json a2a_packages)
    "deep-ep",
    "mooncake-transfer-engine",
    # NIXL, which SGLang's --disaggregation-transfer-backend nixl imports (nixl._api) as the scheduler starts (the
    # gate's preflight check transfer-package); from nixl 0.7.1 on `nixl` only forwards to the wheel of torch's CUDA
    # major, nixl-cu12 / nixl-cu13 (their own modules nixl_cu12 / nixl_cu13)
    "nixl",
    "nixl-cu12",
    "nixl-cu13",
    # the packages a HiCache storage backend imports as the server builds it (--hicache-storage-backend; the gate's
    # check transfer-package, preflight.json transfer_packages): seaweedfs imports boto3 (top_level.txt of the 1.44.18
    # wheel), npu_memcache memcache_hybrid (Name: memcache-hybrid, the 1.3.0 wheel's top_level.txt), mori mori.umbp
    # (ROCm/mori's setup.py names the distribution mori; read 2026-12-07)
    "boto3",
    "memcache-hybrid",
    "mori",
    # the packages SGLang imports when --quantization humming / bitsandbytes builds its config or linear method
    # (the gate's preflight check quant-package, preflight.json quant_packages)
    "humming-kernels",
    "bitsandbytes",
    # the NVSHMEM wheels DeepEP's deep_ep_cpp links libnvshmem_host.so.N from (its RPATH {nvidia.nvshmem}/lib where
    # its setup.py found the wheel): which CUDA major they are built for (the gate's check moe-a2a-package)
    "nvidia-nvshmem-cu12",
    "nvidia-nvshmem-cu13",
    # SGLang's prebuilt DeepEP (sglang 0.5.18+ requires it): import deep_ep from a distribution of another name, its
    # deep_ep/_build_info.py naming the CUDA major its import demands of torch (the gate's check moe-a2a-package)
    "sgl-deep-ep",
    # the hook --enable-memory-saver preloads into every scheduler: its release says which libcudart.so.N the child's
    # loader must find (feature memory-saver)
    "torch-memory-saver",
    # packages whose compiled torch extensions the kernel symbol probe reads (readers/kernelsymbols.py EXTENSIONS;
    # checks extension-torch-abi-lmcache / -torchao): their versions, and their site-packages searched too where it
    # is not torch's (a user site). Distribution names read in the wheels (2026-12-05): torchao 0.13.0
    # (torchao-0.13.0.dist-info/METADATA, Name: torchao), lmcache 0.3.9 and 0.5.6 (Name: lmcache)
    "torchao",
    "lmcache",
    # the cupy LMCache requires (cupy-cuda12x in 0.3.12 / 0.4.4, cupy-cuda13x in 0.4.5-0.5.6): its CUDA runtime is
    # linked into cupy, so cupy-cuda13x's CUDA calls need a driver of CUDA 13 (check lmcache-requires, rule
    # lmcache-cupy-cuda13-driver; Name: cupy-cuda12x / cupy-cuda13x in the 13.6.0 and 14.2.0 wheels' METADATA, read
    # 2026-12-06)
    "cupy-cuda12x",
    "cupy-cuda13x",
    # conda-forge's cupy (and a source build of PyPI's cupy) install the distribution `cupy`: its CUDA major is read
    # from cupy/.data/_wheel.json where the build wrote one (BUILD_INFO; rule lmcache-cupy-conda-cuda13-driver)
    "cupy",
    # the packages SGLang's --torchao-config needs beside torchao (stackcheck/verdicts/torchao_config.py): int4wo on
    # torchao 0.14.0-0.15.0 imports fbgemm_gpu.experimental.gen_ai (Name: fbgemm_gpu_genai, the 1.4.0 wheel's
    # METADATA as pip's report gives it), gemlite-... on SGLang 0.5.1-0.5.6 imports gemlite (Name: gemlite, the
    # 0.6.0.post2 sdist's PKG-INFO; read 2026-12-05)
    "fbgemm-gpu-genai",
    "gemlite",
    # transformers, which SGLang's model registry imports on every launch (transformers.modeling_utils, through the
    # models that import PreTrainedModel): 4.57.x import torchao at module level, so torchao's abort on load is a
    # crash of every launch there (rule torchao-abi-abort, stackcheck/verdicts/torchao_gate.py TRANSFORMERS_SOURCE;
    # Name: transformers in the 4.57.1 wheel's METADATA, read 2026-12-05)
    "transformers",
    # Hugging Face's kernels, which transformers' hub_kernels.py imports where it is installed: 0.15.1+ refuse the
    # table's bare LayerRepository entries (check sglang-start-imports, rule kernels-needs-version-transformers, and
    # the gate's model-architecture, preflight.json model.registry.import_failures; Name: kernels in the 0.15.1
    # wheel's METADATA, read 2026-12-06). Not read before igap41: both judged only a hand-written packages list
    "kernels",
    # huggingface-hub: transformers checks its version when it is imported (4.x: <1.0, dependency_versions_check.py)
    # and kernels 0.14.1+ require >=1.10.0 (check sglang-start-imports, rule kernels-huggingface-hub-transformers4;
    # Name: huggingface-hub in the kernels wheels' Requires-Dist, read 2026-12-06, ifc46)
    "huggingface-hub",
    # SGLang 0.5.23 takes FlashMLA from the sgl-flash-mla wheel (its pin; module flash_mla, imported by
    # sglang/kernels/ops/attention/flash_mla_interface.py): the DSA flashmla_kv / flashmla_sparse paths need it
    # (features attention-dsa-flashmla-kv / -sparse, rule sgl-flash-mla-installed; Name: sgl-flash-mla in the 1.0.0
    # wheel's METADATA, read 2026-12-06, ifc48)
    "sgl-flash-mla",
    # SGLang 0.5.17+ vendor FA4 (sglang/kernels/ops/attention/flash_attn/cute), whose interface imports the
    # quack-kernels wheel's `quack` at module level: without it the first FA4 call raises ImportError (feature
    # attention-fa4, rule quack-kernels-installed; Name: quack-kernels in the 0.6.5 wheel's METADATA, read
    # 2026-12-06, igap48)
    "quack-kernels",
    # the same FA4 copy (0.5.16+) imports the CuTe DSL's `cutlass` at module level, importable only through the
    # nvidia-cutlass-dsl wheel's nvidia_cutlass_dsl_packages.pth (feature attention-fa4, rule cutlass-dsl-installed;
    # Name: nvidia-cutlass-dsl in the 4.8.0 wheel's METADATA, read 2026-12-07, ifc67)
    "nvidia-cutlass-dsl",
    # its .pth imports nvidia_cutlass_dsl, which only its library wheels hold (feature attention-fa4, rule
    # cutlass-dsl-libs-installed; Name: nvidia-cutlass-dsl-libs-base / -libs-core in the 4.8.0 wheels' METADATA, and
    # -libs-cu12 / -libs-cu13 in nvidia-cutlass-dsl 4.8.0's Requires-Dist, read 2026-12-07, irobust14)
    "nvidia-cutlass-dsl-libs-base",
    "nvidia-cutlass-dsl-libs-core",
    "nvidia-cutlass-dsl-libs-cu12",
    "nvidia-cutlass-dsl-libs-cu13",
    # SGLang 0.5.19+'s MiniCPM sparse backend imports tilelang (minicpm/fuse_kernel.py, module level) as it builds its
    # fused top-k where SGLANG_MINICPM_FUSE_TOPK is on (feature attention-minicpm-sparse, rule tilelang-installed;
    # Name: tilelang in the 0.1.12 wheel's METADATA, read 2026-12-06, igap48)
    "tilelang",
)
#: the packages a serving environment has; an environment with none of them is "not this one" (see the
#: environments probe, which then looks for one that has them)
SERVING = SERVING_PACKAGES
LOCAL_VARIANT = _lazy(r"\+(cu\d+|cpu|rocm[\d.]+)", re.IGNORECASE)
_HOST = HostView()


def normalise(name: str) -> str:
    """PEP 503 normalised distribution name: every run of "-", "_" and "." one "-", in lower case (the answer of
    re.sub(r"[-_.]+", "-", name).lower(), by string methods: every probed start normalised each name in every
    site directory's listing through that pattern, compiled on each start; tests/probes/test_normalise.py holds
    the two equal)."""
    out = name.replace("_", "-").replace(".", "-")
    while "--" in out:
        out = out.replace("--", "-")
    return out.lower()


class DistRecord:
    """One installed copy of a distribution (paths are box paths, as seen through the view). A plain class:
    the dataclasses module costs ~8 ms of imports at every start."""

    __slots__ = ("editable", "error", "location", "meta_dir", "name", "source_install", "version")

    def __init__(
        self,
        name: str,  # normalised
        location: str,  # the directory the distribution is installed into (site-packages, or a project)
        meta_dir: str | None,  # the .dist-info / .egg-info path (None for an egg-link without one)
        version: str | None = None,
        error: str | None = None,
        editable: bool = False,
        source_install: str | None = None,
    ) -> None:
        self.name = name
        self.location = location
        self.meta_dir = meta_dir
        self.version = version
        self.error = error
        self.editable = editable
        # built on this machine by pip from a directory or a VCS checkout (direct_url.json dir_info not editable,
        # or vcs_info: PEP 610), not PyPI's wheel: "dir" / "vcs"; or installed by pip from a wheel or sdist file on
        # this machine (archive_info with a file: URL, as `pip install ./x.whl` writes it): "file"
        self.source_install = source_install

    def _values(self) -> tuple[Any, ...]:
        return (self.name, self.location, self.meta_dir, self.version, self.error, self.editable, self.source_install)

    def __eq__(self, other: object) -> bool:
        return self._values() == other._values() if isinstance(other, DistRecord) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        names = ("name", "location", "meta_dir", "version", "error", "editable", "source_install")
        return "DistRecord(" + ", ".join(f"{n}={v!r}" for n, v in zip(names, self._values(), strict=True)) + ")"


#: METADATA headers are a few kilobytes; what is past this is not read (a file that is /dev/zero, say)
HEADERS_CAP = 1 << 20
#: direct_url.json and .egg-link files are a few hundred bytes; a larger one is refused, not read (a 3 GB
#: sparse direct_url.json must cost one entry, not the whole probe's time budget)
SMALL_FILE_CAP = 64 * 1024
#: torch/version.py is a few hundred bytes; a larger one is refused rather than parsed (ast.parse holds the
#: interpreter lock: a huge file would stall every probe past its timeout)
VERSION_PY_CAP = 64 * 1024


def _read_headers(view: FileView, path: str) -> dict[str, str]:
    """The RFC 822 headers of a METADATA / PKG-INFO file, up to the first blank line (at most HEADERS_CAP
    bytes are read: the headers come first, a long description after them is not needed)."""
    headers: dict[str, str] = {}
    text = view.read_bytes(path, HEADERS_CAP).decode("utf-8", errors="replace")
    for line in text.splitlines():
        if not line.strip():
            break
        if line[:1] in (" ", "\t"):
            continue
        key, sep, value = line.partition(":")
        if sep and key not in headers:
            headers[key.strip()] = value.strip()
    return headers


def _read_meta(record: DistRecord, view: FileView) -> None:
    meta_dir = record.meta_dir
    if meta_dir is None:
        return
    meta_file = posixpath.join(meta_dir, "PKG-INFO" if meta_dir.endswith(".egg-info") else "METADATA")
    if is_file(view, meta_dir):  # a single-file .egg-info
        meta_file = meta_dir
    try:
        headers = _read_headers(view, meta_file)
    except FileNotFoundError:
        record.error = f"{meta_file}: missing"
        return
    except NotRegularFile:
        record.error = f"{meta_file}: not a regular file"
        return
    except OSError as exc:
        record.error = f"{meta_file}: cannot read: {exc.strerror or exc}"
        return
    version = headers.get("Version")
    if not version:
        record.error = f"{meta_file}: no Version header"
        return
    record.version = version
    direct_url = posixpath.join(meta_dir, "direct_url.json")
    if is_file(view, direct_url):
        try:
            data = lean_json.loads(read_text(view, direct_url, SMALL_FILE_CAP))
            dir_info = data.get("dir_info") if isinstance(data, dict) else None
            if isinstance(dir_info, dict) and dir_info.get("editable") is True:
                record.editable = True
            elif isinstance(dir_info, dict):
                record.source_install = "dir"
            elif isinstance(data, dict) and isinstance(data.get("vcs_info"), dict):
                record.source_install = "vcs"
            elif isinstance(data, dict) and isinstance(data.get("archive_info"), dict) and _file_url(data.get("url")):
                record.source_install = "file"
        except (OSError, ValueError, RecursionError) as exc:  # editable or not stays unknown; the rest holds
            record.error = f"{direct_url}: {getattr(exc, 'strerror', None) or exc}"


def _file_url(url: object) -> bool:
    """Whether a PEP 610 url names a file on this machine (the file: scheme, any case: RFC 8089)."""
    return isinstance(url, str) and url[:5].lower() == "file:"


#: the entries of a search-path directory that describe a distribution, by their names' last dotted part
_META_SUFFIXES = frozenset((".dist-info", ".egg-info", ".egg-link"))


def find_distributions(
    names: set[str], search_dirs: list[str], view: FileView | None = None
) -> dict[str, list[DistRecord]]:
    """Every copy of each wanted (normalised) name on the search path, in search-path order."""
    fs = view if view is not None else _HOST
    found: dict[str, list[DistRecord]] = {}
    seen_dirs: set[str] = set()
    for entry in search_dirs:
        if not entry or not entry.startswith("/"):
            continue  # '' and relative entries depend on a working directory: not the environment's
        directory = entry
        try:
            real = fs.realpath(directory)
        except (OSError, ValueError):
            continue
        if real in seen_dirs:
            continue
        seen_dirs.add(real)
        if not is_dir(fs, directory):  # missing, a zip file, a file
            continue
        listing = listdir_or_empty(fs, directory)
        editable_pth: set[str] = set()
        candidates: list[tuple[str, str]] = []
        for item in listing:
            # (the name's last dot on: each suffix below has one dot, its first character, so it ends the name exactly
            # when it is that part; one slice and a set lookup per entry where a site-packages of a few hundred
            # packages and modules asked up to four endswith of each, in every probe that lists it)
            suffix = item[item.rfind(".") :] if "." in item else ""
            if suffix == ".pth":
                if item.startswith("__editable__."):
                    editable_pth.add(normalise(item[len("__editable__.") : -len(".pth")].split("-")[0]))
                continue
            if suffix in _META_SUFFIXES:
                stem = item[: -len(suffix)]
                # name-version for dist-info / egg-info; an egg-link is the bare project name
                dist_name = normalise(stem if suffix == ".egg-link" else stem.split("-")[0])
                if dist_name in names:
                    candidates.append((dist_name, item))
        for dist_name, item in sorted(candidates, key=lambda c: c[1]):
            path = posixpath.join(directory, item)
            try:
                if item.endswith(".egg-link"):
                    record = _from_egg_link(dist_name, path, fs)
                else:
                    record = DistRecord(dist_name, directory, path)
                    _read_meta(record, fs)
                    if item.endswith(".egg-info") and not _is_site_dir(directory):
                        record.editable = True  # a project directory put on sys.path (setup.py develop)
            except Exception as exc:  # one broken distribution costs its own entry, never the probe
                record = DistRecord(dist_name, directory, path, error=f"{path}: {type(exc).__name__}: {exc}"[:300])
            if dist_name in editable_pth:
                record.editable = True
            found.setdefault(dist_name, []).append(record)
    return found


def _is_site_dir(directory: str) -> bool:
    return posixpath.basename(directory.rstrip("/")) in ("site-packages", "dist-packages")


def _from_egg_link(dist_name: str, path: str, view: FileView) -> DistRecord:
    directory = posixpath.dirname(path)
    try:
        text = read_text(view, path, SMALL_FILE_CAP)
        target = text.splitlines()[0].strip()
    except (OSError, ValueError, IndexError):
        return DistRecord(dist_name, directory, None, error=f"{path}: unreadable egg-link", editable=True)
    if not target.startswith("/"):
        target = posixpath.normpath(posixpath.join(directory, target))
    record = DistRecord(dist_name, target, None, editable=True)
    infos = [n for n in listdir_or_empty(view, target) if n.endswith(".egg-info")]
    if infos:
        record.meta_dir = posixpath.join(target, infos[0])
        _read_meta(record, view)
    else:
        record.error = f"{path}: points to {target} which has no .egg-info"
    return record


def top_level_constants(path: str, view: FileView, too_large: str) -> list[tuple[list[str | None], bool, str | None]]:
    """The top-level `NAME = ...` / `NAME: T = ...` assignments of a small Python file whose value is a string or
    None literal, parsed as ast.parse parses, never run (compiled to an AST with the C module's node classes: the
    `ast` module is ~3 ms of an audit's start): each as (its targets, a name or None for another target such as
    `a.b`; whether it is annotated; the value). ValueError(too_large) above VERSION_PY_CAP bytes."""
    data = view.read_bytes(path, VERSION_PY_CAP + 1)
    if len(data) > VERSION_PY_CAP:
        raise ValueError(too_large)
    import _ast  # (here: its node classes, ~9 M instructions of their making, only where such a file is read)

    from stackcheck.pyast import parse  # (one parse at a time: CPython's AST converter is not thread-safe)

    found: list[tuple[list[str | None], bool, str | None]] = []
    for node in parse(data.decode("utf-8"), path).body:
        targets: list[_ast.expr]
        if isinstance(node, _ast.Assign):
            targets, annotated = node.targets, False
        elif isinstance(node, _ast.AnnAssign):
            targets, annotated = [node.target], True
        else:
            continue
        value = node.value
        if isinstance(value, _ast.Constant) and (isinstance(value.value, str) or value.value is None):
            names = [t.id if isinstance(t, _ast.Name) else None for t in targets]
            found.append((names, annotated, value.value))
    return found


def read_torch_version_py(location: str, view: FileView | None = None) -> dict[str, str | None]:
    """`__version__`, `cuda`, `hip` and `git_version` (every single-target string / None constant) from
    `<location>/torch/version.py` (top_level_constants)."""
    path = posixpath.join(location, "torch", "version.py")
    too_large = f"{path}: more than {VERSION_PY_CAP} bytes, too large for torch's version.py; not parsed"
    values: dict[str, str | None] = {}
    for names, _annotated, value in top_level_constants(path, view if view is not None else _HOST, too_large):
        if len(names) == 1 and names[0] is not None:
            values[names[0]] = value
    return values


def variant_from(version: str | None, cuda: str | None = None, hip: str | None = None) -> str | None:
    """ "2.11.0+cu130" -> "cu130"; with no local tag, from the build's CUDA / HIP version; else "cpu"."""
    if version:
        m = LOCAL_VARIANT.search(version)
        if m:
            return m.group(1).lower()
    if cuda:
        return "cu" + cuda.replace(".", "")
    if hip:
        return "rocm" + ".".join(hip.split(".")[:2])
    return None


def package_facts(name: str, copies: list[DistRecord], view: FileView | None = None) -> dict[str, Any]:
    if not copies:
        return {"installed": False}
    first = copies[0]
    entry: dict[str, Any] = {
        "installed": True,
        "version": first.version,
        "dist_version": first.version,
        "location": first.location,
        "editable": first.editable,
        "copies": len(copies),
    }
    if first.source_install is not None:
        entry["source_install"] = first.source_install
    if len(copies) > 1:
        entry["other_locations"] = [c.location for c in copies[1:]]
    if first.error:
        entry["error"] = first.error
    if name == "torch":
        entry.update(cuda=None, variant=None, git_version=None)
        try:
            tv = read_torch_version_py(first.location, view)
        except NotRegularFile:
            msg = "torch/version.py: not a regular file"
            entry["error"] = f"{entry['error']}; {msg}" if "error" in entry else msg
            entry["variant"] = variant_from(first.version)
        except (OSError, SyntaxError, ValueError, MemoryError, RecursionError) as exc:
            msg = f"torch/version.py: {getattr(exc, 'strerror', None) or exc or type(exc).__name__}"
            entry["error"] = f"{entry['error']}; {msg}" if "error" in entry else msg
            entry["variant"] = variant_from(first.version)
        else:
            entry["version"] = tv.get("__version__") or first.version
            entry["cuda"] = tv.get("cuda")
            entry["git_version"] = tv.get("git_version")
            entry["variant"] = variant_from(entry["version"], entry["cuda"], tv.get("hip")) or "cpu"
    elif name in KERNEL_PACKAGES:
        entry["variant"] = variant_from(first.version)
    if name in BUILD_INFO:
        build_cuda_major(name, entry, first.location, view or _HOST)
    module = EXTENSION_MODULES.get(name)
    if module is not None:
        fs = view or _HOST
        try:
            where: str | None = first.location
            if first.editable and first.meta_dir is not None and first.meta_dir.endswith(".dist-info"):
                # a PEP 660 editable install: the dist-info sits in site-packages, the build in the project
                where = editable_module_dir(first.location, name, module, fs)
            if where is None:
                msg = f"{module}: editable install whose project directory was not read"
                entry["error"] = f"{entry['error']}; {msg}" if "error" in entry else msg
            else:
                entry["extension_files"] = extension_files(where, module, fs)
                if where != first.location:
                    entry["extension_dir"] = where
        except OSError as exc:
            msg = f"{module}: {getattr(exc, 'strerror', None) or exc}"
            entry["error"] = f"{entry['error']}; {msg}" if "error" in entry else msg
    return entry


#: the top-level package each distribution is imported as (components.json `import_name`, which
#: tests/probes/test_packages_shadowing.py holds this equal to), for the directory a launch puts first on sys.path
SHADOW_IMPORTS: dict[str, str] = {
    "torch": "torch",
    **dict.fromkeys(KERNEL_PACKAGES, "sgl_kernel"),
    "flashinfer-python": "flashinfer",
    "flashinfer-cubin": "flashinfer_cubin",
    "flashinfer-jit-cache": "flashinfer_jit_cache",
    "sglang": "sglang",
    "triton": "triton",
    "sgl-deep-gemm": "deep_gemm",
    "sgl-deep-ep": "deep_ep",
    "flash-attn-4": "flash_attn",
}
#: the file of a package directory whose literal `__version__` is the version that package reports, where its own
#: code reads it first: sglang/version.py:1-2 imports sglang._version (setuptools-scm writes it at build time;
#: `__version__ = version = '0.5.9'` at sglang 0.5.9 wheel sglang/_version.py:31, the same lines in 0.5.23), and
#: without it falls back to the *installed* distribution's metadata (:7) or "0.0.0.dev0" (:23), neither of which
#: is the checkout's; flashinfer/version.py:18-19 imports flashinfer._build_meta (`__version__ = "0.6.3"` at
#: flashinfer-python 0.6.3 wheel flashinfer/_build_meta.py:2); torch: torch/version.py (read_torch_version_py).
#: A package not named here, or without the file, has an unknown version.
SHADOW_VERSION_FILES: dict[str, str] = {"sglang": "_version.py", "flashinfer-python": "_build_meta.py"}


def shadow_launch_dir(packages: dict[str, dict[str, Any]], first: str, view: FileView) -> None:
    """Where the directory a gated command puts first on sys.path (the working directory of `python -m`, a
    script's own directory: ProbeContext.launch_first_path) holds a regular package (NAME/__init__.py) or a
    module (NAME.py) of a wanted distribution, Python imports that one and never reaches the installed copy:
    packages.NAME then describes the shadowing one (`shadowing`: its path; `version` from its own files where
    SHADOW_VERSION_FILES or torch/version.py say it, else null), and `shadowed` keeps what the distribution's
    metadata said. A directory without __init__.py is a namespace portion, which a regular package later on
    sys.path wins over (importlib's PathFinder), so it shadows nothing."""
    for name, module in SHADOW_IMPORTS.items():
        package_dir = posixpath.join(first, module)
        if is_file(view, posixpath.join(package_dir, "__init__.py")):
            where = package_dir
        elif is_file(view, package_dir + ".py"):
            where = package_dir + ".py"
        else:
            continue
        before = packages.get(name) or {"installed": False}
        entry: dict[str, Any] = {"installed": True, "version": None, "location": first, "shadowing": where}
        if before.get("installed"):
            entry["shadowed"] = {k: before[k] for k in ("version", "location") if k in before}
            entry["copies"] = int(before.get("copies") or 1) + 1
        try:
            if where == package_dir and name == "torch":  # (a single module NAME.py has no version file read)
                tv = read_torch_version_py(first, view)
                entry.update(version=tv.get("__version__"), cuda=tv.get("cuda"), git_version=tv.get("git_version"))
                entry["variant"] = variant_from(entry["version"], entry["cuda"], tv.get("hip"))
            elif where == package_dir and name in SHADOW_VERSION_FILES:
                entry["version"] = literal_version(posixpath.join(package_dir, SHADOW_VERSION_FILES[name]), view)
        except FileNotFoundError:
            pass  # (no version file: the version stays unknown)
        except (OSError, SyntaxError, ValueError, MemoryError, RecursionError) as exc:
            why = getattr(exc, "strerror", None) or exc or type(exc).__name__
            entry["error"] = f"{where}: version not read: {why}"
        if name in KERNEL_PACKAGES and entry["version"]:
            entry["variant"] = variant_from(entry["version"])
        packages[name] = entry


def literal_version(path: str, view: FileView) -> str | None:
    """The string literal assigned to `__version__` at the top level of a small Python file (`__version__ =
    version = '0.5.9'` too; top_level_constants), parsed, never run; None where it assigns none."""
    for names, annotated, value in top_level_constants(path, view, f"more than {VERSION_PY_CAP} bytes"):
        if not annotated and isinstance(value, str) and "__version__" in names:
            return value
    return None


#: prebuilt distributions whose build-info file names the CUDA major their import checks torch's against
#: (sgl-deep-ep: deep_ep/_build_info.py EXPECTED_CUDA_MAJOR, which deep_ep/__init__.py hands to check_prerequisites),
#: or the CUDA major their build carries: cupy's cupy/.data/_wheel.json `"cuda": "13.x"` (cupy-cuda12x / -cuda13x
#: 13.6.0 and 14.2.0 wheels; conda-forge's cupy, dist-info Name: cupy, copies recipe/preload_config/
#: linux64_cuda<major>_wheel.json there, build_output.sh; a source build of PyPI's cupy has none: not read)
BUILD_INFO: dict[str, str] = {
    "sgl-deep-ep": "deep_ep/_build_info.py",
    **dict.fromkeys(("cupy", "cupy-cuda12x", "cupy-cuda13x"), "cupy/.data/_wheel.json"),
}
_EXPECTED_CUDA_MAJOR = _lazy(r"^EXPECTED_CUDA_MAJOR\s*=\s*(\d{1,9})\s*(?:#.*)?$", re.MULTILINE)
_WHEEL_JSON_CUDA = _lazy(r"^(\d{1,3})\.(?:x|\d{1,3})$")


def _wheel_json_cuda_major(text: str) -> int | None:
    """The CUDA major of cupy/.data/_wheel.json's `cuda` ("13.x"); None where the file names none."""
    try:
        doc = lean_json.loads(text)
    except (ValueError, RecursionError):
        return None
    cuda = doc.get("cuda") if isinstance(doc, dict) else None
    found = _WHEEL_JSON_CUDA.match(cuda) if isinstance(cuda, str) else None
    return int(found.group(1)) if found else None


def build_cuda_major(name: str, entry: dict[str, Any], location: str | None, view: FileView) -> None:
    """packages.NAME.build_cuda_major: the CUDA major the prebuilt distribution's build-info file names (read as text,
    never run); left out, with the reason in `error`, where the file is not there or names none."""
    rel = BUILD_INFO[name]
    try:
        text = read_text(view, posixpath.join(location or "", rel), SMALL_FILE_CAP)
    except (OSError, ValueError) as exc:
        msg = f"{rel}: {getattr(exc, 'strerror', None) or exc or type(exc).__name__}"
        entry["error"] = f"{entry['error']}; {msg}" if "error" in entry else msg
        return
    if rel.endswith(".json"):
        major = _wheel_json_cuda_major(text)
        if major is None:
            msg = f'{rel}: no "cuda": "N.x" entry'
            entry["error"] = f"{entry['error']}; {msg}" if "error" in entry else msg
            return
        entry["build_cuda_major"] = major
        return
    found = _EXPECTED_CUDA_MAJOR.search(text)
    if found is None:
        msg = f"{rel}: no EXPECTED_CUDA_MAJOR = N line"
        entry["error"] = f"{entry['error']}; {msg}" if "error" in entry else msg
        return
    entry["build_cuda_major"] = int(found.group(1))


_FINDER_IMPORT = _lazy(r"^import\s+(__editable___[A-Za-z0-9_]+)\s*;")
_FINDER_MAPPING = _lazy(r"^MAPPING\s*(?::[^=]*)?=\s*(\{.*\})\s*$", re.MULTILINE)


def editable_module_dir(site: str, dist: str, module: str, view: FileView) -> str | None:
    """Where a PEP 660 editable install of `dist` (setuptools' editable_wheel, `pip install -e`) keeps the
    top-level module `module`: setuptools builds extensions in place, in the project directory, and puts in
    site-packages either `__editable__.<name>-<version>.pth` listing that directory (a static path), or that .pth
    importing `__editable___<name>_<version>_finder`, whose MAPPING names each top-level package and module with its
    path in the project (a meta path finder). The directory of the module's entry, else the first directory a
    static .pth lists; None where neither was read. The files are read, never run."""
    for item in sorted(listdir_or_empty(view, site)):
        if not (item.startswith("__editable__.") and item.endswith(".pth")):
            continue
        if normalise(item[len("__editable__.") : -len(".pth")].split("-")[0]) != dist:
            continue
        lines = [ln.strip() for ln in read_text(view, posixpath.join(site, item), SMALL_FILE_CAP).splitlines()]
        for line in lines:
            found = _FINDER_IMPORT.match(line)
            if found is None:
                continue
            finder = read_text(view, posixpath.join(site, found.group(1) + ".py"), SMALL_FILE_CAP)
            literal = _FINDER_MAPPING.search(finder)
            if literal is None:
                return None
            from stackcheck.pyast import literal_eval

            try:
                mapping = literal_eval(literal.group(1))
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                return None
            path = mapping.get(module) if isinstance(mapping, dict) else None
            return posixpath.dirname(path) if isinstance(path, str) and path.startswith("/") else None
        paths = [ln for ln in lines if ln.startswith("/")]
        if paths:
            return paths[0]
    return None


#: distributions whose import loads a compiled top-level module of another name beside the package (DeepEP's
#: deep_ep/__init__.py imports deep_ep_cpp, built by its setup.py as a top-level extension): the files of that name
#: in the distribution's location are listed (packages.NAME.extension_files; the gate's check moe-a2a-package)
EXTENSION_MODULES: dict[str, str] = {"deep-ep": "deep_ep_cpp"}


def extension_files(location: str, module: str, view: FileView) -> list[str]:
    """The names in `location` of the compiled module `module` (`deep_ep_cpp.cpython-312-x86_64-linux-gnu.so`,
    `deep_ep_cpp.abi3.so`, `deep_ep_cpp.so`), sorted; which of them a Python's import takes is the check's."""
    prefix = module + "."
    return sorted(n for n in view.listdir(location) if n.startswith(prefix) and n.endswith(".so"))


#: the libraries of an extension module whose place the gate judges (DeepEP's deep_ep_cpp: NVSHMEM's host library)
EXTENSION_LINKED = _lazy(r"^libnvshmem[\w]*\.so(\.\d+)*$")
MAX_EXTENSION_FILES = 8


def extension_links(
    entry: Mapping[str, Any],
    env: Mapping[str, str],
    view: FileView,
    interpreter: str | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """For each listed file of the extension module (packages.NAME.extension_files), the NVSHMEM libraries it needs
    (DT_NEEDED) and where the dynamic loader finds each, read, never loaded: {file: {"needed": [...], "rpath",
    "runpath", "found": {soname: path | None}, "unreadable"?: {soname: why}}, or {"error": why}}. A library is
    looked for in glibc's loader order (elf/dl-load.c _dl_map_object; ld.so(8)): for a file without DT_RUNPATH, its
    DT_RPATH ($ORIGIN expanded), then as the cudalibs probe looks with the audited `interpreter`'s DT_RPATH first (the
    executable's RPATH serves every object without a RUNPATH: a conda Python's $ORIGIN/../lib), LD_LIBRARY_PATH, the
    ld.so cache file, the default directories; for a file with DT_RUNPATH, LD_LIBRARY_PATH, then its RUNPATH, then
    the cache and the default directories (no RPATH counts). `wheel_copies` lists the copies in the nvidia-* wheels'
    lib directories beside the distribution, which torch may load first by their soname. LD_LIBRARY_PATH is read as
    the loader reads it (ldpath.ld_library_path: `:` and `;`, empty and relative elements from `cwd`, the server's
    directory where known); a library not found before an element that cannot be placed is unknown (`unreadable`),
    never found past it nor missing (the lead, 2026-12-06: this reading split at `:` and dropped such elements)."""
    from stackcheck.probes.cudalibs import _library_kind, box_machine, probe_cuda_libs
    from stackcheck.readers.elf import ElfError, ElfFile
    from stackcheck.readers.ldpath import ld_library_path, unplaced_reason
    from stackcheck.readers.libs import expand_dirs, nvidia_wheel_dirs

    where = str(entry.get("extension_dir") or entry.get("location") or "")
    files = [f for f in entry.get("extension_files") or [] if isinstance(f, str)][:MAX_EXTENSION_FILES]
    out: dict[str, Any] = {}
    machine = 0
    for name in files:
        path = posixpath.join(where, name)
        try:
            with ElfFile(path, view) as elf:
                dyn = elf.dynamic()
                machine = machine or elf.header.e_machine
        except (ElfError, OSError) as exc:
            out[name] = {"error": str(exc)[:300]}
            continue
        needed = [n for n in dyn.needed if EXTENSION_LINKED.match(n)]
        record: dict[str, Any] = {"needed": needed, "rpath": dyn.rpath, "runpath": dyn.runpath, "found": {}}
        # the loader reads DT_RPATH only where there is no DT_RUNPATH
        own = expand_dirs(dyn.runpath or dyn.rpath, where, machine or box_machine(view))
        ld, unplaced = ld_library_path(env.get("LD_LIBRARY_PATH"), cwd) if dyn.runpath else ([], None)
        for soname in needed:
            hit = None
            for at, d in enumerate([*ld, *own]):  # (LD_LIBRARY_PATH comes before a RUNPATH)
                if at == len(ld) and unplaced is not None:  # the search past LD_LIBRARY_PATH's unplaced element
                    record.setdefault("unreadable", {})[soname] = unplaced_reason(unplaced)
                    break
                kind = _library_kind(view, posixpath.join(d, soname), machine)
                if kind == "ok":
                    hit = posixpath.join(d, soname)
                    break
                if kind.startswith("unknown"):
                    record.setdefault("unreadable", {})[soname] = f"{d}/{soname}: {kind.partition(': ')[2]}"
                    break
            if hit is None and soname not in record.get("unreadable", {}):
                libs = probe_cuda_libs(env, view, (soname,), None if dyn.runpath else interpreter, cwd=cwd)
                hit = libs.get(soname)
                if soname in (libs.get("unreadable") or {}):
                    record.setdefault("unreadable", {})[soname] = libs["unreadable"][soname]
            record["found"][soname] = hit
            if hit is None:
                site = str(entry.get("location") or "")
                copies = [posixpath.join(d, soname) for d in nvidia_wheel_dirs(site, view) if site]
                record["wheel_copies"] = [c for c in copies if _library_kind(view, c, machine) == "ok"]
        out[name] = record
    return out


class PackagesProbe(Probe):
    name: ClassVar[str] = "packages"
    timeout_s: ClassVar[float] = 5.0
    sections: ClassVar[tuple[str, ...]] = ("packages",)
    needs: ClassVar[tuple[str, ...]] = ("python",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        try:
            search = ctx.search_dirs()
        except SearchPathUnknown as exc:
            return ProbeResult(self.failure_facts(str(exc)), "failed", str(exc))
        found = find_distributions(set(WANTED), search, ctx.fs)
        packages = {name: package_facts(name, found.get(name, []), ctx.fs) for name in WANTED}
        first = ctx.launch_sys_path0()
        if first:  # `python -m` from a checkout: its ./sglang is imported, not the installed one
            shadow_launch_dir(packages, first, ctx.fs)
        for name, entry in packages.items():
            if name in EXTENSION_MODULES and isinstance(entry.get("extension_files"), list):
                from stackcheck.probes.cudalibs import _interpreter

                # (only where DeepEP is installed)
                # the server's loader environment (a gated command's own LD_LIBRARY_PATH) and directory, as the
                # cuda_libs probe reads them
                links = extension_links(entry, ctx.loader_environ, ctx.fs, _interpreter(ctx), ctx.launch_cwd)
                if links:
                    entry["extension_links"] = links
        errors = [f"{n}: {p['error']}" for n, p in packages.items() if "error" in p]
        status: ProbeStatus = "partial" if errors else "ok"
        reason = None
        if errors:
            reason = errors[0] + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
        return ProbeResult({"packages": packages}, status, reason)

    def failure_facts(self, reason: str) -> dict[str, Any]:
        return {"packages": {name: {"error": reason} for name in WANTED}}
