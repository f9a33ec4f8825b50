"""The seventy-second fact-check sample's population and seeded draw (bench/factcheck72_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck72_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the twenty-second session merged after the seventy-first sample (git
log --first-parent fef9ab2f..a5c9e2d5, and imend21 merged just before it): irev85 (SGLang's start checks on
--bf16-gemm-backend: cutedsl with deterministic inference, cutedsl off SM10x, gemv off SM90 / SM12x), imoe5
(launch.moe_runner_auto read for 0.5.9-0.5.19: the Qwen3-MoE family from 0.5.9, the DeepSeek family from 0.5.12),
icute3 (linear-attn-cutedsl's DSL libs rules and its gate scope by config.json model_type; --fp4-gemm-backend
flashinfer_cutedsl on SM12x), imend21 (the BF16 GEMM's DSL need scoped by --bf16-gemm-backend / deterministic
inference / --rl-on-policy-target; the draft's flashinfer_cutedsl runner only with --speculative-algorithm).

Models: factcheck68's and factcheck71's (Qwen3-30B-A3B BF16 / FP8, DeepSeek-V3, Llama-3.1-8B BF16 / NVFP4,
Qwen3-Next-80B-A3B) and Moonlight-16B-A3B (a BF16 DeepSeek-V3-architecture checkpoint), written with the key names and
values of the published config.json (fewer keys: those SGLang's model code and the gate read).

Boxes: factcheck63's B200 box (8 x B200, the trtllm-gen cubins in the flashinfer-cubin package) at SGLang 0.5.9,
0.5.12, 0.5.15, 0.5.19 and 0.5.23 with each release's pins; factcheck49's H200 box at 0.5.19 and 0.5.23; factcheck67's
RTX PRO 6000 box (tests/cases/rtxpro6000-pcie-iommu-translated, 2 x SM 12.0) at 0.5.19 and 0.5.23.

Population (g): `gate --facts F --dry-run --format json -- python3 -m sglang.launch_server --model-path M FLAGS` of
each launch of LAUNCHES on each of its boxes. Of each allowed launch: one row (box, launch, decision allow, and the ok
features and preflight checks of G_IDS, those these merges read; the launch.json refusals they added report only what
fails, so the allow is the row; the gate's JSON gives no reasons for an ok feature), as factcheck71's. Rows
deduplicated; a row equal to one an earlier sample drew is left out.

Draw: random.Random(20270210); the rows sorted by JSON text, shuffled, the first 10. Nothing is replaced after the
draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck49_draw import _box
from factcheck63_draw import _moe_box
from factcheck67_draw import _box as _pro_box
from factcheck71_draw import MODELS as M71
from factcheck_draw import draw_undrawn, stackcheck_json_or_error, write_box, write_models

SEED = 20270210
K = 10
LAUNCH = ["python3", "-m", "sglang.launch_server"]

MODELS: dict[str, dict[str, Any]] = {
    **{k: M71[k] for k in ("qwen3-30b-a3b", "qwen3-30b-a3b-fp8", "deepseek-v3", "llama31-8b", "llama31-8b-nvfp4",
                           "qwen3-next")},
    # moonshotai/Moonlight-16B-A3B-Instruct config.json (BF16, DeepseekV3ForCausalLM, MLA without q_lora_rank)
    "moonlight-16b-a3b": {
        "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 2048,
        "intermediate_size": 11264, "moe_intermediate_size": 1408, "num_hidden_layers": 27,
        "num_attention_heads": 16, "num_key_value_heads": 16, "n_routed_experts": 64, "n_shared_experts": 2,
        "num_experts_per_tok": 6, "first_k_dense_replace": 1, "moe_layer_freq": 1, "n_group": 1, "topk_group": 1,
        "topk_method": "noaux_tc", "scoring_func": "sigmoid", "norm_topk_prob": True,
        "routed_scaling_factor": 2.446, "kv_lora_rank": 512, "q_lora_rank": None, "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": 163840, "max_position_embeddings": 8192,
        "rope_theta": 50000.0, "torch_dtype": "bfloat16",
    },
}  # fmt: skip

B = {rel: f"b200-{rel}" for rel in ("0.5.9", "0.5.12", "0.5.15", "0.5.19", "0.5.23")}
H = {rel: f"h200-{rel}" for rel in ("0.5.19", "0.5.23")}
P = {rel: f"pro6000-{rel}" for rel in ("0.5.19", "0.5.23")}
_NEW = (B["0.5.23"], H["0.5.23"], P["0.5.23"])
#: launch name: (model, flags, boxes)
LAUNCHES: dict[str, tuple[str, list[str], tuple[str, ...]]] = {
    # irev85 / imend21: --bf16-gemm-backend, deterministic inference, --rl-on-policy-target
    "llama-bf16-cutedsl-tp1": ("llama31-8b", ["--tp", "1", "--bf16-gemm-backend", "cutedsl"], (B["0.5.15"], *_NEW)),
    "llama-bf16-gemv-tp1": ("llama31-8b", ["--tp", "1", "--bf16-gemm-backend", "gemv"],
                            (*_NEW, H["0.5.19"], P["0.5.19"])),
    "llama-bf16-torch-tp1": ("llama31-8b", ["--tp", "1", "--bf16-gemm-backend", "torch"], _NEW[1:]),
    "llama-bf16-cutedsl-det-tp1": ("llama31-8b", ["--tp", "1", "--bf16-gemm-backend", "cutedsl",
                                                  "--enable-deterministic-inference"], (B["0.5.15"], B["0.5.23"])),
    "llama-det-tp1": ("llama31-8b", ["--tp", "1", "--enable-deterministic-inference"], (B["0.5.23"], P["0.5.23"])),
    "llama-rl-tp1": ("llama31-8b", ["--tp", "1", "--rl-on-policy-target", "fsdp"], (B["0.5.23"],)),
    # imoe5: SGLang's own MoE runner pick (no --moe-runner-backend)
    "qwen3-tp4": ("qwen3-30b-a3b", ["--tp", "4"], (B["0.5.9"], B["0.5.12"], B["0.5.19"], H["0.5.19"])),
    "qwen3-fp8-tp4": ("qwen3-30b-a3b-fp8", ["--tp", "4"], (B["0.5.12"], B["0.5.19"])),
    "moonlight-tp4": ("moonlight-16b-a3b", ["--tp", "4"], (B["0.5.9"], B["0.5.12"], B["0.5.19"])),
    # icute3: linear-attn-cutedsl's libs and scope, the FP4 GEMM's cute-dsl on SM12x
    "qwen3-next-cutedsl-tp2": ("qwen3-next", ["--tp", "2", "--linear-attn-backend", "cutedsl"],
                               (B["0.5.15"], B["0.5.23"], P["0.5.23"])),
    "llama-linear-cutedsl-tp1": ("llama31-8b", ["--tp", "1", "--linear-attn-backend", "cutedsl"], (B["0.5.23"],)),
    "llama-nvfp4-fp4-cutedsl-tp1": ("llama31-8b-nvfp4", ["--tp", "1", "--quantization", "modelopt_fp4",
                                                         "--fp4-gemm-backend", "flashinfer_cutedsl"],
                                    (P["0.5.19"], P["0.5.23"], B["0.5.23"])),
    # imend21: the draft's flashinfer_cutedsl runner without --speculative-algorithm
    "qwen3-spec-runner-cutedsl-tp4": ("qwen3-30b-a3b", ["--tp", "4", "--speculative-moe-runner-backend",
                                                        "flashinfer_cutedsl"], (B["0.5.23"],)),
}  # fmt: skip

#: the features and preflight checks these merges read, listed where ok
G_IDS = {"check model", "sglang-start-imports", "moe-trtllm-gen-cubins", "linear-attn-cutedsl", "nvfp4"}


def _boxes(out: Path) -> dict[str, Path]:
    paths = {name: _moe_box(out, rel, "b200", "pkg") for rel, name in B.items()}
    paths.update({name: _box(out, rel, None) for rel, name in H.items()})
    # (write_box after _moe_box: factcheck49._box rewrites out/box-h200-REL.json, read again by each _moe_box)
    paths = {name: write_box(out, json.loads(p.read_text()), f"{name}.json") for name, p in paths.items()}
    paths.update({name: _pro_box(out, "pro6000-pcie-iommu-translated", rel) for rel, name in P.items()})
    return paths


def _oks(doc: dict[str, Any]) -> list[str]:
    """The ok features and preflight checks of an allowed gate's JSON that are in G_IDS, sorted."""
    checks = (doc.get("preflight") or {}).get("checks") or []
    oks = [f"check {c.get('check')}" for c in checks if c.get("status") == "ok"]
    oks += [str(f.get("feature")) for f in doc.get("features") or [] if f.get("status") == "ok"]
    return sorted(o for o in oks if o in G_IDS)


def gate_rows(out: Path) -> list[dict[str, Any]]:
    boxes = _boxes(out)
    rows: dict[str, dict[str, Any]] = {}
    launches = allowed = 0
    for name, (model, flags, on) in LAUNCHES.items():
        for box in on:
            launches += 1
            doc = stackcheck_json_or_error(["gate", "--facts", str(boxes[box]), "--dry-run", "--format", "json", "--",
                                            *LAUNCH, "--model-path", str(out / "models" / model), *flags])  # fmt: skip
            if doc.get("decision") != "allow":
                continue
            allowed += 1
            row = {"pop": "g", "box": box, "launch": name, "decision": "allow", "ok": _oks(doc)}
            rows.setdefault(json.dumps(row, sort_keys=True), row)
    print(f"g: {launches} launches, {allowed} allowed, {len(rows)} rows", file=sys.stderr, flush=True)
    return list(rows.values())


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    draw_undrawn(out, SEED, [(K, gate_rows(out))], "factcheck72_drawn.json")


if __name__ == "__main__":
    main()
