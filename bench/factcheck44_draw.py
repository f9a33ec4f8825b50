"""The forty-fourth fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md, "Forty-fourth
sample"). Run:

    PYTHONPATH=.:tests python bench/factcheck44_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the ninth session's merges (git log 20ffe806..8bd7f513 -- manifests
stackcheck) where a facts file can carry them: the Mooncake transfer backend's libcudart.so.12 (preflight.json
transfer_packages mooncake runtime_library, --disaggregation-mode), kernels-needs-version-transformers over
transformers 4.56.0-5.12.x, transformers-floor-not-read (SGLang 0.5.24 pre-releases), lmcache-requires, a gcc 13 driver
carrying GCC's SARIF "2.1.0" string, a clang's major read from its binary (a static clang's version string), a gcc
driver copied into a prefix with its cc1plus, libcudart.so linker scripts and DT_SONAME, and
symm-mem-nccl-so-path-same-nccl (jit.nccl_so_path_version); and toward rows no sample has drawn (a row equal to one
of an earlier sample's bench/factcheck*_drawn.json is left out). `audit --root`'s own PATH and a shadowing ./sglang
are read from a real filesystem by the probes, not from a facts file: not drawn here.

(m) `gate` of `--tp 8 --disaggregation-mode prefill` (Llama 3) on factcheck27_draw._box (the H200 box) for the SGLang
    releases of M_RELEASES, mooncake-transfer-engine M (M_MOONCAKE), torch's CUDA build C (M_TORCH_CUDA: the
    release's torch relabelled +cuXY, its cuda and variant to match) and the loader's libcudart.so.12 (M_CUDART12: a
    path found, null looked for and not found): one row per allow;
(k) `gate` of `--tp 1` (Llama 3) on the same box with transformers X (K_TRANSFORMERS), kernels K (K_KERNELS, or not
    installed) and lmcache L (K_LMCACHE, or none; `--enable-lmcache` where installed), for the SGLang releases of
    K_RELEASES (0.5.24rc0: 0.5.23's box with sglang's version replaced): one row per allow;
(g) factcheck_draw.jit_host_rows over G_HOSTS (an Ubuntu 24.04 gcc 13 driver whose .rodata carries GCC's SARIF
    "2.1.0" beside its version, written here; static clang binaries carrying their version string, written by
    tests/gate_cli.clang_binary; this machine's real gcc 12 driver copied to /opt/gcc/bin with a cc1plus below it),
    toolkits 12.8.93 and 13.0.88: one row per allow;
(c) `gate` of `--tp 8 --enable-symm-mem` with libcudart.so laid out as each of C_CUDART (linker scripts naming a
    library built here with DT_SONAME libcudart.so.12 / .13, GROUP and INPUT, a path and a name;
    factcheck40_draw._symm_box), every second final release 0.5.1-0.5.23: one row per allow;
(n) `gate` of `--tp 8 --enable-symm-mem` with the allocator's build in place, every second final release 0.5.1-0.5.23,
    SGLANG_NCCL_SO_PATH naming the real libnccl.so.2 of nvidia-nccl-cu12 2.26.2 / 2.27.3 and nvidia-nccl-cu13 2.32.6
    (the real probe, nccl_so_path_version read), torch's nvidia-nccl wheel each of N_TORCH_NCCL: one row per allow.

Draw: random.Random(20270113); per population the rows sorted by JSON text, shuffled, the first k (m 5, k 4, g 4,
c 2, n 3), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import factcheck38_draw
import factcheck40_draw
from factcheck27_draw import _box
from factcheck38_draw import _deb, _with
from factcheck40_draw import _line, _releases
from factcheck42_draw import _symm_base, _write
from factcheck43_draw import N_LIBS, _cudart, _so
from factcheck_draw import (
    TRIPLE,
    draw_undrawn,
    jit_host_rows,
    keep_toolkits,
    nccl_so_path_rows,
    stackcheck_json_or_error,
    write_models,
)
from gate_cli import LLAMA3

SEED = 20270113
SITE = "/opt/venv/lib/python3.12/site-packages"


def _pkg(version: str) -> dict[str, Any]:
    return {"installed": True, "version": version, "dist_version": version, "location": SITE}


# ---- (m) Mooncake's libcudart.so.12 --------------------------------------------------------------------------------

M_MOONCAKE = ["0.3.5", "0.3.6.post1", "0.3.7", "0.3.8.post1", "0.3.10.post2", "0.3.12", "0.3.13.post1"]
M_TORCH_CUDA = ["12.8", "12.9", "13.0"]
M_CUDART12 = [None, "/usr/local/cuda-12.8/lib64/libcudart.so.12"]
M_RELEASES = ["0.5.1", "0.5.7", "0.5.13", "0.5.19", "0.5.23"]


def mooncake_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in M_RELEASES:
        for mooncake in M_MOONCAKE:
            for cuda in M_TORCH_CUDA:
                for cudart in M_CUDART12:
                    doc = json.loads(_box(out, rel, None).read_text())
                    facts = doc["facts"]
                    facts["packages"]["mooncake-transfer-engine"] = _pkg(mooncake)
                    torch = facts["packages"]["torch"]
                    tag = "cu" + cuda.replace(".", "")
                    torch.update(cuda=cuda, variant=tag, version=f"{torch['dist_version']}+{tag}")
                    facts.setdefault("cuda_libs", {})["libcudart.so.12"] = cudart
                    path = _write(out, doc, f"moon-{rel}-{mooncake}-{cuda}-{M_CUDART12.index(cudart)}.json")
                    line = _line(out, path, "--tp", "8", "--disaggregation-mode", "prefill")
                    if stackcheck_json_or_error(line).get("decision") == "allow":
                        base = {"pop": "m", "sglang": rel, "mooncake": mooncake, "torch_cuda": cuda}
                        rows.append({**base, "libcudart.so.12": cudart})
        print(f"m {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (k) transformers x kernels x LMCache --------------------------------------------------------------------------

K_RELEASES = ["0.5.12", "0.5.18", "0.5.23", "0.5.24rc0"]
K_TRANSFORMERS = ["4.56.2", "4.57.6", "5.4.0", "5.9.0", "5.12.1", "5.13.0"]
K_KERNELS = [None, "0.14.1", "0.15.1"]
K_LMCACHE = [None, "0.3.9", "0.5.6"]


def kernels_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in K_RELEASES:
        base_rel = rel if "24" not in rel else "0.5.23"
        for tf in K_TRANSFORMERS:
            for kernels in K_KERNELS:
                for lmcache in K_LMCACHE:
                    doc = json.loads(_box(out, base_rel, None).read_text())
                    packages = doc["facts"]["packages"]
                    if rel != base_rel:
                        packages["sglang"].update(version=rel, dist_version=rel)
                    packages["transformers"] = _pkg(tf)
                    packages["kernels"] = _pkg(kernels) if kernels else {"installed": False}
                    if lmcache:
                        packages["lmcache"] = _pkg(lmcache)
                    path = _write(out, doc, f"kern-{rel}-{tf}-{kernels}-{lmcache}.json")
                    flags = ("--tp", "1", *(("--enable-lmcache",) if lmcache else ()))
                    if stackcheck_json_or_error(_line(out, path, *flags)).get("decision") == "allow":
                        base = {"pop": "k", "sglang": rel, "transformers": tf, "kernels": kernels}
                        rows.append({**base, "lmcache": lmcache})
        print(f"k {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (g) host compilers read from their binaries -------------------------------------------------------------------

_MARKS = b"\0Configured with: %s\n\0gcc version %s %s\n\0"
_SARIF = b"\0toolExecutionNotifications\0$schema\0002.1.0\0informationUri\0"


def _sarif_gcc13() -> dict[str, Any]:
    """Ubuntu 24.04's gcc 13: /usr/bin/gcc -> gcc-13 -> x86_64-linux-gnu-gcc-13, an ELF (tests/elfwriter.py) whose
    strings are GCC's driver strings, 13.3.0 and the SARIF strings (our own bytes, the shape igap's H100 read showed),
    cc1 / cc1plus in /usr/lib/gcc/TRIPLE/13."""
    from elfwriter import build_so

    base = _deb("13")
    links = {**base["links"], "usr/bin/gcc-13": f"{TRIPLE}-gcc-13"}
    files = [f for f in base["files"] if f != "usr/bin/gcc-13"]
    body = build_so(needed=["libc.so.6"]) + _MARKS + b"13.3.0\0(C)\0" + _SARIF
    return {**base, "files": files, "links": links, "bodies": {f"usr/bin/{TRIPLE}-gcc-13": body}}


def _static_clang(name: str, version: str) -> dict[str, Any]:
    """Debian's gcc 12 and /usr/bin/clang-NAME, a static clang (no LLVM library needed) carrying VERSION's strings."""
    from elfwriter import build_so

    base = _deb("12")
    body = build_so(needed=["libc.so.6"]) + f"\0 version {version}\0Clang {version}\0".encode()
    return {**base, "bodies": {f"usr/bin/clang-{name}": body}}


def _real_prefix_cc1plus() -> dict[str, Any]:
    """Debian's gcc 12 and the real gcc 12 driver copied to /opt/gcc/bin/gcc with cc1 / cc1plus in
    /opt/gcc/libexec/gcc/TRIPLE/12 and start files in lib/gcc/TRIPLE/12 (a driver with its own programs)."""
    base = _deb("12")
    files = [*base["files"], f"opt/gcc/lib/gcc/{TRIPLE}/12/crtbegin.o"]
    files += [f"opt/gcc/libexec/gcc/{TRIPLE}/12/cc1", f"opt/gcc/libexec/gcc/{TRIPLE}/12/cc1plus"]
    return {**base, "files": files, "copies": {"opt/gcc/bin/gcc": "gcc"}}


G_HOSTS: dict[str, dict[str, Any]] = {
    "sarif-gcc-13-cc": _with(_sarif_gcc13(), CC="gcc-13"),
    "sarif-gcc-13-ccbin": _with(_sarif_gcc13(), NVCC_CCBIN="/usr/bin/gcc-13"),
    "sarif-gcc-13-path": _with(_sarif_gcc13(), PATH=f"/usr/local/bin:{factcheck38_draw.STD_PATH}"),
    "static-clang-19-cc": _with(_static_clang("19", "19.1.7"), CC="clang-19"),
    "static-clang-19-ccbin": _with(_static_clang("19", "19.1.7"), NVCC_CCBIN="/usr/bin/clang-19"),
    "static-clang-20-ccbin": _with(_static_clang("20", "20.1.8"), NVCC_CCBIN="/usr/bin/clang-20"),
    "static-clang-18-named-19-ccbin": _with(_static_clang("19", "18.1.8"), NVCC_CCBIN="/usr/bin/clang-19"),
    "real-prefix-cc1plus-ccbin": _with(_real_prefix_cc1plus(), NVCC_CCBIN="/opt/gcc/bin/gcc"),
    "real-prefix-cc1plus-cc": _with(_real_prefix_cc1plus(), CC="/opt/gcc/bin/gcc"),
}
G_TOOLKITS = ["12.8.93", "13.0.88"]
G_KEYS = ("cc_host", "nvcc_host", "flashinfer_host", "cxx_found")


# ---- (c) libcudart.so linker scripts and DT_SONAME ---------------------------------------------------------------

C_CUDART = ["script-input-12", "script-group-12", "script-input-13", "script-path-12", "script-as-needed-12"]


def _cudart_layouts(out: Path) -> None:
    so12, so13 = _cudart(out, "12"), _cudart(out, "13")
    factcheck40_draw.CUDART.update({
        "script-input-12": ({"H/lib64/libcudart.so": b"INPUT(libcudart.so.12)\n", "H/lib64/libcudart.so.12": so12},
                            {}, {}),
        "script-group-12": ({"H/lib64/libcudart.so": b"/* GNU ld script */\nGROUP ( libcudart.so.12 )\n",
                             "H/lib64/libcudart.so.12": so12}, {}, {}),
        "script-input-13": ({"H/lib64/libcudart.so": b"INPUT(libcudart.so.13)\n", "H/lib64/libcudart.so.13": so13},
                            {}, {}),
        "script-path-12": ({"H/lib64/libcudart.so": b"INPUT(/usr/local/cuda/lib64/libcudart.so.12)\n",
                            "H/lib64/libcudart.so.12": so12}, {}, {}),
        "script-as-needed-12": ({"H/lib64/libcudart.so": b"INPUT(AS_NEEDED(libcudart.so.12))\n",
                                 "H/lib64/libcudart.so.12": so12}, {}, {}),
    })  # fmt: skip


def cudart_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    _cudart_layouts(out)
    rows: list[dict[str, Any]] = []
    for rel in _releases((0, 5, 1), (0, 5, 23))[::2]:
        for variant in C_CUDART:
            path, _env = factcheck40_draw._symm_box(out, rel, variant)
            doc = json.loads(path.read_text())
            jit = doc["facts"]["jit"]
            if stackcheck_json_or_error(_line(out, path, "--tp", "8", "--enable-symm-mem")).get("decision") == "allow":
                torch = doc["facts"]["packages"]["torch"]["version"]
                read = {k: jit[k] for k in jit if k.startswith("libcudart_so") and not k.endswith("dirs")}
                rows.append({"pop": "c", "sglang": rel, "torch": torch, "cudart": variant, "jit": read})
        print(f"c {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (n) SGLANG_NCCL_SO_PATH of torch's NCCL version ---------------------------------------------------------------

N_REAL = ["nvidia-nccl-cu12-2.26.2", "nvidia-nccl-cu12-2.27.3", "nvidia-nccl-cu13-2.32.6"]
N_TORCH_NCCL = [("nvidia-nccl-cu12", "2.26.2"), ("nvidia-nccl-cu12", "2.27.3"), ("nvidia-nccl-cu13", "2.27.7"),
                ("nvidia-nccl-cu13", "2.32.6")]  # fmt: skip


def nso_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in _releases((0, 5, 1), (0, 5, 23))[::2]:
        for dist, version in N_TORCH_NCCL:

            def base(out: Path, rel: str, dist: str = dist, version: str = version) -> dict[str, Any]:
                doc = _symm_base(out, rel)
                packages = doc["facts"]["packages"]
                for name in ("nvidia-nccl-cu12", "nvidia-nccl-cu13"):
                    packages.pop(name, None)
                packages[dist] = _pkg(version)
                return doc

            got = nccl_so_path_rows(out, rel, N_REAL, _so, base, name=f"nso44-{dist}-{version}", pop="n")
            rows += [{**r, "torch_nccl": f"{dist} {version}"} for r in got]
        print(f"n {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    keep_toolkits(G_TOOLKITS)
    assert all(lib in N_LIBS for lib in N_REAL)
    pops = [
        (5, mooncake_rows(out)),
        (4, kernels_rows(out)),
        (4, jit_host_rows(out, G_HOSTS, G_TOOLKITS, G_KEYS, pop="g")),
        (2, cudart_rows(out)),
        (3, nso_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck44_drawn.json")


if __name__ == "__main__":
    main()
