"""ifc66 (the sixty-sixth fact-check sample, rows m2 and m4): a BF16 DeepSeek-V3-shaped config.json stating
moe_layer_freq as null (with topk_method / scoring_func null) or as 0 was allowed on SM100: ifc65's model-config-keys
took a stated key as usable whatever its value. transformers 5.19.0's DeepseekV3Config keeps the stated value as the
attribute (run), and SGLang 0.5.20-0.5.23's deepseek_v2.py tests each layer past first_k_dense_replace with
`layer_id % config.moe_layer_freq == 0`: TypeError for None, ZeroDivisionError for 0, as the model is built. Such a
value is unknown now, as an unstated key is; a null topk_method / scoring_func too (no router a checkpoint states)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V2_LITE, gate_checkpoint

from stackcheck.knowledge.loader import load
from stackcheck.launch.preflight.model import config_keys_result


@pytest.fixture(scope="module")
def mdata() -> Any:
    return load([], env={}).preflight["model"]


def _result(config: dict[str, Any], mdata: Any, options: Any = None, release: str = "0.5.23") -> Any:
    archs = [str(a) for a in config.get("architectures") or []]
    return config_keys_result(config, archs, options or {}, release, mdata, "model m")


@pytest.mark.parametrize(
    "values",
    [{"moe_layer_freq": None}, {"moe_layer_freq": 0}, {"moe_layer_freq": False}, {"moe_layer_freq": "1"},
     {"moe_layer_freq": 0.0}, {"moe_layer_freq": [1]}, {"topk_method": None}, {"scoring_func": None},
     {"topk_method": None, "scoring_func": None, "moe_layer_freq": None}],
)  # fmt: skip
@pytest.mark.parametrize("release", ["0.5.20", "0.5.23"])
def test_a_router_key_stated_with_a_value_sglang_cannot_use_is_unknown(
    values: dict[str, Any], release: str, mdata: Any
) -> None:
    got = _result({**DEEPSEEK_R1, **values}, mdata, release=release)
    assert got is not None and got.status == "unknown"  # fails before: None (not judged: allowed)
    assert set(got.observed["unusable"]) == set(values)


def test_the_v2_shape_and_the_override_are_read_the_same_way(mdata: Any) -> None:
    assert _result({**DEEPSEEK_V2_LITE, "moe_layer_freq": 0}, mdata) is not None  # fails before: None
    override = '{"moe_layer_freq": 0}'
    got = _result(DEEPSEEK_R1, mdata, {"--json-model-override-args": override})
    assert got is not None and got.observed["unusable"] == {"moe_layer_freq": 0}  # fails before: None
    # the override mending config.json's value is read as SGLang reads it (config.json updated with it)
    assert (
        _result({**DEEPSEEK_R1, "moe_layer_freq": 0}, mdata, {"--json-model-override-args": '{"moe_layer_freq": 1}'})
        is None
    )


@pytest.mark.parametrize("freq", [1, 2, 1.0, True])
def test_a_usable_value_is_not_judged(freq: Any, mdata: Any) -> None:
    assert _result({**DEEPSEEK_R1, "moe_layer_freq": freq}, mdata) is None
    assert _result({**DEEPSEEK_R1, "scoring_func": "softmax"}, mdata) is None  # (a string: read, not judged here)


def test_the_gate_does_not_allow_a_zero_moe_layer_freq(tmp_path: Path) -> None:
    doc = gate_checkpoint(
        tmp_path, "0.5.23", "9.0", {**DEEPSEEK_R1, "moe_layer_freq": 0}, "--moe-runner-backend", "triton"
    )
    checks = {c.get("check"): c.get("status") for c in doc["preflight"]["checks"]}
    assert checks.get("model-config-keys") == "unknown", checks
    assert doc["decision"] != "allow"  # fails before: allow
