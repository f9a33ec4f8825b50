"""A gated `python -m sglang.launch_server` run from a checkout imports ./sglang (Python puts the working directory
first on sys.path for -m), not the installed sglang (issue 16): the packages probe judges the copy that runs, its
version from its own files (sglang/_version.py, flashinfer/_build_meta.py, torch/version.py) or unknown, and the
gate and the audit say so. A directory without __init__.py is a namespace portion and shadows nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.packages import SHADOW_IMPORTS, PackagesProbe

REPO = Path(__file__).parent.parent.parent
XY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def add_dist(site: Path, name: str, version: str) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def checkout(directory: Path, version: str | None) -> Path:
    """An SGLang source tree's python/ folder: sglang/__init__.py, and the _version.py setuptools-scm writes
    (`__version__ = version = '...'`) where `version` is given."""
    (directory / "sglang").mkdir(parents=True)
    (directory / "sglang/__init__.py").write_text("from sglang.version import __version__\n")
    if version is not None:
        (directory / "sglang/_version.py").write_text(
            f"__all__ = ['__version__']\nversion: str\n__version__ = version = '{version}'\n"
        )
    return directory


def packages(site: Path, first: Path | None) -> dict[str, Any]:
    ctx = ProbeContext(env={}, path_dirs=[str(site)], launch_first_path=str(first) if first else None, cache_dir="")
    result = PackagesProbe().run(ctx)
    out: dict[str, Any] = result.facts["packages"]
    return out


def test_import_names_are_the_manifests() -> None:
    doc = json.loads((REPO / "manifests/components.json").read_text())
    expected = {
        name: pkg["import_name"]
        for pkg in doc["packages"].values()
        if "." not in pkg.get("import_name", ".")
        for name in pkg["names"]
    }
    assert expected == SHADOW_IMPORTS


def test_a_checkout_in_the_launch_directory_is_the_sglang_judged(tmp_path: Path) -> None:
    site = tmp_path / "site"
    add_dist(site, "sglang", "0.5.9")
    assert packages(site, None)["sglang"]["version"] == "0.5.9"
    first = checkout(tmp_path / "co", "0.5.3")
    entry = packages(site, first)["sglang"]
    assert entry["version"] == "0.5.3" and entry["installed"] is True
    assert entry["shadowing"] == f"{first}/sglang" and entry["location"] == str(first)
    assert entry["shadowed"] == {"version": "0.5.9", "location": str(site)}
    # without the generated _version.py its version.py would report the installed 0.5.9: unknown, never that
    (first / "sglang/_version.py").unlink()
    entry = packages(site, first)["sglang"]
    assert entry["version"] is None and entry["shadowing"] == f"{first}/sglang"
    # a checkout shadows even where no sglang is installed
    assert packages(tmp_path / "empty", first)["sglang"]["installed"] is True


def test_what_does_not_shadow(tmp_path: Path) -> None:
    site = tmp_path / "site"
    add_dist(site, "sglang", "0.5.9")
    first = tmp_path / "run"
    (first / "sglang").mkdir(parents=True)  # a namespace portion: the installed regular package wins
    (first / "torch").mkdir()
    (first / "torch/version.py").write_text("__version__ = '9.9.9'\n")  # no __init__.py either
    got = packages(site, first)
    assert got["sglang"]["version"] == "0.5.9" and "shadowing" not in got["sglang"]
    assert got["torch"] == {"installed": False}
    (first / "flashinfer.py").write_text("")  # a module shadows too; its version is not read
    (first / "flashinfer").mkdir()
    (first / "flashinfer/__init__.py").write_text("")
    (first / "flashinfer/_build_meta.py").write_text('"""meta"""\n__version__ = "0.6.3"\n')
    assert packages(site, first)["flashinfer-python"]["version"] == "0.6.3"


def gate(cwd: Path, venv: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    drop = ("VIRTUAL_ENV", "CONDA_PREFIX", "STACKCHECK_PYTHON", "COLUMNS", "PYTHONSAFEPATH")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(PYTHONPATH=str(REPO), XDG_CACHE_HOME=str(cwd.parent / "cache"), **extra)
    argv = [sys.executable, "-m", "stackcheck", "gate", "--dry-run", "--format", "json", "--assume-gpu", "9.0x8",
            "--assume-driver", "580.95.05", "--require", "torch-symm-mem", "--",
            str(venv / "bin/python"), "-m", "sglang.launch_server", "--model-path", "/nonexistent"]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def test_the_gate_judges_and_names_the_checkout(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = venv / "lib" / f"python{XY}" / "site-packages"
    add_dist(site, "sglang", "0.5.9")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = gate(elsewhere, venv)
    doc = json.loads(proc.stdout)
    assert doc["sglang"] == "0.5.9" and "shadowed" not in doc, proc.stderr
    assert status(doc, "sglang-requires-python") == "ok"
    co = checkout(tmp_path / "co", "0.5.3")
    doc = json.loads(gate(co, venv).stdout)
    assert doc["sglang"] == "0.5.3"
    (line,) = doc["shadowed"]
    assert line.startswith(f"sglang is imported from {co}/sglang") and "not the installed 0.5.9" in line
    (co / "sglang/_version.py").unlink()
    proc = gate(co, venv)
    doc = json.loads(proc.stdout)
    assert doc["sglang"] is None and "judged as unknown" in doc["shadowed"][0]
    # not judged with the installed 0.5.9: what rests on the release is unknown, and the gate refuses
    assert status(doc, "sglang-requires-python") == "unknown" and status(doc, "sglang-pins") == "unknown"
    assert proc.returncode == 1 and doc["decision"] == "refuse"


def status(doc: dict[str, Any], feature: str) -> str:
    (found,) = [f["status"] for f in doc["features"] if f["feature"] == feature]
    return str(found)


def test_pythonsafepath_is_read_by_the_audited_pythons_version(tmp_path: Path) -> None:
    # irev64: PYTHONSAFEPATH=1 left the working directory out whatever the Python, but Python 3.10 ignores it (added
    # in 3.11), so a 3.10 `python -m sglang.launch_server` run from a checkout imported ./sglang while the probe
    # judged the installed release (a false pass); on 3.11+ the checkout is not imported and not judged
    site = tmp_path / "site"
    add_dist(site, "sglang", "0.5.9")
    first = checkout(tmp_path / "co", "0.5.3")

    def judged(python: str | None) -> Any:
        facts = {"python": {"version": python}} if python else {}
        ctx = ProbeContext(env={}, path_dirs=[str(site)], launch_first_path_before_311=str(first), cache_dir="")
        return PackagesProbe().run(ctx.replace(facts=facts)).facts["packages"]["sglang"]["version"]

    assert judged("3.10.13") == "0.5.3" and judged(None) == "0.5.3"  # (not given: taken as older, fail closed)
    assert judged("3.11.7") == "0.5.9" and judged("3.13.0") == "0.5.9"


def test_command_first_path_before_311_ignores_pythonsafepath() -> None:
    from stackcheck.assembly.target import command_first_path
    from stackcheck.readers.fsview import HostView

    view, run = HostView("/"), ["python", "-m", "sglang.launch_server"]
    assert command_first_path(run, {"PYTHONSAFEPATH": "1"}, "/w", view) is None
    assert command_first_path(run, {"PYTHONSAFEPATH": "1"}, "/w", view, before_311=True) == "/w"
    assert command_first_path(["env", "PYTHONSAFEPATH=1", *run], {}, "/w", view, before_311=True) == "/w"
    for safe in (["python", "-P", *run[1:]], ["python", "-I", *run[1:]]):
        assert command_first_path(safe, {}, "/w", view, before_311=True) is None, safe


def test_the_gate_under_pythonsafepath_judges_the_copy_that_runs(tmp_path: Path) -> None:
    from test_python310 import _python310

    old = _python310()
    if old is None:
        pytest.skip("no CPython 3.10 on this machine")
    for python, xy, imported in ((old, "3.10", "0.5.3"), (sys.executable, XY, "0.5.9")):
        venv = tmp_path / f"venv{xy}"
        subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        add_dist(venv / "lib" / f"python{xy}" / "site-packages", "sglang", "0.5.9")
        co = tmp_path / f"co{xy}"
        if not co.exists():
            checkout(co, "0.5.3")
        proc = gate(co, venv, PYTHONSAFEPATH="1")
        doc = json.loads(proc.stdout)
        assert doc["sglang"] == imported, (xy, proc.stderr)
        assert ("shadowed" in doc) is (imported == "0.5.3"), doc.get("shadowed")
