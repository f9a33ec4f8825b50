"""irev75: review of igap56's `mpirun -np 1` default-hostfile reading. Each test names the false pass it shows (the
gate allowed a launch whose rank Open MPI may place on another host). The trees are written here in the shape of an
Open MPI prefix (no upstream file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.readers.fsview import HostView

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
MPI = ["--allow-run-as-root", "-np", "1"]
ENV = {"PATH": "/usr/bin", "HOME": "/home/u"}


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _install(tmp: Path, prefix: str, hostfile: str | None = None) -> None:
    (tmp / prefix / "bin").mkdir(parents=True, exist_ok=True)
    (tmp / prefix / "etc").mkdir(parents=True, exist_ok=True)
    (tmp / "home/u").mkdir(parents=True, exist_ok=True)
    run = tmp / prefix / "bin/mpirun"
    run.write_text("#!/bin/sh\n")
    run.chmod(0o755)
    (tmp / prefix / "etc/openmpi-mca-params.conf").write_text("# none\n")
    if hostfile is not None:
        (tmp / prefix / "etc/openmpi-default-hostfile").write_text(hostfile)


def _two(tmp: Path) -> HostView:
    """A clean installation on PATH (/usr) and another one (/opt/ompi) whose default hostfile lists node9."""
    _install(tmp, "usr", "# none\n")
    _install(tmp, "opt/ompi", "node9 slots=8\n")
    return HostView(str(tmp))


def test_mpirun_named_by_path_is_that_installation(tmp_path: Path, mapping: Any) -> None:
    # false pass before: /opt/ompi/bin/mpirun was looked up as `mpirun` on PATH (/usr's installation: no host)
    view = _two(tmp_path)
    d = gate.derive(["/opt/ompi/bin/mpirun", *MPI, *LAUNCH], mapping, ENV)
    got = gate.mpi_hostfile_problems(d, view, "/", "")
    assert [(p.subject, p.status) for p in got] == [("mpirun", "unknown")] and "node9" in got[0].message
    d = gate.derive(["mpirun", *MPI, *LAUNCH], mapping, ENV)
    assert gate.mpi_hostfile_problems(d, view, "/", "") == []  # (PATH's: /usr, no host)
    d = gate.derive(["../opt/ompi/bin/mpirun", *MPI, *LAUNCH], mapping, ENV)
    assert "node9" in gate.mpi_hostfile_problems(d, view, "/home", "")[0].message
    assert gate.mpi_hostfile_problems(d, view, None, "")[0].status == "unknown"  # (its directory not known)


def test_every_nested_mpirun_is_read(tmp_path: Path, mapping: Any) -> None:
    # false pass before: only the first mpirun's installation was read (mpi_local[:1])
    view = _two(tmp_path)
    argv = ["mpirun", *MPI, "env", "PATH=/opt/ompi/bin", "mpirun", *MPI, *LAUNCH]
    d = gate.derive(argv, mapping, ENV)
    assert len(d.mpi_local) == 2
    got = gate.mpi_hostfile_problems(d, view, "/", "")
    assert [(p.subject, p.status) for p in got] == [("mpirun", "unknown")] and "node9" in got[0].message
