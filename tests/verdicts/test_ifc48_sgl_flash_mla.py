"""ifc48 (the forty-eighth fact-check sample, rows f4 / f8): attention-dsa-flashmla-kv was ok on an H200 with SGLang
0.5.23 whose package list has no sgl-flash-mla. 0.5.23 pins sgl-flash-mla==1.0.0 (its METADATA:272) and its DSA
backend's FlashMLA paths import sglang/kernels/ops/attention/flash_mla_interface.py, which imports that wheel's
`flash_mla` at module level (:15-18; dsa_backend.py :2815 flashmla_sparse, :3319 flashmla_kv): without the wheel the
first attention call raises ModuleNotFoundError; the dense flashmla backend imports it too (flashmla_backend.py:14).
Rule sgl-flash-mla-installed (features attention-dsa-flashmla-kv, attention-dsa-flashmla-sparse, attention-flashmla):
fail where the list names sgl-flash-mla as not installed on 0.5.23, pass where it is
installed, not applied where the list does not name it (a report saved before the probe read it) or before 0.5.23
(the kernel package's flashmla_ops). The packages probe reads sgl-flash-mla. The registry test re-reads the real
wheels."""

from __future__ import annotations

import copy
import zipfile
from typing import Any

import pytest

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load
from stackcheck.probes.packages import WANTED
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.types import FeatureVerdict

RULE = "sgl-flash-mla-installed"
FEATURES = ("attention-dsa-flashmla-kv", "attention-dsa-flashmla-sparse", "attention-flashmla")


def _verdict(feature: str, sglang: str, flash_mla: dict[str, Any] | None, cc: str = "9.0") -> FeatureVerdict:
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
    else:  # (release_facts installs 0.5.23's pins, sgl-flash-mla among them: a list saved before it was read lacks it)
        facts["packages"].pop("sgl-flash-mla", None)
    ctx = Context(facts=facts, manifests=m, launch={"tp": 8})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == feature), ctx)


def _reason(v: FeatureVerdict) -> dict[str, Any] | None:
    return next((dict(r) for r in v["reasons"] if r.get("rule") == RULE), None)


@pytest.mark.parametrize(
    ("feature", "cc"),
    [(f, cc) for f in FEATURES[:2] for cc in ("9.0", "10.0")] + [("attention-flashmla", "9.0")],  # dense: SM90 only
)
def test_missing_sgl_flash_mla_on_0523_blocks(feature: str, cc: str) -> None:
    # fails on the parent: no such rule, the feature ok (rows f4 / f8)
    v = _verdict(feature, "0.5.23", {"installed": False}, cc)
    assert v["status"] == "blocked", v
    reason = _reason(v)
    assert reason is not None and reason["result"] == "fail" and reason["effect"] == "crash", reason
    assert "No module named 'flash_mla'" in str(reason["message"])


@pytest.mark.parametrize("feature", FEATURES)
def test_installed_sgl_flash_mla_passes(feature: str) -> None:
    v = _verdict(feature, "0.5.23", {"installed": True, "version": "1.0.0"})
    assert (_reason(v) or {}).get("result") == "pass", v
    assert v["status"] == "ok", v


@pytest.mark.parametrize("feature", FEATURES)
@pytest.mark.parametrize(
    ("sglang", "flash_mla"),
    [
        ("0.5.23", None),  # a complete list saved before the probe read sgl-flash-mla: the rule does not apply
        ("0.5.22", {"installed": False}),  # the kernel package's flashmla_ops, not sgl-flash-mla
    ],
)
def test_not_applied(feature: str, sglang: str, flash_mla: dict[str, Any] | None) -> None:
    v = _verdict(feature, sglang, flash_mla)
    assert _reason(v) is None or _reason(v)["result"] == "skipped", v  # type: ignore[index]
    assert v["status"] == "ok", v


def test_the_probe_reads_sgl_flash_mla() -> None:
    assert "sgl-flash-mla" in WANTED


@pytest.mark.registry
def test_the_real_wheels() -> None:
    from registry_wheels import cached

    sglang, flash_mla = cached("sglang", "0.5.23"), cached("sgl-flash-mla", "1.0.0")
    if sglang is None or flash_mla is None:
        pytest.skip("sglang 0.5.23 / sgl-flash-mla 1.0.0 not cached")
    with zipfile.ZipFile(sglang) as z:
        metadata = z.read("sglang-0.5.23.dist-info/METADATA").decode()
        interface = z.read("sglang/kernels/ops/attention/flash_mla_interface.py").decode()
        dsa = z.read("sglang/srt/layers/attention/dsa_backend.py").decode()
        dense = z.read("sglang/srt/layers/attention/flashmla_backend.py").decode()
    assert "Requires-Dist: sgl-flash-mla==1.0.0" in metadata.splitlines()
    assert "import flash_mla" in interface.splitlines()
    assert "from sglang.kernels.ops.attention.flash_mla_interface import (" in dsa
    assert "from sglang.kernels.ops.attention.flash_mla_interface import (" in dense.splitlines()
    with zipfile.ZipFile(flash_mla) as z:
        assert "flash_mla/__init__.py" in z.namelist()
        assert "Name: sgl-flash-mla" in z.read("sgl_flash_mla-1.0.0.dist-info/METADATA").decode()
