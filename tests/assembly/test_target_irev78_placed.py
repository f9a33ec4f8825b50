"""irev78: the target reader follows the programs the gate's walk steps through to the launch (gate.unplaced_before:
runners.RUNNERS and POLICY_READERS, timeout, flock). Since iallow1 the gate allows a launch behind `nice`, `taskset`,
`timeout`, `systemd-run --scope`, `sudo`, ... and judges it on the facts of the interpreter assembly/target.py chose;
that reader followed only `env` and `nohup`, so for `nice -n 5 /srv/bin/python -m sglang.launch_server` it named no
interpreter and fell back to the active VIRTUAL_ENV (or stackcheck's own): the gate judged another environment's
packages than the one the server runs in (a false pass where that other environment is a good stack)."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import clean_env, run_stackcheck

from stackcheck.assembly.target import choose_target, command_first_path, python_option_letters
from stackcheck.readers.fsview import HostView

HOST = HostView()
XY = f"{sys.version_info[0]}.{sys.version_info[1]}"

PREFIXES = [
    ["nice", "-n", "5"],
    ["nice"],
    ["taskset", "-c", "0-7"],
    ["numactl", "--cpunodebind=0"],
    ["timeout", "600"],
    ["timeout", "-s", "TERM", "600"],
    ["nohup", "timeout", "600", "nice"],
    ["setsid"],
    ["stdbuf", "-oL"],
    ["srun", "-n1"],
    ["systemd-run", "--scope"],
    ["sudo", "-E"],
    ["flock", "/tmp/lock"],
    ["env", "A=1", "nice", "env", "B=2"],
]


def _exe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize("prefix", PREFIXES, ids=[" ".join(p) for p in PREFIXES])
def test_the_interpreter_after_a_placed_program_is_the_target(tmp_path: Path, prefix: list[str]) -> None:
    launch = _exe(tmp_path / "srv/bin/python3")
    active = tmp_path / "active"
    _exe(active / "bin/python3")
    env = {"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": str(active)}
    command = [*prefix, str(launch), "-m", "sglang.launch_server", "--model-path", "m"]
    t = choose_target(HOST, env, command=command, cwd=str(tmp_path))
    assert (t.executable, t.chosen_by) == (str(launch), "the gated command"), (t, prefix)
    # the same walk gives the launch's first sys.path entry (-m: the launch directory) and its option letters
    assert command_first_path(command, env, str(tmp_path), HOST) == str(tmp_path)
    assert python_option_letters([*prefix, str(launch), "-P", "-m", "x"], env) == "Pm"


def test_a_bare_name_after_a_placed_program_is_looked_up_on_the_commands_path(tmp_path: Path) -> None:
    launch = _exe(tmp_path / "srv/bin/python3")
    env = {"PATH": f"{launch.parent}:/usr/bin", "VIRTUAL_ENV": str(_exe(tmp_path / "active/bin/python3").parent.parent)}
    t = choose_target(HOST, env, command=["nice", "-n", "5", "python3", "-m", "sglang.launch_server"])
    assert t.executable == str(launch)


@pytest.mark.parametrize(
    "prefix",
    [["nice", "--bogus"], ["sudo", "-i"], ["timeout"], ["flock", "/tmp/lock", "-c", "python3 -m x"]],
    ids=["an option not read", "a login shell", "no duration", "a shell string"],
)
def test_a_reading_that_does_not_place_the_command_stays_as_before(tmp_path: Path, prefix: list[str]) -> None:
    """Where the reading stops (the gate refuses the launch there), the walk stops too: no interpreter named by the
    command, the rules after it as before."""
    launch = _exe(tmp_path / "srv/bin/python3")
    active = tmp_path / "active"
    _exe(active / "bin/python3")
    env = {"PATH": "/usr/bin:/bin", "VIRTUAL_ENV": str(active)}
    t = choose_target(HOST, env, command=[*prefix, str(launch), "-m", "sglang.launch_server"])
    assert t.executable != str(launch) or prefix[0] == "flock", t


def _venv(path: Path, sglang: str | None) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    if sglang is not None:
        info = path / "lib" / f"python{XY}" / "site-packages" / f"sglang-{sglang}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: sglang\nVersion: {sglang}\n")
    return path


@pytest.mark.parametrize("prefix", [["nice", "-n", "5"], ["systemd-run", "--scope"], ["timeout", "600"]])
def test_gate_judges_the_launchs_interpreter_not_the_active_venv(tmp_path: Path, prefix: list[str]) -> None:
    """The real `python -m stackcheck gate`: VIRTUAL_ENV names a venv with SGLang 0.5.9, the launch runs another
    venv's python without SGLang (its first import fails). Before, the gate read the active venv (sglang 0.5.9)."""
    good = _venv(tmp_path / "good", "0.5.9")
    bad = _venv(tmp_path / "bad", None)
    env = clean_env("CONDA_PREFIX", VIRTUAL_ENV=str(good), XDG_CACHE_HOME=str(tmp_path / "cache"))
    line = [*prefix, str(bad / "bin/python"), "-m", "sglang.launch_server", "--model-path", "m"]
    dry = ["--dry-run", "--format", "json", "--assume-gpu", "9.0x1", "--assume-driver", "580.95.05"]
    proc = run_stackcheck("gate", *dry, "--", *line, env=env, cwd=tmp_path, timeout=180)
    assert proc.returncode == 1, proc.stderr[-400:]
    doc = json.loads(proc.stdout)
    assert doc.get("sglang") is None, doc.get("sglang")
    blocked = [r for r in doc.get("reasons") or [] if r.get("feature") == "sglang" and r.get("status") == "blocked"]
    assert blocked, [(r.get("feature"), r.get("status")) for r in doc.get("reasons") or []]


