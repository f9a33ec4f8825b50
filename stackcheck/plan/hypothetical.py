"""Hypothetical facts: the box's facts with some components replaced by a stack's choices (what the facts
would say after the plan's steps), and the engine that judges features on them. Pure.

Every feature evaluation of the planner goes through `Engine` (the verdicts on the box as it is, on a
candidate stack, on the facts after a step), so that is the one place to memoise them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from stackcheck.facts.model import KERNEL_PACKAGES
from stackcheck.facts.versions import public
from stackcheck.plan.solver import Choice, Stack
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.types import FeatureVerdict

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts


def _pkg(version: str, variant: str | None, cuda: str | None) -> dict[str, Any]:
    p: dict[str, Any] = {"installed": True, "version": version, "dist_version": str(public(version) or version)}
    if variant:
        p["variant"] = variant
    if cuda:
        p["cuda"] = cuda
    return p


def apply_choice(facts: Facts, choice: Choice, ctx: Context) -> Facts:
    """A copy of the facts with one component replaced (shallow where nothing changes)."""
    out: dict[str, Any] = dict(facts)
    changed: list[str] = []
    if choice.component == "driver":
        first = choice.release.get("first_version") if choice.release else None
        out["driver"] = {
            "version": str(first) if first else f"{choice.version}.0",
            "cuda": choice.cuda,
            "source": "plan",
        }
        return out  # type: ignore[return-value]
    if choice.component == "toolkit":
        out["cuda_toolkits"] = [
            {"path": None, "version": choice.version, "source": "plan", "active_for_build": True},
            *[{**dict(t), "active_for_build": False} for t in facts.get("cuda_toolkits") or []],
        ]
        # the step points CUDA_HOME at the new toolkit (a complete install): it is what JIT builds pick then;
        # Triton's ptxas overrides are environment variables the step does not touch
        old_jit = facts.get("jit")
        ptxas = old_jit.get("triton_ptxas") if isinstance(old_jit, dict) else None
        out["jit"] = {"toolkit": None, "chosen_by": "plan (CUDA_HOME)", "nvcc": None, "nvcc_found": True,
                      "cuda": choice.version, "fp8_header": True, "fp4_header": True,
                      "triton_ptxas": dict(ptxas) if isinstance(ptxas, dict) else {}}  # fmt: skip
        return out  # type: ignore[return-value]
    pkgs: dict[str, Any] = dict(facts.get("packages") or {})
    if choice.component == "torch":
        pkgs["torch"] = _pkg(f"{choice.version}+{choice.variant}", choice.variant, choice.cuda)
        changed.append("torch")
    elif choice.component == "kernel":
        for other in KERNEL_PACKAGES:
            if other != choice.name and isinstance(pkgs.get(other), dict) and pkgs[other].get("installed"):
                pkgs[other] = {"installed": False}
                changed.append(other)
        version = f"{choice.version}+{choice.variant}" if choice.variant else choice.version
        pkgs[choice.name] = _pkg(version, choice.variant, choice.cuda)
        changed.append(choice.name)
    elif choice.component == "flashinfer":
        pkgs["flashinfer-python"] = _pkg(choice.version, None, None)
        changed.append("flashinfer-python")
        for extra in ("flashinfer-cubin", "flashinfer-jit-cache"):
            p = pkgs.get(extra)
            if isinstance(p, dict) and p.get("installed"):
                pkgs[extra] = {**p, "version": choice.version, "dist_version": choice.version}
                changed.append(extra)
    elif choice.component == "sglang":
        pkgs["sglang"] = _pkg(choice.version, None, None)
        changed.append("sglang")
    out["packages"] = pkgs
    binaries = facts.get("binaries")
    if isinstance(binaries, dict) and any(n in binaries for n in changed):
        out["binaries"] = {k: v for k, v in binaries.items() if k not in changed}
    tables = facts.get("source_tables")
    if isinstance(tables, dict) and tables:
        gate_pkg = {str(g.get("id")): g.get("package") for g in ctx.manifests.gates}
        out["source_tables"] = {k: v for k, v in tables.items() if gate_pkg.get(k) not in changed}
    return out  # type: ignore[return-value]


def stack_facts(ctx: Context, stack: Stack) -> Facts:
    facts = ctx.facts
    for c in ("driver", "torch", "kernel", "flashinfer", "sglang"):
        ch = stack.get(c)
        if ch is not None and not ch.current:
            facts = apply_choice(facts, ch, ctx)
    return facts


def applied(stack: Stack) -> dict[str, Choice]:
    """The choices of a stack that replace something on the box (a current choice changes nothing)."""
    out: dict[str, Choice] = {}
    for c in ("driver", "torch", "kernel", "flashinfer", "sglang"):
        ch = stack.get(c)
        if ch is not None and not ch.current:
            out[c] = ch
    return out


class Engine:
    """Feature verdicts on hypothetical facts: the box with some components replaced by choices.

    A verdict is memoised under the choices it can depend on (plan/deps.py): the exact choice of each
    component its rules read, and only whether a component is replaced for the ones its `needs` name. So a
    feature that reads only SGLang's version is judged once per SGLang release however many stacks share it,
    and the facts of a stack are built only on a miss. `memo=False` judges every request from scratch (the
    straightforward reference the tests compare the planner with)."""

    def __init__(self, ctx: Context, memo: bool = True) -> None:
        from stackcheck.plan.deps import feature_components

        self.ctx = ctx
        self.features = {str(f.get("id")): f for f in ctx.manifests.features}
        self.memo = memo
        has_gpus = bool(ctx.gpu_models())
        self._deps = {fid: feature_components(f, ctx.manifests, has_gpus) for fid, f in self.features.items()}
        self._cache: dict[tuple[Any, ...], FeatureVerdict] = {}
        self.evaluations = 0  # how many verdicts were computed (the benches and tests read it)

    def verdict_now(self, fid: str) -> FeatureVerdict:
        """The feature on the box as it is."""
        self.evaluations += 1
        return evaluate_feature(self.features[fid], self.ctx)

    def verdict_on(self, facts: Facts, fid: str) -> FeatureVerdict:
        """The feature on any facts (not memoised)."""
        self.evaluations += 1
        ctx = Context(facts=facts, manifests=self.ctx.manifests, launch=self.ctx.launch)
        if facts.get("gpus") is self.ctx.facts.get("gpus"):
            ctx.share_gpu_models(self.ctx)  # the same GPUs: their models are not worked out again
        return evaluate_feature(self.features[fid], ctx)

    def key(self, fid: str, choices: Mapping[str, Choice]) -> tuple[Any, ...]:
        """What the verdict of `fid` on the box with `choices` applied can depend on (see the class)."""
        exact, presence = self._deps[fid]
        return (
            fid,
            *((c, choices.get(c)) for c in sorted(exact)),
            *((c, c in choices) for c in sorted(presence)),
        )

    def verdict_with(self, choices: Mapping[str, Choice], fid: str, facts: Callable[[], Facts]) -> FeatureVerdict:
        """The feature on the box with `choices` applied; `facts` builds those facts (called on a miss only)."""
        if not self.memo:
            return self.verdict_on(facts(), fid)
        key = self.key(fid, choices)
        got = self._cache.get(key)
        if got is None:
            got = self._cache[key] = self.verdict_on(facts(), fid)
        return got

    def verdict(self, stack: Stack, fid: str) -> FeatureVerdict:
        return self.verdict_with(applied(stack), fid, lambda: stack_facts(self.ctx, stack))

    def ok(self, stack: Stack, fid: str) -> bool:
        return self.verdict(stack, fid).get("status") == "ok"


def first_failure(v: FeatureVerdict) -> str:
    for r in v.get("reasons") or []:
        if r.get("result") in ("fail", "unknown"):
            return str(r.get("message", ""))
    return str(v.get("status"))
