"""The fifty-ninth fact-check sample's populations and seeded draw (bench/factcheck59_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck59_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the sixteenth session's second wave allows or calls ok (git log
--first-parent efa60580..9e1b9f74: irev74, imend7, irobust7): srun's GPU count against SGLang's device ordinals
(--tp x --pp x --dp-size, --base-gpu-id, --gpu-id-step, several nodes), HiCache's host pool with DP replicas and the
cgroup's limit, ZAYA1 / EXAONE rope bases, flock's -w / -E values, flashinfer-cubin-match per FlashInfer release. A row
equal to one an earlier sample drew is left out.

Box: factcheck49_draw._box (tests/cases/h200-newest with the release's pins, the extra packages, libnuma; 8 H200).

(s) `gate` of Llama 3 behind each srun prefix of S_PREFIXES with each parallel layout of S_LAYOUTS at 0.5.13 / 0.5.23:
    one row per allow;
(h) `gate` of Llama 3 `--enable-hierarchical-cache` with each bound of H_BOUNDS on the H200 box with the host memory of
    H_MEMORY at H_RELEASES: one row per allow;
(z) `gate` of each ZAYA1 / EXAONE config of Z_MODELS at 0.5.10 / 0.5.14 / 0.5.19 / 0.5.23, `--tp 1` / `--tp 2`: one
    row per allow;
(f) `gate` of Llama 3 `--tp 2` through each flock form of F_FORMS at 0.5.13 / 0.5.23: one row per allow;
(c) the audit's flashinfer-cubin-match on the H200 box (0.5.23's) with flashinfer-python at each release of
    components.json from 0.6.0 (and C_LOCALS' local tags) beside each extra set of C_EXTRAS: one row per ok.

Draw: random.Random(20270128); per population the rows sorted by JSON text, shuffled, the first k (s 5, h 4, z 3,
f 3, c 3), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import copy
import json
import shlex
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck49_draw import _box
from factcheck_draw import draw_undrawn, stackcheck_json_or_error, write_models
from gate_cli import LLAMA3

SEED = 20270128
LAUNCH = ["python3", "-m", "sglang.launch_server"]
TB = 10**12
GB = 10**9


def _line(out: Path, path: Path, prefix: list[str], model: str, *flags: str) -> list[str]:
    line = [*prefix, *LAUNCH, "--model-path", str(out / "models" / model), *flags]
    return ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]


def _allowed(args: list[str]) -> dict[str, Any] | None:
    doc = stackcheck_json_or_error(args)
    return doc if doc.get("decision") == "allow" else None


# ---- (s) srun's GPU count against the device ordinals (irev74, imend7, irobust7) ---------------------------------

S_PREFIXES: dict[str, list[str]] = {
    "gpt2": ["srun", "-N1", "--gpus-per-task=2"],
    "gpt4": ["srun", "-N1", "--gpus-per-task=4"],
    "gpt8": ["srun", "-N1", "--gpus-per-task", "8"],
    "G4": ["srun", "-N1", "-G", "4"],
    "G4-joined": ["srun", "-N1", "-G4"],
    "G-type-4": ["srun", "-N1", "-G", "h200:4"],
    "gpus=8": ["srun", "-N1", "--gpus=8"],
    "gpn4": ["srun", "-N1", "--gpus-per-node=4"],
    "gres4": ["srun", "-N1", "--gres=gpu:4"],
    "gres-h200-4": ["srun", "-N1", "--gres=gpu:h200:4"],
    "gres8-shard": ["srun", "-N1", "--gres=gpu:8,shard:1"],
    "gpus-per-socket": ["srun", "-N1", "--gpus-per-socket=2"],
    "tres-per-task": ["srun", "-N1", "--tres-per-task=gres/gpu:1"],
    "N2-gpus4": ["srun", "-N2", "--gpus=4"],
    "N2-gpn4": ["srun", "-N2", "--gpus-per-node=4"],
    "N2-n2-gpt4": ["srun", "-N2", "-n2", "--gpus-per-task=4"],
    "G8-then-G2": ["srun", "-N1", "-G", "8", "--gpus=2"],
    "gpt4-overlap": ["srun", "-N1", "--overlap", "--gpus-per-task=4"],
}
_NODES2 = ("--nnodes", "2", "--node-rank", "0", "--dist-init-addr", "10.0.0.1:5000")
S_LAYOUTS: dict[str, tuple[str, ...]] = {
    "tp2": ("--tp", "2"),
    "tp4": ("--tp", "4"),
    "tp2-dp2": ("--tp", "2", "--dp-size", "2"),
    "tp2-dp2-dpattn": ("--tp", "2", "--dp-size", "2", "--enable-dp-attention"),
    "tp2-pp2": ("--tp", "2", "--pp-size", "2"),
    "tp2-base2": ("--tp", "2", "--base-gpu-id", "2"),
    "tp2-step2": ("--tp", "2", "--gpu-id-step", "2"),
    "tp1-base3": ("--tp", "1", "--base-gpu-id", "3"),
    "tp4-nnodes2": ("--tp", "4", *_NODES2),
    "tp8-nnodes2": ("--tp", "8", *_NODES2),
}


def srun_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.13", "0.5.23"):
        path = _box(out, rel, None)
        for name, prefix in S_PREFIXES.items():
            for layout, words in S_LAYOUTS.items():
                if _allowed(_line(out, path, prefix, "llama3", *words)) is not None:
                    rows.append({"pop": "s", "sglang": rel, "prefix": name, "layout": layout})
        print(f"s {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (h) HiCache's host pool: DP replicas, the cgroup's limit (irev74, irobust7) ---------------------------------

H_BOUNDS: dict[str, tuple[str, ...]] = {
    "tp2-dp2-size-100": ("--tp", "2", "--dp-size", "2", "--hicache-size", "100"),
    "tp2-dp4-size-100": ("--tp", "2", "--dp-size", "4", "--hicache-size", "100"),
    "tp4-dp2-size-50": ("--tp", "4", "--dp-size", "2", "--hicache-size", "50"),
    "tp8-dp8-dpattn-size-100": ("--tp", "8", "--dp-size", "8", "--enable-dp-attention", "--hicache-size", "100"),
    "tp1-dp8-size-50": ("--tp", "1", "--dp-size", "8", "--hicache-size", "50"),
    "tp2-dp2": ("--tp", "2", "--dp-size", "2"),
    "tp1-dp8-ratio-1.5": ("--tp", "1", "--dp-size", "8", "--hicache-ratio", "1.5"),
    "tp8-size-60": ("--tp", "8", "--hicache-size", "60"),
    "tp4-pp2-size-50": ("--tp", "4", "--pp-size", "2", "--hicache-size", "50"),
}
H_MEMORY: dict[str, tuple[int, int | None]] = {
    "2TB": (2 * TB, None),
    "1TB": (1 * TB, None),
    "2TB-lim-512GB": (2 * TB, 512 * GB),
    "2TB-lim-900GB": (2 * TB, 900 * GB),
}
H_RELEASES = ["0.5.10", "0.5.14", "0.5.18", "0.5.19", "0.5.21", "0.5.23"]


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


# ---- (z) ZAYA1 with two bases, EXAONE (irev74, irobust7) ---------------------------------------------------------

_ZAYA = {"architectures": ["ZayaForCausalLM"], "model_type": "zaya", "hidden_size": 2048, "num_attention_heads": 8,
         "num_key_value_heads": 2, "head_dim": 128, "num_hidden_layers": 80, "vocab_size": 262144,
         "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}  # fmt: skip
_EXAONE4 = {"architectures": ["Exaone4ForCausalLM"], "model_type": "exaone4", "hidden_size": 5120,
            "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 64,
            "vocab_size": 102400, "max_position_embeddings": 131072, "sliding_window": 4096,
            "torch_dtype": "bfloat16"}  # fmt: skip
_LAYERS = {"hybrid": {"rope_type": "default", "rope_theta": 1000000.0},
           "hybrid_sliding": {"rope_type": "default", "rope_theta": 10000.0}}  # fmt: skip
Z_MODELS: dict[str, dict[str, Any]] = {
    "zaya-1e6-layers-same": {**_ZAYA, "rope_theta": 1000000.0,
                             "rope_parameters": {k: {**v, "rope_theta": 1000000.0} for k, v in _LAYERS.items()}},
    "zaya-1e6-layers-two": {**_ZAYA, "rope_theta": 1000000.0, "rope_parameters": _LAYERS},
    "zaya-1e6-swa-base": {**_ZAYA, "rope_theta": 1000000.0, "swa_rotary_base": 10000.0},
    "zaya-int-1e6": {**_ZAYA, "rope_theta": 1000000},
    "zaya-1e6-flat-same": {**_ZAYA, "rope_theta": 1000000.0,
                           "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}},
    "exaone4-1e6": {**_EXAONE4, "rope_theta": 1000000.0},
    "exaone4-1e6-params": {**_EXAONE4, "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}},
    "exaone4-1e6-llama3": {**_EXAONE4, "rope_theta": 1000000.0,
                           "rope_scaling": {"rope_type": "llama3", "factor": 16.0, "low_freq_factor": 1.0,
                                            "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}},
    "exaone-moe-1e6": {**_EXAONE4, "architectures": ["ExaoneMoEForCausalLM"], "model_type": "exaone_moe",
                       "num_experts": 64, "num_experts_per_tok": 8, "rope_theta": 1000000.0},
}  # fmt: skip


def zaya_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.10", "0.5.14", "0.5.19", "0.5.23"):
        path = _box(out, rel, None)
        for model in Z_MODELS:
            for flags, words in (("tp1", ("--tp", "1")), ("tp2", ("--tp", "2"))):
                if _allowed(_line(out, path, [], model, *words)) is not None:
                    rows.append({"pop": "z", "sglang": rel, "model": model, "flags": flags})
        print(f"z {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (f) flock's -w / -E values (imend7, irobust7) ---------------------------------------------------------------

F_FORMS: dict[str, tuple[list[str], str]] = {
    # name: (the words before the launch, how it is given: "argv", or a format with {} for its text)
    "w0": (["flock", "-w", "0", "/tmp/l"], "argv"),
    "w30": (["flock", "-w", "30", "/tmp/l"], "argv"),
    "w30-joined": (["flock", "-w30", "/tmp/l"], "argv"),
    "w.5": (["flock", "-w", ".5", "/tmp/l"], "argv"),
    "w5.": (["flock", "-w", "5.", "/tmp/l"], "argv"),
    "w+2": (["flock", "-w", "+2", "/tmp/l"], "argv"),
    "w1e3": (["flock", "-w", "1e3", "/tmp/l"], "argv"),
    "w-space-5": (["flock", "-w", " 5", "/tmp/l"], "argv"),
    "w1e-400": (["flock", "-w", "1e-400", "/tmp/l"], "argv"),
    "w1e-5000": (["flock", "-w", "1e-5000", "/tmp/l"], "argv"),
    "w9.2e18": (["flock", "-w", "9.2e18", "/tmp/l"], "argv"),
    "w-neg-tiny": (["flock", "-w", "-0.0000001", "/tmp/l"], "argv"),
    "wait=30-c": (["flock", "--wait=30", "/tmp/l", "-c"], "{}"),
    "timeout-60-c": (["flock", "--timeout", "60", "/tmp/l", "-c"], "{}"),
    "E0-n": (["flock", "-E", "0", "-n", "/tmp/l"], "argv"),
    "E255-w5": (["flock", "-E", "255", "-w", "5", "/tmp/l"], "argv"),
    "E07": (["flock", "-E", "07", "-n", "/tmp/l"], "argv"),
    "E+2": (["flock", "-E", "+2", "-n", "/tmp/l"], "argv"),
    "conflict=9-c": (["flock", "--conflict-exit-code=9", "-n", "/tmp/l", "-c"], "{}"),
    "nw5": (["flock", "-nw", "5", "/tmp/l"], "argv"),
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


# ---- (c) flashinfer-cubin-match per FlashInfer release (imend7) --------------------------------------------------

C_LOCALS = ["", "+cu129", "+cu130"]


def _c_extras(fi: str) -> dict[str, dict[str, str]]:
    base = fi.split("+", 1)[0]
    return {
        "cubin-same": {"flashinfer-cubin": base},
        "jit-cu129": {"flashinfer-jit-cache": f"{base}+cu129"},
        "jit-cu130": {"flashinfer-jit-cache": f"{base}+cu130"},
        "cubin-jit-cu128": {"flashinfer-cubin": base, "flashinfer-jit-cache": f"{base}+cu128"},
        "jit-no-local": {"flashinfer-jit-cache": base},
        "cubin-with-local": {"flashinfer-cubin": f"{base}+cu129"},
    }


def cubin_rows(out: Path) -> list[dict[str, Any]]:
    from stackcheck.assembly.pipeline import load_manifests
    from stackcheck.facts.model import facts_from_document
    from stackcheck.facts.versions import version_in
    from stackcheck.knowledge.loader import load
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_all

    manifests = load_manifests([])
    base = json.loads(_box(out, "0.5.23", None).read_text())
    rows: list[dict[str, Any]] = []
    releases = [r["version"] for r in load().releases("flashinfer-python")]
    for rel in [r for r in releases if version_in(r, ">=0.6.0") is True]:
        for local in C_LOCALS:
            fi = rel + local
            for name, extras in _c_extras(fi).items():
                doc = copy.deepcopy(base)
                pkgs = doc["facts"]["packages"]
                for extra in ("flashinfer-cubin", "flashinfer-jit-cache"):
                    pkgs[extra] = {"installed": False}
                for pkg, v in {"flashinfer-python": fi, **extras}.items():
                    pkgs[pkg] = {"installed": True, "version": v, "dist_version": v}
                ctx = Context(facts=facts_from_document(doc, "facts.json"), manifests=manifests)
                _, checks = evaluate_all(ctx)
                got = next(c for c in checks if c["id"] == "flashinfer-cubin-match")
                if got["status"] == "ok":
                    rows.append({"pop": "c", "flashinfer": fi, "extras": name})
    print(f"c: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, {"llama3": LLAMA3, **Z_MODELS})
    pops = [
        (5, srun_rows(out)),
        (4, hicache_rows(out)),
        (3, zaya_rows(out)),
        (3, flock_rows(out)),
        (3, cubin_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck59_drawn.json")


if __name__ == "__main__":
    main()
