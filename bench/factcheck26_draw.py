"""The twenty-sixth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Twenty-sixth
sample").

    PYTHONPATH=. python bench/factcheck26_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the rules and checks merged in the last stop (50bf5e7..302c88c) where the
gate ALLOWS or audit says ok: --moe-a2a-backend deepep with quantized MoE methods, the bitsandbytes loader, DSA
tilelang with an FP8 KV cache, deepep_v2 (its hook and the ElasticBuffer floor), typed option values
(release_types), w4afp8-moe-gpu, moe-a2a-deepep's kernel images, gpu-fabric-state (a fabric not read), the image's
NVIDIA_REQUIRE_* judged with GPU brands and the container toolkit's modes, the Requires-Python / glibc of plan
targets; and audit's ok feature verdicts.

Boxes: tests/cases/h200-newest with every final SGLang release 0.5.18-0.5.23 and its pins
(factcheck7_draw.release_box), its GPUs set to BOXES' name and capability (8.9, 9.0, 10.0, 12.0), with
factcheck23_draw's extra packages (bitsandbytes 0.48.2, sgl-deep-ep 0.1.2.post1 built for torch's CUDA major,
nvidia-nvshmem) and libnuma found.

(a) `gate --dry-run --format json` (`--tp 8` unless the launch names its own) for each launch of LAUNCHES on each box
    and release: one row per allow (`*-fabric-unread` launches on the same box with every GPU's fabric entry
    removed);
(b) `audit --facts F --format json` of each box and release: one row per distinct (box, feature, its reasons' rule /
    observed / result) whose status is ok, labelled with the first release that gives it;
(p) `plan --facts F --format json` with no option and with `--to sglang==R` for each final release 0.5.18-0.5.23 on
    each box with 0.5.18 installed: one row per distinct (box, option, target, steps as component / to / commands);
(i) stackcheck.image.require.judge_facts on IMAGE_REQUIRES x DRIVERS x BRANDS x TOOLKITS (one GPU of capability 9.0
    of that brand): one row per satisfied (True) verdict.

Model configs are written here in the published checkpoints' shape (not copied).
Draw: random.Random(20261226); per population its rows sorted by their JSON text, shuffled, the first k (a: 7,
b: 3, p: 2, i: 3), 15 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck23_draw import MODELS as _MODELS23
from factcheck23_draw import _extra, _v
from factcheck_draw import audit_ok_rows, draw, final_releases, stackcheck_json, write_models
from factcheck_draw import plan_rows as draw_plan_rows

SEED = 20261226
_W4AFP8 = {"quant_method": "w4afp8", "activation_scheme": "dynamic", "linear_activation_scheme": "dynamic",
           "moe_activation_scheme": "static", "weight_block_size": [128, 128], "group_size": 128}  # fmt: skip
_MODELOPT_FP4 = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
                 "exclude_modules": ["lm_head", "*mlp.gate"]}  # fmt: skip
_DSV3 = {k: v for k, v in _MODELS23["dsv32-fp8"].items() if not k.startswith("index_")}
_DSV3 = {**_DSV3, "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3"}
MODELS: dict[str, dict[str, Any]] = {
    **{k: _MODELS23[k] for k in ("llama3", "qwen3moe", "llama3-bnb4", "qwen3moe-fp8-block", "dsv32-fp8",
                                 "qwen3moe-ct-fp8", "qwen3moe-ct-w4a16", "qwen3moe-ct-nvfp4", "qwen3moe-w8a8-int8",
                                 "qwen3moe-quark-mxfp4")},
    "qwen3moe-w4afp8": {**_MODELS23["qwen3moe"], "quantization_config": _W4AFP8},
    "dsv3-w4afp8": {**_DSV3, "quantization_config": _W4AFP8},
    "dsv3-fp8": {**_DSV3, "quantization_config": _MODELS23["dsv32-fp8"]["quantization_config"]},
    "qwen3moe-modelopt-fp4": {**_MODELS23["qwen3moe"], "quantization_config": _MODELOPT_FP4},
}  # fmt: skip
_DEEPEP = "--moe-a2a-backend deepep --ep 8"
_DSA = "--dsa-prefill-backend {p} --dsa-decode-backend {d}"
# name: (model, flags)
LAUNCHES: dict[str, tuple[str, str]] = {
    **{f"deepep-{m}": (m, _DEEPEP) for m in ("qwen3moe", "qwen3moe-fp8-block", "qwen3moe-ct-fp8",
                                             "qwen3moe-ct-w4a16", "qwen3moe-ct-nvfp4", "qwen3moe-w8a8-int8",
                                             "qwen3moe-quark-mxfp4", "qwen3moe-modelopt-fp4", "qwen3moe-w4afp8",
                                             "dsv3-fp8")},
    "deepep-ll-fp8": ("qwen3moe-fp8-block", f"{_DEEPEP} --deepep-mode low_latency"),
    "deepep-fp8-deepgemm-off": ("qwen3moe-fp8-block", f"{_DEEPEP} --moe-runner-backend triton"),
    **{f"deepep-v2-{m}": (m, "--moe-a2a-backend deepep_v2 --ep 8") for m in ("qwen3moe", "dsv3-fp8",
                                                                            "qwen3moe-fp8-block")},
    "bnb-prequant-loader-tp1": ("llama3-bnb4", "--load-format bitsandbytes --tp 1"),
    "bnb-flag-loader-tp1": ("llama3", "--quantization bitsandbytes --load-format bitsandbytes --tp 1"),
    "bnb-prequant-no-loader-tp1": ("llama3-bnb4", "--tp 1"),
    **{f"dsa-{p}-{d}-fp8kv": ("dsv32-fp8", _DSA.format(p=p, d=d) + " --kv-cache-dtype fp8_e4m3")
       for p, d in (("tilelang", "tilelang"), ("flashmla_sparse", "tilelang"), ("tilelang", "flashmla_kv"))},
    "dsa-tilelang-bf16kv": ("dsv32-fp8", _DSA.format(p="tilelang", d="tilelang")),
    "w4afp8-qwen3moe": ("qwen3moe-w4afp8", "--ep 8"),
    "w4afp8-dsv3": ("dsv3-w4afp8", "--ep 8"),
    "w4afp8-flag-fp8": ("qwen3moe-fp8-block", "--quantization w4afp8"),
    "typed-mem-1e-1": ("llama3", "--mem-fraction-static 8e-1"),
    "typed-max-running-underscore": ("llama3", "--max-running-requests 1_024"),
    "typed-mem-nan": ("llama3", "--mem-fraction-static nan"),
    "typed-chunked-neg": ("llama3", "--chunked-prefill-size -1"),
    "typed-context-space": ("llama3", "--context-length  4096"),
    "typed-tp-08": ("llama3", "--tp-size 08"),
    "plain-fabric-unread": ("llama3", ""),
    "deepep-fp8-fabric-unread": ("qwen3moe-fp8-block", _DEEPEP),
}  # fmt: skip
# name: (GPU name, compute capability)
BOXES: dict[str, tuple[str, str]] = {
    "l40s": ("NVIDIA L40S", "8.9"),
    "h100": ("NVIDIA H100 80GB HBM3", "9.0"),
    "b200": ("NVIDIA B200", "10.0"),
    "pro6000": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"),
}
_NUMA = "libnuma.so.1"
IMAGE_REQUIRES = [
    "cuda>=12.8",
    "cuda>=12.8 brand=tesla,driver>=535,driver<536 brand=unknown,driver>=535,driver<536 "
    "brand=nvidia,driver>=535,driver<536",
    "cuda>=13.0 brand=unknown,driver>=550,driver<551 brand=nvidia,driver>=550,driver<551",
    "cuda>=12.4 brand=quadrortx,driver>=535,driver<536 brand=geforce,driver>=535,driver<536",
]
DRIVERS = [{"version": "535.247.01", "cuda": "12.2"}, {"version": "550.163.01", "cuda": "12.4"},
           {"version": "570.172.08", "cuda": "12.8"}, {"version": "580.95.05", "cuda": "13.0"}]  # fmt: skip
BRANDS = ["TESLA", "NVIDIA", "UNKNOWN", "GEFORCE", "QUADRO_RTX", "NVIDIA_RTX"]
TOOLKITS: list[dict[str, Any] | None] = [None] + [
    {"mode": m, "mode_source": "config", "libnvidia_container": lib}
    for m in ("legacy", "auto", "cdi", "jit-cdi", "csv")
    for lib in ("1.8.1", "1.17.8", "1.18.0", "1.20.0", None)
]


def _box(out: Path, rel: str, box: str, fabric: bool = True) -> Path:
    from factcheck7_draw import release_box

    name, cc = BOXES[box]
    doc = copy.deepcopy(release_box("h200-newest", rel))
    facts = doc["facts"]
    for g in facts["gpus"]:
        g["compute_capability"] = cc
        g["name"] = name
        if not fabric:
            g.pop("fabric", None)
    facts["packages"].update(_extra(str(facts["packages"]["torch"].get("cuda") or ""), rel))
    facts["cuda_libs"] = {_NUMA: f"/usr/lib/x86_64-linux-gnu/{_NUMA}"}
    path = out / f"box-{box}-{rel}-{fabric}.json"
    path.write_text(json.dumps(doc))
    return path


def _decision(args: list[str]) -> str | None:
    """The gate's decision; None where it answered a one-line error instead of JSON (exit 2: a refusal too)."""
    try:
        return stackcheck_json(args).get("decision")
    except json.JSONDecodeError:
        return None


