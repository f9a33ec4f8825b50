"""imend18: one reading of an srun's node list (gate.srun_hosts), which _srun_nodes (its node count), _srun_hostfile
(copies of the launch on one node) and _srun_hostfile_named (the file srun must open) all take; each read -F / -w /
SLURM_HOSTFILE itself before and they disagreed. As Slurm 284c3b95f0 reads them: src/common/slurm_opt.c
arg_set_nodefile / arg_set_nodelist free each other's value (the last of -F and -w wins); _validate_nodelist takes
SLURM_HOSTFILE where neither is given, set at all (an empty value is `./`, a directory: 'Failure getting NodeNames
from hostfile', exit 1); src/api/allocate.c slurm_read_hostfile returns NULL on an empty name (-F '': 'Invalid
--nodefile node file', exit -1) and where no line names a host; src/common/proc_args.c verify_node_list reads a -w
holding a `/` as a host file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import srun_line
from stackcheck.readers.fsview import HostView

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
JOB = {"SLURM_JOB_ID": "4242"}


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _statuses(prefix: list[str], env: dict[str, str], mapping: Any, cwd: Path, view: Any = "host") -> list[str]:
    derived = gate.derive([*prefix, *LAUNCH], mapping, env)
    view = HostView() if view == "host" else view
    got = gate.srun_hostfile_problems(derived, view, str(cwd), "not read (gate --facts)")
    assert all(p.subject == "srun" for p in got)
    return [p.status for p in got]


@pytest.mark.parametrize("view", ["host", None])
@pytest.mark.parametrize(
    ("prefix", "env"),
    [(["srun"], {**JOB, "SLURM_HOSTFILE": ""}), (["env", "SLURM_HOSTFILE=", "srun", "-N1"], JOB),
     (["srun", "-F", ""], JOB), (["srun", "--nodefile="], JOB)],
)  # fmt: skip
def test_an_empty_host_file_name_blocks_wherever_the_gate_runs(
    prefix: list[str], env: dict[str, str], view: Any, mapping: Any, tmp_path: Path
) -> None:
    # (failed before: SLURM_HOSTFILE='' read as not set, [] (allowed); -F '' under --facts unknown)
    assert _statuses(prefix, env, mapping, tmp_path, view) == ["blocked"], (prefix, env)


def test_the_last_of_nodefile_and_nodelist_is_the_one_srun_reads(mapping: Any, tmp_path: Path) -> None:
    missing = str(tmp_path / "missing")
    assert _statuses(["srun", "-F", missing, "-w", "gpu01"], JOB, mapping, tmp_path) == []  # (failed before: blocked)
    assert _statuses(["srun", "-w", "gpu01", "-F", missing], JOB, mapping, tmp_path) == ["blocked"]
    assert srun_line(["srun", "-F", missing, "--nodelist=gpu01", "true"], 0).counts.get("nodefile") is None
    line = srun_line(["srun", "-F", missing, "-w", "gpu01", "true"], 0)
    assert gate._srun_nodes(line, {}) == (None, True)  # (one host: failed before, `--nodefile ...`, not one node)


@pytest.mark.parametrize("body", [None, b"", b"# the nodes\n\n"])
def test_a_nodelist_naming_a_file_srun_gets_no_host_from_blocks(
    body: bytes | None, mapping: Any, tmp_path: Path
) -> None:
    hosts = tmp_path / "hosts"
    if body is not None:
        hosts.write_bytes(body)
    assert _statuses(["srun", "-w", str(hosts)], JOB, mapping, tmp_path) == ["blocked"]  # (failed before: [])
    assert _statuses(["srun", "-w", "./hosts"], JOB, mapping, tmp_path) == ["blocked"]


def test_a_nodelist_naming_a_good_file_or_hosts_is_allowed(mapping: Any, tmp_path: Path) -> None:
    (tmp_path / "hosts").write_text("gpu01\n")
    assert _statuses(["srun", "-w", str(tmp_path / "hosts")], JOB, mapping, tmp_path) == []
    assert _statuses(["srun", "-w", "gpu01"], {**JOB, "SLURM_HOSTFILE": ""}, mapping, tmp_path) == []
    assert _statuses(["srun", "-w", "gpu[01-02]"], JOB, mapping, tmp_path) == []


def test_a_relative_nodelist_file_after_env_c_is_unknown(mapping: Any, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "hosts").write_text("gpu01\n")
    command = ["env", "-C", str(tmp_path / "sub"), "srun", "-w", "./hosts", *LAUNCH]
    derived = gate.derive(command, mapping, JOB)
    moved = gate.launch_cwd(command, mapping, JOB, str(tmp_path))
    got = gate.srun_hostfile_problems(derived, HostView(), str(tmp_path), "not read", moved)
    assert [p.status for p in got] == ["unknown"]  # (failed before: [])


@pytest.mark.parametrize(
    ("words", "env", "want"),
    [(["srun"], {"SLURM_HOSTFILE": ""}, ("SLURM_HOSTFILE", "", "./", True)),
     (["srun"], {"SLURM_HOSTFILE": "h"}, ("SLURM_HOSTFILE", "h", "./h", False)),
     (["srun", "-F", "a", "-w", "n1"], {"SLURM_HOSTFILE": "h"}, ("-w", "n1", None, False)),
     (["srun", "-w", "n1", "--nodefile", "a"], {}, ("-F", "a", "a", False)),
     (["srun", "-w", "d/h"], {}, ("-w", "d/h", "d/h", False)), (["srun", "-F", ""], {}, ("-F", "", "", True))],
)  # fmt: skip
def test_one_reading_for_all_three(words: list[str], env: dict[str, str], want: tuple[Any, ...]) -> None:
    line = srun_line([*words, "true"], 0)
    got = gate.srun_hosts(line, env)
    assert got is not None and (got.how, got.written, got.path, got.empty) == want
    named = gate._srun_hostfile_named(line, env)
    assert named == ((got.written, got.how) if got.path is not None else None)
    _, single = gate._srun_nodes(line, env)
    assert single is (got.path is None and "," not in got.written)  # (a file: not read as one node, fail closed)


def test_the_gate_blocks_an_empty_slurm_hostfile(tmp_path: Path) -> None:
    from gate_cli import LLAMA3, cli_json, model_dir, release_box

    box = release_box(tmp_path, "0.5.23", "9.0")
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["env", "SLURM_JOB_ID=4242", "SLURM_HOSTFILE=", "srun", "python3", "-m", "sglang.launch_server",
            "--model-path", str(model), "--tp", "2"]  # fmt: skip
    _, doc = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    srun = [r for r in doc["reasons"] if r.get("feature") == "srun"]
    assert doc["decision"] != "allow" and "blocked" in [r["status"] for r in srun], doc["reasons"]  # (before: unknown)
    assert any("Failure getting NodeNames" in m["message"] for r in srun for m in r["reasons"])
