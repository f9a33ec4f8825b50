"""The launch a server log states: SGLang logs its parsed arguments once as it starts, so `triage` can judge the
launch that crashed rather than the default one.

Every release 0.5.1-0.5.23 logs them at INFO from sglang/srt/entrypoints/engine.py, in Engine.__init__ and in
_launch_subprocesses (the path `python -m sglang.launch_server` takes), read in each wheel (pip download --no-deps,
2026-12-05):
- 0.5.1-0.5.18: `logger.info(f"{server_args=}")` (0.5.9 engine.py:156 and :1031; 0.5.18 :253 and :1095), the
  dataclass repr `server_args=ServerArgs(model_path='...', tp_size=8, attention_backend='fa3', ...)`;
- 0.5.19-0.5.21: `logger.info(f"server_args={server_args.resolved_dict()}")` (0.5.19 :265 and :1098), and 0.5.22-0.5.23
  the same dict with the watermark secrets redacted (`_server_args_for_logging`, 0.5.23 :173-174, :311 and :1185): a
  dict repr `server_args={'model_path': '...', 'tp_size': 8, ...}` keyed by the same field names.
The values are those after SGLang's own resolution (its defaults and per-model choices applied), i.e. what ran. Each
option of launch.json is looked up by its field name (the flag without `--`, `-` as `_`, argparse's dest) with a
literal value (a string, a number, True, False, None); a field the line does not state as such stays unknown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

#: what precedes the arguments on the logged line, then the form's first character ("ServerArgs(" or "{")
MARK = "server_args="
#: the launch module the flags are given to (launch.json's launch-server entrypoint), to derive them as the gate does
ENTRYPOINT = ("python3", "-m", "sglang.launch_server")


def is_server_args(text: str) -> int:
    """Where the arguments start in a log line (after MARK), or -1 where the line logs none."""
    at = text.find(MARK)
    while at >= 0:
        start = at + len(MARK)
        if text.startswith(("ServerArgs(", "{'", '{"'), start):
            return start
        at = text.find(MARK, start)
    return -1


def top_level_items(text: str) -> list[str]:
    """The comma-separated items of the call or dict that `text` opens (`ServerArgs(a=1, b='x, y')` or `{'a': 1}`),
    split only outside strings and nested brackets; a line cut short yields the items it holds whole."""
    items: list[str] = []
    depth = 0
    quote = ""
    start = -1
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
            if depth == 1:
                start = i + 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                items.append(text[start:i])
                return [x.strip() for x in items if x.strip()]
        elif ch == "," and depth == 1:
            items.append(text[start:i])
            start = i + 1
        i += 1
    return [x.strip() for x in items if x.strip()]


_ITEM = re.compile(r"""^(?:([A-Za-z_]\w*)=|(['"])([A-Za-z_]\w*)\2:\s*)(.*)$""", re.DOTALL)


def field_values(text: str, fields: Sequence[str]) -> dict[str, Any]:
    """The value the logged arguments (`text`, from is_server_args' start) give each of `fields` that they state
    as a Python literal, in either form (`name=VALUE` or `'name': VALUE`); a value that is not a literal (an object's
    repr) is left out."""
    from stackcheck.pyast import literal_eval

    wanted = set(fields)
    out: dict[str, Any] = {}
    for item in top_level_items(text):
        m = _ITEM.match(item)
        if m is None:
            continue
        name = m.group(1) or m.group(3)
        if name not in wanted or name in out:
            continue
        try:
            out[name] = literal_eval(m.group(4).strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return out


def launch_flags(text: str, options: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """The command-line flags that reproduce the logged values of launch.json's `options`, and the launch facts they
    state (each option's `fact` where its field was read as a value it takes, whether or not it became a flag: a
    False or None value is the flag left out). A bool option: True is the flag, False nothing; any other option: a
    string or a number is the flag and it, None nothing; a value of another type (a list, a dict, a bool where a
    value is read) is not this option as launch.json knows it, and stays unknown."""
    fields = {str(o["flag"])[2:].replace("-", "_"): o for o in options if str(o.get("flag", "")).startswith("--")}
    values = field_values(text, list(fields))
    argv: list[str] = []
    facts: list[str] = []
    for name, value in values.items():
        option = fields[name]
        if option.get("value") == "bool":
            if not isinstance(value, bool):
                continue
            if value:
                argv.append(str(option["flag"]))
        elif value is not None:
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                continue
            argv += [str(option["flag"]), str(value)]
        if option.get("fact"):
            facts.append(str(option["fact"]))
    return argv, facts
