"""Write launch.json's `release_types`: each flag that an SGLang release's server parser converts with argparse
`type=int` or `type=float`, read from the release wheels (nothing imported or run).

    python3 tools/sglang_types.py wheels/sglang-*.whl              # print the section
    python3 tools/sglang_types.py --write wheels/sglang-*.whl      # replace it in manifests/launch.json
    python3 tools/sglang_types.py --date 2026-12-04 --write ...    # the day the wheels were downloaded

The flags are those stackcheck/derive/flags.py finds (the same reader as tools/sglang_flags.py); for each, the
declaration it was found at is read again:
- `parser.add_argument(..., type=int)` (or `float`): that type, with its `nargs`;
- an annotated field `name: A[T, Arg(...)]` (0.5.14 on), as sglang/srt/arg_groups/arg_utils.py
  add_cli_args_from_dataclass turns it into an argument: an `Arg(action=...)` takes no type; `Arg(type_parser=...)`
  its own parser (not recorded); otherwise Optional[X] / X | None is X, Literal[v, ...] takes the type of its first
  value, list[X] the type of X (nargs `Arg(nargs)` or '+'), and X is int or float through _infer_type_func.
Any other type (str, a function of SGLang's own) is left out: the gate judges only what int() and float() reject.
Each flag is stored as runs of consecutive releases (as release_flags), one entry per (type, nargs, names, file).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from packaging.version import Version  # noqa: E402

from stackcheck.derive.flags import Flag, scan_flags  # noqa: E402
from stackcheck.derive.tree import WheelTree  # noqa: E402
from stackcheck.pyast import parse  # noqa: E402
from tools.sglang_flags import _kw, _name, release_of, runs  # noqa: E402  (the flag table's own readers)

LAUNCH = ROOT / "manifests" / "launch.json"
TYPES = ("int", "float")


def _nargs(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)):
        return str(node.value)
    return None if node is None else "?expr"


def _optional_inner(node: ast.expr) -> ast.expr:
    """Optional[X] or X | None (one type besides None) -> X; anything else unchanged (a Union of two types is str)."""
    if isinstance(node, ast.Subscript) and _name(node.value) == "Optional":
        return node.slice
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = [s for s in (node.left, node.right) if not (isinstance(s, ast.Constant) and s.value is None)]
        if len(sides) == 1:
            return sides[0]
    return node


def _field_type(stmt: ast.AnnAssign) -> tuple[str, str | None] | None:
    ann = stmt.annotation
    if not (isinstance(ann, ast.Subscript) and isinstance(ann.slice, ast.Tuple) and len(ann.slice.elts) >= 2):
        return None
    inner, metas = ann.slice.elts[0], ann.slice.elts[1:]
    arg = next((m for m in metas if isinstance(m, ast.Call) and _name(m.func) == "Arg"), None)
    if arg is not None and (_kw(arg, "action") is not None or _kw(arg, "type_parser") is not None):
        return None
    nargs = _nargs(_kw(arg, "nargs")) if arg is not None else None
    inner = _optional_inner(inner)
    if isinstance(inner, ast.Subscript) and _name(inner.value) == "Literal":
        first = inner.slice.elts[0] if isinstance(inner.slice, ast.Tuple) else inner.slice
        value = first.value if isinstance(first, ast.Constant) else None
        kind = type(value).__name__ if not isinstance(value, bool) else "bool"
        return (kind, nargs) if kind in TYPES else None
    if isinstance(inner, ast.Subscript) and _name(inner.value) in ("list", "List"):
        elem = inner.slice
        return (_name(elem), nargs or "+") if _name(elem) in TYPES else None
    return (_name(inner), nargs) if _name(inner) in TYPES else None


def _argument_type(call: ast.Call) -> tuple[str, str | None] | None:
    kind = _kw(call, "type")
    if isinstance(kind, ast.Name) and kind.id in TYPES:
        return kind.id, _nargs(_kw(call, "nargs"))
    return None


def typed(wheel: Path) -> dict[str, dict[str, Any]]:
    """{flag: {type, nargs, names, file, line}} for the release's int and float flags."""
    tree = WheelTree(wheel)
    try:
        scan = scan_flags(tree)
        if scan.problems:
            raise SystemExit(f"{wheel}: the flags are not all readable: {'; '.join(scan.problems)}")
        parsed: dict[str, ast.Module] = {}
        out: dict[str, dict[str, Any]] = {}
        for flag in scan.flags.values():
            if flag.kind != "value":
                continue
            if flag.file not in parsed:
                parsed[flag.file] = parse(tree.read_bytes(flag.file), flag.file)
            found = _declaration(parsed[flag.file], flag)
            if found is None:
                continue
            kind, nargs = found
            names = sorted([flag.flag, *flag.aliases])
            out[flag.flag] = {"type": kind, "nargs": nargs, "names": names, "file": flag.file, "line": flag.line}
        return out
    finally:
        tree.close()


