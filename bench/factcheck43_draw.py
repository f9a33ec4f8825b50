"""The forty-third fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md, "Forty-third
sample").

    PYTHONPATH=.:tests python bench/factcheck43_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the eighth session's merges where they allow (git log c347e3f2..20ffe806 --
manifests stackcheck): SGLANG_NCCL_SO_PATH's rules symm-mem-nccl-so-path-window / -window-comm / -window-register /
-mem-alloc and DynamicSymbols.defines_function (dlsym's answer), symm-mem-allocator-cudart-major (libcudart.so's
DT_SONAME), symm-mem-allocator-cxx-split (CXX with arguments on torch 2.8-2.12), the transformers / torchao pins and
SGLang's start-import floors (GptOssConfig, Lfm2VlConfig, PreTrainedConfig, image_processing_backends), the gcc-N /
clang-N name checks (a real gcc driver copied under its own and another name, clang binaries by the LLVM libraries they
need), sglang-jit-nvcc-host-clang-cxx20, PYTORCH_NVCC's range and the prefix gcc's wrapper-script shell shapes; and
toward rows no sample has drawn (a row equal to one of an earlier sample's bench/factcheck*_drawn.json is left out).

(g) `gate --dry-run --format json` of `--tp 1` (Llama 3) on factcheck27_draw._box (the H200 box) with every final
    release 0.5.1-0.5.8 (FlashInfer's own JIT, factcheck39_draw's box) for every host of G_HOSTS, and every second final
    release 0.5.9-0.5.23 (SGLang's own JIT, factcheck38_draw's box) for the hosts SGLang's JIT reads (NVCC_CCBIN set or
    a PATH other than the standard one), toolkits 12.8.93 and 13.0.88 (real host_config.h), the jit section the real
    probe's over the laid-out root; G_HOSTS: this machine's real gcc 12 driver copied under its own name, under gcc-13's
    name and into a prefix (/opt/gcc/bin/gcc, version directory 12 or 13); clang binaries written by tests/elfwriter.py
    needing libclang-cpp.so.N / libLLVM.so.N (9, 10, 14, 19, and 20's under clang-19's name); a prefix gcc 13 whose
    bin/gcc is a wrapper script of our own in one of W_SHAPES' shell shapes; PYTORCH_NVCC bare, as the toolkit's own
    path and behind `env`: one row per allow;
(n) `gate` of `--tp 8 --enable-symm-mem` on the same box with the allocator's build in place, every final release
    0.5.1-0.5.23, SGLANG_NCCL_SO_PATH naming each library of N_LIBS (the real libnccl.so.2 of nvidia-nccl-cu12 2.26.2 /
    2.27.3 and nvidia-nccl-cu13 2.32.6; shared objects built here with `cc -shared` from our own C naming NCCL's
    functions, some weak, versioned, an IFUNC, a data object or hidden; no NCCL code): one row per allow;
(c) `gate` of `--tp 8 --enable-symm-mem` on the same box (the release's own torch), every final release 0.5.1-0.5.23,
    either CXX = each of C_CXX read by the real probe over a small root (ccache, g++-12, the ccache masquerade link),
    or libcudart.so laid out as each of C_CUDART (shared objects built here with DT_SONAME libcudart.so.12 / .13; the
    real probe, factcheck40_draw._symm_box): one row per allow;
(t) `gate` of `--tp 1` and of `--tp 1 --torchao-config int8wo` (Llama 3) on the same box with the release's own torch,
    torchao A (T_TORCHAO) and transformers X (T_TRANSFORMERS, 4.55-5.19) in the packages, no kernel symbol section, for
    the SGLang releases of T_RELEASES: one row per allow.

Draw: random.Random(20270112); per population the rows sorted by JSON text, shuffled, the first k (g 5, n 5, c 3, t 5),
18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import factcheck40_draw
from factcheck27_draw import _box
from factcheck38_draw import STD_PATH, _deb, _with
from factcheck40_draw import _line, _releases
from factcheck41_draw import _tao_box
from factcheck42_draw import _PYNCCL, _cxx, _prefix, _symm_base, _write
from factcheck_draw import (
    TRIPLE,
    draw_undrawn,
    jit_host_rows,
    keep_toolkits,
    nccl_so_path_rows,
    nccl_wheel_so,
    stackcheck_json_or_error,
    write_models,
)
from gate_cli import LLAMA3

SEED = 20270112


# ---- (g) host compilers ------------------------------------------------------------------------------------------


def _real(named: str) -> dict[str, Any]:
    """Debian's layout of gcc-NAMED (cc1 / cc1plus in its version directory) whose x86_64-linux-gnu-gcc-NAMED is this
    machine's real gcc 12 driver, /usr/bin/gcc -> gcc-NAMED -> it."""
    base = _deb(named)
    links = {**base["links"], f"usr/bin/gcc-{named}": f"{TRIPLE}-gcc-{named}"}
    files = [f for f in base["files"] if f != f"usr/bin/gcc-{named}"]
    return {**base, "files": files, "links": links, "copies": {f"usr/bin/{TRIPLE}-gcc-{named}": "gcc"}}


