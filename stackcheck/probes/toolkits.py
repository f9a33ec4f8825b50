"""CUDA toolkits probe: every toolkit a build or torch could pick up, its version, and which is active.

Candidates: $CUDA_HOME, $CUDA_PATH, the toolkit of the `nvcc` found on $PATH, /usr/local/cuda and
/usr/local/cuda-*, and pip-installed toolkit wheels. Deduplicated by resolved real path (first candidate
wins, so the more specific source is recorded). Versions come from version.json, version.txt, the
toolkit's dist-info directories (toolkits assembled from wheels), or `nvcc --version`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, ClassVar

from stackcheck.probes.interface import CommandTimeout, Probe, ProbeContext, ProbeResult, run_command
from stackcheck.probes.packages import find_distributions

PIP_TOOLKITS = (
    "nvidia-cuda-runtime",
    "nvidia-cuda-runtime-cu12",
    "nvidia-cuda-runtime-cu13",
    "nvidia-cuda-nvcc",
    "nvidia-cuda-nvcc-cu12",
    "nvidia-cuda-nvcc-cu13",
    "cuda-toolkit",
)
_PIP_SUBDIRS = ("nvidia/cu13", "nvidia/cuda_runtime", "nvidia/cuda_nvcc")
_NVCC_RELEASE = re.compile(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)")
_VERSION_TXT = re.compile(r"CUDA Version (\d+\.\d+(?:\.\d+)?)")
_DIST_INFO = re.compile(r"^nvidia_cuda_(?:nvcc|cudart|runtime)-(\d+\.\d+\.\d+)")


def parse_nvcc_version(text: str) -> str | None:
    """'... release 13.0, V13.0.88' -> '13.0.88'."""
    m = _NVCC_RELEASE.search(text)
    return m.group(2) if m else None


def read_toolkit_version(path: Path) -> str | None:
    """A toolkit directory's version from version.json, version.txt or its dist-info directories."""
    vj = path / "version.json"
    if vj.is_file():
        try:
            data = json.loads(vj.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict):
            for key in ("cuda", "cuda_nvcc", "cuda_cudart"):
                part = data.get(key)
                if isinstance(part, dict) and isinstance(part.get("version"), str):
                    return str(part["version"])
    vt = path / "version.txt"
    if vt.is_file():
        try:
            m = _VERSION_TXT.search(vt.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            m = None
        if m:
            return m.group(1)
    info = path / "dist-info"
    if info.is_dir():  # a toolkit assembled from the nvidia-cuda-* wheels
        try:
            names = sorted(os.listdir(info))
        except OSError:
            names = []
        for name in names:
            m = _DIST_INFO.match(name)
            if m and name.startswith("nvidia_cuda_nvcc"):
                return m.group(1)
        for name in names:
            m = _DIST_INFO.match(name)
            if m:
                return m.group(1)
    return None


def _real(path: Path) -> str:
    try:
        return os.path.realpath(path)
    except OSError:
        return str(path)


class ToolkitsProbe(Probe):
    name: ClassVar[str] = "toolkits"
    timeout_s: ClassVar[float] = 5.0
    sections: ClassVar[tuple[str, ...]] = ("cuda_toolkits",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        entries: list[dict[str, Any]] = []
        by_real: dict[str, dict[str, Any]] = {}
        notes: list[str] = []

        def add(box_path: str, fs_path: Path, source: str) -> dict[str, Any]:
            key = _real(fs_path)
            if key in by_real:
                return by_real[key]
            entry: dict[str, Any] = {"path": box_path, "version": None, "source": source, "nvcc": None}
            try:
                if not fs_path.exists():
                    entry["error"] = f"{box_path} does not exist"
                elif not fs_path.is_dir():
                    entry["error"] = f"{box_path} is not a directory"
                else:
                    entry["version"] = read_toolkit_version(fs_path)
                    nvcc = fs_path / "bin" / "nvcc"
                    if nvcc.is_file():
                        entry["nvcc"] = ctx.unrooted(nvcc)
            except OSError as exc:  # e.g. a parent directory this user cannot enter
                entry["error"] = f"{box_path}: cannot read: {exc.strerror or exc}"
            entry["active_for_build"] = False
            entry["active_for_torch"] = False
            by_real[key] = entry
            entries.append(entry)
            return entry

        # Which toolkit a source build uses, in the order torch.utils.cpp_extension looks:
        # $CUDA_HOME or $CUDA_PATH, then the parent of the bin/ directory holding the `nvcc` on $PATH,
        # then /usr/local/cuda when it exists.
        build_choice: dict[str, Any] | None = None
        for var in ("CUDA_HOME", "CUDA_PATH"):
            value = ctx.env.get(var)
            if value:
                entry = add(value, ctx.rooted(value), var)
                build_choice = build_choice or entry

        nvcc_path = shutil.which("nvcc", path=ctx.env.get("PATH", ""))
        if nvcc_path is not None:
            home = Path(nvcc_path).parent.parent
            entry = add(ctx.unrooted(home), home, "nvcc")
            if entry["nvcc"] is None:
                entry["nvcc"] = ctx.unrooted(nvcc_path)
            if entry["version"] is None:
                version, why = self._nvcc_version(nvcc_path, ctx)
                if version is not None:
                    entry["version"] = version
                elif why:
                    notes.append(why)
            build_choice = build_choice or entry

        usr_local = ctx.rooted("/usr/local")
        default = usr_local / "cuda"
        if default.exists():
            entry = add("/usr/local/cuda", default, "/usr/local/cuda")
            build_choice = build_choice or entry
        try:
            versioned = sorted(p for p in usr_local.glob("cuda-*") if p.is_dir())
        except OSError:
            versioned = []
        for p in versioned:
            add(ctx.unrooted(p), p, "/usr/local/cuda")

        found = find_distributions(set(PIP_TOOLKITS), ctx.search_dirs())
        for name in PIP_TOOLKITS:
            for record in found.get(name, []):
                base = Path(record.location)
                path = next((base / sub for sub in _PIP_SUBDIRS if (base / sub).is_dir()), base)
                key = f"pip:{name}:{_real(path)}"
                if key in by_real:
                    continue
                entry = {
                    "path": str(path),
                    "version": record.version,
                    "source": "pip",
                    "nvcc": None,
                    "active_for_build": False,
                    "active_for_torch": False,
                }
                if record.error:
                    entry["error"] = record.error
                by_real[key] = entry
                entries.append(entry)

        if build_choice is not None:
            build_choice["active_for_build"] = True
        errors = [e["error"] for e in entries if "error" in e] + notes
        if errors:
            return ProbeResult({"cuda_toolkits": entries}, "partial", errors[0])
        return ProbeResult({"cuda_toolkits": entries})

    @staticmethod
    def _nvcc_version(nvcc: str, ctx: ProbeContext) -> tuple[str | None, str | None]:
        try:
            rc, out, _err = run_command([nvcc, "--version"], ctx.subprocess_timeout_s, ctx.env)
        except CommandTimeout as exc:
            return None, str(exc)
        except OSError as exc:
            return None, f"{nvcc}: cannot run: {exc.strerror or exc}"
        version = parse_nvcc_version(out)
        if version is None:
            return None, f"{nvcc} --version: exited {rc}, no 'release X.Y, VX.Y.Z' in its output"
        return version, None
