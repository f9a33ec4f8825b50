"""igap56: SGLang 0.5.9-0.5.23 take --hicache-storage-backend-extra-config `@PATH`: the HiCache cache opens PATH (from
the server's working directory) and loads it by its extension (.json, .toml, .yaml / .yml; any other raises
ValueError at startup; 0.5.9 hiradix_cache.py _parse_storage_backend_extra_config, 0.5.23 hybrid_cache_controller.py
parse_storage_backend_extra_config). The storage-config check read only JSON text, so `@mooncake.json` was unknown
whatever the file held, and a file that was missing or named no store never failed. Now a .json file is read where
the launch names it (relative to its directory), a missing or unparsable one fails, an unsupported extension fails,
.toml / .yaml stay unknown, and a PD decode server's offload path (json.loads of the text as it is) stays unknown.
The store files are written here in the shape of a Mooncake configuration (no upstream file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, gate_checkpoint

from stackcheck.knowledge.loader import load
from stackcheck.verdicts.package_checks import check_storage_config

HICACHE_MOONCAKE = ("--enable-hierarchical-cache", "--hicache-storage-backend", "mooncake")
NAMES = ("MOONCAKE_MASTER", "MOONCAKE_CLIENT", "SGLANG_HICACHE_MOONCAKE_CONFIG_PATH")
STORE = {"master_server_address": "10.0.0.1:50051", "protocol": "tcp"}


@pytest.fixture(autouse=True)
def _no_mooncake_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _reader(files: dict[str, Any]) -> Any:
    def read(path: str) -> tuple[str, Any]:
        got: tuple[str, Any] = files.get(path, ("absent", f"{path} does not exist (open fails)"))
        return got

    return read


def test_a_json_file_naming_the_store_is_ok(data: Any) -> None:
    # fails before: unknown (the text "@..." is no JSON object)
    got = check_storage_config("mooncake", "@store.json", {}, data, "0.5.23", _reader({"store.json": ("read", STORE)}))
    assert got is not None and got.status == "ok", got


@pytest.mark.parametrize("release", ["0.5.9", "0.5.14", "0.5.23"])
def test_a_missing_file_fails(release: str, data: Any) -> None:
    # fails before: unknown
    got = check_storage_config("mooncake", "@/etc/store.json", {"MOONCAKE_MASTER": "h:1"}, data, release, _reader({}))
    assert got is not None and got.status == "fail" and "FileNotFoundError" in got.message, got


def test_a_file_without_the_store_falls_through_as_the_text_does(data: Any) -> None:
    read = _reader({"s.json": ("read", {"protocol": "tcp"})})
    got = check_storage_config("mooncake", "@s.json", {}, data, "0.5.23", read)
    assert got is not None and got.status == "fail" and got.observed == "no configuration given", got
    got = check_storage_config("mooncake", "@s.json", {"MOONCAKE_MASTER": "h:1"}, data, "0.5.23", read)
    assert got is not None and got.status == "ok", got


def test_other_forms(data: Any) -> None:
    read = _reader({"s.toml": ("read", STORE), "x.json": ("unread", "not on the filesystem the gate reads"),
                    "l.json": ("read", [1]), "s.yml": ("missing", "s.yml is not JSON (json.load raises)")})  # fmt: skip
    status = {text: getattr(check_storage_config("mooncake", text, {}, data, "0.5.23", read), "status", None)
              for text in ("@s.toml", "@s.yml", "@s.yaml", "@x.json", "@l.json", "@store.ini", "@store")}  # fmt: skip
    assert status == {"@s.toml": "unknown", "@s.yml": "unknown", "@s.yaml": "fail", "@x.json": "unknown",
                      "@l.json": "fail", "@store.ini": "fail", "@store": "fail"}  # fmt: skip
    # (irev78: a JSON array fails, the cache's `.pop` on it raises: package_checks.cache_parse_problem)
    # (0.5.7 / 0.5.8: no @ form read; a PD decode offload path: json.loads of the text; both unknown as before)
    good = _reader({"store.json": ("read", STORE)})
    assert (
        getattr(check_storage_config("mooncake", "@store.json", {}, data, "0.5.8", good), "status", None) == "unknown"
    )
    got = check_storage_config("mooncake", "@store.json", {}, data, "0.5.23", good, extra_file_read=False)
    assert got is not None and got.status == "unknown"


def _gate(tmp_path: Path, extra: str) -> dict[str, Any]:
    doc = gate_checkpoint(tmp_path, "0.5.23", "9.0", LLAMA3, *HICACHE_MOONCAKE,
                          "--hicache-storage-backend-extra-config", extra)  # fmt: skip
    found: dict[str, Any] | None = next(
        (c for c in doc["preflight"]["checks"] if c.get("check") == "storage-config"), None
    )
    assert found is not None, doc["preflight"]
    return found


def test_the_gate_reads_the_file_it_names(tmp_path: Path) -> None:
    store = tmp_path / "store.json"
    store.write_text(json.dumps(STORE))
    assert _gate(tmp_path, f"@{store}")["status"] == "ok"
    store.write_text(json.dumps({"protocol": "rdma"}))
    assert _gate(tmp_path, f"@{store}")["status"] == "fail"
    store.write_text("{not json")
    assert _gate(tmp_path, f"@{store}")["status"] == "fail"
    # (gate --facts: a relative path is the server's directory's, not known there)
    assert _gate(tmp_path, "@store.json")["status"] == "unknown"
