"""`stackcheck recommend` reads the model as the SGLang release its plan installs, not only the installed one.

The reading depends on the release (whether the architecture is MLA: preflight.json model.mla_architectures; the
quantization method; the flags a checkpoint needs to load), and the launch recommend proposes runs on the plan's
stack. GigaChat3.5 (GigaChat35ForCausalLM, DeepSeek-shaped MLA) is MLA from SGLang 0.5.21 only: on the b200 case
box (SGLang 0.5.20, the plan installs 0.5.23) recommend used to read it as 0.5.20 does (not MLA) and proposed
--attention-backend trtllm_mha, which the gate refuses on the plan's stack (attention-trtllm-mha
non-mla-models-only: a crash). It now reads it as 0.5.23 does, and says so as an assumption."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_process import stackcheck_json
from gate_cli import GIGACHAT35, gate_json, model_dir

ROOT = Path(__file__).resolve().parent.parent.parent
B200 = ROOT / "tests" / "cases" / "b200" / "facts.json"  # 8x B200, SGLang 0.5.20: the plan installs a later one
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"  # SGLang 0.5.23 already: nothing to read again


def _recommend(facts: Path, *args: str) -> dict[str, Any]:
    return stackcheck_json("recommend", "--facts", str(facts), "--format", "json", *args)


def _failed(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (str(f.get("feature")), str(r.get("rule")))
        for f in doc["reasons"]
        for r in f.get("reasons") or []
        if r.get("result") == "fail"
    ]


def test_recommend_reads_the_model_as_the_planned_release(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "gigachat35", GIGACHAT35)
    after = tmp_path / "after.json"
    # (irecmodel: recommend refuses a line on a needed check that is unknown, as the gate does: the box's JIT toolchain
    # read, the nvcc 12.8 of the case b200-deepgemm-nvcc128, so that check jit-toolchain is judged)
    box = json.loads(B200.read_text())
    nvcc = json.loads((B200.parents[1] / "b200-deepgemm-nvcc128" / "facts.json").read_text())
    (box.get("facts") or box)["jit"] = (nvcc.get("facts") or nvcc)["jit"]
    facts = tmp_path / "b200-jit.json"
    facts.write_text(json.dumps(box))
    doc = _recommend(facts, "--model-path", str(model), "--plan-facts", str(after))
    assert doc["stack"]["sglang"] != "0.5.20"  # the plan upgrades SGLang
    assert doc["launch"]["mla"] is True  # as the planned release reads GigaChat35ForCausalLM
    said = [a for a in doc["assumptions"] if "the release the plan installs" in a]
    assert said and f"read as SGLang {doc['stack']['sglang']} reads it" in said[0] and "installed 0.5.20" in said[0]
    command = doc["command"]
    assert "trtllm_mha" not in command
    # the proposed line is judged on the plan's stack as the gate judges it: no failed rule
    launch = command[command.index("--model-path") :]
    assert _failed(gate_json(after, *launch, dry_run=True)) == []
    # the line recommend proposed before (the model read as 0.5.20 reads it) crashes there
    old = ["--model-path", str(model), "--tp-size", "8", "--attention-backend", "trtllm_mha"]
    assert ("attention-trtllm-mha", "non-mla-models-only") in _failed(gate_json(after, *old, dry_run=True))


def test_recommend_says_nothing_more_where_the_plan_keeps_the_release(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "gigachat35", GIGACHAT35)
    doc = _recommend(H200, "--model-path", str(model))
    assert doc["launch"]["mla"] is True
    assert not [a for a in doc["assumptions"] if "the release the plan installs" in a]
    # --no-plan: the installed release reads it (0.5.20: not MLA), with no note
    doc = _recommend(B200, "--model-path", str(model), "--no-plan")
    assert doc["launch"]["mla"] is False
    assert not [a for a in doc["assumptions"] if "the release the plan installs" in a]


def test_recommend_says_the_release_where_the_reading_is_the_same(tmp_path: Path) -> None:
    """DeepSeek V3 reads the same on 0.5.20 and 0.5.23: the recommendation stands (no second plan), and the
    assumption still says which release read the model."""
    from gate_cli import DEEPSEEK_R1

    doc = _recommend(B200, "--model-path", str(model_dir(tmp_path, "dsv3", DEEPSEEK_R1)))
    assert doc["launch"]["mla"] is True
    assert [a for a in doc["assumptions"] if "the release the plan installs" in a]
