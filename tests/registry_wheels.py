"""Real wheels for the registry tests: downloaded once with `pip download --no-deps` into the shared cache
~/.cache/stackcheck-tests/wheels (written atomically: into a private temporary directory beside the cache,
then renamed in), and skipped when the registry cannot be reached."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

CACHE = Path.home() / ".cache" / "stackcheck-tests" / "wheels"
PLATFORMS = ("manylinux_2_34_x86_64", "manylinux_2_28_x86_64", "manylinux2014_x86_64", "any")

#: Set to 1 to run the registry tests over every release in the ranges (the default is a few wheels).
ALL_ENV = "STACKCHECK_REGISTRY_ALL"


def run_all() -> bool:
    return os.environ.get(ALL_ENV, "").lower() not in ("", "0", "false", "no")


def cached(dist: str, version: str, python: str | None = None) -> Path | None:
    """The cached wheel of dist==version (of CPython `python`, "3.10", when given: an extension's file name and
    its linking can differ between a release's cp310 and cp312 builds)."""
    stem = f"{dist.replace('-', '_')}-{version}-" + (f"cp{python.replace('.', '')}-" if python else "")
    hits = sorted(p for p in CACHE.glob(f"{stem}*.whl") if not p.name.startswith("."))
    if python is None:  # the 3.12 build fetch_wheel downloads, not another CPython's build cached beside it
        hits = [p for p in hits if not re.search(r"-cp3\d+-cp3\d+-", p.name) or "-cp312-cp312-" in p.name]
    # the x86_64 (or pure) build fetch_wheel downloads, not an Arm build another test or bench cached beside it
    # (an aarch64 wheel sorts first and carries other libraries and target lists)
    hits = [p for p in hits if not any(arm in p.name for arm in ("aarch64", "arm64"))]
    return hits[0] if hits else None


def fetch_wheel(dist: str, version: str, python: str | None = None) -> Path:
    """The cached wheel for dist==version, downloading it first (for CPython `python`, default 3.12); skips the
    test when that fails."""
    hit = cached(dist, version, python)
    if hit is not None:
        return hit
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE, prefix=".download-") as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            python or "3.12",
        ]
        for platform in PLATFORMS:
            cmd += ["--platform", platform]
        cmd += ["--disable-pip-version-check", "-q", "-d", tmp, f"{dist}=={version}"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.skip(f"pip download {dist}=={version} failed: {exc}")
        got = sorted(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or not got:
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            pytest.skip(f"pip download {dist}=={version} failed (rc {proc.returncode}): {last}")
        for wheel in got:
            target = CACHE / wheel.name
            if not target.exists():
                shutil.move(str(wheel), target)  # same file system: a rename
    hit = cached(dist, version, python)
    if hit is None:
        pytest.skip(f"pip download {dist}=={version}: no wheel named {dist}-{version}-*")
    return hit


def extract(wheel: Path, root: Path, keep: Callable[[str], bool]) -> Path:
    """The members of `wheel` that `keep` takes, written below `root` as they would be installed (a member
    naming a parent directory is never written)."""
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if keep(name) and ".." not in name:
                target = root / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(name))
    return root


def extract_dynamic(wheel: Path, member: str) -> Path:
    """One ELF member of `wheel` as a sparse file of its full size holding only what the loader reads to bind
    symbols (the ELF and program headers, PT_DYNAMIC, and every PT_LOAD segment that is neither executable nor
    larger than 64 MiB: .dynsym, .dynstr and the hash tables, also where patchelf moved them to a segment of
    their own at the end, as in torch's wheels); code, .rodata with the fatbins and the section headers are
    holes. Cached beside the wheels, so a torch wheel's libraries (1.5 GB unpacked) cost some tens of MB of
    disk and one streaming pass, once. A table left in a hole reads as zeros: the tests then fail, never pass."""
    import struct
    import zipfile

    target = CACHE.parent / "dynamic" / wheel.name / member
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as zf, zf.open(member) as src:
        size = zf.getinfo(member).file_size
        head = src.read(1 << 16)
        phoff, phentsize, phnum = struct.unpack_from("<Q", head, 32)[0], *struct.unpack_from("<HH", head, 54)
        ranges = [(0, len(head))]
        for i in range(phnum):
            p_type, p_flags, p_offset, _, _, p_filesz, _, _ = struct.unpack_from(
                "<IIQQQQQQ", head, phoff + i * phentsize
            )
            if p_type == 2 or (p_type == 1 and not p_flags & 1 and p_filesz <= 64 << 20):  # PT_DYNAMIC, PT_LOAD
                ranges.append((p_offset, p_offset + p_filesz))
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".part-")
        with os.fdopen(fd, "wb") as out:
            out.truncate(size)
            pos, chunk = 0, head
            end = max(hi for _, hi in ranges)
            while chunk and pos < end:
                for lo, hi in ranges:
                    a, b = max(lo, pos), min(hi, pos + len(chunk))
                    if a < b:
                        out.seek(a)
                        out.write(chunk[a - pos : b - pos])
                pos += len(chunk)
                chunk = src.read(8 << 20)
    os.replace(tmp, target)
    return target


def read_texts(wheel: Path, keep: Callable[[str], bool]) -> dict[str, str]:
    """The members of `wheel` that `keep` takes, by name, as text (undecodable bytes replaced)."""
    import zipfile

    with zipfile.ZipFile(wheel) as zf:
        return {name: zf.read(name).decode("utf-8", "replace") for name in zf.namelist() if keep(name)}


def is_argument_source(name: str) -> bool:
    """An SGLang wheel's argument-handling sources: server_args.py and arg_groups/**.py."""
    return name == "sglang/srt/server_args.py" or (name.startswith("sglang/srt/arg_groups/") and name.endswith(".py"))
