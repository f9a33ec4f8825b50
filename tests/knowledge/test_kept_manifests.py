"""The shipped manifests' kept form (stackcheck.knowledge.kept): what a run reads back is what a fresh parse of the
files gives, on the real manifests and on edited ones; a damaged, foreign or unsafe entry is no entry; the gate's
rule work restored from its entry is the work done afresh."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly import kept_rules
from stackcheck.knowledge import kept, loader, package_data
from stackcheck.verdicts import engine

ROOT = Path(__file__).resolve().parents[2] / "stackcheck"
BIG = [n for n in package_data.MANIFEST_FILES if (ROOT / "manifests" / n).stat().st_size >= loader.KEPT_MIN_BYTES]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("STACKCHECK_MANIFEST_CACHE", raising=False)
    return tmp_path / "cache" / "manifests"


def _shipped_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the shipped manifests, read by the loader as the package directory's."""
    copy = tmp_path / "pkg-manifests"
    copy.mkdir()
    for name in package_data.MANIFEST_FILES:
        (copy / name).write_bytes((ROOT / "manifests" / name).read_bytes())
    real = package_data._package_dir
    monkeypatch.setattr(package_data, "_package_dir", lambda n: str(copy) if n == "manifests" else real(n))
    return copy


def _fresh(directory: Path) -> dict[str, Any]:
    return {n: json.loads((directory / n).read_text(encoding="utf-8")) for n in package_data.MANIFEST_FILES}


