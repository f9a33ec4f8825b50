"""The merged filesystem of an image: layers applied in order, whiteouts and opaque directories honoured.

One `Node` per path that survives: about 200 bytes each (slots, interned names), so an image of 100,000
files costs about 20 MB. A regular file's node says where its bytes are (an offset in its layer's stream,
the captured bytes themselves, or why they cannot be served); nothing of the content is kept otherwise.

The rules, as the OCI image spec (image-spec/layer.md, "Whiteouts") states them:
- `DIR/.wh.NAME` removes NAME (and everything below it) as it came from *lower* layers;
- `DIR/.wh..wh..opq` hides every lower-layer entry below DIR; entries of the same layer stay, whatever
  their order in the tar;
- other `.wh..wh.*` names (aufs bookkeeping) are ignored.
Member names are cleaned as the layer is applied: a leading `/` or `./` is dropped; `..` is resolved and a
name that would leave the root is skipped with a warning; a parent that is a symbolic link is followed
inside the image (as containerd does when it applies a layer), never outside it.
"""

from __future__ import annotations

import stat as st
import sys
from collections.abc import Callable
from typing import Any

from stackcheck.image.tarscan import DIRECTORY, GNU_SPARSE, HARDLINK, REGULAR, SYMLINK, Member

WHITEOUT = ".wh."
OPAQUE = ".wh..wh..opq"
MAX_LINK_HOPS = 40

_TYPE_BITS = {b"3": st.S_IFCHR, b"4": st.S_IFBLK, b"6": st.S_IFIFO}
_IFMT, _IFDIR, _IFLNK, _IFREG = 0o170000, st.S_IFDIR, st.S_IFLNK, st.S_IFREG


class Node:
    """One path of the merged image.

    `mode` is a full st_mode (type and permission bits). `layer` is the highest layer that declared the
    entry or put something below it (whiteouts and opaque markers compare against it). `where`:
    a directory's children (dict name -> Node); a symbolic link's target (str); a regular file's data: an
    int (offset in the stream of layer `layer`), a (layer, offset) tuple (a hard link to a file of another
    layer), bytes (captured while streaming) or a str (why the content cannot be served); None otherwise.
    """

    __slots__ = ("layer", "mode", "mtime", "size", "where")

    def __init__(self, mode: int, mtime: int, size: int, layer: int, where: Any) -> None:
        self.mode = mode
        self.mtime = mtime
        self.size = size
        self.layer = layer
        self.where = where

    @property
    def is_dir(self) -> bool:
        return st.S_ISDIR(self.mode)

    @property
    def is_link(self) -> bool:
        return st.S_ISLNK(self.mode)

    @property
    def is_file(self) -> bool:
        return st.S_ISREG(self.mode)


class FileNode(tuple[int, int, int, int, Any]):
    """A regular file of the merged image, as the fast layer reader (fastscan.py) records it: the same
    attributes as a `Node` (mode, mtime, size, layer, where: the offset of its bytes in its layer's stream),
    but immutable and built by tuple's C constructor, which costs a third of a Node's Python __init__; a
    layer of 70,000 files makes 70,000 of them. Files are never changed in place (a later layer replaces
    the node), so nothing is lost."""

    __slots__ = ()
    is_dir = False
    is_link = False
    is_file = True

    @property
    def mode(self) -> int:
        return self[0]

    @property
    def mtime(self) -> int:
        return self[1]

    @property
    def size(self) -> int:
        return self[2]

    @property
    def layer(self) -> int:
        return self[3]

    @property
    def where(self) -> Any:
        return self[4]


#: what a directory holds
AnyNode = Node | FileNode


class Warnings:
    """Recorded problems, capped (a hostile layer cannot grow the report without bound)."""

    CAP = 50

    def __init__(self) -> None:
        self.items: list[str] = []
        self.dropped = 0

    def add(self, text: str) -> None:
        if len(self.items) < self.CAP:
            self.items.append(text)
        else:
            self.dropped += 1

    def as_list(self) -> list[str]:
        if self.dropped:
            return [*self.items, f"... and {self.dropped} more"]
        return list(self.items)


