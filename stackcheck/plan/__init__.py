"""The upgrade planner: a constraint solver over the manifests' releases, then ordered steps. Pure.

- model.py: the typed values every consumer reads (`Plan`, `Step`, `Blocked`, `Alternative`, `FailingCheck`, frozen) and
  json_shapes.py the JSON shapes their `to_json` gives (the report's `plan`; types only);
- solver.py: the box as the planner reads it (`Box`), the candidate values of each component (`Space`),
  the consistent stacks (`enumerate_stacks`), why a stack does not hold together (`violations`);
- hypothetical.py: the facts after a stack's changes (`apply_choice`, `stack_facts`) and the `Engine` that
  judges features on them: every feature evaluation of the planner goes through it;
- steps.py: the target's changes as ordered steps (driver, CUDA toolkit, torch, kernel, flashinfer,
  SGLang, manual patches), what each step unblocks, the regressions;
- installers/: one plug-in per component that writes a step's commands (`INSTALLERS`: pip, apt and dnf
  text, the flashinfer-cubin rules, the driver packages);
- planner.py: the request (holds, pins, wanted features) -> the target stack -> the `Plan` (with the stack
  checks that still fail on the facts after it), or why no stack satisfies it.

`make_plan(ctx, features, want, hold, pins)` is the entry point; `plan_and_facts` also returns the facts
after the plan (what `stackcheck recommend` judges its launch on); `component_name` reads a component as
the user names it (--hold, --to)."""

from __future__ import annotations

from stackcheck.plan.model import Alternative, Blocked, FailingCheck, Plan, Step
from stackcheck.plan.planner import make_plan, plan_and_facts
from stackcheck.plan.solver import component_name

__all__ = ["Alternative", "Blocked", "FailingCheck", "Plan", "Step", "component_name", "make_plan", "plan_and_facts"]
