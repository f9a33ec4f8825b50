"""ifc52 (the fifty-second sample's rows x2, x3): SGLang 0.5.15-0.5.23's NixlKVManager imports nixl_thread_sync_t from
nixl._api and passes sync_mode to nixl_agent_config (0.5.15 conn.py:366, :389-393; 0.5.14 imports only nixl_agent and
nixl_agent_config). nixl's Python API has the name from 1.2.0 (nixl-cu12 1.2.0 _api.py:126; nixl 0.6.1, nixl-cu13
0.7.1, nixl-cu12 0.8.0-1.1.0 lack it), and nixl._api is the forwarder's own before 0.7.1, else the backend it loads. An
older one makes the import raise ImportError when the KV manager starts. On the parent each refused launch here passed
the gate's transfer-package check and was allowed. The registry test re-reads the two nixl-cu12 wheels around the
bound."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, NIXL_SYSTEM_LIBS, gate_tp8, model_dir, release_box

CHECK = "transfer-package"
NIXL = ("--disaggregation-mode", "decode", "--disaggregation-transfer-backend", "nixl")
# every library the nixl items read is found, so only the API is judged
LIBS = {**MOONCAKE_SYSTEM_LIBS, **NIXL_SYSTEM_LIBS, "libcudart.so.12": "/usr/local/cuda-12.9/lib64/libcudart.so.12"}
MISSING = {"installed": False}


def _pkg(version: str) -> dict[str, Any]:
    return {"installed": True, "version": version, "dist_version": version}


def _check(
    tmp_path: Path, release: str, packages: Mapping[str, Any], torch_cuda: str | None = "13.0"
) -> dict[str, Any]:
    """The transfer-package check of a NIXL decode launch (Llama 3, --tp 8) on h200-newest at SGLang `release` with
    `packages` over nixl / nixl-cu12 / nixl-cu13 not installed and torch of CUDA `torch_cuda` (None: not given)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    facts = release_box(tmp_path, release, "9.0")
    doc = json.loads(facts.read_text())
    listed = doc["facts"]["packages"]
    listed.update({"nixl": MISSING, "nixl-cu12": MISSING, "nixl-cu13": MISSING, "mooncake-transfer-engine": MISSING})
    listed.update(packages)
    if torch_cuda is None:
        listed["torch"].pop("cuda", None)
    else:
        listed["torch"]["cuda"] = torch_cuda
    doc["facts"]["cuda_libs"] = {"ld_cache": "file", **LIBS}
    facts.write_text(json.dumps(doc))
    decision = gate_tp8(facts, model_dir(tmp_path, "m", LLAMA3), *NIXL)
    found = [c for c in (decision.get("preflight") or {}).get("checks") or [] if c.get("check") == CHECK]
    assert found, decision.get("preflight")
    check: dict[str, Any] = found[0]
    check["decision"] = decision["decision"]
    return check


REFUSED = [
    ("0.5.23", {"nixl": _pkg("0.6.1")}),  # row x2: nixl's own nixl._api (nixl-cu12 / -cu13 beside it unused)
    ("0.5.23", {"nixl": _pkg("0.6.1"), "nixl-cu12": _pkg("0.6.1"), "nixl-cu13": _pkg("0.6.1")}),
    ("0.5.23", {"nixl": _pkg("0.7.1"), "nixl-cu13": _pkg("0.7.1")}),  # row x3
    ("0.5.15", {"nixl": _pkg("1.0.1"), "nixl-cu12": _pkg("1.0.1"), "nixl-cu13": _pkg("1.1.0")}),  # cu13 taken first
    ("0.5.16", {"nixl": _pkg("1.1.0"), "nixl-cu12": _pkg("1.2.0"), "nixl-cu13": _pkg("1.1.0")}),  # torch's major
    ("0.5.19", {"nixl": _pkg("1.5.2"), "nixl-cu12": _pkg("1.1.0"), "nixl-cu13": _pkg("1.1.0")}),
]


@pytest.mark.parametrize(("release", "packages"), REFUSED)
def test_an_older_nixl_api_is_refused_from_0_5_15(tmp_path: Path, release: str, packages: dict[str, Any]) -> None:
    # fails on the parent (fd70b9a0): ok, "nixl is installed", and the launch allowed
    check = _check(tmp_path, release, packages)
    assert check["status"] == "fail", check
    assert check["decision"] == "refuse"
    assert "nixl_thread_sync_t" in check["message"] and "1.2.0" in check["message"]


@pytest.mark.parametrize(
    ("release", "packages"),
    [
        ("0.5.14", {"nixl": _pkg("0.6.1")}),  # 0.5.14 imports no nixl_thread_sync_t
        ("0.5.14", {"nixl": _pkg("0.7.1"), "nixl-cu13": _pkg("0.7.1")}),
        ("0.5.23", {"nixl": _pkg("1.2.0"), "nixl-cu12": _pkg("1.2.0"), "nixl-cu13": _pkg("1.2.0")}),
        ("0.5.23", {"nixl": _pkg("0.7.1"), "nixl-cu13": _pkg("1.2.0")}),  # the backend is newer than the forwarder
        ("0.5.23", {"nixl": _pkg("1.5.2"), "nixl-cu12": _pkg("1.1.0"), "nixl-cu13": _pkg("1.5.1")}),  # cu13 taken
    ],
)
def test_a_new_enough_api_or_an_older_sglang_passes(tmp_path: Path, release: str, packages: dict[str, Any]) -> None:
    check = _check(tmp_path, release, packages)
    assert check["status"] == "ok", check
    assert check["decision"] == "allow"


def test_which_backend_not_known_is_unknown(tmp_path: Path) -> None:
    """nixl 1.5.2 takes the backend of torch's CUDA major; torch's CUDA build not given, one backend older."""
    packages = {"nixl": _pkg("1.5.2"), "nixl-cu12": _pkg("1.1.0"), "nixl-cu13": _pkg("1.2.0")}
    check = _check(tmp_path, "0.5.23", packages, torch_cuda=None)
    assert check["status"] == "unknown", check
    assert check["decision"] == "refuse"


def test_a_backend_version_not_given_is_unknown(tmp_path: Path) -> None:
    check = _check(tmp_path, "0.5.23", {"nixl": _pkg("0.7.1"), "nixl-cu13": {"installed": True}})
    assert check["status"] == "unknown", check
    assert "nixl_thread_sync_t" in check["message"]


@pytest.mark.registry
def test_the_real_nixl_cu12_wheels() -> None:
    """nixl-cu12 1.1.0's nixl_cu12/_api.py has no nixl_thread_sync_t; 1.2.0's defines it (the bound's two sides)."""
    from registry_wheels import fetch_wheel

    for version, has in (("1.1.0", False), ("1.2.0", True)):
        wheel = fetch_wheel("nixl-cu12", version, python="3.12")
        with zipfile.ZipFile(wheel) as z:
            text = z.read("nixl_cu12/_api.py").decode()
        assert ("class nixl_thread_sync_t" in text) is has, version
        assert ("sync_mode" in text) is has, version
