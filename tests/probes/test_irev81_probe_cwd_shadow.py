"""irev81: since irev80 the python probe runs the audited interpreter in the launch's directory (`env -C DIR`,
gate --cwd DIR). Its one-liner runs under `-c`, whose sys.path[0] is '' (that directory), and it imports `site`
after start-up (-S). Where site is not a frozen module (CPython 3.10 and older, which SGLang serves on; a build
with frozen modules off) a `site.py` or `_sitebuiltins.py` in that directory was imported instead of the
standard library's: code stackcheck did not mean to run, and an answer the file chose (a false reading). The
server itself imports site at start-up, before its sys.path[0] exists, so no file there changes it. The one-liner
now drops '' before it imports site. The interpreter here runs with frozen modules off (3.10's behaviour) through
a small wrapper script of our own."""

from __future__ import annotations

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


@pytest.mark.parametrize("name", ["site.py", "_sitebuiltins.py"])
def test_a_module_in_the_launch_directory_does_not_run_in_the_probe(tmp_path: Path, name: str) -> None:
    launch_dir = tmp_path / "proj"
    launch_dir.mkdir()
    marker = tmp_path / "marker"
    (launch_dir / name).write_text(SHADOW.format(marker=str(marker)))
    wrapper = tmp_path / "python3"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -X frozen_modules=off "$@"\n')
    wrapper.chmod(0o755)
    data = run_interpreter(str(wrapper), {"PATH": "/usr/bin:/bin"}, 30.0, str(launch_dir))
    assert not marker.exists(), f"{name} in the launch directory ran inside the probe"
    assert data["version"] == ".".join(map(str, sys.version_info[:3]))
    assert "/fake/lib" not in data["path"] and "" not in data["path"]


def test_the_answer_still_names_pythonpath(tmp_path: Path) -> None:
    launch_dir = tmp_path / "proj"
    launch_dir.mkdir()
    data = run_interpreter(sys.executable, {"PATH": "/usr/bin:/bin", "PYTHONPATH": "/opt/extra"}, 30.0,
                           str(launch_dir))  # fmt: skip
    assert "/opt/extra" in data["path"]
