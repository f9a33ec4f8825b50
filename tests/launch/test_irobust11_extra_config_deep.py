"""irobust11: --hicache-storage-backend-extra-config given as text nested deeper than json.loads goes (a RecursionError,
not a ValueError) ended the gate with an internal error (exit 4); it is unknown now, on the storage_configs entry's
path (mooncake) and on every other backend's (hf3fs), through the command line as a user gives it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import run_stackcheck, scrubbed_environ

from stackcheck.knowledge.loader import load
from stackcheck.verdicts.package_checks import check_storage_config

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
DEEP = "[" * 100_000
DEEP_OBJECT = '{"a":' * 50_000 + "1" + "}" * 50_000


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


@pytest.mark.parametrize("backend", ["mooncake", "hf3fs"])
@pytest.mark.parametrize("text", [DEEP, DEEP_OBJECT], ids=["array", "object"])
def test_deep_text_is_unknown(backend: str, text: str, data: Any) -> None:
    got = check_storage_config(backend, text, {}, data, "0.5.23", lambda p: ("unread", "not here"))
    assert got is not None and got.status == "unknown", got
    assert "\n" not in got.message


@pytest.mark.parametrize("backend", ["mooncake", "hf3fs"])
def test_the_gate_answers_without_an_internal_error(backend: str, tmp_path: Path) -> None:
    r = run_stackcheck("gate", "--facts", str(CASES / "b200-cubins-offline" / "facts.json"), "--cwd", str(tmp_path),
                       "--dry-run", "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path",
                       "/nowhere/model", "--enable-hierarchical-cache", "--hicache-storage-backend", backend,
                       "--hicache-storage-backend-extra-config", DEEP)  # fmt: skip
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    found = [p for p in doc["preflight"]["checks"] if p.get("check") == "storage-config"]
    assert [p["status"] for p in found] == ["unknown"], found
