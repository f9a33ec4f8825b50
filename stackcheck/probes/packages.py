"""Packages probe: the installed distributions that matter for serving, read from metadata as text.

Nothing probed is imported. Instead of enumerating every distribution, each search directory is listed
once and only the `*.dist-info` / `*.egg-info` / `*.egg-link` entries of the wanted names are read (the
METADATA headers up to the first blank line). torch's own version comes from `torch/version.py`, parsed
with `ast`.
"""

from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult, ProbeStatus

WANTED = (
    "torch",
    "torchvision",
    "triton",
    "pytorch-triton",
    "sgl-kernel",
    "sglang-kernel",
    "flashinfer-python",
    "flashinfer-cubin",
    "flashinfer-jit-cache",
    "sglang",
    "vllm",
    "nvidia-nccl-cu12",
    "nvidia-nccl-cu13",
    "nvidia-cuda-runtime",
    "nvidia-cuda-runtime-cu12",
    "nvidia-ml-py",
    "cuda-python",
    "sgl-deep-gemm",
    "deep-gemm",
    "nvidia-cudnn-cu12",
    "nvidia-cudnn-cu13",
    "nvidia-cuda-nvrtc-cu12",
    "nvidia-cuda-nvrtc",
    "nvidia-cublas-cu12",
    "nvidia-cublas",
)
LOCAL_VARIANT = re.compile(r"\+(cu\d+|cpu|rocm[\d.]+)", re.IGNORECASE)
_NORMALISE = re.compile(r"[-_.]+")


def normalise(name: str) -> str:
    """PEP 503 normalised distribution name."""
    return _NORMALISE.sub("-", name).lower()


@dataclass
class DistRecord:
    """One installed copy of a distribution."""

    name: str  # normalised
    location: str  # the directory the distribution is installed into (site-packages, or a project)
    meta_dir: Path | None  # the .dist-info / .egg-info directory (None for an egg-link without one)
    version: str | None = None
    error: str | None = None
    editable: bool = False


#: METADATA headers are a few kilobytes; what is past this is not read (a file that is /dev/zero, say)
HEADERS_CAP = 1 << 20
#: torch/version.py is a few hundred bytes; a larger one is refused rather than parsed (ast.parse holds the
#: interpreter lock: a huge file would stall every probe past its timeout)
VERSION_PY_CAP = 64 * 1024


def _regular_file(path: Path) -> None:
    """Refuse FIFOs, devices and directories before opening them (opening a FIFO blocks)."""
    import stat

    if not stat.S_ISREG(path.stat().st_mode):
        raise ValueError(f"{path}: not a regular file")


def _read_headers(path: Path) -> dict[str, str]:
    """The RFC 822 headers of a METADATA / PKG-INFO file, up to the first blank line."""
    headers: dict[str, str] = {}
    _regular_file(path)
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh.read(HEADERS_CAP).splitlines():
            if not line.strip():
                break
            if line[:1] in (" ", "\t"):
                continue
            key, sep, value = line.partition(":")
            if sep and key not in headers:
                headers[key.strip()] = value.strip()
    return headers


def _read_meta(record: DistRecord) -> None:
    meta_dir = record.meta_dir
    if meta_dir is None:
        return
    meta_file = meta_dir / ("PKG-INFO" if meta_dir.name.endswith(".egg-info") else "METADATA")
    if meta_dir.is_file():  # a single-file .egg-info
        meta_file = meta_dir
    try:
        headers = _read_headers(meta_file)
    except FileNotFoundError:
        record.error = f"{meta_file}: missing"
        return
    except OSError as exc:
        record.error = f"{meta_file}: cannot read: {exc.strerror or exc}"
        return
    except ValueError as exc:  # not a regular file
        record.error = str(exc)
        return
    version = headers.get("Version")
    if not version:
        record.error = f"{meta_file}: no Version header"
        return
    record.version = version
    direct_url = meta_dir / "direct_url.json"
    if direct_url.is_file():
        try:
            data = json.loads(direct_url.read_text(encoding="utf-8"))
            dir_info = data.get("dir_info") if isinstance(data, dict) else None
            if isinstance(dir_info, dict) and dir_info.get("editable") is True:
                record.editable = True
        except (OSError, ValueError):
            pass


