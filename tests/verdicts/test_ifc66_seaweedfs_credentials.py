"""ifc66 (the sixty-sixth fact-check sample, rows w1-w3): `--hicache-storage-backend seaweedfs` with an extra config
naming an http(s) endpoint and no credentials was ok. SGLang 0.5.22 / 0.5.23's seaweedfs_store.py hands boto3 an
access key only where the extra config gives access_key and secret_key, and builds the store with a head_bucket,
re-raising anything but a missing bucket; botocore signs every request and raises NoCredentialsError (no request sent)
where its chain finds none (run with boto3 1.44.18 against a local HTTP server). The chain's environment variables
are read here; its files (~/.aws/credentials, profiles) and metadata endpoints are not: such a launch is unknown now."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.knowledge.loader import load
from stackcheck.verdicts.package_checks import check_storage_config

ENDPOINT = {"endpoint": "http://10.0.0.1:8333"}
KEYS = {"access_key": "k", "secret_key": "s"}
ENV = {"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"}


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _status(extra: str, env: dict[str, str], data: Any, release: str = "0.5.23", file: Any = None) -> str | None:
    got = check_storage_config("seaweedfs", extra, env, data, release, lambda _p: ("read", file))
    return None if got is None else got.status


@pytest.mark.parametrize(
    ("config", "env"),
    [(ENDPOINT, {}), ({"endpoint": "http://user:pw@10.0.0.1:8333"}, {}), ({"endpoint": "HTTP://10.0.0.1:8333/"}, {}),
     ({**ENDPOINT, "access_key": "k"}, {}), ({**ENDPOINT, "access_key": "k", "secret_key": ""}, {}),
     ({**ENDPOINT, "aws_access_key_id": "k", "aws_secret_access_key": "s"}, {}),  # (not the struct's names: dropped)
     (ENDPOINT, {"AWS_ACCESS_KEY_ID": "k"}), (ENDPOINT, {**ENV, "AWS_SECRET_ACCESS_KEY": ""}),
     (ENDPOINT, {"AWS_PROFILE": "seaweed"})],
)  # fmt: skip
@pytest.mark.parametrize("release", ["0.5.22", "0.5.23"])
def test_no_credentials_read_is_unknown(config: dict[str, Any], env: dict[str, str], release: str, data: Any) -> None:
    assert _status(json.dumps(config), env, data, release) == "unknown"  # fails before: ok


def test_the_same_in_an_at_file(data: Any) -> None:
    assert _status("@/cfg/sw.json", {}, data, file=ENDPOINT) == "unknown"  # fails before: ok
    assert _status("@/cfg/sw.json", {}, data, file={**ENDPOINT, **KEYS}) == "ok"


@pytest.mark.parametrize(("config", "env"), [({**ENDPOINT, **KEYS}, {}), (ENDPOINT, ENV)])
def test_keys_in_the_config_or_the_environment_stay_ok(config: dict[str, Any], env: dict[str, str], data: Any) -> None:
    assert _status(json.dumps(config), env, data) == "ok"


def test_the_gate_does_not_allow_it(tmp_path: Path) -> None:
    doc = json.loads(release_box(tmp_path, "0.5.23", "9.0").read_text())
    doc["facts"]["packages"]["boto3"] = {"installed": True, "version": "1.40.0", "dist_version": "1.40.0",
                                         "location": "/usr/lib/python3/dist-packages", "copies": 1}  # fmt: skip
    box = tmp_path / "box.json"
    box.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "2",
            "--enable-hierarchical-cache", "--hicache-storage-backend", "seaweedfs",
            "--hicache-storage-backend-extra-config", json.dumps(ENDPOINT)]  # fmt: skip
    _, got = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    checks = {c.get("check"): c.get("status") for c in got["preflight"]["checks"]}
    assert checks.get("storage-config") == "unknown", checks
    assert got["decision"] != "allow"  # fails before: allow
