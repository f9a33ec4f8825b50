"""icute3 (icute2's leftovers on the CuTe DSL's linear-attention kernels).

1. linear-attn-cutedsl judged only nvidia-cutlass-dsl's own dist-info: a --no-deps install of that wheel without its
   library wheels was ok, though the GDN / KDA kernel module's unguarded `import cutlass` fails then, as attention-fa4's
   cutlass-dsl-libs-* rules say for FA4. The feature now carries the same rules (the 0.5.10-0.5.15 libs-base one as
   cutlass-dsl-libs-base-installed)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.types import FeatureVerdict

FEATURE = "linear-attn-cutedsl"
LIBS = ("nvidia-cutlass-dsl-libs-base", "nvidia-cutlass-dsl-libs-core", "nvidia-cutlass-dsl-libs-cu12",
        "nvidia-cutlass-dsl-libs-cu13")  # fmt: skip


def _verdict(sglang: str, dsl: str, libs: dict[str, str]) -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, "10.0x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
        "system": {"machine": "x86_64", "python": "3.12.3"},
    }
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    facts["packages_complete"] = True
    facts["packages"]["nvidia-cutlass-dsl"] = {"installed": True, "version": dsl}
    for name in LIBS:
        facts["packages"][name] = {"installed": True, "version": libs[name]} if name in libs else {"installed": False}
    ctx = Context(facts=facts, manifests=m, launch={"tp": 8, "linear_attn_backend": "cutedsl"})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == FEATURE), ctx)


def _results(v: FeatureVerdict) -> dict[str, str]:
    return {str(r.get("rule")): str(r.get("result")) for r in v["reasons"] if "libs" in str(r.get("rule"))}


@pytest.mark.parametrize(
    ("sglang", "dsl", "libs", "rule"),
    [
        ("0.5.23", "4.8.0", {}, "cutlass-dsl-libs-installed"),
        ("0.5.23", "4.8.0", {"nvidia-cutlass-dsl-libs-cu12": "4.8.0"}, "cutlass-dsl-libs-partial"),
        ("0.5.14", "4.5.2", {}, "cutlass-dsl-libs-base-installed"),
    ],
)
def test_the_dsl_without_its_library_wheels_blocks(sglang: str, dsl: str, libs: dict[str, str], rule: str) -> None:
    # fails before the fix: ok (only nvidia-cutlass-dsl's own dist-info was judged)
    v = _verdict(sglang, dsl, libs)
    assert v["status"] == "blocked", v
    reason = next((dict(r) for r in v["reasons"] if r.get("rule") == rule), None)
    assert reason is not None and reason["result"] == "fail" and reason["effect"] == "crash", v
    assert "linear-attention" in str(reason["message"]) and "FA4" not in str(reason["message"])


def test_a_complete_set_passes() -> None:
    full = {"nvidia-cutlass-dsl-libs-base": "4.8.0", "nvidia-cutlass-dsl-libs-core": "4.8.0",
            "nvidia-cutlass-dsl-libs-cu12": "4.8.0"}  # fmt: skip
    # fails before the fix: the library rules were not there to pass
    v = _verdict("0.5.23", "4.8.0", full)
    assert v["status"] == "ok", v
    results = _results(v)
    assert results.get("cutlass-dsl-libs-installed") == "pass" and results.get("cutlass-dsl-libs-partial") == "pass", v
