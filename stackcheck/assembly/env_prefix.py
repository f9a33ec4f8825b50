"""GNU env's command line (`env [OPTION]... [-] [NAME=VALUE]... [COMMAND [ARG]...]`) read as coreutils' env reads it,
for the gate (launch/gate.py split_env_prefix) and the target (assembly/target.py _unwrap), which read it apart until
imend (D6), and recommend (launch/recommend.py read_prefix, since imend2). Read in coreutils' src/env.c (commit
aa0c0de35, 2026-08-20; -a/--argv0 since v9.5):

- options are read by getopt_long with shortopts "+a:C:iS:u:v0" and the whitespace characters (:98; the `+` ends
  them at the first word that is no option, `--` ends them and is dropped), long options by unique prefix (:111-128);
  an unknown option, a missing argument, an ambiguous prefix or a whitespace letter (a shebang's `-i command` in one
  word) is usage(EXIT_CANCELED): env exits 125 and runs nothing (:1089-1098);
- -S STRING splits STRING into words put where the option was, and getopt starts again on them (parse_split_string,
  :1084; build_argv :624-760): quotes, `\\_` a separator (a space in double quotes), `\\c` the end, `\\"` `\\#` `\\$`
  `\\'` `\\\\` the character, `\\f` `\\n` `\\r` `\\t` `\\v`, any other escape an error; `#` at a word's start a comment
  to the end; `${NAME}` (NAME [A-Za-z_][A-Za-z0-9_]*) the variable's value in the environment env started with
  (-i and -u are applied after the options, :1101-1150), any other `$` an error; an open quote an error;
- then one `-` means -i (:1101-1105), -i empties the environment, else each -u removes a variable (one with an
  empty name or holding `=` is an error, exit 125: unset_envvars :222-231, unsetenv's EINVAL);
- then every word holding `=` is an assignment (putenv, whatever the name: :1158); the first word without one is the
  command (execvp :1238); -C DIR (the last one given) is where it runs, an empty DIR an error (chdir fails: exit
  125, coreutils 9.1 run here); -0 with a command is an error (:1169-1172).

Where env fails, runs nothing, or does something this reader cannot see (-a/--argv0: the name the command sees,
from which Python finds its prefix; --env0-from: a file's variables; a `${NAME}` the environment given does not
hold: an unset variable and one not known look alike here), the reading stops and says why; each caller decides
what to do there (the gate refuses, the target leaves the interpreter unknown). env itself reads the words of -S
strings again with no bound (a `${NAME}` whose value holds `-S${NAME}` splits for ever: coreutils 9.1 run here), so this
reading follows at most MAX_SPLITS strings and MAX_SPLIT_CHARS characters of their words, and stops past them."""

from __future__ import annotations

from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


class EnvPrefix(NamedTuple):
    """What `env ARGS` does: the command it runs ([]: none; where the reading stopped, the words from there on,
    unread), the environment it runs with, its assignments in order, the directory of its last -C (as a list,
    empty without one), and `stop`: None where the reading reached the command, else why it stopped; `fails` says
    whether env itself fails or runs nothing there (exit 125, --help) rather than doing something not read here;
    `ignored`: whether it starts the command from an empty environment (-i, `-`), so nothing it started with is left.
    """

    command: list[str]
    env: dict[str, str]
    assignments: list[tuple[str, str]]
    dirs: list[str]
    stop: str | None
    fails: bool
    ignored: bool = False


