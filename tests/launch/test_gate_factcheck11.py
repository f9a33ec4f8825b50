"""What the eleventh fact-check sample found (tests/realworld/FACTCHECK.md, "Eleventh sample").

Row f1: `--attention-backend intel_amx` with Llama 3 on 8x H200 and SGLang 0.5.20 passed the gate. launch.json mapped
intel_amx (and aiter, wave, ascend) to no feature, so nothing judged it, and SGLang builds the backend as given on
CUDA: IntelAMXAttnBackend reads torch.ops.sgl_kernel.decode_attention_cpu, which only the CPU build of sgl-kernel
registers; the ascend backend imports torch_npu, wave imports wave_lang, aiter's kernels come from AMD's aiter
package. The refusal rule other-device-attention-backend now blocks the four on every release 0.5.1-0.5.23, given
to any of the three attention flags. Beside the draw, the same cause: intel_xpu from 0.5.11, whose xpu_backend.py
imports flash_mla_decode from sgl_kernel, a name only Intel's sgl-kernel-xpu defines (rule intel-xpu-attention-backend);
and cutedsl_mla (0.5.13-0.5.23) and tokenspeed_mla (0.5.12-0.5.22), which raise ValueError for a model the release
does not run as MLA, as trtllm_mla does (rules cutedsl-mla-mla-models-only, tokenspeed-mla-mla-models-only).

Row f2 (right, a condition missing): `--attention-backend llada2_cfg_flashinfer` is FlashInfer's backend with a
LLaDA mask added (LLaDA2CFGFlashInferAttnBackend subclasses FlashInferAttnBackend), and it mapped to no feature:
with `--sampling-backend pytorch` the gate judged nothing of FlashInfer. It now requires attention-flashinfer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, gate_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.refusals import refusal_problems

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"  # SGLang 0.5.23, cc 9.0
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--tp", "8"]
# each backend of another device has its own rule (merged with iarch's and iarch2's, which refused three of them)
RULES = {
    "intel_amx": "refusal intel-amx-attention-backend-on-cuda",
    "aiter": "refusal aiter-attention-backend-on-cuda",
    "wave": "refusal wave-attention-backend-on-cuda",
    "ascend": "refusal ascend-attention-backend-on-cuda",
}
OTHER_DEVICE = list(RULES)
RULE = RULES["intel_amx"]


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def _refusals(mapping: dict[str, Any], version: str, *flags: str) -> dict[str, str]:
    d = gate.derive([*LAUNCH, *flags], mapping, {})
    return {p.subject: p.status for p in refusal_problems(d, mapping, version, {9}, None, None)}


@pytest.mark.parametrize("backend", OTHER_DEVICE)
@pytest.mark.parametrize("version", ["0.5.1", "0.5.9", "0.5.20", "0.5.23"])
def test_a_backend_for_another_device_is_refused(mapping: dict[str, Any], backend: str, version: str) -> None:
    assert _refusals(mapping, version, "--attention-backend", backend).get(RULES[backend]) == "blocked"


def test_either_split_flag_is_enough_and_nvidia_backends_are_not_touched(mapping: dict[str, Any]) -> None:
    split = ["--prefill-attention-backend", "fa3", "--decode-attention-backend", "intel_amx"]
    assert _refusals(mapping, "0.5.20", *split).get(RULE) == "blocked"
    split = ["--prefill-attention-backend", "ascend", "--decode-attention-backend", "fa3"]
    assert _refusals(mapping, "0.5.20", *split).get(RULES["ascend"]) == "blocked"
    for backend in ("fa3", "flashinfer", "triton", "trtllm_mha", "fa4", "torch_native"):
        assert not set(RULES.values()) & set(_refusals(mapping, "0.5.20", "--attention-backend", backend))
    assert not set(RULES.values()) & set(_refusals(mapping, "0.5.20"))  # SGLang never picks them on an NVIDIA GPU
    # after 0.5.23: the intel_amx/wave/ascend/intel_xpu rules (iarch, iarch2) hold for later releases, aiter's stops
    assert RULES["aiter"] not in _refusals(mapping, "0.5.30", "--attention-backend", "aiter")  # newer than the data


def test_intel_xpu_is_refused_from_0_5_11(mapping: dict[str, Any]) -> None:
    xpu = "refusal intel-xpu-attention-backend-on-cuda"
    assert _refusals(mapping, "0.5.11", "--attention-backend", "intel_xpu").get(xpu) == "blocked"
    assert _refusals(mapping, "0.5.23", "--decode-attention-backend", "intel_xpu").get(xpu) == "blocked"
    assert xpu not in _refusals(mapping, "0.5.10", "--attention-backend", "intel_xpu")  # imports only FA3 names
    assert xpu not in _refusals(mapping, "0.5.23")


def test_the_gate_refuses_row_f1(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "llama3", LLAMA3)
    got = gate_json(H200, "--model-path", str(model), "--tp", "8", "--attention-backend", "intel_amx", dry_run=True)
    assert got["decision"] == "refuse"
    mine = [r for r in got["reasons"] if r.get("feature") == RULE]
    assert mine and mine[0]["status"] == "blocked", json.dumps(got["reasons"])[:800]
    assert "decode_attention_cpu" in json.dumps(mine)


def test_llada2_cfg_flashinfer_needs_flashinfer(mapping: dict[str, Any]) -> None:
    flags = ["--attention-backend", "llada2_cfg_flashinfer", "--sampling-backend", "pytorch"]
    d = gate.derive([*LAUNCH, *flags], mapping, {})
    assert "attention-flashinfer" in {r.feature for r in d.required}


@pytest.mark.parametrize(
    ("backend", "first", "last"), [("cutedsl_mla", "0.5.13", "0.5.23"), ("tokenspeed_mla", "0.5.12", "0.5.22")]
)
def test_the_mla_only_backends_refuse_a_model_not_run_as_mla(
    mapping: dict[str, Any], backend: str, first: str, last: str
) -> None:
    rule = f"refusal {backend.replace('_', '-')}-mla-models-only"
    d = gate.derive([*LAUNCH, "--attention-backend", backend], mapping, {})

    def status(version: str, mla: bool | None) -> str | None:
        got = refusal_problems(d, mapping, version, {9}, None, None, model_mla=mla)
        return next((p.status for p in got if p.subject == rule), None)

    assert status(first, False) == "blocked" and status(last, False) == "blocked"
    assert status(first, True) is None  # an MLA model: not this rule
    assert status(first, None) == "unknown"  # the model not read: fail closed
    assert status("0.5.11", False) is None
    assert rule not in _refusals(mapping, last)  # no attention flag: SGLang never picks it


def test_the_gate_refuses_llama3_on_cutedsl_mla(tmp_path: Path) -> None:
    doc = json.loads(H200.read_text())
    doc["facts"]["packages"]["sglang"].update(version="0.5.20", dist_version="0.5.20")
    facts = tmp_path / "h200-0.5.20.json"
    facts.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    got = gate_json(facts, "--model-path", str(model), "--tp", "8", "--attention-backend", "cutedsl_mla", dry_run=True)
    mine = [r for r in got["reasons"] if r.get("feature") == "refusal cutedsl-mla-mla-models-only"]
    assert mine and mine[0]["status"] == "blocked", json.dumps(got["reasons"])[:800]
