"""iperf42: the probes' kept answers (readers.kept, deep/NAME.json) were trusted through the files' stamps only: a
document edited by hand (a cubin family's kept status made ready, a kept list of odd names emptied) was served as
long as the stamps held (a false pass). A document now begins with its integrity mark (a BLAKE2b of the rest); one
edited, emptied or cut is a miss and the files are read again. Trees written here in the shape of FlashInfer's (no
upstream file)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes import flashinfer_cubins as fc
from stackcheck.readers import kept
from stackcheck.readers.fsview import HostView

REL = "00ff/fmha/trtllm-gen/"
MANIFEST = b"aa one.cubin\nbb two.cubin\ncc kernels/three.cubin\n"


@pytest.fixture(autouse=True)
def _old_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept, "RACY_NS", 0)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")


def _tree(tmp_path: Path) -> Path:
    base = tmp_path / "cubins"
    fam = base / REL
    (fam / "kernels").mkdir(parents=True)
    (fam / "checksums.txt").write_bytes(MANIFEST)
    for name in ("one.cubin", "kernels/three.cubin"):  # (two.cubin missing)
        (fam / name).write_bytes(b"\x7fELF" * 8)
    return base


def _status(base: Path, cache: str) -> dict[str, Any]:
    keep = fc.KeptFamilies.open(HostView(), cache)
    assert keep is not None
    got = fc.family_status(HostView(), str(base), REL, None, keep)
    keep.save()
    return got


def _made_ready(doc: dict[str, Any]) -> None:
    for _path, (_stamp, value) in doc["files"].items():
        value["status"].update(missing=0, missing_first=[])


def _odd_emptied(doc: dict[str, Any]) -> None:
    for _path, (_stamp, value) in doc["files"].items():
        for d in value["dirs"]:
            d[2] = []


EDITS: dict[str, Callable[[dict[str, Any]], None]] = {"made ready": _made_ready, "odd names emptied": _odd_emptied}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_document_is_read_again(tmp_path: Path, edit: str) -> None:
    base, cache = _tree(tmp_path), str(tmp_path / "cache")
    want = _status(base, cache)
    assert want["missing"] == 1 and want["missing_first"] == ["two.cubin"]
    if edit == "odd names emptied":  # (an empty two.cubin: odd, so missing; the edit hides it from the kept list)
        (base / REL / "two.cubin").write_bytes(b"")
        want = _status(base, cache)
        assert want["missing"] == 1
    where = tmp_path / "cache" / "deep" / "flashinfer_cubins.json"
    raw = where.read_bytes()
    assert raw.startswith(b'{"mark":"')
    doc = json.loads(raw)
    doc.pop("mark")
    EDITS[edit](doc)
    where.write_text(json.dumps(doc, separators=(",", ":")))  # (the edit, its mark not made again)
    if edit == "odd names emptied":
        os.truncate(base / REL / "two.cubin", 0)  # (the same empty file: only the kept list was changed)
    assert _status(base, cache) == want  # (before: missing 0, the family read ready)


def test_a_truncated_emptied_or_unmarked_document_is_read_again(tmp_path: Path) -> None:
    base, cache = _tree(tmp_path), str(tmp_path / "cache")
    want = _status(base, cache)
    where = tmp_path / "cache" / "deep" / "flashinfer_cubins.json"
    raw = where.read_bytes()
    body = b"{" + raw[len(b'{"mark":"') + 64 + 2 :]
    for spoilt in (raw[: len(raw) // 2], b"", body, raw.replace(raw[9:73], b"0" * 64)):
        where.write_bytes(spoilt)
        keep = fc.KeptFamilies.open(HostView(), cache)
        assert keep is not None and keep.kept.files == {}
        assert _status(base, cache) == want


def test_a_document_with_its_own_mark_is_read(tmp_path: Path) -> None:
    where = str(tmp_path / "deep")
    k = kept.Kept("probe", where, [])
    (tmp_path / "f").write_bytes(b"x")
    stamp = kept.file_stamp(str(tmp_path / "f"))
    k.put(str(tmp_path / "f"), stamp, {"answer": ["é", 1]})
    assert k.save()
    again = kept.Kept("probe", where, [])
    assert again.get(str(tmp_path / "f"), stamp) == {"answer": ["é", 1]}
