"""irobust4: recommend's line for a given launch wrote the variables it adds in front of the whole command
(`SGLANG_ENABLE_JIT_DEEPGEMM=0 timeout 600 env -u SGLANG_ENABLE_JIT_DEEPGEMM python -m sglang.launch_server ...`),
where the command's own words before the launch took them away again: an `env -u` / `env -i` behind a launcher, a
shell string's `export NAME=...` (bash -c), or sudo's rebuilt environment (sudo-project/sudo plugins/sudoers/env.c
rebuild_env: under env_reset only env_keep / env_check variables are kept). The server never saw the advice the line
was proposed for (a false pass: a setting that keeps a failing path off silently lost). Now the line is read back as
the gate reads the launch's environment (gate.find_launch), and where a variable would not reach the server as the
changes say, no line is written: the changes are listed to make by hand (exit 1)."""

from __future__ import annotations

import pytest
from launch.test_recommend import SEED_AFTER
from recommend_cli import clean_recommend_env, recommend_json  # noqa: F401 (the autouse fixture)

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "/m", "--tp", "8"]
STRING = " ".join(LAUNCH)


@pytest.mark.parametrize(
    "prefix",
    [[], ["timeout", "600"], ["env", "-i", "PATH=/usr/bin"], ["nohup", "env", "NCCL_DEBUG=INFO"]],
)
def test_a_line_whose_variables_reach_the_launch_is_written(prefix: list[str]) -> None:
    _rc, doc = recommend_json("--facts", str(SEED_AFTER), "--", *prefix, *LAUNCH)
    assert doc["command"], doc.get("notes")
    assert any(c["kind"] == "env" for c in doc["diff"]), doc["diff"]


@pytest.mark.parametrize(
    "line",
    [
        ["sudo", *LAUNCH],
        ["sudo", "-u", "svc", *LAUNCH],
        ["doas", *LAUNCH],
        ["nohup", "pkexec", *LAUNCH],
        ["sudo", "env", "-i", "PATH=/usr/bin", *LAUNCH],
        ["nohup", "env", "-i", "PATH=/usr/bin", *LAUNCH],
        ["timeout", "600", "env", "-u", "SGLANG_ENABLE_JIT_DEEPGEMM", *LAUNCH],
        ["bash", "-c", f"export SGLANG_ENABLE_JIT_DEEPGEMM=1; {STRING}"],
        ["bash", "-c", f"env -i PATH=/usr/bin {STRING}"],
    ],
)
def test_no_line_is_written_where_the_variables_would_not_reach_the_server(line: list[str]) -> None:
    # fails before: a command with `env` (the variables recommend adds) in front of words that take them away
    rc, doc = recommend_json("--facts", str(SEED_AFTER), "--", *line)
    assert rc == 1 and not doc["command"] and not doc["env"], (doc["command"], doc["env"])
    assert any(n.startswith("no launch written") and "reach the server" in n for n in doc["notes"]), doc["notes"]
    assert any(c["kind"] == "env" for c in doc["diff"]), doc["diff"]  # (the changes to make by hand)
