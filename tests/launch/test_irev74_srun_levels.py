"""irev74 (review of the merge of irev73 / imend6 / ifc56 / igap54 in gate.find_launch): srun's GPU options and an
srun nested in another's step were read in the outermost command's words alone, so an srun inside a shell string or
a flock string was not seen (`srun -N1 bash -c "srun python -m sglang.launch_server ..."`, `bash -c "srun
--gpus-per-task=1 python ... --tp 2"`: allowed); and srun's GPU count was compared with tp x pp alone, so a launch
with --dp-size (each DP group takes tp x pp GPUs without DP attention) or --base-gpu-id past the GPUs srun gives
was allowed. Each is unknown now."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = "python3 -m sglang.launch_server --model-path m --tp 2"
#: (imend13) steps inside an allocation (an sbatch script's, an salloc shell's): outside one, an srun with no GPU
#: option starts a job without GPUs (test_imend13_srun_outside_allocation.py)
JOB = {"SLURM_JOB_ID": "4242"}


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load().launch


def _srun(line: list[str], mapping: Any) -> list[str]:
    d = gate.derive(line, mapping, JOB)
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, (line, d.entrypoint)
    return [p.message for p in d.problems if p.subject == "srun" and p.status == "unknown"]


@pytest.mark.parametrize(
    "line",
    [
        ["srun", "-N1", "bash", "-c", f"srun {LAUNCH}"],
        ["srun", "-N1", "bash", "-c", f"cd /x && srun {LAUNCH} 2>&1 | tee log"],
        ["srun", "-N1", "flock", "/tmp/l", "-c", f"srun {LAUNCH}"],
        ["srun", "-N1", "sh", "-c", f"exec env A=1 srun {LAUNCH}"],
        ["srun", "-N1", "su", "svc", "-c", f"srun {LAUNCH}"],
    ],
)
def test_an_srun_nested_across_a_command_string_is_unknown(line: list[str], mapping: Any) -> None:
    # fails before: no srun problem (the inner srun was not read beside the outer one)
    got = _srun(line, mapping)
    assert got and "task of another srun" in got[0], line


@pytest.mark.parametrize(
    "line",
    [
        ["bash", "-c", f"srun --gpus-per-task=1 {LAUNCH}"],
        ["flock", "/tmp/l", "-c", f"srun --gpus=1 {LAUNCH}"],
        ["srun", "--gpus-per-task=1", "bash", "-c", LAUNCH],
        ["nohup", "env", "A=1", "bash", "-c", f"srun -G 1 {LAUNCH}"],
    ],
)
def test_srun_gpus_in_a_command_string_are_read(line: list[str], mapping: Any) -> None:
    # fails before (all but the third): no srun problem
    got = _srun(line, mapping)
    assert got and "GPUs srun gives" in got[0], line


@pytest.mark.parametrize(
    ("flags", "needed"),
    [
        ("--dp-size 2", 4),
        ("--dp 2", 4),
        ("--base-gpu-id 1", 3),
        ("--gpu-id-step 2", 3),
    ],
)
def test_srun_gpus_against_the_devices_the_ranks_take(flags: str, needed: int, mapping: Any) -> None:
    # fails before: 2 GPUs a task were taken as enough for --tp 2 whatever --dp-size / --base-gpu-id
    got = _srun(["srun", "--gpus-per-task=2", *LAUNCH.split(), *flags.split()], mapping)
    assert got and f"fewer than the {needed}" in got[0], flags
    assert not _srun(["srun", f"--gpus-per-task={needed}", *LAUNCH.split(), *flags.split()], mapping)


@pytest.mark.parametrize(
    "line",
    [
        ["srun", "--gpus-per-task=2", *LAUNCH.split(), "--dp-size", "2", "--enable-dp-attention"],
        ["srun", "--gpus-per-task=2", "bash", "-c", LAUNCH],
        ["bash", "-c", f"srun --gpus-per-task=2 {LAUNCH}"],
        ["srun", "-N1", "bash", "-c", f"srun --overlap {LAUNCH}"],
        ["srun", "-N1", "nohup", "env", "A=1", *LAUNCH.split()],
        ["nohup", "env", "A=1", "srun", "-N1", *LAUNCH.split()],
        ["bash", "-c", f"srun -N1 {LAUNCH}"],
    ],
)
def test_launches_srun_serves_are_judged_as_before(line: list[str], mapping: Any) -> None:
    assert not _srun(line, mapping), line
