"""Hostile Requires-Dist lines against the lean reader (stackcheck/launch/preflight/lean_req.py): a line packaging
rejects is never read as met or as not applying (packaging's whitespace is space and tab only, where Python's
`\\s` also takes no-break spaces, vertical tabs and the separators), a deeply parenthesised marker goes to
packaging instead of a RecursionError, a long run of blanks is read in linear time, and a version too long for
int() is an unknown of the dependency check, never a traceback."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from packaging.requirements import InvalidRequirement, Requirement

from stackcheck.launch.preflight import deps, lean_req
from stackcheck.readers.fsview import HostView

ENV = lean_req.environment("3.12.3", "x86_64")
ODD_BLANKS = ["\u00a0", "\u3000", "\u2003", "\x0b", "\x0c", "\x1c", "\x1f", "\u2028", "\x85"]
SHAPES = [
    "foo{b}>=1.0",
    "{b}foo>=1.0",
    "foo[{b}x]>=1.0",
    "foo >=1.0{b}; os_name == 'nt'",
    "foo >=1.0 ;{b}os_name == 'nt'",
    "foo >=1.0 ; os_name =={b}'nt'",
    "foo >=1.0 ; os_name == 'nt'{b}",
    "foo >=1.0 ; os_name == 'nt'{b}or os_name == 'java'",
    "foo >=1.0 ; os_name == 'posix'{b}",
]


@pytest.mark.parametrize("blank", ODD_BLANKS, ids=[f"U+{ord(b):04X}" for b in ODD_BLANKS])
@pytest.mark.parametrize("shape", SHAPES)
def test_a_line_packaging_rejects_is_not_read(shape: str, blank: str) -> None:
    line = shape.format(b=blank)
    try:
        Requirement(line)
    except InvalidRequirement:
        assert lean_req.read_line(line, ENV) is None, line
    else:  # packaging reads it: the lean answer, where it gives one, is tested against packaging elsewhere
        pass


def test_deep_parentheses_go_to_packaging() -> None:
    line = "foo ; " + "(" * 3000 + "os_name == 'nt'" + ")" * 3000
    assert lean_req.read_line(line, ENV) is None


def test_a_long_blank_run_is_read_in_linear_time() -> None:
    line = "foo >=1" + " " * 20000 + "x"
    start = time.process_time()
    assert lean_req.read_line(line, ENV) is None
    assert time.process_time() - start < 0.5  # was 9 s on the 2-core box (quadratic backtracking)


def write_dist(site: Path, name: str, version: str, requires: list[str] = ()) -> None:  # type: ignore[assignment]
    d = site / f"{name}-{version[:20]}.dist-info"
    d.mkdir(parents=True)
    body = "".join(f"Requires-Dist: {r}\n" for r in requires)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{body}\nbody\n")


@pytest.mark.parametrize(
    ("line", "installed"),
    [("foo>=1" + "0" * 5000, "2.0"), ("foo>=1.0", "1" + "0" * 5000), ("foo==1" + "0" * 5000, "2.0")],
    ids=["spec", "installed", "pin"],
)
def test_a_version_too_long_for_int_is_unknown(tmp_path: Path, line: str, installed: str) -> None:
    site = tmp_path / "site"
    write_dist(site, "sglang", "0.5.9", [line])
    write_dist(site, "foo", installed)
    results = deps.check_dependencies(HostView(), [str(site)], None, set(), target=("3.12.3", "x86_64"))
    assert [r.status for r in results] == ["unknown"], results
    assert "foo" in results[0].message and "digits" in results[0].message