def _no_parse(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the documents parsed from JSON from now on."""
    parsed: list[str] = []
    real = loader._parse

    def parse(text: str, origin: str, check_depth: bool = True) -> Any:
        parsed.append(origin.rsplit("/", 1)[-1])
        return real(text, origin, check_depth)

    monkeypatch.setattr(loader, "_parse", parse)
    return parsed


def test_big_documents_exist() -> None:
    assert {"features.json", "components.json", "launch.json"} <= set(BIG)


def test_real_manifests_read_back_equal_a_fresh_parse(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = loader.load([], env={})
    assert first.docs == _fresh(ROOT / "manifests")
    assert sorted(p.name for p in cache.iterdir()) == sorted(n + ".kept" for n in BIG)
    for entry in cache.iterdir():
        assert entry.stat().st_mode & 0o777 == 0o600
    parsed = _no_parse(monkeypatch)
    again = loader.load([], env={})
    docs = again.docs
    assert docs == _fresh(ROOT / "manifests")
    assert set(parsed).isdisjoint(BIG)  # read from the kept form
    assert json.dumps(docs) == json.dumps(_fresh(ROOT / "manifests"))  # same order of keys, same types


def test_an_edited_manifest_is_read_from_its_text(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = _shipped_copy(tmp_path, monkeypatch)
    assert loader.load([], env={}).docs == _fresh(copy)  # kept
    # an edit of the same size with the modification time set back: the change time still moves
    path = copy / "features.json"
    text = path.read_text(encoding="utf-8")
    st = path.stat()
    assert '"crash"' in text
    path.write_text(text.replace('"crash"', '"CRASH"', 1), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    # another file replaced by a different text (a new inode)
    comp = copy / "components.json"
    data = json.loads(comp.read_text(encoding="utf-8"))
    data["mutated-for-test"] = [1, 2.5, None, True, "é"]
    comp.write_text(json.dumps(data), encoding="utf-8")
    parsed = _no_parse(monkeypatch)
    m = loader.load([], env={})
    assert m.docs == _fresh(copy)
    assert m.doc("components.json")["mutated-for-test"] == [1, 2.5, None, True, "é"]
    assert {"features.json", "components.json"} <= set(parsed)
    parsed.clear()
    assert loader.load([], env={}).docs == _fresh(copy)  # kept again, as edited
    assert {"features.json", "components.json"}.isdisjoint(parsed)


def _damage(entry: Path, how: str, cache: Path) -> None:
    data = entry.read_bytes()
    if how == "truncated":
        entry.write_bytes(data[: len(data) // 2])
    elif how == "byte flipped":
        at = len(data) - 100
        entry.write_bytes(data[:at] + bytes([data[at] ^ 0x20]) + data[at + 1 :])
    elif how == "garbage":
        entry.write_bytes(b"\x00\xff not an entry")
    elif how == "empty":
        entry.write_bytes(b"")
    elif how == "foreign":  # another document's entry under this name
        entry.write_bytes((cache / "launch.json.kept").read_bytes())
    elif how == "header lies":  # a payload whose check is recomputed, but another key
        head, _, payload = data.partition(b"\n")
        parts = head.split(b" ")
        parts[1] = b"0" * 64
        entry.write_bytes(b" ".join(parts) + b"\n" + payload)
    elif how == "not a dict":
        parts = data.partition(b"\n")[0].split(b" ")
        import marshal
        import zlib

        payload = marshal.dumps(["a list"])
        parts[2], parts[3] = b"%08x" % zlib.crc32(payload), b"%d" % len(payload)
        entry.write_bytes(b" ".join(parts) + b"\n" + payload)
    elif how == "group-writable":
        entry.chmod(0o664)
    elif how == "symlink":
        target = entry.with_name("elsewhere")
        entry.rename(target)
        entry.symlink_to(target)
    elif how == "fifo":
        entry.unlink()
        os.mkfifo(entry)


@pytest.mark.parametrize(
    "how",
    [
        "truncated",
        "byte flipped",
        "garbage",
        "empty",
        "foreign",
        "header lies",
        "not a dict",
        "group-writable",
        "symlink",
        "fifo",
    ],
)
def test_a_damaged_or_unsafe_entry_is_no_entry(how: str, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loader.load([], env={}).docs  # noqa: B018 - kept
    _damage(cache / "features.json.kept", how, cache)
    parsed = _no_parse(monkeypatch)
    m = loader.load([], env={})
    assert m.doc("features.json") == _fresh(ROOT / "manifests")["features.json"]
    assert "features.json" in parsed


def test_another_stackcheck_is_another_key(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loader.load([], env={}).docs  # noqa: B018
    monkeypatch.setattr(kept, "_RUNTIME", [[*kept._runtime(), ["another", 1]]])
    parsed = _no_parse(monkeypatch)
    assert loader.load([], env={}).doc("launch.json") == _fresh(ROOT / "manifests")["launch.json"]
    assert parsed == ["launch.json"]


def test_turned_off_keeps_nothing(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STACKCHECK_MANIFEST_CACHE", "0")
    assert loader.load([], env={}).docs == _fresh(ROOT / "manifests")
    assert not cache.exists()


def test_a_users_manifests_are_merged_over_the_kept_ones(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STACKCHECK_MANIFEST_CACHE", "0")
    user = tmp_path / "user"
    user.mkdir()
    feature = dict(_fresh(ROOT / "manifests")["features.json"]["features"][0])
    feature["title"] = "changed by the user"
    (user / "features.json").write_text(json.dumps({"features": [feature]}), encoding="utf-8")
    reference = loader.load([user], env={})
    monkeypatch.delenv("STACKCHECK_MANIFEST_CACHE")
    loader.load([], env={}).docs  # noqa: B018 - the shipped ones kept
    m = loader.load([user], env={})
    assert m.docs == reference.docs
    assert m.features[0]["title"] == "changed by the user"
    assert m.kept_parts() is None  # merged: the rule work is neither kept nor restored
    engine._SHAPES.clear()
    kept_rules.prepare_rules(m)
    assert not (cache / kept.RULES).exists()
    env_m = loader.load(env={loader.ENV_VAR: str(user)})
    assert env_m.docs == reference.docs and env_m.kept_parts() is None


def _shape_now(rule: Any) -> tuple[bool, str]:
    return engine.uses_gpu(rule.get("when")) or engine.uses_gpu(rule.get("require")), engine._describe(
        rule.get("require")
    )


def _readers_by_position(m: Any, index: dict[str, frozenset[int]]) -> dict[str, list[int]]:
    pos = {id(item): i for i, item in enumerate([*m.features, *m.checks])}
    return {k: sorted(pos[i] for i in v) for k, v in index.items()}


@pytest.mark.parametrize("edited", [False, True])
def test_the_restored_rule_work_is_the_work_done_afresh(
    edited: bool, tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stackcheck.assembly import pipeline

    directory = ROOT / "manifests"
    if edited:  # a rule that reads a new launch fact, judged per GPU
        directory = _shipped_copy(tmp_path, monkeypatch)
        data = json.loads((directory / "checks.json").read_text(encoding="utf-8"))
        rule = next(r for c in data["checks"] for r in c.get("rules") or [])
        rule["require"] = {"all": [{"fact": "launch.new_fact_for_test", "op": "==", "value": 1}, {"fact": "gpu.cc"}]}
        (directory / "checks.json").write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setenv("STACKCHECK_MANIFEST_CACHE", "0")
    reference = loader.load([], env={})
    index = _readers_by_position(reference, pipeline._launch_readers(reference))
    monkeypatch.delenv("STACKCHECK_MANIFEST_CACHE")
    kept_rules.prepare_rules(loader.load([], env={}))  # done and kept
    assert (cache / kept.RULES).exists()
    engine._SHAPES.clear()
    m = loader.load([], env={})
    calls: list[Any] = []
    monkeypatch.setattr(engine, "prepare", lambda manifests: calls.append(manifests))
    kept_rules.prepare_rules(m)
    assert not calls  # restored
    assert m.docs == reference.docs
    for item in [*m.features, *m.checks]:
        for rule in item.get("rules") or []:
            got = engine._SHAPES[id(rule)]
            assert got[0] is rule and (got[1], got[2]) == _shape_now(rule)
    memo = m.derived("launch-readers")
    assert _readers_by_position(m, memo["index"]) == index
    assert pipeline._launch_readers(m) is memo["index"]  # the memo is taken as it is
    if edited:
        assert "new_fact_for_test" in index


def test_a_damaged_rules_entry_is_done_again(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kept_rules.prepare_rules(loader.load([], env={}))
    entry = cache / kept.RULES
    data = entry.read_bytes()
    entry.write_bytes(data[:-10])
    engine._SHAPES.clear()
    m = loader.load([], env={})
    kept_rules.prepare_rules(m)
    for item in m.features:
        for rule in item.get("rules") or []:
            assert (engine._SHAPES[id(rule)][1], engine._SHAPES[id(rule)][2]) == _shape_now(rule)
    assert entry.read_bytes() == data  # written again
