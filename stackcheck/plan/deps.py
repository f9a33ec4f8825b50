"""Which of a hypothetical stack's components a feature's verdict can depend on, read from the feature's
rules. Pure.

The planner judges features on many hypothetical facts: the box with some components replaced by a stack's
choices (hypothetical.apply_choice: the driver, the CUDA toolkit, torch, the kernel package, FlashInfer,
SGLang). A feature whose rules read only SGLang's version and the GPUs has the same verdict on every stack
with the same SGLang release, so the engine judges it once per SGLang release (hypothetical.Engine), not
once per stack. The dependency is read from the rules, conservatively: every fact path, gate and `needs`
maps to the components whose choice can change what it reads; a path this module does not know makes the
feature depend on every component (no sharing, never a wrong verdict). tests/plan/test_plan_memo.py compares the
memoised planner with one that judges every stack from scratch, on generated boxes."""

from __future__ import annotations

from collections.abc import Mapping

from stackcheck.facts.model import KERNEL_PACKAGES
from stackcheck.knowledge.loader import Manifests
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

#: every component apply_choice can replace
EVERY = frozenset({"driver", "toolkit", "torch", "kernel", "flashinfer", "sglang"})

#: package -> the component whose choice rewrites its entry (and its binaries and gate tables); the other
#: packages are the box's in every hypothetical stack. Triton follows torch's pin (a torch step brings it there:
#: hypothetical.torch_triton), and so do the NCCL wheels (hypothetical.torch_nccl_step: the one of the new torch's CUDA
#: major goes to its pin, ifc46, installed where it was not; the other major's is uninstalled, igap52)
PACKAGE_COMPONENT: Mapping[str, str] = {
    "torch": "torch",
    "triton": "torch",
    "nvidia-nccl-cu12": "torch",
    "nvidia-nccl-cu13": "torch",
    **dict.fromkeys(KERNEL_PACKAGES, "kernel"),
    "flashinfer-python": "flashinfer",
    "flashinfer-cubin": "flashinfer",
    "flashinfer-jit-cache": "flashinfer",
    "sglang": "sglang",
}


_SGLANG = frozenset({"sglang"})


def _package(name: str, companions: frozenset[str] = frozenset()) -> frozenset[str]:
    comp = PACKAGE_COMPONENT.get(name)
    if comp:
        return frozenset({comp})
    return _SGLANG if name in companions else frozenset()


def companions(manifests: Manifests) -> frozenset[str]:
    """The packages outside PACKAGE_COMPONENT that an SGLang release of the manifests requires (components.json
    `requires`): an SGLang step brings one it pins exactly to that pin (solver.pinned_companions, which
    hypothetical.apply_choice installs with its binaries and gate tables dropped), so what reads one of them reads
    the SGLang choice. All of them, not only the exact pins of the releases: a superset is only less sharing.
    Remembered with the manifests."""
    memo = manifests.derived("plan.companions")
    got = memo.get(None)
    if got is None:
        names: set[str] = set()
        for release in manifests.releases("sglang"):
            requires = release.get("requires")
            if isinstance(requires, Mapping):
                names.update(n for n in map(str, requires) if n not in PACKAGE_COMPONENT)
        got = memo[None] = frozenset(names)
    return got


def path_components(
    path: str, has_gpus: bool = False, companions: frozenset[str] = frozenset()
) -> frozenset[str] | None:
    """The components a fact path (Context.lookup) can read; None when the path is not known here. `companions`:
    the packages an SGLang step can move (companions(manifests)): they read SGLang's choice."""
    head, _, rest = path.partition(".")
    if head == "gpu":
        # the GPUs are the box's in every stack; with none, a GPU path says why in the driver's words
        # (Context.gpus_unknown_reason)
        return frozenset() if has_gpus else frozenset({"driver"})
    if head in ("launch", "topology", "env", "pcie", "cudalib", "system"):
        return frozenset()
    if head in ("driver", "image"):  # image.nvidia_require is judged against the driver
        return frozenset({"driver"})
    if head in ("toolkit", "jit"):  # the toolkit step rewrites cuda_toolkits and jit
        return frozenset({"toolkit"})
    if head == "triton":  # Triton's ptxas: the toolkit's (jit) and Triton's own, which a torch step replaces
        return frozenset({"toolkit", "torch"})
    if head == "torch":
        return frozenset({"torch"})
    if head == "transfer":  # the gate's transfer-package judgement: SGLang's release and torch's CUDA (the box's
        # loader and the transfer package itself are no component)
        return frozenset({"torch"}) | _SGLANG
    if head == "kernel":
        return frozenset({"kernel"})
    if head == "flashinfer_cubins":  # FlashInfer's cubin directory, read for one flashinfer-python release (icubin1)
        return frozenset({"flashinfer"})
    if head == "pkg" and ".lib." in rest:  # one extension module of a package (Context._pkg_fact)
        name, _, lib_field = rest.partition(".lib.")
        lib, _, field = lib_field.rpartition(".")
        if not name or not lib:
            return None
        got = _package(name, companions)  # its binaries, which a step that replaces the package drops
        if field == "missing_symbols":  # the kernel symbol probe's section: a driver, torch or kernel step drops it
            got = got | {"driver", "torch", "kernel"}
        return got
    if head in ("pkg", "release"):
        name = rest.rpartition(".")[0]
        return _package(name, companions) if name else None
    if head == "known":
        return _package(rest, companions) if rest else None
    return None


