"""The host filesystem view: box paths below a root, links resolved inside it, non-regular files refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stackcheck.probes.fsview import HostView, NotRegularFile


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
