"""Llama 4 launches on SGLang 0.5.1-0.5.5 (launch.json refusal `llama4-attention-backend`, FACTCHECK.md seventh
sample, rows c1 and c2): ServerArgs.__post_init__ runs its model-specific adjustments before any default attention
backend is chosen, and for an architecture containing "Llama4" they assert that --attention-backend is one of a
short list (0.5.1/0.5.1.post3: fa3, aiter; 0.5.2-0.5.4: + triton; 0.5.5: + trtllm_mha). SGLang's own Llama 4 page
(docs/basic_usage/llama4.md) launches without --attention-backend, which these releases refuse with an
AssertionError before the server starts; from 0.5.6 SGLang picks the backend itself first (fa3 on SM90,
trtllm_mha on SM100, triton elsewhere).

The gate reads the architecture from the model's config.json (its preflight); where it cannot read it, a launch
that the assertion would refuse for a Llama 4 model is unknown, not allowed. The config.json files are written
here with the keys the model cards publish."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, gate_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.refusals import refusal_problems

ROOT = Path(__file__).resolve().parent.parent.parent
LAUNCH = ["python", "-m", "sglang.launch_server"]
RULE = "llama4-attention-backend"

LLAMA4_SCOUT = {
    "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
    "text_config": {"model_type": "llama4_text", "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128},
}  # fmt: skip
LLAMA4_TEXT = {"architectures": ["Llama4ForCausalLM"], "model_type": "llama4_text"}
DOC_LINE = ["--model-path", "meta-llama/Llama-4-Scout-17B-16E-Instruct", "--port", "30000", "--tp", "8"]


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def judge(mapping: dict[str, Any], version: str, args: list[str], config: dict[str, Any] | None) -> Any:
    d = gate.derive([*LAUNCH, *args], mapping, {})
    arch = str(config["architectures"][0]) if config else None
    models = {"model": attention_keys(config) if config is not None else None}
    got = {p.subject.removeprefix("refusal "): p for p in refusal_problems(d, mapping, version, {9}, arch, models)}
    return got.get(RULE)


@pytest.mark.parametrize("version", ["0.5.1", "0.5.1.post3", "0.5.2", "0.5.3", "0.5.4", "0.5.5"])
@pytest.mark.parametrize("config", [LLAMA4_SCOUT, LLAMA4_TEXT])
def test_the_documented_llama4_launch_is_refused_before_0_5_6(
    mapping: dict[str, Any], version: str, config: dict[str, Any]
) -> None:
    p = judge(mapping, version, DOC_LINE, config)
    assert p is not None and (p.status, p.effect) == ("blocked", "crash")
    assert "AssertionError" in p.message and "--attention-backend fa3" in p.message
    assert p.required and p.required.startswith("fa3, aiter")
    assert any(f"{version} wheel" in s["title"] and "server_args.py" in s["title"] for s in p.source)


def test_each_release_admits_its_own_list(mapping: dict[str, Any]) -> None:
    assert judge(mapping, "0.5.1", [*DOC_LINE, "--attention-backend", "fa3"], LLAMA4_SCOUT) is None
    assert judge(mapping, "0.5.1", [*DOC_LINE, "--attention-backend", "triton"], LLAMA4_SCOUT).status == "blocked"
    assert judge(mapping, "0.5.2", [*DOC_LINE, "--attention-backend", "triton"], LLAMA4_SCOUT) is None
    assert judge(mapping, "0.5.4", [*DOC_LINE, "--attention-backend", "trtllm_mha"], LLAMA4_SCOUT).status == "blocked"
    assert judge(mapping, "0.5.5", [*DOC_LINE, "--attention-backend", "trtllm_mha"], LLAMA4_SCOUT) is None
    # the split flags alone leave --attention-backend unset when the assertion runs
    split = [*DOC_LINE, "--prefill-attention-backend", "fa3", "--decode-attention-backend", "fa3"]
    assert judge(mapping, "0.5.3", split, LLAMA4_SCOUT).status == "blocked"


def test_other_models_and_later_releases_are_not_refused(mapping: dict[str, Any]) -> None:
    assert judge(mapping, "0.5.1", DOC_LINE, LLAMA3) is None
    for version in ("0.5.6", "0.5.9", "0.5.23"):
        assert judge(mapping, version, DOC_LINE, LLAMA4_SCOUT) is None


def test_an_unread_model_is_unknown_where_the_assertion_would_refuse_a_llama4(mapping: dict[str, Any]) -> None:
    p = judge(mapping, "0.5.5", DOC_LINE, None)
    assert p is not None and p.status == "unknown"
    assert judge(mapping, "0.5.5", [*DOC_LINE, "--attention-backend", "fa3"], None) is None


def test_the_gate_refuses_the_documented_launch_end_to_end(tmp_path: Path) -> None:
    """The h200-newest box with SGLang 0.5.5's pins (what the seventh sample's row c1 drew): allowed before."""
    import json

    doc = json.loads((ROOT / "tests" / "cases" / "h200-newest" / "facts.json").read_text())
    facts = doc.get("facts", doc)
    pkgs = facts["packages"]
    pins = {"sglang": "0.5.5", "torch": "2.8.0+cu128", "sgl-kernel": "0.3.16.post5", "flashinfer-python": "0.5.0"}
    pkgs["sglang-kernel"] = {"installed": False}
    pkgs.pop("nvidia-nccl-cu13", None)
    for name, version in pins.items():
        pkgs[name] = {"installed": True, "version": version, "dist_version": version.split("+")[0]}
    pkgs["torch"].update(variant="cu128", cuda="12.8")
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    model = model_dir(tmp_path, "Llama-4-Scout", LLAMA4_SCOUT)
    got = gate_json(path, "--model-path", str(model), "--tp", "8", "--context-length", "65536", dry_run=True)
    assert got["decision"] == "refuse"
    assert any(r["feature"] == f"refusal {RULE}" and r["status"] == "blocked" for r in got["reasons"]), got["reasons"]
    fa3 = gate_json(path, "--model-path", str(model), "--tp", "8", "--attention-backend", "fa3", dry_run=True)
    assert not any(r["feature"] == f"refusal {RULE}" for r in fa3["reasons"])
