"""imend17 (irobust14's leftover): nvidia-cutlass-dsl with only part of its library wheels was not judged. Read in the
4.6.2 and 4.8.0 wheels: libs-core alone holds cutlass/__init__.py, which imports cutlass._mlir._mlir_libs from
libs-base, which loads a _cutlass_ir.cuN flavour from libs-cu12 / -cu13 whose N is at most the driver's CUDA major
(RuntimeError where none is). Without any one of them `import cutlass` fails and SGLang's FA4 copy raises ImportError
at its first call: blocked now (cutlass-dsl-libs-partial); other DSL releases, not read, are unknown unless the set
is complete (cutlass-dsl-libs-unread)."""

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
LIBS = (BASE, CORE, CU12, CU13)


def _verdict(dsl: str, present: tuple[str, ...], driver_cuda: str | None = None) -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, "10.0x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
        "system": {"machine": "x86_64", "python": "3.12.3"},
    }
    facts = release_facts(copy.deepcopy(base), m, "0.5.23", None, None)
    facts["packages_complete"] = True
    facts["packages"]["nvidia-cutlass-dsl"] = {"installed": True, "version": dsl}
    for name in LIBS:
        facts["packages"][name] = {"installed": True, "version": dsl} if name in present else {"installed": False}
    if driver_cuda is not None:
        facts["driver"] = {"version": "580.95.05", "cuda": driver_cuda, "source": "nvml"}
    ctx = Context(facts=facts, manifests=m, launch={"tp": 8, "attention_backend": "fa4"})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == "attention-fa4"), ctx)


def _results(v: FeatureVerdict) -> dict[str, str]:
    return {str(r.get("rule")): str(r.get("result")) for r in v["reasons"] if str(r.get("rule")).startswith("cutlass")}


@pytest.mark.parametrize("dsl", ["4.6.2", "4.8.0"])
@pytest.mark.parametrize("present", [(BASE,), (BASE, CU12), (CORE, CU12), (CU12,), (CU13,), (BASE, CORE), (CU12, CU13)])
def test_a_partial_library_set_blocks(dsl: str, present: tuple[str, ...]) -> None:
    v = _verdict(dsl, present)
    assert _results(v).get("cutlass-dsl-libs-partial") == "fail", _results(v)  # fails before: not judged
    assert v["status"] == "blocked"


@pytest.mark.parametrize("dsl", ["4.6.2", "4.8.0"])
@pytest.mark.parametrize("present", [(BASE, CORE, CU12), (BASE, CORE, CU12, CU13), (BASE, CORE, CU13)])
def test_a_complete_set_passes(dsl: str, present: tuple[str, ...]) -> None:
    got = _results(_verdict(dsl, present, "13.0"))
    assert got.get("cutlass-dsl-libs-partial") == "pass", got


def test_a_cu13_flavour_alone_needs_a_cuda_13_driver() -> None:
    got = _results(_verdict("4.8.0", (BASE, CORE, CU13), "12.8"))
    assert got.get("cutlass-dsl-libs-partial") == "fail", got


def test_a_release_not_read_is_unknown_unless_complete() -> None:
    got = _results(_verdict("4.6.0", (BASE, CU12)))
    assert got.get("cutlass-dsl-libs-unread") == "unknown", got
    got = _results(_verdict("4.6.0", (BASE, CORE, CU12)))
    assert got.get("cutlass-dsl-libs-unread") == "pass", got
    assert "cutlass-dsl-libs-partial" not in got or got["cutlass-dsl-libs-partial"] != "fail", got
