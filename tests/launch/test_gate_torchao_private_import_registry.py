"""torchao's Python import against torch's private modules (igap27; check torchao-import, rules
torchao-private-import-*), re-derived from the real wheels.

For each torchao release 0.9.0-0.18.0 the test walks the modules that SGLang's `from torchao.quantization import
...` and `from torchao.quantization.observer import ...` run (the only torchao imports of the sglang wheels
0.4.6.post2-0.5.23, both inside functions of sglang/srt/layers/torchao_utils.py; igap27 grep, 2026-12-05):
torchao/__init__.py, torchao/quantization/__init__.py and every torchao module they import at
module level, transitively; function bodies are not run; an import inside a try whose handler catches ImportError
does not end the import, and its handler runs only where the try's body fails; branches on torchao's own
torch-version tests follow the torch read), and lists each module-level import of a private torch module (a dotted
name with a part that starts with an underscore: torch._inductor..., torch.utils._pytree). Each is looked up in the
file list of the torch wheels 2.5.1-2.15.0 (zipfile, never installed): the module must be a file of the wheel and a
name imported from it a submodule or a top-level name of that file. The pairs where one fails must be exactly the
pairs the manifest's rules refuse (their `when` and `require` version ranges, read with packaging)."""

from __future__ import annotations

import ast
import json
import sys
import warnings
import zipfile
from functools import cache
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from registry_wheels import fetch_wheel

pytestmark = pytest.mark.registry

ROOT = Path(__file__).resolve().parents[2]
RELEASES = ("0.9.0", "0.10.0", "0.11.0", "0.12.0", "0.13.0", "0.14.0", "0.14.1", "0.15.0", "0.16.0", "0.17.0", "0.18.0")
#: torch release -> the CPython its cached wheel is built for (2.5.1 and 2.6.0: cp310; the file lists are the same)
TORCHES = {
    "2.5.1": "3.10", "2.6.0": "3.10", "2.7.1": None, "2.8.0": None, "2.9.1": None, "2.10.0": None, "2.11.0": None,
    "2.12.0": None, "2.13.0": None, "2.14.1": None, "2.15.0": None,
}  # fmt: skip
ROOTS = ("torchao", "torchao.quantization", "torchao.quantization.observer")  # what sglang 0.4.6-0.5.17 import
CATCHES = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def _parse(source: bytes) -> ast.Module:
    with warnings.catch_warnings():  # their docstrings' invalid escape sequences warn (an error under -W error)
        warnings.simplefilter("ignore")  # DeprecationWarning on Python 3.11, SyntaxWarning from 3.12
        return ast.parse(source)


