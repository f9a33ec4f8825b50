"""irev76 (review of iallow1's allow-list walk beside irev70's systemd-run reading): whether systemd-run runs the launch
as a transient service (a clean environment of the service manager's) or from a scope (the caller's environment) was
read by looking for the word `--scope` anywhere after it, the launch's own words included, while iallow1's read_policy
read its options. `systemd-run --same-dir bash -c 'LAUNCH' --scope` (the word is bash's $0) and `systemd-run
--description --scope --same-dir LAUNCH` (the word is --description's value) run a service, and were allowed with the
gate's environment (a false pass: every rule reading the server's environment judged the wrong one); `--scop` (a
prefix getopt_long takes) was read as a service (unknown, a false unknown). Now the scope is the one read_policy sees
among systemd-run's options (runners.policy_options), and read_policy walks them with runners.walk_options, the
option walk read_runner and read_flock share (the third twin loop gone)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import Reading, policy_options, read_policy

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
STRING = " ".join(LAUNCH)


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _refusals(line: list[str], mapping: Any) -> list[tuple[str, str]]:
    d = gate.derive(line, mapping, {"CUDA_VISIBLE_DEVICES": "0,1"})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, (line, d.entrypoint)
    return [(p.subject, p.status) for p in d.problems if p.status != "note"]


@pytest.mark.parametrize(
    "line",
    [["systemd-run", "--same-dir", "bash", "-c", STRING, "--scope"],
     ["systemd-run", "--description", "--scope", "--same-dir", *LAUNCH],
     ["systemd-run", "-d", "--unit", "--scope", *LAUNCH],
     ["systemd-run", "--same-dir", "--", "sh", "-c", STRING, "--scope"]],
)  # fmt: skip
def test_a_service_is_not_read_as_a_scope_from_a_later_word(line: list[str], mapping: Any) -> None:
    # fails before: no problem (the word --scope, bash's $0 or an option's value, read as systemd-run's --scope)
    assert ("env", "unknown") in _refusals(line, mapping), line


@pytest.mark.parametrize(
    "line",
    [["systemd-run", "--scope", *LAUNCH],
     ["systemd-run", "--scop", *LAUNCH],
     ["systemd-run", "--user", "--scope", "--", *LAUNCH]],
)  # fmt: skip
def test_a_scope_among_its_options_runs_with_the_callers_environment(line: list[str], mapping: Any) -> None:
    # (`--scop`: fails before, env unknown; getopt_long takes the unique prefix as --scope)
    assert _refusals(line, mapping) == [], line


def test_policy_options_names_the_options_read() -> None:
    got = policy_options(["systemd-run", "--scop", "-qd", "--unit=x", "--description", "--same-dir", "prog"], 0)
    assert got == (Reading(6), frozenset({"--scope", "-q", "-d", "--unit", "--description"}))
    assert policy_options(["systemd-run", "--same-dir", "bash", "-c", "s", "--scope"], 0)[1] == {"--same-dir"}


@pytest.mark.parametrize(
    ("argv", "command"),
    [(["sudo", "-u", "svc", "A=1", "-E", "B=2", "prog"], 6),
     (["sudo", "-usvc", "--", "A=1", "prog"], 3),
     (["sudo", "--user=svc", "--preserve-env=A,B", "prog"], 3),
     (["sudo", "-", "prog"], 1),
     (["sudo", "/x=1", "prog"], 1),
     (["pkexec", "--user", "svc", "--keep-cwd", "prog"], 4),
     (["pkexec", "--keep-cwd", "-uroot", "prog"], None),  # (iallow2: it runs a program named -uroot: unknown)
     (["doas", "-nu", "svc", "prog"], 3),
     (["runuser", "-u", "svc", "--", "prog", "-m"], 4),
     (["systemd-run", "--scope", "--user"], None)],
)  # fmt: skip
def test_read_policy_places_the_command_as_before(argv: list[str], command: int | None) -> None:
    assert read_policy(argv, 0).command == command, argv


@pytest.mark.parametrize(
    "argv",
    [["sudo", "-s", "prog"], ["sudo", "--ch=/x", "prog"], ["sudo", "-Z", "prog"], ["sudo", "--bell=1", "prog"],
     ["runuser", "-u", "svc", "prog"], ["systemd-run", "prog"], ["pkexec", "prog"], ["pkexec", "--help", "prog"],
     ["doas", "-s"], ["sudo", "-R/x", "prog"], ["pkexec", "-uroot", "prog"], ["pkexec", "--user=x", "prog"],
     ["pkexec", "--wait", "--keep-cwd", "prog"]],
)  # fmt: skip
def test_read_policy_refuses_as_before(argv: list[str]) -> None:
    got = read_policy(argv, 0)
    assert got.command is None and got.unsure, argv


@pytest.mark.parametrize(
    "line",
    [["run0", "-u", "svc", "env", "-i", "PATH=/usr/bin", *LAUNCH],
     ["run0", "--user=svc", "env", "-i", "PATH=/usr/bin", *LAUNCH]],
)  # fmt: skip
def test_run0_as_another_user_runs_in_its_home(line: list[str], mapping: Any) -> None:
    # fails before: no problem (run.c parse_argv_sudo_mode: with --user and no --chdir the working directory is "~",
    # so a relative --model-path is read from the user's home, not the directory the gate read it in)
    assert ("run0", "unknown") in _refusals(line, mapping), line
    assert _refusals(["run0", "env", "-i", "PATH=/usr/bin", *LAUNCH], mapping) == []
