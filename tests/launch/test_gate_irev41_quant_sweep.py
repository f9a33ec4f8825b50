"""irev41: the loader minimums irev40 refused in launch.json, folded into checks.json sglang-gpu-min-cc at igap3's
merge, held on every release 0.5.1-0.5.23 (not only 0.5.9 and 0.5.23) at compute capability 7.5/8.0/8.6/8.9/9.0:
W8A8Fp8Config and ModelOptFp8Config ask 89, W4AFp8Config and PetitNvFp4Config 90 (get_min_capability, read in
each wheel of ~/.cache/stackcheck-tests/wheels 2026-12-04; modelopt_fp8 is a --quantization choice from 0.5.4),
and a ModelOpt FP8 checkpoint named by hf_quant_config.json alone (no flag) below 8.9. Guards: they pass on bfbcc06
(a sweep of the merge's folding, which found it sound)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, gate_tp8, model_dir, release_box

RELEASES = [f"0.5.{n}" for n in range(1, 24)]
MINIMUM = {"w8a8_fp8": 89, "modelopt_fp8": 89, "w4afp8": 90, "petit_nvfp4": 90, "modelopt": 89}
CCS = ["7.5", "8.0", "8.6", "8.9", "9.0"]


def _sm(cc: str) -> int:
    major, minor = cc.split(".")
    return int(major) * 10 + int(minor)


@pytest.mark.parametrize("release", RELEASES)
def test_each_loader_minimum_on_every_release(tmp_path: Path, release: str) -> None:
    model = model_dir(tmp_path, "llama", LLAMA3)
    minor = int(release.split(".")[2])
    for quant, minimum in MINIMUM.items():
        if quant == "modelopt_fp8" and minor < 4:
            continue  # not a --quantization choice before 0.5.4
        for cc in CCS:
            if _sm(cc) >= minimum:
                continue
            doc = gate_tp8(release_box(tmp_path, release, cc), model, "--quantization", quant)
            found = next((r for r in doc.get("reasons") or [] if r.get("feature") == "sglang-gpu-min-cc"), None)
            assert doc["decision"] == "refuse" and found is not None, (quant, cc, doc.get("reasons"))


@pytest.mark.parametrize("release", RELEASES)
def test_a_modelopt_fp8_checkpoint_without_a_flag(tmp_path: Path, release: str) -> None:
    model = model_dir(tmp_path, "ckpt", LLAMA3)
    (model / "hf_quant_config.json").write_text(
        json.dumps({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8"}})
    )
    for cc in ["7.5", "8.0", "8.6"]:
        doc = gate_tp8(release_box(tmp_path, release, cc), model)
        found = next((r for r in doc.get("reasons") or [] if r.get("feature") == "sglang-gpu-min-cc"), None)
        assert doc["decision"] == "refuse" and found is not None, (cc, doc.get("reasons"))
