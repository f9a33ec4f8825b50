"""irev84 (review of ifc69): SGLang 0.5.9 runs --attention-backend fa4 from its vendored copy
(sglang/jit_kernel/flash_attention/cute), whose __init__ and interface import cutlass (the CuTe DSL, importable
only through nvidia-cutlass-dsl's .pth) and whose forward kernel imports quack (quack-kernels) at module level;
flash_attention_v4.py's guarded import then raises ImportError 'Vendored FlashAttention CUTE is not available' at the
first FA4 call. ifc69's rules start at 0.5.10 and ifc67's / igap48's at 0.5.16, so a 0.5.9 box whose list names
nvidia-cutlass-dsl or quack-kernels not installed got attention-fa4 ok. Rules vendored-fa4-059-cutlass-dsl-installed
and vendored-fa4-059-quack-installed, in their shape, for 0.5.9."""

from __future__ import annotations

import copy
import zipfile
from typing import Any

import pytest

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.types import FeatureVerdict

FEATURE = "attention-fa4"
DSL = "vendored-fa4-059-cutlass-dsl-installed"
QUACK = "vendored-fa4-059-quack-installed"


def _verdict(sglang: str, packages: dict[str, dict[str, Any] | None], cc: str = "10.0") -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, f"{cc}x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
        "system": {"machine": "x86_64", "python": "3.12.3"},
    }
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    facts["packages_complete"] = True
    for name, entry in packages.items():
        if entry is None:
            facts["packages"].pop(name, None)
        else:
            facts["packages"][name] = entry
    ctx = Context(facts=facts, manifests=m, launch={"tp": 8, "attention_backend": "fa4"})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == FEATURE), ctx)


def _reason(v: FeatureVerdict, rule: str) -> dict[str, Any] | None:
    return next((dict(r) for r in v["reasons"] if r.get("rule") == rule), None)


@pytest.mark.parametrize(("package", "rule"), [("nvidia-cutlass-dsl", DSL), ("quack-kernels", QUACK)])
def test_0_5_9_without_the_package_is_blocked(package: str, rule: str) -> None:
    v = _verdict("0.5.9", {package: {"installed": False}})  # failed before the fix: attention-fa4 ok
    assert v["status"] == "blocked", v
    reason = _reason(v, rule)
    assert reason is not None and reason["result"] == "fail" and reason["effect"] == "crash", reason
    assert "Vendored FlashAttention CUTE is not available" in str(reason["message"])


def test_0_5_9_with_both_is_ok() -> None:
    v = _verdict("0.5.9", {})
    assert (_reason(v, DSL) or {}).get("result") == "pass", v
    assert (_reason(v, QUACK) or {}).get("result") == "pass", v
    assert v["status"] == "ok", v


@pytest.mark.parametrize(("sglang", "entry"), [("0.5.9", None), ("0.5.12", {"installed": False})])
def test_not_applied(sglang: str, entry: dict[str, Any] | None) -> None:
    # a list saved before the probe read the packages; 0.5.10-0.5.15 are flash-attn-4-*-installed's
    v = _verdict(sglang, {"nvidia-cutlass-dsl": entry, "quack-kernels": entry})
    for rule in (DSL, QUACK):
        reason = _reason(v, rule)
        assert reason is None or reason["result"] == "skipped", v


@pytest.mark.registry
def test_the_real_wheel() -> None:
    from registry_wheels import fetch_wheel

    with zipfile.ZipFile(fetch_wheel("sglang", "0.5.9")) as z:
        init = z.read("sglang/jit_kernel/flash_attention/cute/__init__.py").decode().splitlines()
        interface = z.read("sglang/jit_kernel/flash_attention/cute/interface.py").decode().splitlines()
        fwd = z.read("sglang/jit_kernel/flash_attention/cute/flash_fwd.py").decode().splitlines()
        v4 = z.read("sglang/jit_kernel/flash_attention_v4.py").decode()
    assert "import cutlass.cute as cute" in init and "import cutlass" in interface
    assert "from .flash_fwd import FlashAttentionForwardSm90" in interface
    assert "from quack import copy_utils as quack_copy_utils" in fwd
    assert "except Exception as _e:" in v4 and "Vendored FlashAttention CUTE is not available" in v4
