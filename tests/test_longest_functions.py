"""tools/longest_functions.py: the lengths it reports are the source lines of each function, on a package
written by the test, and the real package is listed longest first."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType

import pytest

TOOL = Path(__file__).resolve().parent.parent / "tools" / "longest_functions.py"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("longest_functions", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["longest_functions"] = module  # NamedTuple needs its module while the class is built
    spec.loader.exec_module(module)
    return module


SOURCE = '''\
def short():
    return 1


@decorator
def decorated(x):
    """Two lines of docstring
    here."""
    return x


class Box:
    def method(self):
        def inner():
            pass

        return inner
'''


def test_lengths_names_and_lines_of_a_written_package(tmp_path: Path) -> None:
    tool = _tool()
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "m.py").write_text(SOURCE, encoding="utf-8")
    got = [(f.name, f.path, f.line, f.lines) for f in tool.longest(pkg, tmp_path)]
    assert got == [
        ("decorated", "pkg/m.py", 6, 5),  # from the decorator line (5) to `return x` (9)
        ("Box.method", "pkg/m.py", 13, 5),
        ("short", "pkg/m.py", 1, 2),
        ("Box.method.<locals>.inner", "pkg/m.py", 14, 2),
    ]


def test_the_package_is_listed_longest_first(capsys: pytest.CaptureFixture[str]) -> None:
    tool = _tool()
    rows = tool.longest()
    assert len(rows) > 500 and all(a.lines >= b.lines for a, b in itertools.pairwise(rows))
    assert tool.main(["-n", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 5 and out[2].startswith(f"| {rows[0].lines} | `{rows[0].name}` | `stackcheck/")
    over = rows[0].lines - 1
    assert tool.main(["--over", str(over)]) == 1
    assert tool.main(["--over", str(rows[0].lines)]) == 0
    assert capsys.readouterr().out.endswith(f"no function over {rows[0].lines} lines\n")
