"""What audit --deep learned about each file, kept between runs (stackcheck.readers.kept): a file whose stamp is the
one its answer was kept under is not read again, and the answer is the one reading it gives; any change to the file
(its bytes rewritten in place at the same size with the modification time put back included), to the readers' code
or to the shipped data they read is a miss; a document that is not private, not ours or not JSON is not used; a file
changed within RACY_NS of its stat is not kept; STACKCHECK_PLAN_CACHE=0 and cache_dir "" turn it off."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from torch_cuda_tree import JIT, jitlink, needs_gcc, torch_cuda_site, torch_facts

from stackcheck.readers import binaries, elf, kept
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


def test_every_kept_elf_answer_names_the_module_of_the_elf_machine_numbers(tmp_path: Path) -> None:
    """The e_machine numbers and ElfError live in readers/elferror.py (a warm run imports it without the reader): a
    change there is a change of every reader of ELF files whose answers are kept, so each of their keys names it."""
    from stackcheck.probes import cudalibs
    from stackcheck.readers import kernelsymbols, libs

    where = str(tmp_path / "cache")
    for k in (binaries.kept_binaries(where), libs.kept_libs(where)):
        assert k is not None and "readers/elferror.py" in k.key and "readers/elf.py" in k.key
    for readers in (cudalibs._RPATH_READERS, kernelsymbols._READERS):
        assert {os.path.basename(r) for r in readers} >= {"elf.py", "elferror.py"}
    assert elf.EM_CUDA == 190 and elf.ElfError.__module__ == "stackcheck.readers.elferror"


def test_a_reader_rewritten_in_place_is_a_new_key_in_the_next_run(tmp_path: Path, old_files: None) -> None:
    """A reader's source edited at its size with its modification time put back (the change time moved): the next
    run's key is another, and nothing the document holds is used."""
    from stackcheck.paths import forget_code_stamps

    reader = tmp_path / "reader.py"
    reader.write_text("ANSWER = 1\n")
    where = str(tmp_path / "cache" / "deep")
    first = kept.Kept("binaries", where, [str(reader)])
    first.put("/lib/libk.so", [1, 2, 3, 4, 5], ["sm_90"])
    assert first.save()
    assert kept.Kept("binaries", where, [str(reader)]).files == first.files  # (the same code: the document used)
    before = reader.stat()
    reader.write_text("ANSWER = 2\n")
    os.utime(reader, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert kept.Kept("binaries", where, [str(reader)]).key == first.key  # (this process: each file stat'ed once)
    forget_code_stamps()  # the next run
    again = kept.Kept("binaries", where, [str(reader)])
    assert again.key != first.key and again.files == {}


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


# -- the library probe (readers.libs.probe_libs): each ELF file's answers and the ld.so cache's entries ---------------


def _torch_site(tmp: Path) -> tuple[Path, dict[str, Any]]:
    """The second hop's shape (tests/torch_cuda_tree.py) and its facts."""
    site = torch_cuda_site(tmp)
    return site, torch_facts(site)


def _libs(facts: dict[str, Any], cache: Path | None) -> tuple[dict[str, Any], kept.Kept | None]:
    from stackcheck.readers import libs

    got = libs.kept_libs(str(cache)) if cache is not None else None
    assert cache is None or got is not None
    return libs.probe_libs(facts, {"LD_LIBRARY_PATH": ""}, cache=[], cache_source="given", kept=got), got


@needs_gcc
def test_libs_kept_answers_are_what_reading_gives_and_no_file_is_read_again(
    tmp_path: Path, old_files: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, facts = _torch_site(tmp_path)
    plain, _ = _libs(facts, None)
    assert [x["needed"] for x in plain["torch_libraries"]["libraries"]] == [JIT]
    assert plain["symbol_failures"] == [] and plain["version_errors"] == []
    first, k1 = _libs(facts, tmp_path / "cache")
    assert first == plain and k1 is not None and k1.hits == 0
    kept_doc = json.loads((tmp_path / "cache" / "deep" / "libs.json").read_bytes())
    # libtorch_cuda.so, libcusparse.so.12, libnvJitLink.so.12 and libcudart.so.12 (its header's machine)
    assert sorted(Path(p).name for p in kept_doc["files"]) == ["libcudart.so.12", "libcusparse.so.12", JIT,
                                                               "libtorch_cuda.so"]  # fmt: skip

    opened: list[str] = []
    real = ElfFile

    def counted(path: Any, view: Any = None) -> Any:
        opened.append(str(path))
        return real(path, view)

    monkeypatch.setattr(elf, "ElfFile", counted)  # (libs imports the reader where it opens a file)
    second, k2 = _libs(facts, tmp_path / "cache")
    assert second == plain
    assert opened == [] and k2 is not None and not k2.changed
    third, _ = _libs(facts, None)  # (the counter sees a file opened: the check above can fail)
    assert third == plain and opened


_KEPT_RUN = """
import json, sys
from stackcheck.readers import kept, libs
kept.RACY_NS = 0  # (the test's files are seconds old)
facts, cache = json.loads(sys.argv[1]), sys.argv[2]
got = libs.probe_libs(facts, {"LD_LIBRARY_PATH": ""}, kept=libs.kept_libs(cache))
readers = ("stackcheck.readers.elf", "struct", "stackcheck.record")
print(json.dumps([got, sorted(m for m in readers if m in sys.modules)]))
"""


@needs_gcc
def test_libs_a_run_whose_every_answer_is_kept_imports_no_elf_reader(tmp_path: Path) -> None:
    """Issue 21: a warm audit --deep took every file's answers and the ld.so cache's entries from the kept document
    and still imported the ELF reader (its classes and struct layouts, ~6 M instructions); the first run reads the
    files (and imports it), the second reads none and imports neither the reader nor struct, with the same answer."""
    _, facts = _torch_site(tmp_path)
    env = {**os.environ, "STACKCHECK_PLAN_CACHE": "1"}
    argv = [sys.executable, "-c", _KEPT_RUN, json.dumps(facts), str(tmp_path / "cache")]
    runs = [json.loads(subprocess.run(argv, capture_output=True, text=True, env=env, check=True).stdout) for _ in "12"]
    (first, first_mods), (second, second_mods) = runs
    assert first == second and first["torch_libraries"]["libraries"]
    assert "stackcheck.readers.elf" in first_mods and "struct" in first_mods
    assert second_mods == []


@needs_gcc
def test_libs_a_library_rewritten_in_place_with_its_times_put_back_is_read_again(
    tmp_path: Path, old_files: None
) -> None:
    """The false pass this must never give: nvJitLink replaced, in place, by a build of the same size that lacks the
    symbol libcusparse takes from it, with its modification time put back; the kept answer (it defines the symbol)
    is not used, and the symbol failure is reported as reading the file reports it."""
    site, facts = _torch_site(tmp_path)
    first, _ = _libs(facts, tmp_path / "cache")
    assert first["symbol_failures"] == []
    target = site / "nvidia/nvjitlink/lib" / JIT
    other = jitlink(tmp_path / "other", [0, 1, 2, 3, 5])  # __nvJitLinkComplete_12_5 where 12_4 was: same length
    before = os.stat(target)
    data = other.read_bytes()
    assert len(data) == before.st_size
    with open(target, "r+b") as fh:
        fh.write(data)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(target)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    again, k = _libs(facts, tmp_path / "cache")
    plain, _ = _libs(facts, None)
    assert again == plain
    (failure,) = again["symbol_failures"]
    assert failure["missing"] == [f"__nvJitLinkComplete_12_4@{JIT}"]
    assert k is not None and k.misses >= 1


def test_ld_so_cache_entries_are_kept_by_the_files_stamp(
    tmp_path: Path, old_files: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import struct

    from stackcheck.readers import libs

    def build(entries: list[tuple[str, str]]) -> bytes:
        strings, offs = b"", []
        end = 48 + 24 * len(entries)
        for soname, path in entries:
            k = end + len(strings)
            strings += soname.encode() + b"\0"
            offs.append((k, end + len(strings)))
            strings += path.encode() + b"\0"
        body = struct.pack("<20sIIB3xI12x", b"glibc-ld.so.cache1.1", len(entries), len(strings), 2, 0)
        body += b"".join(struct.pack("<iIIIQ", 0x303, k, v, 0, 0) for k, v in offs)
        return body + strings

    cache_file = tmp_path / "ld.so.cache"
    cache_file.write_bytes(build([("libcudart.so.12", "/a/libcudart.so.12")]))
    k1 = libs.kept_libs(str(tmp_path / "cache"))
    entries, source = libs.load_ld_so_cache(cache_file, kept=k1)
    assert source == "file" and [e.path for e in entries] == ["/a/libcudart.so.12"]
    assert k1 is not None and k1.save()
    monkeypatch.setattr(libs, "parse_ld_so_cache", lambda data, origin="": pytest.fail("parsed again"))
    k2 = libs.kept_libs(str(tmp_path / "cache"))
    again, _ = libs.load_ld_so_cache(cache_file, kept=k2)
    assert again == entries and isinstance(again[0], libs.CacheEntry)
    monkeypatch.undo()
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setattr(kept, "RACY_NS", 0)
    before = os.stat(cache_file)
    cache_file.write_bytes(build([("libcudart.so.12", "/b/libcudart.so.12")]))  # same size, mtime put back
    os.utime(cache_file, ns=(before.st_atime_ns, before.st_mtime_ns))
    changed, _ = libs.load_ld_so_cache(cache_file, kept=libs.kept_libs(str(tmp_path / "cache")))
    assert [e.path for e in changed] == ["/b/libcudart.so.12"]


def test_torch_init_preload_entries_are_kept_by_the_files_stamp(tmp_path: Path, old_files: None) -> None:
    """torch/__init__.py's libcudart guard and preload entries (the shape torch 2.6+ has, written here) are read once;
    the same text with another entry, in place at the same size with the modification time put back, is read again."""
    from stackcheck.readers import libs

    site = tmp_path / "site"
    init = site / "torch" / "__init__.py"
    init.parent.mkdir(parents=True)
    text = (
        'libs = [("cublas", "libcublas.so.*[0-9]"), ("nvjitlink", "libnvJitLink.so.*[0-9]")]\n'
        'if "libcudart.so" not in _maps:\n    pass\n'
    )
    init.write_text(text)
    for folder, name in (("cublas", "libcublas.so.12"), ("nvjitlink", JIT), ("curand", "libcurand.so.10")):
        (site / "nvidia" / folder / "lib").mkdir(parents=True)
        (site / "nvidia" / folder / "lib" / name).write_bytes(b"x")
    cudart = str(site / "nvidia/cuda_runtime/lib/libcudart.so.12")
    view = HostView()
    plain = libs.torch_preloads(str(site), cudart, view)
    assert [Path(p).name for p in plain] == ["libcublas.so.12", JIT]
    k1 = libs.kept_libs(str(tmp_path / "cache"))
    assert libs.torch_preloads(str(site), cudart, view, kept=k1) == plain
    assert k1 is not None and k1.save()

    class NoReads(HostView):
        def read_bytes(self, path: str, limit: int, offset: int = 0) -> bytes:
            raise AssertionError(f"{path} read again")

    k2 = libs.kept_libs(str(tmp_path / "cache"))
    assert libs.torch_preloads(str(site), cudart, NoReads(), kept=k2) == plain
    before = os.stat(init)
    init.write_text(text.replace('"cublas", "libcublas', '"curand", "libcurand'))  # same length
    os.utime(init, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(init).st_size == before.st_size
    changed = libs.torch_preloads(str(site), cudart, view, kept=libs.kept_libs(str(tmp_path / "cache")))
    assert (
        [Path(p).name for p in changed]
        == ["libcurand.so.10", JIT]
        == [Path(p).name for p in libs.torch_preloads(str(site), cudart, view)]
    )


def test_an_answer_of_another_shape_is_read_again(tmp_path: Path, old_files: None) -> None:
    """The document is this user's own; a file's answer that is not what the probe keeps (a list, a number) is no
    answer: the file is read, not a failed probe."""
    site, facts = _site(tmp_path)
    _run(facts, tmp_path / "cache")
    path = tmp_path / "cache" / "deep" / "binaries.json"
    doc = json.loads(path.read_bytes())
    for item in doc["files"].values():
        item[1] = [1, 2]
    doc.pop("mark")  # (iperf42: the edit written with its own mark, so that the answers' shapes are what is judged)
    path.write_bytes(kept._marked(json.dumps(doc).encode()))
    out, k = _run(facts, tmp_path / "cache")
    assert out == _plain(facts) and k.hits == 2  # (found under the stamp, then not taken)
    assert site.is_dir()


@needs_gcc
def test_libs_answers_of_another_shape_are_asked_of_the_file_again(tmp_path: Path, old_files: None) -> None:
    """Every kept answer of the library probe (an ELF file's, the ld.so cache's rows, torch/__init__.py's entries)
    that has not the shape the probe keeps is asked of the file again: the same result, no failed probe."""
    from stackcheck.readers import libs

    _, facts = _torch_site(tmp_path)
    plain, _ = _libs(facts, None)
    _libs(facts, tmp_path / "cache")
    path = tmp_path / "cache" / "deep" / "libs.json"
    doc = json.loads(path.read_bytes())
    for item in doc["files"].values():
        item[1] = {k: ("x" if k == "machine" else [[1]]) for k in item[1]}
    path.write_text(json.dumps(doc))
    again, _ = _libs(facts, tmp_path / "cache")
    assert again == plain
    rewritten = json.loads(path.read_bytes())["files"]  # (the answers read again were kept in their place)
    assert all(type(item[1]["machine"]) is int for item in rewritten.values())
    cache_file = tmp_path / "ld.so.cache"
    cache_file.write_bytes(b"glibc-ld.so.cache1.1" + bytes(28))  # no entries
    k1 = libs.kept_libs(str(tmp_path / "cache"))
    assert libs.load_ld_so_cache(cache_file, kept=k1) == ([], "file")
    assert k1 is not None
    k1.files["ld.so.cache\0" + str(cache_file)][1] = [["a", "b", "not a number"]]
    assert libs.load_ld_so_cache(cache_file, kept=k1) == ([], "file")
