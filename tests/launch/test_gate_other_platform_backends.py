"""Attention backends of another accelerator on an NVIDIA box (launch.json refusals ascend-attention-backend-on-cuda
and intel-xpu-attention-backend-on-cuda): SGLang accepts --attention-backend ascend / intel_xpu at argument parsing
on CUDA and fails when the model runner creates the backend: ascend's module imports torch_npu in every release
0.5.1-0.5.23; intel_xpu's imports flash_mla_decode from sgl_kernel, which the CUDA build lacks, from 0.5.11
(0.5.4-0.5.10 import only names CUDA sgl-kernel has: not judged). The gate let both through before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, config_rule_status, gate_json

from stackcheck.knowledge.loader import load

ROOT = Path(__file__).resolve().parent.parent.parent
ASCEND = "ascend-attention-backend-on-cuda"
XPU = "intel-xpu-attention-backend-on-cuda"


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


@pytest.mark.parametrize("version", ["0.5.1", "0.5.4", "0.5.9", "0.5.10", "0.5.15", "0.5.23"])
@pytest.mark.parametrize(
    "flags",
    [
        ["--attention-backend", "ascend"],
        ["--prefill-attention-backend", "ascend"],
        ["--decode-attention-backend", "ascend", "--attention-backend", "fa3"],
    ],
)
def test_ascend_is_refused_in_every_release(mapping: dict[str, Any], version: str, flags: list[str]) -> None:
    for majors in ({8}, {9}, {10}, {12}, None):
        assert config_rule_status(mapping, ASCEND, version, majors, LLAMA3, *flags) == "blocked", (version, majors)


@pytest.mark.parametrize(("version", "status"), [("0.5.4", "ok"), ("0.5.10", "ok"), ("0.5.11", "blocked"),
                                                 ("0.5.15", "blocked"), ("0.5.23", "blocked")])  # fmt: skip
def test_intel_xpu_is_refused_from_0_5_11(mapping: dict[str, Any], version: str, status: str) -> None:
    assert config_rule_status(mapping, XPU, version, {9}, LLAMA3, "--attention-backend", "intel_xpu") == status


@pytest.mark.parametrize("version", ["0.5.1", "0.5.9", "0.5.23"])
def test_other_backends_and_sglangs_own_pick_are_not_touched(mapping: dict[str, Any], version: str) -> None:
    for flags in ([], ["--attention-backend", "fa3"], ["--prefill-attention-backend", "triton"]):
        for rule in (ASCEND, XPU):
            assert config_rule_status(mapping, rule, version, {9}, LLAMA3, *flags) == "ok", (rule, flags)
            assert config_rule_status(mapping, rule, version, None, None, *flags) == "ok", (rule, flags)


def test_gate_end_to_end_refuses_with_the_source() -> None:
    facts = ROOT / "tests" / "recommend" / "seed-after" / "facts.json"  # SM120, SGLang 0.5.23
    for backend, rule in (("ascend", ASCEND), ("intel_xpu", XPU)):
        doc = gate_json(facts, "--attention-backend", backend, dry_run=True)
        assert doc["decision"] == "refuse"
        hits = [r for r in doc["reasons"] if rule in str(r.get("subject") or r.get("feature") or "")]
        assert hits, doc["reasons"]
        assert "pypi.org/project/sglang" in str(hits[0])
