"""The cuts of iperf20 (issue 21, `plan --want` on its first run): the parts of a predicate whose outcome the plan's
contexts share are not asked whether they are shared themselves, and a part whose answer is not at hand is asked
only from its second evaluation on; the kept dependency answers name each distinct set
of components once; the newest Triton a torch pin admits is looked up once per pin; a stack's replaced choices and
its count of changes are read by attribute. Each gives what the straightforward reading gives."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from stackcheck.facts.model import load_facts_file
from stackcheck.facts.versions import version_in
from stackcheck.knowledge import prepared
from stackcheck.knowledge.loader import load
from stackcheck.plan import hypothetical
from stackcheck.plan.solver import COMPONENTS, Restrict, Space, Stack, enumerate_stacks, read_box
from stackcheck.verdicts import engine
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_predicate

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = sorted(p for group in ("cases", "plan_cases") for p in (ROOT / "tests" / group).iterdir() if p.is_dir())
BASES = [c for c in CASES if (c / "facts.json").is_file()]


def _ctx(case: str = "writeup-before") -> Context:
    facts = copy.deepcopy(dict(load_facts_file(str(ROOT / "tests" / "cases" / case / "facts.json"))))
    return Context(facts=facts, manifests=load([], env={}))  # type: ignore[arg-type]


def _spy_fixed(eng: hypothetical.Engine, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    asked: list[Any] = []
    shared = eng._shared
    assert shared is not None
    real = shared._is_fixed

    def spy(pred: Any) -> bool:
        asked.append(pred)
        return real(pred)

    monkeypatch.setattr(shared, "_is_fixed", spy)
    return asked


def test_the_parts_of_a_shared_predicate_are_not_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = _ctx()
    eng = hypothetical.Engine(ctx)
    asked = _spy_fixed(eng, monkeypatch)
    gpus = {"fact": "gpu.count", "op": ">=", "value": 1}
    tp = {"fact": "launch.tp", "op": ">", "value": 0}
    both = {"all": [gpus, {"not": tp}]}
    a = eng._context(dict(ctx.facts))  # type: ignore[arg-type]
    b = eng._context(dict(ctx.facts))  # type: ignore[arg-type]
    c = eng._context(dict(ctx.facts))  # type: ignore[arg-type]
    evaluate_predicate(both, a, None)  # (its answer not at hand: worked out from its second evaluation on)
    first = evaluate_predicate(both, b, None)
    assert [id(p) for p in asked] == [id(both)]  # the parts: evaluated, never asked
    assert evaluate_predicate(both, c, None) is first  # shared between the contexts
    assert a.shared_outcomes is eng._shared and b.shared_outcomes is eng._shared  # given back after the parts
    plain = evaluate_predicate(both, Context(facts=ctx.facts, manifests=ctx.manifests), None)
    assert (first.value, first.observed, first.required, first.missing) == (
        plain.value,
        plain.observed,
        plain.required,
        plain.missing,
    )


def test_the_parts_of_a_predicate_that_is_not_shared_still_are(monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked from their second evaluation on (their answers are not at hand: no rule holds them as its `when` or
    `require`, which the twin reads back), then kept where they read no choice."""
    ctx = _ctx()
    eng = hypothetical.Engine(ctx)
    asked = _spy_fixed(eng, monkeypatch)
    gpus = {"fact": "gpu.count", "op": ">=", "value": 1}
    sglang = {"fact": "pkg.sglang.version", "op": "version", "value": ">=0.0.1"}
    mixed = {"all": [gpus, sglang]}
    a = eng._context(dict(ctx.facts))  # type: ignore[arg-type]
    b = eng._context(dict(ctx.facts))  # type: ignore[arg-type]
    c = eng._context(dict(ctx.facts))  # type: ignore[arg-type]
    first = evaluate_predicate(mixed, a, None)
    assert asked == []  # evaluated once: nothing worked out, nothing kept
    assert evaluate_predicate(mixed, b, None) is not first
    assert {id(p) for p in asked} == {id(mixed), id(gpus), id(sglang)}  # the second time: worked out
    one = evaluate_predicate(gpus, b, None)
    assert evaluate_predicate(gpus, c, None) is one  # the part that reads no choice: shared from then on
    assert evaluate_predicate(sglang, c, None) is not evaluate_predicate(sglang, a, None)  # the other: never
    assert len(asked) == 3  # each worked out once


