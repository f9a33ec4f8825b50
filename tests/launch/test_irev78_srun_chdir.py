"""irev78: srun -D DIR / --chdir DIR (srun(1): the remote processes chdir to DIR before they start) before the launch.
srun is a program the gate's walk steps through (runners.RUNNERS), and the gate judged the launch from its own
directory: `srun -n1 -D co /srv/bin/python -m sglang.launch_server ...` with a checkout's sglang in co (the first
sys.path entry of `python -m`, 0.5.3 there) was judged as the installed 0.5.9 and nothing said the directory moved.
Now it is unknown, naming srun."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_process import clean_env, run_stackcheck

from stackcheck.knowledge.loader import load
from stackcheck.launch.gate import unplaced_before

LAUNCH = ["/srv/bin/python", "-m", "sglang.launch_server", "--model-path", "m"]
XY = f"{sys.version_info[0]}.{sys.version_info[1]}"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize(
    "prefix",
    [
        ["-D", "co"],
        ["-Dco"],
        ["-n1", "-lD", "co"],
        ["--chdir", "co"],
        ["--chdir=co"],
        ["--chd=co"],
        ["-n", "1", "-D/x"],
    ],
)
def test_srun_chdir_is_unknown(prefix: list[str], mapping: Any) -> None:
    argv = ["srun", *prefix, *LAUNCH]
    got = unplaced_before(argv, argv.index(LAUNCH[0]), {}, mapping)
    assert got is not None and got.subject == "srun" and got.status == "unknown", got
    assert "--chdir" in got.message


def test_srun_working_dir_variable_and_plain_srun(mapping: Any) -> None:
    argv = ["srun", "-n1", *LAUNCH]
    assert unplaced_before(argv, 2, {}, mapping) is None
    got = unplaced_before(argv, 2, {"SLURM_WORKING_DIR": "/co"}, mapping)
    assert got is not None and got.status == "unknown", got
    # (another option and its value: placed as before)
    assert unplaced_before(["srun", "-J", "x", *LAUNCH], 3, {}, mapping) is None


def test_the_gate_no_longer_judges_the_launch_from_its_own_directory(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    info = venv / "lib" / f"python{XY}" / "site-packages" / "sglang-0.5.9.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.9\n")
    (tmp_path / "co" / "sglang").mkdir(parents=True)
    (tmp_path / "co" / "sglang" / "__init__.py").write_text("")
    (tmp_path / "co" / "sglang" / "_version.py").write_text("__version__ = version = '0.5.3'\n")
    # (imend13: a step inside an allocation, SLURM_JOB_ID set; outside one, srun with no GPU option is unknown too)
    env = clean_env(
        "VIRTUAL_ENV", "CONDA_PREFIX", "SLURM_WORKING_DIR", XDG_CACHE_HOME=str(tmp_path / "cache"), SLURM_JOB_ID="4242"
    )
    dry = ["--dry-run", "--format", "json", "--assume-gpu", "9.0x1", "--assume-driver", "580.95.05"]
    line = ["srun", "-n1", "-D", "co", str(venv / "bin/python"), "-m", "sglang.launch_server", "--model-path", "m"]
    proc = run_stackcheck("gate", *dry, "--", *line, env=env, cwd=tmp_path, timeout=180)
    doc = json.loads(proc.stdout)
    srun = [r.get("status") for r in doc.get("reasons") or [] if r.get("feature") == "srun"]
    assert proc.returncode == 1 and srun == ["unknown"], (doc.get("sglang"), doc.get("reasons"))
