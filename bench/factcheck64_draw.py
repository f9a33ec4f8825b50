"""The sixty-fourth fact-check sample's populations and seeded draw (bench/factcheck64_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck64_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the eighteenth session's second-wave merges and the lead's last
commits allow or call ok (git log --first-parent 4563df08..609ecdca: imend11, igap58, irev79, irobust10, icubin3,
iperf39, 86c0454f, 609ecdca): srun's GPU options and environment before the launch (--gres, -G / --gpus with -N,
--gpu-bind / --tres-bind, --exclusive, SLURM_GPUS / SLURM_JOB_NUM_NODES / SLURM_STEP_GRES, option values per
slurm_opt.c), the HiCache storage backends igap58 judged (simm, mori, npu_memcache, tensorcast, seaweedfs) with their
packages installed and Mooncake's inline extra config (irev79), the BF16 MoE models icubin3 follows (DeepSeek-V3,
Qwen3-MoE, GLM-4.5 shapes) on SM100 with the trtllm-gen cubins present, and the shell forms irobust10 / irev79 read
(exec with and without options, flock's options, nohup --, words without a brace list). A row equal to one an earlier
sample drew is left out.

(s) `gate --facts` of Llama 3 `--tp 2` / `--tp 8` at 0.5.23 on the H200 box (factcheck49._box, 8 GPUs) behind each
    prefix of S_PREFIXES: one row per allow;
(k) `gate --facts` of Llama 3 `--tp 2 --enable-hierarchical-cache --hicache-storage-backend B [extra config]` at
    K_RELEASES with the packages of K_BACKENDS installed on the box, each extra config of K_CONFIGS: one row per allow;
(b) `gate --facts` of a BF16 MoE model of B_MODELS (this script's own config.json files) with the flags of B_FLAGS on
    the box with the GPUs of factcheck63's M_GPUS and the cubins in a place of B_SOURCES (factcheck63_draw._moe_box):
    one row per allow;
(x) `gate --facts` of Llama 3 `--tp 8` at 0.5.23 behind each shell form of X_FORMS (bash -c TEXT, TEXT ending where
    the launch begins): one row per allow.

Draw: random.Random(20270202); per population the rows sorted by JSON text, shuffled, the first k (s 6, k 4, b 5,
x 3), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck49_draw import _box
from factcheck63_draw import M_GPUS, _moe_box
from factcheck_draw import draw_undrawn, stackcheck_json_or_error, write_models
from gate_cli import LLAMA3

SEED = 20270202
LAUNCH = ["python3", "-m", "sglang.launch_server"]


def _args(path: Path, line: list[str]) -> list[str]:
    return ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]


def _allowed(args: list[str]) -> bool:
    return stackcheck_json_or_error(args).get("decision") == "allow"


def _llama(out: Path, tp: str) -> list[str]:
    return [*LAUNCH, "--model-path", str(out / "models" / "llama3"), "--tp", tp]


# ---- (s) srun's GPU options and environment (imend11) ------------------------------------------------------------

S_PREFIXES: dict[str, list[str]] = {
    "gres-gpu8": ["srun", "--gres=gpu:8"],
    "gres-gpu-h200-2": ["srun", "--gres=gpu:h200:2"],
    "gres-nic": ["srun", "--gres=nic:1"],
    "N1-G8": ["srun", "-N1", "-G8"],
    "gpus-2": ["srun", "--gpus=2"],
    "gpus-h200-8": ["srun", "--gpus=h200:8"],
    "gpus-per-task-8": ["srun", "--gpus-per-task=8"],
    "gpus-per-node-8": ["srun", "--gpus-per-node=8"],
    "gpu-bind-none": ["srun", "--gpu-bind=none", "--gpus-per-task=8"],
    "tres-bind-none": ["srun", "--tres-bind=gres/gpu:none", "--gpus=8"],
    "exclusive-gpus-per-task": ["srun", "--exclusive", "--gpus-per-task=8"],
    "exclusive-allocation": ["srun", "--exclusive=allocation"],
    "J-overlap": ["srun", "-J", "--overlap"],
    "overlap-gpus": ["srun", "--overlap", "--gpus=8"],
    "N-1-1-gpus": ["srun", "-N", "1-1", "--gpus=8"],
    "n1-c16-gpus": ["srun", "-n1", "-c16", "--gpus=8"],
    "mpi-none-gres": ["srun", "--mpi=none", "--gres=gpu:8"],
    "env-gpus": ["env", "SLURM_GPUS=8", "srun"],
    "env-gpus-nodes1": ["env", "SLURM_GPUS=8", "SLURM_JOB_NUM_NODES=1", "srun"],
    "env-gpus-per-task": ["env", "SLURM_GPUS_PER_TASK=8", "srun"],
    "env-step-gres-line": ["env", "SLURM_STEP_GRES=none", "srun", "--gres=gpu:8"],
    "env-nodes4-N1": ["env", "SLURM_JOB_NUM_NODES=4", "srun", "-N1", "--gpus=8"],
    "env-gpu-bind-line-none": ["env", "SLURM_GPU_BIND=map_gpu:0", "srun", "--gpu-bind=none"],
}


def srun_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    path = _box(out, "0.5.23", None)
    for name, prefix in S_PREFIXES.items():
        for tp in ("2", "8"):
            if _allowed(_args(path, [*prefix, *_llama(out, tp)])):
                rows.append({"pop": "s", "sglang": "0.5.23", "prefix": name, "layout": f"tp{tp}"})
    print(f"s: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (k) the storage backends igap58 judged, and Mooncake's inline extra config (irev79) --------------------------

K_RELEASES = ["0.5.22", "0.5.23"]
#: name: (the backend, the distributions installed on the box)
K_BACKENDS: dict[str, tuple[str, dict[str, str]]] = {
    "simm": ("simm", {"simm": "0.1.0"}),
    "mori": ("mori", {"mori": "0.1.0"}),
    "npu-memcache": ("npu_memcache", {"memcache-hybrid": "1.3.0"}),
    "tensorcast": ("tensorcast", {"tensorcast": "0.1.0"}),
    "seaweedfs": ("seaweedfs", {"boto3": "1.40.0"}),
    "mooncake": ("mooncake", {"mooncake-transfer-engine": "0.3.7"}),
    "file": ("file", {}),
}
#: name: the words after the backend (@F: the file of that name written in OUT/storage)
K_CONFIGS: dict[str, list[str]] = {
    "none": [],
    "inline-empty": ["--hicache-storage-backend-extra-config", "{}"],
    "inline-store": ["--hicache-storage-backend-extra-config",
                     json.dumps({"master_server_address": "10.0.0.1:50051", "protocol": "tcp"})],
    "inline-prefetch": ["--hicache-storage-backend-extra-config", json.dumps({"prefetch_threshold": 256})],
    "file-store": ["--hicache-storage-backend-extra-config", "@F:store.json"],
}  # fmt: skip
K_FILES = {"store.json": json.dumps({"master_server_address": "10.0.0.1:50051", "protocol": "tcp"})}


def storage_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    cfg = out / "storage"
    cfg.mkdir(parents=True, exist_ok=True)
    for name, body in K_FILES.items():
        (cfg / name).write_text(body)
    for rel in K_RELEASES:
        base = json.loads(_box(out, rel, None).read_text())
        for name, (backend, installed) in K_BACKENDS.items():
            doc = json.loads(json.dumps(base))
            for dist, version in installed.items():
                doc["facts"]["packages"][dist] = {"installed": True, "version": version, "dist_version": version,
                                                  "location": "/usr/lib/python3/dist-packages", "editable": False,
                                                  "copies": 1}  # fmt: skip
            path = out / "boxes" / f"storage-{rel}-{name}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(doc))
            for cname, words in K_CONFIGS.items():
                extra = [w.replace("@F:", f"@{cfg}/") for w in words]
                line = [*_llama(out, "2"), "--enable-hierarchical-cache", "--hicache-storage-backend", backend, *extra]
                if _allowed(_args(path, line)):
                    rows.append({"pop": "k", "sglang": rel, "backend": name, "config": cname})
        print(f"k {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (b) BF16 MoE models on SM100 with the cubins present (icubin3) ------------------------------------------------

_MLA = {"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128}


def _cfg(arch: str, model_type: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"architectures": [arch], "model_type": model_type, "hidden_size": 4096,
                            "num_hidden_layers": 8, "num_attention_heads": 32, "num_key_value_heads": 8,
                            "head_dim": 128, "torch_dtype": "bfloat16", "vocab_size": 32000,
                            "max_position_embeddings": 32768}  # fmt: skip
    base.update(extra)
    return base


B_MODELS: dict[str, dict[str, Any]] = {
    "ds3-bf16": _cfg("DeepseekV3ForCausalLM", "deepseek_v3", n_routed_experts=64, num_experts_per_tok=8,
                     moe_intermediate_size=1024, n_shared_experts=1, first_k_dense_replace=1, **_MLA),
    "qwen3moe-bf16": _cfg("Qwen3MoeForCausalLM", "qwen3_moe", num_experts=64, num_experts_per_tok=8,
                          moe_intermediate_size=1024),
    "glm45-bf16": _cfg("Glm4MoeForCausalLM", "glm4_moe", n_routed_experts=64, num_experts_per_tok=8,
                       moe_intermediate_size=1024, n_shared_experts=1, first_k_dense_replace=1),
}  # fmt: skip
B_RELEASES = ["0.5.20", "0.5.23"]
B_SOURCES = ["pkg", "dir-nodl", "sglang-default-cache", "repo-local"]
B_FLAGS: dict[str, tuple[str, ...]] = {
    "tp8": ("--tp", "8"),
    "tp8-trtllm": ("--tp", "8", "--moe-runner-backend", "flashinfer_trtllm"),
    "tp8-ep8": ("--tp", "8", "--ep-size", "8"),
    "tp4": ("--tp", "4"),
}


def moe_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in B_RELEASES:
        for gpu in M_GPUS:
            for source in B_SOURCES:
                path = _moe_box(out, rel, gpu, source)
                for model in B_MODELS:
                    for fname, flags in B_FLAGS.items():
                        line = [*LAUNCH, "--model-path", str(out / "models" / model), *flags]
                        if _allowed(_args(path, line)):
                            rows.append({"pop": "b", "sglang": rel, "gpu": gpu, "source": source, "model": model,
                                         "flags": fname})  # fmt: skip
        print(f"b {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (x) the shell forms irobust10 / irev79 read ------------------------------------------------------------------

X_FORMS: dict[str, str] = {
    "exec": "exec",
    "exec-dashdash": "exec --",
    "exec-a-same": "exec -a python3",
    "exec-a-nice": "exec -a srv nice -n 5",
    "cd-exec": "cd /srv && exec",
    "flock-n": "flock -n /tmp/sg.lock",
    "flock-w": "flock -w 5 /tmp/sg.lock",
    "flock-x-E": "flock -x -E 3 /tmp/sg.lock",
    "nohup-dashdash": "nohup --",
    "nohup-dashdash-nice": "nohup -- nice",
    "env-nohup-dashdash": "env A=1 nohup --",
    "taskset-range": "taskset -c 0-7",
    "numactl-list": "numactl -C 0,1",
    "exec-taskset-range": "exec taskset -c 0-7",
    "timeout-exec-nohup": "exec timeout 1d nohup --",
}


def shell_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    path = _box(out, "0.5.23", None)
    for name, text in X_FORMS.items():
        line = ["bash", "-c", f"{text} {shlex.join(_llama(out, '8'))}"]
        if _allowed(_args(path, line)):
            rows.append({"pop": "x", "sglang": "0.5.23", "form": name})
    print(f"x: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, {"llama3": LLAMA3, **B_MODELS})
    pops = [
        (6, srun_rows(out)),
        (4, storage_rows(out)),
        (5, moe_rows(out)),
        (3, shell_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck64_drawn.json")


if __name__ == "__main__":
    main()
