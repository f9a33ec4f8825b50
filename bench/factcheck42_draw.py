"""The forty-second fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md, "Forty-second
sample").

    PYTHONPATH=.:tests python bench/factcheck42_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the seventh session's merges where they allow (git log 2211d442..c347e3f2):
a gcc built into a prefix (its one lib/gcc or libexec/gcc version directory, its wrapper script read command by
command), a clang as nvcc's host compiler (flashinfer-jit-cc-host-clang, flashinfer-jit-nvcc-host-clang,
sglang-jit-nvcc-host-clang), PYTORCH_NVCC for FlashInfer before 0.5.0 (flashinfer-jit-pytorch-nvcc, -toolkit), a CXX
with arguments for the symmetric-memory allocator (symm-mem-allocator-cxx-args), the library SGLANG_NCCL_SO_PATH names
with every function pynccl binds (PYNCCL_FUNCTIONS, symm-mem-nccl-so-path-init-config), transformers 4.51-4.57's
torchao import on every launch, and LMCache's release_symbols table (extension-torch-abi-lmcache from versions alone);
and toward rows no sample has drawn: a row equal to one of an earlier sample's bench/factcheck*_drawn.json is left out.

(h) `gate --dry-run --format json` of `--tp 1` (Llama 3) on factcheck27_draw._box (the H200 box) with every final
    release 0.5.1-0.5.8 (FlashInfer's own JIT, factcheck39_draw's box, flashinfer-jit-cache not installed) for every
    host of H_HOSTS, and every second final release 0.5.9-0.5.23 (SGLang's own JIT, factcheck38_draw's box) for the
    hosts of H_HOSTS that SGLang's JIT reads (NVCC_CCBIN set or a PATH other than the standard one), each toolkit of
    H_TOOLKITS (real host_config.h), the jit section the real probe's over the laid-out root: one row per allow;
(s) `gate` of `--tp 8 --enable-symm-mem` (Llama 3) on the same box with the allocator's build in place (as
    factcheck41's population n), every final release 0.5.1-0.5.23, with either (x) CXX = each of CXX_VALUES read by
    the real probe over a small root (ccache, g++-12 and the ccache masquerade link) and torch's version replaced by
    each of S_TORCH, or (y) SGLANG_NCCL_SO_PATH naming each library of SO_LIBS (libnccl.so.2 of the real
    nvidia-nccl-cu12 2.26.2 / 2.27.3 and nvidia-nccl-cu13 2.32.6 wheels, and shared objects built here with
    `cc -shared` from our own C files naming NCCL's functions, no NCCL code): one row per allow;
(t) `gate` of `--tp 1` and of `--tp 1 --torchao-config int8wo` (Llama 3) on the same box with torchao A (TORCHAO),
    torch's version replaced by T (TORCH, the local suffix kept) and transformers X (TRANSFORMERS, weighted to
    4.51-4.57) in the packages, no kernel symbol section, for the SGLang releases of T_RELEASES: one row per allow;
(l) `gate` of `--tp 1 --enable-lmcache` (Llama 3) on the same box with lmcache L (LMCACHE) and torch's version
    replaced by T (L_TORCH), no kernel symbol section (the versions alone decide), every final release 0.5.1-0.5.23:
    one row per allow.

Draw: random.Random(20270111); per population the rows sorted by JSON text, shuffled, the first k (h 6, s 4, t 4,
l 4), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import factcheck38_draw
from factcheck27_draw import _box
from factcheck38_draw import STD_PATH, _deb, _touch, _with
from factcheck40_draw import _line, _releases
from factcheck_draw import (
    draw,
    jit_host_rows,
    nccl_so_path_rows,
    nccl_wheel_so,
    stackcheck_json_or_error,
    torchao_allow_rows,
    undrawn,
    write_models,
)
from factcheck_draw import write_box as _write
from gate_cli import LLAMA3

SEED = 20270111
SITE = "/opt/venv/lib/python3.12/site-packages"


# ---- (h) host compilers ------------------------------------------------------------------------------------------

TRIPLE = "x86_64-linux-gnu"


def _prefix(version: str, top: str = "opt/gcc") -> dict[str, Any]:
    """A gcc built into /TOP: bin/gcc a two-line /bin/sh wrapper (our own, in the lent H100's shape) that execs
    /TOP/bin/gcc-real with -B for bin/ and the version directory, cc1 / cc1plus in bin/, start files in
    lib/gcc/TRIPLE/VERSION; beside Debian's gcc 12."""
    lib = f"/{top}/lib/gcc/{TRIPLE}/{version}"
    script = f'#!/bin/sh\nexec /{top}/bin/gcc-real -B/{top}/bin/ -B{lib}/ "$@"\n'
    base = _deb("12")
    files = [*base["files"], f"{top}/bin/gcc-real", f"{top}/bin/cc1", f"{top}/bin/cc1plus", f"{lib[1:]}/crtbegin.o"]
    return {"files": files, "links": base["links"], "env": base["env"], "bodies": {f"{top}/bin/gcc": script}}


def _elf_prefix(version: str) -> dict[str, Any]:
    """An ELF gcc driver in /opt/gcc-N with its compilers in libexec/gcc/x86_64-pc-linux-gnu/VERSION (a source
    build's layout), beside Debian's gcc 12."""
    base = _deb("12")
    top = f"opt/gcc-{version.split('.', maxsplit=1)[0]}"
    lib = f"{top}/libexec/gcc/x86_64-pc-linux-gnu/{version}"
    files = [*base["files"], f"{top}/bin/gcc", f"{top}/bin/g++", f"{lib}/cc1", f"{lib}/cc1plus"]
    return {"files": files, "links": base["links"], "env": base["env"]}


def _clang(*majors: str, opt: str | None = None) -> dict[str, Any]:
    """Debian's gcc 12 and clang-N for each of MAJORS (/usr/bin/clang-N -> ../lib/llvm-N/bin/clang, an ELF file),
    and /opt/llvm/bin/clang with one lib/clang/OPT resource directory where given."""
    base = _deb("12")
    files = [*base["files"], *(f"usr/lib/llvm-{n}/bin/clang" for n in majors)]
    links = {**base["links"], **{f"usr/bin/clang-{n}": f"../lib/llvm-{n}/bin/clang" for n in majors}}
    if opt:
        files += ["opt/llvm/bin/clang", f"opt/llvm/lib/clang/{opt}/include/stddef.h"]
    return {"files": files, "links": links, "env": base["env"]}


def _pytorch_nvcc(value: str, **env: str) -> dict[str, Any]:
    """Debian's gcc 12, ccache, /usr/local/cuda -> the toolkit's home, and PYTORCH_NVCC = VALUE."""
    base = _deb("12")
    spec = {**base, "files": [*base["files"], "usr/bin/ccache"], "cuda_link": True}
    return _with(spec, PYTORCH_NVCC=value, **env)


H_HOSTS: dict[str, dict[str, Any]] = {
    "prefix-gcc-13-cc": _with(_prefix("13"), CC="/opt/gcc/bin/gcc"),
    "prefix-gcc-13.3.0-cc": _with(_prefix("13.3.0"), CC="/opt/gcc/bin/gcc"),
    "prefix-gcc-14-cc": _with(_prefix("14"), CC="/opt/gcc/bin/gcc"),
    "prefix-gcc-15-cc": _with(_prefix("15"), CC="/opt/gcc/bin/gcc"),
    "prefix-gcc-13-ccbin-dir": _with(_prefix("13"), NVCC_CCBIN="/opt/gcc/bin"),
    "prefix-gcc-15-ccbin-file": _with(_prefix("15"), NVCC_CCBIN="/opt/gcc/bin/gcc"),
    "prefix-gcc-14-path-first": _with(_prefix("14"), PATH=f"/opt/gcc/bin:{STD_PATH}"),
    "prefix-gcc-13-local-link-cc": _with(
        {**_prefix("13"), "links": {**_prefix("13")["links"], "usr/local/bin/gcc": "/opt/gcc/bin/gcc"}},
        CC="/usr/local/bin/gcc",
    ),
    "elf-prefix-gcc-13.2.0-cc": _with(_elf_prefix("13.2.0"), CC="/opt/gcc-13/bin/gcc"),
    "clang-19-cc": _with(_clang("19"), CC="clang-19"),
    "clang-20-cc": _with(_clang("20"), CC="clang-20"),
    "clang-19-and-20-ccbin-20": _with(_clang("19", "20"), NVCC_CCBIN="/usr/bin/clang-20"),
    "clang-19-ccbin-bare": _with(_clang("19"), NVCC_CCBIN="clang-19"),
    "opt-llvm-19-cc": _with(_clang(opt="19"), CC="/opt/llvm/bin/clang"),
    "opt-llvm-20-ccbin": _with(_clang(opt="20"), NVCC_CCBIN="/opt/llvm/bin/clang"),
    "pytorch-nvcc-cuda-link": _pytorch_nvcc("/usr/local/cuda/bin/nvcc"),
    "pytorch-nvcc-ccache": _pytorch_nvcc("ccache /usr/local/cuda/bin/nvcc"),
    "pytorch-nvcc-cc-gcc-12": _pytorch_nvcc("/usr/local/cuda/bin/nvcc", CC="gcc-12"),
}
H_TOOLKITS = ["12.8.93", "13.0.88"]
H_KEYS = ("cc_host", "nvcc_host", "pytorch_nvcc", "flashinfer_host", "flashinfer_allow_unsupported", "cxx_found")


def host_rows(out: Path) -> list[dict[str, Any]]:
    return jit_host_rows(out, H_HOSTS, H_TOOLKITS, H_KEYS, pop="h")


# ---- (s) the symmetric-memory allocator's compiler and SGLANG_NCCL_SO_PATH ----------------------------------------

CXX_VALUES = ["g++", "ccache g++", "/usr/lib/ccache/g++", "g++-12"]
S_TORCH = ["2.9.1", "2.11.0", "2.12.0", "2.13.0", "2.14.1"]
_PYNCCL = [
    "ncclGetErrorString", "ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank", "ncclAllReduce", "ncclAllGather",
    "ncclReduce", "ncclReduceScatter", "ncclSend", "ncclRecv", "ncclBroadcast", "ncclCommDestroy", "ncclGroupStart",
    "ncclGroupEnd", "ncclCommRegister", "ncclCommDeregister",
]  # fmt: skip
# name -> (wheel and member, or None for our own; DT_SONAME; functions of our own)
SO_LIBS: dict[str, tuple[str | None, str, list[str]]] = {
    "nvidia-nccl-cu12-2.26.2": (
        "nvidia_nccl_cu12-2.26.2-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        "libnccl.so.2",
        [],
    ),
    "nvidia-nccl-cu12-2.27.3": (
        "nvidia_nccl_cu12-2.27.3-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        "libnccl.so.2",
        [],
    ),
    "nvidia-nccl-cu13-2.32.6": ("nvidia_nccl_cu13-2.32.6-py3-none-manylinux_2_27_x86_64.whl", "libnccl.so.2", []),
    "own-pynccl-config-window": (
        None,
        "libnccl.so.2",
        [*_PYNCCL, "ncclCommInitRankConfig", "ncclCommWindowRegister", "ncclCommWindowDeregister"],
    ),
    "own-pynccl-config": (None, "libnccl.so.2", [*_PYNCCL, "ncclCommInitRankConfig"]),
    "own-pynccl-no-config": (None, "libnccl.so.2", _PYNCCL),
}


def _so(out: Path, name: str) -> Path:
    wheel, soname, funcs = SO_LIBS[name]
    lib = out / "solibs" / name / soname
    if lib.exists():
        return lib
    lib.parent.mkdir(parents=True, exist_ok=True)
    if wheel:
        return nccl_wheel_so(lib, wheel)
    src = lib.parent / "lib.c"
    src.write_text("".join(f"int {f}(void) {{ return 0; }}\n" for f in funcs))
    subprocess.run(["cc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(lib), str(src)], check=True)
    return lib


def _cxx(out: Path, value: str) -> dict[str, Any]:
    """The real probe's cxx keys for CXX=VALUE over a root with ccache, g++-12 (g++ and c++ links to it) and the
    ccache masquerade link /usr/lib/ccache/g++."""
    from stackcheck.probes.jit import probe_jit
    from stackcheck.readers.fsview import HostView

    root = out / "roots" / "cxx"
    if not root.exists():
        for f in ("usr/bin/ccache", "usr/bin/g++-12", "usr/bin/gcc-12", f"usr/lib/gcc/{TRIPLE}/12/cc1plus"):
            _touch(root / f)
        for link, target in {"usr/bin/g++": "g++-12", "usr/bin/c++": "g++-12",
                             "usr/lib/ccache/g++": "../../bin/ccache"}.items():  # fmt: skip
            (root / link).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, root / link)
    facts = {"cuda_toolkits": []}
    jit = probe_jit(facts, {"PATH": STD_PATH, "CXX": value}, HostView(str(root)))
    return {k: v for k, v in jit.items() if k in ("cxx_found", "cxx", "cxx_reason", "cxx_quoted_found")}


def _symm_base(out: Path, rel: str) -> dict[str, Any]:
    doc = json.loads(_box(out, rel, None).read_text())
    facts = doc["facts"]
    facts["jit"].update(libnccl_so_found=True, libnccl_so="/usr/lib/x86_64-linux-gnu/libnccl.so", cxx_found=True,
                        cxx="/usr/bin/c++", cxx_cuda_runtime_h_found=True, cxx_nccl_h_found=True,
                        libcudart_so_found=True, libcudart_so="/usr/local/cuda/lib64/libcudart.so")  # fmt: skip
    cuda = str(facts["packages"]["torch"].get("cuda") or "")
    name, version = ("nvidia-nccl-cu13", "2.27.7") if cuda.startswith("13") else ("nvidia-nccl-cu12", "2.27.3")
    facts["packages"][name] = {"installed": True, "version": version, "dist_version": version, "location": SITE}
    return doc


def symm_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    symm = ("--tp", "8", "--enable-symm-mem")
    for rel in _releases((0, 5, 1), (0, 5, 23)):
        for value in CXX_VALUES:
            cxx = _cxx(out, value)
            for torch in S_TORCH:
                doc = _symm_base(out, rel)
                t = doc["facts"]["packages"]["torch"]
                local = str(t.get("version") or "").partition("+")[2]
                t.update(version=f"{torch}+{local}" if local else torch, dist_version=torch, location=SITE)
                doc["facts"]["jit"].update(cxx)
                path = _write(out, doc, f"cxx-{rel}-{CXX_VALUES.index(value)}-{torch}.json")
                if stackcheck_json_or_error(_line(out, path, *symm)).get("decision") == "allow":
                    rows.append({"pop": "s", "sglang": rel, "cxx": value, "torch": torch, "jit": cxx})
        rows += nccl_so_path_rows(out, rel, SO_LIBS, _so, _symm_base, name="nso", pop="s")
        print(f"s {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (t) torchao x torch x transformers ---------------------------------------------------------------------------

TORCHAO = ["0.9.0", "0.10.0", "0.11.0", "0.12.0", "0.13.0", "0.14.0", "0.14.1", "0.15.0", "0.16.0", "0.17.0", "0.18.0"]
TORCH = ["2.8.0", "2.9.1", "2.11.0"]
TRANSFORMERS = ["4.50.3", "4.51.0", "4.51.3", "4.53.3", "4.55.2", "4.56.0", "4.57.0"]
T_RELEASES = ["0.5.2", "0.5.5", "0.5.9", "0.5.11", "0.5.14", "0.5.17"]


def torchao_rows(out: Path) -> list[dict[str, Any]]:
    from factcheck41_draw import _tao_box

    write_models(out, {"llama3": LLAMA3})
    return torchao_allow_rows(out, T_RELEASES, TORCHAO, TORCH, TRANSFORMERS, _tao_box, _line)


# ---- (l) LMCache from versions alone -----------------------------------------------------------------------------

LMCACHE = ["0.3.1", "0.3.2", "0.3.3", "0.3.4", "0.3.5", "0.3.6", "0.3.7", "0.3.9", "0.3.12", "0.5.6"]
L_TORCH = ["2.6.0", "2.7.1", "2.8.0", "2.9.1", "2.11.0"]


def lmcache_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in _releases((0, 5, 1), (0, 5, 23)):
        for lmcache in LMCACHE:
            for torch in L_TORCH:
                doc = json.loads(_box(out, rel, None).read_text())
                packages = doc["facts"]["packages"]
                t = packages["torch"]
                local = str(t.get("version") or "").partition("+")[2]
                t.update(version=f"{torch}+{local}" if local else torch, dist_version=torch, location=SITE)
                packages["lmcache"] = {"installed": True, "version": lmcache, "dist_version": lmcache, "location": SITE}
                path = _write(out, doc, f"lmc-{rel}-{lmcache}-{torch}.json")
                line = _line(out, path, "--tp", "1", "--enable-lmcache")
                if stackcheck_json_or_error(line).get("decision") == "allow":
                    rows.append({"pop": "l", "sglang": rel, "lmcache": lmcache, "torch": torch})
        print(f"l {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    factcheck38_draw.TOOLKITS = {k: v for k, v in factcheck38_draw.TOOLKITS.items() if k in H_TOOLKITS}
    pops = [(6, host_rows(out)), (4, symm_rows(out)), (4, torchao_rows(out)), (4, lmcache_rows(out))]
    draw(out, SEED, [(k, undrawn(rows, "factcheck42_drawn.json")) for k, rows in pops])


if __name__ == "__main__":
    main()
