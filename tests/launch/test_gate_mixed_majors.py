"""A box with GPUs of two majors: SGLang picks the attention backend once, from the GPU the server starts on, and
every GPU then runs that pick. Before, only refusals.auto.attention_backend entries covering every major of the box
counted: a default or a model override that picks on one major and falls through on the other required nothing
there, and the gate allowed a launch whose pick could not run on the other GPUs (fail open). Each major is now
judged alone, and every major's pick is required on the box."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import DEEPSEEK_R1, LLAMA3, gate_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.preflight.model import attention_keys

ROOT = Path(__file__).resolve().parent.parent.parent
SEED_AFTER = ROOT / "tests" / "recommend" / "seed-after" / "facts.json"  # 8 x SM120, SGLang 0.5.23


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def features(
    mapping: dict[str, Any], version: str, majors: set[int], config: dict[str, Any] | None, *flags: str
) -> list[str]:
    from stackcheck.launch.refusals import auto_backend_features, auto_backend_unread

    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *flags], mapping, {})
    if config is None:
        return sorted(f for f, _ in auto_backend_unread(d, mapping, version, majors, "12.9", None))
    arch = str(config["architectures"][0])
    mla = "kv_lora_rank" in config
    return sorted(
        f for f, _ in auto_backend_features(d, mapping, version, majors, "12.9", mla, arch, attention_keys(config))
    )


def test_each_major_of_a_mixed_box_adds_its_own_pick(mapping: dict[str, Any]) -> None:
    """Llama 3 on Hopper + SM120 (0.5.23): fa3 from the Hopper GPUs, flashinfer from the SM120 ones (before: none);
    DeepSeek R1 on Hopper + SM100: its override's trtllm_mla on SM100 and the default fa3 where it falls through."""
    for version in ("0.5.9", "0.5.23"):
        both = features(mapping, version, {9, 12}, LLAMA3)
        assert both == sorted(set(features(mapping, version, {9}, LLAMA3) + features(mapping, version, {12}, LLAMA3)))
        assert "attention-fa3" in both, version
        r1 = features(mapping, version, {9, 10}, DEEPSEEK_R1)
        assert {"attention-fa3", "attention-trtllm-mla"} <= set(r1), (version, r1)
    # a single major is unchanged: the entries of that major
    assert features(mapping, "0.5.23", {9}, LLAMA3) == ["attention-fa3"]
    # the model not read: the picks of each major's overrides and MLA defaults are judged (as unknown), as on one
    assert set(features(mapping, "0.5.23", {9}, None)) <= set(features(mapping, "0.5.23", {9, 10}, None))
    assert set(features(mapping, "0.5.23", {10}, None)) <= set(features(mapping, "0.5.23", {9, 10}, None))


def test_the_gate_refuses_a_pick_one_major_cannot_run(tmp_path: Path) -> None:
    """seed-after with its GPUs 4-7 made H200s (majors 12 and 9): Llama 3 with no attention flag. Started on an H200
    SGLang picks fa3, which the SM120 GPUs cannot run: the gate refuses attention-fa3 (before: allow)."""
    facts = json.loads(SEED_AFTER.read_text())
    for g in facts["facts"]["gpus"][4:]:
        g["name"], g["compute_capability"] = "NVIDIA H200", "9.0"
    mixed = tmp_path / "facts.json"
    mixed.write_text(json.dumps(facts))
    model = model_dir(tmp_path, "llama", LLAMA3)
    doc = gate_json(mixed, "--model-path", str(model), dry_run=True)
    assert doc["decision"] != "allow", doc["decision"]
    assert "attention-fa3" in json.dumps(doc)
    # with the backend named, each GPU runs flashinfer: no default pick is required
    named = gate_json(mixed, "--model-path", str(model), "--attention-backend", "flashinfer", dry_run=True)
    assert named["decision"] == "allow"
    assert "attention-fa3" not in json.dumps(named["reasons"])
