"""The eighteenth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Eighteenth sample").

    PYTHONPATH=. python bench/factcheck18_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what no earlier sample drew: the audit's ok feature verdicts on Ampere and
Ada boxes (SM80 NVLink, SM86 and SM89 PCIe) with the releases' pinned stacks, and the gate's allows on the SM12x
boxes for launches that combine an attention backend, a KV cache dtype, a quantization and a speculative algorithm
with SGLang 0.5.15-0.5.23.

(a) `audit --facts F --format json` of the recorded cases a800-driver535-sglang049 (8x A800 SXM4, 8.0, NVLink) and
    rtx4090-pcie-sglang044 (2x RTX 4090, 8.9, PCIe across sockets, no P2P) as recorded, and of rtx4090-pcie-sglang044
    with its GPUs set to 8.6 (an A10 / RTX 3090 class pair on PCIe), each with every final SGLang release
    0.5.1-0.5.23 and its pins (factcheck7_draw.release_box): one row per distinct (box, cc, feature, its reasons'
    rule / observed / result) whose status is ok, labelled with the first release that gives it;
(b) `gate --dry-run --format json --tp 1` on the recorded cases rtxpro6000-pcie-iommu-translated (RTX PRO 6000,
    12.0; one GPU: its two GPUs' IOMMU-translated P2P path is refused at tp 2) and gb10-cu130-pypi-kernel (1x GB10,
    12.1, aarch64), each with every final release 0.5.15-0.5.23 and its pins and flashinfer-cubin at the pinned
    flashinfer-python's version (the cases' own flashinfer-cubin would block every release box), for every
    combination of ATTENTION x KV x QUANT x SPEC (QUANT names the model and the quantization flag): one row per
    allow. (The first form of this rule, 6f99bfd, also took rtx5090-torch-cu126, which has no jit facts, and the
    cases' own flashinfer-cubin: its run was stopped when its progress counts showed no allow on those boxes,
    before any row was written or read.)

Draw: random.Random(20261218); per population its rows sorted by their JSON text, shuffled, the first k (a: 14,
b: 13), 27 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import copy
import itertools
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck_draw import audit_ok_rows, draw, final_releases, gate, write_models

SEED = 20261218
_QWEN3MOE = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 4096,
             "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
             "num_experts_per_tok": 8, "moe_intermediate_size": 1536, "num_hidden_layers": 94}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "llama3": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
               "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 32},
    "qwen3moe-fp8": {**_QWEN3MOE, "quantization_config": {"quant_method": "fp8", "fmt": "e4m3",
                                                          "activation_scheme": "dynamic",
                                                          "weight_block_size": [128, 128]}},
    "eagle3-draft": {"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": 4096,
                     "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 1},
}  # fmt: skip
AUDIT_BOXES: list[tuple[str, str | None]] = [
    ("a800-driver535-sglang049", None),
    ("rtx4090-pcie-sglang044", None),
    ("rtx4090-pcie-sglang044", "8.6"),
]
GATE_BOXES: list[tuple[str, int]] = [
    ("rtxpro6000-pcie-iommu-translated", 1),
    ("gb10-cu130-pypi-kernel", 1),
]
ATTENTION = ["auto", "flashinfer", "triton", "fa3", "fa4", "trtllm_mha"]
KV = ["auto", "fp8_e4m3"]
QUANT: dict[str, tuple[str, str]] = {
    "bf16": ("llama3", ""),
    "online-fp8": ("llama3", "--quantization fp8"),
    "fp8-checkpoint": ("qwen3moe-fp8", ""),
}
SPEC: dict[str, str] = {
    "none": "",
    "eagle3": "--speculative-algorithm EAGLE3 --speculative-draft-model-path {draft} --speculative-num-steps 3"
    " --speculative-eagle-topk 1 --speculative-num-draft-tokens 4",
    "ngram": "--speculative-algorithm NGRAM",
}


def _releases(first: tuple[int, int, int]) -> list[str]:
    return [r for r in final_releases() if tuple(map(int, r.split("."))) >= first]


def _box(out: Path, case: str, rel: str, cc: str | None, cubin: bool = False) -> Path:
    from factcheck7_draw import release_box

    doc = copy.deepcopy(release_box(case, rel))
    pkgs = doc["facts"]["packages"]
    if cubin and (pkgs.get("flashinfer-cubin") or {}).get("installed"):
        version = pkgs["flashinfer-python"]["version"]
        pkgs["flashinfer-cubin"].update(version=version, dist_version=version)
    if cc is not None:
        for g in doc["facts"]["gpus"]:
            g["compute_capability"] = cc
    path = out / f"box-{case}-{cc}-{rel}.json"
    path.write_text(json.dumps(doc))
    return path


def audit_rows(out: Path) -> list[dict[str, Any]]:
    def labels(box: tuple[str, str]) -> dict[str, Any]:
        return {"box": box[0], "cc": box[1]}

    def facts(box: tuple[str, str], rel: str) -> Path:
        return _box(out, box[0], rel, box[1])

    return audit_ok_rows(AUDIT_BOXES, _releases((0, 5, 1)), facts, pop="a", labels=labels)


def gate_rows(out: Path) -> list[dict[str, Any]]:
    draft = str(out / "models" / "eagle3-draft")
    rows: list[dict[str, Any]] = []
    for case, tp in GATE_BOXES:
        for rel in _releases((0, 5, 15)):
            path = _box(out, case, rel, None, cubin=True)
            for attn, kv, quant, spec in itertools.product(ATTENTION, KV, QUANT, SPEC):
                model, qflag = QUANT[quant]
                flags = [] if attn == "auto" else ["--attention-backend", attn]
                flags += [] if kv == "auto" else ["--kv-cache-dtype", kv]
                flags += qflag.split() + [f.format(draft=draft) for f in SPEC[spec].split()]
                line = ["--model-path", str(out / "models" / model), "--tp", str(tp), *flags]
                if gate(path, line).get("decision") == "allow":
                    rows.append({"pop": "b", "box": case, "sglang": rel, "attention": attn, "kv": kv,
                                 "quant": quant, "spec": spec})  # fmt: skip
            print(f"b {case} {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    a = audit_rows(out)
    b = gate_rows(out)
    draw(out, SEED, [(14, a), (13, b)])


if __name__ == "__main__":
    main()
