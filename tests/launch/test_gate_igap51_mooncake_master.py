"""igap51: SGLang's Mooncake HiCache store without its master. `--enable-hierarchical-cache --hicache-storage-backend
mooncake` builds MooncakeStore as the HiCache controller starts, and its configuration comes, in this order, from
--hicache-storage-backend-extra-config (0.5.2+: master_server_address; 0.5.7+: or client_server_address), else the JSON
file SGLANG_HICACHE_MOONCAKE_CONFIG_PATH names (0.5.3+; 0.5.6+ require the key in it), else MOONCAKE_MASTER (0.5.7+:
or MOONCAKE_CLIENT); 0.5.1-0.5.5 read the variables with os.getenv (empty is none), 0.5.6+ with environ's is_set
(empty is set). Where none names the store the release raises ValueError at startup (mooncake_store.py of every
release, manifests/preflight.json storage_configs). Before, the gate's storage-config check judged 0.5.18-0.5.23 only
(0.5.1-0.5.17 were allowed) and took SGLANG_HICACHE_MOONCAKE_CONFIG_PATH as enough without reading the file, which is
read before MOONCAKE_MASTER: a file without the master was allowed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, gate_checkpoint

HICACHE_MOONCAKE = ("--enable-hierarchical-cache", "--hicache-storage-backend", "mooncake")
NAMES = ("MOONCAKE_MASTER", "MOONCAKE_CLIENT", "SGLANG_HICACHE_MOONCAKE_CONFIG_PATH")
RELEASES = [
    "0.5.1", "0.5.1.post3", "0.5.2", "0.5.3", "0.5.4", "0.5.5", "0.5.6", "0.5.7", "0.5.8", "0.5.9", "0.5.10",
    "0.5.11", "0.5.12", "0.5.13", "0.5.14", "0.5.15", "0.5.16", "0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.21",
    "0.5.22", "0.5.23",
]  # fmt: skip


@pytest.fixture(autouse=True)
def _no_mooncake_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)


def _check(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in doc["preflight"]["checks"] if c.get("check") == "storage-config"), None)


def _gate(tmp_path: Path, release: str, *flags: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    doc = gate_checkpoint(tmp_path, release, "9.0", LLAMA3, *HICACHE_MOONCAKE, *flags)
    return doc, _check(doc)


@pytest.mark.parametrize("release", RELEASES)
def test_no_master_anywhere_is_refused_on_every_release(tmp_path: Path, release: str) -> None:
    # before: 0.5.1-0.5.17 had no storage-config check (None)
    doc, check = _gate(tmp_path, release)
    assert check is not None and check["status"] == "fail", check
    assert doc["decision"] == "refuse"
    assert "storage-config (--hicache-storage-backend mooncake)" in json.dumps(doc["reasons"])


@pytest.mark.parametrize(
    ("release", "status"),
    [("0.5.1", "fail"), ("0.5.2", "fail"), ("0.5.5", "fail"), ("0.5.6", "unknown"), ("0.5.20", "unknown")],
)
def test_an_empty_master(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str, status: str) -> None:
    # os.getenv releases take '' as unset (ValueError); is_set releases hand '' to Mooncake's setup (not read).
    # before: 0.5.20 ok (set), 0.5.1-0.5.6 not judged
    monkeypatch.setenv("MOONCAKE_MASTER", "")
    _, check = _gate(tmp_path, release)
    assert check is not None and check["status"] == status, check


# ifc54: a client alone (no standalone mode, no master) is unknown, not ok: the store's setup gets a master of None
@pytest.mark.parametrize(("release", "status"), [("0.5.6", "fail"), ("0.5.7", "unknown"), ("0.5.23", "unknown")])
def test_mooncake_client_from_0_5_7(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str, status: str) -> None:
    monkeypatch.setenv("MOONCAKE_CLIENT", "10.0.0.2:50052")
    _, check = _gate(tmp_path, release)
    assert check is not None and check["status"] == status, check


@pytest.mark.parametrize(("release", "status"), [("0.5.2", "ok"), ("0.5.6", "fail"), ("0.5.7", "unknown")])
def test_extra_config_keys_per_release(tmp_path: Path, release: str, status: str) -> None:
    key = "master_server_address" if release == "0.5.2" else "client_server_address"
    _, check = _gate(tmp_path, release, "--hicache-storage-backend-extra-config", json.dumps({key: "10.0.0.1:50051"}))
    assert check is not None and check["status"] == status, check


@pytest.mark.parametrize(
    ("release", "content", "status"),
    [
        ("0.5.20", {"master_server_address": "10.0.0.1:50051"}, "ok"),
        ("0.5.20", {"client_server_address": "10.0.0.1:50052"}, "unknown"),  # ifc54: a client alone, not standalone
        ("0.5.20", {"client_server_address": "10.0.0.1:50052", "standalone_storage": True}, "ok"),
        ("0.5.20", {"protocol": "rdma"}, "fail"),  # before: ok (the file not read), MOONCAKE_MASTER not reached
        ("0.5.6", {"client_server_address": "10.0.0.1:50052"}, "fail"),  # 0.5.6 requires master_server_address
        ("0.5.4", {"protocol": "rdma"}, "unknown"),  # 0.5.3-0.5.5 check no key: None reaches the store's setup
        ("0.5.4", {"master_server_address": "10.0.0.1:50051"}, "ok"),
        ("0.5.20", "not json", "fail"),  # json.load raises: RuntimeError
    ],
)
def test_the_config_file_is_read_before_the_master_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str, content: Any, status: str
) -> None:
    config = tmp_path / "mooncake.json"
    config.write_text(content if isinstance(content, str) else json.dumps(content))
    monkeypatch.setenv("SGLANG_HICACHE_MOONCAKE_CONFIG_PATH", str(config))
    monkeypatch.setenv("MOONCAKE_MASTER", "10.0.0.1:50051")  # not read where the file variable is set
    _, check = _gate(tmp_path, release)
    assert check is not None and check["status"] == status, check


def test_a_config_file_not_on_this_filesystem_is_unknown_under_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # gate --facts: the box the facts describe may hold the file (before: ok without reading it)
    monkeypatch.setenv("SGLANG_HICACHE_MOONCAKE_CONFIG_PATH", str(tmp_path / "elsewhere" / "mooncake.json"))
    doc, check = _gate(tmp_path, "0.5.20")
    assert check is not None and check["status"] == "unknown", check
    assert "not on the filesystem the gate reads" in check["message"]
    assert doc["decision"] != "allow"


@pytest.mark.parametrize(("release", "status"), [("0.5.4", "fail"), ("0.5.6", "fail")])
def test_an_empty_config_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str, status: str) -> None:
    # 0.5.3-0.5.5: os.getenv('') is no file, so the environment is read (no master: ValueError); 0.5.6+: is_set, and
    # open('') raises (RuntimeError)
    monkeypatch.setenv("SGLANG_HICACHE_MOONCAKE_CONFIG_PATH", "")
    _, check = _gate(tmp_path, release)
    assert check is not None and check["status"] == status, check
    assert ("an empty path" in check["observed"]) is (release == "0.5.6"), check


def test_the_environment_is_not_this_tests_own() -> None:
    for name in NAMES:
        assert name not in os.environ


def test_the_hicache_alias_of_0_5_23(tmp_path: Path) -> None:
    # --enable-hicache is 0.5.23's alias of --enable-hierarchical-cache (before: the store was not judged)
    flags = ("--enable-hicache", "--hicache-storage-backend", "mooncake")
    doc = gate_checkpoint(tmp_path, "0.5.23", "9.0", LLAMA3, *flags)
    check = _check(doc)
    assert check is not None and check["status"] == "fail", check


@pytest.mark.parametrize("release", ["0.5.3", "0.5.12", "0.5.23"])
def test_a_decode_server_offloading_to_the_store(tmp_path: Path, release: str) -> None:
    # a PD decode server with --disaggregation-decode-enable-offload-kvcache builds the HiCache controller with the
    # storage backend at start (before: not judged without --enable-hierarchical-cache)
    flags = ("--disaggregation-mode", "decode", "--disaggregation-decode-enable-offload-kvcache",
             "--hicache-storage-backend", "mooncake")  # fmt: skip
    check = _check(gate_checkpoint(tmp_path, release, "9.0", LLAMA3, *flags))
    assert check is not None and check["status"] == "fail", check
    (tmp_path / "p").mkdir()
    prefill = _check(gate_checkpoint(tmp_path / "p", release, "9.0", LLAMA3, "--disaggregation-mode", "prefill",
                                     "--hicache-storage-backend", "mooncake"))  # fmt: skip
    assert prefill is None
