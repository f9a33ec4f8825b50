"""HostView at "/" lists and reads a path as it is first (the kernel resolves its links) and goes the resolved
way (HostView.realpath, then the host path) only where that fails. Compared here with the resolved way alone,
the reading before, on generated paths (links relative, absolute, chained, looping and broken, to files and
to directories, "..", "//", trailing slashes, missing parts, FIFOs, "", relative paths): the same names, the
same bytes, the same errors with the same text."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stackcheck.readers.fsview import HostView


class ResolvedHost(HostView):
    """HostView's reading before the direct first try: every path resolved by realpath first."""

    def listdir(self, path: str) -> list[str]:
        return os.listdir(self.host_path(self.realpath(path)))

    def read_bytes(self, path: str, limit: int, offset: int = 0) -> bytes:
        return self._read(path, self.host_path(self.realpath(path)), limit, offset)


def outcome(call: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    try:
        value = call(*args)
    except Exception as exc:  # compared as what a caller sees: type, errno, text
        return "error", (type(exc).__name__, getattr(exc, "errno", None), str(exc))
    return "value", sorted(value) if isinstance(value, list) else value


def _tree(root: Path) -> list[str]:
    (root / "d/sub").mkdir(parents=True)
    (root / "d/a.txt").write_bytes(b"0123456789" * 5)
    (root / "d/sub/b.so").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(60))
    (root / "d/empty").write_bytes(b"")
    os.mkfifo(root / "d/fifo")
    (root / "rel").symlink_to("d")
    (root / "abs").symlink_to(root / "d")
    (root / "chain").symlink_to("rel/sub")
    (root / "d/up").symlink_to("../d/sub")
    (root / "file_link").symlink_to("d/a.txt")
    (root / "broken").symlink_to("nowhere")
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    (root / "d/sub/back").symlink_to("..")
    names = ["d", "rel", "abs", "chain", "d/up", "file_link", "broken", "loop1", "d/sub/back", "missing", "d/a.txt",
             "d/sub", "d/sub/b.so", "d/empty", "d/fifo", ".", ".."]  # fmt: skip
    return names


def _paths(root: Path, rng: random.Random) -> list[str]:
    names = _tree(root)
    out = ["", "/", "//", "/nonexistent/../etc", str(root), f"{root}/", f"/{root}"]
    for _ in range(400):
        parts = [rng.choice(names) for _ in range(rng.randint(1, 3))]
        path = "/".join(parts)
        if rng.random() < 0.2:
            path += "/"
        if rng.random() < 0.1:
            path = path.replace("/", "//", 1)
        out.append(path if rng.random() < 0.15 else f"{root}/{path}")  # some relative to the working directory
    return out


@pytest.mark.parametrize("seed", range(3))
def test_host_reading_is_the_resolved_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    monkeypatch.chdir(tmp_path)
    rng = random.Random(seed)
    host, resolved = HostView("/"), ResolvedHost("/")
    checked = 0
    for path in _paths(tmp_path, rng):
        assert outcome(host.listdir, path) == outcome(resolved.listdir, path), path
        for limit, offset in ((20, 0), (7, 3), (0, 0)):
            got = outcome(host.read_bytes, path, limit, offset)
            assert got == outcome(resolved.read_bytes, path, limit, offset), (path, limit, offset)
            checked += got[0] == "value"
    assert checked > 50  # many paths read a file, not only errors


def test_a_root_other_than_slash_reads_only_the_resolved_way(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/os-release").write_text("ID=fake\n")
    (tmp_path / "link").symlink_to("/etc")  # inside the root: its own etc, never the host's
    view = HostView(str(tmp_path))
    assert view.read_bytes("/link/os-release", 100) == b"ID=fake\n"
    assert view.listdir("/link") == ["os-release"]