def test_an_answer_at_hand_is_used_the_first_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule's `when` (its answer read back by prime, or worked out earlier) is kept from its first evaluation."""
    ctx = _ctx()
    eng = hypothetical.Engine(ctx)
    rule_part = next(
        r["when"]
        for f in ctx.manifests.features
        for r in f.get("rules") or []
        if isinstance(r, dict) and isinstance(r.get("when"), dict)
    )
    answer = hypothetical._reads_no_component(rule_part, ctx.manifests, True)
    asked = _spy_fixed(eng, monkeypatch)
    a = eng._context(dict(ctx.facts))  # type: ignore[arg-type]
    assert eng._shared is not None and eng._shared.fixed(rule_part) is answer
    assert asked == []  # at hand: not worked out again
    evaluate_predicate(rule_part, a, None)
    assert ((id(rule_part), None) in eng._shared.outcomes) is answer


def test_a_failing_part_gives_the_shared_outcomes_back(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = _ctx()
    eng = hypothetical.Engine(ctx)
    a = eng._context(dict(ctx.facts))  # type: ignore[arg-type]

    def boom(pred: Any, c: Context, gpu: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(engine, "_evaluate_predicate", boom)
    with pytest.raises(RuntimeError):
        evaluate_predicate({"fact": "gpu.count", "op": ">=", "value": 1}, a, None)
    assert a.shared_outcomes is eng._shared


@pytest.fixture
def caches_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("STACKCHECK_PLAN_CACHE", raising=False)
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(engine, "_SHAPES", {})
    return tmp_path


def _kept(has_gpus: bool) -> tuple[Any, ...]:
    m = load([], env={})
    kept = prepared.kept_for(m, f"plan-deps-{int(has_gpus)}", hypothetical._DEPS_DOCS, *hypothetical.deps_readers())
    assert kept is not None
    return kept


def test_the_twin_names_each_distinct_set_once(caches_on: Path) -> None:
    hypothetical.prime(load([], env={}), True)
    value = _kept(True)[2]
    assert value is not None
    sets = value["sets"]
    assert len({tuple(s) for s in sets}) == len(sets) and all(s == sorted(s) for s in sets)
    assert len(sets) < len(value["items"])  # a few dozen sets for ~70 items and ~600 rule parts
    for exact, presence, parts in value["items"]:
        assert 0 <= exact < len(sets) and 0 <= presence < len(sets)
        assert all(type(n) is int and -1 <= n < len(sets) for n in parts)


@pytest.mark.parametrize("damage", ["index past the sets", "a set that is not a list", "no sets"])
def test_a_twin_with_a_bad_index_is_not_used(caches_on: Path, damage: str) -> None:
    hypothetical.prime(load([], env={}), True)
    key, name, value = _kept(True)[0], "plan-deps-1", _kept(True)[2]
    bad = copy.deepcopy(value)
    if damage == "index past the sets":
        bad["items"][0][0] = len(bad["sets"])
    elif damage == "a set that is not a list":
        bad["sets"][0] = "torch"
    else:
        del bad["sets"]
    assert prepared.keep(key, name, _kept(True)[1], bad)
    m = load([], env={})
    items = [*m.features, *m.checks]
    assert not hypothetical._restore(bad, items, len(m.features), m, True)
    assert hypothetical._restore(value, items, len(m.features), m, True)


def test_the_newest_triton_of_a_pin_is_looked_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = _ctx("writeup-after")
    box = read_box(ctx)
    space = Space(ctx, box)
    torches = [t for t in space.torch_choices() if not t.current]
    have = {"installed": True, "version": "0.0.1", "dist_version": "0.0.1"}  # meets no pin: the lookup runs
    by_spec: dict[str, list[Any]] = {}
    for t in torches:
        spec = (t.release.get("requires") or {}).get("triton")
        if isinstance(spec, str):
            by_spec.setdefault(spec, []).append(t)
    spec, same = next((s, ts) for s, ts in by_spec.items() if len(ts) > 1)
    walked: list[str] = []
    real = version_in

    def spy(version: str, specifier: str) -> bool | None:
        if specifier == spec:
            walked.append(version)
        return real(version, specifier)

    monkeypatch.setattr(hypothetical, "version_in", spy)
    ctx.manifests.derived("plan.newest_triton").clear()
    first = hypothetical.torch_triton(same[0].release, have, ctx)
    n = len(walked)
    assert n > 1  # the installed one, then the releases the manifests know
    second = hypothetical.torch_triton(same[1].release, have, ctx)
    assert len(walked) == n + 1  # the installed one only
    assert first == second
    known = [str(r.get("version")) for r in ctx.manifests.releases("triton") if real(str(r.get("version")), spec)]
    if first is not None and first.get("version") is not None:
        assert first["version"] in known


@pytest.mark.parametrize("case", BASES, ids=[c.name for c in BASES])
def test_changes_and_applied_read_as_get_does(case: Path) -> None:
    facts = copy.deepcopy(dict(load_facts_file(str(case / "facts.json"))))
    ctx = Context(facts=facts, manifests=load([], env={}))  # type: ignore[arg-type]
    if ctx.facts.get("packages") is None:
        pytest.skip("no packages: the planner does not judge stacks")
    stacks = list(enumerate_stacks(Space(ctx, read_box(ctx)), Restrict()))
    assert stacks
    for s in stacks:
        by_get = {c: s.get(c) for c in COMPONENTS if s.get(c) is not None and not s.get(c).current}  # type: ignore[union-attr]
        assert hypothetical.applied(s) == by_get
        assert list(hypothetical.applied(s)) == list(by_get)  # in COMPONENTS' order: stack_facts applies them so
        assert s.changes() == len(by_get)
    assert sorted(stacks, key=Stack.changes) == sorted(stacks, key=lambda s: len(hypothetical.applied(s)))


def _launch_env_walk(ctx: Context, fact: str) -> bool | None:
    """Context.launch_env_fact as it read the entries before the index: the first entry that sets `fact` (its
    `otherwise` too, which launch.json's LMCache entries use since igap44)."""
    for spec in ctx.manifests.launch_env():
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            continue
        if fact not in (spec.get("fact"), spec.get("set_fact")):
            continue
        raw = ((ctx.facts.get("system") or {}).get("env") or {}).get(spec["name"])
        if spec.get("set_fact") == fact:  # (igap47: whether the variable is set at all)
            return isinstance(raw, str)
        if isinstance(raw, str):
            raw = raw.strip() if spec.get("strip") else raw
            if raw.lower() in [str(x) for x in spec.get("true") or []]:
                return True
            if raw.lower() in [str(x) for x in spec.get("false") or []]:
                return False
            if isinstance(spec.get("otherwise"), bool):  # (igap44: any other value is one value, as the gate reads it)
                return bool(spec["otherwise"])
        return bool(spec.get("default"))
    return None


def test_a_launch_fact_an_environment_variable_sets_is_read_as_the_walk_reads_it() -> None:
    m = load([], env={})
    entries = [s for s in m.launch_env() if isinstance(s, dict) and isinstance(s.get("name"), str)]
    facts = sorted({str(s.get(k)) for s in entries for k in ("fact", "set_fact") if isinstance(s.get(k), str)})
    assert len(facts) > 3
    values: list[str | None] = [None, "", " ", "1", " 1 ", "0", "true", "false", "TRUE", "off", "on", "yes", "no", "x"]
    for value in values:
        for spec in entries:
            env = {} if value is None else {str(spec["name"]): value}
            ctx = Context(facts={"system": {"env": env}}, manifests=m)
            for fact in [*facts, "no-such-fact"]:
                assert ctx.launch_env_fact(fact) == _launch_env_walk(ctx, fact), (fact, spec["name"], value)
    index = m.derived("launch-env-by-fact")[None]
    assert index[0] is m.launch_env() and set(index[1]) == set(facts)  # made once, kept with the manifests


@pytest.mark.parametrize("case", BASES, ids=[c.name for c in BASES])
def test_any_ok_asks_one_stack_per_set_of_choices_read_and_answers_as_every_stack(
    case: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = copy.deepcopy(dict(load_facts_file(str(case / "facts.json"))))
    ctx = Context(facts=facts, manifests=load([], env={}))  # type: ignore[arg-type]
    if ctx.facts.get("packages") is None:
        pytest.skip("no packages: the planner does not judge stacks")
    stacks = sorted(enumerate_stacks(Space(ctx, read_box(ctx)), Restrict()), key=Stack.changes)
    plain = hypothetical.Engine(ctx, memo=False)
    for fid in ("torch-symm-mem", "fp8-block-gemm", "attention-fa4", "moe-a2a-deepep"):
        eng = hypothetical.Engine(ctx)
        real = hypothetical.applied
        built: list[Stack] = []

        def spy(stack: Stack, real: Any = real, built: list[Stack] = built) -> dict[str, Any]:
            built.append(stack)
            return real(stack)  # type: ignore[no-any-return]

        monkeypatch.setattr(hypothetical, "applied", spy)
        got = eng.any_ok(stacks, fid)
        monkeypatch.setattr(hypothetical, "applied", real)
        assert got is plain.any_ok(stacks, fid), fid
        exact, presence = eng.deps(fid)
        groups = {
            (*(id(real(s).get(c)) for c in exact), *(c in real(s) for c in presence)) for s in stacks
        }  # the sets of choices the feature reads: one stack asked of each at most
        asked = {id(s) for s in built}  # (stack_facts reads applied too: once more for a stack whose facts are built)
        assert len(asked) <= len(groups) <= len(stacks), fid  # (before: an applied dict for every stack)
        if fid == "torch-symm-mem":  # (reads SGLang and whether torch is replaced: far fewer sets than stacks)
            assert len(groups) < len(stacks)


@pytest.mark.parametrize("case", BASES, ids=[c.name for c in BASES])
def test_torch_choices_judge_each_list_of_targets_once(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stackcheck.facts.archs import coverage, expand_arch_list
    from stackcheck.plan import solver

    facts = copy.deepcopy(dict(load_facts_file(str(case / "facts.json"))))
    ctx = Context(facts=facts, manifests=load([], env={}))  # type: ignore[arg-type]
    space = Space(ctx, read_box(ctx))
    parsed: list[tuple[str, ...]] = []

    def spy(items: list[str]) -> Any:
        parsed.append(tuple(items))
        return expand_arch_list(items)

    monkeypatch.setattr(solver, "expand_arch_list", spy)
    got = [(t.version, t.variant, t.cuda, t.rank, t.current) for t in space.torch_choices()]
    want = []  # the straightforward reading: every variant's targets parsed and judged
    for r_i, rel in enumerate(space.torch):
        variants = sorted(
            (v for v in rel.get("variants") or [] if v.get("cuda")),
            key=lambda v: solver.cuda_key(str(v.get("cuda"))),
            reverse=True,
        )
        for v_i, var in enumerate(variants):
            archs = var.get("archs_aarch64") if space.box.aarch64 and var.get("archs_aarch64") else var.get("archs")
            targets = expand_arch_list([str(a) for a in archs or []])
            if space.box.ccs and any(coverage(targets, cc, space.target_rules) == "none" for cc in space.box.ccs):
                continue
            version, variant = str(rel.get("version")), str(var.get("variant"))
            cur = space.box.torch is not None and space.box.torch == (version, variant)
            want.append((version, variant, str(var.get("cuda")), r_i * 100 + v_i, cur))
    assert got == want
    assert len(parsed) == len(set(parsed))  # each list once (before: once per variant, lists repeated)
