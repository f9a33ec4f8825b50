"""irev69: the launch directory the probes read a relative LD_LIBRARY_PATH / PATH element and a relative
SGLANG_NCCL_SO_PATH from (assembly/target.py command_directory, the ProbeContext's launch_cwd) follows an `env -C DIR`
behind another launcher (`timeout 600 env -C /srv/run LD_LIBRARY_PATH=lib python ...`), as command_environment
applies that env's variables (irev68) and the gate's find_launch its -C (trace cwd). Before, command_directory read
only the leading `env` / `nohup` wrappers: the probes took the variables of the env behind `timeout` but searched
its relative elements from the gate's own directory, where the server never runs (a library found there stood for
the one the server's ./lib holds)."""

from __future__ import annotations

import pytest

from stackcheck.assembly.target import command_directory, command_environment

ENV = {"PATH": "/usr/bin"}
LAUNCH = ["python3", "-m", "sglang.launch_server", "--tp", "2"]


@pytest.mark.parametrize(
    ("command", "where"),
    [
        (["timeout", "600", "env", "-C", "/srv/run", "LD_LIBRARY_PATH=lib", *LAUNCH], "/srv/run"),
        (["numactl", "-N", "0", "env", "--chdir=sub", *LAUNCH], "/home/u/sub"),
        (["timeout", "9", "env", "-C", "/a", "nohup", "env", "-C", "b", *LAUNCH], "/a/b"),
        (["env", "-C", "/a", "timeout", "9", "env", "-C", "/b", *LAUNCH], "/b"),
    ],
)
def test_an_env_chdir_behind_a_launcher_moves_the_launch_directory(command: list[str], where: str) -> None:
    # fails before: /home/u (the directory before the launcher), or /a for the last
    assert command_directory(command, ENV, "/home/u") == where


@pytest.mark.parametrize(
    "command",
    [
        ["conda", "run", "-n", "env", "--no-capture-output", *LAUNCH],  # env would reject the option: passed over
        [*LAUNCH, "--served-model-name", "env", "-C", "/x"],  # an argument of the launch itself
        ["timeout", "9", "env", "-C", "/x", "echo", "no launch"],  # no launch behind it
    ],
)
def test_a_word_env_that_is_no_wrapper_of_the_launch_moves_nothing(command: list[str]) -> None:
    assert command_directory(command, ENV, "/home/u") == "/home/u"
    assert command_environment(command, ENV) == ENV


def test_the_environment_and_the_directory_come_from_the_same_env() -> None:
    command = ["timeout", "600", "env", "-C", "/srv/run", "LD_LIBRARY_PATH=lib", *LAUNCH]
    assert command_environment(command, ENV)["LD_LIBRARY_PATH"] == "lib"
    assert command_directory(command, ENV, None) == "/srv/run"  # (an absolute -C is known without the gate's)
