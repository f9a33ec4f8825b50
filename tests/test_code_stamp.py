"""The stamp of the code that makes what a cache keeps (stackcheck.paths.code_stamp): one reader for the plan, plan
answer and gate caches' code stamp (assembly.plan_cache._code_stamp), the deep probes' kept answers (readers.kept)
and the manifests kept parsed (knowledge.prepared), each file stat'ed once per process."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from stackcheck import paths
from stackcheck.assembly import plan_cache
from stackcheck.knowledge import loader, prepared
from stackcheck.readers import fatbin, kept


def test_a_file_is_stamped_by_its_size_times_inode_and_device(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("X = 1\n")
    st = path.stat()
    paths.forget_code_stamps()
    assert paths.code_stamp(str(path)) == (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
    line = f"{path} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino} {st.st_dev}"
    assert paths.code_stamp_text(str(path)) == line
    assert paths.code_stamp(str(tmp_path / "absent.py")) is None
    assert paths.code_stamp(str(tmp_path)) is None  # (not a regular file)
    assert paths.code_stamp_text(str(tmp_path / "absent.py")) == f"{tmp_path / 'absent.py'} -"


def test_the_three_caches_stat_each_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    paths.forget_code_stamps()
    real = os.stat
    stated: list[str] = []

    def counted(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        stated.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counted)
    plan_cache._code_stamp()
    kept.code_stamp([fatbin.__file__, kept.__file__])
    prepared.key_of("meta.json", "stamp", loader.__file__)
    plan_cache._code_stamp()
    for module in (fatbin, kept, loader, prepared, plan_cache):
        assert stated.count(str(module.__file__)) == 1, module.__name__
