"""irev75: review of igap56's `mpirun -np 1` default-hostfile reading. Each test names the false pass it shows (the
gate allowed a launch whose rank Open MPI may place on another host). The trees are written here in the shape of an
Open MPI prefix (no upstream file)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import elsewhere, gate
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


@pytest.mark.parametrize(
    "name",
    ["OMPI_MCA_mca_base_param_file_prefix", "OMPI_MCA_mca_base_envar_file_prefix", "OMPI_MCA_mca_base_param_file_path",
     "PRTE_MCA_mca_base_override_param_file", "OMPI_MCA_mca_base_param_file_path_force"],
)  # fmt: skip
def test_the_mca_base_s_other_parameter_files_in_the_environment(name: str, mapping: Any) -> None:
    # false pass before: only *param_files* was taken; `--am FILE` / `--tune FILE`'s parameters and the override file
    # were passed over (their files may set orte_default_hostfile)
    d = gate.derive(["mpirun", *MPI, *LAUNCH], mapping, {**ENV, name: "hosts.conf"})
    assert [(p.subject, p.status) for p in d.problems if p.subject == "mpirun"] == [("mpirun", "unknown")], name
    d = gate.derive(["mpirun", *MPI, "--mca", name[9:], "x.conf", *LAUNCH], mapping, ENV)
    assert [(p.subject, p.status) for p in d.problems if p.subject == "mpirun"] == [("mpirun", "unknown")], name


@pytest.mark.parametrize(
    "name", ["openmpi-mca-params-override.conf", "prte-mca-params-override.conf", "pmix-mca-params-override.conf"]
)
def test_the_override_parameter_file_is_read(name: str, tmp_path: Path) -> None:
    # false pass before: $sysconfdir/openmpi-mca-params-override.conf (read over the environment and the other
    # files) was not read
    _install(tmp_path, "opt/ompi", "# none\n")
    (tmp_path / "opt/ompi/etc" / name).write_text("orte_default_hostfile = /shared/hosts\n")
    why = elsewhere.mpi_default_hosts(HostView(str(tmp_path)), "mpirun", {**ENV, "PATH": "/opt/ompi/bin"}, "/")
    assert why is not None and name in why and "orte_default_hostfile" in why
    (tmp_path / "opt/ompi/etc/mca.conf").write_text("mca_base_param_file_prefix = /shared/amca\n")
    (tmp_path / "opt/ompi/etc" / name).write_text("include = /opt/ompi/etc/mca.conf\n")
    assert elsewhere.mpi_default_hosts(HostView(str(tmp_path)), "mpirun", {**ENV, "PATH": "/opt/ompi/bin"}, "/") is None
    (tmp_path / "opt/ompi/etc" / name).write_text("mca_base_param_file_prefix = /shared/amca\n")
    why = elsewhere.mpi_default_hosts(HostView(str(tmp_path)), "mpirun", {**ENV, "PATH": "/opt/ompi/bin"}, "/")
    assert why is not None and "mca_base_param_file_prefix" in why


@pytest.mark.parametrize(
    "words",
    [["--map-by", "rankfile:file=/shared/rf"], ["--map-by=rankfile:FILE=/shared/rf"], ["-map-by", "seq"],
     ["--map-by", "se:file=/h"], ["--map-by", "core:file=/h"], ["--mca", "rmaps", "seq"],
     ["--mca", "rmaps_default_mapping_policy", "rankfile:file=/r"], ["-gmca", "rmaps_base_mapping_policy", "seq"]],
)  # fmt: skip
def test_a_mapping_by_a_file_is_unknown(words: list[str], mapping: Any) -> None:
    # false pass before: `--map-by` / `--mca` values were passed over; PRRTE's rankfile mapper (`rankfile:file=F`,
    # any `:file=F` modifier) and the sequential mapper place the rank on the hosts of the file
    d = gate.derive(["mpirun", *MPI, *words, *LAUNCH], mapping, ENV)
    assert [(p.subject, p.status) for p in d.problems if p.subject == "mpirun"] == [("mpirun", "unknown")], words
    assert d.mpi_local == []


@pytest.mark.parametrize(
    "words", [["--map-by", "core"], ["--map-by", "ppr:1:node"], ["--map-by", "slot"], ["--mca", "rmaps", "ppr"]]
)
def test_other_mappings_are_read_as_before(words: list[str], mapping: Any) -> None:
    d = gate.derive(["mpirun", *MPI, *words, *LAUNCH], mapping, ENV)
    assert [p for p in d.problems if p.subject == "mpirun"] == [] and len(d.mpi_local) == 1


def test_a_mapping_by_a_file_in_the_environment_or_a_parameter_file(tmp_path: Path, mapping: Any) -> None:
    # false pass before: PRTE_MCA_rmaps_default_mapping_policy=rankfile:file=F was not taken
    env = {**ENV, "PRTE_MCA_rmaps_default_mapping_policy": "rankfile:file=/shared/rf"}
    d = gate.derive(["mpirun", *MPI, *LAUNCH], mapping, env)
    assert [(p.subject, p.status) for p in d.problems if p.subject == "mpirun"] == [("mpirun", "unknown")]
    d = gate.derive(["mpirun", *MPI, *LAUNCH], mapping, {**ENV, "OMPI_MCA_rmaps_base_mapping_policy": "core"})
    assert [p for p in d.problems if p.subject == "mpirun"] == []
    _install(tmp_path, "opt/ompi", "# none\n")
    (tmp_path / "opt/ompi/etc/prte-mca-params.conf").write_text("rmaps_default_mapping_policy = seq\n")
    why = elsewhere.mpi_default_hosts(HostView(str(tmp_path)), "mpirun", {**ENV, "PATH": "/opt/ompi/bin"}, "/")
    assert why is not None and "rmaps_default_mapping_policy" in why
    (tmp_path / "opt/ompi/etc/prte-mca-params.conf").write_text('rmaps_default_mapping_policy = "seq"\n')
    assert elsewhere.mpi_default_hosts(HostView(str(tmp_path)), "mpirun", {**ENV, "PATH": "/opt/ompi/bin"}, "/")
    (tmp_path / "opt/ompi/etc/prte-mca-params.conf").write_text("rmaps_default_mapping_policy = package\n")
    assert elsewhere.mpi_default_hosts(HostView(str(tmp_path)), "mpirun", {**ENV, "PATH": "/opt/ompi/bin"}, "/") is None


@pytest.mark.parametrize(
    "text",
    ["localhost slots=2 node7\n", "localhost\tnode7\n", "localhost /* x */ node7\n", "localhost // x",
     "localhost\r\n", "localhost\x1fnode7\n", "localhost slots=two\n", "# the end, no newline", "rank 0=node5 slot=0\n",
     "127.0.0.1 username=me\n"],
)  # fmt: skip
def test_a_hostfile_line_is_read_as_this_host_s_only_in_the_lexer_s_shape(text: str, tmp_path: Path) -> None:
    # false pass before: a line was read by its first word (str.split), so a second host after it, a C comment, a
    # carriage return or a control character read as this host, where Open MPI's hostfile lexer reads another host
    # or fails (a parse error: mpirun exits before the command runs)
    _install(tmp_path, "opt/ompi", text)
    why = elsewhere.mpi_default_hosts(HostView(str(tmp_path)), "mpirun", {**ENV, "PATH": "/opt/ompi/bin"}, "/")
    assert why is not None and "openmpi-default-hostfile" in why, repr(text)
    assert "'rank'" not in why


@pytest.mark.parametrize(
    "text",
    ["", "\n", "# c\n", "localhost\n",
     "localhost", "  localhost slots=2 max-slots = 4 # me\n", "127.0.0.1\n::1 cpu=1\n",
     "\tlocalhost\x0bslots=1\x0c\n", "# a\r\n"],
)  # fmt: skip
def test_this_host_s_lines_read_as_before(text: str, tmp_path: Path) -> None:
    _install(tmp_path, "opt/ompi", text)
    assert elsewhere.mpi_default_hosts(HostView(str(tmp_path)), "mpirun", {**ENV, "PATH": "/opt/ompi/bin"}, "/") is None


def test_a_grid_engine_allocation_is_unknown(mapping: Any) -> None:
    # false pass before: Open MPI's gridengine ras places the ranks on PE_HOSTFILE's hosts (SGE_ROOT, ARC, JOB_ID set)
    env = {**ENV, "SGE_ROOT": "/sge", "ARC": "lx-amd64", "JOB_ID": "42", "PE_HOSTFILE": "/sge/spool/pe_hostfile"}
    d = gate.derive(["mpirun", *MPI, *LAUNCH], mapping, env)
    got = [(p.subject, p.status, p.message) for p in d.problems if p.subject == "mpirun"]
    assert [g[:2] for g in got] == [("mpirun", "unknown")] and "PE_HOSTFILE" in got[0][2]


@pytest.mark.parametrize("target", ["openmpi-default-hostfile", "/shared/absent-hosts"])
def test_a_hostfile_link_that_does_not_resolve_is_unknown(target: str, tmp_path: Path) -> None:
    # false pass before: a symlink loop or a dangling link read as no hostfile (stat None: absent)
    _install(tmp_path, "opt/ompi")
    (tmp_path / "opt/ompi/etc/openmpi-default-hostfile").symlink_to(target)
    why = elsewhere.mpi_default_hosts(HostView(str(tmp_path)), "mpirun", {**ENV, "PATH": "/opt/ompi/bin"}, "/")
    assert why is not None and "could not be read" in why


@pytest.mark.parametrize("kind", ["fifo", "dir", "huge", "binary"])
def test_odd_files_are_unknown_without_a_hang_or_a_traceback(kind: str, tmp_path: Path) -> None:
    import os

    _install(tmp_path, "opt/ompi")
    path = tmp_path / "opt/ompi/etc/openmpi-default-hostfile"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    elif kind == "huge":
        path.write_bytes(b"# x\n" * 300_000)
    else:
        path.write_bytes(b"\xff\xfe\x00localhost\n")
    assert elsewhere.mpi_default_hosts(HostView(str(tmp_path)), "mpirun", {**ENV, "PATH": "/opt/ompi/bin"}, "/")


def test_another_mpi_s_launcher_beside_a_distribution_s_open_mpi_configuration_is_unknown(tmp_path: Path) -> None:
    # false pass before: /usr/bin/mpirun resolving to MPICH's mpiexec.hydra (Debian's alternatives) was read through
    # /etc/openmpi's clean files, and an /opt launcher through them too; hydra reads HYDRA_HOST_FILE, not those
    (tmp_path / "usr/bin").mkdir(parents=True)
    (tmp_path / "etc/openmpi").mkdir(parents=True)
    (tmp_path / "home/u").mkdir(parents=True)
    (tmp_path / "etc/openmpi/openmpi-mca-params.conf").write_text("# none\n")
    hydra = tmp_path / "usr/bin/mpiexec.hydra"
    hydra.write_text("#!/bin/sh\n")
    hydra.chmod(0o755)
    (tmp_path / "usr/bin/mpirun").symlink_to("mpiexec.hydra")
    view = HostView(str(tmp_path))
    why = elsewhere.mpi_default_hosts(view, "mpirun", ENV, "/")
    assert why is not None and "mpiexec.hydra" in why
    (tmp_path / "opt/intel/bin").mkdir(parents=True)
    run = tmp_path / "opt/intel/bin/mpirun"
    run.write_text("#!/bin/sh\n")
    run.chmod(0o755)
    why = elsewhere.mpi_default_hosts(view, "mpirun", {**ENV, "PATH": "/opt/intel/bin"}, "/")
    assert why is not None and "not found" in why
    (tmp_path / "usr/bin/mpirun").unlink()
    orterun = tmp_path / "usr/bin/orterun"
    orterun.write_text("#!/bin/sh\n")
    orterun.chmod(0o755)
    (tmp_path / "usr/bin/mpirun").symlink_to("orterun")
    assert elsewhere.mpi_default_hosts(view, "mpirun", ENV, "/") is None  # (Debian's Open MPI: read as before)


@pytest.mark.parametrize(
    ("name", "value"),
    [("OPAL_SYSCONFDIR", "/site/etc"), ("OPAL_PREFIX", "/site"), ("PRTE_SYSCONFDIR", "/site/etc"),
     ("PRTE_PREFIX", "/site"), ("PMIX_PREFIX", "/site")],
)  # fmt: skip
def test_a_relocated_configuration_directory_is_read_whatever_it_holds(name: str, value: str, tmp_path: Path) -> None:
    # false pass before: the directory OPAL_SYSCONFDIR / OPAL_PREFIX gives was read only where it held a parameter
    # file, so its default hostfile was passed over while mpirun's own prefix/etc (clean) was read
    _install(tmp_path, "opt/ompi", "# none\n")
    (tmp_path / "site/etc").mkdir(parents=True)
    (tmp_path / "site/etc/openmpi-default-hostfile").write_text("node9\n")
    env = {**ENV, "PATH": "/opt/ompi/bin", name: value}
    why = elsewhere.mpi_default_hosts(HostView(str(tmp_path)), "mpirun", env, "/")
    assert why is not None and "node9" in why and "/site/etc" in why
    why = elsewhere.mpi_default_hosts(HostView(str(tmp_path)), "mpirun", {**env, name: "site"}, "/")
    assert why is not None and "no absolute directory" in why
    (tmp_path / "site/etc/openmpi-default-hostfile").write_text("localhost\n")
    assert elsewhere.mpi_default_hosts(HostView(str(tmp_path)), "mpirun", env, "/") is None
