"""The thirty-second fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md,
"Thirty-second sample").

    PYTHONPATH=. python bench/factcheck32_draw.py OUT_DIR

Fixed before any row was checked. Aimed at populations no earlier sample drew (every sample's heading and rule read
in FACTCHECK.md): what the last stop's new rules (git log --first-parent 642d880..4b195b7) say ok / allow. Never
sampled: the check container-engine-gpu-path (idock's docker_daemon probe) and the check driver-kernel-modules (idkm)
where ok; the gate's allows of `--enable-symm-mem` where jit.libnccl_so_found is true (isymm drew only refusals);
FA4 with an auto (BF16) KV cache on 0.5.3-0.5.23 (ifc30 drew fa4 only with EAGLE-3 on 0.5.10+); deepep_v2 with a
ModelOpt MIXED_PRECISION checkpoint, a DSA model with `--dcp-size` and split attention flags, `--quantization
nvfp4_online` on major 10 (igap18's allows); a launch inside `bash -c "cd DIR && ..."` (igap18 / ishell); audit's ok
feature verdicts on GH200 (9.0, aarch64), L40S (8.9) and A10 (8.6) with 0.5.20-0.5.23 under a CUDA 13 driver; and
triage's named fixes of the three newest signatures (nvrm-api-version-mismatch, vgpu-guest-driver-incompatible,
driver-rm-init-failed-blackwell-proprietary).

Boxes: bench/factcheck27_draw._box (tests/cases/h200-newest with the release and its pins, factcheck23_draw's extra
packages, libnuma found; driver 580.159.04, CUDA 13.0) with its GPUs set per GPU_BOXES / AUDIT_BOXES.

(g) `gate --dry-run --format json` (`--tp 8`) of each launch of LAUNCHES on GPU_BOXES' 8-GPU boxes (H100 9.0, B200
    10.0) with every final release in the launch's range; symm-mem with jit.libnccl_so_found true and libnccl_so
    /usr/lib/x86_64-linux-gnu/libnccl.so; the bash-c launch as `bash -c "cd OUT/models && python3 -m
    sglang.launch_server --model-path ./llama3 --tp 8"`: one row per allow;
(b) `audit --facts F --format json` of AUDIT_BOXES (GH200 9.0 aarch64 x1, L40S 8.9 x4, A10 8.6 x1) with every final
    release 0.5.20-0.5.23: one row per distinct (box, feature, its reasons' rule / observed / result) whose status is
    ok, labelled with the first release that gives it (factcheck_draw.audit_ok_rows);
(k) `audit --facts F --format json`, the checks driver-kernel-modules and container-engine-gpu-path: KMOD_GPUS (each
    GPU x1 with driver.kernel_modules open / proprietary, driver.source nvml or absent as in a hand-written report,
    release 0.5.23) and DOCKER_BOXES
    (tests/cases/image-docker-no-nvidia-runtime with each started_by x each daemon state of DAEMONS): one row per
    distinct (box, check, reasons' rule / observed / result) whose status is ok;
(t) `triage LOG --facts F --format json` of the three tests/realworld cases whose signature is one of the three
    newest: one row per (case, named signature, its fix).

Draw: random.Random(20270101); per population its rows sorted by their JSON text, shuffled, the first k (g: 6, b: 3,
k: 2, t: 1), 12 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck20_draw import _LLAMA3
from factcheck23_draw import _v
from factcheck27_draw import _box, _run
from factcheck_draw import ROOT, audit_ok_rows, draw, final_releases, stackcheck_json, write_models

SEED = 20270101
_QWEN3MOE: dict[str, Any] = {
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
    "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
    "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768, "intermediate_size": 6144,
    "vocab_size": 151936, "torch_dtype": "bfloat16",
}  # fmt: skip
_DSV32: dict[str, Any] = {
    "architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32", "hidden_size": 7168,
    "num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512,
    "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 64, "n_routed_experts": 256,
    "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "intermediate_size": 18432,
    "vocab_size": 129280, "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                            "weight_block_size": [128, 128]},
}  # fmt: skip


def _mixed(algo: str | None, **more: Any) -> dict[str, Any]:
    """A Qwen3 MoE ModelOpt MIXED_PRECISION checkpoint (config.json's quantization_config): NVFP4 attention, experts
    of ALGO (None: experts not listed, unquantized)."""
    layers: dict[str, Any] = {"model.layers.0.self_attn.qkv_proj": {"quant_algo": "NVFP4", "group_size": 16}}
    if algo is not None:
        layers.update({f"model.layers.{n}.mlp.experts.{e}.{p}": {"quant_algo": algo, **more}
                       for n in (0, 1) for e in (0, 1) for p in ("gate_proj", "down_proj")})  # fmt: skip
    quant = {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "kv_cache_quant_algo": None,
             "quantized_layers": layers}  # fmt: skip
    return {**_QWEN3MOE, "quantization_config": quant}


MODELS: dict[str, dict[str, Any]] = {
    "llama3": _LLAMA3,
    "qwen3moe": _QWEN3MOE,
    "dsv32": _DSV32,
    "mixed-fp8-block": _mixed("FP8_BLOCK_SCALES", group_size=128),
    "mixed-mxfp8": _mixed("MXFP8"),
    "mixed-unquant": _mixed(None),
}
_V2 = "--moe-a2a-backend deepep_v2 --ep 8"
# name: (model, flags, first release, last release)
LAUNCHES: dict[str, tuple[str, str, tuple[int, ...], tuple[int, ...]]] = {
    "fa4-kv-auto": ("llama3", "--attention-backend fa4", (0, 5, 3), (0, 5, 23)),
    "symm-mem-linked": ("llama3", "--enable-symm-mem", (0, 5, 10), (0, 5, 23)),
    "v2-mixed-fp8-block": ("mixed-fp8-block", _V2, (0, 5, 19), (0, 5, 23)),
    "v2-mixed-mxfp8": ("mixed-mxfp8", _V2, (0, 5, 19), (0, 5, 23)),
    "v2-mixed-unquant": ("mixed-unquant", _V2, (0, 5, 19), (0, 5, 23)),
    "dsa-dcp-decode-fa3": ("dsv32", "--dcp-size 2 --decode-attention-backend fa3", (0, 5, 15), (0, 5, 23)),
    "dsa-dcp-prefill-dsa-decode-flashmla": (
        "dsv32", "--dcp-size 2 --prefill-attention-backend dsa --decode-attention-backend flashmla",
        (0, 5, 15), (0, 5, 23)),
    "nvfp4-online": ("qwen3moe", "--quantization nvfp4_online", (0, 5, 14), (0, 5, 23)),
    "bash-c-cd": ("llama3", "", (0, 5, 10), (0, 5, 23)),
}  # fmt: skip
# name: (GPU name, compute capability, machine, GPU count)
GPU_BOXES: dict[str, tuple[str, str, str, int]] = {
    "h100": ("NVIDIA H100 80GB HBM3", "9.0", "x86_64", 8),
    "b200": ("NVIDIA B200", "10.0", "x86_64", 8),
}
AUDIT_BOXES: dict[str, tuple[str, str, str, int]] = {
    "gh200": ("NVIDIA GH200 480GB", "9.0", "aarch64", 1),
    "l40s": ("NVIDIA L40S", "8.9", "x86_64", 4),
    "a10": ("NVIDIA A10", "8.6", "x86_64", 1),
}
KMOD_GPUS: dict[str, tuple[str, str, str, int]] = {
    "a100": ("NVIDIA A100-SXM4-80GB", "8.0", "x86_64", 1),
    "l40s": ("NVIDIA L40S", "8.9", "x86_64", 1),
    "h100": ("NVIDIA H100 80GB HBM3", "9.0", "x86_64", 1),
    "gh200": AUDIT_BOXES["gh200"],
    "b200": ("NVIDIA B200", "10.0", "x86_64", 1),
    "pro6000": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", "x86_64", 1),
    "gb10": ("NVIDIA GB10", "12.1", "aarch64", 1),
}
_PROC = "/proc/1234/environ"
# name: changes to tests/cases/image-docker-no-nvidia-runtime's docker_daemon section
DAEMONS: dict[str, dict[str, Any]] = {
    "runtime-hook-on-path": {"gpu_hooks": {"nvidia-container-runtime-hook": "/usr/bin/nvidia-container-runtime-hook",
                                           "nvidia-cdi-hook": None},
                             "gpu_hooks_path": _PROC, "gpu_hooks_newer_than_daemon": [], "started_at": 1764900000},
    "nvidia-runtime-in-config": {"runtimes": ["nvidia"], "registered": ["io.containerd.runc.v2", "nvidia", "runc"],
                                 "sources": {"runtimes": "/etc/docker/daemon.json", "flags": "/proc/1234/cmdline"},
                                 "started_at": 1764900000},
    "nvidia-runtime-flag": {"flag_runtimes": ["nvidia"], "started_at": 1764900000},
    "cdi-spec": {"features_cdi": True, "cdi_specs": [{"file": "/etc/cdi/nvidia.yaml", "kind": "nvidia.com/gpu"}],
                 "started_at": 1764900000},
}  # fmt: skip
STARTED_BY = ["docker-gpus", "nvidia-runtime", "cdi-device"]
TRIAGE_CASES = [
    "nvidia-all-394-nvrm-api-mismatch-595",
    "skypilot-10468-azure-a10-grid535-vgpu18",
    "start9-3465-proprietary-kmod-gb10",
]


def _releases(first: tuple[int, ...], last: tuple[int, ...] = (0, 5, 23)) -> list[str]:
    return [r for r in final_releases() if first <= _v(r) <= last]


_DROP = object()


def _edit(path: Path, name: str, change: dict[str, Any]) -> Path:
    """A copy of facts file PATH named NAME beside it, with CHANGE's dotted keys set in its facts (_DROP: removed)."""
    doc = json.loads(path.read_text())
    for dotted, value in change.items():
        node = doc["facts"]
        *parents, key = dotted.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        if value is _DROP:
            node.pop(key, None)
        else:
            node[key] = copy.deepcopy(value)
    new = path.parent / name
    new.write_text(json.dumps(doc))
    return new


def gate_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    models = out / "models"
    for box, spec in GPU_BOXES.items():
        for rel in _releases((0, 5, 3)):
            facts = _box(out, rel, spec)
            linked = _edit(facts, f"linked-{box}-{rel}.json", {"jit.libnccl_so_found": True,
                           "jit.libnccl_so": "/usr/lib/x86_64-linux-gnu/libnccl.so"})  # fmt: skip
            for name, (model, flags, first, last) in LAUNCHES.items():
                if not first <= _v(rel) <= last:
                    continue
                path = linked if name == "symm-mem-linked" else facts
                args = ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--"]
                if name == "bash-c-cd":
                    shell = f"cd {models} && python3 -m sglang.launch_server --model-path ./{model} --tp 8"
                    line = ["bash", "-c", shell]
                else:
                    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(models / model), "--tp", "8"]
                    line += flags.split()
                if _run([*args, *line]).get("decision") == "allow":
                    rows.append({"pop": "g", "box": box, "sglang": rel, "launch": name, "model": model,
                                 "flags": flags})  # fmt: skip
        print(f"g {box}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def audit_rows(out: Path) -> list[dict[str, Any]]:
    return audit_ok_rows(AUDIT_BOXES, _releases((0, 5, 20)), lambda box, rel: _box(out, rel, AUDIT_BOXES[box]))


def _check_ok_rows(boxes: list[tuple[dict[str, Any], Path]], checks: tuple[str, ...]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for tags, path in boxes:
        doc = stackcheck_json(["audit", "--facts", str(path), "--format", "json"])
        for c in doc.get("checks") or []:
            if c.get("id") not in checks or c.get("status") != "ok":
                continue
            reasons = [[r.get("rule"), r.get("observed"), r.get("result")] for r in c.get("reasons") or []]
            row = {"pop": "k", **tags, "check": c.get("id"), "reasons": reasons}
            seen.setdefault(json.dumps(row, sort_keys=True), row)
    print(f"k: {len(seen)}", file=sys.stderr, flush=True)
    return list(seen.values())


def check_rows(out: Path) -> list[dict[str, Any]]:
    boxes: list[tuple[dict[str, Any], Path]] = []
    for gpu, spec in KMOD_GPUS.items():
        facts = _box(out, "0.5.23", spec)
        for flavour in ("open", "proprietary"):
            for source, value in (("nvml", "nvml"), ("hand-written", _DROP)):
                change = {"driver.kernel_modules": flavour, "driver.source": value}
                path = _edit(facts, f"kmod-{gpu}-{flavour}-{source}.json", change)
                boxes.append(({"box": gpu, "kernel_modules": flavour, "driver_source": source}, path))
    base = out / "docker-base.json"
    base.write_text((ROOT / "tests" / "cases" / "image-docker-no-nvidia-runtime" / "facts.json").read_text())
    for started in STARTED_BY:
        for state, change in DAEMONS.items():
            daemon = {**json.loads(base.read_text())["facts"]["docker_daemon"], **change}
            path = _edit(base, f"docker-{started}-{state}.json", {"image.started_by": started, "docker_daemon": daemon})
            boxes.append(({"box": "image-docker", "started_by": started, "daemon": state}, path))
    return _check_ok_rows(boxes, ("driver-kernel-modules", "container-engine-gpu-path"))


def triage_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for case in TRIAGE_CASES:
        where = ROOT / "tests" / "realworld" / case
        doc = _run(["triage", str(where / "server.log"), "--facts", str(where / "facts.json"), "--format", "json"])
        rows.append({"pop": "t", "case": case, "triage": doc})
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    g = gate_rows(out)
    b = audit_rows(out)
    k = check_rows(out)
    t = triage_rows()
    draw(out, SEED, [(6, g), (3, b), (2, k), (1, t)])


if __name__ == "__main__":
    main()
