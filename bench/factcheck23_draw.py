"""The twenty-third fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Twenty-third
sample").

    PYTHONPATH=. python bench/factcheck23_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what no earlier sample drew: the rules merged in the last stop (404be55..
b33a6f2) where the gate ALLOWS: release_choices of the 76 further choice flags, the compressed-tensors / Quark scheme
reader (preflight.json model.compressed_tensors_schemes / quark_schemes, ct-fp8-moe-triton-below-sm89,
ct-int8-moe-cuda), bitsandbytes on 0.5.1-0.5.7, quant-act-dtype-float16-only-no-marlin, DeepEP (deep_ep_cpp with its
libnvshmem link, sgl-deep-ep), the fp8-gemm-backend refusals, flashmla_sparse, moe-a2a-deepep-unquantized-moe,
w8a8-int8-gemm-sm100-plus, pd-multiplexing; and audit's ok feature verdicts on boxes of compute capability 8.6, 8.9,
10.0 and 12.0 with SGLang 0.5.20-0.5.23.

(a) `gate --dry-run --format json` (`--tp 8` unless the launch names its own) on tests/cases/h200-newest with every
    final SGLang release 0.5.1-0.5.23 and its pins (factcheck7_draw.release_box), its GPUs set to 8.0, 8.9, 9.0, 10.0
    and 12.0, with bitsandbytes 0.48.2, deep-ep 1.2.1 (deep_ep_cpp for CPython 3.12 x86_64 linking
    libnvshmem_host.so.3, found in the nvidia-nvshmem wheel), nvidia-nvshmem-cu12 3.3.20 and sgl-deep-ep 0.1.2.post1
    (built for torch's CUDA major; on 0.5.18+, which require it, in place of deep-ep) added, and the loader finding
    libnuma.so.1 (sgl-kernel links it), for each launch of LAUNCHES: one row per allow;
(c) the same gate on 9.0 and 12.0 with Llama 3 and one choice flag of launch.json release_choices past the first
    fourteen entries (the 76 flags ichoice added, with the cp-mode and cuda-graph ones): each value any release
    offers, on the newest final release that offers it: one row per allow;
(b) `audit --facts F --format json` of h200-newest as an A10 (8.6), an L40S (8.9), a B200 (10.0) and an RTX PRO 6000
    Blackwell Server Edition (12.0), x86_64, each with every final release 0.5.20-0.5.23 and its pins: one row per
    distinct (box, feature, its reasons' rule / observed / result) whose status is ok, labelled with the first
    release that gives it.

Model configs are written here in the published checkpoints' shape (not copied).
Draw: random.Random(20261223); per population its rows sorted by their JSON text, shuffled, the first k (a: 9,
c: 3, b: 6), 18 rows. Nothing is replaced after the draw.
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

SEED = 20261223
_LLAMA3 = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
           "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 32,
           "intermediate_size": 14336, "torch_dtype": "bfloat16"}  # fmt: skip
_QWEN3MOE = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 4096,
             "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
             "num_experts_per_tok": 8, "moe_intermediate_size": 1536, "num_hidden_layers": 94,
             "torch_dtype": "bfloat16"}  # fmt: skip
_DSV32 = {"architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32", "hidden_size": 7168,
          "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
          "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 256,
          "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
          "num_nextn_predict_layers": 1, "index_topk": 2048, "index_n_heads": 64, "index_head_dim": 128,
          "torch_dtype": "bfloat16"}  # fmt: skip
_FP8_BLOCK = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
_FP8_TENSOR = {"quant_method": "fp8", "activation_scheme": "dynamic"}


def _ct(fmt: str, weights: dict[str, Any], acts: dict[str, Any] | None, ignore: list[str]) -> dict[str, Any]:
    """A compressed-tensors quantization_config of one group over every Linear, as llm-compressor writes it."""
    group = {"targets": ["Linear"], "weights": weights, "input_activations": acts, "output_activations": None}
    return {"quant_method": "compressed-tensors", "format": fmt, "quantization_status": "compressed",
            "config_groups": {"group_0": group}, "ignore": ignore, "kv_cache_scheme": None}  # fmt: skip


_FP8_W = {"type": "float", "num_bits": 8, "strategy": "channel", "symmetric": True, "dynamic": False}
_FP8_A_DYN = {"type": "float", "num_bits": 8, "strategy": "token", "symmetric": True, "dynamic": True}
_FP8_BLOCK_W = {**_FP8_W, "strategy": "block", "block_structure": [128, 128]}
_FP8_BLOCK_A = {**_FP8_A_DYN, "strategy": "group", "group_size": 128}
_INT8_W = {"type": "int", "num_bits": 8, "strategy": "channel", "symmetric": True, "dynamic": False}
_INT8_A = {"type": "int", "num_bits": 8, "strategy": "token", "symmetric": True, "dynamic": True}
_W4_W = {"type": "int", "num_bits": 4, "strategy": "group", "group_size": 128, "symmetric": True, "dynamic": False}
_FP4_W = {"type": "float", "num_bits": 4, "strategy": "tensor_group", "group_size": 16, "symmetric": True,
          "dynamic": False}  # fmt: skip
_FP4_A = {**_FP4_W, "dynamic": "local"}
_DENSE_IGNORE = ["lm_head"]
_MOE_IGNORE = ["lm_head", "re:.*mlp.gate$"]
_CT = {
    "fp8": ("float-quantized", _FP8_W, _FP8_A_DYN),
    "fp8-block": ("float-quantized", _FP8_BLOCK_W, _FP8_BLOCK_A),
    "fp8-w8a16": ("float-quantized", _FP8_W, None),
    "int8": ("int-quantized", _INT8_W, _INT8_A),
    "w4a16": ("pack-quantized", _W4_W, None),
    "nvfp4": ("nvfp4-pack-quantized", _FP4_W, _FP4_A),
}
_QUARK_FP8 = {"quant_method": "quark", "export": {"kv_cache_group": [], "pack_method": "reorder"},
              "global_quant_config": {
                  "weight": {"dtype": "fp8_e4m3", "qscheme": "per_tensor", "is_dynamic": False},
                  "input_tensors": {"dtype": "fp8_e4m3", "qscheme": "per_tensor", "is_dynamic": False},
                  "output_tensors": None, "bias": None},
              "layer_quant_config": {}, "layer_type_quant_config": {}, "exclude": ["lm_head"]}  # fmt: skip
_MX = {"dtype": "fp4", "qscheme": "per_group", "group_size": 32, "scale_format": "e8m0"}
_QUARK_MXFP4 = {"quant_method": "quark", "export": {"kv_cache_group": [], "pack_method": "reorder"},
                "global_quant_config": {"weight": {**_MX, "is_dynamic": False},
                                        "input_tensors": {**_MX, "is_dynamic": True},
                                        "output_tensors": None, "bias": None},
                "layer_quant_config": {}, "layer_type_quant_config": {},
                "exclude": ["lm_head", "re:.*mlp.gate$"]}  # fmt: skip
_GPTQ = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True, "damp_percent": 0.01,
         "true_sequential": True, "static_groups": False}  # fmt: skip
_AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
MODELS: dict[str, dict[str, Any]] = {
    "llama3": _LLAMA3,
    "qwen3moe": _QWEN3MOE,
    **{f"llama3-ct-{k}": {**_LLAMA3, "quantization_config": _ct(f, w, a, _DENSE_IGNORE)}
       for k, (f, w, a) in _CT.items()},
    **{f"qwen3moe-ct-{k}": {**_QWEN3MOE, "quantization_config": _ct(f, w, a, _MOE_IGNORE)}
       for k, (f, w, a) in _CT.items()},
    "llama3-quark-fp8": {**_LLAMA3, "quantization_config": _QUARK_FP8},
    "qwen3moe-quark-mxfp4": {**_QWEN3MOE, "quantization_config": _QUARK_MXFP4},
    "llama3-gptq-bf16": {**_LLAMA3, "quantization_config": _GPTQ},
    "llama3-gptq-fp16": {**_LLAMA3, "torch_dtype": "float16", "quantization_config": _GPTQ},
    "llama3-awq-bf16": {**_LLAMA3, "quantization_config": _AWQ},
    "llama3-awq-fp16": {**_LLAMA3, "torch_dtype": "float16", "quantization_config": _AWQ},
    "llama3-bnb4": {**_LLAMA3, "quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": True,
                                                       "load_in_8bit": False, "bnb_4bit_quant_type": "nf4",
                                                       "bnb_4bit_compute_dtype": "bfloat16",
                                                       "bnb_4bit_use_double_quant": True}},
    "llama3-fp8-block": {**_LLAMA3, "quantization_config": _FP8_BLOCK},
    "llama3-fp8-tensor": {**_LLAMA3, "quantization_config": _FP8_TENSOR},
    "qwen3moe-fp8-block": {**_QWEN3MOE, "quantization_config": _FP8_BLOCK},
    "llama3-w8a8-int8": {**_LLAMA3, "quantization_config": {"quant_method": "w8a8_int8"}},
    "qwen3moe-w8a8-int8": {**_QWEN3MOE, "quantization_config": {"quant_method": "w8a8_int8"}},
    "dsv32-fp8": {**_DSV32, "quantization_config": _FP8_BLOCK},
}  # fmt: skip
_FP8_GEMM = ["auto", "cutlass", "deep_gemm", "triton", "flashinfer_trtllm", "flashinfer_cutlass",
             "flashinfer_deepgemm", "flashinfer_cutedsl", "aiter"]  # fmt: skip
_PDMUX = "--chunked-prefill-size -1 --disable-overlap-schedule"  # what --enable-pdmux asks beside it
# name: (model, flags)
LAUNCHES: dict[str, tuple[str, str]] = {
    **{f"ct-{k}": (f"llama3-ct-{k}", "") for k in _CT},
    **{f"ct-moe-{k}": (f"qwen3moe-ct-{k}", "") for k in _CT},
    "quark-fp8": ("llama3-quark-fp8", ""),
    "quark-moe-mxfp4": ("qwen3moe-quark-mxfp4", ""),
    **{f"ct-fp8-block-gemm-{v}": ("llama3-ct-fp8-block", f"--fp8-gemm-backend {v}") for v in _FP8_GEMM},
    **{f"ct-fp8-gemm-{v}": ("llama3-ct-fp8", f"--fp8-gemm-backend {v}") for v in _FP8_GEMM},
    **{f"fp8-tensor-gemm-{v}": ("llama3-fp8-tensor", f"--fp8-gemm-backend {v}") for v in _FP8_GEMM},
    "gptq-bf16": ("llama3-gptq-bf16", ""),
    "gptq-bf16-flag-gptq": ("llama3-gptq-bf16", "--quantization gptq"),
    "gptq-bf16-flag-marlin": ("llama3-gptq-bf16", "--quantization gptq_marlin"),
    "gptq-fp16": ("llama3-gptq-fp16", ""),
    "gptq-fp16-flag-gptq": ("llama3-gptq-fp16", "--quantization gptq"),
    "awq-bf16": ("llama3-awq-bf16", ""),
    "awq-fp16": ("llama3-awq-fp16", ""),
    "awq-fp16-flag-awq": ("llama3-awq-fp16", "--quantization awq"),
    "bnb-prequant-tp1": ("llama3-bnb4", "--tp 1"),
    "bnb-flag-tp1": ("llama3", "--quantization bitsandbytes --tp 1"),
    "bnb-load-format-tp1": ("llama3", "--load-format bitsandbytes --tp 1"),
    "deepep-fp8-moe": ("qwen3moe-fp8-block", "--moe-a2a-backend deepep --ep 8"),
    "deepep-fp8-moe-ll": ("qwen3moe-fp8-block", "--moe-a2a-backend deepep --ep 8 --deepep-mode low_latency"),
    "deepep-ct-fp8-moe": ("qwen3moe-ct-fp8", "--moe-a2a-backend deepep --ep 8"),
    "deepep-ct-w4a16-moe": ("qwen3moe-ct-w4a16", "--moe-a2a-backend deepep --ep 8"),
    "deepep-w8a8-int8-moe": ("qwen3moe-w8a8-int8", "--moe-a2a-backend deepep --ep 8"),
    "nsa-flashmla-sparse": ("dsv32-fp8", "--nsa-prefill-backend flashmla_sparse --nsa-decode-backend flashmla_sparse"),
    "nsa-flashmla-sparse-decode": ("dsv32-fp8", "--nsa-decode-backend flashmla_sparse"),
    "dsa-flashmla-sparse": ("dsv32-fp8", "--dsa-prefill-backend flashmla_sparse --dsa-decode-backend flashmla_sparse"),
    "w8a8-int8": ("llama3-w8a8-int8", ""),
    "w8a8-int8-moe": ("qwen3moe-w8a8-int8", ""),
    "pdmux": ("llama3", f"--enable-pdmux {_PDMUX}"),
    "pdmux-moe": ("qwen3moe", f"--enable-pdmux {_PDMUX}"),
    "pdmux-fp8": ("llama3-fp8-block", f"--enable-pdmux {_PDMUX}"),
}  # fmt: skip
GATE_CCS = ["8.0", "8.9", "9.0", "10.0", "12.0"]
CHOICE_CCS = ["9.0", "12.0"]
# name: (GPU name, compute capability)
AUDIT_BOXES: dict[str, tuple[str, str]] = {
    "a10": ("NVIDIA A10", "8.6"),
    "l40s": ("NVIDIA L40S", "8.9"),
    "b200": ("NVIDIA B200", "10.0"),
    "rtx-pro-6000": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"),
}
_SO = "deep_ep_cpp.cpython-312-x86_64-linux-gnu.so"
_NVSHMEM = "libnvshmem_host.so.3"
_NUMA = "libnuma.so.1"
_SITE = "/usr/local/lib/python3.12/dist-packages"


def _extra(torch_cuda: str, rel: str) -> dict[str, Any]:
    major = int(torch_cuda.split(".", maxsplit=1)[0]) if torch_cuda else 12
    deep_ep = _v(rel) < (0, 5, 18)  # 0.5.18+ require SGLang's own build, sgl-deep-ep; before, DeepEP's own
    return {
        "bitsandbytes": {"installed": True, "version": "0.48.2"},
        "deep-ep": {"installed": deep_ep, "version": "1.2.1", "extension_files": [_SO],
                    "extension_links": {_SO: {"needed": [_NVSHMEM],
                                              "found": {_NVSHMEM: f"{_SITE}/nvidia/nvshmem/lib/{_NVSHMEM}"}}}},
        "nvidia-nvshmem-cu12": {"installed": major == 12, "version": "3.3.20"},
        "nvidia-nvshmem-cu13": {"installed": major == 13, "version": "3.4.5"},
        "sgl-deep-ep": {"installed": not deep_ep, "version": "0.1.2.post1", "build_cuda_major": major},
    }  # fmt: skip


def _box(out: Path, rel: str, cc: str, name: str | None = None, extra: bool = True) -> Path:
    from factcheck7_draw import release_box

    doc = copy.deepcopy(release_box("h200-newest", rel))
    facts = doc["facts"]
    for g in facts["gpus"]:
        g["compute_capability"] = cc
        if name is not None:
            g["name"] = name
    if extra:
        facts["packages"].update(_extra(str(facts["packages"]["torch"].get("cuda") or ""), rel))
        facts["cuda_libs"] = {_NUMA: f"/usr/lib/x86_64-linux-gnu/{_NUMA}"}  # sgl-kernel's common_ops links it
    path = out / f"box-{name}-{cc}-{rel}-{extra}.json"
    path.write_text(json.dumps(doc))
    return path


def _allows(out: Path, box: Path, model: str, flags: str) -> bool:
    words = flags.split()
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(out / "models" / model)]
    line += ([] if "--tp" in words else ["--tp", "8"]) + words
    args = ["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line]
    return stackcheck_json(args).get("decision") == "allow"


def gate_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for cc in GATE_CCS:
        for rel in final_releases():
            box = _box(out, rel, cc)
            for name, (model, flags) in LAUNCHES.items():
                if _allows(out, box, model, flags):
                    rows.append({"pop": "a", "cc": cc, "sglang": rel, "launch": name, "model": model, "flags": flags})
        print(f"a {cc}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def choice_rows(out: Path) -> list[dict[str, Any]]:
    from packaging.specifiers import SpecifierSet

    from stackcheck.knowledge.loader import load

    finals = final_releases()
    entries = load().launch["release_choices"][14:]
    rows: list[dict[str, Any]] = []
    boxes: dict[tuple[str, str], Path] = {}
    for entry in entries:
        flag = entry["flags"][0]
        offered: dict[str, str] = {}
        for run in entry["runs"]:
            spec = SpecifierSet(run["versions"])
            for rel in finals:
                if rel in spec:
                    for value in run.get("choices") or []:
                        if value not in offered or _v(rel) > _v(offered[value]):
                            offered[value] = rel
        for value, rel in sorted(offered.items()):
            for cc in CHOICE_CCS:
                box = boxes.get((rel, cc)) or boxes.setdefault((rel, cc), _box(out, rel, cc))
                if _allows(out, box, "llama3", f"{flag} {value}"):
                    rows.append({"pop": "c", "cc": cc, "sglang": rel, "model": "llama3", "flags": f"{flag} {value}"})
    print(f"c: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def audit_rows(out: Path) -> list[dict[str, Any]]:
    def facts(box: str, rel: str) -> Path:
        name, cc = AUDIT_BOXES[box]
        return _box(out, rel, cc, name, extra=False)

    return audit_ok_rows(AUDIT_BOXES, [r for r in final_releases() if _v(r) >= (0, 5, 20)], facts)


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    a = gate_rows(out)
    c = choice_rows(out)
    b = audit_rows(out)
    draw(out, SEED, [(9, a), (3, c), (6, b)])


if __name__ == "__main__":
    main()
