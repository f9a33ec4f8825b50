"""A feature judged on the box `stackcheck explain` builds for one SGLang release: eight GPUs of one compute
capability behind NVSwitch in an x86_64 machine (unless told otherwise), the release's pinned packages, tensor
parallel 8 (for the verdict tests)."""

from __future__ import annotations

from typing import Any

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature


def judge(
    manifests: Manifests,
    feature: str,
    cc: str,
    sglang: str,
    launch: dict[str, Any] | None = None,
    machine: str | None = "x86_64",
) -> Any:
    """The verdict of `feature` on that box with SGLang `sglang` and the launch facts `launch` (tp 8 unless
    given); `machine` None leaves facts.system out (a box whose machine is not known)."""
    base: dict[str, Any] = {
        "gpus": assumed_gpus(manifests, f"{cc}x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
    }
    if machine is not None:
        base["system"] = {"machine": machine}
    facts = release_facts(
        base,
        manifests,
        sglang,
        None,
        None,
    )
    ctx = Context(facts=facts, manifests=manifests, launch={"tp": 8, **(launch or {})})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in manifests.features if f["id"] == feature), ctx)


def rules(verdict: Any, result: str = "fail") -> list[str]:
    """The ids of the verdict's rules whose result is `result`, sorted."""
    return sorted(str(r.get("rule")) for r in verdict.get("reasons") or [] if r.get("result") == result)
