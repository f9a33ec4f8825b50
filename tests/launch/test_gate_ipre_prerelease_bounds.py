"""ipre: a pre-release or dev build of a release V at a range's bound is judged by neither side of it (issue 16).

nixl 0.7.1 on only forwards its import to nixl_cu12 / nixl_cu13 (preflight.json transfer_packages, the nixl entry's
`backends`, from_version 0.7.1). PEP 440 puts 0.7.1rc1 outside `>=0.7.1`, so on the parent a nixl 0.7.1rc1 without
either backend wheel was judged as a release before 0.7.1 (it ships nixl._api itself) and
`--disaggregation-transfer-backend nixl` was allowed; which code 0.7.1rc1 has is not known: unknown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, NIXL_SYSTEM_LIBS, gate_tp8, model_dir, release_box

CHECK = "transfer-package"
NIXL = ("--disaggregation-mode", "prefill", "--disaggregation-transfer-backend", "nixl")
MISSING = {"installed": False}


def _nixl_check(tmp_path: Path, nixl: str) -> tuple[dict[str, Any], dict[str, Any]]:
    # SGLang 0.5.14: 0.5.15+ also need nixl's Python API of 1.2.0 (ifc52's api_floor), which these releases predate
    facts = release_box(tmp_path, "0.5.14", "9.0")
    doc = json.loads(facts.read_text())
    packages = doc["facts"]["packages"]
    packages.update({"nixl": {"installed": True, "version": nixl}, "nixl-cu12": MISSING, "nixl-cu13": MISSING,
                     "mooncake-transfer-engine": MISSING})  # fmt: skip
    # (and a CUDA 12 runtime on the loader's path: nixl 0.6.x's own bundled UCX needs libcudart.so.12, unknown on a
    # CUDA 13 torch without it since igap50; the forwarder's bounds are this file's subject)
    libs = {**MOONCAKE_SYSTEM_LIBS, **NIXL_SYSTEM_LIBS, "libcudart.so.12": "/usr/local/cuda-12.8/lib64/libcudart.so.12"}
    doc["facts"].setdefault("cuda_libs", {}).update(libs)
    facts.write_text(json.dumps(doc))
    decision = gate_tp8(facts, model_dir(tmp_path, "m", LLAMA3), *NIXL)
    found = [c for c in (decision.get("preflight") or {}).get("checks") or [] if c.get("check") == CHECK]
    assert found, decision.get("preflight")
    return decision, found[0]


@pytest.mark.parametrize("nixl", ["0.7.1rc1", "0.7.1.dev0", "0.7.1a1", "0.7.1rc1.post1"])
def test_a_pre_release_of_the_forwarding_release_is_not_allowed(tmp_path: Path, nixl: str) -> None:
    # on the parent: ok and allowed
    decision, check = _nixl_check(tmp_path, nixl)
    assert check["status"] == "unknown", check
    assert f"{nixl} is a pre-release or dev build of 0.7.1" in check["message"]
    assert decision["decision"] != "allow"


@pytest.mark.parametrize(
    ("nixl", "status"), [("0.6.1", "ok"), ("0.6.2rc1", "ok"), ("0.7.1", "fail"), ("0.8.0rc1", "fail")]
)
def test_releases_the_bound_does_not_split_are_judged(tmp_path: Path, nixl: str, status: str) -> None:
    _decision, check = _nixl_check(tmp_path, nixl)
    assert check["status"] == status, check
