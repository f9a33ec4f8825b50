"""ifc72 (found beside the seventy-second sample): SGLang 0.5.15-0.5.17 do not refuse the CuTe DSL BF16 GEMM with
deterministic inference, and each BF16 linear then runs that GEMM or the batch-invariant matmul by the batch's token
count (layers/quantization/unquant.py: use_cutedsl_bf16_gemm(m, n, k)), so outputs depend on the batch: the
determinism asked for is lost with no error (0.5.18 raises for it: 'cutedsl is batch-size dependent'). A given
cutedsl on 0.5.15-0.5.17, and on 0.5.17 also auto / no flag on SM10x (auto becomes cutedsl there whatever the
deterministic setting), were allowed. The gate runs in this process; the model is this test's own config.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gate_cli import cli_json

CASES = Path(__file__).resolve().parents[1] / "cases"
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
         "torch_dtype": "bfloat16"}  # fmt: skip
GIVEN = "refusal bf16-gemm-cutedsl-deterministic-batch-variant"
AUTO = "refusal bf16-gemm-auto-cutedsl-deterministic"
DET = "--enable-deterministic-inference"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ifc72-bf16")
    (root / "llama").mkdir()
    (root / "llama" / "config.json").write_text(json.dumps(LLAMA), encoding="utf-8")
    doc = json.loads((CASES / "b200-cubin-package" / "facts.json").read_text(encoding="utf-8"))
    for version in ("0.5.15", "0.5.17", "0.5.18"):
        doc.get("facts", doc)["packages"]["sglang"]["version"] = version
        (root / f"b200-{version}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def refusals(root: Path, box: str, *flags: str) -> list[str]:
    """The gate's bf16-gemm refusals (blocked) for a BF16 Llama launch on `box`, in this process; each says the
    launch starts and serves batch-dependent results (effect wrong-output), not that it crashes."""
    line = ["python", "-m", "sglang.launch_server", "--model-path", str(root / "llama"), *flags]
    _, doc = cli_json(["gate", "--facts", str(root / f"{box}.json"), "--dry-run", "--format", "json", "--", *line])
    blocked = [r for r in doc["reasons"] if "bf16-gemm" in str(r["feature"]) and r["status"] == "blocked"]
    assert all(r.get("effect") == "wrong-output" for r in blocked), blocked
    assert doc["decision"] == ("refuse" if blocked else doc["decision"]), doc["decision"]
    return [str(r["feature"]) for r in blocked]


def test_a_given_cutedsl_with_deterministic_inference_is_refused(root: Path) -> None:
    # failed before: [] for both (no check in these releases, the server starts)
    assert refusals(root, "b200-0.5.15", "--bf16-gemm-backend", "cutedsl", DET) == [GIVEN]
    assert refusals(root, "b200-0.5.17", "--bf16-gemm-backend=cutedsl", "--rl-on-policy-target", "fsdp") == [GIVEN]


def test_auto_on_0_5_17_sm10x_with_deterministic_inference_is_refused(root: Path) -> None:
    assert refusals(root, "b200-0.5.17", DET) == [AUTO]  # failed before: []
    assert refusals(root, "b200-0.5.17", "--bf16-gemm-backend", "torch", DET) == []
    assert refusals(root, "b200-0.5.15", DET) == []  # 0.5.15-0.5.16: auto is F.linear
    assert refusals(root, "b200-0.5.18", DET) == []  # 0.5.18: auto picks torch under deterministic inference
