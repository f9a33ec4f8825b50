"""The gate's rule work that depends on the shipped manifests alone, kept between runs (stackcheck.knowledge.kept
holds the entry: its key, its checks, where it lives): every rule's shape (verdicts.engine.prepare: whether it is
judged per GPU, its requirement in words) and the index of the rules by launch fact (assembly.pipeline.rules_texts,
_launch_readers). A run whose manifests are the shipped ones as kept restores both (~0.3 ms) where working them out
cost ~3 ms (2-core box); the entry is checked against the manifests item by item and rule by rule as it is
restored, and one that does not fit is no entry."""

from __future__ import annotations

from stackcheck.knowledge.kept import load_rules, rules_key, store_rules
from stackcheck.lean_typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.knowledge.types import Rule


def _shapes_of(items: list[Any]) -> list[Any]:
    """Per item, its id and, per rule (the dicts of its `rules`, in order), [rule id, per GPU?, requirement] as
    verdicts.engine keeps them (its _SHAPES, filled by engine.prepare before this is called)."""
    from stackcheck.verdicts.engine import _rule_shape

    out: list[Any] = []
    for item in items:
        rules = [r for r in item.get("rules") or [] if isinstance(r, dict)]
        out.append([str(item.get("id")), [[str(r.get("id")), *_rule_shape(cast("Rule", r))] for r in rules]])
    return out


def _restore(value: Any, items: list[Any], memo: dict[Any, Any]) -> bool:
    """Fill verdicts.engine's rule shapes and `memo` (the manifests' launch-readers memo) from a kept value made of
    these items, checking it against them as it goes: False (and nothing restored) where it does not fit."""
    from stackcheck.verdicts import engine

    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], list) and len(value[0]) == len(items)):
        return False
    shapes, index = value
    if not isinstance(index, dict):
        return False
    found: list[tuple[Any, bool, str]] = []
    for item, kept_item in zip(items, shapes, strict=True):
        if not (isinstance(kept_item, list) and len(kept_item) == 2 and kept_item[0] == str(item.get("id"))):
            return False
        rules = [r for r in item.get("rules") or [] if isinstance(r, dict)]
        kept_rules = kept_item[1]
        if not isinstance(kept_rules, list) or len(kept_rules) != len(rules):
            return False
        for rule, shape in zip(rules, kept_rules, strict=True):
            if not (
                isinstance(shape, list)
                and len(shape) == 3
                and shape[0] == str(rule.get("id"))
                and isinstance(shape[1], bool)
                and isinstance(shape[2], str)
            ):
                return False
            found.append((rule, shape[1], shape[2]))
    readers: dict[str, frozenset[int]] = {}
    for fact, where in index.items():
        if not (isinstance(fact, str) and isinstance(where, list)):
            return False
        if not all(isinstance(i, int) and 0 <= i < len(items) for i in where):
            return False
        readers[fact] = frozenset(id(items[i]) for i in where)
    for rule, per_gpu, requirement in found:
        if len(engine._SHAPES) >= 65536:  # (engine._rule_shape's own bound)
            break
        engine._SHAPES[id(rule)] = (rule, per_gpu, requirement)
    memo["index"], memo["items"] = readers, tuple(items)
    return True


def prepare_rules(manifests: Any) -> None:
    """The rule work the gate does before the facts arrive (verdicts.engine.prepare, assembly.pipeline.rules_texts),
    restored from its entry when the manifests are the shipped ones as kept, else done and (shipped manifests
    only) kept. What is restored is what the work would have made: the same shapes, the same index."""
    from stackcheck.assembly import pipeline
    from stackcheck.verdicts import engine

    parts = manifests.kept_parts()
    items = [*manifests.features, *manifests.checks]
    key = rules_key(parts) if parts is not None else None
    if key is not None and _restore(load_rules(key), items, manifests.derived("launch-readers")):
        return
    engine.prepare(manifests)
    pipeline.rules_texts(manifests)
    if key is None or manifests.kept_parts() != parts:  # (edited meanwhile: not kept)
        return
    ids = {id(item): i for i, item in enumerate(items)}
    index = pipeline._launch_readers(manifests)
    store_rules(key, [_shapes_of(items), {k: sorted(ids[i] for i in v if i in ids) for k, v in index.items()}])
