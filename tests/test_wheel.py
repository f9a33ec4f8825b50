"""The built wheel carries manifests/ and schemas/ as package data, and the installed package loads them
through importlib.resources (not through paths next to the source)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_contains_manifests_and_schemas(tmp_path: Path) -> None:
    # built from a copy of the sources: setuptools would reuse a checkout's build/ (a module removed from the
    # sources, or a package missing from pyproject's list, would still be in the wheel)
    src = tmp_path / "src"
    junk = shutil.ignore_patterns(".*", "build", "dist", "*.egg-info", "__pycache__", "tests")
    shutil.copytree(ROOT, src, symlinks=True, ignore=junk)
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0 and ("Could not find a version" in proc.stderr or "NewConnectionError" in proc.stderr):
        pytest.skip("the build backend could not be fetched from the registry")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    wheel = next(tmp_path.glob("stackcheck-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for p in (ROOT / "manifests").glob("*.json"):
        assert f"stackcheck/manifests/{p.name}" in names
    for p in (ROOT / "schemas").glob("*.json"):
        assert f"stackcheck/schemas/{p.name}" in names
    assert "stackcheck/py.typed" in names
    # every module of every subpackage (a package missing from pyproject's list would be left out)
    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "stackcheck").rglob("*.py")}
    assert sources - names == set()
    # install it into a fresh target and load the data from there
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target), str(wheel)],
        check=True,
        timeout=300,
    )
    facts = ROOT / "tests" / "cases" / "writeup-before" / "facts.json"
    code = (
        "import stackcheck, stackcheck.knowledge.loader as m; "
        "print(stackcheck.__file__); print(len(m.load([], env={}).features)); "
        "from stackcheck.cli import main; "
        f"main(['plan', '--facts', {str(facts)!r}, '--format', 'json', '--output', 'plan.json'])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(tmp_path),
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    location, count = out.stdout.split()
    assert location.startswith(str(target))
    assert int(count) >= 20
    plan = json.loads((tmp_path / "plan.json").read_text(encoding="utf-8"))["plan"]  # the planner, installed
    assert plan["steps"] and all(step["commands"] for step in plan["steps"])
