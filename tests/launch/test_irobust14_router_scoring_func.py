"""irobust14 (an adversarial pass over ifc66's DeepSeek router keys): a config.json stating scoring_func as a string
SGLang does not handle ("Sigmoid", "relu", "") or as a number was ok. SGLang 0.5.20-0.5.23's top-k routines
(sglang/srt/layers/moe/topk.py) take softmax, sigmoid or sqrtsoftplus and raise ValueError ('Invalid scoring
function' / 'Unsupported scoring function') for anything else at the first routed forward. Now such a value is
unknown (the biased grouped router of noaux_tc may not read it: not fail); the values published checkpoints state
stay ok, and ifc66's null / 0 values stay unknown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V2_LITE, cli_json, model_dir, release_box


def _check(tmp_path: Path, config: dict[str, Any], release: str = "0.5.23") -> tuple[str, str]:
    box = release_box(tmp_path, release, "9.0")
    model = model_dir(tmp_path, "ds", config)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "8"]
    _, doc = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    checks = {c.get("check"): c for c in doc["preflight"]["checks"]}
    got = checks.get("model-config-keys") or {}
    return str(got.get("status")), json.dumps(got)


@pytest.mark.parametrize("value", ["Sigmoid", "relu", "", 1, ["sigmoid"]])
@pytest.mark.parametrize("base", [DEEPSEEK_R1, DEEPSEEK_V2_LITE])
def test_a_scoring_func_sglang_does_not_take_is_unknown(value: Any, base: dict[str, Any], tmp_path: Path) -> None:
    status, shown = _check(tmp_path, {**base, "scoring_func": value})
    assert status == "unknown", shown  # fails before: ok
    assert "scoring_func" in shown


@pytest.mark.parametrize("value", ["softmax", "sigmoid", "sqrtsoftplus"])
@pytest.mark.parametrize("release", ["0.5.20", "0.5.23"])
def test_the_values_sglang_takes_stay_as_before(value: str, release: str, tmp_path: Path) -> None:
    status, shown = _check(tmp_path, {**DEEPSEEK_R1, "scoring_func": value}, release)
    assert status != "unknown" or "scoring_func" not in shown, shown


def test_an_escape_in_the_value_is_not_printed_raw(tmp_path: Path) -> None:
    status, shown = _check(tmp_path, {**DEEPSEEK_R1, "scoring_func": "\x1b[2Jsigmoid"})
    assert status == "unknown"
    assert "\x1b" not in json.loads(shown)["message"]
