"""`python -m stackcheck ARGS` as a user runs it: a fresh process from the repository root, with the variables of the
test run that steer stackcheck or SGLang (SGLANG_*, STACKCHECK_*) removed from its environment. The one place the
end-to-end tests build that call (tests/gate_cli.gate_json is one of its uses); and `scrubbed_environ`, the autouse
fixture that removes the same variables around a test that runs the gate in this process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRUBBED = ("SGLANG_", "STACKCHECK_")


def clean_env(*also: str, **extra: str) -> dict[str, str]:
    """This process's environment without the variables whose names start with SCRUBBED or ALSO (more prefixes:
    "HF_", "CUDA_"), then EXTRA set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith((*SCRUBBED, *also))}
    env.update(extra)
    return env


def run_stackcheck(
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    cwd: Path = ROOT,
    text: bool = True,
    **kw: Any,
) -> subprocess.CompletedProcess[Any]:
    """`python -m stackcheck ARGS` (this interpreter) in CWD with ENV (clean_env() when None), its output captured
    (as text unless TEXT is false); KW goes to subprocess.run (stdin, pass_fds). The exit status is the caller's."""
    return subprocess.run(
        [sys.executable, "-m", "stackcheck", *args],
        capture_output=True,
        text=text,
        timeout=timeout,
        env=clean_env() if env is None else env,
        cwd=cwd,
        check=False,
        **kw,
    )


def stackcheck_json(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> dict[str, Any]:
    """run_stackcheck's JSON document (the command line asks for --format json); its exit must be 0 or 1."""
    r = run_stackcheck(*args, env=env, timeout=timeout)
    assert r.returncode in (0, 1), r.stderr
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


@pytest.fixture(autouse=True)
def scrubbed_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """Autouse in a test module that imports it: the SCRUBBED variables removed from this process for the test (and
    put back after it)."""
    for name in list(os.environ):
        if name.startswith(SCRUBBED):
            monkeypatch.delenv(name)


#: a child that runs stackcheck's command line and, as it exits, writes the names of the modules it imported to
#: $MODULES_OUT (the import tests of a served gate and of the json-free hot paths)
MODULES_CHILD = r"""
import os, sys
sys.argv = ["stackcheck", *sys.argv[1:]]
_exit = os._exit
def leave(code):
    with open(os.environ["MODULES_OUT"], "w") as fh:
        fh.write("\n".join(sys.modules))
    _exit(code)
os._exit = leave
from stackcheck.__main__ import main
main()
"""


def modules_at_exit(tmp_path: Path, *argv: str) -> set[str]:
    """The modules `stackcheck ARGV` had imported when it exited (this checkout, a cache directory under `tmp_path`,
    the plan cache on, run in `tmp_path`); it must exit 0 or 1."""
    out = tmp_path / "modules.txt"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "STACKCHECK_CACHE_DIR": str(tmp_path / "cache"),
        "STACKCHECK_PLAN_CACHE": "1",
        "MODULES_OUT": str(out),
    }
    done = subprocess.run(
        [sys.executable, "-c", MODULES_CHILD, *argv], env=env, cwd=tmp_path, capture_output=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-500:]
    return set(out.read_text().split("\n"))
