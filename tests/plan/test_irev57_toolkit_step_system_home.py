"""irev57 (an adversarial review of igap23's and the lead's toolkit step): a host compiler under the old toolkit's home
is dropped by the step as the old toolkit's own (a gcc linked into /usr/local/cuda-12.8/bin). A distro toolkit's home
is /usr (nvcc at /usr/bin/nvcc: tests/cases/jit-distro-nvcc-sm120), so /usr/bin/gcc, the system's, was dropped too:
Ubuntu's nvcc 12.8 with a gcc whose g++ is not installed (jit-toolchain failed) was planned one step, CUDA 12.8 -> 13.0,
with nothing still failing, although the step installs a toolkit elsewhere and removes no gcc (a CUDA toolkit brings
none: inferred, as the step's own reasoning) and every SGLang 0.5.9+ launch still fails at its first JIT build. A home
whose bin is a system directory (/usr, /usr/local) now owns no compiler found there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load as load_manifests
from stackcheck.plan import make_plan
from stackcheck.plan.hypothetical import apply_choice
from stackcheck.plan.solver import Choice
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

ROOT = Path(__file__).resolve().parent.parent.parent
NO_CXX = "/usr/bin/gcc has no C++ compiler (cc1 but no cc1plus in /usr/lib/gcc/x86_64-linux-gnu/12)"


def _after(home: str, jit: dict[str, Any]) -> dict[str, Any]:
    facts = {"jit": {"toolkit": home, "nvcc_found": True, **jit}, "cuda_toolkits": []}
    choice = Choice("toolkit", "cuda", "13.0", release={"version": "13.0"})
    return dict(apply_choice(cast("Any", facts), choice, cast("Context", None))["jit"])


@pytest.mark.parametrize("home", ["/usr", "/usr/local", "/usr/"])
def test_the_systems_gcc_is_kept_after_a_distro_toolkit(home: str) -> None:
    jit = _after(home, {"nvcc_host_found": False, "nvcc_host": "/usr/bin/gcc", "nvcc_host_reason": NO_CXX})
    assert jit["nvcc_host_found"] is False and jit["nvcc_host_reason"] == NO_CXX, jit
    jit = _after(home, {"nvcc_host_found": True, "nvcc_host": "/usr/local/bin/gcc", "nvcc_host_gnu_major": 12})
    assert jit["nvcc_host_found"] is True and jit["nvcc_host_gnu_major"] == 12, jit
    jit = _after(home, {"flashinfer_host": "cc", "cc_host_found": True, "cc_host": "/usr/bin/gcc-12"})
    assert jit["cc_host_found"] is True and jit["cc_host"] == "/usr/bin/gcc-12", jit


def test_a_gcc_in_a_toolkits_own_home_is_still_dropped() -> None:
    jit = _after("/usr/local/cuda-12.8", {"nvcc_host_found": True, "nvcc_host": "/usr/local/cuda-12.8/bin/gcc"})
    assert "nvcc_host_found" not in jit, jit


def test_a_plan_from_ubuntus_nvcc_still_names_the_gcc_without_g_plus_plus(tmp_path: Path) -> None:
    doc = json.loads((ROOT / "tests" / "cases" / "h200-newest" / "facts.json").read_text())
    doc["facts"]["jit"].update(
        cuda="12.8", toolkit="/usr", nvcc="/usr/bin/nvcc", nvcc_host_found=False, nvcc_host="/usr/bin/gcc",
        nvcc_host_reason=NO_CXX,
    )  # fmt: skip
    for toolkit in doc["facts"]["cuda_toolkits"]:
        toolkit.update(version="12.8.93", path="/usr")
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    ctx = Context(facts=load_facts_file(str(path)), manifests=load_manifests([], env={}))
    features, _checks = evaluate_all(ctx)
    plan = make_plan(ctx, features).to_json()
    assert [s["component"] for s in plan["steps"]] == ["cuda-toolkit"], plan["steps"]
    assert "jit-toolchain" in {c["check"] for c in plan.get("still_failing_checks") or []}
