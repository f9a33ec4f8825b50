"""icubin1: FLASHINFER_DISABLE_VERSION_CHECK (any non-empty value) skips FlashInfer's import-time version checks in
every release read (flashinfer/jit/env.py 0.6.0 :73 :112, 0.6.16 :93 :128, 0.7.1 :101 :146 :164, 0.7.2 :83 :163
:179). flashinfer-cubin-match failed (crash) for a mismatched package even with it set; now a mismatched
flashinfer-cubin passes (its cubins judged by the trtllm-gen features) and a mismatched flashinfer-jit-cache is
unknown (another release's kernels loaded, not read). Unset or empty: as before."""

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


def _check(fi: str, extras: dict[str, str], env: dict[str, str]) -> dict[str, Any]:
    doc = copy.deepcopy(DOC)
    facts = doc.get("facts", doc)
    pkgs = facts["packages"]
    for name in ("flashinfer-cubin", "flashinfer-jit-cache"):
        pkgs[name] = {"installed": False}
    for name, version in {"flashinfer-python": fi, **extras}.items():
        pkgs[name] = {"installed": True, "version": version, "dist_version": version}
    facts["system"] = {**facts.get("system", {}), "env": {**(facts.get("system", {}).get("env") or {}), **env}}
    _, checks = evaluate_all(Context(facts=facts_from_document(doc, "facts.json"), manifests=MANIFESTS))
    return dict(next(c for c in checks if c["id"] == "flashinfer-cubin-match"))


@pytest.mark.parametrize("fi", ["0.6.0", "0.6.18", "0.7.1", "0.7.2"])
def test_bypassed_cubin_package_passes(fi: str) -> None:
    got = _check(fi, {"flashinfer-cubin": "0.5.3"}, {"FLASHINFER_DISABLE_VERSION_CHECK": "1"})
    reason = next(r for r in got["reasons"] if r["rule"] == "flashinfer-cubin-matches")
    assert reason["result"] == "pass" and "FLASHINFER_DISABLE_VERSION_CHECK" in reason["message"], got
    assert got["status"] != "failed"


@pytest.mark.parametrize("fi", ["0.6.0", "0.7.1"])
def test_bypassed_jit_cache_is_unknown(fi: str) -> None:
    got = _check(fi, {"flashinfer-jit-cache": "0.5.3+cu129"}, {"FLASHINFER_DISABLE_VERSION_CHECK": "0"})
    assert got["status"] == "unknown", got


@pytest.mark.parametrize("env", [{}, {"FLASHINFER_DISABLE_VERSION_CHECK": ""}])
def test_unset_or_empty_still_fails(env: dict[str, str]) -> None:
    assert _check("0.7.1", {"flashinfer-cubin": "0.5.3"}, env)["status"] == "failed"
