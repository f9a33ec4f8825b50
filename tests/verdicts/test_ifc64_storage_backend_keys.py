"""ifc64 (the sixty-fourth fact-check sample, rows k1-k4): `--hicache-storage-backend seaweedfs` and `tensorcast` were
allowed with their packages installed whatever the extra config held. SGLang's SeaweedFS backend (0.5.22+) requires
`endpoint` in --hicache-storage-backend-extra-config (seaweedfs_store.py SeaweedFSConfig: msgspec raises without it)
and its TensorCast backend (0.5.21+) a `tensorcast` object with `daemon_address` (tensorcast_store/host_allocator.py:
ValueError without the extra config or the object, pydantic without the key), both read as HiCache builds them at
startup; neither reads an environment variable or a file of its own. Now a missing key fails (preflight.json
storage_configs entries), a non-string value is unknown, a non-empty string is ok."""

from __future__ import annotations

import json
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.verdicts.package_checks import check_storage_config

S3 = {"endpoint": "http://10.0.0.2:8333"}
TC = {"tensorcast": {"daemon_address": "10.0.0.3:7777"}}

#: (ifc66) credentials in the server's environment: without any, SeaweedFS is unknown (storage_configs credentials)
AWS = {"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _status(backend: str, extra: str | None, data: Any, release: str = "0.5.23", file: Any = None) -> str | None:
    def reader(_path: str) -> tuple[str, Any]:
        return "read", file

    got = check_storage_config(backend, extra, AWS, data, release, reader)
    return None if got is None else got.status


MISSING = [None, "{}", json.dumps({"prefetch_threshold": 256}),
           json.dumps({"master_server_address": "10.0.0.1:50051", "protocol": "tcp"})]  # fmt: skip


@pytest.mark.parametrize("extra", MISSING)
@pytest.mark.parametrize(("backend", "release"), [("seaweedfs", "0.5.22"), ("seaweedfs", "0.5.23"),
                                                  ("tensorcast", "0.5.21"), ("tensorcast", "0.5.23")])  # fmt: skip
def test_without_its_key_the_backend_fails(backend: str, release: str, extra: str | None, data: Any) -> None:
    assert _status(backend, extra, data, release) == "fail"  # fails before: None (no entry: allowed)


def test_the_other_backends_key_is_not_its_own(data: Any) -> None:
    assert _status("seaweedfs", json.dumps(TC), data) == "fail"
    assert _status("tensorcast", json.dumps(S3), data) == "fail"
    assert _status("tensorcast", json.dumps({"daemon_address": "10.0.0.3:7777"}), data) == "fail"  # (not nested)


def test_the_key_given_is_ok(data: Any) -> None:
    assert _status("seaweedfs", json.dumps({**S3, "prefetch_threshold": 64}), data) == "ok"
    assert _status("tensorcast", json.dumps(TC), data, "0.5.21") == "ok"
    assert _status("seaweedfs", "@/cfg/s3.json", data, file=S3) == "ok"
    assert _status("tensorcast", "@/cfg/tc.json", data, file={}) == "fail"


@pytest.mark.parametrize(("backend", "value"), [("seaweedfs", {"endpoint": 3}), ("seaweedfs", {"endpoint": " "}),
                                                ("tensorcast", {"tensorcast": {"daemon_address": None, "x": 1}}),
                                                ("tensorcast", {"tensorcast": {"daemon_address": ["h"]}})])  # fmt: skip
def test_a_value_that_is_no_string_is_unknown(backend: str, value: Any, data: Any) -> None:
    assert _status(backend, json.dumps(value), data) in ("unknown", "fail")
    assert _status(backend, json.dumps(value), data) != "ok"


def test_before_the_backend_existed_no_entry_judges_it(data: Any) -> None:
    assert _status("seaweedfs", None, data, "0.5.21") is None
    assert _status("tensorcast", None, data, "0.5.20") is None
