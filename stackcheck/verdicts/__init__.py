"""facts + manifests -> verdicts: the evaluation context and its documented fact paths, the rule engine, each
feature's path to the kernel."""

#: how bad each effect of a failing rule is (a verdict takes the worst of its reasons'); here, for the engine and
#: the gate, so that neither imports verdicts.types (typed shapes, with typing) at run time
EFFECT_ORDER = {"crash": 3, "disabled": 2, "degraded": 1}
