"""The sixty-fifth fact-check sample's populations and seeded draw (bench/factcheck65_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck65_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the nineteenth session's first-wave merges allow or call ok (git log
--first-parent 609ecdca..159561ae: imend12, icov2, icov1, ifc64, irev80, iperf40, irobust11): timeout's DURATION as
GNU coreutils reads it (imend12: an exponent, inf, a trailing dot, a suffix), srun's short options placed from one
table (irev80: -b, -F, -r placed; -I / -K / -k taking the rest of their cluster), the SeaweedFS and TensorCast
backends with the extra-config keys ifc64 asks for, and BF16 MoE models whose top-k renormalizes on SM100 with the
trtllm-gen cubins present (ifc64's launch.model_moe_renormalize, irev80's MoE facts, irobust11's MoE reading). A row
equal to one an earlier sample drew is left out.

(t) `gate --facts` of Llama 3 `--tp 8` at 0.5.23 on the H200 box (factcheck49._box, 8 GPUs) behind each timeout form
    of T_FORMS, as argv words and inside `bash -c TEXT`: one row per allow;
(r) `gate --facts` of Llama 3 `--tp 2` / `--tp 8` at 0.5.23 behind each srun prefix of R_PREFIXES: one row per allow;
(k) `gate --facts` of Llama 3 `--tp 2 --enable-hierarchical-cache --hicache-storage-backend B --hicache-storage-
    backend-extra-config C` at K_RELEASES with the backend's package installed, each config of K_CONFIGS: one row per
    allow;
(b) `gate --facts` of a BF16 MoE model of B_MODELS (this script's own config.json files) with the flags of B_FLAGS on
    the box with the GPUs of factcheck63's M_GPUS and the cubins in a place of B_SOURCES (factcheck63_draw._moe_box):
    one row per allow.

Draw: random.Random(20270203); per population the rows sorted by JSON text, shuffled, the first k (t 4, r 4, k 3,
b 4), 15 rows. Nothing is replaced after the draw.
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

SEED = 20270203
LAUNCH = ["python3", "-m", "sglang.launch_server"]


def _args(path: Path, line: list[str]) -> list[str]:
    return ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]


def _allowed(args: list[str]) -> bool:
    return stackcheck_json_or_error(args).get("decision") == "allow"


def _llama(out: Path, tp: str) -> list[str]:
    return [*LAUNCH, "--model-path", str(out / "models" / "llama3"), "--tp", tp]


# ---- (t) timeout's DURATION (imend12) -------------------------------------------------------------------------------

T_FORMS: dict[str, list[str]] = {
    "exp": ["timeout", "1.5e3"],
    "exp-s": ["timeout", "1.5e3s"],
    "exp-upper": ["timeout", "1E2"],
    "exp-neg": ["timeout", "1e-3"],
    "exp-plus": ["timeout", "2e+2m"],
    "inf": ["timeout", "inf"],
    "infinity": ["timeout", "infinity"],
    "inf-h": ["timeout", "infh"],
    "trailing-dot": ["timeout", "5."],
    "leading-dot": ["timeout", ".5"],
    "dot-d": ["timeout", "5.d"],
    "zero": ["timeout", "0"],
    "zero-exp": ["timeout", "0e5"],
    "huge": ["timeout", "1e400"],
    "k-exp": ["timeout", "-k", "1e1", "10"],
    "kill-after-dot": ["timeout", "--kill-after=.5", "inf"],
    "s-int-dot": ["timeout", "-s", "INT", "5."],
    "preserve-exp": ["timeout", "--preserve-status", "3e1"],
    "foreground-inf": ["timeout", "--foreground", "inf"],
    "v-exp": ["timeout", "-v", "1.5e3"],
}


def timeout_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    path = _box(out, "0.5.23", None)
    launch = _llama(out, "8")
    for name, words in T_FORMS.items():
        for form in ("argv", "bash-c"):
            line = [*words, *launch] if form == "argv" else ["bash", "-c", shlex.join([*words, *launch])]
            if _allowed(_args(path, line)):
                rows.append({"pop": "t", "sglang": "0.5.23", "form": name, "shell": form})
    print(f"t: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (r) srun's short options from one table (irev80) --------------------------------------------------------------

R_PREFIXES: dict[str, list[str]] = {
    "b": ["srun", "-b", "now"],
    "b-joined": ["srun", "-bnow+1"],
    "r0": ["srun", "-r", "0"],
    "r1-N1": ["srun", "-r1", "-N1"],
    "F-N1": ["srun", "-F", "/etc/slurm/nodes", "-N1"],
    "I": ["srun", "-I"],
    "I5": ["srun", "-I5"],
    "K": ["srun", "-K"],
    "K1": ["srun", "-K1"],
    "k": ["srun", "-k"],
    "kn1": ["srun", "-kn1"],
    "Ikn1": ["srun", "-Ikn1"],
    "Kn1": ["srun", "-Kn1"],
    "kN1": ["srun", "-kN1"],
    "kG8": ["srun", "-kG8"],
    "IN1-G8": ["srun", "-IN1", "-G8"],
    "l": ["srun", "-l"],
    "lk": ["srun", "-lk"],
    "Q": ["srun", "-Q"],
    "u": ["srun", "-u"],
    "X": ["srun", "-X"],
    "v": ["srun", "-vv"],
    "s": ["srun", "-s"],
    "H": ["srun", "-H"],
    "O": ["srun", "-O"],
    "E": ["srun", "-E"],
    "Z": ["srun", "-Z"],
}


def srun_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    path = _box(out, "0.5.23", None)
    for name, prefix in R_PREFIXES.items():
        for tp in ("2", "8"):
            if _allowed(_args(path, [*prefix, *_llama(out, tp)])):
                rows.append({"pop": "r", "sglang": "0.5.23", "prefix": name, "layout": f"tp{tp}"})
    print(f"r: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (k) SeaweedFS and TensorCast with the keys ifc64 asks for -----------------------------------------------------

K_RELEASES = ["0.5.21", "0.5.22", "0.5.23"]
#: name: (the backend, the distributions installed on the box)
K_BACKENDS: dict[str, tuple[str, dict[str, str]]] = {
    "tensorcast": ("tensorcast", {"tensorcast": "0.1.0"}),
    "seaweedfs": ("seaweedfs", {"boto3": "1.40.0"}),
}
#: name: the extra config (@F: the file of that name written in OUT/storage)
K_CONFIGS: dict[str, str] = {
    "sw-endpoint": json.dumps({"endpoint": "http://10.0.0.1:8333"}),
    "sw-endpoint-bucket": json.dumps({"endpoint": "http://10.0.0.1:8333", "bucket_name": "kv"}),
    "sw-endpoint-host": json.dumps({"endpoint": "10.0.0.1:8333"}),
    "sw-endpoint-blank": json.dumps({"endpoint": " "}),
    "sw-endpoint-prefetch": json.dumps({"endpoint": "http://10.0.0.1:8333", "prefetch_threshold": 256}),
    "sw-endpoint-extra-key": json.dumps({"endpoint": "http://10.0.0.1:8333", "region": "us-east-1"}),
    "sw-endpoint-file": "@F:sw.json",
    "tc-nested": json.dumps({"tensorcast": {"daemon_address": "10.0.0.1:7000"}}),
    "tc-dotted-literal": json.dumps({"tensorcast.daemon_address": "10.0.0.1:7000"}),
    "tc-nested-extra": json.dumps({"tensorcast": {"daemon_address": "10.0.0.1:7000", "pool_size": 4}}),
    "tc-nested-unix": json.dumps({"tensorcast": {"daemon_address": "unix:///run/tc.sock"}}),
    "tc-nested-file": "@F:tc.json",
}
K_FILES = {
    "sw.json": json.dumps({"endpoint": "http://10.0.0.1:8333"}),
    "tc.json": json.dumps({"tensorcast": {"daemon_address": "10.0.0.1:7000"}}),
}


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
            for cname, text in K_CONFIGS.items():
                extra = text.replace("@F:", f"@{cfg}/")
                line = [*_llama(out, "2"), "--enable-hierarchical-cache", "--hicache-storage-backend", backend,
                        "--hicache-storage-backend-extra-config", extra]  # fmt: skip
                if _allowed(_args(path, line)):
                    rows.append({"pop": "k", "sglang": rel, "backend": name, "config": cname})
        print(f"k {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (b) BF16 MoE models whose top-k renormalizes, on SM100 with the cubins present (ifc64, irev80, irobust11) -----

_MLA = {"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128}


def _cfg(arch: str, model_type: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"architectures": [arch], "model_type": model_type, "hidden_size": 4096,
                            "num_hidden_layers": 8, "num_attention_heads": 32, "num_key_value_heads": 8,
                            "head_dim": 128, "torch_dtype": "bfloat16", "vocab_size": 32000,
                            "max_position_embeddings": 32768}  # fmt: skip
    base.update(extra)
    return base


B_MODELS: dict[str, dict[str, Any]] = {
    "qwen3moe-norm": _cfg("Qwen3MoeForCausalLM", "qwen3_moe", num_experts=64, num_experts_per_tok=8,
                          moe_intermediate_size=1024, norm_topk_prob=True),
    "qwen2moe-norm": _cfg("Qwen2MoeForCausalLM", "qwen2_moe", num_experts=64, num_experts_per_tok=8,
                          moe_intermediate_size=1024, shared_expert_intermediate_size=4096, norm_topk_prob=True),
    "ds2-norm": _cfg("DeepseekV2ForCausalLM", "deepseek_v2", n_routed_experts=64, num_experts_per_tok=6,
                     moe_intermediate_size=1024, n_shared_experts=2, first_k_dense_replace=1, norm_topk_prob=True,
                     topk_method="greedy", **_MLA),
    "ds3-norm": _cfg("DeepseekV3ForCausalLM", "deepseek_v3", n_routed_experts=64, num_experts_per_tok=8,
                     moe_intermediate_size=1024, n_shared_experts=1, first_k_dense_replace=1, norm_topk_prob=True,
                     **_MLA),
    "glm45-norm": _cfg("Glm4MoeForCausalLM", "glm4_moe", n_routed_experts=64, num_experts_per_tok=8,
                       moe_intermediate_size=1024, n_shared_experts=1, first_k_dense_replace=1, norm_topk_prob=True),
    "olmoe-norm": _cfg("OlmoeForCausalLM", "olmoe", num_experts=64, num_experts_per_tok=8,
                       intermediate_size=1024, norm_topk_prob=True),
    "mixtral": _cfg("MixtralForCausalLM", "mixtral", num_local_experts=8, num_experts_per_tok=2,
                    intermediate_size=14336),
}  # fmt: skip
B_RELEASES = ["0.5.20", "0.5.23"]
B_SOURCES = ["pkg", "dir-nodl"]
B_FLAGS: dict[str, tuple[str, ...]] = {
    "tp8": ("--tp", "8"),
    "tp8-trtllm": ("--tp", "8", "--moe-runner-backend", "flashinfer_trtllm"),
    "tp8-ep8-trtllm": ("--tp", "8", "--ep-size", "8", "--moe-runner-backend", "flashinfer_trtllm"),
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


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, {"llama3": LLAMA3, **B_MODELS})
    pops = [
        (4, timeout_rows(out)),
        (4, srun_rows(out)),
        (3, storage_rows(out)),
        (4, moe_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck65_drawn.json")


if __name__ == "__main__":
    main()
