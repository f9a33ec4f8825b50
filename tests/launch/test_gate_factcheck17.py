"""The seventeenth fact-check sample's false passes (tests/realworld/FACTCHECK.md, "Seventeenth sample"; the rows in
bench/factcheck17_drawn.json), each read in the real wheels. The gate judged none of these flags and allowed them:

- c5: `--enable-two-batch-overlap` with no MoE all-to-all backend and no DP attention (Llama 3, 0.5.17): ValueError
  while SGLang reads its arguments (refusals two-batch-overlap-a2a-none, 0.5.7-0.5.14, and
  two-batch-overlap-a2a-none-dp-attention, 0.5.15-0.5.23).
- c9: `--enable-pdmux` without `--chunked-prefill-size -1 --disable-overlap-schedule` (0.5.23): AssertionError
  (refusal pdmux-chunked-prefill-overlap-schedule).
- c4: `--moe-a2a-backend flashinfer` without DP attention (0.5.16): AssertionError (refusal
  moe-a2a-flashinfer-dp-attention).
- c6, c8: `--moe-a2a-backend mooncake` with the default `--deepep-mode auto` (0.5.19, 0.5.23): the Mooncake
  dispatcher raises NotImplementedError for normal dispatch (refusal moe-a2a-mooncake-normal-mode).
- c1, c2, c3: `--quantization w4afp8` on a BF16 checkpoint: W4AFp8Config's defaults declare a serialized W4AFP8
  checkpoint (preflight.json model.flag_checkpoint_conflicts w4afp8-unquantized-checkpoint); and on an FP8
  checkpoint the model config's mismatch ValueError (w4afp8-fp8-checkpoint).
- c7, c10: `--quantization modelopt_fp4` on a BF16 checkpoint (no hf_quant_config.json: ValueError) and on an FP8
  checkpoint (the mismatch ValueError), 0.5.1-0.5.17.
- found outside the draw: `--kv-cache-dtype fp4_e2m1` on 0.5.21-0.5.23 and `bf16` before 0.5.4, which those releases'
  parsers do not offer (release_choices for --kv-cache-dtype).

The model configs are written for the tests in the shape of the published ones."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, QWEN3_MOE, gate_tp8, model_dir, reason_status, release_box
from registry_wheels import fetch_wheel, is_argument_source, read_texts, run_all

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import load

QWEN3_MOE_FP8: dict[str, Any] = {
    **QWEN3_MOE,
    "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                            "weight_block_size": [128, 128]},
}  # fmt: skip
W4AFP8_MOE: dict[str, Any] = {**QWEN3_MOE, "quantization_config": {"quant_method": "w4afp8"}}


_reasons = reason_status


def _refused_by(doc: dict[str, Any], rule: str) -> bool:
    return doc["decision"] == "refuse" and _reasons(doc).get(f"refusal {rule}", ("", None))[0] == "blocked"


def _preflight_fails(doc: dict[str, Any], text: str) -> bool:
    checks = (doc.get("preflight") or {}).get("checks") or []
    return doc["decision"] == "refuse" and any(
        c.get("status") == "fail" and text in str(c.get("message")) for c in checks if isinstance(c, dict)
    )


@pytest.mark.parametrize(
    ("release", "cc", "rule"),
    [
        ("0.5.17", "12.0", "two-batch-overlap-a2a-none-dp-attention"),  # c5
        ("0.5.23", "9.0", "two-batch-overlap-a2a-none-dp-attention"),
        ("0.5.12", "9.0", "two-batch-overlap-a2a-none"),
    ],
)
def test_two_batch_overlap_without_a2a_refused(tmp_path: Path, release: str, cc: str, rule: str) -> None:
    llama = model_dir(tmp_path, "llama3", LLAMA3)
    assert _refused_by(gate_tp8(release_box(tmp_path, release, cc), llama, "--enable-two-batch-overlap"), rule)


def test_two_batch_overlap_with_dp_attention_allowed(tmp_path: Path) -> None:
    llama = model_dir(tmp_path, "llama3", LLAMA3)
    box = release_box(tmp_path, "0.5.17", "12.0")
    doc = gate_tp8(box, llama, "--enable-two-batch-overlap", "--enable-dp-attention", "--dp", "8")
    assert doc["decision"] == "allow"


def test_pdmux_needs_no_chunked_prefill_and_no_overlap_schedule(tmp_path: Path) -> None:  # c9
    moe = model_dir(tmp_path, "qwen3moe-fp8", QWEN3_MOE_FP8)
    box = release_box(tmp_path, "0.5.23", "10.0")
    assert _refused_by(gate_tp8(box, moe, "--enable-pdmux"), "pdmux-chunked-prefill-overlap-schedule")
    doc = gate_tp8(box, moe, "--enable-pdmux", "--chunked-prefill-size", "-1")
    assert _refused_by(doc, "pdmux-chunked-prefill-overlap-schedule")
    doc = gate_tp8(box, moe, "--enable-pdmux", "--chunked-prefill-size", "-1", "--disable-overlap-schedule")
    # with the arguments right, SM100 still stops in the scheduler: pdmux_context.get_arch_constraints knows majors
    # 6-9 only (feature pd-multiplexing, icorpQ); on an SM90 box the same flags are allowed (a dense model: the
    # FP8 MoE at TP 8 meets another SM90 refusal, fp8-block-moe-tp-split)
    assert doc["decision"] == "refuse" and _reasons(doc).get("pd-multiplexing", ("", None))[0] == "blocked"
    hopper = release_box(tmp_path, "0.5.23", "9.0")
    dense = model_dir(tmp_path, "llama3", LLAMA3)
    doc = gate_tp8(hopper, dense, "--enable-pdmux", "--chunked-prefill-size", "-1", "--disable-overlap-schedule")
    assert doc["decision"] == "allow"


def test_flashinfer_a2a_needs_dp_attention(tmp_path: Path) -> None:  # c4
    moe = model_dir(tmp_path, "qwen3moe-fp8", QWEN3_MOE_FP8)
    box = release_box(tmp_path, "0.5.16", "10.0")
    assert _refused_by(gate_tp8(box, moe, "--moe-a2a-backend", "flashinfer"), "moe-a2a-flashinfer-dp-attention")
    doc = gate_tp8(box, moe, "--moe-a2a-backend", "flashinfer", "--enable-dp-attention", "--dp", "8")
    assert "refusal moe-a2a-flashinfer-dp-attention" not in _reasons(doc)


@pytest.mark.parametrize("release", ["0.5.12", "0.5.16"])
def test_flashinfer_a2a_needs_a_flashinfer_runner_given(tmp_path: Path, release: str) -> None:
    """Found checking c4: with DP attention given, the runner left auto fails SGLang's runner assertion."""
    moe = model_dir(tmp_path, "qwen3moe-fp8", QWEN3_MOE_FP8)
    box = release_box(tmp_path, release, "10.0")
    flags = ["--moe-a2a-backend", "flashinfer", "--enable-dp-attention", "--dp", "8"]
    assert _refused_by(gate_tp8(box, moe, *flags), "moe-a2a-flashinfer-moe-runner")
    doc = gate_tp8(box, moe, *flags, "--moe-runner-backend", "flashinfer_cutlass")
    assert "refusal moe-a2a-flashinfer-moe-runner" not in _reasons(doc)


