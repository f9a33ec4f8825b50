"""imend3: a relative `--config FILE` is read from the directory the launch starts in, as SGLang opens it: the gate
read it from its own working directory (or --cwd) whatever the command did first, so `env -C /srv python -m
sglang.launch_server --config c.yaml` merged ./c.yaml of the gate's directory, and under gate --facts (the server
starts on another box, in a directory the gate is not told) this host's file decided the launch's flags. Now the
command's `env -C` moves it (gate.launch_cwd), and under --facts without --cwd a relative FILE is left unread: the
launch facts are unknown (derive's --config problem), never this host's file."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate, gate_preflight

MAPPING = dict(load([], env={}).launch)
DATA = dict(load([], env={}).preflight)
LAUNCH = ["python3", "-m", "sglang.launch_server", "--tp", "2"]


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    here, srv = tmp_path / "here", tmp_path / "srv"
    here.mkdir()
    srv.mkdir()
    (here / "c.yaml").write_text("attention-backend: triton\n")  # the gate's own directory's: not the server's
    (srv / "c.yaml").write_text("attention-backend: fa3\n")
    monkeypatch.chdir(here)
    return {"here": here, "srv": srv}


def test_env_c_moves_where_a_relative_config_is_read(dirs: dict[str, Path]) -> None:
    command = ["env", "-C", str(dirs["srv"]), *LAUNCH, "--config", "c.yaml"]
    merged, path, problem = gate_preflight.expand_config(command, MAPPING, DATA, {})
    assert path == str(dirs["srv"] / "c.yaml") and "fa3" in merged and problem is None, (path, merged)  # before: here
    # relative -C from the launch directory (gate --cwd), nested
    command = ["env", "-C", str(dirs["here"].parent), "env", "-C", "srv", *LAUNCH, "--config", "c.yaml"]
    _, path, _ = gate_preflight.expand_config(command, MAPPING, DATA, {}, cwd="/")
    assert path == str(dirs["srv"] / "c.yaml")
    # a plain launch: from --cwd, else the gate's own directory, as before
    plain = [*LAUNCH, "--config", "c.yaml"]
    assert gate_preflight.expand_config(plain, MAPPING, DATA, {})[1] == str(dirs["here"] / "c.yaml")
    assert gate_preflight.expand_config(plain, MAPPING, DATA, {}, cwd=str(dirs["srv"]))[1] == str(
        dirs["srv"] / "c.yaml"
    )


def test_under_facts_a_relative_config_is_unknown_without_cwd(dirs: dict[str, Path]) -> None:
    plain = [*LAUNCH, "--config", "c.yaml"]
    assert gate_preflight.expand_config(plain, MAPPING, DATA, {}, facts=True) == (plain, None, None)
    d = gate.derive(plain, MAPPING, {})
    assert ("--config", "unknown") in [(p.subject, p.status) for p in d.problems]
    # --cwd names the directory; an absolute FILE or an absolute env -C needs none
    got = gate_preflight.expand_config(plain, MAPPING, DATA, {}, cwd=str(dirs["srv"]), facts=True)
    assert got[1] == str(dirs["srv"] / "c.yaml")
    absolute = [*LAUNCH, "--config", str(dirs["srv"] / "c.yaml")]
    assert gate_preflight.expand_config(absolute, MAPPING, DATA, {}, facts=True)[1] == str(dirs["srv"] / "c.yaml")
    moved = ["env", "-C", str(dirs["srv"]), *plain]
    assert gate_preflight.expand_config(moved, MAPPING, DATA, {}, facts=True)[1] == str(dirs["srv"] / "c.yaml")


def test_the_facts_gate_says_unknown(tmp_path: Path, dirs: dict[str, Path]) -> None:
    box = release_box(tmp_path, "0.5.23", "9.0")
    model = model_dir(tmp_path, "m", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--config", "c.yaml"]
    _, doc = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    assert doc["decision"] == "refuse"
    assert [r["status"] for r in doc["reasons"] if r["feature"] == "--config"] == ["unknown"], doc["reasons"]
    _, doc = cli_json(
        ["gate", "--facts", str(box), "--cwd", str(dirs["srv"]), "--dry-run", "--format", "json", "--", *line]
    )
    assert not [r for r in doc["reasons"] if r["feature"] == "--config"], doc["reasons"]
