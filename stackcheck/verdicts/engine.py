"""The rule engine: facts + manifests -> per-feature verdicts and stack checks. Pure.

A feature is `not-applicable` when a package it needs is not installed, `unknown` when a fact it needs is
missing (the reason names the fact), `blocked` when an applicable rule's requirement fails (with the
effect: crash, disabled or degraded), else `ok`. Tri-state logic: every predicate evaluates to True,
False or Missing."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from stackcheck import lean_json  # (json.dumps's answers without importing the json package: ~1 ms of a first plan)
from stackcheck.facts.archs import coverage, covering, expand_arch_list
from stackcheck.facts.model import KERNEL_PACKAGES, cc_tuple
from stackcheck.lean_typing import TYPE_CHECKING, cast
from stackcheck.verdicts import EFFECT_ORDER
from stackcheck.verdicts.context import Context, GpuModel, Missing, TableValue, Unknown

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.facts.model import Facts
    from stackcheck.knowledge.types import Check, Feature, Rule, Workaround
    from stackcheck.verdicts.sweep import Swept
    from stackcheck.verdicts.types import CheckVerdict, FeatureVerdict, Reason
from stackcheck.facts.versions import (
    candidates_of,
    compare_numeric,
    parse_version,
    post_between,
    public,
    straddled_final,
    version_in,
)


class Outcome:
    """The result of one predicate. (A plain class with slots: importing dataclasses costs ~8 ms of every
    start, and hundreds of these are made per run.)"""

    __slots__ = ("missing", "note", "observed", "patched", "raw_required", "required", "subject", "value")

    def __init__(
        self,
        value: bool | None,  # None: missing fact
        observed: Any = None,
        required: Any = None,
        missing: str | None = None,
        patched: str | None = None,
        note: str | None = None,
        raw_required: Any = None,
        subject: str | None = None,  # the fact path or gate that was observed
    ) -> None:
        self.value = value
        self.observed = observed
        self.required = required
        self.missing = missing
        self.patched = patched
        self.note = note
        self.raw_required = raw_required
        self.subject = subject

    _FIELDS = ("value", "observed", "required", "missing", "patched", "note", "raw_required", "subject")

    def __repr__(self) -> str:
        return f"Outcome({', '.join(f'{k}={getattr(self, k)!r}' for k in self._FIELDS)})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Outcome):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    __hash__ = None  # type: ignore[assignment]


def _ref(ctx: Context, ref: Any, gpu: GpuModel | None) -> tuple[Any, TableValue | None]:
    if isinstance(ref, dict) and "fact" in ref:
        return ctx.lookup(str(ref["fact"]), gpu), None
    if isinstance(ref, dict) and "gate" in ref:
        g = ctx.source_table(str(ref["gate"]))
        return g.value, g
    return ref, None


def _final_release_text(text: str) -> bool:
    """Whether the text before its first `+` is ASCII digits and dots alone (0.5.9, 2.9.1+cu128, 12): public() of such
    a text is None or a final release (no pre, post or dev part), so straddled_final and post_between both give None
    for it (the first reads a pre-release or dev build, the second a post release) and the version operator need
    not ask them (iperf36: the planner compares every candidate's release against every rule's range, each pair once
    on a first run; tests/verdicts/test_version_op_final.py holds the two readings equal)."""
    digits = text.partition("+")[0].replace(".", "")
    return digits.isascii() and digits.isdigit()


def _compare(op: str, lhs: Any, rhs: Any) -> bool:
    if op == "==":
        return bool(lhs == rhs)
    if op == "!=":
        return bool(lhs != rhs)
    if op in ("<", "<=", ">", ">="):
        if isinstance(lhs, int | float) and isinstance(rhs, int | float):
            c = (lhs > rhs) - (lhs < rhs)
        else:
            num = compare_numeric(str(lhs), str(rhs))
            if num is None:
                lv, rv = parse_version(str(lhs)), parse_version(str(rhs))
                if lv is None or rv is None:
                    raise Missing(f"{lhs} {op} {rhs}", f"cannot compare {lhs!r} with {rhs!r}")
                num = (lv > rv) - (lv < rv)
            c = num
        return {"<": c < 0, "<=": c <= 0, ">": c > 0, ">=": c >= 0}[op]
    if op == "in":
        return isinstance(rhs, list | tuple | dict) and lhs in rhs
    if op == "not_in":
        return not (isinstance(rhs, list | tuple | dict) and lhs in rhs)
    if op == "contains":
        return isinstance(lhs, list | tuple | dict) and rhs in lhs
    if op == "version":
        result = version_in(str(lhs), str(rhs))
        if result is None:
            raise Missing(str(lhs), f"cannot read version {lhs!r} against {rhs!r}")
        if _final_release_text(str(lhs)):  # (neither check below can apply to a final release)
            return result
        final = straddled_final(str(lhs), str(rhs))
        if final is not None:
            # PEP 440 puts a pre-release of V on neither side of a bound at V (`<V` and `>=V` both exclude it), so a
            # rule pair split at V left it judged by neither: its code is V's or the release's before, not known
            raise Missing(
                str(lhs),
                f"{lhs} is a pre-release or dev build of {final}: {rhs} holds for one of {final} and the releases"
                " just below it, and which of their code a pre-release has is not known",
            )
        base = post_between(str(lhs), str(rhs))
        if base is not None:
            # PEP 440 puts a post release of V outside both `<=V` and `>V`, so a rule pair split there judged it by
            # neither: its code is V's or a later release's, not known (imend2)
            raise Missing(
                str(lhs),
                f"{lhs} falls between <={base} and >{base}: PEP 440 puts a post release of {base} in neither, and"
                f" whether its code is {base}'s or a later release's is not known",
            )
        return result
    raise Missing(op, f"unknown operator {op!r}")


def evaluate_predicate(pred: Any, ctx: Context, gpu: GpuModel | None) -> Outcome:
    """Evaluate a predicate; a missing fact gives Outcome(value=None, missing=reason). Outcomes are not
    changed after they are made, so one shared by contexts (ctx.shared_outcomes) is returned as it is."""
    shared = ctx.shared_outcomes
    if shared is None or not isinstance(pred, dict):
        return _evaluate_predicate(pred, ctx, gpu)
    key = (id(pred), gpu)
    got = shared.outcomes.get(key)
    if got is not None and got[0] is pred:
        kept: Outcome = got[1]
        return kept
    if not shared.fixed(pred):
        return _evaluate_predicate(pred, ctx, gpu)
    # its outcome is kept, and the parts it reads are asked again only through it: they are evaluated without the
    # shared outcomes (neither looked up nor asked whether they are fixed, which costs a walk of each on a first run)
    ctx.shared_outcomes = None
    try:
        out = _evaluate_predicate(pred, ctx, gpu)
    finally:
        ctx.shared_outcomes = shared
    shared.outcomes[key] = (pred, out)
    return out


def predicate_holds(pred: Any, ctx: Context, gpu: GpuModel | None) -> bool | None:
    """evaluate_predicate(pred, ctx, gpu).value, without the Outcome's texts (what was observed and required, in
    words) that a reader of the value alone drops: rules_hold, which the planner asks ~250 times a first run of
    `plan --want`, and the planner's test whether a check fails. The shared outcomes are read and filled as
    evaluate_predicate reads and fills them (a shared predicate is evaluated by it, in full, and kept); a
    `same_release` or `covered_by` comparison is evaluated by it too. tests/plan/test_plan_lean_truth.py holds
    the two equal on every predicate of the manifests, on the case boxes, the planner's stacks and generated boxes."""
    shared = ctx.shared_outcomes
    if shared is not None and isinstance(pred, dict):
        got = shared.outcomes.get((id(pred), gpu))
        if got is not None and got[0] is pred:
            return got[1].value  # type: ignore[no-any-return]
        if shared.fixed(pred):
            return evaluate_predicate(pred, ctx, gpu).value
    if not isinstance(pred, dict):
        return None
    if "all" in pred or "any" in pred:
        is_all = "all" in pred
        decides = not is_all  # the first part that gives it is the outcome (_evaluate_predicate)
        unknown = False
        for sub in pred.get("all" if is_all else "any") or []:
            value = predicate_holds(sub, ctx, gpu)
            if value is decides:
                return value
            if value is None:
                unknown = True
        return None if unknown else is_all
    if "unknown" in pred:
        return None
    if "not" in pred:
        inner = predicate_holds(pred["not"], ctx, gpu)
        return None if inner is None else not inner
    op = str(pred.get("op", "=="))
    if op in ("exists", "same_release", "covered_by"):
        return _evaluate_predicate(pred, ctx, gpu).value
    try:
        lhs = ctx.source_table(str(pred["gate"])).value if "gate" in pred else ctx.lookup(str(pred.get("fact")), gpu)
        rhs = pred.get("value")
        if isinstance(rhs, dict):  # (a literal is its own value: _ref's answer, without the call)
            rhs = _ref(ctx, rhs, gpu)[0]
        return _compare(op, lhs, rhs)
    except Missing:
        return None


def _evaluate_predicate(pred: Any, ctx: Context, gpu: GpuModel | None) -> Outcome:
    if not isinstance(pred, dict):
        return Outcome(None, missing=f"malformed predicate {pred!r}")
    if "all" in pred or "any" in pred:
        is_all = "all" in pred
        subs = pred.get("all" if is_all else "any") or []
        decides = not is_all  # a part that is False decides an `all`, True an `any`: the first one is the outcome,
        parts = []  # whatever the parts after it give, so they are not evaluated
        for sub in subs:
            part = evaluate_predicate(sub, ctx, gpu)
            if part.value is decides:
                return part
            parts.append(part)
        missing = [p for p in parts if p.value is None]
        if missing:
            return missing[0]
        if not parts:
            return Outcome(is_all)
        if is_all:
            return parts[-1]
        # every alternative failed: show what each one saw, and the alternatives as the requirement
        seen = {f"{o.subject or _describe_lhs(sp)} = {_text(o.observed)}" for sp, o in zip(subs, parts, strict=True)}
        return Outcome(
            False, "; ".join(sorted(seen)), _describe(pred), patched=next((o.patched for o in parts if o.patched), None)
        )
    if "unknown" in pred:
        # a hop of the path that was not established (read nowhere, or inferred): never ok, never blocked
        return Outcome(None, missing=str(pred["unknown"]))
    if "not" in pred:
        inner = evaluate_predicate(pred["not"], ctx, gpu)
        if inner.value is None:
            return inner
        return Outcome(not inner.value, inner.observed, f"not {inner.required}", patched=inner.patched)
    op = str(pred.get("op", "=="))
    try:
        if op == "exists":
            try:
                present = (
                    ctx.source_table(str(pred["gate"])).value
                    if "gate" in pred
                    else ctx.lookup(str(pred.get("fact")), gpu)
                )
            except Unknown as u:  # not read (a failed probe): neither present nor absent
                return Outcome(None, missing=u.reason)
            except Missing as m:
                return Outcome(False, f"absent ({m.reason})", "present")
            return Outcome(True, present, "present")
        if "gate" in pred:
            g = ctx.source_table(str(pred["gate"]))
            lhs, lhs_gate = g.value, g
        else:
            lhs, lhs_gate = ctx.lookup(str(pred.get("fact")), gpu), None
        rhs = pred.get("value")
        rhs_gate = None
        if isinstance(rhs, dict):  # (a literal is its own value: _ref's answer, without the call)
            rhs, rhs_gate = _ref(ctx, rhs, gpu)
        gate = lhs_gate or rhs_gate
        patched = gate.detail if gate is not None and gate.origin == "patched" else None
        if op == "same_release":
            return _same_release(lhs, rhs, subject=str(pred.get("fact")))
        if op == "covered_by":
            t = cc_tuple(str(lhs))
            if t is None:
                return Outcome(None, missing=f"not a compute capability: {lhs!r}")
            targets = expand_arch_list([str(x) for x in rhs or []])
            rules = ctx.target_rules()
            cov = coverage(targets, t, rules)
            via = covering(targets, t, rules)
            observed = f"{cov} via {', '.join(via)}" if via else "no target runs on it"
            note = "PTX JIT-compiled at first start (slow start)" if cov == "ptx" else None
            return Outcome(cov != "none", observed, f"a target for {lhs} in {rhs}", patched=patched, note=note)
        subject = f"gate {pred['gate']}" if "gate" in pred else str(pred.get("fact"))
        return Outcome(
            _compare(op, lhs, rhs), lhs, _required_text(op, rhs), patched=patched, raw_required=rhs, subject=subject
        )
    except Missing as m:
        return Outcome(None, missing=m.reason)


