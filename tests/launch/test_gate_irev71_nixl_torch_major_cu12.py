"""irev71 (review of igap50): nixl 1.1.0-1.5.2 import the backend of torch's CUDA major, whichever that is (nixl
1.1.0 nixl/__init__.py _load_cuda_backend: 'torch reports CUDA {major} but nixl-cu{major} is not installed'; 1.5.2
the same through nixl_meta_utils.detect_cuda_major, 'detected CUDA ...'). igap50 judged the CUDA 13 side only: a
torch of CUDA 12 beside nixl-cu13 alone (no nixl-cu12) passed transfer-package, where the scheduler's
'from nixl._api import' raises ImportError before serving."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, NIXL_SYSTEM_LIBS, gate_tp8, model_dir, release_box

NIXL = ("--disaggregation-mode", "prefill", "--disaggregation-transfer-backend", "nixl")
ALL_LIBS = {**MOONCAKE_SYSTEM_LIBS, **NIXL_SYSTEM_LIBS, "libcudart.so.12": "/opt/cu12/lib/libcudart.so.12"}


def _gate(
    tmp_path: Path,
    libs: Mapping[str, str | None],
    *,
    torch_cuda: str,
    nixl: str,
    cu12: Mapping[str, Any] | None,
    cu13: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """A Llama 3 gated with NIXL disaggregation on SGLang 0.5.23 (torch of CUDA `torch_cuda`), nixl `nixl`, nixl-cu12
    `cu12` and nixl-cu13 `cu13` (None: left out of the list)."""
    facts = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(facts.read_text())
    packages = doc["facts"]["packages"]
    packages["torch"]["cuda"] = torch_cuda
    packages["nixl"] = {"installed": True, "version": nixl}
    packages["mooncake-transfer-engine"] = {"installed": False}
    for name, entry in (("nixl-cu12", cu12), ("nixl-cu13", cu13)):
        packages.pop(name, None)
        if entry is not None:
            packages[name] = dict(entry)
    doc["facts"]["cuda_libs"] = {"ld_cache": "file", **libs}
    facts.write_text(json.dumps(doc))
    return gate_tp8(facts, model_dir(tmp_path, "m", LLAMA3), *NIXL)


def _check(doc: dict[str, Any]) -> dict[str, Any]:
    found = [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == "transfer-package"]
    assert found, doc.get("preflight")
    check: dict[str, Any] = found[0]
    return check


@pytest.mark.parametrize("nixl", ["1.1.0", "1.5.2"])
def test_cuda12_torch_with_nixl_cu13_alone_is_refused(tmp_path: Path, nixl: str) -> None:
    # fails before irev71's fix: ok and allowed
    each = {"installed": True, "version": nixl}
    doc = _gate(tmp_path, ALL_LIBS, torch_cuda="12.8", nixl=nixl, cu12={"installed": False}, cu13=each)
    check = _check(doc)
    assert check["status"] == "fail", check
    assert doc["decision"] == "refuse"
    assert "nixl-cu12 is not installed" in check["message"] and "ImportError" in check["message"]


def test_cuda12_torch_with_nixl_cu12_not_given_is_unknown(tmp_path: Path) -> None:
    # fails before irev71's fix: ok (the list does not name nixl-cu12)
    each = {"installed": True, "version": "1.5.2"}
    doc = _gate(tmp_path, ALL_LIBS, torch_cuda="12.8", nixl="1.5.2", cu12=None, cu13=each)
    check = _check(doc)
    assert check["status"] == "unknown", check
    assert "whether nixl-cu12 is installed" in check["message"]


@pytest.mark.parametrize("cu13", [{"installed": False}, {"installed": True, "version": "1.5.2"}])
def test_cuda12_torch_with_nixl_cu12_passes(tmp_path: Path, cu13: Mapping[str, Any]) -> None:
    each = {"installed": True, "version": "1.5.2"}
    doc = _gate(tmp_path, ALL_LIBS, torch_cuda="12.8", nixl="1.5.2", cu12=each, cu13=cu13)
    assert _check(doc)["status"] == "ok"


def test_a_torch_major_no_backend_serves_is_not_ok(tmp_path: Path) -> None:
    # a torch of a CUDA major no nixl-cuN distribution the entry knows serves: nixl raises ImportError; not ok
    each = {"installed": True, "version": "1.5.2"}
    doc = _gate(tmp_path, ALL_LIBS, torch_cuda="11.8", nixl="1.5.2", cu12=each, cu13=each)
    assert _check(doc)["status"] in ("fail", "unknown")
