"""ifc67: SGLang 0.5.16-0.5.23 run --attention-backend fa4 from their own FA4 copy (0.5.16: sglang/jit_kernel/
flash_attn/cute; 0.5.17+: sglang/kernels/ops/attention/flash_attn/cute), whose interface.py imports `cutlass` (the
CuTe DSL) and `quack` at module level. flash_attention_v4.py imports that copy inside try/except Exception and raises
ImportError 'FlashAttention-4 CUTE is not available' at the first FA4 call when it failed. `cutlass` is only
importable through nvidia-cutlass-dsl's own nvidia_cutlass_dsl_packages.pth (4.6.0, 4.6.2, 4.8.0: it puts
nvidia_cutlass_dsl/dsl_packages on sys.path; the -libs-* wheels keep the package there, not at the top level), so a
box whose list names nvidia-cutlass-dsl not installed fails its first FA4 call: attention-fa4 said ok (the
sixty-seventh sample, found beside row o10). Rule cutlass-dsl-installed, in the shape of igap48's
quack-kernels-installed; and quack-kernels-installed now applies from 0.5.16 (its 0.5.16 tree was not read for quack
before: it imports quack the same way)."""

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

FEATURE = "attention-fa4"
RULE = "cutlass-dsl-installed"
QUACK = "quack-kernels-installed"


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
        if entry is None:  # a complete list saved before the packages probe read it
            facts["packages"].pop(name, None)
        else:
            facts["packages"][name] = entry
    launch = {"tp": 8, "attention_backend": "fa4"}
    ctx = Context(facts=facts, manifests=m, launch=launch)  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == FEATURE), ctx)


def _reason(v: FeatureVerdict, rule: str = RULE) -> dict[str, Any] | None:
    return next((dict(r) for r in v["reasons"] if r.get("rule") == rule), None)


@pytest.mark.parametrize(("sglang", "cc"), [("0.5.16", "10.0"), ("0.5.21", "10.3"), ("0.5.23", "12.0")])
def test_missing_cutlass_dsl_blocks(sglang: str, cc: str) -> None:
    # fails before the fix: no such rule, the feature ok
    v = _verdict(sglang, {"nvidia-cutlass-dsl": {"installed": False}}, cc)
    assert v["status"] == "blocked", v
    reason = _reason(v)
    assert reason is not None and reason["result"] == "fail" and reason["effect"] == "crash", reason
    assert "FlashAttention-4 CUTE is not available" in str(reason["message"])


def test_installed_passes() -> None:
    v = _verdict("0.5.23", {"nvidia-cutlass-dsl": {"installed": True, "version": "4.8.0"}}, "12.0")
    assert (_reason(v) or {}).get("result") == "pass", v
    assert v["status"] == "ok", v


@pytest.mark.parametrize(
    ("sglang", "entry"),
    [("0.5.23", None), ("0.5.15", {"installed": False})],  # list saved before the probe read it; flash-attn-4's FA4
)
def test_not_applied(sglang: str, entry: dict[str, Any] | None) -> None:
    v = _verdict(sglang, {"nvidia-cutlass-dsl": entry})
    assert _reason(v) is None or _reason(v)["result"] == "skipped", v  # type: ignore[index]


def test_quack_missing_blocks_on_0_5_16() -> None:
    # fails before the fix: quack-kernels-installed applied from 0.5.17 only
    v = _verdict("0.5.16", {"quack-kernels": {"installed": False}})
    assert v["status"] == "blocked", v
    assert (_reason(v, QUACK) or {}).get("result") == "fail", v


def test_the_probe_reads_the_dsl_and_a_hop_names_the_rule() -> None:
    assert "nvidia-cutlass-dsl" in WANTED
    feature = next(f for f in load().features if f["id"] == FEATURE)
    assert any(RULE in (h.get("rules") or []) for h in feature["path"])


@pytest.mark.registry
def test_the_real_wheels() -> None:
    from registry_wheels import fetch_wheel

    trees = {"0.5.16": "sglang/jit_kernel", "0.5.23": "sglang/kernels/ops/attention"}
    for sglang, tree in trees.items():
        with zipfile.ZipFile(fetch_wheel("sglang", sglang)) as z:
            metadata = z.read(f"sglang-{sglang}.dist-info/METADATA").decode().splitlines()
            interface = z.read(f"{tree}/flash_attn/cute/interface.py").decode().splitlines()
            v4 = z.read(f"{tree}/flash_attention_v4.py").decode()
        assert any(line.startswith("Requires-Dist: nvidia-cutlass-dsl[cu13]==") for line in metadata), sglang
        assert "import cutlass" in interface and "from quack.compile_utils import make_fake_tensor as fake_tensor" in (
            interface
        ), sglang
        assert "except Exception as _e:" in v4 and "FlashAttention-4 CUTE is not available" in v4, sglang
    with zipfile.ZipFile(fetch_wheel("nvidia-cutlass-dsl", "4.8.0")) as z:
        pth = z.read("nvidia_cutlass_dsl_packages.pth").decode()
        assert "dsl_packages" in pth and "sys.path.insert" in pth
        assert "Name: nvidia-cutlass-dsl" in z.read("nvidia_cutlass_dsl-4.8.0.dist-info/METADATA").decode().splitlines()
