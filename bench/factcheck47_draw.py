"""The forty-seventh fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md, "Forty-seventh
sample"). Run:

    PYTHONPATH=.:tests python bench/factcheck47_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the twelfth session's merges (git log 422d13dc..eb28ed21 -- manifests
stackcheck): torch's own NCCL wheel against torch's pin (torch-nccl-wheel-pin-cu12 / -cu13), kernels' huggingface-hub
beside transformers 4.x (kernels-huggingface-hub-transformers4), Mooncake's liblzma.so.5 and its installs from a file,
transformers 4.50-4.54's hub-kernel table (model-architecture), LMCache's mp_host under SGLang 0.5.21-0.5.23
(lmcache-unified-mp-host), --enable-kv-cache-sharding's NCCL (kv-shard-nccl-*), torchao's fbgemm ranges as checks.json
holds them, nccl-so-path-cuda-unread, and the link's ld behind a wrapper script in GCC's name; and toward rows no
sample has drawn (a row equal to one of an earlier sample's bench/factcheck*_drawn.json is left out).

(n) `gate` of `--tp 2` (Llama 3) on factcheck27's H200 box at N_RELEASES with torch relabelled to each CUDA variant
    components.json lists for the release's torch, nvidia-nccl-cu12 of N_CU12 and nvidia-nccl-cu13 of N_CU13 (None:
    not installed): one row per allow;
(k) `gate` of `--tp 1` on factcheck27's H200 box at 0.5.1 / 0.5.9 with transformers of K_TRANSFORMERS, kernels of
    K_KERNELS, huggingface-hub of K_HUB (None: not read): one row per allow;
(z) `gate` of `--tp 8 --disaggregation-mode prefill` on factcheck27's H200 box at 0.5.9 / 0.5.23 with Mooncake of
    Z_MOONCAKE installed as Z_INSTALL (a PyPI wheel, pip install of a file, of a directory), liblzma.so.5 as Z_LZMA,
    torch relabelled CUDA 12.8 / 13.0: one row per allow;
(a) `gate` of `--tp 1` on factcheck27's H200 box at A_RELEASES (the 4.50-4.54 entries name SGLang 0.4.x, which the
    gate refuses as older than every release the manifests know: the rows are 0.5.1 / 0.5.2 with those transformers)
    with transformers of A_TRANSFORMERS, kernels of A_KERNELS, huggingface-hub 0.34.4 and a config.json of each
    architecture of A_ARCHS: one row per allow;
(p) `gate` of `--enable-lmcache` (and P_FLAGS) at 0.5.20-0.5.23 with LMCache of P_LMCACHE and the launch's env prefix
    of P_ENV: one row per allow;
(s) `gate` of `--tp 8 --disaggregation-mode prefill --enable-kv-cache-sharding` at 0.5.22 / 0.5.23 with the NCCL
    wheels of S_NCCL, SGLANG_NCCL_SO_PATH of S_SO_PATH in the report's env and SGLANG_ENABLE_KV_SHARD_ZERO_SM_GATHER
    of S_GATHER, Mooncake 0.3.13.post1 with its system libraries found: one row per allow, with the kv-shard warnings
    it carries;
(t) `gate` of `--tp 1` with `--torchao-config C` (none, int8wo, int4wo, fp8wo) on factcheck41's torchao box with
    torchao of T_TORCHAO, torch of T_TORCH, fbgemm-gpu-genai of T_FBGEMM, transformers 4.57.1, release 0.5.9: one row
    per allow;
(u) `gate` of U_FLAGS on tests/gate_cli.nccl_named_box's shape (h200-newest, torch's NCCL wheel at its pin) at 0.5.9 /
    0.5.23 with SGLANG_NCCL_SO_PATH of U_PATHS read by the real probe (nccl_so_path, with and without the server's
    directory known), the driver at CUDA 12.9 / 13.0: one row per allow;
(w) `gate` of `--tp 2 --enable-symm-mem` on tests/gate_cli.allocator_box at 0.5.13 / 0.5.23 with the libcudart_so keys
    of the real probe (nccl_link) over roots whose CUDA 13.0 libcudart.so is a linker script (W_SCRIPTS) and whose link
    compiler is CXX=/opt/gcc/bin/g++, a wrapper script of W_WRAPPERS, the PATH's ld 2.42 or 2.30: one row per allow.

Draw: random.Random(20270116); per population the rows sorted by JSON text, shuffled, the first k (n 3, k 2, z 2,
a 2, p 2, s 2, t 1, u 2, w 2), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck27_draw import _box
from factcheck41_draw import _tao_box
from factcheck42_draw import _write
from factcheck_draw import draw_undrawn, gate_line, stackcheck_json_or_error, write_models
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS

SEED = 20270116
SITE = "/opt/venv/lib/python3.12/site-packages"


def _pkg(version: str, **extra: Any) -> dict[str, Any]:
    return {"installed": True, "version": version, "dist_version": version, "location": SITE, **extra}


def _decision(args: list[str]) -> dict[str, Any]:
    return stackcheck_json_or_error(args)


def _allowed(args: list[str]) -> bool:
    return _decision(args).get("decision") == "allow"


# ---- (n) torch's NCCL wheel against torch's pin -------------------------------------------------------------------

N_RELEASES = ["0.5.9", "0.5.13", "0.5.23"]
N_CU12 = [None, "2.26.2", "2.27.3", "2.27.5", "2.27.7", "2.28.9", "2.29.3"]
N_CU13 = [None, "2.27.7", "2.28.9", "2.29.7", "2.30.7", "2.31.2"]


def _torch_variants(version: str) -> list[str]:
    from stackcheck.knowledge.loader import load

    rel = next(r for r in load().releases("torch") if r.get("version") == version)
    return ["cu" + str(v.get("cuda")).replace(".", "") for v in rel.get("variants") or [] if v.get("cuda")]


def torch_nccl_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in N_RELEASES:
        base = json.loads(_box(out, rel, None).read_text())
        torch = base["facts"]["packages"]["torch"]
        for tag in _torch_variants(torch["dist_version"]):
            for cu12 in N_CU12:
                for cu13 in N_CU13:
                    doc = json.loads(json.dumps(base))
                    packages = doc["facts"]["packages"]
                    cuda = f"{tag[2:-1]}.{tag[-1]}"
                    packages["torch"].update(version=f"{torch['dist_version']}+{tag}", variant=tag, cuda=cuda)
                    packages["nvidia-nccl-cu12"] = _pkg(cu12) if cu12 else {"installed": False}
                    packages["nvidia-nccl-cu13"] = _pkg(cu13) if cu13 else {"installed": False}
                    path = _write(out, doc, f"n47-{rel}-{tag}-{cu12}-{cu13}.json")
                    if _allowed(gate_line(out, path, "--tp", "2")):
                        rows.append({"pop": "n", "sglang": rel, "torch": packages["torch"]["version"],
                                     "nvidia-nccl-cu12": cu12, "nvidia-nccl-cu13": cu13})  # fmt: skip
        print(f"n {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (k) kernels' huggingface-hub beside transformers -------------------------------------------------------------

K_TRANSFORMERS = ["4.51.3", "4.55.4", "4.56.1", "4.57.6", "5.0.0", "5.4.0"]
K_KERNELS = [None, "0.14.1", "0.16.0", "0.17.2"]
K_HUB = [None, "0.30.2", "0.34.4", "1.0.0", "1.3.0", "1.10.0"]


def hub_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.1", "0.5.9"):
        for tf in K_TRANSFORMERS:
            for kernels in K_KERNELS:
                for hub in K_HUB:
                    doc = json.loads(_box(out, rel, None).read_text())
                    packages = doc["facts"]["packages"]
                    packages["transformers"] = _pkg(tf)
                    packages["kernels"] = _pkg(kernels) if kernels else {"installed": False}
                    if hub is None:
                        packages.pop("huggingface-hub", None)
                    else:
                        packages["huggingface-hub"] = _pkg(hub)
                    path = _write(out, doc, f"hub47-{rel}-{tf}-{kernels}-{hub}.json")
                    if _allowed(gate_line(out, path, "--tp", "1")):
                        rows.append({"pop": "k", "sglang": rel, "transformers": tf, "kernels": kernels,
                                     "huggingface-hub": hub})  # fmt: skip
        print(f"k {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (z) Mooncake's liblzma.so.5 and its installs from a file -----------------------------------------------------

Z_MOONCAKE = ["0.3.5", "0.3.6.post1", "0.3.8.post1", "0.3.10.post2", "0.3.11.post1", "0.3.12", "0.3.13.post1"]
Z_INSTALL = [None, "file", "dir"]
Z_LZMA: dict[str, dict[str, str | None]] = {
    "found": {"liblzma.so.5": "/usr/lib/x86_64-linux-gnu/liblzma.so.5"},
    "absent": {"liblzma.so.5": None},
    "not-probed": {},
}


def mooncake_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.9", "0.5.23"):
        for version in Z_MOONCAKE:
            for install in Z_INSTALL:
                for lzma, libs in Z_LZMA.items():
                    for cuda in ("12.8", "13.0"):
                        doc = json.loads(_box(out, rel, None).read_text())
                        facts = doc["facts"]
                        pkg = _pkg(version, **({"source_install": install} if install else {}))
                        facts["packages"]["mooncake-transfer-engine"] = pkg
                        torch = facts["packages"]["torch"]
                        tag = "cu" + cuda.replace(".", "")
                        torch.update(cuda=cuda, variant=tag, version=f"{torch['dist_version']}+{tag}")
                        facts["cuda_libs"] = {**(facts.get("cuda_libs") or {}), "ld_cache": "file",
                                              **MOONCAKE_SYSTEM_LIBS, **libs}  # fmt: skip
                        path = _write(out, doc, f"moon47-{rel}-{version}-{install}-{lzma}-{cuda}.json")
                        if _allowed(gate_line(out, path, "--tp", "8", "--disaggregation-mode", "prefill")):
                            rows.append({"pop": "z", "sglang": rel, "mooncake": version, "install": install,
                                         "liblzma": lzma, "torch_cuda": cuda})  # fmt: skip
        print(f"z {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (a) transformers 4.50-4.54's hub-kernel table ----------------------------------------------------------------

A_RELEASES = ["0.5.1", "0.5.2"]
A_TRANSFORMERS = ["4.50.3", "4.52.3", "4.53.0", "4.54.1"]
A_KERNELS = [None, "0.14.1", "0.16.0"]
A_ARCHS = {
    "LlamaForCausalLM": "llama", "Qwen2ForCausalLM": "qwen2", "MistralForCausalLM": "mistral",
    "Qwen3ForCausalLM": "qwen3", "Gemma3ForCausalLM": "gemma3_text", "MixtralForCausalLM": "mixtral",
    "Qwen2_5_VLForConditionalGeneration": "qwen2_5_vl", "Llama4ForConditionalGeneration": "llama4",
}  # fmt: skip


def hub_table_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {f"a-{a}": {**LLAMA3, "architectures": [a], "model_type": t} for a, t in A_ARCHS.items()})
    rows: list[dict[str, Any]] = []
    for rel in A_RELEASES:
        for tf in A_TRANSFORMERS:
            for kernels in A_KERNELS:
                doc = json.loads(_box(out, rel, None).read_text())
                packages = doc["facts"]["packages"]
                packages["transformers"] = _pkg(tf)
                packages["kernels"] = _pkg(kernels) if kernels else {"installed": False}
                packages["huggingface-hub"] = _pkg("0.34.4")
                path = _write(out, doc, f"hubt47-{rel}-{tf}-{kernels}.json")
                for arch in A_ARCHS:
                    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(out / "models" / f"a-{arch}")]
                    args = ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line, "--tp", "1"]
                    if _allowed(args):
                        rows.append({"pop": "a", "sglang": rel, "transformers": tf, "kernels": kernels, "arch": arch})
        print(f"a {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (p) LMCache's mp_host under SGLang 0.5.21-0.5.23 -------------------------------------------------------------

P_RELEASES = ["0.5.20", "0.5.21", "0.5.22", "0.5.23"]
P_LMCACHE = ["0.5.5", "0.5.6"]
P_ENV: dict[str, list[str]] = {
    "none": [],
    "mp-host": ["env", "LMCACHE_MP_HOST=10.0.0.5"],
    "config-file": ["env", "LMCACHE_CONFIG_FILE=/etc/lmcache/mp.yaml"],
    "mp-port-only": ["env", "LMCACHE_MP_PORT=5555"],
    "mp-host-blank": ["env", "LMCACHE_MP_HOST= "],
    "both": ["env", "LMCACHE_CONFIG_FILE=/etc/lmcache/mp.yaml", "LMCACHE_MP_HOST=10.0.0.5"],
    "config-file-relative": ["env", "LMCACHE_CONFIG_FILE=mp.yaml"],
}
P_FLAGS: dict[str, list[str]] = {
    "": [],
    "config-flag": ["--lmcache-config-file", "/etc/lmcache/mp.yaml"],
    "config-flag-empty": ["--lmcache-config-file", ""],
    "tp2": ["--tp", "2"],
}


def lmcache_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in P_RELEASES:
        for lmcache in P_LMCACHE:
            doc = json.loads(_box(out, rel, None).read_text())
            doc["facts"]["packages"]["lmcache"] = _pkg(lmcache)
            path = _write(out, doc, f"lmc47-{rel}-{lmcache}.json")
            for env, prefix in P_ENV.items():
                for flags, words in P_FLAGS.items():
                    line = [*prefix, "python3", "-m", "sglang.launch_server", "--model-path",
                            str(out / "models" / "llama3"), "--enable-lmcache", *words]  # fmt: skip
                    if _allowed(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]):
                        rows.append({"pop": "p", "sglang": rel, "lmcache": lmcache, "env": env, "flags": flags})
        print(f"p {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (s) --enable-kv-cache-sharding's NCCL ------------------------------------------------------------------------

S_NCCL: dict[str, dict[str, str]] = {
    "cu13-2.30.7": {"nvidia-nccl-cu13": "2.30.7"},
    "cu13-2.31.2": {"nvidia-nccl-cu13": "2.31.2"},
    "cu13-2.32.6": {"nvidia-nccl-cu13": "2.32.6"},
    "cu12-2.31.2": {"nvidia-nccl-cu12": "2.31.2"},
    "cu13-2.31.2+cu12-2.27.7": {"nvidia-nccl-cu13": "2.31.2", "nvidia-nccl-cu12": "2.27.7"},
    "none": {},
}
S_SO_PATH = [None, "libnccl.so.2"]
S_GATHER = [None, "1", "0", "false", "off", "no", "True"]
S_LIBS = {"liblzma.so.5": "/usr/lib/x86_64-linux-gnu/liblzma.so.5",
          "libcudart.so.12": "/usr/local/cuda-12.9/lib64/libcudart.so.12"}  # fmt: skip


def kv_shard_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.22", "0.5.23"):
        for nccl, wheels in S_NCCL.items():
            for so_path in S_SO_PATH:
                for gather in S_GATHER:
                    doc = json.loads(_box(out, rel, None).read_text())
                    packages = doc["facts"]["packages"]
                    for name in ("nvidia-nccl-cu12", "nvidia-nccl-cu13"):
                        packages[name] = _pkg(wheels[name]) if name in wheels else {"installed": False}
                    packages["mooncake-transfer-engine"] = _pkg("0.3.13.post1")  # (prefill's transfer engine)
                    doc["facts"]["cuda_libs"] = {**(doc["facts"].get("cuda_libs") or {}), **MOONCAKE_SYSTEM_LIBS,
                                                 **S_LIBS}  # fmt: skip
                    env = doc["facts"]["system"].setdefault("env", {})
                    if so_path is not None:
                        env["SGLANG_NCCL_SO_PATH"] = so_path
                        doc["facts"]["jit"]["nccl_so_path"] = so_path
                    if gather is not None:
                        env["SGLANG_ENABLE_KV_SHARD_ZERO_SM_GATHER"] = gather
                    path = _write(out, doc, f"kv47-{rel}-{nccl}-{so_path}-{gather}.json")
                    flags = ("--tp", "8", "--disaggregation-mode", "prefill", "--enable-kv-cache-sharding")
                    got = _decision(gate_line(out, path, *flags))
                    if got.get("decision") == "allow":
                        warned = sorted(
                            str(r.get("rule"))
                            for w in got.get("warnings") or []
                            for r in w.get("reasons") or []
                            if str(r.get("rule", "")).startswith("kv-shard")
                        )
                        rows.append({"pop": "s", "sglang": rel, "nccl": nccl, "SGLANG_NCCL_SO_PATH": so_path,
                                     "gather": gather, "kv_shard_warnings": warned})  # fmt: skip
        print(f"s {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (t) torchao's fbgemm ranges as checks.json holds them ---------------------------------------------------------

T_TORCHAO = ["0.12.0+cu126", "0.13.0.post1", "0.14.1", "0.14.1.post1", "0.15.0", "0.17.0"]
T_TORCH = ["2.8.0", "2.9.1"]
T_FBGEMM = [None, "1.3.0", "1.4.0"]
T_CONFIGS = ["", "int8wo", "int4wo", "fp8wo"]


def torchao_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for torchao in T_TORCHAO:
        for torch in T_TORCH:
            for fbgemm in T_FBGEMM:
                doc = json.loads(_tao_box(out, "0.5.9", torchao, torch, "4.57.1").read_text())
                doc["facts"]["packages"]["fbgemm-gpu-genai"] = _pkg(fbgemm) if fbgemm else {"installed": False}
                path = _write(out, doc, f"tao47-{torchao}-{torch}-{fbgemm}.json")
                for config in T_CONFIGS:
                    flags = ("--tp", "1", *(("--torchao-config", config) if config else ()))
                    if _allowed(gate_line(out, path, *flags)):
                        rows.append({"pop": "t", "sglang": "0.5.9", "torchao": torchao, "torch": torch,
                                     "fbgemm-gpu-genai": fbgemm, "config": config})  # fmt: skip
    print(f"t: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (u) nccl-so-path-cuda-unread ---------------------------------------------------------------------------------

U_PATHS: dict[str, tuple[str, str | None, str | None]] = {
    # name: (SGLANG_NCCL_SO_PATH, LD_LIBRARY_PATH, the library's version string or None)
    "absolute-13.0": ("{lib}/libnccl.so.2", None, "2.30.7+cuda13.0"),
    "absolute-12.9": ("{lib}/libnccl.so.2", None, "2.27.7+cuda12.9"),
    "absolute-no-string": ("{lib}/libnccl.so.2", None, None),
    "relative": ("lib/libnccl.so.2", None, "2.30.7+cuda13.0"),
    "bare-ld-path": ("libnccl-u47.so.2", "{lib}", "2.30.7+cuda13.0"),
    "bare-ld-path-empty-first": ("libnccl-u47.so.2", ":{lib}", "2.30.7+cuda13.0"),
    "missing": ("/nowhere/libnccl.so.2", None, "2.30.7+cuda13.0"),
    "torchs-name": ("libnccl.so.2", None, "2.30.7+cuda13.0"),
}
U_FLAGS: dict[str, tuple[str, ...]] = {
    "tp2": ("--tp", "2"),
    "pp2": ("--pp", "2"),
    "tp1-dp2": ("--tp", "1", "--dp", "2"),
}


def _u_box(out: Path, rel: str, name: str, driver: str, known_cwd: bool) -> Path:
    from elfwriter import build_so

    from stackcheck.probes.jit import PYNCCL_FUNCTIONS, PYNCCL_WINDOW, nccl_so_path
    from stackcheck.readers.fsview import HostView

    value, ld_path, string = U_PATHS[name]
    launch = out / "u-launch" / name
    lib = launch / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    file = Path(value.format(lib=lib)).name
    tail = b"\0" + f"NCCL version {string}".encode() + b"\0" if string else b""
    (lib / file).write_bytes(build_so(defined=[*PYNCCL_FUNCTIONS, *PYNCCL_WINDOW], soname="libnccl.so.2") + tail)
    env = {"SGLANG_NCCL_SO_PATH": value.format(lib=lib)}
    if ld_path is not None:
        env["LD_LIBRARY_PATH"] = ld_path.format(lib=lib)
    doc = json.loads(_box(out, rel, None).read_text())
    doc["facts"]["driver"]["cuda"] = driver
    doc["facts"]["system"].setdefault("env", {}).update(env)
    doc["facts"]["jit"].update(nccl_so_path(env, HostView(), cwd=str(launch) if known_cwd else None))
    return _write(out, doc, f"u47-{rel}-{name}-{driver}-{int(known_cwd)}.json")


def so_path_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.9", "0.5.23"):
        for name in U_PATHS:
            for driver in ("12.9", "13.0"):
                for known in (False, True):
                    path = _u_box(out, rel, name, driver, known)
                    for flags, words in U_FLAGS.items():
                        if _allowed(gate_line(out, path, *words)):
                            rows.append({"pop": "u", "sglang": rel, "so_path": name, "driver_cuda": driver,
                                         "cwd_known": known, "flags": flags})  # fmt: skip
        print(f"u {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (w) the link's ld behind a wrapper script in GCC's name ------------------------------------------------------

W_HOME = "/usr/local/cuda-13.0"
W_SCRIPTS = {
    "input-bare-13": "INPUT(libcudart.so.13.0.96)",
    "group-abs-13": "GROUP ( {lib}/libcudart.so.13.0.96 )",
}
_GLIB = "/opt/gcc/lib/gcc/x86_64-linux-gnu/13"
W_WRAPPERS: dict[str, str] = {
    "h100": f'#!/bin/sh\nexec /opt/gcc/bin/g++-real -B/opt/gcc/bin/ -B{_GLIB}/ "$@"\n',
    "no-b": '#!/bin/sh\nexec /opt/gcc/bin/g++-real "$@"\n',
    "fuse-ld-gold": f'#!/bin/sh\nexec /opt/gcc/bin/g++-real -B{_GLIB}/ -fuse-ld=gold "$@"\n',
    "fuse-ld-lld": '#!/bin/sh\nexec /opt/gcc/bin/g++-real -fuse-ld=lld "$@"\n',
    "wl-plugin": '#!/bin/sh\nexec /opt/gcc/bin/g++-real -Wl,--no-as-needed "$@"\n',
    "compiler-path": '#!/bin/sh\nCOMPILER_PATH=/opt/binutils/bin exec /opt/gcc/bin/g++-real "$@"\n',
    "export-path": '#!/bin/sh\nexport PATH=/opt/binutils/bin:$PATH\nexec /opt/gcc/bin/g++-real "$@"\n',
    "b-binutils": '#!/bin/sh\nexec /opt/gcc/bin/g++-real -B/opt/binutils/bin/ "$@"\n',
    "specs": '#!/bin/sh\nexec /opt/gcc/bin/g++-real -specs=/opt/gcc/link.specs "$@"\n',
}
W_PATH_LD = ["2.42", "2.30"]


def _w_root(out: Path, script: str, wrapper: str, path_ld: str) -> Path:
    from elfwriter import write_so
    from gate_cli import gcc_driver, gnu_ld, touch_exe

    root = out / "wroots" / f"{script}--{wrapper}--{path_ld}"
    if root.exists():
        return root
    lib = root / W_HOME.lstrip("/") / "lib64"
    lib.mkdir(parents=True)
    write_so(lib / "libcudart.so.13.0.96", defined=["cudaGetDeviceCount"], soname="libcudart.so.13")
    (lib / "libcudart.so.13").symlink_to("libcudart.so.13.0.96")
    (lib / "libcudart.so").write_text(W_SCRIPTS[script].replace("{lib}", f"{W_HOME}/lib64"))
    gnu_ld(root / "usr/bin/ld", path_ld, "(GNU Binutils for Ubuntu)")
    gnu_ld(root / "opt/binutils/bin/ld", "2.30", "(GNU Binutils)")
    for name in ("as", "cc1", "cc1plus", "collect2"):
        touch_exe(root / "opt/gcc/bin" / name)
    touch_exe(root / "opt/gcc/bin/g++", W_WRAPPERS[wrapper].encode())
    touch_exe(root / "opt/gcc/bin/g++-real", gcc_driver(13))
    touch_exe(root / _GLIB.lstrip("/") / "crtbeginS.o")
    (root / "opt/gcc/link.specs").write_text("*link:\n+ --no-as-needed\n")
    return root


def wrapper_rows(out: Path) -> list[dict[str, Any]]:
    from gate_cli import allocator_box

    from stackcheck.probes.jit import nccl_link
    from stackcheck.readers.fsview import HostView

    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for script in W_SCRIPTS:
        for wrapper in W_WRAPPERS:
            for path_ld in W_PATH_LD:
                root = _w_root(out, script, wrapper, path_ld)
                env = {"PATH": "/usr/bin:/opt/gcc/bin", "CXX": "/opt/gcc/bin/g++"}
                got = nccl_link(env, HostView(str(root)), W_HOME, True, "x86_64")
                read = {k: v for k, v in got.items() if k.startswith("libcudart_so") and not k.endswith("dirs")}
                for rel in ("0.5.13", "0.5.23"):
                    where = out / "wboxes" / f"{root.name}--{rel}"
                    where.mkdir(parents=True, exist_ok=True)
                    path = allocator_box(where, rel)
                    doc = json.loads(path.read_text())
                    doc["facts"]["jit"].update(read)
                    path.write_text(json.dumps(doc))
                    if _allowed(gate_line(out, path, "--tp", "2", "--enable-symm-mem")):
                        rows.append({"pop": "w", "sglang": rel, "script": script, "wrapper": wrapper,
                                     "path_ld": path_ld, "jit": read})  # fmt: skip
        print(f"w {script}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    pops = [
        (3, torch_nccl_rows(out)),
        (2, hub_rows(out)),
        (2, mooncake_rows(out)),
        (2, hub_table_rows(out)),
        (2, lmcache_rows(out)),
        (2, kv_shard_rows(out)),
        (1, torchao_rows(out)),
        (2, so_path_rows(out)),
        (2, wrapper_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck47_drawn.json")


if __name__ == "__main__":
    main()
