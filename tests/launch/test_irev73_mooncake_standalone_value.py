"""irev73: MOONCAKE_STANDALONE_STORAGE as SGLang's EnvBool reads it (0.5.10 and 0.5.23 environ.py EnvBool.parse:
value.lower() in true / 1 / yes / y, no strip; any other value is a ValueError that EnvField.get turns into the
default, False, with a warning). ifc54's reader stripped the value first: ' true' or 'yes\\n' was taken as the
standalone mode, a client address alone was ok, and SGLang hands Mooncake's setup a master of None (the TypeError
ifc54 infers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, gate_checkpoint

HICACHE_MOONCAKE = ("--enable-hierarchical-cache", "--hicache-storage-backend", "mooncake")
NAMES = ("MOONCAKE_MASTER", "MOONCAKE_CLIENT", "SGLANG_HICACHE_MOONCAKE_CONFIG_PATH", "MOONCAKE_STANDALONE_STORAGE")


@pytest.fixture(autouse=True)
def _no_mooncake_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)


def _status(tmp_path: Path) -> Any:
    doc = gate_checkpoint(tmp_path, "0.5.23", "9.0", LLAMA3, *HICACHE_MOONCAKE)
    return next(c for c in doc["preflight"]["checks"] if c.get("check") == "storage-config")["status"]


@pytest.mark.parametrize("value", [" true", "yes\n", "1 ", "on"])
def test_a_value_sglang_does_not_parse_is_not_standalone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    # fails before the fix for the first three: ok
    monkeypatch.setenv("MOONCAKE_CLIENT", "10.0.0.2:50052")
    monkeypatch.setenv("MOONCAKE_STANDALONE_STORAGE", value)
    assert _status(tmp_path) == "unknown"


@pytest.mark.parametrize("value", ["TRUE", "Y", "yes", "1"])
def test_the_values_sglang_parses_as_true_are_standalone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("MOONCAKE_CLIENT", "10.0.0.2:50052")
    monkeypatch.setenv("MOONCAKE_STANDALONE_STORAGE", value)
    assert _status(tmp_path) == "ok"


def test_the_sgl_spelling_of_the_config_path_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # SGLang 0.5.3rc2+ copy SGL_HICACHE_MOONCAKE_CONFIG_PATH over SGLANG_HICACHE_MOONCAKE_CONFIG_PATH (facts/
    # sgl_prefix.py), which the store reads before MOONCAKE_MASTER (0.5.23 mooncake_store.py:141): a file that is not
    # there ends the start. Fails before the fix: ok (MOONCAKE_MASTER read, the SGL_ spelling not)
    monkeypatch.setenv("MOONCAKE_MASTER", "10.0.0.1:50051")
    monkeypatch.setenv("SGL_HICACHE_MOONCAKE_CONFIG_PATH", str(tmp_path / "absent" / "mooncake.json"))
    assert _status(tmp_path) != "ok"
