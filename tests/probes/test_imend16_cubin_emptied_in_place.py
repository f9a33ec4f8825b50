"""imend16: a cubin emptied or truncated to nothing in place (no name added, removed or renamed, so no directory's
stamp moves) is missing to FlashInfer's loader (an empty file reads b""), and the probe's kept family answer must
say so too: before, the family kept reading ready until a directory changed (a false pass: the launch's cubin load
fails). The kept answer now also keeps each directory's names that are no non-empty regular file. Trees written here
in the shape of FlashInfer's files (no upstream file)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes import flashinfer_cubins as fc
from stackcheck.readers import kept
from stackcheck.readers.fsview import HostView

REL = "00ff/fmha/trtllm-gen/"
MANIFEST = b"aa one.cubin\nbb two.cubin\ncc kernels/three.cubin\n"
_CLOCK = [1_700_000_000_000_000_000]


@pytest.fixture(autouse=True)
def _old_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept, "RACY_NS", 0)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")


def _touch(*paths: Path) -> None:
    for path in paths:
        _CLOCK[0] += 1_000_000_000
        os.utime(path, ns=(_CLOCK[0], _CLOCK[0]), follow_symlinks=False)


def _tree(tmp_path: Path) -> Path:
    base = tmp_path / "cubins"
    fam = base / REL
    (fam / "kernels").mkdir(parents=True)
    (fam / "checksums.txt").write_bytes(MANIFEST)
    for name in ("one.cubin", "two.cubin", "kernels/three.cubin"):
        (fam / name).write_bytes(b"\x7fELF" * 8)
    _touch(*(fam / n for n in ("one.cubin", "two.cubin", "kernels/three.cubin", "checksums.txt")))
    _touch(fam / "kernels", fam)
    return base


def _kept(base: Path, cache: str) -> dict[str, object]:
    keep = fc.KeptFamilies.open(HostView(), cache)
    assert keep is not None
    got = fc.family_status(HostView(), str(base), REL, None, keep)
    keep.save()
    return got


@pytest.mark.parametrize("how", ["emptied", "truncated", "empty one filled"])
@pytest.mark.parametrize("where", ["one.cubin", "kernels/three.cubin"])
def test_a_file_changed_in_place_is_seen_by_the_kept_answer(tmp_path: Path, how: str, where: str) -> None:
    base = _tree(tmp_path)
    victim = base / REL / where
    if how == "empty one filled":
        victim.write_bytes(b"")
        _touch(victim)
    cache = str(tmp_path / "cache")
    first = _kept(base, cache)
    assert first == fc.family_status(HostView(), str(base), REL, None)
    assert first == _kept(base, cache)  # (served from the kept answer)
    if how == "emptied":
        victim.write_bytes(b"")
    elif how == "truncated":
        os.truncate(victim, 0)
    else:
        victim.write_bytes(b"\x7fELF")
    _touch(victim)  # (the file's times only: its directory's stamp stays as kept)
    want = fc.family_status(HostView(), str(base), REL, None)
    assert want["missing"] == (0 if how == "empty one filled" else 1)
    assert _kept(base, cache) == want


def test_the_probe_no_longer_reads_an_emptied_family_ready(tmp_path: Path) -> None:
    base = _tree(tmp_path)
    site = tmp_path / "site"
    (site / "flashinfer").mkdir(parents=True)
    (site / "flashinfer" / "artifacts.py").write_text(f'class ArtifactPath:\n    TRTLLM_GEN_FMHA: str = "{REL}"\n')
    pkg = {"installed": True, "version": "0.6.13", "location": str(site)}
    facts = {"packages": {"flashinfer-python": pkg}}
    env = {"HOME": str(tmp_path), "FLASHINFER_CUBIN_DIR": str(base), "FLASHINFER_NO_DOWNLOAD": "1"}
    cache = str(tmp_path / "cache")
    got = fc.probe_cubins(facts, env, HostView(), cache_dir=cache)
    assert got is not None and got["ready"]["TRTLLM_GEN_FMHA"] is True
    assert fc.probe_cubins(facts, env, HostView(), cache_dir=cache) == got
    os.truncate(base / REL / "two.cubin", 0)
    _touch(base / REL / "two.cubin")
    again = fc.probe_cubins(facts, env, HostView(), cache_dir=cache)
    assert again is not None and again["ready"]["TRTLLM_GEN_FMHA"] is not True
    assert again["families"]["TRTLLM_GEN_FMHA"]["missing_first"] == ["two.cubin"]
    assert again == fc.probe_cubins(facts, env, HostView())


def _dirfd_module() -> Any:
    """tests/probes/test_flashinfer_cubins_dirfd.py (iperf39's tree of every kind of name), loaded by its path."""
    import importlib.util

    path = Path(__file__).with_name("test_flashinfer_cubins_dirfd.py")
    spec = importlib.util.spec_from_file_location("imend16_dirfd_kinds", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_keeping_reading_judges_every_kind_of_name_as_the_plain_one(tmp_path: Path) -> None:
    """The reading a kept answer is made from judges each directory's names on the scan it keeps (one lstat per
    name): every kind of name (a file, an empty file, dangling / looping / good / empty-target links, a directory,
    a FIFO, /dev/null, a name not there, escaping names) gives the plain reading's answer; with links among them
    the answer is not kept (irev79)."""
    fam, names = _dirfd_module()._family(tmp_path)
    family_dir = str(fam)
    manifest = os.path.join(family_dir, "checksums.txt")
    plain = fc._read_family(HostView(), family_dir, manifest, None, None)
    dirs: list[list[object]] = []
    assert fc._read_family(HostView(), family_dir, manifest, None, dirs) == plain
    assert ["", None, None] in dirs  # (links listed: never kept)
    assert plain["listed"] == len(names) and plain["manifest"] is None  # (escaping names: unknown, imend16)
    for root, dirnames, filenames in os.walk(fam):
        for name in dirnames + filenames:
            if os.path.islink(os.path.join(root, name)):
                os.unlink(os.path.join(root, name))
    plain = fc._read_family(HostView(), family_dir, manifest, None, None)
    dirs = []
    assert fc._read_family(HostView(), family_dir, manifest, None, dirs) == plain
    assert all(d[0] for d in dirs) and plain["missing"] > 0  # (kept: empty files, a directory, a FIFO are missing)
