"""irobust12: irobust11's reading of a launch's `python3` wrapper script read each line alone, but the shell joins a
line ending in a backslash with the next before it reads words: `export LD_LIBRARY\\` then `_PATH=/opt/x/lib` sets
LD_LIBRARY_PATH, and passed. The joined text is read too (the union kept: a comment's trailing backslash joins
nothing in the shell, so `# note \\` then `export LD_PRELOAD=...` still counts). Scripts written here."""

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
    return gate.interpreter_script_problems(command, mapping, {"PATH": f"{bindir}:/usr/bin:/bin"}, str(tmp_path),
                                            READ, HostView())  # fmt: skip


@pytest.mark.parametrize(
    ("text", "name"),
    [("#!/bin/sh\nexport LD_LIBRARY\\\n_PATH=/opt/x/lib\n" + EXEC, "LD_LIBRARY_PATH"),
     ("#!/bin/sh\nexport \\\nCUDA_\\\nHOME=/opt/cuda\n" + EXEC, "CUDA_HOME"),
     ("#!/bin/sh\n# note \\\nexport LD_PRELOAD=/opt/x.so\n" + EXEC, "LD_PRELOAD")],
)  # fmt: skip
def test_a_name_split_over_lines_is_read(tmp_path: Path, text: str, name: str, mapping: Any) -> None:
    got = _problems(tmp_path, text, mapping)
    assert [p.status for p in got] == ["unknown"]  # (fails before: [] for the first two)
    assert name in got[0].message


def test_a_continued_line_that_sets_none_passes(tmp_path: Path, mapping: Any) -> None:
    assert _problems(tmp_path, "#!/bin/sh\nexport OMP_NUM\\\n_THREADS=8\n" + EXEC, mapping) == []
