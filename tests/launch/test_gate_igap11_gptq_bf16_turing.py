"""A GPTQ / AWQ checkpoint whose config.json says torch_dtype bfloat16, served without --quantization and without
--dtype below compute capability 8.0, or with keys Marlin does not take on any GPU (refusal
quant-act-dtype-float16-only-no-marlin).

SGLang converts such a checkpoint to gptq_marlin / awq_marlin only where check_marlin_supported holds, and
marlin_utils.py query_marlin_supported_quant_types offers nothing below capability 80 (0.5.1:73, 0.5.23:78): the
checkpoint keeps GPTQConfig / AWQConfig, whose activation dtypes are float16 only on CUDA (0.5.23 gptq/gptq.py:135,
awq/awq.py:106), and model_loader/loader.py _get_quantization_config raises ValueError for the bfloat16 model
(0.5.23:266). The conversion also needs the checkpoint's keys to name a Marlin type and group size (GPTQMarlinConfig
is_gptq_marlin_compatible: bits, group_size, sym, desc_act given, (bits, sym) in TYPE_MAP; AWQMarlinConfig: bits,
group_size, zero_point, 4-bit with zero points; MARLIN_SUPPORTED_GROUP_SIZES -1/32/64/128). The model configs are
written for the tests in the shape of a published Llama 3 8B GPTQ / AWQ one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, reason_status, release_box

RULE = "refusal quant-act-dtype-float16-only-no-marlin"
GPTQ = {"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True, "desc_act": False}
AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}


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


@pytest.mark.parametrize(
    "qcfg",
    [
        {**GPTQ, "bits": 3},
        {**GPTQ, "sym": False},
        {k: v for k, v in GPTQ.items() if k != "desc_act"},
        {**GPTQ, "group_size": 256},
        {**GPTQ, "checkpoint_format": "marlin"},
        {**AWQ, "bits": 8},
        {**AWQ, "zero_point": False},
    ],
    ids=["gptq-3bit", "gptq-asym", "gptq-no-desc-act", "gptq-group-256", "gptq-marlin-format", "awq-8bit", "awq-no-zp"],
)
def test_checkpoint_marlin_does_not_take_refused_on_ampere_too(tmp_path: Path, qcfg: dict[str, Any]) -> None:
    # fails on the parent: allowed on an A100 (the class stays float16-only whatever the GPU)
    doc = _gate(tmp_path, "0.5.23", "8.0", _config(qcfg, "bfloat16"))
    assert doc["decision"] == "refuse" and reason_status(doc).get(RULE) == ("blocked", "crash"), doc["reasons"]
    assert "not a checkpoint Marlin takes" in json.dumps(next(r for r in doc["reasons"] if r.get("feature") == RULE))


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


@pytest.mark.registry
@pytest.mark.parametrize("release", ["0.5.1", "0.5.5", "0.5.9", "0.5.14", "0.5.17", "0.5.20", "0.5.23"])
def test_registry_marlin_conversion_is_what_the_wheel_takes(release: str) -> None:
    import re
    import zipfile

    from registry_wheels import fetch_wheel

    from stackcheck.facts.versions import version_in
    from stackcheck.knowledge.loader import load

    rule = next(r for r in load([], env={}).launch["refusals"]["rules"] if r["id"] == RULE.split(" ", 1)[1])
    spec = next(e for e in rule["releases"] if version_in(release, e["versions"]))["marlin_conversion"]
    with zipfile.ZipFile(fetch_wheel("sglang", release)) as zf:
        names = zf.namelist()

        def read(*paths: str) -> str:
            return next(zf.read(p).decode() for p in paths if p in names)

        marlin = read("sglang/srt/layers/quantization/marlin_utils.py")
        gptq = read("sglang/srt/layers/quantization/gptq.py", "sglang/srt/layers/quantization/gptq/gptq.py")
        awq = read("sglang/srt/layers/quantization/awq.py", "sglang/srt/layers/quantization/awq/awq.py")
    sizes = re.search(r"MARLIN_SUPPORTED_GROUP_SIZES = \[(.*?)\]", marlin)
    assert sizes and [int(x) for x in sizes.group(1).split(",")] == spec["group_sizes"]
    assert f"if device_capability < {spec['min_sm']}:" in marlin
    zp = re.search(r"if has_zp:.*?return \[(.*?)\]", marlin, re.S)
    assert zp and zp.group(1).strip() == "scalar_types.uint4"  # with zero points: 4-bit only
    gmap = re.search(r"TYPE_MAP = \{(.*?)\}", gptq[gptq.index("class GPTQMarlinConfig") :], re.S)
    pairs = re.findall(r"\((\d+), (True|False)\)", gmap.group(1) if gmap else "")
    assert [[int(b), s == "True"] for b, s in pairs] == spec["gptq_types"]
    amap = re.search(r"TYPE_MAP = \{(.*?)\}", awq[awq.index("class AWQMarlinConfig") :], re.S)
    assert amap and re.findall(r"(\d+): scalar_types\.uint\d+\b", amap.group(1)) == ["4", "8"]
    assert spec["awq_bits_zero_point"] == [4] and spec["awq_bits_no_zero_point"] == []  # uint4 / uint8 need a zp
