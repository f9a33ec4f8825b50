"""Hypothetical facts: the box's facts with some components replaced by a stack's choices (what the facts
would say after the plan's steps), and the engine that judges features on them. Pure.

Every feature evaluation of the planner goes through `Engine` (the verdicts on the box as it is, on a
candidate stack, on the facts after a step), so that is the one place to memoise them."""

from __future__ import annotations

from typing import Any

from stackcheck.context import Context
from stackcheck.facts import KERNEL_PACKAGES, Facts
from stackcheck.plan.solver import Choice, Stack
from stackcheck.verdicts import FeatureVerdict, evaluate_feature
from stackcheck.versions import public


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


class Engine:
    """Feature verdicts on hypothetical facts, cached per stack."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.features = {str(f.get("id")): f for f in ctx.manifests.features}
        self._cache: dict[tuple[Stack, str], FeatureVerdict] = {}

    def verdict_now(self, fid: str) -> FeatureVerdict:
        """The feature on the box as it is."""
        return evaluate_feature(self.features[fid], self.ctx)

    def verdict_on(self, facts: Facts, fid: str) -> FeatureVerdict:
        return evaluate_feature(
            self.features[fid], Context(facts=facts, manifests=self.ctx.manifests, launch=self.ctx.launch)
        )

    def verdict(self, stack: Stack, fid: str) -> FeatureVerdict:
        key = (stack, fid)
        if key not in self._cache:
            self._cache[key] = self.verdict_on(stack_facts(self.ctx, stack), fid)
        return self._cache[key]

    def ok(self, stack: Stack, fid: str) -> bool:
        return self.verdict(stack, fid).get("status") == "ok"


def first_failure(v: FeatureVerdict) -> str:
    for r in v.get("reasons") or []:
        if r.get("result") in ("fail", "unknown"):
            return str(r.get("message", ""))
    return str(v.get("status"))
