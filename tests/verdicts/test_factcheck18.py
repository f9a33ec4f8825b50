"""The eighteenth fact-check sample's false passes (tests/realworld/FACTCHECK.md, "Eighteenth sample"; the rows in
bench/factcheck18_drawn.json), each read in the real wheels:

- a7, a12: `audit` said attention-minicpm-sparse ok on an A800 and an RTX 4090 box with SGLang 0.5.21 and Python
  3.12. The MiniCPM sparse backend takes its top-k blocks from sglang-kernel's InfLLM-V2 library, which the
  sglang-kernel 0.4.6.post1-0.4.10 wheels ship as a CPython 3.10 pybind11 extension only
  (infllm_ops.cpython-310-*.so): on another Python its import fails at the first sparse forward pass (rule
  infllm-ops-python-310, read with the new fact path system.python)."""

from __future__ import annotations

import copy
import re
import zipfile
from typing import Any

import pytest
from registry_wheels import fetch_wheel, run_all

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.types import FeatureVerdict, Reason

FEATURE = "attention-minicpm-sparse"


def _verdict(sglang: str, python: str | None, cc: str = "8.0") -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, f"{cc}x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
        "system": {"machine": "x86_64"},
    }
    if python is not None:
        base["system"]["python"] = python
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    ctx = Context(facts=facts, manifests=m, launch={"tp": 8})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == FEATURE), ctx)


def _rule(verdict: FeatureVerdict, rule: str) -> Reason | None:
    return next((r for r in verdict["reasons"] if r.get("rule") == rule), None)


@pytest.mark.parametrize("sglang", ["0.5.19", "0.5.21", "0.5.23"])
@pytest.mark.parametrize("cc", ["8.0", "8.9", "9.0"])
def test_minicpm_sparse_blocked_on_python_312(sglang: str, cc: str) -> None:
    v = _verdict(sglang, "3.12.3", cc)
    assert v["status"] == "blocked"
    reason = _rule(v, "infllm-ops-python-310")
    assert reason is not None and reason["result"] == "fail" and reason["observed"] == "3.12.3"


@pytest.mark.parametrize("sglang", ["0.5.19", "0.5.21", "0.5.23"])
def test_minicpm_sparse_ok_on_python_310(sglang: str) -> None:
    v = _verdict(sglang, "3.10.14")
    assert v["status"] == "ok"
    reason = _rule(v, "infllm-ops-python-310")
    assert reason is not None and reason["result"] == "pass"


def test_minicpm_sparse_unknown_without_python() -> None:
    v = _verdict("0.5.21", None)
    assert v["status"] == "unknown"


def test_rule_reads_only_the_kernels_read() -> None:
    """sgl-kernel 0.3.x (no infllm_ops) and a release before the MiniCPM choices do not reach the rule."""
    reason = _rule(_verdict("0.5.18", "3.12.3"), "infllm-ops-python-310")
    assert reason is None or reason["result"] != "fail"


KERNELS = ["0.4.6.post1", "0.4.7", "0.4.9", "0.4.10"]


@pytest.mark.parametrize("version", KERNELS if run_all() else ["0.4.10"])
def test_registry_infllm_ops_is_a_cp310_extension(version: str) -> None:
    """Each read sglang-kernel wheel ships infllm_ops for CPython 3.10 only, beside abi3 libraries, and loads it
    by import, then by its file (sgl_kernel/infllm_v2/_loader.py)."""
    wheel = fetch_wheel("sglang-kernel", version)
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        infllm = [n for n in names if re.fullmatch(r"sgl_kernel/infllm_ops[^/]*\.so", n)]
        assert infllm and all(".cpython-310-" in n for n in infllm), infllm
        assert any(n.endswith(".abi3.so") for n in names)
        loader = z.read("sgl_kernel/infllm_v2/_loader.py").decode()
        assert "from sgl_kernel import infllm_ops" in loader and "spec_from_file_location" in loader
