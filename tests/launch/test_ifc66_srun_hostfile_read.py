"""ifc66 (the sixty-sixth fact-check sample, row s3): `env SLURM_JOB_ID=4242 srun -F /nonexistent/hosts python3 -m
sglang.launch_server ... --tp 8` was allowed. srun reads -F's file (and, where neither -F nor -w is given, the file
SLURM_HOSTFILE names) before the step starts: Slurm src/common/slurm_opt.c _validate_nodelist, run from srun/opt.c
through validate_options_salloc_sbatch_srun, exits with 'Invalid --nodefile node file' (exit(-1)) or 'Failure getting
NodeNames from hostfile' (exit(1)) where slurm_read_hostfile (src/api/allocate.c) cannot open it: the server never
starts. Now such a file this host has not blocks the launch; under --facts (the file is the submitting host's, not
read) it is unknown; a file that is there is judged as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.readers.fsview import HostView

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
JOB = {"SLURM_JOB_ID": "4242"}


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _problems(prefix: list[str], env: dict[str, str], mapping: Any, cwd: Path, view: Any = None) -> list[Any]:
    derived = gate.derive([*prefix, *LAUNCH], mapping, env)
    return gate.srun_hostfile_problems(derived, view if view is not None else HostView(), str(cwd), "not read")


@pytest.mark.parametrize(
    ("prefix", "env"),
    [(["srun", "-F", "/nonexistent/hosts"], JOB), (["srun", "--nodefile=/nonexistent/hosts", "-N1"], JOB),
     (["srun", "-F", "hosts"], JOB), (["srun"], {**JOB, "SLURM_HOSTFILE": "/nonexistent/hosts"}),
     (["srun"], {**JOB, "SLURM_HOSTFILE": "hosts"}), (["srun", "-w", "gpu01", "-F", "/nonexistent/hosts"], JOB),
     (["env", "SLURM_HOSTFILE=/nonexistent/hosts", "srun", "-N1"], JOB)],
)  # fmt: skip
def test_a_host_file_srun_cannot_open_blocks(
    prefix: list[str], env: dict[str, str], mapping: Any, tmp_path: Path
) -> None:
    got = _problems(prefix, env, mapping, tmp_path)
    assert [(p.subject, p.status) for p in got] == [("srun", "blocked")]  # fails before: no such problem (allowed)


@pytest.mark.parametrize(
    ("prefix", "env"),
    [(["srun", "-F", "@"], JOB), (["srun", "-F", "hosts"], JOB), (["srun"], {**JOB, "SLURM_HOSTFILE": "@"}),
     (["srun"], {**JOB, "SLURM_HOSTFILE": "hosts"}), (["srun", "-w", "gpu01"], {**JOB, "SLURM_HOSTFILE": "/none"}),
     (["srun", "-N1"], JOB)],
)  # fmt: skip
def test_a_host_file_that_is_there_or_none_read_is_judged_as_before(
    prefix: list[str], env: dict[str, str], mapping: Any, tmp_path: Path
) -> None:
    (tmp_path / "hosts").write_text("gpu01\n")
    at = str(tmp_path / "hosts")
    prefix = [at if w == "@" else w for w in prefix]
    env = {k: at if v == "@" else v for k, v in env.items()}
    assert _problems(prefix, env, mapping, tmp_path) == []


def test_not_read_under_facts_is_unknown(mapping: Any, tmp_path: Path) -> None:
    derived = gate.derive(["srun", "-F", "/etc/slurm/hosts", *LAUNCH], mapping, JOB)
    got = gate.srun_hostfile_problems(derived, None, None, "gate --facts")
    assert [(p.subject, p.status) for p in got] == [("srun", "unknown")]


def test_the_gate_does_not_allow_it(tmp_path: Path) -> None:
    box = release_box(tmp_path, "0.5.23", "9.0")
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["env", "SLURM_JOB_ID=4242", "srun", "-F", "/nonexistent/hosts", "python3", "-m", "sglang.launch_server",
            "--model-path", str(model), "--tp", "2"]  # fmt: skip
    _, doc = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    assert doc["decision"] != "allow"  # fails before: allow
    srun = [r for r in doc["reasons"] if r.get("feature") == "srun"]
    assert srun and srun[0]["status"] == "unknown", doc["reasons"]
    assert "Invalid --nodefile node file" in srun[0]["reasons"][0]["message"]
