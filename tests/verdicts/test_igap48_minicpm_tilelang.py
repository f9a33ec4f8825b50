"""igap48 (task 1): SGLang 0.5.19-0.5.23 pin tilelang==0.1.12, and their MiniCPM sparse backend, where
SGLANG_MINICPM_FUSE_TOPK is on, builds its fused top-k kernels as it is created (minicpm/backend.py 0.5.23:287-289),
importing minicpm/fuse_kernel.py, whose first import is tilelang (:4): without the wheel the backend's creation
raises ModuleNotFoundError. Rule tilelang-installed of attention-minicpm-sparse, in the shape of ifc48's
sgl-flash-mla-installed: fail where the list names tilelang not installed, pass where installed, not applied where
the list does not name it, the variable is off, or before 0.5.19. The registry test re-reads the real wheels."""

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

RULE = "tilelang-installed"
FEATURE = "attention-minicpm-sparse"


def _verdict(sglang: str, tilelang: dict[str, Any] | None, fuse: bool = True, cc: str = "9.0") -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, f"{cc}x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
        "system": {"machine": "x86_64", "python": "3.12.3"},
    }
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    facts["packages_complete"] = True
    if tilelang is not None:
        facts["packages"]["tilelang"] = tilelang
    else:  # a complete list saved before the packages probe read tilelang
        facts["packages"].pop("tilelang", None)
    launch = {"tp": 8, "attention_backend": "minicpm_flashattn", "minicpm_fuse_topk": fuse}
    ctx = Context(facts=facts, manifests=m, launch=launch)  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == FEATURE), ctx)


def _reason(v: FeatureVerdict) -> dict[str, Any] | None:
    return next((dict(r) for r in v["reasons"] if r.get("rule") == RULE), None)


@pytest.mark.parametrize(("sglang", "cc"), [("0.5.19", "9.0"), ("0.5.23", "9.0"), ("0.5.23", "10.0")])
def test_missing_tilelang_with_the_fused_top_k_blocks(sglang: str, cc: str) -> None:
    # fails on the parent: no such rule, the feature unknown (minicpm-fused-topk-tilelang), never blocked
    v = _verdict(sglang, {"installed": False}, cc=cc)
    assert v["status"] == "blocked", v
    reason = _reason(v)
    assert reason is not None and reason["result"] == "fail" and reason["effect"] == "crash", reason
    assert "No module named 'tilelang'" in str(reason["message"])


def test_installed_passes() -> None:
    v = _verdict("0.5.23", {"installed": True, "version": "0.1.12"})
    assert (_reason(v) or {}).get("result") == "pass", v
    assert v["status"] != "blocked", v


@pytest.mark.parametrize(
    ("sglang", "tilelang", "fuse"),
    [("0.5.23", None, True), ("0.5.23", {"installed": False}, False)],  # list saved before the probe; variable off
)
def test_not_applied(sglang: str, tilelang: dict[str, Any] | None, fuse: bool) -> None:
    v = _verdict(sglang, tilelang, fuse)
    assert _reason(v) is None or _reason(v)["result"] == "skipped", v  # type: ignore[index]


def test_the_probe_reads_tilelang_and_a_hop_names_the_rule() -> None:
    assert "tilelang" in WANTED
    feature = next(f for f in load().features if f["id"] == FEATURE)
    assert any(RULE in (h.get("rules") or []) for h in feature["path"])


@pytest.mark.registry
def test_the_real_wheels() -> None:
    from registry_wheels import fetch_wheel

    with zipfile.ZipFile(fetch_wheel("sglang", "0.5.23")) as z:
        metadata = z.read("sglang-0.5.23.dist-info/METADATA").decode().splitlines()
        backend = z.read("sglang/srt/layers/attention/minicpm/backend.py").decode()
        fuse = z.read("sglang/srt/layers/attention/minicpm/fuse_kernel.py").decode().splitlines()
    assert "Requires-Dist: tilelang==0.1.12" in metadata
    assert "self._get_fused_topk_kernel(batch_size, is_prefill=True)" in backend
    assert "from sglang.srt.layers.attention.minicpm.fuse_kernel import (" in backend
    assert "import tilelang" in fuse