def _private(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "torch" and any(p.startswith("_") for p in parts[1:])


def _catches(node: ast.Try) -> bool:
    for handler in node.handlers:
        if handler.type is None:
            return True
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        names = {t.id if isinstance(t, ast.Name) else getattr(t, "attr", "") for t in types}
        if names & CATCHES:
            return True
    return False


class _Torch:
    """One torch wheel's file list and the top-level names of the modules asked about."""

    def __init__(self, version: str) -> None:
        self.version = Version(version)
        self.zip = zipfile.ZipFile(fetch_wheel("torch", version, python=TORCHES[version]))
        self.names = set(self.zip.namelist())
        self.defs: dict[str, tuple[set[str], bool]] = {}

    def file(self, module: str) -> str | None:
        stem = module.replace(".", "/")
        return next((f for f in (f"{stem}.py", f"{stem}/__init__.py") if f in self.names), None)

    def has(self, module: str, name: str | None) -> bool:
        path = self.file(module)
        if path is None:
            return False
        if name is None or self.file(f"{module}.{name}") is not None:
            return True
        if path not in self.defs:
            found: set[str] = set()
            open_ended = False
            for node in ast.walk(_parse(self.zip.read(path))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    found.add(node.name)
                    open_ended |= node.name == "__getattr__"
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    found.add(node.id)
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    for alias in node.names:
                        open_ended |= alias.name == "*"
                        found.add(alias.asname or alias.name.split(".")[0])
            self.defs[path] = (found, open_ended)
        found, open_ended = self.defs[path]
        return open_ended or name in found  # every nesting counted: a name missing here is missing everywhere

    def branch(self, test: ast.expr) -> bool | None:
        """torchao's own torch-version tests (TORCH_VERSION_AT_LEAST_2_X, torch_version_at_least('2.X.Y')) under
        this torch; None for any other test (both branches are walked)."""
        text = ast.unparse(test)
        if text.startswith("TORCH_VERSION_AT_LEAST_"):
            major, minor = text.removeprefix("TORCH_VERSION_AT_LEAST_").split("_")[:2]
            return self.version.release[:2] >= (int(major), int(minor))
        if text.startswith("torch_version_at_least(") and isinstance(test, ast.Call):
            arg = test.args[0]
            assert isinstance(arg, ast.Constant), text
            return self.version >= Version(str(arg.value))
        return None


@cache
def _torchao(release: str) -> dict[str, tuple[str, ast.Module]]:
    """module name -> (file, parsed source) for the release's Python files."""
    out: dict[str, tuple[str, ast.Module]] = {}
    with zipfile.ZipFile(fetch_wheel("torchao", release)) as zf:
        for name in zf.namelist():
            if name.startswith("torchao/") and name.endswith(".py"):
                module = name[:-3].replace("/", ".").removesuffix(".__init__")
                out[module] = (name, _parse(zf.read(name)))
    return out


def _failures(release: str, torch: _Torch) -> list[str]:
    """'file:line torch.module[:name]' for each private torch import that fails as SGLang imports this torchao."""
    files = _torchao(release)
    seen: set[str] = set()
    todo: list[str] = []
    failed: list[str] = []

    def need(module: str) -> None:
        parts = module.split(".")
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            if name in files and name not in seen:
                seen.add(name)
                todo.append(name)

    def imports(module: str, node: ast.Import | ast.ImportFrom) -> list[tuple[str, str | None]]:
        if isinstance(node, ast.Import):
            return [(a.name, None) for a in node.names]
        base = node.module or ""
        if node.level:
            parts = module.split(".")
            if not files[module][0].endswith("__init__.py"):
                parts = parts[:-1]
            parts = parts[: len(parts) - node.level + 1]
            base = ".".join(parts + ([node.module] if node.module else []))
        return [(base, a.name) for a in node.names]

    def walk(module: str, body: list[ast.stmt], guarded: bool) -> bool:
        """Runs the statements; False where an unguarded private import failed (the import ends there)."""
        ok = True
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for base, name in imports(module, node):
                    if base.startswith("torchao"):
                        if not guarded:  # a failure inside a module a try imports is caught there
                            need(base)
                            if name is not None:
                                need(f"{base}.{name}")
                    elif _private(base) and not torch.has(base, name):
                        ok = False
                        if not guarded:
                            failed.append(f"{files[module][0]}:{node.lineno} {base}" + (f":{name}" if name else ""))
            elif isinstance(node, ast.If):
                if "TYPE_CHECKING" in ast.unparse(node.test):
                    continue
                taken = torch.branch(node.test)
                if taken is not False:
                    ok &= walk(module, node.body, guarded)
                if taken is not True:
                    ok &= walk(module, node.orelse, guarded)
            elif isinstance(node, ast.Try):
                catches = _catches(node)
                body_ok = walk(module, node.body, guarded or catches)
                if not body_ok and catches:
                    for handler in node.handlers:
                        ok &= walk(module, handler.body, guarded)
                ok &= body_ok or catches
                ok &= walk(module, node.orelse + node.finalbody, guarded)
            elif isinstance(node, (ast.ClassDef, ast.With)):
                ok &= walk(module, node.body, guarded)
        return ok

    for root in ROOTS:
        need(root)
    while todo:
        module = todo.pop()
        walk(module, files[module][1].body, False)
    return sorted(failed)


def _manifest_refuses(torchao: str, torch: str) -> list[str]:
    """The rules torchao-private-import-* of the check torchao-import that fail for this pair (their version
    ranges in `when` hold and their `require` on torch's version does not)."""
    checks = json.loads((ROOT / "manifests" / "checks.json").read_text())
    check = next(c for c in checks["checks"] if c["id"] == "torchao-import")
    out = []
    for rule in check["rules"]:
        if not rule["id"].startswith("torchao-private-import"):
            continue
        ranges = {c["fact"]: c["value"] for c in rule["when"]["all"] if c.get("op") == "version"}
        if Version(torchao) not in SpecifierSet(ranges["pkg.torchao.version"]):
            continue
        if Version(torch) not in SpecifierSet(ranges["pkg.torch.version"]):
            continue
        require = rule["require"]
        assert require["fact"] == "pkg.torch.version" and require["op"] == "version", rule["id"]
        if Version(torch) not in SpecifierSet(require["value"]):
            out.append(rule["id"])
    return out


@pytest.mark.parametrize("torch", list(TORCHES))
def test_matrix_matches_the_rules(torch: str) -> None:
    reader = _Torch(torch)
    wrong = []
    for release in RELEASES:
        failures = _failures(release, reader)
        refused = _manifest_refuses(release, torch)
        if bool(failures) != bool(refused):
            wrong.append(f"torchao {release} x torch {torch}: read {failures or 'imports'}, rules {refused}")
    assert not wrong, "\n".join(wrong)


def test_the_hardware_finding_is_read() -> None:
    """The lent H100 (torch 2.11.0+cu130): `import torchao` 0.12.0 ended with "No module named
    'torch._inductor.kernel.flex_attention'" (bench/torchao_gate_proof.py); 0.13.0 imported."""
    reader = _Torch("2.11.0")
    assert any("torch._inductor.kernel.flex_attention" in f for f in _failures("0.12.0", reader))
    assert _failures("0.13.0", reader) == []
