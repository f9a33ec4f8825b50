"""ifc69: SGLang 0.5.10-0.5.15 run --attention-backend fa4 from the flash-attn-4 wheel (sglang/jit_kernel/
flash_attention_v4.py imports flash_attn.cute inside try/except Exception and raises ImportError 'Vendored
FlashAttention CUTE is not available (cannot import flash_attn.cute)' at the first FA4 call when that import failed).
flash_attn.cute imports `cutlass` (the CuTe DSL, importable only through nvidia-cutlass-dsl's .pth) and, through the
backward kernels its interface imports, `quack` (quack-kernels) at module level in every flash-attn-4 those releases
pin (4.0.0b4, 4.0.0b9, 4.0.0b15 read). A box whose list names nvidia-cutlass-dsl or quack-kernels not installed got
attention-fa4 ok there (the sixty-ninth sample, found beside row o6): ifc67's cutlass-dsl-installed and igap48's
quack-kernels-installed start at 0.5.16, the releases with SGLang's own FA4 copy. Rules
flash-attn-4-cutlass-dsl-installed and flash-attn-4-quack-installed, in their shape, for 0.5.10-0.5.15."""

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
DSL = "flash-attn-4-cutlass-dsl-installed"
QUACK = "flash-attn-4-quack-installed"


def _verdict(sglang: str, packages: dict[str, dict[str, Any] | None], cc: str = "9.0") -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, f"{cc}x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
        "system": {"machine": "x86_64", "python": "3.12.3"},
    }
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    facts["packages_complete"] = True
    for name, entry in packages.items():
        if entry is None:  # a complete list saved before the packages probe read it
            facts["packages"].pop(name, None)
        else:
            facts["packages"][name] = entry
    launch = {"tp": 8, "attention_backend": "fa4"}
    ctx = Context(facts=facts, manifests=m, launch=launch)  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == FEATURE), ctx)


def _reason(v: FeatureVerdict, rule: str) -> dict[str, Any] | None:
    return next((dict(r) for r in v["reasons"] if r.get("rule") == rule), None)


@pytest.mark.parametrize(
    ("sglang", "cc", "package", "rule"),
    [
        ("0.5.12", "9.0", "nvidia-cutlass-dsl", DSL),
        ("0.5.14", "9.0", "nvidia-cutlass-dsl", DSL),
        ("0.5.15", "10.0", "nvidia-cutlass-dsl", DSL),
        ("0.5.12", "9.0", "quack-kernels", QUACK),
        ("0.5.14", "10.0", "quack-kernels", QUACK),
    ],
)
def test_missing_dependency_blocks(sglang: str, cc: str, package: str, rule: str) -> None:
    # fails before the fix: no such rule, the feature ok
    v = _verdict(sglang, {package: {"installed": False}}, cc)
    assert v["status"] == "blocked", v
    reason = _reason(v, rule)
    assert reason is not None and reason["result"] == "fail" and reason["effect"] == "crash", reason
    assert "Vendored FlashAttention CUTE is not available" in str(reason["message"])


def test_0_5_10_fails_the_rule_too() -> None:
    # 0.5.10 on 9.0 is blocked already (flash-attn-4 4.0.0b4 refuses paged KV there); the DSL rule fails beside it
    v = _verdict("0.5.10", {"nvidia-cutlass-dsl": {"installed": False}})
    assert (_reason(v, DSL) or {}).get("result") == "fail", v


def test_installed_passes() -> None:
    v = _verdict("0.5.12", {})
    assert (_reason(v, DSL) or {}).get("result") == "pass", v
    assert (_reason(v, QUACK) or {}).get("result") == "pass", v
    assert v["status"] == "ok", v


@pytest.mark.parametrize(
    ("sglang", "entry"),
    [("0.5.12", None), ("0.5.9", {"installed": False}), ("0.5.16", {"installed": False})],
)
def test_not_applied(sglang: str, entry: dict[str, Any] | None) -> None:
    # a list saved before the probe read the package; 0.5.9's vendored copy (not read for this); 0.5.16+ is
    # cutlass-dsl-installed's
    v = _verdict(sglang, {"nvidia-cutlass-dsl": entry, "quack-kernels": entry})
    for rule in (DSL, QUACK):
        reason = _reason(v, rule)
        assert reason is None or reason["result"] == "skipped", v


def test_a_hop_names_the_rules() -> None:
    feature = next(f for f in load().features if f["id"] == FEATURE)
    for rule in (DSL, QUACK):
        assert any(rule in (h.get("rules") or []) for h in feature["path"]), rule


@pytest.mark.registry
def test_the_real_wheels() -> None:
    from registry_wheels import fetch_wheel

    for version in ("4.0.0b4", "4.0.0b9", "4.0.0b15"):
        with zipfile.ZipFile(fetch_wheel("flash-attn-4", version)) as z:
            interface = z.read("flash_attn/cute/interface.py").decode().splitlines()
            bwd = z.read("flash_attn/cute/flash_bwd.py").decode().splitlines()
        assert "import cutlass" in interface, version
        assert any(line.startswith("from flash_attn.cute.flash_bwd import") for line in interface), version
        assert "from quack import layout_utils" in bwd, version
    with zipfile.ZipFile(fetch_wheel("sglang", "0.5.10")) as z:
        v4 = z.read("sglang/jit_kernel/flash_attention_v4.py").decode()
    assert "except Exception as _e:" in v4 and "Vendored FlashAttention CUTE is not available" in v4
