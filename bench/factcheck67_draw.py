"""The sixty-seventh fact-check sample's population and seeded draw (bench/factcheck67_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck67_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the tool's first purpose on the Blackwell boxes: every ok feature verdict and
every ok stack check `audit --facts` gives for SM120 / SM121 (RTX PRO 6000 Blackwell, RTX 5090, GB10 / DGX Spark) and
SM100 / SM103 (B200, B300) on the newest SGLang releases the manifests know (0.5.20-0.5.23, each with its pins:
FlashInfer 0.6.18 / 0.7.1 / 0.7.2, sglang-kernel 0.4.7 / 0.4.9 / 0.4.10, torch 2.13.0 / 2.14.1 with PyPI's CUDA
build).

Boxes: each tests/cases folder of CASES (those of these GPUs, the write-up's RTX PRO 6000 boxes among them) with
SGLang R's pins laid over it (factcheck7_draw.release_box: sgl-kernel / sglang-kernel / triton reset, every pin
installed, torch's variant PyPI's); the B200 folders once more with their GPUs renamed B300 (compute capability 10.3).
A folder at another SGLang release or torch build keeps everything else it records (driver, toolkits, env, cuda_libs,
topology, cubins, the other packages).

Population (o): `audit --facts F --format json` of each box with each release of RELEASES: one row per distinct (box,
feature, its reasons' rule / observed / result) whose status is ok and per distinct (box, check, its reasons' rule /
observed / result) whose status is ok, labelled with the first release that gives it. A row equal to one an earlier
sample drew is left out.

Draw: random.Random(20270205); the rows sorted by JSON text, shuffled, the first 15. Nothing is replaced after the
draw.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck_draw import draw_undrawn, stackcheck_json_or_error, write_box

SEED = 20270205
K = 15
RELEASES = ["0.5.20", "0.5.21", "0.5.22", "0.5.23"]
#: box name: (tests/cases folder, the GPUs' new (name, compute capability) or None: as the folder records them)
CASES: dict[str, tuple[str, tuple[str, str] | None]] = {
    "b200": ("b200", None),
    "b200-cubin-package": ("b200-cubin-package", None),
    "b200-cubins-offline": ("b200-cubins-offline", None),
    "b200-deepgemm-nvcc128": ("b200-deepgemm-nvcc128", None),
    "b300": ("b200", ("NVIDIA B300 SXM6 AC", "10.3")),
    "b300-cubin-package": ("b200-cubin-package", ("NVIDIA B300 SXM6 AC", "10.3")),
    "b300-cubins-offline": ("b200-cubins-offline", ("NVIDIA B300 SXM6 AC", "10.3")),
    "b300-deepgemm-nvcc128": ("b200-deepgemm-nvcc128", ("NVIDIA B300 SXM6 AC", "10.3")),
    "gb10-cu130-pypi-kernel": ("gb10-cu130-pypi-kernel", None),
    "gb10-no-sm121a": ("gb10-no-sm121a", None),
    "rtx5090-jit-distro-nvcc": ("jit-distro-nvcc-sm120", None),
    "rtx5090-torch-cu126": ("rtx5090-torch-cu126", None),
    "pro6000-pcie-iommu-translated": ("rtxpro6000-pcie-iommu-translated", None),
    "pro6000-kmod-hand-written": ("rtxpro6000-proprietary-kmod-hand-written", None),
    "writeup-before": ("writeup-before", None),
    "writeup-before-lmcache-transformers": ("writeup-before-lmcache-transformers", None),
    "writeup-before-system-nccl": ("writeup-before-system-nccl", None),
    "writeup-after": ("writeup-after", None),
    "writeup-patched-symm-mem": ("writeup-patched-symm-mem", None),
}


def _box(out: Path, name: str, rel: str) -> Path:
    from factcheck7_draw import release_box

    case, gpu = CASES[name]
    doc = copy.deepcopy(release_box(case, rel))
    if gpu is not None:
        for g in doc["facts"]["gpus"]:
            g["name"], g["compute_capability"] = gpu
    return write_box(out, doc, f"{name}-{rel}.json")


def _reasons(entry: dict[str, Any]) -> list[list[Any]]:
    return [[r.get("rule"), r.get("observed"), r.get("result")] for r in entry.get("reasons") or []]


def audit_rows(out: Path) -> list[dict[str, Any]]:
    """Population o: one audit per (box, release); ok features and ok checks, deduplicated."""
    rows: dict[str, dict[str, Any]] = {}
    for name in CASES:
        for rel in RELEASES:
            doc = stackcheck_json_or_error(["audit", "--facts", str(_box(out, name, rel)), "--format", "json"])
            for kind, key in (("features", "feature"), ("checks", "check")):
                for e in doc.get(kind) or []:
                    if e.get("status") == "ok":
                        row = {"pop": "o", "box": name, key: e.get("id"), "reasons": _reasons(e)}
                        rows.setdefault(json.dumps(row, sort_keys=True), {**row, "sglang": rel})
        print(f"o {name}: {len(rows)}", file=sys.stderr, flush=True)
    return list(rows.values())


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    draw_undrawn(out, SEED, [(K, audit_rows(out))], "factcheck67_drawn.json")


if __name__ == "__main__":
    main()
