"""The online FP8 MoE path (--quantization fp8 on an unquantized MoE checkpoint) below compute capability 8.9,
followed per release (igap11, item 1).

sglang 0.5.1-0.5.23 model_loader/weight_utils.py get_quant_config: Fp8Config.get_config_filenames() is [], so an
unquantized checkpoint gets Fp8Config() (is_checkpoint_fp8_serialized False: 0.5.1:185-189, 0.5.23:342-375).
layers/quantization/fp8.py Fp8Config.get_quant_method gives every FusedMoE layer Fp8MoEMethod whatever the
checkpoint (0.5.1:182, 0.5.23:423); its process_weights_after_loading quantizes the BF16 experts to FP8 in place
(0.5.23:2619) and its runner is Triton's fused MoE kernel with use_fp8_w8a8 (0.5.1:1067, 0.5.23:3026). No release has
a Marlin MoE path for FP8 experts (Marlin there is for the dense layers, 8.0 <= sm < 8.9, and for FP4 experts from
0.5.13). So the launch stops where Triton compiles fp8e4nv below sm_89: the gate's refusal fp8-moe-triton-below-sm89
(fp8_config_moe holds for --quantization fp8 on any MoE checkpoint), and Fp8Config's minimum 8.0 below that.

Already refused on the parent: these tests pin the path (0 fail on 404be55); the registry test reads it in the
wheels. The model configs are written for the tests in the shape of published Qwen3 MoE / Llama 3 ones."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, QWEN3_MOE, cli_json, model_dir, reason_status, release_box

RULE = "refusal fp8-moe-triton-below-sm89"


def _gate(tmp_path: Path, release: str, cc: str, config: dict[str, Any], *flags: str) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, release, cc)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", config)), *flags]
    return cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]


@pytest.mark.parametrize("release", ["0.5.1", "0.5.9", "0.5.17", "0.5.23"])
@pytest.mark.parametrize("cc", ["8.0", "8.6"])
@pytest.mark.parametrize("runner", [[], ["--moe-runner-backend", "triton"]])
def test_online_fp8_moe_on_ampere_refused(tmp_path: Path, release: str, cc: str, runner: list[str]) -> None:
    doc = _gate(tmp_path, release, cc, QWEN3_MOE, "--quantization", "fp8", *runner)
    assert doc["decision"] == "refuse" and reason_status(doc).get(RULE) == ("blocked", "crash"), doc["reasons"]


def test_below_8_0_refused_by_the_loader_minimum(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.23", "7.5", QWEN3_MOE, "--quantization", "fp8")
    reasons = [x.get("rule") for r in doc["reasons"] for x in r.get("reasons") or [] if x.get("result") == "fail"]
    assert doc["decision"] == "refuse" and "fp8-min-capability" in reasons, doc["reasons"]


def test_dense_online_fp8_on_ampere_not_refused_so(tmp_path: Path) -> None:
    # the dense layers run weight-only Marlin on 8.0-8.8: the MoE refusal does not apply to a dense model
    assert RULE not in reason_status(_gate(tmp_path, "0.5.23", "8.6", LLAMA3, "--quantization", "fp8"))


@pytest.mark.registry
@pytest.mark.parametrize("release", ["0.5.1", "0.5.5", "0.5.9", "0.5.13", "0.5.17", "0.5.20", "0.5.23"])
def test_registry_online_fp8_moe_path(release: str) -> None:
    from registry_wheels import fetch_wheel

    with zipfile.ZipFile(fetch_wheel("sglang", release)) as zf:
        utils = zf.read("sglang/srt/model_loader/weight_utils.py").decode()
        fp8 = zf.read("sglang/srt/layers/quantization/fp8.py").decode()
    body = utils[utils.index("def get_quant_config") :]
    body = body[: body.index("\ndef ", 1)]
    head = body[body.index("quant_cls.get_config_filenames()") :]
    assert "if not possible_config_filenames:" in head and "return quant_cls()" in head  # online: Fp8Config()
    config = fp8[fp8.index("class Fp8Config") : fp8.index("class Fp8LinearMethod")]
    assert re.search(r"def get_config_filenames\(cls\) -> List\[str\]:\n\s+return \[\]", config)
    moe = config[config.index("isinstance(layer, FusedMoE)") :]
    assert "Fp8MoEMethod(self)" in moe and "is_checkpoint_fp8_serialized" not in moe.split("Fp8MoEMethod(self)")[0]
    assert "fused_marlin_moe" not in fp8  # no Marlin MoE for FP8 experts
    assert "use_fp8_w8a8" in fp8[fp8.index("class Fp8MoEMethod") :]
