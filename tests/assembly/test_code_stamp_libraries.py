"""packaging, jsonschema and rich are in the caches' code stamp, read by their files without importing them (issue 21;
packaging was imported for its __version__ before iperf23)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.assembly import plan_cache


def _fake_package(root: Path, name: str, text: str) -> Path:
    pkg = root / name
    pkg.mkdir(parents=True, exist_ok=True)
    init = pkg / "__init__.py"
    new = pkg / "__init__.py.new"
    new.write_text(text)
    os.replace(new, init)  # as an installer writes it: a new file (a new inode and change time)
    return init


@pytest.mark.parametrize("name", ["packaging", "jsonschema", "rich"])
def test_an_upgrade_of_the_library_is_a_new_code_stamp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    init = _fake_package(tmp_path, name, "__version__ = '1.0'\n")
    before = plan_cache._code_stamp()
    assert [name, str(init)] in [s[:2] for s in before if isinstance(s, list)]
    _fake_package(tmp_path, name, "__version__ = '1.1'\n")
    after = plan_cache._code_stamp()
    assert before != after
    assert plan_cache._code_stamp() == after  # (and the same files give the same stamp)


def test_a_library_not_found_is_stamped_as_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delitem(sys.modules, "rich", raising=False)
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert plan_cache._library_stamp("rich") == ["rich", None]


def test_the_stamp_imports_no_library() -> None:
    code = (
        "import sys; from stackcheck.assembly import plan_cache as p; s = p._code_stamp();"
        "assert not {'packaging', 'jsonschema', 'rich'} & set(sys.modules), sorted(sys.modules);"
        "names = [e[0] for e in s if isinstance(e, list) and e and e[0] in ('packaging', 'jsonschema', 'rich')];"
        "assert names == ['packaging', 'jsonschema', 'rich'], names"
    )
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
