"""irev80: srun reads each of its input variables also as NAME_PACK_GROUP_0 and NAME_HET_GROUP_0, the later one
winning (Slurm src/srun/opt.c _opt_env, master 284c3b95f0 :656-683, over env_vars[] :546-640: SLURM_NPROCS and
SLURM_NTASKS are -n, SLURM_NTASKS_PER_NODE --ntasks-per-node, SLURM_WORKING_DIR -D). imend11 read the GPU options and
-N that way (gate._env_option), but irev78's -D check and the task counts of _srun_copies / _srun_spread read the
plain name alone: `SLURM_WORKING_DIR_HET_GROUP_0=/co srun python -m sglang.launch_server ...` was judged from the
gate's own directory, and two tasks from SLURM_NTASKS_HET_GROUP_0 as one copy on one node (both allowed)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.gate import unplaced_before
from stackcheck.launch.runners import srun_line

LAUNCH = ["/srv/bin/python", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize("name", ["SLURM_WORKING_DIR_HET_GROUP_0", "SLURM_WORKING_DIR_PACK_GROUP_0"])
def test_working_dir_of_a_group_is_unknown(name: str, mapping: Any) -> None:
    argv = ["srun", "-n1", *LAUNCH]
    got = unplaced_before(argv, 2, {name: "/co"}, mapping)  # (fails before: None, placed)
    assert got is not None and got.subject == "srun" and got.status == "unknown", got


@pytest.mark.parametrize(
    "env",
    [
        {"SLURM_NTASKS_HET_GROUP_0": "2"},
        {"SLURM_NPROCS_PACK_GROUP_0": "2"},
        {"SLURM_NTASKS": "1", "SLURM_NTASKS_HET_GROUP_0": "2"},  # (the group's value read after the plain one)
    ],
)
def test_tasks_of_a_group_are_counted(env: dict[str, str]) -> None:
    line = srun_line(["srun", *LAUNCH], 0)
    assert gate._srun_copies(line, env) == "-n 2 without -N"  # (fails before: None)
    assert gate._srun_spread([line], env) == "-n 2"


def test_tasks_per_node_of_a_group() -> None:
    line = srun_line(["srun", *LAUNCH], 0)
    assert gate._srun_copies(line, {"SLURM_NTASKS_PER_NODE_HET_GROUP_0": "2"}) == "--ntasks-per-node 2"


def test_the_line_still_wins_and_one_task_passes() -> None:
    line = srun_line(["srun", "-n1", *LAUNCH], 0)
    assert gate._srun_copies(line, {"SLURM_NTASKS_HET_GROUP_0": "2"}) is None
    assert gate._srun_spread([line], {"SLURM_NTASKS_HET_GROUP_0": "2"}) is None
    plain = srun_line(["srun", *LAUNCH], 0)
    assert gate._srun_copies(plain, {"SLURM_NTASKS_HET_GROUP_0": "1"}) is None
    # (NPROCS is listed before NTASKS in env_vars[]: NTASKS's groups win over NPROCS's)
    assert gate._srun_copies(plain, {"SLURM_NPROCS_HET_GROUP_0": "2", "SLURM_NTASKS_HET_GROUP_0": "1"}) is None
