"""imend22: --bf16-gemm-backend cutedsl on an SM10x GPU whose torch is built for a CUDA below 12.8. SGLang 0.5.15-0.5.23
raise ValueError as each scheduler starts (layers/quantization/unquant.py initialize_bf16_gemm_config: the cutedsl
branch checks is_sm100_supported, 0.5.19+ through get_platform().is_sm100; utils/common.py: device major 10 and
torch.version.cuda >= 12.8). bf16-gemm-cutedsl-sm10x judged the GPU major alone, so a B200 with a cu126 torch was
allowed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gate_cli import cli_json

CASES = Path(__file__).resolve().parents[1] / "cases"
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
         "torch_dtype": "bfloat16"}  # fmt: skip


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imend22-bf16-gemm")
    (root / "llama").mkdir()
    (root / "llama" / "config.json").write_text(json.dumps(LLAMA), encoding="utf-8")
    doc = json.loads((CASES / "b200-cubin-package" / "facts.json").read_text(encoding="utf-8"))
    facts = doc.get("facts", doc)
    for sglang in ("0.5.15", "0.5.23"):
        facts["packages"]["sglang"]["version"] = sglang
        for cuda in ("12.6", "12.8", None):
            torch = facts["packages"]["torch"]
            torch["cuda"], torch["variant"] = (cuda, f"cu{cuda.replace('.', '')}") if cuda else (None, None)
            torch["version"] = f"2.7.1+{torch['variant']}" if cuda else "2.7.1"
            (root / f"b200-{sglang}-{cuda or 'unknown'}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def refusals(root: Path, box: str, *flags: str) -> list[tuple[str, str, str]]:
    """The gate's bf16-gemm refusals (feature, status, observed) for a BF16 Llama launch on `box`, in this process."""
    line = ["python", "-m", "sglang.launch_server", "--model-path", str(root / "llama"), *flags]
    _, doc = cli_json(["gate", "--facts", str(root / f"{box}.json"), "--dry-run", "--format", "json", "--", *line])
    return [
        (str(r["feature"]), str(r["status"]), " ".join(str(w.get("observed")) for w in r.get("reasons") or []))
        for r in doc["reasons"]
        if "bf16-gemm-cutedsl-sm10x" in str(r["feature"])
    ]


def test_cutedsl_on_sm10x_with_a_torch_below_cuda_12_8_is_refused(root: Path) -> None:
    given = ("--bf16-gemm-backend", "cutedsl")
    # failed before: [] (only the GPU major was judged; SGLang raises '... requires SM100/SM103' there)
    for sglang in ("0.5.15", "0.5.23"):
        found = refusals(root, f"b200-{sglang}-12.6", *given)
        assert [(f, s) for f, s, _ in found] == [("refusal bf16-gemm-cutedsl-sm10x", "blocked")]
        assert "torch_cuda 12.6" in found[0][2]
    assert refusals(root, "b200-0.5.23-12.8", *given) == []  # CUDA 12.8: is_sm100_supported holds


def test_cutedsl_on_sm10x_with_torch_cuda_not_known_is_unknown(root: Path) -> None:
    # failed before: [] (allowed)
    found = refusals(root, "b200-0.5.23-unknown", "--bf16-gemm-backend", "cutedsl")
    assert [(f, s) for f, s, _ in found] == [("refusal bf16-gemm-cutedsl-sm10x", "unknown")]
