"""What starting the probes imports (issue 21: the first probe starts sooner when the probes' path imports less)."""

from __future__ import annotations

import os
import subprocess
import sys

import stackcheck

TREE = os.path.dirname(os.path.dirname(stackcheck.__file__))


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
        env={**os.environ, "PYTHONPATH": TREE},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return set(out.split())


def test_the_probe_interface_does_not_import_signal() -> None:
    """run_command needs `signal` only to kill a command that overran (subprocess imports it by then)."""
    got = _modules_after("import stackcheck.probes.interface")
    assert "stackcheck.probes.interface" in got
    assert "signal" not in got
