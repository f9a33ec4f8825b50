"""--quantization methods not yet judged on a checkpoint with no quantization (a BF16 one), each followed in the real
sglang wheels 0.5.5-0.5.23 (preflight.json model.flag_checkpoint_conflicts; the registry half is
tests/launch/test_gate_igap6_bf16_quant_registry.py):

- quark: the loader builds QuarkConfig with no arguments (its config names no file); 0.5.6-0.5.12 need the
  checkpoint's quant_config (TypeError), 0.5.13-0.5.23 raise ValueError 'Either quant_config or online_scheme must be
  provided'. quark_mxfp4 (0.5.13 on) takes the online MXFP4 scheme instead and loads.
- modelslim: quant_model_description.json not found, 'Cannot find the config file for modelslim' (0.5.8-0.5.23);
  0.5.7 registers it on Ascend NPUs only ('Unknown quantization method: modelslim').
- qoq: quant_config.json / quantize_config.json not found (0.5.5-0.5.15).
- loads (guards): w8a8_fp8 (quantizes online; cc 8.9 and up), bitsandbytes (online, no adapter), quark_mxfp4; and a
  block-FP8 draft beside a BF16 target under --quantization fp8, which the draft takes too (its own fp8 config).

The model configs are written for the tests in the shape of published Llama 3 8B ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box


def _gate(tmp_path: Path, release: str, cc: str, *flags: str) -> dict[str, Any]:
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3)),
            "--tp", "1", *flags]  # fmt: skip
    return cli_json(["gate", "--facts", str(release_box(tmp_path, release, cc)), "--dry-run", "--format", "json",
                     "--", *line])[1]  # fmt: skip


def _conflicts(doc: dict[str, Any]) -> list[str]:
    """The flag-checkpoint conflict messages among the gate's reasons (the preflight's model check)."""
    text = json.dumps(doc.get("reasons") or [])
    return [m for m in ("Cannot find the config file", "Either quant_config", "TypeError", "Unknown quantization")
            if m in text]  # fmt: skip


@pytest.mark.parametrize(
    ("release", "cc", "flag", "needle"),
    [
        ("0.5.12", "9.0", "quark", "TypeError (QuarkConfig.__init__() missing 'quant_config')"),
        ("0.5.13", "9.0", "quark", "Either quant_config or online_scheme must be provided"),
        ("0.5.23", "10.0", "quark", "Either quant_config or online_scheme must be provided"),
        ("0.5.8", "9.0", "modelslim", "Cannot find the config file for modelslim"),
        ("0.5.23", "9.0", "modelslim", "Cannot find the config file for modelslim"),
        ("0.5.15", "9.0", "qoq", "Cannot find the config file for qoq"),
        ("0.5.10", "8.0", "qoq", "Cannot find the config file for qoq"),
    ],
)
def test_a_method_needing_its_checkpoint_is_refused_on_a_bf16_one(
    tmp_path: Path, release: str, cc: str, flag: str, needle: str
) -> None:
    doc = _gate(tmp_path, release, cc, "--quantization", flag)
    assert doc["decision"] == "refuse"
    assert needle in json.dumps(doc.get("reasons")), doc.get("reasons")


def test_modelslim_on_cuda_before_it_is_registered_everywhere(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.7", "9.0", "--quantization", "modelslim")
    assert doc["decision"] == "refuse"
    assert "Unknown quantization method: modelslim" in json.dumps(doc.get("reasons"))


@pytest.mark.parametrize(
    ("release", "flag"),
    [("0.5.23", "quark_mxfp4"), ("0.5.13", "quark_mxfp4"), ("0.5.23", "w8a8_fp8"), ("0.5.23", "bitsandbytes"),
     ("0.5.5", "quark"), ("0.5.16", "qoq"), ("0.5.5", "modelslim")],
)  # fmt: skip
def test_guard_online_methods_and_releases_outside_the_rows_are_not_conflicts(
    tmp_path: Path, release: str, flag: str
) -> None:
    """quark_mxfp4, w8a8_fp8 and bitsandbytes quantize online; quark on 0.5.5 is Mxfp4Config on CUDA (not judged
    here); 0.5.16 has no qoq and 0.5.5 no modelslim (their choices are another rule's)."""
    assert _conflicts(_gate(tmp_path, release, "9.0", "--quantization", flag)) == []


def test_guard_w8a8_fp8_runs_only_from_cc_8_9(tmp_path: Path) -> None:
    """Loads on a BF16 checkpoint, but its kernels need cc 8.9 (W8A8Fp8Config.get_min_capability 89)."""
    assert _gate(tmp_path, "0.5.23", "9.0", "--quantization", "w8a8_fp8")["decision"] == "allow"
    doc = _gate(tmp_path, "0.5.23", "8.0", "--quantization", "w8a8_fp8")
    assert doc["decision"] == "refuse" and _conflicts(doc) == []


BLOCK_FP8_DRAFT: dict[str, Any] = {
    **LLAMA3, "architectures": ["LlamaForCausalLMEagle3"], "num_hidden_layers": 1,
    "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                            "weight_block_size": [128, 128]},
}  # fmt: skip


@pytest.mark.parametrize("release", ["0.5.12", "0.5.23"])
def test_guard_a_block_fp8_draft_under_fp8_on_a_bf16_target(tmp_path: Path, release: str) -> None:
    """--quantization fp8 is the draft's too when --speculative-draft-model-quantization is not given (server_args
    0.5.17:4081-4082; model_runner 0.5.5 passes server_args.quantization); the draft's own fp8 config matches, so it
    loads as block FP8 and the gate judges its block GEMM, not a conflict."""
    draft = model_dir(tmp_path, "d", BLOCK_FP8_DRAFT)
    doc = _gate(tmp_path, release, "9.0", "--quantization", "fp8", "--speculative-algorithm", "EAGLE3",
                "--speculative-draft-model-path", str(draft))  # fmt: skip
    assert _conflicts(doc) == []
    features = {f.get("feature"): f.get("status") for f in doc.get("features") or [] if isinstance(f, dict)}
    assert features.get("fp8-block-gemm") == "ok", features
