"""`gate --cwd DIR` with a DIR that is no directory (irobust, an adversarial pass over igap38's --cwd): each is one
line on stderr naming the flag and the path as given (controls shown as escapes), exit 2, nothing on stdout, in a
fresh `python -m stackcheck` process with a timeout. Found: a loop of symbolic links was said to be "not a
directory" (os.path.realpath leaves a loop unresolved); it now says it is a link loop, as --output does
(stackcheck/atomic.py). Held before: a file, a dangling link, a FIFO (no hang), a path with a newline or an escape."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_process import clean_env, run_stackcheck

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--api-key", "SEKRITkey123456"]


def _gate(tmp_path: Path, cwd: str) -> tuple[int, str, str]:
    env = clean_env("VIRTUAL_ENV", "CONDA_PREFIX", XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = run_stackcheck("gate", "--dry-run", "--cwd", cwd, "--", *LAUNCH, env=env, cwd=tmp_path, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("loop", "too many levels of symbolic links (a link loop?)"),
        ("file", "is not a directory"),
        ("dangling", "does not exist"),
        ("fifo", "is not a directory"),
        ("file/below", "does not exist"),
        ("new\nline", "does not exist"),
        ("esc\x1b]0;x\x07", "does not exist"),
    ],
)
def test_a_cwd_that_is_no_directory_is_one_line_and_exit_2(tmp_path: Path, name: str, words: str) -> None:
    (tmp_path / "file").write_text("")
    os.symlink("loop", tmp_path / "loop")
    os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
    os.mkfifo(tmp_path / "fifo")
    rc, out, err = _gate(tmp_path, name)
    shown = name.replace("\n", "\\n").replace("\x1b", "\\x1b").replace("\x07", "\\x07")
    assert rc == 2 and out == "", (rc, out[:200])
    assert err.count("\n") == 1 and err.startswith("stackcheck: error: ") and "Traceback" not in err, err
    assert f"--cwd {shown}: {words}" in err, err
    assert "\x1b" not in err and "\x07" not in err and "SEKRIT" not in err
