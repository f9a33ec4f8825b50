"""The model architectures an installed SGLang registers, read from its sources without importing it.

SGLang's model registry (sglang/srt/models/registry.py, import_model_classes) imports every module of the
package sglang.srt.models that is not a subpackage and, where the module has a module-level `EntryClass`, registers
each class it names (one class, or a list of classes) under the class's `__name__`. Here the same directory is
listed and each `*.py` module's text is read: a file without the word EntryClass registers nothing and is not
parsed; in the others each module-level `EntryClass = ...` statement is cut out (from its line to the end of its
brackets) and parsed with `ast` alone (never compiled or run). The names it holds are resolved to the classes'
`__name__` as Python would give it: a class defined in the file keeps its name; a module-level alias
(`A = B`) or an import with `as` is followed to the name it binds. What cannot be resolved (an expression that is
not a name or a list/tuple of names, several EntryClass statements, an indented one, a compiled module with no
source, a file too large or not UTF-8) is listed in `unresolved` with its file: such a module may register names
not seen here, so an architecture absent from `names` is then not known to be absent.

What the import would also decide and reading cannot: a module whose import fails at run time (a dependency
missing) registers nothing (the registry logs a warning and goes on); that is not seen here.

The reading is kept in the user cache ($STACKCHECK_CACHE_DIR, else $XDG_CACHE_HOME/stackcheck, else
~/.cache/stackcheck), under registry/, keyed by the directory and the name, size, modification and change times,
inode and device of every file in it (a changed file set is read again, one rewritten in place at the same size
and modification time too); only for the host's own file system (a --root or image view is
read each time). A cache that cannot be read or written is no cache.
"""

from __future__ import annotations

import json
import os
import posixpath
import re

from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Mapping

    from stackcheck.readers.fsview import FileView

MODELS_DIR = "sglang/srt/models"
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_FILES = 5000
FORMAT = 1
_STATEMENT = re.compile(rb"^([ \t]*)EntryClass\s*(?::[^=\n]*)?=(?!=)", re.MULTILINE)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.py$")
_EXT = (".py", ".pyc", ".so", ".pyd")


class Registry(NamedTuple):
    """The registered architecture names (class __name__ -> module file) and what could not be read."""

    names: dict[str, str]
    unresolved: list[str]  # "file: reason", one per module whose registrations are not known
    files: int  # modules listed
    error: str | None = None  # the directory could not be read at all

    def to_json(self) -> dict[str, object]:
        return {"names": self.names, "unresolved": self.unresolved, "files": self.files, "error": self.error}


def _module_names(entries: list[str]) -> tuple[list[str], list[str]]:
    """(source modules, compiled-only modules) among a directory's entries, as pkgutil.iter_modules would list
    them (no __init__, a name that is an identifier)."""
    sources = sorted(n for n in entries if _IDENT.match(n) and n != "__init__.py")
    stems = {n[:-3] for n in sources}
    compiled = sorted(
        n
        for n in entries
        if n.endswith((".so", ".pyd")) and n.split(".", 1)[0].isidentifier() and n.split(".", 1)[0] not in stems
        and n.split(".", 1)[0] != "__init__"
    )  # fmt: skip
    return sources, compiled


def _statement_text(data: bytes, start: int) -> bytes:
    """From `start` to the end of the logical line the statement at `start` spans (brackets balanced; strings and
    comments inside brackets are skipped roughly: a quote or # inside a list of class names is not expected)."""
    depth = 0
    i = start
    n = len(data)
    while i < n:
        c = data[i]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
        elif c == 0x23:  # '#': to the end of the line
            nl = data.find(b"\n", i)
            i = n if nl < 0 else nl
            continue
        elif c == 0x0A and depth <= 0 and data[i - 1] != 0x5C:  # a newline outside brackets, not after '\'
            return data[start:i]
        i += 1
    return data[start:]


