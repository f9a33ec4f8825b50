"""`--device` other than cuda: SGLang runs on the device it names ('cuda', 'xpu', 'hpu', 'npu', 'cpu', 'musa':
0.5.1 server_args.py, 0.5.23 arg_groups/fields/device.py). The gate's data judge CUDA launches, so a CPU launch
with intel_amx on a GPU box was refused as if it were a CUDA one (intel-amx-attention-backend-on-cuda: a false
refusal). Such a launch is now out of scope: nothing is checked but --require, and the gate says why."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_cli import LLAMA3, gate_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
SM120 = ROOT / "tests" / "recommend" / "seed-after" / "facts.json"


@pytest.mark.parametrize("device", [["--device", "cpu"], ["--device=cpu"], ["--device", "xpu"], ["--device", "npu"]])
def test_a_launch_on_another_device_is_out_of_scope_not_refused(tmp_path: Path, device: list[str]) -> None:
    model = model_dir(tmp_path, "llama", LLAMA3)
    for facts in (H200, SM120):
        doc = gate_json(facts, "--model-path", str(model), *device, "--attention-backend", "intel_amx", dry_run=True)
        assert doc["decision"] == "allow", doc["reasons"]
        assert doc["reasons"] == []
        assert "out of scope" in doc["note"] and "cuda" in doc["note"]
        assert device[-1].split("=")[-1] in doc["note"]


def test_cuda_launches_are_judged_as_before(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "llama", LLAMA3)
    for device in ([], ["--device", "cuda"], ["--device=cuda"]):
        doc = gate_json(H200, "--model-path", str(model), *device, "--attention-backend", "intel_amx", dry_run=True)
        assert doc["decision"] == "refuse"
        assert any("intel-amx-attention-backend-on-cuda" in str(r.get("feature")) for r in doc["reasons"])


def test_derive_marks_the_launch_out_of_scope() -> None:
    mapping = dict(load([], env={}).launch)
    launch = ["python", "-m", "sglang.launch_server"]
    d = gate.derive(
        ["python", "-m", "sglang.launch_server", "--device", "cpu", "--attention-backend", "fa3"], mapping, {}
    )
    assert d.entrypoint is None and d.required == [] and d.problems == []
    assert d.out_of_scope is not None and "--device cpu" in d.out_of_scope
    d = gate.derive([*launch, "--device", "cpu"], mapping, {}, require=["attention-fa3"])
    assert [r.feature for r in d.required] == ["attention-fa3"]  # --require is still checked
    d = gate.derive(
        ["python", "-m", "sglang.launch_server", "--device", "cuda", "--attention-backend", "fa3"], mapping, {}
    )
    assert d.entrypoint is not None and d.out_of_scope is None
    assert "attention-fa3" in {r.feature for r in d.required}
