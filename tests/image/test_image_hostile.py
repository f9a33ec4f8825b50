"""Property tests: layers of hostile member names and links never escape the image root, never raise
anything but a one-line BadInputError, never write a file."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as s
from imagebuild import docker_save, layer_tar, snapshot

from stackcheck.errors import BadInputError
from stackcheck.image import open_image
from stackcheck.readers.fsview import NotRegularFile

COMPONENTS = ["..", ".", "", "a", "b", "etc", ".wh.a", ".wh..wh..opq", ".wh.", "x\x1b[31m", "é"]
name_st = s.lists(s.sampled_from(COMPONENTS), min_size=1, max_size=5).map("/".join) | s.sampled_from(
    ["/", "/etc/passwd", "../../../../etc/passwd", "./a", "a/../../b", "//a//b"]
)
entry_st = s.one_of(
    s.tuples(s.just("file"), name_st, s.binary(max_size=8)),
    s.tuples(s.just("dir"), name_st),
    s.tuples(s.just("symlink"), name_st, name_st),
    s.tuples(s.just("hardlink"), name_st, name_st),
)
layers_st = s.lists(s.lists(entry_st, min_size=1, max_size=8), min_size=1, max_size=3)


def _clean(path: str) -> bool:
    return (path.startswith("/") and all(p not in ("", ".", "..") for p in path.split("/")[1:])) or path == "/"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layers=layers_st)
@example(layers=[[("symlink", "a", "../../../../etc"), ("file", "a/passwd", b"x")]])
@example(layers=[[("file", "a", b"1")], [("hardlink", "b", "../a"), ("symlink", "a/../c", "/../../a")]])
@example(layers=[[("file", "/", b""), ("symlink", "a", "./a"), ("file", "//a//b", b"")]])  # a loop as a parent
def test_hostile_layers_stay_inside(layers: list[list[tuple[object, ...]]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        try:
            image = docker_save(root / "h.tar", [layer_tar(x) for x in layers])
        except (ValueError, OSError):
            return  # tarfile refused to write it: nothing to read
        before = snapshot(root)
        try:
            view = open_image(image)
        except BadInputError as exc:
            assert "\n" not in exc.message
            return
        with view:
            paths = view.walk("/")
            for p in paths:
                assert _clean(p), p
                real = view.realpath(p) if view.stat(p) is not None else "/"
                assert _clean(real), (p, real)
                with contextlib.suppress(NotRegularFile, OSError):
                    view.read_bytes(p, 16)
            for w in view.info.warnings:
                assert "\x1b" not in w and "\n" not in w
        assert snapshot(root) == before
