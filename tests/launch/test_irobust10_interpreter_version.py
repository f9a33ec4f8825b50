"""irobust10: a live gate compares the launch's interpreter with the audited one by their prefixes (irev78's
interpreter_mismatch_problems). Two interpreters of one prefix that is no venv (/usr/bin/python3.10 and
/usr/bin/python3.12 of deadsnakes, /usr/local/bin's of two python.org builds) have the prefix /usr but each its own
lib/pythonX.Y/site-packages: `bash -c 'python3.10 -m sglang.launch_server ...'` was judged on the packages of the
audited python3.12 (no problem). Now, outside a venv, the two must be the same file too; a venv's names stay one."""

from __future__ import annotations

import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch.gate import interpreter_mismatch_problems


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _exe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _subjects(tmp_path: Path, word: str, audited: Path, mapping: Any) -> list[str]:
    facts = {"python": {"executable": str(audited), "chosen_by": "the active virtual environment"}}
    env = {"PATH": f"{tmp_path / 'usr/bin'}:/bin"}
    command = ["bash", "-c", f"{word} -m sglang.launch_server --model-path m"]
    return [p.subject for p in interpreter_mismatch_problems(command, mapping, env, str(tmp_path), facts)]


def test_another_version_under_the_same_prefix_is_unknown(tmp_path: Path, mapping: Any) -> None:
    old = _exe(tmp_path / "usr/bin/python3.10")
    new = _exe(tmp_path / "usr/bin/python3.12")
    assert "python" in _subjects(tmp_path, "python3.10", new, mapping)  # fails before: no problem (prefix /usr both)
    assert "python" in _subjects(tmp_path, str(old), new, mapping)


def test_a_link_to_the_audited_interpreter_is_the_same(tmp_path: Path, mapping: Any) -> None:
    new = _exe(tmp_path / "usr/bin/python3.12")
    (tmp_path / "usr/bin/python3").symlink_to("python3.12")
    assert _subjects(tmp_path, "python3", new, mapping) == []
    assert _subjects(tmp_path, "python3.12", new, mapping) == []


def test_names_of_one_venv_are_the_same(tmp_path: Path, mapping: Any) -> None:
    venv = tmp_path / "venv"
    _exe(venv / "bin/python")
    _exe(venv / "bin/python3")  # (a venv made with --copies: two files)
    (venv / "pyvenv.cfg").write_text(f"home = /usr/bin\nversion = {sys.version_info[0]}.{sys.version_info[1]}.0\n")
    assert _subjects(tmp_path, str(venv / "bin/python3"), venv / "bin/python", mapping) == []


def test_the_launchs_word_is_found_without_trying_every_word(
    tmp_path: Path, mapping: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (each try copies the words after it: 20,000 `nice` words before the launch took 2.4-5 s, 0.3-1.2 s after)
    from stackcheck.launch import gate

    new = _exe(tmp_path / "usr/bin/python3.12")
    calls = [0]
    real = gate._entrypoint_at

    def counted(argv: Any, mapping: Any) -> Any:
        calls[0] += 1
        return real(argv, mapping)

    monkeypatch.setattr(gate, "_entrypoint_at", counted)
    facts = {"python": {"executable": str(new), "chosen_by": "the active virtual environment"}}
    command = [*["nice"] * 4000, str(new), "-m", "sglang.launch_server", "--model-path", "m"]
    gate.find_launch(command, mapping, {}, {"cwd": str(tmp_path), "entered": None})
    walk, calls[0] = calls[0], 0
    assert interpreter_mismatch_problems(command, mapping, {"PATH": "/bin"}, str(tmp_path), facts) == []
    assert calls[0] - walk < 50, (calls[0], walk)  # fails before: 4,000 more tries than find_launch's own