def _real_prefix(version_dir: str) -> dict[str, Any]:
    """Debian's gcc 12 and the real gcc 12 driver copied to /opt/gcc/bin/gcc, start files in lib/gcc/TRIPLE/DIR."""
    base = _deb("12")
    files = [*base["files"], f"opt/gcc/lib/gcc/{TRIPLE}/{version_dir}/crtbegin.o"]
    return {**base, "files": files, "copies": {"opt/gcc/bin/gcc": "gcc"}}


def _clang_n(name: str, llvm: str) -> dict[str, Any]:
    """Debian's gcc 12 and /usr/bin/clang-NAME -> ../lib/llvm-NAME/bin/clang, an ELF written by tests/elfwriter.py
    needing libclang-cpp.so.LLVM.1 and libLLVM.so.LLVM.1 (Debian's clang-19 shape)."""
    base = _deb("12")
    links = {**base["links"], f"usr/bin/clang-{name}": f"../lib/llvm-{name}/bin/clang"}
    return {**base, "links": links, "clangs": {f"usr/lib/llvm-{name}/bin/clang": llvm}}


_B = f'-B/opt/gcc/bin/ -B/opt/gcc/lib/gcc/{TRIPLE}/13/ "$@"'
W_SHAPES: dict[str, str] = {
    # name -> bin/gcc's text (our own): each runs /opt/gcc/bin/gcc-real for the prefix's 13, or is read otherwise
    "set-e": f"#!/bin/sh\nset -e\nexec /opt/gcc/bin/gcc-real {_B}\n",
    "comment": f"#!/bin/sh\n# wrapper made by the image's build\nexec /opt/gcc/bin/gcc-real {_B}\n",
    "bash": f"#!/bin/bash\nexec /opt/gcc/bin/gcc-real {_B}\n",
    "env-sh": f"#!/usr/bin/env sh\nexec /opt/gcc/bin/gcc-real {_B}\n",
    "variable": f'#!/bin/sh\nP=/opt/gcc\nexec "$P/bin/gcc-real" {_B}\n',
    "dirname": f'#!/bin/sh\nexec "$(dirname "$0")/gcc-real" {_B}\n',
    "no-exec": f"#!/bin/sh\n/opt/gcc/bin/gcc-real {_B}\n",
    "isystem": f"#!/bin/sh\nexec /opt/gcc/bin/gcc-real -isystem /usr/include/c++/12 {_B}\n",
    "quoted": f"#!/bin/sh\nexec '/opt/gcc/bin/gcc-real' {_B}\n",
}


def _wrapped(shape: str) -> dict[str, Any]:
    spec = _prefix("13")
    return {**spec, "bodies": {"opt/gcc/bin/gcc": W_SHAPES[shape]}}


