"""The import graph of the stackcheck package, read from the source (module-level imports and the imports
inside functions, TYPE_CHECKING ones too) has no cycle. (Issue 19 phase 2 listed five; phase 4 broke them
by moving the shared piece down: Options into options.py (now assembly/options.py), the shipped data
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
        ("stackcheck.assembly.options", "stackcheck.assembly.pipeline"),
        ("stackcheck.assembly.options", "stackcheck.commands.arguments"),
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


# ---- the layers, as data: which group may import which -------------------------------------------------
# A module's group is its folder under stackcheck/ (stackcheck.verdicts.engine -> "verdicts"), or its own
# name for a top-level module (stackcheck.cli -> "cli"); "stackcheck" is the package's __init__.

#: the pure core: facts and data in, verdicts, plans and documents out
CORE = frozenset({"facts", "knowledge", "verdicts", "plan", "documents", "readers", "derive"})
#: the modules every layer may use; they use nothing above them
FOUNDATION = frozenset(
    {
        "stackcheck",
        "errors",
        "paths",
        "record",
        "redact",
        "atomic",
        "lean_typing",
        "lean_json",
        "lazy_re",
        "pyast",
        "digits",
    }
)
#: the parts around the core: reading a box, assembling a command, launching, showing, the command line
OUTER = frozenset({"probes", "image", "assembly", "launch", "render", "commands", "cli", "__main__", "driver_words"})
ENTRY = frozenset({"cli", "__main__"})

#: (importers, groups they never import, why)
FORBIDDEN: tuple[tuple[frozenset[str], frozenset[str], str], ...] = (
    (
        CORE,
        frozenset({"assembly", "commands", "launch", "render", "probes", "cli", "__main__"}),
        "the core judges facts it is given; how they are gathered, shown or launched sits above it",
    ),
    (FOUNDATION, CORE | OUTER, "the foundation is below every layer"),
    (frozenset({"render"}), frozenset({"commands", "assembly", "probes", "cli", "__main__"}), "render draws documents"),
    (
        CORE | FOUNDATION | (OUTER - ENTRY - {"commands"}),
        frozenset({"commands"}),
        "the verbs are the top: only the entry point (cli, __main__) imports them",
    ),
    (
        frozenset({"probes", "image", "assembly", "launch"}),
        frozenset({"commands", "cli", "__main__"}),
        "the parts a verb assembles never call back into the command line",
    ),
)

#: (importers, group, the only modules of that group they may import, why)
ONLY: tuple[tuple[frozenset[str], str, frozenset[str], str], ...] = (
    (
        CORE,
        "image",
        frozenset({"stackcheck.image.require"}),
        "NVIDIA_REQUIRE_* judged as the container toolkit does: a leaf of the standard library only",
    ),
    (
        frozenset({"probes", "image"}),
        "assembly",
        frozenset({"stackcheck.assembly.target"}),
        "the target's description (which interpreter, PATH), which imports no probe and no pipeline",
    ),
)


def group_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import edge that breaks FORBIDDEN or ONLY, as `importer -> imported (why)`."""
    out = []
    for mod, targets in sorted(graph.items()):
        here = group_of(mod)
        for target in sorted(targets):
            there = group_of(target)
            if there == here:
                continue
            why_not = [why for importers, banned, why in FORBIDDEN if here in importers and there in banned]
            if why_not:  # one line per edge, with the first rule it breaks
                out.append(f"{mod} -> {target} ({why_not[0]})")
            for importers, group, allowed, why in ONLY:
                if here in importers and there == group and target not in allowed and target != group:
                    out.append(f"{mod} -> {target} (only {', '.join(sorted(allowed))}: {why})")
    return out


def test_every_group_is_placed_in_a_layer() -> None:
    """A new folder or top-level module must be placed in CORE, FOUNDATION or OUTER before it is checked."""
    groups = {group_of(m) for m in import_graph()}
    assert groups - (CORE | FOUNDATION | OUTER) == set()
    assert not (CORE & FOUNDATION or CORE & OUTER or FOUNDATION & OUTER)


def test_the_layer_check_finds_planted_violations() -> None:
    graph = {
        "stackcheck.verdicts.engine": {"stackcheck.render.text", "stackcheck.image.require"},
        "stackcheck.render.text": {"stackcheck.commands.audit"},
        "stackcheck.assembly.pipeline": {"stackcheck.commands.arguments"},
        "stackcheck.probes.python_env": {"stackcheck.assembly.pipeline", "stackcheck.assembly.target"},
        "stackcheck.facts.model": {"stackcheck.image.view"},
        "stackcheck.errors": {"stackcheck.facts.model"},
        "stackcheck.cli": {"stackcheck.commands.audit"},
        "stackcheck.commands.audit": {"stackcheck.commands.arguments", "stackcheck.render.text"},
    }
    found = layer_violations(graph)
    assert [line.split(" (")[0] for line in found] == [
        "stackcheck.assembly.pipeline -> stackcheck.commands.arguments",
        "stackcheck.errors -> stackcheck.facts.model",
        "stackcheck.facts.model -> stackcheck.image.view",
        "stackcheck.probes.python_env -> stackcheck.assembly.pipeline",
        "stackcheck.render.text -> stackcheck.commands.audit",
        "stackcheck.verdicts.engine -> stackcheck.render.text",
    ]


def test_the_package_keeps_its_layers() -> None:
    found = layer_violations(import_graph())
    assert not found, "imports against the layers:\n" + "\n".join(found)
