"""The jit probe keeps what it read of a GCC driver between runs (issue 21, iperf32): during the probe's run, on this
host, with a cache directory, _gcc_driver_major's answer read from the driver's .rodata is kept by the real file's
stamp (stackcheck.readers.kept), so a later audit or gate neither reads nor searches its ~0.5 MB of strings again. The
kept answer is the one a read gives (a major, or the reason there is none); a changed driver (a new stamp) is read
again; an ELF that could not be read is never kept; a direct call of probe_jit, a view other than this host's root, and
an empty cache directory keep nothing. The drivers are minimal ELF files (tests/elfwriter.py) with GCC's strings in
the shape its driver holds them, written here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from elfwriter import build_so

from stackcheck.probes import jit
from stackcheck.readers import kept
from stackcheck.readers.fsview import HostView

MARKS = b"\0Configured with: %s\n\0gcc version %s %s\n\0"


@pytest.fixture(autouse=True)
def _old_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files made by the test are seconds old at most: they would never be kept (RACY_NS) unless it is 0 here; and
    the tests turn the caches off (conftest.py) unless a test turns them on."""
    monkeypatch.setattr(kept, "RACY_NS", 0)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")


def _driver(root: Path, name: str, rodata: bytes) -> str:
    """bin/gcc -> NAME, an ELF whose strings are `rodata`, under `root`; the link's host path."""
    (root / "bin").mkdir(parents=True, exist_ok=True)
    target = root / "bin" / name
    if target.exists():
        target.unlink()
    target.write_bytes(build_so(needed=["libc.so.6"]) + rodata)
    target.chmod(0o755)
    link = root / "bin" / "gcc"
    if not link.is_symlink():
        os.symlink(name, link)
    return str(link)


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The drivers read from their ELF from now on."""
    seen: list[str] = []
    read = jit._read_driver

    def counted(view: HostView, real: str) -> tuple[int | None, str | None] | None:
        seen.append(real)
        return read(view, real)

    monkeypatch.setattr(jit, "_read_driver", counted)
    return seen


def _major(gcc: str, cache: str | None, view: HostView | None = None) -> tuple[int | None, str | None, bool]:
    """_gcc_driver_major as the jit probe's run calls it, with the probes' cache directory `cache`."""
    token = jit._KEEP_DIR.set(cache)
    try:
        return jit._gcc_driver_major(view or HostView("/"), gcc)
    finally:
        jit._KEEP_DIR.reset(token)


def test_a_kept_answer_is_the_read_answer_and_the_driver_is_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gcc = _driver(tmp_path / "usr", "x86_64-linux-gnu-gcc-13", MARKS + b"13.3.0\0(C)\0")
    cache = str(tmp_path / "cache")
    seen = _reads(monkeypatch)
    first = _major(gcc, cache)
    assert first == (13, None, False) == jit._gcc_driver_major(HostView("/"), gcc)  # (a direct call: read)
    assert len(seen) == 2
    assert _major(gcc, cache) == first
    assert len(seen) == 2  # kept: not read
    assert os.path.exists(os.path.join(cache, "deep", "gcc_driver.json"))


def test_a_kept_reason_is_the_read_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the name says 12, the binary 13 (a copy of another gcc): unknown, with the same reason kept and served
    gcc = _driver(tmp_path / "usr", "gcc-12", MARKS + b"13.3.0\0")
    cache = str(tmp_path / "cache")
    seen = _reads(monkeypatch)
    first = _major(gcc, cache)
    assert first[0] is None and "named gcc 12" in str(first[1])
    assert _major(gcc, cache) == first
    assert len(seen) == 1


def test_a_changed_driver_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gcc = _driver(tmp_path / "usr", "x86_64-linux-gnu-gcc", MARKS + b"13.3.0\0")
    cache = str(tmp_path / "cache")
    seen = _reads(monkeypatch)
    assert _major(gcc, cache)[0] == 13
    _driver(tmp_path / "usr", "x86_64-linux-gnu-gcc", MARKS + b"14.2.0\0")  # a new file (a new inode): a new stamp
    assert _major(gcc, cache)[0] == 14
    # a second version string in the new bytes: two majors, unknown (never the kept 14)
    _driver(tmp_path / "usr", "x86_64-linux-gnu-gcc", MARKS + b"14.2.0\0" + b"15.1.0\0")
    got = _major(gcc, cache)
    assert got[0] is None and "2 majors" in str(got[1])
    assert len(seen) == 3


def test_an_unread_elf_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bin").mkdir()
    stub = tmp_path / "bin" / "gcc"
    stub.write_bytes(b"\x7fELF" + b"\0" * 12)  # an ELF's first bytes only: not read as one
    cache = str(tmp_path / "cache")
    seen = _reads(monkeypatch)
    for _ in range(2):
        got = _major(str(stub), cache)
        assert got[0] is None and "not read as an ELF program" in str(got[1])
    assert len(seen) == 2
    assert not os.path.exists(os.path.join(cache, "deep", "gcc_driver.json"))


def test_only_this_hosts_root_is_kept_and_an_empty_cache_dir_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _driver(tmp_path / "root" / "usr", "gcc-13", MARKS + b"13.3.0\0")
    cache = str(tmp_path / "cache")
    seen = _reads(monkeypatch)
    for _ in range(2):  # a --root view: its files are not this host's
        assert _major("/usr/bin/gcc", cache, HostView(str(tmp_path / "root")))[0] == 13
    gcc = _driver(tmp_path / "host", "gcc-13", MARKS + b"13.3.0\0")
    for _ in range(2):
        assert _major(gcc, "")[0] == 13
    assert len(seen) == 4
    assert not os.path.exists(os.path.join(cache, "deep"))


def test_a_kept_answer_of_another_shape_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gcc = _driver(tmp_path / "usr", "gcc-13", MARKS + b"13.3.0\0")
    cache = str(tmp_path / "cache")
    first = _major(gcc, cache)
    real = os.path.realpath(gcc)
    for bad in ([14, "and a reason"], [None, None], ["13", None], [13], {"major": 13}):
        doc = kept.Kept("gcc_driver", os.path.join(cache, "deep"), jit._DRIVER_READERS)
        doc.put(real, kept.file_stamp(real), bad)
        doc.save()
        seen = _reads(monkeypatch)
        assert _major(gcc, cache) == first, bad
        assert len(seen) == 1, bad


def test_the_probes_run_keeps_it_in_the_probes_cache_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gate_cli import toolkit_128_facts

    from stackcheck.probes.interface import ProbeContext

    gcc = _driver(tmp_path / "usr", "gcc-13", MARKS + b"13.3.0\0")
    monkeypatch.setattr(jit, "nvcc_host_compiler", lambda env, view, nvcc, real: {"major": _major_in_run(view, gcc)})
    cache = str(tmp_path / "cache")
    ctx = ProbeContext(env={"PATH": "/usr/bin"}, cache_dir=cache).replace(facts=toolkit_128_facts())
    assert jit.JitProbe().run(ctx).facts["jit"]["major"] == 13
    assert os.path.exists(os.path.join(cache, "deep", "gcc_driver.json"))
    assert jit._KEEP_DIR.get() == ""  # (put back once the run is done)


def _major_in_run(view: HostView, gcc: str) -> int | None:
    return jit._gcc_driver_major(view, gcc)[0]
