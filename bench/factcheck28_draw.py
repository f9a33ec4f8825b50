"""The twenty-eighth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md,
"Twenty-eighth sample").

    PYTHONPATH=. python bench/factcheck28_draw.py OUT_DIR

Fixed before any row was checked. Aimed at populations no earlier sample drew (every sample's heading and rule read
in FACTCHECK.md): the gate was drawn on attention / KV / quantization / speculative / MoE all-to-all / pdmux / DeepEP
/ bitsandbytes / typed values, never on the LoRA, hierarchical-cache (HiCache), prefill-decode disaggregation or
multimodal flags, which it allows with the note "declared by SGLang R, not read for features"; audit's ok verdicts
were drawn on 0.5.10-0.5.23 at 8.0 / 8.6 / 8.9 (eighteenth, twenty-third, twenty-fourth) and on 0.5.1-0.5.9 only for
H200 / B200 / GB200 cases (sixth, eleventh to thirteenth: explain rows), never audit of an Ampere / Ada / Hopper PCIe
box with 0.5.1-0.5.9. The twenty-seventh sample's populations (DeepEP v1/v2, B300 / GB10 audit, plan on Python /
glibc boxes) are left out.

Boxes: bench/factcheck27_draw._box (tests/cases/h200-newest with the release and its pins, factcheck23_draw's extra
packages with sgl-deep-ep at the release's pin, libnuma found) with GPU_BOXES' GPUs.

(a) `gate --dry-run --format json` (one GPU, no `--tp`) of each launch of LAUNCHES (LoRA, HiCache, disaggregation,
    multimodal flags on a Llama 3 8B or a Qwen2.5-VL 7B config) on each box of GPU_BOXES (A100 8.0, RTX 3090 8.6,
    L40S 8.9, H100 9.0, B200 10.0, RTX PRO 6000 12.0) with every final release 0.5.10-0.5.23: one row per allow;
(b) `audit --facts F --format json` of the A100, RTX 3090, L40S and H100 boxes with every final release 0.5.1-0.5.9:
    one row per distinct (box, feature, its reasons' rule / observed / result) whose status is ok, labelled with the
    first release that gives it.

Model configs written for this sample in the published checkpoints' shape (not copied).
Draw: random.Random(20261228); per population its rows sorted by their JSON text, shuffled, the first k (a: 11,
b: 5), 16 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck20_draw import _LLAMA3
from factcheck23_draw import _v
from factcheck27_draw import _box
from factcheck_draw import audit_ok_rows, draw, final_releases, gate_allow_rows, model_flag_launches, write_models

SEED = 20261228
_QWEN25_VL = {"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
              "hidden_size": 3584, "num_attention_heads": 28, "num_key_value_heads": 4, "num_hidden_layers": 28,
              "intermediate_size": 18944, "torch_dtype": "bfloat16",
              "vision_config": {"depth": 32, "hidden_size": 1280, "num_heads": 16,
                                "out_hidden_size": 3584}}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {"llama3": _LLAMA3, "qwen25-vl": _QWEN25_VL}
_LORA = "--enable-lora --lora-paths a=/loras/a --max-lora-rank 16"
_HI = "--enable-hierarchical-cache"
# name: (model, flags)
LAUNCHES: dict[str, tuple[str, str]] = {
    "lora": ("llama3", _LORA),
    "lora-triton": ("llama3", f"{_LORA} --lora-backend triton"),
    "lora-csgmv": ("llama3", f"{_LORA} --lora-backend csgmv"),
    "hicache": ("llama3", _HI),
    "hicache-kernel-page-first": ("llama3", f"{_HI} --hicache-io-backend kernel --hicache-mem-layout page_first"),
    "hicache-direct-layer-first": ("llama3", f"{_HI} --hicache-io-backend direct --hicache-mem-layout layer_first"),
    "hicache-file": ("llama3", f"{_HI} --hicache-storage-backend file"),
    "hicache-mooncake": ("llama3", f"{_HI} --hicache-storage-backend mooncake"),
    "pd-prefill": ("llama3", "--disaggregation-mode prefill"),
    "pd-decode-nixl": ("llama3", "--disaggregation-mode decode --disaggregation-transfer-backend nixl"),
    "vl": ("qwen25-vl", ""),
    "vl-mm-fa3": ("qwen25-vl", "--mm-attention-backend fa3"),
    "vl-mm-triton": ("qwen25-vl", "--mm-attention-backend triton_attn"),
}
# name: (GPU name, compute capability, machine, GPU count)
GPU_BOXES: dict[str, tuple[str, str, str, int]] = {
    "a100": ("NVIDIA A100-SXM4-80GB", "8.0", "x86_64", 8),
    "rtx3090": ("NVIDIA GeForce RTX 3090", "8.6", "x86_64", 8),
    "l40s": ("NVIDIA L40S", "8.9", "x86_64", 8),
    "h100": ("NVIDIA H100 80GB HBM3", "9.0", "x86_64", 8),
    "b200": ("NVIDIA B200", "10.0", "x86_64", 8),
    "pro6000": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", "x86_64", 8),
}
AUDIT_BOXES = ["a100", "rtx3090", "l40s", "h100"]


def _releases(first: tuple[int, ...], last: tuple[int, ...] = (9, 9, 9)) -> list[str]:
    return [r for r in final_releases() if first <= _v(r) <= last]


def gate_rows(out: Path) -> list[dict[str, Any]]:
    return gate_allow_rows(out, GPU_BOXES, _releases((0, 5, 10)), _box, model_flag_launches(LAUNCHES))


def audit_rows(out: Path) -> list[dict[str, Any]]:
    return audit_ok_rows(AUDIT_BOXES, _releases((0, 5, 1), (0, 5, 9)), lambda box, rel: _box(out, rel, GPU_BOXES[box]))


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    a = gate_rows(out)
    b = audit_rows(out)
    draw(out, SEED, [(11, a), (5, b)])


if __name__ == "__main__":
    main()
