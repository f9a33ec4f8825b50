"""The fifty-eighth fact-check sample's populations and seeded draw (bench/factcheck58_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck58_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the sixteenth session's merges allow or call ok (git log --first-parent
efa60580..90780042): igap54's wrappers it reads (strace, perf record --, mpirun -np 1, a remote launch with --facts and
env -i), imend6's flock forms, ifc56's srun forms it still allows, igap55's HiCache host-memory refusal, ZAYA1 with a
top-level rope_theta (igap55), FA4 MLA decode on Blackwell (ifc57's mla-decode-qv-blackwell-only), NIXL boxes after
imend6's torch-backend reader and 4fe16971's nixl-cu13 fail. A row equal to one an earlier sample drew is left out.

Box: factcheck49_draw._box (tests/cases/h200-newest with the release's pins, the extra packages, libnuma; 8 H200);
factcheck_draw.cc_box for Blackwell; for NIXL, factcheck49's box with the nixl wheels, torch's CUDA and cuda_libs set.

(w) `gate` of Llama 3 `--tp 2` behind each prefix of W_PREFIXES at 0.5.13 / 0.5.23: one row per allow;
(f) `gate` of Llama 3 `--tp 2` through each flock form of F_FORMS at 0.5.13 / 0.5.23: one row per allow;
(s) `gate` of Llama 3 `--tp 2` / `--tp 1` behind each srun prefix of S_PREFIXES at 0.5.13 / 0.5.23: one row per allow;
(h) `gate` of Llama 3 `--enable-hierarchical-cache` with each bound of H_BOUNDS on the H200 box with the host memory of
    H_MEMORY at H_RELEASES: one row per allow;
(z) `gate` of each ZAYA1 config of Z_MODELS (a top-level rope_theta) at 0.5.14 / 0.5.18 / 0.5.23, `--tp 1` / `--tp 2`:
    one row per allow;
(m) `gate` of each MLA model of M_MODELS with each FA4 spelling of M_FLAGS on 10.0 / 10.3 boxes at 0.5.17 / 0.5.20 /
    0.5.23: one row per allow;
(n) `gate` of a Llama 3 NIXL decode launch (`--tp 8`) on each NIXL box of N_BOXES at 0.5.14 / 0.5.23: one row per box
    whose transfer-package check is ok (the decision recorded).

Draw: random.Random(20270127); per population the rows sorted by JSON text, shuffled, the first k (w 3, f 3, s 3, h 3,
z 2, m 2, n 2), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck49_draw import _box
from factcheck_draw import cc_box, draw_undrawn, stackcheck_json_or_error, write_models
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, NIXL_SYSTEM_LIBS

SEED = 20270127
LAUNCH = ["python3", "-m", "sglang.launch_server"]
TB = 10**12


def _line(out: Path, path: Path, prefix: list[str], model: str, *flags: str) -> list[str]:
    line = [*prefix, *LAUNCH, "--model-path", str(out / "models" / model), *flags]
    return ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]


def _allowed(args: list[str]) -> dict[str, Any] | None:
    doc = stackcheck_json_or_error(args)
    return doc if doc.get("decision") == "allow" else None


# ---- (w) igap54's wrappers it reads -------------------------------------------------------------------------------

W_PREFIXES: dict[str, list[str]] = {
    "strace-f": ["strace", "-f"],
    "strace-ff-o": ["strace", "-ff", "-o", "/tmp/tr"],
    "strace-e-trace": ["strace", "-f", "-e", "trace=openat", "-o", "/tmp/tr"],
    "strace-c": ["strace", "-c", "-f"],
    "strace-s-y": ["strace", "-s", "256", "-yy", "-f"],
    "strace-p-style": ["strace", "-tt", "-T", "-f", "--"],
    "perf-record": ["perf", "record", "--"],
    "perf-record-g": ["perf", "record", "-g", "-o", "/tmp/p.data", "--"],
    "perf-stat": ["perf", "stat", "--"],
    "perf-stat-e": ["perf", "stat", "-e", "cycles", "--"],
    "mpirun-np1": ["mpirun", "-np", "1"],
    "mpirun-n1": ["mpirun", "-n", "1"],
    "mpirun-np1-x": ["mpirun", "-np", "1", "-x", "NCCL_DEBUG=INFO"],
    "mpirun-np1-allow-root": ["mpirun", "--allow-run-as-root", "-np", "1"],
    "mpirun-np1-bind": ["mpirun", "-np", "1", "--bind-to", "none"],
    "ssh-env-i": ["ssh", "gpu1", "env", "-i", "PATH=/usr/bin:/bin"],
    "ssh-env-i-home": ["ssh", "gpu1", "env", "-i", "HOME=/root", "PATH=/usr/local/bin:/usr/bin:/bin"],
    "docker-exec-env-i": ["docker", "exec", "c", "env", "-i", "PATH=/usr/bin:/bin"],
    "kubectl-exec-env-i": ["kubectl", "exec", "pod", "--", "env", "-i", "PATH=/usr/bin:/bin"],
    "ssh-p-env-i": ["ssh", "-p", "2222", "gpu1", "env", "-i", "PATH=/usr/bin:/bin"],
}


def wrapper_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.13", "0.5.23"):
        path = _box(out, rel, None)
        for name, prefix in W_PREFIXES.items():
            if _allowed(_line(out, path, prefix, "llama3", "--tp", "2")) is not None:
                rows.append({"pop": "w", "sglang": rel, "prefix": name})
        print(f"w {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (f) imend6's flock forms -------------------------------------------------------------------------------------

F_FORMS: dict[str, tuple[list[str], str]] = {
    # name: (the words before the launch, how it is given: "argv", or a format with {} for its text)
    "file-argv": (["flock", "/tmp/l"], "argv"),
    "n-c": (["flock", "-n", "/tmp/l", "-c"], "{}"),
    "w5-argv": (["flock", "-w", "5", "/tmp/l"], "argv"),
    "w5-c": (["flock", "-w", "5", "/tmp/l", "-c"], "{}"),
    "x-argv": (["flock", "-x", "/tmp/l"], "argv"),
    "s-argv": (["flock", "-s", "/tmp/l"], "argv"),
    "o-argv": (["flock", "-o", "/tmp/l"], "argv"),
    "E-n-argv": (["flock", "-E", "3", "-n", "/tmp/l"], "argv"),
    "F-argv": (["flock", "-F", "/tmp/l"], "argv"),
    "u-argv": (["flock", "-u", "/tmp/l"], "argv"),
    "timeout=5-c": (["flock", "--timeout=5", "/tmp/l", "-c"], "{}"),
    "nonblock-command": (["flock", "--nonblock", "/tmp/l", "--command"], "{}"),
    "conflict-exit-code": (["flock", "--conflict-exit-code", "1", "-n", "/tmp/l"], "argv"),
    "dir-lock": (["flock", "/tmp"], "argv"),
    "w0.5-argv": (["flock", "-w", "0.5", "/tmp/l"], "argv"),
    "c-env": (["flock", "/tmp/l", "-c"], "env A=1 {}"),
}


def flock_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    launch = [*LAUNCH, "--model-path", str(out / "models" / "llama3"), "--tp", "2"]
    for rel in ("0.5.13", "0.5.23"):
        path = _box(out, rel, None)
        for name, (before, how) in F_FORMS.items():
            words = [*before, *launch] if how == "argv" else [*before, how.format(shlex.join(launch))]
            args = ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *words]
            if _allowed(args) is not None:
                rows.append({"pop": "f", "sglang": rel, "form": name})
        print(f"f {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (s) the srun forms ifc56 still allows ------------------------------------------------------------------------

S_PREFIXES: dict[str, list[str]] = {
    "N1": ["srun", "-N1"],
    "N2-n2": ["srun", "-N2", "-n2"],
    "nodes=2-tpn1": ["srun", "--nodes=2", "--ntasks-per-node=1"],
    "n1": ["srun", "-n1"],
    "N1-overlap": ["srun", "-N1", "--overlap"],
    "overlap": ["srun", "--overlap"],
    "srun-overlap": ["srun", "-N1", "srun", "--overlap"],
    "gpt2": ["srun", "-N1", "--gpus-per-task=2"],
    "gpt1": ["srun", "-N1", "--gpus-per-task=1"],
    "G2": ["srun", "-N1", "-G", "2"],
    "gpus=2": ["srun", "--gpus=2"],
    "gpn2": ["srun", "-N1", "--gpus-per-node=2"],
    "gres2": ["srun", "-N1", "--gres=gpu:2"],
    "gres-h200-2": ["srun", "-N1", "--gres=gpu:h200:2"],
    "gpt8": ["srun", "-N1", "--gpus-per-task=8"],
    "c8": ["srun", "-N1", "-c", "8"],
    "mem0": ["srun", "-N1", "--mem=0"],
    "N1-exclusive": ["srun", "-N1", "--exclusive"],
    "pty": ["srun", "-N1", "--pty"],
    "het": ["srun", "-N1", ":", "-N1"],
}


def srun_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.13", "0.5.23"):
        path = _box(out, rel, None)
        for name, prefix in S_PREFIXES.items():
            for flags, words in (("tp2", ("--tp", "2")), ("tp1", ("--tp", "1"))):
                if _allowed(_line(out, path, prefix, "llama3", *words)) is not None:
                    rows.append({"pop": "s", "sglang": rel, "prefix": name, "flags": flags})
        print(f"s {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (h) HiCache against the host's memory (igap55) ---------------------------------------------------------------

H_BOUNDS: dict[str, tuple[str, ...]] = {
    "tp8-size-100": ("--tp", "8", "--hicache-size", "100"),
    "tp8-size-200": ("--tp", "8", "--hicache-size", "200"),
    "tp8-size-240": ("--tp", "8", "--hicache-size", "240"),
    "tp2-size-100": ("--tp", "2", "--hicache-size", "100"),
    "tp2-size-400": ("--tp", "2", "--hicache-size", "400"),
    "tp8": ("--tp", "8"),
    "tp1": ("--tp", "1"),
    "tp8-ratio-1.5": ("--tp", "8", "--hicache-ratio", "1.5"),
    "tp1-ratio-2": ("--tp", "1", "--hicache-ratio", "2"),
    "tp8-mem-0.5-ratio-2": ("--tp", "8", "--mem-fraction-static", "0.5", "--hicache-ratio", "2"),
    "tp4-pp2-size-100": ("--tp", "4", "--pp-size", "2", "--hicache-size", "100"),
    "tp8-dp2-size-100": ("--tp", "8", "--dp", "2", "--hicache-size", "100"),
    "tp8-size=100": ("--tp", "8", "--hicache-size=100"),
}
H_MEMORY: dict[str, tuple[int, int | None]] = {
    "2TB": (2 * TB, None),
    "1TB": (1 * TB, None),
    "4TB-lim-1TB": (4 * TB, TB),
}
H_RELEASES = ["0.5.18", "0.5.19", "0.5.21", "0.5.23"]


def hicache_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in H_RELEASES:
        doc = json.loads(_box(out, rel, None).read_text())
        for mem, (total, limit) in H_MEMORY.items():
            doc["facts"]["system"].update(memory_total_bytes=total, memory_limit_bytes=limit)
            path = out / f"box-h200-{rel}-{mem}.json"
            path.write_text(json.dumps(doc))
            for bound, words in H_BOUNDS.items():
                if _allowed(_line(out, path, [], "llama3", "--enable-hierarchical-cache", *words)) is not None:
                    rows.append({"pop": "h", "sglang": rel, "memory": mem, "bound": bound})
        print(f"h {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (z) ZAYA1 with a top-level rope_theta --------------------------------------------------------------------------

_ZAYA = {"architectures": ["ZayaForCausalLM"], "model_type": "zaya", "hidden_size": 2048, "num_attention_heads": 8,
         "num_key_value_heads": 2, "head_dim": 128, "num_hidden_layers": 80, "vocab_size": 262144,
         "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}  # fmt: skip
_PARAMS_5E6 = {"rope_type": "default", "rope_theta": 5000000.0}
_PARAMS_1E6 = {"rope_type": "default", "rope_theta": 1000000.0}
_YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}
Z_MODELS: dict[str, dict[str, Any]] = {
    "zaya-5e6": {**_ZAYA, "rope_theta": 5000000.0},
    "zaya-1e6": {**_ZAYA, "rope_theta": 1000000},
    "zaya-1e4": {**_ZAYA, "rope_theta": 10000.0},
    "zaya-5e6-params-same": {**_ZAYA, "rope_theta": 5000000.0, "rope_parameters": _PARAMS_5E6},
    "zaya-5e6-params-other": {**_ZAYA, "rope_theta": 5000000.0, "rope_parameters": _PARAMS_1E6},
    "zaya-5e6-scaling": {**_ZAYA, "rope_theta": 5000000.0, "rope_scaling": _YARN},
}


def zaya_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.14", "0.5.18", "0.5.23"):
        path = _box(out, rel, None)
        for model in Z_MODELS:
            for flags, words in (("tp1", ("--tp", "1")), ("tp2", ("--tp", "2"))):
                if _allowed(_line(out, path, [], model, *words)) is not None:
                    rows.append({"pop": "z", "sglang": rel, "model": model, "flags": flags})
        print(f"z {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (m) FA4 MLA decode on Blackwell (ifc57) ----------------------------------------------------------------------

M_MODELS: dict[str, dict[str, Any]] = {
    "dsv2-lite": {"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "hidden_size": 2048,
                  "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 512, "v_head_dim": 128,
                  "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "q_lora_rank": None, "num_hidden_layers": 27,
                  "vocab_size": 102400, "torch_dtype": "bfloat16"},
    "dsv3-small": {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
                   "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512, "v_head_dim": 128,
                   "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "q_lora_rank": 1536, "num_hidden_layers": 4,
                   "n_routed_experts": 256, "num_experts_per_tok": 8, "vocab_size": 129280, "torch_dtype": "bfloat16"},
}  # fmt: skip
M_FLAGS: dict[str, tuple[str, ...]] = {
    "attention-fa4": ("--attention-backend", "fa4"),
    "decode-fa4": ("--decode-attention-backend", "fa4"),
    "both-fa4": ("--prefill-attention-backend", "fa4", "--decode-attention-backend", "fa4"),
    "fa4-page-128": ("--attention-backend", "fa4", "--page-size", "128"),
    "fa4-tp2": ("--attention-backend", "fa4", "--tp", "2"),
}


def mla_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for cc in ("10.0", "10.3"):
        for rel in ("0.5.17", "0.5.20", "0.5.23"):
            path = cc_box(out, rel, cc)
            for model in M_MODELS:
                for name, words in M_FLAGS.items():
                    if _allowed(_line(out, path, [], model, *words)) is not None:
                        rows.append({"pop": "m", "sglang": rel, "cc": cc, "model": model, "flags": name})
        print(f"m {cc}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (n) NIXL boxes -----------------------------------------------------------------------------------------------

_CUDART12 = {"libcudart.so.12": "/usr/local/cuda-12.8/lib64/libcudart.so.12"}
_CUDART13 = {"libcudart.so.13": "/usr/local/cuda-13.0/lib64/libcudart.so.13"}
N_WHEELS: dict[str, dict[str, str]] = {
    "nixl-0.7.1+cu12": {"nixl": "0.7.1", "nixl-cu12": "0.7.1"},
    "nixl-0.7.1+cu13": {"nixl": "0.7.1", "nixl-cu13": "0.7.1"},
    "nixl-0.7.1+both": {"nixl": "0.7.1", "nixl-cu12": "0.7.1", "nixl-cu13": "0.7.1"},
    "nixl-1.1.0+cu12": {"nixl": "1.1.0", "nixl-cu12": "1.1.0"},
    "nixl-1.1.0+cu13": {"nixl": "1.1.0", "nixl-cu13": "1.1.0"},
    "nixl-1.5.2+both": {"nixl": "1.5.2", "nixl-cu12": "1.5.2", "nixl-cu13": "1.5.2"},
    "nixl-1.5.2+cu13": {"nixl": "1.5.2", "nixl-cu13": "1.5.2"},
    "nixl-cu12-0.7.1-alone": {"nixl-cu12": "0.7.1"},
    "nixl-0.6.0": {"nixl": "0.6.0"},
}
N_LIBS: dict[str, dict[str, str]] = {"cudart12": _CUDART12, "cudart13": _CUDART13, "both": {**_CUDART12, **_CUDART13}}
N_TORCH = {"cu128": ("2.9.1+cu128", "12.8"), "cu130": ("2.9.1+cu130", "13.0")}


def nixl_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.14", "0.5.23"):
        base = _box(out, rel, None)
        for wheels, versions in N_WHEELS.items():
            for libs, found in N_LIBS.items():
                for torch_name, (torch_version, cuda) in N_TORCH.items():
                    doc = json.loads(base.read_text())
                    listed = doc["facts"]["packages"]
                    for name in ("nixl", "nixl-cu12", "nixl-cu13", "mooncake-transfer-engine"):
                        listed[name] = {"installed": False}
                    for name, v in versions.items():
                        listed[name] = {"installed": True, "version": v, "dist_version": v}
                    listed["torch"].update(version=torch_version, cuda=cuda, variant=torch_name)
                    doc["facts"]["cuda_libs"] = {
                        "ld_cache": "file",
                        **MOONCAKE_SYSTEM_LIBS,
                        **NIXL_SYSTEM_LIBS,
                        **found,
                    }
                    path = out / "nixl" / f"{rel}-{wheels}-{libs}-{torch_name}.json"
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(json.dumps(doc))
                    flags = (
                        "--tp",
                        "8",
                        "--disaggregation-mode",
                        "decode",
                        "--disaggregation-transfer-backend",
                        "nixl",
                    )
                    d = stackcheck_json_or_error(_line(out, path, [], "llama3", *flags))
                    checks = (d.get("preflight") or {}).get("checks") or []
                    if any(c.get("check") == "transfer-package" and c.get("status") == "ok" for c in checks):
                        rows.append({"pop": "n", "sglang": rel, "wheels": wheels, "libs": libs, "torch": torch_name,
                                     "decision": d.get("decision")})  # fmt: skip
        print(f"n {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, {"llama3": LLAMA3, **Z_MODELS, **M_MODELS})
    pops = [
        (3, wrapper_rows(out)),
        (3, flock_rows(out)),
        (3, srun_rows(out)),
        (3, hicache_rows(out)),
        (2, zaya_rows(out)),
        (2, mla_rows(out)),
        (2, nixl_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck58_drawn.json")


if __name__ == "__main__":
    main()
