"""A shipped manifest edited in place at its size within one tick of a coarse file system's clock is never served
from a stale twin (knowledge/prepared.py), nor from the plan cache's key (package_data.shipped_files' stamps).

On a file system whose modification and change times are coarse (FAT: 2 s; ext3, HFS+, many NFS servers: 1 s), two
writes within one tick leave both times as they were: with the size, the inode and the device unchanged, the stamp
is the same, and the parent commit served the twin of the first text for the second. Here the file system's times
are made coarse (os.stat of the manifests directory, seen by package_data only) and the clock is fixed, so nothing
depends on when the test runs. A stamp taken within a tick of the file's last change now names its own moment, so
nothing kept under it is served, and no twin is written for it; once the tick has passed, the twin is kept and
served again (the served path: one clock read per stamp set, measured in the commit)."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from stackcheck.knowledge import loader, package_data, prepared

SECOND = 10**9
#: the coarse file system's time of both writes (whole seconds)
CHANGED = 1_900_000_000 * SECOND


@pytest.fixture
def coarse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A package manifests directory on a file system whose times are whole seconds, every write in this test
    within the same second (CHANGED); `at(ns)` sets the clock of the runs that follow."""
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    manifests = tmp_path / "pkg" / "manifests"
    manifests.mkdir(parents=True)
    real_dir, real_stat = package_data._package_dir, os.stat

    def stat(path: Any, *args: Any, **kwargs: Any) -> Any:
        st = real_stat(path, *args, **kwargs)
        if not str(path).startswith(str(manifests)):
            return st
        return SimpleNamespace(st_size=st.st_size, st_mtime_ns=CHANGED, st_ctime_ns=CHANGED, st_ino=st.st_ino,
                               st_dev=st.st_dev, st_mode=st.st_mode)  # fmt: skip

    monkeypatch.setattr(package_data, "_package_dir", lambda n: str(manifests) if n == "manifests" else real_dir(n))
    monkeypatch.setattr(os, "stat", stat)  # (the others answered as they are)
    monkeypatch.setattr(prepared, "_TAG", [], raising=False)
    clock = [CHANGED]
    monkeypatch.setattr(package_data, "_now_ns", lambda: clock[0], raising=False)

    class Box:
        meta = manifests / "meta.json"

        @staticmethod
        def at(ns: int) -> None:
            clock[0] = ns

    return Box


def _version() -> Any:
    return loader.load().doc("meta.json")["data_version"]


def test_a_same_size_edit_within_the_tick_is_never_served_stale(coarse: Any) -> None:
    coarse.meta.write_text('{"data_version": "1"}', encoding="utf-8")
    coarse.at(CHANGED + SECOND // 2)  # the same second as the write: the stamp cannot tell a later write from it
    assert _version() == "1"
    coarse.meta.write_text('{"data_version": "2"}', encoding="utf-8")  # the same size, the same (coarse) times
    assert _version() == "2"
    assert _version() == "2"


def test_no_twin_is_written_within_the_tick_and_one_is_after_it(coarse: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    coarse.meta.write_text('{"data_version": "1"}', encoding="utf-8")
    twin = Path(os.environ["STACKCHECK_CACHE_DIR"]) / "prepared" / prepared.file_name("meta.json")
    coarse.at(CHANGED + SECOND)
    assert _version() == "1" and not twin.exists()
    coarse.at(CHANGED - SECOND)  # a file time ahead of this clock (another host's clock, NFS): not trusted either
    assert _version() == "1" and not twin.exists()
    coarse.at(CHANGED + package_data.TICK_NS)  # the tick has passed: any later write has later times
    assert _version() == "1" and twin.exists()
    monkeypatch.setattr(loader, "_read", lambda origin, path: pytest.fail(f"{origin} read as JSON"))
    assert _version() == "1"  # served from the twin


def test_a_stamp_within_the_tick_is_its_own_and_the_plan_caches_key_with_it(coarse: Any) -> None:
    coarse.meta.write_text('{"data_version": "1"}', encoding="utf-8")
    coarse.at(CHANGED + SECOND)
    first = package_data.shipped_files(["meta.json"])
    coarse.at(CHANGED + SECOND + 1)
    second = package_data.shipped_files(["meta.json"])
    assert first and second and first["meta.json"][2] != second["meta.json"][2]
    assert package_data.racy(first["meta.json"][2])
    coarse.at(CHANGED + package_data.TICK_NS)
    settled = package_data.shipped_files(["meta.json"])
    assert settled and settled == package_data.shipped_files(["meta.json"])
    assert not package_data.racy(settled["meta.json"][2])