@pytest.mark.parametrize("release", ["0.5.19", "0.5.23"])  # c6, c8
def test_mooncake_a2a_needs_low_latency_mode(tmp_path: Path, release: str) -> None:
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    box = release_box(tmp_path, release, "9.0")
    assert _refused_by(gate_tp8(box, moe, "--moe-a2a-backend", "mooncake"), "moe-a2a-mooncake-normal-mode")
    doc = gate_tp8(box, moe, "--moe-a2a-backend", "mooncake", "--deepep-mode", "normal")
    assert _refused_by(doc, "moe-a2a-mooncake-normal-mode")
    doc = gate_tp8(box, moe, "--moe-a2a-backend", "mooncake", "--deepep-mode", "low_latency")
    # not this rule; the box's facts do not say whether Mooncake (with EP) is installed: the preflight check
    # moe-a2a-package leaves it unknown (igap2), the one thing that still refuses
    assert "refusal moe-a2a-mooncake-normal-mode" not in _reasons(doc)
    assert [r["feature"] for r in doc["reasons"]] == ["moe-a2a-package (--moe-a2a-backend mooncake)"]


@pytest.mark.parametrize(
    ("release", "cc", "model", "config"),
    [
        ("0.5.23", "10.0", "llama3", LLAMA3),  # c1
        ("0.5.14", "9.0", "qwen3moe", QWEN3_MOE),  # c2
        ("0.5.17", "12.0", "llama3", LLAMA3),  # c3
    ],
)
def test_w4afp8_on_an_unquantized_checkpoint_refused(
    tmp_path: Path, release: str, cc: str, model: str, config: dict[str, Any]
) -> None:
    doc = gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, model, config), "--quantization", "w4afp8")
    assert _preflight_fails(doc, "--quantization w4afp8 on a checkpoint with no quantization")


