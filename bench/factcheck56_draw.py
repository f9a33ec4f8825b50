"""The fifty-sixth fact-check sample's populations and seeded draw (bench/factcheck56_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck56_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the fifteenth session's third wave and its mends allow or call ok
(git log --first-parent b6617cd8..efa60580): srun's abbreviated long options (igap53), the GB10 host pool with a bound
(igap53 merged beside ifc54), the rotary base of models whose config.json states rope_theta under transformers 5 on
SGLang 0.5.10+ (igap53's rope-theta-file-default), the SGL_ spelling of launch.json's env entries and a PATH that moves
the toolkit (imend5), plans bringing quack-kernels / tilelang / nvidia-mathdx or removing an NCCL wheel (igap52), and
irobust6's runner / nesting readings. A row equal to one an earlier sample drew is left out.

Box: factcheck49_draw._box (tests/cases/h200-newest with the release's pins, the extra packages, libnuma; 8 H200); the
GB10 of factcheck51_draw.BOXES as factcheck27_draw._box builds it.

(s) `gate` of Llama 3 `--tp 2` / `--tp 1` behind each srun prefix of S_PREFIXES (abbreviated long options, -N1 / -n
    spellings, mixed) at 0.5.13 / 0.5.23: one row per allow;
(h) `gate` of Llama 3 `--enable-hierarchical-cache` (0.5.23 also `--enable-hicache`) on the GB10 with each bound of
    H_BOUNDS at 0.5.11 / 0.5.18 / 0.5.23: one row per allow or per ok feature whose reasons name hicache;
(t) `gate` of each model of T_MODELS (a config.json stating rope_theta) at T_RELEASES (transformers 5 pinned), `--tp
    1` and `--tp 2`: one row per allow;
(e) `gate` of Llama 3 `--tp 2` behind `env` with the SGL_ spellings of E_ENV at E_RELEASES: one row per allow;
(k) `gate` of Llama 3 `--tp 2` behind each PATH-changing prefix of K_PREFIXES at K_RELEASES: one row per allow;
(p) plan_and_facts of the boxes of P_BOXES with the pins of P_PINS: one row per distinct (box, pins, ok feature or
    check of the facts after the plan, its reasons' rule / observed / result) whose reasons name quack, tilelang,
    mathdx or nccl, where the plan has a step;
(i) `gate` of Llama 3 `--tp 2` through each runner / nesting form of I_FORMS (su / runuser command strings, flock -c,
    exec, timeout's abbreviations, nested srun, sh -c inside bash -c) at 0.5.13 / 0.5.23: one row per allow.

Draw: random.Random(20270125); per population the rows sorted by JSON text, shuffled, the first k (s 4, h 2, t 4, e 4,
k 1, p 2, i 3), 18 rows. The k were first s 3, h 2, t 3, e 3, k 3, p 2, i 2; the populations came out h 0 and k 1 (14
rows), so the four unused were given to s, t, e and i before any row was checked (each population's shuffle takes
the same draws of the generator whatever its k, so the first 14 rows stand). Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck27_draw import _box as _box27
from factcheck49_draw import _box
from factcheck51_draw import BOXES
from factcheck54_draw import P_GPUS, _plan_after
from factcheck_draw import ROOT, draw_undrawn, stackcheck_json_or_error, write_models
from factcheck_draw import write_box as _write
from gate_cli import LLAMA3

SEED = 20270125
LAUNCH = ["python3", "-m", "sglang.launch_server"]


def _config(arch: str, model_type: str, theta: float, **more: Any) -> dict[str, Any]:
    base = {"architectures": [arch], "model_type": model_type, "hidden_size": 4096, "num_attention_heads": 32,
            "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 32, "vocab_size": 128256,
            "intermediate_size": 14336, "max_position_embeddings": 32768, "torch_dtype": "bfloat16"}  # fmt: skip
    return {**base, "rope_theta": theta, **more}


T_MODELS: dict[str, dict[str, Any]] = {
    "exaone4-1e6": _config("Exaone4ForCausalLM", "exaone4", 1000000),
    "exaone4-1e6-params": {
        **_config("Exaone4ForCausalLM", "exaone4", 1000000),
        "rope_parameters": {"rope_type": "default", "rope_theta": 1000000},
    },
    "exaone-moe-1e6": _config("ExaoneMoEForCausalLM", "exaone_moe", 1000000.0),
    "exaone4-llama3-scaling": {
        **_config("Exaone4ForCausalLM", "exaone4", 1000000),
        "rope_scaling": {
            "rope_type": "llama3",
            "factor": 16.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
    },
    "internlm2-1e6": _config(
        "InternLM2ForCausalLM",
        "internlm2",
        1000000,
        auto_map={
            "AutoConfig": "configuration_internlm2.InternLM2Config",
            "AutoModelForCausalLM": "modeling_internlm2.InternLM2ForCausalLM",
        },
    ),
    "gptj-1e4": _config("GPTJForCausalLM", "gptj", 10000, rotary_dim=64, n_embd=4096, n_head=16, n_layer=28),
    "gptj-5e5": _config("GPTJForCausalLM", "gptj", 500000, rotary_dim=64, n_embd=4096, n_head=16, n_layer=28),
    "qwen3-1e6": _config("Qwen3ForCausalLM", "qwen3", 1000000),
    "qwen3-5e6": _config("Qwen3ForCausalLM", "qwen3", 5000000),
    "qwen3-moe-1e6": _config(
        "Qwen3MoeForCausalLM", "qwen3_moe", 1000000, num_experts=128, num_experts_per_tok=8, moe_intermediate_size=768
    ),
    "llama-5e5": {**LLAMA3, "rope_theta": 500000.0},
    "lfm2-1e6": _config("Lfm2ForCausalLM", "lfm2", 1000000),
    "grok-1e4": _config("Grok1ForCausalLM", "grok-1", 10000),
    "cohere2-moe": _config("Cohere2MoeForCausalLM", "cohere2_moe", 50000),
    "mimo-v2": _config("MiMoV2FlashForCausalLM", "mimo_v2_flash", 5000000),
}
T_RELEASES = ["0.5.10", "0.5.14", "0.5.19", "0.5.23"]


def _line(out: Path, path: Path, prefix: list[str], model: str, *flags: str) -> list[str]:
    line = [*prefix, *LAUNCH, "--model-path", str(out / "models" / model), *flags]
    return ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]


def _allowed(args: list[str]) -> dict[str, Any] | None:
    doc = stackcheck_json_or_error(args)
    return doc if doc.get("decision") == "allow" else None


# ---- (s) srun's abbreviated and mixed options ---------------------------------------------------------------------

S_PREFIXES: dict[str, list[str]] = {
    "exp=ALL": ["srun", "--exp=ALL"],
    "expo-ALL": ["srun", "--expo", "ALL"],
    "export-all-lower": ["srun", "--export=all"],
    "exp=ALL,var": ["srun", "--exp=ALL,NCCL_DEBUG=INFO"],
    "exp=NCCL-only": ["srun", "--exp=NCCL_DEBUG"],
    "N1": ["srun", "-N1"],
    "N1-exp": ["srun", "-N1", "--exp=ALL"],
    "ntasks=1": ["srun", "--ntasks=1"],
    "ntasks-2-words": ["srun", "--ntasks", "2"],
    "n2": ["srun", "-n2"],
    "ntasks-per-node=1": ["srun", "--ntasks-per-node=1", "--exp=ALL"],
    "nodes=2": ["srun", "--nodes=2", "--ntasks-per-node=1"],
    "gres": ["srun", "-N1", "--gres=gpu:2", "--exp=ALL"],
    "gpus-per-task=1": ["srun", "--gpus-per-task=1"],
    "gpus=2": ["srun", "--gpus=2", "-N1"],
    "excl": ["srun", "--excl", "-N1"],
    "mpi-none": ["srun", "--mpi=none", "-N1"],
    "chdir": ["srun", "--chd=/srv", "-N1"],
    "cpu-bind": ["srun", "--cpu-b=cores", "-n1"],
    "nested-env": ["srun", "-N1", "--exp=ALL", "env", "NCCL_DEBUG=INFO"],
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


# ---- (h) the hierarchical cache on a GB10 with a bound -----------------------------------------------------------

H_BOUNDS: dict[str, tuple[str, ...]] = {
    "fraction-0.3": ("--mem-fraction-static", "0.3"),
    "fraction-0.3-ratio-0.5": ("--mem-fraction-static", "0.3", "--hicache-ratio", "0.5"),
    "fraction-0.2-size-8": ("--mem-fraction-static", "0.2", "--hicache-size", "8"),
    "fraction=0.25-size=16": ("--mem-fraction-static=0.25", "--hicache-size=16"),
    "fraction-0.5-size-4": ("--mem-fraction-static", "0.5", "--hicache-size", "4"),
    "fraction-0.1-ratio-1": ("--mem-fraction-static", "0.1", "--hicache-ratio", "1"),
    "size-4": ("--hicache-size", "4"),
    "size-120": ("--hicache-size", "120"),
    "size-0-ratio-0.5": ("--hicache-size", "0", "--hicache-ratio", "0.5"),
    "ratio-2.5": ("--hicache-ratio", "2.5"),
    "tokens-8192-size-2": ("--max-total-tokens", "8192", "--hicache-size", "2"),
    "fraction-0.3-tokens": ("--mem-fraction-static", "0.3", "--max-total-tokens", "16384"),
}


def gb10_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.11", "0.5.18", "0.5.23"):
        path = _box27(out, rel, BOXES["gb10"])
        flags = ["--enable-hierarchical-cache"] + (["--enable-hicache"] if rel == "0.5.23" else [])
        for flag in flags:
            for bound, words in H_BOUNDS.items():
                doc = stackcheck_json_or_error(_line(out, path, [], "llama3", flag, *words))
                if doc.get("decision") == "allow":
                    rows.append({"pop": "h", "sglang": rel, "flag": flag, "bound": bound, "got": "allow"})
                    continue
                for f in doc.get("features") or []:
                    if f.get("status") == "ok" and "hicache" in json.dumps(f.get("reasons") or []).lower():
                        row = {"pop": "h", "sglang": rel, "flag": flag, "bound": bound, "got": f"{f.get('feature')} ok"}
                        rows.append(row)
        print(f"h {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (t) the rotary base under transformers 5 ---------------------------------------------------------------------


def rope_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in T_RELEASES:
        path = _box(out, rel, None)
        for model in T_MODELS:
            for flags, words in (("tp1", ("--tp", "1")), ("tp2", ("--tp", "2"))):
                extra = ("--trust-remote-code",) if model.startswith("internlm2") else ()
                if _allowed(_line(out, path, [], model, *words, *extra)) is not None:
                    rows.append({"pop": "t", "sglang": rel, "model": model, "flags": flags})
        print(f"t {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (e) the SGL_ spelling of launch.json's env entries ----------------------------------------------------------

E_ENV: dict[str, list[str]] = {
    "jit-deepgemm-0": ["SGL_ENABLE_JIT_DEEPGEMM=0"],
    "jit-deepgemm-1-sglang-0": ["SGL_ENABLE_JIT_DEEPGEMM=1", "SGLANG_ENABLE_JIT_DEEPGEMM=0"],
    "jit-deepgemm-0-sglang-1": ["SGL_ENABLE_JIT_DEEPGEMM=0", "SGLANG_ENABLE_JIT_DEEPGEMM=1"],
    "pcie-ipc-1": ["SGL_ENABLE_PCIE_IPC_ALLREDUCE=1"],
    "ar-v2-0": ["SGL_OPT_USE_CUSTOM_ALL_REDUCE_V2=0"],
    "ar-v2-1": ["SGL_OPT_USE_CUSTOM_ALL_REDUCE_V2=1"],
    "jit-ar-1": ["SGL_USE_JIT_ALL_REDUCE=1"],
    "mqa-torch-1": ["SGL_FP8_PAGED_MQA_LOGITS_TORCH=1"],
    "mega-moe-1": ["SGL_OPT_USE_DEEPGEMM_MEGA_MOE=1"],
    "minicpm-topk-1": ["SGL_MINICPM_FUSE_TOPK=1"],
    "cutedsl-w4a16-1": ["SGL_FLASHINFER_CUTEDSL_NVFP4_W4A16=1"],
    "flashmla-prefill-0": ["SGL_OPT_FLASHMLA_SPARSE_PREFILL=0"],
    "sglang-sgl-prefix": ["SGLANG_SGL_ENABLE_JIT_DEEPGEMM=0"],
}
E_RELEASES = ["0.5.2", "0.5.4", "0.5.9", "0.5.13", "0.5.20", "0.5.23"]


def sgl_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in E_RELEASES:
        path = _box(out, rel, None)
        for name, words in E_ENV.items():
            if _allowed(_line(out, path, ["env", *words], "llama3", "--tp", "2")) is not None:
                rows.append({"pop": "e", "sglang": rel, "env": name})
        print(f"e {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (k) a PATH that moves the toolkit ----------------------------------------------------------------------------

K_PREFIXES: dict[str, list[str]] = {
    "path-cuda-12.4": ["env", "PATH=/usr/local/cuda-12.4/bin:/usr/bin:/bin"],
    "path-cuda-13.0": ["env", "PATH=/usr/local/cuda-13.0/bin:/usr/bin:/bin"],
    "path-system": ["env", "PATH=/usr/bin:/bin"],
    "path-unset": ["env", "-u", "PATH"],
    "env-i": ["env", "-i", "HOME=/root"],
    "path-and-cuda-home": ["env", "CUDA_HOME=/usr/local/cuda-12.8", "PATH=/usr/local/cuda-12.8/bin:/usr/bin:/bin"],
    "cuda-home-only": ["env", "CUDA_HOME=/usr/local/cuda-12.8"],
    "path-venv-first": ["env", "PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
    "ld-library-path": ["env", "LD_LIBRARY_PATH=/usr/local/cuda-12.4/lib64"],
}
K_SHELL = {
    "sh-export-path": "export PATH=/usr/local/cuda-12.4/bin:$PATH; ",
    "sh-path-assign": "PATH=/usr/local/cuda-13.0/bin:$PATH ",
}
K_RELEASES = ["0.5.5", "0.5.13", "0.5.23"]


def path_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in K_RELEASES:
        path = _box(out, rel, None)
        for name, prefix in K_PREFIXES.items():
            if _allowed(_line(out, path, prefix, "llama3", "--tp", "2")) is not None:
                rows.append({"pop": "k", "sglang": rel, "prefix": name})
        for name, text in K_SHELL.items():
            launch = shlex.join([*LAUNCH, "--model-path", str(out / "models" / "llama3"), "--tp", "2"])
            args = ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", "sh", "-c", text + launch]
            if _allowed(args) is not None:
                rows.append({"pop": "k", "sglang": rel, "prefix": name})
        print(f"k {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (p) plans whose steps bring quack-kernels / tilelang / nvidia-mathdx or remove an NCCL wheel --------------

P_PINS: dict[str, dict[str, str]] = {
    "sglang-0.5.16": {"sglang": "0.5.16"},
    "sglang-0.5.18": {"sglang": "0.5.18"},
    "sglang-0.5.20": {"sglang": "0.5.20"},
    "sglang-0.5.22": {"sglang": "0.5.22"},
    "sglang-0.5.23": {"sglang": "0.5.23"},
}
_NAMES = ("quack", "tilelang", "mathdx", "nccl")


def plan_rows(out: Path) -> list[dict[str, Any]]:
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_all

    boxes: dict[str, Path] = {}
    for gpu, (name, cc) in P_GPUS.items():
        doc = json.loads((ROOT / "tests" / "cases" / "h200-newest" / "facts.json").read_text())
        facts = doc["facts"]
        for g in facts["gpus"]:
            g.update(name=name, compute_capability=cc)
        for pkg in ("sglang", "quack-kernels", "tilelang", "nvidia-mathdx"):
            facts["packages"][pkg] = {"installed": False}
        boxes[f"{gpu}-no-sglang"] = _write(out, doc, f"p56-{gpu}-no-sglang.json")
    boxes["cu128-nccl-cu12"] = ROOT / "tests" / "plan_cases" / "writeup-before-default" / "facts.json"
    rows: dict[str, dict[str, Any]] = {}
    for box, path in boxes.items():
        for pin_name, pins in P_PINS.items():
            try:
                plan, (after, manifests) = _plan_after(path, pins)
            except Exception as e:  # a pin the planner refuses is no row
                print(f"p {box} {pin_name}: {type(e).__name__}", file=sys.stderr)
                continue
            if after is None or not plan.get("steps"):
                continue
            features, checks = evaluate_all(Context(facts=cast("Any", after), manifests=manifests))
            for kind, entries in (("feature", features), ("check", checks)):
                for e in entries:
                    j = dict(e) if isinstance(e, dict) else dict(e.to_json())  # type: ignore[attr-defined]
                    if j.get("status") != "ok":
                        continue
                    reasons = [[r.get("rule"), r.get("observed"), r.get("result")] for r in j.get("reasons") or []]
                    if not any(n in json.dumps(reasons).lower() for n in _NAMES):
                        continue
                    row = {"pop": "p", "box": box, "pins": pin_name, kind: j.get("id"), "reasons": reasons}
                    rows.setdefault(json.dumps(row, sort_keys=True), row)
        print(f"p {box}: {len(rows)}", file=sys.stderr, flush=True)
    return list(rows.values())


# ---- (i) irobust6's runner and nesting readings -------------------------------------------------------------------

I_FORMS: dict[str, tuple[list[str], str]] = {
    # name: (the words before the launch's text, how the text is given: "argv", or a format with {} for it)
    "su-command=": (["su", "svc"], "--command={}"),
    "su-lc": (["su"], "-lc{}"),
    "runuser-session-command": (["runuser", "-u", "svc", "--session-command"], "{}"),
    "flock-c": (["flock", "/tmp/l", "-c"], "{}"),
    "flock-w-command": (["flock", "-w", "5", "/tmp/l", "--command"], "{}"),
    "flock-x-cd": (["nohup", "flock", "-x", "/tmp/l", "-c"], "cd /srv && {}"),
    "sh-assign-exec": (["sh", "-c"], "A=1 exec {}"),
    "sh-exec": (["sh", "-c"], "exec {}"),
    "bash-sh-c": (["bash", "-c"], "sh -c {q}"),
    "timeout-k5": (["timeout", "-k5", "10"], "argv"),
    "timeout-signal": (["timeout", "--signal=TERM", "10"], "argv"),
    "timeout-sig-v": (["timeout", "-sTERM", "-v", "10"], "argv"),
    "srun-srun": (["srun", "-N1", "srun", "--exp=ALL"], "argv"),
    "nohup-setsid-srun": (["nohup", "setsid", "srun", "-N1"], "argv"),
    "sudo-E": (["sudo", "-E"], "argv"),
}


def runner_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    launch = [*LAUNCH, "--model-path", str(out / "models" / "llama3"), "--tp", "2"]
    for rel in ("0.5.13", "0.5.23"):
        path = _box(out, rel, None)
        for name, (before, how) in I_FORMS.items():
            text = shlex.join(launch)
            words = [*before, *launch] if how == "argv" else [*before, how.format(text, q=shlex.quote(text))]
            if name == "su-lc":
                words.append("svc")
            args = ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *words]
            if _allowed(args) is not None:
                rows.append({"pop": "i", "sglang": rel, "form": name})
        print(f"i {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, {"llama3": LLAMA3, **T_MODELS})
    pops = [
        (4, srun_rows(out)),
        (2, gb10_rows(out)),
        (4, rope_rows(out)),
        (4, sgl_rows(out)),
        (1, path_rows(out)),
        (2, plan_rows(out)),
        (3, runner_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck56_drawn.json")


if __name__ == "__main__":
    main()