def _declaration(module: ast.Module, flag: Flag) -> tuple[str, str | None] | None:
    for node in ast.walk(module):
        if getattr(node, "lineno", None) != flag.line:
            continue
        if flag.how == "add_argument" and isinstance(node, ast.Call) and _name(node.func) == "add_argument":
            return _argument_type(node)
        if flag.how == "field" and isinstance(node, ast.AnnAssign):
            return _field_type(node)
    return None


def section(wheels: list[Path], day: str) -> dict[str, Any]:
    by_release = {release_of(w): typed(w) for w in wheels}
    releases = sorted(by_release, key=Version)
    flags: dict[str, list[dict[str, Any]]] = {}
    for flag in sorted({f for got in by_release.values() for f in got}):
        keys: dict[tuple[str, str | None, tuple[str, ...], str], list[bool]] = {}
        for i, release in enumerate(releases):
            got = by_release[release].get(flag)
            if got is None:
                continue
            key = (got["type"], got["nargs"], tuple(got["names"]), got["file"])
            keys.setdefault(key, [False] * len(releases))[i] = True
        entries = []
        for (kind, nargs, names, file), present in keys.items():
            entry: dict[str, Any] = {"type": kind, "releases": runs(present, releases), "file": file}
            if nargs is not None:
                entry["nargs"] = nargs
            if list(names) != [flag]:
                entry["names"] = list(names)
            entries.append(entry)
        flags[flag] = entries
    return {
        "description": (
            "Each flag that an SGLang release's server parser converts with argparse type=int or type=float (read "
            "from the wheels: add_argument(type=...) and, from 0.5.14, the annotated fields that "
            "arg_groups/arg_utils.py add_cli_args_from_dataclass types through _infer_type_func), as runs of "
            "consecutive releases of `releases`, with the file that declares it, its nargs and, where it has "
            "aliases, every name. argparse calls the type on each value and ends the launch with 'invalid int "
            "value' or 'invalid float value' (exit status 2) where it raises. Generated by tools/sglang_types.py; "
            "a release not in `releases` is not covered."
        ),
        "releases": releases,
        "source": [
            {
                "title": f"sglang {releases[0]}-{releases[-1]} wheels ({len(releases)} releases: PyPI, pip download "
                f"--no-deps, {day}): the add_argument calls of sglang/srt/server_args.py and the annotated fields "
                "of sglang/srt/server_args.py and sglang/srt/arg_groups/fields/ (0.5.14-0.5.23: "
                "sglang/srt/arg_groups/arg_utils.py add_cli_args_from_dataclass and _infer_type_func), read with "
                "tools/sglang_types.py; argparse (CPython Lib/argparse.py _get_values/_get_value) exits 2 with "
                "'invalid <type> value' when the type raises",
                "url": "https://pypi.org/project/sglang/#history",
            }
        ],
        "flags": flags,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("wheels", nargs="+", type=Path)
    ap.add_argument("--write", action="store_true", help="replace release_types in manifests/launch.json")
    ap.add_argument("--date", default=date.today().isoformat(), help="the day the wheels were downloaded")
    args = ap.parse_args(argv)
    new = section(args.wheels, args.date)
    print(f"{len(new['releases'])} releases, {len(new['flags'])} typed flags", file=sys.stderr)
    if not args.write:
        json.dump(new, sys.stdout, indent=1)
        print()
        return 0
    doc = json.loads(LAUNCH.read_text(encoding="utf-8"))
    doc["release_types"] = new
    LAUNCH.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
