"""irev40's review of igap2's FP8 admission: SGLang's model loader compares the GPU's capability (major * 10 +
minor) with every quantization config's get_min_capability, not only Fp8Config's and Mxfp4Config's 80. W8A8Fp8Config
and ModelOptFp8Config ask 89, W4AFp8Config and PetitNvFp4Config 90 (read in the sglang 0.5.1, 0.5.3, 0.5.9, 0.5.14,
0.5.15 and 0.5.23 wheels: launch.json refusals quantization-min-capability-89/-90 and
checkpoint-quantization-min-capability-89 cite the lines). The gate allowed `--quantization w8a8_fp8` (or a ModelOpt
FP8 checkpoint) on an A100 or an RTX 3090, which the loader refuses with ValueError. The refused cases fail on
a0d01cf; the admitted ones (8.9 / 9.0, fp8 at 8.0) are guards. At the merge with igap3, which read every
quantization config's minimum into checks.json sglang-gpu-min-cc, irev40's three launch.json refusals were folded
into that check (one reason per launch, not two): these tests now hold the check to irev40's cases.
--quantization modelopt on a BF16 checkpoint is judged by the class SGLang takes from the checkpoint (igap3: from
0.5.4 the checkpoint's quant_algo decides), so there it is unknown below 9.0 rather than blocked below 8.9."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, gate_tp8, model_dir, release_box


def refusal(doc: dict[str, Any], rule: str) -> dict[str, Any] | None:
    """The gate's reason from the loader-minimum check (`rule`: the minimum, kept as the case's label)."""
    del rule
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == "sglang-gpu-min-cc"), None)


@pytest.mark.parametrize("release", ["0.5.9", "0.5.23"])
@pytest.mark.parametrize(("quant", "rule", "below", "at"), [
    ("w8a8_fp8", "quantization-min-capability-89", ["8.0", "8.6", "7.5"], ["8.9", "9.0", "10.0"]),
    ("modelopt_fp8", "quantization-min-capability-89", ["8.0", "8.6"], ["8.9", "9.0"]),
    ("modelopt", "quantization-min-capability-89", ["8.0", "8.7"], ["8.9", "12.0"]),
    ("w4afp8", "quantization-min-capability-90", ["8.9", "8.0"], ["9.0"]),
    ("petit_nvfp4", "quantization-min-capability-90", ["8.9"], ["9.0", "10.0"]),
])  # fmt: skip
def test_the_loader_minimum_of_each_quantization(
    tmp_path: Path, release: str, quant: str, rule: str, below: list[str], at: list[str]
) -> None:
    model = model_dir(tmp_path, "llama", LLAMA3)
    status = "blocked"
    if quant == "modelopt" and release == "0.5.23":  # the class follows the BF16 checkpoint's (absent) quant_algo
        status, below, at = "unknown", [*below, "8.9"], ["9.0", "12.0"]
    for cc in below:
        doc = gate_tp8(release_box(tmp_path, release, cc), model, "--quantization", quant)
        found = refusal(doc, rule)
        assert doc["decision"] == "refuse" and found is not None, (cc, doc.get("reasons"))
        assert found["status"] == status, (cc, found)
        if status == "blocked":
            assert "not supported for the current GPU" in found["reasons"][0]["message"]
    for cc in at:
        doc = gate_tp8(release_box(tmp_path, release, cc), model, "--quantization", quant)
        assert refusal(doc, rule) is None, (cc, doc.get("reasons"))


def test_fp8_itself_is_still_admitted_from_8_0(tmp_path: Path) -> None:
    doc = gate_tp8(
        release_box(tmp_path, "0.5.23", "8.0"), model_dir(tmp_path, "llama", LLAMA3), "--quantization", "fp8"
    )
    assert doc["decision"] == "allow", doc.get("reasons")


@pytest.mark.parametrize(
    ("config", "hf_quant"),
    [
        ({**LLAMA3, "quantization_config": {"quant_method": "modelopt", "quant_algo": "FP8"}}, None),
        (LLAMA3, {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8"}}),
        ({**LLAMA3, "quantization_config": {"quant_method": "w8a8_fp8"}}, None),
    ],
)
def test_a_checkpoint_below_8_9_with_no_flag(tmp_path: Path, config: dict[str, Any], hf_quant: Any) -> None:
    model = model_dir(tmp_path, "ckpt", config)
    if hf_quant is not None:
        (model / "hf_quant_config.json").write_text(json.dumps(hf_quant))
    a100 = gate_tp8(release_box(tmp_path, "0.5.23", "8.0"), model)
    found = refusal(a100, "checkpoint-quantization-min-capability-89")
    assert a100["decision"] == "refuse" and found is not None and found["status"] == "blocked", a100.get("reasons")
    l40 = gate_tp8(release_box(tmp_path, "0.5.23", "8.9"), model)
    assert refusal(l40, "checkpoint-quantization-min-capability-89") is None


def test_a_gpu_whose_capability_was_not_read_is_unknown(tmp_path: Path) -> None:
    box = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["gpus"][-1]["compute_capability"] = None
    box.write_text(json.dumps(doc))
    out = gate_tp8(box, model_dir(tmp_path, "llama", LLAMA3), "--quantization", "w8a8_fp8")
    found = refusal(out, "quantization-min-capability-89")
    assert found is not None and found["status"] == "unknown", out.get("reasons")


def test_lowest_gpu_sm() -> None:
    from stackcheck.launch.refusals import lowest_gpu_sm

    assert lowest_gpu_sm({"gpus": [{"compute_capability": "9.0"}, {"compute_capability": "8.6"}]}) == 86
    assert lowest_gpu_sm({"gpus": [{"compute_capability": "12.0"}]}) == 120
    assert lowest_gpu_sm({"gpus": [{"compute_capability": "9.0"}, {"compute_capability": None}]}) is None
    assert lowest_gpu_sm({"gpus": []}) is None and lowest_gpu_sm({}) is None


# the minimum each quantization config returns, per rule: (module of the wheel, class, minimum)
MINIMUMS = {
    "quantization-min-capability-89": [
        ("sglang/srt/layers/quantization/w8a8_fp8.py", "class W8A8Fp8Config", 89),
        ("sglang/srt/layers/quantization/modelopt_quant.py", "class ModelOptFp8Config", 89),
    ],
    "quantization-min-capability-90": [
        ("sglang/srt/layers/quantization/w4afp8.py", "class W4AFp8Config", 90),
        ("sglang/srt/layers/quantization/petit.py", "class PetitNvFp4Config", 90),
    ],
}


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.5.9", "0.5.23"])
def test_the_minimums_are_what_the_wheel_returns(version: str) -> None:
    """Each config class's get_min_capability in the real wheel returns the rule's minimum, as a constant."""
    import re
    import zipfile

    from registry_wheels import fetch_wheel

    with zipfile.ZipFile(fetch_wheel("sglang", version)) as z:
        for rule, entries in MINIMUMS.items():
            for path, cls, minimum in entries:
                text = z.read(path).decode()
                body = text[text.index(cls) :]
                method = body[body.index("def get_min_capability") :][:300]
                assert re.search(rf"return {minimum}\b", method), (version, rule, path)