def _pytorch_nvcc(value: str) -> dict[str, Any]:
    """Debian's gcc 12, ccache, /usr/local/cuda -> the toolkit's home, PYTORCH_NVCC = VALUE."""
    base = _deb("12")
    return _with({**base, "files": [*base["files"], "usr/bin/ccache"], "cuda_link": True}, PYTORCH_NVCC=value)


G_HOSTS: dict[str, dict[str, Any]] = {
    "real-gcc-12-cc": _with(_real("12"), CC="gcc-12"),
    "real-gcc-12-ccbin": _with(_real("12"), NVCC_CCBIN="/usr/bin/gcc-12"),
    "real-gcc-12-named-13-cc": _with(_real("13"), CC="gcc-13"),
    "real-gcc-12-named-13-ccbin": _with(_real("13"), NVCC_CCBIN="/usr/bin/gcc-13"),
    "real-prefix-12-ccbin": _with(_real_prefix("12"), NVCC_CCBIN="/opt/gcc/bin/gcc"),
    "real-prefix-12-path-first": _with(_real_prefix("12"), PATH=f"/opt/gcc/bin:{STD_PATH}"),
    "real-prefix-dir-13-cc": _with(_real_prefix("13"), CC="/opt/gcc/bin/gcc"),
    "clang-9-ccbin": _with(_clang_n("9", "9"), NVCC_CCBIN="/usr/bin/clang-9"),
    "clang-10-ccbin": _with(_clang_n("10", "10"), NVCC_CCBIN="/usr/bin/clang-10"),
    "clang-14-cc": _with(_clang_n("14", "14"), CC="clang-14"),
    "clang-14-ccbin": _with(_clang_n("14", "14"), NVCC_CCBIN="/usr/bin/clang-14"),
    "clang-19-binary-20-ccbin": _with(_clang_n("19", "20"), NVCC_CCBIN="/usr/bin/clang-19"),
    **{f"wrap-{s}-cc": _with(_wrapped(s), CC="/opt/gcc/bin/gcc") for s in W_SHAPES},
    **{f"wrap-{s}-ccbin": _with(_wrapped(s), NVCC_CCBIN="/opt/gcc/bin/gcc") for s in W_SHAPES},
    "pytorch-nvcc-bare": _pytorch_nvcc("nvcc"),
    "pytorch-nvcc-home-12.8": _pytorch_nvcc("/usr/local/cuda-12.8/bin/nvcc"),
    "pytorch-nvcc-env": _pytorch_nvcc("env CCACHE_DIR=/tmp/ccache /usr/local/cuda/bin/nvcc"),
}
G_TOOLKITS = ["12.8.93", "13.0.88"]
G_KEYS = ("cc_host", "nvcc_host", "pytorch_nvcc", "flashinfer_host", "flashinfer_allow_unsupported", "cxx_found")


def host_rows(out: Path) -> list[dict[str, Any]]:
    return jit_host_rows(out, G_HOSTS, G_TOOLKITS, G_KEYS, pop="g")


# ---- (n) SGLANG_NCCL_SO_PATH -------------------------------------------------------------------------------------

_CONFIG = ["ncclCommInitRankConfig"]
_WINDOW = ["ncclCommWindowRegister", "ncclCommWindowDeregister"]
_MEM = ["ncclMemAlloc", "ncclMemFree"]


def _c(funcs: list[str], *, weak: tuple[str, ...] = (), hidden: tuple[str, ...] = (), data: tuple[str, ...] = (),
       ifunc: tuple[str, ...] = ()) -> str:  # fmt: skip
    """Our own C: `int NAME(void) { return 0; }` for each of FUNCS, weak, hidden, a data object or an IFUNC where
    named."""
    lines = []
    for f in funcs:
        if f in data:
            lines.append(f"int {f} = 0;")
        elif f in ifunc:
            lines.append(f"static int {f}_impl(void) {{ return 0; }}")
            lines.append(f"static void *{f}_resolve(void) {{ return (void *){f}_impl; }}")
            lines.append(f'int {f}(void) __attribute__((ifunc("{f}_resolve")));')
        else:
            attr = " __attribute__((weak))" if f in weak else ""
            attr += ' __attribute__((visibility("hidden")))' if f in hidden else ""
            lines.append(f"int{attr} {f}(void) {{ return 0; }}")
    return "\n".join(lines) + "\n"


