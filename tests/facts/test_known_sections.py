"""KNOWN_SECTIONS is written out (the Facts TypedDict exists for mypy only, so it cannot be read at run time):
it must name exactly the keys Facts declares, read here from the source of stackcheck/facts/model.py."""

from __future__ import annotations

import ast
from pathlib import Path

import stackcheck.facts.model as model


def _facts_keys() -> list[str]:
    tree = ast.parse(Path(model.__file__).read_text(encoding="utf-8"))
    found = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name == "Facts"]
    assert len(found) == 1, "stackcheck/facts/model.py defines one class Facts"
    return [
        stmt.target.id
        for stmt in found[0].body
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
    ]


def test_known_sections_are_the_keys_of_facts() -> None:
    keys = _facts_keys()
    assert len(keys) == len(set(keys))
    assert "gpus" in keys and "packages_complete" in keys
    assert frozenset(keys) == model.KNOWN_SECTIONS


def test_shapes_are_not_built_at_run_time() -> None:
    # the point of the move: importing the module builds no TypedDict (typing's machinery costs ~5 ms on 3.12)
    assert not hasattr(model, "Facts")
    assert not hasattr(model, "ProbeOutcome")
