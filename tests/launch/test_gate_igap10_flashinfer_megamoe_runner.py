"""--moe-runner-backend flashinfer_megamoe with no all-to-all backend off SM100 (igap10 item 2, a false pass closed).

Read in the 0.5.20-0.5.23 wheels: no argument check on the GPU for the runner alone; Fp8MoEMethod.apply and
ModelOptNvFp4FusedMoEMethod.apply build FlashInfer's MegaMoE layer (flashinfer.moe_ep MoEEpMegaLayer, SM100 kernels,
validate_mega_arch raises below compute capability 10.0); a BF16 MoE takes the Triton runner.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import QWEN3_MOE, gate_tp8, model_dir, reason_status, release_box

RULE = "refusal moe-runner-flashinfer-megamoe-quantized-sm100"
BLOCK_FP8 = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
QWEN3_MOE_FP8: dict[str, Any] = {**QWEN3_MOE, "quantization_config": BLOCK_FP8}
RUNNER = ("--moe-runner-backend", "flashinfer_megamoe")


@pytest.mark.parametrize("release", ["0.5.20", "0.5.21", "0.5.22", "0.5.23"])
@pytest.mark.parametrize("cc", ["9.0", "12.0"])
def test_quantized_moe_on_the_megamoe_runner_refused_off_sm100(tmp_path: Path, release: str, cc: str) -> None:
    box = release_box(tmp_path, release, cc)
    doc = gate_tp8(box, model_dir(tmp_path, "bf16", QWEN3_MOE), *RUNNER, "--quantization", "fp8")
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(RULE) == ("blocked", "crash"), doc.get("reasons")
    # the checkpoint's own quantization, with no flag, the same (--ep-size 8 keeps the block split out of the way)
    doc = gate_tp8(box, model_dir(tmp_path, "fp8", QWEN3_MOE_FP8), *RUNNER, "--ep-size", "8")
    assert reason_status(doc).get(RULE) == ("blocked", "crash"), doc.get("reasons")


@pytest.mark.parametrize("cc", ["9.0", "12.0"])
def test_nvfp4_on_the_megamoe_runner_refused_off_sm100(tmp_path: Path, cc: str) -> None:
    doc = gate_tp8(
        release_box(tmp_path, "0.5.23", cc), model_dir(tmp_path, "m", QWEN3_MOE), *RUNNER, "--quantization",
        "modelopt_fp4",
    )  # fmt: skip
    assert reason_status(doc).get(RULE) == ("blocked", "crash"), doc.get("reasons")


def test_megamoe_runner_spares_sm100_and_bf16(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "bf16", QWEN3_MOE)
    assert RULE not in reason_status(
        gate_tp8(release_box(tmp_path, "0.5.23", "10.0"), model, *RUNNER, "--quantization", "fp8")
    )
    for cc in ("9.0", "12.0"):  # a BF16 MoE runs on Triton
        assert RULE not in reason_status(gate_tp8(release_box(tmp_path, "0.5.23", cc), model, *RUNNER))


def test_megamoe_runner_unknown_for_an_unread_model_off_sm100(tmp_path: Path) -> None:
    doc = gate_tp8(release_box(tmp_path, "0.5.22", "9.0"), model_dir(tmp_path, "m", None), *RUNNER)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(RULE, ("", None))[0] == "unknown", doc.get("reasons")