def find_distributions(names: set[str], search_dirs: list[str]) -> dict[str, list[DistRecord]]:
    """Every copy of each wanted (normalised) name on the search path, in search-path order."""
    found: dict[str, list[DistRecord]] = {}
    seen_dirs: set[str] = set()
    for entry in search_dirs:
        directory = entry or "."
        try:
            real = os.path.realpath(directory)
        except OSError:
            continue
        if real in seen_dirs:
            continue
        seen_dirs.add(real)
        try:
            listing = os.listdir(directory)
        except OSError:  # missing directory, a zip file, no permission
            continue
        editable_pth: set[str] = set()
        candidates: list[tuple[str, str]] = []
        for item in listing:
            if item.startswith("__editable__.") and item.endswith(".pth"):
                editable_pth.add(normalise(item[len("__editable__.") : -len(".pth")].split("-")[0]))
                continue
            for suffix in (".dist-info", ".egg-info", ".egg-link"):
                if item.endswith(suffix):
                    stem = item[: -len(suffix)]
                    # name-version for dist-info / egg-info; an egg-link is the bare project name
                    dist_name = normalise(stem if suffix == ".egg-link" else stem.split("-")[0])
                    if dist_name in names:
                        candidates.append((dist_name, item))
                    break
        for dist_name, item in sorted(candidates, key=lambda c: c[1]):
            path = Path(directory) / item
            if item.endswith(".egg-link"):
                record = _from_egg_link(dist_name, path)
            else:
                record = DistRecord(dist_name, directory, path)
                _read_meta(record)
                if item.endswith(".egg-info") and not _is_site_dir(directory):
                    record.editable = True  # a project directory put on sys.path (setup.py develop)
            if dist_name in editable_pth:
                record.editable = True
            found.setdefault(dist_name, []).append(record)
    return found


def _is_site_dir(directory: str) -> bool:
    return Path(directory).name in ("site-packages", "dist-packages")


def _from_egg_link(dist_name: str, path: Path) -> DistRecord:
    try:
        target = path.read_text(encoding="utf-8").splitlines()[0].strip()
    except (OSError, IndexError):
        error = f"{path}: unreadable egg-link"
        return DistRecord(dist_name, str(path.parent), None, error=error, editable=True)
    record = DistRecord(dist_name, target, None, editable=True)
    project = Path(target)
    try:
        infos = [p for p in project.iterdir() if p.name.endswith(".egg-info")]
    except OSError:
        infos = []
    if infos:
        record.meta_dir = infos[0]
        _read_meta(record)
    else:
        record.error = f"{path}: points to {target} which has no .egg-info"
    return record


def read_torch_version_py(location: str) -> dict[str, str | None]:
    """`__version__`, `cuda`, `hip` and `git_version` from `<location>/torch/version.py`, read with ast."""
    path = Path(location) / "torch" / "version.py"
    _regular_file(path)
    if path.stat().st_size > VERSION_PY_CAP:
        raise ValueError(f"{path}: {path.stat().st_size} bytes, too large for torch's version.py; not parsed")
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    values: dict[str, str | None] = {}
    for node in tree.body:
        target: ast.expr | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if (
            isinstance(target, ast.Name)
            and isinstance(value, ast.Constant)
            and (isinstance(value.value, str) or value.value is None)
        ):
            values[target.id] = value.value
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


def package_facts(name: str, copies: list[DistRecord]) -> dict[str, Any]:
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
    if len(copies) > 1:
        entry["other_locations"] = [c.location for c in copies[1:]]
    if first.error:
        entry["error"] = first.error
    if name == "torch":
        entry.update(cuda=None, variant=None, git_version=None)
        try:
            tv = read_torch_version_py(first.location)
        except (OSError, SyntaxError, ValueError, MemoryError, RecursionError) as exc:
            msg = f"torch/version.py: {getattr(exc, 'strerror', None) or exc or type(exc).__name__}"
            entry["error"] = f"{entry['error']}; {msg}" if "error" in entry else msg
            entry["variant"] = variant_from(first.version)
        else:
            entry["version"] = tv.get("__version__") or first.version
            entry["cuda"] = tv.get("cuda")
            entry["git_version"] = tv.get("git_version")
            entry["variant"] = variant_from(entry["version"], entry["cuda"], tv.get("hip")) or "cpu"
    elif name in ("sgl-kernel", "sglang-kernel"):
        entry["variant"] = variant_from(first.version)
    return entry


class PackagesProbe(Probe):
    name: ClassVar[str] = "packages"
    timeout_s: ClassVar[float] = 5.0
    sections: ClassVar[tuple[str, ...]] = ("packages",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        found = find_distributions(set(WANTED), ctx.search_dirs())
        packages = {name: package_facts(name, found.get(name, [])) for name in WANTED}
        errors = [f"{n}: {p['error']}" for n, p in packages.items() if "error" in p]
        status: ProbeStatus = "partial" if errors else "ok"
        reason = None
        if errors:
            reason = errors[0] + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
        return ProbeResult({"packages": packages}, status, reason)

    def failure_facts(self, reason: str) -> dict[str, Any]:
        return {"packages": {name: {"error": reason} for name in WANTED}}
