"""The sixteenth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Sixteenth sample").

    PYTHONPATH=. python bench/factcheck16_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what no earlier sample drew: launches that combine two features on the
brief's SM12x PCIe boxes, the features a plan promises its steps make ok, and triage's fixes for recorded crashes.

(a) `gate --dry-run --format json` on two SM12x boxes and the releases the brief names and later:
    - the writeup-after case (8x RTX PRO 6000, cc 12.0, PCIe across two sockets, driver and toolkit CUDA 13.0,
      torch 2.9.1+cu130, sgl-kernel 0.3.21, FlashInfer 0.6.4, SGLang 0.5.9) as it is, and with each final SGLang
      release 0.5.10-0.5.23 and its pins (factcheck7_draw.release_box), `--tp 8`;
    - the gb10-cu130-pypi-kernel case (1x GB10, cc 12.1, aarch64, SGLang 0.5.9) as it is and with the same
      releases, `--tp 1`;
    every unordered pair of the feature flags of FEATS (two MoE runners never together; a MoE runner only with a
    MoE model) with each model of MODELS (configs written for this sample in the published checkpoints' shape,
    not copied): one row per allow decision;
(b) `plan --format json` and `plan --want F --format json` for every feature F of the manifests, on the
    h200-newest case (8 GPUs, NVLink, driver CUDA 13.0) with each final SGLang release 0.5.1-0.5.23 and its pins
    and its GPUs set to compute capability 8.0, 9.0, 10.0 or 12.0 (92 boxes): one row per distinct (cc, the plan's
    target stack, feature) for every feature a step of the plan says it unblocks (the plan's promise that the
    feature is ok after its steps), labelled with the first (release, want) that gives it;
(c) `triage LOG --facts FACTS --format json` for every tests/realworld case with a server.log and a facts.json:
    one row per case whose `fix` names a plan step or a fix (not still_blocked), with that fix and the
    signature's fix line.

Draw: random.Random(20261216); per population its rows sorted by their JSON text, shuffled, the first k (a: 15,
b: 8, c: 4), 27 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import contextlib
import copy
import io
import itertools
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck_draw import ROOT, draw, final_releases, gate, write_models

SEED = 20261216
CCS = ["8.0", "9.0", "10.0", "12.0"]
_QWEN3MOE = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 4096,
             "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
             "num_experts_per_tok": 8, "moe_intermediate_size": 1536, "num_hidden_layers": 94}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "llama3": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
               "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 32},
    "qwen3moe": _QWEN3MOE,
    "qwen3moe-fp8": {**_QWEN3MOE, "quantization_config": {"quant_method": "fp8", "fmt": "e4m3",
                                                          "activation_scheme": "dynamic",
                                                          "weight_block_size": [128, 128]}},
    "eagle3-draft": {"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": 4096,
                     "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 1},
}  # fmt: skip
LAUNCH_MODELS = ["llama3", "qwen3moe", "qwen3moe-fp8"]
FEATS: dict[str, str] = {
    "eagle3": "--speculative-algorithm EAGLE3 --speculative-draft-model-path {draft} --speculative-num-steps 3"
    " --speculative-eagle-topk 1 --speculative-num-draft-tokens 4",
    "torch-symm-mem": "--enable-torch-symm-mem",
    "allreduce-fusion": "--enable-flashinfer-allreduce-fusion",
    "fp8-kv": "--kv-cache-dtype fp8_e4m3",
    "dp-attention": "--enable-dp-attention --dp {tp}",
    "moe-triton": "--moe-runner-backend triton",
    "moe-deep_gemm": "--moe-runner-backend deep_gemm",
    "moe-flashinfer_cutlass": "--moe-runner-backend flashinfer_cutlass",
    "moe-flashinfer_trtllm": "--moe-runner-backend flashinfer_trtllm",
    "moe-cutlass": "--moe-runner-backend cutlass",
}
GATE_BOXES = [("writeup-after", 8), ("gb10-cu130-pypi-kernel", 1)]


def _call(args: list[str]) -> dict[str, Any]:
    from stackcheck.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        main(args)
    doc: dict[str, Any] = json.loads(buf.getvalue())
    return doc


def gate_rows(out: Path) -> list[dict[str, Any]]:
    from factcheck7_draw import release_box

    write_models(out, MODELS)
    draft = str(out / "models" / "eagle3-draft")
    rows: list[dict[str, Any]] = []
    for case, tp in GATE_BOXES:
        for rel in [r for r in final_releases() if tuple(map(int, r.split("."))) >= (0, 5, 9)]:
            if rel == "0.5.9":
                doc = json.loads((ROOT / "tests" / "cases" / case / "facts.json").read_text())
            else:
                doc = release_box(case, rel)
            path = out / f"box-{case}-{rel}.json"
            path.write_text(json.dumps(doc))
            for f1, f2 in itertools.combinations(FEATS, 2):
                if f1.startswith("moe-") and f2.startswith("moe-"):
                    continue
                for model in LAUNCH_MODELS:
                    if model == "llama3" and (f1.startswith("moe-") or f2.startswith("moe-")):
                        continue
                    flags = [*FEATS[f1].split(), *FEATS[f2].split()]
                    flags = [f.format(draft=draft, tp=tp) for f in flags]
                    line = ["--model-path", str(out / "models" / model), "--tp", str(tp), *flags]
                    if gate(path, line).get("decision") == "allow":
                        rows.append({"pop": "a", "box": case, "sglang": rel, "model": model, "features": [f1, f2]})
            print(f"a {case} {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def plan_rows(out: Path) -> list[dict[str, Any]]:
    from factcheck7_draw import release_box

    from stackcheck.knowledge.loader import load

    features = [f["id"] for f in load().features]
    seen: dict[str, dict[str, Any]] = {}
    for rel in final_releases():
        base = release_box("h200-newest", rel)
        for cc in CCS:
            doc = copy.deepcopy(base)
            for g in doc["facts"]["gpus"]:
                g["compute_capability"] = cc
            path = out / f"plan-box-{rel}-{cc}.json"
            path.write_text(json.dumps(doc))
            for want in [None, *features]:
                args = ["plan", "--facts", str(path), "--format", "json"]
                rep = _call(args if want is None else [*args, "--want", want])
                plan = rep.get("plan") or {}
                target = plan.get("target")
                for step in plan.get("steps") or []:
                    for feat in step.get("unblocks") or []:
                        key = json.dumps([cc, target, feat], sort_keys=True)
                        seen.setdefault(key, {"pop": "b", "cc": cc, "sglang": rel, "want": want,
                                              "target": target, "feature": feat,
                                              "step": step.get("component")})  # fmt: skip
        print(f"b {rel}: {len(seen)}", file=sys.stderr, flush=True)
    return list(seen.values())


def triage_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for case in sorted((ROOT / "tests" / "realworld").iterdir()):
        log, facts = case / "server.log", case / "facts.json"
        if not (log.exists() and facts.exists()):
            continue
        doc = _call(["triage", str(log), "--facts", str(facts), "--format", "json"])
        fix = doc.get("fix")
        if not fix or fix.get("still_blocked"):
            continue
        sig = (doc.get("root_cause") or {}).get("signature") or {}
        rows.append({"pop": "c", "case": case.name, "fix": fix, "signature": sig.get("id"),
                     "signature_fix": sig.get("fix")})  # fmt: skip
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    a = gate_rows(out)
    b = plan_rows(out)
    draw(out, SEED, [(15, a), (8, b), (4, triage_rows())])


if __name__ == "__main__":
    main()
