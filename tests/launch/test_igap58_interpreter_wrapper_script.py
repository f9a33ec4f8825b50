"""igap58 (irobust9's finding): the launch's `python3` may be a shell script that exports LD_LIBRARY_PATH / CUDA_HOME /
FLASHINFER_* (an environment-modules wrapper, a conda activation wrapper) before it execs Python; the gate judged the
libraries, the JIT toolchain and the cubins with the launch's environment, not the script's, and said nothing. Now
such a script is unknown, naming it; pyenv's and asdf's shims (shapes of pyenv's libexec/pyenv-rehash prototype shim
and asdf's internal/shims/shims.go, written here in our own words) change PATH only and pass. Real scripts are made
in a temporary directory and read through this host's view."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.facts_loader_path import CUBIN_ENV, JIT_ENV
from stackcheck.readers.fsview import HostView

READ = ("LD_LIBRARY_PATH", "LD_PRELOAD", *JIT_ENV, *CUBIN_ENV)


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _problems(tmp_path: Path, text: str | None, mapping: Any, *, named: bool = False) -> list[Any]:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    exe = bindir / "python3"
    if text is None:
        exe.symlink_to(os.path.realpath(sys.executable))  # (a compiled interpreter)
    else:
        exe.write_text(text)
    exe.chmod(0o755)
    word = str(exe) if named else "python3"
    command = [word, "-m", "sglang.launch_server", "--model-path", "/models/m"]
    env = {"PATH": f"{bindir}:/usr/bin:/bin"}
    return gate.interpreter_script_problems(command, mapping, env, str(tmp_path), READ, HostView())


PYENV_SHIM = """#!/usr/bin/env bash
set -e
[ -n "$PYENV_DEBUG" ] && set -x

program="${0##*/}"

export PYENV_ROOT="/home/u/.pyenv"
exec "/home/u/.pyenv/libexec/pyenv" exec "$program" "$@"
"""

PYENV_SHIM_DIR = """#!/usr/bin/env bash
set -e
[ -n "$PYENV_DEBUG" ] && set -x

program="${0##*/}"
if [ "$program" = "python" ]; then
  for arg; do
    case "$arg" in
    -c* | -- ) break ;;
    */* )
      if [ -f "$arg" ]; then
        export PYENV_DIR="${arg%/*}"
        break
      fi
      ;;
    esac
  done
fi

export PYENV_ROOT="/root/.pyenv"
exec "/root/.pyenv/libexec/pyenv" exec "$program" "$@"
"""

ASDF_SHIM = """#!/usr/bin/env bash
# asdf-plugin: python 3.12.7
exec /home/u/.asdf/bin/asdf exec "python3" "$@" # asdf_allow: ' asdf '
"""

ASDF_GO_SHIM = """#!/usr/bin/env bash
# asdf-plugin: python 3.12.7
exec asdf exec "python3" "$@"
"""


@pytest.mark.parametrize("text", [PYENV_SHIM, PYENV_SHIM_DIR, ASDF_SHIM, ASDF_GO_SHIM])
def test_pyenv_and_asdf_shims_change_path_only_and_pass(tmp_path: Path, text: str, mapping: Any) -> None:
    assert _problems(tmp_path, text, mapping) == []


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("#!/bin/bash\nexport LD_LIBRARY_PATH=/opt/cuda-12.4/lib64:$LD_LIBRARY_PATH\nexec /usr/bin/python3 \"$@\"\n",
         "LD_LIBRARY_PATH"),
        ("#!/bin/sh\nCUDA_HOME=/opt/cuda-12.8; export CUDA_HOME\nexec /opt/py/bin/python3 \"$@\"\n", "CUDA_HOME"),
        ("#!/bin/sh\nexport FLASHINFER_CUBIN_DIR=/data/cubins\nexec /opt/py/bin/python3 \"$@\"\n",
         "FLASHINFER_CUBIN_DIR"),
        ("#!/bin/bash\nmodule load cuda/12.4\nexec /opt/py/bin/python3 \"$@\"\n", "`module ...`"),
        ("#!/bin/bash\nsource /opt/conda/etc/profile.d/conda.sh\nconda activate serve\nexec python3 \"$@\"\n",
         "`source ...`"),
        (PYENV_SHIM.replace("set -e\n", "set -e\nexport LD_LIBRARY_PATH=/opt/lib\n"), "LD_LIBRARY_PATH"),
    ],
)  # fmt: skip
def test_a_wrapper_that_sets_what_the_readers_read_is_unknown(
    tmp_path: Path, text: str, names: str, mapping: Any
) -> None:
    got = _problems(tmp_path, text, mapping)
    assert [p.status for p in got] == ["unknown"]
    assert names in got[0].message and str(tmp_path / "bin" / "python3") in got[0].message
    # the same where the command names the script by its path
    assert [p.status for p in _problems(tmp_path, text, mapping, named=True)] == ["unknown"]


def test_a_wrapper_that_sets_nothing_they_read_passes(tmp_path: Path, mapping: Any) -> None:
    assert _problems(tmp_path, '#!/bin/sh\nexport OMP_NUM_THREADS=8\nexec /opt/py/bin/python3 "$@"\n', mapping) == []


def test_a_compiled_interpreter_passes(tmp_path: Path, mapping: Any) -> None:
    assert _problems(tmp_path, None, mapping) == []


def test_a_live_gate_names_the_wrapper(tmp_path: Path) -> None:
    """The whole gate on this host: the wrapper execs this test's own interpreter, so the python probe reads it."""
    from cli_process import clean_env, stackcheck_json

    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "python3"
    exe.write_text(
        f'#!/bin/sh\nexport LD_LIBRARY_PATH=/opt/cuda-12.4/lib64\nexec {os.path.realpath(sys.executable)} "$@"\n'
    )
    exe.chmod(0o755)
    env = clean_env(XDG_CACHE_HOME=str(tmp_path / "cache"))
    doc = stackcheck_json("gate", "--dry-run", "--format", "json", "--", str(exe), "-m", "sglang.launch_server",
                          "--model-path", "x", env=env)  # fmt: skip
    problems = doc["derived"]["problems"]
    found = [p for p in problems if p.get("subject") == "python" and "shell script" in p.get("message", "")]
    assert [p["status"] for p in found] == ["unknown"] and str(exe) in found[0]["message"]
    assert doc["decision"] != "allow"


def test_a_console_scripts_shebang_wrapper_is_read_too(tmp_path: Path, mapping: Any) -> None:
    """`sglang serve ...` whose shebang names a wrapper script (the kernel runs a script interpreter in turn)."""
    wrapper = tmp_path / "wrap" / "python3"
    wrapper.parent.mkdir()
    wrapper.write_text('#!/bin/sh\nexport CUDA_HOME=/opt/cuda-12.8\nexec /opt/py/bin/python3 "$@"\n')
    wrapper.chmod(0o755)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "sglang"
    script.write_text(f"#!{wrapper}\nimport sys\n")
    script.chmod(0o755)
    command = ["sglang", "serve", "--model-path", "/models/m"]
    got = gate.interpreter_script_problems(command, mapping, {"PATH": f"{bindir}:/usr/bin:/bin"}, str(tmp_path), READ,
                                           HostView())  # fmt: skip
    assert [p.status for p in got] == ["unknown"] and "CUDA_HOME" in got[0].message and str(wrapper) in got[0].message
