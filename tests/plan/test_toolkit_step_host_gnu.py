"""A CUDA-toolkit step judges the host gcc against the toolkit it installs (igap24, issue 16): components.json's cuda
releases carry host_gnu_max, the N of include/crt/host_config.h's '#if __GNUC__ > N' read in each release's real
nvidia-cuda-nvcc-cu12 / nvidia-cuda-crt wheel (12.0-12.3: 12, 12.4-12.6: 13, 12.8-12.9: 14, 13.0-13.1: 15). Before, the
step dropped nvcc_host_gnu_max / _supported (and cc_host_*), so the version rules were not judged after it: a plan to
CUDA 13.0 on a box whose gcc 16 no CUDA 13.0 nvcc takes named no failing check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load as load_manifests
from stackcheck.plan import make_plan
from stackcheck.plan.hypothetical import apply_choice, host_gnu_max
from stackcheck.plan.solver import Choice
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

ROOT = Path(__file__).resolve().parent.parent.parent
OLD = "/usr/local/cuda-11.8"
MANIFESTS = load_manifests([], env={})


def _ctx() -> Context:
    return Context(facts=cast("Any", {}), manifests=MANIFESTS)


def after(version: str, jit: dict[str, Any]) -> dict[str, Any]:
    facts = {"jit": {"toolkit": OLD, "nvcc_found": True, **jit}, "cuda_toolkits": []}
    choice = Choice("toolkit", "cuda-toolkit", version)
    return dict(apply_choice(cast("Any", facts), choice, _ctx())["jit"])


@pytest.mark.parametrize(
    ("version", "most"),
    [("12.0", 12), ("12.3", 12), ("12.4", 13), ("12.6", 13), ("12.8", 14), ("12.9", 14), ("13.0", 15), ("13.1", 15)],
)
def test_the_manifests_limit_per_release(version: str, most: int) -> None:
    assert host_gnu_max(_ctx(), version) == (most, "")


def test_a_release_not_read_has_no_limit() -> None:
    most, why = host_gnu_max(_ctx(), "13.4")
    assert most is None and "13.4" in why
    assert host_gnu_max(None, "12.8")[0] is None  # no manifests given


GCC = {"nvcc_host_found": True, "nvcc_host": "/usr/bin/gcc", "flashinfer_host": "nvcc-default"}


@pytest.mark.parametrize(
    ("version", "major", "supported"),
    [("12.8", 14, True), ("12.4", 14, False), ("12.9", 15, False), ("13.0", 15, True), ("13.0", 16, False)],
)
def test_the_paths_gcc_against_the_new_toolkit(version: str, major: int, supported: bool) -> None:
    jit = after(version, {**GCC, "nvcc_host_gnu_major": major, "flashinfer_allow_unsupported": False,
                          "nvcc_host_gnu_max": 11, "nvcc_host_gnu_supported": major <= 11})  # fmt: skip
    assert jit["nvcc_host_gnu_major"] == major and jit["nvcc_host_gnu_supported"] is supported, jit
    assert jit["nvcc_host_gnu_max"] == host_gnu_max(_ctx(), version)[0]


def test_ccs_gcc_against_the_new_toolkit() -> None:
    cc = {"flashinfer_host": "cc", "flashinfer_allow_unsupported": False, "cc_host_found": True,
          "cc_host": "/usr/bin/gcc-15", "cc_host_gnu_major": 15}  # fmt: skip
    assert after("12.9", cc)["cc_host_gnu_supported"] is False
    assert after("13.1", cc)["cc_host_gnu_supported"] is True


def test_not_judged_where_the_override_may_be_given_and_unknown_where_not_read() -> None:
    base = {**GCC, "nvcc_host_gnu_major": 16}
    for allow in ({"flashinfer_allow_unsupported": True}, {}):  # given, or not known (no nvcc before the step)
        jit = after("13.0", {**base, **allow})
        assert "nvcc_host_gnu_supported" not in jit and "nvcc_host_gnu_max" not in jit, jit
    jit = after("13.4", {**base, "flashinfer_allow_unsupported": False})
    assert jit["nvcc_host_gnu_supported"] is None and "13.4" in jit["nvcc_host_gnu_supported_reason"], jit


def test_a_plan_of_a_toolkit_step_names_a_gcc_the_new_toolkit_refuses(tmp_path: Path) -> None:
    """h200-newest with a CUDA 11.8 toolkit (torch cu130: the plan installs CUDA 13.0) and gcc 16 as nvcc's host
    compiler: CUDA 13.0's host_config.h takes gcc 15 at most, so the JIT host compiles still fail after the step."""
    doc = json.loads((ROOT / "tests" / "cases" / "h200-newest" / "facts.json").read_text())
    doc["facts"]["jit"].update(cuda="11.8", **GCC, nvcc_host_gnu_major=16, nvcc_host_gnu_max=11,
                               nvcc_host_gnu_supported=False, flashinfer_allow_unsupported=False,
                               cxx_found=True, cxx="/usr/bin/c++")  # fmt: skip
    for toolkit in doc["facts"]["cuda_toolkits"]:
        toolkit["version"] = "11.8"
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    ctx = Context(facts=load_facts_file(str(path)), manifests=MANIFESTS)
    features, _checks = evaluate_all(ctx)
    plan = make_plan(ctx, features).to_json()
    assert [s["component"] for s in plan["steps"]] == ["cuda-toolkit"], plan["steps"]
    failing = {c["check"]: c for c in plan.get("still_failing_checks") or []}
    assert "jit-toolchain" in failing, failing
    rules = {r["rule"] for r in failing["jit-toolchain"]["failures"]}
    assert {"sglang-jit-nvcc-host-version", "flashinfer-jit-nvcc-host-version"} <= rules, rules
