"""irev77: FlashInfer 0.6.16-0.7.1 return a non-empty FLASHINFER_CUBIN_DIR before they look at flashinfer-cubin
(flashinfer/jit/env.py _get_cubin_dir: 0.6.16 :74-82, 0.7.1 :82-90), so a flashinfer-cubin of another release is
never version-checked there and the import does not raise: flashinfer-cubin-match failed (crash) such a box. Before
0.6.16 the package is checked first (0.6.0 :67-83: the variable does not help); 0.7.2+ only warn (ifc59's reading)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.facts.model import facts_from_document
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

CASE = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"
MANIFESTS = load_manifests([])
DOC = json.loads(CASE.read_text(encoding="utf-8"))


def _check(fi: str, cubin: str, env: dict[str, str]) -> dict[str, Any]:
    doc = copy.deepcopy(DOC)
    facts = doc.get("facts", doc)
    pkgs = facts["packages"]
    pkgs["flashinfer-jit-cache"] = {"installed": False}
    for name, version in {"flashinfer-python": fi, "flashinfer-cubin": cubin}.items():
        pkgs[name] = {"installed": True, "version": version, "dist_version": version}
    facts["system"] = {**facts.get("system", {}), "env": {**(facts.get("system", {}).get("env") or {}), **env}}
    _, checks = evaluate_all(Context(facts=facts_from_document(doc, "facts.json"), manifests=MANIFESTS))
    return dict(next(c for c in checks if c["id"] == "flashinfer-cubin-match"))


@pytest.mark.parametrize("fi", ["0.6.16", "0.6.17", "0.6.18", "0.7.0", "0.7.1"])
def test_the_variable_skips_the_package_check(fi: str) -> None:
    got = _check(fi, "0.6.13", {"FLASHINFER_CUBIN_DIR": "/srv/cubins"})
    reason = next(r for r in got["reasons"] if r["rule"] == "flashinfer-cubin-matches")
    assert reason["result"] == "pass" and "FLASHINFER_CUBIN_DIR" in reason["message"], got
    assert got["status"] != "failed"


@pytest.mark.parametrize(("fi", "env"), [("0.6.15.post1", {"FLASHINFER_CUBIN_DIR": "/srv/cubins"}),
                                         ("0.7.1", {"FLASHINFER_CUBIN_DIR": ""}), ("0.7.1", {})])  # fmt: skip
def test_before_0_6_16_or_empty_still_fails(fi: str, env: dict[str, str]) -> None:
    assert _check(fi, "0.6.13", env)["status"] == "failed"
