"""ieffect: a launch that starts and serves wrong output, with no error, is `blocked (wrong-output)`, not `blocked
(crash)`: an operator reading "crash" expects a start failure and may take a launch that started for a pass. The gate
refuses it as it refuses a crash (exit 1, the same code); the effect is in every schema that lists effects, and the
renderers say it.

Re-marked: refusals moe-cutlass-gelu-experts-as-swiglu (Gemma 4's gelu experts run as SwiGLU, SGLang 0.5.11-0.5.14),
rope-theta-file-default, moe-trtllm-deepseek-softmax-routing (0.5.1-0.5.22; 0.5.23's FP4 path asserts: crash) and
the check rule transformers-5-rope-theta (SGLang 0.5.1-0.5.9 beside transformers 5). The model configs are this
test's own minimal files in the shape of config.json."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path
from typing import Any, cast

import jsonschema
import pytest
from gate_cli import cli_json

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.cli import main
from stackcheck.knowledge.validate import _registry, schema_problems
from stackcheck.launch import gate
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases"
GELU = "refusal moe-cutlass-gelu-experts-as-swiglu"
ROUTING = "refusal moe-trtllm-deepseek-softmax-routing"
GEMMA4_TEXT: dict[str, Any] = {
    "model_type": "gemma4_text", "hidden_size": 2816, "moe_intermediate_size": 704, "num_attention_heads": 16,
    "num_key_value_heads": 8, "head_dim": 256, "num_hidden_layers": 4, "enable_moe_block": True, "num_experts": 128,
    "top_k_experts": 8,
}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "gemma4-moe": {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
                   "text_config": GEMMA4_TEXT, "torch_dtype": "bfloat16"},
    "gemma4-moe-fp8": {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
                       "text_config": GEMMA4_TEXT,
                       "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic"}},
    "dsv2": {"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "hidden_size": 2048,
             "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 512,
             "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "n_routed_experts": 64,
             "num_experts_per_tok": 6, "moe_intermediate_size": 1408, "moe_layer_freq": 1, "first_k_dense_replace": 1,
             "topk_method": "group_limited_greedy", "n_group": 8, "topk_group": 3, "norm_topk_prob": True,
             "scoring_func": "softmax", "torch_dtype": "bfloat16"},
}  # fmt: skip


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ieffect")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    facts = json.loads((CASES / "b200-cubin-package" / "facts.json").read_text(encoding="utf-8"))
    for version in ("0.5.12", "0.5.22", "0.5.23"):
        doc = copy.deepcopy(facts)
        doc.get("facts", doc)["packages"]["sglang"]["version"] = version
        (root / f"b200-{version}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def _line(root: Path, model: str, *flags: str) -> list[str]:
    return ["python", "-m", "sglang.launch_server", "--model-path", str(root / model), "--tp", "8", *flags]


def _gate(root: Path, version: str, model: str, *flags: str) -> tuple[int, dict[str, Any]]:
    """b200-cubin-package (8 x B200, the TRTLLM_GEN_BMM cubins present), SGLang per test; in this process."""
    return cli_json(["gate", "--facts", str(root / f"b200-{version}.json"), "--dry-run", "--format", "json", "--",
                     *_line(root, model, *flags)])  # fmt: skip


def _effects(doc: dict[str, Any], subject: str) -> list[tuple[str, Any]]:
    return [(str(r.get("status")), r.get("effect")) for r in doc["reasons"] if r["feature"] == subject]


def _schema(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((ROOT / "schemas" / name).read_text(encoding="utf-8"))
    return doc


def test_the_gemma4_gelu_experts_as_swiglu_are_refused_as_wrong_output_exit_1(root: Path) -> None:
    rc, doc = _gate(root, "0.5.12", "gemma4-moe", "--attention-backend", "triton", "--moe-runner-backend",
                    "flashinfer_cutlass")  # fmt: skip
    assert rc == 1 and doc["decision"] == "refuse"  # refused as a crash is: the same exit code
    assert _effects(doc, GELU) == [("blocked", "wrong-output")]  # before: ("blocked", "crash")
    assert schema_problems("gate.schema.json", doc, "gate") == []  # before: "wrong-output" not in the effect enum
    from stackcheck.render import GATE_FORMATS
    from stackcheck.render.interface import RenderOptions

    text = GATE_FORMATS["text"](doc, RenderOptions(width=400))  # the text the gate prints of this decision
    line = next(x for x in text.splitlines() if "moe-cutlass-gelu-experts-as-swiglu" in x)
    assert "blocked (wrong-output)" in line and "blocked (crash)" not in line, line


def test_an_unknown_wrong_output_refusal_says_what_the_release_does(root: Path) -> None:
    # a quantized Gemma 4 MoE on the CUTLASS runner: the rule's path is not judged refused, unknown
    rc, doc = _gate(root, "0.5.12", "gemma4-moe-fp8", "--moe-runner-backend", "flashinfer_cutlass")
    (found,) = [r for r in doc["reasons"] if r["feature"] == GELU]
    text = json.dumps(found)
    assert found["status"] == "unknown" and rc == 1
    # before: "SGLang 0.5.12 refuses this combination never: the server starts ..."
    assert "starts and serves wrong output" in text and "refuses this combination" not in text, text


def test_the_deepseek_v2_routing_is_wrong_output_until_0_5_22_and_a_crash_where_0_5_23_asserts(root: Path) -> None:
    trtllm = ("--moe-runner-backend", "flashinfer_trtllm")
    assert _effects(_gate(root, "0.5.22", "dsv2", *trtllm)[1], ROUTING) == [("blocked", "wrong-output")]
    # 0.5.23: the FP4 path asserts the router's output format (AssertionError at the first MoE forward)
    fp4 = _gate(root, "0.5.23", "dsv2", *trtllm, "--quantization", "modelopt_fp4")[1]
    assert _effects(fp4, ROUTING) == [("blocked", "crash")]


MANIFESTS = load_manifests([])


def _start_imports(sglang: str, transformers: str) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "packages": {"sglang": {"installed": True, "version": sglang}, "kernels": {"installed": False},
                     "transformers": {"installed": True, "version": transformers}},
        "packages_complete": True,
    }  # fmt: skip
    check = next(c for c in MANIFESTS.checks if c["id"] == "sglang-start-imports")
    return dict(evaluate_check(check, Context(facts=facts, manifests=MANIFESTS)))  # type: ignore[arg-type]


def test_transformers_5_beside_sglang_0_5_9_fails_the_check_with_wrong_output_and_the_gate_refuses_it() -> None:
    v = _start_imports("0.5.9", "5.0.0")
    (reason,) = [r for r in v["reasons"] if r.get("rule") == "transformers-5-rope-theta"]
    assert reason["result"] == "fail" and reason["effect"] == "wrong-output"  # before: crash
    assert v["status"] == "failed"  # not a warning: wrong output is no degraded run
    d = gate.Derived(command=[], entrypoint=None, sglang_args=[])
    d.required.append(gate.Requirement("sglang-start-imports", "launch", "every SGLang launch", check=True))
    decision = gate.decide(d, [], [], allow_unknown=False, check_verdicts=[{**v, "id": "sglang-start-imports"}])
    assert [b.feature for b in decision.blocking] == ["sglang-start-imports"] and not decision.allow


def test_a_default_or_launch_wide_feature_blocked_with_wrong_output_refuses() -> None:
    verdict = {"id": "f", "status": "blocked", "effect": "wrong-output",
               "reasons": [{"rule": "r", "result": "fail", "effect": "wrong-output", "message": "m"}]}  # fmt: skip
    for kind in ("default", "launch"):
        d = gate.Derived(command=[], entrypoint=None, sglang_args=[])
        d.required.append(gate.Requirement("f", kind, "on by default"))
        decision = gate.decide(d, [verdict], [{"id": "f", "rules": [{"id": "r", "effect": "wrong-output"}]}], False)
        assert [b.effect for b in decision.blocking] == ["wrong-output"], kind  # before: a warning
    unknown = {"id": "f", "status": "unknown", "reasons": [{"rule": "r", "result": "unknown", "message": "m"}]}
    d = gate.Derived(command=[], entrypoint=None, sglang_args=[])
    d.required.append(gate.Requirement("f", "default", "on by default"))
    decision = gate.decide(d, [unknown], [{"id": "f", "rules": [{"id": "r", "effect": "wrong-output"}]}], False)
    assert [b.status for b in decision.blocking] == ["unknown"]  # a rule that could serve wrong output is unknown


def test_every_schema_effect_enum_that_lists_crash_lists_wrong_output() -> None:
    def enums(node: Any) -> list[list[Any]]:
        if isinstance(node, dict):
            own = [node["enum"]] if isinstance(node.get("enum"), list) and "crash" in node["enum"] else []
            return own + [e for v in node.values() for e in enums(v)]
        return [e for v in node for e in enums(v)] if isinstance(node, list) else []

    found = {p.name: enums(_schema(p.name)) for p in sorted((ROOT / "schemas").glob("*.schema.json"))}
    assert (
        sum(len(v) for v in found.values()) >= 8
    )  # features (rule, launch refusal x2), gate x2, report, explain, recommend
    assert all("wrong-output" in e for v in found.values() for e in v), found
    feature = {"id": "f", "title": "t", "status": "blocked", "effect": "wrong-output", "reasons": []}
    registry, _ = _registry()
    jsonschema.Draft202012Validator({"$ref": "report.schema.json#/$defs/feature"}, registry=registry).validate(feature)


def test_the_report_renderers_say_wrong_output(tmp_path: Path) -> None:
    from stackcheck.render import REPORT_FORMATS
    from stackcheck.render.interface import RenderOptions
    from stackcheck.render.text import PlanIndex, feature_action

    # writeup-after: SGLang 0.5.9 on an H200; with transformers 5.0.0 beside it (rule transformers-5-rope-theta)
    doc = json.loads((CASES / "writeup-after" / "facts.json").read_text(encoding="utf-8"))
    packages = doc.get("facts", doc)["packages"]
    packages["transformers"] = {"installed": True, "version": "5.0.0", "dist_version": "5.0.0", "editable": False,
                                "copies": 1, "location": packages["torch"]["location"]}  # fmt: skip
    (tmp_path / "facts.json").write_text(json.dumps(doc), encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["audit", "--facts", str(tmp_path / "facts.json"), "--format", "json"])
    report = json.loads(out.getvalue())
    assert schema_problems("report.schema.json", report, "audit") == []
    (check,) = [c for c in report["checks"] if c["id"] == "sglang-start-imports"]
    assert check["status"] == "failed"
    shown = json.loads(REPORT_FORMATS["json"](report, RenderOptions()))
    (check,) = [c for c in shown["checks"] if c["id"] == "sglang-start-imports"]
    assert [r["effect"] for r in check["reasons"] if r.get("rule") == "transformers-5-rope-theta"] == ["wrong-output"]
    for name in ("text", "markdown"):  # the check's row, beside its status (before: "failed" alone)
        text = REPORT_FORMATS[name](report, RenderOptions(width=200))
        rows = [x for x in text.splitlines() if "sglang-start-imports" in x and "rotary base" in x]
        assert rows and all("wrong-output" in x for x in rows), (name, rows)
    reason = {"rule": "r", "result": "fail", "effect": "wrong-output", "message": "serves SiLU"}
    feature: Any = {"id": "moe-x", "title": "MoE x", "status": "blocked", "effect": "wrong-output", "reasons": [reason]}
    _, action = feature_action(feature, PlanIndex.of(cast(Any, {"features": [feature]})))
    assert "wrong output" in action, action  # before: "do not use it", as for a crash
