"""irobust8: `systemd-run --scope` runs the command itself, with the caller's environment merged with the user's
(--uid: HOME, SHELL, USER, LOGNAME) and then with every -E / --setenv (systemd src/run/run.c
start_transient_scope: strv_env_merge(environ, user_env, arg_environment)). The gate read the scope's command with
the caller's environment and passed -E over, so `systemd-run --scope -E LMCACHE_MP_HOST= python -m
sglang.launch_server ... --enable-lmcache` was allowed where LMCache 0.5.6's connector finds no mp_host and raises
(as test_gate_irev68_env_behind_launcher's `nohup env LMCACHE_MP_HOST=`). irobust8 applied the settings; irev76,
merged beside it, read a scope with -E / --setenv / --uid as an environment policy (unknown), which the merge kept:
fail closed either way, so a setting that gives the host refuses too now."""

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
    [("systemd-run", "--scope", "-E", "LMCACHE_MP_HOST="),
     ("systemd-run", "--scope", "-ELMCACHE_MP_HOST="),
     ("systemd-run", "--scope", "--setenv=LMCACHE_MP_HOST="),
     ("systemd-run", "--scope", "--setenv", "LMCACHE_MP_HOST="),
     ("systemd-run", "--scope", "--setenv", "LMCACHE_MP_HOST=10.0.0.5", "--setenv", "LMCACHE_MP_HOST="),
     ("nohup", "systemd-run", "--scope", "--sete=LMCACHE_MP_HOST=")],
)  # fmt: skip
def test_a_scope_setenv_that_drops_the_host_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefix: tuple[str, ...]
) -> None:
    # fails before: allowed (the caller's LMCACHE_MP_HOST was read, -E passed over)
    monkeypatch.setenv("LMCACHE_MP_HOST", "10.0.0.5")
    assert _decision(tmp_path, prefix) == "refuse"


@pytest.mark.parametrize(
    "prefix",
    [("systemd-run", "--scope", "-E", "LMCACHE_MP_HOST=10.0.0.5"),
     ("systemd-run", "--scope", "--setenv=LMCACHE_MP_HOST=10.0.0.5", "-q")],
)  # fmt: skip
def test_a_scope_setenv_that_gives_the_host_is_unknown(tmp_path: Path, prefix: tuple[str, ...]) -> None:
    # (the merged reading: the settings are not applied, the environment is unknown)
    assert _decision(tmp_path, prefix) == "refuse"


def test_a_scope_without_setenv_keeps_the_callers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LMCACHE_MP_HOST", "10.0.0.5")
    assert _decision(tmp_path, ("systemd-run", "--scope")) == "allow"
    monkeypatch.delenv("LMCACHE_MP_HOST")
    assert _decision(tmp_path, ("systemd-run", "--scope")) == "refuse"


LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]


@pytest.mark.parametrize(
    "line",
    [["systemd-run", "--scope", "--uid=svc", *LAUNCH],  # (the user's HOME: its Hugging Face and FlashInfer caches)
     ["systemd-run", "--scope", "--uid", "svc", "-E", "A=1", *LAUNCH],
     ["systemd-run", "-d", *LAUNCH, "--scope"]],  # (a service: --scope after the command is the server's word)
)  # fmt: skip
def test_the_environment_is_unknown(line: list[str]) -> None:
    # fails before: allowed (any later `--scope` word read as the scope; --uid's HOME passed over)
    from stackcheck.knowledge.loader import load
    from stackcheck.launch import gate

    d = gate.derive(line, load([], env={}).launch, {})
    assert ("env", "unknown") in [(p.subject, p.status) for p in d.problems], d.problems


def test_the_settings_make_the_environment_unknown() -> None:
    from stackcheck.knowledge.loader import load
    from stackcheck.launch import gate

    line = ["nice", "systemd-run", "--scope", "-EA=1", "--setenv", "B", "-E", "C", "--sete=A=2", "-q", *LAUNCH]
    d = gate.derive(line, load([], env={}).launch, {"B": "caller", "D": "4"})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2
    assert ("env", "unknown") in [(p.subject, p.status) for p in d.problems], d.problems
