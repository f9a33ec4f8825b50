"""cuda_libs on this host (HostView at "/", which reads a path as the kernel resolves it) lists a directory
reached under two names once; any other view lists each name, as before. This reading and the one before
(each name listed, every path resolved by realpath first) must give the same facts: compared here on
generated layouts (aliased and repeated LD_LIBRARY_PATH entries, links, stale and foreign ld.so cache entries,
files that are no library), with the same host default directories for both."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest
from readers.test_fsview_host_reading import ResolvedHost
from readers.test_libs import _build_cache

from stackcheck.probes import cudalibs
from stackcheck.probes.cudalibs import SONAMES, box_machine, probe_cuda_libs
from stackcheck.readers.fsview import FileStat, HostView, is_host


class Plain:
    """This host read as before (every path resolved by realpath first), through a view that is not a HostView:
    cuda_libs takes its generic path (each directory listed under each of its names)."""

    def __init__(self) -> None:
        self.host = ResolvedHost("/")

    def stat(self, path: str, follow_symlinks: bool = True) -> FileStat | None:
        return self.host.stat(path, follow_symlinks)

    def listdir(self, path: str) -> list[str]:
        return self.host.listdir(path)

    def read_bytes(self, path: str, limit: int, offset: int = 0) -> bytes:
        return self.host.read_bytes(path, limit, offset)

    def readlink(self, path: str) -> str:
        return self.host.readlink(path)

    def realpath(self, path: str) -> str:
        return self.host.realpath(path)


def _elf(path: Path, machine: int, elf_class: int = 2) -> None:
    head = bytearray(b"\x7fELF" + bytes([elf_class, 1, 1]) + bytes(57))
    head[18:20] = machine.to_bytes(2, "little")
    path.write_bytes(bytes(head))


def _layout(root: Path, rng: random.Random) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """Directories of libraries of every kind under `root`, an LD_LIBRARY_PATH over them and ld.so cache
    entries (soname, path) into them."""
    me = box_machine(HostView("/"))
    dirs = [root / f"d{i}" for i in range(4)]
    for d in dirs:
        d.mkdir()
    (root / "alias").symlink_to(dirs[0])  # the same directory under a second name
    (root / "file").write_bytes(b"")
    target = root / "target.so"
    _elf(target, me)
    names = [*SONAMES[:6], "libnuma.so.1"]
    for d in dirs:
        for soname in rng.sample(names, rng.randint(0, len(names))):
            path = d / soname
            kind = rng.choice(["ok", "ok", "32", "other", "text", "dir", "link", "broken", "fifo", "empty"])
            if kind == "ok":
                _elf(path, me)
            elif kind == "32":
                _elf(path, me, elf_class=1)
            elif kind == "other":
                _elf(path, 0xB7 if me != 0xB7 else 0x3E)
            elif kind == "text":
                path.write_text("INPUT(-lfoo)\n")
            elif kind == "dir":
                path.mkdir()
            elif kind == "link":
                path.symlink_to(target)
            elif kind == "broken":
                path.symlink_to(root / "nowhere.so")
            elif kind == "fifo":
                os.mkfifo(path)
            else:
                path.write_bytes(b"")
    choices = [*(str(d) for d in dirs), str(root / "alias"), f"{dirs[1]}/", str(root / "missing"), str(root / "file"),
               f"{root}/alias/../d2", "relative/lib", ""]  # fmt: skip
    env = {"LD_LIBRARY_PATH": ":".join(rng.choice(choices) for _ in range(rng.randint(0, 6)))}
    entries = []
    for soname in rng.sample(names, rng.randint(0, len(names))):
        for _ in range(rng.randint(1, 2)):  # a second entry is looked at after a foreign first one
            d = rng.choice([*dirs, root / "alias", root / "missing"])
            entries.append((soname, f"{d}/{soname}"))
    return env, entries


@pytest.mark.parametrize("seed", range(24))
def test_host_reading_gives_the_facts_of_the_views_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    env, entries = _layout(tmp_path, rng)
    cache = tmp_path / "ld.so.cache"
    cache.write_bytes(_build_cache([(s, p, 0x303) for s, p in entries]))
    if seed % 6 == 5:
        cache.unlink()  # no cache at all
    monkeypatch.setattr(cudalibs, "LD_CACHE", str(cache))
    host, plain = HostView("/"), Plain()
    assert is_host(host) and not is_host(plain)  # type: ignore[arg-type]
    fast: dict[str, Any] = probe_cuda_libs(env, host)
    slow: dict[str, Any] = probe_cuda_libs(env, plain)  # type: ignore[arg-type]
    assert fast == slow, (env, entries)
    assert list(fast) == list(slow)  # the same order of keys: the same JSON


def test_host_reading_of_this_box_as_it_is() -> None:
    env = {"LD_LIBRARY_PATH": os.environ.get("LD_LIBRARY_PATH", "") + ":/lib:/usr/lib:/lib/../lib64"}
    assert probe_cuda_libs(env, HostView("/")) == probe_cuda_libs(env, Plain())  # type: ignore[arg-type]
