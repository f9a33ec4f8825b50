"""irev72 (a review of ifc52's NIXL API floor): nixl 0.7.1-1.0.1 import nixl_cu13 first whenever it is installed, then
nixl_cu12 (nixl/__init__.py of the 0.7.1 and 1.0.1 wheels: `candidates = ["nixl_cu13", "nixl_cu12"]`, the first that
imports). With a report that does not say whether nixl-cu13 is installed (a hand-written or older one: the probe lists
it as installed or not), the floor was judged on nixl-cu12 alone: nixl-cu12 1.2.0 passed the transfer-package check
as ok, though an older nixl-cu13 beside it would be the module taken (no nixl_thread_sync_t: ImportError on SGLang
0.5.15+), and an old nixl-cu12 failed it though a newer nixl-cu13 may be the one taken. Both are unknown now."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.verdicts.package_checks import check_transfer_package

DATA = load([], env={}).preflight
LIBS = {"libcudart.so.12": "/x/libcudart.so.12", "libcudart.so.13": "/x/libcudart.so.13", "libssl.so.3": "/x/a",
        "libcrypto.so.3": "/x/b"}  # fmt: skip


def _pkg(version: str) -> dict[str, Any]:
    return {"installed": True, "version": version, "dist_version": version}


def _status(packages: dict[str, Any], torch_cuda: str = "12.8", sglang: str = "0.5.23") -> str | None:
    listed = {**packages, "torch": {"installed": True, "version": "2.9.0", "cuda": torch_cuda}}
    got = check_transfer_package("transfer_backend", "nixl", "nixl", {"packages": listed, "cuda_libs": LIBS}, DATA,
                                 sglang)  # fmt: skip
    return None if got is None else got.status


@pytest.mark.parametrize("forwarder", ["0.7.1", "1.0.1"])
@pytest.mark.parametrize("backend", ["1.2.0", "1.0.1"])
@pytest.mark.parametrize("torch_cuda", ["12.8", "13.0"])
def test_nixl_cu13_not_given_leaves_the_api_floor_unknown(forwarder: str, backend: str, torch_cuda: str) -> None:
    assert _status({"nixl": _pkg(forwarder), "nixl-cu12": _pkg(backend)}, torch_cuda) == "unknown"


@pytest.mark.parametrize(
    ("packages", "status"),
    [
        ({"nixl": _pkg("1.0.1"), "nixl-cu12": _pkg("1.2.0"), "nixl-cu13": {"installed": False}}, "ok"),
        ({"nixl": _pkg("1.0.1"), "nixl-cu12": _pkg("1.0.1"), "nixl-cu13": {"installed": False}}, "fail"),
        ({"nixl": _pkg("1.0.1"), "nixl-cu12": _pkg("1.0.1"), "nixl-cu13": _pkg("1.2.0")}, "ok"),
        ({"nixl": _pkg("1.0.1"), "nixl-cu12": _pkg("1.2.0"), "nixl-cu13": _pkg("1.0.1")}, "fail"),
    ],
)
def test_nixl_cu13_given_is_judged_as_before(packages: dict[str, Any], status: str) -> None:
    assert _status(packages, "13.0") == status


def test_sglang_before_the_import_is_not_judged_on_the_floor() -> None:
    assert _status({"nixl": _pkg("1.0.1"), "nixl-cu12": _pkg("1.0.1")}, sglang="0.5.14") == "ok"


def test_nixl_cu13_not_given_without_libcudart_13_is_unknown_before_the_floor() -> None:
    # nixl-cu13's UCX module NEEDs libcudart.so.13 (first_backend_runtime_library): with a CUDA 12 torch and no such
    # library, a nixl-cu13 the report does not mention may be the backend taken (before: ok on SGLang 0.5.14)
    libs = {**LIBS, "libcudart.so.13": None}
    listed = {"nixl": _pkg("1.0.1"), "nixl-cu12": _pkg("1.0.1"),
              "torch": {"installed": True, "version": "2.9.0", "cuda": "12.8"}}  # fmt: skip
    got = check_transfer_package("transfer_backend", "nixl", "nixl", {"packages": listed, "cuda_libs": libs}, DATA,
                                 "0.5.14")  # fmt: skip
    assert got is not None and got.status == "unknown", got
    listed["nixl-cu13"] = {"installed": False}
    got = check_transfer_package("transfer_backend", "nixl", "nixl", {"packages": listed, "cuda_libs": libs}, DATA,
                                 "0.5.14")  # fmt: skip
    assert got is not None and got.status == "ok", got
