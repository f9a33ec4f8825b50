"""igap48 (task 1): SGLang 0.5.17-0.5.23 run --attention-backend fa4 from their own FA4 copy
(sglang/kernels/ops/attention/flash_attn/cute), whose interface.py imports the quack-kernels wheel's `quack` at module
level (0.5.23:12). flash_attention_v4.py imports that package inside try/except and its flash_attn_varlen_func raises
ImportError 'FlashAttention-4 CUTE is not available' when the import failed (0.5.23:224-229): a box without
quack-kernels fails its first FA4 call. Rule quack-kernels-installed of attention-fa4, in the shape of ifc48's
sgl-flash-mla-installed: fail where the list names quack-kernels not installed on 0.5.17+, pass where installed, not
applied where the list does not name it or before 0.5.17. The packages probe reads quack-kernels. The registry test
re-reads the real wheels."""

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

RULE = "quack-kernels-installed"
FEATURE = "attention-fa4"


def _verdict(sglang: str, quack: dict[str, Any] | None, cc: str = "10.0") -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, f"{cc}x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
        "system": {"machine": "x86_64", "python": "3.12.3"},
    }
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    facts["packages_complete"] = True
    if quack is not None:
        facts["packages"]["quack-kernels"] = quack
    else:  # a complete list saved before the packages probe read quack-kernels
        facts["packages"].pop("quack-kernels", None)
    launch = {"tp": 8, "attention_backend": "fa4"}
    ctx = Context(facts=facts, manifests=m, launch=launch)  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == FEATURE), ctx)


def _reason(v: FeatureVerdict) -> dict[str, Any] | None:
    return next((dict(r) for r in v["reasons"] if r.get("rule") == RULE), None)


@pytest.mark.parametrize("sglang", ["0.5.17", "0.5.23"])
def test_missing_quack_blocks(sglang: str) -> None:
    # fails on the parent: no such rule, the feature ok
    v = _verdict(sglang, {"installed": False})
    assert v["status"] == "blocked", v
    reason = _reason(v)
    assert reason is not None and reason["result"] == "fail" and reason["effect"] == "crash", reason
    assert "FlashAttention-4 CUTE is not available" in str(reason["message"])


def test_installed_passes() -> None:
    v = _verdict("0.5.23", {"installed": True, "version": "0.6.5"})
    assert (_reason(v) or {}).get("result") == "pass", v
    assert v["status"] == "ok", v


@pytest.mark.parametrize(
    ("sglang", "quack"),
    [("0.5.23", None), ("0.5.15", {"installed": False})],  # list saved before the probe read it; flash-attn-4's FA4
)
def test_not_applied(sglang: str, quack: dict[str, Any] | None) -> None:
    v = _verdict(sglang, quack)
    assert _reason(v) is None or _reason(v)["result"] == "skipped", v  # type: ignore[index]


def test_the_probe_reads_quack_kernels_and_a_hop_names_the_rule() -> None:
    assert "quack-kernels" in WANTED
    feature = next(f for f in load().features if f["id"] == FEATURE)
    assert any(RULE in (h.get("rules") or []) for h in feature["path"])


@pytest.mark.registry
def test_the_real_wheels() -> None:
    from registry_wheels import fetch_wheel

    with zipfile.ZipFile(fetch_wheel("sglang", "0.5.23")) as z:
        metadata = z.read("sglang-0.5.23.dist-info/METADATA").decode().splitlines()
        interface = z.read("sglang/kernels/ops/attention/flash_attn/cute/interface.py").decode().splitlines()
        v4 = z.read("sglang/kernels/ops/attention/flash_attention_v4.py").decode()
    assert "Requires-Dist: quack-kernels==0.6.5" in metadata
    assert "from quack.compile_utils import make_fake_tensor as fake_tensor" in interface
    assert "if _flash_attn_varlen_func is None:" in v4 and "FlashAttention-4 CUTE is not available" in v4
    with zipfile.ZipFile(fetch_wheel("quack-kernels", "0.6.5")) as z:
        assert "quack/compile_utils.py" in z.namelist()
        assert "Name: quack-kernels" in z.read("quack_kernels-0.6.5.dist-info/METADATA").decode().splitlines()
