"""A GPTQ / AWQ checkpoint whose config.json says torch_dtype bfloat16, served without --quantization and without
--dtype below compute capability 8.0 (refusal quant-act-dtype-float16-only-below-sm80).

SGLang converts such a checkpoint to gptq_marlin / awq_marlin only where check_marlin_supported holds, and
marlin_utils.py query_marlin_supported_quant_types offers nothing below capability 80 (0.5.1:73, 0.5.23:78): the
checkpoint keeps GPTQConfig / AWQConfig, whose activation dtypes are float16 only on CUDA (0.5.23 gptq/gptq.py:135,
awq/awq.py:106), and model_loader/loader.py _get_quantization_config raises ValueError for the bfloat16 model
(0.5.23:266). The model configs are written for the tests in the shape of a published Llama 3 8B GPTQ / AWQ one."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, reason_status, release_box

RULE = "refusal quant-act-dtype-float16-only-below-sm80"
GPTQ = {"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True, "desc_act": False}
AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _config(qcfg: dict[str, Any], dtype: str | None) -> dict[str, Any]:
    config = {k: v for k, v in LLAMA3.items() if k not in ("torch_dtype", "dtype")}
    if dtype is not None:
        config["torch_dtype"] = dtype
    return {**config, "quantization_config": qcfg}


def _gate(tmp_path: Path, release: str, cc: str, config: dict[str, Any], *flags: str) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, release, cc)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", config)), *flags]
    return cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]


@pytest.mark.parametrize("release", ["0.5.1", "0.5.9", "0.5.23"])
@pytest.mark.parametrize("qcfg", [GPTQ, AWQ], ids=["gptq", "awq"])
@pytest.mark.parametrize("flags", [[], ["--dtype", "bfloat16"]])
def test_bfloat16_checkpoint_on_turing_refused(tmp_path: Path, release: str, qcfg: dict[str, Any],
                                               flags: list[str]) -> None:  # fmt: skip
    # fails on the parent: not judged (the loader's ValueError on a T4)
    doc = _gate(tmp_path, release, "7.5", _config(qcfg, "bfloat16"), *flags)
    assert doc["decision"] == "refuse" and reason_status(doc).get(RULE) == ("blocked", "crash"), doc["reasons"]
    reason = next(r for r in doc["reasons"] if r.get("feature") == RULE)
    text = json.dumps(reason)
    assert "sm_75" in text and "Supported dtypes" in text and "--dtype float16" in text


def test_not_refused_so_where_it_loads(tmp_path: Path) -> None:
    # guards (pass on the parent too): --dtype float16, a float16 or float32 checkpoint (auto: float16), a GPU
    # where Marlin runs, a flag that the other rule or the loader minimum judges, a model not quantized
    cases: list[tuple[str, dict[str, Any], list[str]]] = [
        ("7.5", _config(GPTQ, "bfloat16"), ["--dtype", "float16"]),
        ("7.5", _config(GPTQ, "bfloat16"), ["--dtype=half"]),
        ("7.5", _config(AWQ, "float16"), []),
        ("7.5", _config(AWQ, "float32"), []),
        ("7.5", _config(GPTQ, None), []),
        ("8.0", _config(GPTQ, "bfloat16"), []),
        ("8.6", _config(AWQ, "bfloat16"), []),
        ("7.5", _config(GPTQ, "bfloat16"), ["--quantization", "gptq"]),
        ("7.5", LLAMA3, []),
    ]
    for i, (cc, config, flags) in enumerate(cases):
        assert RULE not in reason_status(_gate(tmp_path / str(i), "0.5.23", cc, config, *flags)), (cc, flags)


def test_gpu_not_read_is_unknown_not_passed(tmp_path: Path) -> None:
    # fails on the parent: no rule (the GPU's capability not read leaves the conversion open)
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, "0.5.23", "7.5")
    doc = json.loads(box.read_text())
    for gpu in doc["facts"]["gpus"]:  # a GPU the manifests cannot fill the capability of by its name either
        gpu.pop("compute_capability")
        gpu["name"] = "NVIDIA Unlisted Accelerator"
    box.write_text(json.dumps(doc))
    line = [
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        str(model_dir(tmp_path, "m", _config(GPTQ, "bfloat16"))),
    ]
    got = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]
    assert got["decision"] != "allow" and reason_status(got).get(RULE, ("",))[0] == "unknown", got["reasons"]
