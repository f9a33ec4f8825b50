"""irev72 (a review of igap51's reading of the file SGLANG_HICACHE_MOONCAKE_CONFIG_PATH names): a file nested deeper
than Python's recursion limit made json.loads raise RecursionError, which the reader did not catch: the gate ended in
a traceback (exit 4; docs/helpers.md: never a traceback)."""

from __future__ import annotations

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


def test_a_deeply_nested_file_is_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    check = _check(tmp_path, monkeypatch, "0.5.20", "[" * 200_000 + "]" * 200_000)
    # json.load in the server raises RecursionError too, which from_file turns into RuntimeError: the launch fails,
    # but whether the server's stack is as deep as this one's is not read: not ok either way
    assert check["status"] in ("fail", "unknown"), check
    assert check["decision"] != "allow"
