"""igap55: MiMo-V2 and ZAYA1 beside transformers 5 (refusal rope-theta-file-default, igap53's rule widened).
mimo_v2_flash.py / mimo_v2.py (0.5.10-0.5.23) read getattr(config, "rope_theta", 10000), zaya.py (0.5.14-0.5.23)
getattr(config, "rope_theta", 1000000.0), neither rope_parameters. Their config classes (transformers 5.13+'s
MiMoV2FlashConfig / ZayaConfig, SGLang's own ZayaConfig) keep a top-level rope_theta as an attribute, so only a base
config.json states inside rope_parameters alone is lost: the gate allowed such a launch."""

from __future__ import annotations

import json
import re
from itertools import takewhile
from pathlib import Path
from typing import Any

import pytest
from gate_cli import cli_json, model_dir, release_box

RULE = "refusal rope-theta-file-default"
MIMO: dict[str, Any] = {
    "architectures": ["MiMoV2FlashForCausalLM"], "model_type": "mimo_v2_flash", "hidden_size": 4096,
    "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 192, "num_hidden_layers": 48,
}  # fmt: skip
ZAYA: dict[str, Any] = {
    "architectures": ["ZayaForCausalLM"], "model_type": "zaya", "hidden_size": 2048,
    "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128, "num_hidden_layers": 80,
}  # fmt: skip
NESTED_MIMO = {
    "full_attention": {"rope_type": "default", "rope_theta": 5000000.0},
    "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
}


def _gate(tmp_path: Path, release: str, config: dict[str, Any]) -> dict[str, Any]:
    model = model_dir(tmp_path, "m", config)
    facts = release_box(tmp_path, release, "9.0")
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model)]
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]


def _refusal(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize(
    ("release", "config", "served"),
    [
        ("0.5.23", {**ZAYA, "rope_parameters": {"rope_type": "default", "rope_theta": 5000000.0}}, "1e+06 served"),
        ("0.5.14", {**ZAYA, "rope_parameters": {"hybrid": {"rope_theta": 5000000.0}}}, "1e+06 served"),
    ],
)
def test_a_base_only_in_rope_parameters_is_refused(
    tmp_path: Path, release: str, config: dict[str, Any], served: str
) -> None:
    # fails on the parent: allowed (the rule read EXAONE alone)
    doc = _gate(tmp_path, release, config)
    reason = _refusal(doc)
    assert doc["decision"] == "refuse" and reason is not None and reason["status"] == "blocked", json.dumps(reason)
    assert served in json.dumps(reason)


# (SGLang's ZayaConfig and transformers' keep it)
@pytest.mark.parametrize("config", [{**ZAYA, "rope_theta": 5000000.0}])
def test_a_top_level_base_or_the_served_one_is_not_refused(tmp_path: Path, config: dict[str, Any]) -> None:
    assert _refusal(_gate(tmp_path, "0.5.23", config)) is None


@pytest.mark.parametrize("config", [dict(MIMO), dict(ZAYA), {**ZAYA, "rope_parameters": {"rope_theta": "high"}}])
def test_no_base_stated_is_unknown(tmp_path: Path, config: dict[str, Any]) -> None:
    doc = _gate(tmp_path, "0.5.23", config)
    reason = _refusal(doc)
    assert reason is not None and reason["status"] == "unknown" and doc["decision"] != "allow", json.dumps(reason)


# the reads the rule rests on, in the real wheels (registry): (release, file, the model file's own read)
FILE_READS = [
    ("0.5.10", "sglang/srt/models/mimo_v2_flash.py", 'rope_theta = getattr(config, "rope_theta", 10000)'),
    ("0.5.14", "sglang/srt/models/zaya.py", 'float(getattr(config, "rope_theta", 1_000_000.0))'),
    ("0.5.23", "sglang/srt/models/mimo_v2.py", 'rope_theta = getattr(config, "rope_theta", 10000)'),
    ("0.5.23", "sglang/srt/models/mimo_v2.py", 'getattr(config, "swa_rope_theta", rope_theta)'),
    ("0.5.23", "sglang/srt/models/zaya.py", 'float(getattr(config, "rope_theta", 1_000_000.0))'),
    ("0.5.23", "sglang/srt/configs/zaya.py", "self.rope_theta = rope_theta"),
]


@pytest.mark.registry
@pytest.mark.parametrize(("release", "name", "text"), FILE_READS)
def test_the_model_files_read_rope_theta_alone(release: str, name: str, text: str) -> None:
    import zipfile

    from registry_wheels import fetch_wheel

    with zipfile.ZipFile(fetch_wheel("sglang", release)) as z:
        code = z.read(name).decode()
    assert text in code, (release, name)
    if name.startswith("sglang/srt/models/"):  # (no read of rope_parameters: a comment may name it)
        assert not re.search(r"""(getattr\(config, ["']rope_parameters|config\.rope_parameters)""", code), name


@pytest.mark.registry
@pytest.mark.parametrize("version", ["5.13.0", "5.19.0"])
def test_transformers_config_classes_keep_the_kwargs(version: str) -> None:
    import zipfile

    from registry_wheels import fetch_wheel

    with zipfile.ZipFile(fetch_wheel("transformers", version)) as z:
        for model in ("mimo_v2_flash", "zaya"):
            code = z.read(f"transformers/models/{model}/configuration_{model}.py").decode()
            after = code.split("def convert_rope_params_to_dict(self, **kwargs):\n", 1)[1].splitlines()
            body = "\n".join(line for line in takewhile(lambda x: not x.strip() or x.startswith(" " * 8), after))
            assert body.rstrip().endswith("return kwargs") and "pop(" not in body, (version, model)


@pytest.mark.parametrize(
    "config",
    [
        {**ZAYA, "rope_parameters": {"rope_theta": -(10**400)}},
        {**ZAYA, "rope_parameters": {"hybrid": {"rope_theta": 10**400}}},
    ],
)
def test_a_base_past_a_float_is_judged_not_a_crash(tmp_path: Path, config: dict[str, Any]) -> None:
    # the merge of igap55 with irev73: the MiMo / ZAYA reading formatted and float()-ed such a base (OverflowError,
    # the gate's exit 4, as irev73 found for EXAONE)
    doc = _gate(tmp_path, "0.5.23", config)
    reason = _refusal(doc)
    assert reason is not None and reason["status"] == "blocked" and doc["decision"] == "refuse", json.dumps(reason)
    assert "digits" in json.dumps(reason)


@pytest.mark.parametrize(
    "config",
    [
        {**MIMO, "rope_parameters": NESTED_MIMO},
        {**MIMO, "rope_theta": 5000000.0, "swa_rope_theta": 10000.0, "rope_parameters": NESTED_MIMO},
        {**MIMO, "rope_parameters": {k: {"rope_theta": 10000.0} for k in NESTED_MIMO}},
        {**MIMO, "rope_parameters": {"full_attention": {"rope_theta": 10**400}}},
    ],
)
def test_mimo_v2_is_unknown_since_the_merge_with_ifc56(tmp_path: Path, config: dict[str, Any]) -> None:
    # igap55 read MiMo-V2's top-level base as kept (allowed) and one only in rope_parameters as lost (refused); ifc56
    # read that 5.19.0's class also fills rope_parameters, which mimo_v2.py hands get_rope: every MiMo-V2 launch is
    # unknown (tests/launch/test_gate_ifc56_mimo_v2_rope.py), never allowed
    doc = _gate(tmp_path, "0.5.23", config)
    reason = _refusal(doc)
    assert reason is not None and reason["status"] == "unknown" and doc["decision"] != "allow", json.dumps(reason)
