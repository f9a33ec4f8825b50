"""irobust5: `stackcheck fleet` named every path it could not stat "no such file or directory": a link loop or a path
through a file was reported missing, which sends a user looking for a file that is there."""

from __future__ import annotations

import os
from pathlib import Path

from stackcheck.documents.fleet import iter_units


def test_a_link_loop_is_named_as_one(tmp_path: Path) -> None:
    # fails before: ("bad-input", path, "no such file or directory")
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    os.symlink(b, a)
    os.symlink(a, b)
    (tmp_path / "file").write_text("{}")
    paths = [str(a), str(tmp_path / "file" / "x.json"), str(tmp_path / "none")]
    got = {Path(u[1]).name: u[2] for u in iter_units(paths)}
    assert "symbolic links" in got["a.json"], got
    assert got["x.json"] == "not a directory", got
    assert got["none"] == "no such file or directory", got
