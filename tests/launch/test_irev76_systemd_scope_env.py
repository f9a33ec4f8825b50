"""irev76: `systemd-run --scope` runs the command itself, and was read as running it with the caller's environment
unchanged. But systemd's src/run/run.c start_transient_scope merges into that environment, before execvpe, the --uid
user's HOME, SHELL, USER and LOGNAME and the --setenv / -E variables, and (systemd 254+, --expand-environment on by
default) replaces $NAME / ${NAME} in the command's words with that environment's values: `systemd-run --scope -E
CUDA_VISIBLE_DEVICES=0 python -m sglang.launch_server --tp 2` was judged with the caller's CUDA_VISIBLE_DEVICES (a
false pass for every rule reading the server's environment), and `$X` in a word judged as written. Now -E / --setenv /
--uid make the environment unknown (`systemd-run --scope` in ENV_POLICY; `env -i` after it gives it in full), and a
`$` in a word after it is an unknown problem of the walk (unplaced_before)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _refusals(line: list[str], mapping: Any) -> list[tuple[str, str]]:
    d = gate.derive(line, mapping, {"CUDA_VISIBLE_DEVICES": "0,1"})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, (line, d.entrypoint)
    return [(p.subject, p.status) for p in d.problems if p.status != "note"]


@pytest.mark.parametrize(
    "line",
    [["systemd-run", "--scope", "-E", "CUDA_VISIBLE_DEVICES=0", *LAUNCH],
     ["systemd-run", "--scope", "--setenv=CUDA_VISIBLE_DEVICES=0", *LAUNCH],
     ["systemd-run", "-qE", "A=1", "--scope", *LAUNCH],
     ["systemd-run", "--scope", "--uid=svc", *LAUNCH]],
)  # fmt: skip
def test_a_scope_that_sets_variables_has_an_environment_not_known(line: list[str], mapping: Any) -> None:
    # fails before: no problem (the caller's environment read as the server's)
    got = _refusals(line, mapping)
    assert ("env", "unknown") in got, (line, got)
    message = next(p.message for p in gate.derive(line, mapping, {}).problems if p.subject == "env")
    assert "`systemd-run --scope`" in message and "--setenv" in message, message


@pytest.mark.parametrize(
    "line",
    [["systemd-run", "--scope", *LAUNCH, "--served-model-name", "$NAME"],
     ["systemd-run", "--scope", "bash", "-c", " ".join([*LAUNCH, "--served-model-name", "${NAME}"])],
     ["systemd-run", "--scope", "env", "-i", "PATH=/usr/bin", "HOME=$HOME", *LAUNCH]],
)  # fmt: skip
def test_a_word_systemd_run_expands_is_unknown(line: list[str], mapping: Any) -> None:
    # fails before: no problem (the word judged as written)
    assert ("systemd-run", "unknown") in _refusals(line, mapping), line


@pytest.mark.parametrize(
    "line",
    [["systemd-run", "--scope", *LAUNCH],
     ["systemd-run", "--scope", "-E", "A=1", "env", "-i", "PATH=/usr/bin", *LAUNCH],
     ["systemd-run", "--scope", "--nice=5", "-q", *LAUNCH]],
)  # fmt: skip
def test_a_plain_scope_or_one_given_its_whole_environment_is_judged(line: list[str], mapping: Any) -> None:
    assert _refusals(line, mapping) == [], line
