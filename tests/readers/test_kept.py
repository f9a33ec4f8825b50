"""What audit --deep learned about each file, kept between runs (stackcheck.readers.kept): a file whose stamp is the
one its answer was kept under is not read again, and the answer is the one reading it gives; any change to the file
(its bytes rewritten in place at the same size with the modification time put back included), to the readers' code
or to the shipped data they read is a miss; a document that is not private, not ours or not JSON is not used; a file
changed within RACY_NS of its stat is not kept; STACKCHECK_PLAN_CACHE=0 and cache_dir "" turn it off."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from stackcheck.readers import binaries, kept
from stackcheck.readers.elf import ElfFile
from stackcheck.readers.fsview import HostView

DATA = Path(__file__).resolve().parents[1] / "data" / "fatbin"


@pytest.fixture(autouse=True)
def caches_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite turns stackcheck's caches off (tests/conftest.py); these tests keep answers in directories of their
    own."""
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")


@pytest.fixture
def old_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files made by the test are seconds old at most: they would never be kept (RACY_NS) unless it is 0 here."""
    monkeypatch.setattr(kept, "RACY_NS", 0)


def _site(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A site-packages with torch/lib holding a library with GPU code (libk.so: sm_90, sm_103f), a host library
    without any (not an ELF with a fatbin: the answer None is kept too) and a file that is no ELF at all (an error
    entry: not kept)."""
    lib = tmp_path / "site" / "torch" / "lib"
    lib.mkdir(parents=True)
    shutil.copy(DATA / "libk.so", lib / "libtorch_cuda.so")
    shutil.copy(DATA / "libk.so", lib / "libc10.so")
    with ElfFile(lib / "libc10.so") as elf:  # its fatbin sections renamed: a host library without GPU code
        names = elf.sections[elf.header.shstrndx]
    data = bytearray((lib / "libc10.so").read_bytes())
    for name in (b".nv_fatbin", b".nvFatBinSegment"):
        at = names.offset + data[names.offset :].index(name + b"\0")
        data[at + 1 : at + 3] = b"xx"
    (lib / "libc10.so").write_bytes(bytes(data))
    (lib / "libbroken.so").write_bytes(b"not an ELF file at all")
    return tmp_path / "site", {"packages": {"torch": {"installed": True, "location": str(tmp_path / "site")}}}


def _run(facts: dict[str, Any], cache: Path) -> tuple[dict[str, Any], kept.Kept]:
    got = binaries.kept_binaries(str(cache))
    assert got is not None
    out = binaries.probe_binaries(facts, kept=got)
    out["torch"].pop("duration_ms")
    return out, got


def _plain(facts: dict[str, Any]) -> dict[str, Any]:
    out = binaries.probe_binaries(facts)
    out["torch"].pop("duration_ms")
    return out


