"""The forty-fifth fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md, "Forty-fifth
sample"). Run:

    PYTHONPATH=.:tests python bench/factcheck45_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the tenth session's merges (git log 5035d867..4f8873de -- manifests
stackcheck): SGLang 0.5.1-0.5.4's NCCL >= 2.27.3 rule for SGLANG_NCCL_SO_PATH (symm-mem-nccl-so-path-version) and
0.5.8+'s same-NCCL rule (symm-mem-nccl-so-path-same-nccl), the NCCL version read from the library's string
(jit.nccl_so_path_version), the Mooncake feature mooncake-runtime-libs and the gate's system libraries (libibverbs,
libnuma, libcurl, libmlx5 from 0.3.12), the pre-release rule at a range's bound (transformers, Mooncake, nixl,
torchao), GCC's SARIF reading, a shared-library clang's major and its lib/clang/N/include, GNU ld 2.37+ for a
bare-name linker script and collect2's ld, and `gate --cwd`; and toward rows no sample has drawn (a row equal to one of
an earlier sample's bench/factcheck*_drawn.json is left out). `gate --root` judges an unpacked root's own packages,
read by the probes from a real filesystem with no facts file: not drawn here.

(n) `gate` of `--tp 8 --enable-symm-mem` (Llama 3) on factcheck42's allocator box (factcheck27's H200 box, the
    allocator's build in place, torch's nvidia-nccl wheel at its pin) for the releases of N_RELEASES,
    SGLANG_NCCL_SO_PATH naming each of N_LIBS (the real libnccl.so.2 of nvidia-nccl-cu12 2.26.2 / 2.27.3 and -cu13
    2.32.6; shared objects built here with `cc -shared` from our own C defining every function pynccl and the
    allocator bind and carrying one or two NCCL version strings of our own, in .rodata or in .data; no NCCL code; the
    real probe), torch's nvidia-nccl wheel as pinned or each of N_TORCH_NCCL: one row per allow;
(m) `gate` of `--tp 8 --disaggregation-mode prefill` on factcheck27's H200 box for the releases of M_RELEASES,
    mooncake-transfer-engine M (M_MOONCAKE: releases, pre-releases and one newer than any read), torch relabelled a
    CUDA 12.9 / 13.0 build, the loader's system libraries as each of M_LIBS, libcudart.so.12 found or not: one row per
    allow;
(a) `audit --format json` of the (m) boxes of A_RELEASES x A_MOONCAKE: one row per distinct ok verdict of feature
    mooncake-runtime-libs (its reasons);
(p) the pre-release rule at a range's bound: `gate` of `--tp 1` on the H200 box with transformers X (P_TRANSFORMERS)
    and kernels K (none / 0.14.1 / 0.15.1), of `--tp 1 --torchao-config C` (int8wo, int4wo) with torchao A
    (P_TORCHAO) beside the release's torch and transformers 4.57.1 / 5.4.0 (factcheck41's torchao box), of `--tp 8
    --disaggregation-mode prefill --disaggregation-transfer-backend nixl` with nixl N (P_NIXL), nixl-cu12 0.7.1 or
    none, Mooncake's system libraries found; releases of P_RELEASES: one row per allow;
(g) factcheck_draw.jit_host_rows over G_HOSTS (Ubuntu 24.04's gcc 13 driver of our own bytes with GCC's SARIF strings
    in other orders; clangs built with shared libraries (DT_NEEDED libclangBasic.so.N ...) with their resource
    directory as an installation lays it, under their own and another name), toolkits 12.8.93 and 13.0.88: one row
    per allow;
(l) `gate` of `--tp 2 --enable-symm-mem` on tests/gate_cli.allocator_box at the releases of L_RELEASES (torch 2.14.1
    +cu130) with the libcudart_so keys of the real probe (nccl_link) over a root whose CUDA 13.0 home's libcudart.so is
    each linker script of L_SCRIPTS and whose linker is each of L_LDS (GNU ld programs of our own in binutils' string
    shape, this machine's real /usr/bin/ld copied, a collect2 real-ld, two PATH entries): one row per allow;
(w) `gate --cwd DIR` of `--tp 1` with a relative --model-path on factcheck27's H200 box (W_CASES: DIR a directory, a
    symbolic link to one, a path through one; the model beside or below): one row per allow.

Draw: random.Random(20270114); per population the rows sorted by JSON text, shuffled, the first k (n 4, m 3, a 2, p 3,
g 2, l 2, w 2), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import factcheck43_draw
from factcheck27_draw import _box
from factcheck38_draw import _deb, _with
from factcheck40_draw import _line
from factcheck41_draw import _tao_box
from factcheck42_draw import _symm_base, _write
from factcheck43_draw import _ALL, _c, _so
from factcheck_draw import (
    TRIPLE,
    audit_ok_rows,
    draw_undrawn,
    jit_host_rows,
    keep_toolkits,
    nccl_so_path_rows,
    stackcheck_json_or_error,
    write_models,
)
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS

SEED = 20270114
SITE = "/opt/venv/lib/python3.12/site-packages"


def _pkg(version: str) -> dict[str, Any]:
    return {"installed": True, "version": version, "dist_version": version, "location": SITE}


# ---- (n) SGLANG_NCCL_SO_PATH: the version read from the library's string -------------------------------------------

N_RELEASES = ["0.5.1", "0.5.2", "0.5.3", "0.5.4", "0.5.8", "0.5.9", "0.5.11", "0.5.14", "0.5.17", "0.5.20", "0.5.23"]


def _versioned(*versions: str, data: bool = False) -> str:
    """Our own C: every function pynccl and the allocator bind, and one array per VERSIONS holding the string
    "NCCL version V" (in .data where DATA, else const: .rodata)."""
    qual = "" if data else "const "
    strings = [f'{qual}char nccl_version_{i}[] = "NCCL version {v}";' for i, v in enumerate(versions)]
    return _c(_ALL) + "\n".join(strings) + "\n"


N_OWN: dict[str, str] = {
    "own-2.27.3-cuda12.9": _versioned("2.27.3+cuda12.9"),
    "own-2.26.2-cuda12.2": _versioned("2.26.2+cuda12.2"),
    "own-2.28.9-cuda12.9": _versioned("2.28.9+cuda12.9"),
    "own-2.27.7-cuda13.0": _versioned("2.27.7+cuda13.0"),
    "own-2.27.3-suffix": _versioned("2.27.3-custom+cuda12.9"),
    "own-2.27.3-and-2.26.2": _versioned("2.27.3+cuda12.9", "2.26.2+cuda12.2"),
    "own-2.27.3-in-data": _versioned("2.27.3+cuda12.9", data=True),
}
N_LIBS = ["nvidia-nccl-cu12-2.26.2", "nvidia-nccl-cu12-2.27.3", "nvidia-nccl-cu13-2.32.6", *N_OWN]
N_TORCH_NCCL: list[tuple[str, str] | None] = [None, ("nvidia-nccl-cu12", "2.28.9"), ("nvidia-nccl-cu13", "2.27.7")]


def nso_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    for name, source in N_OWN.items():
        factcheck43_draw.N_LIBS[name] = (None, source, None)
    rows: list[dict[str, Any]] = []
    for rel in N_RELEASES:
        for torch_nccl in N_TORCH_NCCL:

            def base(out: Path, rel: str, torch_nccl: tuple[str, str] | None = torch_nccl) -> dict[str, Any]:
                doc = _symm_base(out, rel)
                if torch_nccl is not None:
                    packages = doc["facts"]["packages"]
                    for name in ("nvidia-nccl-cu12", "nvidia-nccl-cu13"):
                        packages.pop(name, None)
                    packages[torch_nccl[0]] = _pkg(torch_nccl[1])
                return doc

            tag = "pinned" if torch_nccl is None else "-".join(torch_nccl)
            got = nccl_so_path_rows(out, rel, N_LIBS, _so, base, name=f"nso45-{tag}", pop="n")
            pinned = _symm_base(out, rel)["facts"]["packages"]
            torch_wheel = torch_nccl or next(
                (n, str(pinned[n]["version"])) for n in ("nvidia-nccl-cu12", "nvidia-nccl-cu13") if n in pinned
            )
            rows += [{**r, "torch_nccl": " ".join(torch_wheel)} for r in got]
        print(f"n {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (m) Mooncake's system libraries, (a) the audit's mooncake-runtime-libs ----------------------------------------

M_RELEASES = ["0.5.2", "0.5.9", "0.5.16", "0.5.23"]
M_MOONCAKE = ["0.3.6", "0.3.7rc1", "0.3.9", "0.3.11", "0.3.12rc1", "0.3.12", "0.3.13.post1", "0.3.14"]
M_TORCH_CUDA = ["12.9", "13.0"]
M_LIBS: dict[str, dict[str, str | None]] = {
    "all": dict(MOONCAKE_SYSTEM_LIBS),
    "no-mlx5": {**MOONCAKE_SYSTEM_LIBS, "libmlx5.so.1": None},
    "no-curl": {**MOONCAKE_SYSTEM_LIBS, "libcurl.so.4": None},
    "mlx5-not-probed": {k: v for k, v in MOONCAKE_SYSTEM_LIBS.items() if k != "libmlx5.so.1"},
}
M_CUDART12 = [None, "/usr/local/cuda-12.9/lib64/libcudart.so.12"]


def _moon_box(out: Path, rel: str, mooncake: str, cuda: str, libs: str, cudart: str | None) -> Path:
    doc = json.loads(_box(out, rel, None).read_text())
    facts = doc["facts"]
    facts["packages"]["mooncake-transfer-engine"] = _pkg(mooncake)
    torch = facts["packages"]["torch"]
    tag = "cu" + cuda.replace(".", "")
    torch.update(cuda=cuda, variant=tag, version=f"{torch['dist_version']}+{tag}")
    cuda_libs = facts.setdefault("cuda_libs", {})
    for name in MOONCAKE_SYSTEM_LIBS:
        cuda_libs.pop(name, None)
    cuda_libs.update(M_LIBS[libs])
    cuda_libs["libcudart.so.12"] = cudart
    return _write(out, doc, f"moon45-{rel}-{mooncake}-{cuda}-{libs}-{M_CUDART12.index(cudart)}.json")


def mooncake_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in M_RELEASES:
        for mooncake in M_MOONCAKE:
            for cuda in M_TORCH_CUDA:
                for libs in M_LIBS:
                    for cudart in M_CUDART12:
                        path = _moon_box(out, rel, mooncake, cuda, libs, cudart)
                        line = _line(out, path, "--tp", "8", "--disaggregation-mode", "prefill")
                        if stackcheck_json_or_error(line).get("decision") == "allow":
                            base = {"pop": "m", "sglang": rel, "mooncake": mooncake, "torch_cuda": cuda}
                            rows.append({**base, "libs": libs, "libcudart.so.12": cudart})
        print(f"m {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


A_RELEASES = ["0.5.9", "0.5.23"]
A_MOONCAKE = ["0.3.6", "0.3.7rc1", "0.3.12", "0.3.13.post1"]


def mooncake_audit_rows(out: Path) -> list[dict[str, Any]]:
    boxes = [(m, c, lib, x) for m in A_MOONCAKE for c in M_TORCH_CUDA for lib in M_LIBS for x in M_CUDART12]

    def labels(box: tuple[str, str, str, str | None]) -> dict[str, Any]:
        m, c, lib, x = box
        return {"mooncake": m, "torch_cuda": c, "libs": lib, "libcudart.so.12": x}

    rows = audit_ok_rows(boxes, A_RELEASES, lambda b, rel: _moon_box(out, rel, *b), pop="a", labels=labels)
    return [r for r in rows if r["feature"] == "mooncake-runtime-libs"]


# ---- (p) pre-releases at a range's bound ---------------------------------------------------------------------------

P_RELEASES = ["0.5.12", "0.5.23"]
P_TRANSFORMERS = ["4.56.0rc1", "4.57.0.dev0", "5.0.0rc1", "5.12.0rc1", "5.13.0rc1", "5.13.0.dev0"]
P_KERNELS = [None, "0.14.1", "0.15.1"]
P_TORCHAO = ["0.12.0rc1", "0.13.0rc1", "0.14.0rc1", "0.15.0rc1", "0.16.0.dev0"]
P_TAO_TRANSFORMERS = ["4.57.1", "5.4.0"]
P_NIXL = ["0.6.2rc1", "0.7.0rc1", "0.7.1rc1", "0.7.1.dev0", "0.8.0rc1"]
NIXL = ("--tp", "8", "--disaggregation-mode", "prefill", "--disaggregation-transfer-backend", "nixl")


def prerelease_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in P_RELEASES:
        torch = json.loads(_box(out, rel, None).read_text())["facts"]["packages"]["torch"]["dist_version"]
        for tf in P_TRANSFORMERS:
            for kernels in P_KERNELS:
                doc = json.loads(_box(out, rel, None).read_text())
                packages = doc["facts"]["packages"]
                packages["transformers"] = _pkg(tf)
                packages["kernels"] = _pkg(kernels) if kernels else {"installed": False}
                path = _write(out, doc, f"pre45-{rel}-{tf}-{kernels}.json")
                if stackcheck_json_or_error(_line(out, path, "--tp", "1")).get("decision") == "allow":
                    rows.append({"pop": "p", "sglang": rel, "transformers": tf, "kernels": kernels})
        for torchao in P_TORCHAO:
            for tf in P_TAO_TRANSFORMERS:
                path = _tao_box(out, rel, torchao, torch, tf)
                for config in ("int8wo", "int4wo"):
                    line = _line(out, path, "--tp", "1", "--torchao-config", config)
                    if stackcheck_json_or_error(line).get("decision") == "allow":
                        base = {"pop": "p", "sglang": rel, "torchao": torchao, "torch": torch}
                        rows.append({**base, "transformers": tf, "config": config})
        for nixl in P_NIXL:
            for backend in (None, "0.7.1"):
                doc = json.loads(_box(out, rel, None).read_text())
                packages = doc["facts"]["packages"]
                packages.update({"nixl": _pkg(nixl), "nixl-cu13": {"installed": False},
                                 "mooncake-transfer-engine": {"installed": False},
                                 "nixl-cu12": _pkg(backend) if backend else {"installed": False}})  # fmt: skip
                doc["facts"].setdefault("cuda_libs", {}).update(MOONCAKE_SYSTEM_LIBS)
                path = _write(out, doc, f"nixl45-{rel}-{nixl}-{backend}.json")
                if stackcheck_json_or_error(_line(out, path, *NIXL)).get("decision") == "allow":
                    rows.append({"pop": "p", "sglang": rel, "nixl": nixl, "nixl-cu12": backend})
        print(f"p {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (g) host compilers read from their binaries -------------------------------------------------------------------

_MARKS = b"\0Configured with: %s\n\0gcc version %s %s\n\0"


def _gcc13(sarif: bytes) -> dict[str, Any]:
    """Ubuntu 24.04's gcc 13: /usr/bin/gcc -> gcc-13 -> TRIPLE-gcc-13, an ELF (tests/elfwriter.py) with GCC's driver
    strings, 13.3.0 and SARIF (our own bytes), cc1 / cc1plus in /usr/lib/gcc/TRIPLE/13."""
    from elfwriter import build_so

    base = _deb("13")
    links = {**base["links"], "usr/bin/gcc-13": f"{TRIPLE}-gcc-13"}
    files = [f for f in base["files"] if f != "usr/bin/gcc-13"]
    body = build_so(needed=["libc.so.6"]) + _MARKS + b"13.3.0\0(C)\0" + sarif
    return {**base, "files": files, "links": links, "bodies": {f"usr/bin/{TRIPLE}-gcc-13": body}}


_SARIF_SCHEMA_LAST = b"\0informationUri\0002.1.0\0toolExecutionNotifications\0$schema\0"
_SARIF_URL = b"\0https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json\0002.1.0\0"


def _shared_clang(name: str, major: str, resource: str | None) -> dict[str, Any]:
    """Debian's gcc 12 and /usr/bin/clang-NAME -> ../lib/llvm-NAME/bin/clang, a clang built with shared libraries (an
    ELF needing libclangBasic.so.MAJOR, libclangDriver.so.MAJOR and libLLVMSupport.so.MAJOR, no version string),
    its resource directory /usr/lib/llvm-NAME/lib/clang/RESOURCE/include where given."""
    from elfwriter import build_so

    base = _deb("12")
    links = {**base["links"], f"usr/bin/clang-{name}": f"../lib/llvm-{name}/bin/clang"}
    needed = [f"libclangBasic.so.{major}", f"libclangDriver.so.{major}", f"libLLVMSupport.so.{major}", "libc.so.6"]
    files = list(base["files"])
    if resource is not None:
        files.append(f"usr/lib/llvm-{name}/lib/clang/{resource}/include/stddef.h")
    body = build_so(needed=needed)
    return {**base, "files": files, "links": links, "bodies": {f"usr/lib/llvm-{name}/bin/clang": body}}


G_HOSTS: dict[str, dict[str, Any]] = {
    "sarif-last-gcc-13-cc": _with(_gcc13(_SARIF_SCHEMA_LAST), CC="gcc-13"),
    "sarif-last-gcc-13-ccbin": _with(_gcc13(_SARIF_SCHEMA_LAST), NVCC_CCBIN="/usr/bin/gcc-13"),
    "sarif-url-gcc-13-ccbin": _with(_gcc13(_SARIF_URL), NVCC_CCBIN="/usr/bin/gcc-13"),
    "shared-clang-19-res-19-ccbin": _with(_shared_clang("19", "19", "19"), NVCC_CCBIN="/usr/bin/clang-19"),
    "shared-clang-18-res-18.1.8-cc": _with(_shared_clang("18", "18", "18.1.8"), CC="clang-18"),
    "shared-clang-19-res-18-ccbin": _with(_shared_clang("19", "19", "18"), NVCC_CCBIN="/usr/bin/clang-19"),
    "shared-clang-20-named-19-res-19-ccbin": _with(_shared_clang("19", "20", "19"), NVCC_CCBIN="/usr/bin/clang-19"),
}
G_TOOLKITS = ["12.8.93", "13.0.88"]
G_KEYS = ("cc_host", "nvcc_host", "flashinfer_host", "cxx_found")


# ---- (l) libcudart.so linker scripts and the link's GNU ld ---------------------------------------------------------

L_RELEASES = ["0.5.1", "0.5.5", "0.5.9", "0.5.13", "0.5.17", "0.5.21", "0.5.23"]
L_HOME = "/usr/local/cuda-13.0"
L_SCRIPTS = {
    "input-bare-13": "INPUT(libcudart.so.13.0.96)",
    "group-bare-13": "/* GNU ld script */\nGROUP ( libcudart.so.13 )\n",
    "as-needed-bare-13": "INPUT(AS_NEEDED(libcudart.so.13.0.96))",
    "input-bare-12": "INPUT(libcudart.so.12.9.79)",
    "group-abs-13": "GROUP ( {lib}/libcudart.so.13.0.96 )",
}
L_LDS = ["2.40", "2.37", "2.38-ubuntu", "real", "2.40-and-collect2-real-ld", "2.35-first-on-path", "2.41-first-on-path"]


def _ld_root(out: Path, script: str, ld: str) -> Path:
    """A root: L_HOME/lib64 holding libcudart.so.13.0.96 (DT_SONAME libcudart.so.13) and its libcudart.so.13 link,
    libcudart.so.12.9.79 (libcudart.so.12), the linker script libcudart.so (L_SCRIPTS[script]), and the linker LD."""
    from elfwriter import write_so
    from gate_cli import gnu_ld, touch_exe

    root = out / "ldroots" / f"{script}--{ld}"
    if root.exists():
        return root
    lib = root / L_HOME.lstrip("/") / "lib64"
    lib.mkdir(parents=True)
    write_so(lib / "libcudart.so.13.0.96", defined=["cudaGetDeviceCount"], soname="libcudart.so.13")
    write_so(lib / "libcudart.so.12.9.79", defined=["cudaGetDeviceCount"], soname="libcudart.so.12")
    os.symlink("libcudart.so.13.0.96", lib / "libcudart.so.13")
    (lib / "libcudart.so").write_text(L_SCRIPTS[script].replace("{lib}", f"{L_HOME}/lib64"))
    usr = root / "usr/bin/ld"
    if ld == "real":
        real = shutil.which("ld")
        if real is None:
            raise SystemExit("no ld on this machine")
        usr.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(real).resolve(), usr)
    elif ld == "2.38-ubuntu":
        gnu_ld(usr, "2.38", "(GNU Binutils for Ubuntu)")
    elif ld == "2.40-and-collect2-real-ld":
        gnu_ld(usr, "2.40")
        touch_exe(root / f"usr/lib/gcc/{TRIPLE}/12/real-ld")
    elif ld.endswith("-first-on-path"):
        first = ld.split("-", maxsplit=1)[0]
        gnu_ld(root / "usr/local/bin/ld", first, "version" if first == "2.35" else "(GNU Binutils)")
        gnu_ld(usr, "2.41" if first == "2.35" else "2.35", "(GNU Binutils)" if first == "2.35" else "version")
    else:
        gnu_ld(usr, ld, "(GNU Binutils for Debian)")
    return root


def ld_rows(out: Path) -> list[dict[str, Any]]:
    from gate_cli import allocator_box

    from stackcheck.probes.jit import nccl_link
    from stackcheck.readers.fsview import HostView

    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for script in L_SCRIPTS:
        for ld in L_LDS:
            root = _ld_root(out, script, ld)
            got = nccl_link({"PATH": "/usr/local/bin:/usr/bin"}, HostView(str(root)), L_HOME, True, "x86_64")
            read = {k: v for k, v in got.items() if k.startswith("libcudart_so") and not k.endswith("dirs")}
            for rel in L_RELEASES:
                where = out / "lboxes" / f"{script}--{ld}--{rel}"
                where.mkdir(parents=True, exist_ok=True)
                path = allocator_box(where, rel)
                doc = json.loads(path.read_text())
                doc["facts"]["jit"].update(read)
                path.write_text(json.dumps(doc))
                if stackcheck_json_or_error(_line(out, path, "--tp", "2", "--enable-symm-mem")).get("decision") == (
                    "allow"
                ):
                    rows.append({"pop": "l", "sglang": rel, "script": script, "ld": ld, "jit": read})
        print(f"l {script}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (w) gate --cwd with a relative --model-path -------------------------------------------------------------------

W_RELEASES = ["0.5.9", "0.5.23"]
# name -> (the --cwd directory below OUT/cwd, the --model-path)
W_CASES: dict[str, tuple[str, str]] = {
    "dot-slash": ("serve", "./m"),
    "bare": ("serve", "m"),
    "dotdot": ("serve/run", "../m"),
    "link-dir": ("serve-link", "./m"),
    "link-dotdot": ("run-link", "../m"),
    "through-link-dotdot": ("serve", "sub-link/../m"),
    "nested": ("serve", "models/deep/m"),
}


def _cwd_tree(out: Path) -> Path:
    """OUT/cwd: serve/m and serve/models/deep/m (Llama 3's config), serve/run, other/run; serve-link -> serve,
    run-link -> other/run (its .. is other, which holds no m), serve/sub-link -> ../other/run."""
    top = out / "cwd"
    if top.exists():
        return top
    for model in ("serve/m", "serve/models/deep/m"):
        (top / model).mkdir(parents=True)
        (top / model / "config.json").write_text(json.dumps(LLAMA3))
    (top / "serve/run").mkdir()
    (top / "other/run").mkdir(parents=True)
    os.symlink("serve", top / "serve-link")
    os.symlink("other/run", top / "run-link")
    os.symlink("../other/run", top / "serve/sub-link")
    return top


def cwd_rows(out: Path) -> list[dict[str, Any]]:
    top = _cwd_tree(out)
    rows: list[dict[str, Any]] = []
    for rel in W_RELEASES:
        path = _box(out, rel, None)
        for case, (directory, model) in W_CASES.items():
            line = ["python3", "-m", "sglang.launch_server", "--model-path", model, "--tp", "1"]
            args = ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--cwd", str(top / directory)]
            if stackcheck_json_or_error([*args, "--", *line]).get("decision") == "allow":
                rows.append({"pop": "w", "sglang": rel, "case": case, "cwd": directory, "model_path": model})
        print(f"w {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    keep_toolkits(G_TOOLKITS)
    pops = [
        (4, nso_rows(out)),
        (3, mooncake_rows(out)),
        (2, mooncake_audit_rows(out)),
        (3, prerelease_rows(out)),
        (2, jit_host_rows(out, G_HOSTS, G_TOOLKITS, G_KEYS, pop="g")),
        (2, ld_rows(out)),
        (2, cwd_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck45_drawn.json")


if __name__ == "__main__":
    main()
