"""ifc65 (the sixty-fifth fact-check sample, row k1): `--hicache-storage-backend seaweedfs` with
`--hicache-storage-backend-extra-config '{"endpoint": "10.0.0.1:8333"}'` was allowed. SGLang's SeaweedFS store hands
endpoint to boto3.client('s3', endpoint_url=...) as it is built at startup (seaweedfs_store.py _make_s3_client), and
botocore raises ValueError 'Invalid endpoint: 10.0.0.1:8333' for a URL in which urlsplit finds no host (no scheme),
one holding a tab or newline, or one whose host is no dotted name of letters, digits and hyphens (botocore
endpoint.py EndpointCreator.create_endpoint, utils.py is_valid_endpoint_url; run here with botocore 1.44.18). Now
such an endpoint fails the storage-config check (preflight.json storage_configs: extra_config_url_keys); another
scheme, an IPv6 or non-ASCII host, or a port that is no number is unknown; an http(s) URL with a host stays ok."""

from __future__ import annotations

import json
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.verdicts.package_checks import check_storage_config, endpoint_url_problem

#: (ifc66) credentials in the server's environment: without any, SeaweedFS is unknown (storage_configs credentials)
AWS = {"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _check(extra: str, data: Any, release: str = "0.5.23", file: Any = None) -> Any:
    def reader(_path: str) -> tuple[str, Any]:
        return "read", file

    return check_storage_config("seaweedfs", extra, AWS, data, release, reader)


NO_HOST = ["10.0.0.1:8333", "seaweed:8333", "localhost:8333", "seaweed", "http://", "//:8333", "http://:8333"]


@pytest.mark.parametrize("endpoint", NO_HOST)
@pytest.mark.parametrize("release", ["0.5.22", "0.5.23"])
def test_an_endpoint_with_no_host_as_a_url_fails(endpoint: str, release: str, data: Any) -> None:
    got = _check(json.dumps({"endpoint": endpoint}), data, release)
    assert got is not None and got.status == "fail", got  # fails before: ok
    assert "Invalid endpoint" in got.message and repr(endpoint) in got.observed


def test_the_same_endpoint_in_an_at_file_fails(data: Any) -> None:
    got = _check("@/cfg/sw.json", data, file={"endpoint": "10.0.0.1:8333"})
    assert got is not None and got.status == "fail", got  # fails before: ok


@pytest.mark.parametrize("endpoint", ["http://10.0.0.1:8333", "https://s3.example.com", "http://seaweed:8333/",
                                      "HTTP://Seaweed-0.svc.cluster.local:8333", "http://seaweed.:8333"])  # fmt: skip
def test_an_http_url_with_a_host_is_ok(endpoint: str, data: Any) -> None:
    got = _check(json.dumps({"endpoint": endpoint, "bucket": "kv"}), data)
    assert got is not None and got.status == "ok", got


@pytest.mark.parametrize("endpoint", ["http://seaweed_0:8333", "http://-seaweed:8333", "http://10.0.0.1:8333\n"])
def test_a_host_botocore_refuses_fails(endpoint: str, data: Any) -> None:
    got = _check(json.dumps({"endpoint": endpoint}), data)
    assert got is not None and got.status == "fail", got


@pytest.mark.parametrize("endpoint", ["ftp://seaweed:8333", "http://[::1]:8333", "http://seaweed:port",
                                      "http://séaweed:8333"])  # fmt: skip
def test_what_is_not_judged_is_unknown(endpoint: str, data: Any) -> None:
    got = _check(json.dumps({"endpoint": endpoint}), data)
    assert got is not None and got.status == "unknown", got


def test_the_reader_alone() -> None:
    assert endpoint_url_problem("http://10.0.0.1:8333") is None
    assert endpoint_url_problem(" http://10.0.0.1:8333") is None  # (urlsplit drops leading blanks, botocore too)
    got = endpoint_url_problem("10.0.0.1:8333")
    assert got is not None and got[0] == "fail"


def test_tensorcast_is_not_read_as_a_url(data: Any) -> None:
    got = check_storage_config("tensorcast", json.dumps({"tensorcast": {"daemon_address": "10.0.0.3:7777"}}), {},
                               data, "0.5.23")  # fmt: skip
    assert got is not None and got.status == "ok", got
