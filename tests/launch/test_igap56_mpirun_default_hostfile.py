"""igap56: Open MPI's `mpirun -np 1` with no host given was read as running the launch here (igap54, ifc58), but Open
MPI places the rank on the hosts of its default hostfile where the installation's one lists any ($sysconfdir/
openmpi-default-hostfile in 4.x, prte-default-hostfile in 5.x: orte_hosts(7), orte_mca_params.c, PRRTE's
prte_mca_params.c), or of a host MCA parameter set in the environment (OMPI_MCA_orte_default_hostfile,
PRTE_MCA_prte_default_hostfile, *_default_dash_host, rmaps_rank_file_path) or in an MCA parameter file. The gate
allowed the launch whatever they held. Now: unknown where the environment sets such a parameter, where the
installation's files give a host other than this one, or where they are not read (--facts, --root, --image, mpirun
not found, its configuration directory not found); judged as before where they are read and give none. The trees
below are written here in the shape of an Open MPI prefix (no upstream file)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch import elsewhere, gate
from stackcheck.readers.fsview import HostView

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
MPI = ["mpirun", "--allow-run-as-root", "-np", "1"]
H200 = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize(
    "name",
    ["PRTE_MCA_prte_default_hostfile", "OMPI_MCA_prte_default_hostfile", "OMPI_MCA_orte_default_dash_host",
     "PRTE_MCA_prte_default_dash_host", "OMPI_MCA_rmaps_rank_file_path", "OMPI_MCA_mca_param_files",
     "OMPI_MCA_rmaps_default_hostfile"],
)  # fmt: skip
def test_a_host_parameter_in_the_environment_is_unknown(name: str, mapping: Any) -> None:
    # fails before: no problem (only OMPI_MCA_orte_default_hostfile was read)
    d = gate.derive([*MPI, *LAUNCH], mapping, {name: "/shared/hosts"})
    got = [(p.subject, p.status) for p in d.problems if p.subject == "mpirun"]
    assert got == [("mpirun", "unknown")], name
    assert name in next(p.message for p in d.problems if p.subject == "mpirun")


def test_other_mca_variables_are_not_taken(mapping: Any) -> None:
    d = gate.derive([*MPI, *LAUNCH], mapping, {"OMPI_MCA_btl": "^openib", "PRTE_MCA_plm_rsh_agent": "ssh"})
    assert [p for p in d.problems if p.subject == "mpirun"] == []
    assert [prog for prog, _ in d.mpi_local] == ["mpirun"]


def _prefix(tmp: Path, hostfile: str | None, params: str | None = "# defaults\n", home: str | None = None) -> HostView:
    (tmp / "opt/ompi/bin").mkdir(parents=True)
    (tmp / "opt/ompi/etc").mkdir(parents=True)
    (tmp / "home/u").mkdir(parents=True)
    (tmp / "etc").mkdir()
    run = tmp / "opt/ompi/bin/mpirun"
    run.write_text("#!/bin/sh\n")
    run.chmod(0o755)
    if params is not None:
        (tmp / "opt/ompi/etc/openmpi-mca-params.conf").write_text(params)
    if hostfile is not None:
        (tmp / "opt/ompi/etc/openmpi-default-hostfile").write_text(hostfile)
    if home is not None:
        (tmp / "home/u/.openmpi").mkdir()
        (tmp / "home/u/.openmpi/mca-params.conf").write_text(home)
    return HostView(str(tmp))


ENV = {"PATH": "/opt/ompi/bin:/usr/bin", "HOME": "/home/u"}


def test_a_host_in_the_default_hostfile_is_unknown(tmp_path: Path) -> None:
    # fails before: mpi_default_hosts did not exist, and the launch was allowed
    view = _prefix(tmp_path, "# the hosts\nnode7 slots=8\n")
    why = elsewhere.mpi_default_hosts(view, "mpirun", ENV, "/")
    assert why is not None and "node7" in why and "openmpi-default-hostfile" in why


def test_the_shipped_comment_only_hostfile_gives_no_host(tmp_path: Path) -> None:
    view = _prefix(tmp_path, "# This is the default hostfile\n#\n\n   # indented\nlocalhost slots=2\n")
    assert elsewhere.mpi_default_hosts(view, "mpirun", ENV, "/") is None


def test_prrte_hostfile_and_parameter_files(tmp_path: Path) -> None:
    view = _prefix(tmp_path, None, params="orte_default_hostfile = /shared/hosts\n")
    why = elsewhere.mpi_default_hosts(view, "mpirun", ENV, "/")
    assert why is not None and "orte_default_hostfile" in why
    other = tmp_path / "b"
    other.mkdir()
    view = _prefix(other, None, home="prte_default_dash_host=node2\n")
    why = elsewhere.mpi_default_hosts(view, "mpirun", ENV, "/")
    assert why is not None and ".openmpi/mca-params.conf" in why
    third = tmp_path / "c"
    third.mkdir()
    view = _prefix(third, None)
    (third / "opt/ompi/etc/prte-default-hostfile").write_text("gpu3\n")
    why = elsewhere.mpi_default_hosts(view, "mpirun", ENV, "/")
    assert why is not None and "gpu3" in why


def test_installation_not_found_is_unknown(tmp_path: Path) -> None:
    view = _prefix(tmp_path, None, params=None)  # (no openmpi-mca-params.conf: its sysconfdir not found)
    why = elsewhere.mpi_default_hosts(view, "mpirun", ENV, "/")
    assert why is not None and "not found" in why
    assert elsewhere.mpi_default_hosts(view, "mpirun", {"PATH": "/usr/bin", "HOME": "/home/u"}, "/") is not None
    assert elsewhere.mpi_default_hosts(view, "mpirun", {"PATH": "bin:/opt/ompi/bin", "HOME": "/home/u"}, None)
    view = _prefix(tmp_path / "d", "", params="")
    assert elsewhere.mpi_default_hosts(view, "mpirun", {"PATH": "/opt/ompi/bin"}, "/") is not None  # (no HOME)


def test_debian_layout(tmp_path: Path) -> None:
    # (Debian / Ubuntu: /usr/bin/mpirun, the configuration in /etc/openmpi)
    (tmp_path / "usr/bin").mkdir(parents=True)
    (tmp_path / "etc/openmpi").mkdir(parents=True)
    (tmp_path / "home/u").mkdir(parents=True)
    run = tmp_path / "usr/bin/mpirun.openmpi"
    run.write_text("#!/bin/sh\n")
    run.chmod(0o755)
    os.symlink("mpirun.openmpi", tmp_path / "usr/bin/mpirun")
    (tmp_path / "etc/openmpi/openmpi-mca-params.conf").write_text("# none\n")
    (tmp_path / "etc/openmpi/openmpi-default-hostfile").write_text("# none\n")
    view = HostView(str(tmp_path))
    env = {"PATH": "/usr/bin", "HOME": "/home/u"}
    assert elsewhere.mpi_default_hosts(view, "mpirun", env, "/") is None
    (tmp_path / "etc/openmpi/openmpi-default-hostfile").write_text("10.0.0.9\n")
    assert "10.0.0.9" in str(elsewhere.mpi_default_hosts(view, "mpirun", env, "/"))


def test_the_problem(tmp_path: Path, mapping: Any) -> None:
    d = gate.derive(["nohup", *MPI, "--", *LAUNCH], mapping, ENV)
    assert [prog for prog, _ in d.mpi_local] == ["mpirun"]
    assert gate.mpi_hostfile_problems(d, _prefix(tmp_path, "# none\n"), "/", "") == []
    got = gate.mpi_hostfile_problems(d, _prefix(tmp_path / "x", "node1\n"), "/", "")
    assert [(p.subject, p.status) for p in got] == [("mpirun", "unknown")] and "node1" in got[0].message
    got = gate.mpi_hostfile_problems(d, None, None, "not read here")
    assert [(p.subject, p.status) for p in got] == [("mpirun", "unknown")] and "not read here" in got[0].message
    assert gate.derive(LAUNCH, mapping, ENV).mpi_local == []


def test_the_gate_under_facts_refuses_it(tmp_path: Path) -> None:
    # fails before: allow (ifc58's test took it as the allowed form)
    base = ["gate", "--facts", str(H200), "--dry-run", "--format", "json", "--"]
    # (a model the gate reads: with /m unread, --attention-backend fa3 is unknown since imodel2, as the model may be
    # Gemma 4, whose attention backends SGLang 0.5.13-0.5.23 assert without fa3)
    model = model_dir(tmp_path, "llama", LLAMA3)
    line = ["python", "-m", "sglang.launch_server", "--model-path", str(model), "--attention-backend", "fa3"]
    rc, doc = cli_json([*base, "mpirun", "--allow-run-as-root", "-np", "1", "--bind-to", "none", *line])
    assert (rc, doc["decision"]) == (1, "refuse"), json.dumps(doc)[:400]
    assert "default hostfile" in json.dumps(doc)
    rc, doc = cli_json([*base, *line])
    assert (rc, doc["decision"]) == (0, "allow")


@pytest.mark.parametrize(
    "mca",
    [["--mca", "orte_default_hostfile", "/shared/hosts"], ["-mca", "prte_default_dash_host", "node2"],
     ["--gmca", "rmaps_rank_file_path", "/r"], ["--mca", "mca_param_files", "/p.conf"]],
)  # fmt: skip
def test_a_host_parameter_on_the_command_line_is_unknown(mca: list[str], mapping: Any) -> None:
    # fails before: no problem (`--mca NAME VALUE` was passed over)
    d = gate.derive([*MPI, *mca, *LAUNCH], mapping, {})
    assert [(p.subject, p.status) for p in d.problems if p.subject == "mpirun"] == [("mpirun", "unknown")]
    assert d.mpi_local == []
    d = gate.derive([*MPI, "--mca", "btl", "^openib", *LAUNCH], mapping, {})
    assert [p for p in d.problems if p.subject == "mpirun"] == [] and len(d.mpi_local) == 1
