"""irobust11: igap58's reading of a launch's `python3` that is a shell script passed forms that set (or unset) a
variable the loader, a JIT build or FlashInfer's cubin lookup reads: the name quoted (`export "LD_LIBRARY_PATH=..."`,
`env 'CUDA_HOME=...'`), `unset`, an assigning expansion under `set -a`, a name after a `#` inside quotes (read as a
comment), and a script with no `#!` line (the shell that runs the launch runs it with /bin/sh after ENOEXEC). Each is
unknown now, naming the variable; a script that only reads one, or sets none, still passes. Scripts written here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.facts_loader_path import CUBIN_ENV, JIT_ENV
from stackcheck.readers.fsview import HostView

READ = ("LD_LIBRARY_PATH", "LD_PRELOAD", *JIT_ENV, *CUBIN_ENV)
EXEC = 'exec /opt/py/bin/python3.12 "$@"\n'


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _problems(tmp_path: Path, text: str, mapping: Any) -> list[Any]:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "python3"
    exe.write_text(text)
    exe.chmod(0o755)
    command = ["python3", "-m", "sglang.launch_server", "--model-path", "/models/m"]
    env = {"PATH": f"{bindir}:/usr/bin:/bin"}
    return gate.interpreter_script_problems(command, mapping, env, str(tmp_path), READ, HostView())


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ('#!/bin/sh\nexport "LD_LIBRARY_PATH=/opt/x/lib"\n' + EXEC, "LD_LIBRARY_PATH"),
        ('#!/bin/sh\nexec env "LD_PRELOAD=/opt/x.so" /opt/py/bin/python3.12 "$@"\n', "LD_PRELOAD"),
        ("#!/bin/sh\nexec /usr/bin/env 'CUDA_HOME=/opt/cuda' /opt/py/bin/python3.12 \"$@\"\n", "CUDA_HOME"),
        ("#!/bin/sh\nunset LD_LIBRARY_PATH\n" + EXEC, "LD_LIBRARY_PATH"),
        ('#!/bin/bash\nset -a\n: "${CUDA_HOME:=/opt/cuda-12}"\n' + EXEC, "CUDA_HOME"),
        ('#!/bin/sh\nexport NOTE="a #b" LD_PRELOAD=/opt/x.so\n' + EXEC, "LD_PRELOAD"),
        ("export FLASHINFER_CUBIN_DIR=/data/cubins\n" + EXEC, "FLASHINFER_CUBIN_DIR"),
    ],
    ids=["quoted-export", "quoted-env", "single-quoted-env", "unset", "assigning-expansion", "hash-in-quotes",
         "no-shebang"],
)  # fmt: skip
def test_a_form_that_sets_a_variable_they_read_is_unknown(tmp_path: Path, text: str, name: str, mapping: Any) -> None:
    got = _problems(tmp_path, text, mapping)
    assert [p.status for p in got] == ["unknown"], text
    assert name in got[0].message


@pytest.mark.parametrize(
    "text",
    [
        '#!/bin/sh\necho "using $LD_LIBRARY_PATH and ${CUDA_HOME:-none}" >&2\n' + EXEC,
        "#!/bin/sh\nexport OMP_NUM_THREADS=8\n" + EXEC,
        "",
    ],
    ids=["reads-only", "sets-another", "empty"],
)
def test_a_script_that_sets_none_of_them_passes(tmp_path: Path, text: str, mapping: Any) -> None:
    assert _problems(tmp_path, text, mapping) == []
