"""The nineteenth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Nineteenth sample").

    PYTHONPATH=. python bench/factcheck19_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what no earlier sample drew: the gate's allows under the rules merged by
igap2 (FP8 / MXFP4 admission at compute capability 8.0 and above for --quantization fp8 / mxfp4 / quark and FP8 /
MXFP4 checkpoints; the flashinfer_trtllm MoE runner's quantization lists and its checkpoint rule; the MoE all-to-all
flashinfer runner list; SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE) and by ifc18 (infllm-ops-python-310: MiniCPM's sparse
attention on a Python 3.10 box), and audit's ok feature verdicts on boxes no sample has drawn with every release's
pins: a GH200 (aarch64, Python 3.10), a GB200 (aarch64, Python 3.11) and the B200 case with a CUDA 12.8 nvcc.

(a) `gate --dry-run --format json` with `--tp 8` on tests/cases/h200-newest with every final SGLang release
    0.5.1-0.5.23 and its pins (factcheck7_draw.release_box), its GPUs set to 8.0, 8.6, 8.9, 9.0, 10.0 and 12.0, and
    its Python set to 3.10.14 for the MiniCPM launches (3.12.3 as recorded for the others), for each launch of
    LAUNCHES within its releases: one row per allow;
(b) `audit --facts F --format json` of h200-newest as a GH200 (its GPUs named NVIDIA GH200 480GB at 9.0, machine
    aarch64, Python 3.10.12), of h200-newest as a GB200 (its GPUs named NVIDIA GB200 at 10.0, machine aarch64,
    Python 3.11.9) and of the b200-deepgemm-nvcc128 case (x86_64, Python 3.12.3, nvcc 12.8) as recorded, each with
    every final release 0.5.9-0.5.23 and its pins: one row per distinct (box, feature, its reasons' rule / observed
    / result) whose status is ok, labelled with the first release that gives it.

Draw: random.Random(20261219); per population its rows sorted by their JSON text, shuffled, the first k (a: 14,
b: 13), 27 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck_draw import audit_ok_rows, draw, final_releases, stackcheck_json, write_models
from factcheck_draw import release_tuple as _v

SEED = 20261219
_QWEN3MOE = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 4096,
             "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
             "num_experts_per_tok": 8, "moe_intermediate_size": 1536, "num_hidden_layers": 94}  # fmt: skip
_LLAMA3 = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
           "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 32}  # fmt: skip
_GPT_OSS = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "num_attention_heads": 64,
            "num_key_value_heads": 8, "head_dim": 64, "hidden_size": 2880, "num_local_experts": 32,
            "num_experts_per_tok": 4, "num_hidden_layers": 24}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "llama3": _LLAMA3,
    "llama3-fp8": {**_LLAMA3, "quantization_config": {"quant_method": "fp8", "activation_scheme": "static"}},
    "qwen3moe": _QWEN3MOE,
    "qwen3moe-fp8": {**_QWEN3MOE, "quantization_config": {"quant_method": "fp8", "fmt": "e4m3",
                                                          "activation_scheme": "dynamic",
                                                          "weight_block_size": [128, 128]}},
    "qwen3moe-awq": {**_QWEN3MOE, "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128,
                                                          "zero_point": True, "version": "gemm"}},
    "gpt-oss": _GPT_OSS,
    "gpt-oss-mxfp4": {**_GPT_OSS, "quantization_config": {"quant_method": "mxfp4"}},
    "minicpm-sala": {"architectures": ["MiniCPMSALAForCausalLM"], "model_type": "minicpm_sala", "hidden_size": 4096,
                     "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
                     "sparse_config": {"kernel_size": 32, "kernel_stride": 16, "block_size": 64,
                                       "window_size": 2048, "topk": 64}},
}  # fmt: skip
# name -> (model, flags, environment, first release, last release)
LAUNCHES: dict[str, tuple[str, str, str, str, str]] = {
    "fp8-flag": ("llama3", "--quantization fp8", "", "0.5.1", "0.5.23"),
    "fp8-checkpoint": ("llama3-fp8", "", "", "0.5.1", "0.5.23"),
    "fp8-block-moe-checkpoint": ("qwen3moe-fp8", "", "", "0.5.1", "0.5.23"),
    "mxfp4-flag": ("gpt-oss", "--quantization mxfp4", "", "0.5.1", "0.5.23"),
    "mxfp4-checkpoint": ("gpt-oss-mxfp4", "", "", "0.5.1", "0.5.23"),
    "quark-flag": ("llama3", "--quantization quark", "", "0.5.1", "0.5.5"),
    "trtllm-bf16": ("qwen3moe", "--moe-runner-backend flashinfer_trtllm", "", "0.5.7", "0.5.23"),
    "trtllm-fp8-flag": ("qwen3moe", "--moe-runner-backend flashinfer_trtllm --quantization fp8", "", "0.5.7", "0.5.23"),
    "trtllm-fp8-checkpoint": ("qwen3moe-fp8", "--moe-runner-backend flashinfer_trtllm", "", "0.5.7", "0.5.23"),
    "trtllm-awq-checkpoint": ("qwen3moe-awq", "--moe-runner-backend flashinfer_trtllm", "", "0.5.7", "0.5.23"),
    "a2a-flashinfer": ("qwen3moe-fp8", "--moe-a2a-backend flashinfer --ep 8", "", "0.5.19", "0.5.23"),
    "a2a-flashinfer-cutlass": ("qwen3moe-fp8", "--moe-a2a-backend flashinfer --ep 8 --moe-runner-backend "
                               "flashinfer_cutlass", "", "0.5.19", "0.5.23"),
    "megamoe-env": ("qwen3moe-fp8", "", "SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE=1", "0.5.13", "0.5.23"),
    "minicpm-auto": ("minicpm-sala", "", "", "0.5.19", "0.5.23"),
    "minicpm-flashattn": ("minicpm-sala", "--attention-backend minicpm_flashattn", "", "0.5.19", "0.5.23"),
}  # fmt: skip
GATE_CCS = ["8.0", "8.6", "8.9", "9.0", "10.0", "12.0"]
# name -> (case, GPU name or None, compute capability or None, machine or None, Python or None)
AUDIT_BOXES: dict[str, tuple[str, str | None, str | None, str | None, str | None]] = {
    "gh200-py310": ("h200-newest", "NVIDIA GH200 480GB", "9.0", "aarch64", "3.10.12"),
    "gb200-py311": ("h200-newest", "NVIDIA GB200", "10.0", "aarch64", "3.11.9"),
    "b200-nvcc128": ("b200-deepgemm-nvcc128", None, None, None, None),
}


def _box(out: Path, case: str, rel: str, name: str | None, cc: str | None, machine: str | None,
         python: str | None) -> Path:  # fmt: skip
    from factcheck7_draw import release_box

    doc = copy.deepcopy(release_box(case, rel))
    facts = doc["facts"]
    for g in facts["gpus"]:
        if cc is not None:
            g["compute_capability"] = cc
        if name is not None:
            g["name"] = name
    if machine is not None:
        facts["system"]["machine"] = machine
    if python is not None:
        facts["system"]["python"] = python
    path = out / f"box-{case}-{name}-{cc}-{machine}-{python}-{rel}.json"
    path.write_text(json.dumps(doc))
    return path


def gate_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for cc in GATE_CCS:
        for rel in final_releases():
            boxes = {py: _box(out, "h200-newest", rel, None, cc, None, py) for py in (None, "3.10.14")}
            for name, (model, flags, env, first, last) in LAUNCHES.items():
                if not _v(first) <= _v(rel) <= _v(last):
                    continue
                box = boxes["3.10.14" if model.startswith("minicpm") else None]
                line = ["env", env] if env else []
                line += ["python3", "-m", "sglang.launch_server", "--model-path", str(out / "models" / model)]
                line += ["--tp", "8", *flags.split()]
                args = ["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line]
                if stackcheck_json(args).get("decision") == "allow":
                    rows.append({"pop": "a", "cc": cc, "sglang": rel, "launch": name, "model": model,
                                 "flags": flags, "env": env})  # fmt: skip
        print(f"a {cc}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def audit_rows(out: Path) -> list[dict[str, Any]]:
    def facts(box: str, rel: str) -> Path:
        case, name, cc, machine, python = AUDIT_BOXES[box]
        return _box(out, case, rel, name, cc, machine, python)

    return audit_ok_rows(AUDIT_BOXES, [r for r in final_releases() if _v(r) >= (0, 5, 9)], facts)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    a = gate_rows(out)
    b = audit_rows(out)
    draw(out, SEED, [(14, a), (13, b)])


if __name__ == "__main__":
    main()
