"""imend16: the python probe runs the launch's `python3` with its one-liner; a wrapper script that ignores "$@" (and
runs, say, the server it was written for) ran until the probe's 5 s timeout. The one-liner now prints a first line
before anything else; a command still running a short window after its start that has printed something else and
not that line is stopped then, and the probe says the interpreter is a wrapper that ignores its arguments (its
answer unknown: sys.path derived from the layout, as for a timeout). One that prints nothing waits as before, and
a wrapper that passes "$@" on (a banner first, or a slow start) is still run. Wrappers written here."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from stackcheck.assembly.target import Target
from stackcheck.probes import python_env
from stackcheck.probes.python_env import learn
from stackcheck.readers.fsview import HostView

HOST = HostView()
XY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def _wrapper(tmp_path: Path, name: str, body: str) -> Path:
    prefix = tmp_path / name
    py = prefix / "bin" / f"python{XY}"
    py.parent.mkdir(parents=True)
    py.write_text("#!/bin/sh\n" + body)
    py.chmod(0o755)
    (prefix / "lib" / f"python{XY}" / "site-packages").mkdir(parents=True)
    return py


def _learn(py: Path, timeout_s: float = 5.0) -> tuple[float, dict[str, object], str, str | None]:
    start = time.monotonic()
    facts, status, reason = learn(Target(str(py), "--python", {"PATH": "/usr/bin:/bin"}), HOST, "", timeout_s)
    return time.monotonic() - start, facts, status, reason


@pytest.mark.parametrize(
    ("body", "first"),
    [
        ('echo "serving on port 30000"\nexec sleep 30\n', "serving on port 30000"),
        ('echo "loading weights" >&2\nexec sleep 30\n', "loading weights"),
        (
            f"exec {sys.executable} -c \"print('INFO started', flush=True); import time; time.sleep(30)\"\n",
            "INFO started",
        ),
    ],
)
def test_a_wrapper_that_ignores_its_arguments_is_stopped_early(tmp_path: Path, body: str, first: str) -> None:
    took, facts, status, reason = _learn(_wrapper(tmp_path, "w", body))
    assert took < python_env.STARTED_WINDOW_S + 1.5  # (before: the 5 s timeout)
    assert status == "partial" and "wrapper that ignores its arguments" in str(reason) and first in str(reason)
    assert facts["learned"] == "static"


def test_a_command_that_prints_nothing_still_times_out(tmp_path: Path) -> None:
    took, _facts, status, reason = _learn(_wrapper(tmp_path, "quiet", "exec sleep 30\n"), 1.6)
    assert took >= 1.5 and status == "partial" and "did not answer within 1.6s" in str(reason)


@pytest.mark.parametrize(
    "body",
    [
        f'echo "activating the environment" >&2\nexec {sys.executable} "$@"\n',
        f'sleep 1.3\nexec {sys.executable} "$@"\n',
        f'echo "activating" >&2\nsleep 0.1\nexec {sys.executable} "$@"\n',
    ],
)
def test_a_wrapper_that_passes_its_arguments_on_is_run(tmp_path: Path, body: str) -> None:
    _took, facts, status, reason = _learn(_wrapper(tmp_path, "good", body))
    assert status == "ok" and facts["learned"] == "ran", reason
    assert facts["version"] == ".".join(str(n) for n in sys.version_info[:3])
