"""irev68: the probes' launch environment (assembly/target.py command_environment, the ProbeContext's launch_env: the
jit probe reads SGLANG_NCCL_SO_PATH, PATH and LD_LIBRARY_PATH from it) applies an `env` behind another launcher
(`timeout 600 env SGLANG_NCCL_SO_PATH=... python ...`, `sudo -u svc env -u ...`) as the gate's find_launch applies it
to the launch's own environment. Before, only leading `env` and `nohup` wrappers were applied, so the probes read the
NCCL library of the environment before the wrapper: a library that the launch names (and whose CUDA build needs a
newer driver, rule nccl-so-path-cuda-driver) was never read."""

from __future__ import annotations

import pytest

from stackcheck.assembly.target import command_environment

ENV = {"SGLANG_NCCL_SO_PATH": "/opt/a/libnccl.so.2", "PATH": "/usr/bin"}
LAUNCH = ["python3", "-m", "sglang.launch_server", "--tp", "2"]


@pytest.mark.parametrize(
    ("command", "value"),
    [
        (["timeout", "600", "env", "SGLANG_NCCL_SO_PATH=/opt/b/libnccl.so.2", *LAUNCH], "/opt/b/libnccl.so.2"),
        (["sudo", "-u", "svc", "/usr/bin/env", "-u", "SGLANG_NCCL_SO_PATH", *LAUNCH], None),
        (["timeout", "9", "env", "A=1", "nohup", "env", "-i", "PATH=/bin", *LAUNCH], None),
        (["numactl", "-N", "0", "env", "SGLANG_NCCL_SO_PATH=x", "sglang", "serve", "--tp", "2"], "x"),
    ],
)
def test_an_env_behind_a_launcher_is_applied(command: list[str], value: str | None) -> None:
    # fails before: the environment before the wrapper was kept
    assert command_environment(command, ENV).get("SGLANG_NCCL_SO_PATH") == value


@pytest.mark.parametrize(
    "command",
    [
        ["conda", "run", "-n", "env", "--no-capture-output", *LAUNCH],  # env would reject the option: passed over
        [*LAUNCH, "--served-model-name", "env", "SGLANG_NCCL_SO_PATH=x"],  # an argument of the launch itself
        ["timeout", "9", "env", "SGLANG_NCCL_SO_PATH=x", "echo", "no launch"],  # no launch behind it
    ],
)
def test_a_word_env_that_is_no_wrapper_of_the_launch_changes_nothing(command: list[str]) -> None:
    assert command_environment(command, ENV) == ENV
