"""imend7 (igap54's finding): a launch run on another machine or container written inside a shell's command string,
its Python command one word the remote shell reads (`bash -c "ssh h 'python -m sglang.launch_server ...'"`), was
not found by the shell-string reader, so derive fell back to the `wrapper` entrypoint and looked for ssh / docker
only among the outer words: no refusal at all, the launch judged as tp=1 on this box. Now a launcher of
launch/elsewhere.py inside the string is read as it is on the command line: unknown, naming the program."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = "python3 -m sglang.launch_server --model-path m --tp 2"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


LINES = [
    (["bash", "-c", f"ssh h '{LAUNCH}'"], "ssh"),
    (["sh", "-c", f'ssh -p 22 h "{LAUNCH}"'], "ssh"),
    (["bash", "-lc", f"cd /x && ssh h '{LAUNCH}' 2>&1 | tee log"], "ssh"),
    (["flock", "F", "-c", f"ssh h '{LAUNCH}'"], "ssh"),
    (["sudo", "bash", "-c", f"pdsh -w h1,h2 '{LAUNCH}'"], "pdsh"),
    (["bash", "-c", f"sh -c \"ssh h '{LAUNCH}'\""], "ssh"),
    (["bash", "-c", f"docker exec c sh -c '{LAUNCH}'"], "docker"),
    (["sh", "-c", f"docker exec c {LAUNCH}"], "docker"),
    (["bash", "-c", f"ssh h {LAUNCH}"], "ssh"),
    (["bash", "-c", f"torchrun --nproc-per-node 2 '{LAUNCH}'"], "torchrun"),
]


@pytest.mark.parametrize(("line", "name"), LINES)
def test_a_remote_launch_in_a_shell_string_is_unknown(line: list[str], name: str, mapping: Any) -> None:
    # fails before for the first six: no problem named after the program (the launch judged on this box)
    d = gate.derive(line, mapping, {})
    got = [p for p in d.problems if p.subject == name]
    assert [p.status for p in got] == ["unknown"], (line, d.problems)
    assert "fail closed" in got[0].message


def test_even_with_the_targets_facts_an_unread_launch_is_unknown(mapping: Any) -> None:
    d = gate.derive(["bash", "-c", f"ssh h 'env -i PATH=/bin {LAUNCH}'"], mapping, {}, target_facts=True)
    assert [p.status for p in d.problems if p.subject == "ssh"] == ["unknown"], d.problems


def test_a_string_whose_launch_is_found_is_judged_as_before(mapping: Any) -> None:
    # a remote command that is no launch, then the launch here: no ssh refusal
    d = gate.derive(["bash", "-c", f"ssh h uptime; {LAUNCH}"], mapping, {})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2
    assert not [p for p in d.problems if p.subject == "ssh"], d.problems
    # a remote command that names no SGLang launch is no refusal of a launch not found
    d = gate.derive(["bash", "-c", "ssh h 'uptime'"], mapping, {})
    assert not [p for p in d.problems if p.subject == "ssh"], d.problems
