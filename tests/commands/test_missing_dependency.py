"""A dependency of stackcheck that cannot be imported (a source checkout on PYTHONPATH, a half-removed venv) is a
broken installation, said in words with what to install, not "internal error ... this is a bug" (seen on a GPU box,
2026-12-05: bench/h200_issue20_proof.sh ran `stackcheck diff` without jsonschema on the path). A module of
stackcheck's own that is missing is still an internal error. Both exit 4, one line each, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.cli import DEPENDENCY_MODULES

REPO = Path(__file__).resolve().parents[2]


def _run_blocked(module: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys; sys.modules[sys.argv[1]] = None\n"
        "from stackcheck.cli import main\n"
        "sys.exit(main(['manifests', 'validate']))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "STACKCHECK_DEBUG"}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-c", code, module], capture_output=True, text=True, env=env, timeout=120, check=False
    )


@pytest.mark.parametrize("module", ["jsonschema", "referencing", "rpds"])
def test_missing_dependency_is_named_with_what_to_install(module: str) -> None:
    proc = _run_blocked(module)
    assert proc.returncode == 4
    assert "Traceback" not in proc.stderr
    assert "internal error" not in proc.stderr and "this is a bug" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0].startswith("stackcheck: error: broken installation:")
    assert DEPENDENCY_MODULES[module] in lines[0]
    assert f"pip install {DEPENDENCY_MODULES[module]}" in lines[1]


def test_missing_module_of_stackcheck_is_still_an_internal_error() -> None:
    proc = _run_blocked("stackcheck.knowledge.validate")
    assert proc.returncode == 4
    assert "Traceback" not in proc.stderr
    assert "stackcheck: internal error: ModuleNotFoundError" in proc.stderr
    assert "broken installation" not in proc.stderr


def test_dependency_table_covers_pyproject() -> None:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    deps = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    names = (line.strip().strip('",').split(";")[0] for line in deps.splitlines())
    declared = {name.split(">")[0].split("=")[0].strip() for name in names}
    declared.discard("")
    assert declared <= set(DEPENDENCY_MODULES.values()), declared - set(DEPENDENCY_MODULES.values())