def printable(text: str, limit: int = 200) -> str:
    """A member name as it may appear in a message: control characters and undecodable bytes escaped."""
    out = text.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
    out = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in out)
    return out if len(out) <= limit else out[:limit] + "..."


def clean_parts(name: str) -> tuple[list[str] | None, bool]:
    """The components of a member name inside the root, and whether it was absolute.

    None when `..` would leave the root (the member is refused).
    """
    absolute = name.startswith("/")
    parts: list[str] = []
    for part in name.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None, absolute
            parts.pop()
            continue
        parts.append(part)
    return parts, absolute


class Tree:
    """The merged tree, built layer by layer with `apply`, then read through `resolve`."""

    def __init__(self) -> None:
        self.root = Node(st.S_IFDIR | 0o755, 0, 0, -1, {})
        self.warnings = Warnings()
        self.entries = 1
        self._names: dict[str, str] = {}
        self._modes: dict[int, int] = {}

    # ---- building ---------------------------------------------------------------------------------
    def _intern(self, name: str) -> str:
        # component names repeat a lot (__init__.py, __pycache__, lib): one string each
        return self._names.setdefault(name, name) if len(self._names) < 500_000 else sys.intern(name)

    def _mode(self, mode: int) -> int:
        return self._modes.setdefault(mode, mode)

    def _dir_for(self, parts: list[str], layer: int, create: bool) -> Node | None:
        """The directory node at `parts`, following links inside the root; created when `create`."""
        node = self.root
        for i, part in enumerate(parts):
            assert isinstance(node.where, dict)
            child = node.where.get(part)
            if child is None:
                if not create:
                    return None
                child = Node(self._mode(st.S_IFDIR | 0o755), 0, 0, layer, {})
                node.where[self._intern(part)] = child
                self.entries += 1
            elif child.is_link:
                try:
                    _, target = self.resolve("/" + "/".join(parts[: i + 1]))
                except OSError:  # a link loop
                    return None
                if not isinstance(target, Node) or not target.is_dir:
                    return None
                child = target
            elif not isinstance(child, Node) or not child.is_dir:
                return None
            if create and child.layer < layer:
                child.layer = layer  # something of this layer lives below: an opaque marker must keep it
            node = child
        return node

    def _prune(self, node: Node, layer: int) -> None:
        """Remove everything below `node` that came from a layer lower than `layer` (opaque directory)."""
        children = node.where
        assert isinstance(children, dict)
        for name in list(children):
            child = children[name]
            if child.layer < layer:
                del children[name]
            elif child.is_dir:
                self._prune(child, layer)

    def apply(
        self,
        layer: int,
        members: Any,
        where: str,
        capture: Callable[[str, Member], bytes | None] | None = None,
    ) -> None:
        """Apply one layer's members (an iterable of `Member`, consumed once).

        `capture(box_path, member)` may read the member's data from the stream (while it is current) and
        return it; that file's content is then served from memory.
        """
        applier = LayerApplier(self, layer, where, capture)
        add = applier.add
        for m in members:
            add(m)
        applier.finish()

    def _whiteout(self, layer: int, parts: list[str], where: str) -> None:
        base = parts[-1]
        if base == OPAQUE:
            directory = self._dir_for(parts[:-1], layer, create=True)
            if directory is not None:
                self._prune(directory, layer)
            return
        if base.startswith(WHITEOUT + WHITEOUT):
            return  # aufs bookkeeping (.wh..wh.plnk, .wh..wh.aufs): not a deletion
        name = base[len(WHITEOUT) :]
        shown = "/" + "/".join([*parts[:-1], name])
        directory = self._dir_for(parts[:-1], layer, create=False)
        children = directory.where if directory is not None else None
        if not isinstance(children, dict) or name not in children:
            self.warnings.add(f"{where}: whiteout of {printable(shown)}, which no lower layer has: ignored")
            return
        if children[name].layer < layer:
            del children[name]

    def _node_for(
        self,
        layer: int,
        m: Member,
        parent_key: str,
        base: str,
        where: str,
        capture: Callable[[str, Member], bytes | None] | None,
    ) -> Node | None:
        typ = m.type
        mode = m.mode & 0o7777
        if typ in REGULAR or typ == GNU_SPARSE:
            if m.sparse:
                size = m.real_size if m.real_size is not None else m.size
                return Node(self._mode(st.S_IFREG | mode), m.mtime, size, layer, "a sparse tar member: not read")
            data: Any = m.data_pos
            if capture is not None:
                got = capture(f"/{parent_key}/{base}" if parent_key else f"/{base}", m)
                if got is not None:
                    data = got
            return Node(self._mode(st.S_IFREG | mode), m.mtime, m.size, layer, data)
        if typ == DIRECTORY:
            return Node(self._mode(st.S_IFDIR | mode), m.mtime, 0, layer, {})
        if typ == SYMLINK:
            return Node(self._mode(st.S_IFLNK | 0o777), m.mtime, len(m.linkname), layer, m.linkname)
        if typ == HARDLINK:
            return self._hardlink(layer, m, where)
        if typ in _TYPE_BITS:
            return Node(self._mode(_TYPE_BITS[typ] | mode), m.mtime, 0, layer, None)
        # an unknown type flag: tar readers treat it as a regular file; its data is in the stream
        return Node(self._mode(st.S_IFREG | mode), m.mtime, m.size, layer, m.data_pos)

    def _hardlink(self, layer: int, m: Member, where: str) -> Node | None:
        tparts, _ = clean_parts(m.linkname)
        target: AnyNode | None = None
        if tparts:
            parent = self._dir_for(tparts[:-1], layer, create=False)
            if parent is not None and isinstance(parent.where, dict):
                target = parent.where.get(tparts[-1])
        if target is None or target.is_dir:
            what = "a directory" if target is not None else "not in this or a lower layer"
            self.warnings.add(
                f"{where}: hard link {printable(m.name)} -> {printable(m.linkname)}: target {what}: skipped"
            )
            return None
        data = target.where
        if target.is_file and isinstance(data, int) and target.layer != layer:
            data = (target.layer, data)  # the bytes live in the target's layer
        return Node(target.mode, target.mtime, target.size, layer, data)

    # ---- reading ----------------------------------------------------------------------------------
    def resolve(self, path: str, follow_last: bool = True) -> tuple[str, AnyNode | None]:
        """(the box path with every link resolved inside the root, its node or None).

        Raises OSError (ELOOP) after MAX_LINK_HOPS links.
        """
        import errno

        todo = [p for p in path.split("/") if p and p != "."]
        todo.reverse()
        names: list[str] = []
        nodes: list[AnyNode | None] = [self.root]
        hops = 0
        while todo:
            part = todo.pop()
            if part == ".":
                continue
            if part == "..":
                if names:
                    names.pop()
                    nodes.pop()
                continue
            cur = nodes[-1]
            child = cur.where.get(part) if cur is not None and isinstance(cur.where, dict) else None
            if child is not None and child.is_link and (follow_last or todo):
                hops += 1
                if hops > MAX_LINK_HOPS:
                    raise OSError(errno.ELOOP, "Too many levels of symbolic links", path)
                target = child.where
                assert isinstance(target, str)
                if target.startswith("/"):
                    names, nodes = [], [self.root]
                more = [p for p in target.split("/") if p and p != "."]
                more.reverse()
                todo.extend(more)
                continue
            names.append(part)
            nodes.append(child)
        return "/" + "/".join(names), nodes[-1]