_OP_WORDS = {"in": "one of", "not_in": "none of", "contains": "contains", "version": "version"}


def _same_release(lhs: Any, rhs: Any, subject: str) -> Outcome:
    """`same_release`: two driver releases (`570.124.06`) compared on the dot-separated parts both give, at least
    two. A difference there is a mismatch (a hand-written `570.124` against a library's `570.133.07`); equal there
    but one gives more parts (`570.124` against `570.124.06`) is not decided: the part one leaves out may differ
    (570.124.04 and 570.124.06 are two releases, and the module compares whole strings), so a truncated version is
    never read as a match. Fewer than two common parts, or a part that is not a number: not decided."""
    left, right = str(lhs).strip().split("."), str(rhs).strip().split(".")
    n = min(len(left), len(right))
    if n < 2 or not all(p.isdigit() for p in (*left, *right)):
        why = f"cannot compare driver releases {lhs!r} and {rhs!r} (two numeric parts at least)"
        raise Missing(f"{lhs} vs {rhs}", why)
    same = left[:n] == right[:n]  # as written: the kernel module compares the strings
    observed: Any = lhs
    if len(left) != len(right):
        shorter = str(rhs) if len(right) < len(left) else str(lhs)
        observed = f"{lhs} (compared on {'.'.join(left[:n])}: {shorter} gives {n} parts)"
        if same:
            why = f"{shorter} gives {n} parts: equal on {'.'.join(left[:n])}, the rest not known"
            raise Missing(f"{lhs} vs {rhs}", why)
    return Outcome(same, observed, rhs, subject=subject)


def _required_text(op: str, value: Any) -> Any:
    """The required value as a reader wants it: the bare value for ==, else the operator and the value."""
    if op == "==":
        return value
    return f"{_OP_WORDS.get(op, op)} {_text(value)}"


def _describe_lhs(pred: Any) -> str:
    if isinstance(pred, dict) and ("all" in pred or "any" in pred):
        return "(" + _describe(pred) + ")"
    if isinstance(pred, dict):
        return str(pred.get("fact") or f"gate {pred.get('gate')}")
    return str(pred)


#: predicate (by identity, kept alive with its text: its id is not reused) -> its requirement in words. A failing
#: `any` states its alternatives (_evaluate_predicate), and the same few predicates of a rule fail on every judging
#: of it: the gate judges an MLA feature up to five times a run (pipeline.reevaluate), and _describe rebuilt the
#: text, JSON and all, each time (~30% of a re-judging's CPU). A predicate is never changed once judged (the
#: manifests' are read-only; _SHAPES and the planner's shared outcomes rest on the same)
_TEXTS: dict[int, tuple[Any, str]] = {}
#: False: every text is built anew (the reference tests/verdicts/test_describe_memo.py compares the memo with)
MEMO_TEXTS = True


def _describe(pred: Any) -> str:
    if not isinstance(pred, dict):
        return str(pred)
    got = _TEXTS.get(id(pred)) if MEMO_TEXTS else None
    if got is not None and got[0] is pred:
        return got[1]
    text = _describe_now(pred)
    if MEMO_TEXTS and len(_TEXTS) < 65536:  # manifests hold a few thousand predicates; a hostile set is not memoised
        _TEXTS[id(pred)] = (pred, text)
    return text


def _describe_now(pred: dict[str, Any]) -> str:
    if "all" in pred:
        return " and ".join(_describe(p) for p in pred["all"])
    if "any" in pred:
        alts = [f"({_describe(p)})" if isinstance(p, dict) and "all" in p else _describe(p) for p in pred["any"]]
        return "(" + " or ".join(alts) + ")"
    if "not" in pred:
        return f"not ({_describe(pred['not'])})"
    if "unknown" in pred:
        return f"not established: {pred['unknown']}"
    lhs = pred.get("fact") or f"gate {pred.get('gate')}"
    value = pred.get("value")
    if isinstance(value, dict):
        value = value.get("fact") or f"gate {value.get('gate')}"
    return f"{lhs} {pred.get('op', '==')} {value_json(value) if not isinstance(value, str) else value}"


def _json_str(text: str) -> str | None:
    """json.dumps(text) where it needs no escape (printable ASCII without a quote or a backslash), else None."""
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return None


