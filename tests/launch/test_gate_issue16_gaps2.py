"""Issue 16, the items the igap merge's closing note left open (igap2), each read in the sglang wheels:

- `--moe-runner-backend flashinfer_trtllm` with a --quantization outside the list SGLang asserts (awq, gptq, ...)
  from 0.5.7 on: the assertion stays in every release 0.5.7-0.5.23 (server_args.py, 0.5.19 on
  arg_groups/moe_hook.py), its list growing (mxfp8 / modelopt_mixed from 0.5.10, nvfp4_online from 0.5.14) and
  admitting None (BF16). Refusal moe-runner-trtllm-quantization judged only 0.5.2-0.5.6 before.

The model configs are written for the tests in the shape of the published ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import QWEN3_MOE, gate_tp8, model_dir, reason_status, release_box

TRT_QUANT = "refusal moe-runner-trtllm-quantization"
NEMOTRON_H: dict[str, Any] = {
    "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
}  # fmt: skip


@pytest.mark.parametrize("release", ["0.5.7", "0.5.9", "0.5.12", "0.5.16", "0.5.19", "0.5.23"])
@pytest.mark.parametrize("quant", ["awq", "gptq", "w8a8_int8", "moe_wna16"])
@pytest.mark.parametrize("cc", ["10.0", "9.0"])
def test_flashinfer_trtllm_with_a_quantization_off_the_list_refused_0_5_7_on(
    tmp_path: Path, release: str, quant: str, cc: str
) -> None:
    model = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    doc = gate_tp8(
        release_box(tmp_path, release, cc), model, "--moe-runner-backend", "flashinfer_trtllm", "--quantization", quant
    )
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(TRT_QUANT) == ("blocked", "crash")


@pytest.mark.parametrize(
    ("release", "quant"),
    [
        ("0.5.7", "fp8"),
        ("0.5.9", "compressed-tensors"),
        ("0.5.9", None),
        ("0.5.12", "modelopt_mixed"),
        ("0.5.16", "nvfp4_online"),
        ("0.5.23", "modelopt_fp4"),
        ("0.5.23", None),
    ],
)
def test_flashinfer_trtllm_quantizations_the_list_admits(tmp_path: Path, release: str, quant: str | None) -> None:
    model = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    flags = ["--quantization", quant] if quant else []
    doc = gate_tp8(release_box(tmp_path, release, "10.0"), model, "--moe-runner-backend", "flashinfer_trtllm", *flags)
    assert TRT_QUANT not in reason_status(doc)


@pytest.mark.parametrize(("release", "quant"), [("0.5.9", "nvfp4_online"), ("0.5.12", "nvfp4_online")])
def test_flashinfer_trtllm_list_grows_per_release(tmp_path: Path, release: str, quant: str) -> None:
    model = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    doc = gate_tp8(
        release_box(tmp_path, release, "10.0"),
        model,
        "--moe-runner-backend",
        "flashinfer_trtllm",
        "--quantization",
        quant,
    )
    assert reason_status(doc).get(TRT_QUANT) == ("blocked", "crash")


def test_flashinfer_trtllm_nemotron_h_replaces_the_quantization_unknown(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "nemotron", NEMOTRON_H)
    doc = gate_tp8(
        release_box(tmp_path, "0.5.9", "10.0"),
        model,
        "--moe-runner-backend",
        "flashinfer_trtllm",
        "--quantization",
        "awq",
    )
    assert reason_status(doc).get(TRT_QUANT, ("", None))[0] == "unknown"


# ---- --moe-a2a-backend flashinfer with the MoE runner auto, 0.5.19-0.5.23 (igap2 item 3) ---------------------------
A2A_RUNNER = "refusal moe-a2a-flashinfer-runner-list"
A2A_FLAGS = ["--moe-a2a-backend", "flashinfer", "--enable-dp-attention", "--dp", "8"]


@pytest.mark.parametrize("release", ["0.5.19", "0.5.21", "0.5.23"])
@pytest.mark.parametrize("cc", ["10.0", "9.0", "12.0"])
@pytest.mark.parametrize("runner", [[], ["--moe-runner-backend", "auto"], ["--moe-runner-backend", "triton"]])
def test_flashinfer_a2a_runner_auto_or_off_the_list_refused_0_5_19_on(
    tmp_path: Path, release: str, cc: str, runner: list[str]
) -> None:
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    doc = gate_tp8(release_box(tmp_path, release, cc), moe, *A2A_FLAGS, *runner)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(A2A_RUNNER) == ("blocked", "crash")


@pytest.mark.parametrize("release", ["0.5.19", "0.5.23"])
@pytest.mark.parametrize("runner", ["flashinfer_cutlass", "flashinfer_trtllm", "deep_gemm", "flashinfer_cutedsl"])
def test_flashinfer_a2a_runners_the_list_admits(tmp_path: Path, release: str, runner: str) -> None:
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    doc = gate_tp8(release_box(tmp_path, release, "10.0"), moe, *A2A_FLAGS, "--moe-runner-backend", runner)
    assert A2A_RUNNER not in reason_status(doc)


@pytest.mark.parametrize("quant", ["mxfp8", "nvfp4_online", "modelopt_fp4"])
def test_flashinfer_a2a_runner_auto_resolved_by_the_quantization_unknown(tmp_path: Path, quant: str) -> None:
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    doc = gate_tp8(release_box(tmp_path, "0.5.23", "10.0"), moe, *A2A_FLAGS, "--quantization", quant)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(A2A_RUNNER, ("", None))[0] == "unknown"


@pytest.mark.parametrize("release", ["0.5.16", "0.5.18"])
def test_flashinfer_a2a_before_0_5_19_is_the_older_rule(tmp_path: Path, release: str) -> None:
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    doc = gate_tp8(release_box(tmp_path, release, "10.0"), moe, *A2A_FLAGS)
    assert A2A_RUNNER not in reason_status(doc)
    assert reason_status(doc).get("refusal moe-a2a-flashinfer-moe-runner") == ("blocked", "crash")


# ---- --moe-a2a-backend deepep / mooncake and their packages (igap2 item 4) -----------------------------------------
A2A_PACKAGE = "moe-a2a-package"


def _box_with(tmp_path: Path, release: str, packages: dict[str, Any]) -> Path:
    import json

    box = release_box(tmp_path, release, "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["packages"].update(packages)
    box.write_text(json.dumps(doc))
    return box


def _a2a_check(doc: dict[str, Any]) -> str | None:
    found = [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == A2A_PACKAGE]
    return str(found[0]["status"]) if found else None


@pytest.mark.parametrize("release", ["0.5.4", "0.5.12", "0.5.23"])
def test_deepep_without_deep_ep_installed_refused(tmp_path: Path, release: str) -> None:
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    # irev44: SGLang's prebuilt DeepEP (sgl-deep-ep) read as not installed either
    neither = {"deep-ep": {"installed": False}, "sgl-deep-ep": {"installed": False}}
    doc = gate_tp8(_box_with(tmp_path, release, neither), moe, "--moe-a2a-backend", "deepep")
    assert doc["decision"] == "refuse" and _a2a_check(doc) == "fail"
    assert reason_status(doc).get(f"{A2A_PACKAGE} (--moe-a2a-backend deepep)", ("", None))[0] == "fail"


def test_deepep_with_deep_ep_installed_passes_the_check(tmp_path: Path) -> None:
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    # igap5: with its compiled module deep_ep_cpp for this Python (3.12.3, x86_64) listed by the packages probe;
    # igap11: and the NVSHMEM libraries it links read (here a build that links none)
    so = ["deep_ep_cpp.cpython-312-x86_64-linux-gnu.so"]
    links: dict[str, Any] = {so[0]: {"needed": [], "rpath": None, "runpath": None, "found": {}}}
    entry = {"installed": True, "version": "1.2.1", "extension_files": so, "extension_links": links}
    box = _box_with(tmp_path, "0.5.23", {"deep-ep": entry})
    assert _a2a_check(gate_tp8(box, moe, "--moe-a2a-backend", "deepep")) == "ok"


def test_deepep_with_the_package_not_listed_unknown(tmp_path: Path) -> None:
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)  # a report saved before the probe looked for deep-ep
    doc = gate_tp8(release_box(tmp_path, "0.5.23", "9.0"), moe, "--moe-a2a-backend", "deepep")
    assert doc["decision"] == "refuse" and _a2a_check(doc) == "unknown"


def test_mooncake_package(tmp_path: Path) -> None:
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    flags = ["--moe-a2a-backend", "mooncake", "--deepep-mode", "low_latency"]
    absent = _box_with(tmp_path, "0.5.19", {"mooncake-transfer-engine": {"installed": False}})
    assert _a2a_check(gate_tp8(absent, moe, *flags)) == "fail"
    there = _box_with(tmp_path, "0.5.19", {"mooncake-transfer-engine": {"installed": True, "version": "0.3.7"}})
    assert _a2a_check(gate_tp8(there, moe, *flags)) == "unknown"  # its EP module is not read


def test_no_a2a_package_needed_without_the_flag_or_for_other_backends(tmp_path: Path) -> None:
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    box = _box_with(tmp_path, "0.5.23", {"deep-ep": {"installed": False}})
    assert _a2a_check(gate_tp8(box, moe)) is None
    assert _a2a_check(gate_tp8(box, moe, "--moe-a2a-backend", "none")) is None
    old = _box_with(tmp_path, "0.5.3", {"mooncake-transfer-engine": {"installed": False}})
    assert _a2a_check(gate_tp8(old, moe, "--moe-a2a-backend", "mooncake")) is None  # no Mooncake dispatcher yet


# ---- SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE sets the all-to-all backend (igap2 item 5, an over-refusal lifted) -----------
TBO_NONE = "refusal two-batch-overlap-a2a-none"


@pytest.mark.parametrize("release", ["0.5.13", "0.5.14"])
def test_mega_moe_variable_sets_megamoe_before_the_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str
) -> None:
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    box = release_box(tmp_path, release, "10.0")
    assert reason_status(gate_tp8(box, moe, "--enable-two-batch-overlap")).get(TBO_NONE) == ("blocked", "crash")
    monkeypatch.setenv("SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE", "1")
    assert TBO_NONE not in reason_status(gate_tp8(box, moe, "--enable-two-batch-overlap"))
    # a given flashinfer all-to-all backend is replaced too, before its checks
    doc = gate_tp8(box, moe, "--moe-a2a-backend", "flashinfer")
    assert not [k for k in reason_status(doc) if k.startswith("refusal moe-a2a-flashinfer")]


@pytest.mark.parametrize("release", ["0.5.16", "0.5.17"])
def test_mega_moe_variable_in_a_post_process_sets_megamoe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str
) -> None:
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    box = release_box(tmp_path, release, "10.0")
    monkeypatch.setenv("SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE", "true")
    rule = "refusal two-batch-overlap-a2a-none-dp-attention"  # decided by igap10: megamoe before check_server_args
    assert rule not in reason_status(gate_tp8(box, moe, "--enable-two-batch-overlap"))
    # a given backend is judged as given there
    doc = gate_tp8(box, moe, "--moe-a2a-backend", "flashinfer", "--enable-dp-attention", "--dp", "8")
    assert reason_status(doc).get("refusal moe-a2a-flashinfer-moe-runner") == ("blocked", "crash")


def test_mega_moe_variable_not_read_from_0_5_18(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    monkeypatch.setenv("SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE", "1")
    doc = gate_tp8(release_box(tmp_path, "0.5.19", "10.0"), moe, "--enable-two-batch-overlap")
    assert reason_status(doc).get("refusal two-batch-overlap-a2a-none-dp-attention") == ("blocked", "crash")


# ---- flashinfer_trtllm with no --quantization on a checkpoint off the list (igap2 item 2) --------------------------
TRT_CKPT = "refusal moe-runner-trtllm-checkpoint-quantization"
QWEN3_MOE_AWQ: dict[str, Any] = {**QWEN3_MOE, "quantization_config": {"quant_method": "awq", "bits": 4}}
QWEN3_MOE_FP8: dict[str, Any] = {**QWEN3_MOE, "quantization_config": {"quant_method": "fp8"}}


@pytest.mark.parametrize("release", ["0.5.7", "0.5.15", "0.5.23"])
def test_flashinfer_trtllm_awq_checkpoint_without_the_flag_unknown_on_sm100(tmp_path: Path, release: str) -> None:
    model = model_dir(tmp_path, "awq", QWEN3_MOE_AWQ)
    doc = gate_tp8(release_box(tmp_path, release, "10.0"), model, "--moe-runner-backend", "flashinfer_trtllm")
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(TRT_CKPT, ("", None))[0] == "unknown"


def test_flashinfer_trtllm_checkpoint_rule_not_for_admitted_checkpoints_or_a_given_flag(tmp_path: Path) -> None:
    box = release_box(tmp_path, "0.5.23", "10.0")
    for name, config, flags in (
        ("fp8", QWEN3_MOE_FP8, []),
        ("bf16", QWEN3_MOE, []),
        ("awq-flag", QWEN3_MOE_AWQ, ["--quantization", "fp8"]),
    ):
        doc = gate_tp8(box, model_dir(tmp_path, name, config), "--moe-runner-backend", "flashinfer_trtllm", *flags)
        assert TRT_CKPT not in reason_status(doc), name
