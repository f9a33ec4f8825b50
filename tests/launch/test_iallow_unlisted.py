"""iallow1: a program that no table reads, standing before `python -m sglang.launch_server ...` (flatpak-spawn, `ray job
submit --`, `parallel -S`, salloc, `python3 wrapper.py`, `bash run.sh`, eval, ddtrace-run, an unknown word), was passed
over and the launch judged as if it ran unchanged on this box. Now the gate walks from the command's first word to the
launch only through programs a reader places the command of (launch/runners.py: RUNNERS, POLICY_READERS; nohup,
timeout, env, flock, a shell's -c string), and the first word it cannot place is an unknown command problem naming
it (fail closed; --allow-unknown warns)."""

from __future__ import annotations

import contextlib
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
STRING = " ".join(LAUNCH)
SECRET = "Zq8f3kLm9Pw2Rt7Yv4Bn6Hc1Xa"  # (made up: a random-looking word, as redact_value judges one)
FACTS = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


#: (imend13) an srun here runs a step inside an allocation: outside one, an srun with no GPU option starts a job
#: without GPUs (test_imend13_srun_outside_allocation.py); given to a line with srun alone (mpirun reads an
#: allocation's hosts from it: elsewhere.py)
JOB = {"SLURM_JOB_ID": "4242"}


def _refusals(line: list[str], mapping: Any, env: dict[str, str] | None = None) -> list[tuple[str, str]]:
    d = gate.derive(line, mapping, {**(JOB if "srun" in line else {}), **(env or {})})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, (line, d.entrypoint)
    return [(p.subject, p.status) for p in d.problems if p.status != "note"]


@pytest.mark.parametrize(
    ("line", "subject"),
    [(["flatpak-spawn", "--host", *LAUNCH], "flatpak-spawn"),
     (["ray", "job", "submit", "--", *LAUNCH], "ray"),
     (["parallel", "-S", "h", *LAUNCH], "parallel"),
     (["salloc", "-N1", *LAUNCH], "salloc"),
     (["xyz", *LAUNCH], "xyz"),
     (["python3", "w.py", *LAUNCH], "python3"),
     (["bash", "run.sh", *LAUNCH], "bash"),
     (["exec", *LAUNCH], "exec"),
     (["bash", "-c", f"eval {STRING}"], "eval"),
     (["bash", "-c", f"ray job submit -- {STRING}"], "ray"),
     (["sh", "-c", f"cd /x && exec xyz {STRING}"], "xyz"),
     (["nice", "-n", "5", "flatpak-spawn", *LAUNCH], "flatpak-spawn"),
     (["nohup", "env", "-u", "A", "xyz", *LAUNCH], "xyz"),
     (["ddtrace-run", *LAUNCH], "ddtrace-run"),
     (["opentelemetry-instrument", "--service_name", "s", *LAUNCH], "opentelemetry-instrument"),
     (["tini", *LAUNCH], "tini"),
     (["tini", "-s", *LAUNCH], "tini"),
     (["sudo", "-R", "/r", *LAUNCH], "sudo"),
     (["sudo", "-i", *LAUNCH], "sudo"),
     (["sudo", "--chdir=/x", *LAUNCH], "sudo"),
     (["sudo", "-Z", *LAUNCH], "sudo"),
     (["doas", "A=1", *LAUNCH], "doas"),
     (["doas", "-s", *LAUNCH], "doas"),
     (["runuser", "-u", "svc", *LAUNCH], "runuser"),
     (["systemd-run", "-p", "RootDirectory=/r", *LAUNCH], "systemd-run"),
     (["systemd-run", "-H", "gpu1", *LAUNCH], "systemd-run"),
     (["systemd-run", "--on-calendar=daily", *LAUNCH], "systemd-run"),
     (["systemd-run", "--wait", "env", "-i", "PATH=/x", *LAUNCH], "systemd-run"),
     (["pkexec", "env", "-i", "PATH=/x", *LAUNCH], "pkexec"),
     (["run0", "-D", "/x", *LAUNCH], "run0"),
     (["taskset", "-p", "1", *LAUNCH], "taskset"),
     (["srun", "--some-new-option", "x", *LAUNCH], "srun")],
)  # fmt: skip
def test_a_program_no_reader_places_is_unknown(line: list[str], subject: str, mapping: Any) -> None:
    # fails before: allowed (no problem of that subject: the word passed over, the launch judged as if it were absent)
    got = _refusals(line, mapping)
    if subject == "runuser":  # (imend17: runuser -u permutes its words and refuses the launch's --model-path: exit 1)
        assert (subject, "blocked") in got, (line, got)
        return
    assert (subject, "unknown") in got, (line, got)
    d = gate.derive(line, mapping, JOB)
    message = next(p.message for p in d.problems if p.subject == subject)
    assert "fail closed" in message and f"`{subject}`" in message, message


