"""The forty-ninth fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md, "Forty-ninth
sample"). Run:

    PYTHONPATH=.:tests python bench/factcheck49_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what no earlier sample drew (every bench/factcheck*_drawn.json read; none
names the rules below): the rules, checks and refusals the twelfth and thirteenth sessions added (git log
422d13dc..fe036d1a -- manifests): transformers' own huggingface-hub range (transformers-huggingface-hub-range-*),
LMCache's cupy from conda (lmcache-cupy-conda-cuda13-driver), the refusal lmcache-disable-radix-cache, the Mooncake
store / EP system libraries (preflight.json), sgl-flash-mla-installed, torch's NCCL pins recorded for more builds
(torch-nccl-wheel-pin-cu12 / -cu13), the post release 0.5.1.post3 between the ranges' bounds; and gate allows of
launches whose env prefix (`VAR=... python3`, `env VAR=...`) sets LD_LIBRARY_PATH, SGLANG_NCCL_SO_PATH, CUDA_HOME or
the like. A row equal to one an earlier sample drew is left out.

Boxes: factcheck27_draw._box (tests/cases/h200-newest with the release's pins, the extra packages, libnuma; 8 H200).

(h) `gate` of `--tp 1` (Llama 3) at H_RELEASES with transformers of H_TF and huggingface-hub of H_HUB (kernels as the
    box has it): one row per allow;
(c) `gate` of `--enable-lmcache --lmcache-config-file /etc/lmcache/mp.yaml` at 0.5.13 / 0.5.23 with LMCache 0.5.6,
    transformers 5.4.0, a cupy distribution of C_CUPY whose CUDA build is C_BUILD (None: not read), the driver at
    CUDA 12.8 / 13.0: one row per allow;
(r) `gate` of `--enable-lmcache` with the radix-cache flags of R_FLAGS at R_RELEASES with LMCache 0.5.6 (transformers
    5.4.0) and `--lmcache-config-file /etc/lmcache/mp.yaml`: one row per allow;
(m) `gate --tp 8` of the HiCache Mooncake store or Mooncake EP (Qwen3 MoE) at 0.5.9 / 0.5.23 with Mooncake of
    M_MOONCAKE and the system libraries of M_LIBS (torch relabelled CUDA 12.8): one row per allow;
(f) `gate --tp 8` of DeepSeek V3.2 `--dsa-decode-backend flashmla_kv` / `--nsa-decode-backend flashmla_kv` and
    DeepSeek R1 `--attention-backend flashmla` at 0.5.22 / 0.5.23 with sgl-flash-mla as F_FLASHMLA: one row per
    allow;
(e) `gate` of the env prefixes of E_PREFIXES before `python3 -m sglang.launch_server` with E_FLAGS at 0.5.1.post3 /
    0.5.9 / 0.5.23: one row per allow;
(n) `gate` of `--tp 2` at N_RELEASES with torch relabelled to each CUDA variant components.json lists for the release's
    torch and one NCCL wheel of N_NCCL (the wheel of torch's CUDA major): one row per allow.

Draw: random.Random(20270118); per population the rows sorted by JSON text, shuffled, the first k (h 3, c 2, r 2, m 3,
f 2, e 4, n 2), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck23_draw import _extra
from factcheck27_draw import _NUMA
from factcheck47_draw import _allowed, _pkg, _torch_variants
from factcheck_draw import draw_undrawn, gate_line, write_models
from factcheck_draw import write_box as _write
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V32, LLAMA3, MOONCAKE_SYSTEM_LIBS, QWEN3_MOE

SEED = 20270118
MODELS = {"llama3": LLAMA3, "deepseek-r1": DEEPSEEK_R1, "deepseek-v32": DEEPSEEK_V32, "qwen3-moe": QWEN3_MOE}


def _box(out: Path, rel: str, _gpus: None = None) -> Path:
    """factcheck27_draw._box with the H200s as they are, for a post release too (its extra packages are those of the
    final release it follows: 0.5.1.post3 takes 0.5.1's)."""
    import copy

    from factcheck7_draw import release_box

    doc = copy.deepcopy(release_box("h200-newest", rel))
    facts = doc["facts"]
    pinned = (facts["packages"].get("sgl-deep-ep") or {}).get("version")
    extra = _extra(str(facts["packages"]["torch"].get("cuda") or ""), rel.split(".post", maxsplit=1)[0])
    if pinned:
        extra["sgl-deep-ep"] = {**extra["sgl-deep-ep"], "version": pinned, "dist_version": pinned}
    facts["packages"].update(extra)
    facts["cuda_libs"] = {_NUMA: f"/usr/lib/x86_64-linux-gnu/{_NUMA}"}
    path = out / f"box-h200-{rel}.json"
    path.write_text(json.dumps(doc))
    return path


def _line(out: Path, path: Path, prefix: list[str], model: str, *flags: str) -> list[str]:
    line = [*prefix, "python3", "-m", "sglang.launch_server", "--model-path", str(out / "models" / model), *flags]
    return ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]


