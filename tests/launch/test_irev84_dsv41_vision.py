"""irev84 (review of ifc68): SGLang 0.5.22+ serve a DeepSeek V4.1 checkpoint with vision encoder layers as
multimodal (configs/model_config.py has_dsv41_vision: model_type deepseek_v41 and vision_n_layers > 0, the
vision_config's num_hidden_layers standing in for it: configs/deepseek_v41.py normalize_deepseek_v41_config), but
launch.model_multimodal was false for it (no architecture on the lists, no text sub-config stated), so the crash
rule cudnn-cu13-920-tensor-ir of check cudnn-libs, scoped to multimodal launches, was not applied: such a launch was
allowed on a box where the vision encoder's convolutions fail. The configs are this test's own minimal files in the
shape of config.json; the boxes are tests/cases/h200-newest with the SGLang release and cuDNN facts laid over."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
TEXT = {"hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 128,
        "intermediate_size": 8192, "num_hidden_layers": 4, "vocab_size": 1024}  # fmt: skip
V41 = {"architectures": ["DeepseekV41ForCausalLM"], "model_type": "deepseek_v41", **TEXT}
MODELS: dict[str, dict[str, Any]] = {
    "flat": {**V41, "vision_n_layers": 24},
    "nested": {**V41, "vision_config": {"num_hidden_layers": 24, "hidden_size": 1024}},
    "text-type": {**V41, "model_type": "deepseek_v41_text", "vision_n_layers": 2},
    "no-vision": {**V41, "vision_n_layers": 0, "vision_config": {"num_hidden_layers": 24}},  # (the config's own wins)
    "plain": dict(V41),
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("irev84-dsv41")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    doc = json.loads((CASES / "h200-newest" / "facts.json").read_text(encoding="utf-8"))
    facts = doc.get("facts", doc)
    for version in ("0.5.20", "0.5.23"):
        facts["packages"]["sglang"]["version"] = version
        (root / f"box-{version}.json").write_text(json.dumps(doc), encoding="utf-8")
    facts["packages"]["sglang"]["version"] = "0.5.23"
    facts["packages"]["nvidia-cudnn-cu13"] = {"installed": True, "version": "9.20.0.48", "dist_version": "9.20.0.48"}
    facts.setdefault("cuda_libs", {})["libcudnn_engines_tensor_ir.so.9"] = (
        "/usr/lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9"
    )
    (root / "box-cudnn920.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def _gate(root: Path, box: str, model: str, *flags: str) -> dict[str, Any]:
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(root / model), *flags]
    return stackcheck_json("gate", "--facts", str(root / box), "--dry-run", "--format", "json", "--", *line)


def _multimodal(doc: dict[str, Any]) -> Any:
    return doc["derived"]["launch"].get("model_multimodal")


@pytest.mark.parametrize("model", ["flat", "nested", "text-type"])
def test_a_v41_checkpoint_with_vision_layers_is_multimodal_from_0_5_22(root: Path, model: str) -> None:
    assert _multimodal(_gate(root, "box-0.5.23.json", model)) is True  # each failed before the fix


@pytest.mark.parametrize(("box", "model"), [("box-0.5.23.json", "no-vision"), ("box-0.5.23.json", "plain"),
                                            ("box-0.5.20.json", "flat")])  # fmt: skip
def test_text_only_where_sglang_serves_it_so(root: Path, box: str, model: str) -> None:
    assert _multimodal(_gate(root, box, model)) is False


def test_the_vision_launch_is_refused_on_the_mixed_cudnn_box(root: Path) -> None:
    doc = _gate(root, "box-cudnn920.json", "nested", "--tp", "1")  # failed before the fix: cudnn-libs not required
    reasons = [(str(r.get("feature")), str(r.get("status"))) for r in doc.get("reasons") or []]
    assert doc["decision"] == "refuse" and ("cudnn-libs", "blocked") in reasons, reasons
