"""A box where NVML (or nvidia-smi) read some GPUs' compute capability and not others'. Before, the GPU whose
compute capability was not read was dropped everywhere: launch/refusals.gpu_majors gave the majors of the GPUs
read, and the verdicts judged each GPU model read, so seven H200s and one GPU not read were judged as an H200
box. SGLang picks and asserts per GPU, and the GPU not read may be an SM120 one, where a rule refuses the launch:
the gate allowed a launch that could crash (fail open). Now the majors are not known (None: the refusal rules that
depend on them say unknown) and every per-GPU rule of the verdicts is unknown for the GPU not read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import QWEN3_NEXT, config_rule_status, gate_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch.refusals import gpu_majors, known_gpu_majors

ROOT = Path(__file__).resolve().parent.parent.parent
SEED_AFTER = ROOT / "tests" / "recommend" / "seed-after" / "facts.json"  # 8 x SM120, SGLang 0.5.23
FA4 = ("--tp", "4", "--attention-backend", "fa4")


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def test_majors_are_not_known_while_one_gpu_is_not_read() -> None:
    read = {"compute_capability": "9.0"}
    assert gpu_majors({"gpus": [read, {"compute_capability": None, "error": "gpu 1: NVMLError"}]}) is None
    assert gpu_majors({"gpus": [read, {"name": "NVIDIA H200"}]}) is None
    assert gpu_majors({"gpus": [read, {"compute_capability": "9.x"}]}) is None
    assert gpu_majors({"gpus": [read, read]}) == {9}
    assert gpu_majors({"gpus": []}) is None
    # the majors read, for the picks SGLang makes on them (requiring more never passes a launch)
    assert known_gpu_majors({"gpus": [read, {"name": "x"}]}) == {9}
    assert known_gpu_majors({"gpus": [{"name": "x"}]}) is None


def test_a_rule_that_refuses_on_sm120_is_unknown_where_a_gpu_is_not_read(mapping: dict[str, Any]) -> None:
    """hybrid-gdn-blackwell-backend: Qwen3-Next on fa4 is refused on SM120 in 0.5.23 and passes on Hopper."""
    rule = "hybrid-gdn-blackwell-backend"
    assert config_rule_status(mapping, rule, "0.5.23", {12}, QWEN3_NEXT, *FA4) == "blocked"
    assert config_rule_status(mapping, rule, "0.5.23", {9}, QWEN3_NEXT, *FA4) == "ok"
    majors = gpu_majors({"gpus": [{"compute_capability": "9.0"}, {"compute_capability": None}]})
    assert config_rule_status(mapping, rule, "0.5.23", majors, QWEN3_NEXT, *FA4) == "unknown"


def _partly_read(tmp_path: Path) -> Path:
    """seed-after with GPUs 1-7 made H200s and GPU 0's compute capability not read (an NVML error on it)."""
    facts = json.loads(SEED_AFTER.read_text())
    gpus = facts["facts"]["gpus"]
    for g in gpus[1:]:
        g["name"], g["compute_capability"] = "NVIDIA H200", "9.0"
    gpus[0]["compute_capability"] = None
    gpus[0]["error"] = "gpu 0 compute capability: NVMLError_Unknown"
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(facts))
    return path


def test_the_gate_does_not_allow_a_box_with_a_gpu_not_read(tmp_path: Path) -> None:
    """Before: allow (judged as eight H200s)."""
    facts = _partly_read(tmp_path)
    model = model_dir(tmp_path, "qwen3-next", QWEN3_NEXT)
    doc = gate_json(facts, "--model-path", str(model), *FA4, dry_run=True)
    assert doc["decision"] != "allow", doc["decision"]
    text = json.dumps(doc)
    assert "hybrid-gdn-blackwell-backend" in text
    assert "GPU 0" in text and "NVMLError_Unknown" in text
