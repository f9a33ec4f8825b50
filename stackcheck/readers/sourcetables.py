"""Read the tables that gate features out of installed Python sources, with `ast` only.

The sources of a probed package (SGLang, FlashInfer) are parsed, never imported, compiled to code or
evaluated: the readers walk the syntax tree and accept literal constants only. A table whose values are
expressions (`64 * MiB`) is read for its keys alone.

A gate's probe (see manifests/gates.json) names the files to try, in order, and how to read them:

- `dict_keys`: a module-level assignment `NAME = {...}` (or `NAME: T = {...}`), one of `symbol`;
  the value is the sorted list of its int keys;
- `class_attr_dict_keys`: the same, as a class attribute of one of the classes in `class`;
- `subscript_style`: how one of `symbol` is looked up with a key that is not a literal:
  `NAME[key]` or `obj.NAME[key]` gives `"index"` (a missing key raises KeyError), `NAME.get(key)` gives
  `"get"`; when both occur, `"index"` (the crash wins);
- `call_keyword_list`: inside the function `function`, the first call (in source order) with the keyword
  `keyword`, whose value must be a list or tuple of int literals; the value is that list, in source order;
- `guard_list`: a runtime guard whose error message contains `message` (optionally inside one of the
  functions `function`): `if X not in [ints]: raise E("...message...")` (or `X != int`), or
  `assert X in [ints], "...message..."` (or `X == int`); the value is the sorted list of the admitted ints;
- `cpp_check_ints`: a C/C++ source or header (not Python): the first call of one of the macros `macro`
  (`FLASHINFER_CHECK(cond, "msg")`) one of whose string literals contains `message`; the value is the sorted
  list of the ints that the regular expression `pattern` (one group) captures from the call's code outside
  string literals and comments (`\\bkSM_(\\d+)\\b` reads `mSM == kSM_100 || mSM == kSM_103` as [100, 103]).
  The text is scanned, never compiled or preprocessed.

Files are tried in order: the first existing file where the table is found gives the reading; a file that
cannot be read (too large, not UTF-8, a syntax error, an I/O error) stops the search with status `"error"`.
Nothing here raises on bad input: every failure is a reading with a one-line reason.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.readers.fsview import FileView, HostView, is_file

if TYPE_CHECKING:
    import ast  # the functions that parse a source import it: ~3 ms, and most audits parse none
    from pathlib import Path
    from typing import Any, Literal, TypedDict

MAX_SOURCE_BYTES = 4 * 1024 * 1024
"""Larger source files are not parsed (status "error"): no gate table lives in a file this size."""

READ_KINDS = (
    "dict_keys",
    "class_attr_dict_keys",
    "subscript_style",
    "call_keyword_list",
    "guard_list",
    "cpp_check_ints",
)

if TYPE_CHECKING:  # (typing is not imported at run time: a reading is a plain dict)
    ReadingStatus = Literal["ok", "not-found", "error"]

    class TableReading(TypedDict):
        """What was read for one gate; JSON-compatible, stored as facts["source_tables"][gate_id]."""

        status: ReadingStatus
        value: Any  # a JSON value (list of ints, "index" | "get") or None
        file: str | None  # the path read, relative to the site directory (POSIX separators)
        reason: str | None  # one line, set unless status is "ok"
        sha256: str | None  # hex digest of the file that was read


class _NotFound(Exception):
    """The table is not in this file (internal; becomes status "not-found")."""


class _Unreadable(Exception):
    """The file or the table in it cannot be read (internal; becomes status "error")."""

    def __init__(self, message: str, sha256: str | None = None) -> None:
        super().__init__(message)
        self.sha256 = sha256


def _reading(
    status: ReadingStatus,
    value: Any = None,
    file: str | None = None,
    reason: str | None = None,
    sha256: str | None = None,
) -> TableReading:
    return {"status": status, "value": value, "file": file, "reason": reason, "sha256": sha256}


def _str_list(spec: Mapping[str, Any], key: str) -> list[str]:
    """A spec entry that may be a string or a list of strings, as a non-empty list."""
    raw = spec.get(key)
    if isinstance(raw, str) and raw:
        return [raw]
    if isinstance(raw, list) and raw and all(isinstance(x, str) and x for x in raw):
        return list(raw)
    raise _Unreadable(f"probe spec: {key!r} must be a non-empty string or list of strings")


def _safe_relative(rel: str) -> tuple[str, ...]:
    """The parts of a relative POSIX path, as PurePosixPath(rel).parts gives them (empty and "." parts
    dropped), without importing pathlib at start-up (~5 ms on Python 3.12)."""
    parts = tuple(part for part in rel.split("/") if part not in ("", "."))
    if rel.startswith("/") or ".." in parts or not parts:
        raise _Unreadable(f"probe spec: file {rel!r} must be a relative path inside the site directory")
    return parts


def _read_bytes(view: FileView, path: str, rel: str) -> bytes:
    """One file's bytes within the size limit. Raises _Unreadable."""
    try:
        st = view.stat(path)
        size = st.size if st is not None else 0
        if size > MAX_SOURCE_BYTES:
            raise _Unreadable(f"{rel}: {size} bytes, larger than the {MAX_SOURCE_BYTES}-byte limit")
        return view.read_bytes(path, MAX_SOURCE_BYTES + 1)
    except OSError as exc:
        raise _Unreadable(f"{rel}: cannot read: {exc.strerror or exc}") from None


