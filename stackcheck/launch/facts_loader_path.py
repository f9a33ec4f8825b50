"""`gate --facts FILE -- env LD_LIBRARY_PATH=/x python -m sglang.launch_server ...`: a saved report's `cuda_libs` are
the loader's answers for the LD_LIBRARY_PATH the report was taken with. A launch whose own prefix sets, clears or
changes that variable (its `env NAME=VALUE`, `env -i`, `env -u`, a shell string's `export`) makes the server's loader
search other directories, which the facts never read: a library reachable only through them was called missing, and
one they shadow (an older libcudart.so.12 in /x) was judged by the facts' copy (a false pass).

glibc's loader searches, for a library whose requesting object has no DT_RUNPATH, the executable's DT_RPATH, then
LD_LIBRARY_PATH's directories in order, then the ld.so cache, then the default directories, and the first directory
that holds the name ends the search (elf/dl-load.c _dl_map_object: the rpath, env_path_list, the cache, the system
directories, in that order; the probe's model, stackcheck/probes/cudalibs.py). So, from the facts alone:

- a library the facts found through the interpreter's DT_RPATH is found there again (it comes before LD_LIBRARY_PATH);
- where the facts record the directories they searched (`cuda_libs.ld_library_path`, from igap43 on): the launch's
  directories equal to them change nothing; a library found in one of them is found there again where the launch's
  list reaches that directory through the facts' own earlier directories only (those held no copy, or one passed
  over); one found past them (the cache, the default directories) is found again where every launch directory is one
  of the facts'; everything else is not known;
- where the facts do not record them, any change the launch makes is not known.

What is not known becomes unknown with its reason (`cuda_libs.unreadable`, which every reader of the section judges
unknown), never the facts' answer."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

#: stands for the report's own LD_LIBRARY_PATH where the facts do not record it (no launch sets it to this value)
_UNRECORDED = "\x00the facts' own LD_LIBRARY_PATH\x00"


def _dirs(value: str | None, cwd: str | None = None) -> list[str]:
    """The directories of an LD_LIBRARY_PATH value as the loader searches them (stackcheck.probes.cudalibs.
    ld_library_path, the probe's own reading: ':' and ';', an empty or relative element from the launch directory
    `cwd`), ending with the first element not placed (relative with `cwd` not known, or naming $ORIGIN / $LIB /
    $PLATFORM) as written: no facts directory is that element, so no answer is taken past it (_same_answer)."""
    from stackcheck.probes.cudalibs import ld_library_path

    placed, unplaced = ld_library_path(value, cwd)
    return placed if unplaced is None else [*placed, unplaced]


def launch_loader_path(
    command: Sequence[str], mapping: Mapping[str, Any], facts_dirs: list[str] | None, cwd: str | None = None
) -> tuple[list[str] | None, bool]:
    """(the LD_LIBRARY_PATH directories the launch's server starts with, None where the facts' own, unrecorded, are
    kept; whether the launch changes the variable), with the command's env prefix and shell string applied to an
    environment whose LD_LIBRARY_PATH is the facts' (`facts_dirs`; None: not recorded). `cwd`: the launch directory
    where known (gate --cwd), from which a relative or empty element is read (_dirs)."""
    from stackcheck.launch import gate

    base = ":".join(facts_dirs) if facts_dirs is not None else _UNRECORDED
    argv, prefixed = gate.split_env_prefix(command, {"LD_LIBRARY_PATH": base})
    env = gate.find_launch(argv, mapping, prefixed)[2]
    value = env.get("LD_LIBRARY_PATH")
    if facts_dirs is None:
        if value == _UNRECORDED:
            return None, False
        if value is not None and _UNRECORDED in value:  # (`LD_LIBRARY_PATH=/x:$LD_LIBRARY_PATH`: the facts' and more)
            return None, True
        return _dirs(value, cwd), True
    launch = _dirs(value, cwd)
    return launch, launch != facts_dirs


def _same_answer(found: str | None, launch: list[str], facts_dirs: list[str]) -> bool:
    """Whether the loader's answer the facts give (`found`, found past any DT_RPATH) holds for the launch's
    directories too (see the module docstring)."""
    if found is None:
        return False  # (a file that is no library may have ended the search in a directory the launch drops)
    where = posixpath.dirname(found)
    if where not in facts_dirs:  # found in the cache or a default directory: no facts directory ended the search
        return all(d in facts_dirs for d in launch)
    if where not in launch:
        return False
    earlier = set(facts_dirs[: facts_dirs.index(where)])
    return all(d in earlier for d in launch[: launch.index(where)])


def apply_launch_loader_path(
    facts: dict[str, Any], command: Sequence[str], mapping: Mapping[str, Any], cwd: str | None = None
) -> list[str]:
    """Make the `cuda_libs` answers the launch's own LD_LIBRARY_PATH may change unknown (in place); the sonames made
    so. Nothing where the facts have no cuda_libs or the launch leaves the variable as the facts had it. `cwd`: the
    launch directory where known (gate --cwd)."""
    libs = facts.get("cuda_libs")
    if not isinstance(libs, dict):
        return []
    recorded = libs.get("ld_library_path")
    facts_dirs = [str(d) for d in recorded] if isinstance(recorded, list) else None
    launch, changed = launch_loader_path(command, mapping, facts_dirs, cwd)
    if not changed:
        return []
    own = libs.get("interpreter_rpath")
    rpath = {str(d).rstrip("/") or "/" for d in (own.get("dirs") or [])} if isinstance(own, dict) else set()
    shown = ":".join(launch) if launch is not None else "the facts' own with more"
    was = ":".join(facts_dirs) if facts_dirs is not None else "not recorded in the facts"
    unknown: list[str] = []
    unreadable = libs.get("unreadable")
    for soname, found in list(libs.items()):
        if not (soname.startswith("lib") and ".so" in soname):
            continue
        if isinstance(unreadable, dict) and soname in unreadable:
            continue
        path = found if isinstance(found, str) else None
        if path is not None and posixpath.dirname(path) in rpath:
            continue  # (the interpreter's DT_RPATH comes before LD_LIBRARY_PATH)
        if launch is not None and facts_dirs is not None and _same_answer(path, launch, facts_dirs):
            continue
        libs[soname] = None
        why = (
            f"the launch sets LD_LIBRARY_PATH ({shown or 'empty'}), and the facts' loader path ({was}) is another: "
            "where the server's loader finds it is not known from the facts"
        )
        libs.setdefault("unreadable", {})[soname] = why
        unknown.append(soname)
    return unknown
