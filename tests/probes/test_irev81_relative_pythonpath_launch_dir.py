"""irev81: a relative PYTHONPATH entry (`cd /srv/sglang && PYTHONPATH=python python3 -m sglang.launch_server`, a source
checkout) names a directory under the one the launch starts in. The python probe kept it relative in facts.python
.sys_path where the interpreter printed it so (CPython before 3.11) or the path was derived without running it, and
the packages probe then read it from the gate's own directory, not the launch's (`env -C DIR`, gate --cwd DIR, a
string's `cd`): the packages judged were another directory's. The probe now makes such an entry absolute against the
launch's directory, as CPython 3.11+ does itself. The venv here is this test's own, whose interpreter cannot run
(the static derivation)."""

from __future__ import annotations

import sys
from pathlib import Path

from stackcheck.assembly.target import Target
from stackcheck.probes.python_env import learn
from stackcheck.readers.fsview import HostView

XY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def _broken_venv(path: Path) -> Path:
    (path / "bin").mkdir(parents=True)
    (path / "lib" / f"python{XY}" / "site-packages").mkdir(parents=True)
    (path / "pyvenv.cfg").write_text(f"home = /nonexistent/bin\nversion = {XY}.0\n")
    exe = path / "bin" / "python3"
    exe.write_text("#!/bin/sh\nexit 3\n")
    exe.chmod(0o755)
    return exe


def test_a_relative_entry_is_the_launch_directorys(tmp_path: Path) -> None:
    exe = _broken_venv(tmp_path / "venv")
    launch_dir = tmp_path / "srv"
    (launch_dir / "python").mkdir(parents=True)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": "python:/opt/abs"}
    facts, _status, _why = learn(Target(str(exe), "--python", env), HostView(), None, 10.0, str(launch_dir))
    path = facts["sys_path"]
    assert str(launch_dir / "python") in path and "python" not in path, path  # (fails before: "python")
    assert "/opt/abs" in path


def test_without_a_launch_directory_the_entry_is_kept_as_before(tmp_path: Path) -> None:
    exe = _broken_venv(tmp_path / "venv")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": "python"}
    facts, _status, _why = learn(Target(str(exe), "--python", env), HostView(), None, 10.0, None)
    assert "python" in facts["sys_path"]
