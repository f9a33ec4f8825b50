"""imend19 (imend17's leftover): nvidia-cutlass-dsl's library wheels at another release than nvidia-cutlass-dsl itself
were not compared, so such a box could be ok for --attention-backend fa4. Read in the 4.6.0 / 4.8.0 wheels: the DSL's
.pth holds no release (the same bytes in both), so `import cutlass` runs the library wheels' code; libs-core 4.8.0's
cutlass/__init__.py imports NumericCast from the compiled _cutlass_ir, which libs-cu12 4.6.0's module lacks. That mix
is blocked (cutlass-dsl-libs-core-flavour); any other mix is unknown (cutlass-dsl-libs-release); a set at the DSL's
release is judged as before."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.types import FeatureVerdict

BASE, CORE, CU12, CU13 = (f"nvidia-cutlass-dsl-libs-{n}" for n in ("base", "core", "cu12", "cu13"))
ABSENT = {"installed": False}


def _at(version: str) -> dict[str, Any]:
    return {"installed": True, "version": version}


def _verdict(packages: dict[str, dict[str, Any]], sglang: str = "0.5.23") -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, "10.0x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
        "system": {"machine": "x86_64", "python": "3.12.3"},
        "driver": {"version": "580.95.05", "cuda": "13.0"},
    }
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    facts["packages_complete"] = True
    facts["packages"].update(packages)
    ctx = Context(facts=facts, manifests=m, launch={"tp": 8, "attention_backend": "fa4"})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == "attention-fa4"), ctx)


def _result(v: FeatureVerdict, rule: str) -> str | None:
    return next((str(r.get("result")) for r in v["reasons"] if r.get("rule") == rule), None)


def _set(dsl: str, base: str, core: str, cu12: str | None, cu13: str | None = None) -> dict[str, dict[str, Any]]:
    return {
        "nvidia-cutlass-dsl": _at(dsl),
        BASE: _at(base),
        CORE: _at(core),
        CU12: _at(cu12) if cu12 else ABSENT,
        CU13: _at(cu13) if cu13 else ABSENT,
    }


def test_core_4_8_0_with_a_cu12_4_6_0_flavour_blocks() -> None:
    v = _verdict(_set("4.8.0", "4.8.0", "4.8.0", "4.6.0"))
    assert v["status"] == "blocked", v  # fails before: ok
    assert _result(v, "cutlass-dsl-libs-core-flavour") == "fail"
    reason = next(r for r in v["reasons"] if r.get("rule") == "cutlass-dsl-libs-core-flavour")
    assert "4.6.0" in str(reason.get("observed")), reason
    assert "NumericCast" in str(reason.get("message")), reason


@pytest.mark.parametrize(
    "mix",
    [
        ("4.8.0", "4.6.0", "4.6.0", "4.6.0"),  # a whole set at another release than the DSL
        ("4.8.0", "4.6.0", "4.8.0", "4.8.0"),  # libs-base behind
        ("4.6.0", "4.6.0", "4.6.0", "4.8.0"),  # a newer flavour under an older core
    ],
)
def test_another_mix_is_unknown_never_ok(mix: tuple[str, str, str, str]) -> None:
    v = _verdict(_set(*mix))
    assert v["status"] != "ok", v  # fails before: ok
    assert _result(v, "cutlass-dsl-libs-release") in ("unknown", "fail"), v


def test_a_set_at_the_dsl_release_passes_the_new_rules() -> None:
    v = _verdict(_set("4.8.0", "4.8.0", "4.8.0", "4.8.0"))
    assert _result(v, "cutlass-dsl-libs-release") == "pass", v
    assert _result(v, "cutlass-dsl-libs-core-flavour") == "pass", v
    assert v["status"] == "ok", v


def test_a_cu13_flavour_at_the_core_release_is_not_the_blocked_mix() -> None:
    v = _verdict(_set("4.8.0", "4.8.0", "4.8.0", "4.6.0", cu13="4.8.0"))
    assert _result(v, "cutlass-dsl-libs-core-flavour") in (None, "not_applicable", "skipped"), v
    assert _result(v, "cutlass-dsl-libs-release") == "unknown", v  # the cu12 4.6.0 beside it is still a mix
