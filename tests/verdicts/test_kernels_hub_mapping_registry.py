"""igap33: rule kernels-needs-version-transformers judged a range of transformers releases, not two.

kernels 0.15.1 and later refuse a LayerRepository with neither revision nor version; the transformers releases whose
modeling_utils imports integrations/hub_kernels at module level and whose hub_kernels builds such entries at import
crash every SGLang start beside them. The rule named 5.6.0 and 5.8.1 only, so 5.6.1-5.8.0, 5.9.0-5.12.1, 4.56-4.57
(SGLang 0.5.2-0.5.9's pins), post releases and local builds passed. The registry test reads the wheels with ast."""

from __future__ import annotations

import ast
import copy
from typing import Any

import pytest
from registry_wheels import fetch_wheel, read_texts, run_all

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.facts.versions import version_in
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

MANIFESTS = load_manifests([])
RULE = "kernels-needs-version-transformers"
HUB = "transformers/integrations/hub_kernels.py"
MODELING = "transformers/modeling_utils.py"


def _verdict(transformers: str | None, kernels: dict[str, Any]) -> dict[str, Any]:
    packages: dict[str, Any] = {
        "sglang": {"installed": True, "version": "0.5.12"},
        "transformers": {"installed": True, "version": transformers},
        "kernels": kernels,
    }
    check = next(c for c in MANIFESTS.checks if c["id"] == "sglang-start-imports")
    facts = {"packages": packages, "packages_complete": False}
    return dict(evaluate_check(check, Context(facts=copy.deepcopy(facts), manifests=MANIFESTS)))  # type: ignore[arg-type]


def _result(transformers: str | None, kernels: str = "0.15.2") -> str | None:
    verdict = _verdict(transformers, {"installed": True, "version": kernels})
    return next((str(r["result"]) for r in verdict["reasons"] if r.get("rule") == RULE), None)


@pytest.mark.parametrize(
    "transformers",
    # each was a false pass: the rule named 5.6.0 and 5.8.1 only
    ["5.6.1", "5.6.2", "5.7.0", "5.8.0", "5.9.0", "5.12.1", "4.56.0", "4.57.1", "5.7.0+local", "5.12.1.post1"],
)
def test_a_release_that_builds_bare_entries_at_import_crashes_beside_kernels_015(transformers: str) -> None:
    assert _result(transformers) == "fail"
    verdict = _verdict(transformers, {"installed": True, "version": "0.16.0"})
    failing = next(r for r in verdict["reasons"] if r.get("rule") == RULE)
    assert failing["effect"] == "crash" and verdict["status"] == "failed"
    assert "Either a revision or a version must be specified." in str(failing["message"])


@pytest.mark.parametrize("transformers", ["5.6.1", "5.7.0", "4.57.1"])
def test_kernels_before_015_passes(transformers: str) -> None:
    assert _result(transformers, kernels="0.14.1") == "pass"


@pytest.mark.parametrize("transformers", ["4.55.4", "4.51.3", "5.13.0", "5.13.1", "5.19.0"])
def test_releases_outside_the_range_leave_the_rule_out(transformers: str) -> None:
    assert _result(transformers) is None


@pytest.mark.parametrize("transformers", ["4.57.1", "5.4.0", "5.12.1"])
def test_kernels_listed_as_not_installed_leaves_the_rule_out(transformers: str) -> None:
    # (the rule's `when` read pkg.kernels.listed, true for a list naming kernels as not installed; its `require`
    # then found no kernels version and said unknown, so the check was unknown: found when igap33's range met
    # irev63's tests at the merge)
    verdict = _verdict(transformers, {"installed": False})
    assert not any(r.get("rule") == RULE for r in verdict["reasons"]), verdict


def test_an_unread_transformers_version_is_not_a_pass() -> None:
    assert _result(None) in (None, "unknown")
    assert _result("5.7.0", kernels="") != "pass"


# ---- the range, re-read from the wheels ----------------------------------------------------------------------

#: every transformers release on PyPI from the last one before the range to the first one after it (2026-12-05)
INSIDE = [
    "4.56.0", "4.56.1", "4.56.2", "4.57.0", "4.57.1", "4.57.2", "4.57.3", "4.57.4", "4.57.5", "4.57.6",
    "5.0.0", "5.1.0", "5.2.0", "5.3.0", "5.4.0", "5.5.0", "5.5.1", "5.5.2", "5.5.3", "5.5.4", "5.6.0", "5.6.1",
    "5.6.2", "5.7.0", "5.8.0", "5.8.1", "5.9.0", "5.10.1", "5.10.2", "5.10.4", "5.11.0", "5.12.0", "5.12.1",
]  # fmt: skip
BEFORE, AFTER = "4.55.4", "5.13.0"