_ALL = [*_PYNCCL, *_CONFIG, *_WINDOW, *_MEM]
# name -> (wheel, or None for our own; our C source; a version node for every symbol, or None)
N_LIBS: dict[str, tuple[str | None, str, str | None]] = {
    "nvidia-nccl-cu12-2.26.2": (
        "nvidia_nccl_cu12-2.26.2-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", "", None),
    "nvidia-nccl-cu12-2.27.3": (
        "nvidia_nccl_cu12-2.27.3-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl", "", None),
    "nvidia-nccl-cu13-2.32.6": ("nvidia_nccl_cu13-2.32.6-py3-none-manylinux_2_27_x86_64.whl", "", None),
    "own-all": (None, _c(_ALL), None),
    "own-all-versioned": (None, _c(_ALL), "NCCL_2.28"),
    "own-window-weak": (None, _c(_ALL, weak=tuple(_WINDOW)), None),
    "own-window-ifunc": (None, _c(_ALL, ifunc=("ncclCommWindowRegister",)), None),
    "own-mem-alloc-data": (None, _c(_ALL, data=("ncclMemAlloc",)), None),
    "own-mem-alloc-hidden": (None, _c(_ALL, hidden=("ncclMemAlloc",)), None),
    "own-window-register-data": (None, _c(_ALL, data=("ncclCommWindowRegister",)), None),
    "own-no-config": (None, _c([*_PYNCCL, *_WINDOW, *_MEM]), None),
}  # fmt: skip


def _so(out: Path, name: str) -> Path:
    wheel, source, node = N_LIBS[name]
    lib = out / "solibs" / name / "libnccl.so.2"
    if lib.exists():
        return lib
    lib.parent.mkdir(parents=True, exist_ok=True)
    if wheel:
        return nccl_wheel_so(lib, wheel)
    src = lib.parent / "lib.c"
    src.write_text(source)
    args = ["cc", "-shared", "-fPIC", "-Wl,-soname,libnccl.so.2", "-o", str(lib), str(src)]
    if node:
        script = lib.parent / "lib.map"
        script.write_text(f"{node} {{ global: *; }};\n")
        args.append(f"-Wl,--version-script={script}")
    subprocess.run(args, check=True)
    return lib


