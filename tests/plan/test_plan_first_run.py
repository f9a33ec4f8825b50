"""The first run's shortcuts of the planner (issue 21) against straightforward readings.

- deps.predicate_components with a memo of every node read (the planner's: each node of a rule is read once,
  children first) against a plain walk of the whole tree for each node asked, on every predicate node of the
  shipped rules, asked in any order, and on generated trees of known and unknown fact paths and gates."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.knowledge.loader import load
from stackcheck.plan.deps import _package, companions, path_components, predicate_components

M = load([], env={})


def _walk(pred: Any, has_gpus: bool) -> frozenset[str] | None:
    """The reading of the whole tree, node after node, with no memo (what the planner did before the memo)."""
    out: set[str] = set()
    todo = [pred]
    while todo:
        item = todo.pop()
        if isinstance(item, list):
            todo.extend(item)
            continue
        if not isinstance(item, dict):
            continue
        if "fact" in item:
            got = path_components(str(item["fact"]), has_gpus, companions(M))
            if got is None:
                return None
            out |= got
        if "gate" in item:
            spec = M.source_table(str(item["gate"]))
            package = spec.get("package") if spec is not None else None
            if isinstance(package, str):
                out |= _package(package, companions(M))
            elif spec is not None:
                return None
        todo.extend(v for v in item.values() if isinstance(v, dict | list))
    return frozenset(out)


def _nodes(tree: Any) -> list[Any]:
    out: list[Any] = []
    todo = [tree]
    while todo:
        item = todo.pop()
        if isinstance(item, dict | list):
            out.append(item)
            todo.extend(item if isinstance(item, list) else item.values())
    return out


def _shipped_nodes() -> list[Any]:
    out: list[Any] = []
    for item in [*M.features, *M.checks]:
        for rule in item.get("rules") or []:
            if isinstance(rule, dict):
                for part in ("when", "require"):
                    if part in rule:
                        out.extend(_nodes(rule[part]))
    return out


def test_every_shipped_node_reads_the_same_with_the_memo_in_both_orders() -> None:
    nodes = _shipped_nodes()
    assert len(nodes) > 500
    for has_gpus in (True, False):
        expected = [_walk(n, has_gpus) for n in nodes]
        for order in (nodes, nodes[::-1]):
            memo: dict[int, Any] = {}
            got = {id(n): predicate_components(n, M, has_gpus, memo) for n in order}
            assert [got[id(n)] for n in nodes] == expected
            assert [predicate_components(n, M, has_gpus) for n in nodes] == expected  # no memo


FACTS = ["gpu.cc_major", "launch.tp", "pkg.sglang.version", "pkg.torch.version", "torch.cuda", "no.such.path",
         "release.flashinfer-python.x", "known.sglang", "driver.version", "pkg.triton.version"]  # fmt: skip
GATES = ["sglang.torch_symm_mem_sizes", "sglang.blackwell_majors", "no.such.gate"]
LEAF = st.one_of(
    st.builds(lambda f: {"fact": f, "op": "exists"}, st.sampled_from(FACTS)),
    st.builds(lambda g: {"gate": g, "op": "==", "value": 1}, st.sampled_from(GATES)),
    st.builds(
        lambda f, g: {"fact": f, "op": "in", "value": {"gate": g}}, st.sampled_from(FACTS), st.sampled_from(GATES)
    ),
    st.just({"op": "true"}),
    st.integers(),
)
TREES = st.recursive(
    LEAF,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4),
        st.builds(lambda k: {"all": k}, st.lists(kids, max_size=4)),
        st.builds(lambda k: {"any": k}, st.lists(kids, max_size=4)),
        st.builds(lambda k: {"not": k}, kids),
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(TREES, min_size=1, max_size=4), st.booleans(), st.randoms())
def test_generated_trees_read_the_same_with_the_memo(trees: list[Any], has_gpus: bool, rnd: Any) -> None:
    nodes = [n for t in trees for n in _nodes(t)]
    shared = trees[0]
    trees.append({"all": [shared, shared]})  # one node under two parents
    nodes += _nodes(trees[-1])
    rnd.shuffle(nodes)
    memo: dict[int, Any] = {}
    for n in nodes:
        assert predicate_components(n, M, has_gpus, memo) == _walk(n, has_gpus)
