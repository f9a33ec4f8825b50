"""List the longest functions of the stackcheck package, longest first: name, file:line and lines.

    python3 tools/longest_functions.py            # the 20 longest, as a Markdown table
    python3 tools/longest_functions.py -n 40      # the 40 longest
    python3 tools/longest_functions.py --over 150 # only those over 150 lines (exit 1 if there is one)

A function's length is its source lines from `def` (decorators included) to its last line, docstring and
comments included, nested functions counted in their parent and also listed on their own as
`outer.<locals>.inner`. Methods are named `Class.method`. Read from the source with ast; nothing is imported.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "stackcheck"


class Function(NamedTuple):
    name: str
    path: str  # relative to the repository root
    line: int
    lines: int


def functions_of(path: Path, root: Path = ROOT) -> list[Function]:
    """Every function and method defined in one file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    rel = path.relative_to(root).as_posix()
    out: list[Function] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                last = child.end_lineno or child.lineno
                name = f"{prefix}{child.name}"
                out.append(Function(name, rel, child.lineno, last - first + 1))
                walk(child, f"{name}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


def longest(package: Path = PACKAGE, root: Path = ROOT) -> list[Function]:
    """All functions of the package, longest first (ties: by file and line)."""
    found = [f for p in sorted(package.rglob("*.py")) for f in functions_of(p, root)]
    return sorted(found, key=lambda f: (-f.lines, f.path, f.line))


def table(rows: list[Function]) -> str:
    out = ["| lines | function | where |", "|---:|---|---|"]
    out += [f"| {f.lines} | `{f.name}` | `{f.path}:{f.line}` |" for f in rows]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-n", type=int, default=20, metavar="N", help="how many to list (default 20)")
    parser.add_argument("--over", type=int, metavar="LINES", help="list only the functions longer than LINES")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("-n: at least 1")
    rows = longest()
    if args.over is not None:
        rows = [f for f in rows if f.lines > args.over]
        sys.stdout.write(table(rows) if rows else f"no function over {args.over} lines\n")
        return 1 if rows else 0
    sys.stdout.write(table(rows[: args.n]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
