"""The command-line flags an SGLang release declares, read with `ast` from its own sources.

Two ways SGLang declares a flag, both read:
- `parser.add_argument("--flag", "--alias", choices=..., action=...)` calls in the `add_cli_args` methods
  of `sglang/srt/server_args.py` (every release; the only way up to about 0.5.12);
- annotated fields `name: A[T, "help"]` or `name: A[T, Arg(choices=..., aliases=..., cli_name=...,
  no_cli=...)]` of `ServerArgs` (server_args.py) and, in newer releases, of the namespace classes in
  `sglang/srt/arg_groups/fields/` (those listed in server_args.py's `_INPUT_NAMESPACES`); SGLang turns each
  into `--name-with-dashes` (or `cli_name`) plus its aliases, skipping `no_cli=True`; `Literal[...]` gives
  the choices, `bool` a store_true switch.

A `choices=` that names a module-level list (ATTENTION_BACKEND_CHOICES, in server_args.py or in
arg_groups/choices.py) is resolved through the module's assignments and imports; anything else (a list
built at run time, a plugin's extension through add_*_choices) is reported as not read. Nothing is
imported or executed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from stackcheck.derive.tree import ReleaseTree, TreeError
from stackcheck.pyast import parse

SERVER_ARGS = "sglang/srt/server_args.py"
ARG_GROUPS = "sglang/srt/arg_groups/"
MAX_SOURCE = 4 * 1024 * 1024


@dataclass
class Flag:
    flag: str
    aliases: list[str]
    kind: str  # "bool" (a switch) | "value"
    choices: list[str] | None  # None: free value, or choices not read (see choices_note)
    choices_note: str | None
    file: str
    line: int
    how: str  # "add_argument" | "field"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"flag": self.flag, "kind": self.kind, "file": self.file, "line": self.line}
        if self.aliases:
            out["aliases"] = self.aliases
        if self.choices is not None:
            out["choices"] = self.choices
        if self.choices_note:
            out["choices_note"] = self.choices_note
        out["how"] = self.how
        return out


@dataclass
class FlagScan:
    flags: dict[str, Flag] = field(default_factory=dict)  # by main flag
    files: list[str] = field(default_factory=list)  # the sources read
    problems: list[str] = field(default_factory=list)

    def lookup(self, flag: str) -> Flag | None:
        hit = self.flags.get(flag)
        if hit is not None:
            return hit
        for f in self.flags.values():
            if flag in f.aliases:
                return f
        return None


@dataclass
class _Module:
    rel: str
    tree: ast.Module
    lists: dict[str, ast.expr] = field(default_factory=dict)  # module-level NAME = <expr>
    imports: dict[str, tuple[str, str]] = field(default_factory=dict)  # local name -> (module, name)


def flag_sources(tree: ReleaseTree) -> list[str]:
    """The files flags are declared in, in a fixed order (modules they import choices from are read on
    demand)."""
    names = [SERVER_ARGS] if tree.exists(SERVER_ARGS) else []
    names += sorted(n for n in tree.names_under(ARG_GROUPS + "fields/") if n.endswith(".py"))
    return names


def _parse(tree: ReleaseTree, rel: str) -> _Module:
    try:
        data = tree.read_bytes(rel, MAX_SOURCE)
        module = parse(data.decode("utf-8"), rel)
    except (TreeError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError) as exc:
        raise TreeError(f"{tree.where(rel)}: cannot parse: {str(exc).splitlines()[0]}") from None
    mod = _Module(rel, module)
    for stmt in module.body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    mod.lists[target.id] = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            mod.lists[stmt.target.id] = stmt.value
        elif isinstance(stmt, ast.ImportFrom) and stmt.module:
            for alias in stmt.names:
                mod.imports[alias.asname or alias.name] = (stmt.module, alias.name)
    return mod


def _module_path(dotted: str) -> str:
    return dotted.replace(".", "/") + ".py"


class _Resolver:
    """Resolves names to string lists; modules named by imports are parsed when first needed."""

    def __init__(self, tree: ReleaseTree, modules: dict[str, _Module], problems: list[str]) -> None:
        self.tree = tree
        self.modules = modules
        self.problems = problems
        self.local: dict[str, ast.expr] = {}  # assignments of the function being read

    def module(self, dotted: str) -> _Module | None:
        rel = _module_path(dotted)
        if rel not in self.modules:
            if not rel.startswith("sglang/") or not self.tree.exists(rel):
                return None
            try:
                self.modules[rel] = _parse(self.tree, rel)
            except TreeError as exc:
                self.problems.append(str(exc))
                return None
        return self.modules[rel]

    def strings(self, node: ast.expr, mod: _Module, depth: int = 0) -> list[str] | None:
        """A list of string literals, following names through module assignments and imports."""
        if depth > 8:
            return None
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            out: list[str] = []
            for elt in node.elts:
                if isinstance(elt, ast.Constant) and isinstance(elt.value, str):
                    out.append(elt.value)
                elif isinstance(elt, ast.Starred):
                    inner = self.strings(elt.value, mod, depth + 1)
                    if inner is None:
                        return None
                    out.extend(inner)
                else:
                    return None
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self.strings(node.left, mod, depth + 1)
            right = self.strings(node.right, mod, depth + 1)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple"):
            if len(node.args) == 1 and not node.keywords:
                return self.strings(node.args[0], mod, depth + 1)
            return None
        if isinstance(node, ast.Name):
            if depth == 0 and node.id in self.local:
                return self.strings(self.local[node.id], mod, depth + 1)
            if node.id in mod.lists:
                return self.strings(mod.lists[node.id], mod, depth + 1)
            if node.id in mod.imports:
                module, name = mod.imports[node.id]
                other = self.module(module)
                if other is not None:
                    return self.strings(ast.Name(id=name, ctx=ast.Load()), other, depth + 1)
        return None


def _str_const(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _kw(call: ast.Call, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def _choices(node: ast.expr | None, mod: _Module, res: _Resolver) -> tuple[list[str] | None, str | None]:
    if node is None:
        return None, None
    values = res.strings(node, mod)
    if values is None:
        return None, f"choices are an expression not read statically ({ast.unparse(node)[:80]})"
    return values, None


def _negatable(action: ast.expr | None) -> bool:
    """argparse.BooleanOptionalAction: argparse adds `--no-NAME` for each `--NAME` of the option."""
    return action is not None and "BooleanOptionalAction" in ast.unparse(action)


def _negations(names: list[str]) -> list[str]:
    return ["--no-" + n[2:] for n in names if n.startswith("--")]


def _from_add_argument(call: ast.Call, mod: _Module, res: _Resolver) -> Flag | None:
    names = [s for s in (_str_const(a) for a in call.args) if s is not None]
    long = [n for n in names if n.startswith("--")]
    if not long:
        return None
    action = _kw(call, "action")
    action_text = _str_const(action) if action is not None else None
    is_switch = (
        action_text in ("store_true", "store_false")
        or (action is not None and action_text is None and "StoreTrue" in ast.unparse(action))
        or _negatable(action)
    )
    if _negatable(action):
        names += _negations(names)
    choices, note = _choices(_kw(call, "choices"), mod, res)
    return Flag(
        flag=long[0],
        aliases=[n for n in names if n != long[0]],
        kind="bool" if is_switch else "value",
        choices=choices,
        choices_note=note,
        file=mod.rel,
        line=call.lineno,
        how="add_argument",
    )


def _annotated_parts(ann: ast.expr) -> tuple[ast.expr, list[ast.expr]] | None:
    """A[T, meta...] or Annotated[T, meta...] -> (T, [meta...])."""
    if not isinstance(ann, ast.Subscript):
        return None
    head = ann.value
    name = head.id if isinstance(head, ast.Name) else head.attr if isinstance(head, ast.Attribute) else None
    if name not in ("A", "Annotated"):
        return None
    inner = ann.slice
    if not isinstance(inner, ast.Tuple) or len(inner.elts) < 2:
        return None
    return inner.elts[0], list(inner.elts[1:])


def _unwrap_optional(node: ast.expr) -> ast.expr:
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Optional":
        return node.slice
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        for side in (node.left, node.right):
            if not (isinstance(side, ast.Constant) and side.value is None):
                return side
    return node


def _literal_values(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        out = [str(e.value) for e in elts if isinstance(e, ast.Constant)]
        return out if len(out) == len(elts) else None
    return None


def _from_field(stmt: ast.AnnAssign, mod: _Module, res: _Resolver) -> Flag | None:
    if not isinstance(stmt.target, ast.Name):
        return None
    parts = _annotated_parts(stmt.annotation)
    if parts is None:
        return None
    type_node, metas = parts
    arg: ast.Call | None = None
    for meta in metas:  # SGLang takes the first Arg(...) or bare string
        if isinstance(meta, ast.Call) and isinstance(meta.func, ast.Name) and meta.func.id == "Arg":
            arg = meta
            break
        if _str_const(meta) is not None:
            break
    else:
        return None  # no Arg and no help string: not a CLI field
    if arg is not None:
        no_cli = _kw(arg, "no_cli")
        if isinstance(no_cli, ast.Constant) and no_cli.value is True:
            return None
    name = stmt.target.id
    cli = _str_const(_kw(arg, "cli_name")) if arg is not None else None
    flag = cli or "--" + name.replace("_", "-")
    aliases: list[str] = []
    alias_node = _kw(arg, "aliases") if arg is not None else None
    if alias_node is not None:
        read = res.strings(alias_node, mod)
        if read is None:
            res.problems.append(f"{mod.rel}:{stmt.lineno}: the aliases of {flag} are not read statically")
        aliases = read or []
    inner = _unwrap_optional(type_node)
    choices, note = _choices(_kw(arg, "choices") if arg is not None else None, mod, res)
    literal = _literal_values(inner)
    if choices is None and note is None and literal is not None:
        choices = literal
    action = _kw(arg, "action") if arg is not None else None
    is_switch = isinstance(inner, ast.Name) and inner.id == "bool" and action is None
    if action is not None and ("StoreTrue" in ast.unparse(action) or _negatable(action)):
        is_switch = True
    if _negatable(action):
        aliases += _negations([flag, *aliases])
    return Flag(flag, aliases, "bool" if is_switch else "value", choices, note, mod.rel, stmt.lineno, "field")


def _input_namespaces(server_args: _Module | None) -> set[str] | None:
    """The class names listed in server_args.py's _INPUT_NAMESPACES (None when there is no such list)."""
    if server_args is None:
        return None
    node = server_args.lists.get("_INPUT_NAMESPACES")
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    return {e.id for e in node.elts if isinstance(e, ast.Name)}


