"""The thirty-third fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md,
"Thirty-third sample").

    PYTHONPATH=. python bench/factcheck33_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what igap19 merged (git log --first-parent 4b195b7..40d2577): where its
rules now allow a launch or drop a need, is the launch fine? (The thirty-second sample draws the last stop's rules,
audit on GH200 / L40S / L4 / A10 / A30 and triage: left out.)

Boxes: bench/factcheck27_draw._box (tests/cases/h200-newest with the release and its pins, factcheck23_draw's extra
packages, libnuma found) with BOX's GPUs.

(a) `--enable-flashinfer-allreduce-fusion --tp 2` of a Llama-3-shaped config.json whose architectures[0] is each
    architecture of launch.json's idle_for_models entry (igap19: the fused path never called), on an A100 SXM (8.0)
    x8 box with every final release 0.5.1-0.5.10: one row per allow;
(b) `--enable-symm-mem --tp 2` of a Kimi Linear / Kimi K3 config.json (architectures[0] of the ignored_for_models
    entry) with each graph variant of SYMM_VARIANTS, on H100 (9.0) and B200 (10.0) x8 boxes whose jit facts say no
    libnccl.so is found, with 0.5.16-0.5.19: one row per allow;
(c) a ModelOpt MIXED_PRECISION checkpoint (NemotronH or Qwen3 MoE config, W4A8-only or W4A8 + NVFP4 layers) with
    and without `--quantization w4afp8`, `--tp 8`, on A100 (8.0), L40S (8.9), H100 (9.0), B200 (10.0) and RTX PRO
    6000 (12.0) x8 boxes with every final release 0.5.10-0.5.23: one row per allow;
(d) `--quantization nvfp4_online --tp 8` of a Qwen3 MoE and a Llama 3 with each runner of NVFP4_RUNNERS, on B200
    (10.0) and B300 (10.3) x8 boxes with every final release 0.5.14-0.5.23: one row per allow.

Model configs are tests/gate_cli.py's LLAMA3 / QWEN3_MOE (written in the published checkpoints' shape).
Draw: random.Random(20270102); per population its rows sorted by their JSON text, shuffled, the first k (a: 4,
b: 3, c: 4, d: 3), 14 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck27_draw import _box
from factcheck_draw import ROOT, draw, gate_allow_rows, model_flag_launches, write_models
from factcheck_draw import releases_between as _releases
from gate_cli import LLAMA3, QWEN3_MOE

SEED = 20270102
_A100 = ("NVIDIA A100-SXM4-80GB", "8.0", "x86_64", 8)
_L40S = ("NVIDIA L40S", "8.9", "x86_64", 8)
_H100 = ("NVIDIA H100 80GB HBM3", "9.0", "x86_64", 8)
_B200 = ("NVIDIA B200", "10.0", "x86_64", 8)
_B300 = ("NVIDIA B300 SXM6 AC", "10.3", "x86_64", 8)
_PRO6000 = ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", "x86_64", 8)

_W4A8 = {"quant_algo": "W4A8_AWQ", "group_size": 128}
_NVFP4 = {"quant_algo": "NVFP4", "group_size": 16}
_W4A8_ONLY = {"model.layers.0.mlp.experts.0.w1": _W4A8, "model.layers.0.self_attn.q_proj": {"quant_algo": "FP8"}}
_WITH_NVFP4 = {**_W4A8_ONLY, "model.layers.1.mlp.experts.0.w1": _NVFP4}
_NEMOTRON = {**QWEN3_MOE, "architectures": ["NemotronHForCausalLM"]}
# name: (config.json, quantized_layers of hf_quant_config.json)
MIXED: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "nemotronh-w4a8": (_NEMOTRON, _W4A8_ONLY),
    "nemotronh-w4a8-nvfp4": (_NEMOTRON, _WITH_NVFP4),
    "qwen3moe-w4a8-nvfp4": (QWEN3_MOE, _WITH_NVFP4),
}
KIMI: dict[str, dict[str, Any]] = {
    "kimi-linear": {**LLAMA3, "architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear"},
    "kimi-k3": {**LLAMA3, "architectures": ["KimiK3ForConditionalGeneration"], "model_type": "kimi_k3"},
}
SYMM_VARIANTS = [
    "",
    "--disable-decode-cuda-graph",
    "--disable-prefill-cuda-graph",
    "--enable-piecewise-cuda-graph",
    "--cuda-graph-max-bs 8",
    "--disable-cuda-graph",
]
NVFP4_RUNNERS = [
    "",
    "--moe-runner-backend auto",
    "--moe-runner-backend flashinfer_trtllm",
    "--moe-runner-backend flashinfer_trtllm_routed",
    "--moe-runner-backend flashinfer_cutedsl",
    "--moe-runner-backend flashinfer_cutedsl --moe-a2a-backend flashinfer",
    "--moe-runner-backend flashinfer_megamoe --moe-a2a-backend flashinfer_megamoe",
]


def _idle_architectures() -> list[str]:
    launch = json.loads((ROOT / "manifests" / "launch.json").read_text())
    option = next(o for o in launch["options"] if o.get("flag") == "--enable-flashinfer-allreduce-fusion")
    return [a for e in option["idle_for_models"] for a in e["architectures"]]


def _no_libnccl_box(out: Path, rel: str, spec: tuple[str, str, str, int]) -> Path:
    path = _box(out, rel, spec)
    doc = json.loads(path.read_text())
    doc["facts"].setdefault("jit", {})["libnccl_so_found"] = False
    path.write_text(json.dumps(doc))
    return path


def _write_mixed(out: Path) -> None:
    write_models(out, {n: c for n, (c, _) in MIXED.items()})
    for name, (_, layers) in MIXED.items():
        quant = {"quant_algo": "MIXED_PRECISION", "kv_cache_quant_algo": None, "quantized_layers": layers}
        doc = {"producer": {"name": "modelopt"}, "quantization": quant}
        (out / "models" / name / "hf_quant_config.json").write_text(json.dumps(doc))


def fusion_rows(out: Path) -> list[dict[str, Any]]:
    archs = _idle_architectures()
    write_models(out, {f"idle-{a}": {**LLAMA3, "architectures": [a]} for a in archs})
    table = {a: (f"idle-{a}", "--enable-flashinfer-allreduce-fusion") for a in archs}
    launches = model_flag_launches(table, "--tp", "2")
    return gate_allow_rows(out, {"a100": _A100}, _releases((0, 5, 1), (0, 5, 10)), _box, launches, pop="a")


def symm_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, KIMI)
    table = {f"{m}|{v}": (m, f"--enable-symm-mem {v}".strip()) for m in KIMI for v in SYMM_VARIANTS}
    launches = model_flag_launches(table, "--tp", "2")
    boxes = {"h100": _H100, "b200": _B200}
    return gate_allow_rows(out, boxes, _releases((0, 5, 16), (0, 5, 19)), _no_libnccl_box, launches, pop="b")


def mixed_rows(out: Path) -> list[dict[str, Any]]:
    _write_mixed(out)
    table = {f"{m}|{f}": (m, f) for m in MIXED for f in ("", "--quantization w4afp8")}
    launches = model_flag_launches(table, "--tp", "8")
    boxes = {"a100": _A100, "l40s": _L40S, "h100": _H100, "b200": _B200, "pro6000": _PRO6000}
    return gate_allow_rows(out, boxes, _releases((0, 5, 10), (0, 5, 23)), _box, launches, pop="c")


def nvfp4_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"qwen3moe": QWEN3_MOE, "llama3": LLAMA3})
    table = {f"{m}|{r}": (m, f"--quantization nvfp4_online {r}".strip()) for m in ("qwen3moe", "llama3")
             for r in NVFP4_RUNNERS}  # fmt: skip
    launches = model_flag_launches(table, "--tp", "8")
    boxes = {"b200": _B200, "b300": _B300}
    return gate_allow_rows(out, boxes, _releases((0, 5, 14), (0, 5, 23)), _box, launches, pop="d")


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    draw(out, SEED, [(4, fusion_rows(out)), (3, symm_rows(out)), (4, mixed_rows(out)), (3, nvfp4_rows(out))])


if __name__ == "__main__":
    main()
