"""iallow2: sudo's option values were skipped unread: `sudo -u=svc env -i ... python ...` (getopt hands -u the rest of
the word, so sudo looks up a user named `=svc`), `sudo -C 2` / `--close-from=x` (sudo src/parse_args.c: strtonum 3 to
INT_MAX, else usage and exit 1) and `sudo -T 60` (a command timeout the sudoers policy must permit, which ends the
server) were placed and the launch allowed. Now runners.POLICY_VALUE_CHECKS reads those values (unknown where sudo
refuses them or reads them otherwise than written) and -T / --command-timeout is a refusal of POLICY_READERS; a
`--preserve-env=LIST` naming `A=1` (exit 1) too. pkexec compares its options whole (polkit pkexec.c main()):
`pkexec --keep-cwd --user=svc ...` runs a program named `--user=svc`, now unknown naming that word."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import read_policy

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
CLEARED = ["env", "-i", "PATH=/usr/bin"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _refusals(prefix: list[str], mapping: Any) -> list[tuple[str, str]]:
    d = gate.derive([*prefix, *CLEARED, *LAUNCH], mapping, {})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, prefix
    return [(p.subject, p.status) for p in d.problems if p.status != "note"]


@pytest.mark.parametrize(
    "prefix",
    [["sudo", "-u=svc"], ["sudo", "--user==svc"], ["sudo", "-nu=svc"], ["sudo", "-g=grp"], ["sudo", "-u", ""],
     ["sudo", "-C", "2"], ["sudo", "--close-from=x"], ["sudo", "-C5x"], ["sudo", "-T", "60"],
     ["sudo", "--command-timeout=1h"], ["nice", "sudo", "-u=svc"], ["sudo", "--preserve-env=A=1"]],
)  # fmt: skip
def test_a_sudo_value_it_refuses_or_reads_otherwise_is_unknown(prefix: list[str], mapping: Any) -> None:
    # fails before: allowed (each value skipped as a value, the command placed after it)
    assert ("sudo", "unknown") in _refusals(prefix, mapping), prefix


@pytest.mark.parametrize(
    "prefix",
    [["sudo", "-u", "svc"], ["sudo", "--user=svc"], ["sudo", "-usvc"], ["sudo", "-nu", "svc", "-g", "gpu"],
     ["sudo", "-C", "5"], ["sudo", "--close-from=3"], ["sudo", "-E", "-H", "-u", "svc"],
     ["sudo", "--preserve-env=PATH,HF_HOME", "-u", "#1000"], ["pkexec", "--keep-cwd", "--user", "svc"]],
)  # fmt: skip
def test_a_sudo_value_it_takes_is_placed(prefix: list[str], mapping: Any) -> None:
    assert _refusals(prefix, mapping) == [], prefix


def test_the_reading_names_the_value() -> None:
    why = read_policy(["sudo", "-u=svc", "python3"], 0).unsure or ""
    assert "`=svc`" in why
    assert read_policy(["sudo", "-u", "svc", "python3"], 0).command == 3


def test_pkexec_runs_a_joined_option_as_its_program(mapping: Any) -> None:
    # fails before: placed after `--user=svc` (then `--user=svc` was refused as a program of no table), or refused for
    # a --keep-cwd it was given
    for prefix in (["pkexec", "--keep-cwd", "--user=svc"], ["pkexec", "--user=svc", "--keep-cwd"]):
        assert ("pkexec", "unknown") in _refusals(prefix, mapping), prefix
        why = read_policy([*prefix, "python3"], 0).unsure or ""
        assert "`--user=...` as the program" in why, why
