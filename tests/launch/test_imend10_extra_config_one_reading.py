"""imend10: the extra config's @FILE was read twice in two ways, by Mooncake's storage_configs entry and by every other
backend's (_any_backend_file, imend9); one reading serves both now (package_checks.read_extra_file: irev78's of the
twins). A hostile file (a FIFO, /dev/zero, a 100 MB file, a directory) gets the same one-line answer on both paths,
through the live reader."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch.gate_preflight import _storage_config_reader
from stackcheck.readers.fsview import HostView
from stackcheck.verdicts import package_checks
from stackcheck.verdicts.package_checks import check_storage_config


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _hostile(kind: str, tmp: Path) -> str:
    path = tmp / f"{kind}.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    elif kind == "big":
        with open(path, "wb") as f:
            f.truncate(100 << 20)  # (sparse: 100 MB read as 100 MB, no disk taken)
    else:
        path.mkdir()
    return str(path)


@pytest.mark.parametrize("kind", ["fifo", "zero", "big", "dir"])
def test_a_hostile_file_gets_one_answer_on_both_paths(kind: str, tmp_path: Path, data: Any) -> None:
    path = _hostile(kind, tmp_path)
    read = _storage_config_reader(HostView(), str(tmp_path), True)
    how, why = read(path)
    assert how == "unread" and isinstance(why, str) and "\n" not in why, (how, why)
    mooncake = check_storage_config("mooncake", f"@{path}", {}, data, "0.5.23", read)
    other = check_storage_config("hf3fs", f"@{path}", {}, data, "0.5.23", read)
    for got in (mooncake, other):
        assert got is not None and got.status == "unknown", got
        assert why in got.message and "\n" not in got.message, got
        assert got.observed == f"--hicache-storage-backend-extra-config '@{path}' not read", got


def test_both_paths_read_the_file_through_one_reading(monkeypatch: pytest.MonkeyPatch, data: Any) -> None:
    calls: list[str | None] = []

    def spy(extra_config: str, storage: str, release: str | None, read: Any) -> tuple[str | None, str, str, Any]:
        calls.append(storage)
        return (None, "unread", "spied", None)

    monkeypatch.setattr(package_checks, "read_extra_file", spy)
    for backend in ("mooncake", "hf3fs"):
        got = check_storage_config(backend, "@/cfg/x.json", {}, data, "0.5.23", lambda p: ("read", {}))
        assert got is not None and got.status == "unknown" and "spied" in got.message, got
    assert calls == ["mooncake", "hf3fs"]
