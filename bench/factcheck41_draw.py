"""The forty-first fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md, "Forty-first
sample").

    PYTHONPATH=.:tests python bench/factcheck41_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the sixth session's merges where they allow (git log 1e3cc74d..2211d442):
the library SGLANG_NCCL_SO_PATH names (symm-mem-nccl-so-path: ncclGetVersion read in the file), torch's own -lcudart
link of the symmetric-memory allocator (symm-mem-allocator-cudart-link) with layouts no sample has drawn, torchao's
import rules (torchao-private-import-012 / -014, torchao-built-for-torch-28, torchao-function-configs, the ABI abort
reached through transformers on every launch), FlashInfer's `-ccbin $CC` where CC has words (flashinfer-jit-cc-args)
or names a ccache link, and cutedsl_mla under `--dcp-size` (mla-dcp-cutedsl-flashinfer-no-dcp and neighbours).

(n) `gate --dry-run --format json` of `--tp 8 --enable-symm-mem` (Llama 3) on factcheck27_draw._box (the H200 box) with
    the allocator's build in place (as factcheck39's population s) and SGLANG_NCCL_SO_PATH naming one shared object of
    SO_LIBS, each built here with the system C compiler (`cc -shared`) from our own C file defining the functions
    named (no NCCL code: each returns 0), read by the jit probe's nccl_so_path; every final release 0.5.1-0.5.23:
    one row per allow;
(k) `gate` of `--tp 8 --enable-symm-mem` on the same box, its jit section the real probe's over a root laid out as
    factcheck40_draw's population s (toolkit 12.8.93 for a cu12 torch, 13.0.88 for cu13; Debian gcc 12; nccl.h and
    an x86_64 libnccl.so) with one libcudart layout of K_CUDART (our own files), every second final release
    0.5.1-0.5.23: one row per allow where jit.libcudart_so_found is true;
(t) `gate` of `--tp 1` and of `--tp 1 --torchao-config int8wo` (Llama 3) on the same box with torchao A (TORCHAO),
    torch's version replaced by T (TORCH, the local suffix kept) and transformers X (TRANSFORMERS) in the packages,
    no kernel symbol section, for SGLang releases T_RELEASES: one row per allow;
(c) `gate` of `--tp 1` on factcheck39_draw's FlashInfer-JIT box (flashinfer-jit-cache not installed) for every final
    release 0.5.1-0.5.8, the toolkits 12.8.93 and 13.0.88 (real host_config.h) and each host of CC_HOSTS (CC with
    options, a ccache masquerade link, NVCC_CCBIN beside CC): one row per allow;
(d) `gate` of `--tp 8 --dcp-size 2` with cutedsl_mla as the attention, decode or prefill backend (and decode
    cutedsl_mla beside prefill fa4 / flashinfer), DeepSeek R1 (V3) and V2 Lite configs, on A100 / H100 / B200 /
    RTX PRO 6000 x8 boxes, every final release 0.5.15-0.5.23: one row per allow.

LMCache's lmcache_native (igap25) is not drawn: its rows need the kernel symbol section of real torch wheels.

Draw: random.Random(20270110); per population its rows sorted by their JSON text, shuffled, the first k (n: 4, k: 3,
t: 5, c: 3, d: 3), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import factcheck38_draw
import factcheck39_draw
import factcheck40_draw
from factcheck27_draw import _box
from factcheck38_draw import _A100, _B200, _H100, _PRO6000, HOSTS, _ccache, _deb, _two, _with
from factcheck40_draw import X86_64, _line, _releases
from factcheck_draw import (
    draw,
    gate_allow_rows,
    model_flag_launches,
    stackcheck_json_or_error,
    torchao_allow_rows,
    write_models,
)
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V2_LITE, LLAMA3

SEED = 20270110
SITE = "/opt/venv/lib/python3.12/site-packages"

# the functions each library defines (names only; every one `int NAME(void) { return 0; }`)
_NCCL_CORE = [
    "ncclGetErrorString", "ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank", "ncclAllReduce",
    "ncclAllGather", "ncclReduceScatter", "ncclSend", "ncclRecv", "ncclBroadcast", "ncclCommDestroy",
    "ncclGroupStart", "ncclGroupEnd", "ncclCommRegister", "ncclCommDeregister",
]  # fmt: skip
_NCCL_SYMM = ["ncclCommWindowRegister", "ncclCommWindowDeregister", "ncclMemAlloc", "ncclMemFree"]
SO_LIBS: dict[str, tuple[str, list[str]]] = {
    # name -> (DT_SONAME, functions)
    "nccl-2.27-shape": ("libnccl.so.2", [*_NCCL_CORE, *_NCCL_SYMM]),
    "nccl-2.21-shape": ("libnccl.so.2", _NCCL_CORE),
    "get-version-only": ("libnccl.so.2", ["ncclGetVersion"]),
    "no-nccl": ("libfoo.so.1", ["fooInit"]),
    "rccl-shape": ("librccl.so.1", _NCCL_CORE),
}


def _build_so(out: Path, name: str) -> Path:
    soname, funcs = SO_LIBS[name]
    lib = out / "solibs" / name / soname
    if lib.exists():
        return lib
    lib.parent.mkdir(parents=True, exist_ok=True)
    src = lib.parent / "lib.c"
    src.write_text("".join(f"int {f}(void) {{ return 0; }}\n" for f in funcs))
    subprocess.run(["cc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(lib), str(src)], check=True)
    return lib


def _nso_box(out: Path, rel: str, lib: str) -> Path:
    from stackcheck.probes.jit import nccl_so_path
    from stackcheck.readers.fsview import HostView

    path = _build_so(out, lib)
    doc = json.loads(_box(out, rel, None).read_text())
    facts = doc["facts"]
    section = facts["jit"]
    section.update(libnccl_so_found=True, libnccl_so="/usr/lib/x86_64-linux-gnu/libnccl.so", cxx_found=True,
                   cxx="/usr/bin/c++", cxx_cuda_runtime_h_found=True, cxx_nccl_h_found=True,
                   libcudart_so_found=True, libcudart_so="/usr/local/cuda/lib64/libcudart.so")  # fmt: skip
    section.update(nccl_so_path({"SGLANG_NCCL_SO_PATH": str(path)}, HostView("/")))
    cuda = str(facts["packages"]["torch"].get("cuda") or "")
    name, version = ("nvidia-nccl-cu13", "2.27.7") if cuda.startswith("13") else ("nvidia-nccl-cu12", "2.27.3")
    facts["packages"][name] = {"installed": True, "version": version, "dist_version": version, "location": SITE}
    box = out / "boxes" / f"nso-{rel}-{lib}.json"
    box.parent.mkdir(parents=True, exist_ok=True)
    box.write_text(json.dumps(doc))
    return box


def nso_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in _releases((0, 5, 1), (0, 5, 23)):
        for lib in SO_LIBS:
            path = _nso_box(out, rel, lib)
            if stackcheck_json_or_error(_line(out, path, "--tp", "8", "--enable-symm-mem")).get("decision") == "allow":
                jit = json.loads(path.read_text())["facts"]["jit"]
                read = {k: v for k, v in jit.items() if k.startswith("nccl_so_path") and k != "nccl_so_path"}
                rows.append({"pop": "n", "sglang": rel, "lib": lib, "jit": read})
        print(f"n {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


K_CUDART: dict[str, tuple[dict[str, bytes], dict[str, str], dict[str, str]]] = {
    # as factcheck40_draw.CUDART: files (H/ = the CUDA home), symlinks, environment
    "lib64-dangling-dir-link": ({"H/lib/libcudart.so": X86_64}, {"H/lib64": "../cuda-missing/lib64"}, {}),
    "usr-lib64": ({"usr/lib64/libcudart.so": X86_64}, {}, {}),
    "usr-local-lib": ({"usr/local/lib/libcudart.so": X86_64}, {}, {}),
    "torch-lib": ({f"{SITE.lstrip('/')}/torch/lib/libcudart.so": X86_64}, {}, {}),
    "gcc-dir-other-major": ({"usr/lib/gcc/x86_64-linux-gnu/15/libcudart.so": X86_64}, {}, {}),
    "library-path-link-to-wheel": (
        {f"{SITE.lstrip('/')}/nvidia/cuda_runtime/lib/libcudart.so.12": X86_64},
        {"opt/cudart/libcudart.so": f"/{SITE.lstrip('/')}/nvidia/cuda_runtime/lib/libcudart.so.12"},
        {"LIBRARY_PATH": "/opt/cudart"},
    ),
    "ld-library-path-only": ({"opt/cudart/libcudart.so": X86_64}, {}, {"LD_LIBRARY_PATH": "/opt/cudart"}),
    "script-group": (
        {"H/lib64/libcudart.so": b"GROUP ( libcudart.so.12 )\n", "H/lib64/libcudart.so.12": X86_64},
        {},
        {},
    ),
}


def cudart_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    factcheck40_draw.CUDART.update(K_CUDART)
    rows: list[dict[str, Any]] = []
    for rel in _releases((0, 5, 1), (0, 5, 23))[::2]:
        for variant in K_CUDART:
            path, env = factcheck40_draw._symm_box(out, rel, variant)
            jit = json.loads(path.read_text())["facts"]["jit"]
            if jit.get("libcudart_so_found") is not True:
                continue
            if stackcheck_json_or_error(_line(out, path, "--tp", "8", "--enable-symm-mem")).get("decision") == "allow":
                read = {k: jit[k] for k in jit if k.startswith("libcudart_so") and not k.endswith("dirs")}
                rows.append({"pop": "k", "sglang": rel, "variant": variant, "env": env, "jit": read})
        print(f"k {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


TORCHAO = ["0.9.0", "0.10.0", "0.11.0", "0.12.0", "0.13.0", "0.14.0", "0.14.1", "0.15.0", "0.16.0", "0.17.0", "0.18.0"]
TORCH = ["2.6.0", "2.8.0", "2.9.1", "2.11.0"]
TRANSFORMERS = ["4.56.2", "4.57.1", "5.0.0"]
T_RELEASES = ["0.5.1", "0.5.4", "0.5.7", "0.5.8", "0.5.10", "0.5.13", "0.5.16"]


def _tao_box(out: Path, rel: str, torchao: str, torch: str, transformers: str) -> Path:
    doc = json.loads(factcheck40_draw._torchao_box(out, rel, torchao, torch).read_text())
    doc["facts"]["packages"]["transformers"] = {
        "installed": True,
        "version": transformers,
        "dist_version": transformers,
        "location": SITE,
    }
    path = out / "boxes" / f"tao-{rel}-{torchao}-{torch}-{transformers}.json"
    path.write_text(json.dumps(doc))
    return path


def torchao_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    return torchao_allow_rows(out, T_RELEASES, TORCHAO, TORCH, TRANSFORMERS, _tao_box, _line)


CC_HOSTS: dict[str, dict[str, Any]] = {
    "deb-gcc-12-cc-gcc-m64": _with(_deb("12"), CC="gcc -m64"),
    "deb-gcc-12-cc-gcc-fpic": _with(_deb("12"), CC="gcc -fPIC"),
    "deb-gcc-12-cc-gcc-std": _with(_deb("12"), CC="gcc -std=gnu11"),
    "deb-gcc-12-cc-ccache-gcc": _with(
        {**_deb("12"), "files": [*_deb("12")["files"], "usr/bin/ccache"]}, CC="ccache gcc"
    ),
    "ccache-gcc-12-cc-masquerade": _with(_ccache("12"), CC="/usr/lib/ccache/gcc"),
    "ccache-gcc-12-path-only": _ccache("12"),
    "deb-gcc-15-and-12-cc-gcc-12-ccbin-15": _with(_two("15", "12"), CC="gcc-12", NVCC_CCBIN="/usr/bin/gcc-15"),
    "deb-gcc-12-and-15-cc-gcc-15-prepend-12": _with(
        _two("12", "15"), CC="gcc-15", NVCC_PREPEND_FLAGS="-ccbin /usr/bin/gcc-12"
    ),
    "deb-gcc-12-cc-trailing-space": _with(_deb("12"), CC="gcc "),
}
C_TOOLKITS = ["12.8.93", "13.0.88"]


def cc_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    for host, spec in CC_HOSTS.items():
        HOSTS.setdefault(host, spec)
        factcheck39_draw.F_HOSTS.setdefault(host, spec)
    rows: list[dict[str, Any]] = []
    for toolkit in C_TOOLKITS:
        for host in CC_HOSTS:
            for rel in _releases((0, 5, 1), (0, 5, 8)):
                path = factcheck39_draw._fjit_box(out, rel, toolkit, host)
                if stackcheck_json_or_error(_line(out, path, "--tp", "1")).get("decision") == "allow":
                    jit = json.loads(path.read_text())["facts"]["jit"]
                    keys = (*factcheck39_draw.F_KEYS, "cc_host_one_program", "cc_host_reason")
                    base = {"pop": "c", "sglang": rel, "toolkit": toolkit, "host": host, "env": CC_HOSTS[host]["env"]}
                    rows.append({**base, "jit": {k: jit[k] for k in keys if k in jit}})
            print(f"c {toolkit} {host}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def dcp_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"dsr1": DEEPSEEK_R1, "dsv2lite": DEEPSEEK_V2_LITE})
    table: dict[str, tuple[str, str]] = {}
    for model in ("dsr1", "dsv2lite"):
        for side in ("", "decode-", "prefill-"):
            table[f"{model}|{side}cutedsl_mla"] = (model, f"--dcp-size 2 --{side}attention-backend cutedsl_mla")
        for prefill in ("fa4", "flashinfer"):
            flags = f"--dcp-size 2 --decode-attention-backend cutedsl_mla --prefill-attention-backend {prefill}"
            table[f"{model}|decode-cutedsl_mla|prefill-{prefill}"] = (model, flags)
    launches = model_flag_launches(table, "--tp", "8")
    boxes = {"a100": _A100, "h100": _H100, "b200": _B200, "pro6000": _PRO6000}
    return gate_allow_rows(out, boxes, _releases((0, 5, 15), (0, 5, 23)), _box, launches, pop="d")


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    factcheck38_draw.TOOLKITS = {k: v for k, v in factcheck38_draw.TOOLKITS.items() if k in C_TOOLKITS}
    pops = [(4, nso_rows(out)), (3, cudart_rows(out)), (5, torchao_rows(out)), (3, cc_rows(out)), (3, dcp_rows(out))]
    draw(out, SEED, pops)


if __name__ == "__main__":
    main()
