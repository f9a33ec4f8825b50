"""The seventieth fact-check sample's populations and seeded draw (bench/factcheck70_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck70_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the twentieth session merged (git log --first-parent
f8263d34..3468a612: imend18, irobust15, iperf43): imend18's one reader of srun's node list (gate.srun_hosts: -F / -w /
SLURM_HOSTFILE, host files) and its user-changing runners (sudo / su / runuser / setpriv / systemd-run before taskset /
chrt / ionice); irobust15's dense MLP share (Qwen2 / Qwen3 / Mistral / Qwen2-VL / Qwen2.5-VL), compressed-tensors
W4A16 / W8A16 groups and thinker_config; iperf43's cubin families left unread off major 10. A row equal to one an
earlier sample drew is left out.

(s) `gate --facts` of Llama 3 `--tp 2` / `--tp 8` at 0.5.23 on factcheck49's H200 box behind `[env SLURM_JOB_ID=4242
    VAR=VALUE] srun PREFIX` for each of S_PREFIXES, inside and outside the allocation (@H1 / @H2 / @HD: a host file of
    one node, two nodes, one node twice, written under OUT/slurm): one row per allow, with its ok checks;
(u) `gate --facts` of Llama 3 `--tp 8` at 0.5.23 behind each USER x LIMIT of U_USERS / U_LIMITS (both orders): one
    row per allow, with its ok checks;
(d) `gate --facts` of each model of D_MODELS (this script's own config.json files in the shape of the published
    checkpoints named beside each) at `--tp` 1 / 2 / 4 / 8, 0.5.23, on the H200 box: one row per allow, with its ok
    checks;
(c) `audit --facts` of the cubin case boxes (C_CASES) with their GPUs renamed to each of C_GPUS (none major 10) and the
    flashinfer_cubins section as iperf43's probe leaves it there (families {}, ready null, families_unread): one row
    per ok feature or check of those reading flashinfer_cubins (C_IDS).

Draw: random.Random(20270208); per population the rows sorted by JSON text, shuffled, the first k (s 3, u 2, d 3,
c 2), 10 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck49_draw import _box
from factcheck_draw import ROOT, draw_undrawn, stackcheck_json_or_error, write_box, write_models
from gate_cli import LLAMA3

SEED = 20270208
LAUNCH = ["python3", "-m", "sglang.launch_server"]


def _gate(path: Path, line: list[str]) -> list[str] | None:
    """The ok checks and features of an allowed `gate --facts PATH --dry-run` of LINE, sorted; None if not allowed."""
    doc = stackcheck_json_or_error(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])
    if doc.get("decision") != "allow":
        return None
    oks = [f"check {c['check']}" for c in (doc.get("preflight") or {}).get("checks", []) if c.get("status") == "ok"]
    oks += [f"{r.get('kind')} {r.get('feature')}" for r in doc.get("reasons", []) if r.get("status") == "ok"]
    return sorted(oks)


def _llama(out: Path, tp: str) -> list[str]:
    return [*LAUNCH, "--model-path", str(out / "models" / "llama3"), "--tp", tp]


# ---- (s) srun's node list (imend18's gate.srun_hosts) ---------------------------------------------------------------

#: name: (variables set before srun, srun's words)
S_PREFIXES: dict[str, tuple[dict[str, str], list[str]]] = {
    "w1": ({}, ["-w", "gpu01"]),
    "w2": ({}, ["-w", "gpu01,gpu02"]),
    "w-twice": ({}, ["-w", "gpu01,gpu01"]),
    "w-file": ({}, ["-w", "@H1"]),
    "w-file-dup": ({}, ["-w", "@HD"]),
    "nodelist-eq-file": ({}, ["--nodelist=@H1"]),
    "F1": ({}, ["-F", "@H1"]),
    "F-then-w": ({}, ["-F", "@H1", "-w", "gpu01"]),
    "w-then-F": ({}, ["-w", "gpu01", "-F", "@H1"]),
    "F-missing-then-w": ({}, ["-F", "/nonexistent/hosts", "-w", "gpu01"]),
    "nodefile-empty": ({}, ["--nodefile="]),
    "hostfile1": ({"SLURM_HOSTFILE": "@H1"}, []),
    "hostfile-dup-n1": ({"SLURM_HOSTFILE": "@HD"}, ["-n", "1"]),
    "hostfile-empty": ({"SLURM_HOSTFILE": ""}, []),
    "hostfile-relative-n1": ({"SLURM_HOSTFILE": "hosts"}, ["-n1"]),
    "hostfile-with-w": ({"SLURM_HOSTFILE": "/nonexistent/hosts"}, ["-w", "gpu01"]),
    "arbitrary-w-dup": ({}, ["-m", "arbitrary", "-w", "gpu01,gpu01"]),
    "arbitrary-w2": ({}, ["--distribution=arbitrary", "-w", "gpu01,gpu02"]),
    "arbitrary-w-dup-n1": ({}, ["-m", "arbitrary", "-w", "gpu01,gpu01", "-n", "1"]),
    "w1-N1-n1": ({}, ["-w", "gpu01", "-N1", "-n1"]),
}
S_HOSTS = {"H1": "gpu01\n", "H2": "gpu01\ngpu02\n", "HD": "gpu01\ngpu01\n"}


def srun_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    path = _box(out, "0.5.23", None)
    hosts = out / "slurm"
    hosts.mkdir(parents=True, exist_ok=True)
    for name, body in S_HOSTS.items():
        (hosts / name).write_text(body)

    def place(word: str) -> str:
        return word.replace("@H", f"{hosts}/H", 1) if "@H" in word else word

    for name, (env, words) in S_PREFIXES.items():
        for where, job in (("inside", ["SLURM_JOB_ID=4242"]), ("outside", [])):
            prefix = ["env", *job, *(f"{k}={place(v)}" for k, v in env.items()), "srun", *map(place, words)]
            if prefix == ["env", "srun", *map(place, words)]:
                prefix = prefix[1:]
            for tp in ("2", "8"):
                oks = _gate(path, [*prefix, *_llama(out, tp)])
                if oks is not None:
                    rows.append({"pop": "s", "sglang": "0.5.23", "prefix": name, "job": where, "layout": f"tp{tp}",
                                 "ok": oks})  # fmt: skip
    print(f"s: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (u) another user's process before taskset / chrt / ionice (imend18) --------------------------------------------

U_USERS: dict[str, list[str]] = {
    "sudo-u-env": ["sudo", "-u", "svc", "env", "-i", "PATH=/usr/bin:/bin"],
    "sudo-env": ["sudo", "env", "-i", "PATH=/usr/bin:/bin"],
    "runuser": ["runuser", "-u", "svc", "--"],
    "setpriv": ["setpriv", "--reuid=1000", "--regid=1000", "--clear-groups"],
    "setpriv-keep": ["setpriv", "--inh-caps=+sys_nice", "--ambient-caps=+sys_nice"],
    "systemd-run-scope": ["systemd-run", "--scope"],
    "systemd-run-uid": ["systemd-run", "--scope", "--uid=svc"],
    "gosu": ["gosu", "svc"],
    "chroot": ["chroot", "--userspec=svc", "/"],
}
U_LIMITS: dict[str, list[str]] = {
    "taskset-c": ["taskset", "-c", "0-7"],
    "taskset-mask": ["taskset", "0x1"],
    "chrt-f50": ["chrt", "-f", "50"],
    "chrt-o0": ["chrt", "-o", "0"],
    "ionice-c1": ["ionice", "-c1", "-n0"],
    "ionice-c3": ["ionice", "-c3"],
}


def user_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    path = _box(out, "0.5.23", None)
    for uname, user in U_USERS.items():
        for lname, limit in U_LIMITS.items():
            for order, prefix in (("user-first", [*user, *limit]), ("limit-first", [*limit, *user])):
                oks = _gate(path, [*prefix, *_llama(out, "8")])
                if oks is not None:
                    rows.append({"pop": "u", "sglang": "0.5.23", "user": uname, "limit": lname, "order": order,
                                 "ok": oks})  # fmt: skip
    print(f"u: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (d) dense MLP shares and groups (irobust15) --------------------------------------------------------------------

_AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
_FP8 = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}


def _ct(bits: int, strategy: str, group: int | None) -> dict[str, Any]:
    weights = {"num_bits": bits, "type": "int", "symmetric": True, "strategy": strategy, "group_size": group,
               "dynamic": False, "actorder": None, "observer": "minmax"}  # fmt: skip
    return {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights, "input_activations": None,
                                          "output_activations": None}}}  # fmt: skip


def _dense(arch: str, mtype: str, hidden: int, inter: int, heads: int, kv: int, layers: int, vocab: int,
           **extra: Any) -> dict[str, Any]:  # fmt: skip
    return {"architectures": [arch], "model_type": mtype, "hidden_size": hidden, "intermediate_size": inter,
            "num_attention_heads": heads, "num_key_value_heads": kv, "num_hidden_layers": layers,
            "vocab_size": vocab, "max_position_embeddings": 32768, "torch_dtype": "bfloat16", **extra}  # fmt: skip


_Q72 = ("Qwen2ForCausalLM", "qwen2", 8192, 29568, 64, 8, 80, 152064)  # Qwen/Qwen2.5-72B-Instruct config.json
_Q7 = ("Qwen2ForCausalLM", "qwen2", 3584, 18944, 28, 4, 28, 152064)  # Qwen/Qwen2.5-7B-Instruct
_Q3_4 = ("Qwen3ForCausalLM", "qwen3", 2560, 9728, 32, 8, 36, 151936)  # Qwen/Qwen3-4B (head_dim 128)
_Q3_32 = ("Qwen3ForCausalLM", "qwen3", 5120, 25600, 64, 8, 64, 151936)  # Qwen/Qwen3-32B (head_dim 128)
_M7 = ("MistralForCausalLM", "mistral", 4096, 14336, 32, 8, 32, 32768)  # mistralai/Mistral-7B-Instruct-v0.3
_VIS2 = {"depth": 32, "embed_dim": 1280, "hidden_size": 3584, "num_heads": 16, "mlp_ratio": 4, "patch_size": 14}
_VIS25 = {"depth": 32, "hidden_size": 1280, "intermediate_size": 3456, "num_heads": 16, "out_hidden_size": 8192}

D_MODELS: dict[str, dict[str, Any]] = {
    "qwen25-72b": _dense(*_Q72),
    "qwen25-72b-awq": _dense(*_Q72, quantization_config=_AWQ),
    "qwen25-7b-awq": _dense(*_Q7, quantization_config=_AWQ),
    "qwen25-7b-w4a16-g128": _dense(*_Q7, quantization_config=_ct(4, "group", 128)),
    "qwen25-7b-w8a16-ch": _dense(*_Q7, quantization_config=_ct(8, "channel", None)),
    "qwen25-72b-w4a16-g128": _dense(*_Q72, quantization_config=_ct(4, "group", 128)),
    "qwen3-4b-fp8": _dense(*_Q3_4, head_dim=128, quantization_config=_FP8),
    "qwen3-32b-fp8": _dense(*_Q3_32, head_dim=128, quantization_config=_FP8),
    "qwen3-32b-awq": _dense(*_Q3_32, head_dim=128, quantization_config=_AWQ),
    "mistral-7b-fp8": _dense(*_M7, head_dim=128, quantization_config=_FP8),
    "mistral-7b-w4a16-g128": _dense(*_M7, head_dim=128, quantization_config=_ct(4, "group", 128)),
    "qwen2-vl-7b-awq": _dense("Qwen2VLForConditionalGeneration", "qwen2_vl", *_Q7[2:], vision_config=_VIS2,
                              quantization_config=_AWQ),
    "qwen25-vl-72b-awq": _dense("Qwen2_5_VLForConditionalGeneration", "qwen2_5_vl", *_Q72[2:],
                                vision_config=_VIS25,
                                quantization_config={**_AWQ, "modules_to_not_convert": ["visual"]}),
    "qwen3-omni-30b": {"architectures": ["Qwen3OmniMoeForConditionalGeneration"], "model_type": "qwen3_omni_moe",
                       "thinker_config": {"model_type": "qwen3_omni_moe_thinker", "text_config": {
                           "model_type": "qwen3_omni_moe_text", "hidden_size": 2048, "intermediate_size": 768,
                           "moe_intermediate_size": 768, "num_attention_heads": 32, "num_key_value_heads": 4,
                           "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8, "num_hidden_layers": 48,
                           "vocab_size": 152064}}, "torch_dtype": "bfloat16"},  # Qwen/Qwen3-Omni-30B-A3B-Instruct
}  # fmt: skip
D_TPS = ["1", "2", "4", "8"]


def model_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    path = _box(out, "0.5.23", None)
    for model in D_MODELS:
        for tp in D_TPS:
            oks = _gate(path, [*LAUNCH, "--model-path", str(out / "models" / model), "--tp", tp])
            if oks is not None:
                rows.append({"pop": "d", "sglang": "0.5.23", "model": model, "layout": f"tp{tp}", "ok": oks})
    print(f"d: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (c) the cubin families left unread off major 10 (iperf43) ------------------------------------------------------

C_CASES = ["b200", "b200-cubin-package", "b200-cubins-offline"]
C_GPUS: dict[str, tuple[str, str]] = {
    "h200": ("NVIDIA H200", "9.0"),
    "h100": ("NVIDIA H100 80GB HBM3", "9.0"),
    "a100": ("NVIDIA A100-SXM4-80GB", "8.0"),
    "rtxpro6000": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"),
    "gb10": ("NVIDIA GB10", "12.1"),
}
C_IDS = {"attention-trtllm-mha", "mm-attention-flashinfer-cudnn", "attention-trtllm-mla", "attention-dsa-trtllm",
         "fp8-block-gemm", "mxfp4-moe", "nvfp4", "flashinfer-cubin-match", "moe-trtllm-gen-cubins"}  # fmt: skip


def cubin_rows(out: Path) -> list[dict[str, Any]]:
    from stackcheck.probes import flashinfer_cubins as fc

    rows: list[dict[str, Any]] = []
    for case in C_CASES:
        base = json.loads((ROOT / "tests" / "cases" / case / "facts.json").read_text())
        section = base["facts"].get("flashinfer_cubins")
        if not isinstance(section, dict) or not isinstance(section.get("ready"), dict):
            continue
        for gname, (name, cc) in C_GPUS.items():
            doc = copy.deepcopy(base)
            for gpu in doc["facts"]["gpus"]:
                gpu.update(name=name, compute_capability=cc)
            why = fc.families_unread_for(doc["facts"]["gpus"])
            if why is None:
                continue
            unread = {k: v for k, v in section.items() if k not in ("families", "ready", "ready_reason")}
            unread.update(families={}, families_unread=why, ready=dict.fromkeys(section["ready"]))
            unread["ready_reason"] = {f: f"{f}'s files were {why}" for f in section["ready"]}
            doc["facts"]["flashinfer_cubins"] = unread
            path = write_box(out, doc, f"cubin-{case}-{gname}.json")
            report = stackcheck_json_or_error(["audit", "--facts", str(path), "--format", "json"])
            for kind in ("features", "checks"):
                for item in report.get(kind, []):
                    if item.get("id") in C_IDS and item.get("status") == "ok":
                        rows.append({"pop": "c", "case": case, "gpu": gname, "kind": kind[:-1], "id": item["id"]})
    print(f"c: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, {"llama3": LLAMA3, **D_MODELS})
    pops = [
        (3, srun_rows(out)),
        (2, user_rows(out)),
        (3, model_rows(out)),
        (2, cubin_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck70_drawn.json")


if __name__ == "__main__":
    main()
