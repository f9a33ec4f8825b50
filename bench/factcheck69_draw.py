"""The sixty-ninth fact-check sample's population and seeded draw (bench/factcheck69_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck69_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the Hopper, Ada and Ampere boxes at the middle SGLang releases, whose
manifest facts are most often inferred: every ok feature verdict and every ok stack check `audit --facts` gives for the
H100 / H200 / H20 / H800 / L40S / RTX 4090 / A100 / A10 / RTX 3090 boxes on SGLang 0.5.10, 0.5.12, 0.5.14, 0.5.17 and
0.5.19, each with its pins.

Boxes: each tests/cases folder whose GPUs are one of these (H100, H200, RTX 4090: CASES with None) with SGLang R's pins
laid over it (factcheck7_draw.release_box: sgl-kernel / sglang-kernel / triton reset, every pin installed, torch's
variant PyPI's); the GPUs the suite has no folder of are its folders once more with their GPUs renamed (name and
compute capability only, as the sixty-seventh's B300 boxes): H20 and H800 from h200-newest (9.0), L40S from
rtx4090-pcie-sglang044 (8.9), A10 and RTX 3090 from rtx4090-pcie-sglang044 (8.6), A100 from a800-driver535-sglang049
(8.0). A folder at another SGLang release or torch build keeps everything else it records (driver, toolkits, env,
cuda_libs, topology, cubins, the other packages).

Population (o): `audit --facts F --format json` of each box with each release of RELEASES: one row per distinct (box,
feature, its reasons' rule / observed / result) whose status is ok and per distinct (box, check, its reasons' rule /
observed / result) whose status is ok, labelled with the first release that gives it. A row equal to one an earlier
sample drew is left out.

Draw: random.Random(20270207); the rows sorted by JSON text, shuffled, the first 15. Nothing is replaced after the
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

SEED = 20270207
K = 15
RELEASES = ["0.5.10", "0.5.12", "0.5.14", "0.5.17", "0.5.19"]
#: box name: (tests/cases folder, the GPUs' new (name, compute capability) or None: as the folder records them)
CASES: dict[str, tuple[str, tuple[str, str] | None]] = {
    "h100-cpu-torch": ("h100-cpu-torch", None),
    "h200-cu130-pip-memory-saver": ("h200-cu130-pip-memory-saver", None),
    "h200-cu130-pip-mooncake": ("h200-cu130-pip-mooncake", None),
    "h200-cu130-pip-nixl-cu12": ("h200-cu130-pip-nixl-cu12", None),
    "h200-driver-userspace-mismatch": ("h200-driver-userspace-mismatch", None),
    "h200-extension-built-other-torch": ("h200-extension-built-other-torch", None),
    "h200-hand-built-kernel-symbols": ("h200-hand-built-kernel-symbols", None),
    "h200-lmcache-older-than-sglang": ("h200-lmcache-older-than-sglang", None),
    "h200-newest": ("h200-newest", None),
    "h200-newest-flashinfer-aot-torch25": ("h200-newest-flashinfer-aot-torch25", None),
    "h200-newest-no-pybase64-cudnn920": ("h200-newest-no-pybase64-cudnn920", None),
    "image-docker-no-nvidia-runtime": ("image-docker-no-nvidia-runtime", None),
    "image-driver-too-old": ("image-driver-too-old", None),
    "rtx4090-pcie-deepep-sglang044": ("rtx4090-pcie-deepep-sglang044", None),
    "rtx4090-pcie-sglang044": ("rtx4090-pcie-sglang044", None),
    "h20": ("h200-newest", ("NVIDIA H20", "9.0")),
    "h800": ("h200-newest", ("NVIDIA H800", "9.0")),
    "l40s": ("rtx4090-pcie-sglang044", ("NVIDIA L40S", "8.9")),
    "a10": ("rtx4090-pcie-sglang044", ("NVIDIA A10", "8.6")),
    "rtx3090": ("rtx4090-pcie-sglang044", ("NVIDIA GeForce RTX 3090", "8.6")),
    "a100": ("a800-driver535-sglang049", ("NVIDIA A100-SXM4-80GB", "8.0")),
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
    draw_undrawn(out, SEED, [(K, audit_rows(out))], "factcheck69_drawn.json")


if __name__ == "__main__":
    main()
