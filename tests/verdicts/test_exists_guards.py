"""Rule conditions that ask whether a fact exists: a fact that is known to be absent (no toolkit on the box,
no kernel package) makes the rule not apply, a fact that is not known (not probed, not read, a release the
manifests do not record) makes it unknown, never ok or skipped.

`exists` is false for every Missing fact, so a `when` guarded by it drops the rule whether the fact is absent or
merely not known; the rules here guard on what says "known absent" instead (`toolkit.found`, the needs of the
check), and leave a fact that is not known to the requirement, which is unknown then."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check, evaluate_feature


def check(manifests: Manifests, cid: str, facts: dict[str, Any]) -> dict[str, Any]:
    spec = next(c for c in manifests.checks if c["id"] == cid)
    ctx = Context(facts=copy.deepcopy(facts), manifests=manifests, launch={})  # type: ignore[arg-type]
    return dict(evaluate_check(spec, ctx))


def feature(manifests: Manifests, fid: str, facts: dict[str, Any]) -> dict[str, Any]:
    spec = next(f for f in manifests.features if f["id"] == fid)
    ctx = Context(facts=copy.deepcopy(facts), manifests=manifests, launch={})  # type: ignore[arg-type]
    return dict(evaluate_feature(spec, ctx))


def results(v: dict[str, Any]) -> dict[str, str]:
    return {str(r.get("rule")): str(r.get("result")) for r in v.get("reasons") or []}


# ---- sgl-kernel-cuda, sglang-kernel-cuda: the kernel package's CUDA build -------------------------------------

TORCH_CU128 = {"installed": True, "version": "2.8.0+cu128"}


def kernel_box(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    return {"packages": {name: entry, "torch": dict(TORCH_CU128)}}


@pytest.mark.parametrize(
    ("name", "entry"),
    [
        ("sgl-kernel", {"installed": True}),  # a hand-written report: installed, version not given
        ("sgl-kernel", {"installed": True, "version": "0.3.14"}),  # a release the manifests do not record
        ("sglang-kernel", {"installed": True}),
        ("sglang-kernel", {"installed": True, "version": "0.4.2.post1"}),
    ],
)
def test_kernel_cuda_build_not_known_is_unknown(manifests: Manifests, name: str, entry: dict[str, Any]) -> None:
    # before: the rules' `pkg.NAME.cuda exists` dropped every rule and the check said skipped
    v = check(manifests, f"{name}-cuda", kernel_box(name, entry))
    assert v["status"] == "unknown"
    assert results(v) == {"cuda12-family": "unknown"}


@pytest.mark.parametrize(
    ("name", "entry", "status"),
    [
        ("sgl-kernel", {"installed": True, "version": "0.3.14+cu130"}, "warning"),  # its local tag says CUDA 13
        ("sgl-kernel", {"installed": True, "version": "0.3.21"}, "ok"),  # PyPI build: cu129
        ("sgl-kernel", {"installed": True, "version": "0.3.21", "cuda": "13.0"}, "warning"),
        ("sglang-kernel", {"installed": True, "version": "0.4.4"}, "warning"),  # PyPI build: cu130
        ("sglang-kernel", {"installed": True, "version": "0.4.4+cu129"}, "ok"),
    ],
)
def test_kernel_cuda_build_known_is_judged(manifests: Manifests, name: str, entry: dict[str, Any], status: str) -> None:
    assert check(manifests, f"{name}-cuda", kernel_box(name, entry))["status"] == status


@pytest.mark.parametrize("name", ["sgl-kernel", "sglang-kernel"])
def test_kernel_cuda_not_installed_is_skipped(manifests: Manifests, name: str) -> None:
    v = check(manifests, f"{name}-cuda", kernel_box(name, {"installed": False}))
    assert v["status"] == "skipped"


# ---- toolkit.cuda: driver-vs-toolkit and FlashInfer's JIT toolkit rules ---------------------------------------


def toolkit_box(toolkits: Any, driver_cuda: str = "12.4") -> dict[str, Any]:
    """One RTX 5090 whose driver supports CUDA `driver_cuda`; `toolkits` is facts.cuda_toolkits (None: not in the
    facts, as in a report written by hand or a probe that did not run)."""
    facts: dict[str, Any] = {
        "gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0"}],
        "driver": {"version": "550.54.14", "cuda": driver_cuda},
        "packages": {
            "sglang": {"installed": True, "version": "0.5.9"},
            "flashinfer-python": {"installed": True, "version": "0.6.7"},
            "torch": {"installed": True, "version": "2.9.1+cu128"},
        },
    }
    if toolkits is not None:
        facts["cuda_toolkits"] = toolkits
    return facts


def tk(version: str | None, active: bool | None = True, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": "/usr/local/cuda", "version": version, "source": "/usr/local/cuda", **extra}
    if active is not None:
        entry["active_for_build"] = active
    return entry


TOOLKIT_NOT_KNOWN = {
    "not probed": None,
    "listed, which one builds not stated": [tk("12.8", active=None)],
    "the building one's version unread": [tk(None)],
}
TOOLKIT_ABSENT = {
    "none found": [],
    "only a pip toolkit, none for builds": [tk("12.8", active=False)],
    "CUDA_HOME names a missing directory": [tk(None, error="/opt/cuda does not exist")],
}


@pytest.mark.parametrize("toolkits", TOOLKIT_NOT_KNOWN.values(), ids=TOOLKIT_NOT_KNOWN.keys())
def test_driver_vs_toolkit_toolkit_not_known_is_unknown(manifests: Manifests, toolkits: Any) -> None:
    # before: `toolkit.cuda exists` dropped all four rules and the check said skipped
    v = check(manifests, "driver-vs-toolkit", toolkit_box(toolkits))
    assert v["status"] == "unknown"
    # the driver (CUDA 12.4) serves a CUDA 11 or 12 toolkit whichever it is: those rules hold; a CUDA 13 toolkit, or
    # one newer than 12.4, it would not serve: unknown while the toolkit is not known
    assert results(v) == {
        "toolkit-cuda13-family": "unknown",
        "toolkit-cuda12-family": "pass",
        "toolkit-cuda11-family": "pass",
        "toolkit-minor-version": "unknown",
    }


@pytest.mark.parametrize("toolkits", TOOLKIT_ABSENT.values(), ids=TOOLKIT_ABSENT.keys())
def test_driver_vs_toolkit_no_toolkit_for_builds_is_skipped(manifests: Manifests, toolkits: Any) -> None:
    assert check(manifests, "driver-vs-toolkit", toolkit_box(toolkits))["status"] == "skipped"


def test_driver_vs_toolkit_known_toolkit_is_judged(manifests: Manifests) -> None:
    assert check(manifests, "driver-vs-toolkit", toolkit_box([tk("13.0")]))["status"] == "failed"
    assert check(manifests, "driver-vs-toolkit", toolkit_box([tk("12.4")]))["status"] == "ok"
    assert check(manifests, "driver-vs-toolkit", toolkit_box([tk("12.8")]))["status"] == "warning"


@pytest.mark.parametrize("toolkits", TOOLKIT_NOT_KNOWN.values(), ids=TOOLKIT_NOT_KNOWN.keys())
def test_flashinfer_jit_toolkit_not_known_is_unknown(manifests: Manifests, toolkits: Any) -> None:
    # before: jit-toolkit-sm12x did not apply, so FlashInfer 0.6.7 on SM 12.0 read as if no toolkit mattered
    v = feature(manifests, "attention-flashinfer", toolkit_box(toolkits, driver_cuda="12.9"))
    assert v["status"] != "ok"
    assert results(v).get("jit-toolkit-sm12x") == "unknown"


@pytest.mark.parametrize("toolkits", TOOLKIT_ABSENT.values(), ids=TOOLKIT_ABSENT.keys())
def test_flashinfer_jit_no_toolkit_for_builds_does_not_apply(manifests: Manifests, toolkits: Any) -> None:
    v = feature(manifests, "attention-flashinfer", toolkit_box(toolkits, driver_cuda="12.9"))
    assert "jit-toolkit-sm12x" not in results(v)


def test_flashinfer_jit_known_toolkit_is_judged(manifests: Manifests) -> None:
    old = feature(manifests, "attention-flashinfer", toolkit_box([tk("12.8")], driver_cuda="12.9"))
    assert results(old).get("jit-toolkit-sm12x") == "fail"
    new = feature(manifests, "attention-flashinfer", toolkit_box([tk("12.9")], driver_cuda="12.9"))
    assert results(new).get("jit-toolkit-sm12x") == "pass"
    knows = toolkit_box([tk("12.6")], driver_cuda="12.9")
    knows["packages"]["flashinfer-python"]["version"] = "0.6.6"
    assert results(feature(manifests, "attention-flashinfer", knows)).get("jit-toolkit-knows-gpu") == "fail"
    knows["cuda_toolkits"] = None
    assert results(feature(manifests, "attention-flashinfer", knows)).get("jit-toolkit-knows-gpu") == "unknown"


# ---- nccl: which NCCL an NVIDIA container build of torch loads ------------------------------------------------


def nccl_box(torch_version: str, env: dict[str, str] | None, wheel: str | None = "2.27.5") -> dict[str, Any]:
    """Two RTX 5090s; torch as given, with an nvidia-nccl-cu12 wheel of version `wheel` (None: no wheel);
    `env` the recorded environment (None: not recorded, as in a report written by hand)."""
    gpus = [{"index": i, "name": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0"} for i in (0, 1)]
    packages: dict[str, Any] = {
        "torch": {"installed": True, "version": torch_version},
        "nvidia-nccl-cu12": {"installed": wheel is not None, **({"version": wheel} if wheel else {})},
        "nvidia-nccl-cu13": {"installed": False},
    }
    facts: dict[str, Any] = {"gpus": gpus, "packages": packages}
    if env is not None:
        facts["system"] = {"env": env}
    return facts


NGC_TORCH = "2.7.0a0+ecf3bae40a.nv25.02"


@pytest.mark.parametrize("env", [{}, None], ids=["NCCL_VERSION not set", "environment not recorded"])
def test_ngc_torch_with_a_wheel_and_no_nccl_version_is_unknown(manifests: Manifests, env: Any) -> None:
    # before: the wheel rules judged nvidia-nccl-cu12 2.27.5, which an NGC torch does not load, and said ok
    v = check(manifests, "nccl", nccl_box(NGC_TORCH, env))
    assert v["status"] == "unknown"
    assert results(v).get("nccl-in-use-unread") == "unknown"


def test_ngc_torch_judged_by_nccl_version(manifests: Manifests) -> None:
    v = check(manifests, "nccl", nccl_box(NGC_TORCH, {"NCCL_VERSION": "2.25.1"}))
    assert v["status"] == "failed" and results(v).get("system-nccl-sm120-fixes") == "fail"
    assert check(manifests, "nccl", nccl_box(NGC_TORCH, {"NCCL_VERSION": "2.27.3"}))["status"] == "ok"


@pytest.mark.parametrize("env", [{}, None], ids=["NCCL_VERSION not set", "environment not recorded"])
def test_pypi_torch_with_a_wheel_is_judged_by_the_wheel(manifests: Manifests, env: Any) -> None:
    assert check(manifests, "nccl", nccl_box("2.8.0+cu128", env))["status"] == "ok"
    v = check(manifests, "nccl", nccl_box("2.8.0+cu128", env, wheel="2.26.2"))
    assert v["status"] == "failed" and "nccl-in-use-unread" not in results(v)


def test_torch_of_unknown_version_with_a_wheel_is_unknown(manifests: Manifests) -> None:
    # whether torch is an NGC build (and so which NCCL it loads) is not known without its version
    facts = nccl_box("2.8.0", {})
    facts["packages"]["torch"] = {"installed": True}
    assert results(check(manifests, "nccl", facts)).get("nccl-in-use-unread") == "unknown"
