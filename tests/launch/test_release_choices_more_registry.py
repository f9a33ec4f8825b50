"""launch.json release_choices with `every_value` against the real SGLang wheels: every `choices=` flag of the
releases' parsers that launch.json lists without choices (--tool-call-parser, --reasoning-parser, --load-format,
--grammar-backend, --disaggregation-*, --lora-backend, ...). Each wheel's argument sources (server_args.py,
arg_groups/**.py) are walked: `parser.add_argument("--flag", ..., choices=X)`, and from 0.5.14 the dataclass fields
`name: A[T, Arg(...)]` whose builder gives the flag `Arg(choices=X)` or, without them, the values of a `Literal[...]`
T (a field with `no_cli` or a custom `action` gets no choices from it). X is a literal list, a module-level name
bound to one (concatenations and list()/set() followed), or one of the two parser registries: the keys of
FunctionCallParser.ToolCallParserEnum / ReasoningParser.DetectorMap (read where the class defines the dict; from
0.5.21 server_args falls back to a names list, which must hold the same names). For each such spec, every release
0.5.1-0.5.23 whose parser gives the flag choices must have a run with exactly those values (as a set), and one
whose parser gives none must have no run. A spec that says no plugin extends its list (`plugins_extend` false)
must read neither a registry nor a list an add_*_choices hook extends in a release that loads plugins before it
parses, and one that says a plugin may (the default) must read one there, where the release has such hooks.
Default: a few wheels; STACKCHECK_REGISTRY_ALL=1 all of them."""

from __future__ import annotations

import ast
from typing import Any

import pytest
from registry_wheels import fetch_wheel, is_argument_source, read_texts, run_all

ALL = ["0.5.1", "0.5.1.post3", *(f"0.5.{n}" for n in range(2, 24))]
DEFAULT = ["0.5.1", "0.5.6", "0.5.11", "0.5.14", "0.5.19", "0.5.23"]

REGISTRIES = {"ToolCallParserEnum": "TOOL_CALL_PARSER_NAMES", "DetectorMap": "REASONING_PARSER_NAMES"}


def _is_registry_source(name: str) -> bool:
    return name.endswith(
        (
            "function_call_parser.py",
            "reasoning_parser.py",
            "function_call/parser_names.py",
            "parser/reasoning_parser_names.py",
        )
    ) and name.startswith("sglang/srt/")


def _is_lora_source(name: str) -> bool:
    return name in ("sglang/srt/utils.py", "sglang/srt/utils/common.py")


def _is_constants_source(name: str) -> bool:
    return name == "sglang/srt/model_executor/cuda_graph_config.py"


def _in_class(cls: str, node: ast.expr) -> ast.expr:
    """`node` with each bare name read as the class's own (`ALL = (FULL, ...)` inside `class Backend`)."""

    class Qualify(ast.NodeTransformer):
        def visit_Name(self, name: ast.Name) -> ast.expr:
            return ast.copy_location(ast.Attribute(ast.Name(cls, ast.Load()), name.id, ast.Load()), name)

    return Qualify().visit(ast.parse(ast.unparse(node), mode="eval").body)  # type: ignore[no-any-return]


