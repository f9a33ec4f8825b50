"""Write launch.json's `release_flags`: every command-line flag each SGLang release declares, read from the
release wheels with stackcheck's own static reader (stackcheck/derive/flags.py: `add_argument` calls and
annotated `Arg` fields, aliases and argparse's `--no-` forms included; nothing imported or run).

    pip download --no-deps --only-binary=:all: --python-version 3.12 sglang==0.5.9 -d wheels/   # each release
    python3 tools/sglang_flags.py wheels/sglang-*.whl              # print the section, and what changed
    python3 tools/sglang_flags.py --write wheels/sglang-*.whl      # replace it in manifests/launch.json
    python3 tools/sglang_flags.py --date 2026-12-02 --write ...    # the day the wheels were downloaded

Every wheel must scan without problems (exit 1 otherwise): a flag the reader cannot see would make the gate
refuse a launch SGLang accepts. Each flag is stored as runs of consecutive releases of the `releases` list
("0.5.1-0.5.9", or one release "0.5.4"), so a release missing from the list is never taken as covered.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ast  # noqa: E402

from packaging.version import Version  # noqa: E402

from stackcheck.derive.flags import Flag, scan_flags  # noqa: E402
from stackcheck.derive.tree import WheelTree  # noqa: E402
from stackcheck.pyast import parse  # noqa: E402

LAUNCH = ROOT / "manifests" / "launch.json"


def release_of(wheel: Path) -> str:
    parts = wheel.name.split("-")
    if len(parts) < 3 or parts[0] != "sglang":
        raise SystemExit(f"{wheel}: not an sglang wheel (sglang-VERSION-...whl)")
    return parts[1]


LAUNCHER = "sglang/launch_server.py"


def declared(wheel: Path) -> tuple[set[str], list[str], bool]:
    """The release's flags, the files they were read from, and whether its launcher loads plugins (entry
    points) before it parses the command line: a plugin may then add flags of its own."""
    tree = WheelTree(wheel)
    try:
        scan = scan_flags(tree)
        launcher = tree.read_bytes(LAUNCHER).decode("utf-8", "replace") if tree.exists(LAUNCHER) else ""
    finally:
        tree.close()
    if scan.problems:
        raise SystemExit(f"{wheel}: the flags are not all readable: {'; '.join(scan.problems)}")
    plugins = "load_plugins()" in launcher and launcher.index("load_plugins()") < launcher.rfind("prepare_server_args(")
    return {name for f in scan.flags.values() for name in [f.flag, *f.aliases]}, scan.files, plugins


#: argparse actions (given by name) that take no value: nargs=0
NO_VALUE = {"store_true", "store_false", "store_const", "append_const", "count", "help", "version"}


def _kw(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _name(node: ast.expr) -> str:
    """A name or an attribute's last part (`Arg`, `argparse.BooleanOptionalAction` -> its `attr`); else ""."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _nargs_text(node: ast.expr | None) -> str:
    """A `nargs=` value as argparse reads it: absent or None is one value ("1"), else the constant ("0", "?", "*",
    "+", "2"); an expression not read statically is "unknown"."""
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return "1"
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)) and not isinstance(node.value, bool):
        return str(node.value)
    return "unknown"


def _class_nargs(classes: dict[str, ast.ClassDef], name: str) -> str:
    """The nargs a custom argparse.Action class of the release gives when the declaration names none: its
    __init__'s `nargs` default (SGLang's DeprecatedAction: 0), else one value; "unknown" where the class is not
    found in the release's files."""
    cls = classes.get(name)
    if cls is None:
        return "unknown"
    for fn in cls.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
            args = fn.args
            positional = [*args.posonlyargs, *args.args]
            defaults = dict(
                zip([a.arg for a in positional[len(positional) - len(args.defaults) :]], args.defaults, strict=True)
            )
            defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None})
            if "nargs" in defaults:
                return _nargs_text(defaults["nargs"])
    return "1"