#: `from M import (` at the start of a line: the parenthesised names run to the next ")" (found with str.find, so a
#: file of unclosed brackets costs one pass, not one per bracket)
_FROM_GROUP = re.compile(r"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]*\(", re.MULTILINE)


def _in_import_group(text: str, name: re.Pattern[str]) -> bool:
    """Whether `name` is among the names of a parenthesised `from M import (...)`; each bracket is searched once and
    the next search starts after it (linear in the text, whatever it holds)."""
    pos = 0
    while (m := _FROM_GROUP.search(text, pos)) is not None:
        close = text.find(")", m.end())
        if close < 0:
            return False
        if name.search(text, m.end(), close):
            return True
        pos = close + 1
    return False


def _bound_name(text: str, name: str, depth: int = 0) -> str | None:
    """The __name__ of the class bound to module-level `name`: itself where the file defines `class name`;
    followed through `name = other` and `import x as name` / `from m import x as name`; the name itself where it
    is imported plainly. None: not found as any of these. Every pattern stays within a line or is searched once
    per bracket (_in_import_group): a hostile module costs time linear in its size, never quadratic."""
    if depth > 8:
        return None
    esc = re.escape(name)
    if re.search(rf"^class[ \t]+{esc}\b", text, re.MULTILINE):
        return name
    alias = re.search(rf"^{esc}[ \t]*=[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t\r]*$", text, re.MULTILINE)
    if alias:
        return _bound_name(text, alias.group(1), depth + 1)
    renamed = re.search(rf"\b([A-Za-z_][A-Za-z0-9_]*)\s+as\s+{esc}\b", text)
    if renamed and re.search(r"\bimport\b", text[: renamed.start()]):
        return renamed.group(1)
    if re.search(rf"^[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+[^\n]*\b{esc}\b", text, re.MULTILINE) or _in_import_group(
        text, re.compile(rf"\b{esc}\b")
    ):
        return name
    return None


def entry_names(data: bytes, rel: str) -> tuple[list[str], str | None]:
    """The class names one module's EntryClass registers, or (what was read, why the rest is not known)."""
    if b"EntryClass" not in data:
        return [], None
    found = list(_STATEMENT.finditer(data))
    if not found:
        return [], None  # the word only (a comment, __all__, a getattr in another module)
    if len(found) > 1:
        return [], f"{rel}: {len(found)} EntryClass assignments"
    m = found[0]
    if m.group(1):
        return [], f"{rel}: EntryClass assigned inside a block (indented)"
    import ast

    from stackcheck.pyast import parse

    try:
        text = data.decode("utf-8-sig")
        tree = parse(_statement_text(data, m.start()).decode("utf-8"))
    except UnicodeDecodeError:
        return [], f"{rel}: not UTF-8 text"
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return [], f"{rel}: EntryClass statement does not parse: {str(exc).splitlines()[0] if str(exc) else exc}"
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assign | ast.AnnAssign):
        return [], f"{rel}: EntryClass statement is not a plain assignment"
    value = tree.body[0].value
    elts = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
    out: list[str] = []
    for e in elts:
        if not isinstance(e, ast.Name):
            return out, f"{rel}: EntryClass holds an expression, not a class name"
        bound = _bound_name(text, e.id)
        if bound is None:
            return out, f"{rel}: EntryClass names {e.id}, which the module neither defines nor imports"
        out.append(bound)
    return out, None


