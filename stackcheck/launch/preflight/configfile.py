"""`--config FILE`: the server's settings from a YAML file, merged into its command line as SGLang does.

SGLang (server_args_config_parser.py, manifests/preflight.json `config_file`) reads the file with
yaml.safe_load, turns each top-level key into `--KEY VALUE` (true: a bare `--KEY`; false: nothing; a list:
`--KEY V1 V2 ...`) and puts those arguments *before* the command line's own, so the command line wins; it
refuses a file whose suffix is not .yaml/.yml, and more than one --config. The gate does the same, so the
flags in the file are checked like flags on the command line.

PyYAML is not a dependency of stackcheck: `read_flat_yaml` reads the subset SGLang's config files use (a flat
mapping of scalars and lists: `key: value`, `key: [a, b]`, `key:` followed by `- item` lines, comments,
quotes, a leading `---`) and refuses anything else (nested mappings, anchors, block scalars, tags, flow
mappings) with the line, rather than guess. A JSON object is YAML too and is read with json.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stackcheck.errors import BadInputError, UsageError

if TYPE_CHECKING:
    from stackcheck.readers.fsview import FileView

_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*)|)$")
_INT = re.compile(r"^[-+]?(0|[1-9][0-9_]*)$")
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
# YAML 1.1 (what yaml.safe_load implements) booleans and nulls
_TRUE = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"}
_FALSE = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N"}
_NULL = {"", "~", "null", "Null", "NULL"}


class YamlSubsetError(ValueError):
    """YAML outside the subset: the message gives the line and what was found."""


def _strip_comment(text: str) -> str:
    out, quote = [], None
    for i, ch in enumerate(text):
        if quote:
            out.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            break
        out.append(ch)
    return "".join(out).rstrip()


def _scalar(raw: str, line: int) -> Any:
    text = raw.strip()
    if text[:1] in ("&", "*", "!", "|", ">", "{", "%", "@", "`"):
        raise YamlSubsetError(f"line {line}: {text[:20]!r} (anchors, tags, block scalars and mappings are not read)")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            return json.loads(text)
        except ValueError:
            raise YamlSubsetError(f"line {line}: a double-quoted string stackcheck cannot read") from None
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if text[:1] in ("'", '"'):
        raise YamlSubsetError(f"line {line}: an unterminated quoted string")
    if text in _NULL:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if _INT.match(text):
        try:
            return int(text.replace("_", ""))
        except ValueError:  # more digits than int() reads (4,300): yaml.safe_load's int() raises on it as well
            # (PyYAML 6.0.x yaml/constructor.py:265 construct_yaml_int `sign*int(value)`; igap26: an internal error)
            raise YamlSubsetError(f"line {line}: an integer of more digits than int() reads") from None
    if _FLOAT.match(text) and any(c.isdigit() for c in text):
        return float(text.replace("_", ""))
    if ": " in text or text.endswith(":"):
        raise YamlSubsetError(f"line {line}: a nested mapping ({text[:30]!r})")
    return text


def _flow_list(text: str, line: int) -> list[Any]:
    inner = text.strip()[1:-1].strip()
    if not inner:
        return []
    if "[" in inner or "{" in inner:
        raise YamlSubsetError(f"line {line}: a nested list or mapping")
    return [_scalar(part, line) for part in inner.split(",")]


def read_flat_yaml(text: str) -> dict[str, Any]:
    """A flat YAML mapping (see the module docstring); raises YamlSubsetError for anything else."""
    out: dict[str, Any] = {}
    pending: str | None = None  # a key whose value is a block list on the following lines
    for n, raw in enumerate(text.splitlines(), 1):
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise YamlSubsetError(f"line {n}: a tab in the indentation")
        line = _strip_comment(raw)
        if not line.strip():
            continue
        if line.strip() == "---" and not out:
            continue
        if line.strip() in ("---", "..."):
            raise YamlSubsetError(f"line {n}: a second YAML document")
        stripped = line.lstrip()
        indented = len(line) != len(stripped)
        if stripped.startswith("- ") or stripped == "-":
            if pending is None:
                raise YamlSubsetError(f"line {n}: a list item outside a key")
            if out.get(pending) is None:
                out[pending] = []
            out[pending].append(_scalar(stripped[1:], n))
            continue
        if indented:
            raise YamlSubsetError(f"line {n}: an indented line (a nested mapping)")
        m = _KEY.match(stripped)
        if m is None:
            raise YamlSubsetError(f"line {n}: not a `key: value` line")
        key, value_text = m.group(1), (m.group(2) or "").strip()
        if key in out:
            raise YamlSubsetError(f"line {n}: key {key!r} given twice")
        pending = None
        if not value_text:
            out[key] = None
            pending = key
        elif value_text.startswith("["):
            if not value_text.endswith("]"):
                raise YamlSubsetError(f"line {n}: a flow list that spans lines")
            out[key] = _flow_list(value_text, n)
        else:
            out[key] = _scalar(value_text, n)
    return {k: v for k, v in out.items()}


def read_config(view: FileView, path: str, cap: int) -> dict[str, Any]:
    """The file's mapping; BadInputError (exit 2) naming the file and the place when it cannot be read."""
    try:
        st = view.stat(path)
        if st is None:
            raise BadInputError(f"--config {path}: no such file (or a link that does not resolve)")
        if st.kind != "file":
            raise BadInputError(f"--config {path}: not a regular file")
        if st.size > cap:
            raise BadInputError(f"--config {path}: {st.size} bytes, larger than the {cap}-byte cap")
        data = view.read_bytes(path, cap + 1)
    except OSError as exc:  # fsview.NotRegularFile says "not a regular file"
        raise BadInputError(f"--config {path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInputError(f"--config {path}: byte {exc.start}: not UTF-8 text") from None
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise BadInputError(f"--config {path}: not valid JSON: {exc}") from None
    else:
        try:
            doc = read_flat_yaml(text)
        except YamlSubsetError as exc:
            raise BadInputError(f"--config {path}: {exc}: stackcheck reads flat `key: value` files only") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise BadInputError(f"--config {path}: the top level is not a mapping")
    return doc


def config_args(doc: Mapping[str, Any]) -> list[str]:
    """The arguments SGLang makes of a config mapping (ConfigArgumentMerger._convert_config_to_args)."""
    args: list[str] = []
    for key, value in doc.items():
        flag = f"--{key}"
        if isinstance(value, bool):
            if value:
                args.append(flag)
        elif isinstance(value, list):
            if value:
                args.append(flag)
                args.extend(_text(v) for v in value)
        elif isinstance(value, dict):
            args.extend([flag, json.dumps(value)])
        else:
            args.extend([flag, _text(value)])
    return args


def _text(value: Any) -> str:
    if value is None:
        return "None"  # str(None), as SGLang passes it
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def expand_config(
    args: Sequence[str], view: FileView, cwd: str, data: Mapping[str, Any]
) -> tuple[list[str], str | None, str | None]:
    """SGLang's arguments with `--config FILE` replaced by the file's flags (before the others).

    Returns (arguments, the config file read or None, a problem SGLang itself stops on or None). Only the exact
    token `--config` is merged, as SGLang does (`--config=FILE` reaches its argparse unmerged).
    """
    spec = data.get("config_file") or {}
    idx = [i for i, a in enumerate(args) if a == "--config"]
    if not idx:
        return list(args), None, None
    if len(idx) > 1:
        return list(args), None, "more than one --config: SGLang raises 'Multiple config files specified'"
    i = idx[0]
    if i + 1 >= len(args):
        raise UsageError("server command: --config needs a file")
    name = args[i + 1]
    path = name if name.startswith("/") else f"{cwd.rstrip('/')}/{name}"
    suffixes = [str(s) for s in spec.get("suffixes") or [".yaml", ".yml"]]
    suffix = ("." + name.rsplit(".", 1)[1].lower()) if "." in name.rsplit("/", 1)[-1] else ""
    if suffix not in suffixes:  # SGLang checks the suffix before it opens the file
        problem = (
            f"--config {name}: SGLang reads only {'/'.join(suffixes)} files and raises "
            f"'Config file must be YAML format, got: {suffix or '(no suffix)'}'"
        )
        return list(args), path, problem
    doc = read_config(view, path, int(spec.get("cap_bytes", 1 << 20)))
    merged = config_args(doc) + list(args[:i]) + list(args[i + 2 :])
    bad = [k for k in doc if "_" in str(k)]
    if bad:
        return (
            merged,
            path,
            (f"--config {name}: key {bad[0]!r} becomes --{bad[0]}, which SGLang's argparse rejects (flags use '-')"),
        )
    return merged, path, None
