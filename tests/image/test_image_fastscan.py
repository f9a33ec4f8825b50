"""The fast reader of uncompressed layers (stackcheck/image/fastscan.py) against the general one
(tarscan.TarScanner + Tree.apply): the same image read both ways gives the same tree, the same contents,
the same warnings and the same errors, for ordinary layers in every tar format tarfile writes (ustar with
its prefix field, GNU long names, pax records), hostile names and links, and headers that make the fast
loop hand over to the strict reader (base-256 sizes, an old v7 header, a sparse member)."""

from __future__ import annotations

import contextlib
import io
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as s
from imagebuild import docker_save, layer_tar

import stackcheck.image.layout as layout_module
from stackcheck.errors import BadInputError
from stackcheck.image import open_image


@contextlib.contextmanager
def reader(fast: bool) -> Iterator[None]:
    saved = layout_module.FAST_PLAIN_LAYERS
    layout_module.FAST_PLAIN_LAYERS = fast
    try:
        yield
    finally:
        layout_module.FAST_PLAIN_LAYERS = saved


def picture(image: Path) -> Any:
    """Everything a probe could see of the image: every path with its stat, link target and first bytes,
    the warnings, the tree's entry count; or the error."""
    try:
        view = open_image(image)
    except BadInputError as exc:
        return ("error", exc.message)
    with view:
        out: dict[str, Any] = {}
        for path in view.walk("/"):
            st = view.stat(path, follow_symlinks=False)
            assert st is not None
            item: list[Any] = [st.kind, st.size, st.mode, st.mtime]
            if st.kind == "link":
                item.append(view.readlink(path))
            if st.kind == "file":
                try:
                    item.append(view.read_bytes(path, 64))
                except OSError as exc:
                    item.append(f"unreadable: {exc}")
            out[path] = item
        return (out, view.info.warnings, view._tree.entries)


def both(image: Path) -> tuple[Any, Any]:
    with reader(True):
        fast = picture(image)
    with reader(False):
        general = picture(image)
    return fast, general


LONG = "usr/local/lib/python3.12/site-packages/" + "/".join(["deeply_nested_package_directory"] * 6)


@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_ordinary_layers_in_every_format(tmp_path: Path, fmt: int) -> None:
    lower = [
        ("dir", "usr/"),
        ("dir", "usr/lib"),
        ("file", "usr/lib/libc.so.6", b"\x7fELF libc", 0o755),
        ("symlink", "usr/lib/libc.so", "libc.so.6"),
        ("symlink", "lib", "usr/lib"),
        ("file", "opt/app/old.txt", b"old"),
        ("file", "opt/app/keep.txt", b"keep"),
        ("dir", "opt/cfg"),
        ("file", "opt/cfg/a.conf", b"a"),
        ("hardlink", "usr/lib/libc-link.so", "usr/lib/libc.so.6"),
        ("file", ".hidden/file", b"h"),
        ("file", "usr/share/doc/.keep", b""),
    ]
    upper = [
        ("whiteout", "opt/app/old.txt"),
        ("opaque", "opt/cfg"),
        ("file", "opt/cfg/b.conf", b"b"),
        ("file", "lib/through-link.so", b"via link"),
        ("file", "usr/lib/libc.so.6", b"\x7fELF newer libc", 0o755),
        ("dir", "opt/app/"),
        ("file", "./opt/app/dotslash.txt", b"ds"),
        ("file", "/abs/file.txt", b"abs"),
    ]
    if fmt != tarfile.USTAR_FORMAT:  # a name ustar cannot hold (GNU: an L record; pax: a path record)
        lower.append(("file", "usr/share/locale/fr/messages-é.mo", "é".encode()))
        lower.append(("file", f"{LONG}/module_with_a_rather_long_name_{'x' * 60}.py", b"print(1)\n"))
    else:  # a name ustar holds in its prefix field
        lower.append(("file", f"{LONG[:140]}/module.py", b"print(1)\n"))
    image = docker_save(tmp_path / "i.tar", [layer_tar(lower, fmt), layer_tar(upper, fmt)])
    fast, general = both(image)
    assert fast == general
    paths, warnings, _ = fast
    assert paths["/usr/lib/libc.so.6"][-1] == b"\x7fELF newer libc"
    assert "/opt/app/old.txt" not in paths and "/opt/cfg/a.conf" not in paths and "/opt/cfg/b.conf" in paths
    assert "/usr/lib/through-link.so" in paths and paths["/usr/lib/libc.so"][-1] == "libc.so.6"
    assert any(p.endswith(("x" * 60 + ".py", "/module.py")) for p in paths)
    assert any("absolute member names" in w for w in warnings)


def _raw_header(name: bytes, size_field: bytes, typ: bytes = b"0", magic: bytes = b"ustar\x0000") -> bytes:
    block = bytearray(512)
    block[0 : len(name)] = name
    block[100:108] = b"0000644\x00"
    block[108:116] = b"0000000\x00"
    block[116:124] = b"0000000\x00"
    block[124:136] = size_field
    block[136:148] = b"14524770400\x00"
    block[156:157] = typ
    block[257 : 257 + len(magic)] = magic
    block[148:156] = b" " * 8
    block[148:156] = f"{sum(block):06o}\x00 ".encode()
    return bytes(block)


