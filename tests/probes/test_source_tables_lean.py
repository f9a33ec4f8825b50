"""Issue 21 (iperf24): the source-tables probe imports its reader only where some gate has something to read, and
answers exactly as the reader does everywhere; --deep's library reader imports subprocess only for `ldconfig -p`."""

from __future__ import annotations

from typing import Any

import pytest
from probes.test_probe_start_imports import _modules_after

from stackcheck.knowledge.loader import load
from stackcheck.probes.packages import normalise
from stackcheck.probes.source_tables import package_locations, probe_source_tables
from stackcheck.readers.sourcetables import normalise_name, read_source_tables


def _packages(*installed: str) -> dict[str, Any]:
    out: dict[str, Any] = {"nvidia-ml-py": {"installed": True, "location": "/nowhere/site"}}
    out["torch"] = {"installed": False}
    for name in installed:
        out[name] = {"installed": True, "location": "/nowhere/site"}
    return {"packages": out}


def test_no_gate_package_installed_does_not_import_the_reader() -> None:
    code = (
        "from stackcheck.probes.source_tables import probe_source_tables\n"
        "from stackcheck.knowledge.loader import load\n"
        "facts = {'packages': {'torch': {'installed': True, 'location': '/nowhere'}, 'sglang': {'installed': False}}}\n"
        "assert probe_source_tables(facts, load([], env={}).gates) == {}\n"
    )
    assert "stackcheck.readers.sourcetables" not in _modules_after(code)


def test_the_library_reader_imports_subprocess_only_for_ldconfig() -> None:
    assert "subprocess" not in _modules_after("import stackcheck.readers.libs")


SHIPPED = load([], env={}).gates
NAMES = sorted({g["package"] for g in SHIPPED if isinstance(g.get("package"), str)})


@pytest.mark.parametrize(
    "gates",
    [
        SHIPPED,
        [],
        [{"id": "g", "probe": {"kind": "x"}}],  # no package: an error reading
        [{"id": "g", "probe": {"kind": "x"}, "package": ""}],
        [{"id": "g", "package": "sglang"}],  # no probe: left out
        [{"id": 3, "probe": {}, "package": "sglang"}],
        [{"id": "g", "probe": {}, "package": "Flashinfer_Python"}],
        [{"id": "g", "probe": {}, "package": "not-installed-here"}],
    ],
)
@pytest.mark.parametrize("installed", [(), ("sglang",), ("flashinfer_python",), ("SGL.Kernel",), tuple(NAMES)])
def test_the_answer_is_the_readers(gates: list[dict[str, Any]], installed: tuple[str, ...]) -> None:
    facts = _packages(*installed)
    want = dict(read_source_tables(gates, package_locations(facts), None))
    assert probe_source_tables(facts, gates) == want


@pytest.mark.parametrize("name", ["Flashinfer_Python", "sgl.kernel__x", "a-_.b", "A", "x..y", "-_-", "nvidia_cuda"])
def test_the_packages_normaliser_is_the_readers(name: str) -> None:
    assert normalise(name) == normalise_name(name)


def test_the_reader_itself_imports_no_ast_nor_typing() -> None:
    """(tests/test_startup.py's live-audit tests no longer import the reader on an empty root: this holds what they
    held of it, where a gate package is installed)"""
    bare = _modules_after("pass")
    got = _modules_after("import stackcheck.readers.sourcetables") - bare
    assert "stackcheck.readers.sourcetables" in got
    assert "ast" not in got and "_ast" not in got and "typing" not in got
