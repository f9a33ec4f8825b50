"""The eighth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Eighth sample").

    PYTHONPATH=. python bench/factcheck8_draw.py OUT_DIR

Fixed before any row was checked. Weighted toward what changed in the last stop and was never sampled. Three
populations, built from the manifests of the tree it runs in:

(a) sgl-kernel 0.1.0-0.3.4.post1 (components.json, read from their PyPI wheels by iold): one row per (release,
    fact) with fact one of archs:common_ops, archs:flash_ops (the SASS targets per library), torch (the pairing),
    driver-api (whether the release is in checks.json driver-api's green-context range, i.e. links cuGreenCtx*)
    and cuda-libs (the CUDA 12 label and the DT_NEEDED libraries kernel-runtime-libs' note states): 155 rows;
(b) the gate's per-model attention-backend rules (launch.json: gpt-oss / olmo2 / llama4 / llama4-listed
    refusals, the model overrides, hybrid-gdn with an MTP draft): `gate --dry-run --format json` with a readable
    config.json of GPT-OSS (GptOssForCausalLM), Olmo2 (Olmo2ForCausalLM), Llama 4 (Llama4ForConditionalGeneration)
    and Qwen3-Next (Qwen3NextForCausalLM, with `--speculative-algorithm NEXTN` steps 3 / top-k 1 / 4 tokens), four
    attention-flag choices each, on 8x H200 (h200-newest), 8x B200 (b200) and the RTX PRO 6000 box
    (rtxpro6000-pcie-iommu-translated), driver/toolkit/system of the case, with every final SGLang release
    0.5.1-0.5.23 and its pins (as factcheck7_draw.release_box), `--tp` = the box's GPU count; rows whose
    decision is allow;
(c) generated boxes (bench/gen_reports.templates(36, seed 20261208)): every ok feature verdict and ok stack
    check, one row per distinct (kind, id, GPU, sglang, flashinfer-python, driver, reasons' rule/observed/
    result), leaving out the seventh sample's 14 stack-check rows (same key as factcheck7_draw.stack_rows); and
    `gate --dry-run` of each generated box with a readable Llama 3 config.json and `--tp` = its GPU count, rows
    whose decision is allow.

Draw: random.Random(20261208); per population its rows sorted by their JSON text, shuffled, the first k
(a: 6, b: 5, c: 5). Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from factcheck_draw import draw, final_releases, gate, write_models  # noqa: E402

SEED = 20261208

MODELS: dict[str, dict[str, Any]] = {
    "gpt-oss": {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 2880,
                "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 64},
    "olmo2": {"architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2", "hidden_size": 4096,
              "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 128},
    "llama4": {"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4", "hidden_size": 5120,
               "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128},
    "qwen3-next": {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "hidden_size": 2048,
                   "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256},
    "llama3": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
               "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128},
}  # fmt: skip
NEXTN = (
    "--speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1"
    " --speculative-num-draft-tokens 4"
)
FLAGS: dict[str, list[str]] = {
    "gpt-oss": ["", "--attention-backend flashinfer", "--attention-backend triton", "--attention-backend fa3"],
    "olmo2": ["", "--attention-backend flashinfer", "--attention-backend triton", "--attention-backend fa3"],
    "llama4": ["", "--attention-backend flashinfer", "--attention-backend triton", "--attention-backend fa3"],
    "qwen3-next": [
        NEXTN,
        NEXTN + " --speculative-draft-attention-backend flashinfer",
        NEXTN + " --speculative-draft-attention-backend triton",
        NEXTN + " --attention-backend triton",
    ],
}
BOXES = [("h200", "h200-newest"), ("b200", "b200"), ("rtxpro6000", "rtxpro6000-pcie-iommu-translated")]
OLD_KERNEL_FACTS = ["archs:common_ops", "archs:flash_ops", "torch", "driver-api", "cuda-libs"]


def _gpus(facts: dict[str, Any]) -> int:
    gpus = facts.get("gpus")
    if isinstance(gpus, list):
        return max(1, len(gpus))
    return 1


def kernel_rows() -> list[dict[str, Any]]:
    from packaging.version import Version

    from stackcheck.knowledge.loader import load

    rows = []
    for rel in load().releases("sgl-kernel"):
        if Version(rel["version"]) <= Version("0.3.4.post1"):
            rows += [{"pop": "a", "release": rel["version"], "fact": f} for f in OLD_KERNEL_FACTS]
    return rows


def model_rows(out: Path) -> list[dict[str, Any]]:
    from factcheck7_draw import release_box

    write_models(out, MODELS)
    releases = final_releases()
    rows = []
    for box, case in BOXES:
        for rel in releases:
            doc = release_box(case, rel)
            path = out / f"{box}-{rel}.json"
            path.write_text(json.dumps(doc))
            tp = str(_gpus(doc["facts"]))
            for model, flags in FLAGS.items():
                for flag in flags:
                    line = ["--model-path", str(out / "models" / model), "--tp", tp, *flag.split()]
                    if gate(path, line).get("decision") == "allow":
                        rows.append({"pop": "b", "box": box, "sglang": rel, "model": model, "flags": flag})
    return rows


def _key(kind: str, item: dict[str, Any], facts: dict[str, Any]) -> str:
    pkgs = facts.get("packages") or {}
    gpus = facts.get("gpus") or []
    return json.dumps(
        [
            kind,
            item["id"],
            (gpus[0] or {}).get("name") if gpus else None,
            (pkgs.get("sglang") or {}).get("version"),
            (pkgs.get("flashinfer-python") or {}).get("version"),
            (facts.get("driver") or {}).get("version"),
            [[r.get("rule"), r.get("observed"), r.get("result")] for r in item.get("reasons") or []],
        ]
    )


def generated_rows(out: Path) -> list[dict[str, Any]]:
    import factcheck7_draw
    import gen_reports

    seventh = {row["key"] for row in factcheck7_draw.stack_rows()}
    seen: dict[str, dict[str, Any]] = {}
    rows = []
    for i, text in enumerate(gen_reports.templates(36, SEED)):
        report = json.loads(text)
        facts = report["facts"]
        for kind in ("features", "checks"):
            for item in report[kind]:
                if item.get("status") != "ok":
                    continue
                k7 = json.dumps(
                    [item["id"], [[r.get("rule"), r.get("observed"), r.get("result")] for r in item["reasons"]]]
                )
                if kind == "checks" and k7 in seventh:
                    continue
                key = _key(kind, item, facts)
                seen.setdefault(key, {"pop": "c", "report": i, "kind": kind, "id": item["id"], "key": key})
        path = out / f"generated-{i}.json"
        path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
        line = ["--model-path", str(out / "models" / "llama3"), "--tp", str(_gpus(facts))]
        if gate(path, line).get("decision") == "allow":
            rows.append({"pop": "c", "report": i, "kind": "gate-allow", "id": "llama3-default"})
    return list(seen.values()) + rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    draw(out, SEED, [(6, kernel_rows()), (5, model_rows(out)), (5, generated_rows(out))])


if __name__ == "__main__":
    main()
