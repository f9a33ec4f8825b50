"""ifc54 (the fifty-fourth fact-check sample, row m3: SGLang 0.5.23, `env MOONCAKE_CLIENT=10.0.0.2:50052` before
`--enable-hierarchical-cache --hicache-storage-backend mooncake`, allowed with storage-config ok). A client address
alone names no master: SGLang 0.5.7-0.5.23 take it only in standalone mode (standalone_storage, False unless
MOONCAKE_STANDALONE_STORAGE is true for the environment's configuration or the key is true in the extra config / file:
0.5.23 mooncake_store.py:182-186, :208-226, :264-268 read from the defaults there, not the variable), where the store
calls setup_dummy with the client's address (:498-508); otherwise it calls setup(..., master_server_address, ...)
with the master None (:567-577), and Mooncake's binding types that argument `str` (mooncake-transfer-engine
0.3.13.post1 store.so: the positional setup's signature `({%}, {str}, {str}, {int}, {int}, {str}, {str}, {str},
{object}, ...)`): a TypeError SGLang re-raises (:581-587; the controller re-raises, cache_controller.py:689-696). Not
run (no GPU, no libcuda here): unknown, not ok, where the client is named without the standalone mode; ok with it or
with a master."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, gate_checkpoint

HICACHE_MOONCAKE = ("--enable-hierarchical-cache", "--hicache-storage-backend", "mooncake")
NAMES = ("MOONCAKE_MASTER", "MOONCAKE_CLIENT", "SGLANG_HICACHE_MOONCAKE_CONFIG_PATH", "MOONCAKE_STANDALONE_STORAGE")
EXTRA = "--hicache-storage-backend-extra-config"


@pytest.fixture(autouse=True)
def _no_mooncake_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)


def _check(tmp_path: Path, release: str, *flags: str) -> dict[str, Any]:
    doc = gate_checkpoint(tmp_path, release, "9.0", LLAMA3, *HICACHE_MOONCAKE, *flags)
    check = next((c for c in doc["preflight"]["checks"] if c.get("check") == "storage-config"), None)
    assert check is not None
    return dict(check)


@pytest.mark.parametrize("release", ["0.5.7", "0.5.18", "0.5.23"])
def test_client_env_alone_is_not_ok(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str) -> None:
    # row m3; before: ok
    monkeypatch.setenv("MOONCAKE_CLIENT", "10.0.0.2:50052")
    check = _check(tmp_path, release)
    assert check["status"] == "unknown", check
    assert "standalone" in json.dumps(check)


@pytest.mark.parametrize("value", ["1", "true"])
def test_client_env_with_standalone_is_ok(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("MOONCAKE_CLIENT", "10.0.0.2:50052")
    monkeypatch.setenv("MOONCAKE_STANDALONE_STORAGE", value)
    assert _check(tmp_path, "0.5.23")["status"] == "ok"


def test_client_env_beside_a_master_is_ok(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOONCAKE_CLIENT", "10.0.0.2:50052")
    monkeypatch.setenv("MOONCAKE_MASTER", "10.0.0.1:50051")
    assert _check(tmp_path, "0.5.23")["status"] == "ok"


def test_client_in_extra_config_alone_is_not_ok(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the extra config reads standalone_storage from itself: the variable does not count there
    monkeypatch.setenv("MOONCAKE_STANDALONE_STORAGE", "1")
    check = _check(tmp_path, "0.5.23", EXTRA, json.dumps({"client_server_address": "10.0.0.2:50052"}))
    assert check["status"] == "unknown", check


def test_client_in_extra_config_with_standalone_is_ok(tmp_path: Path) -> None:
    extra = {"client_server_address": "10.0.0.2:50052", "standalone_storage": True}
    assert _check(tmp_path, "0.5.23", EXTRA, json.dumps(extra))["status"] == "ok"


def test_client_in_a_file_alone_is_not_ok(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "mooncake.json"
    path.write_text(json.dumps({"client_server_address": "10.0.0.2:50052"}))
    monkeypatch.setenv("SGLANG_HICACHE_MOONCAKE_CONFIG_PATH", str(path))
    assert _check(tmp_path, "0.5.23")["status"] == "unknown"
    path.write_text(json.dumps({"client_server_address": "10.0.0.2:50052", "standalone_storage": True}))
    assert _check(tmp_path, "0.5.23")["status"] == "ok"


def test_a_master_alone_stays_ok(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOONCAKE_MASTER", "10.0.0.1:50051")
    assert _check(tmp_path, "0.5.23")["status"] == "ok"
    extra = json.dumps({"master_server_address": "10.0.0.1:50051", "protocol": "tcp"})
    assert _check(tmp_path, "0.5.18", EXTRA, extra)["status"] == "ok"
