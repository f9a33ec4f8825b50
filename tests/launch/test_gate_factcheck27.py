"""The twenty-seventh fact-check sample's false pass (tests/realworld/FACTCHECK.md, "Twenty-seventh sample"; rows a1
and a4 of bench/factcheck27_drawn.json), read in the real wheels:

- a1 / a4: `--moe-a2a-backend deepep_v2 --ep 8` with a BF16 Qwen3 MoE model, SGLang 0.5.20, on 9.0 and 10.0 boxes.
  DeepEPMoE is a FusedMoE; FusedMoE.__init__ gives an unquantized layer UnquantizedFusedMoEMethod and then calls
  _validate_deepep_v2_quant_method, which in 0.5.19-0.5.20 raises ValueError for every MoE method but Fp8MoEMethod
  (sglang 0.5.20 wheel, layers/moe/fused_moe_triton/layer.py:242-267, :463); 0.5.21 on return early for
  UnquantizedFusedMoEMethod. The same check refuses every quantized method other than fp8 in 0.5.19-0.5.23.

The model configs are the test helpers' shapes. On the parent the refused cases here fail (allowed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, QWEN3_MOE, gate_checkpoint, quantized, reason_status

V2 = ("--moe-a2a-backend", "deepep_v2", "--ep", "8")
UNQUANT = "refusal deepep-v2-unquantized-moe"
METHOD = "refusal deepep-v2-quantized-moe-method"
FP8_BLOCK = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
W8A8_INT8 = {"quant_method": "w8a8_int8"}
CT_FP8 = {"quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head"]}


@pytest.mark.parametrize(("release", "cc"), [("0.5.20", "9.0"), ("0.5.20", "10.0"), ("0.5.19", "10.0")])
def test_deepep_v2_unquantized_moe_before_0_5_21_refused(tmp_path: Path, release: str, cc: str) -> None:
    # fails on the parent: allowed; FusedMoE raises ValueError as the first MoE layer is built
    doc = gate_checkpoint(tmp_path, release, cc, QWEN3_MOE, *V2)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(UNQUANT) == ("blocked", "crash")


@pytest.mark.parametrize(
    ("release", "config"),
    [("0.5.20", quantized(W8A8_INT8, QWEN3_MOE)), ("0.5.23", quantized(W8A8_INT8, QWEN3_MOE)),
     ("0.5.22", quantized(CT_FP8, QWEN3_MOE))],
)  # fmt: skip
def test_deepep_v2_other_quantized_moe_method_refused(tmp_path: Path, release: str, config: dict[str, Any]) -> None:
    # fails on the parent: allowed; the layer's MoE method is not Fp8MoEMethod
    doc = gate_checkpoint(tmp_path, release, "9.0", config, *V2)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(METHOD) == ("blocked", "crash")


@pytest.mark.parametrize(
    ("release", "config", "flags"),
    [
        ("0.5.21", QWEN3_MOE, V2),  # 0.5.21 on take BF16 experts
        ("0.5.23", QWEN3_MOE, V2),
        ("0.5.20", quantized(FP8_BLOCK, QWEN3_MOE), V2),  # the block-FP8 experts the check asks for
        ("0.5.20", QWEN3_MOE, ("--moe-a2a-backend", "deepep", "--ep", "8")),  # DeepEP v1: not these rules
        ("0.5.20", LLAMA3, V2),  # no MoE layer (refused by the architecture rule instead)
    ],
)
def test_other_launches_not_these_rules(
    tmp_path: Path, release: str, config: dict[str, Any], flags: tuple[str, ...]
) -> None:
    status = reason_status(gate_checkpoint(tmp_path, release, "9.0", config, *flags))
    assert UNQUANT not in status and METHOD not in status, status
