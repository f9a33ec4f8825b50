"""irev69: an `env` behind a launcher whose reading stops where env still runs the command (`-a NAME` / --argv0, a
-S string's `${NAME}` the environment given does not hold: env_prefix's stops with fails=False) was passed over as
one env rejects is (irev68: 'the word may be another launcher's value'), so find_launch went on to the interpreter
and judged the launch with the environment before that env: `timeout 600 env -a srv -u LMCACHE_MP_HOST python -m
sglang.launch_server ... --enable-lmcache` was allowed with the gate's own LMCACHE_MP_HOST, though env removes it
before it execs the server (coreutils env.c: -a only renames argv[0]; -u applies). The same reading as a leading
`env` now: unknown, the gate refuses (fail closed). A stop where env itself fails (an option it rejects) is still
passed over: there the word may be another launcher's value (`conda run -n env --no-capture-output ...`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.launch.gate import derive


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_", "LMCACHE_")):
            monkeypatch.delenv(name)


def _decision(tmp_path: Path, prefix: tuple[str, ...]) -> dict[str, object]:
    path = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(path.read_text())
    doc["facts"]["packages"]["lmcache"] = {"installed": True, "version": "0.5.6", "dist_version": "0.5.6"}
    path.write_text(json.dumps(doc))
    model = str(model_dir(tmp_path, "llama3", LLAMA3))
    line = [*prefix, "python3", "-m", "sglang.launch_server", "--model-path", model, "--enable-lmcache"]
    out: dict[str, object] = cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]
    return out


@pytest.mark.parametrize(
    "prefix",
    [
        ("timeout", "600", "env", "-a", "srv", "-u", "LMCACHE_MP_HOST"),
        ("nohup", "env", "--argv0=srv", "-u", "LMCACHE_MP_HOST"),
        ("timeout", "600", "env", "-S", "-u LMCACHE_MP_HOST ${IREV69_NOT_SET}"),
    ],
)
def test_an_env_behind_a_launcher_read_no_further_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefix: tuple[str, ...]
) -> None:
    # fails before: allowed (the launch judged with the gate's own LMCACHE_MP_HOST)
    monkeypatch.setenv("LMCACHE_MP_HOST", "10.0.0.5")
    got = _decision(tmp_path, prefix)
    assert got["decision"] == "refuse", got
    assert "env prefix" in json.dumps(got), got


def test_a_stop_where_env_fails_is_still_passed_over() -> None:
    mapping = load_manifests([]).launch
    launch = ["python3", "-m", "sglang.launch_server", "--model-path", "/m"]
    d = derive(["conda", "run", "-n", "env", "--no-capture-output", *launch], mapping, {"PATH": "/usr/bin"})
    assert d.entrypoint is not None and not [p for p in d.problems if p.subject == "env"], d.problems
    d = derive(["timeout", "9", "env", "-a", "srv", *launch], mapping, {"PATH": "/usr/bin"})
    assert d.entrypoint is not None and [p for p in d.problems if p.subject == "env"], d.problems
