"""imend10: srun's options were read separately by srun_gpus, srun_env_gpus, _srun_copies, _other_cgroup and
_srun_spread (srun_options and _srun_counts, each after a read_runner of its own); runners.srun_line reads them once
into one record (SrunLine), in one walk_options walk, and each reader takes it. An option spelled in each way srun
accepts (`--gpus=2`, `--gpus 2`, `-G2`, `-G 2`, SLURM_GPUS in its environment, and the same for -n, -N, --mem) gives
the same answer to all five readers."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import srun_line

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "4"]
SPELLINGS: dict[str, tuple[list[str], dict[str, str]]] = {
    "--name=value": (["--gpus=2", "--ntasks=4", "--nodes=1", "--mem=4G"], {}),
    "--name value": (["--gpus", "2", "--ntasks", "4", "--nodes", "1", "--mem", "4G"], {}),
    "-Xvalue": (["-G2", "-n4", "-N1", "--mem=4G"], {}),
    "-X value": (["-G", "2", "-n", "4", "-N", "1", "--mem", "4G"], {}),
    "a cluster": (["-vG2", "-ln4", "-uN", "1", "--mem=4G"], {}),
    "the environment": (
        [],
        {"SLURM_GPUS": "2", "SLURM_NTASKS": "4", "SLURM_NNODES": "1", "SLURM_MEM_PER_NODE": "4G"},
    ),
}


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_each_spelling_gives_every_reader_the_same_answer(spelling: str, mapping: Any) -> None:
    options, env = SPELLINGS[spelling]
    argv = ["srun", *options, *LAUNCH]
    line = srun_line(argv, 0)
    assert line.command == len(options) + 1 and line.unsure is None
    counts = [count for _, count in gate.srun_gpus([line]) + gate.srun_env_gpus(line, env)]
    assert counts == [2]  # (the line's --gpus, or SLURM_GPUS where the line gives none)
    assert gate._srun_copies(line, env) == "-n 4 on -N 1"
    assert gate._srun_spread([line], env) == "-n 4"
    assert gate._other_cgroup(argv, env) is not None and "memory limit" in str(gate._other_cgroup(argv, env))
    # and the gate's decision reads them alike: srun's GPUs (2 < --tp 4) and its copies refuse the launch
    problems = gate.derive(argv, mapping, env).problems
    assert [p.subject for p in problems if p.subject == "srun"] == ["srun", "srun"], problems


def test_the_record_is_read_once_for_each_srun(mapping: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from stackcheck.launch import runners

    read: list[int] = []
    real = runners.srun_line

    def counted(argv: Any, at: int) -> Any:
        read.append(at)
        return real(argv, at)

    monkeypatch.setattr(runners, "srun_line", counted)
    argv = ["srun", "-n2", "-G1", *LAUNCH]
    gate.derive(argv, mapping, {"SLURM_NNODES": "1"})
    # (the walk to the launch: srun's copies and GPU options from one reading; the decision: its GPUs and spread
    # from one more; srun_options' readers (env policy, root change) one each. Before: eight readings, each after a
    # read_runner of its own)
    assert len(read) <= 5 and set(read) == {0}, read
