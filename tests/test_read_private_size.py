"""paths.read_private reads a cache entry by the size fstat gives (and on, where the file grew since), never by asking
for `limit` bytes at once: that read has a buffer of `limit` made first (64 MB for a prepared twin of half a
megabyte) and cut down after. What it returns is unchanged: the whole file up to `limit`, None past it."""

from __future__ import annotations

import io
import os
from typing import Any, ClassVar

import pytest

from stackcheck import paths


def _private_dir(tmp_path: Any) -> str:
    where = tmp_path / "cache"
    where.mkdir(mode=0o700)
    os.chmod(where, 0o700)
    return str(where)


def _write(where: str, name: str, data: bytes) -> None:
    assert paths.write_private(where, name, data)


class _Recorder(io.BufferedReader):
    asked: ClassVar[list[int]] = []

    def read(self, size: int | None = -1) -> bytes:
        _Recorder.asked.append(-1 if size is None else size)
        return super().read(size)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    real = os.fdopen
    _Recorder.asked = []

    def fdopen(fd: int, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if mode == "rb":
            return _Recorder(io.FileIO(fd, "rb", closefd=True))
        return real(fd, mode, *args, **kwargs)

    monkeypatch.setattr(os, "fdopen", fdopen)
    return _Recorder.asked


def test_reads_the_size_not_the_limit(tmp_path: Any, recorded: list[int]) -> None:
    where = _private_dir(tmp_path)
    data = os.urandom(5000)
    _write(where, "entry", data)
    assert paths.read_private(where, "entry", 64 * 1024 * 1024) == data
    assert recorded and max(recorded) <= len(data) + 1, recorded


@pytest.mark.parametrize("size", [0, 1, 99, 100])
def test_whole_file_up_to_the_limit(tmp_path: Any, size: int) -> None:
    where = _private_dir(tmp_path)
    data = b"x" * size
    _write(where, "entry", data)
    assert paths.read_private(where, "entry", 100) == data


def test_past_the_limit_is_none(tmp_path: Any) -> None:
    where = _private_dir(tmp_path)
    _write(where, "entry", b"x" * 101)
    assert paths.read_private(where, "entry", 100) is None


@pytest.mark.parametrize(("grown", "limit", "whole"), [(50, 100, True), (101, 100, False), (500, 100, False)])
def test_a_file_that_grew_after_fstat(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, grown: int, limit: int, whole: bool
) -> None:
    """fstat saw 10 bytes, the file holds `grown` when read: read on to the limit (whole when within it), None past
    it, as a read of `limit + 1` at once answered."""
    where = _private_dir(tmp_path)
    data = bytes(range(256)) * 4
    _write(where, "entry", data[:grown])
    real = os.fstat

    class _Small:
        def __init__(self, st: os.stat_result) -> None:
            self._st = st

        def __getattr__(self, name: str) -> Any:
            return 10 if name == "st_size" else getattr(self._st, name)

    monkeypatch.setattr(os, "fstat", lambda fd: _Small(real(fd)))
    got = paths.read_private(where, "entry", limit)
    assert got == (data[:grown] if whole else None)
