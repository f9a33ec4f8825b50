"""The shipped manifests kept parsed between runs (stackcheck/knowledge/prepared.py): a twin gives the very document the
JSON gives, and one that is corrupt, not this user's, writable by others, a link, or made for another stamp of the
file is never used (the JSON is parsed, and the twin written again)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stackcheck.errors import ManifestError
from stackcheck.knowledge import loader, prepared
from stackcheck.knowledge.package_data import shipped_files


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "prepared"


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
    assert sorted(p.name for p in cache.iterdir()) == sorted(name + ".marshal" for name in files)
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


def _planted(tmp_path: Path, cache: Path) -> tuple[Path, Path]:
    """A manifest and a twin under its very key holding another document: used, it would show."""
    path = tmp_path / "meta.json"
    path.write_text('{"data_version": "real"}', encoding="utf-8")
    key = prepared.key_of(str(path), _stamp(path), loader.__file__)
    assert prepared.keep(str(cache), "meta.json", key, {"data_version": "planted"})
    assert _one(path).doc("meta.json") == {"data_version": "planted"}  # (the plant is a valid twin)
    return path, cache / "meta.json.marshal"


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
    assert sorted(p.name for p in cache.iterdir()) == ["meta.json.marshal"]  # nor written


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
