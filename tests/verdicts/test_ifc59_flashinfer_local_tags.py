"""ifc59 (the fifty-ninth sample, row c1: flashinfer-python 0.6.9+cu129 beside flashinfer-jit-cache 0.6.9 called ok):
flashinfer-cubin-match compared the public versions, while FlashInfer's import-time check compares its own version
string, the local tag a FLASHINFER_LOCAL_VERSION build gives it included: flashinfer-cubin's must be equal, a
flashinfer-jit-cache's must start with it (0.5.0-0.7.1) or be it with a local tag of its own (0.7.2 on). So a local
tag on one side and not the other raises RuntimeError at import (0.5.0-0.7.1: fail) or makes 0.7.2+ ignore the
package (unknown), never ok. A jit-cache of another release that still starts with flashinfer's version (0.6.10
beside 0.6.1, which 0.6.x's prefix check takes) is unknown."""

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


@pytest.mark.parametrize(
    ("fi", "extras"),
    [
        ("0.6.9+cu129", {"flashinfer-jit-cache": "0.6.9"}),  # (the row: "0.6.9".startswith("0.6.9+cu129") is false)
        ("0.6.9+cu129", {"flashinfer-cubin": "0.6.9"}),
        ("0.6.9", {"flashinfer-cubin": "0.6.9+cu129"}),
        ("0.7.1+rtx50", {"flashinfer-cubin": "0.7.1"}),
        ("0.6.7.post2+cu130", {"flashinfer-jit-cache": "0.6.7.post2+cu129"}),
        ("0.5.3+cu128", {"flashinfer-cubin": "0.5.3"}),
    ],
)
def test_a_local_tag_on_one_side_fails_where_the_import_raises(fi: str, extras: dict[str, str]) -> None:
    # fails before: ok (public versions equal)
    got = _check(fi, extras)
    assert got["status"] == "failed", got
    assert "raises RuntimeError" in json.dumps(got["reasons"])


@pytest.mark.parametrize(
    ("fi", "extras"),
    [
        ("0.7.4+cu129", {"flashinfer-cubin": "0.7.4"}),
        ("0.7.2", {"flashinfer-cubin": "0.7.2+cu130"}),
        ("0.7.4+cu129", {"flashinfer-jit-cache": "0.7.4+cu130"}),
    ],
)
def test_a_local_tag_on_one_side_is_unknown_where_flashinfer_ignores_the_package(
    fi: str, extras: dict[str, str]
) -> None:
    # fails before: ok
    assert _check(fi, extras)["status"] == "unknown"


def test_a_jit_cache_of_another_release_that_passes_the_prefix_check_is_unknown() -> None:
    # fails before: failed (a false fail: 0.6.1's check takes 0.6.10+cu129); ok would be a guess about its kernels
    got = _check("0.6.1", {"flashinfer-jit-cache": "0.6.10+cu129"})
    assert got["status"] == "unknown", got
    assert "another release" in json.dumps(got["reasons"])


@pytest.mark.parametrize(
    ("fi", "extras"),
    [
        ("0.6.9", {"flashinfer-cubin": "0.6.9", "flashinfer-jit-cache": "0.6.9+cu129"}),
        ("0.6.9+cu129", {"flashinfer-jit-cache": "0.6.9+cu129"}),
        ("0.6.7.post2+cu129", {"flashinfer-cubin": "0.6.7.post2+cu129"}),
        ("0.7.4", {"flashinfer-cubin": "0.7.4", "flashinfer-jit-cache": "0.7.4+cu130"}),
        ("0.7.4+cu129", {"flashinfer-jit-cache": "0.7.4+cu129"}),
    ],
)
def test_the_same_strings_still_pass(fi: str, extras: dict[str, str]) -> None:
    assert _check(fi, extras)["status"] == "ok"
