"""irev76: a launch in a login or interactive shell's command string (`bash -lc '...'`, `sh -l -c`, `bash --login -c`,
`bash -ic`), or in bash's with BASH_ENV set, was judged with the environment before the shell. But such a shell reads
its start files before the string (bash manual 6.2: /etc/profile and ~/.profile, ~/.bashrc, $BASH_ENV; dash(1)
alike), and Debian's /etc/profile sets and exports PATH (read on this box): `bash -lc 'python3 -m
sglang.launch_server ...'` in an image whose PATH starts with a venv runs /usr/bin/python3, another interpreter than
the one the facts read (a false pass). Now the environment is unknown there (fail closed)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = "python3 -m sglang.launch_server --model-path m --tp 2"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _refusals(line: list[str], mapping: Any, env: dict[str, str] | None = None) -> list[tuple[str, str]]:
    d = gate.derive(line, mapping, env or {"PATH": "/opt/venv/bin:/usr/bin"})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, (line, d.entrypoint)
    return [(p.subject, p.status) for p in d.problems if p.status != "note"]


@pytest.mark.parametrize(
    "line",
    [["bash", "-lc", LAUNCH], ["bash", "-l", "-c", LAUNCH], ["sh", "-lc", LAUNCH], ["bash", "--login", "-c", LAUNCH],
     ["bash", "-ic", LAUNCH], ["nohup", "bash", "-c", "-l", LAUNCH], ["/bin/bash", "-eo", "pipefail", "-lc", LAUNCH],
     ["timeout", "600", "bash", "-lc", f"cd /x && exec {LAUNCH}"]],
)  # fmt: skip
def test_a_shell_that_reads_start_files_has_an_environment_not_known(line: list[str], mapping: Any) -> None:
    # fails before: no problem (judged with the environment before the shell)
    got = _refusals(line, mapping)
    assert ("env", "unknown") in got, (line, got)


def test_bash_env_is_read_by_a_non_interactive_bash(mapping: Any) -> None:
    assert ("env", "unknown") in _refusals(["bash", "-c", LAUNCH], mapping, {"BASH_ENV": "/etc/x.sh"})
    assert _refusals(["dash", "-c", LAUNCH], mapping, {"BASH_ENV": "/etc/x.sh"}) == []


@pytest.mark.parametrize(
    "line",
    [["bash", "-c", LAUNCH], ["bash", "-o", "pipefail", "-c", LAUNCH], ["sh", "-ec", LAUNCH],
     ["bash", "-O", "extglob", "-c", LAUNCH]],
)  # fmt: skip
def test_a_plain_shell_is_judged_as_before(line: list[str], mapping: Any) -> None:
    assert _refusals(line, mapping) == [], line
