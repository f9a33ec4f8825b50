"""The module-level import closure of an SGLang tree's model modules over SGLang and transformers sources, read with
ast (never run), for the registry tests of model.registry.import_failures.

Followed: `import X` and `from X import Y` at module level, inside try bodies (a handler runs only on failure) and if
blocks (not `if TYPE_CHECKING`); relative imports; a package's parents (their __init__ runs first). transformers'
lazy packages (transformers, transformers.integrations, transformers.models.NAME) are resolved as their _LazyModule
does: a name to the file that exports it (the top-level _import_structure, integrations' _import_structure, a models
file's __all__)."""

from __future__ import annotations

import ast
import re
from collections import deque
from functools import cache
from pathlib import Path


@cache
def _exported(path: Path) -> frozenset[str]:
    """A file's __all__ (kept across closures: the registry tests read one transformers tree for several SGLangs)."""
    try:
        tree: ast.Module | None = ast.parse(path.read_text(encoding="utf-8-sig"))
    except (SyntaxError, UnicodeDecodeError):
        tree = None
    for node in tree.body if tree else []:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                return frozenset(ast.literal_eval(node.value))
            except ValueError:
                return frozenset()
    return frozenset()


class Closure:
    def __init__(self, sglang_root: Path, transformers_root: Path) -> None:
        self.roots = {"sglang": sglang_root, "transformers": transformers_root}
        self.edges = cache(self._edges)
        self.exported = _exported
        self.lazy_target = cache(self._lazy_target)

    def path_of(self, mod: str) -> Path | None:
        root = self.roots.get(mod.split(".", maxsplit=1)[0])
        if root is None:
            return None
        base = root.joinpath(*mod.split("."))
        if (base / "__init__.py").is_file():
            return base / "__init__.py"
        return base.with_suffix(".py") if base.with_suffix(".py").is_file() else None

    @staticmethod
    def _parse(path: Path) -> ast.Module | None:
        try:
            return ast.parse(path.read_text(encoding="utf-8-sig"))
        except (SyntaxError, UnicodeDecodeError):
            return None

    def _structure(self, init: Path) -> dict[str, str]:
        text = init.read_text(encoding="utf-8")
        out: dict[str, str] = {}
        for m in re.finditer(r'"([\w.]+)"\s*:\s*\[([^\]]*)\]', text):
            for name in re.findall(r'"(\w+)"', m.group(2)):
                out.setdefault(name, m.group(1))
        for m in re.finditer(r'_import_structure\["([\w.]+)"\]\s*=\s*\[([^\]]*)\]', text):
            for name in re.findall(r'"(\w+)"', m.group(2)):
                out.setdefault(name, m.group(1))
        return out

    def _lazy_target(self, package: str, name: str) -> str | None:
        root = self.roots["transformers"]
        directory = root.joinpath(*package.split("."))
        if package in ("transformers", "transformers.integrations"):
            hit = self._structure(directory / "__init__.py").get(name)
            if hit is not None:
                return f"{package}.{hit}"
        if package == "transformers":
            for sub in sorted((directory / "models").iterdir()):
                for f in sorted(sub.glob("*.py")) if sub.is_dir() else []:
                    if name in self.exported(f):
                        return f"transformers.models.{sub.name}.{f.stem}"
            return None
        for f in sorted(directory.glob("*.py")):
            if f.name != "__init__.py" and name in self.exported(f):
                return f"{package}.{f.stem}"
        return None

    @staticmethod
    def lazy(mod: str) -> bool:
        return mod in ("transformers", "transformers.integrations", "transformers.models") or bool(
            re.fullmatch(r"transformers\.models\.\w+", mod)
        )

    def _imports(self, path: Path, mod: str) -> list[str]:
        tree = self._parse(path)
        out: list[str] = []

        def walk(body: list[ast.stmt]) -> None:
            for n in body:
                if isinstance(n, ast.Import):
                    out.extend(a.name for a in n.names)
                elif isinstance(n, ast.ImportFrom):
                    base = n.module or ""
                    if n.level:
                        pkg = mod.split(".")
                        if path.name != "__init__.py":
                            pkg = pkg[:-1]
                        pkg = pkg[: len(pkg) - (n.level - 1)]
                        base = ".".join(pkg + ([base] if base else []))
                    out.append(base)
                    out.extend(f"{base}.{a.name}" for a in n.names)
                elif isinstance(n, ast.Try):
                    walk(n.body)
                    walk(n.orelse)
                    walk(n.finalbody)
                elif isinstance(n, ast.If):
                    if "TYPE_CHECKING" not in ast.unparse(n.test):
                        walk(n.body)
                    walk(n.orelse)
                elif isinstance(n, ast.With):
                    walk(n.body)

        walk(tree.body if tree else [])
        return out

    def _edges(self, mod: str) -> tuple[str, ...]:
        path = self.path_of(mod)
        if path is None:
            return ()
        parts = mod.split(".")
        out = [".".join(parts[:i]) for i in range(1, len(parts))]
        out = [p for p in out if p == "transformers" or not self.lazy(p)]
        for name in self._imports(path, mod):
            if name.split(".")[0] not in self.roots:
                continue
            if self.path_of(name) is not None:
                if not self.lazy(name):
                    out.append(name)
                continue
            base, _, attr = name.rpartition(".")
            if self.lazy(base):
                target = self.lazy_target(base, attr)
                if target is not None:
                    out.append(target)
        return tuple(out)

    def chain(self, start: str, target: str) -> list[str] | None:
        prev: dict[str, str | None] = {start: None}
        queue = deque([start])
        while queue:
            mod = queue.popleft()
            if mod == target:
                out = []
                at: str | None = mod
                while at is not None:
                    out.append(at)
                    at = prev[at]
                return out[::-1]
            for n in self.edges(mod):
                if n not in prev:
                    prev[n] = mod
                    queue.append(n)
        return None


def modules_reaching(sglang_root: Path, transformers_root: Path, target: str) -> dict[str, list[str]]:
    """sglang/srt/models module name -> its import chain to `target`, for every module that reaches it."""
    closure = Closure(sglang_root, transformers_root)
    out = {}
    for f in sorted((sglang_root / "sglang" / "srt" / "models").glob("*.py")):
        if f.name == "__init__.py":
            continue
        found = closure.chain(f"sglang.srt.models.{f.stem}", target)
        if found is not None:
            out[f.stem] = found
    return out
