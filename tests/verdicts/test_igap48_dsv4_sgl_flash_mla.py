"""igap48 (task 2): SGLang 0.5.23's DeepSeek-V4 attention backend (dsv4, which every DeepseekV4ForCausalLM launch
runs: launch.json model_features) imports sglang/kernels/ops/attention/flash_mla_interface.py in its __init__ on any
CUDA GPU (deepseek_v4_backend.py:1262-1272, no SM branch), and that module imports the sgl-flash-mla wheel's
`flash_mla` at module level. Without the wheel the backend's creation raises ModuleNotFoundError, on SM12x too.
Rule sgl-flash-mla-installed of dsv4-flashmla-sparse-prefill, in the shape of ifc48's rule: fail where the list names
sgl-flash-mla not installed on 0.5.23, pass where installed, not applied where the list does not name it or before
0.5.23. The registry test re-reads the real wheel."""

from __future__ import annotations

import copy
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.types import FeatureVerdict

RULE = "sgl-flash-mla-installed"
FEATURE = "dsv4-flashmla-sparse-prefill"
RTXPRO = Path(__file__).resolve().parents[1] / "cases" / "rtxpro6000-pcie-iommu-translated" / "facts.json"
DSV4: dict[str, Any] = {
    "architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4", "hidden_size": 7168,
    "num_attention_heads": 128, "num_key_value_heads": 1, "index_topk": 1024,
}  # fmt: skip


def _verdict(sglang: str, flash_mla: dict[str, Any] | None, cc: str) -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, f"{cc}x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
        "system": {"machine": "x86_64", "python": "3.12.3"},
    }
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    facts["packages_complete"] = True
    if flash_mla is not None:
        facts["packages"]["sgl-flash-mla"] = flash_mla
    else:  # a complete list saved before the packages probe read sgl-flash-mla
        facts["packages"].pop("sgl-flash-mla", None)
    ctx = Context(facts=facts, manifests=m, launch={"tp": 8})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == FEATURE), ctx)


def _reason(v: FeatureVerdict) -> dict[str, Any] | None:
    return next((dict(r) for r in v["reasons"] if r.get("rule") == RULE), None)


@pytest.mark.parametrize("cc", ["10.0", "12.0"])
def test_missing_sgl_flash_mla_on_0523_blocks(cc: str) -> None:
    # fails on the parent (fe036d1a): no such rule here, the feature ok on SM100 and SM120
    v = _verdict("0.5.23", {"installed": False}, cc)
    assert v["status"] == "blocked", v
    reason = _reason(v)
    assert reason is not None and reason["result"] == "fail" and reason["effect"] == "crash", reason
    assert "No module named 'flash_mla'" in str(reason["message"])


@pytest.mark.parametrize("cc", ["10.0", "12.0"])
def test_installed_passes(cc: str) -> None:
    v = _verdict("0.5.23", {"installed": True, "version": "1.0.0"}, cc)
    assert (_reason(v) or {}).get("result") == "pass", v
    assert v["status"] == "ok", v


@pytest.mark.parametrize(
    ("sglang", "flash_mla"),
    [("0.5.23", None), ("0.5.22", {"installed": False})],  # list saved before the probe read it; sglang-kernel's op
)
def test_not_applied(sglang: str, flash_mla: dict[str, Any] | None) -> None:
    v = _verdict(sglang, flash_mla, "10.0")
    assert _reason(v) is None or _reason(v)["result"] == "skipped", v  # type: ignore[index]
    assert v["status"] == "ok", v


def test_a_kernel_hop_names_the_rule() -> None:
    m = load()
    feature = next(f for f in m.features if f["id"] == FEATURE)
    hops = [h for h in feature["path"] if h["package"] == "sgl-flash-mla"]
    assert hops and any(RULE in (h.get("rules") or []) for h in hops)


@pytest.mark.registry
def test_the_real_wheel() -> None:
    from registry_wheels import fetch_wheel

    with zipfile.ZipFile(fetch_wheel("sglang", "0.5.23")) as z:
        backend = z.read("sglang/srt/layers/attention/deepseek_v4_backend.py").decode().splitlines()
        interface = z.read("sglang/kernels/ops/attention/flash_mla_interface.py").decode().splitlines()
    init = next(i for i, line in enumerate(backend) if line.strip() == "if is_cuda():")
    assert backend[init + 1].strip() == "from sglang.kernels.ops.attention import flash_mla_interface"
    assert "import flash_mla" in interface


@pytest.mark.parametrize(("installed", "blocked"), [(False, True), (True, False)])
def test_the_gate_on_a_deepseek_v4_launch_on_sm120(tmp_path: Path, installed: bool, blocked: bool) -> None:
    # fails on the parent for installed=False: the feature ok on SM12x with 0.5.23, the launch not refused for it
    from gate_cli import gate_json, model_dir

    doc = json.loads(RTXPRO.read_text())  # cc 12.0
    packages = doc["facts"]["packages"]
    packages["sglang"].update(version="0.5.23", dist_version="0.5.23")
    packages["sglang-kernel"].update(version="0.4.10", dist_version="0.4.10")
    packages["sgl-flash-mla"] = {"installed": True, "version": "1.0.0"} if installed else {"installed": False}
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(doc))
    dsv4 = model_dir(tmp_path, "DeepSeek-V4", DSV4)
    got = gate_json(facts, "--model-path", str(dsv4), dry_run=True)
    assert any(r["feature"] == FEATURE for r in got["derived"]["required"])
    reasons = [b for b in got["reasons"] if b["feature"] == FEATURE]
    if blocked:
        assert reasons and reasons[0]["status"] == "blocked", reasons
        assert got["decision"] == "refuse"
        assert "No module named 'flash_mla'" in json.dumps(reasons)
    else:
        assert not reasons, reasons