def _decode(data: bytes, rel: str) -> tuple[str, str]:
    """The text (UTF-8) of a file's bytes and their sha256. Raises _Unreadable."""
    if len(data) > MAX_SOURCE_BYTES:  # grew between stat and read
        raise _Unreadable(f"{rel}: larger than the {MAX_SOURCE_BYTES}-byte limit")
    import hashlib  # here, not at import: loading OpenSSL costs each audit ~4 ms and a warm one hashes nothing

    digest = hashlib.sha256(data).hexdigest()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Unreadable(f"{rel}: not UTF-8 (byte {exc.start})", digest) from None
    return text, digest


def _parse(text: str, rel: str, digest: str) -> ast.Module:
    from stackcheck.pyast import parse

    try:
        return parse(text, rel)
    except SyntaxError as exc:
        raise _Unreadable(f"{rel}: syntax error at line {exc.lineno}: {exc.msg}", digest) from None
    except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, absurd nesting
        raise _Unreadable(f"{rel}: cannot parse: {type(exc).__name__}", digest) from None


_TOP_LEVEL = _lazy(r"^(?:@|def |async def |class )", re.MULTILINE)


def _anchor(spec: Mapping[str, Any]) -> str | None:
    """Text that sits inside the one top-level block a reader needs (a large module is then parsed in part)."""
    kind = spec.get("read")
    function = spec.get("function")
    if kind == "call_keyword_list" and isinstance(function, str) and function:
        return f"def {function}("
    if kind == "guard_list":
        if isinstance(function, str) and function:
            return f"def {function}("
        if isinstance(function, list) and len(function) == 1 and isinstance(function[0], str):
            return f"def {function[0]}("
        message = spec.get("message")
        return message if isinstance(message, str) and message else None
    return None


def _block_around(text: str, anchor: str) -> tuple[str, int] | None:
    """The top-level block holding the first `anchor`: from its column-0 def/class line (with the decorators
    right above it) to the next column-0 def, class or decorator; and the number of lines before it. None when
    the anchor is not in the text."""
    at = text.find("\n" + anchor) + 1 if anchor.startswith("def ") else 0  # a top-level def before a nested one
    if at <= 0:
        at = text.find(anchor)
    if at < 0:
        return None
    starts = [m.start() for m in _TOP_LEVEL.finditer(text)]
    heads = [i for i in starts if i <= at and not text.startswith("@", i)]
    begin = heads[-1] if heads else 0
    while begin > 0:
        prev_line = text.rfind("\n", 0, begin - 1) + 1
        if not text.startswith("@", prev_line):
            break
        begin = prev_line
    end = next((i for i in starts if i > at), len(text))
    return text[begin:end], text.count("\n", 0, begin)


# -- readers: each takes the parsed module and the spec, returns a JSON value or raises _NotFound ------


def _assigned_value(body: Iterable[ast.stmt], names: Sequence[str]) -> tuple[str, ast.expr] | None:
    """The last plain assignment to the first of `names` that is assigned in `body` (straight-line code)."""
    import ast

    found: dict[str, ast.expr] = {}
    for stmt in body:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                if isinstance(target, ast.Name) and target.id in names:
                    found[target.id] = stmt.value
        elif (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and stmt.target.id in names
            and stmt.value is not None
        ):
            found[stmt.target.id] = stmt.value
    for name in names:
        if name in found:
            return name, found[name]
    return None


