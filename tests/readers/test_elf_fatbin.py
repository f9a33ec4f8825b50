"""ELF reader, fatbin walker, package binary scan and per-GPU coverage."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from stackcheck.readers import binaries
from stackcheck.readers.elf import ElfError, ElfFile
from stackcheck.readers.fatbin import KIND_ELF, KIND_PTX, cubin_info, scan_fatbins

DATA = Path(__file__).parent.parent / "data" / "fatbin"
EXPECTED = {k: v for k, v in json.loads((DATA / "expected.json").read_text()).items() if not k.startswith("_")}
REPO = Path(__file__).resolve().parent.parent.parent
NVCC = shutil.which("nvcc")


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_binary_probe", REPO / "bench" / "bench_binary_probe.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _targets(path: Path) -> dict[str, object]:
    with ElfFile(path) as elf:
        if path.suffix == ".cubin":
            info = cubin_info(elf)
            return {"sass": [info.target], "ptx": []}
        scan = scan_fatbins(elf)
        assert scan.warnings == []
        return {"sass": scan.sass, "ptx": scan.ptx, "compressed": scan.compressed_entries,
                "entries": len(scan.entries)}  # fmt: skip


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recorded_files(name: str) -> None:
    assert _targets(DATA / name) == EXPECTED[name]


def test_entry_fields_of_multi() -> None:
    """Field by field against what nvcc was asked to embed; payloads checked by reading them in the test."""
    path = DATA / "multi.o"
    raw = path.read_bytes()
    with ElfFile(path) as elf:
        entries = scan_fatbins(elf).entries
    got = [(e.kind, e.header_size, e.target, e.compression) for e in entries]
    assert got == [
        (KIND_ELF, 64, "sm_90a", None),
        (KIND_ELF, 112, "sm_120", None),
        (KIND_PTX, 80, "compute_120", "zstd"),
        (KIND_ELF, 112, "sm_100f", None),
        (KIND_PTX, 80, "compute_100f", "zstd"),
        (KIND_ELF, 64, "sm_80", None),
    ]
    for e in entries:
        payload = raw[e.offset + e.header_size : e.offset + e.header_size + 4]
        if e.compressed:
            assert payload == b"\x28\xb5\x2f\xfd"  # zstd frame magic
            assert 0 < e.compressed_size <= e.payload_size < e.compressed_size + 8
            assert e.uncompressed_size > 0
        elif e.is_elf:
            assert payload == b"\x7fELF"
            assert e.code_version == (1, 8)
        if e.is_ptx:
            assert e.code_version == (9, 0)  # PTX ISA 9.0 (CUDA 13.0)


def test_headers_only_on_big_synthetic_file(tmp_path: Path) -> None:
    bench = _bench()
    path = tmp_path / "libbig.so"
    layout = bench.make_synthetic_fatbin_elf(path, 64 << 20, 1000)
    with ElfFile(path) as elf:
        scan = scan_fatbins(elf)
        read = elf.bytes_read
    assert len(scan.entries) == 1000 and scan.containers == layout["containers"]
    assert scan.sass == ["sm_80", "sm_90a", "sm_100f", "sm_120"] and scan.ptx == ["compute_120"]
    # ELF header + section table + names + one 16-byte header per container + 64 bytes per entry
    expected = 64 + 3 * 64 + 22 + 16 * layout["containers"] + 64 * 1000
    assert read == expected
    assert read < path.stat().st_size / 500


def test_garbage_inputs_become_error_entries(tmp_path: Path) -> None:
    site = tmp_path / "site"
    lib = site / "torch" / "lib"
    lib.mkdir(parents=True)
    (lib / "libjunk.so").write_bytes(os.urandom(4096))
    (lib / "libempty.so").write_bytes(b"")
    (lib / "libtext.so").write_text("INPUT(-lfoo)\n")  # a linker script named .so
    whole = (DATA / "multi.o").read_bytes()
    (lib / "libtrunc.so").write_bytes(whole[: len(whole) // 2])  # section table cut off
    (lib / "lib32.so").write_bytes(b"\x7fELF\x01\x01\x01" + b"\0" * 60)
    shutil.copy(DATA / "libk.so", lib / "libk.so")
    out = binaries.scan_package_binaries("torch", site)
    json.dumps(out)
    by = {f["path"]: f for f in out["files"]}
    assert by["torch/lib/libk.so"]["sass"] == ["sm_90", "sm_103f"]
    for name, msg in [("libjunk.so", "not an ELF"), ("libempty.so", "not an ELF"), ("libtext.so", "not an ELF"),
                      ("libtrunc.so", "outside the file"), ("lib32.so", "32-bit")]:  # fmt: skip
        assert msg in by[f"torch/lib/{name}"]["error"], name
    assert out["sass"] == ["sm_90", "sm_103f"] and out["files_scanned"] == 6


def _patched(tmp_path: Path, mutate: str) -> Path:
    """multi.o with its .nv_fatbin corrupted in a given way."""
    data = bytearray((DATA / "multi.o").read_bytes())
    with ElfFile(DATA / "multi.o") as elf:
        sec = elf.section(".nv_fatbin")
        assert sec is not None
    if mutate == "fat_size":
        struct.pack_into("<Q", data, sec.offset + 8, sec.size * 10)
    elif mutate == "entry_header":
        struct.pack_into("<I", data, sec.offset + 16 + 4, 7)  # first entry header size 7
    elif mutate == "trailing_junk":
        # grow nothing: overwrite the last 16 bytes (end of last payload) is harmless; instead append a bogus
        # container by claiming a shorter fat size so the walk lands inside a payload
        struct.pack_into("<Q", data, sec.offset + 8, 64 + 8)
    out = tmp_path / f"{mutate}.o"
    out.write_bytes(bytes(data))
    return out


@pytest.mark.parametrize(("mutate", "msg"), [("fat_size", "truncated"), ("entry_header", "header size 7"),
                                             ("trailing_junk", "no fatbin magic")])  # fmt: skip
def test_corrupt_fatbin_gives_warnings(tmp_path: Path, mutate: str, msg: str) -> None:
    with ElfFile(_patched(tmp_path, mutate)) as elf:
        scan = scan_fatbins(elf)
    assert any(msg in w for w in scan.warnings), scan.warnings


def test_not_elf_raises() -> None:
    with pytest.raises(ElfError, match="not an ELF"):
        ElfFile(DATA / "k.cu")
    with pytest.raises(ElfError, match="cannot open"):
        ElfFile(DATA / "missing.so")


def test_dynamic_section_of_recorded_library() -> None:
    with ElfFile(DATA / "libk.so") as elf:
        dyn = elf.dynamic()
    assert "libc.so.6" in dyn.needed and dyn.runpath is None


@pytest.mark.parametrize(
    ("cc", "coverage", "via"),
    [
        ("9.0", "sass", ["sm_90", "sm_90a"]),
        ("10.0", "sass", ["compute_100f", "sm_100f"]),
        ("10.3", "sass", ["compute_100f", "sm_100f", "sm_103f"]),
        ("12.0", "sass", ["compute_120", "sm_120", "sm_120f"]),
        ("12.1", "sass", ["compute_120", "sm_120", "sm_120f", "sm_121a"]),
        ("8.6", "sass", ["sm_80"]),
        ((11, 0), "none", []),  # compute_100f is family-specific: 10.x only
        ("7.5", "none", []),
    ],
)
def test_binary_coverage(tmp_path: Path, cc: str | tuple[int, int], coverage: str, via: list[str]) -> None:
    site = tmp_path / "site"
    fi = site / "flashinfer" / "data" / "cubins"
    fi.mkdir(parents=True)
    for name in ("sm_90a.cubin", "sm_120f.cubin", "sm_121a.cubin", "multi.o"):
        shutil.copy(DATA / name, fi / name)
    shutil.copy(DATA / "libk.so", site / "flashinfer" / "flashinfer_kernels.so")
    (fi / "multi.o").rename(fi / "libmulti.so")
    res = binaries.scan_package_binaries("flashinfer-python", site)
    assert res["ptx"] == ["compute_100f", "compute_120"]
    got = binaries.binary_coverage(res, cc)
    assert (got["coverage"], got["via"]) == (coverage, via)


def test_binary_coverage_ptx_only_and_unknown() -> None:
    res = {"sass": ["sm_80"], "ptx": ["compute_90"]}
    assert binaries.binary_coverage(res, "12.0") == {"coverage": "ptx", "via": ["compute_90"]}
    assert binaries.binary_coverage({"skipped": "budget"}, "9.0")["reason"].startswith("binaries not read")
    assert binaries.binary_coverage(res, "nine")["coverage"] == "none"


def test_probe_binaries_budget_and_missing(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "sgl_kernel").mkdir(parents=True)
    shutil.copy(DATA / "libk.so", site / "sgl_kernel" / "common_ops.abi3.so")
    facts = {"packages": {"sgl-kernel": {"installed": True, "location": str(site)},
                          "vllm": {"installed": True, "location": None},
                          "torch": {"installed": False}}}  # fmt: skip
    out = binaries.probe_binaries(facts)
    assert out["sgl-kernel"]["sass"] == ["sm_90", "sm_103f"]
    assert "skipped" in out["vllm"] and "torch" not in out
    out0 = binaries.probe_binaries(facts, budget_s=-1.0)
    assert "time budget" in out0["sgl-kernel"]["skipped"]


# -- with nvcc and (optionally) cuobjdump ------------------------------------------------------------


def _cuobjdump() -> str | None:
    found = shutil.which("cuobjdump")
    if found:
        return found
    cache = Path.home() / ".cache" / "stackcheck-tests" / "cuobjdump"
    hits = sorted(cache.glob("**/bin/cuobjdump")) if cache.is_dir() else []
    return str(hits[0]) if hits and os.access(hits[0], os.X_OK) else None


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
@pytest.mark.parametrize(
    ("flags", "sass", "ptx", "compressed"),
    [
        (["-gencode", "arch=compute_90a,code=sm_90a", "-gencode", "arch=compute_120,code=[sm_120,compute_120]",
          "-gencode", "arch=compute_100f,code=sm_100f"], ["sm_90a", "sm_100f", "sm_120"], ["compute_120"], 1),
        (["-Xfatbin", "-compress-all", "-gencode", "arch=compute_120a,code=[sm_120a,compute_120a]"],
         ["sm_120a"], ["compute_120a"], 2),
        (["--compress-mode=size", "-Xfatbin", "-compress-all", "-gencode", "arch=compute_86,code=sm_86"],
         ["sm_86"], [], 1),
        (["--compress-mode=none", "-gencode", "arch=compute_103f,code=[sm_103f,compute_103f]"],
         ["sm_103f"], ["compute_103f"], 0),
    ],
)  # fmt: skip
def test_compiled_with_nvcc(tmp_path: Path, flags: list[str], sass: list[str], ptx: list[str],
                            compressed: int) -> None:  # fmt: skip
    assert NVCC is not None
    obj = tmp_path / "x.o"
    subprocess.run([NVCC, "-c", *flags, str(DATA / "k.cu"), "-o", str(obj)], check=True, capture_output=True,
                   timeout=300)  # fmt: skip
    with ElfFile(obj) as elf:
        scan = scan_fatbins(elf)
    assert (scan.sass, scan.ptx, scan.compressed_entries) == (sass, ptx, compressed)
    tool = _cuobjdump()
    if tool is None:
        return
    done = subprocess.run([tool, "--list-elf", "--list-ptx", str(obj)], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    listed_elf = sorted(re.findall(r"ELF file\s+\d+: .*\.(sm_\w+?)\.cubin", done.stdout))
    listed_ptx = sorted(re.findall(r"PTX file\s+\d+: .*\.sm_(\w+?)\.ptx", done.stdout))
    # cuobjdump's --list-elf drops the 'f' of family cubins; its PTX names keep the suffix
    assert listed_elf == sorted(t.rstrip("f") if t.endswith("f") else t for t in sass)
    assert listed_ptx == sorted(t.removeprefix("compute_") for t in ptx)


@pytest.mark.nvcc
@pytest.mark.skipif(NVCC is None, reason="nvcc not installed")
@pytest.mark.parametrize("target", ["sm_90", "sm_90a", "sm_100f", "sm_120", "sm_120a", "sm_120f"])
def test_bare_cubin_with_nvcc(tmp_path: Path, target: str) -> None:
    assert NVCC is not None
    out = tmp_path / f"{target}.cubin"
    arch = "compute_" + target.removeprefix("sm_")
    subprocess.run([NVCC, "-cubin", "-gencode", f"arch={arch},code={target}", str(DATA / "k.cu"), "-o", str(out)],
                   check=True, capture_output=True, timeout=300)  # fmt: skip
    with ElfFile(out) as elf:
        assert cubin_info(elf).target == target


def test_relocatable_device_code_beside_loadable_code_is_not_counted() -> None:
    """libtorch_nvshmem.so (torch 2.11.0+cu130, seen on the H200 machine) has .nv_fatbin (sm_75 ... sm_120)
    and __nv_relfatbin (sm_89 and compute_120 for device linking); cuobjdump --list-elf/--list-ptx list only
    the first, and only the first is loaded at run time."""
    from stackcheck.readers.fatbin import FatbinEntry, FatbinScan

    def entry(kind: int, arch: int, section: str) -> FatbinEntry:
        return FatbinEntry(0, kind, 64, 0, 0, 0, (1, 8), arch, 0x11, section)

    scan = FatbinScan(
        entries=[
            entry(2, 90, ".nv_fatbin"),
            entry(2, 120, ".nv_fatbin"),
            entry(2, 89, "__nv_relfatbin"),
            entry(1, 120, "__nv_relfatbin"),
        ]
    )
    assert scan.sass == ["sm_90", "sm_120"]
    assert scan.ptx == []
    assert scan.relocatable == ["sm_89", "compute_120"]
    only_rel = FatbinScan(entries=[entry(2, 89, "__nv_relfatbin")])  # a -rdc object: that is its code
    assert only_rel.sass == ["sm_89"] and only_rel.relocatable == []
