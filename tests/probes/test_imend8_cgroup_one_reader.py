"""imend8: the system probe read the cgroup roots' limit files twice (cgroup_memory_limit over CGROUP_LIMITS, then
own_cgroup_memory_limit's walk, whose top is the same files). Now one reader: the walk from the process's cgroup up to
the root, with the roots (CGROUP_LIMITS) added where the walk does not reach them, and alone where /proc/self/cgroup
is not read; each file opened once."""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes import system
from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.system import SystemProbe, own_cgroup_memory_limit

GIB = 1 << 30


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_roots_are_read_where_proc_self_cgroup_is_not(tmp_path: Path) -> None:
    mount = tmp_path / "cg"
    _write(mount / "memory.max", f"{32 * GIB}\n")
    assert own_cgroup_memory_limit(str(tmp_path / "absent"), str(mount)) == 32 * GIB
    _write(mount / "memory" / "memory.limit_in_bytes", f"{8 * GIB}\n")
    assert own_cgroup_memory_limit(str(tmp_path / "absent"), str(mount)) == 8 * GIB


def test_a_v1_root_is_read_beside_a_v2_walk(tmp_path: Path) -> None:
    mount = tmp_path / "cg"
    _write(tmp_path / "cgroup", "0::/a\n")
    _write(mount / "a" / "memory.max", f"{64 * GIB}\n")
    _write(mount / "memory" / "memory.limit_in_bytes", f"{16 * GIB}\n")
    assert own_cgroup_memory_limit(str(tmp_path / "cgroup"), str(mount)) == 16 * GIB


def test_each_limit_file_is_opened_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real_open = builtins.open

    def counting_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(system, "open", counting_open, raising=False)
    mount = tmp_path / "cg"
    _write(tmp_path / "cgroup", "0::/\n4:memory:/\n")
    _write(mount / "memory.max", f"{4 * GIB}\n")
    assert own_cgroup_memory_limit(str(tmp_path / "cgroup"), str(mount)) == 4 * GIB
    limits = [p for p in opened if p.startswith(str(mount))]
    assert limits and len(limits) == len(set(limits))
    opened.clear()
    SystemProbe().run(ProbeContext(env={}))  # (this host: the probe's own reading)
    limits = [p for p in opened if p.startswith("/sys/fs/cgroup")]
    assert limits and len(limits) == len(set(limits)), limits
