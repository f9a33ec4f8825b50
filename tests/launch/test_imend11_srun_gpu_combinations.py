"""imend11: srun GPU forms whose count a task sees was taken as the launch's, or not read at all. `--gres=gpu:0` and
`--gres=none` (srun(1) --gres: the step gets no GPUs) were read as "no GPU asked" and allowed; SLURM_GPUS_PER_SOCKET
and SLURM_STEP_GRES (srun's --gpus-per-socket and a step's --gres from its environment: src/srun/opt.c env_vars[],
src/srun/launch.c) were not read; --gpu-bind / --tres-bind / --ntasks-per-gpu (a task bound to some of the step's
GPUs) and --exclusive with no GPU option (an exclusive job's GPUs are not its steps' unless asked) were allowed. Each
is now a count (0: refused as too few) or unknown naming the option; a per-task count given with a total is judged
by both (each task's binding per_task:N, the step's total: the smaller decides)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
#: (imend13) steps inside an allocation (an sbatch script's, an salloc shell's): outside one, an srun with no GPU
#: option starts a job without GPUs (test_imend13_srun_outside_allocation.py)
JOB = {"SLURM_JOB_ID": "4242"}


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _srun(line: list[str], mapping: Any, env: dict[str, str]) -> list[str]:
    problems = gate.derive(line, mapping, {**JOB, **env}).problems
    return [p.message for p in problems if p.subject == "srun" and "GPUs" in p.message]


@pytest.mark.parametrize(
    ("options", "env", "named"),
    [
        (["--gres=gpu:0"], {}, "--gres=gpu:0"),
        (["--gres=none"], {}, "--gres=none"),
        (["--gres=gpu:a100:0"], {}, "--gres=gpu:a100:0"),
        ([], {"SLURM_GRES": "none"}, "SLURM_GRES"),
        ([], {"SLURM_STEP_GRES": "none"}, "SLURM_STEP_GRES"),
        ([], {"SLURM_STEP_GRES": "gpu:1"}, "SLURM_STEP_GRES"),
        ([], {"SLURM_GPUS_PER_SOCKET": "2"}, "SLURM_GPUS_PER_SOCKET"),
        (["--gpus-per-socket=2"], {}, "--gpus-per-socket=2"),
        (["--gpus-per-node=8", "--gpu-bind=closest"], {}, "--gpu-bind=closest"),
        (["--gpu-bind=map_gpu:0"], {}, "--gpu-bind=map_gpu:0"),
        (["--gpu-bind", "verbose,single:1"], {}, "--gpu-bind=verbose,single:1"),
        (["--tres-bind=gres/gpu:single:1"], {}, "--tres-bind"),
        (["--ntasks-per-gpu=1"], {}, "--ntasks-per-gpu=1"),
        ([], {"SLURM_GPU_BIND": "map_gpu:0"}, "SLURM_GPU_BIND"),
        ([], {"SLURM_NTASKS_PER_GPU": "1"}, "SLURM_NTASKS_PER_GPU"),
        (["--exclusive"], {}, "--exclusive"),
        (["--exclusive=user"], {}, "--exclusive"),
        ([], {"SLURM_EXCLUSIVE": "user"}, "SLURM_EXCLUSIVE"),
        (["--gpus-per-task=1", "--gpus=4"], {}, "--gpus-per-task=1"),
        (["--gpus-per-task=2", "--gpus=1"], {}, "--gpus=1"),
    ],
)
def test_refused_or_unknown_naming_the_option(
    options: list[str], env: dict[str, str], named: str, mapping: Any
) -> None:
    got = _srun(["srun", *options, *LAUNCH], mapping, env)
    assert len(got) == 1 and named in got[0], got


@pytest.mark.parametrize(
    ("options", "env"),
    [
        (["--gres=nic:1"], {}),  # (no GPU named: the job's, as with no option)
        (["--gres=gpu:2"], {}),
        (["--gres=gpu:h100:2"], {}),
        (["--gpu-bind=none"], {}),
        (["--gpu-bind=verbose,none", "--gpus-per-task=2"], {}),
        (["--tres-bind=gres/gpu:none"], {}),
        (["--exclusive", "--gpus-per-task=2"], {}),
        (["--exclusive=allocation"], {}),
        (["--exclusive"], {"SLURM_GPUS_PER_TASK": "2"}),
        (["--gpus-per-task=2", "--gpus=2"], {}),
        (["--gres=gpu:2"], {"SLURM_STEP_GRES": "none"}),  # (the line's --gres is the step's: launch.c)
        (["--gpu-bind=none"], {"SLURM_GPU_BIND": "map_gpu:0"}),  # (the line wins)
    ],
)
def test_a_count_srun_makes_certain(options: list[str], env: dict[str, str], mapping: Any) -> None:
    assert _srun(["srun", *options, *LAUNCH], mapping, env) == []


def test_in_a_shell_string(mapping: Any) -> None:
    assert _srun(["bash", "-c", "srun --exclusive " + " ".join(LAUNCH)], mapping, {})
    assert _srun(["bash", "-c", "export SLURM_GPU_BIND=map_gpu:0; srun " + " ".join(LAUNCH)], mapping, {})
