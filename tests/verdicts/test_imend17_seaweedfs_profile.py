"""imend17 (ifc66 / irobust14's leftover): `--hicache-storage-backend seaweedfs` whose credentials come from botocore's
shared files (~/.aws/credentials, AWS_PROFILE / AWS_DEFAULT_PROFILE, AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE)
was unknown. botocore 1.44.18's create_credential_resolver reads, after the environment and the profile's role /
web-identity / SSO providers, the shared credentials file's [NAME] section (SharedCredentialProvider), then the
config file's [profile NAME] / [default] (ConfigProvider). The gate now reads those files' key NAMES on the box the
server runs on (never their values), ok where the profile holds aws_access_key_id and aws_secret_access_key with
values and no provider before them is configured; unknown otherwise, and under --facts / --root / --image. The files
here are this test's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.verdicts.package_checks import aws_profile_keys, check_storage_config

EXTRA = json.dumps({"endpoint": "http://10.0.0.1:8333"})
PAIR = "aws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = notasecret\n"


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def reader(files: dict[str, str]) -> Any:
    def read(path: str) -> tuple[str, str]:
        return ("read", files[path]) if path in files else ("absent", f"{path} does not exist")

    return read


def status(env: dict[str, str], files: dict[str, str] | None, data: Any) -> tuple[str | None, str]:
    got = check_storage_config("seaweedfs", EXTRA, env, data, "0.5.23", None, True,
                               None if files is None else reader(files))  # fmt: skip
    assert got is not None
    return got.status, got.message


HOME = {"HOME": "/home/svc"}


@pytest.mark.parametrize(
    ("env", "files"),
    [(HOME, {"/home/svc/.aws/credentials": "[default]\n" + PAIR}),
     ({**HOME, "AWS_PROFILE": "sw"}, {"/home/svc/.aws/credentials": "[default]\n[sw]\n" + PAIR}),
     ({**HOME, "AWS_SHARED_CREDENTIALS_FILE": "/etc/sw/creds"}, {"/etc/sw/creds": "# mine\n[default]\n" + PAIR}),
     ({**HOME, "AWS_CONFIG_FILE": "/etc/sw/config", "AWS_PROFILE": "sw"},
      {"/etc/sw/config": "[profile sw]\nregion = us-east-1\n" + PAIR}),
     (HOME, {"/home/svc/.aws/config": "[default]\n" + PAIR.replace(" = ", ": ")})],
)  # fmt: skip
def test_a_profile_holding_the_pair_is_ok(env: dict[str, str], files: dict[str, str], data: Any) -> None:
    got = status(env, files, data)
    assert got[0] == "ok", got  # fails before: unknown (the files never read)


@pytest.mark.parametrize(
    ("env", "files"),
    [(HOME, {}),  # (nothing: IMDS / the container endpoint not read)
     ({}, {"/home/svc/.aws/credentials": "[default]\n" + PAIR}),  # (no HOME: ~ not known)
     (HOME, {"/home/svc/.aws/credentials": "[default]\naws_access_key_id = A\n"}),  # (PartialCredentialsError)
     (HOME, {"/home/svc/.aws/credentials": "[default]\naws_access_key_id =\naws_secret_access_key = s\n"}),
     ({**HOME, "AWS_PROFILE": "sw"}, {"/home/svc/.aws/credentials": "[default]\n" + PAIR}),  # (ProfileNotFound)
     (HOME, {"/home/svc/.aws/credentials": "[default]\n" + PAIR, "/home/svc/.aws/config": "[default]\nrole_arn = r\n"}),
     (HOME, {"/home/svc/.aws/credentials": "[default]\n" + PAIR + "[default]\n"}),  # (configparser: duplicate)
     (HOME, {"/home/svc/.aws/credentials": "aws_access_key_id = A\n"}),  # (no section header)
     (HOME, {"/home/svc/.aws/config": "[sw]\n" + PAIR}),  # (not a profile section in the config file)
     ({**HOME, "AWS_ACCESS_KEY_ID": "A"}, {"/home/svc/.aws/credentials": "[default]\n" + PAIR}),
     ({**HOME, "AWS_SHARED_CREDENTIALS_FILE": "$D/creds"}, {}),
     ({**HOME, "AWS_WEB_IDENTITY_TOKEN_FILE": "/t"}, {"/home/svc/.aws/credentials": "[default]\n" + PAIR})],
)  # fmt: skip
def test_what_is_not_a_pair_found_stays_unknown(env: dict[str, str], files: dict[str, str], data: Any) -> None:
    got = status(env, files, data)
    assert got[0] == "unknown", got


def test_not_read_without_the_box_and_values_never_shown(data: Any) -> None:
    got = status(HOME, None, data)  # (--facts / --root / --image: no reader handed in)
    assert got[0] == "unknown" and "--facts" in got[1], got
    files = {"/home/svc/.aws/credentials": "[sw]\naws_access_key_id = AKIDEXAMPLE\n"}
    got = status({**HOME, "AWS_PROFILE": "sw"}, files, data)
    assert got[0] == "unknown" and "profile 'sw'" in got[1], got
    assert "AKIDEXAMPLE" not in got[1] and "notasecret" not in got[1]
    found, why = aws_profile_keys(HOME, reader({"/home/svc/.aws/credentials": "[default]\n" + PAIR}))
    assert found and "AKIDEXAMPLE" not in why and "notasecret" not in why


def test_a_real_file_on_this_box(tmp_path: Path, data: Any) -> None:
    from stackcheck.launch.gate_preflight import _storage_text_reader
    from stackcheck.readers.fsview import HostView

    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text("[default]\n" + PAIR, encoding="utf-8")
    got = check_storage_config("seaweedfs", EXTRA, {"HOME": str(tmp_path)}, data, "0.5.23", None, True,
                               _storage_text_reader(HostView(), str(tmp_path), True))  # fmt: skip
    assert got is not None and got.status == "ok", got
