"""The sixty-sixth fact-check sample's populations and seeded draw (bench/factcheck66_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck66_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the nineteenth session's second-wave merges allow or call ok (git log
--first-parent 159561ae..eeac2361: imend13, iasan, irev81, ifc65, irobust12, imend14, irecmodel, ifixreal): srun
inside an allocation judged as a step, with -w / -F / SLURM_HOSTFILE naming nodes (imend13, irobust12); the values
nice / stdbuf / ionice / taskset / chrt / numactl take before the launch (irobust12, imend14); MoE config.json files
whose router keys ifc65's model-config-keys and irobust12's norm_topk_prob reading pass, on SM100 with the cubins
present (ifc65, irobust12, irecmodel, iasan); SeaweedFS endpoints ifc65's scheme check and irobust12's typed config
pass. A row equal to one an earlier sample drew is left out.

(s) `gate --facts` of Llama 3 `--tp 2` / `--tp 8` at 0.5.23 on the H200 box (factcheck49._box) behind
    `env SLURM_JOB_ID=4242 [VAR=VALUE] srun PREFIX` for each of S_PREFIXES (@H1 / @H2: a host file of one / two
    nodes written under OUT/slurm): one row per allow;
(n) `gate --facts` of Llama 3 `--tp 8` at 0.5.23 behind each runner of N_RUNNERS: one row per allow;
(m) `gate --facts` of an MoE model of M_MODELS (this script's own config.json files) with the flags of M_FLAGS at
    0.5.23 on factcheck63's _moe_box (B200 / GB200, the cubins in the flashinfer-cubin package): one row per allow;
(w) `gate --facts` of Llama 3 `--tp 2 --enable-hierarchical-cache --hicache-storage-backend seaweedfs
    --hicache-storage-backend-extra-config C` at 0.5.22 / 0.5.23 with boto3 1.40.0 installed, each C of W_CONFIGS:
    one row per allow.

Draw: random.Random(20270204); per population the rows sorted by JSON text, shuffled, the first k (s 4, n 4, m 4,
w 3), 15 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck49_draw import _box
from factcheck63_draw import _moe_box
from factcheck_draw import draw_undrawn, stackcheck_json_or_error, write_models
from gate_cli import LLAMA3

SEED = 20270204
LAUNCH = ["python3", "-m", "sglang.launch_server"]


def _args(path: Path, line: list[str]) -> list[str]:
    return ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]


def _allowed(args: list[str]) -> bool:
    return stackcheck_json_or_error(args).get("decision") == "allow"


def _llama(out: Path, tp: str) -> list[str]:
    return [*LAUNCH, "--model-path", str(out / "models" / "llama3"), "--tp", tp]


# ---- (s) srun inside an allocation, the nodes named (imend13, irobust12) --------------------------------------------

#: name: (variables set beside SLURM_JOB_ID, srun's words)
S_PREFIXES: dict[str, tuple[dict[str, str], list[str]]] = {
    "plain": ({}, []),
    "N1": ({}, ["-N1"]),
    "N2": ({}, ["-N2"]),
    "n2": ({}, ["-n", "2"]),
    "w1": ({}, ["-w", "gpu01"]),
    "w2": ({}, ["-w", "gpu01,gpu02"]),
    "w-range": ({}, ["-w", "gpu[01-02]"]),
    "nodelist-eq": ({}, ["--nodelist=gpu01"]),
    "w1-N1": ({}, ["-w", "gpu01", "-N1"]),
    "F1": ({}, ["-F", "@H1"]),
    "F2": ({}, ["-F", "@H2"]),
    "F2-N1": ({}, ["-F", "@H2", "-N1"]),
    "F-missing": ({}, ["-F", "/nonexistent/hosts"]),
    "hostfile1": ({"SLURM_HOSTFILE": "@H1"}, []),
    "hostfile2": ({"SLURM_HOSTFILE": "@H2"}, []),
    "hostfile2-N1": ({"SLURM_HOSTFILE": "@H2"}, ["-N1"]),
    "x": ({}, ["-x", "gpu02"]),
    "overlap": ({}, ["--overlap"]),
    "exclusive": ({}, ["--exclusive"]),
    "ntasks-per-node2": ({}, ["--ntasks-per-node=2"]),
    "gpus8": ({}, ["--gpus=8"]),
    "nnodes-env": ({"SLURM_NNODES": "2"}, []),
}
S_HOSTS = {"H1": "gpu01\n", "H2": "gpu01\ngpu02\n"}


def srun_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    path = _box(out, "0.5.23", None)
    hosts = out / "slurm"
    hosts.mkdir(parents=True, exist_ok=True)
    for name, body in S_HOSTS.items():
        (hosts / name).write_text(body)

    def place(word: str) -> str:
        return str(hosts / word[1:]) if word.startswith("@H") else word

    for name, (env, words) in S_PREFIXES.items():
        prefix = ["env", "SLURM_JOB_ID=4242", *(f"{k}={place(v)}" for k, v in env.items()), "srun"]
        prefix += [place(w) for w in words]
        for tp in ("2", "8"):
            if _allowed(_args(path, [*prefix, *_llama(out, tp)])):
                rows.append({"pop": "s", "sglang": "0.5.23", "prefix": name, "layout": f"tp{tp}"})
    print(f"s: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (n) the values runners take (irobust12, imend14) ----------------------------------------------------------------

N_RUNNERS: dict[str, list[str]] = {
    "nice-19": ["nice", "-n", "19"],
    "nice-neg20": ["nice", "-n", "-20"],
    "nice-40": ["nice", "-n", "40"],
    "nice-plus": ["nice", "--adjustment=+5"],
    "stdbuf-oL-eL": ["stdbuf", "-oL", "-eL"],
    "stdbuf-o0": ["stdbuf", "-o0"],
    "stdbuf-i0": ["stdbuf", "-i0"],
    "stdbuf-o1M": ["stdbuf", "--output=1M"],
    "stdbuf-o1KB": ["stdbuf", "-o", "1KB"],
    "ionice-c3": ["ionice", "-c", "3"],
    "ionice-c1": ["ionice", "-c1", "-n0"],
    "ionice-idle": ["ionice", "-c", "idle"],
    "ionice-c2-n8": ["ionice", "-c2", "-n8"],
    "ionice-n3": ["ionice", "-n", "3"],
    "ionice-t": ["ionice", "-t", "-c", "1"],
    "taskset-c": ["taskset", "-c", "0-7"],
    "taskset-mask": ["taskset", "0xff"],
    "taskset-stride": ["taskset", "-c", "0-15:2"],
    "taskset-big": ["taskset", "-c", "4096"],
    "chrt-f99": ["chrt", "-f", "99"],
    "chrt-r1": ["chrt", "-r", "1"],
    "chrt-o0": ["chrt", "-o", "0"],
    "chrt-b0": ["chrt", "-b", "0"],
    "chrt-i0": ["chrt", "-i", "0"],
    "chrt-f0": ["chrt", "-f", "0"],
    "chrt-prio-only": ["chrt", "10"],
    "numactl-bind": ["numactl", "--cpunodebind=0", "--membind=0"],
    "numactl-N-m": ["numactl", "-N", "0", "-m", "0"],
    "numactl-interleave": ["numactl", "--interleave=all"],
    "numactl-C": ["numactl", "-C", "0-7"],
}


def runner_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    path = _box(out, "0.5.23", None)
    for name, prefix in N_RUNNERS.items():
        if _allowed(_args(path, [*prefix, *_llama(out, "8")])):
            rows.append({"pop": "n", "sglang": "0.5.23", "runner": name})
    print(f"n: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (m) MoE router keys as config.json states them (ifc65, irobust12, irecmodel, iasan) ----------------------------

_MLA = {"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128}


def _cfg(arch: str, model_type: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"architectures": [arch], "model_type": model_type, "hidden_size": 4096,
                            "num_hidden_layers": 8, "num_attention_heads": 32, "num_key_value_heads": 8,
                            "head_dim": 128, "torch_dtype": "bfloat16", "vocab_size": 32000,
                            "max_position_embeddings": 32768}  # fmt: skip
    base.update(extra)
    return base


_DS3 = {"n_routed_experts": 64, "num_experts_per_tok": 8, "moe_intermediate_size": 1024, "n_shared_experts": 1,
        "first_k_dense_replace": 1, "n_group": 8, "topk_group": 4, "routed_scaling_factor": 2.5, **_MLA}  # fmt: skip
_KEYS = {"topk_method": "noaux_tc", "scoring_func": "sigmoid", "moe_layer_freq": 1}
_QWEN3 = {"num_experts": 64, "num_experts_per_tok": 8, "moe_intermediate_size": 1024}

M_MODELS: dict[str, dict[str, Any]] = {
    "ds3-full": _cfg("DeepseekV3ForCausalLM", "deepseek_v3", **_DS3, **_KEYS, norm_topk_prob=True),
    "ds3-null-keys": _cfg("DeepseekV3ForCausalLM", "deepseek_v3", **_DS3, topk_method=None, scoring_func=None,
                          moe_layer_freq=None, norm_topk_prob=True),
    "ds3-freq0": _cfg("DeepseekV3ForCausalLM", "deepseek_v3", **_DS3, **{**_KEYS, "moe_layer_freq": 0},
                      norm_topk_prob=True),
    "ds3-freq2": _cfg("DeepseekV3ForCausalLM", "deepseek_v3", **_DS3, **{**_KEYS, "moe_layer_freq": 2},
                      norm_topk_prob=True),
    "ds3-softmax": _cfg("DeepseekV3ForCausalLM", "deepseek_v3", **_DS3, **{**_KEYS, "scoring_func": "softmax"},
                        norm_topk_prob=True),
    "ds3-greedy": _cfg("DeepseekV3ForCausalLM", "deepseek_v3", **_DS3, **{**_KEYS, "topk_method": "greedy"},
                       norm_topk_prob=True),
    "ds3-norm-str": _cfg("DeepseekV3ForCausalLM", "deepseek_v3", **_DS3, **_KEYS, norm_topk_prob="true"),
    "ds3-norm-1": _cfg("DeepseekV3ForCausalLM", "deepseek_v3", **_DS3, **_KEYS, norm_topk_prob=1),
    "ds3-norm-absent": _cfg("DeepseekV3ForCausalLM", "deepseek_v3", **_DS3, **_KEYS),
    "ds3-all-dense": _cfg("DeepseekV3ForCausalLM", "deepseek_v3", **{**_DS3, "first_k_dense_replace": 8},
                          norm_topk_prob=True),
    "qwen3-norm-1": _cfg("Qwen3MoeForCausalLM", "qwen3_moe", **_QWEN3, norm_topk_prob=1),
    "qwen3-norm-null": _cfg("Qwen3MoeForCausalLM", "qwen3_moe", **_QWEN3, norm_topk_prob=None),
    "qwen3-norm-absent": _cfg("Qwen3MoeForCausalLM", "qwen3_moe", **_QWEN3),
    "glm45-norm-str": _cfg("Glm4MoeForCausalLM", "glm4_moe", **{k: v for k, v in _DS3.items() if k not in _MLA},
                           norm_topk_prob="True"),
}  # fmt: skip
M_GPUS = ["b200", "gb200"]
M_FLAGS: dict[str, tuple[str, ...]] = {
    "tp8": ("--tp", "8"),
    "tp8-trtllm": ("--tp", "8", "--moe-runner-backend", "flashinfer_trtllm"),
}


def moe_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for gpu in M_GPUS:
        path = _moe_box(out, "0.5.23", gpu, "pkg")
        for model in M_MODELS:
            for fname, flags in M_FLAGS.items():
                line = [*LAUNCH, "--model-path", str(out / "models" / model), *flags]
                if _allowed(_args(path, line)):
                    rows.append({"pop": "m", "sglang": "0.5.23", "gpu": gpu, "model": model, "flags": fname})
    print(f"m: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (w) SeaweedFS endpoints (ifc65, irobust12) ---------------------------------------------------------------------

W_RELEASES = ["0.5.22", "0.5.23"]
W_CONFIGS: dict[str, dict[str, Any]] = {
    "https": {"endpoint": "https://s3.example.com:8333"},
    "upper-scheme": {"endpoint": "HTTP://10.0.0.1:8333"},
    "trailing-slash": {"endpoint": "http://10.0.0.1:8333/"},
    "path": {"endpoint": "http://10.0.0.1:8333/seaweed"},
    "userinfo": {"endpoint": "http://user:pw@10.0.0.1:8333"},
    "one-label": {"endpoint": "http://seaweed:8333"},
    "underscore": {"endpoint": "http://seaweed_fs:8333"},
    "port-big": {"endpoint": "http://10.0.0.1:99999"},
    "port-empty": {"endpoint": "http://10.0.0.1:"},
    "ipv6": {"endpoint": "http://[::1]:8333"},
    "query": {"endpoint": "http://10.0.0.1:8333?x=1"},
    "leading-space": {"endpoint": " http://10.0.0.1:8333"},
    "no-port": {"endpoint": "http://10.0.0.1"},
    "bucket-upper": {"endpoint": "http://10.0.0.1:8333", "bucket_name": "KV_Cache"},
    "bucket-empty": {"endpoint": "http://10.0.0.1:8333", "bucket_name": ""},
    "keys": {"endpoint": "http://10.0.0.1:8333", "aws_access_key_id": "a", "aws_secret_access_key": "b"},
    "endpoint-int": {"endpoint": 8333},
    "endpoint-list": {"endpoint": ["http://10.0.0.1:8333"]},
}


def seaweed_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in W_RELEASES:
        doc = json.loads(_box(out, rel, None).read_text())
        doc["facts"]["packages"]["boto3"] = {"installed": True, "version": "1.40.0", "dist_version": "1.40.0",
                                             "location": "/usr/lib/python3/dist-packages", "editable": False,
                                             "copies": 1}  # fmt: skip
        path = out / "boxes" / f"seaweed-{rel}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(doc))
        for name, cfg in W_CONFIGS.items():
            line = [*_llama(out, "2"), "--enable-hierarchical-cache", "--hicache-storage-backend", "seaweedfs",
                    "--hicache-storage-backend-extra-config", json.dumps(cfg)]  # fmt: skip
            if _allowed(_args(path, line)):
                rows.append({"pop": "w", "sglang": rel, "config": name})
    print(f"w: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, {"llama3": LLAMA3, **M_MODELS})
    pops = [
        (4, srun_rows(out)),
        (4, runner_rows(out)),
        (4, moe_rows(out)),
        (3, seaweed_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck66_drawn.json")


if __name__ == "__main__":
    main()
