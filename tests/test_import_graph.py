"""The import graph of the stackcheck package, read from the source (module-level imports and the imports
inside functions, TYPE_CHECKING ones too) has no cycle. (Issue 19 phase 2 listed five; phase 4 broke them
by moving the shared piece down: Options into options.py (now commands/arguments.py), the shipped data
readers into package_data.py (now knowledge/), the NVML reader into probes/nvml_read.py, the image's own
description into image/info.py, the verdicts' typed shapes into verdict_types.py (now verdicts/types.py),
and the parser gets the verbs from cli.py as an argument.)"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "stackcheck"


def _modules() -> dict[str, Path]:
    out = {}
    for f in PACKAGE.rglob("*.py"):
        parts = list(f.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = f
    return out


def import_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports anywhere in its source."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        here = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else []))
                names = [base, *(f"{base}.{a.name}" for a in node.names)]
            for name in names:
                while name and name not in mods:  # `from pkg import name`: a module, else the package
                    name = name.rpartition(".")[0]
                if name and name != mod:
                    graph[mod].add(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: set[frozenset[str]] = set()
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp.add(member)
                    if member == node:
                        break
                if len(comp) > 1:
                    out.add(frozenset(comp))
    return out


def test_cycle_finder_finds_a_planted_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert cycles(graph) == {frozenset({"a", "b", "c"})}


def test_the_graph_reads_imports_inside_functions() -> None:
    graph = import_graph()
    # knowledge.loader imports validate inside a function only
    assert "stackcheck.knowledge.validate" in graph["stackcheck.knowledge.loader"]
    assert "stackcheck.verdicts.context" in graph["stackcheck.verdicts.engine"]


def test_the_package_has_no_import_cycle() -> None:
    found = cycles(import_graph())
    assert not found, f"import cycles: {sorted(sorted(c) for c in found)}"


def test_a_submodule_import_of_a_package_counts_as_an_edge_to_the_package() -> None:
    """`from stackcheck.probes import nvml_early` runs stackcheck/probes/__init__.py: an edge to the package
    (whose registry imports every probe), which is why the probes import their siblings by full name."""
    graph = import_graph()
    assert "stackcheck.probes" in graph["stackcheck.cli"]  # cli: `from stackcheck.probes import nvml_early`
    assert "stackcheck.probes.nvml_early" in graph["stackcheck.cli"]


def test_the_layers_point_down() -> None:
    """The pieces moved down to break the cycles import nothing that imports them back."""
    graph = import_graph()
    for low, high in (
        ("stackcheck.commands.arguments", "stackcheck.assembly.pipeline"),
        ("stackcheck.assembly.target", "stackcheck.assembly.pipeline"),
        ("stackcheck.assembly.target", "stackcheck.probes.python_env"),
        ("stackcheck.knowledge.package_data", "stackcheck.knowledge.loader"),
        ("stackcheck.knowledge.package_data", "stackcheck.knowledge.validate"),
        ("stackcheck.probes.nvml_read", "stackcheck.probes.nvml"),
        ("stackcheck.probes.nvml_read", "stackcheck.probes.nvml_early"),
        ("stackcheck.image.info", "stackcheck.image.layout"),
        ("stackcheck.image.info", "stackcheck.image.view"),
        ("stackcheck.verdicts.types", "stackcheck.verdicts.engine"),
        ("stackcheck.derive.judge", "stackcheck.verdicts.engine"),
        ("stackcheck.commands.parser", "stackcheck.cli"),
    ):
        assert high not in graph[low], f"{low} imports {high}"
