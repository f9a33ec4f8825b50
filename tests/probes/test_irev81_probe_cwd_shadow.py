"""irev81: since irev80 the python probe runs the audited interpreter in the launch's directory (`env -C DIR`,
gate --cwd DIR). Its one-liner runs under `-c`, whose sys.path[0] is '' (that directory), and it imports `site`
after start-up (-S). Where site is not a frozen module (CPython 3.10 and older, which SGLang serves on; a build
with frozen modules off) a `site.py` or `_sitebuiltins.py` in that directory was imported instead of the
standard library's: code stackcheck did not mean to run, and an answer the file chose (a false reading). The
server itself imports site at start-up, before its sys.path[0] exists, so no file there changes it. A relative
PYTHONPATH entry (kept relative before 3.11) names a directory under the launch's too. The one-liner now imports site
with only sys.path's absolute entries (the path printed is the whole one). The interpreter here runs with frozen
modules off (3.10's behaviour) through a small wrapper script of our own."""

from __future__ import annotations

import glob
import os
import re
import sys
from pathlib import Path

import pytest

from stackcheck.probes.python_env import run_interpreter

SHADOW = """import sys
open({marker!r}, "w").write("ran")
print(repr({{'stackcheck': 1, 'executable': '/fake/python', 'version': '3.10.99', 'implementation': 'cpython',
    'prefix': '/fake', 'base_prefix': '/fake', 'path': ['/fake/lib'], 'platlibdir': 'lib', 'base_site': [],
    'user_site': None, 'no_user_site': True}}))
sys.exit(0)
"""


def _before_311() -> str:
    """A CPython older than 3.11 on this box (its site is no frozen module and it keeps a relative PYTHONPATH entry
    relative), else skip."""
    found = [*glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3")), *glob.glob("/usr/bin/python3.*")]
    for exe in sorted(found, reverse=True):
        version = re.search(r"3\.(\d+)", exe)
        if version is not None and 7 <= int(version.group(1)) <= 10 and os.access(exe, os.X_OK):
            return exe
    pytest.skip("no CPython 3.7-3.10 on this box")


@pytest.mark.parametrize(
    ("name", "where"), [("site.py", ""), ("_sitebuiltins.py", ""), ("site.py", "src")],
    ids=["site.py", "_sitebuiltins.py", "site.py in a relative PYTHONPATH entry"],
)  # fmt: skip
def test_a_module_in_the_launch_directory_does_not_run_in_the_probe(tmp_path: Path, name: str, where: str) -> None:
    launch_dir = tmp_path / "proj"
    (launch_dir / where).mkdir(parents=True)
    marker = tmp_path / "marker"
    (launch_dir / where / name).write_text(SHADOW.format(marker=str(marker)))
    wrapper = tmp_path / "python3"
    exe = sys.executable if not where else _before_311()  # (3.11+ makes a relative PYTHONPATH entry absolute)
    wrapper.write_text(f'#!/bin/sh\nexec "{exe}" -X frozen_modules=off "$@"\n')
    wrapper.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", **({"PYTHONPATH": where} if where else {})}
    data = run_interpreter(str(wrapper), env, 30.0, str(launch_dir))
    assert not marker.exists(), f"{name} in the launch directory ran inside the probe"
    assert data["version"] == ".".join(map(str, sys.version_info[:3])) or where
    assert "/fake/lib" not in data["path"]
    assert data["path"][0] == "" and (not where or data["path"][1] == where)  # (the path as the interpreter has it)


def test_the_answer_still_names_pythonpath(tmp_path: Path) -> None:
    launch_dir = tmp_path / "proj"
    launch_dir.mkdir()
    data = run_interpreter(sys.executable, {"PATH": "/usr/bin:/bin", "PYTHONPATH": "/opt/extra"}, 30.0,
                           str(launch_dir))  # fmt: skip
    assert "/opt/extra" in data["path"]
