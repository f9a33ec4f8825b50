"""The thirty-fifth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md,
"Thirty-fifth sample").

    PYTHONPATH=. python bench/factcheck35_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the third session merged (git log --first-parent 4b195b7..48060794)
that no sample has drawn: iextsym's extension-torch-abi-* checks, isymm2's symm-mem-allocator-* hops and igap21's
fp8-block-gemm Marlin JIT rules, where stackcheck says ok / allow. (igap20/igap21's ModelOpt MIXED_PRECISION flags on
8.6/8.9 and DSA / MLA under --dcp-size are the thirty-fourth sample's: left out.)

(a) `audit --facts F --format json` of a box whose kernel_symbols section is the real probe's
    (stackcheck.readers.kernelsymbols.probe_kernel_symbols) over a site-packages directory built from real wheels
    (the parts the loader reads, tests/registry_wheels.extract_dynamic): torch 2.7.1 / 2.8.0 / 2.9.1 (every library of
    torch/lib), sgl-kernel 0.3.0's common_ops (the probe reads extensions only beside a kernel package) and one
    extension release of EXTENSIONS (every file its EXTENSIONS globs take); the rest of the box is
    tests/cases/h200-newest with SGLang 0.5.5 (torch 2.7.1, 2.8.0) or 0.5.8 (torch 2.9.1) and its pins
    (factcheck7_draw.release_box), torch's version set to the wheel's: one row per (extension, torch) whose
    extension-torch-abi-* check that judges the installed extension (CHECK_OF) is ok, with its reasons' rule /
    observed / result (the other extension checks of the box, which pass with no library installed, are left
    out). flash-attn and deep-ep had no cp312 manylinux x86_64 wheel pip could download (2026-12-05): not drawn;
(g) `gate --dry-run --format json` of `--enable-lmcache --tp 1` (Llama 3 config) on each LMCache box of (a), and of
    `--moe-a2a-backend deepep --ep 8 --tp 8` (Qwen3 MoE config) on each sgl-deep-ep box of (a) (factcheck27_draw's
    box with sgl-deep-ep set to the drawn release): one row per allow;
(b) `gate --dry-run --format json` of each launch of SYMM_LAUNCHES on tests/cases h200-newest (9.0), b200 (10.0) and
    writeup-before-system-nccl (12.0) with SGLang 0.5.3, 0.5.10, 0.5.21 and their pins, the jit section's six
    symm-mem facts (JIT_KEYS) each varied (SYMM_VARIANTS: the case's own jit, all found, each one false, each one
    absent): one row per allow;
(c) `audit --facts F --format json` of A100 (8.0), A10 (8.6) and L40S (8.9) x1 boxes (h200-newest's facts with the
    GPUs replaced) with SGLang 0.5.9, 0.5.12, 0.5.16, 0.5.20, 0.5.23, the jit section set to each of MARLIN_JIT (nvcc
    and ninja found, with other toolchain facts varied): one row per distinct (box, variant, reasons) where
    fp8-block-gemm is ok, labelled with the first release that gives it.

Draw: random.Random(20270104); per population its rows sorted by their JSON text, shuffled, the first k (a: 4, g: 2,
b: 3, c: 3), 12 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck7_draw import release_box
from factcheck27_draw import _box
from factcheck_draw import draw, gate_allow_rows, model_flag_launches, stackcheck_json, write_models
from gate_cli import LLAMA3, QWEN3_MOE
from registry_wheels import extract_dynamic, fetch_wheel

SEED = 20270104
TORCHES = {"2.7.1": "0.5.5", "2.8.0": "0.5.5", "2.9.1": "0.5.8"}
EXTENSIONS = [
    ("torchao", "0.12.0"),
    ("torchao", "0.13.0"),
    ("torchao", "0.14.1"),
    ("lmcache", "0.3.3"),
    ("lmcache", "0.3.9"),
    ("lmcache", "0.3.12"),
    ("sgl-deep-ep", "0.1.1"),
    ("sgl-deep-ep", "0.1.2.post1"),
    ("vllm", "0.10.1.1"),
    ("vllm", "0.11.0"),
    ("xformers", "0.0.31"),
    ("xformers", "0.0.32.post2"),
]
#: the extension-torch-abi-* check (manifests/checks.json `extension.modules`) that judges each distribution
CHECK_OF = {
    "torchao": "extension-torch-abi-torchao",
    "lmcache": "extension-torch-abi-lmcache",
    "sgl-deep-ep": "extension-torch-abi-deepep",
    "vllm": "extension-torch-abi-start",
    "xformers": "extension-torch-abi-models",
}
JIT_KEYS = {
    "ninja_found": True,
    "chosen_by": "/usr/local/cuda",
    "cxx_found": True,
    "cxx_cuda_runtime_h_found": True,
    "cxx_nccl_h_found": True,
    "libnccl_so_found": True,
}
SYMM_LAUNCHES = [
    "--enable-symm-mem --tp 2",
    "--enable-symm-mem --tp-size 2",
    "--enable-symm-mem --tensor-parallel-size 2",
    "--enable-symm-mem --tp 1",
    "--enable-symm-mem --tp 2 --disable-cuda-graph",
]
_BASE_JIT = {"toolkit": "/usr/local/cuda-12.9", "nvcc": "/usr/local/cuda-12.9/bin/nvcc", "cuda": "12.9"}
MARLIN_JIT: dict[str, dict[str, Any]] = {
    "found": {**_BASE_JIT, "chosen_by": "/usr/local/cuda", "nvcc_found": True, "ninja_found": True},
    "no-cxx": {
        **_BASE_JIT,
        "chosen_by": "/usr/local/cuda",
        "nvcc_found": True,
        "ninja_found": True,
        "cxx_found": False,
    },
    "cuda-11.8": {
        "toolkit": "/usr/local/cuda-11.8",
        "nvcc": "/usr/local/cuda-11.8/bin/nvcc",
        "cuda": "11.8",
        "chosen_by": "/usr/local/cuda",
        "nvcc_found": True,
        "ninja_found": True,
    },
    "no-version": {"chosen_by": "PATH", "nvcc": "/usr/bin/nvcc", "nvcc_found": True, "ninja_found": True},
}
_A100 = ("NVIDIA A100-SXM4-80GB", "8.0")
_A10 = ("NVIDIA A10", "8.6")
_L40S = ("NVIDIA L40S", "8.9")


def _members(wheel: Path, globs: tuple[str, ...]) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        return sorted(n for n in zf.namelist() if any(fnmatch.fnmatch(n, g) for g in globs))


def _torch_version(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read("torch/version.py").decode()
    line = next(ln for ln in text.splitlines() if ln.startswith("__version__"))
    return line.split("=", 1)[1].strip().strip("'\"")


def _site(out: Path, dist: str, version: str, torch: str) -> Path:
    from stackcheck.readers.kernelsymbols import EXTENSIONS as GLOBS

    site = out / "sites" / f"{dist}-{version}--torch-{torch}"
    if site.is_dir():
        return site
    twheel = fetch_wheel("torch", torch)
    for member in _members(twheel, ("torch/lib/*.so*",)):
        _link(site, member, extract_dynamic(twheel, member))
    kernel = fetch_wheel("sgl-kernel", "0.3.0")
    _link(site, "sgl_kernel/common_ops.abi3.so", extract_dynamic(kernel, "sgl_kernel/common_ops.abi3.so"))
    wheel = fetch_wheel(dist, version)
    globs = tuple(g for gs in GLOBS.values() for g in gs)
    for member in _members(wheel, globs):
        _link(site, member, extract_dynamic(wheel, member))
    return site


def _link(site: Path, member: str, target: Path) -> None:
    path = site / member
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.symlink_to(target)


def _extension_box(out: Path, dist: str, version: str, torch: str, doc: dict[str, Any]) -> Path:
    from stackcheck.readers.fsview import HostView
    from stackcheck.readers.kernelsymbols import probe_kernel_symbols

    site = _site(out, dist, version, torch)
    facts = doc["facts"]
    pkgs = facts["packages"]
    pkgs["torch"] = {**pkgs["torch"], "version": _torch_version(fetch_wheel("torch", torch)), "location": str(site)}
    pkgs[dist] = {"installed": True, "version": version, "dist_version": version, "location": str(site)}
    probe_pkgs = {
        "sgl-kernel": {"installed": True, "version": "0.3.0", "location": str(site)},
        "torch": pkgs["torch"],
        dist: pkgs[dist],
    }
    facts["kernel_symbols"] = probe_kernel_symbols(probe_pkgs, HostView("/"), None)
    path = out / "boxes" / f"{dist}-{version}--torch-{torch}--{doc.get('tag', 'audit')}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    return path


def _reasons(f: dict[str, Any]) -> list[list[Any]]:
    return [[r.get("rule"), r.get("observed"), r.get("result")] for r in f.get("reasons") or []]


def extension_rows(out: Path) -> list[dict[str, Any]]:
    rows = []
    for dist, version in EXTENSIONS:
        for torch, rel in TORCHES.items():
            path = _extension_box(out, dist, version, torch, release_box("h200-newest", rel))
            doc = stackcheck_json(["audit", "--facts", str(path), "--format", "json"])
            for c in doc.get("checks") or []:
                cid = str(c.get("id"))
                if cid == CHECK_OF[dist] and c.get("status") == "ok":
                    base = {"pop": "a", "extension": f"{dist}=={version}", "torch": torch, "sglang": rel}
                    rows.append({**base, "check": cid, "reasons": _reasons(c)})
        print(f"a {dist} {version}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def extension_gate_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3, "qwen3moe": QWEN3_MOE})
    rows: list[dict[str, Any]] = []
    for dist, version in EXTENSIONS:
        if dist == "lmcache":
            launch = ("llama3", ["--enable-lmcache", "--tp", "1"])
        elif dist == "sgl-deep-ep":
            launch = ("qwen3moe", ["--moe-a2a-backend", "deepep", "--ep", "8", "--tp", "8"])
        else:
            continue
        for torch, rel in TORCHES.items():
            doc = json.loads(_box(out, rel, None).read_text())
            doc["tag"] = "gate"
            if dist == "sgl-deep-ep":
                old = doc["facts"]["packages"].get("sgl-deep-ep") or {}
                doc["facts"]["packages"]["sgl-deep-ep"] = {**old, "version": version, "dist_version": version}
            path = _extension_box(out, dist, version, torch, doc)
            line = ["python3", "-m", "sglang.launch_server", "--model-path", str(out / "models" / launch[0])]
            got = stackcheck_json(
                ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line, *launch[1]]
            )
            if got.get("decision") == "allow":
                rows.append(
                    {
                        "pop": "g",
                        "extension": f"{dist}=={version}",
                        "torch": torch,
                        "sglang": rel,
                        "flags": " ".join(launch[1]),
                    }
                )
        print(f"g {dist} {version}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def _symm_variants() -> dict[str, dict[str, Any] | None]:
    out: dict[str, dict[str, Any] | None] = {"own": None, "all-found": dict(JIT_KEYS)}
    for key in JIT_KEYS:
        out[f"{key}=false"] = {**JIT_KEYS, key: "none" if key == "chosen_by" else False}
        out[f"{key}-absent"] = {k: v for k, v in JIT_KEYS.items() if k != key}
    return out


def symm_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    launches = model_flag_launches({f: ("llama3", f) for f in SYMM_LAUNCHES})
    rows: list[dict[str, Any]] = []
    for case in ("h200-newest", "b200", "writeup-before-system-nccl"):
        for name, jit in _symm_variants().items():

            def facts(o: Path, rel: str, _spec: None, case: str = case, jit: Any = jit, name: str = name) -> Path:
                doc = release_box(case, rel)
                if jit is not None:
                    doc["facts"]["jit"] = {**(doc["facts"].get("jit") or {}), **jit}
                    for key in JIT_KEYS:
                        if key not in jit:
                            doc["facts"]["jit"].pop(key, None)
                path = o / "symm" / f"{case}-{rel}-{name}.json"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(doc))
                return path

            got = gate_allow_rows(out, {case: None}, ["0.5.3", "0.5.10", "0.5.21"], facts, launches, pop="b")
            rows += [{**r, "jit": name} for r in got]
    return rows


def marlin_rows(out: Path) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for gpu, cc in (_A100, _A10, _L40S):
        for name, jit in MARLIN_JIT.items():
            for rel in ("0.5.9", "0.5.12", "0.5.16", "0.5.20", "0.5.23"):
                doc = release_box("h200-newest", rel)
                facts = doc["facts"]
                facts["gpus"] = copy.deepcopy(facts["gpus"][:1])
                facts["gpus"][0].update(name=gpu, compute_capability=cc)
                topo = facts.get("topology")
                if isinstance(topo, dict):
                    topo["gpu_count"] = 1
                    topo["pairs"] = []
                facts["jit"] = dict(jit)
                path = out / "marlin" / f"{cc}-{name}-{rel}.json"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(doc))
                got = stackcheck_json(["audit", "--facts", str(path), "--format", "json"])
                for f in got.get("features") or []:
                    if f.get("id") == "fp8-block-gemm" and f.get("status") == "ok":
                        row = {"pop": "c", "box": cc, "jit": name, "feature": f.get("id"), "reasons": _reasons(f)}
                        seen.setdefault(json.dumps(row, sort_keys=True), {**row, "sglang": rel})
        print(f"c {cc}: {len(seen)}", file=sys.stderr, flush=True)
    return list(seen.values())


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    pops = [(4, extension_rows(out)), (2, extension_gate_rows(out)), (3, symm_rows(out)), (3, marlin_rows(out))]
    draw(out, SEED, pops)


if __name__ == "__main__":
    main()
