"""imend7 (igap55's finding): flashinfer-cubin-match failed (effect crash, 'raises at import') for every
flashinfer-cubin / flashinfer-jit-cache whose version differs from flashinfer-python's. Read per release in the
flashinfer-python wheels (flashinfer/jit/env.py): 0.6.0-0.7.1 raise RuntimeError at import (fail, as before); 0.7.2
on log a warning, ignore the package and download cubins on demand or JIT-compile the kernels: unknown (the network
or toolkit that needs is not read), never fail (a false fail) nor ok. A source install's 0.0.0+unknown: unknown."""

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


def _check(fi: str, extras: dict[str, str]) -> dict[str, Any]:
    doc = copy.deepcopy(DOC)
    pkgs = doc.get("facts", doc)["packages"]
    for name in ("flashinfer-cubin", "flashinfer-jit-cache"):
        pkgs[name] = {"installed": False}
    for name, version in {"flashinfer-python": fi, **extras}.items():
        pkgs[name] = {"installed": True, "version": version, "dist_version": version}
    _, checks = evaluate_all(Context(facts=facts_from_document(doc, "facts.json"), manifests=MANIFESTS))
    return dict(next(c for c in checks if c["id"] == "flashinfer-cubin-match"))


@pytest.mark.parametrize("fi", ["0.6.0", "0.6.3", "0.6.18.post1", "0.7.0", "0.7.1"])
def test_releases_that_raise_at_import_fail(fi: str) -> None:
    got = _check(fi, {"flashinfer-cubin": "0.5.3"})
    assert got["status"] == "failed", got
    assert [r.get("effect") for r in got["reasons"] if r["rule"] == "flashinfer-cubin-matches"] == ["crash"]
    assert "raises RuntimeError" in json.dumps(got["reasons"])


@pytest.mark.parametrize("fi", ["0.7.2", "0.7.2.post1", "0.7.4"])
@pytest.mark.parametrize("extra", ["flashinfer-cubin", "flashinfer-jit-cache"])
def test_releases_that_ignore_the_package_are_unknown(fi: str, extra: str) -> None:
    # fails before: fail, effect crash (the import does not raise in these releases)
    got = _check(fi, {extra: "0.7.1" if extra == "flashinfer-cubin" else "0.7.1+cu129"})
    assert got["status"] == "unknown", got
    reason = next(r for r in got["reasons"] if r["rule"] == f"{extra}-matches")
    assert reason["result"] == "unknown" and "effect" not in reason
    assert ("download" if extra == "flashinfer-cubin" else "JIT-compiles") in reason["message"]


@pytest.mark.parametrize("fi", ["0.0.0+unknown", "0.7.2rc5"])
def test_a_source_install_or_a_pre_release_of_the_change_is_unknown(fi: str) -> None:
    assert _check(fi, {"flashinfer-cubin": "0.7.1"})["status"] == "unknown"


@pytest.mark.parametrize("fi", ["0.6.3", "0.7.4"])
def test_matching_packages_pass(fi: str) -> None:
    got = _check(fi, {"flashinfer-cubin": fi, "flashinfer-jit-cache": f"{fi}+cu129"})
    assert got["status"] == "ok", got
