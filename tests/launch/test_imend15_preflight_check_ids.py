"""imend15: gate_preflight.preflight_checks() (the ids `--allow` takes for preflight results) is derived from the check
modules themselves: each module whose code builds a CheckResult exports CHECK_IDS, the ids its results carry, and is
one of gate_preflight.PREFLIGHT_CHECK_MODULES. Before, the ids were listed by hand in preflight_checks(), and ifc65's
model-config-keys was missed (dd397032's CI failure). Read here from the source of every stackcheck module: a module
that builds a CheckResult with an id its CHECK_IDS lacks, or that is not in the registry, fails."""

from __future__ import annotations

import ast
import functools
import importlib
from pathlib import Path
from typing import NamedTuple

import pytest

from stackcheck.launch import gate_preflight

ROOT = Path(__file__).resolve().parents[2]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _constants(tree: ast.Module) -> dict[str, str]:
    """The module-level NAME = "text" assignments."""
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            out.update((t.id, node.value.value) for t in node.targets if isinstance(t, ast.Name))
    return out


class _Scope(NamedTuple):
    local: dict[str, list[ast.expr]]  # a function's assignments by name
    passed: set[str]  # its parameters


def _scope(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> _Scope:
    local: dict[str, list[ast.expr]] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, ast.Name):
                    local.setdefault(t.id, []).append(n.value)
    return _Scope(local, {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]})


def _values(node: ast.expr, consts: dict[str, str], scopes: list[_Scope]) -> set[str]:
    """The ids an expression given as a CheckResult's check can be: a string, a module constant, a name assigned in
    the function or one around it (`check = "model" if ... else "draft-model"`); a parameter (`check: str`, handed in
    by the module's callers): every module-level ...CHECK constant."""
    if isinstance(node, ast.Constant):
        return {str(node.value)}
    if isinstance(node, ast.IfExp):
        return _values(node.body, consts, scopes) | _values(node.orelse, consts, scopes)
    if isinstance(node, ast.Name):
        for scope in reversed(scopes):  # (the innermost function first, then those around it)
            if node.id in scope.local:
                return set().union(*(_values(v, consts, []) for v in scope.local[node.id]))
            if node.id in scope.passed:
                return {v for k, v in consts.items() if k.endswith("CHECK")}
        if node.id in consts:
            return {consts[node.id]}
    return {f"<not read: {ast.unparse(node)}>"}


@functools.cache
def emitted() -> dict[str, frozenset[str]]:
    """Every stackcheck module that builds a CheckResult, with the ids it builds them with."""
    out: dict[str, set[str]] = {}
    for path in sorted((ROOT / "stackcheck").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        consts = _constants(tree)
        found = out.setdefault(_module_name(path), set())

        def visit(
            node: ast.AST, scopes: list[_Scope], consts: dict[str, str] = consts, found: set[str] = found
        ) -> None:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scopes = [*scopes, _scope(node)]
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None)) == "CheckResult"
            ):
                first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "check"), None)
                if first is not None:
                    found.update(_values(first, consts, scopes))
            for child in ast.iter_child_nodes(node):
                visit(child, scopes)

        visit(tree, [])
    return {k: frozenset(v) for k, v in out.items() if v}


def test_the_scan_reads_the_known_checks() -> None:
    found = set().union(*emitted().values())
    assert {"gpu-count", "model", "draft-model", "model-config-keys", "storage-config", "transfer-package"} <= found
    assert not [i for i in found if i.startswith("<not read")], found


@pytest.mark.parametrize("module", sorted(emitted()))
def test_every_module_building_a_result_exports_its_ids(module: str) -> None:
    ids = getattr(importlib.import_module(module), "CHECK_IDS", None)
    assert isinstance(ids, tuple), f"{module} builds CheckResults and exports no CHECK_IDS"  # (fails before)
    assert emitted()[module] <= set(ids), (module, emitted()[module] - set(ids))
    assert module in gate_preflight.PREFLIGHT_CHECK_MODULES


def test_every_id_is_in_preflight_checks_and_allow_takes_it() -> None:
    found = sorted(set().union(*emitted().values()))
    assert set(found) <= set(gate_preflight.preflight_checks())
    for check in found:
        assert gate_preflight.check_allow([check], []) == [check]


def test_the_registry_names_no_module_without_ids() -> None:
    for name in gate_preflight.PREFLIGHT_CHECK_MODULES:
        ids = importlib.import_module(name).CHECK_IDS
        assert ids and all(isinstance(i, str) for i in ids), name
