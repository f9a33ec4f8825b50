"""irobust12: the python probe runs the audited interpreter in the launch's directory (irev80) as `python -S -c
ONELINER`. `-S` keeps site from running, but the one-liner then imports `site` itself, and `-c` puts '' (the working
directory) first on sys.path: an interpreter whose `site` is not frozen (CPython 3.10 and older) imported the
directory's own site.py, so the gate (even --dry-run) executed a file of the launch's directory, which could also
print a forged answer (a false pass). The one-liner now drops the relative entries before its import (they were never
read as the environment's: answer_from_run and find_distributions leave them out) and still reports them."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from stackcheck.probes.python_env import ONELINER, parse_answer, run_interpreter

HOSTILE = "open({marker!r}, 'w').write('ran')\nprint(\"{{'stackcheck': 1, 'version': '9.9.9'}}\")\n"


def _old_interpreters() -> list[str]:
    """Interpreters whose `site` module is read from sys.path (not frozen): CPython 3.10 and older."""
    found: list[str] = []
    for name in ("python3.10", "python3.9", "python3.8"):
        exe = shutil.which(name)
        if exe and "/shims/" not in exe:  # (a pyenv shim needs its own environment)
            found.append(exe)
    root = Path(os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))) / "versions"
    if root.is_dir():
        for version in sorted(root.iterdir()):
            binary = version / "bin" / "python3"
            if version.name.startswith(("3.8.", "3.9.", "3.10.")) and binary.is_file():
                found.append(str(binary))
    return found


def _hostile_dir(tmp_path: Path) -> tuple[Path, Path]:
    where = tmp_path / "launch dir"
    where.mkdir()
    marker = tmp_path / "marker"
    where.joinpath("site.py").write_text(HOSTILE.format(marker=str(marker)))
    where.joinpath("sys.py").write_text(HOSTILE.format(marker=str(marker)))
    return where, marker


@pytest.mark.skipif(not _old_interpreters(), reason="no CPython 3.8-3.10 on this machine")
def test_a_site_py_in_the_launch_directory_is_not_run(tmp_path: Path) -> None:
    where, marker = _hostile_dir(tmp_path)
    exe = _old_interpreters()[0]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ".:rel"}
    data = run_interpreter(exe, env, 30.0, str(where))
    assert not marker.exists()  # (fails before: the directory's site.py ran)
    assert data["version"].startswith("3.")
    assert data["path"][:3] == ["", ".", "rel"]  # still reported, still left out of the environment


def test_this_interpreter_in_a_hostile_directory(tmp_path: Path) -> None:
    where, marker = _hostile_dir(tmp_path)
    data = run_interpreter(sys.executable, {"PATH": "/usr/bin:/bin"}, 30.0, str(where))
    assert not marker.exists()
    assert data["executable"] and data["path"][0] == ""


def test_the_one_liner_imports_site_only_after_dropping_relative_entries() -> None:
    before_site = ONELINER.split("import site", 1)[0]
    assert "sys.path[:]=" in before_site  # (fails before: `import sys,site;` first)
    good = (
        "{'stackcheck': 1, 'executable': '/x', 'version': '3.10.1', 'implementation': 'cpython', 'prefix': '/x', "
        "'base_prefix': '/x', 'path': ['', '/a'], 'platlibdir': 'lib', 'base_site': [], 'user_site': None, "
        "'no_user_site': False}"
    )
    assert parse_answer(good)["path"] == ["", "/a"]
