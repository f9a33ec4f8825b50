"""The twenty-fourth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Twenty-fourth
sample").

    PYTHONPATH=. python bench/factcheck24_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what no earlier sample drew: the rules merged in the last stop (b33a6f2..
50bf5e7) where the gate ALLOWS: the pdmux refusals (pipeline / disaggregation, triton_v2 LoRA, UNO tree, Elastic EP
scale-up), compressed-tensors mixed-precision judged per group, an FP8 KV cache the checkpoint asks for
(compressed-tensors kv_cache_scheme, ModelOpt kv_cache_quant_algo), ct-fp8-w8a16-moe, the vllm-backed methods on
0.5.1-0.5.4, the number-valued and nargs='*' choice flags, attention-dsa-flashmla-kv, attention-dsa-fa3, memory-saver,
moe-a2a-deepep with --deepep-mode, gpu-fabric-state (a box whose fabric state was not read), the bitsandbytes loader
refusals and fp8-gemm-backend-aiter-cuda; and audit's ok feature verdicts on boxes of compute capability 8.0, 9.0, 10.3
and 12.1 with SGLang 0.5.10-0.5.23.

(a) `gate --dry-run --format json` (`--tp 8` unless the launch names its own) on tests/cases/h200-newest with every
    final SGLang release 0.5.1-0.5.23 and its pins (factcheck7_draw.release_box), its GPUs set to 8.0, 9.0, 10.0 and
    12.0, with factcheck23_draw's extra packages (bitsandbytes 0.48.2, deep-ep 1.2.1 before 0.5.18 / sgl-deep-ep
    0.1.2.post1 from 0.5.18, nvidia-nvshmem) and torch-memory-saver 0.0.10 added, the loader finding libnuma.so.1 and
    libcudart.so.12 / .so.13, for each launch of LAUNCHES: one row per allow (launches named `*-fabric-unread` on the
    same box with every GPU's fabric entry removed, as saved facts from before the probe read it);
(c) the same gate on 9.0 and 12.0 with Llama 3 and one of the number-valued or nargs='*' choice flags (launch.json
    release_choices entries with a `type` or `nargs`): each value any release offers, on the newest final release that
    offers it: one row per allow;
(b) `audit --facts F --format json` of h200-newest as an A100-SXM4-80GB (8.0, x86_64), an H100 80GB HBM3 (9.0,
    x86_64), a B300 (NVIDIA B300 SXM6 AC, 10.3, x86_64), each with (a)'s extra packages, and a DGX Spark (NVIDIA GB10,
    12.1, aarch64, no extra packages), each with every final release 0.5.10-0.5.23 and its pins: one row per distinct
    (box, feature, its reasons' rule / observed / result) whose status is ok, labelled with the first release that
    gives it.

Model configs are written here in the published checkpoints' shape (not copied).
Draw: random.Random(20261224); per population its rows sorted by their JSON text, shuffled, the first k (a: 9,
c: 3, b: 6), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck23_draw import _CT, _DSV32, _FP8_BLOCK, _FP8_TENSOR, _LLAMA3, _QWEN3MOE, _ct, _extra
from factcheck_draw import audit_ok_rows, draw, final_releases, stackcheck_json, write_models
from factcheck_draw import release_tuple as _v

SEED = 20261224
_KV_FP8 = {"type": "float", "num_bits": 8, "strategy": "tensor", "symmetric": True, "dynamic": False}


def _ct_kv(key: str, ignore: list[str]) -> dict[str, Any]:
    fmt, w, a = _CT[key]
    return {**_ct(fmt, w, a, ignore), "kv_cache_scheme": _KV_FP8}


def _ct_mixed(groups: dict[str, tuple[str, list[str]]], ignore: list[str]) -> dict[str, Any]:
    """A compressed-tensors config whose top-level format is mixed-precision: each group its own format and targets."""
    out: dict[str, Any] = {}
    for name, (key, targets) in groups.items():
        fmt, w, a = _CT[key]
        out[name] = {"targets": targets, "weights": w, "input_activations": a, "output_activations": None,
                     "format": fmt}  # fmt: skip
    return {"quant_method": "compressed-tensors", "format": "mixed-precision", "quantization_status": "compressed",
            "config_groups": out, "ignore": ignore, "kv_cache_scheme": None}  # fmt: skip


_ATTN = ["re:.*self_attn.*"]
_MLP = ["re:.*mlp.*"]
_EXPERTS = ["re:.*mlp.experts.*"]
_MOE_IGNORE = ["lm_head", "re:.*mlp.gate$"]
_MODELOPT_FP8_KV = {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8",
                    "kv_cache_scheme": {"type": "float", "num_bits": 8, "dynamic": False},
                    "exclude_modules": ["lm_head"]}  # fmt: skip
_MODELOPT_FP8 = {"quant_method": "modelopt", "quant_algo": "FP8", "exclude_modules": ["lm_head"]}
MODELS: dict[str, dict[str, Any]] = {
    "llama3": _LLAMA3,
    "qwen3moe": _QWEN3MOE,
    "dsv32-fp8": {**_DSV32, "quantization_config": _FP8_BLOCK},
    "llama3-bnb4": {**_LLAMA3, "quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": True,
                                                       "load_in_8bit": False, "bnb_4bit_quant_type": "nf4",
                                                       "bnb_4bit_compute_dtype": "bfloat16",
                                                       "bnb_4bit_use_double_quant": True}},
    "llama3-fp8-block": {**_LLAMA3, "quantization_config": _FP8_BLOCK},
    "llama3-fp8-tensor": {**_LLAMA3, "quantization_config": _FP8_TENSOR},
    "qwen3moe-fp8-block": {**_QWEN3MOE, "quantization_config": _FP8_BLOCK},
    "llama3-ct-fp8": {**_LLAMA3, "quantization_config": _ct(*_CT["fp8"], ["lm_head"])},
    "llama3-ct-fp8-kv": {**_LLAMA3, "quantization_config": _ct_kv("fp8", ["lm_head"])},
    "llama3-ct-w4a16-kv": {**_LLAMA3, "quantization_config": _ct_kv("w4a16", ["lm_head"])},
    "llama3-modelopt-fp8": {**_LLAMA3, "quantization_config": _MODELOPT_FP8},
    "llama3-modelopt-fp8-kv": {**_LLAMA3, "quantization_config": _MODELOPT_FP8_KV},
    "qwen3moe-ct-fp8-w8a16": {**_QWEN3MOE, "quantization_config": _ct(*_CT["fp8-w8a16"], _MOE_IGNORE)},
    "qwen3moe-ct-fp8": {**_QWEN3MOE, "quantization_config": _ct(*_CT["fp8"], _MOE_IGNORE)},
    "llama3-ct-mixed-fp8-w4a16": {**_LLAMA3, "quantization_config": _ct_mixed(
        {"group_0": ("fp8", _ATTN), "group_1": ("w4a16", _MLP)}, ["lm_head"])},
    "llama3-ct-mixed-int8-nvfp4": {**_LLAMA3, "quantization_config": _ct_mixed(
        {"group_0": ("int8", _ATTN), "group_1": ("nvfp4", _MLP)}, ["lm_head"])},
    "qwen3moe-ct-mixed-fp8-nvfp4": {**_QWEN3MOE, "quantization_config": _ct_mixed(
        {"group_0": ("fp8", _ATTN), "group_1": ("nvfp4", _EXPERTS)}, _MOE_IGNORE)},
    "qwen3moe-ct-mixed-w4a16-fp8": {**_QWEN3MOE, "quantization_config": _ct_mixed(
        {"group_0": ("w4a16", _ATTN), "group_1": ("fp8", _EXPERTS)}, _MOE_IGNORE)},
}  # fmt: skip
_PDMUX = "--enable-pdmux --chunked-prefill-size -1 --disable-overlap-schedule"
_NSA = "--nsa-prefill-backend {p} --nsa-decode-backend {d}"
_DSA = "--dsa-prefill-backend {p} --dsa-decode-backend {d}"
# name: (model, flags)
LAUNCHES: dict[str, tuple[str, str]] = {
    "pdmux": ("llama3", _PDMUX),
    "pdmux-lora-triton": ("llama3", f"{_PDMUX} --enable-lora --max-lora-rank 16 --lora-target-modules all"),
    "pdmux-lora-triton-v2": ("llama3", f"{_PDMUX} --enable-lora --max-lora-rank 16 --lora-target-modules all "
                                       "--lora-backend triton_v2"),
    "pdmux-uno-linear": ("llama3", f"{_PDMUX} --speculative-algorithm UNO --speculative-eagle-topk 1 "
                                   "--speculative-num-steps 3 --speculative-num-draft-tokens 4"),
    "pdmux-elastic-ep-no-graph": ("qwen3moe", f"{_PDMUX} --elastic-ep-backend mooncake --ep 8 --max-ep-size 16 "
                                              "--disable-cuda-graph"),
    "pdmux-fabric-unread": ("llama3", _PDMUX),
    "ct-mixed-fp8-w4a16": ("llama3-ct-mixed-fp8-w4a16", ""),
    "ct-mixed-int8-nvfp4": ("llama3-ct-mixed-int8-nvfp4", ""),
    "ct-moe-mixed-fp8-nvfp4": ("qwen3moe-ct-mixed-fp8-nvfp4", ""),
    "ct-moe-mixed-w4a16-fp8": ("qwen3moe-ct-mixed-w4a16-fp8", ""),
    "ct-moe-fp8-w8a16": ("qwen3moe-ct-fp8-w8a16", ""),
    **{f"ct-fp8-kv-{b}": ("llama3-ct-fp8-kv", f"--attention-backend {b}") for b in ("fa4", "trtllm_mha", "fa3")},
    "ct-fp8-kv": ("llama3-ct-fp8-kv", ""),
    "ct-w4a16-kv-fa4": ("llama3-ct-w4a16-kv", "--attention-backend fa4"),
    **{f"modelopt-fp8-kv-{b}": ("llama3-modelopt-fp8-kv", f"--attention-backend {b}")
       for b in ("fa4", "trtllm_mha", "fa3")},
    "modelopt-fp8-kv": ("llama3-modelopt-fp8-kv", ""),
    "experts-int8-flag": ("qwen3moe", "--quantization experts_int8"),
    "bnb-flag-both-tp1": ("llama3", "--quantization bitsandbytes --load-format bitsandbytes --tp 1"),
    "bnb-prequant-loader-tp1": ("llama3-bnb4", "--load-format bitsandbytes --tp 1"),
    "bnb-prequant-loader-pp2": ("llama3-bnb4", "--load-format bitsandbytes --tp 1 --pp-size 2"),
    **{f"nsa-{p}-{d}": ("dsv32-fp8", _NSA.format(p=p, d=d))
       for p, d in (("flashmla_sparse", "flashmla_kv"), ("flashmla_auto", "flashmla_auto"), ("fa3", "fa3"),
                    ("flashmla_sparse", "fa3"))},
    **{f"dsa-{p}-{d}": ("dsv32-fp8", _DSA.format(p=p, d=d))
       for p, d in (("flashmla_sparse", "flashmla_kv"), ("flashmla_auto", "flashmla_auto"), ("fa3", "fa3"))},
    "dsa-flashmla-kv-fp8-kv": ("dsv32-fp8", "--dsa-decode-backend flashmla_kv --kv-cache-dtype fp8_e4m3"),
    "memory-saver": ("llama3", "--enable-memory-saver"),
    "memory-saver-moe-fp8": ("qwen3moe-fp8-block", "--enable-memory-saver"),
    **{f"deepep-{m}": ("qwen3moe-fp8-block", f"--moe-a2a-backend deepep --ep 8 --deepep-mode {m}")
       for m in ("normal", "low_latency", "auto")},
    "deepep-ct-fp8-ll": ("qwen3moe-ct-fp8", "--moe-a2a-backend deepep --ep 8 --deepep-mode low_latency"),
    **{f"aiter-{m}": (m, "--fp8-gemm-backend aiter")
       for m in ("llama3", "llama3-ct-fp8", "llama3-modelopt-fp8", "qwen3moe-ct-fp8")},
    "aiter-w8a8-fp8-flag": ("llama3", "--quantization w8a8_fp8 --fp8-gemm-backend aiter"),
    "aiter-modelopt-flag": ("llama3-modelopt-fp8", "--quantization modelopt_fp8 --fp8-gemm-backend aiter"),
}  # fmt: skip
GATE_CCS = ["8.0", "9.0", "10.0", "12.0"]
CHOICE_CCS = ["9.0", "12.0"]
# name: (GPU name, compute capability, machine)
AUDIT_BOXES: dict[str, tuple[str, str, str]] = {
    "a100": ("NVIDIA A100-SXM4-80GB", "8.0", "x86_64"),
    "h100": ("NVIDIA H100 80GB HBM3", "9.0", "x86_64"),
    "b300": ("NVIDIA B300 SXM6 AC", "10.3", "x86_64"),
    "gb10-spark": ("NVIDIA GB10", "12.1", "aarch64"),
}
_TMS = {"installed": True, "version": "0.0.10", "dist_version": "0.0.10"}
_LIB = "/usr/lib/x86_64-linux-gnu"


def _box(out: Path, rel: str, cc: str, name: str | None = None, machine: str = "x86_64", extra: bool = True,
         fabric: bool = True) -> Path:  # fmt: skip
    from factcheck7_draw import release_box

    doc = copy.deepcopy(release_box("h200-newest", rel))
    facts = doc["facts"]
    for g in facts["gpus"]:
        g["compute_capability"] = cc
        if name is not None:
            g["name"] = name
        if not fabric:
            g.pop("fabric", None)
    facts["system"]["machine"] = machine
    if extra:
        facts["packages"].update(_extra(str(facts["packages"]["torch"].get("cuda") or ""), rel))
        facts["packages"]["torch-memory-saver"] = dict(_TMS)
        facts["cuda_libs"] = {"libnuma.so.1": f"{_LIB}/libnuma.so.1", "libcudart.so.12": f"{_LIB}/libcudart.so.12",
                              "libcudart.so.13": f"{_LIB}/libcudart.so.13", "ld_cache": "file"}  # fmt: skip
    path = out / f"box-{name}-{cc}-{machine}-{rel}-{extra}-{fabric}.json"
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
            boxes = {f: _box(out, rel, cc, fabric=f) for f in (True, False)}
            for name, (model, flags) in LAUNCHES.items():
                if _allows(out, boxes[not name.endswith("-fabric-unread")], model, flags):
                    rows.append({"pop": "a", "cc": cc, "sglang": rel, "launch": name, "model": model, "flags": flags})
        print(f"a {cc}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def choice_rows(out: Path) -> list[dict[str, Any]]:
    from packaging.specifiers import SpecifierSet

    from stackcheck.knowledge.loader import load

    finals = final_releases()
    entries = [e for e in load().launch["release_choices"] if "type" in e or "nargs" in e]
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
        name, cc, machine = AUDIT_BOXES[box]
        return _box(out, rel, cc, name, machine, extra=machine == "x86_64")

    return audit_ok_rows(AUDIT_BOXES, [r for r in final_releases() if _v(r) >= (0, 5, 10)], facts)


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
