"""ifc58 (the fifty-eighth sample's rows w2 and w3): two programs igap54 reads as running the launch unchanged here can
exit before running it, on what the facts do not record.

- Open MPI's mpirun, run as root (euid 0), prints a warning and exits 1 unless --allow-run-as-root is given or both
  OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are set (open-mpi/ompi PR 6911, orterun.c /
  orte_submit.c): root is the usual user of SGLang's containers, and the facts do not say who runs the launch.
- perf record / stat open their events first and exit without running the command where the kernel refuses them
  (perf_event_paranoid 4, Ubuntu's default, for a user without CAP_PERFMON; a container's seccomp profile).

Before, `mpirun -np 1 --bind-to none python -m sglang.launch_server ...` and `perf record -- python -m ...` were allowed
on h200-newest. The command lines are written here (no upstream file)."""

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


def _of(line: list[str], mapping: Any, subject: str, env: dict[str, str] | None = None) -> list[tuple[str, str]]:
    d = gate.derive(line, mapping, env or {})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, (line, d.entrypoint)
    return [(p.subject, p.status) for p in d.problems if p.subject == subject]


@pytest.mark.parametrize(
    "prefix",
    [["mpirun", "-np", "1"], ["mpirun", "-np", "1", "--bind-to", "none"], ["mpiexec", "-n", "1"],
     ["mpirun", "-H", "localhost", "-np", "1"], ["nohup", "mpirun", "--np", "1", "--"]],
)  # fmt: skip
def test_mpirun_without_leave_to_run_as_root_is_unknown(prefix: list[str], mapping: Any) -> None:
    # fails before: no problem (judged as if mpirun were absent)
    name = next(w for w in prefix if w.startswith("mpi"))
    got = _of([*prefix, *LAUNCH], mapping, name)
    assert got == [(name, "unknown")]
    message = next(p.message for p in gate.derive([*prefix, *LAUNCH], mapping, {}).problems if p.subject == name)
    assert "--allow-run-as-root" in message and "root" in message


@pytest.mark.parametrize(
    ("prefix", "env"),
    [(["mpirun", "--allow-run-as-root", "-np", "1"], {}), (["mpirun", "-np", "1", "-allow-run-as-root"], {}),
     (["mpirun", "-np", "1"], {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})],
)  # fmt: skip
def test_mpirun_let_run_as_root_is_judged(prefix: list[str], env: dict[str, str], mapping: Any) -> None:
    assert _of([*prefix, *LAUNCH], mapping, "mpirun", env) == []


def test_one_of_the_two_variables_is_not_enough(mapping: Any) -> None:
    for env in ({"OMPI_ALLOW_RUN_AS_ROOT": "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"},
                {"OMPI_ALLOW_RUN_AS_ROOT": "yes", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}):  # fmt: skip
        assert _of(["mpirun", "-np", "1", *LAUNCH], mapping, "mpirun", env) == [("mpirun", "unknown")], env


@pytest.mark.parametrize(
    "prefix",
    [["perf", "record", "--"], ["perf", "record", "-g", "-o", "/tmp/p.data", "--"], ["perf", "stat", "--"],
     ["perf", "stat", "-e", "cycles", "--"], ["nice", "perf", "record", "--"]],
)  # fmt: skip
def test_perf_is_unknown(prefix: list[str], mapping: Any) -> None:
    # fails before: no problem
    got = _of([*prefix, *LAUNCH], mapping, "perf")
    assert got == [("perf", "unknown")]
    message = next(p.message for p in gate.derive([*prefix, *LAUNCH], mapping, {}).problems if p.subject == "perf")
    assert "perf_event_paranoid" in message


@pytest.mark.parametrize(
    "prefix",
    [["mpirun", "-np", "1", "--bind-to", "none"], ["perf", "record", "--"], ["perf", "stat", "-e", "cycles", "--"]],
)
def test_the_gate_no_longer_allows_them(prefix: list[str], tmp_path: Path) -> None:
    # fails before: allow (rows w2 and w3 of the sample)
    base = ["gate", "--facts", str(H200), "--dry-run", "--format", "json", "--"]
    # (a model the gate reads: with /m unread, --attention-backend fa3 is unknown since imodel2, as the model may be
    # Gemma 4, whose attention backends SGLang 0.5.13-0.5.23 assert without fa3)
    model = model_dir(tmp_path, "llama", LLAMA3)
    line = ["python", "-m", "sglang.launch_server", "--model-path", str(model), "--attention-backend", "fa3"]
    rc, doc = cli_json([*base, *prefix, *line])
    assert (rc, doc["decision"]) == (1, "refuse"), json.dumps(doc)[:400]
    rc, doc = cli_json([*base, "mpirun", "--allow-run-as-root", "-np", "1", "--bind-to", "none", *line])
    # (igap56: refused too under --facts, now for the installation's default hostfile, which is not read there)
    assert (rc, doc["decision"]) == (1, "refuse")
    assert "--allow-run-as-root" not in json.dumps([p for p in doc.get("problems", []) if p.get("subject") == "mpirun"])
    rc, doc = cli_json([*base, *line])
    assert (rc, doc["decision"]) == (0, "allow")
