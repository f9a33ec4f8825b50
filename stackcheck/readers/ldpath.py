"""LD_LIBRARY_PATH as glibc's dynamic loader reads it: the one reading every loader search of stackcheck shares (the
cuda_libs probe, the --deep shared-library resolution in readers/libs.py, the jit probe's bare NCCL name, the packages
probe's RUNPATH objects, gate --facts' launch loader path).

glibc splits the value at ':' and ';', keeps an empty element (the directory name "", the working directory) and a
relative one as written, each with its trailing slashes dropped but "/"'s, and expands a dynamic string token in
an element against the main executable's map, not the loading object's ($ORIGIN is the executable's directory):
bminor/glibc 010d2052 elf/dl-load.c _dl_init_paths ("This points to the map of the main object": l =
GL(dl_ns)[LM_ID_BASE]._ns_loaded; fillin_rpath (llp_tmp, ..., ":;", source, NULL, l)) and fillin_rpath
(expand_dynamic_string_token (l, cp) per element; "`strsep' can pass an empty string"; "Remove trailing slashes
(except for "/")"); the same in glibc 2.26 (lattera/glibc 0065aaaa, the whole value expanded against that map
first)."""

from __future__ import annotations

import posixpath


def ld_library_path(value: str | None, cwd: str | None = None) -> tuple[list[str], str | None]:
    """(LD_LIBRARY_PATH's directories as the dynamic loader searches them, up to the first element not placed; that
    element, or None): the one reading of the variable (see the module docstring). glibc splits the value at ':' and
    ';' and keeps an empty element (the directory name "", the working directory) and a relative one as written,
    each with its trailing slashes dropped but "/"'s. A relative or empty element is joined to `cwd`, the server's
    working directory, where that is known (an absolute path); an element with a dynamic string token ($ORIGIN,
    $LIB, $PLATFORM, which the loader expands against the executable, the Python interpreter, not the loading
    object), or a relative one without `cwd`, is not placed: the search stops being known there, and a library not
    found before it is unknown, never found past it nor missing."""
    placed: list[str] = []
    for element in value.replace(";", ":").split(":") if value else ():
        if "$" in element:
            return placed, element
        if element.startswith("/"):
            placed.append(element.rstrip("/") or "/")
        elif cwd is not None and cwd.startswith("/"):
            placed.append((posixpath.join(cwd, element) if element else cwd).rstrip("/") or "/")
        else:
            return placed, element
    return placed, None


def unplaced_reason(element: str) -> str:
    """Why the loader's search is not known past LD_LIBRARY_PATH's `element` (ld_library_path's second answer)."""
    lead = f"LD_LIBRARY_PATH's element {element[:120]!r}, searched before the directories after it, the ld.so cache "
    if "$" in element:
        return (
            lead + "and the default directories, names a dynamic string token ($ORIGIN, $LIB or $PLATFORM) that "
            "the loader expands: not read"
        )
    return (
        lead + "and the default directories, is read from the server's working directory, which is not known "
        "(gate --cwd names it)"
    )
