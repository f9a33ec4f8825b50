"""irev74 (review of igap55's system.memory_limit_bytes): the limit was read from the cgroup mount's root files
alone (/sys/fs/cgroup/memory.max, .../memory/memory.limit_in_bytes), which on a host without a cgroup namespace hold
none; a process in a limited cgroup (a systemd service's MemoryMax / MemoryHigh, a Slurm job's step) was judged
against the whole MemTotal, and a HiCache host pool SGLang 0.5.21+ refuses there (it walks the process's own cgroup
up to the mount, memory.max and memory.high) was allowed. The probe now reads the process's own cgroup and parents."""

from __future__ import annotations

from pathlib import Path

from stackcheck.probes.system import cgroup_limit_files, own_cgroup_memory_limit

GIB = 1 << 30


def _tree(tmp_path: Path, files: dict[str, str], cgroup: str) -> tuple[str, str]:
    mount = tmp_path / "cgroup"
    for rel, text in files.items():
        (mount / rel).parent.mkdir(parents=True, exist_ok=True)
        (mount / rel).write_text(text)
    proc = tmp_path / "proc-self-cgroup"
    proc.write_text(cgroup)
    return str(proc), str(mount)


def test_a_limit_on_the_process_s_own_cgroup_or_a_parent_is_read(tmp_path: Path) -> None:
    proc, mount = _tree(
        tmp_path,
        {
            "system.slice/slurmstepd.scope/job_7/step_0/memory.max": "max\n",
            "system.slice/slurmstepd.scope/job_7/memory.max": f"{64 * GIB}\n",
            "system.slice/slurmstepd.scope/job_7/memory.high": f"{48 * GIB}\n",
            "system.slice/memory.max": "max\n",
        },
        "0::/system.slice/slurmstepd.scope/job_7/step_0\n",
    )
    assert own_cgroup_memory_limit(proc, mount) == 48 * GIB  # (memory.high, the lowest on the way up)


def test_a_v1_memory_controller_is_read(tmp_path: Path) -> None:
    proc, mount = _tree(
        tmp_path,
        {
            "memory/svc.slice/memory.limit_in_bytes": f"{16 * GIB}\n",
            "memory/memory.limit_in_bytes": "9223372036854771712\n",
        },
        "12:cpu,cpuacct:/svc.slice\n11:memory:/svc.slice\n",
    )
    assert own_cgroup_memory_limit(proc, mount) == 16 * GIB


def test_no_limit_or_no_file_is_none(tmp_path: Path) -> None:
    proc, mount = _tree(tmp_path, {"a/memory.max": "max\n"}, "0::/a\n")
    assert own_cgroup_memory_limit(proc, mount) is None
    assert own_cgroup_memory_limit(str(tmp_path / "absent"), mount) is None
    assert cgroup_limit_files("0::/../etc\n", "/m") == []
    assert cgroup_limit_files("0::/\n", "/m") == ["/m/memory.max", "/m/memory.high"]
