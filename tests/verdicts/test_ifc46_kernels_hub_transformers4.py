"""ifc46 (the forty-sixth fact-check sample, row h1): transformers 4.56.1 beside kernels 0.14.1 on SGLang 0.5.1 was
allowed with huggingface-hub's version not read. kernels 0.14.1-0.17.2 require huggingface-hub>=1.10.0 (their
METADATA); transformers 4.x checks huggingface-hub when it is imported and refuses one from 1.0 on (4.56.1
dependency_versions_table.py:27 '>=0.34.0,<1.0', dependency_versions_check.py:25-38), so a box where pip brought
huggingface-hub to kernels' floor cannot import transformers, and SGLang stops as it starts. Rule
kernels-huggingface-hub-transformers4 (check sglang-start-imports): fail from huggingface-hub 1.0, unknown where it
is not read, pass below 1.0; transformers 5 (huggingface-hub >=1.3,<2.0) is not judged by it. The packages probe reads
huggingface-hub. The registry test re-reads the pins in the real wheels."""

from __future__ import annotations

import copy
import re
import zipfile
from typing import Any

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.probes.packages import WANTED
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

MANIFESTS = load_manifests([])
RULE = "kernels-huggingface-hub-transformers4"


def _reason(transformers: str, kernels: str | None, hub: str | None) -> dict[str, Any] | None:
    packages: dict[str, Any] = {
        "sglang": {"installed": True, "version": "0.5.1"},
        "transformers": {"installed": True, "version": transformers},
        "kernels": {"installed": True, "version": kernels} if kernels else {"installed": False},
    }
    if hub is not None:
        packages["huggingface-hub"] = {"installed": True, "version": hub}
    facts: dict[str, Any] = {"packages": packages, "packages_complete": True}
    check = next(c for c in MANIFESTS.checks if c["id"] == "sglang-start-imports")
    got: dict[str, Any] = dict(evaluate_check(check, Context(facts=copy.deepcopy(facts), manifests=MANIFESTS)))  # type: ignore[arg-type]
    reasons: list[dict[str, Any]] = list(got["reasons"])
    return next((r for r in reasons if r.get("rule") == RULE), None)


@pytest.mark.parametrize(
    ("transformers", "kernels", "hub", "result"),
    [
        ("4.56.1", "0.14.1", "1.10.0", "fail"),  # what pip installs beside kernels: import transformers fails
        ("4.55.4", "0.16.0", "1.12.1", "fail"),
        ("4.56.1", "0.14.1", None, "unknown"),  # row h1: not read
        ("4.56.1", "0.14.1", "0.34.4", "pass"),  # transformers imports; kernels' own import is caught
        ("5.4.0", "0.14.1", "1.10.0", None),  # transformers 5 takes huggingface-hub 1.x
        ("4.56.1", None, "1.10.0", None),  # no kernels: not this rule's
    ],
)
def test_kernels_hub_against_transformers_4(
    transformers: str, kernels: str | None, hub: str | None, result: str | None
) -> None:
    # fails on the parent: no such rule (row h1 allowed)
    reason = _reason(transformers, kernels, hub)
    assert (reason or {}).get("result") == result, reason
    if result == "fail":
        assert reason is not None and reason["effect"] == "crash" and "<1.0" in str(reason["message"]), reason


def test_the_probe_reads_huggingface_hub() -> None:
    assert "huggingface-hub" in WANTED


@pytest.mark.registry
def test_the_real_wheels_pins() -> None:
    from registry_wheels import cached

    kernels, transformers = cached("kernels", "0.14.1"), cached("transformers", "4.56.1")
    if kernels is None or transformers is None:
        pytest.skip("kernels 0.14.1 / transformers 4.56.1 not cached")
    with zipfile.ZipFile(kernels) as z:
        metadata = z.read("kernels-0.14.1.dist-info/METADATA").decode()
    assert "Requires-Dist: huggingface-hub>=1.10.0" in metadata
    with zipfile.ZipFile(transformers) as z:
        table = z.read("transformers/dependency_versions_table.py").decode()
        check = z.read("transformers/dependency_versions_check.py").decode()
    assert '"huggingface-hub": "huggingface-hub>=0.34.0,<1.0"' in table
    assert re.search(r'pkgs_to_check_at_runtime = \[[^\]]*"huggingface-hub"', check)
