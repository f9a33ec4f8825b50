"""imend3: `env -C DIR` as GNU env runs it (coreutils src/env.c: the last -C of one env, chdir before execvp, each from
the directory the one before entered; a chdir that fails is die (EXIT_CANCELED): exit 125).

- A nested env (`env -C a env -C b CMD`, `env A=1 env B=2 CMD`): the gate read the first env alone (the launch
  directory stopped at a, B=2 was lost from the launch's environment); the probes' reader (assembly/target.py)
  followed the leading ones but not an env behind a launcher (`timeout 5 env -C b`), nor did the preflight's inside
  a shell string. Every answer here is checked against the real env.
- `env -C DIR` to a directory this host lacks: env exits 125 and the server never starts; the gate of this host
  allowed the launch. Now it refuses it (blocked, crash); under --facts whether DIR exists there is unknown."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.assembly.target import command_directory, command_environment
from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

MAPPING = dict(load([], env={}).launch)
LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "./m"]
REPO = Path(__file__).parent.parent.parent
ENV = shutil.which("env")


def _real(words: list[str], start: Path) -> tuple[int, str]:
    """The real env's answer: the words with `pwd` (or printenv) run in place of the launch, started in `start`."""
    done = subprocess.run(words, cwd=start, capture_output=True, text=True, timeout=30, env={"PATH": os.defpath})
    return done.returncode, done.stdout.strip()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for d in ("a/b", "x/b", "b", "a/c"):
        (tmp_path / d).mkdir(parents=True)
    return tmp_path


WRAPPED = [
    ["env", "-C", "a", "env", "-C", "b"],
    ["env", "-C", "{x}", "env", "-C", "b"],
    ["env", "-C", "{x}", "-C", "b"],  # one env: its last -C alone, from the start
    ["nohup", "env", "-C", "a", "env", "-C", "b"],
    ["env", "-C", "a", "timeout", "20", "env", "-C", "b"],  # an env behind a launcher
    ["env", "-C", "a", "env", "-C", "../a/c"],
]


@pytest.mark.skipif(ENV is None, reason="no env program")
@pytest.mark.parametrize("prefix", WRAPPED, ids=[" ".join(p) for p in WRAPPED])
def test_the_launch_directory_is_where_the_real_env_goes(tree: Path, prefix: list[str]) -> None:
    words = [w.replace("{x}", str(tree / "x")) for w in prefix]
    rc, real = _real([*words, "pwd"], tree)
    assert rc == 0, real
    probes = command_directory([*words, *LAUNCH], {}, str(tree))
    preflight = gate.launch_cwd([*words, *LAUNCH], MAPPING, {}, str(tree))
    assert isinstance(probes, str) and isinstance(preflight, str)
    assert os.path.realpath(probes) == real, (probes, real)  # before: a (the preflight, nested), a (probes, timeout)
    assert os.path.realpath(preflight) == real, (preflight, real)
    # inside a shell's command string too (the preflight's reader follows shell strings)
    inner = gate.launch_cwd(["bash", "-c", " ".join([*words, *LAUNCH])], MAPPING, {}, str(tree))
    assert isinstance(inner, str) and os.path.realpath(inner) == real, inner


@pytest.mark.skipif(ENV is None, reason="no env program")
def test_a_nested_env_sets_the_launch_environment(tree: Path) -> None:
    words = ["env", "A=1", "env", "-u", "A", "B=2", "env", "C=3"]
    rc, real = _real([*words, "sh", "-c", "echo ${A-unset} $B $C"], tree)
    assert (rc, real) == (0, "unset 2 3")
    argv, env = gate.split_env_prefix([*words, *LAUNCH], {})
    entry, _, launch_env = gate.find_launch(argv, MAPPING, env)
    assert entry is not None and launch_env.get("B") == "2" and launch_env.get("C") == "3" and "A" not in launch_env
    assert command_environment([*words, *LAUNCH], {}) == launch_env  # the probes' reader agrees


def test_a_relative_env_c_after_a_start_not_known_is_not_known() -> None:
    got = gate.launch_cwd(["env", "-C", "/srv", "env", "-C", "b", *LAUNCH], MAPPING, {}, gate.CwdUnknown("x", False))
    assert got == "/srv/b"
    got = gate.launch_cwd(["env", "-C", "b", *LAUNCH], MAPPING, {}, gate.CwdUnknown("x", False))
    assert isinstance(got, gate.CwdUnknown) and "`env -C b`" in got.why


def _host_gate(tmp_path: Path, run_in: Path, *words: str) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "STACKCHECK_PYTHON")}
    env.update(PYTHONPATH=str(REPO), XDG_CACHE_HOME=str(tmp_path / "cache"))
    argv = [sys.executable, "-m", "stackcheck", "gate", "--dry-run", "--format", "json", "--assume-gpu", "9.0x8",
            "--assume-driver", "580.95.05", "--", *words]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=run_in, timeout=300)
    doc: dict[str, object] = json.loads(done.stdout)
    return doc


def _env_reasons(doc: dict[str, object]) -> dict[str, str]:
    reasons = doc["reasons"]
    assert isinstance(reasons, list)
    return {str(r["feature"]): str(r["status"]) for r in reasons if str(r.get("feature", "")).startswith("env -C")}


@pytest.mark.skipif(ENV is None, reason="no env program")
def test_a_directory_this_host_lacks_refuses_the_gate_of_this_host(tree: Path) -> None:
    missing = tree / "gone"
    assert _real(["env", "-C", str(missing), "true"], tree)[0] == 125  # the real env's exit
    line = ["python3", "-m", "sglang.launch_server", "--model-path", "/nonexistent"]
    doc = _host_gate(tree, tree, "env", "-C", "a", "env", "-C", "gone", *line)
    assert doc["decision"] == "refuse"
    assert _env_reasons(doc).get("env -C gone") == "blocked"  # a/gone: before, nothing said it
    assert "env -C a" not in _env_reasons(doc)  # a is there
    doc = _host_gate(tree, tree, "env", "-C", "a", "env", "-C", "b", *line)
    assert _env_reasons(doc) == {}  # a/b is there: nothing to say


def test_under_facts_where_env_c_leads_is_unknown(tmp_path: Path) -> None:
    box = release_box(tmp_path, "0.5.23", "9.0")
    model = model_dir(tmp_path, "m", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model)]
    _, doc = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", "env", "-C", "/srv", *line])
    assert _env_reasons(doc) == {"env -C /srv": "unknown"}, doc["reasons"]
    assert doc["decision"] == "refuse"  # fails closed without --allow-unknown
    _, doc = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    assert _env_reasons(doc) == {}
