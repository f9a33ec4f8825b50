"""launch.json release_choices against the real SGLang wheels: for each choice flag launch.json lists, the choices
each release's parser offers, read from the wheel's argument sources (server_args.py, arg_groups/**.py) by
walking their syntax trees: `parser.add_argument("--flag", ..., choices=X)` up to 0.5.13, and from 0.5.14 the
dataclass fields `name: A[type, Arg(..., choices=X)]` whose command-line name is `--name-with-dashes` (or
`cli_name`); X a literal list/set or a module-level name bound to one (concatenations, list()/set() followed).
Each flag's spec must name, for every release 0.5.1-0.5.23 that gives the flag choices, exactly that list; a
release whose parser takes the flag without choices (--speculative-algorithm from 0.5.12: any name a plugin
registers) or lacks it must have no run. The default run reads a few wheels; STACKCHECK_REGISTRY_ALL=1 all."""

from __future__ import annotations

import ast
from typing import Any

import pytest
from registry_wheels import fetch_wheel, is_argument_source, read_texts, run_all

ALL = ["0.5.1", "0.5.1.post3", *(f"0.5.{n}" for n in range(2, 24))]
DEFAULT = ["0.5.1", "0.5.5", "0.5.9", "0.5.12", "0.5.17", "0.5.23"]

#: the flags this module checks (the attention and MoE lists have registry tests of their own)
FLAGS = [
    "--quantization",
    "--sampling-backend",
    "--speculative-algorithm",
    "--fp8-gemm-backend",
    "--nsa-prefill-backend",
    "--nsa-decode-backend",
    "--dsa-prefill-backend",
    "--dsa-decode-backend",
    "--kv-cache-dtype",
    "--moe-runner-backend",
]


def _values(node: ast.expr, names: dict[str, ast.expr], depth: int = 0) -> list[str] | None:
    """The strings a choices expression evaluates to (a set's sorted), or None when it is not a plain table."""
    if depth > 20:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        out: list[str] = []
        for elt in node.elts:
            got = _values(elt.value if isinstance(elt, ast.Starred) else elt, names, depth + 1)
            if got is None:
                return None
            out += got
        return sorted(out) if isinstance(node, ast.Set) else out
    if isinstance(node, ast.Name) and node.id in names:
        return _values(names[node.id], names, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _values(node.left, names, depth + 1), _values(node.right, names, depth + 1)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1:
        inner = _values(node.args[0], names, depth + 1)
        if node.func.id in ("set", "frozenset") and inner is not None:
            return sorted(inner)
        if node.func.id in ("list", "tuple"):
            return inner
    return None


def parser_choices(version: str) -> dict[str, list[str] | None]:
    """Each flag of FLAGS the release's parser declares: its choices (None: declared without choices)."""
    texts = read_texts(fetch_wheel("sglang", version), is_argument_source)
    trees = [ast.parse(text) for _, text in sorted(texts.items())]
    names: dict[str, ast.expr] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                names.setdefault(node.targets[0].id, node.value)
    found: dict[str, list[str] | None] = {}
    for tree in trees:
        for node in ast.walk(tree):
            flags: list[str] = []
            choices: ast.expr | None = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                choices = next((k.value for k in node.keywords if k.arg == "choices"), None)
            elif (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(node.annotation, ast.Subscript)
                and isinstance(node.annotation.slice, ast.Tuple)
            ):
                hidden = False
                for meta in node.annotation.slice.elts[1:]:
                    if isinstance(meta, ast.Call) and isinstance(meta.func, ast.Name) and meta.func.id == "Arg":
                        kw = {k.arg: k.value for k in meta.keywords}
                        if "no_cli" in kw:  # no command-line flag (declared by add_argument elsewhere)
                            hidden = True
                            break
                        cli = kw.get("cli_name")
                        name = cli.value if isinstance(cli, ast.Constant) else "--" + node.target.id.replace("_", "-")
                        flags = [str(name)]
                        choices = kw.get("choices")
                if not flags and not hidden and node.annotation.slice.elts[1:]:  # a bare help string: no choices
                    flags = ["--" + node.target.id.replace("_", "-")]
            for flag in set(flags) & set(FLAGS):
                if choices is None:
                    found[flag] = None
                    continue
                got = _values(choices, names)
                assert got is not None, (version, flag, ast.unparse(choices))
                found[flag] = got
    return found


def _run(spec: dict[str, Any], version: str) -> dict[str, Any] | None:
    from stackcheck.facts.versions import version_in

    return next((r for r in spec["runs"] if version_in(version, r["versions"]) is True), None)


@pytest.mark.registry
@pytest.mark.parametrize("version", ALL if run_all() else DEFAULT)
def test_each_flags_choices_are_the_data(version: str) -> None:
    from stackcheck.knowledge.loader import load

    specs = load([], env={}).launch["release_choices"]
    read = parser_choices(version)
    for flag in FLAGS:
        spec = next(s for s in specs if flag in s["flags"])
        run = _run(dict(spec), version)
        offered = read.get(flag)
        if offered is None:
            assert run is None, (version, flag, "the parser offers no choices")
            continue
        assert run is not None, (version, flag, offered)
        want = sorted(offered) if flag == "--sampling-backend" else offered
        assert run["choices"] == want, (version, flag)
