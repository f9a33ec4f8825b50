"""imend19: runners.process_limits read the gate's own affinity (sched_getaffinity), so a gate started under
`taskset -c 0` blocked `taskset -c 1 python -m sglang.launch_server ...`, though the kernel lets a process name any
CPU of its cpuset (sched_setaffinity). The CPUs are now the cgroup's cpuset (v2 cpuset.cpus.effective, else v1
cpuset.effective_cpus), read under a root; neither read: absent (the gate says unknown)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stackcheck.launch.runners import cgroup_cpus, process_limits


def _tree(root: Path, cgroup: str, files: dict[str, str]) -> str:
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/cgroup").write_text(cgroup)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return str(root)


def test_v2_reads_the_cgroups_effective_cpus(tmp_path: Path) -> None:
    root = _tree(tmp_path, "0::/job.slice/a.scope\n",
                 {"sys/fs/cgroup/job.slice/a.scope/cpuset.cpus.effective": "0-3,8,10-11\n"})  # fmt: skip
    assert cgroup_cpus(root) == frozenset({0, 1, 2, 3, 8, 10, 11})
    assert process_limits(root)["cpus"] == frozenset({0, 1, 2, 3, 8, 10, 11})


def test_v1_reads_the_cpuset_hierarchy(tmp_path: Path) -> None:
    root = _tree(tmp_path, "4:memory:/x\n3:cpuset,cpu:/docker/abc\n0::/\n",
                 {"sys/fs/cgroup/cpuset/docker/abc/cpuset.effective_cpus": "2-5\n"})  # fmt: skip
    assert cgroup_cpus(root) == frozenset({2, 3, 4, 5})


def test_not_the_gates_own_affinity(tmp_path: Path) -> None:
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no sched_getaffinity")
    own = os.sched_getaffinity(0)
    wide = f"0-{max(own) + 4}\n"
    root = _tree(tmp_path, "0::/\n", {"sys/fs/cgroup/cpuset.cpus.effective": wide})
    got = process_limits(root)["cpus"]
    assert got == frozenset(range(max(own) + 5)) and got != frozenset(own)  # fails before: the gate's affinity


@pytest.mark.parametrize(
    ("cgroup", "files"),
    [
        ("0::/a\n", {}),  # no cpuset file
        ("0::/a\n", {"sys/fs/cgroup/a/cpuset.cpus.effective": "\n"}),  # an empty set
        ("0::/a\n", {"sys/fs/cgroup/a/cpuset.cpus.effective": "0-x\n"}),  # not a CPU list
        ("0::/../../b\n", {"sys/fs/cgroup/cpuset.cpus.effective": "0-3\n"}),  # outside the namespace's root
        ("garbage\n", {"sys/fs/cgroup/cpuset.cpus.effective": "0-3\n"}),
    ],
)
def test_neither_read_is_absent_never_a_guess(tmp_path: Path, cgroup: str, files: dict[str, str]) -> None:
    root = _tree(tmp_path, cgroup, files)
    assert cgroup_cpus(root) is None
    assert "cpus" not in process_limits(root)  # fails before: the gate's own affinity


def test_no_proc_is_absent(tmp_path: Path) -> None:
    assert "cpus" not in process_limits(str(tmp_path))
