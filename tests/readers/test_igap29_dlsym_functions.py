"""What dlsym finds as a function (igap29, issue 16 class 5): DynamicSymbols.dlsym_type / defines_function.

SGLang's pynccl binds each NCCL function with getattr on a ctypes.CDLL, which is dlsym(handle, name): glibc's
do_lookup_x / check_match (elf/dl-lookup.c) with no version and DL_LOOKUP_RETURN_NEWEST. `defines` answered whether
any defined global or weak symbol has the name, so a library whose NCCL names were data objects, or only hidden
versions (`name@V1`, no `name@@V`), counted as defining them. These libraries are built with gcc from small C files
and a version script written here, and every answer is checked against the real dlsym (ctypes in a child process)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from elfwriter import write_so
from registry_wheels import CACHE, run_all

from stackcheck.readers.elf import STT_FUNC, STT_GNU_IFUNC, DynamicSymbols, ElfFile

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

#: a function, a data object, a default and a hidden version of one name, a name with only a hidden version, an
#: IFUNC, and a reference to a function no library here defines (an undefined dynamic symbol)
SOURCE = """
int func_here(void) { return 1; }
int data_here[4] = {1, 2, 3, 4};
int twice_old(void) { return 1; }
int twice_new(void) { return 2; }
__asm__(".symver twice_old,twice@V1");
__asm__(".symver twice_new,twice@@V2");
int hidden_old(void) { return 3; }
__asm__(".symver hidden_old,hidden_only@V1");
static int picked(void) { return 7; }
static void *resolve_ifunc(void) { return (void *)picked; }
int ifunc_here(void) __attribute__((ifunc("resolve_ifunc")));
static int local_only(void) { return 5; }
int calls_local(void) { return local_only(); }
"""
SCRIPT = "V1 { global: func_here; data_here; ifunc_here; calls_local; twice; hidden_only; local: *; };\nV2 { } V1;\n"
UNDEFINED = "extern int not_here(void);\nint calls_missing(void) { return not_here(); }\n"


def _build(tmp_path: Path, source: str, style: str, script: str | None = None) -> Path:
    src = tmp_path / f"lib_{style}.c"
    src.write_text(source)
    out = tmp_path / f"lib_{style}.so"
    cmd = ["gcc", "-shared", "-fPIC", "-O0", f"-Wl,--hash-style={style}", "-o", str(out), str(src)]
    if script is not None:
        (tmp_path / "v.map").write_text(script)
        cmd.append(f"-Wl,--version-script={tmp_path / 'v.map'}")
    subprocess.run(cmd, check=True, capture_output=True)
    return out


def _dlsym(lib: Path, names: list[str]) -> dict[str, bool]:
    """Whether the real dlsym finds each name in the library (ctypes, in a child process: a bad library cannot take
    the test run down)."""
    code = (
        "import ctypes, sys\n"
        "lib = ctypes.CDLL(sys.argv[1])\n"
        "print(' '.join('1' if hasattr(lib, n) else '0' for n in sys.argv[2:]))\n"
    )
    got = subprocess.run([sys.executable, "-c", code, str(lib), *names], check=True, capture_output=True, text=True)
    return dict(zip(names, [x == "1" for x in got.stdout.split()], strict=True))


@pytest.mark.parametrize("style", ["gnu", "sysv"])
def test_functions_data_and_versions_as_dlsym_finds_them(tmp_path: Path, style: str) -> None:
    lib = _build(tmp_path, SOURCE, style, SCRIPT)
    names = ["func_here", "data_here", "twice", "hidden_only", "ifunc_here", "calls_local", "local_only", "absent"]
    real = _dlsym(lib, names)
    # the real loader's answers, the premises of this test (a hidden version alone is not found; data is)
    assert real == {"func_here": True, "data_here": True, "twice": True, "hidden_only": False, "ifunc_here": True,
                    "calls_local": True, "local_only": False, "absent": False}  # fmt: skip
    with ElfFile(lib) as elf:
        syms = DynamicSymbols(elf)
        assert {n: syms.dlsym_type(n) is not None for n in names} == real
        functions = {n: syms.defines_function(n) for n in names}
        # before igap29, `defines` (what the probe used) said yes to data_here and hidden_only
        assert syms.defines("data_here") and syms.defines("hidden_only")
        assert syms.dlsym_type("ifunc_here") == STT_GNU_IFUNC and syms.dlsym_type("twice") == STT_FUNC
    assert functions == {"func_here": True, "data_here": False, "twice": True, "hidden_only": False,
                         "ifunc_here": True, "calls_local": True, "local_only": False, "absent": False}  # fmt: skip


def test_an_undefined_reference_is_no_definition(tmp_path: Path) -> None:
    lib = _build(tmp_path, UNDEFINED, "gnu")
    with ElfFile(lib) as elf:
        syms = DynamicSymbols(elf)
        assert "not_here" in syms.undefined()
        assert syms.dlsym_type("not_here") is None and not syms.defines_function("not_here")
        assert syms.defines_function("calls_missing")


@pytest.mark.parametrize(("field", "value"), [("other", 2), ("other", 1), ("info", 0x02)],
                         ids=["hidden-visibility", "internal-visibility", "local-binding"])  # fmt: skip
def test_hidden_internal_or_local_symbols_are_not_returned(tmp_path: Path, field: str, value: int) -> None:
    # glibc's do_lookup_x skips the object for a hidden or internal symbol and for a local binding
    path = write_so(tmp_path / "lib.so", defined=["ncclGetVersion", "other"])
    with ElfFile(path) as elf:
        syms = DynamicSymbols(elf)
        assert syms.defines_function("ncclGetVersion")
        symtab, count = syms._symtab, syms.symbol_count()
        index = next(i for i in range(1, count) if syms._symbol_info(i)[0] and syms.name_at(
            syms._symbol_info(i)[0]) == "ncclGetVersion")  # fmt: skip
    assert symtab is not None
    data = bytearray(path.read_bytes())
    data[symtab + index * 24 + (5 if field == "other" else 4)] = value
    path.write_bytes(bytes(data))
    with ElfFile(path) as elf:
        syms = DynamicSymbols(elf)
        assert syms.dlsym_type("ncclGetVersion") is None and not syms.defines_function("ncclGetVersion")
        assert syms.defines_function("other")


@pytest.mark.slow
def test_the_real_nccl_libraries_agree_with_readelf(tmp_path: Path) -> None:
    """The nvidia-nccl wheels' libnccl.so.2 (no DT_VERDEF; NCCL's functions are WEAK FUNC DEFAULT, version index 1):
    every name readelf lists as a defined FUNC of default visibility is a function here, no other. Skipped where no
    wheel is in the test cache (tests/registry_wheels.py's directory); the smallest one only (~7 s to inflate), every
    one with STACKCHECK_REGISTRY_ALL=1 (nvidia-nccl-cu12 2.26.2 and 2.27.3, nvidia-nccl-cu13 2.32.6 agreed, igap29)."""
    wheels = sorted(CACHE.glob("nvidia_nccl_cu1*.whl"), key=lambda p: p.stat().st_size)
    wheels = wheels if run_all() else wheels[:1]
    if not wheels or shutil.which("readelf") is None:
        pytest.skip("no nvidia-nccl wheel cached, or no readelf")
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as zf:
            member = next(n for n in zf.namelist() if n.endswith("lib/libnccl.so.2"))
            path = tmp_path / wheel.name / "libnccl.so.2"
            path.parent.mkdir()
            path.write_bytes(zf.read(member))
        out = subprocess.run(["readelf", "--dyn-syms", "-W", str(path)], capture_output=True, text=True, check=True)
        expected: dict[str, bool] = {}
        for line in out.stdout.splitlines():
            parts = line.split()
            if len(parts) < 8 or not parts[0].rstrip(":").isdigit():
                continue
            fn = parts[3] in ("FUNC", "IFUNC") and parts[4] in ("GLOBAL", "WEAK") and parts[5] == "DEFAULT"
            name = parts[7].split("@")[0]
            expected[name] = expected.get(name, False) or (fn and parts[6] != "UND")
        with ElfFile(path) as elf:
            syms = DynamicSymbols(elf)
            got = {n: syms.defines_function(n) for n in expected}
        assert got == expected, wheel.name
        assert got["ncclGetVersion"] and got["ncclAllReduce"] and got["ncclMemAlloc"], wheel.name