def _int_literal(node: ast.expr | None) -> int | None:
    """An int literal (also negative), never a bool; None for anything else."""
    import ast

    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_literal(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _dict_int_keys(name: str, value: ast.expr, rel: str) -> list[int]:
    import ast

    if not isinstance(value, ast.Dict):
        raise _Unreadable(f"{rel}:{value.lineno}: {name} is not a dict literal")
    keys: set[int] = set()
    for key in value.keys:
        if key is None:
            raise _Unreadable(f"{rel}:{value.lineno}: {name} unpacks another mapping (**)")
        number = _int_literal(key)
        if number is None:
            raise _Unreadable(f"{rel}:{key.lineno}: a key of {name} is not an int literal")
        keys.add(number)
    return sorted(keys)


def _read_dict_keys(tree: ast.Module, spec: Mapping[str, Any], rel: str) -> list[int]:
    symbols = _str_list(spec, "symbol")
    hit = _assigned_value(tree.body, symbols)
    if hit is None:
        raise _NotFound(f"{rel}: no module-level assignment to {' or '.join(symbols)}")
    return _dict_int_keys(hit[0], hit[1], rel)


def _read_class_attr_dict_keys(tree: ast.Module, spec: Mapping[str, Any], rel: str) -> list[int]:
    import ast

    classes = _str_list(spec, "class")
    symbols = _str_list(spec, "symbol")
    defs = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef) and node.name in classes}
    for class_name in classes:
        if class_name in defs:
            hit = _assigned_value(defs[class_name].body, symbols)
            if hit is None:
                raise _NotFound(f"{rel}: class {class_name} has no attribute {' or '.join(symbols)}")
            return _dict_int_keys(f"{class_name}.{hit[0]}", hit[1], rel)
    raise _NotFound(f"{rel}: no module-level class {' or '.join(classes)}")


def _names_symbol(node: ast.expr, symbols: Sequence[str]) -> bool:
    import ast

    return (isinstance(node, ast.Name) and node.id in symbols) or (
        isinstance(node, ast.Attribute) and node.attr in symbols
    )


def _is_literal_key(node: ast.expr) -> bool:
    """A lookup with a literal key does not depend on the device, so it says nothing about the style."""
    import ast

    return isinstance(node, ast.Constant)


def _read_subscript_style(tree: ast.Module, spec: Mapping[str, Any], rel: str) -> str:
    import ast

    symbols = _str_list(spec, "symbol")
    index = get = False
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and _names_symbol(node.value, symbols)
            and not _is_literal_key(node.slice)
        ):
            index = True
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and _names_symbol(node.func.value, symbols)
            and node.args
            and not _is_literal_key(node.args[0])
        ):
            get = True
    if index:
        return "index"
    if get:
        return "get"
    raise _NotFound(f"{rel}: {' or '.join(symbols)} is never looked up with a non-literal key")


def _read_call_keyword_list(tree: ast.Module, spec: Mapping[str, Any], rel: str) -> list[int]:
    import ast

    function = spec.get("function")
    keyword = spec.get("keyword")
    if not isinstance(function, str) or not function:
        raise _Unreadable("probe spec: 'function' must be a non-empty string")
    if not isinstance(keyword, str) or not keyword:
        raise _Unreadable("probe spec: 'keyword' must be a non-empty string")
    funcs = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function
    ]
    if not funcs:
        raise _NotFound(f"{rel}: no function {function}")
    funcs.sort(key=lambda n: n.lineno)
    for func in funcs:
        calls = sorted(
            (
                (node.lineno, node.col_offset, kw)
                for node in ast.walk(func)
                if isinstance(node, ast.Call)
                for kw in node.keywords
                if kw.arg == keyword
            ),
            key=lambda item: (item[0], item[1]),
        )
        if not calls:
            continue
        kw = calls[0][2]
        if not isinstance(kw.value, (ast.List, ast.Tuple)):
            raise _Unreadable(f"{rel}:{kw.value.lineno}: {keyword}= in {function} is not a list literal")
        values: list[int] = []
        for element in kw.value.elts:
            number = _int_literal(element)
            if number is None:
                raise _Unreadable(f"{rel}:{element.lineno}: {keyword}= in {function} holds a non-int-literal element")
            values.append(number)
        return values
    raise _NotFound(f"{rel}: function {function} makes no call with {keyword}=")