def test_w4afp8_on_fp8_and_w4afp8_checkpoints(tmp_path: Path) -> None:
    box = release_box(tmp_path, "0.5.23", "9.0")
    doc = gate_tp8(box, model_dir(tmp_path, "fp8", QWEN3_MOE_FP8), "--quantization", "w4afp8")
    assert _preflight_fails(doc, "--quantization w4afp8 on an FP8 checkpoint")
    doc = gate_tp8(box, model_dir(tmp_path, "w4afp8", W4AFP8_MOE), "--quantization", "w4afp8")
    assert "w4afp8" not in str([c.get("message") for c in doc["preflight"]["checks"] if c.get("status") == "fail"])


@pytest.mark.parametrize(
    ("model", "config", "text"),
    [
        ("llama3", LLAMA3, "--quantization modelopt_fp4 on a checkpoint with no quantization"),  # c7
        ("qwen3moe-fp8", QWEN3_MOE_FP8, "--quantization modelopt_fp4 on an FP8 checkpoint"),  # c10
    ],
)
def test_modelopt_fp4_on_a_non_modelopt_checkpoint(
    tmp_path: Path, model: str, config: dict[str, Any], text: str
) -> None:
    path = model_dir(tmp_path, model, config)
    doc = gate_tp8(release_box(tmp_path, "0.5.17", "10.0"), path, "--quantization", "modelopt_fp4")
    assert _preflight_fails(doc, text)
    # 0.5.18 and later quantize (or requantize) the MoE experts online: not this failure
    doc = gate_tp8(release_box(tmp_path, "0.5.18", "10.0"), path, "--quantization", "modelopt_fp4")
    assert not _preflight_fails(doc, "modelopt_fp4 on")


@pytest.mark.parametrize(("release", "value"), [("0.5.23", "fp4_e2m1"), ("0.5.21", "fp4_e2m1"), ("0.5.3", "bf16")])
def test_kv_cache_dtype_the_release_does_not_offer_refused(tmp_path: Path, release: str, value: str) -> None:
    llama = model_dir(tmp_path, "llama3", LLAMA3)
    doc = gate_tp8(release_box(tmp_path, release, "10.0"), llama, "--kv-cache-dtype", value)
    assert _reasons(doc).get("--kv-cache-dtype") == ("blocked", "crash")


def test_kv_cache_dtype_the_release_offers_not_refused_for_it(tmp_path: Path) -> None:
    llama = model_dir(tmp_path, "llama3", LLAMA3)
    doc = gate_tp8(release_box(tmp_path, "0.5.20", "10.0"), llama, "--kv-cache-dtype", "fp4_e2m1")
    assert "--kv-cache-dtype" not in _reasons(doc)