class Reading:
    """One wheel's argument sources and parser registries."""

    def __init__(self, version: str) -> None:
        wheel = fetch_wheel("sglang", version)
        self.trees = [ast.parse(t) for _, t in sorted(read_texts(wheel, is_argument_source).items())]
        self.names: dict[str, ast.expr] = {}
        self.hooked: set[str] = set()  # the module lists an add_*_choices function extends
        for tree in self.trees:
            for node in tree.body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    self.names.setdefault(node.targets[0].id, node.value)
                if (
                    isinstance(node, ast.FunctionDef)
                    and node.name.startswith("add_")
                    and node.name.endswith("_choices")
                ):
                    for sub in ast.walk(node):
                        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name):
                            self.hooked.add(sub.value.id)
        # the class constants a choices expression names (`choices=Backend.ALL`, --cuda-graph-backend-*, 0.5.14+):
        # "Class.NAME" -> its value, the names in it read in the class first
        for text in read_texts(wheel, _is_constants_source).values():
            for node in ast.parse(text).body:
                if isinstance(node, ast.ClassDef):
                    for line in node.body:
                        if isinstance(line, ast.Assign) and len(line.targets) == 1:
                            const = line.targets[0]
                            if isinstance(const, ast.Name):
                                self.names[f"{node.name}.{const.id}"] = _in_class(node.name, line.value)
        # the module-level lists of the LoRA target modules (--lora-target-modules' choices: utils.py up to 0.5.2,
        # utils/common.py from 0.5.3), which server_args imports
        for text in read_texts(wheel, _is_lora_source).values():
            for node in ast.parse(text).body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    if node.targets[0].id in ("SUPPORTED_LORA_TARGET_MODULES", "LORA_TARGET_ALL_MODULES"):
                        self.names.setdefault(node.targets[0].id, node.value)
        self.registry: dict[str, list[str]] = {}
        for text in read_texts(wheel, _is_registry_source).values():
            for item in ast.walk(ast.parse(text)):
                target: ast.expr | None = None
                if isinstance(item, ast.AnnAssign):
                    target = item.target
                elif isinstance(item, ast.Assign) and len(item.targets) == 1:
                    target = item.targets[0]
                value = getattr(item, "value", None)
                if not isinstance(target, ast.Name) or value is None:
                    continue
                if target.id in REGISTRIES and isinstance(value, ast.Dict):
                    keys = [k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
                    assert len(keys) == len(value.keys), (version, target.id)
                    self.registry[target.id] = keys
                if target.id in REGISTRIES.values() and isinstance(value, ast.List):
                    names = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                    assert len(names) == len(value.elts), (version, target.id)
                    self.registry[target.id] = names
        for attr, fallback in REGISTRIES.items():  # 0.5.21 on: the names list server_args reads must match
            if fallback in self.registry:
                assert sorted(self.registry[fallback]) == sorted(self.registry[attr]), (version, fallback)

    def values(self, node: ast.expr, used: set[str], depth: int = 0) -> list[str] | None:
        """The strings a choices expression evaluates to, or None when it is not a plain table; `used` gets the
        module lists and registries it reads."""
        if depth > 20:
            return None
        if isinstance(node, ast.Constant):
            if node.value is None and depth:
                return []  # Literal[None, ...]: no command-line string equals None
            if isinstance(node.value, int) and not isinstance(node.value, bool):  # a type=int flag's (igap12)
                return [str(node.value)]
            return [node.value] if isinstance(node.value, str) else None
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            out: list[str] = []
            for elt in node.elts:
                got = self.values(elt.value if isinstance(elt, ast.Starred) else elt, used, depth + 1)
                if got is None:
                    return None
                out += got
            return out
        if isinstance(node, ast.Name):
            registry = {"tool_call_parser_choices": "ToolCallParserEnum", "reasoning_parser_choices": "DetectorMap"}
            if node.id in registry:
                used.add(registry[node.id])
                return list(self.registry[registry[node.id]])
            if node.id in self.names:
                used.add(node.id)
                return self.values(self.names[node.id], used, depth + 1)
            return None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            key = f"{node.value.id}.{node.attr}"
            if key in self.names:
                used.add(key)
                return self.values(self.names[key], used, depth + 1)
            return None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.values(node.left, used, depth + 1), self.values(node.right, used, depth + 1)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) <= 1:
            if node.func.id in ("_tool_call_parser_choices", "_reasoning_parser_choices"):
                attr = "ToolCallParserEnum" if "tool" in node.func.id else "DetectorMap"
                used.add(attr)
                return list(self.registry[attr])
            if node.func.id in ("list", "set", "tuple", "sorted") and node.args:
                return self.values(node.args[0], used, depth + 1)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "keys":
            attr = ast.unparse(node.func.value).rsplit(".", 1)[-1]
            if attr in REGISTRIES:
                used.add(attr)
                return list(self.registry[attr])
        return None

    def choices(self, wanted: set[str]) -> dict[str, tuple[list[str] | None, set[str]]]:
        """Each flag of `wanted` the parser declares: its choices (None: declared without) and what they read."""
        found: dict[str, tuple[list[str] | None, set[str]]] = {}
        for tree in self.trees:
            for node in ast.walk(tree):
                flags, choices = self._declared(node)
                for flag in set(flags) & wanted:
                    used: set[str] = set()
                    got = None if choices is None else self.values(choices, used)
                    assert choices is None or got is not None, (flag, ast.unparse(choices))
                    found[flag] = (got, used)
        return found

    @staticmethod
    def _declared(node: ast.AST) -> tuple[list[str], ast.expr | None]:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            return flags, next((k.value for k in node.keywords if k.arg == "choices"), None)
        if not (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(node.annotation, ast.Subscript)
            and isinstance(node.annotation.slice, ast.Tuple)
            and isinstance(node.annotation.value, ast.Name)
            and node.annotation.value.id in ("A", "Annotated")
        ):
            return [], None
        base, *meta = node.annotation.slice.elts
        arg = next(
            (m for m in meta if isinstance(m, ast.Call) and isinstance(m.func, ast.Name) and m.func.id == "Arg"), None
        )
        kw = {k.arg: k.value for k in arg.keywords} if arg is not None else {}
        if "no_cli" in kw:
            return [], None
        cli = kw.get("cli_name")
        flag = cli.value if isinstance(cli, ast.Constant) else "--" + node.target.id.replace("_", "-")
        if "action" in kw:  # the builder's custom-action branch passes no choices
            return [str(flag)], None
        choices = kw.get("choices")
        literal = _literal(base)
        return [str(flag)], choices if choices is not None else literal


