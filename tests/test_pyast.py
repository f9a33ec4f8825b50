"""stackcheck.pyast: every parse of Python source in the product goes through one lock (CPython 3.11/3.12's AST
converter keeps its recursion depth in state the threads share: CPython gh-106905; CI saw the derived probe come back
partial with "SystemError: AST constructor recursion depth mismatch" while the source-table probe parsed beside it),
and what it gives is what the ast module gives."""

from __future__ import annotations

import ast
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from stackcheck import pyast

ROOT = Path(__file__).resolve().parent.parent
SOURCE = (
    'x: int = 1\ndef f(a, *b, c=2, **d):\n    return {"k": [a, (b, c)], **d}\nclass C(dict):\n    y = f"{x!r:>4}"\n'
)


def test_parse_gives_what_ast_parse_gives() -> None:
    assert ast.dump(pyast.parse(SOURCE, "m.py")) == ast.dump(ast.parse(SOURCE, filename="m.py"))
    with pytest.raises(SyntaxError) as exc:
        pyast.parse("def (:\n", "bad.py")
    assert exc.value.filename == "bad.py"


@pytest.mark.parametrize("text", ["{'a': [1, 2.5, None, True], 'b': ('x',)}", "  \t'lead'", "-3", "{1, 2}"])
def test_literal_eval_gives_what_ast_literal_eval_gives(text: str) -> None:
    assert pyast.literal_eval(text) == ast.literal_eval(text)


@pytest.mark.parametrize("text", ["__import__('os')", "f(1)", "[1, 2] + x"])
def test_literal_eval_evaluates_nothing(text: str) -> None:
    with pytest.raises(ValueError):
        pyast.literal_eval(text)


def test_threads_never_parse_at_the_same_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lock is held across the compile: with a compile that lingers, no two threads are inside at once."""
    inside = 0
    most = 0
    guard = threading.Lock()
    real = compile

    def slow_compile(*args: Any, **kwargs: Any) -> Any:
        nonlocal inside, most
        with guard:
            inside += 1
            most = max(most, inside)
        time.sleep(0.002)
        try:
            return real(*args, **kwargs)
        finally:
            with guard:
                inside -= 1

    monkeypatch.setattr(pyast, "compile", slow_compile, raising=False)  # the module's global shadows the builtin
    threads = [threading.Thread(target=lambda: [pyast.parse(SOURCE) for _ in range(5)]) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most == 1


def test_no_product_module_parses_beside_the_lock() -> None:
    """ast.parse, ast.literal_eval and compile(..., PyCF_ONLY_AST) appear in stackcheck/pyast.py alone."""
    pattern = re.compile(r"\bast\.(parse|literal_eval)\(|PyCF_ONLY_AST")
    found = []
    for path in sorted((ROOT / "stackcheck").rglob("*.py")):
        if path.name == "pyast.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if pattern.search(code) and not code.lstrip().startswith(('"', "'")):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []
