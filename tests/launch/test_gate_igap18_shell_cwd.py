"""A relative --model-path after a `cd` in a shell's command string (issue 16, igap18): the gate reads the model from
the directory the string `cd`s to (gate.launch_cwd), not from its own working directory, and says unknown where the
`cd` cannot be resolved (`cd $DIR`, `cd -`, a relative `cd` after those). On the parent the first case read ./m from
the gate's own directory (no such model: refused, or the wrong model read)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import QWEN3_MOE, cli_json, model_dir, release_box

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = "python3 -m sglang.launch_server --model-path ./m --tp 8"


def model_check(tmp_path: Path, string: str, *options: str) -> dict[str, Any]:
    facts = release_box(tmp_path, "0.5.23", "9.0")
    argv = ["gate", "--facts", str(facts), *options, "--dry-run", "--format", "json", "--", "bash", "-c", string]
    doc = cli_json(argv)[1]
    got = [c for c in doc["preflight"]["checks"] if c.get("check") == "model"]
    read = [m for m in doc["preflight"].get("models") or [] if m.get("role") == "model"]
    return {"check": got[0] if got else None, "model": read[0] if read else None, "decision": doc["decision"]}


def test_an_absolute_cd_is_where_the_model_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "models"
    models.mkdir()
    model_dir(models, "m", QWEN3_MOE)
    monkeypatch.chdir(tmp_path)  # the gate's own directory holds no ./m
    got = model_check(tmp_path, f"cd {models} && {LAUNCH}")
    assert got["check"] is None or got["check"]["status"] == "ok", got["check"]
    assert got["model"] and got["model"].get("path") == str(models / "m"), got["model"]
    assert got["decision"] == "allow"


def test_a_relative_cd_is_from_the_launch_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    model_dir(tmp_path / "sub", "m", QWEN3_MOE)
    monkeypatch.chdir(tmp_path)
    string = f"export A=1; cd sub; cd ./. && {LAUNCH} 2>&1 | tee log"
    got = model_check(tmp_path, string, "--cwd", str(tmp_path))
    assert got["model"] and got["model"].get("path") == str(tmp_path / "sub" / "m"), got
    # without --cwd the facts' box starts it in a directory the gate is not told, never the gate's own (imend3)
    got = model_check(tmp_path, string)
    assert got["check"] is not None and got["check"]["status"] == "unknown", got
    assert not (got["model"] or {}).get("path"), got


@pytest.mark.parametrize(
    "prefix",
    ["cd $MODELS && ", "cd /tmp && cd - && ", 'cd "$(dirname $0)" && ', "pushd /x; popd; ", "cd $D; cd sub && "],
)
def test_a_cd_not_resolvable_is_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefix: str) -> None:
    model_dir(tmp_path, "m", QWEN3_MOE)
    monkeypatch.chdir(tmp_path)  # ./m is here, but the launch runs elsewhere
    got = model_check(tmp_path, prefix + LAUNCH)
    assert got["check"] is not None and got["check"]["status"] == "unknown", got["check"]
    assert got["decision"] == "refuse"  # fails closed without --allow-unknown


def test_an_absolute_model_path_and_a_repo_id_need_no_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = model_dir(tmp_path, "m", QWEN3_MOE)
    got = model_check(tmp_path, f"cd $ANY && python3 -m sglang.launch_server --model-path {model} --tp 8")
    assert got["model"] and got["model"].get("path") == str(model), got
    repo = model_check(tmp_path, "cd $ANY && python3 -m sglang.launch_server --model-path org/name --tp 8")
    assert repo["check"] is not None and repo["check"]["status"] != "unknown", repo["check"]


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["bash", "-c", f"cd /srv/a && cd ../b && {LAUNCH}"], "/srv/b"),
        (["bash", "-lc", f"cd && {LAUNCH}"], "/home/u"),  # no operand: $HOME
        (["bash", "-c", f"cd ~/w && {LAUNCH}"], "/home/u/w"),
        (["bash", "-c", f"cd -P -- /data; {LAUNCH}"], "/data"),
        (["bash", "-c", f"cd /y && {LAUNCH} --port $(cat port)"], "/y"),  # a command substitution is no subshell cd
        (["bash", "-c", f"cd /x && echo hi; bash -c 'cd y && {LAUNCH}'"], "/x/y"),  # an inner shell inherits it
        (["python3", "-m", "sglang.launch_server", "--model-path", "./m"], "/start"),  # no shell string
        (["bash", "-c", "cd /x && echo no launch"], "/start"),
    ],
)
def test_launch_cwd(argv: list[str], want: str) -> None:
    mapping = load([], env={}).launch
    assert gate.launch_cwd(argv, mapping, {"HOME": "/home/u"}, "/start") == want


@pytest.mark.parametrize(("string", "said"), [(f"cd - && {LAUNCH}", "cd -"), (f"(cd /x && ls); {LAUNCH}", "subshell")])
def test_launch_cwd_unknown_says_why(string: str, said: str) -> None:
    mapping = load([], env={}).launch
    got = gate.launch_cwd(["sh", "-c", string], mapping, {}, "/start")
    assert isinstance(got, gate.CwdUnknown) and said in got.why
