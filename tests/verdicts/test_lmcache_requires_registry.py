"""igap33: LMCache's Requires-Dist against the transformers SGLang pins (issue 16).

LMCache 0.4.5-0.5.6 require transformers>=5.4 while SGLang 0.5.1-0.5.10 pin 4.55.2-5.3.0, so `pip install lmcache`
beside one of them replaces transformers (or installing SGLang afterwards leaves LMCache's requirement unmet).
Nothing judged that pair. It is a warning, not a crash: the names LMCache imports from transformers at module level
(AutoTokenizer, AutoConfig) are in transformers 4.x, which the registry test re-reads from the wheels."""

from __future__ import annotations

import ast
import copy
import re
from typing import Any

import pytest
from registry_wheels import fetch_wheel, read_texts, run_all

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.facts.versions import version_in
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

MANIFESTS = load_manifests([])
CHECK = "lmcache-requires"
RULE = "lmcache-transformers-54"


def _verdict(lmcache: str | None, transformers: str | None) -> dict[str, Any]:
    packages: dict[str, Any] = {
        "sglang": {"installed": True, "version": "0.5.9"},
        "lmcache": {"installed": True, "version": lmcache} if lmcache else {"installed": False},
        "transformers": {"installed": True, "version": transformers} if transformers else {"installed": False},
    }
    check = next(c for c in MANIFESTS.checks if c["id"] == CHECK)
    facts = {"packages": packages, "packages_complete": True}
    return dict(evaluate_check(check, Context(facts=copy.deepcopy(facts), manifests=MANIFESTS)))  # type: ignore[arg-type]


def _rule(verdict: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in verdict["reasons"] if r.get("rule") == RULE), None)


@pytest.mark.parametrize(("lmcache", "transformers"), [("0.4.5", "4.57.1"), ("0.5.6", "5.3.0"), ("0.4.6", "4.56.1")])
def test_an_lmcache_that_requires_transformers_54_beside_an_older_one_warns(lmcache: str, transformers: str) -> None:
    verdict = _verdict(lmcache, transformers)
    failing = _rule(verdict)
    assert failing is not None and failing["result"] == "fail", verdict["reasons"]
    assert failing["effect"] == "degraded" and verdict["status"] == "warning"
    assert failing.get("observed") == transformers and "not a crash" in str(failing["message"])


@pytest.mark.parametrize(
    ("lmcache", "transformers"),
    [("0.5.6", "5.4.0"), ("0.5.6", "5.12.1"), ("0.4.4", "4.57.1"), ("0.3.9", "4.56.1")],
)
def test_a_requirement_met_or_not_made_passes(lmcache: str, transformers: str) -> None:
    assert [r["rule"] for r in _verdict(lmcache, transformers)["reasons"] if r.get("result") == "fail"] == []


@pytest.mark.parametrize(("lmcache", "transformers"), [("0.5.7", "4.57.1"), (None, "4.57.1"), ("0.5.6", None)])
def test_what_was_not_read_or_is_not_installed_leaves_the_rule_out(
    lmcache: str | None, transformers: str | None
) -> None:
    verdict = _verdict(lmcache, transformers)
    assert _rule(verdict) is None or _rule(verdict)["result"] != "fail"  # type: ignore[index]


# ---- the wheels ------------------------------------------------------------------------------------------------

#: every LMCache release on PyPI from the last that requires transformers>=4.51.1 to the newest read (2026-12-05)
REQUIRE_54 = ["0.4.5", "0.4.6", "0.4.7", "0.5.0", "0.5.1", "0.5.2", "0.5.3", "0.5.4", "0.5.5", "0.5.6"]
BEFORE = "0.4.4"


def _requires(version: str) -> dict[str, str]:
    texts = read_texts(fetch_wheel("lmcache", version), lambda n: n.endswith(".dist-info/METADATA"))
    out: dict[str, str] = {}
    for line in next(iter(texts.values())).splitlines():
        m = re.match(r"^Requires-Dist: ([A-Za-z0-9_.-]+)\s*(.*)$", line)
        if m:
            out[m.group(1).lower()] = m.group(2).strip()
    return out


def _module_level_transformers_names(sources: dict[str, str]) -> set[str]:
    """The names `from transformers import ...` brings in when a module is imported (not inside a function)."""
    names: set[str] = set()

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(child, ast.ImportFrom) and (child.module or "").split(".")[0] == "transformers":
                names.update(f"{child.module}.{a.name}" for a in child.names)
            elif isinstance(child, ast.Import):
                names.update(a.name for a in child.names if a.name.split(".")[0] == "transformers")
            walk(child)

    for text in sources.values():
        walk(ast.parse(text))
    return names


def test_the_reader_skips_imports_inside_functions() -> None:
    src = {"a.py": "from transformers import AutoConfig\ndef f():\n    from transformers import Foo\n"}
    assert _module_level_transformers_names(src) == {"transformers.AutoConfig"}


@pytest.mark.registry
def test_the_wheels_require_transformers_54_and_import_only_what_4x_has() -> None:
    """STACKCHECK_REGISTRY_ALL=1 reads every release of REQUIRE_54 (else the first and the last)."""
    check = next(c for c in MANIFESTS.checks if c["id"] == CHECK)
    rule = next(r for r in check["rules"] if r["id"] == RULE)
    spec = next(c for c in rule["when"]["all"] if c["fact"] == "pkg.lmcache.version")["value"]
    assert all(version_in(v, spec) for v in REQUIRE_54) and not version_in(BEFORE, spec)
    assert _requires(BEFORE)["transformers"] == ">=4.51.1"
    assert _requires(BEFORE)["cupy-cuda12x"] == ""
    for version in REQUIRE_54 if run_all() else [REQUIRE_54[0], REQUIRE_54[-1]]:
        requires = _requires(version)
        assert requires["transformers"] == ">=5.4" and "cupy-cuda13x" in requires, (version, requires)
        sources = read_texts(fetch_wheel("lmcache", version), lambda n: n.startswith("lmcache/") and n.endswith(".py"))
        assert _module_level_transformers_names(sources) == {"transformers.AutoTokenizer", "transformers.AutoConfig"}
    for tf, config_line, tokenizer_line in (("4.55.2", 1125, 908), ("4.57.1", 1207, 932)):
        auto = read_texts(fetch_wheel("transformers", tf), lambda n: n.startswith("transformers/models/auto/"))
        config = auto["transformers/models/auto/configuration_auto.py"].splitlines()
        tokenizer = auto["transformers/models/auto/tokenization_auto.py"].splitlines()
        assert config[config_line - 1].startswith("class AutoConfig"), tf
        assert tokenizer[tokenizer_line - 1].startswith("class AutoTokenizer"), tf
