"""irobust6: an adversarial pass over the launch reading added in irobust5 / imend5 (runners, su, srun, the word cap).

- srun takes its long options by getopt_long, which accepts a unique prefix: `srun --exp=NONE python ...` starts the
  task with none of the submission environment, as `--export=NONE` does, but only the full spelling was read (the
  launch was judged with an environment it does not get).
- su / runuser take their command string in getopt_long's spellings too: `--command=STRING`, `--command STRING`, a
  prefix (`--comm=`), `--session-command`, `-cSTRING`. Only a `-c` word was read; the others were read as a wrapper
  whose launch flags and environment were never judged."""

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
    [["srun", "--exp=NONE"], ["srun", "--expo", "NONE"], ["srun", "-N1", "--expor=HF_HOME"],
     ["srun", "--export", "NONE"]],
)  # fmt: skip
def test_an_abbreviated_srun_export_leaves_the_environment_unknown(prefix: list[str], mapping: Any) -> None:
    # fails before: no env problem for the abbreviations (the environment before srun judged as the server's)
    assert ("env", "unknown") in _problems([*prefix, *LAUNCH], mapping)


def test_srun_export_all_or_another_option_is_passed_over(mapping: Any) -> None:
    for prefix in (["srun", "--exp=ALL"], ["srun", "--exact"]):
        assert ("env", "unknown") not in _problems([*prefix, *LAUNCH], mapping), prefix


LAUNCH_TEXT = "python3 -m sglang.launch_server --model-path m --tp 2"


@pytest.mark.parametrize(
    "line",
    [["su", "svc", "--command=" + LAUNCH_TEXT], ["su", "--command", LAUNCH_TEXT, "svc"],
     ["su", "--comm=" + LAUNCH_TEXT, "svc"], ["su", "-c" + LAUNCH_TEXT, "svc"], ["su", "-lc" + LAUNCH_TEXT, "svc"],
     ["runuser", "-u", "svc", "--session-command", LAUNCH_TEXT], ["sudo", "su", "svc", "--c=" + LAUNCH_TEXT]],
)  # fmt: skip
def test_su_command_spellings_are_read_as_its_shell_string(line: list[str], mapping: Any) -> None:
    # fails before: entrypoint 'wrapper', no env problem, the launch's --tp never read
    d = gate.derive(line, mapping, {})
    assert d.entrypoint == "launch-server", (line, d.entrypoint)
    assert d.sglang_args[-2:] == ["--tp", "2"], d.sglang_args
    assert ("env", "unknown") in [(p.subject, p.status) for p in d.problems]


@pytest.mark.parametrize(
    "text",
    ["exec A=1 " + LAUNCH_TEXT, "cd /srv && exec -a sglang A=1 " + LAUNCH_TEXT, "exec -- A=1 " + LAUNCH_TEXT],
)
def test_an_assignment_after_a_shells_exec_is_refused(text: str, mapping: Any) -> None:
    # bash and dash: `exec A=1 true` -> "exec: A=1: not found", exit 127 (run here); fails before: no A= problem (the
    # assignment read as the launch's environment)
    assert ("A=", "blocked") in _problems(["bash", "-c", text], mapping)


def test_an_assignment_before_exec_is_the_launchs_environment(mapping: Any) -> None:
    assert not [p for p in _problems(["sh", "-c", "A=1 exec " + LAUNCH_TEXT], mapping) if p[0] == "A="]
    assert not [p for p in _problems(["sh", "-c", "exec " + LAUNCH_TEXT], mapping) if p[0].endswith("=")]


@pytest.mark.parametrize(
    "prefix",
    [["timeout", "--sig", "TERM", "10", "A=1"], ["timeout", "--k", "5", "10", "A=1"],
     ["timeout", "-vk", "5", "10", "A=1"], ["timeout", "-vs", "KILL", "10", "A=1"],
     ["nice", "timeout", "--si", "TERM", "10", "A=1"]],
)  # fmt: skip
def test_timeouts_abbreviated_options_are_read(prefix: list[str], mapping: Any) -> None:
    # fails before: the option's value read as the DURATION, the assignment as the launch's environment (no problem)
    assert ("A=", "blocked") in _problems([*prefix, *LAUNCH], mapping)


def test_timeouts_attached_values_are_read(mapping: Any) -> None:
    for prefix in (["timeout", "-k5", "10"], ["timeout", "--signal=TERM", "10"], ["timeout", "-sTERM", "-v", "10"]):
        assert not [p for p in _problems([*prefix, *LAUNCH], mapping) if p[0].endswith("=")], prefix
        assert ("A=", "blocked") in _problems([*prefix, "A=1", *LAUNCH], mapping), prefix


def test_many_sruns_are_read_once(mapping: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # fails before: each srun read every word after it (2,000 sruns: ~3.5 s, quadratic). Merged beside igap53 (the
    # lead, 2026-12-06): each srun reads only its own options (runners.srun_options), so every srun is read, a nested
    # one's --export included, and the options read over the whole line stay linear in its length
    from stackcheck.launch import runners

    read: list[int] = []
    real = runners.srun_options

    def counted(argv: Any, i: int) -> Any:
        got = real(argv, i)
        read.append(len(got))
        return got

    monkeypatch.setattr(runners, "srun_options", counted)
    gate.derive(["srun", "--x"] * 2000 + LAUNCH, mapping, {})
    assert sum(read) <= 3 * 2000 * 2, sum(read)
    assert ("env", "unknown") in _problems(["srun", "-N1", "srun", "--export=NONE", *LAUNCH], mapping)
    assert ("root", "unknown") in _problems(["srun", "srun", "--container-image=x", *LAUNCH], mapping)


@pytest.mark.parametrize(
    "line",
    [["flock", "/tmp/l", "-c", LAUNCH_TEXT], ["flock", "-w", "5", "/tmp/l", "--command", LAUNCH_TEXT],
     ["nohup", "flock", "-x", "/tmp/l", "-c", "cd /srv && " + LAUNCH_TEXT]],
)  # fmt: skip
def test_flocks_command_string_is_read_as_the_launch(line: list[str], mapping: Any) -> None:
    # fails before: entrypoint 'wrapper', the launch's --tp never read
    d = gate.derive(line, mapping, {})
    assert d.entrypoint == "launch-server" and d.sglang_args[-2:] == ["--tp", "2"], (d.entrypoint, d.sglang_args)