def _member(header: bytes, data: bytes) -> bytes:
    return header + data + bytes(-len(data) % 512)


def test_odd_headers_hand_over_to_the_strict_reader(tmp_path: Path) -> None:
    ordinary = _member(_raw_header(b"a/one.txt", b"00000000003\x00"), b"one") + _member(
        _raw_header(b"a/two.txt", b"00000000003\x00"), b"two"
    )
    base256 = bytes([0x80]) + (5).to_bytes(11, "big")  # a GNU base-256 size: 5 bytes
    odd = _member(_raw_header(b"a/b256.txt", base256), b"hello")
    v7 = _member(_raw_header(b"a/v7.txt", b"00000000003\x00", magic=b""), b"old")
    after = _member(_raw_header(b"a/after.txt", b"00000000002\x00"), b"ok")
    for tail in (odd + after, v7 + after, odd + v7 + after):
        layer = ordinary + tail + bytes(1024)
        image = docker_save(tmp_path / "odd.tar", [layer])
        fast, general = both(image)
        assert fast == general
        paths, _, _ = fast
        assert paths["/a/after.txt"][-1] == b"ok" and paths["/a/one.txt"][-1] == b"one"
        if odd in tail:
            assert paths["/a/b256.txt"][-1] == b"hello"


def test_a_sparse_member_and_pax_records_before_it(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        info = tarfile.TarInfo("d/plain.txt")
        info.size = 2
        tf.addfile(info, io.BytesIO(b"pl"))
        info = tarfile.TarInfo("d/sparse.bin")
        info.size = 4
        info.pax_headers = {"GNU.sparse.realsize": "1048576", "GNU.sparse.name": "d/sparse.bin"}
        tf.addfile(info, io.BytesIO(b"data"))
        info = tarfile.TarInfo("d/last.txt")
        info.size = 1
        tf.addfile(info, io.BytesIO(b"z"))
    image = docker_save(tmp_path / "sparse.tar", [buf.getvalue()])
    fast, general = both(image)
    assert fast == general
    assert fast[0]["/d/sparse.bin"][1] == 1048576 and fast[0]["/d/last.txt"][-1] == b"z"


def test_truncated_layers_fail_the_same_way(tmp_path: Path) -> None:
    layer = layer_tar([("file", f"f{i}.txt", bytes(700)) for i in range(20)])
    members_end = 20 * (512 + 1024)  # each member: a header, then 700 bytes padded to 1024
    for cut in (100, 512, 1000, 5000, members_end - 10, members_end):
        image = docker_save(tmp_path / f"cut{cut}.tar", [layer[:cut]])
        fast, general = both(image)
        assert fast == general, cut
        if cut < members_end:
            assert fast[0] == "error" and "truncated" in fast[1], (cut, fast)
        else:  # stops at a member boundary: read, with a warning
            assert any("no end-of-archive marker" in w for w in fast[1]), fast


COMPONENTS = ["..", ".", "", "a", "b", "etc", ".wh.a", ".wh..wh..opq", "lib", "x" * 90, "é"]
name_st = s.lists(s.sampled_from(COMPONENTS), min_size=1, max_size=4).map("/".join) | s.sampled_from(
    ["/", "/etc/passwd", "../../x", "./a", "a//b", "a/b/", "lib/x.so"]
)
entry_st = s.one_of(
    s.tuples(s.just("file"), name_st, s.binary(max_size=8)),
    s.tuples(s.just("dir"), name_st),
    s.tuples(s.just("symlink"), name_st, name_st),
    s.tuples(s.just("hardlink"), name_st, name_st),
    s.tuples(s.just("whiteout"), name_st),
    s.tuples(s.just("opaque"), name_st),
)
layers_st = s.lists(s.lists(entry_st, min_size=1, max_size=8), min_size=1, max_size=3)
format_st = s.sampled_from([tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layers=layers_st, fmt=format_st)
@example(layers=[[("file", "a", b"")], [("file", "a/b", b"x")]], fmt=tarfile.GNU_FORMAT)
@example(layers=[[("file", "/", b""), ("file", "a/..", b"")]], fmt=tarfile.USTAR_FORMAT)  # "a/.." made "a"
@example(layers=[[("file", "..", b""), ("dir", "/a")]], fmt=tarfile.USTAR_FORMAT)  # "/a" lost its warning
@example(layers=[[("file", "a", b""), ("dir", "a/a")]], fmt=tarfile.USTAR_FORMAT)  # the name in a warning
@example(layers=[[("symlink", "lib", "a"), ("file", "lib/x.so", b"1"), ("dir", "a")]], fmt=tarfile.PAX_FORMAT)
def test_both_readers_agree_on_any_layers(layers: list[list[tuple[Any, ...]]], fmt: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        try:
            image = docker_save(Path(tmp) / "h.tar", [layer_tar(x, fmt) for x in layers])
        except (ValueError, OSError, UnicodeError):
            return  # tarfile refused to write it
        fast, general = both(image)
        assert fast == general
