"""The sixty-first fact-check sample's populations and seeded draw (bench/factcheck61_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck61_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the seventeenth session's merges allow (git log --first-parent
9e1b9f74..3d611b5c: iallow1, imend8, igap56 / irev75, ireal1): the programs iallow1's readers place before a launch
(dumb-init, tini --, gosu, sudo, doas, pkexec --keep-cwd, runuser -u --, systemd-run --scope / -d, run0), srun's GPU
count from its environment and --tres-per-task (imend8), HiCache's host pool against the memory available at
0.5.10-0.5.23 (imend8), SGLang 0.5.1-0.5.2's DP layout behind srun (imend8), `sglang serve` launches (ireal1). A row
equal to one an earlier sample drew is left out. `mpirun -np 1` and Mooncake @FILE configs are not drawn: with
--facts the first is unknown by design (igap56: the installation's files are not read), the second needs a file
layout of its own (left to a later sample).

Box: factcheck49_draw._box (tests/cases/h200-newest with the release's pins, the extra packages, libnuma; 8 H200).

(p) `gate` of Llama 3 behind each prefix of P_PREFIXES with `--tp 2` / `--tp 8` at 0.5.23: one row per allow;
(s) `gate` of Llama 3 behind each srun form of S_FORMS (an environment and srun's words) with each layout of S_LAYOUTS
    at 0.5.13 / 0.5.23: one row per allow;
(h) `gate` of Llama 3 `--enable-hierarchical-cache` with each bound of H_BOUNDS on the H200 box with the host memory
    of H_MEMORY at H_RELEASES: one row per allow;
(o) `gate` of Llama 3 behind each srun prefix of O_PREFIXES with each layout of O_LAYOUTS at 0.5.1 / 0.5.2: one row
    per allow;
(v) `gate` of `sglang serve` with each flag set of V_FLAGS at 0.5.9 / 0.5.13 / 0.5.23: one row per allow.

Draw: random.Random(20270130); per population the rows sorted by JSON text, shuffled, the first k (p 6, s 4, h 3,
o 2, v 3), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck49_draw import _box
from factcheck_draw import draw_undrawn, stackcheck_json_or_error, write_models
from gate_cli import LLAMA3

SEED = 20270130
LAUNCH = ["python3", "-m", "sglang.launch_server"]
TB = 10**12
GB = 10**9


def _line(out: Path, path: Path, prefix: list[str], *flags: str) -> list[str]:
    line = [*prefix, *LAUNCH, "--model-path", str(out / "models" / "llama3"), *flags]
    return ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]


def _allowed(args: list[str]) -> bool:
    return stackcheck_json_or_error(args).get("decision") == "allow"


# ---- (p) the programs iallow1's readers place before the launch ---------------------------------------------------

_CLEAN = ["env", "-i", "PATH=/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin", "CUDA_HOME=/usr/local/cuda"]
P_PREFIXES: dict[str, list[str]] = {
    "dumb-init": ["dumb-init", "--"],
    "dumb-init-c": ["dumb-init", "-c", "--"],
    "dumb-init-rewrite-15:2": ["dumb-init", "--rewrite", "15:2", "--"],
    "dumb-init-rewrite-0:2": ["dumb-init", "--rewrite", "0:2", "--"],
    "dumb-init-r-joined": ["dumb-init", "-r15:0", "--"],
    "dumb-init-single-child": ["dumb-init", "--single-child", "--"],
    "tini": ["tini", "--"],
    "tini-s": ["tini", "-s", "--"],
    "tini-p-SIGTERM": ["tini", "-p", "SIGTERM", "--"],
    "tini-p-TERM": ["tini", "-p", "TERM", "--"],
    "tini-e-143": ["tini", "-e", "143", "--"],
    "tini-e-300": ["tini", "-e", "300", "--"],
    "tini-g-w": ["tini", "-g", "-w", "--"],
    "gosu-env-i": ["gosu", "svc", *_CLEAN],
    "su-exec-env-i": ["su-exec", "svc:svc", *_CLEAN],
    "sudo-u-env-i": ["sudo", "-u", "svc", *_CLEAN],
    "sudo-E-env-i": ["sudo", "-E", *_CLEAN],
    "sudo-assign-env-i": ["sudo", "A=1", *_CLEAN],
    "sudo-T-env-i": ["sudo", "-T", "60", *_CLEAN],
    "sudo-b-env-i": ["sudo", "-b", *_CLEAN],
    "doas-u-env-i": ["doas", "-u", "svc", *_CLEAN],
    "pkexec-keep-cwd-env-i": ["pkexec", "--keep-cwd", *_CLEAN],
    "runuser-u-env-i": ["runuser", "-u", "svc", "--", *_CLEAN],
    "runuser-u-m-env-i": ["runuser", "-m", "-u", "svc", "--", *_CLEAN],
    "systemd-run-scope": ["systemd-run", "--scope"],
    "systemd-run-scope-E": ["systemd-run", "--scope", "-E", "CUDA_VISIBLE_DEVICES=0"],
    "systemd-run-scope-u": ["systemd-run", "--scope", "-u", "sg"],
    "systemd-run-scope-user": ["systemd-run", "--user", "--scope"],
    "systemd-run-scope-nice": ["systemd-run", "--scope", "--nice=5"],
    "systemd-run-d-wait-env-i": ["systemd-run", "--wait", "-d", *_CLEAN],
    "systemd-run-same-dir-pty-env-i": ["systemd-run", "--same-dir", "--pty", *_CLEAN],
    "run0-env-i": ["run0", *_CLEAN],
    "run0-u-env-i": ["run0", "-u", "svc", *_CLEAN],
    "nohup-dumb-init-nice-tini": ["nohup", "dumb-init", "--", "nice", "tini", "--"],
}


def prefix_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    path = _box(out, "0.5.23", None)
    for name, prefix in P_PREFIXES.items():
        for layout in ("tp2", "tp8"):
            if _allowed(_line(out, path, prefix, "--tp", layout[2:])):
                rows.append({"pop": "p", "sglang": "0.5.23", "prefix": name, "layout": layout})
    print(f"p: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (s) srun's GPU count from its environment and --tres-per-task (imend8) ---------------------------------------

S_FORMS: dict[str, list[str]] = {
    "env-gpt2": ["env", "SLURM_GPUS_PER_TASK=2", "srun", "-N1"],
    "env-gpt4": ["env", "SLURM_GPUS_PER_TASK=4", "srun", "-N1"],
    "env-gpt8": ["env", "SLURM_GPUS_PER_TASK=8", "srun", "-N1"],
    "env-gpus4": ["env", "SLURM_GPUS=4", "srun", "-N1"],
    "env-gpus-h200-4": ["env", "SLURM_GPUS=h200:4", "srun", "-N1"],
    "env-gpn4": ["env", "SLURM_GPUS_PER_NODE=4", "srun", "-N1"],
    "env-gres4": ["env", "SLURM_GRES=gpu:4", "srun", "-N1"],
    "env-tres4": ["env", "SLURM_TRES_PER_TASK=cpu=8,gres/gpu=4", "srun", "-N1"],
    "env-gpt1-line-gpt4": ["env", "SLURM_GPUS_PER_TASK=1", "srun", "-N1", "--gpus-per-task=4"],
    "env-gpt4-line-G2": ["env", "SLURM_GPUS_PER_TASK=4", "srun", "-N1", "-G", "2"],
    "env-gpus4-no-N": ["env", "SLURM_GPUS=4", "srun"],
    "env-gpt4-n2": ["env", "SLURM_GPUS_PER_TASK=4", "srun", "-N1", "-n2"],
    "tres-gpu=4": ["srun", "-N1", "--tres-per-task=gres/gpu=4"],
    "tres-cpu-gpu=8": ["srun", "-N1", "--tres-per-task=cpu=4,gres/gpu=8"],
    "tres-gpu-type=4": ["srun", "-N1", "--tres-per-task=gres/gpu:h200=4"],
    "tres-gpu=2-gpt4": ["srun", "-N1", "--tres-per-task=gres/gpu=2", "--gpus-per-task=4"],
    "sh-export-gpt4": ["bash", "-c", "export SLURM_GPUS_PER_TASK=4; srun -N1 {}"],
}
S_LAYOUTS: dict[str, tuple[str, ...]] = {
    "tp2": ("--tp", "2"),
    "tp4": ("--tp", "4"),
    "tp2-dp2": ("--tp", "2", "--dp-size", "2"),
    "tp2-pp2": ("--tp", "2", "--pp-size", "2"),
    "tp2-base2": ("--tp", "2", "--base-gpu-id", "2"),
    "tp8": ("--tp", "8"),
}


def srun_rows(out: Path) -> list[dict[str, Any]]:
    import shlex

    rows: list[dict[str, Any]] = []
    for rel in ("0.5.13", "0.5.23"):
        path = _box(out, rel, None)
        for name, form in S_FORMS.items():
            for layout, words in S_LAYOUTS.items():
                if form[-1].endswith("{}"):
                    launch = [*LAUNCH, "--model-path", str(out / "models" / "llama3"), *words]
                    line = [*form[:-1], form[-1].format(shlex.join(launch))]
                    args = ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]
                else:
                    args = _line(out, path, form, *words)
                if _allowed(args):
                    rows.append({"pop": "s", "sglang": rel, "form": name, "layout": layout})
        print(f"s {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (h) HiCache's host pool against the memory available (imend8) ------------------------------------------------

H_BOUNDS: dict[str, tuple[str, ...]] = {
    "tp1-size-100": ("--tp", "1", "--hicache-size", "100"),
    "tp2-size-200": ("--tp", "2", "--hicache-size", "200"),
    "tp8-size-100": ("--tp", "8", "--hicache-size", "100"),
    "tp8-size-120": ("--tp", "8", "--hicache-size", "120"),
    "tp8-ratio-2": ("--tp", "8", "--hicache-ratio", "2"),
    "tp8-ratio-3": ("--tp", "8", "--hicache-ratio", "3"),
    "tp4-dp2-size-100": ("--tp", "4", "--dp-size", "2", "--hicache-size", "100"),
    "tp8-default": ("--tp", "8"),
    "tp2-mem-0.9-ratio-2": ("--tp", "2", "--mem-fraction-static", "0.9", "--hicache-ratio", "2"),
}
H_MEMORY: dict[str, tuple[int, int | None, int]] = {
    # name: (MemTotal, the cgroup's limit, the memory available as imend8's probe reads it)
    "2TB-avail-1.9TB": (2 * TB, None, 1900 * GB),
    "2TB-avail-800GB": (2 * TB, None, 800 * GB),
    "1TB-avail-900GB": (1 * TB, None, 900 * GB),
    "2TB-lim-1TB-avail-700GB": (2 * TB, 1 * TB, 700 * GB),
}
H_RELEASES = ["0.5.10", "0.5.12", "0.5.15", "0.5.17", "0.5.20", "0.5.23"]


def hicache_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in H_RELEASES:
        doc = json.loads(_box(out, rel, None).read_text())
        for mem, (total, limit, avail) in H_MEMORY.items():
            doc["facts"]["system"].update(
                memory_total_bytes=total, memory_limit_bytes=limit, memory_available_bytes=avail
            )
            path = out / f"box-h200-{rel}-{mem}.json"
            path.write_text(json.dumps(doc))
            for bound, words in H_BOUNDS.items():
                if _allowed(_line(out, path, [], "--enable-hierarchical-cache", *words)):
                    rows.append({"pop": "h", "sglang": rel, "memory": mem, "bound": bound})
        print(f"h {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (o) SGLang 0.5.1-0.5.2's DP layout behind srun (imend8) ------------------------------------------------------

O_PREFIXES: dict[str, list[str]] = {
    "gpt4": ["srun", "-N1", "--gpus-per-task=4"],
    "gpt6": ["srun", "-N1", "--gpus-per-task=6"],
    "gpt8": ["srun", "-N1", "--gpus-per-task=8"],
    "G6": ["srun", "-N1", "-G", "6"],
}
O_LAYOUTS: dict[str, tuple[str, ...]] = {
    "tp2-pp2-dp2": ("--tp", "2", "--pp-size", "2", "--dp-size", "2"),
    "tp1-pp2-dp2": ("--tp", "1", "--pp-size", "2", "--dp-size", "2"),
    "tp2-pp2-dp2-step2": ("--tp", "2", "--pp-size", "2", "--dp-size", "2", "--gpu-id-step", "2"),
    "tp2-pp2": ("--tp", "2", "--pp-size", "2"),
    "tp1-pp4-dp2": ("--tp", "1", "--pp-size", "4", "--dp-size", "2"),
    "tp2-pp2-dp2-base1": ("--tp", "2", "--pp-size", "2", "--dp-size", "2", "--base-gpu-id", "1"),
}


def _box_nccl(out: Path, rel: str) -> Path:
    """_box with the NCCL wheel torch 2.8.0+cu128 requires (nvidia-nccl-cu12==2.27.3, components.json's igap46
    reading), which factcheck49's box leaves out for 0.5.1-0.5.3 (the nccl feature unknown without it)."""
    path = _box(out, rel, None)
    doc = json.loads(path.read_text())
    doc["facts"]["packages"]["nvidia-nccl-cu12"] = {"installed": True, "version": "2.27.3", "dist_version": "2.27.3"}
    path.write_text(json.dumps(doc))
    return path


