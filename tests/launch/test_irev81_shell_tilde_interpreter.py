"""irev81: imend12 reads a leading `~` of the launch's program word in a shell string (`bash -c "~/venv/bin/python -m
sglang.launch_server ..."`) as the shell does: HOME's value, the program the one named (allowed). irev78's comparison
of the launch's interpreter with the one audited (interpreter_mismatch_problems) read the same word as a path under
the working directory (`$PWD/~/venv/bin/python`): a launch of the audited venv itself was refused as "another
environment" with that path in its advice. It now takes HOME's value where the string's HOME is the command's own
(an assignment or export of HOME inside the string: read as before, fail closed); another venv than the one audited
stays unknown. And the audited interpreter, which the facts name with "~" for the home directory, is mapped back
before the comparison: a venv under HOME was another environment than itself. The venvs are this test's own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import clean_env, run_stackcheck

XY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def _venv(path: Path, sglang: str | None) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    if sglang is not None:
        info = path / "lib" / f"python{XY}" / "site-packages" / f"sglang-{sglang}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: sglang\nVersion: {sglang}\n")
    return path


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("home")
    _venv(top / "good", "0.5.9")
    _venv(top / "bad", None)
    return top


def _python(home: Path, string: str, *line: str) -> list[str]:
    env = clean_env("CONDA_PREFIX", VIRTUAL_ENV=str(home / "good"), HOME=str(home),
                    XDG_CACHE_HOME=str(home / "cache"))  # fmt: skip
    dry = ["--dry-run", "--format", "json", "--assume-gpu", "9.0x1", "--assume-driver", "580.95.05"]
    words = line or ("bash", "-c", string)
    proc = run_stackcheck("gate", *dry, "--", *words, env=env, cwd=home / "good", timeout=180)
    assert proc.returncode in (0, 1), proc.stderr[-400:]
    doc = json.loads(proc.stdout)
    return [json.dumps(r.get("reasons")) for r in doc.get("reasons") or [] if r.get("feature") == "python"]


def test_the_audited_venv_named_with_a_tilde_is_not_another_environment(home: Path) -> None:
    assert _python(home, "~/good/bin/python -m sglang.launch_server --model-path m") == []  # (fails before)


def test_the_audited_venv_under_home_is_not_another_environment(home: Path) -> None:
    """The facts name the home directory "~" (pipeline.scrub_home): the audited interpreter `~/good/bin/python3` was
    compared as written with the launch's, so every launch of a venv under HOME was refused as another
    environment."""
    launch = f"{home}/good/bin/python -m sglang.launch_server --model-path m"
    assert _python(home, launch) == []  # (fails before)
    assert _python(home, "", *launch.split()) == []  # (fails before)


@pytest.mark.parametrize(
    "string",
    ["~/bad/bin/python -m sglang.launch_server --model-path m",
     "export HOME=/elsewhere; ~/good/bin/python -m sglang.launch_server --model-path m"],
    ids=["another venv", "HOME changed in the string"],
)  # fmt: skip
def test_another_venv_or_another_home_stays_unknown(home: Path, string: str) -> None:
    problems = _python(home, string)
    assert problems and "another environment" in problems[0], problems
