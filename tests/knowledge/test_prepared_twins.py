"""The shipped manifests kept parsed between runs (stackcheck/knowledge/prepared.py): a twin gives the very document the
JSON gives, and one that is corrupt, not this user's, writable by others, a link, or made for another stamp of the
file is never used (the JSON is parsed, and the twin written again)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from stackcheck.errors import ManifestError
from stackcheck.knowledge import loader, prepared
from stackcheck.knowledge.package_data import shipped_files


def _stamp(path: Path) -> str:
    st = os.stat(path)  # (package_data.shipped_files' stamp)
    return f"\0file {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_dev}"


def _one(path: Path, name: str = "meta.json") -> loader.Manifests:
    """Manifests holding one unread file at `path`, as load() makes them for a shipped file."""
    return loader.Manifests(
        origins={name: [f"manifests/{name}"]},
        unread={name: (f"manifests/{name}", str(path))},
        stamps={name: _stamp(path)},
    )


def _exact(doc: object) -> str:
    return json.dumps(doc, ensure_ascii=False)  # (tells 1 from 1.0 and from true; keeps the order of keys)


def _no_json(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(origin: str, path: str) -> str:
        raise AssertionError(f"{origin} read as JSON")

    monkeypatch.setattr(loader, "_read", refuse)


def test_every_shipped_document_from_its_twin_is_the_json_document(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = shipped_files()
    assert files is not None and len(files) >= 10
    first = loader.load()
    parsed = {name: _exact(first.doc(name)) for name in files}
    assert sorted(p.name for p in cache.iterdir()) == sorted(prepared.file_name(name) for name in files)
    for p in cache.iterdir():
        assert p.stat().st_mode & 0o777 == 0o600
    assert cache.stat().st_mode & 0o777 == 0o700
    _no_json(monkeypatch)  # the second run reads every document from its twin
    second = loader.load()
    assert {name: _exact(second.doc(name)) for name in files} == parsed
    assert second.features and second.launch  # (the typed views read them too)


def test_a_twin_is_used_only_for_the_stamp_it_was_made_for(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "meta.json"
    path.write_text('{"data_version": "1"}', encoding="utf-8")
    assert _one(path).doc("meta.json") == {"data_version": "1"}
    _no_json(monkeypatch)
    assert _one(path).doc("meta.json") == {"data_version": "1"}  # from the twin
    monkeypatch.undo()
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(cache.parent))
    stat = path.stat()
    path.write_text('{"data_version": "2"}', encoding="utf-8")  # same size; its old mtime put back
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert _one(path).doc("meta.json") == {"data_version": "2"}  # (the change time moved: another stamp)
    _no_json(monkeypatch)
    assert _one(path).doc("meta.json") == {"data_version": "2"}  # and the twin was written again for it


def test_a_reader_rewritten_in_place_is_a_new_key_in_the_next_run(tmp_path: Path, cache: Path) -> None:
    """The module that makes a document from its text edited at its size with its modification time put back (the
    change time moved): the next run's key is another, and the twin kept under the old one is not used."""
    from stackcheck.paths import forget_code_stamps

    path = tmp_path / "meta.json"
    path.write_text('{"data_version": "1"}', encoding="utf-8")
    reader = tmp_path / "reader.py"
    reader.write_text("ANSWER = 1\n")
    key = prepared.key_of(str(path), _stamp(path), str(reader))
    assert prepared.keep(str(cache), "meta.json", key, {"data_version": "1"})
    assert prepared.load(str(cache), "meta.json", key) == {"data_version": "1"}
    before = reader.stat()
    reader.write_text("ANSWER = 2\n")
    os.utime(reader, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert prepared.key_of(str(path), _stamp(path), str(reader)) == key  # (this process: each file stat'ed once)
    forget_code_stamps()  # the next run
    again = prepared.key_of(str(path), _stamp(path), str(reader))
    assert again != key and prepared.load(str(cache), "meta.json", again) is None


def _planted(tmp_path: Path, cache: Path) -> tuple[Path, Path]:
    """A manifest and a twin under its very key holding another document: used, it would show."""
    path = tmp_path / "meta.json"
    path.write_text('{"data_version": "real"}', encoding="utf-8")
    key = prepared.key_of(str(path), _stamp(path), loader.__file__)
    assert prepared.keep(str(cache), "meta.json", key, {"data_version": "planted"})
    assert _one(path).doc("meta.json") == {"data_version": "planted"}  # (the plant is a valid twin)
    return path, cache / prepared.file_name("meta.json")


def test_a_twin_others_may_write_is_not_read(tmp_path: Path, cache: Path) -> None:
    path, twin = _planted(tmp_path, cache)
    twin.chmod(0o622)
    assert _one(path).doc("meta.json") == {"data_version": "real"}
    twin.chmod(0o600)
    cache.chmod(0o777)  # a directory others may write: its entries may have been swapped
    try:
        assert _one(path).doc("meta.json") == {"data_version": "real"}
    finally:
        cache.chmod(0o700)


def test_a_twin_of_another_user_is_not_read(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = _planted(tmp_path, cache)
    monkeypatch.setattr(os, "getuid", lambda: os.stat(cache).st_uid + 1)  # the files are another user's now
    assert _one(path).doc("meta.json") == {"data_version": "real"}


def test_a_link_at_the_twin_is_not_followed(tmp_path: Path, cache: Path) -> None:
    path, twin = _planted(tmp_path, cache)
    elsewhere = tmp_path / "elsewhere.marshal"
    twin.rename(elsewhere)
    twin.symlink_to(elsewhere)
    assert _one(path).doc("meta.json") == {"data_version": "real"}
    assert not twin.is_symlink()  # written again in its place (the link replaced, never followed)
    assert elsewhere.read_bytes() != twin.read_bytes()


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b"",
        lambda b: b[: len(b) // 2],  # cut short
        lambda b: b"\x00garbage" * 10,
        lambda b: b"[" + b,  # (no longer marshal's encoding)
        lambda b: __import__("marshal").dumps([1, 2, 3]),  # marshal, but another shape
        lambda b: __import__("marshal").dumps((prepared.FORMAT + 1, "k", {})),
        lambda b: __import__("marshal").dumps((prepared.FORMAT, "another key", {"data_version": "planted"})),
    ],
    ids=["empty", "truncated", "garbage", "not-marshal", "another-shape", "another-format", "another-key"],
)
def test_a_corrupt_twin_is_a_miss_and_written_again(tmp_path: Path, cache: Path, damage: object) -> None:
    path, twin = _planted(tmp_path, cache)
    twin.write_bytes(damage(twin.read_bytes()))  # type: ignore[operator]
    assert _one(path).doc("meta.json") == {"data_version": "real"}
    assert _one(path).doc("meta.json") == {"data_version": "real"}
    key = prepared.key_of(str(path), _stamp(path), loader.__file__)
    assert prepared.load(str(cache), "meta.json", key) == {"data_version": "real"}  # rewritten, valid


def test_no_twin_when_the_caches_are_off(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, _ = _planted(tmp_path, cache)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    assert _one(path).doc("meta.json") == {"data_version": "real"}  # neither read
    other = tmp_path / "other" / "meta.json"
    other.parent.mkdir()
    other.write_text("{}", encoding="utf-8")
    _one(other).doc("meta.json")
    assert sorted(p.name for p in cache.iterdir()) == [prepared.file_name("meta.json")]  # nor written


def test_a_broken_manifest_is_still_its_error_with_a_twin_of_another_stamp(tmp_path: Path, cache: Path) -> None:
    path, _ = _planted(tmp_path, cache)
    path.write_text('{"data_version": ', encoding="utf-8")
    with pytest.raises(ManifestError, match=r"manifests/meta.json: line 1 column \d+: not valid JSON"):
        _one(path).doc("meta.json")
    with pytest.raises(ManifestError):  # (and again on the next run: no twin was made of it)
        _one(path).doc("meta.json")


def test_an_unwritable_cache_is_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(blocker))  # a file where the directory would be
    path = tmp_path / "meta.json"
    path.write_text('{"a": 1.0, "b": 1, "c": true}', encoding="utf-8")
    assert _exact(_one(path).doc("meta.json")) == '{"a": 1.0, "b": 1, "c": true}'
    assert _exact(_one(path).doc("meta.json")) == '{"a": 1.0, "b": 1, "c": true}'


# ---- one cache for several manifests directories (two checkouts, two installations, two interpreters) -------------


def _as_package(monkeypatch: pytest.MonkeyPatch, manifests: Path) -> None:
    """Make `manifests` the package's shipped manifests directory (package_data._package_dir) in this process."""
    from stackcheck.knowledge import package_data

    real = package_data._package_dir
    monkeypatch.setattr(
        package_data, "_package_dir", lambda name: str(manifests) if name == "manifests" else real(name)
    )
    # (worked out once per process: the package does not move under it)
    monkeypatch.setattr(prepared, "_TAG", [], raising=False)
    # the files were written just now, within a tick of the file system's clock, where no stamp is trusted
    # (package_data.shipped_files, tests/knowledge/test_prepared_racy.py): these runs come later
    monkeypatch.setattr(package_data, "_now_ns", lambda: time.time_ns() + 60 * 10**9)


def _checkout(tmp_path: Path, name: str, version: str) -> Path:
    manifests = tmp_path / name / "manifests"
    manifests.mkdir(parents=True)
    (manifests / "meta.json").write_text(json.dumps({"data_version": version}), encoding="utf-8")
    return manifests


def test_two_manifest_directories_used_in_turn_both_hit(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two checkouts used in turn: each keeps its own twin (the parent kept one per name, so each run of one was a
    miss after a run of the other, and wrote the twin again)."""
    a, b = _checkout(tmp_path, "a", "1"), _checkout(tmp_path, "b", "2")
    for manifests in (a, b):  # the first run of each: parsed, twin written
        _as_package(monkeypatch, manifests)
        assert loader.load().doc("meta.json") == {"data_version": "1" if manifests == a else "2"}
    for manifests, version in ((a, "1"), (b, "2"), (a, "1"), (b, "2")):
        _as_package(monkeypatch, manifests)
        with monkeypatch.context() as m:
            _no_json(m)  # every later run of either reads its twin
            assert loader.load().doc("meta.json") == {"data_version": version}
    assert len(list(cache.iterdir())) == 2


def test_a_link_to_the_manifests_is_the_directory_it_names(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tag is the directory's real path: a checkout's stackcheck/manifests link shares its target's twins."""
    real = _checkout(tmp_path, "a", "1")
    link = tmp_path / "link"
    link.symlink_to(real)
    _as_package(monkeypatch, real)
    first = prepared._tag()
    _as_package(monkeypatch, link)
    assert prepared._tag() == first


def _twin_file(cache: Path, name: str, tag: str, age: int) -> Path:
    path = cache / f"{name}-{tag}{prepared.SUFFIX}"
    path.write_bytes(b"x")
    path.chmod(0o600)
    os.utime(path, ns=(age, age))
    return path


def test_the_directory_is_kept_to_the_newest_tags(tmp_path: Path, cache: Path) -> None:
    cache.mkdir(parents=True, mode=0o700)
    mine = prepared._tag()
    old = [_twin_file(cache, "meta.json", f"{n:012x}", 10**18 + n * 10**9) for n in range(prepared.MAX_TAGS + 3)]
    current = _twin_file(cache, "meta.json", mine, 1)  # the oldest file of all, but this process's own tag
    legacy = cache / "meta.json.marshal"  # a twin named before the tags
    legacy.write_bytes(b"x")
    other = cache / "notes.txt"  # not a twin
    other.write_text("keep", encoding="utf-8")
    target = tmp_path / "target.marshal"
    target.write_bytes(b"kept")
    link = cache / f"link-{'f' * prepared.TAG_DIGITS}{prepared.SUFFIX}"  # a link named as a twin: left, not followed
    link.symlink_to(target)
    os.utime(link, ns=(1, 1), follow_symlinks=False)
    temp = cache / f".meta.json{prepared.SUFFIX}.1.abc.tmp"  # write_private's temporary file
    temp.write_bytes(b"x")
    assert prepared.prune(str(cache)) == 4 + 1  # the four oldest tags, the untagged twin
    left = {p.name for p in cache.iterdir()}
    assert current.name in left and other.name in left and link.name in left and temp.name in left
    assert {p.name for p in old[4:]} <= left and not {p.name for p in old[:4]} & left
    assert legacy.name not in left and target.read_bytes() == b"kept"
    assert len([n for n in left if n.endswith(prepared.SUFFIX) and not n.startswith("link-")]) == prepared.MAX_TAGS


def test_nothing_is_pruned_in_a_directory_others_may_write(tmp_path: Path, cache: Path) -> None:
    cache.mkdir(parents=True, mode=0o700)
    for n in range(prepared.MAX_TAGS + 2):
        _twin_file(cache, "meta.json", f"{n:012x}", 10**18 + n)
    cache.chmod(0o777)
    try:
        assert prepared.prune(str(cache)) == 0
    finally:
        cache.chmod(0o700)
    assert prepared.prune(str(cache)) == 3  # this process's tag and the 15 newest others kept


def test_a_run_that_writes_twins_prunes_once(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prepared, "_PRUNED", [])
    cache.mkdir(parents=True, mode=0o700)
    for n in range(prepared.MAX_TAGS + 2):
        _twin_file(cache, "meta.json", f"{n:012x}", 10**18 + n)
    loader.load().doc("meta.json")  # a miss: the twin written, the directory pruned
    names = [p.name for p in cache.iterdir()]
    assert prepared.file_name("meta.json") in names and len(names) == prepared.MAX_TAGS
