"""ifc68 (sample 68, rows g3, g7, g11): SGLang 0.5.17-0.5.23 turn --bf16-gemm-backend auto into cutedsl on an SM
10.x GPU (layers/quantization/unquant.py initialize_bf16_gemm_config, called by the scheduler at start for every
model) and import sglang.kernels.ops.gemm.cutedsl_bf16_gemm, whose line 32 is `import cutlass`: without
nvidia-cutlass-dsl (cutlass comes only with its .pth) every launch on a B200 / B300 fails at start. The gate allowed
them (a BF16 Llama, a block-FP8 DeepSeek-V3). Rule bf16-gemm-cutedsl-dsl-installed of check sglang-start-imports.
Boxes are written by hand (the verdict engine) and from tests/cases/h200-newest with its GPUs renamed (the gate)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest
from cli_process import scrubbed_environ, stackcheck_json

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

__all__ = ["scrubbed_environ"]

MANIFESTS = load_manifests([])
RULE = "bf16-gemm-cutedsl-dsl-installed"
CASES = Path(__file__).resolve().parents[1] / "cases"


def _result(sglang: str, cc: str, dsl: dict[str, Any] | None) -> str | None:
    packages: dict[str, Any] = {"sglang": {"installed": True, "version": sglang}}
    if dsl is not None:
        packages["nvidia-cutlass-dsl"] = dsl
    facts = {"packages": packages, "gpus": [{"name": "GPU", "compute_capability": cc}] * 8}
    check = next(c for c in MANIFESTS.checks if c["id"] == "sglang-start-imports")
    verdict = evaluate_check(check, Context(facts=cast("Facts", facts), manifests=MANIFESTS))
    return next((str(r["result"]) for r in verdict["reasons"] if r.get("rule") == RULE), None)


@pytest.mark.parametrize(("sglang", "cc"), [("0.5.17", "10.0"), ("0.5.20", "10.3"), ("0.5.23", "10.0")])
def test_missing_dsl_fails_on_sm10x_from_0_5_17(sglang: str, cc: str) -> None:
    # fails before the fix: no such rule
    assert _result(sglang, cc, {"installed": False}) == "fail"


@pytest.mark.parametrize(
    ("sglang", "cc", "dsl"),
    [
        ("0.5.23", "10.0", {"installed": True, "version": "4.8.0"}),  # installed
        ("0.5.16", "10.0", {"installed": False}),  # auto stays auto before 0.5.17
        ("0.5.23", "9.0", {"installed": False}),  # Hopper: auto is cuBLAS
        ("0.5.23", "12.0", {"installed": False}),  # SM12x: not is_sm100
    ],
)
def test_no_failure_where_sglang_does_not_import_it(sglang: str, cc: str, dsl: dict[str, Any]) -> None:
    assert _result(sglang, cc, dsl) != "fail"


def test_a_list_that_does_not_name_the_dsl_leaves_the_rule_out() -> None:
    assert _result("0.5.23", "10.0", None) is None


def _box(tmp_path: Path, installed: bool) -> Path:
    doc = json.loads((CASES / "h200-newest" / "facts.json").read_text(encoding="utf-8"))
    facts = doc.get("facts", doc)
    for gpu in facts["gpus"]:
        gpu["name"], gpu["compute_capability"] = "NVIDIA B200", "10.0"
    facts["packages"]["nvidia-cutlass-dsl"] = (
        {"installed": True, "version": "4.8.0", "dist_version": "4.8.0"} if installed else {"installed": False}
    )
    path = tmp_path / f"b200-{installed}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_the_gate_refuses_a_bf16_llama_on_a_b200_without_the_dsl(tmp_path: Path) -> None:
    # fails before the fix: the check sglang-start-imports was ok, the launch not refused for it
    model = tmp_path / "llama"
    model.mkdir()
    (model / "config.json").write_text(
        json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
                    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336}),
        encoding="utf-8",
    )  # fmt: skip

    def refusals(installed: bool) -> list[tuple[str, str]]:
        line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model)]
        facts = str(_box(tmp_path, installed))
        doc = stackcheck_json("gate", "--facts", facts, "--dry-run", "--format", "json", "--", *line)
        return [(str(r.get("feature")), str(r.get("status"))) for r in doc.get("reasons") or []]

    assert ("sglang-start-imports", "blocked") in refusals(False)
    assert all(feature != "sglang-start-imports" for feature, _ in refusals(True))
