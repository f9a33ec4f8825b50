"""ifc61: programs iallow1's readers place before a launch, whose own option values or environment the gate did not
read (the sixty-first false-pass sample).

- `systemd-run --scope -E NAME=VALUE` (or `--setenv`, `--uid`) was read as running the launch with the caller's
  environment: systemd/systemd src/run/run.c start_transient_scope exec's the command with the caller's environment
  merged with --uid's HOME / SHELL / USER / LOGNAME and every -E on top, so `-E CUDA_VISIBLE_DEVICES=0` before `--tp 8`
  was allowed (the same assignment through `env` is refused). Now the environment policy's unknown, as for a service.
- `tini -e 300 --` / `tini -p TERM --`: tini's parse_args refuses a -e status outside 0-255 or a -p name not in its
  signal_names table ("Not a valid option for -e / -p", exit 1) before running anything; read as taken.
- `dumb-init --rewrite 0:2 --`: parse_rewrite_signum takes S:R with S 1-31 and R 0-31, else exits 1; read as taken.
Read in the sources named (krallin/tini src/tini.c, Yelp/dumb-init dumb-init.c, systemd src/run/run.c); not run here."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "/m", "--tp", "2"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _problems(line: list[str], mapping: Any) -> list[tuple[str, str]]:
    d = gate.derive(line, mapping, {})
    assert d.entrypoint == "launch-server"
    return [(p.subject, p.status) for p in d.problems if p.status != "note"]


@pytest.mark.parametrize(
    "prefix",
    [["systemd-run", "--scope", "-E", "CUDA_VISIBLE_DEVICES=0"],
     ["systemd-run", "--scope", "--setenv=LD_LIBRARY_PATH=/opt/nccl/lib"],
     ["systemd-run", "--scope", "--setenv", "A=1"],
     ["systemd-run", "--scope", "--set=A=1"],
     ["systemd-run", "-qE", "A=1", "--scope"],
     ["systemd-run", "-EA=1", "--scope"],
     ["systemd-run", "--scope", "--uid=svc"],
     ["systemd-run", "--user", "--scope", "--uid", "svc"]],
)  # fmt: skip
def test_a_scope_that_sets_variables_is_an_environment_policy(prefix: list[str], mapping: Any) -> None:
    # fails before: [] (allowed: the caller's environment taken as the server's)
    assert ("env", "unknown") in _problems([*prefix, *LAUNCH], mapping), prefix


@pytest.mark.parametrize(
    "prefix",
    [["systemd-run", "--scope"], ["systemd-run", "--scope", "--nice=5"], ["systemd-run", "--sc", "-u", "sg"],
     ["systemd-run", "--scope", "--description", "-E"], ["systemd-run", "--scope", "-E", "A=1", "env", "-i", "A=1"],
     ["systemd-run", "--scope", "--gid=svc"]],
)  # fmt: skip
def test_a_scope_with_the_callers_environment_is_still_judged(prefix: list[str], mapping: Any) -> None:
    got = _problems([*prefix, *LAUNCH], mapping)
    assert ("env", "unknown") not in got and not [s for s, _ in got if s == "systemd-run"], (prefix, got)


def test_the_scope_is_read_among_its_own_options_only(mapping: Any) -> None:
    # a `--scope` word after systemd-run's command is not its option: the service's environment policy stands
    line = ["systemd-run", "-d", "bash", "-c", " ".join(LAUNCH), "--scope"]
    assert ("env", "unknown") in _problems(line, mapping)


@pytest.mark.parametrize(
    ("prefix", "subject"),
    [(["tini", "-e", "300", "--"], "tini"), (["tini", "-e256", "--"], "tini"), (["tini", "-e", "-1", "--"], "tini"),
     (["tini", "-e", "1x", "--"], "tini"), (["tini", "-e", " ", "--"], "tini"), (["tini", "-e", "١", "--"], "tini"),
     (["tini", "-p", "TERM", "--"], "tini"), (["tini", "-p", "15", "--"], "tini"),
     (["tini", "-sp", "SIGRTMIN", "--"], "tini"),
     (["dumb-init", "--rewrite", "0:2", "--"], "dumb-init"), (["dumb-init", "-r", "15:32", "--"], "dumb-init"),
     (["dumb-init", "-r32:1", "--"], "dumb-init"), (["dumb-init", "--rew=15", "--"], "dumb-init"),
     (["dumb-init", "-c", "-r", "SIGTERM:SIGINT", "--"], "dumb-init"),
     (["nohup", "dumb-init", "-r", "15:99", "--", "nice", "tini", "--"], "dumb-init")],
)  # fmt: skip
def test_a_value_the_program_refuses_is_not_a_launch(prefix: list[str], subject: str, mapping: Any) -> None:
    # fails before: [] (the value taken; tini / dumb-init exit 1 and the server never starts)
    got = _problems([*prefix, *LAUNCH], mapping)
    assert (subject, "unknown") in got, (prefix, got)


@pytest.mark.parametrize(
    "prefix",
    [["tini", "-e", "143", "--"], ["tini", "-e", "0", "--"], ["tini", "-e", "255", "--"], ["tini", "-e", "+7", "--"],
     ["tini", "-e", " 9", "--"], ["tini", "-e", "", "--"], ["tini", "-e255", "--"], ["tini", "-p", "SIGKILL", "--"],
     ["tini", "-spSIGTERM", "--"], ["dumb-init", "--rewrite", "15:2", "--"], ["dumb-init", "-r15:0", "--"],
     ["dumb-init", "--rewrite=1:31", "--"], ["dumb-init", "-c", "-r", "31:0", "--"]],
)  # fmt: skip
def test_a_value_the_program_takes_is_judged(prefix: list[str], mapping: Any) -> None:
    assert _problems([*prefix, *LAUNCH], mapping) == [], prefix
