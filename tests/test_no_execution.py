"""Manifests, facts and logs are data only: the package never evaluates, unpickles or shells out."""

from __future__ import annotations

import ast
from pathlib import Path

import stackcheck

PACKAGE = Path(stackcheck.__file__).parent
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__"}
FORBIDDEN_MODULES = {"pickle", "marshal", "shelve", "yaml", "dill"}
PROBED = {"torch", "sglang", "flashinfer", "sgl_kernel", "vllm", "triton", "deep_gemm"}
#: the one module allowed marshal (issue 21: the shipped manifests kept parsed, knowledge/prepared.py): marshal's loads
#: builds plain values and runs nothing, and it is given only bytes this user wrote (paths.read_private: owned by this
#: user, not writable by group or others, no link followed; tests/knowledge/test_prepared_twins.py); pickle stays out
ALLOWED = {("knowledge/prepared.py", "marshal")}


def sources() -> list[Path]:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 30
    return files


def _parse_only(call: ast.Call) -> bool:
    """compile(..., flags=PyCF_ONLY_AST) builds a syntax tree and runs nothing: it is what ast.parse does (the
    packages probe reads torch/version.py that way without importing the ast module)."""
    flags = call.args[3] if len(call.args) > 3 else next((k.value for k in call.keywords if k.arg == "flags"), None)
    return isinstance(flags, ast.Attribute) and flags.attr == "PyCF_ONLY_AST"


def _forbidden_call(node: ast.AST) -> str | None:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS):
        return None
    if node.func.id == "compile" and _parse_only(node):
        return None
    return node.func.id


def test_a_compile_that_could_run_code_is_still_caught() -> None:
    calls = [
        "compile(src, 'f', 'exec')",
        "compile(src, 'f', 'exec', 0)",
        "compile(src, 'f', 'exec', flags=other.FLAG)",
        "eval(x)",
    ]
    for text in calls:
        node = ast.parse(text, mode="eval").body
        assert _forbidden_call(node) is not None, text
    for text in [
        "compile(src, 'f', 'exec', _ast.PyCF_ONLY_AST, dont_inherit=True)",
        "compile(src, 'f', 'exec', flags=ast.PyCF_ONLY_AST)",
    ]:
        assert _forbidden_call(ast.parse(text, mode="eval").body) is None, text


def test_no_eval_exec_pickle_yaml_or_probed_package_imports() -> None:
    problems = []
    for path in sources():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if (name := _forbidden_call(node)) is not None:
                problems.append(f"{path.name}:{getattr(node, 'lineno', 0)}: {name}()")
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                for name in names:
                    top = name.split(".")[0]
                    allowed = (path.relative_to(PACKAGE).as_posix(), top) in ALLOWED
                    if (top in FORBIDDEN_MODULES and not allowed) or top in PROBED:
                        problems.append(f"{path.name}:{node.lineno}: import {name}")
    assert problems == []


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


def test_marshal_reads_only_private_bytes_and_only_as_data() -> None:
    """knowledge/prepared.py's marshal: loads only of what read_private returned, dumps, and nothing else of it."""
    source = (PACKAGE / "knowledge" / "prepared.py").read_text(encoding="utf-8")
    uses = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "marshal":
            uses.add(node.attr)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "loads":
            assert [ast.unparse(a) for a in node.args] == ["raw"]
    assert uses == {"loads", "dumps", "version"}
    assert "raw = read_private(" in source
