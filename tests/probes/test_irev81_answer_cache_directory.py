"""irev81: the python probe keeps a plain interpreter's answer (cache_key: the interpreter's file, its pyvenv.cfg, the
path variables, the one-liner). Since irev80 the interpreter runs in the launch's directory, and a relative entry of
PYTHONPATH (or a relative PYTHONHOME / PYTHONUSERBASE) is that directory's: CPython 3.11+ prints it made absolute
against it. The key did not hold the directory, so a second gate of the same interpreter and PYTHONPATH=src from
another directory was served the first directory's src as the launch's sys.path entry (its packages judged, not those
the server imports). The key now holds the directory where such a variable has a relative entry."""

from __future__ import annotations

import sys
from pathlib import Path

from stackcheck.assembly.target import Target
from stackcheck.probes.python_env import cache_key, learn
from stackcheck.readers.fsview import HostView


def test_the_key_holds_the_directory_where_a_path_variable_is_relative(tmp_path: Path) -> None:
    exe = sys.executable
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    for env in ({"PYTHONPATH": "src"}, {"PYTHONPATH": "/opt/x::/opt/y"}, {"PYTHONUSERBASE": "ub"}):
        assert cache_key(exe, env, a) != cache_key(exe, env, b), env
        assert cache_key(exe, env) == cache_key(exe, env, str(Path.cwd())), env  # (None: this process's directory)
    for env in ({"PYTHONPATH": "/opt/x:/opt/y"}, {}):
        assert cache_key(exe, env, a) == cache_key(exe, env, b) == cache_key(exe, env), env


def test_a_relative_pythonpath_entry_is_the_launch_directorys_on_a_second_run(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": "src"}
    target = Target(sys.executable, "--python", env)
    seen = []
    for name in ("a", "b"):
        launch_dir = tmp_path / name
        (launch_dir / "src").mkdir(parents=True)
        facts, _status, _why = learn(target, HostView(), str(cache), 30.0, str(launch_dir))
        seen.append([p for p in facts.get("sys_path") or [] if p.endswith("/src") or p == "src"])
    first, second = seen
    assert first != second or first == ["src"], seen  # (3.11+: made absolute; fails before: b's run served a's)
    assert all(str(tmp_path / "b") in p or p == "src" for p in second), seen
