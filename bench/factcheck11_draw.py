"""The eleventh fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Eleventh sample").

    PYTHONPATH=. python bench/factcheck11_draw.py OUT_DIR

Fixed before any row was checked. The tenth sample's four populations (bench/factcheck10_draw.py) with its weights
scaled down to make room for what was added since and no sample has drawn: attention-fa4 judged on the
flash-attn-4 package (0.5.10-0.5.15), the MLA dims rules of trtllm_mla and flashmla (launch.mla_kv_rope,
launch.mla_qk_nope_head_dim), the ModelOpt quantization mapping per release (preflight.json
model.modelopt_algos / modelopt_quant_method) and the attention choices each release offers (launch.json
release_choices). Releases: every final SGLang release of components.json, 0.5.1-0.5.23 (the tenth stopped at
0.5.10 by a download mistake), with their pins (factcheck7_draw.release_box, flash-attn-4 included), on the tenth's
three boxes: 8x H200 (h200-newest, `--tp 8`), 8x B200 with a CUDA 12.8 nvcc (b200-deepgemm-nvcc128, `--tp 8`), one
RTX PRO 6000 (rtxpro6000-pcie-iommu-translated, `--tp 1`). Six populations:

(a) `gate --dry-run --format json` for the tenth's five MLA architectures in the DeepSeek MLA shape, plus two with
    other dims (MiniCPM3's own: kv_lora_rank 256, rope 32, nope 64; GLM-4.7-Flash's: kv_lora_rank 512, rope 64,
    nope 192, v 256), each with no attention flag or `--attention-backend flashinfer|triton|fa3|flashmla|
    trtllm_mla`: the allow decisions;
(b) the tenth's MHA models (tests/gate_cli.MODELS: Llama 3, GPT-OSS, Olmo2, Exaone 4, Qwen3-Next with no draft) with
    `--attention-backend trtllm_mha`, `--attention-backend fa4`, `--rl-on-policy-target fsdp` and
    `--rl-on-policy-target fsdp --attention-backend flashinfer`: the allow decisions;
(c) `recommend --facts BOX --model-path M --tp N --format json` for the models of (a), (b) and (e): one row per
    (box, release, model) that prints a command;
(d) `audit --facts tests/cases/CASE/facts.json --format json` of every recorded case: one row per (case, feature)
    whose status is ok;
(e) Llama 3 in four ModelOpt checkpoint shapes (config.json quantization_config quant_method modelopt with quant_algo
    NVFP4, FP8 or MXFP8; an hf_quant_config.json with quant_algo NVFP4 and no quantization_config) with no flag or
    `--quantization modelopt|modelopt_fp4|modelopt_fp8`: the allow decisions;
(f) `--attention-backend X` for every X of launch.json's release_choices union, with Llama 3 and DeepSeek R1
    (tests/gate_cli.MODELS): the allow decisions.

Draw: random.Random(20261211); per population its rows sorted by their JSON text, shuffled, the first k
(a: 7, b: 6, c: 3, d: 4, e: 4, f: 3), 27 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck_draw import ROOT, draw, final_releases, gate, stackcheck_json, write_models

SEED = 20261211
BOXES = [("h200", "h200-newest", "8"), ("b200", "b200-deepgemm-nvcc128", "8"),
         ("rtxpro6000", "rtxpro6000-pcie-iommu-translated", "1")]  # fmt: skip
_MLA_SHAPE = {"hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 32, "kv_lora_rank": 512,
              "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}  # fmt: skip
MLA_MODELS: dict[str, dict[str, Any]] = {
    "minicpm3": {"architectures": ["MiniCPM3ForCausalLM"], "model_type": "minicpm3", **_MLA_SHAPE},
    "kimi-vl": {"architectures": ["KimiVLForConditionalGeneration"], "model_type": "kimi_vl", **_MLA_SHAPE},
    "longcat-flash": {"architectures": ["LongcatFlashForCausalLM"], "model_type": "longcat_flash", **_MLA_SHAPE},
    "dots-vlm": {"architectures": ["DotsVLMForCausalLM"], "model_type": "dots_vlm", **_MLA_SHAPE},
    "glm4-moe-lite": {"architectures": ["Glm4MoeLiteForCausalLM"], "model_type": "glm4_moe_lite", **_MLA_SHAPE},
    "minicpm3-dims": {"architectures": ["MiniCPM3ForCausalLM"], "model_type": "minicpm3", "hidden_size": 2560,
                      "num_attention_heads": 40, "num_key_value_heads": 40, "kv_lora_rank": 256,
                      "q_lora_rank": 768, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 64},
    "glm4.7-flash-dims": {"architectures": ["Glm4MoeLiteForCausalLM"], "model_type": "glm4_moe_lite",
                          "hidden_size": 2048, "num_attention_heads": 20, "num_key_value_heads": 20,
                          "kv_lora_rank": 512, "q_lora_rank": 768, "qk_nope_head_dim": 192, "qk_rope_head_dim": 64,
                          "v_head_dim": 256},
}  # fmt: skip
MLA_FLAGS = ["", "--attention-backend flashinfer", "--attention-backend triton", "--attention-backend fa3",
             "--attention-backend flashmla", "--attention-backend trtllm_mla"]  # fmt: skip
MHA_MODELS = ["llama3", "gpt-oss", "olmo2", "exaone4", "qwen3-next"]
MHA_FLAGS = ["--attention-backend trtllm_mha", "--attention-backend fa4", "--rl-on-policy-target fsdp",
             "--rl-on-policy-target fsdp --attention-backend flashinfer"]  # fmt: skip
#: ModelOpt checkpoint shapes: (config.json quantization_config or None, hf_quant_config.json or None)
MODELOPT: dict[str, tuple[dict[str, Any] | None, dict[str, Any] | None]] = {
    "llama3-mo-nvfp4": ({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16}, None),
    "llama3-mo-fp8": ({"quant_method": "modelopt", "quant_algo": "FP8"}, None),
    "llama3-mo-mxfp8": ({"quant_method": "modelopt", "quant_algo": "MXFP8"}, None),
    "llama3-hfq-nvfp4": (None, {"producer": {"name": "modelopt"},
                                "quantization": {"quant_algo": "NVFP4", "group_size": 16}}),
}  # fmt: skip
MODELOPT_FLAGS = ["", "--quantization modelopt", "--quantization modelopt_fp4", "--quantization modelopt_fp8"]
CHOICE_MODELS = ["llama3", "deepseek-r1"]


def choices_union() -> list[str]:
    doc = json.loads((ROOT / "manifests" / "launch.json").read_text())
    union: set[str] = set()
    for entry in doc["release_choices"]:
        for run in entry["runs"]:
            union.update(run["choices"])
    return sorted(union)


def write_modelopt(out: Path) -> None:
    from gate_cli import MODELS

    for name, (qc, hfq) in MODELOPT.items():
        config = dict(MODELS["llama3"])
        if qc is not None:
            config["quantization_config"] = qc
        (out / "models" / name).mkdir(parents=True, exist_ok=True)
        (out / "models" / name / "config.json").write_text(json.dumps(config))
        if hfq is not None:
            (out / "models" / name / "hf_quant_config.json").write_text(json.dumps(hfq))


def release_rows(out: Path) -> dict[str, list[dict[str, Any]]]:
    from factcheck7_draw import release_box
    from gate_cli import MODELS

    write_models(out, {**MLA_MODELS, **{name: MODELS[name] for name in {*MHA_MODELS, *CHOICE_MODELS}}})
    write_modelopt(out)
    choice_flags = [f"--attention-backend {x}" for x in choices_union()]
    plan = [("a", list(MLA_MODELS), MLA_FLAGS), ("b", MHA_MODELS, MHA_FLAGS),
            ("e", list(MODELOPT), MODELOPT_FLAGS), ("f", CHOICE_MODELS, choice_flags)]  # fmt: skip
    rows: dict[str, list[dict[str, Any]]] = {pop: [] for pop in "abcef"}
    for box, case, tp in BOXES:
        for rel in final_releases():
            path = out / f"{box}-{rel}.json"
            path.write_text(json.dumps(release_box(case, rel)))
            recommended: set[str] = set()
            for pop, models, flags in plan:
                for model in models:
                    model_path = str(out / "models" / model)
                    for flag in flags:
                        doc = gate(path, ["--model-path", model_path, "--tp", tp, *flag.split()])
                        if doc.get("decision") == "allow":
                            rows[pop].append({"pop": pop, "box": box, "sglang": rel, "model": model, "flags": flag})
                    if pop in "abe" and model not in recommended:
                        recommended.add(model)
                        args = ["recommend", "--facts", str(path), "--model-path", model_path, "--tp", tp]
                        doc = stackcheck_json([*args, "--format", "json"])
                        if doc.get("command"):
                            rows["c"].append({"pop": "c", "box": box, "sglang": rel, "model": model})
            print(f"{box} {rel}: " + " ".join(f"{p} {len(r)}" for p, r in rows.items()), file=sys.stderr, flush=True)
    return rows


def feature_rows() -> list[dict[str, Any]]:
    rows = []
    for case in sorted(p.name for p in (ROOT / "tests" / "cases").iterdir() if (p / "facts.json").exists()):
        doc = stackcheck_json(["audit", "--facts", f"tests/cases/{case}/facts.json", "--format", "json"])
        rows += [{"pop": "d", "case": case, "feature": f["id"]} for f in doc.get("features") or []
                 if f.get("status") == "ok"]  # fmt: skip
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    rows = release_rows(out)
    populations = [(7, rows["a"]), (6, rows["b"]), (3, rows["c"]), (4, feature_rows()), (4, rows["e"]), (3, rows["f"])]
    draw(out, SEED, populations)


if __name__ == "__main__":
    main()