def _has_ns_path(cls: ast.ClassDef) -> bool:
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_NS_PATH" for t in stmt.targets):
            return True
    return False


def scan_flags(tree: ReleaseTree) -> FlagScan:
    """Every flag the release declares. Raises TreeError when server_args.py is missing or unreadable."""
    out = FlagScan()
    sources = flag_sources(tree)
    if SERVER_ARGS not in sources:
        raise TreeError(f"{tree.label}: no {SERVER_ARGS}")
    modules: dict[str, _Module] = {}
    for rel in sources:
        try:
            modules[rel] = _parse(tree, rel)
        except TreeError as exc:
            if rel == SERVER_ARGS:
                raise
            out.problems.append(str(exc))
    res = _Resolver(tree, modules, out.problems)
    server_args = modules.get(SERVER_ARGS)
    namespaces = _input_namespaces(server_args)

    def add(flag: Flag | None) -> None:
        if flag is not None and flag.flag not in out.flags:
            out.flags[flag.flag] = flag

    for rel, mod in list(modules.items()):
        for cls in (n for n in mod.tree.body if isinstance(n, ast.ClassDef)):
            wanted = (rel == SERVER_ARGS and cls.name == "ServerArgs") or (
                rel.startswith(ARG_GROUPS + "fields/")
                and _has_ns_path(cls)
                and (namespaces is None or cls.name in namespaces)
            )
            if not wanted:
                continue
            for stmt in cls.body:
                if isinstance(stmt, ast.AnnAssign):
                    add(_from_field(stmt, mod, res))
            for fn in cls.body:
                if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name == "add_cli_args":
                    res.local = {
                        t.id: node.value
                        for node in ast.walk(fn)
                        if isinstance(node, ast.Assign)
                        for t in node.targets
                        if isinstance(t, ast.Name)
                    }
                    for node in ast.walk(fn):
                        if (
                            isinstance(node, ast.Call)
                            and isinstance(node.func, ast.Attribute)
                            and node.func.attr == "add_argument"
                        ):
                            add(_from_add_argument(node, mod, res))
                    res.local = {}
    out.files = sorted(modules)
    return out