def _kv_versions() -> list[str]:
    if not run_all():
        return ["0.5.3", "0.5.9", "0.5.20", "0.5.23"]
    return [str(v) for v in load([], env={}).launch["release_flags"]["releases"]]


@pytest.mark.registry
@pytest.mark.parametrize("version", _kv_versions())
def test_the_kv_cache_dtype_choices_are_the_wheels(version: str) -> None:
    """release_choices for --kv-cache-dtype: the choices list of the flag's declaration in the release's argument
    sources (server_args.py's add_argument, or arg_groups/fields' A[...] field from 0.5.20)."""
    code = read_texts(fetch_wheel("sglang", version), is_argument_source)
    found = None
    for body in code.values():
        at = body.find('"--kv-cache-dtype"')
        m = re.search(r"kv_cache_dtype: A\[", body) if at < 0 else None
        at = m.start() if m else at
        if at < 0:
            continue
        listed = re.search(r"choices=\[([^\]]*)\]", body[at : at + 2500])
        if listed:
            found = re.findall(r'"(\w+)"', listed.group(1))
            break
    assert found, version
    spec = next(s for s in load([], env={}).launch["release_choices"] if s["flags"] == ["--kv-cache-dtype"])
    run = next(r for r in spec["runs"] if version_in(version, r["versions"]) is True)
    assert run["choices"] == found, version


def _wheel_text(version: str, path: str) -> str:
    import zipfile

    with zipfile.ZipFile(fetch_wheel("sglang", version)) as z:
        return z.read(path).decode("utf-8", "replace") if path in z.namelist() else ""


@pytest.mark.registry
@pytest.mark.parametrize("version", _kv_versions())
def test_the_flag_checkpoint_conflicts_are_the_wheels(version: str) -> None:
    """preflight.json model.flag_checkpoint_conflicts against each wheel: W4AFp8Config's serialized defaults and its
    empty config file list (with the loader's `quant_cls()` for such a method), the model config's mismatch
    ValueError and its compatibility table (fp8 joins modelopt_fp4's list exactly where the fp8 row stops), and the
    missing-config-file raise with modelopt_fp4's online path exactly where the unquantized row stops."""
    rows = {r["id"]: r for r in load([], env={}).preflight["model"]["flag_checkpoint_conflicts"]}
    w4 = _wheel_text(version, "sglang/srt/layers/quantization/w4afp8.py")
    loader = _wheel_text(version, "sglang/srt/model_loader/weight_utils.py")
    config = _wheel_text(version, "sglang/srt/configs/model_config.py")
    assert "is_checkpoint_fp8_serialized: bool = True" in w4, version
    assert re.search(r"def get_config_filenames\(cls\) -> List\[str\]:\s+return \[\]", w4), version
    assert re.search(r"if not possible_config_filenames:.*?return quant_cls\(\)", loader, re.S), version
    assert "does not match the quantization" in config and "Cannot find the config file" in loader, version
    table = re.search(r"compatible_quantization_methods = \{(.*?)\}", config, re.S)
    assert table and '"w4afp8"' not in table.group(1), version
    fp4 = re.search(r'"modelopt_fp4": \[([^\]]*)\]', table.group(1))
    assert fp4, version
    takes_fp8 = '"fp8"' in fp4.group(1)
    assert takes_fp8 is not bool(version_in(version, rows["modelopt-fp4-fp8-checkpoint"]["versions"])), version
    online = "for_online_weight_quantization" in loader
    assert online is not bool(version_in(version, rows["modelopt-fp4-unquantized-checkpoint"]["versions"])), version
    for rid in ("w4afp8-unquantized-checkpoint", "w4afp8-fp8-checkpoint"):
        assert version_in(version, rows[rid]["versions"]) is True, (rid, version)
