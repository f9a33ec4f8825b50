"""irev85 (review of imend21's scoping of bf16-gemm-cutedsl-dsl-installed by the launch): SGLang's own start checks on
--bf16-gemm-backend (layers/quantization/unquant.py initialize_bf16_gemm_config, sglang 0.5.15-0.5.23 wheels) were
judged nowhere, so launches that crash as each scheduler starts were allowed: cutedsl with deterministic inference
(0.5.18+ raise ValueError, DSL installed or not), cutedsl off SM10x (ValueError), gemv off SM90 (0.5.19-0.5.22) / SM90
and SM12x (0.5.23); and 0.5.15-0.5.16 import the CuTe DSL BF16 GEMM (`import cutlass`) for a given cutedsl, which the
DSL rule applied only from 0.5.17."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest
from gate_cli import cli_json

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

CASES = Path(__file__).resolve().parents[1] / "cases"
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
         "torch_dtype": "bfloat16"}  # fmt: skip


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("irev85-bf16-gemm")
    (root / "llama").mkdir()
    (root / "llama" / "config.json").write_text(json.dumps(LLAMA), encoding="utf-8")
    for case, name in (("b200-cubin-package", "b200"), ("h200-newest", "h200")):
        doc = json.loads((CASES / case / "facts.json").read_text(encoding="utf-8"))
        doc.get("facts", doc)["packages"]["sglang"]["version"] = "0.5.23"
        (root / f"{name}-0.5.23.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def refusals(root: Path, box: str, *flags: str) -> list[tuple[str, str]]:
    """The gate's bf16-gemm refusals (feature, status) for a BF16 Llama launch on `box`, in this process."""
    line = ["python", "-m", "sglang.launch_server", "--model-path", str(root / "llama"), *flags]
    _, doc = cli_json(["gate", "--facts", str(root / f"{box}.json"), "--dry-run", "--format", "json", "--", *line])
    return [(str(r["feature"]), str(r["status"])) for r in doc["reasons"] if "bf16-gemm" in str(r["feature"])]


def test_cutedsl_with_deterministic_inference_is_refused_dsl_or_not(root: Path) -> None:
    blocked = [("refusal bf16-gemm-cutedsl-deterministic", "blocked")]
    # failed before: [] (b200-cubin-package does not list the DSL, so only SGLang's ValueError is left)
    det = ("--enable-deterministic-inference",)
    assert refusals(root, "b200-0.5.23", "--bf16-gemm-backend", "cutedsl", *det) == blocked
    assert refusals(root, "b200-0.5.23", "--bf16-gemm-backend=cutedsl", "--rl-on-policy-target", "fsdp") == blocked
    assert refusals(root, "b200-0.5.23", *det) == []  # auto: torch


def test_cutedsl_off_sm10x_and_gemv_off_its_archs_are_refused(root: Path) -> None:
    # failed before: [] for each (SGLang raises ValueError as each scheduler starts)
    assert refusals(root, "h200-0.5.23", "--bf16-gemm-backend", "cutedsl") == [
        ("refusal bf16-gemm-cutedsl-sm10x", "blocked")
    ]
    assert refusals(root, "b200-0.5.23", "--bf16-gemm-backend", "gemv") == [("refusal bf16-gemm-gemv-arch", "blocked")]
    assert refusals(root, "h200-0.5.23", "--bf16-gemm-backend", "gemv") == []  # SM90


def _dsl_rule(sglang: str, launch: dict[str, Any]) -> str | None:
    manifests = load_manifests([])
    packages = {"sglang": {"installed": True, "version": sglang}, "nvidia-cutlass-dsl": {"installed": False}}
    facts = {"packages": packages, "gpus": [{"name": "GPU", "compute_capability": "10.0"}] * 8}
    check = next(c for c in manifests.checks if c["id"] == "sglang-start-imports")
    verdict = evaluate_check(check, Context(facts=cast("Facts", facts), manifests=manifests, launch=launch))
    rule = "bf16-gemm-cutedsl-dsl-installed"
    return next((str(r["result"]) for r in verdict["reasons"] if r.get("rule") == rule), None)


def test_a_given_cutedsl_on_0_5_15_and_0_5_16_needs_the_dsl() -> None:
    assert _dsl_rule("0.5.15", {"bf16_gemm_backend": "cutedsl"}) == "fail"  # failed before: None (from 0.5.17 only)
    assert _dsl_rule("0.5.16", {"bf16_gemm_backend": "cutedsl"}) == "fail"
    assert _dsl_rule("0.5.16", {}) is None  # the default there stays torch (auto is not rewritten)