def _string_parts(node: ast.AST | None) -> str:
    """The literal text of a message: a str constant, the constant parts of an f-string, or '+' of them."""
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(_string_parts(v) for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _string_parts(node.left) + _string_parts(node.right)
    if isinstance(node, ast.Call):  # RuntimeError("...") or ValueError(f"...")
        return " ".join(_string_parts(a) for a in node.args)
    return ""


def _int_list(node: ast.expr, where: str) -> list[int]:
    import ast

    if not isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        raise _Unreadable(f"{where}: the admitted values are not a list literal")
    values: list[int] = []
    for element in node.elts:
        number = _int_literal(element)
        if number is None:
            raise _Unreadable(f"{where}: the admitted values hold a non-int-literal element")
        values.append(number)
    return sorted(set(values))


def _guard_values(test: ast.expr, raising: bool, where: str) -> list[int]:
    """The ints a guard admits: `X not in [..]` / `X != n` before a raise, `X in [..]` / `X == n` in an assert
    (an assert's `X in [..] or OTHER` reads the list: what the other alternatives admit is not a list)."""
    import ast

    if not raising and isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) and test.values:
        test = test.values[0]
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op = test.ops[0]
        if isinstance(op, ast.NotIn if raising else ast.In):
            return _int_list(test.comparators[0], where)
        if isinstance(op, ast.NotEq if raising else ast.Eq):
            number = _int_literal(test.comparators[0])
            if number is not None:
                return [number]
    form = "X not in [ints]` or `X != int" if raising else "X in [ints]` or `X == int"
    raise _Unreadable(f"{where}: the guard is not of the form `{form}`")


def _read_guard_list(tree: ast.Module, spec: Mapping[str, Any], rel: str) -> list[int]:
    import ast

    message = spec.get("message")
    if not isinstance(message, str) or not message:
        raise _Unreadable("probe spec: 'message' must be a non-empty string")
    scopes: list[ast.AST] = [tree]
    if spec.get("function") is not None:
        functions = _str_list(spec, "function")
        found: list[ast.FunctionDef | ast.AsyncFunctionDef] = [
            node
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in functions
        ]
        if not found:
            raise _NotFound(f"{rel}: no function {' or '.join(functions)}")
        scopes = [*sorted(found, key=lambda n: n.lineno)]
    for scope in scopes:
        guards = sorted(
            (node for node in ast.walk(scope) if isinstance(node, (ast.If, ast.Assert))),
            key=lambda n: (n.lineno, n.col_offset),
        )
        for node in guards:
            where = f"{rel}:{node.lineno}"
            if isinstance(node, ast.Assert):
                if message in _string_parts(node.msg):
                    return _guard_values(node.test, False, where)
                continue
            raises = [stmt for stmt in node.body if isinstance(stmt, ast.Raise)]
            if any(message in _string_parts(stmt.exc) for stmt in raises):
                return _guard_values(node.test, True, where)
    raise _NotFound(f"{rel}: no guard that raises {message!r}")


_READERS = {
    "dict_keys": _read_dict_keys,
    "class_attr_dict_keys": _read_class_attr_dict_keys,
    "subscript_style": _read_subscript_style,
    "call_keyword_list": _read_call_keyword_list,
    "guard_list": _read_guard_list,
}


# -- C/C++ text (headers shipped for JIT builds): scanned, never compiled --------------------------------