def _literal(node: ast.expr) -> ast.expr | None:
    """The values of `Literal[...]`, `Optional[Literal[...]]` or `Literal[...] | None`, as a list expression."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        if node.value.id == "Literal":
            return ast.List(elts=list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice])
        if node.value.id == "Optional":
            return _literal(node.slice)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _literal(node.left) or _literal(node.right)
    return None


def _launch() -> dict[str, Any]:
    from stackcheck.knowledge.loader import load

    return dict(load([], env={}).launch)


def _specs() -> list[dict[str, Any]]:
    return [dict(s) for s in _launch()["release_choices"] if s.get("every_value")]


def _loads_plugins(version: str) -> bool:
    """Whether the release's launcher loads plugins before it parses (launch.json release_flags `plugins`)."""
    from stackcheck.launch.gate import _in_runs

    table = _launch()["release_flags"]
    return _in_runs(version, [str(r) for r in table["releases"]], table["plugins"])


def _run(spec: dict[str, Any], version: str) -> dict[str, Any] | None:
    from stackcheck.facts.versions import version_in

    return next((r for r in spec["runs"] if version_in(version, r["versions"]) is True), None)


def test_the_specs_cover_the_often_passed_flags() -> None:
    flags = {f for s in _specs() for f in s["flags"]}
    for flag in ("--tool-call-parser", "--reasoning-parser", "--load-format", "--grammar-backend", "--lora-backend"):
        assert flag in flags
    assert {"--disaggregation-mode", "--disaggregation-transfer-backend", "--dtype"} <= flags


@pytest.mark.registry
@pytest.mark.parametrize("version", ALL if run_all() else DEFAULT)
def test_each_flags_choices_are_the_data(version: str) -> None:
    specs = _specs()
    reading = Reading(version)
    read = reading.choices({f for s in specs for f in s["flags"]})
    plugins = _loads_plugins(version)
    for flag in sorted({f for s in specs for f in s["flags"]}):
        # a flag may have two specs (--linear-attn-*: before and after its hook): at most one run holds the release
        hits = [(s, r) for s in specs if flag in s["flags"] for r in [_run(s, version)] if r is not None]
        assert len(hits) <= 1, (version, flag)
        offered, used = read.get(flag, (None, set()))
        if offered is None:
            assert not hits, (version, flag, "the parser offers no choices")
            continue
        assert hits, (version, flag, offered)
        spec, run = hits[0]
        assert sorted(set(run["choices"])) == sorted(set(offered)), (version, flag)
        extended = used & (reading.hooked | set(REGISTRIES))
        if plugins and spec.get("plugins_extend") is False:
            assert not extended, (version, flag, used)
        if plugins and spec.get("plugins_extend", True) and reading.hooked:  # 0.5.19 on: no hooks, lists stay
            assert extended, (version, flag, used)
