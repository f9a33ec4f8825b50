"""The cudalibs probe keeps the audited interpreter's DT_RPATH answer between runs (iperf18): on this host, with a
cache directory, the answer read from the interpreter's ELF is kept by the real file's stamp (stackcheck.readers.kept),
so a later audit of the same interpreter neither imports the ELF reader nor reads the file. A changed interpreter
(a new stamp) is read again, an error is never kept, a view other than this host's root keeps nothing, and the
answer is the one a read gives. The ELF files are written by tests/elfwriter.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from elfwriter import write_so

from stackcheck.probes import cudalibs
from stackcheck.readers import kept
from stackcheck.readers.fsview import HostView


@pytest.fixture(autouse=True)
def _old_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files made by the test are seconds old at most: they would never be kept (RACY_NS) unless it is 0 here; and
    the tests turn the caches off (conftest.py) unless a test turns them on."""
    monkeypatch.setattr(kept, "RACY_NS", 0)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")


def _python(root: Path, rpath: str | None = "$ORIGIN/../lib") -> str:
    """bin/python -> python3.12, an ELF with `rpath`, under `root`; its host path."""
    (root / "bin").mkdir(parents=True, exist_ok=True)
    (root / "lib").mkdir(exist_ok=True)
    target = root / "bin" / "python3.12"
    if target.exists():
        target.unlink()
    write_so(target, needed=["libc.so.6"], rpath=rpath)
    link = root / "bin" / "python"
    if not link.is_symlink():
        os.symlink("python3.12", link)
    return str(link)


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The interpreters read from their ELF from now on."""
    seen: list[str] = []
    read = cudalibs._read_interpreter_rpath

    def counted(view: HostView, interpreter: str) -> dict[str, object]:
        seen.append(interpreter)
        return read(view, interpreter)

    monkeypatch.setattr(cudalibs, "_read_interpreter_rpath", counted)
    return seen


def test_a_kept_answer_is_the_read_answer_and_the_file_is_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = _python(tmp_path / "conda")
    cache = str(tmp_path / "cache")
    seen = _reads(monkeypatch)
    first = cudalibs.interpreter_rpath(HostView("/"), python, cache)
    assert first == cudalibs.interpreter_rpath(HostView("/"), python)  # (no cache: read)
    assert first["dirs"] == [str(tmp_path / "conda" / "lib")] and first["rpath"] == "$ORIGIN/../lib"
    assert len(seen) == 2
    again = cudalibs.interpreter_rpath(HostView("/"), python, cache)
    assert again == first and list(again) == list(first)  # the same keys in the same order
    assert len(seen) == 2  # kept: not read
    assert os.path.exists(os.path.join(cache, "deep", "interpreter_rpath.json"))


def test_a_changed_interpreter_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    python = _python(tmp_path / "conda")
    cache = str(tmp_path / "cache")
    seen = _reads(monkeypatch)
    assert cudalibs.interpreter_rpath(HostView("/"), python, cache)["rpath"] == "$ORIGIN/../lib"
    _python(tmp_path / "conda", rpath="/opt/other/lib")  # a new file (a new inode): a new stamp
    got = cudalibs.interpreter_rpath(HostView("/"), python, cache)
    assert got["rpath"] == "/opt/other/lib" and got["dirs"] == ["/opt/other/lib"]
    assert len(seen) == 2


def test_an_error_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bin").mkdir()
    script = tmp_path / "bin" / "python"
    script.write_bytes(b'#!/bin/sh\nexec python3 "$@"\n')
    cache = str(tmp_path / "cache")
    seen = _reads(monkeypatch)
    for _ in range(2):
        assert "error" in cudalibs.interpreter_rpath(HostView("/"), str(script), cache)
    assert len(seen) == 2
    assert not os.path.exists(os.path.join(cache, "deep", "interpreter_rpath.json"))


def test_only_this_hosts_root_is_kept_and_an_empty_cache_dir_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _python(tmp_path / "root" / "opt")
    cache = str(tmp_path / "cache")
    seen = _reads(monkeypatch)
    for _ in range(2):  # a --root view: its files are not this host's
        assert cudalibs.interpreter_rpath(HostView(str(tmp_path / "root")), "/opt/bin/python", cache)["dirs"]
    python = _python(tmp_path / "host")
    for _ in range(2):
        cudalibs.interpreter_rpath(HostView("/"), python, "")
    assert len(seen) == 4
    assert not os.path.exists(os.path.join(cache, "deep"))


def test_a_kept_answer_of_another_shape_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    python = _python(tmp_path / "conda")
    cache = str(tmp_path / "cache")
    first = cudalibs.interpreter_rpath(HostView("/"), python, cache)
    doc = kept.Kept("interpreter_rpath", os.path.join(cache, "deep"), cudalibs._RPATH_READERS)
    real = os.path.realpath(python)
    stamp = kept.file_stamp(real)
    doc.put(real, stamp, {"rpath": "$ORIGIN/../lib", "dirs": "/not/a/list"})
    doc.save()
    seen = _reads(monkeypatch)
    assert cudalibs.interpreter_rpath(HostView("/"), python, cache) == first
    assert len(seen) == 1
