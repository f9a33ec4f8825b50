"""Laying out human output at any width, the one place for it: nothing is ever cut.

- a reason, a name or a path is wrapped at spaces only (never inside a word: a path or a flag longer than the
  line stays whole on its own line), under its row with a hanging indent;
- a shell command is one line when it fits, else broken between words with a `\\` continuation, so that
  pasting the lines runs exactly the command (`shell_lines`; tests join them back and compare);
- a list of short items (`a · b · c`) wraps between items;
- colour is a few ANSI codes added around status words, on a terminal only.

The width is $COLUMNS, else the terminal's; output that is not a terminal is not wrapped (grep finds a
reason on one line)."""

from __future__ import annotations

import os
import sys

from stackcheck.digits import whole_number

MIN_WIDTH = 40
DEFAULT_WIDTH = 80
UNLIMITED = 10**6  # piped output: one line per row and per reason, as long as it is

#: the whitespace textwrap turns into spaces (its _whitespace less the space itself)
_ONE_LINE = frozenset("\t\n\x0b\x0c\r")

_SGR = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}


def output_width() -> int:
    """$COLUMNS, else the terminal's width; piped output (a file, grep, a log) is not wrapped at all."""
    columns = whole_number(os.environ.get("COLUMNS", ""))  # (igap26: 5,000 digits, int() refused: exit 4)
    if columns is not None and columns > 0:
        return max(MIN_WIDTH, columns)
    try:
        if sys.stdout is not None and sys.stdout.isatty():
            import shutil  # on a terminal only: it costs start-up time

            return max(MIN_WIDTH, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)
    except (OSError, ValueError):
        pass
    return UNLIMITED


def wrap(text: str, width: int, indent: str = "", first: str | None = None) -> list[str]:
    """`text` as lines of at most `width` columns where its words allow: the first line starts with `first`
    (default: `indent`), the others with `indent`. Words are never split or cut."""
    lead = indent if first is None else first
    if not text:
        return [lead.rstrip()] if lead.strip() else []
    if len(lead) + len(text) <= max(width, len(lead) + 10) and text.strip() == text and _ONE_LINE.isdisjoint(text):
        return [lead + text]  # what textwrap gives a text that fits, with no whitespace for it to turn or drop
    import textwrap  # only text that is longer than its line, or whose whitespace textwrap changes, pays for it

    lines = textwrap.wrap(
        text,
        width=max(width, len(lead) + 10),
        initial_indent=lead,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return lines or [lead.rstrip()]


def wrap_items(items: list[str], width: int, first: str, indent: str, sep: str = " · ") -> list[str]:
    """Items joined by `sep`, wrapped between items (an item is never split)."""
    lines: list[str] = []
    line = first
    tail = len(sep.rstrip())  # a line that ends before the last item ends with the separator
    for i, item in enumerate(items):
        candidate = line + (sep if i else "") + item
        room = width - (tail if i < len(items) - 1 else 0)
        if len(candidate) <= room or (not i and len(first) + len(item) <= room):
            line = candidate
            continue
        if i and len(indent) + len(item) <= room:  # the item starts a new line, where it fits whole
            lines.append(line.rstrip() + sep.rstrip())
            line = indent + item
        else:  # it fits no line whole: it goes on from here, wrapped at its spaces
            line = candidate
        if len(line) > width:  # one item longer than a line: wrapped at its spaces
            lead = line[: len(line) - len(item)]
            parts = wrap(item, width, indent, lead)
            lines += parts[:-1]
            line = parts[-1]
    lines.append(line)
    return lines


def shell_lines(command: str, width: int, indent: str, more: str = "  ") -> list[str]:
    """A shell command at `indent`: one line when it fits; else split between its words, each line but the
    last ending in ` \\`, continuation lines indented by `more`. Joining the lines (dropping `\\` + newline)
    gives back the command word for word. A command shlex cannot split (an unbalanced quote) stays whole."""
    if len(indent) + len(command) <= width:
        return [indent + command]
    import shlex  # (a command longer than its line only)

    try:
        shlex.split(command)  # it splits: the quoting is balanced
    except ValueError:
        return [indent + command]
    words = _raw_words(command)
    if len(words) < 2:
        return [indent + command]
    lines: list[list[str]] = [[words[0]]]
    for w in words[1:]:
        current = lines[-1]
        lead = indent if len(lines) == 1 else indent + more
        if len(lead) + len(" ".join([*current, w])) + 2 > width:
            # an option stays with its value: `--index-url URL` moves down together
            carry = [current.pop()] if len(current) > 1 and current[-1].startswith("-") else []
            lines.append([*carry, w])
        else:
            current.append(w)
    out = [(indent if i == 0 else indent + more) + " ".join(ws) for i, ws in enumerate(lines)]
    return [line + " \\" for line in out[:-1]] + [out[-1]]


def _raw_words(command: str) -> list[str]:
    """The command's words as written (quotes kept), split at unquoted runs of spaces."""
    words: list[str] = []
    cur: list[str] = []
    quote: str | None = None
    escaped = False
    for ch in command:
        if escaped:
            cur.append(ch)
            escaped = False
            continue
        if ch == "\\" and quote != "'":
            cur.append(ch)
            escaped = True
            continue
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
            cur.append(ch)
        elif ch in " \t":
            if cur:
                words.append("".join(cur))
                cur = []
        else:
            cur.append(ch)
    if cur:
        words.append("".join(cur))
    return words


def join_shell_lines(lines: list[str]) -> str:
    """The inverse of `shell_lines` (for tests and `diff`): continuation lines joined into one command."""
    out: list[str] = []
    for line in lines:
        text = line.strip()
        if text.endswith(" \\"):
            out.append(text[:-2])
        else:
            out.append(text)
    return " ".join(out)


class Paint:
    """ANSI colour around a few words, or nothing (piped output, NO_COLOR, --output)."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, style: str) -> str:
        if not self.color or not style or not text:
            return text
        codes = ";".join(_SGR[s] for s in style.split() if s in _SGR)
        return f"\x1b[{codes}m{text}\x1b[0m" if codes else text