class LayerApplier:
    """Applies the members of one layer to a Tree, one `add(member)` at a time, then `finish()`.

    `parents` caches parent directories by their path within this layer (consecutive members share
    parents, so most members cost one dict lookup instead of a walk from the root); it is cleared whenever
    a directory or a link might leave the tree (whiteouts, opaque markers, replacements). The fast reader of
    uncompressed layers (fastscan.py) inserts common members itself through the same cache and hands every
    other member to `add`.
    """

    __slots__ = ("absolute_seen", "capture", "entries", "layer", "parents", "tree", "where")

    def __init__(
        self,
        tree: Tree,
        layer: int,
        where: str,
        capture: Callable[[str, Member], bytes | None] | None = None,
    ) -> None:
        self.tree = tree
        self.layer = layer
        self.where = where
        self.capture = capture
        self.parents: dict[Any, Node] = {}  # keyed by the parent's path (str) or its raw bytes (fastscan)
        self.entries = 0
        self.absolute_seen = False

    def finish(self) -> None:
        self.tree.entries += self.entries
        self.entries = 0

    def parent(self, parent_key: str, name: str) -> Node | None:
        """The directory a member goes in (created as needed), or None with a warning."""
        parent = self.parents.get(parent_key)
        if parent is None:
            parent = self.tree._dir_for(parent_key.split("/") if parent_key else [], self.layer, create=True)
            if parent is None:
                self.tree.warnings.add(f"{self.where}: {printable(name)}: a parent is not a directory: skipped")
                return None
            self.parents[parent_key] = parent
        return parent

    def put(self, children: dict[str, AnyNode], base: str, node: AnyNode) -> None:
        """Put `node` in a directory (a directory over a directory keeps its children)."""
        old = children.get(base)
        if old is not None:
            old_type = old.mode & _IFMT
            if old_type == _IFDIR and node.mode & _IFMT == _IFDIR:
                assert isinstance(old, Node)  # directories are always Nodes
                old.mode, old.mtime, old.layer = node.mode, node.mtime, self.layer
                return
            if old_type in (_IFDIR, _IFLNK):
                self.parents.clear()
        else:
            self.entries += 1
        names = self.tree._names
        children[names.setdefault(base, base)] = node  # one string per distinct name

    def add(self, m: Member) -> None:
        tree = self.tree
        name = m.name
        if name.startswith("./") and len(name) > 2:
            name = name[2:]  # some layer writers prefix every name with ./
        # substring tests, not a regex: a regex search here cost more than all the rest of a member
        if name and name[0] not in "./" and "/." not in name and "//" not in name:
            parent_key, _, base = name.rstrip("/").rpartition("/")
        else:
            parts, absolute = clean_parts(name)
            if absolute and not self.absolute_seen:
                self.absolute_seen = True
                tree.warnings.add(
                    f"{self.where}: absolute member names (such as {printable(name)}): read inside the root"
                )
            if parts is None:
                tree.warnings.add(f"{self.where}: member {printable(name)} leaves the image root: skipped")
                return
            if not parts:
                if m.type == DIRECTORY:
                    tree.root.mode = tree._mode(st.S_IFDIR | m.mode)
                return
            parent_key, base = "/".join(parts[:-1]), parts[-1]
        if base.startswith(WHITEOUT):
            self.parents.clear()
            tree._whiteout(self.layer, [*parent_key.split("/"), base] if parent_key else [base], self.where)
            return
        parent = self.parent(parent_key, name)
        if parent is None:
            return
        children = parent.where
        assert isinstance(children, dict)
        if m.type in REGULAR and self.capture is None and not m.sparse:  # most members: inlined
            mode = _IFREG | m.mode
            modes = tree._modes
            node = Node(modes.setdefault(mode, mode), m.mtime, m.size, self.layer, m.data_pos)
        else:
            got = tree._node_for(self.layer, m, parent_key, base, self.where, self.capture)
            if got is None:
                return
            node = got
        self.put(children, base, node)
