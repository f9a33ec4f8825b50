"""Which parts of the hand-curated knowledge a release's own files can decide.

For a package P whose installed (or derived) release is newer than the data, each rule of a feature is
classed by what it reads of P:

- "read": it reads a gate table of P that has a probe in gates.json (read from P's files with ast), or
  P's compiled architectures, or it carries `"derive": {"flag": ...}` (it says a flag exists, which
  is read from P's server arguments). Version ranges of P in such a rule only pick the code path whose
  table is read, so they are taken as they are;
- "hand": it reads a gate of P that has no probe (its values were read by hand), or it is decided by P's
  version range alone, or (in a feature that does not list P in `assume_newer`) it reads only facts of the
  box: the data asserts it for the releases it knows, not for a newer one.

A rule that reads nothing of P but facts of other packages (their versions, their gate tables) is not
about P and is evaluated as usual ("read").

A feature is judged for the newer release when every rule that applies is "read"; a "hand" rule whose
`when` is false on this box does not apply and costs nothing; one that may apply leaves the feature
unknown with its reason.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from stackcheck.facts.model import KERNEL_PACKAGES


@dataclass(frozen=True)
class Basis:
    kind: str  # "read" | "hand"
    reason: str  # why, in words (for "hand": what a maintainer must supply)


def leaves(pred: Any) -> Iterator[dict[str, Any]]:
    """Every comparison in a predicate, with its value when that is itself a {"gate"} or {"fact"}."""
    if not isinstance(pred, dict):
        return
    for key in ("all", "any"):
        if isinstance(pred.get(key), list):
            for sub in pred[key]:
                yield from leaves(sub)
            return
    if "not" in pred:
        yield from leaves(pred["not"])
        return
    yield pred
    if isinstance(pred.get("value"), dict):
        yield pred["value"]


def _package_facts(package: str) -> tuple[set[str], set[str]]:
    """(version paths, archs paths) that read package P's own facts."""
    versions = {f"pkg.{package}.version"}
    archs = {f"pkg.{package}.archs"}
    if package in KERNEL_PACKAGES:
        versions.add("kernel.version")
        archs.add("kernel.archs")
    if package == "torch":
        versions.add("torch.version")
        archs.add("torch.archs")
    return versions, archs


def rule_basis(rule: Mapping[str, Any], package: str, gates: Mapping[str, Mapping[str, Any]], assume: bool) -> Basis:
    """How `rule` depends on `package` (see the module docstring). `gates`: id -> gate of gates.json;
    `assume`: the feature lists the package in assume_newer."""
    versions, archs = _package_facts(package)
    read: list[str] = []
    hand: list[str] = []
    others: list[str] = []  # facts of other packages: not what a newer release of `package` changes
    version_only = False
    derive = rule.get("derive")
    if isinstance(derive, Mapping) and isinstance(derive.get("flag"), str):
        read.append(f"the flag {derive['flag']}")
    for part in ("when", "require"):
        for leaf in leaves(rule.get(part)):
            gate_id = leaf.get("gate")
            fact = leaf.get("fact")
            if isinstance(gate_id, str):
                gate = gates.get(gate_id)
                if gate is None or gate.get("package") != package:
                    others.append(f"gate {gate_id}")
                    continue
                if isinstance(gate.get("probe"), Mapping):
                    read.append(f"gate {gate_id}")
                else:
                    hand.append(f"gate {gate_id} has no probe: its values were read by hand")
            elif fact in archs:
                read.append(f"{package}'s compiled architectures")
            elif fact in versions:
                version_only = True
            elif (
                isinstance(fact, str)
                and fact.startswith(("pkg.", "kernel.", "torch."))
                and not fact.endswith(".installed")
            ):
                others.append(fact)
    if hand:
        return Basis("hand", "; ".join(dict.fromkeys(hand)))
    if read:
        return Basis("read", ", ".join(dict.fromkeys(read)))
    if version_only:
        return Basis("hand", f"decided by {package}'s version range, written by hand for the releases the data knows")
    if others:
        return Basis("read", f"reads other packages' facts ({', '.join(dict.fromkeys(others))}), not {package}'s")
    if assume:
        return Basis("read", "reads only facts of the box (the feature holds for newer releases: assume_newer)")
    return Basis("hand", "written by hand for the releases the data knows (the feature does not list assume_newer)")


def undecided_features(
    features: list[Mapping[str, Any]], package: str, gates: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """For a release of `package` newer than the data: each feature that needs the package, with the rules
    its files decide and the rules that need hand-written knowledge (regardless of the box)."""
    out: list[dict[str, Any]] = []
    for feature in features:
        needs = [alt for n in feature.get("needs") or [] if isinstance(n, str) for alt in n.split("|")]
        if package not in needs:
            continue
        assume = package in (feature.get("assume_newer") or [])
        decided: list[str] = []
        hand: list[str] = []
        for rule in feature.get("rules") or []:
            if not isinstance(rule, Mapping):
                continue
            basis = rule_basis(rule, package, gates, assume)
            (decided if basis.kind == "read" else hand).append(f"{rule.get('id')}: {basis.reason}")
        out.append(
            {
                "feature": feature.get("id"),
                "status": "hand-written knowledge needed" if hand else "decided by the release's files",
                "decided": decided,
                "hand": hand,
            }
        )
    return out