def read_registry(view: FileView, site_dir: str) -> Registry:
    """The architectures SGLang installed under `site_dir` registers (site_dir/sglang/srt/models)."""
    directory = posixpath.join(site_dir, MODELS_DIR)
    try:
        entries = view.listdir(directory)
    except OSError as exc:
        return Registry({}, [], 0, f"{directory}: cannot list: {exc.strerror or exc}")
    sources, compiled = _module_names(entries)
    if len(sources) > MAX_FILES:
        return Registry({}, [], len(sources), f"{directory}: {len(sources)} modules, more than {MAX_FILES}")
    names: dict[str, str] = {}
    unresolved = [f"{n}: a compiled module without source" for n in compiled]
    for n in sources:
        path = posixpath.join(directory, n)
        try:
            st = view.stat(path)
            if st is None or st.kind != "file":
                unresolved.append(f"{n}: not a regular file")
                continue
            if st.size > MAX_FILE_BYTES:
                unresolved.append(f"{n}: {st.size} bytes, larger than the {MAX_FILE_BYTES}-byte limit")
                continue
            data = view.read_bytes(path, MAX_FILE_BYTES + 1)
        except OSError as exc:
            unresolved.append(f"{n}: cannot read: {exc.strerror or exc}")
            continue
        got, why = entry_names(data, n)
        for name in got:
            names.setdefault(name, n[:-3])
        if why:
            unresolved.append(why)
    return Registry(names, unresolved, len(sources) + len(compiled))


def cache_dir(env: Mapping[str, str]) -> str | None:
    from stackcheck.paths import user_cache_dir

    return user_cache_dir(env, "registry")


def _stamp(directory: str) -> str | None:
    """A digest of the directory's file set (name, size, modification and change times, inode and device of
    each entry), or None when it cannot be listed. The change time and the inode are there because a file
    rewritten in place at the same size with its modification time put back (`cp -p`, `rsync -a`, `touch -r`,
    an image layer with fixed timestamps) keeps the other two: the kernel sets ctime on every write and
    nobody can set it back, as knowledge.package_data.shipped_files stamps the manifests."""
    try:
        items = sorted(_entry_stamp(e) for e in os.scandir(directory) if e.name.endswith(_EXT))
    except OSError:
        return None
    try:  # (hashlib's own blake2b, from its module: importing hashlib loads OpenSSL, ~4-6 ms of a gate)
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import blake2b
    h = blake2b(digest_size=20)
    h.update(f"{FORMAT}\0{directory}\0".encode("utf-8", "surrogateescape"))
    for name, *stamp in items:
        h.update(f"{name}\0{' '.join(map(str, stamp))}\n".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _entry_stamp(entry: os.DirEntry[str]) -> tuple[str, int, int, int, int, int]:
    st = entry.stat()
    return entry.name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev


def read_registry_cached(view: FileView, site_dir: str, env: Mapping[str, str]) -> Registry:
    """read_registry, kept in the user cache for the host's own file system (see the module docstring). An entry is
    read and written only in a directory that is this user's and no one else can write, never through a link
    (paths.read_private, paths.write_private): a link planted at an entry's name is neither read nor written
    through, and a corrupt entry (truncated, not UTF-8, nested past the parser's depth) is no entry."""
    from stackcheck.paths import read_private, write_private
    from stackcheck.readers.fsview import is_host

    root = cache_dir(env) if is_host(view) else None
    directory = posixpath.join(site_dir, MODELS_DIR)
    key = _stamp(directory) if root is not None else None
    name = key + ".json" if key is not None else None
    if root is not None and name is not None:
        raw = read_private(root, name, MAX_FILE_BYTES)
        try:
            entry = json.loads(raw) if raw is not None else None
            if isinstance(entry, dict) and entry.get("key") == key and entry.get("directory") == directory:
                v = entry.get("value") or {}
                names, unresolved = v.get("names"), v.get("unresolved")
                if isinstance(names, dict) and isinstance(unresolved, list):
                    return Registry(
                        {str(k): str(x) for k, x in names.items()},
                        [str(u) for u in unresolved],
                        int(v.get("files") or 0),
                    )
        except (ValueError, TypeError, AttributeError, RecursionError, OverflowError):
            pass
    reg = read_registry(view, site_dir)
    if root is not None and name is not None and reg.error is None:
        entry = {"key": key, "directory": directory, "value": reg.to_json()}
        write_private(root, name, json.dumps(entry, separators=(",", ":")))
    return reg