def _action_nargs(action: ast.expr | None, nargs: ast.expr | None, classes: dict[str, ast.ClassDef]) -> str:
    if nargs is not None:
        return _nargs_text(nargs)
    if action is None:
        return "1"
    if isinstance(action, ast.Constant) and isinstance(action.value, str):
        return "0" if action.value in NO_VALUE else "1" if action.value in ("store", "append", "extend") else "unknown"
    text = ast.unparse(action)
    if "BooleanOptionalAction" in text:
        return "0"
    name = _name(action)
    return _class_nargs(classes, name) if name else "unknown"


def _field_nargs(stmt: ast.AnnAssign, flag: Flag, classes: dict[str, ast.ClassDef]) -> str:
    """As sglang/srt/arg_groups/arg_utils.py add_cli_args_from_dataclass builds the argument of an annotated field
    (0.5.14 on): Arg(action=...) that action (with its action_kwargs' nargs); a bool a switch; Literal[...] one
    value; list[X] Arg(nargs) or '+' (unless Arg(type_parser) reads the whole value); else Arg(nargs) or one."""
    ann = stmt.annotation
    metas = ann.slice.elts[1:] if isinstance(ann, ast.Subscript) and isinstance(ann.slice, ast.Tuple) else []
    arg = next((m for m in metas if isinstance(m, ast.Call) and getattr(m.func, "id", "") == "Arg"), None)
    if arg is not None and _kw(arg, "action") is not None:
        extra = _kw(arg, "action_kwargs")
        given = None
        if isinstance(extra, ast.Dict):
            given = next(
                (
                    v
                    for k, v in zip(extra.keys, extra.values, strict=True)
                    if isinstance(k, ast.Constant) and k.value == "nargs"
                ),
                None,
            )
        elif extra is not None:
            return "unknown"
        return _action_nargs(_kw(arg, "action"), given, classes)
    if flag.kind == "bool":
        return "0"
    nargs = _kw(arg, "nargs") if arg is not None else None
    inner = ann.slice.elts[0] if isinstance(ann, ast.Subscript) and isinstance(ann.slice, ast.Tuple) else None
    text = ast.unparse(inner) if inner is not None else ""
    if "Literal[" in text:
        return "1"
    listed = text.startswith(("list[", "List[", "Optional[list[", "Optional[List[")) or (
        "list[" in text and "| None" in text
    )
    if listed and (arg is None or _kw(arg, "type_parser") is None):
        return "+" if nargs is None else _nargs_text(nargs)
    return _nargs_text(nargs) if nargs is not None else "1"


def arities(wheel: Path) -> dict[str, str]:
    """How many values each flag of the release takes, as argparse reads its nargs ("0" a switch, "1" one value,
    "?", "*", "+", a number; "unknown" where it is not read statically), by every name of the flag."""
    tree = WheelTree(wheel)
    try:
        scan = scan_flags(tree)
        extra = [n for n in tree.names_under("sglang/srt/arg_groups/") if n.endswith(".py")]  # the action classes
        parsed = {rel: parse(tree.read_bytes(rel).decode("utf-8"), rel) for rel in dict.fromkeys([*scan.files, *extra])}
    finally:
        tree.close()
    classes = {n.name: n for module in parsed.values() for n in ast.walk(module) if isinstance(n, ast.ClassDef)}
    out: dict[str, str] = {}
    for flag in scan.flags.values():
        found = "unknown"
        for node in ast.walk(parsed[flag.file]):
            if getattr(node, "lineno", None) != flag.line:
                continue
            if (
                flag.how == "add_argument"
                and isinstance(node, ast.Call)
                and getattr(node.func, "attr", "") == "add_argument"
            ):
                found = _action_nargs(_kw(node, "action"), _kw(node, "nargs"), classes)
                break
            if flag.how == "field" and isinstance(node, ast.AnnAssign):
                found = _field_nargs(node, flag, classes)
                break
        for name in [flag.flag, *flag.aliases]:
            out[name] = found
    return out


def runs(present: list[bool], releases: list[str]) -> list[str]:
    out: list[str] = []
    start: int | None = None
    for i, here in enumerate([*present, False]):
        if here and start is None:
            start = i
        elif not here and start is not None:
            last = i - 1
            out.append(releases[start] if start == last else f"{releases[start]}-{releases[last]}")
            start = None
    return out


