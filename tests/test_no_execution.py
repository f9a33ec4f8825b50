"""Manifests, facts and logs are data only: the package never evaluates, unpickles or shells out."""

from __future__ import annotations

import ast
from pathlib import Path

import stackcheck

PACKAGE = Path(stackcheck.__file__).parent
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__"}
FORBIDDEN_MODULES = {"pickle", "marshal", "shelve", "yaml", "dill"}
PROBED = {"torch", "sglang", "flashinfer", "sgl_kernel", "vllm", "triton", "deep_gemm"}


def sources() -> list[Path]:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 30
    return files


def _parse_only(node: ast.Call) -> bool:
    """compile(source, filename, mode, <module>.PyCF_ONLY_AST, ...): what ast.parse does, an AST and no code
    object, so nothing can be run from it (torch's version.py is read so without importing `ast`)."""
    flags = node.args[3] if len(node.args) > 3 else next((k.value for k in node.keywords if k.arg == "flags"), None)
    return isinstance(flags, ast.Attribute) and flags.attr == "PyCF_ONLY_AST"


def forbidden(tree: ast.AST, name: str) -> list[str]:
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            if not (node.func.id == "compile" and _parse_only(node)):
                problems.append(f"{name}:{node.lineno}: {node.func.id}()")
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for imported in names:
                top = imported.split(".")[0]
                if top in FORBIDDEN_MODULES or top in PROBED:
                    problems.append(f"{name}:{node.lineno}: import {imported}")
    return problems


def test_no_eval_exec_pickle_yaml_or_probed_package_imports() -> None:
    problems = []
    for path in sources():
        problems += forbidden(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), path.name)
    assert problems == []


def test_only_a_parse_to_an_ast_may_call_compile() -> None:
    flagged = [
        "compile(text, 'f', 'exec')",
        "compile(text, 'f', 'exec', 0)",
        "compile(text, 'f', 'exec', _ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)",
        "exec(compile(text, 'f', 'exec'))",
        "eval(text)",
    ]
    for src in flagged:
        assert forbidden(ast.parse(src), "x"), src
    for src in (
        "compile(text, 'f', 'exec', _ast.PyCF_ONLY_AST, dont_inherit=True)",
        "compile(t, 'f', 'exec', flags=ast.PyCF_ONLY_AST)",
    ):
        assert forbidden(ast.parse(src), "x") == [], src


def test_no_shell_true_anywhere() -> None:
    problems = []
    for path in sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg == "shell" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                        problems.append(f"{path.name}:{node.lineno}")
                if (
                    isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("system", "popen")
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "os"
                ):
                    problems.append(f"{path.name}:{node.lineno}: os.{node.func.attr}")
    assert problems == []