def value_json(value: Any) -> str:
    """json.dumps(value), built by hand for what a rule's value mostly is (null, a boolean, an integer, a list of
    integers or of plain strings): a first run describes a few hundred predicates (_describe_now), and each
    json.dumps builds an encoder (~3 us). Anything else goes to lean_json.dumps, json.dumps's answer
    (tests/verdicts/test_value_json.py holds the two equal)."""
    kind = type(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is list:
        parts: list[str] = []
        for item in value:
            if type(item) is int:
                parts.append(int.__repr__(item))
            elif type(item) is str and (quoted := _json_str(item)) is not None:
                parts.append(quoted)
            else:
                return lean_json.dumps(value)
        return "[" + ", ".join(parts) + "]"
    return lean_json.dumps(value)


def _format(message: str, observed: Any, required: Any, gpu: GpuModel | None = None) -> str:
    """Fill a rule's message: {observed}, {required}, and the GPU's own architecture where a rule is judged
    per GPU: {gpu.cc} ("12.0") and {gpu.sm} ("120", as in sm_120a): the message names the architecture the
    user's error names, never a placeholder."""
    text = message.replace("{observed}", _text(observed)).replace("{required}", _text(required))
    if gpu is not None and ("{gpu.cc}" in text or "{gpu.sm}" in text):
        t = cc_tuple(gpu.cc)
        sm = f"{t[0]}{t[1]}" if t is not None else gpu.cc.replace(".", "")
        text = text.replace("{gpu.cc}", gpu.cc).replace("{gpu.sm}", sm)
    return text.replace("{gpu.cc}", "this GPU's").replace("{gpu.sm}", "XXX")


def _text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


_PER_GPU_PATHS = frozenset(
    {"gpu.cc", "gpu.cc_major", "gpu.sm", "gpu.name", "gpu.min_cuda", "gpu.proprietary_kmod", "triton.ptxas_cuda"}
)


def uses_gpu(pred: Any) -> bool:
    """Rules that read a GPU's own facts are evaluated once per distinct GPU model."""
    return reads_any(pred, _PER_GPU_PATHS)


def reads_any(pred: Any, paths: frozenset[str]) -> bool:
    """Whether the predicate reads one of the fact `paths` anywhere (a comparison's fact, or a fact given as its
    value). (A walk with its own stack, in the order a recursive reading takes: depth first, each container's
    members in order.)"""
    stack = [pred]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if isinstance(node, dict):
            if node.get("fact") in paths:
                return True
            for v in reversed(node.values()):
                if isinstance(v, dict | list):
                    push(v)
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return False


RuleHook = Callable[["Rule", "GpuModel | None", "Reason", "Outcome | None"], "Reason | None"]
"""Called for each rule that may apply (its `when` is not false) with the rule, the GPU model, the reason
so far and the `when` outcome; a Reason it returns replaces the rule's own evaluation (derive.judge)."""


#: rule (by identity, the rule kept alive with its entry) -> whether it is judged per GPU: what a rule says does
#: not change between evaluations, and the planner evaluates each rule on many stacks (its requirement in words is
#: _describe's memo, read where the rule applies: a rule whose `when` is false on every stack never needs it)
_SHAPES: dict[int, tuple[Rule, bool]] = {}


def mark_filled(reason: Reason, texts: list[str]) -> None:
    """Mark a reason whose rule reads a filled fact (stackcheck.facts.filled: a value a facts file left out, filled
    from the manifests' tables): inferred, naming what was filled."""
    if texts:
        reason["inferred"] = True
        reason["filled"] = [f"filled: {t}" for t in texts]


#: rule (by identity) -> whether it reads driver.cuda (mark_filled's question, asked only of filled facts)
_DRIVER_CUDA_PATH = frozenset({"driver.cuda"})
_DRIVER_CUDA: dict[int, tuple[Rule, bool]] = {}


def _reads_driver_cuda(rule: Rule) -> bool:
    got = _DRIVER_CUDA.get(id(rule))
    if got is not None and got[0] is rule:
        return got[1]
    reads = reads_any(rule.get("when"), _DRIVER_CUDA_PATH) or reads_any(rule.get("require"), _DRIVER_CUDA_PATH)
    if len(_DRIVER_CUDA) < 65536:
        _DRIVER_CUDA[id(rule)] = (rule, reads)
    return reads


def _rule_per_gpu(rule: Rule) -> bool:
    got = _SHAPES.get(id(rule))
    if got is not None and got[0] is rule:
        return got[1]
    per_gpu = uses_gpu(rule.get("when")) or uses_gpu(rule.get("require"))
    if len(_SHAPES) < 65536:  # manifests are a few hundred rules; a hostile set only stops being memoised
        _SHAPES[id(rule)] = (rule, per_gpu)
    return per_gpu


def prepare(manifests: Any, checks: bool = True) -> None:
    """Work out now whether each rule is judged per GPU (_rule_per_gpu): it reads the rule alone, never the facts,
    so the gate does it in its loading thread while the probes wait on the driver, and the verdicts after the facts
    arrive find it done. The same memo the evaluation fills. Of the shipped features.json and checks.json, the
    answers an earlier run worked out are read back (knowledge/prepared.py, `rule-shapes`: one boolean per rule, in
    order, under a key of the two files' stamps, this module's and the loader's), and kept when worked out here.

    `checks` False: the features' rules alone, read back from the kept answers (the features' rules come first there),
    so that checks.json is not read for a caller that may judge no check (a plan whose failing checks on the box the
    plan cache kept: iperf40); without kept answers, everything, as with `checks`. The checks' rules are then filled
    on first use (_rule_per_gpu), or by a later prepare(manifests)."""
    derived = getattr(manifests, "derived", None)  # (once per manifests: the plan's text asks before the planner)
    done = derived("engine.prepared") if derived is not None else None
    if done and (done.get(True) or (not checks and done.get("features"))):
        return
    from stackcheck.knowledge import loader, prepared

    if not checks and done is not None:
        kept = prepared.kept_for(
            manifests, "rule-shapes", ("features.json", "checks.json"), __file__, loader.__file__ or ""
        )
        value = kept[2] if kept is not None else None
        first: list[Rule] = [
            cast("Rule", r) for item in manifests.features for r in item.get("rules") or [] if isinstance(r, dict)
        ]
        flags = value.get("per_gpu") if value is not None else None
        if (
            type(flags) is list
            and value is not None
            and value.get("rules") == len(flags)
            and len(flags) >= len(first)
            and all(type(f) is bool for f in flags)
        ):
            done["features"] = True
            done["kept"] = kept  # (read once: a later prepare(manifests) takes the checks' part from it)
            for rule, per_gpu in zip(first, flags, strict=False):
                if len(_SHAPES) < 65536:
                    _SHAPES[id(rule)] = (rule, per_gpu)
            return
    if done is not None:
        done[True] = True
    items = [*manifests.features, *manifests.checks]
    rules: list[Rule] = [cast("Rule", r) for item in items for r in item.get("rules") or [] if isinstance(r, dict)]

    kept = done.pop("kept", None) if done is not None else None
    if kept is None:
        kept = prepared.kept_for(
            manifests, "rule-shapes", ("features.json", "checks.json"), __file__, loader.__file__ or ""
        )
    value = kept[2] if kept is not None else None
    flags = value.get("per_gpu") if value is not None and value.get("rules") == len(rules) else None
    if type(flags) is list and len(flags) == len(rules) and all(type(f) is bool for f in flags):
        for rule, per_gpu in zip(rules, flags, strict=True):
            if len(_SHAPES) < 65536:
                _SHAPES[id(rule)] = (rule, per_gpu)
        return
    flags = [_rule_per_gpu(rule) for rule in rules]
    if kept is not None:
        prepared.keep(kept[0], "rule-shapes", kept[1], {"rules": len(rules), "per_gpu": flags})


class _NotOk(Exception):
    """A rule failed or is not known: the feature is not ok, whatever the other rules say (feature_ok)."""

    def __init__(self, rule: Rule) -> None:
        super().__init__()
        self.rule = rule


def evaluate_rules(
    item: Feature | Check, ctx: Context, hook: RuleHook | None = None, stop: bool = False
) -> list[Reason]:
    """The reasons of every rule that applies; `stop`: raise _NotOk at the first that fails or is unknown."""
    reasons: list[Reason] = []
    models = ctx.gpu_models()
    not_read = ctx.gpus_not_read() if models else None
    filled = ctx.any_filled()
    for rule in item.get("rules") or []:
        per_gpu = _rule_per_gpu(rule)
        targets: list[GpuModel | None] = list(models) if per_gpu and models else [None]
        if per_gpu and models and not_read is not None:
            targets.append(None)  # a GPU whose compute capability was not read: unknown for it (not_read)
        for gpu in targets:
            unread = not_read if gpu is None and len(targets) > 1 else None  # the GPU not read, named
            w = evaluate_predicate(rule["when"], ctx, gpu) if "when" in rule else None
            if w is not None and w.value is False:
                continue
            base: Reason = {
                "rule": str(rule.get("id")),
                "requirement": _describe(rule.get("require")),
                "effect": str(rule.get("effect", "crash")),
                "source": rule.get("source"),
            }
            if rule.get("inferred"):
                base["inferred"] = True
            if filled:
                mark_filled(base, ctx.filled_marks(gpu if per_gpu else None, _reads_driver_cuda(rule)))
            if gpu is not None and len(models) > 1:
                base["gpu"] = gpu.label
            if hook is not None:
                replaced = hook(rule, gpu, base, w)
                if replaced is not None:
                    reasons.append(replaced)
                    continue
            r = evaluate_predicate(rule.get("require"), ctx, gpu)
            if w is not None and w.value is None:
                # whether the rule applies is not known: it holds only where its requirement does (a rule says
                # "where `when`, `require`": met whichever way `when` turns out); else it is unknown
                if r.value is not True:
                    if stop:
                        raise _NotOk(rule)
                    reasons.append({**base, "result": "unknown", "message": unread or str(w.missing)})
                    continue
            if r.value is None:
                if stop:
                    raise _NotOk(rule)
                reasons.append({**base, "result": "unknown", "message": unread or str(r.missing)})
                continue
            reason: Reason = {**base, "observed": r.observed, "required": r.required}
            if r.patched:
                reason["patched"] = r.patched
            if r.value:
                reason["result"] = "pass"
                reason["message"] = r.note or "requirement met"
            else:
                if stop:
                    raise _NotOk(rule)
                reason["result"] = "fail"
                raw = r.raw_required if r.raw_required is not None else r.required
                reason["message"] = _format(str(rule.get("message", "requirement not met")), r.observed, raw, gpu)
            reasons.append(reason)
    return reasons


def _order(reasons: list[Reason]) -> list[Reason]:
    rank = {"fail": 0, "unknown": 1, "pass": 2}
    return sorted(reasons, key=lambda r: (rank[r.get("result", "pass")], -EFFECT_ORDER.get(r.get("effect", ""), 0)))


def rules_hold(rules: list[Rule], ctx: Context) -> bool:
    """Whether every one of these rules that applies passes on these facts (evaluate_rules' reading, stopped at
    the first that fails or is not known): when one does not, a feature with these rules is not ok, whatever its
    other rules say (plan.hypothetical.Engine.never_ok)."""
    # evaluate_rules' reading with stop=True, without the reasons it builds for the caller, which this answer drops:
    # the same predicates evaluated in the same order (the shared outcomes fill alike), the same answer
    # (tests/verdicts/test_rules_hold_lean.py holds the two equal); the planner asks it ~250 times a first run, so
    # each predicate is read for its value alone (predicate_holds: no Outcome and none of its texts)
    models = ctx.gpu_models()
    not_read = ctx.gpus_not_read() if models else None
    for rule in rules:
        per_gpu = _rule_per_gpu(rule)
        targets: list[GpuModel | None] = list(models) if per_gpu and models else [None]
        if per_gpu and models and not_read is not None:
            targets.append(None)
        for gpu in targets:
            w = predicate_holds(rule["when"], ctx, gpu) if "when" in rule else True
            if w is False:
                continue
            r = predicate_holds(rule.get("require"), ctx, gpu)
            if w is None:  # whether it applies is not known: it holds only where `require` does
                if r is not True:
                    return False
                continue
            if r is None or not r:
                return False
    return True


def feature_ok(feature: Feature, ctx: Context) -> FeatureVerdict | None:
    """The feature's verdict when it is ok (evaluate_feature's, in full), else None: the rules are read only up
    to the first that fails or is not known, which makes the verdict blocked or unknown whatever the rest say
    (the planner asks many stacks only whether a feature is ok on them)."""
    return feature_ok_or_rule(feature, ctx)[0]


def feature_ok_or_rule(feature: Feature, ctx: Context) -> tuple[FeatureVerdict | None, Rule | None]:
    """feature_ok's answer, and the rule that stopped the reading when one did (it failed or is not known)."""
    try:
        verdict = evaluate_feature(feature, ctx, _stop=True)
    except _NotOk as stop:
        return None, stop.rule
    return (verdict if verdict.get("status") == "ok" else None), None


def evaluate_feature(feature: Feature, ctx: Context, _stop: bool = False) -> FeatureVerdict:
    verdict: FeatureVerdict = {
        "id": str(feature.get("id")),
        "title": str(feature.get("title", feature.get("id"))),
        "enable": feature.get("enable") or {},
    }
    needs = feature.get("needs") or []
    if ctx.facts.get("packages") is None and needs:
        return {
            **verdict,
            "status": "unknown",
            "effect": None,
            "reasons": [{"rule": "needs", "result": "unknown", "message": "installed packages not known"}],
        }
    for name in needs:
        alternatives = name.split("|")
        states = [ctx.package_state(a) for a in alternatives]
        # installed with its version unreadable meets the need (the rules that read the version are unknown);
        # a package whose presence is not known makes the feature unknown, never not-applicable
        if not any(ctx.is_installed(a) for a in alternatives) and "unknown" in states:
            return {
                **verdict,
                "status": "unknown",
                "effect": None,
                "reasons": [
                    {
                        "rule": "needs",
                        "result": "unknown",
                        "message": "; ".join(ctx.package_unknown_reason(a) for a, st in zip(alternatives, states,
                                                                                             strict=True)
                                             if st == "unknown"),
                    }
                ],
            }  # fmt: skip
        if not any(ctx.is_installed(a) for a in alternatives):
            return {
                **verdict,
                "status": "not-applicable",
                "effect": None,
                "reasons": [
                    {"rule": "needs", "result": "pass", "message": f"{' or '.join(alternatives)} not installed"}
                ],
            }
    assume = set(feature.get("assume_newer") or [])
    newer_all = [(a, v) for n in needs for a in n.split("|") if a not in assume and (v := ctx.newer_than_manifests(a))]
    if newer_all:
        judged = _judge_newer(verdict, feature, ctx, newer_all)
        if judged is not None:
            return judged
    if newer_all:  # nothing derived: unknown, naming the first (in the order of `needs`)
        alt, newer = newer_all[0]
        return {
            **verdict,
            "status": "unknown",
            "effect": None,
            "reasons": [
                {
                    "rule": "known-release",
                    "result": "unknown",
                    "observed": newer,
                    "required": f"<= {ctx.newest_known(alt)}",
                    "message": f"{alt} {newer} is newer than the manifests (data of {ctx.manifests.date})",
                }
            ],
        }
    reasons = _order(evaluate_rules(feature, ctx, stop=_stop))
    fails = [r for r in reasons if r.get("result") == "fail"]
    if fails:
        effect = max((r.get("effect", "crash") for r in fails), key=lambda e: EFFECT_ORDER.get(e, 0))
        blocked: FeatureVerdict = {**verdict, "status": "blocked", "effect": effect, "reasons": reasons}
        workaround = workaround_for(feature, blocked)
        if workaround is not None:
            blocked["workaround"] = workaround
        return blocked
    if any(r.get("result") == "unknown" for r in reasons):
        swept = _blocked_in_every_release(feature, ctx, needs)
        if swept is not None:
            return {**verdict, "status": "blocked", "effect": swept[0], "reasons": [*swept[1], *reasons]}
        by_day = _swept_by_day(feature, ctx, needs)
        if by_day is not None:
            if by_day.outcome == "ok":
                return {**verdict, "status": "ok", "effect": None, "reasons": by_day.reasons}
            blocked = {**verdict, "status": "blocked", "effect": by_day.effect, "reasons": [*by_day.reasons, *reasons]}
            workaround = workaround_for(feature, blocked)
            if workaround is not None:
                blocked["workaround"] = workaround
            return blocked
        return {**verdict, "status": "unknown", "effect": None, "reasons": reasons}
    older = _older_than_manifests(ctx, needs)
    if older:
        # the rules were read in the releases the manifests know: an older one passing them is not a path read
        name, version, oldest = older
        reason: Reason = {
            "rule": "known-release",
            "result": "unknown",
            "observed": version,
            "required": f">= {oldest}",
            "message": f"{name} {version} is older than every release the manifests know (oldest {oldest}): "
            "its path to the kernel was not read",
        }
        return {**verdict, "status": "unknown", "effect": None, "reasons": [reason, *reasons]}
    if not ctx.gpu_models():
        # every feature runs on a GPU: with none seen (a CPU build host, an image, GPUs not probed) its rules that
        # read the GPU did not apply, which is no evidence that it runs on the GPUs it will meet (FACTCHECK d1)
        gpu: Reason = {"rule": "gpu", "result": "unknown", "message": ctx.gpus_unknown_reason()}
        return {**verdict, "status": "unknown", "effect": None, "reasons": [gpu, *reasons]}
    return {**verdict, "status": "ok", "effect": None, "reasons": reasons}


def _judge_newer(
    verdict: FeatureVerdict, feature: Feature, ctx: Context, newer: list[tuple[str, str]]
) -> FeatureVerdict | None:
    """The verdict of a feature whose installed releases `newer` ((package, version) pairs) are newer than the
    data, judged from those releases' own files: stackcheck.derive.judge classes the rules and reads them,
    this engine evaluates them. None when nothing was derived (the caller reports the feature unknown)."""
    from stackcheck.derive.judge import newer_rules

    judged = newer_rules(feature, ctx, newer)
    if judged is None:
        return None
    base: FeatureVerdict = {**verdict}
    if feature.get("workaround"):
        base["workaround"] = feature["workaround"]
    if judged.hook is None:
        return {**base, "status": "unknown", "effect": None, "reasons": [judged.head]}
    reasons = _order(evaluate_rules(feature, ctx, hook=judged.hook))
    for reason in reasons:
        reason["derived"] = judged.mark
    fails = [r for r in reasons if r.get("result") == "fail"]
    if fails:
        effect = max((r.get("effect", "crash") for r in fails), key=lambda e: EFFECT_ORDER.get(e, 0))
        return {**base, "status": "blocked", "effect": effect, "reasons": [judged.head, *reasons]}
    if any(r.get("result") == "unknown" for r in reasons):
        return {**base, "status": "unknown", "effect": None, "reasons": [judged.head, *reasons]}
    return {**base, "status": "ok", "effect": None, "reasons": [judged.head, *reasons]}


def workaround_for(feature: Feature, verdict: Mapping[str, Any]) -> Workaround | None:
    """The feature's workaround when it answers this verdict: the feature is blocked and, when the workaround
    names `for_rules`, one of those rules failed (the SM120 table patch of torch-symm-mem is no answer to an
    SGLang without the flag, nor to anything on an H200)."""
    w = feature.get("workaround")
    if w is None or verdict.get("status") != "blocked":
        return None
    rules = w.get("for_rules")
    if rules:
        failing = {r.get("rule") for r in verdict.get("reasons") or [] if r.get("result") == "fail"}
        if not failing & {str(x) for x in rules}:
            return None
    return w.copy()


def _oldest_first(versions: Iterable[str]) -> list[str]:
    """Version strings in release order (one that does not parse first, as 0 would)."""
    zero = parse_version("0")
    return sorted(versions, key=lambda v: parse_version(v) or zero)  # type: ignore[arg-type,return-value]


def _blocked_in_every_release(
    item: Feature | Check, ctx: Context, needs: list[str], check: bool = False
) -> tuple[str, list[Reason]] | None:
    """The item's `quantify` package is installed but its version is not known (a hand-written report): when the
    item is blocked (a feature) or failed (a check) with every release of it that the box can hold, it is
    blocked/failed here too, with the mildest effect among them (what holds whatever the release). The box can
    hold every release the manifests know, less those uploaded after the day its facts were collected
    (`facts.collected_at` against components.json `uploaded`; a release without a date is never left out).
    The sweep concludes only when nothing later can be installed: the newest release swept fails one of the
    rules `quantify.rules` names (those whose failure the data argues holds for later releases too), or the day
    left out a later known release. A check concludes per rule: a rule that fails with every release swept,
    keeping its id (the gate's per-rule scopes apply to it). When the day precedes every known release, nothing
    is swept and `quantify.earlier` alone may conclude (_older_than_every_release). When the facts narrow the
    package to a few releases (`packages.NAME.candidates`), exactly those are swept, known here or not. None
    when the item does not opt in, one release is not bad, or nothing is swept and `earlier` does not conclude.
    Never ok."""
    quantify = item.get("quantify")
    if not isinstance(quantify, dict):
        return None
    name = str(quantify.get("package"))
    if not ctx.is_installed(name) or ctx.installed_version(name) is not None:
        return None
    if needs and not any(name in n.split("|") for n in needs) and not _on_path(item, name):
        # a check without `needs` (kernel-arch) runs on every box: its quantify package is what it judges; a
        # feature judges a package it does not need only where that package is a hop of its path (flash-attn-4,
        # which attention-fa4 reaches from SGLang 0.5.10-0.5.15 only)
        return None
    day = collected_day(ctx)
    records = ctx.manifests.releases(name)
    later = [r for r in records if day is not None and isinstance(r.get("uploaded"), str) and r["uploaded"] > day]
    candidates = package_candidates(ctx, name)
    nearest = None
    if candidates is not None:
        # the report narrows the release to these (a traceback's line numbers read against every release):
        # nothing else can be installed, known to the manifests or not
        releases, later, bounded = _oldest_first(candidates), [], True
    else:
        bounded = bool(later)
        # a package run from a git checkout (components.json `dev_builds`): a box of that day may hold the code
        # between the last release uploaded by the day and the first after it, which stands for that code
        nearest = min(later, key=lambda r: str(r.get("uploaded"))) if later and _dev_builds(ctx, name) else None
        later = [r for r in later if r is not nearest]
        held = [r for r in records if r not in later and r is not nearest]
        if not held:
            # every known release is later than the facts: the box holds an older one, whose files were not read
            older = _older_than_every_release(item, ctx, name, day, [*later, *([nearest] if nearest else [])], check)
            if older is None or nearest is None:
                return older
            judged = _judge_release(item, ctx, name, str(nearest.get("version")), check)
            if judged is None:
                return None  # the code of that day may already be the first later release's, which is not bad
            effect = min((older[0], judged[0]), key=lambda e: EFFECT_ORDER.get(e, 0))
            reason = older[1][0]
            reason["effect"] = effect
            reason["message"] = str(reason["message"]) + (
                f". A development build of that day stands between them and {nearest.get('version')}, the first "
                f"release after it, which is {'failed' if check else 'blocked'} too: "
                + str((judged[1][0] if judged[1] else {}).get("message", ""))
            )
            return effect, [reason]
        releases = _oldest_first(str(r.get("version")) for r in [*held, *([nearest] if nearest else [])])
    if not releases:
        return None
    named = {str(x) for x in quantify.get("rules") or []}
    narrowed = _narrowed(ctx, name) if candidates is not None else False
    effects: list[str] = []
    fails_of: list[list[Reason]] = []
    for version in releases:
        judged = _judge_release(item, ctx, name, version, check)
        if judged is None:
            return None
        effects.append(judged[0])
        fails_of.append(judged[1])
    if check:
        # a check fails when every release fails some rule of it, each release its own (rule_cover)
        return _every_release_some_rule(
            item, quantify, name, releases, fails_of, named, bounded, day, later, nearest, narrowed
        )
    bad = "blocked"
    span = releases[0] if len(releases) == 1 else f"{releases[0]}-{releases[-1]}"
    newest = fails_of[-1]
    newest_fail = next((r for r in newest if r.get("rule") in named), None)
    if newest_fail is None and bounded:
        newest_fail = next(iter(newest), None)
    if newest_fail is None:
        return None  # the newest release fails only on rules a later release may change
    mildest = min(effects, key=lambda e: EFFECT_ORDER.get(e, 0))
    reason = _every_release_reason(
        "every-release",
        newest_fail,
        mildest,
        name,
        span,
        releases[-1],
        bad,
        day,
        later,
        nearest,
        narrowed,
    )
    reason["message"] = str(reason["message"]) + f". Later releases: {quantify.get('why')}"
    reason["source"] = [*_sources(newest_fail.get("source")), *_sources(quantify.get("source"))]
    return mildest, [reason]


def _swept_by_day(item: Feature | Check, ctx: Context, needs: list[str], check: bool = False) -> Swept | None:
    """The item judged for every release of a package installed with its version not known that the facts'
    day admits (stackcheck.verdicts.sweep); only where such a package is there, so a probed box pays nothing."""
    if collected_day(ctx) is None and not any(
        package_candidates(ctx, str(n)) is not None for n in (ctx.facts.get("packages") or {})
    ):
        return None
    from stackcheck.verdicts.sweep import sweep

    return sweep(item, ctx, needs, _evaluate_check_item if check else _evaluate_feature_item, collected_day(ctx),
                 package_candidates, check)  # fmt: skip


def _evaluate_feature_item(item: Feature | Check, ctx: Context) -> FeatureVerdict:
    return evaluate_feature(cast("Feature", item), ctx)


def _evaluate_check_item(item: Feature | Check, ctx: Context) -> CheckVerdict:
    return evaluate_check(cast("Check", item), ctx)


def _on_path(item: Feature | Check, name: str) -> bool:
    """Whether `name` is the package of a hop of the item's path to the kernel (features.json `path`)."""
    hops = cast("dict[str, Any]", item).get("path")  # a check has no path
    return isinstance(hops, list) and any(isinstance(h, dict) and h.get("package") == name for h in hops)


def _dev_builds(ctx: Context, name: str) -> bool:
    """Whether boxes run `name` from a git checkout as well as from its releases (components.json
    `dev_builds`): a box described on a day may then hold code newer than the last release uploaded by it."""
    return isinstance(ctx.manifests.package(name).get("dev_builds"), dict)


def _judge_release(
    item: Feature | Check, ctx: Context, name: str, version: str, check: bool
) -> tuple[str, list[Reason]] | None:
    """(effect, failing reasons) of the item judged with `name` at `version`; None when it is not blocked
    (a feature) or failed (a check) there."""
    packages: dict[str, Any] = dict(ctx.facts.get("packages") or {})
    packages[name] = {**dict(packages.get(name) or {}), "installed": True, "version": version}
    facts = cast("Facts", {**ctx.facts, "packages": packages})
    again = Context(facts=facts, manifests=ctx.manifests, launch=ctx.launch)
    if check:
        c = evaluate_check(cast("Check", item), again)
        if c.get("status") != "failed":
            return None
        fails = [r for r in c.get("reasons") or [] if r.get("result") == "fail"]
        severe = [r for r in fails if r.get("effect") != "degraded"]
        return str((severe or fails)[0].get("effect", "crash")) if fails else "crash", fails
    v = evaluate_feature(cast("Feature", item), again)
    if v.get("status") != "blocked":
        return None
    return str(v.get("effect") or "crash"), [r for r in v.get("reasons") or [] if r.get("result") == "fail"]


def _older_than_every_release(
    item: Feature | Check, ctx: Context, name: str, day: str | None, later: list[Any], check: bool
) -> tuple[str, list[Reason]] | None:
    """The facts' day precedes the upload of every release of `name` the manifests know, so the box holds an
    older release, whose files were not read. The item's `quantify.earlier` states what every such release
    does where its `when` holds on these facts (on at least one GPU model, for a GPU fact): blocked (a
    feature) or failed (a check) with at least `effect`, `why` arguing it with sources read in those older
    releases. None without `earlier`, or when `when` does not hold or is not known: the verdict stays unknown."""
    quantify = item.get("quantify") or {}
    earlier = quantify.get("earlier")
    if not isinstance(earlier, dict) or day is None or not later:
        return None
    when = earlier.get("when")
    if when is not None:
        models: list[GpuModel | None] = list(ctx.gpu_models()) if uses_gpu(when) else []
        outcomes = [evaluate_predicate(when, ctx, gpu) for gpu in models or [None]]
        if not any(o.value is True for o in outcomes):
            return None
    effect = str(earlier.get("effect", "crash"))
    left = _oldest_first(str(r.get("version")) for r in later)
    span = left[0] if len(left) == 1 else f"{left[0]}-{left[-1]}"
    bad = "failed" if check else "blocked"
    reason: Reason = {
        "rule": str(earlier.get("rule") or "every-release"),
        "result": "fail",
        "effect": effect,
        "observed": f"{name} version not known (facts of {day})",
        "required": f"{name} older than {left[0]} (no release the manifests know was uploaded by {day})",
        "message": f"{name}'s version is not known, and no release of it the manifests know was uploaded by "
        f"{day}, the day of these facts ({span} came later and cannot be installed here): the box holds an "
        f"older release, and this is {bad} with every one of them (effect at least {effect}). "
        f"Earlier releases: {earlier.get('why')}",
        "source": _sources(earlier.get("source")),
    }
    return effect, [reason]


def _every_release_reason(
    rule: str,
    fail: Reason,
    effect: str,
    name: str,
    span: str,
    newest: str,
    bad: str,
    day: str | None,
    later: list[Any],
    nearest: Any = None,
    narrowed: bool | str = False,
    each: str = "",
) -> Reason:
    """The reason of a verdict that holds for every release swept (see _blocked_in_every_release); `nearest`
    is the first release after the day, swept for a development build of that day (`dev_builds`); `narrowed`:
    the facts' own candidates were swept (a text: the pin a release sweep filled them from, _narrowed)."""
    if isinstance(narrowed, str):
        which, after = f"every release {narrowed}", ""
    elif narrowed:
        which, after = f"every release these facts allow it to be (packages.{name}.candidates)", ""
    elif later or nearest is not None:
        which = f"every release of it the manifests know that was uploaded by {day}, the day of these facts"
        if nearest is not None:
            which += (
                f", and {nearest.get('version')}, the first after it, for a development build of that day "
                "(the code between them)"
            )
        left = _oldest_first(str(r.get("version")) for r in later)
        after = f"; {', '.join(left)} came later and cannot be installed here" if left else ""
    else:
        which, after = "every release of it the manifests know", ""
    reason: Reason = {
        "rule": rule,
        "result": "fail",
        "effect": effect,
        "observed": f"{name} version not known" + (f" (facts of {day})" if day else ""),
        "required": f"{name} {span} ({which})",
        "message": f"{name}'s version is not known, but this is {bad} with {which} ({span}; effect at least "
        f"{effect}{after}){each}; with {newest}: " + str(fail.get("message", bad)),
    }
    if fail.get("filled"):  # the newest release's reason read a value filled from the manifests' tables
        mark_filled(reason, [str(t).removeprefix("filled: ") for t in fail["filled"]])
    return reason


def _every_release_some_rule(
    item: Feature | Check,
    quantify: Mapping[str, Any],
    name: str,
    releases: list[str],
    fails_of: list[list[Reason]],
    named: set[str],
    bounded: bool,
    day: str | None,
    later: list[Any],
    nearest: Any,
    narrowed: bool | str,
) -> tuple[str, list[Reason]] | None:
    """A check swept over `releases` (their failing reasons `fails_of`): failed when every release fails some
    rule, and, unless `bounded`, the newest fails a rule `named` (quantify.rules: its failure holds for later
    releases too). One reason per rule that fails with any of them, keeping the rule's id (the gate's per-rule
    scopes) and naming its releases; where no one rule fails with all, each carries `sweep` for the gate
    (stackcheck.verdicts.rule_cover.rescope). None when a release fails no rule."""
    from stackcheck.verdicts.rule_cover import LATER, cover, level, runs, scope_note

    got = cover(releases, fails_of, named, bounded)
    if got is None:
        return None
    slots, covers, newest_fail = got
    floor = level(slots, covers)
    partial = any(len(c) < len(slots) for c in covers.values())
    bad, whole = "failed", releases[0] if len(releases) == 1 else f"{releases[0]}-{releases[-1]}"
    out: list[Reason] = []
    # rules failing with every release first (in the newest's order), then the others by their oldest release
    order = sorted(covers, key=lambda r: (len(covers[r]) < len(slots), slots.index(next(iter(covers[r])))))
    for rule in order:
        c, fail = covers[rule], newest_fail[rule]
        own = min(c.values(), key=lambda e: EFFECT_ORDER.get(e, 0))
        its = [s for s in c if s != LATER]
        each = (
            f", each of them by some rule of this check; this rule fails with {runs(list(c), slots)}"
            if len(c) < len(slots)
            else ""
        )
        effect = own if not each else min(own, floor, key=lambda e: EFFECT_ORDER.get(e, 0))
        reason = _every_release_reason(
            rule, fail, effect, name, whole, its[-1], bad, day, later, nearest, narrowed, each
        )
        reason["source"] = [*_sources(fail.get("source")), *_sources(quantify.get("source"))]
        reason["message"] = str(reason["message"]) + f". {quantify.get('why')}"
        note = scope_note(rule, item, slots, covers)
        if note:  # a rule of a narrower scope than the check's: which launches the conclusion is for
            reason["message"] = str(reason["message"]).rstrip(".") + ". " + note
        if partial:
            reason["sweep"] = {"releases": slots, "fails_with": c}
        out.append(reason)
    severe = [r for r in out if r.get("effect") != "degraded"]
    return (str(severe[0].get("effect")) if severe else "degraded"), out


def _narrowed(ctx: Context, name: str) -> bool | str:
    """How the facts narrow `name` to candidates: True (the facts say so), or the text of the pin a release
    sweep filled them from (stackcheck.verdicts.sweep: `candidates_from`)."""
    entry = (ctx.facts.get("packages") or {}).get(name)
    by = entry.get("candidates_from") if isinstance(entry, dict) else None
    return by if isinstance(by, str) else True


def package_candidates(ctx: Context, name: str) -> list[str] | None:
    """The releases a package of unknown version can be, when the facts narrow it (`packages.NAME.candidates`,
    each a readable version: versions.candidates_of); None when they do not, or the list is empty or unreadable
    (then the sweep takes every known release, fail safe)."""
    return candidates_of((ctx.facts.get("packages") or {}).get(name))


#: what may follow the day in `collected_at`: a time, and its offset from UTC (none: UTC, as the schema says); read
#: by `_time_of_day`, held equal to this pattern's fullmatch in tests (compiling it cost 0.2 ms of a first run)
_TIME_OF_DAY = (
    r"[Tt ]([01][0-9]|2[0-3]):([0-5][0-9])(:[0-5][0-9](\.[0-9]+)?)?"
    r"([Zz]|([+-])([01][0-9]|2[0-3]):?([0-5][0-9]))?"
)
_DIGITS = "0123456789"


def _hour(text: str) -> bool:
    """Two characters of `[01][0-9]|2[0-3]`."""
    return len(text) == 2 and ((text[0] in "01" and text[1] in _DIGITS) or (text[0] == "2" and text[1] in "0123"))


def _minute(text: str) -> bool:
    """Two characters of `[0-5][0-9]`."""
    return len(text) == 2 and text[0] in "012345" and text[1] in _DIGITS


def _time_of_day(text: str) -> tuple[int, int, int] | None:
    """`_TIME_OF_DAY`'s fullmatch of text read by string methods: (hours, minutes, the offset from UTC in minutes,
    east positive), or None where the pattern does not match."""
    if len(text) < 6 or text[0] not in "Tt " or not _hour(text[1:3]) or text[3] != ":" or not _minute(text[4:6]):
        return None
    i, end = 6, len(text)
    if i < end and text[i] == ":":
        if not _minute(text[i + 1 : i + 3]):
            return None
        i += 3
        if i < end and text[i] == ".":
            j = i + 1
            while j < end and text[j] in _DIGITS:
                j += 1
            if j == i + 1:
                return None
            i = j
    rest = text[i:]
    if rest in ("", "Z", "z"):
        return int(text[1:3]), int(text[4:6]), 0
    if rest[0] not in "+-" or not _hour(rest[1:3]):
        return None
    tail = rest[4:] if rest[3:4] == ":" else rest[3:]
    if not _minute(tail):
        return None
    offset = int(rest[1:3]) * 60 + int(tail)
    return int(text[1:3]), int(text[4:6]), offset if rest[0] == "+" else -offset


def collected_day(ctx: Context) -> str | None:
    """The UTC day (YYYY-MM-DD) the facts were true, when they say (`facts.collected_at`, ISO 8601: a date, or
    a date-time whose offset from UTC moves it to the UTC day: 21:30-05:00 is the next day's 02:30); None
    when absent or unreadable, and then nothing is left out of a sweep (fail safe)."""
    value = ctx.facts.get("collected_at")
    if not isinstance(value, str) or len(value) < 10:
        return None
    day = value[:10]
    y, m, d = day[:4], day[5:7], day[8:10]
    if not (day[4] == day[7] == "-" and (y + m + d).isdigit() and "01" <= m <= "12" and "01" <= d <= "31"):
        return None
    if len(value) == 10:
        return day
    t = _time_of_day(value[10:])
    if t is None:
        return None  # a time that cannot be read may be another day in UTC
    minutes = t[0] * 60 + t[1] - t[2]  # 09:00+09:00 is 00:00 UTC
    shift = -1 if minutes < 0 else 1 if minutes >= 24 * 60 else 0
    return _shift_day(int(y), int(m), int(d), shift) if shift else day


def _shift_day(y: int, m: int, d: int, shift: int) -> str | None:
    """The day before (-1) or after (+1) y-m-d; None when y-m-d is not a day of the calendar."""
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    if d > days[m - 1]:
        return None
    d += shift
    if d < 1:
        m -= 1
        if m < 1:
            y, m = y - 1, 12
        d = days[m - 1]
    elif d > days[m - 1]:
        d, m = 1, m + 1
        if m > 12:
            y, m = y + 1, 1
    return f"{y:04d}-{m:02d}-{d:02d}"


def _sources(value: Any) -> list[Any]:
    return [] if value is None else list(value) if isinstance(value, list) else [value]


def _older_than_manifests(ctx: Context, needs: list[str]) -> tuple[str, str, str] | None:
    """(name, installed version, oldest known) for the first needed package older than every known release: its
    version says so, or (installed, its version not known) the facts' day precedes the upload of every release the
    manifests know of it, so what is installed is an older release (or a development build of that day), whose path
    was not read either."""
    day = collected_day(ctx)
    for name in needs:
        for alt in name.split("|"):
            if day is not None and ctx.is_installed(alt) and ctx.installed_version(alt) is None:
                releases = ctx.manifests.releases(alt)
                uploaded = [str(r.get("uploaded") or "") for r in releases]
                if releases and all(u > day for u in uploaded):  # a release without `uploaded` is never left out
                    first = min(zip(uploaded, (str(r.get("version")) for r in releases), strict=True))[1]
                    return alt, f"(version not known; facts of {day})", first
            try:
                where = ctx.known_release(alt, f"known.{alt}")
            except Missing:
                continue
            if where == "older":
                known = [
                    v for v in (parse_version(str(r.get("version", ""))) for r in ctx.manifests.releases(alt)) if v
                ]
                return alt, str(ctx.installed_version(alt)), str(min(known))
    return None


# ---- stack checks -------------------------------------------------------------------------------


def _check_from_reasons(check: Check, reasons: list[Reason]) -> CheckVerdict:
    out: CheckVerdict = {"id": str(check.get("id")), "title": str(check.get("title", check.get("id")))}
    reasons = _order(reasons)
    fails = [r for r in reasons if r.get("result") == "fail"]
    if fails:
        severe = any(r.get("effect") != "degraded" for r in fails)
        if "fix" in check:
            out["fix"] = dict(check["fix"])
        return {**out, "status": "failed" if severe else "warning", "reasons": reasons}
    if not reasons:
        return {**out, "status": "skipped", "reasons": []}
    if any(r.get("result") == "unknown" for r in reasons):
        return {**out, "status": "unknown", "reasons": reasons}
    return {**out, "status": "ok", "reasons": reasons}


def builtin_pins(ctx: Context, package: str, effect: str = "crash") -> list[Reason]:
    """The installed release's declared pins (components.json `requires`) against what is installed; a pin
    that is not met has `effect` (crash for a kernel package built against one torch; degraded for SGLang's
    metadata pins, which SGLang does not check at start: sglang-startup-versions does what it checks)."""
    version = ctx.installed_version(package)
    if version is None:
        if ctx.facts.get("packages") is not None and ctx.version_unknown(package):
            return [{"rule": f"{package}-pins", "result": "unknown", "message": ctx.package_unknown_reason(package)}]
        return []
    rel = ctx.release(package)
    derived: str | None = None
    if rel is None and ctx.newer_than_manifests(package):
        from stackcheck.derive.judge import derived_release

        rel = derived_release(ctx, package)
        derived = str(rel["derived"]) if rel is not None else None
    if rel is None:
        newer = ctx.newer_than_manifests(package)
        why = (
            f"{package} {version} is newer than the manifests (data of {ctx.manifests.date})"
            if newer
            else f"{package} {version} is not in the manifests"
        )
        return [{"rule": f"{package}-pins", "result": "unknown", "message": why}]
    reasons: list[Reason] = []
    for dep, spec in (rel.get("requires") or {}).items():  # the wheel's own order: its headline pins first
        installed = ctx.installed_version(dep)
        base: Reason = {
            "rule": f"{package}-pins:{dep}",
            "requirement": f"{dep}{spec}",
            "required": spec,
            "effect": effect,
            "source": rel.get("source"),
        }
        if derived:
            base["derived"] = derived
        if ctx.package(dep) is None:
            if dep in CORE_PACKAGES:
                reasons.append({**base, "result": "unknown", "message": f"{dep} was not probed"})
            continue  # a pin on a package stackcheck does not probe is not checked
        if ctx.version_unknown(dep):
            reasons.append({**base, "result": "unknown", "message": ctx.package_unknown_reason(dep)})
            continue
        if installed is None:
            reasons.append(
                {
                    **base,
                    "result": "fail",
                    "observed": "not installed",
                    "message": f"{package} {version} requires {dep}{spec}; {dep} is not installed"
                    + _PIN_RULE.get(effect, ""),
                }
            )
            continue
        ok = version_in(installed, str(spec))
        if ok is None:
            reasons.append(
                {
                    **base,
                    "result": "unknown",
                    "observed": installed,
                    "message": f"cannot compare {dep} {installed} with {spec}",
                }
            )
        elif ok:
            reasons.append({**base, "result": "pass", "observed": installed, "message": "pin satisfied"})
        else:
            reasons.append(
                {
                    **base,
                    "result": "fail",
                    "observed": installed,
                    "message": f"{package} {version} pins {dep}{spec}; installed {installed}"
                    + _PIN_RULE.get(effect, ""),
                }
            )
    return reasons


# what a failed pin means, said with the pin (the rule issue 17 states for the dependency preflight too)
_PIN_RULE = {
    "degraded": " (a metadata pin SGLang does not check at start: untested, a warning; see sglang-startup-versions)",
}


def builtin_flashinfer_match(ctx: Context) -> list[Reason]:
    fi = ctx.installed_version("flashinfer-python")
    reasons: list[Reason] = []
    if fi is None:
        if ctx.version_unknown("flashinfer-python"):  # installed, its version unreadable: nothing to compare with
            extras = [e for e in ("flashinfer-cubin", "flashinfer-jit-cache") if ctx.package_state(e) != "absent"]
            if extras:
                unknown = [ctx.package_unknown_reason(e) for e in extras if ctx.package_state(e) == "unknown"]
                reasons.append(
                    {
                        "rule": f"{extras[0]}-matches",
                        "result": "unknown",
                        "message": "; ".join([ctx.package_unknown_reason("flashinfer-python"), *unknown]),
                    }
                )
        return reasons
    for extra in ("flashinfer-cubin", "flashinfer-jit-cache"):
        v = ctx.installed_version(extra)
        if v is None:
            if ctx.version_unknown(extra):
                reasons.append(
                    {"rule": f"{extra}-matches", "result": "unknown", "message": ctx.package_unknown_reason(extra)}
                )
            continue
        same = _flashinfer_same(extra, v, fi)
        reason: Reason = {
            "rule": f"{extra}-matches",
            "requirement": f"{extra} == flashinfer-python",
            "observed": v,
            "required": fi,
            "effect": "crash",
            "result": "pass" if same else "fail",
            "message": "versions match"
            if same
            else f"{extra} {v} does not match flashinfer-python {fi}: importing flashinfer raises RuntimeError "
            "(FlashInfer 0.6.0-0.7.1 check it at import, unless FLASHINFER_DISABLE_VERSION_CHECK is set)",
            "source": [
                {"title": "FlashInfer installation guide", "url": "https://docs.flashinfer.ai/installation.html"},
                FLASHINFER_MATCH_SOURCE,
                FLASHINFER_LOCAL_SOURCE,
            ],
        }
        changed = None if same else _flashinfer_cubin_dir_first(ctx, extra, v, str(fi))
        changed = changed if same or changed is not None else _flashinfer_version_check_off(ctx, extra, v, str(fi))
        changed = changed if same or changed is not None else _flashinfer_mismatch(extra, v, str(fi))
        if same and public(v) != public(fi):  # (0.5.0-0.7.1's prefix check lets another release through)
            changed = {"result": "unknown", "message": f"{extra} {v} passes flashinfer-python {fi}'s version check "
                       "(it asks only that the version start with flashinfer's) but is another release: whether "
                       "its prebuilt kernels suit this flashinfer was not read"}  # fmt: skip
        if changed is not None:
            reason.update(changed)
            reason.pop("effect", None)
        reasons.append(reason)
    return reasons


#: imend7 (igap55's finding): what flashinfer-python does at import with a flashinfer-cubin / flashinfer-jit-cache
#: of another version, read per release in its wheels (flashinfer/jit/env.py)
FLASHINFER_MATCH_SOURCE = {
    "title": "flashinfer-python 0.6.0-0.7.4 wheels (0.6.7.post3, 0.6.18.post1, 0.7.0.post1, 0.7.2.post1 too), "
    "flashinfer/jit/env.py: 0.6.0-0.7.1 raise RuntimeError at import where flashinfer-cubin's version differs "
    "(0.6.0 _get_cubin_dir :59-94, raise :76; 0.7.1 :74-118, raise :105) or flashinfer-jit-cache's does not start "
    "with flashinfer's (0.6.0 :104-121; 0.7.1 :151, :167); 0.7.2 on catch it and log 'Ignoring incompatible "
    "flashinfer-cubin package (cubins will be downloaded on demand to ~/.cache/flashinfer/cubins)' (0.7.2 "
    "_get_cubin_dir :93-132, :119-127) and 'Ignoring incompatible flashinfer-jit-cache package (kernels will be "
    "JIT-compiled instead)' (_get_aot_providers :190-208); 0.6.10 on skip the check for a source install's "
    "0.0.0+unknown; FLASHINFER_DISABLE_VERSION_CHECK skips it in all (read 2026-12-06 by imend7, pip download "
    "--no-deps, not run)",
    "url": "https://pypi.org/project/flashinfer-python/#history",
}


#: ifc59: the version flashinfer compares is its own build's, with the local tag a build was given
FLASHINFER_LOCAL_SOURCE = {
    "title": "flashinfer-python 0.6.7.post2 / 0.6.9 wheels (pip download --no-deps, ifc59 2026-12-07): "
    "flashinfer/version.py takes __version__ from flashinfer/_build_meta.py, flashinfer/jit/env.py compares it with "
    "flashinfer_cubin.__version__ by != (0.6.9 :74) and flashinfer_jit_cache.__version__ by startswith (:113); 0.7.2 "
    "env.py _check_cubin_version (!=) and _check_jit_cache_version (== or startswith(version + '+')); FlashInfer's "
    "build_backend.py _create_build_metadata writes _build_meta's __version__ as version.txt's plus "
    "'+' FLASHINFER_LOCAL_VERSION where that is set (a version of the file read in the code index, its commit not "
    "read)",
    "url": "https://github.com/flashinfer-ai/flashinfer/blob/main/build_backend.py",
}


def _flashinfer_same(extra: str, extra_version: str, fi: str) -> bool:
    """Whether flashinfer-python `fi`'s import-time check takes `extra` at `extra_version` (FLASHINFER_MATCH_SOURCE):
    it compares version strings, the local tag included (flashinfer/version.py: _build_meta's __version__, which
    build_backend.py writes with +FLASHINFER_LOCAL_VERSION): flashinfer-cubin's must equal flashinfer's; a
    flashinfer-jit-cache's must start with it (0.5.0-0.7.1: `startswith(flashinfer_version)`), or from 0.7.2 equal it
    or be it followed by `+` and a local tag. ifc59: the public versions were compared, so flashinfer-python
    0.6.9+cu129 (a build with FLASHINFER_LOCAL_VERSION) beside flashinfer-jit-cache 0.6.9 or flashinfer-cubin 0.6.9,
    or flashinfer-python 0.6.9 beside flashinfer-cubin 0.6.9+cu129, was ok where the import raises RuntimeError."""
    if extra == "flashinfer-cubin":
        return extra_version == fi
    if version_in(fi, ">=0.7.2rc1") is True:
        return extra_version == fi or extra_version.startswith(f"{fi}+")
    return extra_version.startswith(fi)


#: FLASHINFER_DISABLE_VERSION_CHECK (any non-empty value: os.getenv's truthiness) skips both import-time checks in
#: every release read: flashinfer-cubin (flashinfer/jit/env.py 0.6.0 :73, 0.6.16 :93, 0.7.1 :101, 0.7.2
#: _check_cubin_version :83) and flashinfer-jit-cache (0.6.0 :112, 0.6.16 :128, 0.7.1 :146 :164, 0.7.2 :163 :179)
FLASHINFER_VERSION_CHECK_OFF_SOURCE = {
    "title": "flashinfer-python 0.6.0, 0.6.16, 0.7.1, 0.7.2 wheels, flashinfer/jit/env.py: the version checks of "
    "flashinfer-cubin (0.6.0 :73, 0.6.16 :93, 0.7.1 :101, 0.7.2 :83) and flashinfer-jit-cache (0.6.0 :112, 0.6.16 "
    ":128, 0.7.1 :146 :164, 0.7.2 :163 :179) are skipped where FLASHINFER_DISABLE_VERSION_CHECK is set (read "
    "2026-12-07 by icubin1, pip download --no-deps, not run)",
    "url": "https://pypi.org/project/flashinfer-python/#history",
}


#: irev77: 0.6.16 on return a non-empty FLASHINFER_CUBIN_DIR before they look at flashinfer-cubin at all
FLASHINFER_CUBIN_DIR_FIRST_SOURCE = {
    "title": "flashinfer-python 0.6.16, 0.6.17, 0.6.18, 0.7.0, 0.7.1, 0.7.2 wheels, flashinfer/jit/env.py "
    "_get_cubin_dir: a non-empty FLASHINFER_CUBIN_DIR is returned first (0.6.16 :74-82, 0.7.1 :82-90, 0.7.2 "
    ":101-109), before flashinfer-cubin is imported and its version compared (0.6.16 :86-104, 0.7.1 :94-112, 0.7.2 "
    ":113-129); 0.6.0-0.6.15.post1 check the package first (0.6.0 :68-83, the variable :86-88) (read 2026-12-07 by "
    "irev77, pip download --no-deps, not run)",
    "url": "https://pypi.org/project/flashinfer-python/0.6.16/",
}


def _flashinfer_cubin_dir_first(ctx: Context, extra: str, extra_version: str, fi: str) -> Reason | None:
    """Where FLASHINFER_CUBIN_DIR is set (non-empty) in the server's environment, FlashInfer 0.6.16-0.7.4 take their
    cubins from it and never read flashinfer-cubin's version: a mismatched package does not fail the import (the
    trtllm-gen features judge that directory). None for flashinfer-jit-cache, another release, the variable unset or
    not known (judged as before)."""
    from stackcheck.facts.cubin_releases import LAST_READ, release_tuple

    release = release_tuple(fi)
    if extra != "flashinfer-cubin" or release is None or not (0, 6, 16) <= release <= LAST_READ:
        return None
    try:
        value = ctx.lookup("env.FLASHINFER_CUBIN_DIR", None)
    except Missing:
        return None
    if not value:
        return None
    return {"result": "pass", "message": f"{extra} {extra_version} does not match flashinfer-python {fi}, but "
            "FLASHINFER_CUBIN_DIR is set: this release takes its cubins from that directory and never reads the "
            "package's version (the features that load trtllm-gen cubins judge that directory)",
            "source": [FLASHINFER_CUBIN_DIR_FIRST_SOURCE]}  # fmt: skip


def _flashinfer_version_check_off(ctx: Context, extra: str, extra_version: str, fi: str) -> Reason | None:
    """Where FLASHINFER_DISABLE_VERSION_CHECK is set in the server's environment the import does not raise: the
    mismatched flashinfer-cubin's directory is used (the trtllm-gen features judge whether this release's cubins
    are in it: flashinfer_cubins), so the import passes; a mismatched flashinfer-jit-cache's kernels of another
    release are loaded, which was not read: unknown. None where the variable is not set (or not known: judged as
    before, the import check)."""
    try:
        value = ctx.lookup("env.FLASHINFER_DISABLE_VERSION_CHECK", None)
    except Missing:
        return None
    if not value:
        return None
    if extra == "flashinfer-cubin":
        return {"result": "pass", "message": f"{extra} {extra_version} does not match flashinfer-python {fi}, but "
                "FLASHINFER_DISABLE_VERSION_CHECK is set: the import takes its cubin directory anyway; whether this "
                "release's trtllm-gen cubins are in it is judged by the features that load them",
                "source": [FLASHINFER_VERSION_CHECK_OFF_SOURCE]}  # fmt: skip
    return {"result": "unknown", "message": f"{extra} {extra_version} does not match flashinfer-python {fi}, and "
            "FLASHINFER_DISABLE_VERSION_CHECK is set: the import loads that package's kernels of another release, "
            "which was not read", "source": [FLASHINFER_VERSION_CHECK_OFF_SOURCE]}  # fmt: skip


def _flashinfer_mismatch(extra: str, extra_version: str, fi: str) -> Reason | None:
    """How a flashinfer-python release treats `extra` of another version (FLASHINFER_MATCH_SOURCE), where it does
    not raise at import: the fields that replace the failing reason's; None where it raises (0.6.0-0.7.1, and the
    releases before, judged as before)."""
    if fi.startswith("0.0.0+unknown"):
        return {"result": "unknown", "message": f"flashinfer-python {fi} is a source install: "
                f"FlashInfer 0.6.10 on skip the version check for it, older releases raise at import; which release "
                f"it is was not read, so whether {extra} {extra_version} stops the import is not known"}  # fmt: skip
    if version_in(fi, ">=0.7.2") is not True:
        if version_in(fi, ">=0.7.2rc1") is True:  # (PEP 440: `<0.7.2` admits no pre-release of 0.7.2)
            return {"result": "unknown", "message": f"flashinfer-python {fi} is a pre-release of 0.7.2 (0.7.1 "
                    f"raises at import with a mismatched {extra}, 0.7.2 ignores it): not read"}  # fmt: skip
        return None
    if extra == "flashinfer-cubin":
        what = ("ignores it with a warning and downloads each cubin a kernel needs on demand into "
                "~/.cache/flashinfer/cubins (FLASHINFER_WORKSPACE_BASE), from FlashInfer's artifact host: that needs "
                "network access from the server, which was not read (a box without it fails at the first such "
                "kernel)")  # fmt: skip
        fix = "install flashinfer-cubin of the same version (`flashinfer download-kernels`), or make sure the "
    else:
        what = ("ignores it with a warning and JIT-compiles the kernels it would have loaded instead, which needs "
                "the CUDA toolkit (nvcc) and minutes at the first use of each kernel (jit-toolchain judges the "
                "toolkit)")  # fmt: skip
        fix = "install flashinfer-jit-cache of the same version, or make sure the "
    fix += "server can fetch or build them"
    return {"result": "unknown", "message": f"{extra} {extra_version} does not match "
            f"flashinfer-python {fi}, which (0.7.2 on) {what}; {fix}"}  # fmt: skip


CORE_PACKAGES = (
    "torch",
    *KERNEL_PACKAGES,
    "flashinfer-python",
    "flashinfer-cubin",
    "flashinfer-jit-cache",
)


def builtin_kernel_coverage(ctx: Context) -> list[Reason]:
    """Every GPU has code in each installed kernel package: SASS that runs on it, or PTX to JIT."""
    reasons: list[Reason] = []
    models = ctx.gpu_models()
    for name in (*KERNEL_PACKAGES[::-1], "flashinfer-jit-cache", "vllm"):
        if ctx.installed_version(name) is None:
            if ctx.facts.get("packages") is not None and ctx.version_unknown(name):
                narrowed = _candidates_coverage(ctx, name, models)
                if narrowed:
                    reasons += narrowed
                    continue
                reasons.append(
                    {"rule": f"{name}-coverage", "result": "unknown", "message": ctx.package_unknown_reason(name)}
                )
            continue
        try:
            archs, origin = ctx.package_archs(name)
        except Missing as m:
            reasons.append({"rule": f"{name}-coverage", "result": "unknown", "message": m.reason})
            continue
        if not models:
            reasons.append({"rule": f"{name}-coverage", "result": "unknown", "message": ctx.gpus_unknown_reason()})
            continue
        targets = expand_arch_list(archs)
        for gpu in models:
            t = cc_tuple(gpu.cc)
            assert t is not None
            rules = ctx.target_rules()
            cov = coverage(targets, t, rules)
            via = covering(targets, t, rules)
            reason: Reason = {
                "rule": f"{name}-coverage",
                "requirement": f"{name} has code for cc {gpu.cc}",
                "observed": f"{cov} via {', '.join(via)}" if via else f"none ({origin}: {', '.join(archs)})",
                "required": f"a target that runs on cc {gpu.cc}",
                "effect": "crash",
                "gpu": gpu.label,
                "source": "BW-COMPAT",
            }
            if ctx.any_filled():
                mark_filled(reason, ctx.filled_marks(gpu, False))
            if cov == "none":
                reason["result"] = "fail"
                reason["message"] = (
                    f"{name} {ctx.installed_version(name)} has no code for cc {gpu.cc} ({origin}): "
                    "'no kernel image is available for execution on the device'"
                )
            else:
                reason["result"] = "pass"
                reason["message"] = "PTX JIT at first start (slow start)" if cov == "ptx" else "covered by SASS"
            reasons.append(reason)
    return reasons


def _candidates_coverage(ctx: Context, name: str, models: list[GpuModel]) -> list[Reason] | None:
    """A kernel package of unknown version that the facts narrow to a few releases (`packages.NAME.candidates`):
    the GPUs that no candidate's PyPI build has code for, failed (inferred: the candidates and the PyPI build are
    assumptions, as for the sweep of sgl-kernel by day). None (the check stays unknown, never ok) when a
    candidate's build is not in the manifests or every GPU is covered by some candidate."""
    candidates = package_candidates(ctx, name)
    if not candidates or not models:
        return None
    builds: list[tuple[str, list[Any]]] = []
    for version in candidates:
        record = next((r for r in ctx.manifests.releases(name) if str(r.get("version")) == version), None)
        pypi = record.get("pypi_variant") if record else None
        variant = next((v for v in (record or {}).get("variants") or [] if v.get("variant") == pypi), None)
        if variant is None:
            return None
        try:
            found = ctx._machine_archs(f"pkg.{name}.archs", f"{name} {version} {pypi}", variant)
        except Missing:
            return None
        if found is None:
            return None
        builds.append((f"{version} {pypi}: {', '.join(found[0])}", expand_arch_list(found[0])))
    rules = ctx.target_rules()
    out: list[Reason] = []
    for gpu in models:
        t = cc_tuple(gpu.cc)
        assert t is not None
        if any(coverage(targets, t, rules) != "none" for _, targets in builds):
            continue
        out.append(
            {
                "rule": f"{name}-coverage",
                "result": "fail",
                "requirement": f"{name} has code for cc {gpu.cc}",
                "observed": "none in any release the facts allow (" + "; ".join(b for b, _ in builds) + ")",
                "required": f"a target that runs on cc {gpu.cc}",
                "effect": "crash",
                "gpu": gpu.label,
                "source": "BW-COMPAT",
                "inferred": True,
                "message": (
                    f"{name} (one of {', '.join(candidates)}, the releases the facts narrow it to, each judged in "
                    f"its PyPI build) has no code for cc {gpu.cc}: 'no kernel image is available for execution on "
                    "the device'"
                ),
            }
        )
    return out or None


def builtin_shared_libs(ctx: Context) -> list[Reason]:
    """Warnings of the static shared-library resolution (--deep): a CUDA library that resolves to another
    copy than the one the package was built against (an old system libnccl ahead of torch's, say)."""
    libs = ctx.facts.get("libs")
    if not isinstance(libs, dict):
        return []
    moved = libs.get("launch_loader_path")  # (gate --facts: the launch sets another LD_LIBRARY_PATH, facts_loader_path)
    if isinstance(moved, str) and moved:
        return [{"rule": "shared-libs", "result": "unknown", "message": moved, "source": "LD-SO"}]
    warnings = [w for w in libs.get("warnings") or [] if isinstance(w, str)]
    out: list[Reason] = [
        {"rule": "shared-libs", "result": "fail", "effect": "degraded", "message": w, "source": "LD-SO"}
        for w in warnings
    ]
    # a library whose copy the loader's search does not tell (LD_LIBRARY_PATH's element not placed: relative or empty
    # with the server's working directory not known, or $ORIGIN, which the loader expands against the executable)
    listed = libs.get("unknown")
    unknown = [u for u in listed if isinstance(u, str)] if isinstance(listed, list) else []
    out += [
        {"rule": "shared-libs", "result": "unknown", "message": f"which copy the loader finds is not known: {u}",
         "source": "LD-SO"}
        for u in unknown
    ]  # fmt: skip
    from stackcheck.verdicts.libversions import version_reasons

    out += version_reasons(libs)
    if not out:
        return [{"rule": "shared-libs", "result": "pass", "message": "every CUDA library resolves to its own copy"}]
    return out


def builtin_kernel_torch_abi(ctx: Context) -> list[Reason]:
    """The kernel package's torch symbols looked up in torch's libraries (facts.kernel_symbols) when the probe
    judged them; else nothing (the check is skipped): sgl-kernel-torch-pair's release pins decide, and the
    gate does not list the same pin twice."""
    from stackcheck.verdicts.kernel_symbols import torch_abi_reasons

    return torch_abi_reasons(ctx) or []


def builtin_kernel_driver_symbols(ctx: Context) -> list[Reason]:
    """The kernel package's driver API calls looked up in the driver's libcuda.so.1 (facts.kernel_symbols)."""
    from stackcheck.verdicts.kernel_symbols import driver_api_reasons

    return driver_api_reasons(ctx)


def _builtin_decides(builtin: str, ctx: Context) -> bool:
    """Whether a builtin's facts decide its check alone (the check's rules, a release-number stand-in for
    the same question, are then not evaluated)."""
    if builtin == "kernel-driver-symbols":
        from stackcheck.verdicts.kernel_symbols import driver_symbols_decide

        return driver_symbols_decide(ctx)
    return False


#: the effects each builtin check gives its failing reasons (the gate and its tests read what can crash)
BUILTIN_EFFECTS: dict[str, list[str]] = {
    "shared-libs": ["crash", "degraded"],
    "kernel-coverage": ["crash"],
    "pins": ["degraded"],
    "kernel-torch-pair": ["crash"],
    "flashinfer-packages-match": ["crash"],
    "kernel-torch-abi": ["crash", "degraded"],
    "kernel-driver-symbols": ["crash", "degraded"],
    "extension-torch-abi": ["crash", "degraded"],
}

BUILTINS = {
    "shared-libs": builtin_shared_libs,
    "kernel-coverage": builtin_kernel_coverage,
    "pins": lambda ctx: builtin_pins(ctx, "sglang", "degraded"),
    "kernel-torch-pair": lambda ctx: [r for name in KERNEL_PACKAGES for r in builtin_pins(ctx, name)],
    "flashinfer-packages-match": builtin_flashinfer_match,
    "kernel-torch-abi": builtin_kernel_torch_abi,
    "kernel-driver-symbols": builtin_kernel_driver_symbols,
}


#: why a builtin check has nothing to judge when it gives no reason (the check is then skipped), said in its report
BUILTIN_SKIPS: dict[str, str] = {
    "shared-libs": "the shared-library resolution was not read (no facts.libs: `stackcheck audit --deep` reads it)",
    "kernel-torch-abi": "the kernel symbol probe judged no common_ops file (no facts.kernel_symbols, or no file of it "
    "read): sgl-kernel-torch-pair's release pins decide this pair instead",
    "kernel-driver-symbols": "the driver's libcuda.so.1 was not read against the kernel package's common_ops "
    "(no facts.kernel_symbols driver half)",
    "extension-torch-abi": "the kernel symbol probe did not look for other packages' torch extensions (no "
    "facts.kernel_symbols.extension_dirs: an image, a hand-written or older facts document)",
    "kernel-coverage": "no kernel package (sglang-kernel, sgl-kernel, flashinfer-jit-cache, vllm) is installed: "
    "no kernel code to compare with the GPUs",
    "flashinfer-packages-match": "neither flashinfer-cubin nor flashinfer-jit-cache is installed beside "
    "flashinfer-python: nothing to match",
}
#: the same where the facts have no packages section (builtin_kernel_coverage then reads no package at all)
NO_PACKAGES_SKIPS: dict[str, str] = {
    "kernel-coverage": "the facts have no packages section: which kernel packages are installed was not read, so "
    "no kernel code was compared with the GPUs",
}


def _skip_reason(check: Check, ctx: Context) -> Reason:
    """The reason a check with nothing to judge is skipped: what its builtin lacks, and that none of its rules'
    conditions holds on these facts (evaluate_rules leaves out exactly the rules whose `when` is false)."""
    parts: list[str] = []
    builtin = check.get("builtin")
    if isinstance(builtin, str):
        table = (
            NO_PACKAGES_SKIPS if ctx.facts.get("packages") is None and builtin in NO_PACKAGES_SKIPS else BUILTIN_SKIPS
        )
        parts.append(table.get(builtin, f"the builtin check {builtin} found nothing to judge in these facts"))
    rules = [str(r.get("id")) for r in check.get("rules") or [] if isinstance(r, dict)]
    if rules:
        named = ", ".join(rules) if len(rules) <= 4 else f"{len(rules)} rules"
        parts.append(f"no rule applies: the condition of {named} does not hold on these facts")
    if not parts:
        parts.append("the check has nothing to judge on these facts")
    return {"rule": "not-applicable", "result": "pass", "message": "; ".join(parts)}


def evaluate_check(check: Check, ctx: Context) -> CheckVerdict:
    """A check's verdict; a skipped one carries the reason it is skipped (never an empty list)."""
    verdict = _evaluate_check(check, ctx)
    if verdict.get("status") == "skipped" and not verdict.get("reasons"):
        return {**verdict, "reasons": [_skip_reason(check, ctx)]}
    return verdict


def _evaluate_check(check: Check, ctx: Context) -> CheckVerdict:
    needs = check.get("needs") or []
    for name in needs:
        states = [ctx.package_state(a) for a in name.split("|")]
        if not any(ctx.is_installed(a) for a in name.split("|")) and "unknown" in states:
            return {
                "id": str(check.get("id")),
                "title": str(check.get("title", check.get("id"))),
                "status": "unknown",
                "reasons": [
                    {
                        "rule": "needs",
                        "result": "unknown",
                        "message": "; ".join(ctx.package_unknown_reason(a) for a in name.split("|")),
                    }
                ],
            }
        if ctx.facts.get("packages") is not None and not any(ctx.is_installed(a) for a in name.split("|")):
            return {
                "id": str(check.get("id")),
                "title": str(check.get("title", check.get("id"))),
                "status": "skipped",
                "reasons": [
                    {"rule": "needs", "result": "pass", "message": f"{name.replace('|', ' or ')} not installed"}
                ],
            }
    reasons: list[Reason] = []
    builtin = check.get("builtin")
    if builtin is not None:
        fn = BUILTINS.get(builtin)
        if builtin == "extension-torch-abi":  # one builtin, the extension named by the check (checks.json data)
            from stackcheck.verdicts.kernel_symbols import extension_torch_abi_reasons

            spec = check.get("extension")
            reasons.extend(extension_torch_abi_reasons(ctx, spec if isinstance(spec, dict) else {}))
        elif fn is None:
            reasons.append({"rule": builtin, "result": "unknown", "message": f"unknown builtin check {builtin!r}"})
        else:
            reasons.extend(fn(ctx))
    if builtin is None or not _builtin_decides(builtin, ctx):
        reasons.extend(evaluate_rules(check, ctx))
    verdict = _check_from_reasons(check, reasons)
    if verdict.get("status") == "unknown" and "quantify" in check:
        swept = _blocked_in_every_release(check, ctx, needs, check=True)
        if swept is not None:
            return _check_from_reasons(check, [*swept[1], *reasons])
    if verdict.get("status") == "unknown":
        by_day = _swept_by_day(check, ctx, needs, check=True)
        if by_day is not None:
            return _check_from_reasons(check, by_day.reasons if by_day.outcome == "ok" else [*by_day.reasons, *reasons])
    return verdict


def evaluate_all(ctx: Context) -> tuple[list[FeatureVerdict], list[CheckVerdict]]:
    features = [evaluate_feature(f, ctx) for f in ctx.manifests.features]
    checks = [evaluate_check(c, ctx) for c in ctx.manifests.checks]
    return features, checks


def gpu_cc_list(ctx: Context) -> list[tuple[int, int]]:
    return [t for m in ctx.gpu_models() if (t := cc_tuple(m.cc)) is not None]