@pytest.mark.parametrize(
    "prefix",
    [["dumb-init", "--"], ["dumb-init", "-c", "--rewrite", "15:2"], ["tini", "--"],
     ["tini", "-s", "-p", "SIGTERM", "--"],
     ["gosu", "svc", "env", "-i", "PATH=/usr/bin"], ["su-exec", "svc:svc", "env", "-i", "PATH=/usr/bin"],
     ["sudo", "-u", "svc", "env", "-i", "PATH=/usr/bin"], ["sudo", "-E", "-u", "svc", "A=1", "env", "-i", "PATH=/x"],
     ["sudo", "--user=svc", "-n", "--", "env", "-i", "PATH=/x"], ["doas", "-u", "svc", "env", "-i", "PATH=/x"],
     ["pkexec", "--user", "svc", "--keep-cwd", "env", "-i", "PATH=/x"],
     ["runuser", "-u", "svc", "--", "env", "-i", "PATH=/x"],
     ["systemd-run", "--scope"], ["systemd-run", "--wait", "-d", "-u", "u1", "env", "-i", "PATH=/x"],
     ["run0", "env", "-i", "A=1"], ["run0", "-g", "svc", "env", "-i", "PATH=/x"],
     ["srun", "--job-name", "env", "--quiet"], ["nohup", "env", "-u", "X"], ["timeout", "600", "env"],
     ["nice", "-n", "5"], ["taskset", "-c", "0-7"], ["numactl", "--interleave=all"], ["srun", "-N1", "-n1"],
     ["chrt", "-f", "50"], ["ionice", "-c", "2"], ["stdbuf", "-oL", "-eL"], ["nice", "env", "A=1"],
     ["taskset", "-c", "0", "env", "-u", "X", "A=1"], ["setsid", "-w"], ["/usr/bin/time", "-f", "%e"],
     ["flock", "-n", "/tmp/lock"], ["strace", "-f", "-o", "log"], ["mpirun", "-np", "1", "--allow-run-as-root"],
     ["nohup", "dumb-init", "--", "nice", "tini", "--"]],
)  # fmt: skip
def test_a_program_whose_reader_places_the_launch_is_judged(prefix: list[str], mapping: Any) -> None:
    assert _refusals([*prefix, *LAUNCH, "--served-model-name", "B=2"], mapping) == [], prefix


@pytest.mark.parametrize(
    "line",
    [["bash", "-c", STRING], ["bash", "-o", "pipefail", "-c", STRING], ["sudo", "bash", "-lc", STRING],
     ["su", "svc", "-c", STRING], ["runuser", "svc", "--command", STRING], ["flock", "/tmp/l", "-c", STRING],
     ["nice", "bash", "-c", f"exec env A=1 {STRING}"]],
)  # fmt: skip
def test_a_shell_string_that_holds_the_launch_is_placed(line: list[str], mapping: Any) -> None:
    d = gate.derive(line, mapping, {})
    assert d.entrypoint == "launch-server"
    assert not [p for p in d.problems if p.subject in ("bash", "su", "runuser", "flock", "sudo", "nice")], d.problems


