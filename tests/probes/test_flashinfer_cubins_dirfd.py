"""iperf39 (issue 21): the cubin probe's first reading lstats each listed name relative to its directory held open
(_HostDir: fstatat, the kernel walks the directory's path once) instead of by the name's whole path. The answer must
be the one the straightforward reading gives: every kind of name (a file, an empty file, a dangling / looping /
good / empty-target link, a directory, a FIFO, /dev/null, a name not there) judged both ways, with a root view
(--root: the view's own stat) and on the host. Trees written here in the shape of FlashInfer's (no upstream file)."""

from __future__ import annotations

import hashlib
import os
import posixpath
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes import flashinfer_cubins as fc
from stackcheck.readers.fsview import HostView


def _family(tmp: Path) -> tuple[Path, list[str]]:
    fam = tmp / "cubins" / "feed0002" / "fmha" / "trtllm-gen"
    (fam / "kernels" / "deeper").mkdir(parents=True)
    (tmp / "elsewhere.cubin").write_bytes(b"abc")
    (tmp / "hollow.cubin").write_bytes(b"")
    kinds: dict[str, Any] = {
        "file.cubin": b"x",
        "empty.cubin": b"",
        "dangling.cubin": ("link", tmp / "gone.cubin"),
        "loop.cubin": ("self", None),
        "good-link.cubin": ("link", tmp / "elsewhere.cubin"),
        "relative-link.cubin": ("link", Path("file.cubin")),
        "empty-link.cubin": ("link", tmp / "hollow.cubin"),
        "dir.cubin": ("dir", None),
        "fifo.cubin": ("fifo", None),
        "null.cubin": ("link", Path("/dev/null")),
        "two..dots.cubin": b"y",
    }
    names: list[str] = []
    for sub in ("", "kernels/", "kernels/deeper/"):
        for leaf, how in kinds.items():
            path = fam / sub / leaf
            if isinstance(how, bytes):
                path.write_bytes(how)
            elif how[0] == "link":
                path.symlink_to(how[1])
            elif how[0] == "self":
                path.symlink_to(path)
            elif how[0] == "dir":
                path.mkdir()
            else:
                os.mkfifo(path)
            names.append(sub + leaf)
        names.append(sub + "absent.cubin")
    names += ["nowhere/x.cubin", "kernels/./file.cubin"]
    escapes = ["../escape.cubin", "kernels/../file.cubin", "kernels/..", "/abs.cubin"]  # (never listed)
    manifest = "".join(f"{hashlib.sha256(n.encode()).hexdigest()} {n}\n" for n in names + escapes).encode()
    (fam / "checksums.txt").write_bytes(manifest)
    return fam, names


def _reference(view: Any, family_dir: str, names: list[str]) -> list[str]:
    """The straightforward reading: each name's directory listed, each listed name stat'ed by the view (links
    followed), a loadable file being a regular file that is not empty."""
    missing = []
    for name in names:
        sub, _, leaf = name.rpartition("/")
        directory = posixpath.join(family_dir, sub) if sub else family_dir
        try:
            listing = set(view.listdir(directory))
        except OSError:
            missing.append(name)
            continue
        found = view.stat(posixpath.join(directory, leaf)) if leaf in listing else None
        if found is None or found.kind != "file" or found.size <= 0:
            missing.append(name)
    return missing


class _NoHostPath:
    """A view with no host path (as an image's): every name goes through the view's own stat."""

    def __init__(self, inner: HostView) -> None:
        self.inner = inner

    def listdir(self, path: str) -> list[str]:
        return list(self.inner.listdir(path))

    def stat(self, path: str, follow_symlinks: bool = True) -> Any:
        return self.inner.stat(path, follow_symlinks)

    def realpath(self, path: str) -> str:
        return str(self.inner.realpath(path))

    def read_bytes(self, path: str, limit: int) -> bytes:
        return bytes(self.inner.read_bytes(path, limit))


@pytest.mark.parametrize("rooted", [False, True])
@pytest.mark.parametrize("hidden", [False, True])
def test_the_fast_reading_gives_the_straightforward_answer(tmp_path: Path, rooted: bool, hidden: bool) -> None:
    fam, names = _family(tmp_path)
    view: Any = HostView(str(tmp_path)) if rooted else HostView()
    if hidden:
        view = _NoHostPath(view)
    family_dir = "/" + str(fam.relative_to(tmp_path)) if rooted else str(fam)
    want = _reference(view, family_dir, names)
    assert "kernels/file.cubin" not in want and "kernels/relative-link.cubin" not in want  # (a real shape)
    got = fc._read_family(view, family_dir, posixpath.join(family_dir, "checksums.txt"), None, None)
    assert got["listed"] == len(names) and got["missing"] == len(want)
    assert got["missing_first"] == sorted(want)[: len(got["missing_first"])]
    top = [n for n in names if "/" not in n]
    named = fc.named_status(view, posixpath.dirname(family_dir), posixpath.basename(family_dir), top)
    assert named["missing_first"] == _reference(view, family_dir, top)[: len(named["missing_first"])]
    assert named["missing"] == len(_reference(view, family_dir, top))


def test_every_listed_name_is_lstated_relative_to_its_open_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: os.lstat of each name's joined path (the kernel walks every component again for each of 16,004
    names of flashinfer-cubin 0.6.13)."""
    fam, names = _family(tmp_path)
    joined: list[str] = []
    real_lstat = os.lstat

    def spy(path: Any, *args: Any, **kw: Any) -> os.stat_result:
        if str(path).endswith(".cubin"):
            joined.append(str(path))
        return real_lstat(path, *args, **kw)

    monkeypatch.setattr(os, "lstat", spy)
    got = fc._read_family(HostView(), str(fam), str(fam / "checksums.txt"), None, None)
    assert got["listed"] == len(names)
    assert joined == []


def test_the_open_directories_are_closed(tmp_path: Path) -> None:
    fam, _ = _family(tmp_path)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        fc._read_family(HostView(), str(fam), str(fam / "checksums.txt"), None, None)
        fc.named_status(HostView(), str(fam.parent), fam.name, ["file.cubin"])
    assert len(os.listdir("/proc/self/fd")) == before
