"""imend13 (imend12's item 6): `srun python -m sglang.launch_server ...` with no GPU option, run where no allocation
is (no SLURM_JOB_ID in srun's environment, no --jobid), was allowed. srun then starts a job of its own (Slurm
src/srun/opt.c is_step, srun_job.c existing_allocation), and a job holds no GPU it does not ask for (gres.html
Running Jobs): the server's step has none (cgroup ConstrainDevices hides the node's, or CUDA_VISIBLE_DEVICES is
NoDevFiles before 20.02). Now unknown; a step inside an allocation (SLURM_JOB_ID set: an sbatch script's, an salloc
shell's, another srun's task) and an srun asking for GPUs are judged as before.

`gate --facts` reads srun's environment from the gate's own (os.environ), with what `env` words on the line do to it:
the facts document carries no environment of the box it was saved on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
JOB = {"SLURM_JOB_ID": "4242"}
#: what salloc puts in the shell it starts (src/common/env.c env_array_for_job; set_env_from_opts for --gpus*), of a
#: one-node allocation without a GPU option, written here by hand
SALLOC = {"SLURM_JOB_ID": "4242", "SLURM_JOBID": "4242", "SLURM_JOB_NUM_NODES": "1", "SLURM_NNODES": "1",
          "SLURM_JOB_NODELIST": "gpu01", "SLURM_NODELIST": "gpu01", "SLURM_JOB_CPUS_PER_NODE": "64",
          "SLURM_CLUSTER_NAME": "c1", "SLURM_JOB_NAME": "interactive"}  # fmt: skip


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _srun(line: list[str], mapping: Any, env: dict[str, str]) -> list[str]:
    d = gate.derive(line, mapping, env)
    assert d.entrypoint == "launch-server", line
    return [p.message for p in d.problems if p.subject == "srun"]


@pytest.mark.parametrize(
    ("prefix", "env"),
    [
        (["srun"], {}),
        (["srun", "-N1", "-n1"], {}),
        (["srun", "--gres=nic:1"], {}),  # (no GPU named: the new job has none)
        (["srun", "--tres-per-task=cpu=4"], {}),
        (["srun", "--exclusive=allocation"], {}),
        (["srun"], {"SLURM_JOBID": "4242"}),  # (no input variable of srun since 19.05: fa5e42fdf2)
        (["srun"], {"SLURM_JOB_ID_HET_GROUP_0": "4242"}),  # (not read as a twin: opt.c _opt_env)
        (["env", "-u", "SLURM_JOB_ID", "srun"], JOB),
        (["nohup", "srun", "-N1"], {"PATH": "/usr/bin"}),
        (["bash", "-c", "srun -N1 true; srun"], {}),  # (the first srun is a command of its own, not the launch's)
    ],
)
def test_no_gpu_option_outside_an_allocation_is_unknown(prefix: list[str], env: dict[str, str], mapping: Any) -> None:
    # fails before: no srun problem (allowed)
    if prefix[0] == "bash":
        line = ["bash", "-c", prefix[2] + " " + " ".join(LAUNCH)]
    else:
        line = [*prefix, *LAUNCH]
    got = _srun(line, mapping, env)
    assert len(got) == 1 and "outside an allocation" in got[0] and got[0].startswith("srun with no GPU"), got


@pytest.mark.parametrize(
    ("prefix", "env"),
    [
        (["srun", "--gpus-per-task=2"], {}),
        (["srun", "-G", "2"], {}),
        (["srun", "--gres=gpu:h100:2"], {}),
        (["srun", "--tres-per-task=gres/gpu=2"], {}),
        (["srun"], {"SLURM_GPUS_PER_TASK": "2"}),
        (["srun", "--jobid=4242"], {}),  # (a step of that job: allocate.c existing_allocation)
        (["srun", "--jobi", "4242"], {}),  # (getopt_long's unique prefix)
        (["srun"], JOB),
        (["srun", "-N1"], SALLOC),
        (["env", "SLURM_JOB_ID=4242", "srun"], {}),
        # (an srun run as another srun's task is inside that srun's job: its task environment has SLURM_JOB_ID)
        (["srun", "-N1", "--gpus-per-node=2", "srun", "--overlap"], {}),
    ],
)
def test_gpus_asked_or_inside_an_allocation_is_judged_as_before(
    prefix: list[str], env: dict[str, str], mapping: Any
) -> None:
    assert _srun([*prefix, *LAUNCH], mapping, env) == [], prefix


def test_an_srun_in_a_string_run_by_another_is_inside_its_job(mapping: Any) -> None:
    line = ["srun", "-N1", "--gpus-per-node=2", "bash", "-c", "srun --overlap " + " ".join(LAUNCH)]
    assert _srun(line, mapping, {}) == []
    line = ["srun", "-N1", "bash", "-c", "srun --overlap " + " ".join(LAUNCH)]  # (the outer job: no GPU)
    got = _srun(line, mapping, {})
    assert len(got) == 1 and "outside an allocation" in got[0], got


def test_salloc_gpus_are_the_steps(mapping: Any) -> None:
    # (salloc --gpus-per-node=1: SLURM_GPUS_PER_NODE in its shell, srun's input variable)
    got = _srun(["srun", *LAUNCH], mapping, {**SALLOC, "SLURM_GPUS_PER_NODE": "1"})
    assert len(got) == 1 and "SLURM_GPUS_PER_NODE" in got[0] and "fewer than the 2" in got[0], got
    assert _srun(["srun", *LAUNCH], mapping, {**SALLOC, "SLURM_GPUS_PER_NODE": "2"}) == []


def test_gate_facts_reads_its_own_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = model_dir(tmp_path, "m", LLAMA3)
    facts = release_box(tmp_path, "0.5.23", "9.0")
    line = ["srun", "python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1"]
    args = ["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--"]
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    doc = cli_json([*args, *line])[1]
    outside = [r for r in doc.get("reasons") or [] if "outside an allocation" in str(r)]
    assert doc["decision"] != "allow" and outside, doc.get("reasons")
    # (the job's id given on the line, or in the gate's environment: a step inside it)
    doc = cli_json([*args, "env", "SLURM_JOB_ID=4242", *line])[1]
    assert not [r for r in doc.get("reasons") or [] if "outside an allocation" in str(r)], doc.get("reasons")
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    doc = cli_json([*args, *line])[1]
    assert not [r for r in doc.get("reasons") or [] if "outside an allocation" in str(r)], doc.get("reasons")
