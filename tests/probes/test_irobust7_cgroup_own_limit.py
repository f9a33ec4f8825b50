"""irobust7: the system probe read the memory limit of the cgroup roots only (/sys/fs/cgroup/memory.max, v1's
memory/memory.limit_in_bytes), not of the cgroup this process is in: on a host, a process in a Slurm job's or a
systemd slice's cgroup (/proc/self/cgroup `0::/system.slice/job.scope`, v1 `4:memory:/slurm/uid_1/job_2`) has its
limit in that cgroup's file, and the root's says none (or is absent under v2), so facts gave no limit and a HiCache
host pool beyond the job's memory was judged on the whole host's (refusal hicache-host-pool-memory allowed it). The
kernel holds the process to the lowest limit from its cgroup up to the root; now each of those files is read and
the lowest kept."""

from __future__ import annotations

from pathlib import Path

from stackcheck.probes.system import cgroup_limit_files, cgroup_memory_limit, own_cgroup_memory_limit

GB = 10**9


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_v2_jobs_limit_is_read(tmp_path: Path) -> None:
    root = tmp_path / "cg"
    _write(tmp_path / "cgroup", "0::/system.slice/job.scope\n")
    _write(root / "system.slice" / "job.scope" / "memory.max", f"{100 * GB}\n")
    _write(root / "system.slice" / "memory.max", "max\n")
    assert own_cgroup_memory_limit(str(tmp_path / "cgroup"), str(root)) == 100 * GB


def test_a_v1_jobs_limit_and_the_lowest_ancestor(tmp_path: Path) -> None:
    root = tmp_path / "cg"
    _write(tmp_path / "cgroup", "9:cpu,cpuacct:/slurm\n4:memory:/slurm/uid_1/job_2\n1:name=systemd:/\n")
    _write(root / "memory" / "slurm" / "uid_1" / "job_2" / "memory.limit_in_bytes", f"{500 * GB}\n")
    _write(root / "memory" / "slurm" / "uid_1" / "memory.limit_in_bytes", f"{200 * GB}\n")
    _write(root / "memory" / "memory.limit_in_bytes", "9223372036854771712\n")
    assert own_cgroup_memory_limit(str(tmp_path / "cgroup"), str(root)) == 200 * GB


def test_odd_cgroup_files_are_no_limit(tmp_path: Path) -> None:
    root = tmp_path / "cg"
    _write(tmp_path / "cgroup", "0::/a/../../b\nnonsense\n0::relative\n" + "0::/" + "/x" * 5000 + "\n")
    _write(root / "a" / "memory.max", "-1\n")
    _write(root / "b" / "memory.max", "１２３\n")  # (fullwidth digits: no number the kernel writes)
    # (at the merge with irev74, whose reader of the own cgroup (memory.max and memory.high) took the place of
    # irobust7's twin: the same files, a path deeper than 64 levels skipped)
    files = cgroup_limit_files((tmp_path / "cgroup").read_text(), str(root))
    assert all(f.startswith(str(root)) for f in files) and len(files) <= 2 * 3 + 2
    assert cgroup_memory_limit(tuple(files)) == (None, False)
    assert own_cgroup_memory_limit(str(tmp_path / "cgroup"), str(root)) is None
    assert own_cgroup_memory_limit(str(tmp_path / "absent"), str(root)) is None