def _releases() -> list[str]:
    return [r for r in final_releases() if _v(r) >= (0, 5, 18)]


def gate_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for box in BOXES:
        for rel in _releases():
            boxes = {f: _box(out, rel, box, fabric=f) for f in (True, False)}
            for name, (model, flags) in LAUNCHES.items():
                words = flags.split()
                line = ["python3", "-m", "sglang.launch_server", "--model-path", str(out / "models" / model)]
                line += ([] if "--tp" in words or "--tp-size" in words else ["--tp", "8"]) + words
                facts = boxes[not name.endswith("-fabric-unread")]
                args = ["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line]
                if _decision(args) == "allow":
                    rows.append({"pop": "a", "box": box, "sglang": rel, "launch": name, "model": model,
                                 "flags": flags})  # fmt: skip
        print(f"a {box}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def audit_rows(out: Path) -> list[dict[str, Any]]:
    return audit_ok_rows(BOXES, _releases(), lambda box, rel: _box(out, rel, box))


def plan_rows(out: Path) -> list[dict[str, Any]]:
    return draw_plan_rows((({"box": box}, _box(out, "0.5.18", box)) for box in BOXES), _releases())


def image_rows() -> list[dict[str, Any]]:
    from stackcheck.image.require import judge_facts, parse_nvidia_require

    rows: list[dict[str, Any]] = []
    for text in IMAGE_REQUIRES:
        req = {"nvidia_require": parse_nvidia_require({"NVIDIA_REQUIRE_CUDA": text}).to_facts()}
        for driver in DRIVERS:
            for brand in BRANDS:
                gpus = [{"index": 0, "compute_capability": "9.0", "brand": brand}]
                for tk in TOOLKITS:
                    j = judge_facts(req, driver, gpus, toolkit=tk)
                    if j.satisfied is True:
                        rows.append({"pop": "i", "require": text, "driver": driver["version"], "brand": brand,
                                     "toolkit": tk, "reason": j.reason})  # fmt: skip
    print(f"i: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    a = gate_rows(out)
    b = audit_rows(out)
    p = plan_rows(out)
    i = image_rows()
    draw(out, SEED, [(7, a), (3, b), (2, p), (3, i)])


if __name__ == "__main__":
    main()
