"""One model, one quantization: `stackcheck recommend` and the gate's preflight read a checkpoint's quantization the
way SGLang's ModelConfig does (_parse_quant_hf_config, _parse_modelopt_quant_config, _verify_quantization), so
that recommend never suggests a line for a model the gate reads differently.

What SGLang does, read in the 0.5.1-0.5.23 wheels (manifests/preflight.json model.modelopt_algos,
model.modelopt_quant_method): the quantization is config.json's top-level quantization_config (hf_config, never
hf_text_config), else its compression_config (compressed-tensors), else hf_quant_config.json (ModelOpt,
mapped by quant_algo); a quantization_config with quant_method "modelopt" is mapped by its quant_algo from 0.5.10
and kept as "modelopt" by 0.5.9 (which loads it as ModelOptFp8Config)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import main
from stackcheck.knowledge.loader import load
from stackcheck.launch.preflight.model import read_model
from stackcheck.readers.fsview import HostView

CASES = Path(__file__).resolve().parent.parent / "recommend"
RELEASE_FACTS = {"0.5.23": CASES / "seed-after" / "facts.json", "0.5.9": CASES / "seed-before" / "facts.json"}

# (files of the model directory, SGLang release, the quant_method SGLang serves it with; None: not quantized)
MODELS: dict[str, tuple[dict[str, Any], str, str | None]] = {
    # a multimodal config whose quantization sits in text_config only: SGLang reads hf_config's, so none
    "text-config-only": (
        {
            "config.json": {
                "architectures": ["Llama4ForConditionalGeneration"],
                "model_type": "llama4",
                "text_config": {"model_type": "llama4_text", "quantization_config": {"quant_method": "fp8"}},
            }
        },
        "0.5.23",
        None,
    ),
    # the same model with its quantization at the top level, where SGLang reads it
    "top-level-multimodal": (
        {
            "config.json": {
                "architectures": ["Llama4ForConditionalGeneration"],
                "model_type": "llama4",
                "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]},
                "text_config": {"model_type": "llama4_text"},
            }
        },
        "0.5.23",
        "fp8",
    ),
    "compressed-tensors": (
        {
            "config.json": {
                "architectures": ["LlamaForCausalLM"],
                "compression_config": {"format": "float-quantized", "config_groups": {}},
            }
        },
        "0.5.23",
        "compressed-tensors",
    ),
    "hf-quant-config-nvfp4": (
        {
            "config.json": {"architectures": ["LlamaForCausalLM"]},
            "hf_quant_config.json": {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4"}},
        },
        "0.5.23",
        "modelopt_fp4",
    ),
    "hf-quant-config-fp8-0.5.9": (
        {
            "config.json": {"architectures": ["LlamaForCausalLM"]},
            "hf_quant_config.json": {"quantization": {"quant_algo": "FP8"}},
        },
        "0.5.9",
        "modelopt_fp8",
    ),
    "modelopt-nvfp4": (
        {
            "config.json": {
                "architectures": ["LlamaForCausalLM"],
                "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16},
            }
        },
        "0.5.23",
        "modelopt_fp4",
    ),
    "modelopt-fp8": (
        {
            "config.json": {
                "architectures": ["LlamaForCausalLM"],
                "quantization_config": {"quant_method": "modelopt", "quant_algo": "FP8"},
            }
        },
        "0.5.23",
        "modelopt_fp8",
    ),
    # 0.5.18 on: MXFP8 is its own method, no longer FP8 by substring
    "modelopt-mxfp8": (
        {
            "config.json": {
                "architectures": ["LlamaForCausalLM"],
                "quantization_config": {"quant_method": "modelopt", "quant_algo": "MXFP8"},
            }
        },
        "0.5.23",
        "mxfp8",
    ),
    # 0.5.9 keeps quant_method modelopt as written (ModelOptFp8Config; --quantization modelopt_fp4 is needed)
    "modelopt-nvfp4-0.5.9": (
        {
            "config.json": {
                "architectures": ["LlamaForCausalLM"],
                "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"},
            }
        },
        "0.5.9",
        "modelopt",
    ),
    "no-quantization": ({"config.json": {"architectures": ["LlamaForCausalLM"]}}, "0.5.23", None),
}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SGLANG_ENABLE_PCIE_IPC_ALLREDUCE", "SGLANG_ENABLE_JIT_DEEPGEMM", "NCCL_P2P_DISABLE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("STACKCHECK_MANIFESTS", raising=False)


def _model(tmp_path: Path, name: str) -> Path:
    d = tmp_path / name
    d.mkdir(parents=True)
    for filename, body in MODELS[name][0].items():
        (d / filename).write_text(json.dumps(body))
    return d


def _recommended_quantization(directory: Path, release: str) -> Any:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["recommend", "--format", "json", "--no-plan", "--facts", str(RELEASE_FACTS[release]),
              "--model-path", str(directory)])  # fmt: skip
    return json.loads(out.getvalue())["launch"].get("quantization")


def _gate_quant_method(directory: Path, release: str, tmp_path: Path) -> str | None:
    data = load([]).preflight
    info = read_model(HostView(), str(directory), "model", {}, {}, data, str(tmp_path), str(tmp_path), True, release)
    return info.quant_method


@pytest.mark.parametrize("name", sorted(MODELS))
def test_recommend_and_the_gate_read_one_quantization_as_sglang_does(name: str, tmp_path: Path) -> None:
    _, release, sglang = MODELS[name]
    directory = _model(tmp_path, name)
    gate = _gate_quant_method(directory, release, tmp_path)
    recommended = _recommended_quantization(directory, release)
    assert gate == sglang, name
    assert recommended == RECOMMENDED.get(name, sglang or "none"), name


# where recommend's launch differs from the checkpoint's own reading: a quantization_config in text_config only is
# not 'none' (SGLang ignores it unless --quantization names the method: the format is not known, an assumption
# says so); a modelopt NVFP4 checkpoint on 0.5.9 gets --quantization modelopt_fp4 in the line, which serves it so
RECOMMENDED: dict[str, str | None] = {"text-config-only": None, "modelopt-nvfp4-0.5.9": "modelopt_fp4"}


def test_modelopt_quant_method_with_no_release_known_is_mapped(tmp_path: Path) -> None:
    """No SGLang release known: the newest reading, under which an NVFP4 checkpoint needs the nvfp4 feature."""
    directory = _model(tmp_path, "modelopt-nvfp4")
    info = read_model(HostView(), str(directory), "model", {}, {}, load([]).preflight, str(tmp_path), str(tmp_path))
    assert info.quant_method == "modelopt_fp4"
    assert [r.feature for r in info.requirements] == ["nvfp4"]
    assert "release not known" in str(info.quant_why)


def test_an_unmapped_quantization_is_unknown_to_recommend_not_none(tmp_path: Path) -> None:
    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"quantization_config": {"quant_algo": "INT3_SOMETHING"}}))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["recommend", "--format", "json", "--no-plan", "--facts", str(RELEASE_FACTS["0.5.23"]),
              "--model-path", str(d)])  # fmt: skip
    doc = json.loads(out.getvalue())
    assert "quantization" not in doc["launch"]
    assert any("quantization not known" in a and "--assume-quantization" in a for a in doc["assumptions"])


def test_an_unreadable_hf_quant_config_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    (d / "hf_quant_config.json").write_text("{not json")
    rc = main(["recommend", "--facts", str(RELEASE_FACTS["0.5.23"]), "--model-path", str(d)])
    err = capsys.readouterr().err
    # (the file's name is shown masked, as a Hugging Face token's shape: redact.py's reading, left as it is)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "line 1 column 2: not valid JSON" in err


def _gate_results(name: str, tmp_path: Path, options: dict[str, Any], architecture: str | None = None) -> list[Any]:
    directory = _model(tmp_path, name)
    if architecture is not None:
        config = json.loads((directory / "config.json").read_text())
        (directory / "config.json").write_text(json.dumps({**config, "architectures": [architecture]}))
    data = load([]).preflight
    info = read_model(HostView(), str(directory), "model", {}, options, data, str(tmp_path), str(tmp_path), True,
                      MODELS[name][1])  # fmt: skip
    return [r for r in info.results if r.status == "fail"]


def test_a_kept_modelopt_nvfp4_checkpoint_fails_without_quantization(tmp_path: Path) -> None:
    """SGLang 0.5.9 keeps quant_method modelopt and loads it as ModelOptFp8Config, which raises for NVFP4: the
    gate refuses it unless --quantization names the format or the release maps the architecture itself."""
    (fail,) = _gate_results("modelopt-nvfp4-0.5.9", tmp_path / "a", {})
    assert "SGLang 0.5.9 keeps modelopt" in fail.message and "--quantization modelopt_fp4" in fail.message
    assert not _gate_results("modelopt-nvfp4-0.5.9", tmp_path / "b", {"--quantization": "modelopt_fp4"})
    assert not _gate_results("modelopt-nvfp4-0.5.9", tmp_path / "c", {}, "NemotronHForCausalLM")
    assert not _gate_results("modelopt-nvfp4", tmp_path / "d", {})  # 0.5.23 maps it
    assert not _gate_results("hf-quant-config-fp8-0.5.9", tmp_path / "e", {})


def test_text_config_quantization_is_said(tmp_path: Path) -> None:
    directory = _model(tmp_path, "text-config-only")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["recommend", "--format", "json", "--no-plan", "--facts", str(RELEASE_FACTS["0.5.23"]),
              "--model-path", str(directory)])  # fmt: skip
    said = [a for a in json.loads(out.getvalue())["assumptions"] if "quantization not known" in a]
    assert said and "text_config only (quant_method fp8)" in said[0]


def _recommend(*args: str) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["recommend", "--format", "json", "--no-plan", "--facts", str(RELEASE_FACTS["0.5.9"]), *args])
    return rc, json.loads(out.getvalue())


def test_recommend_names_the_quantization_a_kept_modelopt_checkpoint_needs(tmp_path: Path) -> None:
    """On 0.5.9 a quant_method modelopt NVFP4 checkpoint needs --quantization modelopt_fp4 (what the gate asks for),
    and the gate's model check passes a line with it. On this box (RTX PRO 6000, SM120) the NVFP4 path of 0.5.9 is
    not known to run (feature nvfp4 unknown), so since recommend judges its line as the gate does (irec) it proposes
    none and names nvfp4; the quantization the checkpoint needs is still the launch's, and a given launch's diff
    still adds it."""
    directory = _model(tmp_path, "modelopt-nvfp4-0.5.9")
    rc, doc = _recommend("--model-path", str(directory))
    assert rc == 1 and doc["command"] == []
    refused = [(r["subject"], r["status"]) for r in doc["refused"]]
    assert refused[0] == ("nvfp4", "unknown")
    # (irecmodel: and, as the gate refuses them, the stack checks the line needs that are unknown on this box)
    assert all(s.startswith("check ") and st == "unknown" for s, st in refused[1:]), refused
    assert "--quantization modelopt_fp4" in doc["refused"][0]["message"]
    assert doc["launch"]["quantization"] == "modelopt_fp4"
    options = {"--quantization": "modelopt_fp4"}
    assert not _gate_results("modelopt-nvfp4-0.5.9", tmp_path / "gate", options)
    # a given launch without it: the diff adds it (exit 1); with it, nothing is added
    launch = ["--", "python", "-m", "sglang.launch_server", "--model-path", str(directory)]
    rc, doc = _recommend(*launch)
    added = [c for c in doc["diff"] if c["name"] == "--quantization"]
    assert rc == 1 and added and added[0]["value"] == "modelopt_fp4" and added[0]["action"] == "add"
    _, doc = _recommend(*launch, "--quantization", "modelopt_fp4")
    assert not [c for c in doc["diff"] if c["name"] == "--quantization"]
    assert doc["launch"]["quantization"] == "modelopt_fp4"