def nso_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in _releases((0, 5, 1), (0, 5, 23)):
        rows += nccl_so_path_rows(out, rel, N_LIBS, _so, _symm_base, name="nso43", pop="n")
        print(f"n {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (c) the allocator's CXX and libcudart.so ---------------------------------------------------------------------

C_CXX = ["ccache g++", "g++ -O2", "g++-12 -fPIC", "ccache  g++", "g++\t-O2", "/usr/lib/ccache/g++", "c++"]
C_CUDART = ["soname-12", "soname-13", "link-soname-12", "link-soname-13", "triplet-soname-12"]


def _cudart(out: Path, major: str) -> bytes:
    """A shared object built here from our own C with DT_SONAME libcudart.so.MAJOR."""
    lib = out / "solibs" / f"cudart-{major}" / f"libcudart.so.{major}"
    if not lib.exists():
        lib.parent.mkdir(parents=True, exist_ok=True)
        src = lib.parent / "lib.c"
        src.write_text("int cudaGetDeviceCount(int *n) { *n = 0; return 0; }\n")
        soname = f"-Wl,-soname,libcudart.so.{major}"
        subprocess.run(["cc", "-shared", "-fPIC", soname, "-o", str(lib), str(src)], check=True)
    return lib.read_bytes()


def _cudart_layouts(out: Path) -> None:
    """C_CUDART's layouts as factcheck40_draw.CUDART entries (H/ = the CUDA home)."""
    so12, so13 = _cudart(out, "12"), _cudart(out, "13")
    factcheck40_draw.CUDART.update({
        "soname-12": ({"H/lib64/libcudart.so": so12}, {}, {}),
        "soname-13": ({"H/lib64/libcudart.so": so13}, {}, {}),
        "link-soname-12": ({"H/lib64/libcudart.so.12": so12}, {"H/lib64/libcudart.so": "libcudart.so.12"}, {}),
        "link-soname-13": ({"H/lib64/libcudart.so.13": so13}, {"H/lib64/libcudart.so": "libcudart.so.13"}, {}),
        "triplet-soname-12": ({f"usr/lib/{TRIPLE}/libcudart.so": so12}, {}, {}),
    })  # fmt: skip


def cxx_cudart_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    _cudart_layouts(out)
    rows: list[dict[str, Any]] = []
    symm = ("--tp", "8", "--enable-symm-mem")
    for rel in _releases((0, 5, 1), (0, 5, 23)):
        for value in C_CXX:
            cxx = _cxx(out, value)
            doc = _symm_base(out, rel)
            doc["facts"]["jit"].update(cxx)
            path = _write(out, doc, f"cxx43-{rel}-{C_CXX.index(value)}.json")
            if stackcheck_json_or_error(_line(out, path, *symm)).get("decision") == "allow":
                torch = doc["facts"]["packages"]["torch"]["version"]
                rows.append({"pop": "c", "sglang": rel, "torch": torch, "cxx": value, "jit": cxx})
        for variant in C_CUDART:
            path, _env = factcheck40_draw._symm_box(out, rel, variant)
            doc = json.loads(path.read_text())
            jit = doc["facts"]["jit"]
            if stackcheck_json_or_error(_line(out, path, *symm)).get("decision") == "allow":
                torch = doc["facts"]["packages"]["torch"]["version"]
                read = {k: jit[k] for k in jit if k.startswith("libcudart_so") and not k.endswith("dirs")}
                rows.append({"pop": "c", "sglang": rel, "torch": torch, "cudart": variant, "jit": read})
        print(f"c {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (t) transformers x torchao on the release's own torch --------------------------------------------------------

T_RELEASES = ["0.5.9", "0.5.10", "0.5.12", "0.5.13", "0.5.14", "0.5.16", "0.5.18", "0.5.20", "0.5.22", "0.5.23"]
T_TORCHAO = ["0.9.0", "0.12.0", "0.13.0", "0.14.1", "0.16.0", "0.17.0", "0.18.0"]
T_TRANSFORMERS = ["4.55.2", "4.56.2", "4.57.1", "4.57.6", "5.0.0", "5.3.0", "5.4.0", "5.5.4", "5.12.1", "5.19.0"]


def torchao_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in T_RELEASES:
        torch = json.loads(_box(out, rel, None).read_text())["facts"]["packages"]["torch"]["dist_version"]
        for torchao in T_TORCHAO:
            for transformers in T_TRANSFORMERS:
                path = _tao_box(out, rel, torchao, torch, transformers)
                for config in ("", "int8wo"):
                    flags = ("--tp", "1", *(("--torchao-config", config) if config else ()))
                    if stackcheck_json_or_error(_line(out, path, *flags)).get("decision") == "allow":
                        base = {"pop": "t", "sglang": rel, "torchao": torchao, "torch": torch}
                        rows.append({**base, "transformers": transformers, "config": config})
        print(f"t {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    keep_toolkits(G_TOOLKITS)
    pops = [(5, host_rows(out)), (5, nso_rows(out)), (3, cxx_cudart_rows(out)), (5, torchao_rows(out))]
    draw_undrawn(out, SEED, pops, "factcheck43_drawn.json")


if __name__ == "__main__":
    main()
