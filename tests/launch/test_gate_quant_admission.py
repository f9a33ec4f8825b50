"""Issue 16 (igap2, item 1): every launch that loads its weights through SGLang's Fp8Config or Mxfp4Config needs the
model loader's admission (get_min_capability 80, checked in model_loader/loader.py before any backend is chosen, read
in every sglang wheel 0.5.1-0.5.23), not only the auto paths of fp8-block-gemm / mxfp4-moe. launch.json's
--quantization fp8 / mxfp4 (quark in 0.5.1-0.5.5) and preflight.json's checkpoint entries (quant_method fp8 / mxfp4,
no flag) now require those features for their admission rule alone (a requirement with `rules`): below compute
capability 8.0 the gate refuses, and the features' other rules (DeepGEMM on SM120, the auto runner's kernels) are
not needed by a launch that does not take that path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import GPT_OSS, LLAMA3, gate_tp8, model_dir, release_box

FP8_CKPT: dict[str, Any] = {**LLAMA3, "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic"}}
MXFP4_CKPT: dict[str, Any] = {**GPT_OSS, "num_local_experts": 32, "quantization_config": {"quant_method": "mxfp4"}}


def _blocker(doc: dict[str, Any], feature: str) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == feature), None)


def _admission_refused(doc: dict[str, Any], feature: str, rule: str) -> bool:
    b = _blocker(doc, feature)
    if b is None or (b.get("status"), b.get("effect")) != ("blocked", "crash"):
        return False
    return [x.get("rule") for x in b.get("reasons") or [] if x.get("result") == "fail"] == [rule]


@pytest.mark.parametrize("release", ["0.5.2", "0.5.9", "0.5.23"])
@pytest.mark.parametrize("cc", ["7.0", "7.5"])
@pytest.mark.parametrize(
    "flags",
    [
        ["--quantization", "fp8", "--fp8-gemm-backend", "triton"],
        ["--quantization", "fp8", "--fp8-gemm-backend", "cutlass"],
        ["--quantization", "fp8"],  # SGLANG_ENABLE_JIT_DEEPGEMM left on, but the GPU is no Hopper: still refused
    ],
)
def test_fp8_below_sm80_refused_whatever_the_backend(tmp_path: Path, release: str, cc: str, flags: list[str]) -> None:
    if release == "0.5.2" and "--fp8-gemm-backend" in flags:
        flags = flags[:2]  # no --fp8-gemm-backend before 0.5.7
    doc = gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "llama", LLAMA3), *flags)
    assert doc["decision"] == "refuse"
    assert _admission_refused(doc, "fp8-block-gemm", "fp8-min-capability"), doc.get("reasons")


def test_fp8_with_jit_deepgemm_off_below_sm80_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SGLANG_ENABLE_JIT_DEEPGEMM", "0")
    doc = gate_tp8(release_box(tmp_path, "0.5.9", "7.5"), model_dir(tmp_path, "llama", LLAMA3), "--quantization", "fp8")
    assert _admission_refused(doc, "fp8-block-gemm", "fp8-min-capability"), doc.get("reasons")


@pytest.mark.parametrize("release", ["0.5.9", "0.5.23"])
def test_fp8_checkpoint_without_a_flag_below_sm80_refused(tmp_path: Path, release: str) -> None:
    # a per-tensor FP8 checkpoint (no weight_block_size): before, no requirement at all
    doc = gate_tp8(release_box(tmp_path, release, "7.5"), model_dir(tmp_path, "fp8", FP8_CKPT))
    assert _admission_refused(doc, "fp8-block-gemm", "fp8-min-capability"), doc.get("reasons")


@pytest.mark.parametrize("release", ["0.5.9", "0.5.23"])
@pytest.mark.parametrize("runner", ["triton_kernel", "triton"])
def test_mxfp4_below_sm80_refused_with_any_moe_runner(tmp_path: Path, release: str, runner: str) -> None:
    box = release_box(tmp_path, release, "7.5")
    flag = gate_tp8(box, model_dir(tmp_path, "oss", GPT_OSS), "--quantization", "mxfp4", "--moe-runner-backend", runner)
    assert _admission_refused(flag, "mxfp4-moe", "mxfp4-min-capability"), flag.get("reasons")
    ckpt = gate_tp8(box, model_dir(tmp_path, "oss-ckpt", MXFP4_CKPT), "--moe-runner-backend", runner)
    assert _admission_refused(ckpt, "mxfp4-moe", "mxfp4-min-capability"), ckpt.get("reasons")


def test_quark_loads_as_mxfp4_on_0_5_1_to_0_5_5_only(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "llama", LLAMA3)
    old = gate_tp8(release_box(tmp_path, "0.5.5", "7.5"), model, "--quantization", "quark")
    assert _admission_refused(old, "mxfp4-moe", "mxfp4-min-capability"), old.get("reasons")
    new = gate_tp8(release_box(tmp_path, "0.5.6", "7.5"), model, "--quantization", "quark")
    assert _blocker(new, "mxfp4-moe") is None


@pytest.mark.parametrize("cc", ["8.0", "9.0"])
def test_fp8_and_mxfp4_admitted_from_sm80(tmp_path: Path, cc: str) -> None:
    box = release_box(tmp_path, "0.5.23", cc)
    fp8 = gate_tp8(box, model_dir(tmp_path, "llama", LLAMA3), "--quantization", "fp8", "--fp8-gemm-backend", "triton")
    assert _blocker(fp8, "fp8-block-gemm") is None
    ckpt = gate_tp8(box, model_dir(tmp_path, "fp8", FP8_CKPT), "--fp8-gemm-backend", "triton")
    assert _blocker(ckpt, "fp8-block-gemm") is None


def test_the_features_other_rules_are_not_needed_off_their_path(tmp_path: Path) -> None:
    """SM 12.0 with SGLang 0.5.9: fp8-block-gemm is blocked there (auto picks DeepGEMM: auto-picks-deepgemm-sm120),
    but --fp8-gemm-backend triton does not take that path; the admission alone is needed and passes."""
    box = release_box(tmp_path, "0.5.9", "12.0")
    doc = gate_tp8(box, model_dir(tmp_path, "llama", LLAMA3), "--quantization", "fp8", "--fp8-gemm-backend", "triton")
    assert _blocker(doc, "fp8-block-gemm") is None
    # the auto path of a block-FP8 checkpoint (a BF16 one is quantized while loading and never reaches DeepGEMM:
    # tests/launch/test_gate_igap4_fp8_online.py)
    block = {**FP8_CKPT, "quantization_config": {**FP8_CKPT["quantization_config"], "weight_block_size": [128, 128]}}
    auto = gate_tp8(box, model_dir(tmp_path, "block", block), "--quantization", "fp8")
    b = _blocker(auto, "fp8-block-gemm")
    assert b is not None and any(x.get("rule") == "auto-picks-deepgemm-sm120" for x in b.get("reasons") or [])


def test_scoped_feature_verdict_keeps_what_no_rule_of_the_feature_says() -> None:
    from stackcheck.launch.gate import scoped_feature_verdict

    spec = {"id": "f", "rules": [{"id": "a"}, {"id": "b"}]}
    v = {
        "status": "blocked",
        "effect": "crash",
        "reasons": [
            {"rule": "a", "result": "pass"},
            {"rule": "b", "result": "fail", "effect": "crash"},
            {"rule": "gpu", "result": "unknown"},
        ],
    }
    out = scoped_feature_verdict(v, {"a": "explicit"}, spec)
    assert out["status"] == "unknown" and [x["rule"] for x in out["reasons"]] == ["a", "gpu"]
    assert scoped_feature_verdict({**v, "reasons": v["reasons"][:2]}, {"a": "explicit"}, spec)["status"] == "ok"
    assert scoped_feature_verdict(v, {"b": "explicit"}, spec)["status"] == "blocked"
    assert scoped_feature_verdict(v, {"a": "explicit"}, None)["status"] == "blocked"  # spec unknown: nothing dropped
    na = {"status": "not-applicable", "reasons": [{"rule": "needs", "result": "pass"}]}
    assert scoped_feature_verdict(na, {"a": "explicit"}, spec)["status"] == "not-applicable"


def test_a_scoped_rule_the_feature_lacks_is_a_manifest_problem() -> None:
    import json

    from stackcheck.knowledge.validate import semantic_problems

    root = Path(__file__).resolve().parent.parent.parent / "manifests"
    launch = json.loads((root / "launch.json").read_text())
    q = next(o for o in launch["options"] if o["flag"] == "--quantization")
    q["choices"]["fp8"][-1]["rules"] = ["no-such-rule"]
    features = json.loads((root / "features.json").read_text())
    problems = semantic_problems({"launch.json": ("launch.json", launch), "features.json": ("features.json", features)})
    assert any("fp8-block-gemm has no rule 'no-such-rule'" in p for p in problems), problems


def test_the_admission_alone_pulls_in_no_check_of_the_features_path(tmp_path: Path) -> None:
    """A check required with fp8-block-gemm / mxfp4-moe (jit-toolchain's DeepGEMM nvcc rules, driver-vs-toolkit,
    triton-ptxas's gather rule) is needed where the launch takes the feature's path, not for its admission alone."""
    from stackcheck.knowledge.loader import load
    from stackcheck.launch import gate

    m = load([], env={})
    cmd = ["python", "-m", "sglang.launch_server", "--model-path", "m"]
    d = gate.derive([*cmd, "--quantization", "fp8", "--fp8-gemm-backend", "triton"], m.launch, {})
    gate.add_launch_requirements(d, m.features, m.checks)
    assert not [r for r in d.required if r.check and "fp8-block-gemm" in r.why]
    d = gate.derive([*cmd, "--quantization", "mxfp4", "--moe-runner-backend", "triton_kernel"], m.launch, {})
    gate.add_launch_requirements(d, m.features, m.checks)
    assert not [r for r in d.required if r.check and "mxfp4-moe" in r.why]
    d = gate.derive([*cmd, "--quantization", "fp8"], m.launch, {})  # the auto path: the whole feature and its checks
    gate.add_launch_requirements(d, m.features, m.checks)
    assert [r for r in d.required if r.check and "fp8-block-gemm" in r.why]
