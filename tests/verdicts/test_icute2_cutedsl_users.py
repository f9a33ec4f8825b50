"""icute2: the CuTe DSL's users beyond FA4 / the FP4 GEMM's auto pick / --moe-runner-backend flashinfer_cutedsl.

1. nvfp4's cutlass-dsl-installed: SGLang 0.5.12+ on SM100 quantizes each NVFP4 linear layer's activations with
   FlashInfer's fp4_quantize backend 'cute-dsl' (fp4_utils.py, chosen at import, before the GEMM whatever
   --fp4-gemm-backend says), and FlashInfer's _fp4_quantize_cute_dsl raises RuntimeError where the DSL is absent. So
   --fp4-gemm-backend flashinfer_cutlass is no way around the missing DSL (irec3's message advised it, and its note
   called the refusal of that launch an over-refusal), and 0.5.12 (no cute-dsl GEMM auto pick yet, but the quantize
   step already) was a false pass.
2. --speculative-moe-runner-backend flashinfer_cutedsl: the draft's MoE layers run inside
   speculative_moe_backend_context with that runner, the same CuteDslMoEWrapper import as the target's flag."""

from __future__ import annotations

import copy
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.types import FeatureVerdict

FEATURE = "nvfp4"
RULE = "cutlass-dsl-installed"
CUTEDSL_MOE = "cutedsl-moe-runner-dsl-installed"


def _verdict(sglang: str, dsl: dict[str, Any] | None, cc: str = "10.0", **launch: Any) -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, f"{cc}x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
        "system": {"machine": "x86_64", "python": "3.12.3"},
    }
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    facts["packages_complete"] = True
    if dsl is None:
        facts["packages"].pop("nvidia-cutlass-dsl", None)
    else:
        facts["packages"]["nvidia-cutlass-dsl"] = dsl
    ctx = Context(facts=facts, manifests=m, launch={"tp": 8, "quantization": "modelopt_fp4", **launch})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == FEATURE), ctx)


def _reason(v: FeatureVerdict, rule: str = RULE) -> dict[str, Any] | None:
    return next((dict(r) for r in v["reasons"] if r.get("rule") == rule), None)


def test_0_5_12_quantizes_through_the_dsl_on_sm100() -> None:
    # fails before the fix: the rule started at 0.5.13 (the GEMM's auto pick), 0.5.12 said ok
    v = _verdict("0.5.12", {"installed": False})
    assert v["status"] == "blocked", v
    reason = _reason(v)
    assert reason is not None and reason["result"] == "fail" and reason["effect"] == "crash", reason
    assert "CuTe-DSL backend requested but CuTe-DSL is not available." in str(reason["message"])


@pytest.mark.parametrize(("sglang", "cc"), [("0.5.11", "10.0"), ("0.5.12", "12.0"), ("0.5.12", "9.0")])
def test_not_applied_where_the_quantize_is_cuda(sglang: str, cc: str) -> None:
    # 0.5.11 quantizes with FlashInfer's default 'cuda' backend; off SM100 0.5.12+ take 'cuda' too
    reason = _reason(_verdict(sglang, {"installed": False}, cc))
    assert reason is None or reason["result"] == "skipped", reason


def test_the_message_gives_no_gemm_backend_way_around() -> None:
    # fails before the fix: the message advised --fp4-gemm-backend flashinfer_cutlass, which still quantizes on the DSL
    reason = _reason(_verdict("0.5.23", {"installed": False}))
    assert reason is not None and reason["result"] == "fail", reason
    message = str(reason["message"])
    assert "give --fp4-gemm-backend flashinfer_cutlass" not in message
    assert "fp4_quantize" in message and "does not avoid" in message


def test_a_hop_reads_the_quantize_step() -> None:
    # fails before the fix: the path named only mm_fp4's requirement
    feature = next(f for f in load().features if f["id"] == FEATURE)
    hops = [h for h in feature["path"] if RULE in (h.get("rules") or [])]
    assert any("fp4_quantization.py" in str(h.get("file")) and h.get("majors") == [10] for h in hops), hops


def _gate(tmp_path: Path, installed: bool, *flags: str, model: dict[str, Any] | None = None) -> dict[str, Any]:
    """A launch on tests/cases/h200-newest (SGLang 0.5.23) whose complete list says the DSL is (not) installed."""
    from cli_process import stackcheck_json

    case = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"
    doc = json.loads(case.read_text())
    doc["facts"]["packages_complete"] = True
    entry = {"installed": True, "version": "4.8.0", "dist_version": "4.8.0", "location": "/x"}
    doc["facts"]["packages"]["nvidia-cutlass-dsl"] = entry if installed else {"installed": False}
    facts = tmp_path / f"facts-{installed}.json"
    facts.write_text(json.dumps(doc))
    config = model or {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
                       "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128,
                       "torch_dtype": "bfloat16", "vocab_size": 1024, "num_experts": 16,
                       "moe_intermediate_size": 512, "num_experts_per_tok": 4}  # fmt: skip
    target = tmp_path / "target"
    target.mkdir(exist_ok=True)
    (target / "config.json").write_text(json.dumps(config))
    return stackcheck_json("gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", "python", "-m",
                           "sglang.launch_server", "--model-path", str(target), "--tp", "8", *flags)  # fmt: skip


