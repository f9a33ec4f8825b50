"""facts + manifests -> verdicts: the evaluation context and its documented fact paths, the rule engine, each
feature's path to the kernel."""

from __future__ import annotations

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

#: how bad each effect of a failing rule is (a verdict takes the worst of its reasons'); here, for the engine and
#: the gate, so that neither imports verdicts.types (typed shapes, with typing) at run time. `wrong-output` (the
#: server starts and serves wrong results with no error) ranks above disabled and degraded and below crash: the
#: rank picks the word a verdict shows, and where a crashing rule fails beside a wrong-output one, the launch stops
#: (at start or at the first forward, as the rules' own sources say) before any output is served. Both refuse in
#: the gate (REFUSED_EFFECTS), so the rank between them changes no decision and no exit code.
EFFECT_ORDER = {"crash": 4, "wrong-output": 3, "disabled": 2, "degraded": 1}

#: the effects the gate refuses for a default or launch-wide feature or check (a disabled or degraded one warns)
REFUSED_EFFECTS = frozenset({"crash", "wrong-output"})


def worst_effect(effects: Iterable[str], default: str = "") -> str:
    """The worst of `effects` by EFFECT_ORDER (one it does not rank counts lowest); `default` where there is none."""
    return max(effects, key=lambda e: EFFECT_ORDER.get(e, 0), default=default)
