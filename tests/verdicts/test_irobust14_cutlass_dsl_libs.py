"""irobust14 (an adversarial pass over ifc67's cutlass-dsl-installed): the rule read only the nvidia-cutlass-dsl
dist-info, so a box where that wheel was installed with --no-deps (no nvidia-cutlass-dsl-libs-* wheel) was ok for
--attention-backend fa4. The wheel's only file is nvidia_cutlass_dsl_packages.pth, whose line imports
nvidia_cutlass_dsl, which only the library wheels hold (4.8.0: libs-base with the compiled parts, libs-core with
cutlass/__init__.py; Requires-Dist libs-base and libs-cu12, libs-cu13 under [cu13]): site skips the line, `cutlass`
is not importable, and SGLang's FA4 copy raises ImportError at the first FA4 call. Now such a box is blocked; one
with any library wheel is judged as before; a list saved before the probe read them does not apply the rule."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load
from stackcheck.probes.packages import WANTED
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.types import FeatureVerdict

RULE = "cutlass-dsl-libs-installed"
LIBS = ("nvidia-cutlass-dsl-libs-base", "nvidia-cutlass-dsl-libs-core", "nvidia-cutlass-dsl-libs-cu12",
        "nvidia-cutlass-dsl-libs-cu13")  # fmt: skip
DSL = {"installed": True, "version": "4.8.0"}
ABSENT = {"installed": False}


def _verdict(sglang: str, packages: dict[str, dict[str, Any] | None]) -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, "10.0x8"),
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
    return evaluate_feature(next(f for f in m.features if f["id"] == "attention-fa4"), ctx)


def _result(v: FeatureVerdict) -> str | None:
    return next((str(r.get("result")) for r in v["reasons"] if r.get("rule") == RULE), None)


def test_the_probe_reads_the_library_wheels() -> None:
    assert set(LIBS) <= set(WANTED)  # fails before: not read


@pytest.mark.parametrize("sglang", ["0.5.16", "0.5.23"])
def test_the_dsl_without_any_library_wheel_blocks(sglang: str) -> None:
    v = _verdict(sglang, {"nvidia-cutlass-dsl": DSL, **dict.fromkeys(LIBS, ABSENT)})
    assert v["status"] == "blocked", v  # fails before: ok
    assert _result(v) == "fail"


@pytest.mark.parametrize("lib", LIBS)
def test_any_library_wheel_passes_the_rule(lib: str) -> None:
    packages: dict[str, dict[str, Any] | None] = {"nvidia-cutlass-dsl": DSL, **dict.fromkeys(LIBS, ABSENT)}
    packages[lib] = {"installed": True, "version": "4.8.0"}
    v = _verdict("0.5.23", packages)
    assert _result(v) == "pass", v


def test_a_list_saved_before_does_not_apply_it() -> None:
    v = _verdict("0.5.23", {"nvidia-cutlass-dsl": DSL, **dict.fromkeys(LIBS, None)})
    assert _result(v) in (None, "not_applicable", "skipped"), v
    assert v["status"] == "ok", v


def test_before_0_5_16_not_applied() -> None:
    v = _verdict("0.5.15", {"nvidia-cutlass-dsl": DSL, **dict.fromkeys(LIBS, ABSENT)})
    assert _result(v) != "fail", v