def _rules(out: dict[str, Any], rule: str) -> list[tuple[str, str]]:
    return [
        (str(x.get("rule")), str(x.get("result")))
        for r in out.get("reasons") or []
        if r.get("feature") == FEATURE
        for x in r.get("reasons") or []
        if x.get("rule") == rule
    ]


DENSE = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 1,
         "num_attention_heads": 16, "num_key_value_heads": 4, "intermediate_size": 8192, "torch_dtype": "bfloat16",
         "vocab_size": 1024}  # fmt: skip
MOE = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
       "num_hidden_layers": 1, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128,
       "torch_dtype": "bfloat16", "vocab_size": 1024, "num_experts": 16, "moe_intermediate_size": 512,
       "num_experts_per_tok": 4}  # fmt: skip


def _draft_gate(tmp_path: Path, installed: bool, draft_config: dict[str, Any]) -> dict[str, Any]:
    draft = tmp_path / "draft"
    draft.mkdir(exist_ok=True)
    (draft / "config.json").write_text(json.dumps(draft_config))
    flags = ("--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", str(draft),
             "--speculative-moe-runner-backend", "flashinfer_cutedsl")  # fmt: skip
    return _gate(tmp_path, installed, *flags)


def test_the_draft_cutedsl_moe_runner_needs_the_dsl(tmp_path: Path) -> None:
    # fails before the fix: the rule read --moe-runner-backend only, the MoE draft's flashinfer_cutedsl was allowed
    out = _draft_gate(tmp_path, False, MOE)
    assert (out["decision"], _rules(out, CUTEDSL_MOE)) == ("refuse", [(CUTEDSL_MOE, "fail")]), out
    out = _draft_gate(tmp_path, True, MOE)
    assert (out["decision"], _rules(out, CUTEDSL_MOE)) == ("allow", []), out


def test_a_dense_draft_builds_no_cutedsl_runner(tmp_path: Path) -> None:
    # a draft read as dense has no MoE layer to build the runner: not refused for the DSL
    out = _draft_gate(tmp_path, False, DENSE)
    assert [r for r in _rules(out, CUTEDSL_MOE) if r[1] == "fail"] == [], out


@pytest.mark.registry
def test_the_real_wheels() -> None:
    from registry_wheels import fetch_wheel

    for sglang, line in (("0.5.12", 'backend = "cute-dsl" if is_sm100_supported() else "cuda"'),
                         ("0.5.23", 'backend = "cute-dsl" if get_platform().is_sm100 else "cuda"')):  # fmt: skip
        with zipfile.ZipFile(fetch_wheel("sglang", sglang)) as z:
            fp4 = z.read("sglang/srt/layers/quantization/fp4_utils.py").decode()
            modelopt = z.read("sglang/srt/layers/quantization/modelopt_quant.py").decode()
        assert "_flashinfer_fp4_quantize_" + line in fp4, sglang
        assert "backend=_flashinfer_fp4_quantize_backend" in fp4, sglang
        assert "fp4_quantize(x, layer.input_scale_inv)" in modelopt, sglang
    with zipfile.ZipFile(fetch_wheel("sglang", "0.5.11")) as z:
        assert '"cute-dsl"' not in z.read("sglang/srt/layers/quantization/fp4_utils.py").decode()
    with zipfile.ZipFile(fetch_wheel("flashinfer-python", "0.7.2")) as z:
        quant = z.read("flashinfer/quantization/fp4_quantization.py").decode()
    body = quant[quant.index("def _fp4_quantize_cute_dsl") :]
    body = body[: body.index("\ndef ", 1)]
    assert "if not is_cute_dsl_available():" in body and "raise RuntimeError" in body


LINEAR = "linear-attn-cutedsl"
# (icute3: the gate judges the feature only for a model with linear-attention layers; a dense model is off)
QWEN3_NEXT = {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "hidden_size": 2048,
              "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
              "torch_dtype": "bfloat16", "vocab_size": 1024, "num_experts": 16, "moe_intermediate_size": 512,
              "num_experts_per_tok": 4, "full_attention_interval": 4}  # fmt: skip


def _linear_rules(out: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (str(x.get("rule")), str(x.get("result")))
        for r in out.get("reasons") or []
        if r.get("feature") == LINEAR
        for x in r.get("reasons") or []
        if x.get("rule") == RULE
    ]


@pytest.mark.parametrize(
    "flag", ["--linear-attn-backend", "--linear-attn-decode-backend", "--linear-attn-prefill-backend"]
)
def test_the_cutedsl_linear_attention_needs_the_dsl(tmp_path: Path, flag: str) -> None:
    # fails before the fix: the flag was passed through unread, the launch allowed where `import cutlass` fails
    out = _gate(tmp_path, False, flag, "cutedsl", model=QWEN3_NEXT)
    assert (out["decision"], _linear_rules(out)) == ("refuse", [(RULE, "fail")]), out
    out = _gate(tmp_path, True, flag, "cutedsl", model=QWEN3_NEXT)
    assert (out["decision"], _linear_rules(out)) == ("allow", []), out


def test_other_linear_attention_backends_need_no_dsl(tmp_path: Path) -> None:
    out = _gate(tmp_path, False, "--linear-attn-backend", "triton", model=QWEN3_NEXT)
    assert (out["decision"], _linear_rules(out)) == ("allow", []), out
