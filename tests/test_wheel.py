"""The built wheel carries manifests/ and schemas/ as package data, and the installed package loads them
through importlib.resources (not through paths next to the source)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_contains_manifests_and_schemas(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path), str(ROOT)],
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
    # install it into a fresh target and load the data from there
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target), str(wheel)],
        check=True,
        timeout=300,
    )
    code = (
        "import stackcheck, stackcheck.manifest_loader as m; "
        "print(stackcheck.__file__); print(len(m.load([], env={}).features))"
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
