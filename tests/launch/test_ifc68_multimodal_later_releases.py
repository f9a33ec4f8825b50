"""ifc68 (beside the sixty-eighth sample's row g13, Llama 4 Scout on SGLang 0.5.22): launch.model_multimodal came
from SGLang 0.5.9's rule for every release. Read in the 0.5.12-0.5.23 wheels (configs/model_config.py), later
releases serve more models as multimodal: 29 more architectures in multimodal_model_archs (Gemma 4, Whisper, Voxtral,
Qwen3-ASR, ...), Gemma 3 / Llama 4 / Step3-VL multimodal without --enable-multimodal where --model-impl is
transformers, and any model whose config has a text sub-config (has_multimodal_subconfig: hf_config is not
hf_text_config). model_multimodal scopes the crash rule cudnn-cu13-920-tensor-ir of check cudnn-libs (vision
encoders' convolutions with nvidia-cudnn-cu13 9.20.0.48 and another cuDNN's tensor_ir engine on the loader's path):
such launches were allowed on a box where the rule fails. The configs are this test's own minimal files in the
shape of config.json; the boxes are tests/cases/h200-newest with the cuDNN facts laid over."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
TEXT = {"hidden_size": 2048, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
        "intermediate_size": 8192, "num_hidden_layers": 4, "vocab_size": 1024}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "gemma4": {
        "architectures": ["Gemma4ForConditionalGeneration"],
        "model_type": "gemma4",
        "text_config": TEXT,
        "vision_config": {"hidden_size": 768},
    },
    "whisper": {"architectures": ["WhisperForConditionalGeneration"], "model_type": "whisper", **TEXT},
    "llama4": {
        "architectures": ["Llama4ForConditionalGeneration"],
        "model_type": "llama4",
        "text_config": TEXT,
        "vision_config": {"hidden_size": 1408},
    },
    # an architecture on no list, with a text sub-config (SGLang's has_multimodal_subconfig)
    "subconfig": {"architectures": ["FooVLForConditionalGeneration"], "model_type": "foo_vl", "text_config": TEXT},
    "llama3": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", **TEXT},
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ifc68-mm")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    doc = json.loads((CASES / "h200-newest" / "facts.json").read_text(encoding="utf-8"))
    facts = doc.get("facts", doc)
    for version in ("0.5.9", "0.5.23"):
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


@pytest.mark.parametrize(
    ("model", "flags"),
    [
        ("gemma4", ()),  # fails before the fix: not on 0.5.9's list
        ("whisper", ()),  # fails before the fix
        ("llama4", ("--model-impl", "transformers")),  # fails before the fix: the text-only list kept
        ("subconfig", ()),  # fails before the fix: a text sub-config
        ("llama4", ("--enable-multimodal",)),
    ],
)
def test_later_releases_serve_these_as_multimodal(root: Path, model: str, flags: tuple[str, ...]) -> None:
    assert _multimodal(_gate(root, "box-0.5.23.json", model, *flags)) is True


@pytest.mark.parametrize(
    ("box", "model", "flags"),
    [
        ("box-0.5.23.json", "llama4", ()),
        ("box-0.5.23.json", "llama3", ()),
        ("box-0.5.9.json", "llama4", ("--model-impl", "transformers")),  # 0.5.9 keeps the text-only list
        ("box-0.5.9.json", "subconfig", ()),  # 0.5.9 has no sub-config rule
    ],
)
def test_text_only_as_sglang_serves_them(root: Path, box: str, model: str, flags: tuple[str, ...]) -> None:
    assert _multimodal(_gate(root, box, model, *flags)) is False


def _refusals(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(str(r.get("feature")), str(r.get("status"))) for r in doc.get("reasons") or []]


@pytest.mark.parametrize(
    ("model", "flags"),
    [("whisper", ()), ("llama4", ("--model-impl", "transformers")), ("subconfig", ()), ("gemma4", ())],
)
def test_a_later_multimodal_launch_is_refused_on_the_mixed_cudnn_box(
    root: Path, model: str, flags: tuple[str, ...]
) -> None:
    # fails before the fix: cudnn-libs not required (whisper, llama4 --model-impl transformers and subconfig were
    # allowed; gemma4 was refused only for another reason, an unknown attention backend)
    doc = _gate(root, "box-cudnn920.json", model, "--tp", "1", *flags)
    assert doc["decision"] == "refuse" and ("cudnn-libs", "blocked") in _refusals(doc), _refusals(doc)


def test_a_text_model_is_allowed_on_the_mixed_cudnn_box(root: Path) -> None:
    assert _gate(root, "box-cudnn920.json", "llama3", "--tp", "1")["decision"] == "allow"
