"""The twenty-first fact-check sample's false passes (tests/realworld/FACTCHECK.md, "Twenty-first sample"; the rows
in bench/factcheck21b_drawn.json), each read in the real sglang wheels:

- a8: --moe-a2a-backend flashinfer_megamoe with SGLang 0.5.16 (on a 12.0 box): the value is no choice of the
  release's parser before 0.5.20 (0.5.16 server_args.py:269 MOE_A2A_BACKEND_CHOICES; 0.5.19 server_args.py:2382;
  0.5.20 arg_groups/fields/exec_.py:635 adds it), so argparse ends the launch with 'invalid choice' (exit status 2).
  The gate judged only the refusals of 0.5.20-0.5.23 and allowed it (launch.json release_choices --moe-a2a-backend).
- beside the draw: --speculative-moe-a2a-backend takes the same list through 0.5.19 and leaves flashinfer_megamoe
  out in 0.5.20-0.5.23 (arg_groups/fields/spec.py 0.5.20:173, 0.5.23:181): its values were not judged per release;
  nor were --moe-runner-backend's and --speculative-moe-runner-backend's (MOE_RUNNER_BACKEND_CHOICES, which grew
  from 0.5.4 to 0.5.23: megamoe in 0.5.18, flashinfer_megamoe in 0.5.20, ...).

The model config is written for the tests in the shape of a published DeepSeek-V3 one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_R1, gate_tp8, model_dir, release_box

DEEPSEEK_MOE: dict[str, Any] = {**DEEPSEEK_R1, "n_routed_experts": 256}


def _a2a_reasons(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in doc.get("reasons") or [] if r.get("feature") == "--moe-a2a-backend"]


def _messages(reason: dict[str, Any]) -> str:
    return " ".join(str(r.get("message")) for r in reason.get("reasons") or [])


@pytest.mark.parametrize(
    ("release", "cc", "value"),
    [
        ("0.5.16", "12.0", "flashinfer_megamoe"),  # a8
        ("0.5.19", "10.0", "flashinfer_megamoe"),
        ("0.5.13", "10.0", "flashinfer_megamoe"),
        ("0.5.16", "9.0", "pplx"),
        ("0.5.11", "9.0", "megamoe"),
        ("0.5.18", "9.0", "deepep_v2"),
    ],
)
def test_a2a_value_the_release_does_not_offer_refused(tmp_path: Path, release: str, cc: str, value: str) -> None:
    # fails on the parent: allowed (or refused for another reason only)
    moe = model_dir(tmp_path, "dsv3", DEEPSEEK_MOE)
    doc = gate_tp8(release_box(tmp_path, release, cc), moe, "--moe-a2a-backend", value, "--ep", "8")
    assert doc["decision"] == "refuse"
    reasons = _a2a_reasons(doc)
    assert reasons and reasons[0]["status"] in ("blocked", "unknown")
    assert "does not offer" in _messages(reasons[0]) and f"'{value}'" in _messages(reasons[0])


@pytest.mark.parametrize(
    ("release", "value"),
    [("0.5.20", "flashinfer_megamoe"), ("0.5.23", "flashinfer_megamoe"), ("0.5.17", "pplx"), ("0.5.12", "megamoe"),
     ("0.5.19", "deepep_v2"), ("0.5.9", "flashinfer")],
)  # fmt: skip
def test_a2a_value_the_release_offers_not_refused_by_name(tmp_path: Path, release: str, value: str) -> None:
    # guard (passes on the parent too): a value the release's parser offers is not refused as no choice
    moe = model_dir(tmp_path, "dsv3", DEEPSEEK_MOE)
    doc = gate_tp8(release_box(tmp_path, release, "10.0"), moe, "--moe-a2a-backend", value, "--ep", "8")
    assert not [r for r in _a2a_reasons(doc) if "does not offer" in _messages(r)]


@pytest.mark.parametrize(
    ("release", "value"),
    [("0.5.23", "flashinfer_megamoe"), ("0.5.20", "flashinfer_megamoe"), ("0.5.16", "pplx"), ("0.5.9", "nixl")],
)
def test_draft_a2a_value_the_release_does_not_offer_refused(tmp_path: Path, release: str, value: str) -> None:
    # beside the draw; fails on the parent: --speculative-moe-a2a-backend's choices were not judged per release
    moe = model_dir(tmp_path, "dsv3", DEEPSEEK_MOE)
    mtp = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
           "--speculative-num-draft-tokens", "2"]  # fmt: skip
    doc = gate_tp8(release_box(tmp_path, release, "10.0"), moe, *mtp, "--speculative-moe-a2a-backend", value)
    assert doc["decision"] == "refuse"
    reasons = [r for r in doc.get("reasons") or [] if r.get("feature") == "--speculative-moe-a2a-backend"]
    assert reasons and "does not offer" in _messages(reasons[0]) and f"'{value}'" in _messages(reasons[0])


def test_draft_a2a_value_the_release_offers_not_refused_by_name(tmp_path: Path) -> None:
    # guard (passes on the parent too)
    moe = model_dir(tmp_path, "dsv3", DEEPSEEK_MOE)
    for release, value in (("0.5.23", "none"), ("0.5.19", "deepep_v2"), ("0.5.17", "pplx"), ("0.5.7", "deepep")):
        doc = gate_tp8(release_box(tmp_path, release, "10.0"), moe, "--speculative-algorithm", "EAGLE",
                       "--speculative-moe-a2a-backend", value)  # fmt: skip
        reasons = [r for r in doc.get("reasons") or [] if r.get("feature") == "--speculative-moe-a2a-backend"]
        assert not [r for r in reasons if "does not offer" in _messages(r)]


@pytest.mark.parametrize(
    ("flag", "release", "value"),
    [
        ("--moe-runner-backend", "0.5.16", "flashinfer_megamoe"),
        ("--moe-runner-backend", "0.5.11", "megamoe"),
        ("--moe-runner-backend", "0.5.14", "hpc_ops"),
        ("--moe-runner-backend", "0.5.22", "lora_triton"),
        ("--speculative-moe-runner-backend", "0.5.19", "flashinfer_megamoe"),
    ],
)
def test_moe_runner_value_the_release_does_not_offer_refused(
    tmp_path: Path, flag: str, release: str, value: str
) -> None:
    # beside the draw; fails on the parent: the runner's choices were not judged per release
    moe = model_dir(tmp_path, "dsv3", DEEPSEEK_MOE)
    spec = ["--speculative-algorithm", "EAGLE"] if flag.startswith("--speculative") else []
    doc = gate_tp8(release_box(tmp_path, release, "10.0"), moe, *spec, flag, value)
    assert doc["decision"] == "refuse"
    reasons = [r for r in doc.get("reasons") or [] if r.get("feature") == flag]
    assert reasons and "does not offer" in _messages(reasons[0]) and f"'{value}'" in _messages(reasons[0])


def test_moe_runner_value_the_release_offers_not_refused_by_name(tmp_path: Path) -> None:
    # guard (passes on the parent too)
    moe = model_dir(tmp_path, "dsv3", DEEPSEEK_MOE)
    for release, value in (("0.5.20", "flashinfer_megamoe"), ("0.5.17", "hpc_ops"), ("0.5.23", "lora_triton"),
                           ("0.5.4", "deep_gemm"), ("0.5.1", "flashinfer_trtllm")):  # fmt: skip
        doc = gate_tp8(release_box(tmp_path, release, "10.0"), moe, "--moe-runner-backend", value)
        reasons = [r for r in doc.get("reasons") or [] if r.get("feature") == "--moe-runner-backend"]
        assert not [r for r in reasons if "does not offer" in _messages(r)]
