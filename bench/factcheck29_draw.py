"""The twenty-ninth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md,
"Twenty-ninth sample").

    PYTHONPATH=. python bench/factcheck29_draw.py OUT_DIR

Fixed before any row was checked. Aimed at populations no earlier sample drew (every sample's heading and rule read
in FACTCHECK.md): the rules the last stop merged (git log --first-parent ec70aec..0f6d94c) where the gate ALLOWS (a
DSA model with `--dcp-size` 2, alone and with EAGLE top-k 1; HiSparse with `--disable-radix-cache`, BF16 and FP8 KV;
GLM-5 with its default and an FP8 KV cache; `--disaggregation-transfer-backend nixl` with NIXL installed; plain
disaggregation and HiCache's mooncake storage with mooncake-transfer-engine installed): igap16 / ismall / ifc28 drew
or tested their refusals, no sample drew their allows; and NGRAM speculative decoding (no draft model) x attention
backend x KV dtype on Hopper and Blackwell (the eighteenth drew speculative launches on SM12x only, the twenty-first
speculative launches with draft models).

Boxes: bench/factcheck27_draw._box (tests/cases/h200-newest with the release and its pins, factcheck23_draw's extra
packages, libnuma found) with 8 GPUs set to H100 (9.0), B200 (10.0) or RTX PRO 6000 (12.0), and NIXL 0.7.1 with
nixl-cu12 / nixl-cu13 and mooncake-transfer-engine 0.3.7 stated installed.

(a) `gate --dry-run --format json --tp 8` of each launch of NEW_RULE_LAUNCHES on the three boxes with every final
    release 0.5.10-0.5.23: one row per allow;
(s) the same for NGRAM_LAUNCHES (a Llama 3 8B, `--speculative-algorithm NGRAM` with each attention backend of
    ATTENTION and each KV dtype of KV) on the H100 and B200 boxes: one row per allow.

Model configs are factcheck20/23's (Llama 3 8B, DeepSeek V3.2 FP8 block) and a GLM-5 config in the published
checkpoints' shape (DeepSeek V3.2's renamed, as tests/launch/test_gate_igap16_glm_sm12.py does; not copied).
Draw: random.Random(20261229); per population its rows sorted by their JSON text, shuffled, the first k (a: 8,
s: 4), 12 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck20_draw import _LLAMA3
from factcheck23_draw import MODELS as _MODELS23
from factcheck23_draw import _v
from factcheck27_draw import _box
from factcheck_draw import draw, final_releases, gate_allow_rows, model_flag_launches, write_models

SEED = 20261229
_GLM5 = {**_MODELS23["dsv32-fp8"], "architectures": ["GlmMoeDsaForCausalLM"], "model_type": "glm_moe_dsa"}
MODELS: dict[str, dict[str, Any]] = {"llama3": _LLAMA3, "dsv32-fp8": _MODELS23["dsv32-fp8"], "glm5-fp8": _GLM5}
_EAGLE1 = ("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
           "--speculative-num-draft-tokens 4")  # fmt: skip
_HS = "--enable-hisparse --disable-radix-cache"
# name: (model, flags)
NEW_RULE_LAUNCHES: dict[str, tuple[str, str]] = {
    "dsa-dcp2": ("dsv32-fp8", "--dcp-size 2"),
    "dsa-dcp2-eagle-topk1": ("dsv32-fp8", f"--dcp-size 2 {_EAGLE1}"),
    "dsa-hisparse": ("dsv32-fp8", _HS),
    "dsa-hisparse-fp8kv": ("dsv32-fp8", f"{_HS} --kv-cache-dtype fp8_e4m3"),
    "glm5": ("glm5-fp8", ""),
    "glm5-fp8kv": ("glm5-fp8", "--kv-cache-dtype fp8_e4m3"),
    "pd-prefill-nixl": ("llama3", "--disaggregation-mode prefill --disaggregation-transfer-backend nixl"),
    "pd-decode-mooncake": ("llama3", "--disaggregation-mode decode"),
    "hicache-mooncake": ("llama3", "--enable-hierarchical-cache --hicache-storage-backend mooncake"),
}
ATTENTION = ["fa3", "flashinfer", "triton", "trtllm_mha", "fa4"]
KV = ["auto", "fp8_e4m3"]
NGRAM_LAUNCHES: dict[str, tuple[str, str]] = {
    f"ngram-{a}-{k}": ("llama3", f"--speculative-algorithm NGRAM --attention-backend {a} --kv-cache-dtype {k}")
    for a in ATTENTION
    for k in KV
}
# name: (GPU name, compute capability, machine, GPU count)
GPU_BOXES: dict[str, tuple[str, str, str, int]] = {
    "h100": ("NVIDIA H100 80GB HBM3", "9.0", "x86_64", 8),
    "b200": ("NVIDIA B200", "10.0", "x86_64", 8),
    "pro6000": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", "x86_64", 8),
}
_INSTALLED = {"nixl": "0.7.1", "nixl-cu12": "0.7.1", "nixl-cu13": "0.7.1", "mooncake-transfer-engine": "0.3.7"}


def _box29(out: Path, rel: str, spec: tuple[str, str, str, int]) -> Path:
    path = _box(out, rel, spec)
    doc = json.loads(path.read_text())
    for name, version in _INSTALLED.items():
        doc["facts"]["packages"][name] = {"installed": True, "version": version}
    path.write_text(json.dumps(doc))
    return path


def _rows(out: Path, pop: str, launches: dict[str, tuple[str, str]], boxes: list[str]) -> list[dict[str, Any]]:
    releases = [r for r in final_releases() if _v(r) >= (0, 5, 10)]
    specs = {box: GPU_BOXES[box] for box in boxes}
    return gate_allow_rows(out, specs, releases, _box29, model_flag_launches(launches, "--tp", "8"), pop=pop)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    a = _rows(out, "a", NEW_RULE_LAUNCHES, list(GPU_BOXES))
    s = _rows(out, "s", NGRAM_LAUNCHES, ["h100", "b200"])
    draw(out, SEED, [(8, a), (4, s)])


if __name__ == "__main__":
    main()