def _bare_entries_at_import(source: str) -> list[int]:
    """Lines of LayerRepository(...) calls run when the module is imported (not inside a function) that pass neither
    revision nor version, and sit in a try whose handlers catch only ImportError (or in no try at all)."""
    found: list[int] = []

    def walk(node: ast.AST, guarded_by: list[str] | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            handlers = guarded_by
            if isinstance(child, ast.Try):
                handlers = [ast.unparse(h.type) if h.type else "" for h in child.handlers]
                for part in child.body:
                    walk_one(part, handlers)
                rest: list[ast.AST] = [*child.orelse, *child.finalbody, *child.handlers]
                for other in rest:
                    walk_one(other, guarded_by)
                continue
            walk_one(child, handlers)

    def walk_one(child: ast.AST, handlers: list[str] | None) -> None:
        if isinstance(child, ast.Call):
            name = getattr(child.func, "id", getattr(child.func, "attr", None))
            keywords = {k.arg for k in child.keywords}
            if name == "LayerRepository" and not keywords & {"revision", "version"}:
                if handlers is None or all(h == "ImportError" for h in handlers):
                    found.append(child.lineno)
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            walk(child, handlers)

    walk(ast.parse(source), None)
    return found


def _imports_hub_kernels_at_module_level(source: str) -> bool:
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            if node.module == "integrations.hub_kernels":
                return True
            if node.module == "integrations" and any(a.name == "hub_kernels" for a in node.names):
                return True
    return False


def _reads(version: str) -> tuple[list[int], bool]:
    texts = read_texts(fetch_wheel("transformers", version), lambda n: n in (HUB, MODELING))
    return _bare_entries_at_import(texts[HUB]), _imports_hub_kernels_at_module_level(texts[MODELING])


def test_the_reader_tells_a_bare_entry_from_a_guarded_or_lazy_one() -> None:
    bare = (
        "try:\n    from kernels import LayerRepository\n"
        "    M = {'a': LayerRepository(repo_id='x', layer_name='y')}\nexcept ImportError:\n    pass\n"
    )
    assert _bare_entries_at_import(bare) == [3]
    assert _bare_entries_at_import(bare.replace("layer_name='y'", "layer_name='y', version=1")) == []
    assert _bare_entries_at_import(bare.replace("except ImportError", "except (ImportError, ValueError)")) == []
    lazy = "def build():\n    return LayerRepository(repo_id='x', layer_name='y')\n"
    assert _bare_entries_at_import(lazy) == []
    assert _imports_hub_kernels_at_module_level("from .integrations import hub_kernels, x\n")
    assert not _imports_hub_kernels_at_module_level("def f():\n    from .integrations import hub_kernels\n")


def _rule_spec() -> str:
    check = next(c for c in MANIFESTS.checks if c["id"] == "sglang-start-imports")
    rule = next(r for r in check["rules"] if r["id"] == RULE)
    parts = rule["when"]["all"]
    floor, below = (str(c["value"]) for c in parts if c.get("fact") == "pkg.transformers.version")
    assert floor.startswith(">=") and below.startswith("<")  # (the rule's edges: `>=A` and `<B`)
    return f"{floor},{below}"


@pytest.mark.registry
def test_the_wheels_show_the_range_the_rule_names() -> None:
    """Every release in INSIDE builds bare entries at import and its modeling_utils imports hub_kernels; the release
    before does not import it from modeling_utils and the one after builds none. STACKCHECK_REGISTRY_ALL=1 reads every
    release in INSIDE (else the first, one in the middle and the last)."""
    spec = _rule_spec()
    assert all(version_in(v, spec) for v in INSIDE) and not version_in(BEFORE, spec) and not version_in(AFTER, spec)
    for version in INSIDE if run_all() else [INSIDE[0], "5.7.0", INSIDE[-1]]:
        bare, imported = _reads(version)
        assert bare and imported, (version, bare, imported)
    before_bare, before_imported = _reads(BEFORE)
    assert before_bare and not before_imported  # bare entries, but modeling_utils does not import the module
    after_bare, after_imported = _reads(AFTER)
    assert after_imported and not after_bare


@pytest.mark.parametrize("transformers", ["5.13.0rc1", "5.13.0.dev0", "5.13.0a1"])
def test_a_pre_release_of_513_is_not_a_pass_beside_kernels_015(transformers: str) -> None:
    # irev64: `<5.13.0` holds for no pre-release of 5.13.0 (PEP 440), so a 5.13.0.dev0 built from transformers' main
    # before hub_kernels built its table lazily (5.12.1's code: a crash beside kernels 0.15.1+) met no rule and the
    # check said ok; which code a pre-release has is not known: unknown
    assert _result(transformers) == "unknown"
    assert _result(transformers, kernels="0.16.0") == "unknown"


@pytest.mark.parametrize("transformers", ["5.13.0rc1", "4.56.0.dev0"])
def test_a_pre_release_at_an_edge_passes_beside_kernels_before_015(transformers: str) -> None:
    assert _result(transformers, kernels="0.14.1") == "pass"


@pytest.mark.parametrize("transformers", ["4.56.0.dev0", "4.56.0rc1"])
def test_a_pre_release_of_456_is_unknown_beside_kernels_015(transformers: str) -> None:
    assert _result(transformers) == "unknown"
