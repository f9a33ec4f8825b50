"""imend18: taskset / chrt / ionice -c1 are judged on the gate's own process (runners.process_limits: its CPUs,
CapEff, RLIMIT_RTPRIO). Where a program before them runs the rest as another process (sudo -u, su -c, runuser -u,
gosu, setpriv, systemd-run, srun: another user, its capabilities, its PAM limits, another cgroup or node), that reading
is not the server's: unknown, never ok (a root gate allowed `su -c 'chrt -f 50 python ...' svc`, which the kernel
refuses svc: EPERM, chrt exits 1) nor blocked (a plain user's gate blocked `sudo chrt -f 50 python ...`, which root
may do). A chrt before the program, or a line without one, is judged as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, cli_json

from stackcheck.launch import gate

LAUNCH = "python3 -m sglang.launch_server --model-path /m"
ROOT = {"cpus": frozenset({0, 1}), "cap_eff": (1 << 41) - 1, "rtprio": 0}
USER = {"cpus": frozenset({0, 1}), "cap_eff": 0, "rtprio": 0}


def _mapping() -> Any:
    from stackcheck.knowledge.loader import load

    return load([], env={}).launch


def _judged(command: list[str], here: dict[str, Any] | None) -> list[tuple[str, str]]:
    mapping = _mapping()
    problems = gate.scheduler_problems(command, {}, here, mapping)
    problems += gate.ionice_problems(command, {}, {"system": {"kernel": "6.8.0"}}, here, mapping)
    return [(p.subject, p.status) for p in problems]


OTHER_USER = [
    ["su", "-c", f"chrt -f 50 {LAUNCH}", "svc"],
    ["su", "svc", "-c", f"chrt -f 50 {LAUNCH}"],
    ["sudo", "-u", "svc", "chrt", "-f", "50", *LAUNCH.split()],
    ["runuser", "-u", "svc", "--", "chrt", "-f", "50", *LAUNCH.split()],
    ["sudo", "-u", "svc", "bash", "-c", f"chrt -f 50 {LAUNCH}"],
    ["bash", "-c", f"sudo -u svc chrt -f 50 {LAUNCH}"],
    ["gosu", "svc", "chrt", "-f", "50", *LAUNCH.split()],
    ["setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", "chrt", "-f", "50", *LAUNCH.split()],
]


@pytest.mark.parametrize("command", OTHER_USER)
def test_chrt_run_as_another_user_is_unknown_under_a_root_gate(command: list[str]) -> None:
    assert _judged(command, ROOT) == [("chrt", "unknown")], command  # (8 failed before: [], an ok)


@pytest.mark.parametrize("command", OTHER_USER[2:4])
def test_chrt_run_as_another_user_is_not_blocked_on_the_gates_user(command: list[str]) -> None:
    assert _judged(command, USER) == [("chrt", "unknown")], command  # (failed before: blocked)


@pytest.mark.parametrize(
    "command",
    [["sudo", "-u", "svc", "taskset", "-c", "1", *LAUNCH.split()],
     ["srun", "-N1", "taskset", "-c", "1", *LAUNCH.split()],
     ["runuser", "-u", "svc", "--", "ionice", "-c1", *LAUNCH.split()],
     ["systemd-run", "--uid=svc", "chrt", "-f", "50", *LAUNCH.split()]],
)  # fmt: skip
def test_taskset_and_ionice_run_as_another_process_are_unknown(command: list[str]) -> None:
    got = _judged(command, ROOT)
    assert len(got) == 1 and got[0][1] == "unknown", (command, got)  # (failed before: [])


def test_the_reason_names_the_program() -> None:
    (problem,) = gate.scheduler_problems(OTHER_USER[0], {}, ROOT, _mapping())
    assert "`su` runs it as a process the gate did not read" in problem.message


@pytest.mark.parametrize(
    ("command", "here", "want"),
    [(["chrt", "-f", "50", *LAUNCH.split()], ROOT, []),
     (["chrt", "-f", "50", *LAUNCH.split()], USER, [("chrt", "blocked")]),
     (["chrt", "-f", "50", "sudo", "-u", "svc", *LAUNCH.split()], USER, [("chrt", "blocked")]),
     (["chrt", "-f", "50", "sudo", "-u", "svc", *LAUNCH.split()], ROOT, []),
     (["nice", "-n", "1", "chrt", "-f", "50", *LAUNCH.split()], USER, [("chrt", "blocked")])],
)  # fmt: skip
def test_the_same_process_is_judged_as_before(command: list[str], here: dict[str, Any], want: list[Any]) -> None:
    assert _judged(command, here) == want, command


def test_a_gate_of_saved_facts_reads_chrt_as_unknown(tmp_path: Path) -> None:
    path = tmp_path / "facts.json"
    path.write_text(H200_NEWEST.read_text())
    _, doc = cli_json(["gate", "--facts", str(path), "--format", "json", "--", "chrt", "-f", "50", *LAUNCH.split()])
    assert [r["status"] for r in doc["reasons"] if r["feature"] == "chrt"] == ["unknown"], doc["reasons"]


def test_the_gate_reads_the_process_limits_once_from_runners(monkeypatch: pytest.MonkeyPatch) -> None:
    from stackcheck.launch import runners

    assert not hasattr(gate, "process_limits")  # (one reader: runners.process_limits; failed before: gate's twin)
    monkeypatch.setattr(runners, "process_limits", lambda: dict(ROOT))
    _, doc = cli_json(["gate", "--format", "json", "--", *OTHER_USER[2]])
    assert [r["status"] for r in doc["reasons"] if r["feature"] == "chrt"] == ["unknown"], doc["reasons"]
