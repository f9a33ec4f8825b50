"""irec3: the CuTe DSL beyond FA4. SGLang 0.5.13-0.5.23 turn --fp4-gemm-backend auto into flashinfer_cutedsl on a
major-10 GPU (fp4_utils.initialize_fp4_gemm_config, is_sm100_supported / get_platform().is_sm100), which
modelopt_quant.fp4_gemm hands to FlashInfer's mm_fp4 as backend 'cute-dsl'. FlashInfer 0.6.5-0.7.4 run that
backend's requirement before the call (backend_requirement), and _cute_dsl_gemm_fp4_requirement raises 'CuTe DSL is
not available.' (RuntimeError in 0.6.x, ValueError in 0.7.x) where `cutlass` cannot be found; `cutlass` comes only
through nvidia-cutlass-dsl's .pth. So an NVFP4 model on a B200 / B300 whose packages list names nvidia-cutlass-dsl
not installed fails at its first linear layer: the nvfp4 feature said ok there. Rule cutlass-dsl-installed on nvfp4,
in the shape of ifc67's rule on attention-fa4."""

from __future__ import annotations

import copy
import zipfile
from typing import Any

import pytest

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.types import FeatureVerdict

FEATURE = "nvfp4"
RULE = "cutlass-dsl-installed"


def _verdict(sglang: str, dsl: dict[str, Any] | None, cc: str = "10.0") -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, f"{cc}x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
        "system": {"machine": "x86_64", "python": "3.12.3"},
    }
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    facts["packages_complete"] = True
    if dsl is None:  # a complete list saved before the packages probe read the DSL
        facts["packages"].pop("nvidia-cutlass-dsl", None)
    else:
        facts["packages"]["nvidia-cutlass-dsl"] = dsl
    ctx = Context(facts=facts, manifests=m, launch={"tp": 8, "quantization": "modelopt_fp4"})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == FEATURE), ctx)


def _reason(v: FeatureVerdict) -> dict[str, Any] | None:
    return next((dict(r) for r in v["reasons"] if r.get("rule") == RULE), None)


@pytest.mark.parametrize(("sglang", "cc"), [("0.5.13", "10.0"), ("0.5.20", "10.0"), ("0.5.23", "10.3")])
def test_missing_dsl_blocks_nvfp4_on_sm10x(sglang: str, cc: str) -> None:
    # fails before the fix: no such rule on nvfp4, the feature ok
    v = _verdict(sglang, {"installed": False}, cc)
    assert v["status"] == "blocked", v
    reason = _reason(v)
    assert reason is not None and reason["result"] == "fail" and reason["effect"] == "crash", reason
    assert "CuTe DSL is not available." in str(reason["message"])


def test_installed_passes() -> None:
    v = _verdict("0.5.23", {"installed": True, "version": "4.8.0"}, "10.0")
    assert (_reason(v) or {}).get("result") == "pass", v


@pytest.mark.parametrize(
    ("sglang", "cc", "dsl"),
    [
        ("0.5.23", "12.0", {"installed": False}),  # SM12x: auto is flashinfer_cutlass, not the DSL
        ("0.5.11", "10.0", {"installed": False}),  # before the cute-dsl activation quantize (icute2: 0.5.12 has it)
        ("0.5.23", "10.0", None),  # a list saved before the probe read the DSL
    ],
)
def test_not_applied(sglang: str, cc: str, dsl: dict[str, Any] | None) -> None:
    reason = _reason(_verdict(sglang, dsl, cc))
    assert reason is None or reason["result"] == "skipped", reason


def test_a_hop_names_the_rule() -> None:
    feature = next(f for f in load().features if f["id"] == FEATURE)
    hops = [h for h in feature["path"] if RULE in (h.get("rules") or [])]
    assert hops and all(not h.get("inferred") and h.get("majors") == [10] for h in hops), hops


@pytest.mark.registry
def test_the_real_wheels() -> None:
    from registry_wheels import fetch_wheel

    for sglang in ("0.5.13", "0.5.23"):
        with zipfile.ZipFile(fetch_wheel("sglang", sglang)) as z:
            fp4 = z.read("sglang/srt/layers/quantization/fp4_utils.py").decode()
        auto = fp4[fp4.index('if backend == "auto":') :]
        assert auto.index('backend = "flashinfer_cutedsl"') == auto.index("backend = "), sglang
        assert 'return "cute-dsl"' in fp4, sglang
    for flashinfer in ("0.6.12", "0.7.4"):
        with zipfile.ZipFile(fetch_wheel("flashinfer-python", flashinfer)) as z:
            gemm = z.read("flashinfer/gemm/gemm_base.py").decode()
        requirement = gemm[gemm.index("def _cute_dsl_gemm_fp4_requirement") :]
        requirement = requirement[: requirement.index("\ndef ", 1)]
        assert "_check_cute_dsl_availability()" in requirement, flashinfer
        check = gemm[gemm.index("def _check_cute_dsl_availability") :]
        check = check[: check.index("\ndef ", 1)]
        # RuntimeError in 0.6.x, ValueError in 0.7.x
        assert 'Error("CuTe DSL is not available.")' in check and "raise " in check, flashinfer


CUTEDSL_MOE = "cutedsl-moe-runner-dsl-installed"


def _gate_moe(tmp_path: Any, installed: bool, *flags: str) -> tuple[str, list[tuple[str, str]]]:
    """A Qwen3 MoE launch on tests/cases/h200-newest (SGLang 0.5.23) whose complete list says the DSL is (not)
    installed: the decision and the nvfp4 reasons of the new rule."""
    import json
    from pathlib import Path

    from cli_process import stackcheck_json

    case = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"
    doc = json.loads(case.read_text())
    doc["facts"]["packages_complete"] = True
    entry = {"installed": True, "version": "4.8.0", "dist_version": "4.8.0", "location": "/x"}
    doc["facts"]["packages"]["nvidia-cutlass-dsl"] = entry if installed else {"installed": False}
    facts = tmp_path / f"facts-{installed}.json"
    facts.write_text(json.dumps(doc))
    model = tmp_path / "qwen3moe"
    model.mkdir(exist_ok=True)
    config = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
              "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128,
              "torch_dtype": "bfloat16", "vocab_size": 1024, "num_experts": 16, "moe_intermediate_size": 512,
              "num_experts_per_tok": 4}  # fmt: skip
    (model / "config.json").write_text(json.dumps(config))
    out = stackcheck_json("gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", "python", "-m",
                          "sglang.launch_server", "--model-path", str(model), "--tp", "8", *flags)  # fmt: skip
    rules = [
        (str(x.get("rule")), str(x.get("result")))
        for r in out.get("reasons") or []
        if r.get("feature") == FEATURE
        for x in r.get("reasons") or []
        if x.get("rule") == CUTEDSL_MOE
    ]
    return str(out["decision"]), rules


def test_the_cutedsl_moe_runner_flag_needs_the_dsl(tmp_path: Any) -> None:
    # fails before the fix: --moe-runner-backend flashinfer_cutedsl needed nothing, the launch allowed
    flag = ("--moe-runner-backend", "flashinfer_cutedsl")
    assert _gate_moe(tmp_path, False, *flag) == ("refuse", [(CUTEDSL_MOE, "fail")])
    assert _gate_moe(tmp_path, True, *flag) == ("allow", [])
    assert _gate_moe(tmp_path, False) == ("allow", [])  # (no flag: SGLang never picks it itself)