def old_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.1", "0.5.2"):
        path = _box_nccl(out, rel)
        for name, prefix in O_PREFIXES.items():
            for layout, words in O_LAYOUTS.items():
                if _allowed(_line(out, path, prefix, *words)):
                    rows.append({"pop": "o", "sglang": rel, "prefix": name, "layout": layout})
        print(f"o {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (v) `sglang serve` launches (ireal1) -------------------------------------------------------------------------

V_FLAGS: dict[str, tuple[str, ...]] = {
    "tp2": ("--tp", "2"),
    "tp8": ("--tp", "8"),
    "model-type-llm-tp2": ("--model-type", "llm", "--tp", "2"),
    "tp2-fa3": ("--tp", "2", "--attention-backend", "fa3"),
    "tp2-port": ("--tp", "2", "--port", "30001", "--host", "0.0.0.0"),
    "tp2-dp2": ("--tp", "2", "--dp-size", "2"),
    "tp4-mem-0.8": ("--tp", "4", "--mem-fraction-static", "0.8"),
    "tp2-context-8192": ("--tp", "2", "--context-length", "8192"),
    "model-eq-tp2": ("--tp=2",),
}


def serve_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    model = str(out / "models" / "llama3")
    for rel in ("0.5.9", "0.5.13", "0.5.23"):
        path = _box(out, rel, None)
        for name, flags in V_FLAGS.items():
            line = ["sglang", "serve", "--model-path", model, *flags]
            if _allowed(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]):
                rows.append({"pop": "v", "sglang": rel, "flags": name})
        print(f"v {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, {"llama3": LLAMA3})
    pops = [
        (6, prefix_rows(out)),
        (4, srun_rows(out)),
        (3, hicache_rows(out)),
        (2, old_rows(out)),
        (3, serve_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck61_drawn.json")


if __name__ == "__main__":
    main()
