"""imend9 (irev75's leftover): mpirun's `--mca=NAME VALUE` (the parameter's name joined to the option by `=`, its
value the next word) was read as if it took three words, so mpirun's command was looked for one word too far: the
command's first word was taken for an option (refused as not read), or a word after it for the command."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import elsewhere, gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
MPI = ["--allow-run-as-root", "-np", "1"]
ENV = {"PATH": "/usr/bin", "HOME": "/home/u"}


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize("mca", [["--mca=btl", "self,vader"], ["-mca=btl", "^openib"], ["--mca", "btl", "self"]])
def test_the_command_after_mca_is_placed(mca: list[str], mapping: Any) -> None:
    line = ["mpirun", *MPI, *mca, *LAUNCH]
    assert elsewhere.command_at(line, 0) == 1 + len(MPI) + len(mca)
    d = gate.derive(line, mapping, ENV)
    assert d.entrypoint == "launch-server"
    assert [p.subject for p in d.problems if p.status != "note"] == [], [p.message for p in d.problems]


def test_a_host_parameter_after_mca_equals_is_still_unknown(mapping: Any) -> None:
    line = ["mpirun", *MPI, "--mca=orte_default_hostfile", "/etc/h", *LAUNCH]
    assert any(p.status == "unknown" for p in gate.derive(line, mapping, ENV).problems)
