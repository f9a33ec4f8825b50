"""irobust14 (an adversarial pass over imend16's 1 s window): a `python3` wrapper that prints a line (a conda
activation, a module system's banner) and then takes longer than the window before it execs the real interpreter
with "$@" (a loaded box, a slow activation) was stopped after ~1 s and called a wrapper that ignores its arguments;
measured here with `echo; sleep S; exec python "$@"`: S 0.95 ran, S 1.0 and over was stopped. A command still
holding its arguments (its shell's /proc/PID/cmdline) is now left to run until the timeout; one that has exec'd
another program without them is still stopped early. Wrappers written here."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from stackcheck.assembly.target import Target
from stackcheck.probes.python_env import learn
from stackcheck.readers.fsview import HostView

HOST = HostView()
XY = f"{sys.version_info[0]}.{sys.version_info[1]}"
pytestmark = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc/PID/cmdline (Linux)")


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
    "body",
    [
        f'echo "activating the environment"\nsleep 1.4\nexec {sys.executable} "$@"\n',
        f'echo "module load python" >&2\nsleep 1.4\nexec {sys.executable} "$@"\n',
        f'echo "one"\nsleep 0.7\necho "two" >&2\nsleep 0.7\nexec {sys.executable} "$@"\n',
    ],
)
def test_a_slow_wrapper_that_passes_its_arguments_on_is_run(tmp_path: Path, body: str) -> None:
    _took, facts, status, reason = _learn(_wrapper(tmp_path, "slow", body))
    assert status == "ok" and facts["learned"] == "ran", reason  # fails before: partial, 'ignores its arguments'
    assert "ignores its arguments" not in str(reason)


def test_one_that_execs_another_program_is_still_stopped_early(tmp_path: Path) -> None:
    took, _facts, status, reason = _learn(_wrapper(tmp_path, "w", 'echo "serving"\nsleep 0.2\nexec sleep 30\n'))
    assert took < 3.0 and status == "partial" and "ignores its arguments" in str(reason)
