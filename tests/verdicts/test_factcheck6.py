"""Sixth fact-check sample (tests/realworld/FACTCHECK.md): the gate judges the attention backend SGLang picks
itself. Without --attention-backend, SGLang 0.5.8+ takes fa3 on Hopper (torch CUDA >= 12.3) for MLA models and for
MHA models without speculative decoding or with top-k 1; on an aarch64 GH200 with sglang-kernel 0.4.4+ (no
flash_ops in the aarch64 wheel) that launch fails at import, so the gate must refuse it rather than judge only
flashinfer."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import main

GB10 = Path(__file__).resolve().parents[1] / "cases" / "gb10-cu130-pypi-kernel" / "facts.json"


def _facts(tmp_path: Path, machine: str, sglang: str = "0.5.20", kernel: str = "0.4.7") -> Path:
    doc = json.loads(GB10.read_text(encoding="utf-8"))
    facts = doc["facts"]
    for g in facts["gpus"]:
        g.update(name="NVIDIA GH200 480GB", compute_capability="9.0")
    facts["system"]["machine"] = machine
    pkgs = facts["packages"]
    pkgs["sgl-kernel"] = {"installed": False}
    name = "sglang-kernel" if kernel.startswith("0.4") else "sgl-kernel"
    pkgs[name] = dict(pkgs["sglang"], version=kernel, dist_version=kernel)
    pkgs["sglang"].update(version=sglang, dist_version=sglang)
    path = tmp_path / f"{machine}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _model(tmp_path: Path, architecture: str) -> Path:
    d = tmp_path / architecture
    d.mkdir(exist_ok=True)
    (d / "config.json").write_text(json.dumps({"architectures": [architecture]}), encoding="utf-8")
    return d


def _gate(facts: Path, *flags: str) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", "python", "-m",
              "sglang.launch_server", *flags])  # fmt: skip
    return dict(json.loads(out.getvalue()))


def _needs(doc: dict[str, Any], feature: str) -> bool:
    return any(r["feature"] == feature for r in doc["derived"]["required"])


@pytest.mark.parametrize("architecture", ["LlamaForCausalLM", "DeepseekV3ForCausalLM"])
def test_default_backend_on_arm_hopper_is_refused(tmp_path: Path, architecture: str) -> None:
    doc = _gate(_facts(tmp_path, "aarch64"), "--model-path", str(_model(tmp_path, architecture)))
    assert _needs(doc, "attention-fa3")
    assert doc["decision"] == "refuse"
    assert any(b["feature"] == "attention-fa3" for b in doc["reasons"])


def test_same_launch_on_x86_hopper_is_allowed(tmp_path: Path) -> None:
    doc = _gate(_facts(tmp_path, "x86_64"), "--model-path", str(_model(tmp_path, "LlamaForCausalLM")))
    assert _needs(doc, "attention-fa3")
    assert not any(b["feature"] == "attention-fa3" for b in doc["reasons"])


def test_an_explicit_backend_or_a_wider_topk_leaves_fa3_out(tmp_path: Path) -> None:
    facts = _facts(tmp_path, "aarch64")
    model = str(_model(tmp_path, "LlamaForCausalLM"))
    assert not _needs(_gate(facts, "--model-path", model, "--attention-backend", "flashinfer"), "attention-fa3")
    spec = ["--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3", "--speculative-eagle-topk", "4"]
    assert not _needs(_gate(facts, "--model-path", model, *spec), "attention-fa3")


def test_older_release_and_other_majors_are_not_given_fa3(tmp_path: Path) -> None:
    model = str(_model(tmp_path, "LlamaForCausalLM"))
    old = _facts(tmp_path, "aarch64", "0.5.5", "0.3.16.post5")
    assert not _needs(_gate(old, "--model-path", model), "attention-fa3")
    gb10 = _gate(GB10, "--model-path", model)  # GB10, cc 12.1: SGLang's default there is not fa3
    assert not _needs(gb10, "attention-fa3")


def _plan(facts: Path, *more: str) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["plan", "--facts", str(facts), "--want", "eagle3", "--format", "json", *more])
    return dict(json.loads(out.getvalue())["plan"])


def test_plan_for_eagle3_on_gb10_needs_a_ptxas_that_knows_sm121(tmp_path: Path) -> None:
    # the GB10 case: SGLang 0.5.9, sgl-kernel 0.3.21 (cu129 aarch64: sm_120a, no 12.1 code), Triton 3.5.1 (ptxas
    # 12.8). EAGLE's draft steps are Triton kernels, so swapping the kernel build alone does not make it run: with
    # torch held at 2.9.1 (whose Requires-Dist pins Triton on x86_64 only, so pip leaves this aarch64 box's 3.5.1)
    # no plan reaches eagle3
    plan = _plan(GB10, "--hold", "torch")
    assert not any("eagle3" in s["unblocks"] for s in plan["steps"])
    assert "eagle3" in str(plan.get("error"))
    # the plan that moves torch to 2.14.1 (triton ~=3.8.0 on any Linux machine) brings Triton's ptxas along: eagle3
    plan = _plan(GB10)
    assert any(s["component"] == "torch" for s in plan["steps"])
    assert any("eagle3" in s["unblocks"] for s in plan["steps"])
    doc = json.loads(GB10.read_text(encoding="utf-8"))
    doc["facts"]["packages"]["triton"].update(version="3.6.0", dist_version="3.6.0")  # ptxas-blackwell 12.9
    newer = tmp_path / "triton360.json"
    newer.write_text(json.dumps(doc), encoding="utf-8")
    plan = _plan(newer)
    assert any("eagle3" in s["unblocks"] for s in plan["steps"])


def _auto(version: str, majors: set[int], mla: bool | None, *flags: str, cuda: str = "13.0") -> list[str]:
    from stackcheck.knowledge.loader import load
    from stackcheck.launch.gate import derive
    from stackcheck.launch.refusals import auto_backend_features

    mapping = load().launch
    d = derive(["python", "-m", "sglang.launch_server", "--model-path", "m", *flags], mapping, {})
    return [f for f, _ in auto_backend_features(d, mapping, version, majors, cuda, mla)]


def test_auto_backend_per_gpu_model_and_speculation() -> None:
    assert _auto("0.5.20", {9}, False) == ["attention-fa3"]
    assert _auto("0.5.20", {9}, True, "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4") == [
        "attention-fa3"
    ]  # MLA: fa3 on Hopper whatever the top-k
    assert _auto("0.5.20", {9}, False, "--speculative-algorithm", "EAGLE3", "--speculative-eagle-topk", "4") == []
    assert _auto("0.5.20", {9}, None, cuda="12.1") == []  # SGLang wants torch CUDA >= 12.3 for its fa3 default
    assert _auto("0.5.6", {9}, False) == [] and _auto("0.5.6", {9}, True) == ["attention-fa3"]
    assert _auto("0.5.17", {10}, False) == ["attention-trtllm-mha"]
    # MLA on SM100: flashinfer, named since stop 31 (igate3: the MLA branch of the default picker is data in
    # launch.json, so the auto pick lists its feature instead of leaving the flags' default, also flashinfer)
    assert _auto("0.5.17", {10}, True) == ["attention-flashinfer"]
    assert _auto("0.5.17", {10}, False, "--speculative-algorithm", "EAGLE3") == []  # no top-k given: not trtllm_mha
    assert _auto("0.5.17", {10}, None, "--attention-backend", "triton") == []
    assert _auto("0.5.17", {12}, False) == []
    # a box of two majors: each major's pick must run on the whole box (igate5: SGLang picks once, on the GPU the
    # server starts on)
    assert _auto("0.5.17", {9, 10}, False) == ["attention-fa3", "attention-trtllm-mha"]


def _explain_fa3(facts: Path) -> dict[str, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["explain", "attention-fa3", "--facts", str(facts), "--format", "json"])
    arch = json.loads(out.getvalue())["architectures"][0]
    return {v: r["status"] for r in arch["ranges"] for v in r["releases"]}


def test_explain_with_an_arm_facts_file_reads_the_arm_wheels(tmp_path: Path) -> None:
    # sglang-kernel 0.4.4+ ship no flash_ops in their aarch64 wheels: explain --facts of a GH200 must say so
    assert _explain_fa3(_facts(tmp_path, "aarch64"))["0.5.23"] == "blocked"
    assert _explain_fa3(_facts(tmp_path, "x86_64"))["0.5.23"] == "ok"
