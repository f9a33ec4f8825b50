"""ifc65 (the sixty-fifth fact-check sample, rows b1 and b3): a BF16 DeepSeek-V3-shaped config.json without
topk_method / scoring_func / moe_layer_freq (and a DeepSeek-V2-shaped one without scoring_func / moe_layer_freq) was
allowed on SM100. SGLang 0.5.20-0.5.23's sglang/srt/models/deepseek_v2.py reads config.topk_method (MoEGate),
config.scoring_func (DeepseekV2MoE's TopK) and config.moe_layer_freq (the layer's sparse test) as attributes with no
default, and transformers 5.12.1 / 5.19.0's DeepseekV3Config declares none of the three (DeepseekV2Config only
topk_method): AttributeError as the model is built (run on the classes of transformers 5.19.0). Published checkpoints
state them, so a config that does not is unknown now (preflight check model-config-keys, preflight.json
model.registry.config_keys); --json-model-override-args stating them, or a remote config class (auto_map), is not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V2_LITE, gate_checkpoint

from stackcheck.knowledge.loader import load
from stackcheck.launch.preflight.model import config_keys_result

KEYS = ("topk_method", "scoring_func", "moe_layer_freq")
BARE_V3 = {k: v for k, v in DEEPSEEK_R1.items() if k not in KEYS}
BARE_V2 = {k: v for k, v in DEEPSEEK_V2_LITE.items() if k not in KEYS}


@pytest.fixture(scope="module")
def mdata() -> Any:
    return load([], env={}).preflight["model"]


def _status(config: dict[str, Any], mdata: Any, release: str = "0.5.23", options: Any = None) -> str | None:
    archs = [str(a) for a in config.get("architectures") or []]
    got = config_keys_result(config, archs, options or {}, release, mdata, "model m")
    return None if got is None else got.status


@pytest.mark.parametrize("release", ["0.5.20", "0.5.21", "0.5.22", "0.5.23"])
def test_a_config_without_the_router_keys_is_unknown(release: str, mdata: Any) -> None:
    assert _status(BARE_V3, mdata, release) == "unknown"  # fails before: no such check (allowed)
    assert _status(BARE_V2, mdata, release) == "unknown"
    got = config_keys_result(BARE_V3, ["DeepseekV3ForCausalLM"], {}, release, mdata, "model m")
    assert got is not None and list(got.observed["unstated"]) == list(KEYS)


def test_one_key_missing_is_enough(mdata: Any) -> None:
    assert _status({**DEEPSEEK_R1, "moe_layer_freq": None}, mdata) == "unknown"  # (ifc66: null is no usable value)
    without = {k: v for k, v in DEEPSEEK_R1.items() if k != "scoring_func"}
    assert _status(without, mdata) == "unknown"
    # DeepseekV2Config defaults topk_method ('greedy'): a V2 config need not state it
    assert _status({k: v for k, v in DEEPSEEK_V2_LITE.items() if k != "topk_method"}, mdata) is None


def test_the_published_shape_and_the_ways_around_are_not_judged(mdata: Any) -> None:
    assert _status(DEEPSEEK_R1, mdata) is None
    assert _status(DEEPSEEK_V2_LITE, mdata) is None
    override = json.dumps({"topk_method": "noaux_tc", "scoring_func": "sigmoid", "moe_layer_freq": 1})
    assert _status(BARE_V3, mdata, options={"--json-model-override-args": override}) is None
    assert _status({**BARE_V3, "auto_map": {"AutoConfig": "configuration_deepseek.DeepseekV3Config"}}, mdata) is None
    assert _status(BARE_V3, mdata, "0.5.19") is None  # (not read before 0.5.20)
    assert _status({**BARE_V3, "architectures": ["LlamaForCausalLM"]}, mdata) is None


def test_the_gate_does_not_allow_it(tmp_path: Path) -> None:
    doc = gate_checkpoint(tmp_path, "0.5.23", "9.0", BARE_V3, "--moe-runner-backend", "triton")
    checks = {c.get("check"): c.get("status") for c in doc["preflight"]["checks"]}
    assert checks.get("model-config-keys") == "unknown", checks
    assert doc["decision"] != "allow"  # fails before: allow
    (tmp_path / "r1").mkdir()
    doc = gate_checkpoint(tmp_path / "r1", "0.5.23", "9.0", DEEPSEEK_R1, "--moe-runner-backend", "triton")
    assert "model-config-keys" not in {c.get("check") for c in doc["preflight"]["checks"]}
