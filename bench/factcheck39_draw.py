"""The thirty-ninth fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md,
"Thirty-ninth sample").

    PYTHONPATH=.:tests python bench/factcheck39_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the fifth session's gate rules where they allow: FlashInfer's own JIT build
on SGLang before 0.5.9 with no flashinfer-jit-cache (flashinfer-jit-cxx, -nvcc-host, -nvcc-host-version, -cc-host,
-cc-host-version) with the toolkit side taken from real wheels, `--torchao-config` (torchao-import's rules and the
torchao ABI check), `--enable-symm-mem` with SGLANG_NCCL_SO_PATH set (symm-mem-nccl-so-path) and `--dcp-size 2` with
fa4 / cutedsl_mla / tokenspeed_mla on a DeepSeek-family MLA model (mla-dcp-fa4-decode-no-lse and neighbours).

(f) `gate --dry-run --format json` of `--tp 1` (Llama 3 config) on factcheck27_draw._box (the H200 box; each release's
    own FlashInfer pin, flashinfer-jit-cache not installed) with every final release 0.5.1-0.5.8, its jit section the
    real probe's (probe_jit over the laid-out root and the environment) for each toolkit of factcheck38_draw.TOOLKITS
    (host_config.h from the real nvidia-cuda-nvcc-cu12 12.8.93 / 12.9.86 and nvidia-cuda-crt 13.0.88 / 13.1.115
    wheels) and each host of HOSTS (factcheck38_draw.HOSTS and CC / CXX variants): one row per allow;
(t) `gate` of `--tp 1 --torchao-config C` (Llama 3) for C in TORCHAO_CONFIGS on the same box with torchao V installed
    (every release of TORCHAO, the real wheels 0.9.0-0.16.0 in the shared cache) and its compiled _C found resolving,
    every final release 0.5.1-0.5.23: one row per allow;
(s) `gate` of `--tp 8 --enable-symm-mem` (Llama 3) on the same box with the allocator's build in place (c++,
    cuda_runtime.h, nccl.h, libnccl.so; nvidia-nccl-cu12 2.27.3 / -cu13 2.27.7 as torch's CUDA says) and
    SGLANG_NCCL_SO_PATH = each value of SO_PATHS read by the jit probe's nccl_so_path over a root holding the files
    of SO_FILES, every final release 0.5.1-0.5.23: one row per allow;
(d) `gate` of `--tp 8 --dcp-size 2` with `--attention-backend B`, `--decode-attention-backend B` or
    `--prefill-attention-backend B` for B in fa4, cutedsl_mla, tokenspeed_mla (and decode B beside prefill fa4 /
    flashinfer), DeepSeek R1 (V3) and V2 Lite configs, on A100 (8.0), H100 (9.0), B200 (10.0) and RTX PRO 6000 (12.0)
    x8 boxes with every final release 0.5.15-0.5.23: one row per allow.

Draw: random.Random(20270108); per population its rows sorted by their JSON text, shuffled, the first k (f: 4, t: 2,
s: 2, d: 2), 10 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck27_draw import _box
from factcheck38_draw import _A100, _B200, _H100, _PRO6000, HOSTS, JIT_KEYS, TOOLKITS, _deb, _root, _two, _with
from factcheck_draw import (
    draw,
    gate_allow_rows,
    model_flag_launches,
    stackcheck_json_or_error,
    write_models,
)
from factcheck_draw import (
    gate_line as _line,
)
from factcheck_draw import (
    releases_between as _releases,
)
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V2_LITE, LLAMA3

SEED = 20270108
SITE = "/opt/venv/lib/python3.12/site-packages"

F_HOSTS: dict[str, dict[str, Any]] = {
    **HOSTS,
    "deb-gcc-12-cc-gcc-15": _with(_two("12", "15"), CC="gcc-15"),
    "deb-gcc-15-cc-gcc-12": _with(_two("15", "12"), CC="gcc-12"),
    "deb-gcc-15-cc-usr-bin-gcc-12": _with(_two("15", "12"), CC="/usr/bin/gcc-12"),
    "deb-gcc-12-cc-clang": _with({**_deb("12"), "files": [*_deb("12")["files"], "usr/bin/clang-19"]}, CC="clang-19"),
    "deb-gcc-12-cc-g++-12": _with(_deb("12"), CC="g++-12"),
    "deb-gcc-12-cxx-g++-15": _with(_two("12", "15"), CXX="g++-15"),
    "deb-gcc-15-extra-flags-allow": _with(_deb("15"), FLASHINFER_EXTRA_CUDAFLAGS="-allow-unsupported-compiler"),
    "deb-gcc-12-no-cxx-link": {**_deb("12"), "links": {"usr/bin/gcc": "gcc-12", "usr/bin/g++": "g++-12"}},
}

TORCHAO = ["0.9.0", "0.10.0", "0.11.0", "0.12.0", "0.13.0", "0.14.1", "0.15.0", "0.16.0"]
TORCHAO_CONFIGS = ["int8wo", "int8dq", "int4wo-128", "fp8wo", "fp8dq-per_tensor", "fp8dq-per_row", "gemlite-4-64"]

SO_PATHS = [
    "/usr/lib/x86_64-linux-gnu/libnccl.so.2",
    f"{SITE}/nvidia/nccl/lib/libnccl.so.2",
    "/opt/nccl-2.21/lib/libnccl.so.2",
    "/opt/nccl/lib/libnccl.so.2",
    "/usr/lib/x86_64-linux-gnu",
    "libnccl.so.2",
    "libnccl.so",
]
SO_FILES = [
    "usr/lib/x86_64-linux-gnu/libnccl.so.2",
    f"{SITE.lstrip('/')}/nvidia/nccl/lib/libnccl.so.2",
    "opt/nccl-2.21/lib/libnccl.so.2",
]


def _fjit_box(out: Path, rel: str, toolkit: str, host: str) -> Path:
    from stackcheck.probes.jit import probe_jit
    from stackcheck.readers.fsview import HostView

    doc = json.loads(_box(out, rel, None).read_text())
    facts = doc["facts"]
    major, minor = toolkit.split(".")[:2]
    home = f"/usr/local/cuda-{major}.{minor}"
    tk = {"path": home, "version": toolkit, "source": "/usr/local/cuda", "nvcc": f"{home}/bin/nvcc"}
    facts["cuda_toolkits"] = [{**tk, "active_for_build": True, "active_for_torch": False}]
    spec = F_HOSTS[host]
    HOSTS.setdefault(host, spec)  # factcheck38_draw._root lays a host out from HOSTS
    facts["jit"] = probe_jit(facts, spec["env"], HostView(str(_root(out, toolkit, host))))
    path = out / "boxes" / f"fjit-{rel}-{toolkit}-{host}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


F_KEYS = (*JIT_KEYS, "flashinfer_host", "flashinfer_allow_unsupported", "cc_host_found", "cc_host", "cc_host_gnu_major",
          "cc_host_gnu_supported", "cxx")  # fmt: skip


def flashinfer_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for toolkit in TOOLKITS:
        for host in F_HOSTS:
            for rel in _releases((0, 5, 1), (0, 5, 8)):
                path = _fjit_box(out, rel, toolkit, host)
                if stackcheck_json_or_error(_line(out, path, "--tp", "1")).get("decision") == "allow":
                    facts = json.loads(path.read_text())["facts"]
                    jit = facts["jit"]
                    fi = facts["packages"]["flashinfer-python"].get("version")
                    base = {"pop": "f", "sglang": rel, "flashinfer": fi, "toolkit": toolkit, "host": host}
                    rows.append({**base, "env": F_HOSTS[host]["env"], "jit": {k: jit[k] for k in F_KEYS if k in jit}})
            print(f"f {toolkit} {host}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def _torchao_box(out: Path, rel: str, torchao: str) -> Path:
    doc = json.loads(_box(out, rel, None).read_text())
    facts = doc["facts"]
    facts["packages"]["torchao"] = {"installed": True, "version": torchao, "dist_version": torchao, "location": SITE}
    ext = {"extension": "torchao", "path": "torchao/_C.abi3.so", "torch_symbols": 40, "torch_missing_count": 0}
    ks = facts.get("kernel_symbols")
    if isinstance(ks, dict):
        ks.setdefault("extensions", []).append(ext)
        ks.setdefault("extension_dirs", [SITE])
    path = out / "boxes" / f"torchao-{rel}-{torchao}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def torchao_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in _releases((0, 5, 1), (0, 5, 23)):
        for torchao in TORCHAO:
            path = _torchao_box(out, rel, torchao)
            for config in TORCHAO_CONFIGS:
                args = _line(out, path, "--tp", "1", "--torchao-config", config)
                if stackcheck_json_or_error(args).get("decision") == "allow":
                    rows.append({"pop": "t", "sglang": rel, "torchao": torchao, "config": config})
        print(f"t {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def _symm_box(out: Path, rel: str, so_path: str) -> Path:
    from stackcheck.probes.jit import nccl_so_path
    from stackcheck.readers.fsview import HostView

    root = out / "roots" / "nccl"
    if not root.exists():
        for f in SO_FILES:
            (root / f).parent.mkdir(parents=True, exist_ok=True)
            (root / f).write_bytes(b"\x7fELF")
    doc = json.loads(_box(out, rel, None).read_text())
    facts = doc["facts"]
    section = facts["jit"]
    section.update(libnccl_so_found=True, libnccl_so="/usr/lib/x86_64-linux-gnu/libnccl.so", cxx_found=True,
                   cxx="/usr/bin/c++", cxx_cuda_runtime_h_found=True, cxx_nccl_h_found=True)  # fmt: skip
    section.update(nccl_so_path({"SGLANG_NCCL_SO_PATH": so_path}, HostView(str(root))))
    cuda = str(facts["packages"]["torch"].get("cuda") or facts["packages"]["torch"].get("version") or "")
    cu13 = "13" in cuda.rsplit("cu", maxsplit=1)[-1][:2]
    name, version = ("nvidia-nccl-cu13", "2.27.7") if cu13 else ("nvidia-nccl-cu12", "2.27.3")
    facts["packages"][name] = {"installed": True, "version": version, "dist_version": version, "location": SITE}
    path = out / "boxes" / f"symm-{rel}-{SO_PATHS.index(so_path)}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def symm_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in _releases((0, 5, 1), (0, 5, 23)):
        for so_path in SO_PATHS:
            path = _symm_box(out, rel, so_path)
            if stackcheck_json_or_error(_line(out, path, "--tp", "8", "--enable-symm-mem")).get("decision") == "allow":
                jit = json.loads(path.read_text())["facts"]["jit"]
                read = {k: v for k, v in jit.items() if k.startswith("nccl_so_path")}
                rows.append({"pop": "s", "sglang": rel, "so_path": so_path, "jit": read})
        print(f"s {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


DCP_BACKENDS = ["fa4", "cutedsl_mla", "tokenspeed_mla"]


def dcp_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"dsr1": DEEPSEEK_R1, "dsv2lite": DEEPSEEK_V2_LITE})
    table: dict[str, tuple[str, str]] = {}
    for model in ("dsr1", "dsv2lite"):
        for b in DCP_BACKENDS:
            for side in ("", "decode-", "prefill-"):
                table[f"{model}|{side}{b}"] = (model, f"--dcp-size 2 --{side}attention-backend {b}")
            for prefill in ("fa4", "flashinfer"):
                flags = f"--dcp-size 2 --decode-attention-backend {b} --prefill-attention-backend {prefill}"
                table[f"{model}|decode-{b}|prefill-{prefill}"] = (model, flags)
    launches = model_flag_launches(table, "--tp", "8")
    boxes = {"a100": _A100, "h100": _H100, "b200": _B200, "pro6000": _PRO6000}
    return gate_allow_rows(out, boxes, _releases((0, 5, 15), (0, 5, 23)), _box, launches, pop="d")


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    pops = [(4, flashinfer_rows(out)), (2, torchao_rows(out)), (2, symm_rows(out)), (2, dcp_rows(out))]
    draw(out, SEED, pops)


if __name__ == "__main__":
    main()
