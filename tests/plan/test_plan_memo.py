"""The planner's fast path (issue 21) against a straightforward reference: the memoised engine shares a
verdict between candidate stacks that agree on every component the feature's rules read (plan/deps.py);
the reference judges every feature on every stack from scratch. On every case folder and plan case, and on
boxes generated from them (other GPUs, drivers, releases of torch, the kernel, FlashInfer and SGLang, wanted
features and holds), the plan, the facts after it and any error are the same both ways."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.errors import StackcheckError
from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load
from stackcheck.knowledge.types import Release
from stackcheck.plan import hypothetical
from stackcheck.plan.deps import EVERY, feature_components, path_components
from stackcheck.plan.planner import plan_and_facts
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all, evaluate_check

ROOT = Path(__file__).resolve().parent.parent.parent
M = load([], env={})
CASES = sorted(p for group in ("cases", "plan_cases") for p in (ROOT / "tests" / group).iterdir() if p.is_dir())
BASES = [c for c in CASES if (c / "facts.json").is_file()]
FEATURES = [str(f["id"]) for f in M.features]


def _both(facts: dict[str, Any], **kw: Any) -> tuple[Any, Any]:
    """(fast, reference): each the plan's JSON and the facts after it, or the error's text. The fast plan is made
    twice, and must be the same both times: from scratch, and with the upstream answers a plan without a request
    kept (planner.plan_and_facts' `upstream_kept`, which the plan cache keeps with the verdicts) and the box's
    verdicts given (`box_verdicts`: a feature is not judged again on a stack that replaces nothing it reads;
    `box_checks`: nor a stack check on the facts after the plan). Compared as JSON text, byte for byte."""
    out: list[tuple[Any, ...]] = []
    for memo, kept in ((True, False), (True, True), (False, False)):
        ctx = Context(facts=copy.deepcopy(facts), manifests=M)  # type: ignore[arg-type]
        features, checks = evaluate_all(ctx)
        upstream: dict[str, str | None] | None = None
        if kept:
            upstream = {}
            plan_and_facts(Context(facts=copy.deepcopy(facts), manifests=M), list(features), upstream_kept=upstream)  # type: ignore[arg-type]
        try:
            box = list(features) if kept else None  # (then not judged again where a stack changes nothing read)
            plan, after = plan_and_facts(
                ctx,
                list(features),
                memo=memo,
                upstream_kept=upstream,
                box_verdicts=box,
                box_checks=list(checks) if kept else None,
                **kw,
            )
            out.append((json.dumps(plan.to_json(), sort_keys=True), json.dumps(after, sort_keys=True)))
        except StackcheckError as exc:
            out.append(("error", type(exc).__name__, exc.message))
    assert out[0] == out[1], "a plan with the kept upstream answers differs"
    return out[0], out[2]


def _options(case: Path) -> dict[str, Any]:
    f = case / "options.json"
    opts = json.loads(f.read_text()) if f.is_file() else {}
    return {k: v for k, v in opts.items() if k in ("want", "hold", "pins")}


@pytest.mark.parametrize("case", BASES, ids=[c.name for c in BASES])
def test_every_case_plans_the_same_with_and_without_the_memo(case: Path) -> None:
    facts = load_facts_file(str(case / "facts.json"))
    fast, reference = _both(dict(facts), **_options(case))
    assert fast == reference


def test_the_memo_judges_each_distinct_dependency_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo judges a feature once per distinct value of what it depends on: a feature that reads only
    SGLang's release is judged once per SGLang release among the stacks, and the whole plan judges fewer
    stacks than the reference. (How many fewer is a property of the data: SGLang's releases pin their kernel
    package and FlashInfer, so features that read those vary with SGLang anyway; the write-up box's default plan
    judged 272 against 402 and its --want torch-symm-mem 281 against 590 with the manifests of 2026-12-01.)"""
    engines: list[hypothetical.Engine] = []
    requests: dict[int, list[tuple[str, dict[str, Any]]]] = {}
    judged: dict[int, list[str]] = {}
    real_init = hypothetical.Engine.__init__
    real_with = hypothetical.Engine.verdict_with
    real_on = hypothetical.Engine.verdict_on

    def init(self: hypothetical.Engine, *a: Any, **k: Any) -> None:
        real_init(self, *a, **k)
        engines.append(self)

    def verdict_with(self: hypothetical.Engine, choices: Any, fid: str, facts: Any) -> Any:
        requests.setdefault(id(self), []).append((fid, dict(choices)))
        return real_with(self, choices, fid, facts)

    def verdict_on(self: hypothetical.Engine, facts: Any, fid: str) -> Any:
        judged.setdefault(id(self), []).append(fid)
        return real_on(self, facts, fid)

    monkeypatch.setattr(hypothetical.Engine, "__init__", init)
    monkeypatch.setattr(hypothetical.Engine, "verdict_with", verdict_with)
    monkeypatch.setattr(hypothetical.Engine, "verdict_on", verdict_on)
    facts = load_facts_file(str(ROOT / "tests" / "cases" / "writeup-after" / "facts.json"))
    for want in (None, ["torch-symm-mem"]):
        engines.clear()
        requests.clear()
        judged.clear()
        _both(dict(facts), want=want)
        fast, reference = engines[0], engines[-1]  # (between them: the plans made with kept upstream answers)
        assert fast.memo and not reference.memo
        assert fast.evaluations < reference.evaluations, (fast.evaluations, reference.evaluations)
        only_sglang = [f for f in fast.features if fast.deps(f) == (("sglang",), ())]
        assert only_sglang  # mxfp8 reads only SGLang's release
        for fid in only_sglang:
            releases = {str(ch.get("sglang")) for f, ch in requests.get(id(fast), []) if f == fid}
            assert judged.get(id(fast), []).count(fid) == len(releases), (fid, releases)
            assert reference.evaluations > 0


def test_unknown_paths_make_a_feature_depend_on_everything() -> None:
    assert path_components("no.such.path") is None
    weird = {"id": "x", "needs": ["sglang"], "rules": [{"require": {"fact": "mystery.value", "op": "==", "value": 1}}]}
    assert feature_components(weird, M) == (EVERY, frozenset())
    ok = {"id": "y", "needs": ["sglang", "torch"], "rules": [{"require": {"fact": "pkg.sglang.version"}}]}
    assert feature_components(ok, M, has_gpus=True) == (frozenset({"sglang"}), frozenset({"torch"}))
    # with no GPU the verdict says why in the driver's words (rule gpu: driver.error), whatever the rules read
    assert feature_components(ok, M) == (frozenset({"sglang", "driver"}), frozenset({"torch"}))
    gpu_rule = {"id": "z", "rules": [{"when": {"fact": "gpu.cc_major"}, "require": {"fact": "topology.p2p"}}]}
    assert feature_components(gpu_rule, M, has_gpus=True) == (frozenset(), frozenset())
    assert feature_components(gpu_rule, M, has_gpus=False) == (frozenset({"driver"}), frozenset())


# ---- generated boxes ---------------------------------------------------------------------------------


def _releases(name: str) -> list[Release]:
    return [r for r in M.releases(name) if isinstance(r.get("version"), str)]


def _variants(rel: dict[str, Any]) -> list[str]:
    return [str(v["variant"]) for v in rel.get("variants") or [] if isinstance(v, dict) and v.get("variant")]


ARCHS = [(str(a["compute_capability"]), str(a.get("name"))) for a in M.architectures]
#: packages an SGLang release pins exactly (an SGLang step brings them to the pin: solver.pinned_companions)
COMPANIONS = sorted(
    {str(n) for r in M.releases("sglang") for n, v in (r.get("requires") or {}).items() if str(v).startswith("==")}
    - {
        "torch",
        "sglang",
        "flashinfer-python",
        "flashinfer-cubin",
        "flashinfer-jit-cache",
        "sgl-kernel",
        "sglang-kernel",
    }
)
BRANCHES = [b for b in (M.components.get("driver") or {}).get("branches") or [] if isinstance(b, dict)]


@st.composite
def boxes(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    base = draw(st.sampled_from(BASES))
    facts: dict[str, Any] = copy.deepcopy(dict(load_facts_file(str(base / "facts.json"))))
    if draw(st.booleans()):  # other GPUs
        cc, name = draw(st.sampled_from(ARCHS))
        n = draw(st.sampled_from([0, 1, 2, 8]))
        facts["gpus"] = [
            {"index": i, "name": name, "compute_capability": cc, "uuid": None, "pci_bus_id": None, "memory_bytes": None}
            for i in range(n)
        ]
        facts["topology"] = {"interconnect": draw(st.sampled_from(["nvlink", "pcie-host-bridge", None])),
                             "same_model": True, "gpu_count": n, "p2p": None, "pairs": []}  # fmt: skip
    if draw(st.booleans()):  # another driver, or none
        branch = draw(st.none() | st.sampled_from(BRANCHES))
        if branch is None:
            facts["driver"] = {"version": None, "cuda": None, "source": "none", "error": "NVML: driver not loaded"}
        else:
            first = branch.get("first_version") or f"{branch['branch']}.0"
            facts["driver"] = {"version": str(first), "cuda": branch.get("cuda"), "source": "nvml"}
    pkgs = dict(facts.get("packages") or {})
    for name in ("torch", "sgl-kernel", "sglang-kernel", "flashinfer-python", "sglang"):
        what = draw(st.sampled_from(["keep", "keep", "absent", "release"]))
        if what == "absent":
            pkgs[name] = {"installed": False}
        elif what == "release" and _releases(name):
            rel = draw(st.sampled_from(_releases(name)))
            version = str(rel["version"])
            variants = _variants(rel)
            entry: dict[str, Any] = {"installed": True, "version": version, "dist_version": version}
            if variants and name != "flashinfer-python" and name != "sglang":
                variant = draw(st.sampled_from(variants))
                entry.update(version=f"{version}+{variant}", variant=variant)
            pkgs[name] = entry
    if draw(st.booleans()):  # a package an SGLang release pins exactly, at another version (sgl-deep-ep)
        name = draw(st.sampled_from(COMPANIONS))
        version = draw(
            st.sampled_from(
                [
                    "0.0.1",
                    *{
                        v[2:]
                        for r in M.releases("sglang")
                        if isinstance(v := (r.get("requires") or {}).get(name), str) and v.startswith("==")
                    },
                ]
            )
        )
        pkgs[name] = {"installed": True, "version": version, "dist_version": version}
    facts["packages"] = pkgs
    request: dict[str, Any] = {}
    wanted = draw(st.lists(st.sampled_from(FEATURES), max_size=2, unique=True))
    if wanted:
        request["want"] = wanted
    held = draw(st.lists(st.sampled_from(["driver", "torch", "sglang", "flashinfer"]), max_size=1))
    if held:
        request["hold"] = held
    return facts, request


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(boxes())
def test_generated_boxes_plan_the_same_with_and_without_the_memo(box: tuple[dict[str, Any], dict[str, Any]]) -> None:
    facts, request = box
    fast, reference = _both(facts, **request)
    assert fast == reference


# ---- what the engine reads from the rules without judging a stack -----------------------------------------


def _never_ok_and_ok_agree(facts: dict[str, Any]) -> int:
    """Engine.never_ok (a rule that reads no replaced component fails or is not known on the box) and Engine.ok
    (which reads first the rule that stopped the feature on the last stack asked) against the plain engine, on
    the best stack of every SGLang release and a spread of the others: a feature never_ok names is ok on none,
    and ok() answers as evaluate_feature does, with the stacks asked in one order and in the reverse order.
    Returns how many features never_ok named."""
    from stackcheck.plan.solver import Restrict, Space, Stack, enumerate_stacks, read_box

    ctx = Context(facts=copy.deepcopy(facts), manifests=M)  # type: ignore[arg-type]
    if ctx.facts.get("packages") is None:
        return 0
    stacks = sorted(enumerate_stacks(Space(ctx, read_box(ctx)), Restrict()), key=Stack.key)
    best: dict[str, Stack] = {}
    for s in stacks:
        best.setdefault(s.sglang.version, s)
    picked = list(dict.fromkeys([*best.values(), *stacks[:: max(1, len(stacks) // 8)]]))
    plain = {(i, fid): _status_plain(ctx, s, fid) == "ok" for i, s in enumerate(picked) for fid in FEATURES}
    for order in (list(enumerate(picked)), list(reversed(list(enumerate(picked))))):
        engine = hypothetical.Engine(ctx)
        for fid in FEATURES:
            for i, s in order:
                assert engine.ok(s, fid) is plain[(i, fid)], (fid, s.describe())
    engine = hypothetical.Engine(ctx)
    never = [fid for fid in FEATURES if engine.never_ok(fid)]
    for fid in never:
        assert not any(plain[(i, fid)] for i in range(len(picked))), fid
    assert not any(hypothetical.Engine(ctx, memo=False).never_ok(fid) for fid in FEATURES)  # the reference
    return len(never)


def _status_plain(ctx: Context, stack: Any, fid: str) -> str:
    """The feature's status on the stack, judged by the engine alone on a fresh context."""
    from stackcheck.verdicts.engine import evaluate_feature

    feature = next(f for f in M.features if str(f["id"]) == fid)
    after = hypothetical.stack_facts(ctx, stack)
    return str(evaluate_feature(feature, Context(facts=after, manifests=M)).get("status"))


def test_never_ok_and_ok_agree_with_the_plain_engine_on_every_case() -> None:
    named = sum(_never_ok_and_ok_agree(dict(load_facts_file(str(c / "facts.json")))) for c in BASES)
    assert named > 0  # (the write-up box's nccl-nvls, custom-allreduce, attention-flashmla, ...)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(boxes())
def test_generated_boxes_never_ok_and_ok_agree_with_the_plain_engine(
    box: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    _never_ok_and_ok_agree(box[0])


# ---- the solver's pin index -----------------------------------------------------------------------------

_VERSIONS = sorted(
    {str(r["version"]) for n in ("torch", "sglang", "flashinfer-python", "sgl-kernel") for r in _releases(n)}
)


@given(
    st.sampled_from(_VERSIONS)
    | st.from_regex(r"[0-9]{1,2}(\.[0-9]{1,2}){0,3}(\.post[0-9]|rc[0-9]|\+cu1[23]0)?", fullmatch=True),
    st.sampled_from(["==", "===", ">=", "~=", "!="]),
    st.booleans(),
)
def test_an_exact_pin_admits_what_version_in_admits(version: str, op: str, wildcard: bool) -> None:
    from stackcheck.facts.versions import version_in
    from stackcheck.plan.solver import _by_public, _pinned

    spec = f"{op}{version}{'.*' if wildcard and '+' not in version else ''}"
    index = _by_public(_VERSIONS, lambda v: v)
    pinned = _pinned(_VERSIONS, index, spec)
    if pinned is None:  # not an exact pin: the solver scans with version_in
        return
    assert [v for _, v in pinned] == [v for v in _VERSIONS if version_in(v, spec)]


# ---- the companions an SGLang step moves, and the checks after the plan ------------------------------------


@pytest.mark.parametrize("sglang", ["0.5.9", "0.5.21"])
def test_a_companion_an_sglang_step_moves_is_read_with_the_sglang_choice(sglang: str) -> None:
    """sgl-deep-ep installed at a version no SGLang release pins, --want moe-a2a-deepep (whose rules read
    sgl-deep-ep's version): an SGLang step brings sgl-deep-ep to its pin, so the rules that read it read the SGLang
    choice (deps.companions). On the parent the memo read them as the box's own facts: never_ok said no release
    makes the feature ok (error "... (ok)") where the reference planned it."""
    facts: dict[str, Any] = copy.deepcopy(
        dict(load_facts_file(str(ROOT / "tests" / "cases" / "h200-newest" / "facts.json")))
    )
    pkgs: dict[str, Any] = facts["packages"]
    pkgs["sglang"] = {**pkgs["sglang"], "version": sglang, "dist_version": sglang}
    pkgs["sgl-deep-ep"] = {"installed": True, "version": "0.0.9", "dist_version": "0.0.9"}
    fast, reference = _both(facts, want=["moe-a2a-deepep"])
    assert fast == reference
    assert "sglang" in feature_components(next(f for f in M.features if f["id"] == "moe-a2a-deepep"), M)[0]


def test_extension_module_paths_read_their_package_and_the_symbol_probe() -> None:
    """pkg.NAME.lib.MODULE.archs reads NAME's binaries (dropped by a step that replaces NAME); .missing_symbols
    reads the kernel symbol probe's section too, which a driver, torch or kernel step drops."""
    assert path_components("pkg.sgl-kernel.lib.common_ops.archs") == frozenset({"kernel"})
    assert path_components("pkg.sgl-kernel.lib.flash_ops.missing_symbols") == frozenset({"driver", "torch", "kernel"})
    assert path_components("pkg.sgl-deep-ep.lib._C.archs", companions=frozenset({"sgl-deep-ep"})) == frozenset(
        {"sglang"}
    )
    assert path_components("pkg.nccl.lib.x.archs") == frozenset()
    assert path_components("pkg..lib.x.archs") is None


def test_checks_after_the_plan_reuse_the_box_verdicts_where_nothing_they_read_moved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The write-up box's --want torch-symm-mem (a FlashInfer step): with the box's check verdicts given, only the
    checks that read FlashInfer (or are builtin) are judged again on the facts after the plan, and the plan is the
    same as with every check judged."""
    facts = dict(load_facts_file(str(ROOT / "tests" / "cases" / "writeup-after" / "facts.json")))
    judged: list[str] = []

    def counted(check: Any, ctx: Context) -> Any:
        judged.append(str(check["id"]))
        return evaluate_check(check, ctx)

    monkeypatch.setattr("stackcheck.plan.hypothetical.evaluate_check", counted)
    docs = []
    for given_checks in (False, True):
        ctx = Context(facts=copy.deepcopy(facts), manifests=M)  # type: ignore[arg-type]
        features, checks = evaluate_all(ctx)
        judged.clear()
        plan, _ = plan_and_facts(
            ctx, list(features), want=["torch-symm-mem"], box_verdicts=list(features),
            box_checks=list(checks) if given_checks else None,
        )  # fmt: skip
        docs.append(json.dumps(plan.to_json(), sort_keys=True))
        if not given_checks:
            # every builtin check is judged in full; one of rules alone only where a rule that applies does not pass
            # (where every one passes it is ok or skipped, never failed: iperf26, tests/plan/test_plan_lean_truth.py)
            builtins = {str(c["id"]) for c in M.checks if c.get("builtin") is not None}
            assert builtins <= set(judged) and len(judged) < len(M.checks)
    assert docs[0] == docs[1]
    assert 0 < len(judged) < len(M.checks) // 2
    for cid in judged:
        check = next(c for c in M.checks if c["id"] == cid)
        assert "flashinfer" in hypothetical._check_reads(check, M, True)