#: env.c longopts (:111-128): name -> (what it is, its argument: 0 none, 1 required, 2 optional with `=` only)
_LONG: dict[str, tuple[str, int]] = {
    "argv0": ("a", 1),
    "ignore-environment": ("i", 0),
    "env0-from": ("env0-from", 1),
    "null": ("0", 0),
    "unset": ("u", 1),
    "chdir": ("C", 1),
    "default-signal": ("signal", 2),
    "ignore-signal": ("signal", 2),
    "block-signal": ("signal", 2),
    "list-signal-handling": ("signal", 0),
    "debug": ("v", 0),
    "split-string": ("S", 1),
    "help": ("help", 0),
    "version": ("version", 0),
}
#: env.c shortopts (:98): letter -> takes an argument
_SHORT = {"a": True, "C": True, "i": False, "S": True, "u": True, "v": False, "0": False}
_SPACE = " \t\n\v\f\r"
_ESCAPES = {"f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_NAME_START = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
_NAME_REST = _NAME_START + "0123456789"
#: the -S strings one reading follows, and the characters of their words (irobust3): env restarts getopt on each
#: split's words (parse_split_string, :784-814) with no bound, so `X='-S${X}' env -S '${X}'` never ends (coreutils 9.1
#: run here: still running at `timeout 3`)
MAX_SPLITS = 256
MAX_SPLIT_CHARS = 4_000_000


class _Stop(Exception):
    def __init__(self, why: str, fails: bool = True) -> None:
        super().__init__(why)
        self.why, self.fails = why, fails


def _shown(word: str) -> str:
    """An option as a message names it: its name only (never a value after `=`), in plain characters, cut short."""
    head = word.partition("=")[0]
    kept = "".join(c for c in head if c.isascii() and (c.isalnum() or c in "-_."))
    return kept[:40] or "?"


def split_string(text: str, env: Mapping[str, str], budget: int = MAX_SPLIT_CHARS) -> list[str]:
    """env -S's words for `text` (build_argv, env.c :624-760), `${NAME}` taken from `env` (the environment env
    started with); _Stop where env fails on it, a variable is not in `env`, or the words pass `budget` characters."""
    parts: list[list[str]] = []  # each word's pieces, joined at the end (a word grown by `+=` is copied per piece)
    sep = True  # the last character seen separates words (a new word starts with the next one)
    sq = dq = False
    i, end = 0, len(text)
    size = 0

    def add(chars: str) -> None:
        nonlocal sep, size
        if sep:
            parts.append([])
            sep = False
        parts[-1].append(chars)
        size += len(chars)
        if size > budget:
            raise _Stop(f"-S: the words of the -S strings pass {MAX_SPLIT_CHARS:,} characters; not read further", False)

    def words() -> list[str]:
        return ["".join(p) for p in parts]

    while i < end:
        c = text[i]
        if c == "'" and not dq:
            sq = not sq
            add("")
            i += 1
        elif c == '"' and not sq:
            dq = not dq
            add("")
            i += 1
        elif c in _SPACE and not (sq or dq):
            sep = True
            while i < end and text[i] in _SPACE:
                i += 1
        elif c == "#" and sep:
            return words()  # a comment to the end (no quote left open can be: sep is never set inside quotes)
        elif c == "\\" and not (sq and text[i + 1 : i + 2] not in ("\\", "'")):
            nxt = text[i + 1 : i + 2]
            if nxt == "_" and not dq:
                sep = True
            elif nxt == "_":
                add(" ")
            elif nxt == "c":
                if dq:
                    raise _Stop("-S: '\\c' inside double quotes (env fails)")
                return words()
            elif nxt in _ESCAPES:
                add(_ESCAPES[nxt])
            elif nxt and nxt in "\"#$'\\":
                add(nxt)
            elif not nxt:
                raise _Stop("-S: a backslash at the end of the string (env fails)")
            else:
                raise _Stop(f"-S: the sequence '\\{_shown(nxt)}' (env fails: invalid sequence)")
            i += 2
        elif c == "$" and not sq:
            close = text.find("}", i)
            name = text[i + 2 : close] if text[i + 1 : i + 2] == "{" and close > i + 2 else ""
            if not name or name[0] not in _NAME_START or any(ch not in _NAME_REST for ch in name):
                raise _Stop("-S: a '$' that is not ${NAME} (env fails: only ${VARNAME} expansion is supported)")
            if name not in env:
                raise _Stop(f"-S: ${{{name}}} is not in the environment given, so its value is not known", False)
            add(env[name])
            i = close + 1
        else:
            add(c)
            i += 1
    if sq or dq:
        raise _Stop("-S: no terminating quote (env fails)")
    return words()


def _long(word: str) -> tuple[str, str, int, str | None]:
    """(the option's full name, what it is, its argument kind, the value after `=`) for `--name[=value]`."""
    name, eq, value = word[2:].partition("=")
    if name in _LONG:
        full = name
    else:
        matches = [n for n in _LONG if n.startswith(name)] if name else []
        if len(matches) != 1:
            why = "ambiguous" if matches else "unrecognized"
            raise _Stop(f"option --{_shown(name)} is {why} (env fails, exit 125)")
        full = matches[0]
    what, kind = _LONG[full]
    if eq and kind == 0:
        raise _Stop(f"option --{full} takes no argument (env fails, exit 125)")
    return full, what, kind, value if eq else None


def read_env(args: Sequence[str], env: Mapping[str, str]) -> EnvPrefix:
    """`env ARGS` (the words after `env`) applied to `env`, the environment env starts with."""
    words = list(args)
    start = dict(env)
    unset: list[str] = []
    ignore = False
    chdir: str | None = None
    i = 0
    splits, budget = 0, MAX_SPLIT_CHARS
    try:
        while i < len(words):
            w = words[i]
            if w == "--":
                i += 1
                break
            if not w.startswith("-") or w == "-":
                break
            opts: list[tuple[str, str | None, str]] = []  # (what, its argument, as written)
            taken = 1
            if w.startswith("--"):
                full, what, kind, value = _long(w)
                if kind == 1 and value is None:
                    if i + 1 >= len(words):
                        raise _Stop(f"option --{full} needs an argument (env fails, exit 125)")
                    value, taken = words[i + 1], 2
                opts.append((what, value, f"--{full}"))
            else:
                k = 1
                while k < len(w):
                    letter = w[k]
                    if letter in _SPACE:  # (a shebang's `#!/usr/bin/env -i python3`: one word, env -S splits it)
                        raise _Stop("an option word holding a space (env fails, exit 125: use -S)")
                    if letter not in _SHORT:
                        raise _Stop(f"option -{_shown(letter)} is invalid (env fails, exit 125)")
                    if _SHORT[letter]:
                        value = w[k + 1 :]
                        if not value:
                            if i + 1 >= len(words):
                                raise _Stop(f"option -{letter} needs an argument (env fails, exit 125)")
                            value, taken = words[i + 1], 2
                        opts.append((letter, value, f"-{letter}"))
                        break
                    opts.append((letter, None, f"-{letter}"))
                    k += 1
            split: list[str] | None = None
            for what, value, written in opts:
                if what == "i":
                    ignore = True
                elif what == "u":
                    unset.append(str(value))
                elif what == "C":
                    chdir = value
                elif what == "S":  # (the last letter of a cluster: nothing follows it)
                    splits += 1
                    if splits > MAX_SPLITS:
                        raise _Stop(f"-S: more than {MAX_SPLITS} -S strings (one that holds another again and again: "
                                    "env may split for ever); not read further", False)  # fmt: skip
                    split = split_string(str(value), start, budget)
                    budget -= sum(map(len, split))
                elif what in ("0", "help", "version"):
                    raise _Stop(f"{written}: env runs no command with it (it prints, or fails, and exits)")
                elif what == "a":
                    raise _Stop(f"{written}: the name the command is given (Python finds its prefix from it) is "
                                "not read here, and env before coreutils 9.5 fails on it", False)  # fmt: skip
                elif what == "env0-from":
                    raise _Stop(f"{written}: the variables env reads from a file are not read here", False)
            if split is not None:  # env puts the words where the option was and reads them again (:1084)
                words = [*words[:i], *split, *words[i + taken :]]
                continue
            i += taken
    except _Stop as stop:
        return EnvPrefix(words[i:], start, [], [], stop.why, stop.fails)
    if i < len(words) and words[i] == "-":
        ignore = True
        i += 1
    if chdir == "":  # env -C '': chdir fails (ENOENT) and env exits 125 before the command (coreutils 9.1 run here)
        why = "-C with an empty directory (env fails, exit 125: cannot change directory to '')"
        return EnvPrefix(words[i:], start, [], [], why, True)
    bad = [name for name in unset if not name or "=" in name] if not ignore else []
    if bad:  # unsetenv fails on them: env exits 125 and runs nothing (unset_envvars :228-230, -i skips them :1149)
        why = "-u with a name that is empty or holds '=' (env fails, exit 125: unsetenv rejects it)"
        return EnvPrefix(words[i:], start, [], [], why, True)
    out: dict[str, str] = {} if ignore else {k: v for k, v in start.items() if k not in unset}
    assignments: list[tuple[str, str]] = []
    while i < len(words) and "=" in words[i]:
        name, _, value = words[i].partition("=")
        out[name] = value
        assignments.append((name, value))
        i += 1
    return EnvPrefix(words[i:], out, assignments, [chdir] if chdir is not None else [], None, False, ignore)
