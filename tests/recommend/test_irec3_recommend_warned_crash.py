"""irec3: a stack check whose crash the gate only warns of was skipped by `recommend`. jit-toolchain's rules
deepgemm-nvcc / deepgemm-upstream-sm100f (DeepGEMM's JIT build) are needed as strongly as the deepgemm feature's
default, default-warn ('fails only with some models'): on a B200 whose CUDA_HOME is 12.8 the gate warns that
deepgemm-nvcc fails with effect crash and allows the launch. recommend's check_problems keeps only what the gate
refuses, and its deepgemm decision read the deepgemm feature's verdict alone (ok), so it kept DeepGEMM on
(deepgemm-default) for a line the check says crashes at DeepGEMM's first JIT build. Now a feature's verdict as
recommend.json reads it carries the crash-effect failures of the check rules that name it in their own required_by
(launch.recommend.with_check_crashes), and the line takes deepgemm-off (SGLANG_ENABLE_JIT_DEEPGEMM=0). The box is
tests/cases/b200-deepgemm-nvcc128 without its second NCCL wheel (which fails check nccl on its own)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASE = Path(__file__).resolve().parents[1] / "cases" / "b200-deepgemm-nvcc128" / "facts.json"


def _box(tmp: Path, nvcc_ok: bool = False) -> Path:
    doc = copy.deepcopy(json.loads(CASE.read_text()))
    doc["facts"]["packages"].pop("nvidia-nccl-cu12", None)
    path = tmp / f"facts-{nvcc_ok}.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_gate_warns_of_the_crash_and_allows(tmp_path: Path) -> None:
    gate = stackcheck_json("gate", "--facts", str(_box(tmp_path)), "--dry-run", "--format", "json", "--", "python",
                           "-m", "sglang.launch_server", "--model-path", "m", "--tp", "8")  # fmt: skip
    warned = [
        (w.get("feature"), x.get("rule"), x.get("effect"))
        for w in gate.get("warnings") or []
        for x in w.get("reasons") or []
    ]
    assert ("jit-toolchain", "deepgemm-nvcc", "crash") in warned, warned


def test_recommend_turns_deepgemm_off_where_its_jit_build_crashes(tmp_path: Path) -> None:
    # fails before the fix: deepgemm-default chosen, the line keeps DeepGEMM on
    facts = _box(tmp_path)
    doc = stackcheck_json("recommend", "--facts", str(facts), "--no-plan", "--tp", "8", "--format", "json")
    chosen = {c.get("decision"): c.get("option") for c in doc["choices"]}
    assert chosen.get("deepgemm") == "deepgemm-off", chosen
    assert doc["command"] and doc["env"].get("SGLANG_ENABLE_JIT_DEEPGEMM") == "0", (doc["command"], doc["env"])
    line = [f"{k}={v}" for k, v in doc["env"].items()] + [str(w) for w in doc["command"]]
    gate = stackcheck_json("gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", "env", *line)
    warned = [x.get("rule") for w in gate.get("warnings") or [] for x in w.get("reasons") or []]
    refused = [r.get("feature") for r in gate.get("reasons") or []]
    # (the gate refuses the placeholder MODEL for what it cannot read of it, not for the toolchain)
    assert "deepgemm-nvcc" not in warned and "jit-toolchain" not in refused, (warned, refused)


def test_a_feature_without_such_a_rule_keeps_its_verdict() -> None:
    from stackcheck.commands.explain import release_facts
    from stackcheck.knowledge.loader import load
    from stackcheck.launch.recommend import with_check_crashes
    from stackcheck.verdicts.context import Context, assumed_gpus
    from stackcheck.verdicts.engine import evaluate_feature

    m = load([], env={})
    facts = release_facts({"gpus": assumed_gpus(m, "9.0x8"), "system": {"machine": "x86_64"}}, m, "0.5.23", None, None)
    ctx = Context(facts=facts, manifests=m, launch={"tp": 8})  # type: ignore[arg-type]
    spec = next(f for f in m.features if f["id"] == "cuda-graph")
    v = evaluate_feature(spec, ctx)
    assert with_check_crashes(v, "cuda-graph", ctx) == v