# ---- (h) transformers' own huggingface-hub range ------------------------------------------------------------------

H_RELEASES = ["0.5.1.post3", "0.5.9", "0.5.13", "0.5.23"]
H_TF = ["4.48.3", "4.51.3", "4.54.1", "4.57.1", "5.0.0", "5.4.0", "5.18.0", "5.19.0"]
H_HUB = ["0.30.2", "0.34.4", "0.36.0", "1.0.0", "1.3.0", "1.10.0"]


def hub_range_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in H_RELEASES:
        for tf in H_TF:
            for hub in H_HUB:
                doc = json.loads(_box(out, rel, None).read_text())
                packages = doc["facts"]["packages"]
                packages["transformers"] = _pkg(tf)
                packages["huggingface-hub"] = _pkg(hub)
                path = _write(out, doc, f"h49-{rel}-{tf}-{hub}.json")
                if _allowed(gate_line(out, path, "--tp", "1")):
                    kernels = (packages.get("kernels") or {}).get("version") if packages.get("kernels") else None
                    rows.append({"pop": "h", "sglang": rel, "transformers": tf, "huggingface-hub": hub,
                                 "kernels": kernels})  # fmt: skip
        print(f"h {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (c) LMCache's cupy -----------------------------------------------------------------------------------------

C_CUPY = ["cupy", "cupy-cuda12x", "cupy-cuda13x"]
C_BUILD = [None, 12, 13]


def cupy_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.13", "0.5.23"):
        for dist in C_CUPY:
            for build in C_BUILD:
                for driver in ("12.8", "13.0"):
                    doc = json.loads(_box(out, rel, None).read_text())
                    packages = doc["facts"]["packages"]
                    packages["lmcache"] = _pkg("0.5.6")
                    packages["transformers"] = _pkg("5.4.0")
                    for other in C_CUPY:
                        packages[other] = {"installed": False}
                    packages[dist] = _pkg("13.6.0", **({"build_cuda_major": build} if build else {}))
                    doc["facts"]["driver"]["cuda"] = driver
                    path = _write(out, doc, f"c49-{rel}-{dist}-{build}-{driver}.json")
                    flags = ("--enable-lmcache", "--lmcache-config-file", "/etc/lmcache/mp.yaml")
                    if _allowed(gate_line(out, path, *flags)):
                        rows.append({"pop": "c", "sglang": rel, "cupy": dist, "build_cuda_major": build,
                                     "driver_cuda": driver})  # fmt: skip
        print(f"c {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (r) --enable-lmcache beside the radix cache's flags ------------------------------------------------------------

R_RELEASES = ["0.5.1.post3", "0.5.13", "0.5.20", "0.5.21", "0.5.23"]
R_FLAGS: dict[str, list[str]] = {
    "": [],
    "disable-radix-cache": ["--disable-radix-cache"],
    "disable-radix-cache-eq": ["--disable-radix-cache=true"],
    "chunked-prefill-off": ["--chunked-prefill-size", "-1"],
    "radix-eviction-lru": ["--radix-eviction-policy", "lru"],
    "hierarchical": ["--enable-hierarchical-cache"],
    "page-size-64": ["--page-size", "64"],
}


def radix_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in R_RELEASES:
        doc = json.loads(_box(out, rel, None).read_text())
        doc["facts"]["packages"]["lmcache"] = _pkg("0.5.6")
        doc["facts"]["packages"]["transformers"] = _pkg("5.4.0")
        path = _write(out, doc, f"r49-{rel}.json")
        for name, words in R_FLAGS.items():
            flags = ("--enable-lmcache", "--lmcache-config-file", "/etc/lmcache/mp.yaml", *words)
            if _allowed(gate_line(out, path, *flags)):
                rows.append({"pop": "r", "sglang": rel, "flags": name})
        print(f"r {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (m) the Mooncake store and Mooncake EP's system libraries ----------------------------------------------------

M_MOONCAKE = ["0.3.5", "0.3.6.post1", "0.3.7", "0.3.9", "0.3.11.post1", "0.3.12", "0.3.13.post1"]
_LZMA = {"liblzma.so.5": "/usr/lib/x86_64-linux-gnu/liblzma.so.5"}
M_LIBS: dict[str, dict[str, str | None] | None] = {
    "all-found": {**MOONCAKE_SYSTEM_LIBS, **_LZMA},
    "no-lzma": {**MOONCAKE_SYSTEM_LIBS, "liblzma.so.5": None},
    "no-mlx5": {**MOONCAKE_SYSTEM_LIBS, **_LZMA, "libmlx5.so.1": None},
    "lzma-not-probed": dict(MOONCAKE_SYSTEM_LIBS),
    "no-cuda-libs": None,
}
M_LAUNCHES: dict[str, tuple[str, tuple[str, ...]]] = {
    "store": ("llama3", ("--enable-hierarchical-cache", "--hicache-storage-backend", "mooncake")),
    "ep": ("qwen3-moe", ("--moe-a2a-backend", "mooncake", "--deepep-mode", "low_latency")),
}


def mooncake_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.9", "0.5.23"):
        for version in M_MOONCAKE:
            for libs_name, libs in M_LIBS.items():
                doc = json.loads(_box(out, rel, None).read_text())
                facts = doc["facts"]
                facts["packages"]["mooncake-transfer-engine"] = _pkg(version)
                torch = facts["packages"]["torch"]
                torch.update(cuda="12.8", variant="cu128", version=f"{torch['dist_version']}+cu128")
                if libs is None:
                    facts.pop("cuda_libs", None)
                else:
                    facts["cuda_libs"] = {**(facts.get("cuda_libs") or {}), "ld_cache": "file", **libs}
                path = _write(out, doc, f"m49-{rel}-{version}-{libs_name}.json")
                for launch, (model, words) in M_LAUNCHES.items():
                    if _allowed(_line(out, path, [], model, "--tp", "8", *words)):
                        rows.append({"pop": "m", "sglang": rel, "mooncake": version, "libs": libs_name,
                                     "launch": launch})  # fmt: skip
        print(f"m {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (f) sgl-flash-mla beside SGLang 0.5.22 / 0.5.23 --------------------------------------------------------------

F_FLASHMLA: dict[str, dict[str, Any] | None] = {
    "1.0.0": _pkg("1.0.0"),
    "1.0.1": _pkg("1.0.1"),
    "0.9.0": _pkg("0.9.0"),
    "not-installed": {"installed": False},
    "not-listed": None,
}
F_LAUNCHES: dict[str, tuple[str, tuple[str, ...]]] = {
    "dsa-flashmla-kv": ("deepseek-v32", ("--dsa-decode-backend", "flashmla_kv")),
    "nsa-flashmla-kv": ("deepseek-v32", ("--nsa-decode-backend", "flashmla_kv")),
    "flashmla-r1": ("deepseek-r1", ("--attention-backend", "flashmla")),
}


def flashmla_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.22", "0.5.23"):
        for name, pkg in F_FLASHMLA.items():
            doc = json.loads(_box(out, rel, None).read_text())
            packages = doc["facts"]["packages"]
            if pkg is None:
                packages.pop("sgl-flash-mla", None)
            else:
                packages["sgl-flash-mla"] = pkg
            path = _write(out, doc, f"f49-{rel}-{name}.json")
            for launch, (model, words) in F_LAUNCHES.items():
                if _allowed(_line(out, path, [], model, "--tp", "8", *words)):
                    rows.append({"pop": "f", "sglang": rel, "sgl-flash-mla": name, "launch": launch})
        print(f"f {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (e) env prefixes before the launch ---------------------------------------------------------------------------

E_PREFIXES: dict[str, list[str]] = {
    "none": [],
    "ld-path-assign": ["LD_LIBRARY_PATH=/usr/local/cuda-13.0/lib64"],
    "env-ld-path": ["env", "LD_LIBRARY_PATH=/usr/local/cuda-12.9/lib64:/usr/lib/x86_64-linux-gnu"],
    "env-ld-path-empty": ["env", "LD_LIBRARY_PATH="],
    "env-u-ld-path": ["env", "-u", "LD_LIBRARY_PATH"],
    "env-i-path": ["env", "-i", "PATH=/usr/bin:/bin"],
    "nccl-so-path-assign": ["SGLANG_NCCL_SO_PATH=libnccl.so.2"],
    "env-nccl-so-path-abs": ["env", "SGLANG_NCCL_SO_PATH=/opt/nccl/lib/libnccl.so.2"],
    "cuda-home": ["CUDA_HOME=/usr/local/cuda-12.9"],
    "cuda-visible": ["CUDA_VISIBLE_DEVICES=0,1"],
    "ld-preload": ["LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4"],
    "two-assigns": ["NCCL_DEBUG=INFO", "LD_LIBRARY_PATH=/opt/nccl/lib"],
}
E_FLAGS: dict[str, tuple[str, ...]] = {
    "tp2": ("--tp", "2"),
    "tp2-symm-mem": ("--tp", "2", "--enable-symm-mem"),
    "tp1": ("--tp", "1"),
}


def prefix_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.1.post3", "0.5.9", "0.5.23"):
        path = _box(out, rel, None)
        for name, prefix in E_PREFIXES.items():
            for flags, words in E_FLAGS.items():
                if _allowed(_line(out, path, prefix, "llama3", *words)):
                    rows.append({"pop": "e", "sglang": rel, "prefix": name, "flags": flags})
        print(f"e {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (n) torch's NCCL pins for more builds ------------------------------------------------------------------------

N_RELEASES = ["0.5.1.post3", "0.5.3", "0.5.5", "0.5.10", "0.5.16"]
N_NCCL = ["2.26.2", "2.27.3", "2.27.5", "2.27.7", "2.28.9", "2.29.3", "2.29.7"]


def torch_pin_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in N_RELEASES:
        base = json.loads(_box(out, rel, None).read_text())
        torch = base["facts"]["packages"]["torch"]
        for tag in _torch_variants(torch["dist_version"]):
            major = 13 if tag.startswith("cu13") else 12
            for nccl in N_NCCL:
                doc = json.loads(json.dumps(base))
                packages = doc["facts"]["packages"]
                cuda = f"{tag[2:-1]}.{tag[-1]}"
                packages["torch"].update(version=f"{torch['dist_version']}+{tag}", variant=tag, cuda=cuda)
                packages["nvidia-nccl-cu12"] = _pkg(nccl) if major == 12 else {"installed": False}
                packages["nvidia-nccl-cu13"] = _pkg(nccl) if major == 13 else {"installed": False}
                path = _write(out, doc, f"n49-{rel}-{tag}-{nccl}.json")
                if _allowed(gate_line(out, path, "--tp", "2")):
                    rows.append({"pop": "n", "sglang": rel, "torch": packages["torch"]["version"],
                                 f"nvidia-nccl-cu{major}": nccl})  # fmt: skip
        print(f"n {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    pops = [
        (3, hub_range_rows(out)),
        (2, cupy_rows(out)),
        (2, radix_rows(out)),
        (3, mooncake_rows(out)),
        (2, flashmla_rows(out)),
        (4, prefix_rows(out)),
        (2, torch_pin_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck49_drawn.json")


if __name__ == "__main__":
    main()
