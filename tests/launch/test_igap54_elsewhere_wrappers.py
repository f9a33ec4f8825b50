"""igap54: launches the gate read as local although they run elsewhere, or under a program that runs the next word its
own way. Before, find_launch found the Python word after any of them and judged it on this box's facts as if the
program were absent: `ssh gpu1 python -m sglang.launch_server ...`, `docker exec c python ...`, `conda run -n env
python ...`, `torchrun -m sglang.launch_server ...`, `xargs -0 python ...`, `nsys profile python ...` were all
allowed (`gate --facts tests/cases/h200-newest/facts.json --dry-run`). Now:

- another machine or container (ssh, pdsh, docker / podman exec, kubectl exec, nsenter, apptainer / singularity,
  machinectl, mpirun with hosts): unknown, naming the program and saying to run `stackcheck gate` where the server
  runs; with --facts (the box the server runs on, by the user's word) judged on them with a note.
- run here but its own way (uv / conda / pipenv / poetry run, torchrun, xargs, watch, script, gdb, valgrind, ltrace,
  nsys, ncu, strace -E / -u, perf without `--`, mpirun without -np 1): unknown, with or without --facts.
- read: strace (its getopt string), perf record / stat `--`, mpirun -np 1 without hosts: judged, and an assignment
  word where each runs its command blocked (exit 127 there: `strace -f A=1 true` run here, "Can't stat 'A=1'").
- `time A=1 python ...` in a shell's string: dash runs the program time, which execs A=1 (exit 127, run here);
  bash, zsh and ksh read `time` as a keyword (fine); sh or a shell not known: unknown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
H200 = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _problems(line: list[str], mapping: Any, env: dict[str, str] | None = None, **kw: Any) -> list[gate.Problem]:
    d = gate.derive(line, mapping, env or {}, **kw)
    return list(d.problems)


def _of(problems: list[gate.Problem], subject: str) -> list[tuple[str, str]]:
    return [(p.subject, p.status) for p in problems if p.subject == subject]


ELSEWHERE = [
    ["ssh", "gpu1"], ["ssh", "-p", "2222", "-i", "key", "svc@gpu1"], ["/usr/bin/ssh", "gpu1", "--"],
    ["docker", "exec", "-it", "c"], ["docker", "run", "--gpus", "all", "img"], ["podman", "exec", "c"],
    ["kubectl", "exec", "pod", "--"], ["nsenter", "-t", "1", "-m"], ["apptainer", "exec", "--nv", "img.sif"],
    ["singularity", "exec", "img.sif"], ["machinectl", "shell", "root@c"], ["pdsh", "-w", "h1,h2"],
    ["mpirun", "-np", "1", "-H", "gpu1"], ["mpirun", "--hostfile", "hosts", "-np", "1"],
    ["nohup", "ssh", "gpu1"], ["timeout", "600", "docker", "exec", "c"],
]  # fmt: skip


@pytest.mark.parametrize("prefix", ELSEWHERE)
def test_a_launch_run_elsewhere_is_unknown(prefix: list[str], mapping: Any) -> None:
    # fails before: no problem at all (the launch judged on this box's facts)
    d = gate.derive([*prefix, *LAUNCH], mapping, {})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, (prefix, d.entrypoint)
    names = {"ssh", "docker", "podman", "kubectl", "nsenter", "apptainer", "singularity", "machinectl", "pdsh"}
    names.add("mpirun")
    name = next(w.rsplit("/", 1)[-1] for w in prefix if w.rsplit("/", 1)[-1] in names)
    got = [p for p in d.problems if p.subject == name]
    assert [p.status for p in got] == ["unknown"], (prefix, d.problems)
    assert "fail closed" in got[0].message and "stackcheck gate" in got[0].message


@pytest.mark.parametrize("prefix", ELSEWHERE[:6])
def test_with_the_targets_facts_and_its_environment_the_launch_is_judged_with_a_note(
    prefix: list[str], mapping: Any
) -> None:
    # the server starts there with that box's environment: judged only where it is given in full (`env -i ...`)
    name = prefix[0].rsplit("/", 1)[-1]
    given = ["env", "-i", "PATH=/usr/bin:/bin"]
    problems = _problems([*prefix, *given, *LAUNCH], mapping, target_facts=True)
    assert [p.status for p in problems if p.subject == name] == ["note"], problems
    assert not [p for p in problems if p.status != "note"], problems
    problems = _problems([*prefix, *LAUNCH], mapping, target_facts=True)
    got = [p for p in problems if p.subject == name]
    assert [p.status for p in got] == ["unknown"] and "environment" in got[0].message, problems
    assert _of(_problems([*prefix, *given, *LAUNCH], mapping), name) == [(name, "unknown")]


@pytest.mark.parametrize(
    "words", [["A=1", *LAUNCH], [*LAUNCH, "--served-model-name", "a b"], [*LAUNCH[:-2], "--model-path", "~/m"]]
)
def test_words_the_remote_shell_reads_again_are_unknown_even_with_facts(words: list[str], mapping: Any) -> None:
    # ssh joins its words and the remote user's shell reads them again: an assignment is that shell's, a blank splits
    got = _problems(["ssh", "gpu1", "env", "-i", "PATH=/usr/bin", *words], mapping, target_facts=True)
    if words[0] == "A=1":
        got = _problems(["ssh", "gpu1", *words], mapping, target_facts=True)
    assert _of(got, "ssh") == [("ssh", "unknown")] and "reads them again" in next(
        p.message for p in got if p.subject == "ssh"
    ), got


OPAQUE = [
    (["uv", "run"], "uv"), (["uv", "run", "--python", "3.12"], "uv"), (["conda", "run", "-n", "env"], "conda"),
    (["pipenv", "run"], "pipenv"), (["poetry", "run"], "poetry"), (["torchrun", "--nproc-per-node", "1"], "torchrun"),
    (["xargs", "-0"], "xargs"), (["watch", "-n", "5"], "watch"), (["gdb", "--args"], "gdb"), (["valgrind"], "valgrind"),
    (["ltrace", "-f"], "ltrace"), (["nsys", "profile", "-o", "rep"], "nsys"), (["ncu", "--set", "full"], "ncu"),
    (["strace", "-f", "-E", "LD_PRELOAD=/x.so"], "strace"), (["strace", "-u", "svc"], "strace"),
    (["strace", "--env=A=1"], "strace"), (["perf", "record", "-g"], "perf"), (["perf", "top"], "perf"),
    (["mpirun"], "mpirun"), (["mpirun", "-np", "2"], "mpirun"), (["mpirun", "-np", "1", "-x", "A=1"], "mpirun"),
    (["mpirun", "-np", "1", "--wdir", "/x"], "mpirun"), (["nice", "-n", "5", "conda", "run", "-n", "e"], "conda"),
]  # fmt: skip


@pytest.mark.parametrize(("prefix", "subject"), OPAQUE)
def test_a_program_that_runs_it_its_own_way_is_unknown_even_with_facts(
    prefix: list[str], subject: str, mapping: Any
) -> None:
    # fails before: no problem (the launch after it judged as if it were absent)
    for given in (False, True):
        assert _of(_problems([*prefix, *LAUNCH], mapping, target_facts=given), subject) == [(subject, "unknown")], (
            prefix, given)  # fmt: skip


def test_mpirun_inside_an_allocation_is_unknown(mapping: Any) -> None:
    line = ["mpirun", "--allow-run-as-root", "-np", "1", *LAUNCH]  # (ifc58: without it, unknown as root may run it)
    assert _of(_problems(line, mapping, {"SLURM_JOB_ID": "7"}), "mpirun") == [("mpirun", "unknown")]
    assert _of(_problems(line, mapping), "mpirun") == []


@pytest.mark.parametrize(
    "prefix",
    # (ifc58: mpirun without leave to run as root, and perf, are unknown: test_ifc58_mpirun_root_perf.py)
    [["mpirun", "-np", "1", "--allow-run-as-root"], ["mpirun", "-n", "1", "--bind-to", "none", "--allow-run-as-root"],
     ["mpirun", "-H", "localhost", "-np", "1", "--allow-run-as-root"],
     ["mpiexec", "--mca", "btl", "self", "-np", "1", "-allow-run-as-root"],
     ["strace", "-f", "-o", "log"], ["strace", "-ff", "-s", "200", "-e", "trace=openat", "--"],
     ["strace", "--follow-forks", "--output=log"]],
)  # fmt: skip
def test_a_program_that_runs_it_unchanged_here_is_judged(prefix: list[str], mapping: Any) -> None:
    d = gate.derive([*prefix, *LAUNCH, "--served-model-name", "B=2"], mapping, {})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2
    assert not [p for p in d.problems if p.status != "note"], (prefix, d.problems)
    # an assignment word where it runs its command: exec'd as a program (exit 127), blocked
    bad = gate.derive([*prefix, "A=1", *LAUNCH], mapping, {})
    assert ("A=", "blocked") in [(p.subject, p.status) for p in bad.problems], (prefix, bad.problems)


def test_an_unread_launch_behind_a_remote_program_is_unknown_even_with_facts(mapping: Any) -> None:
    # `ssh gpu1 "python -m ..."` (one word, run by the remote shell) and `torchrun -m sglang.launch_server`: the launch
    # is not read (a wrapper), so its flags are not judged: unknown whatever the facts
    for line, subject in ((["ssh", "gpu1", " ".join(LAUNCH)], "ssh"),
                          (["torchrun", "-m", "sglang.launch_server", "--model-path", "m"], "torchrun")):  # fmt: skip
        d = gate.derive(line, mapping, {}, target_facts=True)
        assert d.entrypoint == "wrapper"
        assert _of(list(d.problems), subject) == [(subject, "unknown")], (line, d.problems)


@pytest.mark.parametrize(
    ("shell", "status"),
    [("dash", "blocked"), ("/bin/dash", "blocked"), ("sh", "unknown"), ("bash", None), ("zsh", None), ("ksh", None)],
)
def test_time_before_an_assignment_in_a_shell_string(shell: str, status: str | None, mapping: Any) -> None:
    # fails before: dash's and sh's allowed (A=1 read as an assignment, as bash reads it)
    for text in ("cd /srv && time A=1 " + " ".join(LAUNCH), "time -p A=1 " + " ".join(LAUNCH)):
        d = gate.derive([shell, "-c", text], mapping, {})
        assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2
        got = [(p.subject, p.status) for p in d.problems if p.subject == "A="]
        assert got == ([("A=", status)] if status else []), (shell, text, d.problems)


def test_time_in_a_string_run_by_a_shell_not_known_is_unknown(mapping: Any) -> None:
    d = gate.derive(["su", "svc", "-c", "time A=1 " + " ".join(LAUNCH)], mapping, {})
    assert ("A=", "unknown") in [(p.subject, p.status) for p in d.problems], d.problems
    assert "not known" in next(p.message for p in d.problems if p.subject == "A=")


def test_time_without_an_assignment_is_fine_in_dash(mapping: Any) -> None:
    d = gate.derive(["dash", "-c", "time " + " ".join(LAUNCH)], mapping, {})
    assert not [p for p in d.problems if p.subject == "A=" or p.status == "blocked"], d.problems


def test_the_gate_command_refuses_and_notes(tmp_path: Path) -> None:
    """Through `stackcheck gate --facts ... --dry-run`: conda run is refused naming conda, and ssh whose environment
    there is not given."""
    base = ["gate", "--facts", str(H200), "--dry-run", "--format", "json", "--"]
    # (a model the gate reads: with /m unread, --attention-backend fa3 is unknown since imodel2, as the model may be
    # Gemma 4, whose attention backends SGLang 0.5.13-0.5.23 assert without fa3)
    model = model_dir(tmp_path, "llama", LLAMA3)
    line = ["python", "-m", "sglang.launch_server", "--model-path", str(model), "--attention-backend", "fa3"]
    rc, doc = cli_json([*base, *line])
    assert (rc, doc["decision"]) == (0, "allow")  # (the line alone)
    rc, doc = cli_json([*base, "conda", "run", "-n", "serve", *line])
    assert (rc, doc["decision"]) == (1, "refuse") and "conda" in json.dumps(doc)
    rc, doc = cli_json([*base, "ssh", "gpu1", *line])
    assert (rc, doc["decision"]) == (1, "refuse") and "that box's environment" in json.dumps(doc)


def test_long_chains_of_these_programs_are_read_in_linear_time(mapping: Any) -> None:
    import time

    chains = (["perf", "record"] * 10000 + ["--"], ["mpirun", "-np", "1"] * 7000, ["strace", "-f"] * 10000,
              ["ssh", "h"] * 10000, ["nice", "perf", "record", "--"] * 5000)  # fmt: skip
    for prefix in chains:
        for tail in (LAUNCH, [" ".join(LAUNCH)]):
            start = time.monotonic()
            gate.derive([*prefix, *tail], mapping, {})
            assert time.monotonic() - start < 15, prefix[:2]
