"""irobust12: ifc64's seaweedfs / tensorcast entries judged the extra config by its address alone. SGLang builds a
typed configuration from it at startup: SeaweedFS a msgspec Struct converted strictly from the keys that name its
fields (seaweedfs_store.py SeaweedFSConfig), TensorCast a pydantic model with extra="forbid" and strict strings
(tensorcast_store/host_allocator.py TensorcastConfig, its scratch object TensorcastScratchConfig). A config with the
address and a mistyped or misspelt field (`"max_workers": "16"`, `"namepsace": "x"`) raises there, and was ok (a false
pass). Such a config is now unknown; a config of the right types stays ok. Our own configs, in the fields' shape."""

from __future__ import annotations

import json
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.verdicts.package_checks import check_storage_config

S3 = {"endpoint": "http://10.0.0.2:8333"}
TC = {"daemon_address": "10.0.0.3:7777"}

#: (ifc66) credentials in the server's environment: without any, SeaweedFS is unknown (storage_configs credentials)
AWS = {"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _status(backend: str, value: Any, data: Any) -> str | None:
    got = check_storage_config(backend, json.dumps(value), AWS, data, "0.5.23", lambda _p: ("read", None))
    return None if got is None else got.status


@pytest.mark.parametrize(
    "value",
    [{**S3, "max_workers": "16"}, {**S3, "max_workers": True}, {**S3, "bucket": 5}, {**S3, "access_key": 1},
     {**S3, "region": ""}, {**S3, "prefix": None}],
)  # fmt: skip
def test_seaweedfs_with_a_field_of_another_type_is_not_ok(value: Any, data: Any) -> None:
    assert _status("seaweedfs", value, data) == "unknown"  # (fails before: ok)


@pytest.mark.parametrize(
    "value",
    [{**TC, "namepsace": "x"}, {**TC, "namespace": " "}, {**TC, "namespace": 3}, {**TC, "transfer_mode": "rdma"},
     {**TC, "exists_timeout_s": 0}, {**TC, "exists_timeout_s": "30"}, {**TC, "scratch": {"capacity": 1}},
     {**TC, "scratch": {"capacity_bytes": 1.5}}, {**TC, "model_id": ""}],
)  # fmt: skip
def test_tensorcast_with_a_key_it_forbids_or_a_mistyped_field_is_not_ok(value: Any, data: Any) -> None:
    assert _status("tensorcast", {"tensorcast": value}, data) == "unknown"  # (fails before: ok)


def test_configs_of_the_right_types_stay_ok(data: Any) -> None:
    s3 = {**S3, "bucket": "kv", "prefix": "", "region": "eu-west-1", "access_key": None, "max_workers": 8,
          "backend_name": "x", "prefetch_threshold": 64}  # fmt: skip
    assert _status("seaweedfs", s3, data) == "ok"
    tc = {**TC, "namespace": "n", "transfer_mode": "scratch", "model_id": None, "exists_timeout_s": 5,
          "transfer_timeout_s": 2.5, "scratch": {"capacity_bytes": 1 << 20}}  # fmt: skip
    assert _status("tensorcast", {"tensorcast": tc, "prefetch_threshold": 64}, data) == "ok"
    assert _status("tensorcast", {"tensorcast": TC}, data) == "ok"


def test_the_message_names_the_key_not_a_secret(data: Any) -> None:
    got = check_storage_config("seaweedfs", json.dumps({**S3, "secret_key": 12345678}), {}, data, "0.5.23", None)
    assert got is not None and got.status == "unknown"
    assert "secret_key" in got.message and "12345678" not in got.message
