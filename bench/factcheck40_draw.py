"""The fortieth fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md, "Fortieth sample").

    PYTHONPATH=.:tests python bench/factcheck40_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the sixth session's gate rules where they allow: `--enable-symm-mem` with
jit.libcudart_so_found true (symm-mem-allocator-cudart-link and the other symm-mem-* rules), torchao's load gate
and abort rules (torchao-load-gate, torchao-abi-abort, fbgemm-genai-symbols) for torchao 0.9-0.18 x torch 2.7-2.11,
and the JIT host compiler where CC is one word or names g++ (flashinfer-jit-cc-*) or NVCC_CCBIN is set (SGLang's JIT).

(s) `gate --dry-run --format json` of `--tp 8 --enable-symm-mem` (Llama 3) on factcheck27_draw._box (the H200 box,
    torch at SITE) with every final release 0.5.1-0.5.23, its jit section the real probe's (probe_jit) over a root
    laid out by factcheck38_draw._root (toolkit 12.8.93 for a cu12 torch, 13.0.88 for cu13; host deb-gcc-12) plus
    nccl.h, /usr/lib/x86_64-linux-gnu/libnccl.so and the libcudart files of CUDART[V] for each variant V (own small
    files in the shape of an ELF header, an ar archive, a linker script, a symlink): one row per allow where
    jit.libcudart_so_found is true;
(t) `gate` of `--tp 1 --torchao-config int8wo` (Llama 3) on the same box with torchao A (every release of TORCHAO,
    real wheels in the shared cache) and torch's version replaced by T (every one of TORCH, the box's local suffix
    kept), no kernel symbol section (the versions alone decide), for every third final release 0.5.2-0.5.23: one
    row per allow;
(c) `gate` of `--tp 1` on the same box with each final release 0.5.1-0.5.8 (FlashInfer's own JIT, factcheck39_draw's
    box) and of `--tp 1` with each final release 0.5.9-0.5.23 (SGLang's own JIT, factcheck38_draw's box), each
    toolkit of factcheck38_draw.TOOLKITS (real host_config.h) and each host of C_HOSTS (CC one word or naming g++,
    NVCC_CCBIN set): one row per allow.

Draw: random.Random(20270109); per population its rows sorted by their JSON text, shuffled, the first k (s: 4, t: 3,
c: 3), 10 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import factcheck38_draw
import factcheck39_draw
from factcheck23_draw import _v
from factcheck27_draw import _box
from factcheck38_draw import HOSTS, JIT_KEYS, TOOLKITS, _deb, _root, _two, _with
from factcheck_draw import draw, stackcheck_json_or_error, write_models
from factcheck_draw import gate_line as _line
from factcheck_draw import releases_between as _releases
from gate_cli import LLAMA3

SEED = 20270109
SITE = "/opt/venv/lib/python3.12/site-packages"


def _elf(cls: int, machine: int) -> bytes:
    """An ELF header of class `cls` (1: 32-bit, 2: 64-bit), little-endian, ET_DYN, e_machine `machine`."""
    ident = b"\x7fELF" + bytes([cls, 1, 1, 0]) + bytes(8)
    return ident + struct.pack("<HHI", 3, machine, 1) + bytes(48)


X86_64 = _elf(2, 62)
I386 = _elf(1, 3)
AARCH64 = _elf(2, 183)
ARCHIVE = b"!<arch>\n"

# variant -> (files: path relative to the CUDA home "H/" or the root, body; symlinks: path -> target; env)
CUDART: dict[str, tuple[dict[str, bytes], dict[str, str], dict[str, str]]] = {
    "lib64-elf64": ({"H/lib64/libcudart.so": X86_64, "H/lib64/libcudart.so.12": X86_64}, {}, {}),
    "lib64-link-versioned": ({"H/lib64/libcudart.so.12": X86_64}, {"H/lib64/libcudart.so": "libcudart.so.12"}, {}),
    "lib64-dangling-link": ({"H/lib64/libcudart_static.a": ARCHIVE}, {"H/lib64/libcudart.so": "libcudart.so.12"}, {}),
    "lib64-empty": ({"H/lib64/libcudart.so": b""}, {}, {}),
    "lib64-script": ({"H/lib64/libcudart.so": b"INPUT(libcudart.so.12)\n", "H/lib64/libcudart.so.12": X86_64}, {}, {}),
    "lib64-aarch64": ({"H/lib64/libcudart.so": AARCH64}, {}, {}),
    "lib64-elf32": ({"H/lib64/libcudart.so": I386}, {}, {}),
    "usr-lib-elf32": ({"H/lib64/libcudart.so.12": X86_64, "usr/lib/libcudart.so": I386}, {}, {}),
    "lib64-static-a": ({"H/lib64/libcudart.a": ARCHIVE, "H/lib64/libcudart.so.12": X86_64}, {}, {}),
    "stubs-library-path": ({"H/lib64/stubs/libcudart.so": X86_64}, {}, {"LIBRARY_PATH": "H/lib64/stubs"}),
    "lib-only": ({"H/lib/libcudart.so": X86_64}, {}, {}),
    "targets-link": ({"H/targets/x86_64-linux/lib/libcudart.so": X86_64}, {"H/lib64": "targets/x86_64-linux/lib"}, {}),
    "usr-lib-triplet": ({"usr/lib/x86_64-linux-gnu/libcudart.so": X86_64}, {}, {}),
    "cudnn-home": ({"opt/cudnn/lib64/libcudart.so": X86_64}, {}, {"CUDNN_HOME": "/opt/cudnn"}),
}


def _toolkit_for(facts: dict[str, Any]) -> str:
    cuda = str(facts["packages"]["torch"].get("cuda") or "")
    return "13.0.88" if cuda.startswith("13") else "12.8.93"


def _symm_box(out: Path, rel: str, variant: str) -> tuple[Path, dict[str, Any]]:
    from stackcheck.probes.jit import probe_jit
    from stackcheck.readers.fsview import HostView

    doc = json.loads(_box(out, rel, None).read_text())
    facts = doc["facts"]
    facts["packages"]["torch"]["location"] = SITE
    toolkit = _toolkit_for(facts)
    major, minor = toolkit.split(".")[:2]
    home = f"usr/local/cuda-{major}.{minor}"
    tk = {"path": f"/{home}", "version": toolkit, "source": "/usr/local/cuda", "nvcc": f"/{home}/bin/nvcc"}
    facts["cuda_toolkits"] = [{**tk, "active_for_build": True, "active_for_torch": False}]
    root = out / "roots" / f"symm-{toolkit}-{variant}"
    files, links, extra = CUDART[variant]
    if not root.exists():
        shutil.copytree(_root(out, toolkit, "deb-gcc-12"), root, symlinks=True)
        for rel_path, body in {"usr/include/nccl.h": b"", "usr/lib/x86_64-linux-gnu/libnccl.so": X86_64}.items():
            (root / rel_path).parent.mkdir(parents=True, exist_ok=True)
            (root / rel_path).write_bytes(body)
        for rel_path, body in files.items():
            p = root / rel_path.replace("H/", f"{home}/")
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(body)
        for rel_path, target in links.items():
            p = root / rel_path.replace("H/", f"{home}/")
            p.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, p)
    env = {**HOSTS["deb-gcc-12"]["env"], **{k: v.replace("H/", f"/{home}/") for k, v in extra.items()}}
    facts["jit"] = probe_jit(facts, env, HostView(str(root)))
    cu13 = toolkit.startswith("13")
    name, version = ("nvidia-nccl-cu13", "2.27.7") if cu13 else ("nvidia-nccl-cu12", "2.27.3")
    facts["packages"][name] = {"installed": True, "version": version, "dist_version": version, "location": SITE}
    path = out / "boxes" / f"symm-{rel}-{variant}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path, env


def symm_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in _releases((0, 5, 1), (0, 5, 23)):
        for variant in CUDART:
            path, env = _symm_box(out, rel, variant)
            jit = json.loads(path.read_text())["facts"]["jit"]
            if jit.get("libcudart_so_found") is not True:
                continue
            if stackcheck_json_or_error(_line(out, path, "--tp", "8", "--enable-symm-mem")).get("decision") == "allow":
                keys = [k for k in jit if k.startswith(("libcudart_so", "libnccl_so")) and k[-4:] != "dirs"]
                read = {k: jit[k] for k in keys}
                rows.append({"pop": "s", "sglang": rel, "variant": variant, "env": env, "jit": read})
        print(f"s {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


TORCHAO = ["0.9.0", "0.10.0", "0.11.0", "0.12.0", "0.13.0", "0.14.0", "0.14.1", "0.15.0", "0.16.0", "0.17.0", "0.18.0"]
TORCH = ["2.7.1", "2.8.0", "2.9.0", "2.9.1", "2.10.0", "2.11.0"]


def _torchao_box(out: Path, rel: str, torchao: str, torch: str) -> Path:
    doc = json.loads(_box(out, rel, None).read_text())
    facts = doc["facts"]
    t = facts["packages"]["torch"]
    local = str(t.get("version") or "").partition("+")[2]
    t.update(version=f"{torch}+{local}" if local else torch, dist_version=torch, location=SITE)
    facts["packages"]["torchao"] = {"installed": True, "version": torchao, "dist_version": torchao, "location": SITE}
    path = out / "boxes" / f"torchao-{rel}-{torchao}-{torch}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def torchao_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in _releases((0, 5, 1), (0, 5, 23))[1::3]:
        for torchao in TORCHAO:
            for torch in TORCH:
                path = _torchao_box(out, rel, torchao, torch)
                args = _line(out, path, "--tp", "1", "--torchao-config", "int8wo")
                if stackcheck_json_or_error(args).get("decision") == "allow":
                    rows.append({"pop": "t", "sglang": rel, "torchao": torchao, "torch": torch, "config": "int8wo"})
        print(f"t {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


C_HOSTS: dict[str, dict[str, Any]] = {
    "deb-gcc-12-cc-gcc": _with(_deb("12"), CC="gcc"),
    "deb-gcc-15-cc-gcc": _with(_deb("15"), CC="gcc"),
    "deb-gcc-12-cc-cc": _with({**_deb("12"), "links": {**_deb("12")["links"], "usr/bin/cc": "gcc-12"}}, CC="cc"),
    "deb-gcc-12-cc-g++": _with(_deb("12"), CC="g++"),
    "deb-gcc-15-cc-g++": _with(_deb("15"), CC="g++"),
    "deb-gcc-12-cc-c++": _with(_deb("12"), CC="c++"),
    "deb-gcc-12-and-15-cc-g++-15": _with(_two("12", "15"), CC="g++-15"),
    "deb-gcc-15-and-12-cc-usr-bin-g++-12": _with(_two("15", "12"), CC="/usr/bin/g++-12"),
    "deb-gcc-15-and-12-ccbin-g++-12": _with(_two("15", "12"), NVCC_CCBIN="/usr/bin/g++-12"),
    "deb-gcc-12-and-15-ccbin-gcc-15-bare": _with(_two("12", "15"), NVCC_CCBIN="gcc-15"),
    "deb-gcc-15-and-12-ccbin-dir": _with(_two("15", "12"), NVCC_CCBIN="/usr/bin"),
}


def cc_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for host, spec in C_HOSTS.items():
        HOSTS.setdefault(host, spec)
        factcheck39_draw.F_HOSTS.setdefault(host, spec)
    for toolkit in TOOLKITS:
        for host in C_HOSTS:
            for rel in _releases((0, 5, 1), (0, 5, 23)):
                if _v(rel) <= (0, 5, 8):
                    path = factcheck39_draw._fjit_box(out, rel, toolkit, host)
                    keys: tuple[str, ...] = factcheck39_draw.F_KEYS
                else:
                    path = factcheck38_draw._jit_box(out, rel, toolkit, host)
                    keys = JIT_KEYS
                if stackcheck_json_or_error(_line(out, path, "--tp", "1")).get("decision") == "allow":
                    jit = json.loads(path.read_text())["facts"]["jit"]
                    base = {"pop": "c", "sglang": rel, "toolkit": toolkit, "host": host, "env": C_HOSTS[host]["env"]}
                    rows.append({**base, "jit": {k: jit[k] for k in keys if k in jit}})
            print(f"c {toolkit} {host}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    pops = [(4, symm_rows(out)), (3, torchao_rows(out)), (3, cc_rows(out))]
    draw(out, SEED, pops)


if __name__ == "__main__":
    main()
