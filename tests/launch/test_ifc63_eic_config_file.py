"""ifc63 (the sixty-third sample, rows f1, f2): `--enable-hierarchical-cache --hicache-storage-backend eic` was
allowed with the eic package installed and no EIC config file. SGLang's EIC storage backend, built as the server
starts, opens the YAML file REMOTE_EIC_YAML names (else /sgl-workspace/config/remote-eic.yaml) and raises
RuntimeError 'eic config file ... not exists' without it (0.5.13 eic_storage.py:163-166, 0.5.23 :157-160); a file
without remote_url or eic_log_dir raises TypeError next. The files here are our own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch.gate_preflight import _storage_text_reader
from stackcheck.readers.fsview import HostView
from stackcheck.verdicts.package_checks import check_storage_config_file

GOOD = "remote_url: eic://10.1.2.3:8000\neic_log_dir: /tmp/eic-log\neic_thread_num: 4\n"


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _status(env: dict[str, str], data: Any, live: bool = True, release: str = "0.5.13", backend: str = "eic") -> Any:
    reader = _storage_text_reader(HostView(), "/", live)
    got = check_storage_config_file(backend, env, data, release, reader)
    return None if got is None else got.status


def test_no_config_file_fails_on_the_live_host(tmp_path: Path, data: Any) -> None:
    assert _status({"REMOTE_EIC_YAML": str(tmp_path / "absent.yaml")}, data) == "fail"
    assert _status({"REMOTE_EIC_YAML": str(tmp_path / "absent.yaml")}, data, release="0.5.23") == "fail"
    assert _status({"REMOTE_EIC_YAML": ""}, data) == "fail"  # (os.path.exists('') is False)


def test_the_default_path_is_read_where_the_variable_is_not_set(data: Any) -> None:
    if Path("/sgl-workspace/config/remote-eic.yaml").exists():
        pytest.skip("this host has the default EIC config file")
    assert _status({}, data) == "fail"
    assert _status({}, data, live=False) == "unknown"  # (--facts / --root / --image: the box may hold it)


def test_a_file_with_the_keys_passes_and_one_without_fails(tmp_path: Path, data: Any) -> None:
    good = tmp_path / "eic.yaml"
    good.write_text(GOOD)
    assert _status({"REMOTE_EIC_YAML": str(good)}, data) is None
    bad = tmp_path / "bad.yaml"
    bad.write_text("eic_log_dir: /tmp/eic-log\n")
    assert _status({"REMOTE_EIC_YAML": str(bad)}, data) == "fail"
    odd = tmp_path / "odd.yaml"
    odd.write_text("{remote_url: 'eic://h:1', eic_log_dir: /tmp/x}\n")
    assert _status({"REMOTE_EIC_YAML": str(odd)}, data) == "unknown"
    empty = tmp_path / "empty.yaml"
    empty.write_text("remote_url:\neic_log_dir: /tmp/x\n")
    assert _status({"REMOTE_EIC_YAML": str(empty)}, data) == "unknown"


def test_other_backends_and_releases_are_not_judged(tmp_path: Path, data: Any) -> None:
    env = {"REMOTE_EIC_YAML": str(tmp_path / "absent.yaml")}
    assert _status(env, data, backend="file") is None
    assert _status(env, data, backend="nixl") is None
    assert _status(env, data, release="0.5.2") is None  # (no eic choice before 0.5.3)


def _eic_box(tmp_path: Path, env: dict[str, str]) -> Path:
    import json

    from gate_cli import release_box

    path = release_box(tmp_path, "0.5.13", "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["packages"]["eic"] = {"installed": True, "version": "1.0.0", "dist_version": "1.0.0"}
    doc["facts"]["system"]["env"] = {**(doc["facts"]["system"].get("env") or {}), **env}
    path.write_text(json.dumps(doc))
    return path


def test_the_gate_no_longer_allows_eic_without_its_config_file(tmp_path: Path) -> None:
    from gate_cli import LLAMA3, gate_json, model_dir

    model = model_dir(tmp_path, "llama3", LLAMA3)
    flags = ("--model-path", str(model), "--tp", "2", "--enable-hierarchical-cache",
             "--hicache-storage-backend", "eic")  # fmt: skip
    doc = gate_json(_eic_box(tmp_path, {}), *flags, dry_run=True)
    assert doc["decision"] != "allow"
    # (--facts: the default path is not on the filesystem the gate reads, so the check is unknown, never ok)
    checks = [r for r in doc["preflight"]["checks"] if r.get("check") == "storage-config"]
    assert [c["status"] for c in checks] == ["unknown"] and "REMOTE_EIC_YAML" in str(checks[0]["observed"]), checks
