"""The twenty-second fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Twenty-second
sample").

    PYTHONPATH=. python bench/factcheck22_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what no earlier sample drew: the rules merged in the last stop (475226f..
404be55): release_choices of every choice flag (--quantization, --sampling-backend, --fp8-gemm-backend,
--nsa-prefill/decode-backend), sglang-requires-python, moe-a2a-package / deep_ep_cpp, quant-package (humming,
bitsandbytes) and humming's JIT toolchain, --load-format bitsandbytes and bnb-prequant-tp, gguf / w8a8_int8 /
auto-round-int8 / quark / modelslim / qoq against the checkpoint, the flashinfer_megamoe runner refusals, where the
gate ALLOWS; and audit's ok feature verdicts on boxes of compute capability 10.3, 12.1 and 11.0 (Thor).

(a) `gate --dry-run --format json` (`--tp 8` unless the launch names its own) on tests/cases/h200-newest with every
    final SGLang release 0.5.1-0.5.23 and its pins (factcheck7_draw.release_box), its GPUs set to 8.0, 9.0, 10.0 and
    12.0, with humming-kernels 0.1.19, bitsandbytes 0.48.2 and deep-ep 1.2.1 (deep_ep_cpp built for CPython 3.12
    x86_64) added to its packages, its Python as recorded (3.12.3) except the PY launches (3.10.14 and 3.11.9), for
    each launch of LAUNCHES: one row per allow;
(b) `audit --facts F --format json` of h200-newest as a B300 (NVIDIA B300 SXM6 AC at 10.3, x86_64), a GB300 (NVIDIA
    GB300 at 10.3, aarch64, Python 3.12.3), a DGX Spark (NVIDIA GB10 at 12.1, aarch64) and a Jetson Thor (NVIDIA Thor
    at 11.0, aarch64), each with every final release 0.5.9-0.5.23 and its pins: one row per distinct (box, feature,
    its reasons' rule / observed / result) whose status is ok, labelled with the first release that gives it.

Model configs are written here in the published checkpoints' shape (not copied).
Draw: random.Random(20261222); per population its rows sorted by their JSON text, shuffled, the first k (a: 11,
b: 7), 18 rows. Nothing is replaced after the draw.
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

SEED = 20261222
_LLAMA3 = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
           "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 32,
           "intermediate_size": 14336, "torch_dtype": "bfloat16"}  # fmt: skip
_QWEN3MOE = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 4096,
             "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
             "num_experts_per_tok": 8, "moe_intermediate_size": 1536, "num_hidden_layers": 94,
             "torch_dtype": "bfloat16"}  # fmt: skip
_DSV3 = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
         "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
         "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 256,
         "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
         "num_nextn_predict_layers": 1, "torch_dtype": "bfloat16"}  # fmt: skip
_FP8_BLOCK = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
MODELS: dict[str, dict[str, Any]] = {
    "llama3": _LLAMA3,
    "llama3-bnb4": {**_LLAMA3, "quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": True,
                                                       "load_in_8bit": False, "bnb_4bit_quant_type": "nf4",
                                                       "bnb_4bit_compute_dtype": "bfloat16",
                                                       "bnb_4bit_use_double_quant": True}},
    "llama3-w8a8-int8": {**_LLAMA3, "quantization_config": {"quant_method": "w8a8_int8"}},
    "llama3-fp8-block": {**_LLAMA3, "quantization_config": _FP8_BLOCK},
    "qwen3moe": _QWEN3MOE,
    "dsv3": _DSV3,
    "dsv3-fp8": {**_DSV3, "quantization_config": _FP8_BLOCK},
    "dsv32-fp8": {**_DSV3, "architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32",
                  "index_topk": 2048, "index_n_heads": 64, "index_head_dim": 128, "quantization_config": _FP8_BLOCK},
}  # fmt: skip
_NSA = ["flashmla_sparse", "flashmla_kv", "flashmla_auto", "fa3", "tilelang", "trtllm", "flashinfer_sparse_mla"]
_FP8_GEMM = ["cutlass", "deep_gemm", "triton", "flashinfer_trtllm", "flashinfer_cutlass", "flashinfer_deepgemm",
             "flashinfer_cutedsl"]  # fmt: skip
# name: (model, flags, box Python or "")
LAUNCHES: dict[str, tuple[str, str, str]] = {
    "bnb-flag": ("llama3", "--quantization bitsandbytes", ""),
    "bnb-load-format": ("llama3", "--load-format bitsandbytes", ""),
    "bnb-prequant-load-format-tp1": ("llama3-bnb4", "--load-format bitsandbytes --tp 1", ""),
    "bnb-prequant-tp1": ("llama3-bnb4", "--tp 1", ""),
    "humming": ("llama3", "--quantization humming", ""),
    "deepep": ("qwen3moe", "--moe-a2a-backend deepep --ep 8", ""),
    "fi-megamoe-fp8": ("dsv3-fp8", "--moe-runner-backend flashinfer_megamoe", ""),
    "fi-megamoe-bf16": ("dsv3", "--moe-runner-backend flashinfer_megamoe", ""),
    "gguf": ("llama3", "--quantization gguf", ""),
    "w8a8-int8": ("llama3", "--quantization w8a8_int8", ""),
    "w8a8-int8-checkpoint": ("llama3-w8a8-int8", "", ""),
    "w8a8-int8-checkpoint-flag": ("llama3-w8a8-int8", "--quantization w8a8_int8", ""),
    "auto-round-int8": ("llama3", "--quantization auto-round-int8", ""),
    "quark": ("llama3", "--quantization quark", ""),
    "modelslim": ("llama3", "--quantization modelslim", ""),
    "qoq": ("llama3", "--quantization qoq", ""),
    "mxfp8": ("llama3", "--quantization mxfp8", ""),
    "nvfp4-online": ("llama3", "--quantization nvfp4_online", ""),
    "sampling-pytorch": ("llama3", "--sampling-backend pytorch", ""),
    "sampling-flashinfer": ("llama3", "--sampling-backend flashinfer", ""),
    **{f"fp8-gemm-{v}": ("llama3-fp8-block", f"--fp8-gemm-backend {v}", "") for v in _FP8_GEMM},
    **{f"nsa-{v}": ("dsv32-fp8", f"--nsa-prefill-backend {v} --nsa-decode-backend {v}", "") for v in _NSA},
    "py310": ("llama3", "", "3.10.14"),
    "py311": ("llama3", "", "3.11.9"),
}
GATE_CCS = ["8.0", "9.0", "10.0", "12.0"]
# name: (GPU name, compute capability, machine, Python)
AUDIT_BOXES: dict[str, tuple[str, str, str, str]] = {
    "b300": ("NVIDIA B300 SXM6 AC", "10.3", "x86_64", "3.12.3"),
    "gb300": ("NVIDIA GB300", "10.3", "aarch64", "3.12.3"),
    "gb10-spark": ("NVIDIA GB10", "12.1", "aarch64", "3.12.3"),
    "thor": ("NVIDIA Thor", "11.0", "aarch64", "3.12.3"),
}
_EXTRA = {
    "humming-kernels": {"installed": True, "version": "0.1.19"},
    "bitsandbytes": {"installed": True, "version": "0.48.2"},
    "deep-ep": {"installed": True, "version": "1.2.1",
                "extension_files": ["deep_ep_cpp.cpython-312-x86_64-linux-gnu.so"]},
}  # fmt: skip


def _box(out: Path, rel: str, cc: str, python: str, name: str | None = None, machine: str | None = None,
         extra: bool = True) -> Path:  # fmt: skip
    from factcheck7_draw import release_box

    doc = copy.deepcopy(release_box("h200-newest", rel))
    facts = doc["facts"]
    for g in facts["gpus"]:
        g["compute_capability"] = cc
        if name is not None:
            g["name"] = name
    if machine is not None:
        facts["system"]["machine"] = machine
    if python:
        facts["system"]["python"] = python
    if extra:
        facts["packages"].update(copy.deepcopy(_EXTRA))
    path = out / f"box-{name}-{cc}-{machine}-{python}-{rel}-{extra}.json"
    path.write_text(json.dumps(doc))
    return path


def gate_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for cc in GATE_CCS:
        for rel in final_releases():
            boxes = {py: _box(out, rel, cc, py) for py in ("", "3.10.14", "3.11.9")}
            for name, (model, flags, python) in LAUNCHES.items():
                words = flags.split()
                line = ["python3", "-m", "sglang.launch_server", "--model-path", str(out / "models" / model)]
                line += ([] if "--tp" in words else ["--tp", "8"]) + words
                args = ["gate", "--facts", str(boxes[python]), "--dry-run", "--format", "json", "--", *line]
                if stackcheck_json(args).get("decision") == "allow":
                    rows.append({"pop": "a", "cc": cc, "sglang": rel, "launch": name, "model": model,
                                 "flags": flags, "python": python or "3.12.3"})  # fmt: skip
        print(f"a {cc}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def audit_rows(out: Path) -> list[dict[str, Any]]:
    def facts(box: str, rel: str) -> Path:
        name, cc, machine, python = AUDIT_BOXES[box]
        return _box(out, rel, cc, python, name, machine, extra=False)

    return audit_ok_rows(AUDIT_BOXES, [r for r in final_releases() if _v(r) >= (0, 5, 9)], facts)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    a = gate_rows(out)
    b = audit_rows(out)
    draw(out, SEED, [(11, a), (7, b)])


if __name__ == "__main__":
    main()