def _gate_doc(tmp_path: Path, line: list[str], env: dict[str, str]) -> dict[str, object]:
    dry = ["--dry-run", "--format", "json", "--assume-gpu", "9.0x1", "--assume-driver", "580.95.05"]
    proc = run_stackcheck("gate", *dry, "--", *line, env=env, cwd=tmp_path, timeout=180)
    assert proc.returncode in (0, 1), proc.stderr[-400:]
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc


def _python_problem(doc: dict[str, object]) -> list[str]:
    return [str(r.get("status")) for r in doc.get("reasons") or [] if r.get("feature") == "python"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "string",
    [
        "{bad}/bin/python -m sglang.launch_server --model-path m",
        "cd /tmp && {bad}/bin/python -m sglang.launch_server --model-path m 2>&1 | tee log",
        "export PATH={bad}/bin:/usr/bin:/bin; python -m sglang.launch_server --model-path m",
    ],
    ids=["path", "after cd", "PATH exported"],
)
def test_a_shell_strings_launch_in_another_environment_is_unknown(tmp_path: Path, string: str) -> None:
    """`bash -c STRING`: the target reader names no interpreter for a shell (it falls back to the active VIRTUAL_ENV),
    find_launch reads the launch inside the string: where its interpreter is in another environment, the gate said
    nothing of it and judged the VIRTUAL_ENV's packages (sglang 0.5.9 there; none where the server runs)."""
    good = _venv(tmp_path / "good", "0.5.9")
    bad = _venv(tmp_path / "bad", None)
    env = clean_env("CONDA_PREFIX", VIRTUAL_ENV=str(good), XDG_CACHE_HOME=str(tmp_path / "cache"))
    doc = _gate_doc(tmp_path, ["bash", "-c", string.format(bad=bad)], env)
    assert doc.get("decision") == "refuse" and _python_problem(doc) == ["unknown"], doc.get("reasons")


def test_a_shell_strings_launch_in_the_audited_environment_is_not_flagged(tmp_path: Path) -> None:
    good = _venv(tmp_path / "good", "0.5.9")
    env = clean_env("CONDA_PREFIX", VIRTUAL_ENV=str(good), XDG_CACHE_HOME=str(tmp_path / "cache"))
    env["PATH"] = f"{good}/bin:{env.get('PATH', '/usr/bin:/bin')}"
    for string in (f"{good}/bin/python -m sglang.launch_server --model-path m",
                   "python3 -m sglang.launch_server --model-path m"):  # fmt: skip
        assert _python_problem(_gate_doc(tmp_path, ["bash", "-c", string], env)) == [], string
    # (the user's word: --python names the environment; not compared)
    bad = _venv(tmp_path / "bad", None)
    line = ["--python", str(good / "bin/python"), "--", "bash", "-c", f"{bad}/bin/python -m sglang.launch_server"]
    dry = ["--dry-run", "--format", "json", "--assume-gpu", "9.0x1", "--assume-driver", "580.95.05"]
    proc = run_stackcheck("gate", *dry, *line, env=env, cwd=tmp_path, timeout=180)
    assert _python_problem(json.loads(proc.stdout)) == []


def test_a_kept_decision_is_read_again_where_the_launchs_interpreter_moves(tmp_path: Path) -> None:
    """The gate keeps a decision for its command line (gate_cache) and serves it while what it read is unchanged: the
    launch's interpreter is looked up through the recording view, so a python3 put earlier on the launch's PATH after
    the decision was kept is a miss, judged again (unknown), not the kept answer."""
    good = _venv(tmp_path / "good", "0.5.9")
    bad = _venv(tmp_path / "bad", None)
    early = tmp_path / "early"
    early.mkdir()
    env = clean_env("CONDA_PREFIX", VIRTUAL_ENV=str(good), XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.update(STACKCHECK_PLAN_CACHE="1", STACKCHECK_CACHE_DIR=str(tmp_path / "kept"))
    env["PATH"] = f"{early}:{good}/bin:{env.get('PATH', '/usr/bin:/bin')}"
    line = ["bash", "-c", "python3 -m sglang.launch_server --model-path m"]
    for _ in range(2):
        assert _python_problem(_gate_doc(tmp_path, line, env)) == []
    (early / "python3").symlink_to(bad / "bin/python")
    assert _python_problem(_gate_doc(tmp_path, line, env)) == ["unknown"]
