"""`--enable-symm-mem` where the libcudart.so torch's `-lcudart` takes is another CUDA major's runtime than torch's
(igap29, issue 16 class 6; checks.json nccl rule symm-mem-allocator-cudart-major, probe key jit.libcudart_so_soname).

A CUDA 12 toolkit's lib64/libcudart.so (DT_SONAME libcudart.so.12) as CUDA_HOME beside torch cu130 (libcudart.so.13):
the link succeeds (ld takes any libcudart.so), and where it keeps the library the allocator's DT_NEEDED names
libcudart.so.12, which torch's runtime does not answer and no RUNPATH points at (torch's _prepare_ldflags adds an
-rpath only for is_standalone: torch 2.11.0 cpp_extension.py:2490-2491; the build is loaded with
torch.ops.load_library, :2818). The allocator calls no CUDA runtime function, so a linker run with --as-needed (Debian's
gcc, read here) drops it. Neither that nor the loader's search is read: unknown, refused. Before: rule
symm-mem-allocator-cudart-link saw a libcudart.so and the gate allowed."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, allocator_box, gate_json, model_dir, rule_results
from registry_wheels import CACHE

from stackcheck.probes.jit import nccl_link
from stackcheck.readers.fsview import HostView

RULE = "symm-mem-allocator-cudart-major"


def _home(tmp_path: Path, soname: str | None) -> Path:
    """A CUDA home whose lib64/libcudart.so links to a library built here with DT_SONAME `soname` (None: a linker
    script in its place, no ELF)."""
    lib = tmp_path / "cuda" / "lib64"
    lib.mkdir(parents=True)
    if soname is None:
        (lib / "libcudart.so").write_text("INPUT(libcudart.so.12)\n")
        return lib.parent
    (tmp_path / "rt.c").write_text("int cudaGetDeviceCount(int *n) { *n = 0; return 0; }\n")
    real = lib / f"{soname}.8.90"
    subprocess.run(["gcc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(real), str(tmp_path / "rt.c")],
                   check=True, capture_output=True)  # fmt: skip
    (lib / "libcudart.so").symlink_to(real.name)
    return lib.parent


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("soname", ["libcudart.so.12", "libcudart.so.13", None])
def test_the_probe_reads_the_soname_of_the_libcudart_so_it_finds(tmp_path: Path, soname: str | None) -> None:
    home = _home(tmp_path, soname)
    got = nccl_link({}, HostView(), str(home), True, "x86_64")
    assert got["libcudart_so_found"] is True and got["libcudart_so"] == f"{home}/lib64/libcudart.so", got
    assert got.get("libcudart_so_soname") == soname, got


def test_the_cuda_runtime_wheels_say_their_major(tmp_path: Path) -> None:
    """The pip runtimes' own files (nvidia-cuda-runtime-cu12 12.8.90, nvidia-cuda-runtime 13.0.96): the sonames the
    rule compares with torch.cuda. Skipped where the wheels are not cached."""
    from stackcheck.readers.elf import DynamicSymbols, ElfFile

    seen = {}
    for pattern, member in [("nvidia_cuda_runtime_cu12-12.8.90-*.whl", "nvidia/cuda_runtime/lib/libcudart.so.12"),
                            ("nvidia_cuda_runtime-13.0.96-*.whl", "nvidia/cu13/lib/libcudart.so.13")]:  # fmt: skip
        wheel = next(iter(sorted(CACHE.glob(pattern))), None)
        if wheel is None:
            pytest.skip(f"{pattern} not cached")
        name = member.rsplit("/", 1)[1]
        with zipfile.ZipFile(wheel) as zf:
            (tmp_path / name).write_bytes(zf.read(member))
        with ElfFile(tmp_path / name) as elf:
            seen[name] = DynamicSymbols(elf).soname
    assert seen == {"libcudart.so.12": "libcudart.so.12", "libcudart.so.13": "libcudart.so.13"}


def _box(tmp_path: Path, release: str, soname: str | None) -> Path:
    """gate_cli.allocator_box at `release`, its -lcudart taking a CUDA 12.8 home's libcudart.so whose DT_SONAME is
    `soname` (None: not read)."""
    return allocator_box(tmp_path, release, libcudart_so="/usr/local/cuda-12.8/lib64/libcudart.so",
                         libcudart_so_soname=soname)  # fmt: skip


def _gate(tmp_path: Path, release: str, soname: str | None, *flags: str) -> dict[str, Any]:
    facts = _box(tmp_path, release, soname)
    return gate_json(facts, "--model-path", str(model_dir(tmp_path, "llama3", LLAMA3)), *flags, dry_run=True)


@pytest.mark.parametrize("release", ["0.5.1", "0.5.5", "0.5.23"])
def test_a_cuda_12_runtime_for_a_cuda_13_torch_is_unknown(tmp_path: Path, release: str) -> None:
    # fails on the parent: allowed (symm-mem-allocator-cudart-link read only that a libcudart.so was there)
    doc = _gate(tmp_path, release, "libcudart.so.12", "--tp", "2", "--enable-symm-mem")
    assert doc["decision"] == "refuse" and rule_results(doc, RULE) == [("unknown", "unknown")], doc.get("reasons")
    reason = next(x for r in doc["reasons"] for x in r["reasons"] if x.get("rule") == RULE)
    assert "DT_NEEDED" in reason["message"] and reason["effect"] == "crash", reason
    assert any("cpp_extension.py" in str(s.get("title")) for s in reason.get("source") or []), reason


@pytest.mark.parametrize("soname", ["libcudart.so.13", None])
def test_the_same_major_or_no_soname_read_leaves_the_rule_out(tmp_path: Path, soname: str | None) -> None:
    doc = _gate(tmp_path, "0.5.23", soname, "--tp", "2", "--enable-symm-mem")
    assert rule_results(doc, RULE) == [] and doc["decision"] == "allow", doc.get("reasons")


def test_without_symm_mem_the_rule_does_not_apply(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.23", "libcudart.so.12", "--tp", "2")
    assert rule_results(doc, RULE) == [], doc.get("reasons")
