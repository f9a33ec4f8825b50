"""imend3: `gate --facts FILE -- ... --model-path ./m`: the server starts on the box the facts describe, in a
directory the gate is not told; the preflight read ./m from the gate's own working directory (this host's file: a
model that is not the one served decided the model's needs, or its absence a refusal). Now a relative model path
under --facts is unknown (the decision refuses without --allow-unknown: fail closed), read from the launch
directory where --cwd names it (or an absolute `env -C` / `cd` does); an absolute path and a repository id are
looked up as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, QWEN3_MOE, cli_json, model_dir, release_box


def _gate(tmp_path: Path, *words: str, options: tuple[str, ...] = ()) -> dict[str, Any]:
    facts = release_box(tmp_path, "0.5.23", "9.0")
    argv = ["gate", "--facts", str(facts), *options, "--dry-run", "--format", "json", "--", *words]
    doc = cli_json(argv)[1]
    checks = [c for c in doc["preflight"]["checks"] if c.get("check") == "model"]
    models = [m for m in doc["preflight"].get("models") or [] if m.get("role") == "model"]
    return {"check": checks[0] if checks else None, "model": models[0] if models else None, "doc": doc}


LAUNCH = ("python3", "-m", "sglang.launch_server", "--tp", "8", "--model-path")


@pytest.mark.parametrize("spec", ["./m", "../here/m"])
def test_a_relative_model_path_under_facts_is_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str
) -> None:
    here = tmp_path / "here"
    here.mkdir()
    model_dir(here, "m", QWEN3_MOE)  # this host's ./m: not the facts' box's
    monkeypatch.chdir(here)
    got = _gate(tmp_path, *LAUNCH, spec)
    assert not (got["model"] or {}).get("path"), got["model"]  # before: read from here
    assert got["check"] is not None and got["check"]["status"] == "unknown", got["check"]
    assert "--facts" in got["check"]["message"] and "gate --cwd" in got["check"]["message"]
    assert got["doc"]["decision"] == "refuse"  # fails closed without --allow-unknown


def test_the_launch_directory_names_where_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    srv = tmp_path / "srv"
    srv.mkdir()
    model_dir(srv, "m", LLAMA3)
    monkeypatch.chdir(tmp_path)
    got = _gate(tmp_path, *LAUNCH, "./m", options=("--cwd", str(srv)))
    assert got["model"] and got["model"]["path"] == str(srv / "m"), got
    # an absolute `env -C` or `cd` names it too; a relative one after the unknown start does not
    got = _gate(tmp_path, "env", "-C", str(srv), *LAUNCH, "./m")
    assert got["model"] and got["model"]["path"] == str(srv / "m"), got
    got = _gate(tmp_path, "bash", "-c", f"cd {srv} && {' '.join(LAUNCH)} ./m")
    assert got["model"] and got["model"]["path"] == str(srv / "m"), got
    (tmp_path / "srv2").mkdir()
    model_dir(tmp_path / "srv2", "m", LLAMA3)
    got = _gate(tmp_path, "env", "-C", "srv2", *LAUNCH, "./m")
    assert not (got["model"] or {}).get("path") and got["check"]["status"] == "unknown", got["check"]
    assert "`env -C srv2`, relative to a directory not known" in got["check"]["message"]


def test_an_absolute_path_and_a_repository_id_are_looked_up_as_before(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "m", LLAMA3)
    got = _gate(tmp_path, *LAUNCH, str(model))
    assert got["model"] and got["model"]["path"] == str(model), got
    got = _gate(tmp_path, *LAUNCH, "org/name")
    assert got["check"] is not None and got["check"]["status"] != "unknown", got["check"]
