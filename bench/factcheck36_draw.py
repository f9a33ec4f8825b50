"""The thirty-sixth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md,
"Thirty-sixth sample").

    PYTHONPATH=. python bench/factcheck36_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the thirty-fifth sample left undrawn ("noticed and left alone"),
where stackcheck says allow: `--enable-symm-mem` on SGLang 0.5.1-0.5.4 and 0.5.10-0.5.23 with boxes that have
libnuma found and a jit section (so the allocator's hops, nccl.h / cuda_runtime.h / ninja / CUDA home / C++ compiler
/ libnccl.so, are reached), and DeepEP launches with each release's sgl-deep-ep pin on 9.0 / 10.0.

Boxes: factcheck27_draw._box (tests/cases/h200-newest with the release and its pins, sgl-deep-ep at the release's pin
from 0.5.18, factcheck23's extra packages, libnuma found) as the H200 (9.0), and with the GPUs replaced as an H100
(9.0) and a B200 (10.0), 8 GPUs each.

(a) `gate --dry-run --format json` of each launch of SYMM_LAUNCHES (Llama 3 config) on the three boxes with every
    final release 0.5.1-0.5.4 and 0.5.10-0.5.23, the jit section set to the case's toolkit facts plus each of
    SYMM_VARIANTS (every allocator hop found, each of the six hop facts false in turn, nvcc not found): one row per
    allow;
(b) `gate --dry-run --format json` (`--tp 8`) of factcheck27_draw's DeepEP LAUNCHES, each as written and with
    `--enable-symm-mem` added, on the three boxes (jit: every hop found) with every final release 0.5.18-0.5.23
    (the releases that pin sgl-deep-ep): one row per allow.

Draw: random.Random(20270105); per population its rows sorted by their JSON text, shuffled, the first k (a: 8,
b: 4), 12 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck23_draw import _v
from factcheck27_draw import GPU_BOXES, _box
from factcheck27_draw import LAUNCHES as DEEPEP_LAUNCHES
from factcheck27_draw import MODELS as DEEPEP_MODELS
from factcheck_draw import draw, final_releases, gate_allow_rows, model_flag_launches, write_models
from gate_cli import LLAMA3

SEED = 20270105
BOXES: dict[str, tuple[str, str, str, int] | None] = {
    "h100": GPU_BOXES["h100"],
    "h200": None,
    "b200": GPU_BOXES["b200"],
}
JIT_KEYS: dict[str, Any] = {
    "ninja_found": True,
    "chosen_by": "/usr/local/cuda",
    "cxx_found": True,
    "cxx_cuda_runtime_h_found": True,
    "cxx_nccl_h_found": True,
    "libnccl_so_found": True,
}
SYMM_LAUNCHES = {
    "tp1": ("llama3", "--enable-symm-mem --tp 1"),
    "tp2": ("llama3", "--enable-symm-mem --tp 2"),
    "tp8": ("llama3", "--enable-symm-mem --tp 8"),
}


def symm_variants() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {"all-found": dict(JIT_KEYS)}
    for key in JIT_KEYS:
        out[f"{key}=false"] = {**JIT_KEYS, key: "none" if key == "chosen_by" else False}
    out["nvcc_found=false"] = {**JIT_KEYS, "nvcc_found": False}
    return out


def _releases(lo: tuple[int, ...], hi: tuple[int, ...]) -> list[str]:
    return [r for r in final_releases() if lo <= _v(r) <= hi]


def _facts(name: str, jit: dict[str, Any]) -> Any:
    def facts(out: Path, rel: str, box: tuple[str, str, str, int] | None) -> Path:
        path = _box(out, rel, box)
        doc = json.loads(path.read_text())
        doc["facts"]["jit"] = {**(doc["facts"].get("jit") or {}), **jit}
        tag = box[1] if box else "h200"
        new = out / "boxes" / f"{tag}-{rel}-{name}.json"
        new.parent.mkdir(parents=True, exist_ok=True)
        new.write_text(json.dumps(doc))
        return new

    return facts


def symm_rows(out: Path) -> list[dict[str, Any]]:
    releases = _releases((0, 5, 1), (0, 5, 4)) + _releases((0, 5, 10), (0, 5, 23))
    launches = model_flag_launches(SYMM_LAUNCHES)
    rows: list[dict[str, Any]] = []
    for name, jit in symm_variants().items():
        got = gate_allow_rows(out, BOXES, releases, _facts(name, jit), launches, pop="a")
        rows += [{**r, "jit": name} for r in got]
    return rows


def deepep_rows(out: Path) -> list[dict[str, Any]]:
    launches = dict(DEEPEP_LAUNCHES)
    for n, (model, flags) in DEEPEP_LAUNCHES.items():
        launches[f"{n}+symm"] = (model, f"{flags} --enable-symm-mem")
    got = gate_allow_rows(
        out,
        BOXES,
        _releases((0, 5, 18), (0, 5, 23)),
        _facts("all-found", dict(JIT_KEYS)),
        model_flag_launches(launches, "--tp", "8"),
        pop="b",
    )
    return got


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, {"llama3": LLAMA3, **DEEPEP_MODELS})
    draw(out, SEED, [(8, symm_rows(out)), (4, deepep_rows(out))])


if __name__ == "__main__":
    main()
