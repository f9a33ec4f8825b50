"""irev80: a pyenv or asdf shim picks its interpreter at run time from a version file (`.python-version`,
`.tool-versions`) looked up from the directory it runs in; igap58 lets such a shim pass the gate as the launch's
`python3`, and irev78's interpreter comparison sees the shim on both sides. But the python probe ran the audited
interpreter in the gate's own directory, not where the launch starts (`env -C DIR`, gate --cwd DIR): the gate judged
the packages of the version its own directory selects (here sglang 0.5.9) while the server runs the one the launch
directory selects (0.5.3). The probe now runs the interpreter in the launch's directory (ProbeContext.launch_cwd).
The shim here is in pyenv's shape (our own words); its `pyenv` is a small script that reads ./.python-version."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import clean_env, run_stackcheck

XY = f"{sys.version_info[0]}.{sys.version_info[1]}"
SHIM = """#!/usr/bin/env bash
set -e
[ -n "$PYENV_DEBUG" ] && set -x

program="${{0##*/}}"

export PYENV_ROOT="{root}"
exec "{root}/libexec/pyenv" exec "$program" "$@"
"""
PYENV = """#!/bin/sh
shift
program=$1
shift
exec "{root}/versions/$(cat "$PWD/.python-version")/bin/$program" "$@"
"""


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("pyenv")
    for name, release in (("served", "0.5.3"), ("other", "0.5.9")):
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(top / "versions" / name)], check=True,
                       timeout=120)  # fmt: skip
        info = top / "versions" / name / "lib" / f"python{XY}" / "site-packages" / f"sglang-{release}.dist-info"
        info.mkdir(parents=True)
        info.joinpath("METADATA").write_text(f"Metadata-Version: 2.1\nName: sglang\nVersion: {release}\n")
    for where, text in (("libexec/pyenv", PYENV), ("shims/python3", SHIM)):
        path = top / where
        path.parent.mkdir(exist_ok=True)
        path.write_text(text.format(root=top))
        path.chmod(0o755)
    for where, version in (("home", "other"), ("proj", "served")):
        (top / where).mkdir()
        (top / where / ".python-version").write_text(version + "\n")
    return top


def _judged(root: Path, *words: str) -> object:
    env = clean_env("VIRTUAL_ENV", "CONDA_PREFIX", "PYENV", PATH=f"{root}/shims:/usr/bin:/bin",
                    XDG_CACHE_HOME=str(root / "cache"))  # fmt: skip
    dry = ["--dry-run", "--format", "json", "--assume-gpu", "9.0x1", "--assume-driver", "580.95.05"]
    proc = run_stackcheck("gate", *dry, *words, "python3", "-m", "sglang.launch_server", "--model-path", "m",
                          env=env, cwd=root / "home", timeout=180)  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout).get("sglang")


def test_the_shim_is_run_where_the_launch_starts(root: Path) -> None:
    assert _judged(root, "--", "env", "-C", str(root / "proj")) == "0.5.3"  # (fails before: 0.5.9, the gate's own)
    assert _judged(root, "--cwd", str(root / "proj"), "--") == "0.5.3"  # (fails before: 0.5.9)


def test_without_a_directory_the_gates_own_is_the_launchs(root: Path) -> None:
    assert _judged(root, "--") == "0.5.9"
