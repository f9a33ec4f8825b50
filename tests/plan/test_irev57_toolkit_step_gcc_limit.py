"""irev57 (an adversarial review of igap23's and the lead's toolkit step, plan.hypothetical._compiler_after_toolkit):
the step kept the host gcc's major but left out the new toolkit's gcc limit, and the rules that judge it
(sglang-jit-nvcc-host-version, flashinfer-jit-cc-host-version) apply only where jit.*_gnu_supported exists. So a box
with CUDA 12.8 and gcc 16 (host_config.h takes 14 at most) was planned one step, CUDA 12.8 -> 13.0, with nothing
still failing, although CUDA 13.0's host_config.h takes 15 at most and every SGLang 0.5.9+ launch still fails at its
first JIT build: a plan whose after-state reads clean for a launch that crashes. The toolkits whose header was read
now carry their limit after the step: '#if __GNUC__ > N' then the unsupported-GNU #error, in nvidia-cuda-nvcc-cu12
nvidia/cuda_nvcc/include/crt/host_config.h N 12 for 12.0-12.3 (:130-134 in 12.0 / 12.1), 13 for 12.4-12.6, 14 for
12.8 / 12.9 (:141-145), and N 15 in nvidia-cuda-crt 13.0.88 / 13.1.115 (nvidia/cu13/include/crt/host_config.h
:135-139); only where the box's own header was read before the step (its limit in the facts:
-allow-unsupported-compiler not given), and nothing for a toolkit not read."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
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
OLD = "/usr/local/cuda-12.8"
GCC = {"nvcc_host_found": True, "nvcc_host": "/usr/bin/gcc"}


def _after(jit: dict[str, Any], to: str = "13.0") -> dict[str, Any]:
    facts = {"jit": {"toolkit": OLD, "nvcc_found": True, **jit}, "cuda_toolkits": []}
    choice = Choice("toolkit", "cuda", to, release={"version": to})
    ctx = SimpleNamespace(manifests=load_manifests([], env={}))  # the limits are components.json's (igap24's data)
    return dict(apply_choice(cast("Any", facts), choice, cast("Context", ctx))["jit"])


@pytest.mark.parametrize(
    ("to", "major", "most"), [("13.0", 16, 15), ("13.1", 15, 15), ("12.9", 15, 14), ("12.6", 14, 13), ("12.4", 13, 13),
                              ("12.1", 13, 12)],
)  # fmt: skip
def test_the_new_toolkits_limit_is_carried(to: str, major: int, most: int) -> None:
    jit = _after({**GCC, "nvcc_host_gnu_major": major, "nvcc_host_gnu_max": 14, "nvcc_host_gnu_supported": False}, to)
    assert jit["nvcc_host_gnu_max"] == most and jit["nvcc_host_gnu_supported"] is (major <= most), jit


def test_no_limit_where_none_was_read_or_the_toolkit_is_not_read() -> None:
    # no limit before the step: -allow-unsupported-compiler given, or the header not read
    assert "nvcc_host_gnu_supported" not in _after({**GCC, "nvcc_host_gnu_major": 16})
    # a toolkit whose header the manifests have not read: unknown, not left out (left out, the version rules would
    # not apply and the step would read clean: merged with igap24's components.json limits)
    jit = _after({**GCC, "nvcc_host_gnu_major": 16, "nvcc_host_gnu_max": 14, "nvcc_host_gnu_supported": False}, "12.7")
    assert "nvcc_host_gnu_max" not in jit and jit["nvcc_host_gnu_supported"] is None, jit
    assert "12.7" in jit["nvcc_host_gnu_supported_reason"], jit


def test_ccs_gcc_gets_the_new_limit_too() -> None:
    cc = {"flashinfer_host": "cc", "flashinfer_allow_unsupported": False, "cc_host_found": True,
          "cc_host": "/usr/bin/gcc-16", "cc_host_gnu_major": 16, "cc_host_gnu_max": 14,
          "cc_host_gnu_supported": False}  # fmt: skip
    jit = _after(cc)
    assert jit["cc_host_gnu_max"] == 15 and jit["cc_host_gnu_supported"] is False, jit
    # the old header not read, but -allow-unsupported-compiler known absent (flashinfer_allow_unsupported false):
    # the new toolkit's limit still applies (igap24); where that option may reach nvcc, nothing is judged
    unread = {k: v for k, v in cc.items() if k not in ("cc_host_gnu_max", "cc_host_gnu_supported")}
    assert _after(unread)["cc_host_gnu_supported"] is False
    maybe = {k: v for k, v in unread.items() if k != "flashinfer_allow_unsupported"}
    assert "cc_host_gnu_supported" not in _after(maybe)


def _plan(tmp_path: Path, major: int) -> dict[str, Any]:
    """h200-newest (SGLang 0.5.23, torch built with CUDA 13.0) with a CUDA 12.8 toolkit and gcc `major` on the PATH."""
    doc = json.loads((ROOT / "tests" / "cases" / "h200-newest" / "facts.json").read_text())
    doc["facts"]["jit"].update(
        cuda="12.8", toolkit=OLD, **GCC, nvcc_host_gnu_major=major, nvcc_host_gnu_max=14,
        nvcc_host_gnu_supported=major <= 14,
    )  # fmt: skip
    for toolkit in doc["facts"]["cuda_toolkits"]:
        toolkit.update(version="12.8.93", path=OLD)
    path = tmp_path / f"facts-{major}.json"
    path.write_text(json.dumps(doc))
    ctx = Context(facts=load_facts_file(str(path)), manifests=load_manifests([], env={}))
    features, _checks = evaluate_all(ctx)
    return dict(make_plan(ctx, features).to_json())


def test_a_plan_to_cuda_13_0_still_names_a_gcc_16(tmp_path: Path) -> None:
    plan = _plan(tmp_path, 16)
    assert [(s["component"], s["to"]) for s in plan["steps"]] == [("cuda-toolkit", "13.0")], plan["steps"]
    failing = {c["check"] for c in plan.get("still_failing_checks") or []}
    assert "jit-toolchain" in failing, plan.get("still_failing_checks")


def test_a_plan_to_cuda_13_0_fixes_a_gcc_15(tmp_path: Path) -> None:
    plan = _plan(tmp_path, 15)
    assert [(s["component"], s["to"]) for s in plan["steps"]] == [("cuda-toolkit", "13.0")], plan["steps"]
    assert "jit-toolchain" not in {c["check"] for c in plan.get("still_failing_checks") or []}