def predicate_components(
    pred: Any,
    manifests: Manifests,
    has_gpus: bool = False,
    memo: dict[int, tuple[Any, frozenset[str] | None]] | None = None,
) -> frozenset[str] | None:
    """The union over every fact path and gate a predicate (or a value reference in it) names; None: unknown.

    With `memo` (node identity -> (the node, its answer); the caller keeps the nodes alive) each node of a tree
    is read once: a node's answer is its own fact path and gate with its children's answers, kept for every
    node read on the way. The planner asks about every rule and then about predicates inside it
    (plan.hypothetical), so without it a nested predicate was walked again for each node above it. The answer
    is the same either way (tests/plan/test_plan_first_run.py). (Recursive: the shipped manifests nest 11 levels
    and a user's is refused past loader.MAX_MANIFEST_DEPTH.)"""
    if not isinstance(pred, _CONTAINERS):
        return frozenset()
    return _node(pred, manifests, has_gpus, {} if memo is None else memo, companions(manifests))


_CONTAINERS = (dict, list)


def _node(
    item: Any,
    manifests: Manifests,
    has_gpus: bool,
    memo: dict[int, tuple[Any, frozenset[str] | None]],
    comps: frozenset[str],
) -> frozenset[str] | None:
    got = memo.get(id(item))
    if got is not None and got[0] is item:
        return got[1]
    out: frozenset[str] | None = _EMPTY
    if isinstance(item, list):
        children: Any = item
    else:
        children = item.values()
        if "fact" in item:
            out = path_components(str(item["fact"]), has_gpus, comps)
        if out is not None and "gate" in item:
            spec = manifests.source_table(str(item["gate"]))
            package = spec.get("package") if spec is not None else None
            if isinstance(package, str):
                out = out | _package(package, comps)
            elif spec is not None:
                out = None  # a gate of no package: not a shape this module knows
    if out is not None:
        for child in children:
            if isinstance(child, _CONTAINERS):
                sub = _node(child, manifests, has_gpus, memo, comps)
                if sub is None:
                    out = None
                    break
                if sub:
                    out = out | sub
    memo[id(item)] = (item, out)
    return out


_EMPTY: frozenset[str] = frozenset()


def feature_components(
    feature: Mapping[str, Any],
    manifests: Manifests,
    has_gpus: bool = False,
    memo: dict[int, tuple[Any, frozenset[str] | None]] | None = None,
) -> tuple[frozenset[str], frozenset[str]]:
    """(exact, presence): the components a feature's verdict (verdicts.evaluate_feature) can depend on.

    `exact`: those its rules read (every `when` and `require`): the verdict can change with the release
    chosen. `presence`: those only its `needs` name: the verdict can change only with whether the component
    is replaced at all, since a replaced package is installed, at a release the manifests record, never newer
    than them (apply_choice), so the `needs` check passes the same way for every choice. Every component is
    exact when anything in the rules is not understood. `memo` as for predicate_components."""
    exact: set[str] = set()
    for rule in feature.get("rules") or []:
        if not isinstance(rule, dict):
            continue
        for part in ("when", "require"):
            if part in rule:
                got = predicate_components(rule[part], manifests, has_gpus, memo)
                if got is None:
                    return EVERY, frozenset()
                exact |= got
    presence: set[str] = set()
    comps = companions(manifests)
    for need in feature.get("needs") or []:
        if isinstance(need, str):
            for alt in need.split("|"):
                presence |= _package(alt, comps)
    if not has_gpus:  # no GPU: every verdict says why in the driver's words (engine's rule gpu, gpus_unknown_reason)
        exact.add("driver")
    return frozenset(exact), frozenset(presence - exact)
