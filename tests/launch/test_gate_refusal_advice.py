"""What a refusal tells the user to give instead names only attention backends the box runs. Before, the
deterministic-inference refusal listed SGLang's whole list: on an SM120 box (seed-after: 8 x RTX PRO 6000, SGLang
0.5.23) it advised ascend (Ascend NPUs), intel_xpu (Intel XPUs) and fa3 (SGLang's FA3 majors are 8 and 9), each of
which fails to start there. Now the backends of another accelerator (launch.json
refusals.auto.attention_backend.other_platforms) and those whose feature is blocked on the box are left out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import DEEPSEEK_V2_LITE, LAUNCH, LLAMA3, gate_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.refusals import backends_not_running, refusal_problems

ROOT = Path(__file__).resolve().parent.parent.parent
SEED_AFTER = ROOT / "tests" / "recommend" / "seed-after" / "facts.json"  # 8 x SM120, SGLang 0.5.23
FLAG = "--enable-deterministic-inference"
RULE = "refusal deterministic-attention-backend"


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def _refusal(doc: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in doc["reasons"] if r.get("feature") == RULE)


def test_the_advice_on_sm120_names_only_backends_that_run_there(tmp_path: Path) -> None:
    """DeepSeek-V2-Lite on flashinfer: SGLang's DeepSeek check takes ascend, fa3, fa4, triton (fa4 on SM100/SM110
    only): on SM120 only triton runs (before: 'ascend, fa3, triton'). Llama 3 on trtllm_mha: the general list less
    ascend, fa3 and intel_xpu (before: 'ascend, fa3, fa4, flashinfer, intel_xpu, triton')."""
    ds = gate_json(SEED_AFTER, "--model-path", str(model_dir(tmp_path, "ds", DEEPSEEK_V2_LITE)), FLAG,
                   "--attention-backend", "flashinfer", dry_run=True)  # fmt: skip
    text = json.dumps(_refusal(ds))
    assert ds["decision"] == "refuse" and _refusal(ds)["status"] == "blocked"
    assert 'Give --attention-backend one of triton"' in text
    assert "takes triton only here" in text
    llama = gate_json(SEED_AFTER, "--model-path", str(model_dir(tmp_path, "llama", LLAMA3)), FLAG,
                      "--attention-backend", "trtllm_mha", dry_run=True)  # fmt: skip
    text = json.dumps(_refusal(llama))
    assert llama["decision"] == "refuse" and 'Give --attention-backend one of fa4, flashinfer, triton"' in text
    for backend in ("ascend", "fa3", "intel_xpu"):
        assert f" {backend}," not in text.split("Give --attention-backend")[1], backend


def test_which_backends_the_box_cannot_run(mapping: dict[str, Any]) -> None:
    got = backends_not_running(mapping, {"attention-fa3": "blocked", "attention-flashinfer": "ok"})
    other = {"ascend", "intel_xpu", "intel_amx", "aiter", "wave"}  # other devices (the eleventh fact-check's f1)
    assert set(got) == {*other, "fa3"}
    assert "Ascend NPUs" in got["ascend"] and "attention-fa3 blocked" in got["fa3"]
    assert set(backends_not_running(mapping, {"attention-fa3": "unknown"})) == other


def test_a_list_none_of_which_runs_says_so(mapping: dict[str, Any]) -> None:
    """With every backend of the DeepSeek check unrunnable the refusal says why, and names none as advice."""
    d = gate.derive([*LAUNCH, "--model", "m", FLAG, "--attention-backend", "flashinfer"], mapping, {})
    models = {"model": attention_keys(DEEPSEEK_V2_LITE)}
    unrunnable = backends_not_running(mapping, {"attention-fa3": "blocked", "attention-triton": "blocked"})
    got = refusal_problems(
        d, mapping, "0.5.23", {12}, "DeepseekV2ForCausalLM", models, torch_cuda="12.9", unrunnable=unrunnable
    )
    problem = next(p for p in got if p.subject == RULE)
    assert problem.status == "blocked"
    assert (problem.required or "").startswith("none that runs on this box (ascend: a backend for Ascend NPUs")
    assert "fa3: attention-fa3 blocked on this box" in (problem.required or "")
    # without what the gate knows of the box (unrunnable not given) the list is SGLang's, as before
    plain = refusal_problems(d, mapping, "0.5.23", {12}, "DeepseekV2ForCausalLM", models, torch_cuda="12.9")
    assert next(p for p in plain if p.subject == RULE).required == "ascend, fa3, triton"
