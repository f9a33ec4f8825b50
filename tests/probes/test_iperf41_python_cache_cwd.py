"""iperf41: the python probe keeps the interpreter's answer (python-KEY.json) between runs, keyed on the interpreter
and the environment's path variables; irev80 runs the interpreter in the launch's directory. A relative PYTHONPATH
entry (PYTHONPATH=src) is made absolute by the interpreter against that directory, so the answer made in one launch
directory was served in another: the packages of the first checkout's src judged for the second. The key now holds
the directory where a path variable is relative, and only there: any other answer is still served in every
directory (the call counts below: the interpreter runs once)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly.target import Target
from stackcheck.probes import python_env
from stackcheck.probes.python_env import cache_key, learn
from stackcheck.readers.fsview import HostView

HOST = HostView()


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    v = tmp_path_factory.mktemp("iperf41") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(v)], check=True, capture_output=True,
                   timeout=120)  # fmt: skip
    return v


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    seen: list[str | None] = []
    real = python_env.run_interpreter

    def counted(exe: str, env: Any, timeout_s: float, cwd: str | None = None) -> dict[str, Any]:
        seen.append(cwd)
        return real(exe, env, timeout_s, cwd)

    monkeypatch.setattr(python_env, "run_interpreter", counted)
    return seen


def _checkouts(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        (d / "src").mkdir(parents=True)
    return a, b


def _learn(venv: Path, env: dict[str, str], cache: Path, cwd: Path) -> str:
    facts, status, _ = learn(Target(str(venv / "bin" / "python"), "--python", env), HOST, str(cache), 30, str(cwd))
    assert status == "ok"
    return json.dumps({k: v for k, v in facts.items() if k != "learned"})  # (ran / cache)


def test_relative_pythonpath_answer_is_not_served_in_another_directory(
    venv: Path, tmp_path: Path, runs: list[str | None]
) -> None:
    a, b = _checkouts(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": "src"}
    in_a = _learn(venv, env, tmp_path / "cache", a)
    assert str(a / "src") in in_a
    in_b = _learn(venv, env, tmp_path / "cache", b)
    assert str(b / "src") in in_b and str(a / "src") not in in_b  # (before: a's answer served, a/src judged)
    assert runs == [str(a), str(b)]
    _learn(venv, env, tmp_path / "cache", a)
    assert len(runs) == 2  # a's own answer is still kept for a


def test_absolute_paths_answer_kept_across_directories(venv: Path, tmp_path: Path, runs: list[str | None]) -> None:
    a, b = _checkouts(tmp_path)
    for env in ({"PATH": "/usr/bin:/bin"}, {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{a}/src:/opt/x"}):
        runs.clear()
        cache = tmp_path / f"cache{len(env)}"
        first = _learn(venv, env, cache, a)
        assert _learn(venv, env, cache, b) == first
        assert len(runs) == 1  # the interpreter ran once: the answer served in the other directory


def test_cache_key_holds_the_directory_only_for_a_relative_path_variable(venv: Path, tmp_path: Path) -> None:
    exe = str(venv / "bin" / "python")
    a, b = _checkouts(tmp_path)
    assert cache_key(exe, {}, str(a)) == cache_key(exe, {}, str(b)) is not None
    for env in ({"PYTHONPATH": "/x:/y"}, {"PYTHONHOME": "/usr"}):
        assert cache_key(exe, env, str(a)) == cache_key(exe, env, str(b))
    for env in ({"PYTHONPATH": "src"}, {"PYTHONPATH": "/x::/y"}, {"PYTHONPATH": "/x:"}, {"PYTHONUSERBASE": "u"}):
        assert cache_key(exe, env, str(a)) != cache_key(exe, env, str(b))
        assert cache_key(exe, env, str(a)) == cache_key(exe, env, str(a))
