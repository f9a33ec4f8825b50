"""irobust7: igap54's tables named ssh, docker, kubectl, mpirun, torchrun, ...; every other program before the launch
was passed over, and the launch judged on this box's facts as if it were absent: `rsh gpu1 python -m
sglang.launch_server ...`, `lxc exec c -- python ...`, `systemd-nspawn -D /r python ...`, `bsub python ...`, `accelerate
launch python ...`, `mpirun.openmpi -np 1 python ...` were allowed. Each is now unknown as its family is (another
machine or container: elsewhere; its own launcher: opaque). (Any other program no reader places is unknown since
iallow1: gate.unplaced_before, tests/launch/test_iallow_unlisted.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
PREFIXES = [
    ["rsh", "gpu1"], ["autossh", "gpu1"], ["mosh", "gpu1", "--"], ["clush", "-w", "h1"], ["lxc", "exec", "c", "--"],
    ["incus", "exec", "c", "--"], ["oc", "exec", "pod", "--"], ["crictl", "exec", "c"], ["ctr", "run", "img", "id"],
    ["docker-compose", "exec", "svc"], ["podman-remote", "exec", "c"], ["enroot", "start", "img"],
    ["systemd-nspawn", "-D", "/r"], ["distrobox", "enter", "b", "--"], ["toolbox", "run"],
    ["bwrap", "--bind", "/r", "/"], ["proot", "-r", "/r"], ["bsub"], ["qsub", "--"], ["aprun", "-n", "1"],
    ["jsrun", "-n", "1"], ["accelerate", "launch"], ["deepspeed"], ["mpirun.openmpi", "-np", "1"],
    ["mpiexec.hydra", "-np", "1"], ["nohup", "/usr/bin/rsh", "gpu1"],
]  # fmt: skip


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize("prefix", PREFIXES, ids=[" ".join(p) for p in PREFIXES])
def test_the_program_before_the_launch_is_unknown(prefix: list[str], mapping: Any) -> None:
    # fails before: no problem (allowed, judged on this box's facts)
    d = gate.derive([*prefix, *LAUNCH], mapping, {})
    assert d.entrypoint == "launch-server"
    name = next(w.rsplit("/", 1)[-1] for w in prefix if w not in ("nohup",))
    got = [p for p in d.problems if p.subject == name]
    assert [p.status for p in got] == ["unknown"], d.problems
    assert "fail closed" in got[0].message


def test_the_same_words_after_the_launch_are_no_program(mapping: Any) -> None:
    d = gate.derive([*LAUNCH, "--served-model-name", "qsub"], mapping, {})
    assert not [p for p in d.problems if p.status != "note"], d.problems