def test_a_kept_answer_is_what_reading_gives_and_no_file_is_read_again(
    tmp_path: Path, old_files: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    site, facts = _site(tmp_path)
    plain = _plain(facts)
    assert plain["torch"]["sass"] == ["sm_90", "sm_103f"] and plain["torch"]["files_scanned"] == 3
    assert [f["path"] for f in plain["torch"]["files"]] == ["torch/lib/libbroken.so", "torch/lib/libtorch_cuda.so"]
    first, k1 = _run(facts, tmp_path / "cache")
    assert first == plain and (k1.hits, k1.misses) == (0, 3)
    doc = json.loads((tmp_path / "cache" / "deep" / "binaries.json").read_bytes())
    assert sorted(doc["files"]) == [str(site / "torch/lib/libc10.so"), str(site / "torch/lib/libtorch_cuda.so")]
    assert doc["files"][str(site / "torch/lib/libc10.so")][1] is None  # no GPU code: kept as such

    read: list[str] = []
    real = binaries.scan_file

    def counted(p: Any, rel: str, view: Any = None) -> dict[str, Any] | None:
        read.append(rel)
        return real(p, rel, view)

    monkeypatch.setattr(binaries, "scan_file", counted)
    second, k2 = _run(facts, tmp_path / "cache")
    assert second == plain
    assert read == ["torch/lib/libbroken.so"]  # the error entry only: it was not kept
    assert (k2.hits, k2.changed) == (2, False)


def test_a_file_rewritten_in_place_with_its_times_put_back_is_read_again(tmp_path: Path, old_files: None) -> None:
    site, facts = _site(tmp_path)
    _run(facts, tmp_path / "cache")
    target = site / "torch/lib/libtorch_cuda.so"
    before = os.stat(target)
    # the same bytes with its sm_103f entry made sm_100f, same size, the modification time set back: only the change
    # time tells (a change time cannot be set back)
    data = bytearray(target.read_bytes())
    with ElfFile(target) as elf:
        found = binaries.scan_file(target, "x")
        assert found is not None and "sm_103f" in found["sass"]
        sec = elf.section(".nv_fatbin")
        assert sec is not None
    entry = sec.offset + 16
    import struct

    first_arch = struct.unpack_from("<I", data, entry + 28)[0]
    size = struct.unpack_from("<I", data, entry + 4)[0] + struct.unpack_from("<Q", data, entry + 8)[0]
    arch_at = entry + 28 if first_arch == 103 else entry + size + 28
    assert struct.unpack_from("<I", data, arch_at)[0] == 103
    struct.pack_into("<I", data, arch_at, 100)
    with open(target, "r+b") as fh:
        fh.write(bytes(data))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(target)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    out, k = _run(facts, tmp_path / "cache")
    assert out["torch"]["sass"] == ["sm_90", "sm_100f"] == _plain(facts)["torch"]["sass"]
    assert (k.hits, k.misses) == (1, 2)  # libc10.so kept; libtorch_cuda.so changed; libbroken.so never kept


def test_a_new_reader_or_new_architectures_data_is_a_new_key(tmp_path: Path, old_files: None) -> None:
    _, facts = _site(tmp_path)
    _, k1 = _run(facts, tmp_path / "cache")
    same = binaries.kept_binaries(str(tmp_path / "cache"))
    assert same is not None and same.key == k1.key and len(same.files) == 2
    other = kept.Kept("binaries", str(tmp_path / "cache" / "deep"), [str(DATA / "k.cu")])
    assert other.key != k1.key and other.files == {}  # another key: nothing it holds is used
    assert "architectures.json" in k1.key and "readers/fatbin.py" in k1.key and "readers/kept.py" in k1.key


@pytest.mark.parametrize("spoil", ["not-json", "other-key", "bad-shape", "group-writable", "symlink"])
def test_a_document_not_ours_is_not_used(tmp_path: Path, old_files: None, spoil: str) -> None:
    _, facts = _site(tmp_path)
    _run(facts, tmp_path / "cache")
    path = tmp_path / "cache" / "deep" / "binaries.json"
    doc = json.loads(path.read_bytes())
    if spoil == "not-json":
        path.write_bytes(b"{\x00")
    elif spoil == "other-key":
        path.write_text(json.dumps({**doc, "key": "1\nbinaries\nsomething else"}))
    elif spoil == "bad-shape":
        path.write_text(json.dumps({**doc, "files": {k: [[1, 2], v[1]] for k, v in doc["files"].items()}}))
    elif spoil == "group-writable":
        os.chmod(path, 0o620)
    else:
        os.rename(path, tmp_path / "elsewhere.json")
        os.symlink(tmp_path / "elsewhere.json", path)
    got = binaries.kept_binaries(str(tmp_path / "cache"))
    assert got is not None and got.files == {}
    out, k = _run(facts, tmp_path / "cache")
    assert out == _plain(facts) and k.hits == 0


def test_a_file_changed_just_now_is_not_kept(tmp_path: Path) -> None:
    _, facts = _site(tmp_path)  # (RACY_NS as shipped: every file here was written a moment ago)
    out, k = _run(facts, tmp_path / "cache")
    assert out == _plain(facts)
    assert k.files == {} and not (tmp_path / "cache" / "deep" / "binaries.json").exists()


def test_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    assert binaries.kept_binaries(str(tmp_path)) is None and kept.directory(None) is None
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    assert kept.directory("") is None
    assert kept.directory(str(tmp_path)) == str(tmp_path / "deep")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "c"))
    assert kept.directory(None) == str(tmp_path / "c" / "deep")


def test_only_this_hosts_files_are_kept(tmp_path: Path, old_files: None) -> None:
    """A --root view's files are read through the view and never kept (their paths name another box)."""
    site, _ = _site(tmp_path)
    root_facts = {"packages": {"torch": {"installed": True, "location": "/site"}}}
    got = binaries.kept_binaries(str(tmp_path / "cache"))
    assert got is not None
    out = binaries.probe_binaries(root_facts, view=HostView(str(tmp_path)), kept=got)
    assert out["torch"]["sass"] == ["sm_90", "sm_103f"]
    assert got.files == {} and not (tmp_path / "cache" / "deep" / "binaries.json").exists()
    assert site.is_dir()


def test_the_probe_keeps_and_reuses(tmp_path: Path, old_files: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """BinariesProbe through the runner's context: ProbeContext.cache_dir names the directory, "" turns it off."""
    from stackcheck.probes.deep import BinariesProbe
    from stackcheck.probes.interface import ProbeContext

    site, facts = _site(tmp_path)
    (site / "torch/lib/libbroken.so").unlink()
    ctx = ProbeContext(facts=facts, cache_dir=str(tmp_path / "cache"))
    first = BinariesProbe().run(ctx)
    assert (tmp_path / "cache" / "deep" / "binaries.json").is_file()
    read: list[str] = []
    real = binaries.scan_file

    def counted(p: Any, rel: str, view: Any = None) -> dict[str, Any] | None:
        read.append(rel)
        return real(p, rel, view)

    monkeypatch.setattr(binaries, "scan_file", counted)
    again = BinariesProbe().run(ctx)
    assert read == []
    off = BinariesProbe().run(ctx.replace(cache_dir=""))
    assert sorted(read) == ["torch/lib/libc10.so", "torch/lib/libtorch_cuda.so"]
    for result in (first, again, off):
        result.facts["binaries"]["torch"].pop("duration_ms")
    assert first.facts == again.facts == off.facts
    assert first.facts["binaries"]["torch"]["sass"] == ["sm_90", "sm_103f"]
