"""irobust5: the runners a launch line puts before the server (nice, taskset, numactl, srun, chrt, ionice, stdbuf) and
the programs that change its user, environment or root (su, runuser, chroot, srun --export / --container).

- Each runner execvp's the word after its own options (taskset's MASK, chrt's priority) with no shell, so `nice -n 5
  A=1 python -m sglang.launch_server ...` fails with 'No such file or directory' and the server never starts; the gate
  found the python after it and judged that (a false pass where the launch was allowed). Now blocked (crash), and
  where a runner's options are not all read (srun's many long options) an assignment word before the launch is
  unknown, never passed over.
- su / runuser set HOME, SHELL, USER, LOGNAME and PATH by login.defs (su(1)) and hand a -c STRING to the user's shell:
  the environment before them is not the server's (unknown, as for sudo), and `su svc -c "python -m ..."` was read as
  a wrapper whose flags were never read. chroot and srun's containers run the server on another root: the facts do
  not describe its files (unknown, whatever the environment). srun --export other than ALL picks the variables."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load().launch


def _problems(line: list[str], mapping: Any) -> list[tuple[str, str]]:
    d = gate.derive(line, mapping, {})
    assert d.entrypoint == "launch-server", (line, d.entrypoint)
    return [(p.subject, p.status) for p in d.problems if p.status != "note"]


@pytest.mark.parametrize(
    "prefix",
    [["nice", "A=1"], ["nice", "-n", "5", "A=1"], ["nice", "-n5", "A=1"], ["nice", "--adjustment=5", "A=1"],
     ["nice", "-5", "A=1"], ["taskset", "-c", "0-7", "A=1"], ["taskset", "0xff", "A=1"], ["taskset", "-ac", "0", "A=1"],
     ["numactl", "--cpunodebind=0", "--membind", "0", "A=1"], ["numactl", "-N", "0", "-l", "A=1"],
     ["numactl", "--interleave=all", "--", "A=1"], ["srun", "-N1", "-n", "1", "--gres=gpu:8", "A=1"],
     ["srun", "--mpi", "pmix", "A=1"], ["chrt", "-f", "50", "A=1"], ["chrt", "-R", "-r", "1", "A=1"],
     ["ionice", "-c", "2", "-n", "0", "A=1"], ["ionice", "-c2", "-t", "A=1"], ["stdbuf", "-oL", "-e", "L", "A=1"],
     ["/usr/bin/nice", "taskset", "-c", "0", "A=1"], ["nice", "nohup", "A=1"], ["timeout", "5", "nice", "A=1"],
     ["docker", "exec", "c", "numactl", "-N", "0", "A=1"], ["setsid", "-f", "A=1"],
     ["/usr/bin/time", "-v", "-o", "t.log", "A=1"], ["flock", "-w", "5", "/tmp/lock", "A=1"]],
)  # fmt: skip
def test_an_assignment_a_runner_execs_is_refused(prefix: list[str], mapping: Any) -> None:
    # (irunner3: chrt's -T with -d, SCHED_DEADLINE: chrt exits 1 on -T with -r, util-linux chrt.c, so that line was
    # none that runs)
    # fails before: no A= problem (the python after it judged as the server)
    got = _problems([*prefix, *LAUNCH], mapping)
    assert ("A=", "blocked") in got, (prefix, got)


def test_an_assignment_inside_a_shell_string_behind_a_runner_is_refused(mapping: Any) -> None:
    line = ["bash", "-c", "cd /srv && nice -n 5 CUDA_VISIBLE_DEVICES=0 python3 -m sglang.launch_server --model-path m"]
    assert ("CUDA_VISIBLE_DEVICES=", "blocked") in _problems(line, mapping)
    line = ["bash", "-c", "CUDA_VISIBLE_DEVICES=0 nice -n 5 python3 -m sglang.launch_server --model-path m"]
    assert not [p for p in _problems(line, mapping) if p[0].endswith("=")]


def test_an_option_not_read_leaves_an_assignment_unknown(mapping: Any) -> None:
    # srun --some-new-option A=1 python: A=1 may be its value (then fine) or srun's command (then exit 127)
    got = _problems(["srun", "--some-new-option", "A=1", *LAUNCH], mapping)
    assert ("A=", "unknown") in got, got
    assert ("A=", "unknown") in _problems(["taskset", "--no-such", "A=1", *LAUNCH], mapping)


@pytest.mark.parametrize(
    "prefix",
    [["nice", "-n", "5"], ["taskset", "-c", "0-7"], ["taskset", "0xff"], ["numactl", "--interleave=all"],
     ["numactl", "-N", "0", "-m", "0"], ["srun", "-N1", "-n1", "--gres=gpu:8"], ["srun", "--export=ALL"],
     ["chrt", "-f", "50"], ["ionice", "-c", "2"], ["stdbuf", "-oL", "-eL"], ["nice", "env", "A=1"],
     ["taskset", "-c", "0", "env", "-u", "X", "A=1"], ["srun", "--some-new-option", "x"], ["setsid", "-w"],
     ["/usr/bin/time", "-f", "%e"], ["flock", "-n", "/tmp/lock"]],
)  # fmt: skip
def test_a_plain_runner_is_passed_over_as_before(prefix: list[str], mapping: Any) -> None:
    got = _problems([*prefix, *LAUNCH, "--served-model-name", "B=2"], mapping)
    assert not [p for p in got if p[0].endswith("=") or p[0] in ("env", "root")], (prefix, got)


@pytest.mark.parametrize(
    ("line", "subject"),
    [(["su", "svc", "-c", "python3 -m sglang.launch_server --model-path m --tp 2"], "env"),
     (["su", "-", "svc", "-c", "python3 -m sglang.launch_server --model-path m --tp 2"], "env"),
     (["su", "-c", "env -i PATH=/usr/bin python3 -m sglang.launch_server --model-path m --tp 2", "svc"], "env"),
     (["runuser", "-u", "svc", "--", *LAUNCH, "--tp", "2"], "env"), (["runuser", "-l", "svc", "-c",
      "python3 -m sglang.launch_server --model-path m --tp 2"], "env"),
     (["chroot", "/srv/root", *LAUNCH, "--tp", "2"], "root"),
     (["chroot", "/srv/root", "env", "-i", "PATH=/usr/bin", *LAUNCH, "--tp", "2"], "root"),
     (["srun", "--container-image=nvcr.io/x/y:1", *LAUNCH, "--tp", "2"], "root"),
     (["srun", "--export=NONE", *LAUNCH, "--tp", "2"], "env"),
     (["srun", "--export", "ALL,A=1", *LAUNCH, "--tp", "2"], "env")],
)  # fmt: skip
def test_a_user_environment_or_root_change_is_unknown(line: list[str], subject: str, mapping: Any) -> None:
    # fails before: su -c read as a wrapper (its flags unread: tp never 2), runuser / chroot / srun passed over
    d = gate.derive(line, mapping, {})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, (line, d.entrypoint, d.launch)
    got = [p for p in d.problems if p.subject == subject and p.status == "unknown"]
    assert got and "fail closed" in got[0].message, (line, d.problems)


def test_runuser_with_the_whole_environment_given_is_judged(mapping: Any) -> None:
    d = gate.derive(["runuser", "-u", "svc", "--", "env", "-i", "PATH=/usr/bin", *LAUNCH], mapping, {"LD_PRELOAD": "x"})
    assert not [p for p in d.problems if p.subject in ("env", "root")], d.problems


def test_a_long_chain_of_runners_is_read_in_linear_time(mapping: Any) -> None:
    import time

    for prefix in (["nohup"] * 20000, ["timeout", "5"] * 10000, ["nice"] * 20000, ["taskset", "0x1"] * 10000):
        start = time.monotonic()
        gate.derive([*prefix, *LAUNCH], mapping, {})
        assert time.monotonic() - start < 15, prefix[:2]
