"""irunner3: taskset and chrt values the kernel refuses for the process that runs them (the program exits 1 before it
runs the launch). taskset: a mask or -c list with none of the CPUs the process may run on (sched_setaffinity EINVAL;
util-linux 2.38.1 run here: `taskset -c 500 true` on a 2-CPU box exits 1, `taskset -c 0,500 true` runs). chrt:
SCHED_FIFO / SCHED_RR (its default) without CAP_SYS_NICE and with a RLIMIT_RTPRIO below the priority, SCHED_DEADLINE
without CAP_SYS_NICE (EPERM). The gate allowed them (read_runner checks the words' form only): now blocked where the
launch runs here (the gate's own process: its affinity, CapEff, RLIMIT_RTPRIO), unknown with --facts (no CPUs, no
user in the facts); chrt -e (SCHED_EXT, util-linux 2.42, Linux 6.12) unknown; ionice -c1 blocked without the
capabilities."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, cli_json

from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "/m"]
ROOT = {"cpus": frozenset({0, 1}), "cap_eff": (1 << 41) - 1, "rtprio": 0}
USER = {"cpus": frozenset({0, 1}), "cap_eff": 0, "rtprio": 0}


def _statuses(prefix: list[str], here: dict[str, Any] | None) -> list[tuple[str, str]]:
    problems = gate.scheduler_problems([*prefix, *LAUNCH], {}, here)
    problems += gate.ionice_problems([*prefix, *LAUNCH], {}, {"system": {"kernel": "6.8.0"}}, here)
    return [(p.subject, p.status) for p in problems]


@pytest.mark.parametrize(
    ("prefix", "here"),
    [(["taskset", "-c", "500"], ROOT), (["taskset", "-c", "2-7:2"], ROOT), (["taskset", "0x10"], ROOT),
     (["taskset", "--cpu-list", "4,8"], USER), (["chrt", "50"], USER), (["chrt", "-f", "1"], USER),
     (["chrt", "--rr", "99"], {**USER, "rtprio": 50}),
     (["ionice", "-c1"], USER), (["nice", "-n", "1", "taskset", "-c", "9", "chrt", "-o", "0"], ROOT)],
)  # fmt: skip
def test_what_this_process_may_not_do_is_blocked(prefix: list[str], here: dict[str, Any]) -> None:
    assert [s for _, s in _statuses(prefix, here)] == ["blocked"], prefix  # (fails before: no problem)


@pytest.mark.parametrize(
    ("prefix", "here"),
    [(["taskset", "-c", "0,500"], ROOT), (["taskset", "-c", "1"], USER), (["taskset", "3"], USER),
     (["chrt", "50"], ROOT), (["chrt", "-f", "10"], {**USER, "rtprio": 10}),
     (["chrt", "-r", "99"], {**USER, "rtprio": -1}), (["chrt", "-o", "0"], USER), (["chrt", "-b", "0"], USER),
     (["chrt", "--idle", "0"], USER), (["ionice", "-c1"], ROOT), (["ionice", "-c2"], USER),
     (["taskset", "-p", "5"], USER)],
)  # fmt: skip
def test_what_this_process_may_do_is_no_problem(prefix: list[str], here: dict[str, Any]) -> None:
    assert _statuses(prefix, here) == [], prefix


@pytest.mark.parametrize("prefix", [["taskset", "-c", "0"], ["chrt", "50"], ["chrt", "-f", "1"], ["ionice", "-c1"]])
def test_unknown_where_the_process_is_not_known(prefix: list[str]) -> None:
    assert [s for _, s in _statuses(prefix, None)] == ["unknown"], prefix


def test_chrt_ext_is_unknown() -> None:
    # (`chrt -e 0` stops read_runner already: a priority it reads as out of range for a real-time policy)
    assert _statuses(["chrt", "-e", "5"], ROOT) == [("chrt", "unknown")]
    assert _statuses(["chrt", "--ext", "5"], ROOT) == [("chrt", "unknown")]


def test_a_gate_of_saved_facts_reads_taskset_as_unknown(tmp_path: Path) -> None:
    path = tmp_path / "facts.json"
    path.write_text(H200_NEWEST.read_text())
    _, doc = cli_json(["gate", "--facts", str(path), "--format", "json", "--", "taskset", "-c", "0-3", *LAUNCH])
    assert [r["status"] for r in doc["reasons"] if r["feature"] == "taskset"] == ["unknown"], doc["reasons"]


def test_process_limits_reads_this_process() -> None:
    from stackcheck.launch.runners import process_limits

    got = process_limits()
    assert isinstance(got.get("cpus"), frozenset) and got["cpus"]
    assert isinstance(got.get("cap_eff"), int) and isinstance(got.get("rtprio"), int)
    json.dumps({k: v for k, v in got.items() if k != "cpus"})


def test_a_shell_strings_runners_are_read() -> None:
    from stackcheck.knowledge.loader import load

    mapping = load([], env={}).launch
    string = "cd /tmp && ionice -c1 taskset -c 9 python3 -m sglang.launch_server --model-path m | tee log"
    got = gate.scheduler_problems(["bash", "-c", string], {}, ROOT, mapping)
    assert [(p.subject, p.status) for p in got] == [("taskset", "blocked")]  # (fails before: the string not read)
    got = gate.ionice_problems(["bash", "-c", string], {}, {}, USER, mapping)
    assert [(p.subject, p.status) for p in got] == [("ionice", "blocked")]
    assert gate.scheduler_problems(["bash", "-c", string], {}, ROOT) == []  # (without the mapping: the argv alone)


@pytest.mark.parametrize(
    "prefix",
    [["chrt", "-o"], ["chrt", "-f"], ["chrt"], ["chrt", "-o", "-T", "5", "0"], ["chrt", "-r", "-P", "9", "1"],
     ["chrt", "--batch", "--sched-runtime=5", "0"]],
)  # fmt: skip
def test_chrt_words_a_release_reads_apart_are_unknown(prefix: list[str]) -> None:
    from stackcheck.knowledge.loader import load

    d = gate.derive([*prefix, *LAUNCH], load([], env={}).launch, {})
    assert ("chrt", "unknown") in [(p.subject, p.status) for p in d.problems], prefix  # (fails before: allowed)


def test_chrt_deadline_runtime_is_read() -> None:
    from stackcheck.knowledge.loader import load

    # (merged with irobust13, whose reading makes every SCHED_DEADLINE launch unknown: without -R the server cannot
    # fork, and the kernel's admission of the runtime is not read; the runtime's words are read, not taken as the
    # command)
    d = gate.derive(["chrt", "-d", "-T", "5", "-D", "9", "0", *LAUNCH], load([], env={}).launch, {})
    assert [p.status for p in d.problems if p.subject == "chrt"] == ["unknown"]
