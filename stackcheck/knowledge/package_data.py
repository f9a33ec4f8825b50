"""The data shipped inside the package: the manifests (stackcheck.manifests) and their schemas
(stackcheck.schemas), read straight from the package directory, or through importlib.resources (with its
zipfile and tempfile imports) only when the package is not a directory on disk.

Both the loader (stackcheck.knowledge.loader) and the validator (stackcheck.knowledge.validate) read these; this module
imports neither, so the two sit in no import cycle."""

from __future__ import annotations

import os
from collections.abc import Iterable

# file name -> schema file name
MANIFEST_FILES: dict[str, str] = {
    "meta.json": "meta.schema.json",
    "sources.json": "sources.schema.json",
    "architectures.json": "architectures.schema.json",
    "components.json": "components.schema.json",
    "features.json": "features.schema.json",
    "checks.json": "features.schema.json",
    "gates.json": "gates.schema.json",
    "signatures.json": "signatures.schema.json",
    "launch.json": "launch.schema.json",
    "recommend.json": "recommend.schema.json",
    "preflight.json": "preflight.schema.json",
}


def _package_dir(name: str) -> str | None:
    """The directory of package data `stackcheck.<name>` when the package is installed as files (a wheel, a
    checkout), else None (a zip import: importlib.resources reads it then)."""
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), name)
    return here if os.path.isfile(os.path.join(here, "__init__.py")) else None


def shipped_texts(names: Iterable[str] = MANIFEST_FILES) -> dict[str, tuple[str, str]]:
    """file name -> (origin, text) for every shipped manifest, or those named (the package directory, read
    directly)."""
    out: dict[str, tuple[str, str]] = {}
    base = _package_dir("manifests")
    if base is None:
        from importlib import resources

        root = resources.files("stackcheck.manifests")
        for name in names:
            res = root / name
            if res.is_file():
                out[name] = (f"manifests/{name}", res.read_text(encoding="utf-8"))
        return out
    for name in names:
        try:
            with open(os.path.join(base, name), encoding="utf-8") as fh:
                out[name] = (f"manifests/{name}", fh.read())
        except FileNotFoundError:
            continue
    return out


#: the coarsest granularity of a file's modification and change times on a common file system (FAT's 2 s; ext3,
#: HFS+ and many NFS servers: 1 s; ext4, XFS, Btrfs: the kernel's coarse clock, a few ms)
TICK_NS = 2_000_000_000


def _now_ns() -> int:
    import time

    return time.time_ns()


def shipped_files(names: Iterable[str] = MANIFEST_FILES) -> dict[str, tuple[str, str, str]] | None:
    """file name -> (origin, path, stamp) for every shipped manifest in the package directory, or None when the
    package is not a directory on disk (a zip import: shipped_texts reads the texts then). Nothing is read: the
    stamp names the file's state ("\\0file SIZE MTIME_NS CTIME_NS INODE DEVICE", from one stat taken before the
    text is read), so that the plan cache's key need not hash ~1.4 MB of text on every run. An edit changes the
    modification and change times (a change time cannot be set back), a replaced file its inode.

    Except within one tick of the file system's clock: an edit of the same size made in the tick of the last one
    leaves both times as they were on a file system whose times are coarse (a 1 s or 2 s granularity). So a file
    changed less than TICK_NS before this stat (or "later": a clock ahead of ours) gets a stamp that names this
    moment too ("\\0file ... racy NOW_NS"), which no later run repeats: nothing kept under it (the parsed twins,
    the plan cache, the gate's decisions) is ever served, and knowledge/prepared.py writes no twin for it. Once the
    tick has passed, any later write moves the times past the stamped ones, so the plain stamp names the content
    again (git's "racily clean" index entries, the same reasoning)."""
    base = _package_dir("manifests")
    if base is None:
        return None
    now = _now_ns()  # (before the stats: the texts are read after them)
    out: dict[str, tuple[str, str, str]] = {}
    for name in names:
        path = os.path.join(base, name)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            continue
        stamp = f"\0file {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_dev}"
        if now - max(st.st_mtime_ns, st.st_ctime_ns) < TICK_NS:
            stamp += f" {RACY} {now}"
        out[name] = (f"manifests/{name}", path, stamp)
    return out


#: the word a stamp taken within a tick of its file's last change carries (shipped_files)
RACY = "racy"


def racy(stamp: str) -> bool:
    """Whether `stamp` (shipped_files': one, or several in a key) was taken within a tick of a file's last change."""
    return f" {RACY} " in stamp


def schema_text(name: str) -> str:
    """One shipped schema's text (schemas/NAME)."""
    base = _package_dir("schemas")
    if base is None:
        from importlib import resources

        return (resources.files("stackcheck.schemas") / name).read_text(encoding="utf-8")
    with open(os.path.join(base, name), encoding="utf-8") as fh:
        return fh.read()


def schema_texts() -> dict[str, str]:
    base = _package_dir("schemas")
    if base is None:
        from importlib import resources

        root = resources.files("stackcheck.schemas")
        return {res.name: res.read_text(encoding="utf-8") for res in root.iterdir() if res.name.endswith(".json")}
    out: dict[str, str] = {}
    for name in sorted(os.listdir(base)):
        if name.endswith(".json"):
            with open(os.path.join(base, name), encoding="utf-8") as fh:
                out[name] = fh.read()
    return out