def test_a_program_already_refused_is_not_reported_twice(mapping: Any) -> None:
    for line, subject in ((["ssh", "gpu1", *LAUNCH], "ssh"), (["uv", "run", *LAUNCH], "uv"),
                          (["chroot", "/r", *LAUNCH], "root"), (["nice", "A=1", *LAUNCH], "A=")):  # fmt: skip
        got = _refusals(line, mapping)
        assert got == [(subject, got[0][1])], (line, got)


def test_gosu_is_an_environment_policy(mapping: Any) -> None:
    # gosu / su-exec set HOME to the user's and switch the user: the environment the server starts with is theirs
    for prefix in (["gosu", "svc"], ["su-exec", "svc"]):
        got = _refusals([*prefix, *LAUNCH], mapping)
        assert got == [("env", "unknown")], got


def test_the_word_shown_is_masked(mapping: Any) -> None:
    for line in ([SECRET, *LAUNCH], ["python3", SECRET, *LAUNCH], ["srun", "--new-option", SECRET, *LAUNCH]):
        d = gate.derive(line, mapping, {})
        text = json.dumps([gate.problem_json(p) for p in d.problems])
        assert SECRET not in text and "***" in text, text


def _cli(*args: str) -> tuple[int, str]:
    from stackcheck.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc = main(list(args))
    return rc, out.getvalue()


def test_the_gate_refuses_it_and_allow_unknown_warns() -> None:
    line = ["flatpak-spawn", "--host", "python", "-m", "sglang.launch_server", "--model-path", "/m"]
    rc, out = _cli("gate", "--facts", str(FACTS), "--dry-run", "--", *line)
    assert rc == 1 and "REFUSE flatpak-spawn [command]: unknown: `flatpak-spawn` stands before the launch" in out, out
    assert "decision: refuse" in out
    rc, out = _cli("gate", "--facts", str(FACTS), "--dry-run", "--allow-unknown", "--", *line)
    assert rc == 0 and "warning: flatpak-spawn [command]: unknown" in out, out
    rc, out = _cli("gate", "--facts", str(FACTS), "--dry-run", "--format", "json", "--", *line)
    reasons = [r for r in json.loads(out)["reasons"] if r.get("feature") == "flatpak-spawn"]
    assert rc == 1 and reasons and reasons[0]["status"] == "unknown" and reasons[0]["kind"] == "command", reasons


@pytest.mark.parametrize(
    "prefix", [["xyz"] * 10000, ["nice"] * 10000, ["sudo", "-u", "u"] * 5000, ["tini", "--"] * 5000,
               ["timeout", "5", "nice"] * 3000, ["runuser", "-u", "u", "--"] * 2500]
)  # fmt: skip
def test_a_long_chain_is_walked_in_linear_time(prefix: list[str], mapping: Any) -> None:
    start = time.monotonic()
    gate.derive([*prefix, *LAUNCH], mapping, {})
    assert time.monotonic() - start < 15, prefix[:3]


def test_an_env_the_walk_cannot_read_is_unknown_once(mapping: Any) -> None:
    # `nice env --bogus python ...`: env exits 125 (an option it rejects); find_launch passed such an env over when it
    # stood behind a launcher. A leading env's stop is derive's own refusal: no second problem for the words after it
    assert ("env", "unknown") in _refusals(["nice", "env", "--bogus", *LAUNCH], mapping)
    assert _refusals(["env", "--bogus", *LAUNCH], mapping) == [("env", "blocked")]
    # coreutils timeout reads options only before DURATION: `timeout 5 -- CMD` runs `--` (exit 127, run here); uutils
    # runs CMD (iallow2: the timeout is named, runners.read_timeout)
    assert ("timeout", "unknown") in _refusals(["timeout", "5", "--", *LAUNCH], mapping)
    # an image's entrypoint script before the launch (`docker run IMAGE python ...` keeps the Entrypoint)
    assert _refusals(["/opt/nvidia/nvidia_entrypoint.sh", *LAUNCH], mapping) == [("nvidia_entrypoint.sh", "unknown")]
