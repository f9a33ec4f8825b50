"""The gate's live checks read the target environment again from the facts' paths, which name the home directory
"~" (assembly.pipeline.scrub_home). Before irev40, an environment under $HOME (~/.venv, ~/miniconda3,
~/.pyenv: the common layouts) was looked for at the literal path "~/...": the dependency check found no SGLang
there and returned nothing (a dependency missing from the environment was never refused: a false pass), and the
model-architecture check said its registry could not be listed (unknown). Both tests fail on a0d01cf."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, model_dir

from stackcheck.cli import main

PYTHON = f"python{sys.version_info[0]}.{sys.version_info[1]}"


def home_venv(home: Path, deps_installed: bool) -> Path:
    """A virtual environment under `home` (no pip) holding SGLang 0.5.9's dist-info with one requirement of our
    own (`irevdep`), that requirement's dist-info when `deps_installed`, and a models directory registering
    LlamaForCausalLM (our own small files in the shape of an installed release)."""
    venv = home / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    site = venv / "lib" / PYTHON / "site-packages"
    (site / "sglang-0.5.9.dist-info").mkdir(parents=True)
    (site / "sglang-0.5.9.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.9\nRequires-Dist: irevdep>=1.0\n\n"
    )
    if deps_installed:
        (site / "irevdep-1.0.dist-info").mkdir()
        (site / "irevdep-1.0.dist-info" / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: irevdep\nVersion: 1.0\n\n"
        )
    models = site / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    (site / "sglang" / "__init__.py").write_text("")
    (models / "llama.py").write_text("class LlamaForCausalLM:\n    pass\n\n\nEntryClass = LlamaForCausalLM\n")
    return venv


def checks(home: Path, venv: Path, model: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    argv = ["gate", "--dry-run", "--format", "json", "--", str(venv / "bin" / "python"), "-m", "sglang.launch_server"]
    main([*argv, "--model-path", str(model)])
    doc = json.loads(capsys.readouterr().out)
    assert doc["sglang"] == "0.5.9"
    return {c["check"]: c for c in doc["preflight"]["checks"]}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    return home


def test_a_dependency_missing_from_an_environment_under_home_is_refused(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    venv = home_venv(home, deps_installed=False)
    found = checks(home, venv, model_dir(tmp_path, "m", LLAMA3), capsys)
    assert found["dependencies"]["status"] == "fail"
    assert "irevdep" in found["dependencies"]["message"]
    assert str(home) not in json.dumps(found)  # (the output still names the home directory "~")


def test_the_registry_of_an_environment_under_home_is_read(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    venv = home_venv(home, deps_installed=True)
    found = checks(home, venv, model_dir(tmp_path, "m", LLAMA3), capsys)
    assert found["model-architecture"]["status"] == "ok"
    assert found["dependencies"]["status"] == "ok"


def test_sglang_installed_but_not_in_the_search_directories_is_unknown() -> None:
    """The dependency check that finds no SGLang dist-info where the packages probe found SGLang installed says
    unknown (it read other directories than the probe), never nothing; none where SGLang is not installed."""
    from stackcheck.launch.preflight import _dependencies_unread

    installed = {"packages": {"sglang": {"installed": True, "version": "0.5.9", "location": "~/venv/site"}}}
    (result,) = _dependencies_unread(installed, ["/nowhere"])
    assert result.check == "dependencies" and result.status == "unknown"
    assert _dependencies_unread({"packages": {"sglang": {"installed": False}}}, ["/nowhere"]) == []
    assert _dependencies_unread({}, []) == []


def test_an_environment_whose_path_holds_the_home_inside_is_read_where_it_is(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """irev41: the facts' home scrub replaced the home's text anywhere in a path, so an environment under
    /mnt/home/al with HOME=/home/al was named "/mnt~/..." and the gate looked for it there: the dependency check
    said unknown (SGLang's dist-info not found) where a dependency is missing. Fails on bfbcc06."""
    from stackcheck.assembly.pipeline import scrub_home

    outer = tmp_path / "mnt" / str(home).lstrip("/")  # .../mnt/<the home's own path>: holds the home's text inside
    outer.mkdir(parents=True)
    venv = home_venv(outer, deps_installed=False)
    found = checks(home, venv, model_dir(tmp_path, "m", LLAMA3), capsys)
    assert found["dependencies"]["status"] == "fail", found["dependencies"]
    assert scrub_home(f"{outer}/venv", str(home)) == f"{outer}/venv"
    assert scrub_home(f"{home}ice/venv", str(home)) == f"{home}ice/venv"  # /home/alice beside /home/al: a guard
    assert scrub_home(f"python at {home}/venv: x", str(home)) == "python at ~/venv: x"  # guard
    assert scrub_home(f"/usr/bin:{home}/bin", str(home)) == "/usr/bin:~/bin"  # guard
