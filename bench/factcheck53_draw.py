"""The fifty-third fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Fifty-third
sample"; its text is bench/factcheck53_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck53_draw.py OUT_DIR

Fixed before any row was checked. A uniform draw over the gate's allows of common launch lines, for an unbiased rate
of false passes a user meets at the gate (the fifty-first sample drew audit's ok rows the same way); rows an earlier
sample drew are kept.

Boxes: factcheck51_draw.BOXES as factcheck27_draw._box builds them (tests/cases/h200-newest with the release's pins,
the extra packages, libnuma): A100 8.0, L40S 8.9, H100 9.0, B200 10.0, B300 10.3, RTX PRO 6000 12.0 (8 each, x86_64)
and GB10 12.1 (one, aarch64), each with every final SGLang release of components.json (0.5.1-0.5.23).

Population (g): `gate --facts F --dry-run --format json -- python3 -m sglang.launch_server --model-path
OUT/models/llama3 ARGS` (in this process, factcheck_draw.gate_allow_rows) for each box, release and launch of LAUNCHES
(ARGS its flags, DRAFT/ standing for OUT/models/): one row {"pop": "g", "box", "sglang", "launch"} per allow.

Draw: random.Random(20270122); the rows sorted by JSON text, shuffled, the first 20. Nothing is replaced after the
draw.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck21b_draw import MODELS as _MODELS21B
from factcheck27_draw import _box
from factcheck51_draw import BOXES
from factcheck_draw import draw, final_releases, gate_allow_rows, write_models

SEED = 20270122
K = 20
MODELS: dict[str, dict[str, Any]] = {k: _MODELS21B[k] for k in ("llama3", "llama3-eagle3")}
_EAGLE3 = ("--speculative-algorithm EAGLE3 --speculative-draft-model-path DRAFT/llama3-eagle3 "
           "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4")  # fmt: skip
# name: flags (DRAFT/ is OUT/models/)
LAUNCHES: dict[str, str] = {
    "plain": "",
    "tp2": "--tp 2",
    "tp4": "--tp 4",
    "tp8": "--tp 8",
    **{f"attn-{b}": f"--attention-backend {b}" for b in ("flashinfer", "triton", "fa3", "fa4", "trtllm_mha")},
    "fp8": "--quantization fp8",
    "eagle3": _EAGLE3,
    "symm-mem-tp8": "--tp 8 --enable-torch-symm-mem",
    "hicache": "--enable-hierarchical-cache",
    "pd-prefill": "--disaggregation-mode prefill",
    "pd-decode": "--disaggregation-mode decode",
}


def gate_rows(out: Path) -> list[dict[str, Any]]:
    """Population g: the gate's allows of each box x release x launch."""
    models = f"{out / 'models'}/"
    launches = [({"launch": n}, "llama3", f.replace("DRAFT/", models).split()) for n, f in LAUNCHES.items()]
    return gate_allow_rows(out, BOXES, final_releases(), _box, launches, pop="g")


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    draw(out, SEED, [(K, gate_rows(out))])


if __name__ == "__main__":
    main()
