"""irobust13: an srun given a job id it does not read (SLURM_JOB_ID or --jobid set to a name, empty, 0, with a sign
or a blank, past 2^31 - 1) exits before running its command: Slurm reads SLURM_JOB_ID as --jobid (src/srun/opt.c
env_vars[]) and arg_set_jobid's reader is fatal on a bad id ("Bad job/step specified"; 20.11's parse_int likewise). The
gate took any non-empty SLURM_JOB_ID, and any --jobid value, as a step inside a running job and allowed the launch (a
false pass: nothing runs). Now unknown; a positive decimal id is judged as before. An srun run as another srun's task
is not held to its environment's id (the outer srun sets it to its own job's)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "1"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _job_id(line: list[str], mapping: Any, env: dict[str, str]) -> list[str]:
    d = gate.derive(line, mapping, env)
    assert d.entrypoint == "launch-server", line
    return [p.message for p in d.problems if p.subject == "srun" and "job id" in p.message]


@pytest.mark.parametrize(
    ("prefix", "env"),
    [(["srun"], {"SLURM_JOB_ID": "junk"}), (["srun"], {"SLURM_JOB_ID": "0"}), (["srun"], {"SLURM_JOB_ID": " 42"}),
     (["srun"], {"SLURM_JOB_ID": "+42"}), (["srun"], {"SLURM_JOB_ID": "9" * 12}), (["srun"], {"SLURM_JOB_ID": ""}),
     (["srun", "--jobid=abc"], {}), (["srun", "--jobid="], {}), (["srun", "--jobid", ""], {}),
     (["srun", "--jobi=x1"], {}), (["srun", "--jobid=4242", "--jobid=-1"], {}),
     (["srun", "--jobid=4242"], {"SLURM_JOB_ID": "abc"}),  # (the environment is read first, and is fatal)
     (["env", "SLURM_JOB_ID=abc", "srun"], {}), (["bash", "-c", "srun"], {"SLURM_JOB_ID": "x"})],
)  # fmt: skip
def test_a_job_id_srun_refuses_is_unknown(prefix: list[str], env: dict[str, str], mapping: Any) -> None:
    line = [*prefix, *LAUNCH] if prefix[0] != "bash" else ["bash", "-c", " ".join([prefix[2], *LAUNCH])]
    got = _job_id(line, mapping, env)
    assert len(got) == 1 and "does not read as one" in got[0], got  # (fails before: [], allowed)


def test_an_empty_job_id_is_no_job_of_its_own(mapping: Any) -> None:
    # (srun takes SLURM_JOB_ID set at all as a step's, opt.c is_step, and exits on the empty id: imend13 read it as an
    # srun outside an allocation)
    d = gate.derive(["srun", *LAUNCH], mapping, {"SLURM_JOB_ID": ""})
    got = [p.message for p in d.problems if p.subject == "srun"]
    assert len(got) == 1 and "job id SLURM_JOB_ID ``" in got[0], got


@pytest.mark.parametrize(
    ("prefix", "env"),
    [(["srun"], {"SLURM_JOB_ID": "4242"}), (["srun", "--jobid=4242"], {}), (["srun", "--jobid", "2147483647"], {}),
     (["srun", "-G", "1"], {}), (["env", "-u", "SLURM_JOB_ID", "srun", "-G1"], {"SLURM_JOB_ID": "junk"}),
     # (the inner srun runs as the outer one's task: its SLURM_JOB_ID is the outer job's)
     (["srun", "-N1", "-G1", "--jobid=7", "srun", "--overlap"], {})],
)  # fmt: skip
def test_a_job_id_srun_reads_is_judged_as_before(prefix: list[str], env: dict[str, str], mapping: Any) -> None:
    assert _job_id([*prefix, *LAUNCH], mapping, env) == []
