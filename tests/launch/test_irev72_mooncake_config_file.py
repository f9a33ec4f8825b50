"""irev72 (a review of igap51's Mooncake store configuration): a file SGLANG_HICACHE_MOONCAKE_CONFIG_PATH names, or an
extra config, whose key holds null, an empty string or no string passed the storage-config check as ok, though SGLang
tests only that the key is in the file (from_file: 0.5.6 mooncake_store.py:67, 0.5.23 :152-158) and hands the value to
Mooncake's setup as the address, whose outcome was not read: unknown, as for an empty MOONCAKE_MASTER."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, gate_checkpoint

HICACHE_MOONCAKE = ("--enable-hierarchical-cache", "--hicache-storage-backend", "mooncake")
NAMES = ("MOONCAKE_MASTER", "MOONCAKE_CLIENT", "SGLANG_HICACHE_MOONCAKE_CONFIG_PATH")


@pytest.fixture(autouse=True)
def _no_mooncake_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)


def _check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str, text: str) -> dict[str, Any]:
    config = tmp_path / "mooncake.json"
    config.write_text(text)
    monkeypatch.setenv("SGLANG_HICACHE_MOONCAKE_CONFIG_PATH", str(config))
    doc = gate_checkpoint(tmp_path, release, "9.0", LLAMA3, *HICACHE_MOONCAKE)
    found: dict[str, Any] | None = next(
        (c for c in doc["preflight"]["checks"] if c.get("check") == "storage-config"), None
    )
    assert found is not None, doc["preflight"]
    found["decision"] = doc["decision"]
    return found


@pytest.mark.parametrize(
    ("release", "content"),
    [
        ("0.5.6", {"master_server_address": None}),
        ("0.5.20", {"master_server_address": ""}),
        ("0.5.23", {"client_server_address": None}),
        ("0.5.23", {"master_server_address": 7}),
    ],
)
def test_a_key_without_an_address_is_not_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str, content: dict[str, Any]
) -> None:
    check = _check(tmp_path, monkeypatch, release, json.dumps(content))
    assert check["status"] == "unknown", check
    assert check["decision"] != "allow"


@pytest.mark.parametrize(
    ("release", "content"),
    [
        ("0.5.6", {"master_server_address": "10.0.0.1:50051"}),
        # ifc54: a client alone names the store only in standalone mode
        (
            "0.5.23",
            {"master_server_address": None, "client_server_address": "10.0.0.2:50052", "standalone_storage": True},
        ),
    ],
)
def test_a_key_with_an_address_stays_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str, content: dict[str, Any]
) -> None:
    assert _check(tmp_path, monkeypatch, release, json.dumps(content))["status"] == "ok"
