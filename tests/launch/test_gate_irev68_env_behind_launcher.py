"""irev68 (review of the env-prefix reader): an `env` prefix behind a launcher (`nohup env -u A python -m
sglang.launch_server ...`, `timeout 600 env -i PATH=... python ...`, `sudo -u svc env ...`) was skipped: find_launch
looked past it for the Python interpreter and judged the launch with the environment before it, so a variable the
prefix removes or changes was read as it was (GNU env applies -i, -u and NAME=VALUE before it execs the command:
env.c :1101-1165). With LMCACHE_MP_HOST in the gate's environment and `nohup env -u LMCACHE_MP_HOST` before the
launch, LMCache 0.5.6's connector has no mp_host and raises ValueError as the scheduler builds its cache
(lmcache/integration/sglang/unified_lmcache_mp_connector.py:220-225): the gate allowed it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_", "LMCACHE_")):
            monkeypatch.delenv(name)


def _decision(tmp_path: Path, prefix: tuple[str, ...]) -> str:
    path = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["packages"]["lmcache"] = {"installed": True, "version": "0.5.6", "dist_version": "0.5.6"}
    path.write_text(json.dumps(doc))
    model = str(model_dir(tmp_path, "llama3", LLAMA3))
    line = [*prefix, "python3", "-m", "sglang.launch_server", "--model-path", model, "--enable-lmcache"]
    return str(cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]["decision"])


@pytest.mark.parametrize(
    "prefix",
    [
        ("nohup", "env", "-u", "LMCACHE_MP_HOST"),
        ("timeout", "600", "env", "-i", "PATH=/usr/bin:/bin"),
        ("sudo", "-u", "svc", "/usr/bin/env", "--unset=LMCACHE_MP_HOST"),
        ("nohup", "env", "LMCACHE_MP_HOST="),  # an empty host is none (launch.json LMCACHE_MP_HOST)
    ],
)
def test_an_env_behind_a_launcher_that_drops_the_host_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefix: tuple[str, ...]
) -> None:
    # fails before: allowed (the gate's own LMCACHE_MP_HOST was read)
    monkeypatch.setenv("LMCACHE_MP_HOST", "10.0.0.5")
    assert _decision(tmp_path, prefix) == "refuse"


@pytest.mark.parametrize(
    "prefix",
    [
        ("nohup", "env", "LMCACHE_MP_HOST=10.0.0.5"),  # (before: refused, the host it sets not read)
        # (was `env -i LMCACHE_CONFIG_FILE=...`: -i also clears PATH and CUDA_HOME, so the facts' JIT toolchain is
        # not the server's and the gate refuses it for that since irobust4; the gate's own environment here holds
        # no LMCACHE_MP_HOST, as -i left none)
        ("timeout", "600", "env", "LMCACHE_CONFIG_FILE=/etc/lmcache/mp.yaml"),
    ],
)
def test_an_env_behind_a_launcher_that_gives_the_host_is_allowed(tmp_path: Path, prefix: tuple[str, ...]) -> None:
    assert _decision(tmp_path, prefix) == "allow"


def test_a_word_env_that_env_would_reject_is_passed_over_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`srun --job-name env --quiet python ...`: "env" is srun's job name there; GNU env would reject the option
    after it, so the word is not read as env (the launch is judged as before). (Was `conda run -n env
    --no-capture-output`: since igap54 conda run is refused as unknown, its environment not the facts' one.)"""
    monkeypatch.setenv("LMCACHE_MP_HOST", "10.0.0.5")
    # (imend13: gate --facts reads srun's environment from its own, the step's inside an allocation here; outside one
    # an srun with no GPU option starts a job without GPUs: unknown)
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    assert _decision(tmp_path, ("srun", "--job-name", "env", "--quiet")) == "allow"
    assert _decision(tmp_path, ("conda", "run", "-n", "env", "--no-capture-output")) == "refuse"


def test_the_launch_cwd_follows_a_nested_env_chdir() -> None:
    from stackcheck.knowledge.loader import load
    from stackcheck.launch import gate

    mapping = load([], env={}).launch
    argv = ["nohup", "env", "-C", "/srv/models", "python3", "-m", "sglang.launch_server", "--model-path", "m"]
    assert gate.launch_cwd(argv, mapping, {}, "/home/u") == "/srv/models"
    assert gate.launch_cwd(["nohup", "env", "-C", "m", *argv[4:]], mapping, {}, "/home/u") == "/home/u/m"
