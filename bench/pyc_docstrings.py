"""What the docstrings cost a command's start (issue 21, iperf30): the bytecode of every module a stackcheck command
imports from a source file, unmarshalled as it is cached (the docstrings in it) against the same code with its
docstrings left out (nothing else changed: asserts stay, unlike `python -OO`), counted by bytes and by the time or
the instructions marshal's loads takes over the whole set.

    python bench/pyc_docstrings.py [--tree .] [--runs 30] [--callgrind] [-- COMMAND ARGS...]
                                   (default command: audit --facts tests/cases/writeup-after/facts.json --format json)

The modules are those the command imports (its `-X importtime` lines, the command run once from the tree with a
cache directory of its own) that come from a .py file: stackcheck's, the standard library's, site-packages'. Each
is compiled twice here from its source (compile(), as importlib writes a .pyc: marshal.dumps of the code object),
once as it is and once with the docstring of the module, of each class and of each function taken out of the tree
first (a body left empty gets `pass`). Only marshal's loads is measured (what an import spends unmarshalling the
.pyc), not the reading of the file nor the module's execution. Prints bytes and the minimum over --runs of loads
over the set (process CPU time), per group (stackcheck, other) and in all; `--callgrind` also counts the
instructions of a child that loads each set once (valgrind). Nothing is written to the tree: the source files are
only read. Standard library only."""

from __future__ import annotations

import argparse
import ast
import importlib.util
import marshal
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT = ["audit", "--facts", "tests/cases/writeup-after/facts.json", "--format", "json"]
COLLECTED = re.compile(r"Collected : (\d+)")
LOADER = "import marshal, sys\nfor b in marshal.loads(open(sys.argv[1], 'rb').read()): marshal.loads(b)\n"


def imported_modules(tree: str, argv: list[str], cache: str) -> list[str]:
    """The names of the modules `python -m stackcheck ARGV` imports, in import order (its -X importtime lines)."""
    env = {**os.environ, "PYTHONPATH": tree, "STACKCHECK_CACHE_DIR": cache}
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "stackcheck", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
        check=False,
        timeout=300,
    )
    names = []
    for line in run.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name and name != "imported package":
                names.append(name)
    return names


def _strip(tree: ast.Module) -> ast.Module:
    """The module's tree without the docstring of the module, its classes and its functions."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    doc = body.pop(0)
                    if not body:
                        body.append(ast.copy_location(ast.Pass(), doc))
    return tree


def compiled(path: str) -> tuple[bytes, bytes]:
    """(marshal.dumps of the module's code as importlib caches it, the same without docstrings)."""
    with open(path, "rb") as fh:
        source = fh.read()
    full = compile(source, path, "exec", dont_inherit=True)
    bare = compile(_strip(ast.parse(source, path)), path, "exec", dont_inherit=True)
    return marshal.dumps(full), marshal.dumps(bare)


def loads_ms(blobs: list[bytes], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        t = time.process_time()
        for b in blobs:
            marshal.loads(b)
        best = min(best, time.process_time() - t)
    return best * 1e3


def instructions(blobs: list[bytes], tmp: str, name: str) -> float:
    """Millions of instructions of a child that loads each blob once, less one that loads none (callgrind)."""
    counts = []
    for label, data in ((name, blobs), (name + "-none", [])):
        path = os.path.join(tmp, label)
        with open(path, "wb") as fh:
            fh.write(marshal.dumps(data))
        run = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.%p", sys.executable, "-c", LOADER, path],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        found = COLLECTED.search(run.stderr)
        if found is None:
            raise SystemExit(f"callgrind gave no count: {run.stderr[-300:]}")
        counts.append(int(found.group(1)))
    return (counts[0] - counts[1]) / 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default=".")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("command", nargs="*", help="the stackcheck command line (after --)")
    args = ap.parse_args()
    tree = os.path.abspath(args.tree)
    argv = args.command or DEFAULT
    if args.callgrind and shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="pyc-docstrings-") as tmp:
        names = imported_modules(tree, argv, os.path.join(tmp, "cache"))
        sys.path.insert(0, tree)
        groups: dict[str, tuple[list[bytes], list[bytes]]] = {"stackcheck": ([], []), "other": ([], [])}
        for name in dict.fromkeys(names):
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                continue
            origin = getattr(spec, "origin", None)
            if not isinstance(origin, str) or not origin.endswith(".py") or not os.path.isfile(origin):
                continue  # built in, frozen or an extension: no .pyc
            full, bare = compiled(origin)
            group = groups["stackcheck" if name.split(".")[0] == "stackcheck" else "other"]
            group[0].append(full)
            group[1].append(bare)
        print(f"stackcheck {' '.join(argv)}: python {sys.version.split()[0]}, tree {tree}")
        head = f"{'modules':<12}{'n':>5}{'KB':>9}{'KB bare':>9}{'doc %':>7}{'loads ms':>10}{'bare ms':>9}{'saved':>7}"
        print(head + (f"{'M instr':>9}{'M bare':>8}" if args.callgrind else ""))
        both = (
            [b for g in groups.values() for b in g[0]],
            [b for g in groups.values() for b in g[1]],
        )
        for label, (full, bare) in [*groups.items(), ("all", both)]:
            kb, kb_bare = sum(map(len, full)) / 1024, sum(map(len, bare)) / 1024
            ms, ms_bare = loads_ms(full, args.runs), loads_ms(bare, args.runs)
            line = f"{label:<12}{len(full):>5}{kb:>9.1f}{kb_bare:>9.1f}{100 * (1 - kb_bare / kb):>6.1f}%"
            line += f"{ms:>10.2f}{ms_bare:>9.2f}{100 * (1 - ms_bare / ms):>6.1f}%"
            if args.callgrind:
                line += f"{instructions(full, tmp, label):>9.2f}{instructions(bare, tmp, label + '-bare'):>8.2f}"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
