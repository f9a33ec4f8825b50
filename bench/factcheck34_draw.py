"""The thirty-fourth fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md,
"Thirty-fourth sample").

    PYTHONPATH=. python bench/factcheck34_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what igap20 and igap21 merged (git log --first-parent 611c448..c9723ce)
and now allow. Left out (said in FACTCHECK.md): igap20's megamoe env var and speculative drafts, igap21's
fp8-block-gemm ok on 8.x and iextsym's extension-torch-abi-* ok (audit verdicts; not drawn in the time this sample had).

Boxes: bench/factcheck27_draw._box (tests/cases/h200-newest with the release and its pins, extra packages, libnuma
found) with 8 GPUs of the named kind.

(a) a ModelOpt MIXED_PRECISION checkpoint (factcheck33_draw.MIXED: NemotronH or Qwen3 MoE, W4A8-only or W4A8 + NVFP4
    experts) with `--quantization w4afp8` or `--quantization modelopt_fp8`, `--tp 8`, on RTX A6000 (8.6) and L40S
    (8.9) x8 boxes with every final release 0.5.13-0.5.23: one row per allow;
(b) a DeepSeek V3.2 (DSA) config with `--dcp-size 2` alone or with `--attention-backend dsa`, `--tp 8`, on B200
    (10.0) and B300 (10.3) x8 boxes with every final release 0.5.22-0.5.23: one row per allow;
(c) a DeepSeek R1 (MLA) config with `--dcp-size 2` and `--decode-attention-backend B` or `--attention-backend B` for
    B in flashinfer, flashmla, triton, `--tp 8`, on H100 (9.0) and B200 (10.0) x8 boxes with every final release
    0.5.15-0.5.23: one row per allow.

Model configs are tests/gate_cli.py's DEEPSEEK_V32 / DEEPSEEK_R1 and factcheck33_draw's MIXED.
Draw: random.Random(20270103); per population its rows sorted by their JSON text, shuffled, the first k (a: 4,
b: 3, c: 4), 11 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck27_draw import _box
from factcheck33_draw import MIXED, _write_mixed
from factcheck_draw import draw, gate_allow_rows, model_flag_launches, write_models
from factcheck_draw import releases_between as _releases
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V32

SEED = 20270103
_A6000 = ("NVIDIA RTX A6000", "8.6", "x86_64", 8)
_L40S = ("NVIDIA L40S", "8.9", "x86_64", 8)
_H100 = ("NVIDIA H100 80GB HBM3", "9.0", "x86_64", 8)
_B200 = ("NVIDIA B200", "10.0", "x86_64", 8)
_B300 = ("NVIDIA B300 SXM6 AC", "10.3", "x86_64", 8)
MLA_BACKENDS = ["flashinfer", "flashmla", "triton"]


def mixed_rows(out: Path) -> list[dict[str, Any]]:
    _write_mixed(out)
    table = {f"{m}|{q}": (m, f"--quantization {q}") for m in MIXED for q in ("w4afp8", "modelopt_fp8")}
    launches = model_flag_launches(table, "--tp", "8")
    boxes = {"a6000": _A6000, "l40s": _L40S}
    return gate_allow_rows(out, boxes, _releases((0, 5, 13), (0, 5, 23)), _box, launches, pop="a")


def dsa_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"dsv32": DEEPSEEK_V32})
    table = {"dcp": ("dsv32", "--dcp-size 2"), "dcp-dsa": ("dsv32", "--dcp-size 2 --attention-backend dsa")}
    launches = model_flag_launches(table, "--tp", "8")
    boxes = {"b200": _B200, "b300": _B300}
    return gate_allow_rows(out, boxes, _releases((0, 5, 22), (0, 5, 23)), _box, launches, pop="b")


def mla_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"dsr1": DEEPSEEK_R1})
    table = {f"{s}|{b}": ("dsr1", f"--dcp-size 2 --{s}attention-backend {b}") for s in ("decode-", "")
             for b in MLA_BACKENDS}  # fmt: skip
    launches = model_flag_launches(table, "--tp", "8")
    boxes = {"h100": _H100, "b200": _B200}
    return gate_allow_rows(out, boxes, _releases((0, 5, 15), (0, 5, 23)), _box, launches, pop="c")


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    draw(out, SEED, [(4, mixed_rows(out)), (3, dsa_rows(out)), (4, mla_rows(out))])


if __name__ == "__main__":
    main()
