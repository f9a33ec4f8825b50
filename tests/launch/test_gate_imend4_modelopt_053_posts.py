"""imend4: SGLang 0.5.3.post1-0.5.3.post3 and --quantization modelopt. Their server_args.py QUANTIZATION_CHOICES
still offer 'modelopt' (post1 :78), but layers/quantization/__init__.py registers the ModelOpt FP8 config as
'modelopt_fp8' alone (:75; 0.5.3 registers 'modelopt', 0.5.4 both), and ModelConfig._verify_quantization raises
ValueError for a 'modelopt' no registry key names (model_config.py :596-614 in post1). The quant-loader-sm89 rule
passed such a launch on an 8.9+ GPU: now refusal modelopt-unregistered-053-posts blocks it (read in the wheels)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, ROOT, gate_tp8, model_dir, release_box, rule_status

RULE = "modelopt-unregistered-053-posts"
MAPPING: dict[str, Any] = json.loads((ROOT / "manifests" / "launch.json").read_text())


def _refusal(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == f"refusal {RULE}"), None)


@pytest.mark.parametrize("release", ["0.5.3.post1", "0.5.3.post2", "0.5.3.post3"])
@pytest.mark.parametrize("cc", ["8.9", "9.0", "10.0"])
def test_modelopt_flag_refused_on_the_post_releases(tmp_path: Path, release: str, cc: str) -> None:
    doc = gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "m", LLAMA3), "--quantization", "modelopt")
    got = _refusal(doc)
    assert doc["decision"] == "refuse" and got is not None, doc.get("reasons")
    assert got["status"] == "blocked" and got["effect"] == "crash"
    assert "0.5.3.post1" in json.dumps(got["reasons"][0].get("source")), got


@pytest.mark.parametrize("release", ["0.5.3", "0.5.4", "0.5.9"])
def test_releases_that_register_modelopt_are_not_judged_by_it(release: str) -> None:
    assert rule_status(MAPPING, RULE, release, {9}, "LlamaForCausalLM", {}, "--quantization", "modelopt") == "ok"


@pytest.mark.parametrize("flags", [(), ("--quantization", "modelopt_fp4"), ("--quantization", "fp8")])
def test_other_quantizations_pass_it(flags: tuple[str, ...]) -> None:
    assert rule_status(MAPPING, RULE, "0.5.3.post2", {9}, "LlamaForCausalLM", {}, *flags) == "ok"


def test_an_hf_quant_config_checkpoint_without_the_flag_is_not_refused_by_it(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "m", LLAMA3)
    (model / "hf_quant_config.json").write_text(json.dumps({"quantization": {"quant_algo": "FP8"}}))
    doc = gate_tp8(release_box(tmp_path, "0.5.3.post1", "9.0"), model)
    assert _refusal(doc) is None, doc.get("reasons")
