"""The thirty-first fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md,
"Thirty-first sample").

    PYTHONPATH=. python bench/factcheck31_draw.py OUT_DIR

Fixed before any row was checked. Aimed at a population no earlier sample drew (every sample's heading and rule read
in FACTCHECK.md): the gate's allows of the all-reduce paths (SGLang's custom all-reduce, the default; NCCL symmetric
memory `--enable-symm-mem`; `--enable-torch-symm-mem`; `--enable-flashinfer-allreduce-fusion`; `--enable-mscclpp`) on
PCIe boxes without NVLink of majors 8 / 9 / 12 (A100 PCIe 8.0, RTX A6000 8.6, L40S 8.9, H100 PCIe 9.0, RTX PRO 6000
12.0). Earlier samples drew torch-symm-mem as audit ok verdicts on NVLink H100 boxes (twenty-eighth), the gate on
NVLink 8-GPU boxes, and recommend on GeForce boxes without P2P (thirtieth, left out here with its EAGLE-3 population);
no sample drew a gate allow of an all-reduce flag on a PCIe box.

Boxes: bench/factcheck27_draw._box (tests/cases/h200-newest with the release and its pins, factcheck23_draw's extra
packages, libnuma found) cut to 4 GPUs of each GPU_BOXES entry, the topology set to PCIe through the host bridge
without NVLink or NVSwitch, peer access on every pair, and a pcie section with the IOMMU off and ACS disabled (the
shape of tests/cases/rtxpro6000-pcie-iommu-translated, the box an operator would gate after fixing its P2P path).

(a) `gate --dry-run --format json` of a Llama 3 8B (factcheck20_draw's config) with each flag set of LAUNCHES at
    `--tp 2` and `--tp 4` on each box with every final release 0.5.10-0.5.23: one row per allow.

Draw: random.Random(20261231); the rows sorted by their JSON text, shuffled, the first 12. Nothing is replaced after
the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck20_draw import _LLAMA3
from factcheck23_draw import _v
from factcheck27_draw import _box
from factcheck_draw import draw, final_releases, gate_allow_rows, write_models

SEED = 20261231
MODELS: dict[str, dict[str, Any]] = {"llama3": _LLAMA3}
# name: flags
LAUNCHES: dict[str, str] = {
    "custom-ar": "",
    "symm-mem": "--enable-symm-mem",
    "torch-symm-mem": "--enable-torch-symm-mem",
    "fi-ar-fusion": "--enable-flashinfer-allreduce-fusion",
    "mscclpp": "--enable-mscclpp",
}
TPS = [2, 4]
# name: (GPU name, compute capability, machine, GPU count)
GPU_BOXES: dict[str, tuple[str, str, str, int]] = {
    "a100-pcie": ("NVIDIA A100 80GB PCIe", "8.0", "x86_64", 4),
    "a6000": ("NVIDIA RTX A6000", "8.6", "x86_64", 4),
    "l40s": ("NVIDIA L40S", "8.9", "x86_64", 4),
    "h100-pcie": ("NVIDIA H100 PCIe", "9.0", "x86_64", 4),
    "pro6000": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", "x86_64", 4),
}


def _pcie_box(out: Path, rel: str, spec: tuple[str, str, str, int]) -> Path:
    path = _box(out, rel, spec)
    doc = json.loads(path.read_text())
    n = spec[3]
    pairs = [{"a": a, "b": b, "link": "pcie-host-bridge", "nvlink_count": 0, "common_ancestor": "hostbridge",
              "p2p_read": "ok"} for a in range(n) for b in range(a + 1, n)]  # fmt: skip
    doc["facts"]["topology"] = {"interconnect": "pcie-host-bridge", "same_model": True, "gpu_count": n, "p2p": "all",
                                "nvswitch": False, "pairs": pairs}  # fmt: skip
    doc["facts"]["pcie"] = {"gpus": [f"0000:{0x18 + 0x20 * i:02x}:00.0" for i in range(n)], "iommu": "off",
                            "iommu_groups": {}, "acs": "disabled", "acs_redirect": []}  # fmt: skip
    path.write_text(json.dumps(doc))
    return path


def rows(out: Path) -> list[dict[str, Any]]:
    releases = [r for r in final_releases() if _v(r) >= (0, 5, 10)]
    launches = [({"launch": name, "tp": tp, "flags": flags}, "llama3", ["--tp", str(tp), *flags.split()])
                for name, flags in LAUNCHES.items() for tp in TPS]  # fmt: skip
    return gate_allow_rows(out, GPU_BOXES, releases, _pcie_box, launches)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    draw(out, SEED, [(12, rows(out))])


if __name__ == "__main__":
    main()