def section(wheels: list[Path], day: str) -> dict[str, object]:
    by_release: dict[str, set[str]] = {}
    files: set[str] = set()
    with_plugins: set[str] = set()
    takes: dict[str, dict[str, str]] = {}
    for wheel in wheels:
        names, read, plugins = declared(wheel)
        by_release[release_of(wheel)] = names
        takes[release_of(wheel)] = arities(wheel)
        files.update(read)
        if plugins:
            with_plugins.add(release_of(wheel))
    releases = sorted(by_release, key=Version)
    every = sorted(set().union(*by_release.values()))
    flags = {flag: runs([flag in by_release[r] for r in releases], releases) for flag in every}
    nargs: dict[str, list[dict[str, object]]] = {}
    for flag in every:
        kinds = sorted({takes[r].get(flag, "1") for r in releases if flag in by_release[r]} - {"1"})
        nargs[flag] = [
            {
                "nargs": k,
                "releases": runs([takes[r].get(flag, "1") == k and flag in by_release[r] for r in releases], releases),
            }
            for k in kinds
        ]
    nargs = {f: v for f, v in nargs.items() if v}
    arg_files = sorted(f for f in files if f != "sglang/srt/server_args.py")
    return {
        "description": (
            "Every flag (and alias, and argparse's --no- form of a BooleanOptionalAction) that each SGLang "
            "release's server parser declares, as runs of consecutive releases of `releases`. SGLang builds the "
            "parser of `python -m sglang.launch_server` with argparse's defaults (unique prefixes allowed) and "
            "parse_args: a flag it does not declare, or a prefix of several, ends the launch with exit status 2. "
            "Generated by tools/sglang_flags.py; a release not in `releases` is not covered."
        ),
        "releases": releases,
        "builtin": ["--help"],
        "source": [
            {
                "title": f"sglang {releases[0]}-{releases[-1]} wheels ({len(releases)} releases: PyPI, pip download "
                f"--no-deps, {day}): sglang/srt/server_args.py (ServerArgs.add_cli_args and its fields)"
                + (f" and sglang/srt/arg_groups/fields/ ({len(arg_files)} files in the newest)" if arg_files else "")
                + ", read with stackcheck/derive/flags.py; prepare_server_args builds argparse.ArgumentParser() "
                "and calls parse_args (0.5.9 and 0.5.23 read)",
                "url": "https://pypi.org/project/sglang/#history",
            }
        ],
        "flags": flags,
        "nargs": nargs,
        "plugins": runs([r in with_plugins for r in releases], releases),
        "plugins_source": [
            {
                "title": f"sglang {releases[0]}-{releases[-1]} wheels (PyPI, pip download --no-deps, {day}): "
                "sglang/launch_server.py calls sglang.srt.plugins.load_plugins() (entry points of the groups "
                "sglang.srt.plugins and sglang.srt.platforms) before prepare_server_args() in these releases; a "
                "general plugin may hook the server arguments and add flags",
                "url": "https://pypi.org/project/sglang/#history",
            }
        ],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("wheels", nargs="+", type=Path)
    ap.add_argument("--write", action="store_true", help="replace release_flags in manifests/launch.json")
    ap.add_argument("--date", default=date.today().isoformat(), help="the day the wheels were downloaded")
    args = ap.parse_args(argv)
    new = section(args.wheels, args.date)
    doc = json.loads(LAUNCH.read_text(encoding="utf-8"))
    old = doc.get("release_flags") or {}
    new_flags = new["flags"]
    new_releases = new["releases"]
    assert isinstance(new_flags, dict) and isinstance(new_releases, list)  # section's shape
    changed = sorted(
        f for f in set(old.get("flags") or {}) | set(new_flags) if (old.get("flags") or {}).get(f) != new_flags.get(f)
    )
    print(
        f"{len(new_releases)} releases, {len(new_flags)} flags; {len(changed)} differ from launch.json",
        file=sys.stderr,
    )
    if not args.write:
        json.dump(new, sys.stdout, indent=1)
        print()
        return 0
    doc["release_flags"] = new
    LAUNCH.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