def _cpp_blank_comments(text: str) -> str:
    """The text with // and /* */ comments replaced by spaces (newlines kept); string and char literals kept."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if ch == "/" and nxt == "/":
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif ch == "/" and nxt == "*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join(c if c == "\n" else " " for c in text[i:end]))
            i = end
        elif ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(text[i:j])
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _cpp_call(text: str, start: int) -> tuple[str, list[str], int] | None:
    """From the '(' at `start`: (the call's code with string literals blanked, its string literals, end)."""
    depth = 0
    code: list[str] = []
    strings: list[str] = []
    i, n = start, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            if ch == '"':
                strings.append(text[i + 1 : j])
            code.append(" ")
            i = min(j + 1, n)
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return "".join(code), strings, i + 1
        code.append(ch)
        i += 1
    return None


def _read_cpp_check_ints(text: str, spec: Mapping[str, Any], rel: str) -> list[int]:
    import re

    macros = _str_list(spec, "macro")
    message = spec.get("message")
    pattern = spec.get("pattern")
    if not isinstance(message, str) or not message:
        raise _Unreadable("probe spec: 'message' must be a non-empty string")
    if not isinstance(pattern, str) or not pattern:
        raise _Unreadable("probe spec: 'pattern' must be a non-empty string")
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        raise _Unreadable(f"probe spec: 'pattern' is not a regular expression: {exc}") from None
    if regex.groups != 1:
        raise _Unreadable("probe spec: 'pattern' must have exactly one group")
    clean = _cpp_blank_comments(text)
    call_re = re.compile(r"\b(?:" + "|".join(re.escape(m) for m in macros) + r")\s*\(")
    for match in call_re.finditer(clean):
        call = _cpp_call(clean, match.end() - 1)
        if call is None:
            line = clean.count("\n", 0, match.start()) + 1
            raise _Unreadable(f"{rel}:{line}: unbalanced parentheses in {match.group(0).rstrip('( ')}")
        code, strings, _ = call
        if not any(message in s for s in strings) and message not in "".join(strings):
            continue
        line = clean.count("\n", 0, match.start()) + 1
        values = sorted({int(m.group(1)) for m in regex.finditer(code) if m.group(1).isdigit()})
        if not values:
            raise _Unreadable(f"{rel}:{line}: the check holds nothing that {pattern!r} reads")
        return values
    raise _NotFound(f"{rel}: no {' or '.join(macros)} call with the message {message!r}")


_TEXT_READERS = {
    "cpp_check_ints": _read_cpp_check_ints,
}


_GUARD_HEADS = ("assert ", "assert(", "if ", "elif ")


def _statement_around(text: str, anchor: str) -> tuple[str, int] | None:
    """The `assert` or `if` statement (dedented; `elif` read as `if`) whose text holds the first `anchor`, and
    the number of lines before it: a guard message is found without parsing the function around it."""
    at = text.find(anchor)
    if at < 0:
        return None
    lines = text.split("\n")
    line = text.count("\n", 0, at)
    start = next((j for j in range(line, max(-1, line - 40), -1) if lines[j].lstrip().startswith(_GUARD_HEADS)), None)
    if start is None:
        return None
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = start + 1
    while end < len(lines):
        current = lines[end]
        stripped = current.lstrip()
        if stripped and len(current) - len(stripped) <= indent and not stripped.startswith((")", "]", "}")):
            break
        end += 1
    body = [ln[indent:] if len(ln) >= indent else ln.lstrip() for ln in lines[start:end]]
    if body[0].startswith("elif "):
        body[0] = body[0][2:]
    return "\n".join(body), start


def _read_python(reader: Any, text: str, spec: Mapping[str, Any], rel: str, digest: str) -> Any:
    """Run a Python reader on the smallest part of the module that holds what the spec points at (the guard
    statement with its message, else the top-level block of the named function), falling back to the whole
    module: a large module such as SGLang's vendored FA4 interface then costs a fraction of a full parse."""
    import ast

    from stackcheck.pyast import parse

    anchor = _anchor(spec)
    if anchor is not None and anchor.startswith("def ") and anchor not in text:
        # no function of that name can be defined without this text: not here, and no parse needed
        raise _NotFound(f"{rel}: no function {anchor[4:-1]}")
    parts: list[tuple[str, int] | None] = []
    if anchor is not None:
        if spec.get("read") == "guard_list" and not spec.get("function"):
            parts.append(_statement_around(text, anchor))
        parts.append(_block_around(text, anchor))
    for part in parts:
        if part is None or len(part[0]) >= len(text):
            continue
        try:
            tree = parse(part[0], rel)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue  # a part cut inside a string or a continued statement: try a larger one
        ast.increment_lineno(tree, part[1])
        try:
            return reader(tree, spec, rel)
        except _NotFound:
            continue  # the anchor was elsewhere (a comment, another definition)
    return reader(_parse(text, rel, digest), spec, rel)


def read_table(probe_spec: Mapping[str, Any], site_dir: Path | str, view: FileView | None = None) -> TableReading:
    """Read one gate table from the sources under `site_dir` (a box path seen through `view`, this host by
    default). Never raises on bad files or specs."""
    fs = view if view is not None else HostView()

    def from_view(rel: str, rel_parts: tuple[str, ...]) -> bytes | None:
        path = posixpath.join(str(site_dir), *rel_parts)
        if not is_file(fs, path):
            return None
        return _read_bytes(fs, path, rel)

    return _read_table(probe_spec, from_view, str(site_dir))


SourceLoader = Callable[[str], "bytes | None"]
"""A release-relative POSIX path → the file's bytes (at most MAX_SOURCE_BYTES + 1 of them), or None when
the release has no such file; raises OSError when it cannot be read."""


def read_table_from(probe_spec: Mapping[str, Any], load: SourceLoader, where: str) -> TableReading:
    """read_table over files that are not in a site directory (a wheel read as a zip: stackcheck.derive).
    `where` names the release in a not-found reason."""

    def from_loader(rel: str, rel_parts: tuple[str, ...]) -> bytes | None:
        try:
            return load("/".join(rel_parts))
        except OSError as exc:
            raise _Unreadable(f"{rel}: cannot read: {exc.strerror or exc}") from None

    return _read_table(probe_spec, from_loader, where)


def _read_table(
    probe_spec: Mapping[str, Any],
    load: Callable[[str, tuple[str, ...]], bytes | None],
    where: str,
) -> TableReading:
    try:
        kind = probe_spec.get("read")
        reader = _READERS.get(kind) if isinstance(kind, str) else None
        text_reader = _TEXT_READERS.get(kind) if isinstance(kind, str) else None
        if reader is None and text_reader is None:
            raise _Unreadable(f"probe spec: unknown read kind {kind!r} (known: {', '.join(READ_KINDS)})")
        files = _str_list(probe_spec, "files")
        candidates = [(rel, _safe_relative(rel)) for rel in files]
    except _Unreadable as exc:
        return _reading("error", reason=str(exc))

    first_missing: TableReading | None = None
    for rel, rel_parts in candidates:
        try:
            data = load(rel, rel_parts)
            if data is None:
                continue
            text, digest = _decode(data, rel)
        except _Unreadable as exc:
            return _reading("error", file=rel, reason=str(exc), sha256=exc.sha256)
        try:
            if text_reader is not None:
                value: Any = text_reader(text, probe_spec, rel)
            else:
                assert reader is not None
                value = _read_python(reader, text, probe_spec, rel, digest)
        except _NotFound as exc:
            if first_missing is None:
                first_missing = _reading("not-found", file=rel, reason=str(exc), sha256=digest)
            continue
        except _Unreadable as exc:
            return _reading("error", file=rel, reason=str(exc), sha256=digest)
        except RecursionError:
            return _reading("error", file=rel, reason=f"{rel}: syntax tree too deep to walk", sha256=digest)
        return _reading("ok", value=value, file=rel, sha256=digest)
    if first_missing is not None:
        return first_missing
    return _reading("not-found", reason=f"none of {', '.join(files)} exists under {where}")


def normalise_name(name: str) -> str:
    """PEP 503 normalised distribution name (`Flashinfer_Python` → `flashinfer-python`)."""
    out = []
    last_dash = False
    for char in name.lower():
        if char in "-_.":
            if not last_dash:
                out.append("-")
            last_dash = True
        else:
            out.append(char)
            last_dash = False
    return "".join(out)


def read_source_tables(
    gates: Sequence[Mapping[str, Any]], package_locations: Mapping[str, str], view: FileView | None = None
) -> dict[str, TableReading]:
    """Read every gate that has a probe and whose package is installed (has a location).

    `package_locations` maps normalised distribution names to the directory that holds the package's
    top-level modules (facts.packages[NAME].location). Gates without a probe, or whose package is not
    installed, are left out of the result.
    """
    locations = {normalise_name(name): loc for name, loc in package_locations.items() if loc}
    readings: dict[str, TableReading] = {}
    for gate in gates:
        gate_id = gate.get("id")
        probe = gate.get("probe")
        if not isinstance(gate_id, str) or not isinstance(probe, Mapping):
            continue
        package = gate.get("package")
        if not isinstance(package, str) or not package:
            readings[gate_id] = _reading("error", reason=f"gate {gate_id} names no package")
            continue
        location = locations.get(normalise_name(package))
        if location is None:
            continue
        readings[gate_id] = read_table(probe, location, view)
    return readings


def _sort_key(item: Any) -> tuple[str, str]:
    return (type(item).__name__, repr(item))


def compare_with_release(reading_value: Any, release_value: Any) -> Literal["same", "patched"]:
    """Say "same" when what was read equals the release's value from the manifest, else "patched".

    Lists (and tuples) are compared as multisets: the order of keys or majors does not matter.
    """
    if isinstance(reading_value, (list, tuple)) and isinstance(release_value, (list, tuple)):
        same = sorted(reading_value, key=_sort_key) == sorted(release_value, key=_sort_key)
    else:
        same = reading_value == release_value
    return "same" if same else "patched"
