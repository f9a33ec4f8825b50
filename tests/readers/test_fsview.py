"""The host filesystem view: box paths below a root, links resolved inside it, non-regular files refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stackcheck.readers.fsview import HostView, NotRegularFile


def test_root_view_resolves_links_inside_the_root(tmp_path: Path) -> None:
    (tmp_path / "opt" / "serve").mkdir(parents=True)
    (tmp_path / "opt" / "serve" / "a.txt").write_text("inside")
    (tmp_path / "escape").symlink_to("/etc")  # absolute: must stay inside the root
    (tmp_path / "opt" / "link").symlink_to("serve")
    view = HostView(str(tmp_path))
    assert view.read_bytes("/opt/link/a.txt", 100) == b"inside"
    assert view.realpath("/escape/passwd") == "/etc/passwd"
    assert view.stat("/escape/passwd") is None  # /etc/passwd of the host is not inside the root
    assert view.realpath("/opt/../../../opt/serve") == "/opt/serve"
    assert view.stat("/opt/link", follow_symlinks=False).kind == "link"  # type: ignore[union-attr]
    assert view.stat("/opt/link").kind == "dir"  # type: ignore[union-attr]
    assert sorted(view.listdir("/opt")) == ["link", "serve"]


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo")
    view = HostView(str(tmp_path))
    with pytest.raises(NotRegularFile):
        view.read_bytes("/fifo", 10)
    assert view.stat("/fifo").kind == "other"  # type: ignore[union-attr]


def test_limit_offset_and_link_loop(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"0123456789")
    (tmp_path / "loop").symlink_to("loop")
    view = HostView(str(tmp_path))
    assert view.read_bytes("/f", 3, offset=4) == b"456"
    assert view.stat("/loop") is None
    with pytest.raises(OSError):
        view.read_bytes("/loop", 1)
    assert HostView().description == "this host"


def test_a_link_in_a_parent_directory_does_not_lead_out_of_the_root(tmp_path: Path) -> None:
    (tmp_path / "out").symlink_to("/etc")
    view = HostView(str(tmp_path))
    assert view.stat("/out/passwd", follow_symlinks=False) is None  # not the host's /etc/passwd
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "passwd").write_text("root's own")
    assert view.stat("/out/passwd", follow_symlinks=False).kind == "file"  # type: ignore[union-attr]
    assert view.read_bytes("/out/passwd", 100) == b"root's own"


def test_glob_which_and_read_text(tmp_path: Path) -> None:
    from stackcheck.readers.fsview import GlobLimit, glob, read_text, which

    site = tmp_path / "site"
    (site / "pkg" / "a" / "b").mkdir(parents=True)
    for rel in ("pkg/top.so", "pkg/a/mid.so", "pkg/a/b/deep.so", "pkg/a/b/x.txt", "pkg/.hidden.so"):
        (site / rel).write_text("")
    (site / "pkg" / "loop").symlink_to(".")  # ** does not descend through links
    view = HostView(str(tmp_path))
    assert glob(view, "/site", "pkg/**/*.so") == ["/site/pkg/a/b/deep.so", "/site/pkg/a/mid.so", "/site/pkg/top.so"]
    assert glob(view, "/site", "pkg/*.so") == ["/site/pkg/top.so"]
    assert glob(view, "/site", "pkg/a/b/deep.so") == ["/site/pkg/a/b/deep.so"]
    assert glob(view, "/site", "nope/*.so") == []
    with pytest.raises(GlobLimit):
        glob(view, "/site", "**/*.so", max_visits=3)
    # a component wildcard follows a link, resolved inside the root (its absolute target is a box path)
    (site / "alias").symlink_to("/site/pkg/a")
    (tmp_path / "elsewhere").symlink_to("/usr/lib")  # the host's /usr/lib is not in this root
    assert glob(view, "/site", "al*/*.so") == ["/site/alias/mid.so"]
    assert glob(view, "/", "elsewhere/*") == []
    tool = tmp_path / "bin" / "tool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    assert which(view, "tool", "/nope:/bin") is None  # not executable
    tool.chmod(0o755)
    assert which(view, "tool", "relative:/nope:/bin") == "/bin/tool"
    assert which(view, "/bin/tool", None) == "/bin/tool"
    (tmp_path / "big").write_text("x" * 100)
    assert read_text(view, "/big", 100) == "x" * 100
    with pytest.raises(ValueError, match="larger than 99"):
        read_text(view, "/big", 99)
