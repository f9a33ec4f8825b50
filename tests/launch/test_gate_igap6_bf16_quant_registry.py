"""preflight.json model.flag_checkpoint_conflicts rows quark-*, modelslim-* and qoq-unquantized-checkpoint against
the real sglang wheels: in each release a row covers, the method is registered for CUDA with the config class the
row describes, the class names the config files the row says (none for QuarkConfig), the loader builds a class with
no config file names with no arguments, and that constructor fails as the row says; outside the rows' ranges the
method is absent or mapped otherwise. A few releases by default; 0.5.5-0.5.23 with STACKCHECK_REGISTRY_ALL=1."""

from __future__ import annotations

import ast

import pytest
from registry_wheels import fetch_wheel, read_texts, run_all

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import load

ALL = [f"0.5.{n}" for n in range(5, 24)]
DEFAULT = ["0.5.5", "0.5.7", "0.5.9", "0.5.13", "0.5.16", "0.5.23"]
QUANT = "sglang/srt/layers/quantization/"
LOADER = "sglang/srt/model_loader/weight_utils.py"


def _sources(name: str) -> bool:
    return (name.startswith(QUANT) and name.endswith(".py")) or name == LOADER


def _registered(init: str) -> dict[str, tuple[str, str]]:
    """method -> (class name, the test of the `if` it is registered under, '' at module level), last one wins."""
    found: dict[str, tuple[str, str]] = {}

    def visit(body: list[ast.stmt], guard: str) -> None:
        for stmt in body:
            if isinstance(stmt, ast.If):
                visit(stmt.body, ast.unparse(stmt.test))
                visit(stmt.orelse, "else " + ast.unparse(stmt.test))
                continue
            for node in ast.walk(stmt):
                if isinstance(node, ast.Dict):
                    for key, value in zip(node.keys, node.values, strict=True):
                        if isinstance(key, ast.Constant) and isinstance(value, ast.Name):
                            if guard:  # the first platform's entry (CUDA's, where it has one)
                                found.setdefault(str(key.value), (value.id, guard))
                            else:
                                found[str(key.value)] = (value.id, guard)

    visit(ast.parse(init).body, "")
    return found


def _class(texts: dict[str, str], name: str) -> ast.ClassDef:
    for path, text in texts.items():
        if path.startswith(QUANT) and f"class {name}(" in text:
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.ClassDef) and node.name == name:
                    return node
    raise AssertionError(f"class {name} not found")


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef:
    hits = [b for b in cls.body if isinstance(b, ast.FunctionDef) and b.name == name]
    assert hits, (cls.name, name)
    return hits[0]


def _config_filenames(cls: ast.ClassDef) -> list[str]:
    """The string constants in get_config_filenames (a literal list, or one assigned to a name and returned)."""
    fn = _method(cls, "get_config_filenames")
    return [n.value for n in ast.walk(fn) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and n.value.endswith(".json")]  # fmt: skip


def _rows(flag: str, version: str) -> list[str]:
    conflicts = load([], env={}).preflight["model"]["flag_checkpoint_conflicts"]
    return [r["id"] for r in conflicts if r["flag"] == flag and version_in(version, r["versions"]) is True]


@pytest.mark.registry
@pytest.mark.parametrize("version", ALL if run_all() else DEFAULT)
def test_the_bf16_checkpoint_rows_are_the_wheels(version: str) -> None:
    texts = read_texts(fetch_wheel("sglang", version), _sources)
    registered = _registered(texts[QUANT + "__init__.py"])
    loader = texts[LOADER]
    assert "return quant_cls()" in loader and 'raise ValueError(f"Cannot find the config file for' in loader

    # quark
    cls_name, guard = registered.get("quark", ("", ""))
    rows = _rows("quark", version)
    if cls_name == "QuarkConfig" and guard == "":
        quark = _class(texts, "QuarkConfig")
        assert _config_filenames(quark) == [], version
        init = _method(quark, "__init__")
        required = [a.arg for a in init.args.args[1 : len(init.args.args) - len(init.args.defaults)]]
        if "quant_config" in required:
            assert rows == ["quark-unquantized-checkpoint-no-config"], version
        else:
            assert "Either quant_config or online_scheme must be provided" in ast.unparse(init), version
            assert rows == ["quark-unquantized-checkpoint"], version
    else:  # 0.5.5: Mxfp4Config on CUDA, not judged by these rows
        assert (cls_name, rows) == ("Mxfp4Config", []), (version, cls_name, guard)

    # modelslim
    cls_name, guard = registered.get("modelslim", ("", ""))
    rows = _rows("modelslim", version)
    if cls_name and guard == "":
        assert _config_filenames(_class(texts, cls_name)) == ["quant_model_description.json"], version
        assert rows == ["modelslim-unquantized-checkpoint"], version
    elif cls_name:
        assert guard == "is_npu()" and rows == ["modelslim-on-cuda"], (version, guard)
    else:
        assert rows == [], version

    # qoq
    cls_name, guard = registered.get("qoq", ("", ""))
    rows = _rows("qoq", version)
    if cls_name:
        assert guard == "" and _config_filenames(_class(texts, cls_name)) == ["quant_config.json",
                                                                              "quantize_config.json"]  # fmt: skip
        assert rows == ["qoq-unquantized-checkpoint"], version
    else:
        assert rows == [], version
