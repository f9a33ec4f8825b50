"""The tenth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Tenth sample").

    PYTHONPATH=. python bench/factcheck10_draw.py OUT_DIR

Fixed before any row was checked. Weighted toward what the stop before it (main 1a207de..096ed1c) added and no
sample has drawn: the MLA architecture set per SGLang release (preflight.json model.mla_architectures) for models
other than DeepSeek V3/V3.2, the attention backends no sample has drawn (trtllm_mha, fa4, flashmla, trtllm_mla),
`--rl-on-policy-target` (the deterministic fallback's second switch) and the ok feature verdicts of the recorded
boxes. Releases: the final SGLang releases 0.5.1-0.5.10, with their pins (factcheck7_draw.release_box), on the ninth
sample's three boxes that can give an allow: 8x H200 (h200-newest, `--tp 8`), 8x B200 with a CUDA 12.8 nvcc
(b200-deepgemm-nvcc128, `--tp 8`), one RTX PRO 6000 (rtxpro6000-pcie-iommu-translated, `--tp 1`). Four populations:

(a) `gate --dry-run --format json` with a config.json in the DeepSeek MLA shape (kv_lora_rank and the split head
    dims) for MiniCPM3ForCausalLM, KimiVLForConditionalGeneration, LongcatFlashForCausalLM, DotsVLMForCausalLM and
    Glm4MoeLiteForCausalLM, each with no attention flag and `--attention-backend flashinfer|triton|fa3|flashmla|
    trtllm_mla`: the allow decisions;
(b) MHA models (tests/gate_cli.MODELS: Llama 3, GPT-OSS, Olmo2, Exaone 4, Qwen3-Next with no draft) with
    `--attention-backend trtllm_mha`, `--attention-backend fa4`, `--rl-on-policy-target fsdp` and
    `--rl-on-policy-target fsdp --attention-backend flashinfer`: the allow decisions;
(c) `recommend --facts BOX --model-path M --tp N --format json` for the models of (a) and (b): one row per
    (box, release, model) that prints a command;
(d) `audit --facts tests/cases/CASE/facts.json --format json` of every recorded case: one row per (case, feature)
    whose status is ok.

The range was chosen on the belief that the package index here serves no later SGLang wheel; that was a mistake
of the download command (`--platform manylinux2014_x86_64` only: 0.5.11-0.5.23 are manylinux_2_34 wheels, served
here, and read for the fix). It was kept as committed (6c00d48): the rows drawn are a sample of this population.

Draw: random.Random(20261210); per population its rows sorted by their JSON text, shuffled, the first k
(a: 9, b: 7, c: 4, d: 7), 27 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck_draw import ROOT, draw, gate, stackcheck_json, write_models

SEED = 20261210
#: the last release whose wheel the index reachable from this box serves (2026-12-03)
LAST_SERVED = "0.5.10"
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
}
MLA_FLAGS = ["", "--attention-backend flashinfer", "--attention-backend triton", "--attention-backend fa3",
             "--attention-backend flashmla", "--attention-backend trtllm_mla"]  # fmt: skip
MHA_MODELS = ["llama3", "gpt-oss", "olmo2", "exaone4", "qwen3-next"]
MHA_FLAGS = ["--attention-backend trtllm_mha", "--attention-backend fa4", "--rl-on-policy-target fsdp",
             "--rl-on-policy-target fsdp --attention-backend flashinfer"]  # fmt: skip


def served_releases() -> list[str]:
    from factcheck_draw import final_releases
    from packaging.version import Version

    return [r for r in final_releases() if Version(r) <= Version(LAST_SERVED)]


def release_rows(out: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    from factcheck7_draw import release_box
    from gate_cli import MODELS

    write_models(out, {**MLA_MODELS, **{name: MODELS[name] for name in MHA_MODELS}})
    a: list[dict[str, Any]] = []
    b: list[dict[str, Any]] = []
    c: list[dict[str, Any]] = []
    for box, case, tp in BOXES:
        for rel in served_releases():
            path = out / f"{box}-{rel}.json"
            path.write_text(json.dumps(release_box(case, rel)))
            for pop, models, flags in (("a", list(MLA_MODELS), MLA_FLAGS), ("b", MHA_MODELS, MHA_FLAGS)):
                for model in models:
                    model_path = str(out / "models" / model)
                    for flag in flags:
                        doc = gate(path, ["--model-path", model_path, "--tp", tp, *flag.split()])
                        if doc.get("decision") == "allow":
                            row = {"pop": pop, "box": box, "sglang": rel, "model": model, "flags": flag}
                            (a if pop == "a" else b).append(row)
                    args = ["recommend", "--facts", str(path), "--model-path", model_path, "--tp", tp]
                    doc = stackcheck_json([*args, "--format", "json"])
                    if doc.get("command"):
                        c.append({"pop": "c", "box": box, "sglang": rel, "model": model})
    return a, b, c


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
    a, b, c = release_rows(out)
    draw(out, SEED, [(9, a), (7, b), (4, c), (7, feature_rows())])


if __name__ == "__main__":
    main()
