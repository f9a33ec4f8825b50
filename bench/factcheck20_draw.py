"""The twentieth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Twentieth sample").

    PYTHONPATH=. python bench/factcheck20_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what no earlier sample drew: the gate's allows of quantized launches under
the rules merged by igap3 (check sglang-gpu-min-cc, rules quant-loader-*) and igap4 (launch.json's
checkpoint_unquantized online FP8 path, moe_only deep_gemm), and triage's causes and fixes for the loader's
quantization refusal (signature sglang-quant-below-min-capability) and the other recent signatures.

(a) `gate --dry-run --format json` with `--tp 1` on tests/cases/h200-newest with every final SGLang release
    0.5.5-0.5.23 and its pins (factcheck7_draw.release_box), its GPUs set to 7.5, 8.0, 8.6, 8.9, 9.0, 10.0 and 12.0:
    a BF16 Llama 3 with `--quantization V` for every choice V launch.json lists, and each quantized checkpoint of
    CHECKPOINTS with no flag: one row per allow;
(b) `triage --format json` of a crash log written here (a Python traceback ending in the line SGLang's code raises,
    in its shape): the loader's refusal for each (method, minimum) of LOADER_MINIMA at each capability below it of
    75, 80, 86, 89, 90, 100, and one log each for OTHER_LOGS: one row per log, with the signature, check and fix
    triage names.

Draw: random.Random(20261220); per population its rows sorted by their JSON text, shuffled, the first k (a: 12,
b: 6), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck_draw import cc_box as _box
from factcheck_draw import draw, final_releases, stackcheck_json, write_models
from factcheck_draw import release_tuple as _v

SEED = 20261220
_LLAMA3 = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
           "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 32,
           "intermediate_size": 14336, "torch_dtype": "bfloat16"}  # fmt: skip
_GPT_OSS = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "num_attention_heads": 64,
            "num_key_value_heads": 8, "head_dim": 64, "hidden_size": 2880, "num_local_experts": 32,
            "num_experts_per_tok": 4, "num_hidden_layers": 24}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "llama3": _LLAMA3,
    "llama3-fp8": {**_LLAMA3, "quantization_config": {"quant_method": "fp8", "activation_scheme": "static"}},
    "llama3-block-fp8": {**_LLAMA3, "quantization_config": {"quant_method": "fp8", "fmt": "e4m3",
                                                            "activation_scheme": "dynamic",
                                                            "weight_block_size": [128, 128]}},
    "llama3-awq": {**_LLAMA3, "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128,
                                                      "zero_point": True, "version": "gemm"}},
    "llama3-gptq": {**_LLAMA3, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128,
                                                       "desc_act": False, "sym": True}},
    "llama3-ct-fp8": {**_LLAMA3, "quantization_config": {
        "quant_method": "compressed-tensors", "format": "float-quantized",
        "config_groups": {"group_0": {"targets": ["Linear"],
                                      "weights": {"num_bits": 8, "type": "float", "strategy": "channel",
                                                  "symmetric": True, "dynamic": False},
                                      "input_activations": {"num_bits": 8, "type": "float", "strategy": "token",
                                                            "symmetric": True, "dynamic": True}}},
        "ignore": ["lm_head"]}},
    "llama3-modelopt-fp8": _LLAMA3,
    "llama3-modelopt-fp4": _LLAMA3,
    "gpt-oss-mxfp4": {**_GPT_OSS, "quantization_config": {"quant_method": "mxfp4"}},
}  # fmt: skip
# ModelOpt checkpoints carry hf_quant_config.json beside config.json
HF_QUANT = {
    "llama3-modelopt-fp8": {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8",
                                                                               "kv_cache_quant_algo": None}},
    "llama3-modelopt-fp4": {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4",
                                                                               "group_size": 16,
                                                                               "kv_cache_quant_algo": None}},
}  # fmt: skip
CHECKPOINTS = [m for m in MODELS if m != "llama3"]
GATE_CCS = ["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"]
# (method as the loader names it, minimum capability) as signature sglang-quant-below-min-capability lists them
LOADER_MINIMA = [("fp8", 80), ("mxfp4", 80), ("awq_marlin", 80), ("gptq_marlin", 80), ("blockwise_int8", 80),
                 ("modelopt_fp4", 80), ("w8a8_fp8", 89), ("modelopt_fp8", 89), ("w4afp8", 90),
                 ("petit_nvfp4", 90), ("mxfp8", 100), ("nvfp4_online", 100), ("modelopt_fp4", 100),
                 ("compressed-tensors", 75), ("compressed-tensors", 89), ("compressed-tensors", 90)]  # fmt: skip
CURRENT = [75, 80, 86, 89, 90, 100]
_TB = ('Traceback (most recent call last):\n  File "/usr/lib/python3/dist-packages/sglang/srt/{file}", line {line}, '
       'in {func}\n    {code}\n')  # fmt: skip
OTHER_LOGS: dict[str, str] = {
    "ninja": _TB.format(file="../../flashinfer/jit/cpp_ext.py", line=311, func="run_ninja", code="subprocess.run(cmd)")
    + "FileNotFoundError: [Errno 2] No such file or directory: 'ninja'\n",
    "deepgemm-toolkit": 'Traceback (most recent call last):\n  File "/venv/lib/python3.12/site-packages/deep_gemm/'
    '__init__.py", line 40, in _find_cuda_home\n    assert cuda_home is not None\nAssertionError\n',
    "nccl-cu11": "ImportError: /venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
    "ncclMemFree\n",
    "no-kernel-image": "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    '  File "/venv/lib/python3.12/site-packages/sgl_kernel/elementwise.py", line 40, in rmsnorm\n',
}


def _choices() -> list[str]:
    def walk(o: Any) -> list[str] | None:
        if isinstance(o, dict):
            if o.get("flag") == "--quantization" and "choices" in o:
                return list(o["choices"])
            o = list(o.values())
        if isinstance(o, list):
            for v in o:
                if (found := walk(v)) is not None:
                    return found
        return None

    return walk(json.loads((Path(__file__).resolve().parent.parent / "manifests" / "launch.json").read_text())) or []


def gate_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    launches = [("llama3", ["--quantization", c]) for c in _choices()] + [(m, []) for m in CHECKPOINTS]
    for cc in GATE_CCS:
        for rel in [r for r in final_releases() if _v(r) >= (0, 5, 5)]:
            box = _box(out, rel, cc)
            for model, flags in launches:
                line = ["python3", "-m", "sglang.launch_server", "--model-path", str(out / "models" / model)]
                args = ["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line, "--tp", "1", *flags]
                if stackcheck_json(args).get("decision") == "allow":
                    rows.append({"pop": "a", "cc": cc, "sglang": rel, "model": model, "flags": " ".join(flags)})
        print(f"a {cc}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def _loader_log(method: str, minimum: int, current: int) -> str:
    return (_TB.format(file="model_loader/loader.py", line=259, func="_get_quantization_config",
                       code="raise ValueError(")
            + f"ValueError: The quantization method {method} is not supported for the current GPU. Minimum "
            f"capability: {minimum}. Current capability: {current}.\n")  # fmt: skip


def triage_rows(out: Path) -> list[dict[str, Any]]:
    logs = {f"loader-{m}-{mn}-{c}": _loader_log(m, mn, c) for m, mn in LOADER_MINIMA for c in CURRENT if c < mn}
    logs.update(OTHER_LOGS)
    rows: list[dict[str, Any]] = []
    for name, text in logs.items():
        path = out / "logs" / f"{name}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        doc = stackcheck_json(["triage", str(path), "--format", "json"])
        sig = (doc.get("root_cause") or {}).get("signature") or {}
        rows.append({"pop": "b", "log": name, "signature": sig.get("id"), "check": sig.get("check")})
    print(f"b: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    for name, doc in HF_QUANT.items():
        (out / "models" / name / "hf_quant_config.json").write_text(json.dumps(doc))
    b = triage_rows(out)
    a = gate_rows(out)
    draw(out, SEED, [(12, a), (6, b)])


if __name__ == "__main__":
    main()
