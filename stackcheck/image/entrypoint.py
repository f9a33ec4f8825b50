"""An image's Entrypoint script read from its layers (imend9): where it is NVIDIA's wrapper shape, the command it runs.

Every nvidia/cuda image (and the images built on one, SGLang's lmsysorg/sglang among them: its docker/Dockerfile starts
`FROM nvidia/cuda:${CUDA_VERSION}-cudnn-devel-ubuntu22.04` and sets no ENTRYPOINT of its own: sgl-project/sglang
docker/Dockerfile at 004740a9, SGL_VERSION 0.5.5) has Entrypoint `/opt/nvidia/nvidia_entrypoint.sh`. That
script (NVIDIA's cuda container images repository, gitlab.com/nvidia/container-images/cuda, nvidia_entrypoint.sh;
read in public copies of it, imend9 2026-12-07; its entrypoint.d parts there: 10-banner.sh, 12-banner.sh,
15-container-copyright.txt, 30-container-license.txt, 50-gpu-driver-check.sh, 80-internal-image.sh,
90-deprecated-image.sh, named in a public copy of the download list; the banners and 80 / 90 were not read here)
gathers `<its directory>/entrypoint.d/*@(.txt|.sh)` in glob order,
`cat`s each .txt part and `source`s each .sh part into its own shell, then runs `exec "/bin/bash"` where it got no
arguments and `exec "$@"` otherwise. So the command after it runs unchanged, with whatever the sourced parts did to
the shell: the environment they export, or anything else they run.

`read_entrypoint` places the command only where every line of the script is one this reader knows in that shape
(comments, the glob, the loop, the print helpers, the final exec) and every .sh part only prints (echo, printf, the
script's banner helpers, a `cat` heredoc without command substitution) or exports a literal `NAME=VALUE`; anything else
(a test of the driver, `ldconfig -p | grep ...`, a conditional export, a command substitution, a file written) leaves
the script unread, and the gate's walk refuses it as unknown (fail closed). Nothing here is NVIDIA's text: the reader
matches line shapes written for it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from stackcheck.readers.fsview import FileView

#: the largest script or part read
_LIMIT = 256 << 10
_PARTS_DIR = "entrypoint.d"

_SCRIPT_LINES = [re.compile(p) for p in (
    r"#!\s*/(usr/)?bin/bash",
    r"#!\s*/usr/bin/env bash",
    r"shopt -[su] nullglob extglob",
    r'_SCRIPT_DIR="\$\(dirname "\$\(readlink -f "\$\{BASH_SOURCE\[0\]\}"\)"\)"',
    r'declare -a _PARTS=\( "\$\{_SCRIPT_DIR\}/entrypoint\.d"/\*@\(\.txt\|\.sh\) \)',
    r"(print_repeats|print_banner_text)\(\) \{",
    r"local (-r )?[A-Za-z_][A-Za-z0-9_]*(=\S+)?( [A-Za-z_][A-Za-z0-9_]*=\S+)*",
    r'for \(\(i=1; i<=\$count; i\+\+\)\); do echo -n "\$char"; done',
    r"\}",
    r'print_repeats "\$\{banner_char\}" \$\(\(\$\{#text\} \+ 6\)\)',
    r'for _file in "\$\{_PARTS\[@\]\}"; do',
    r'case "\$\{_file\}" in',
    r'\*\.txt\) cat "\$\{_file\}";;',
    r'\*\.sh\) source "\$\{_file\}";;',
    r"esac",
    r"done",
    r"if \[\[ \$# -eq 0 \]\]; then",
    r'exec "/bin/bash"',
    r"else",
    r'exec "\$@"',
    r"fi",
)]  # fmt: skip
#: an echo line of the script itself: prints only (no substitution that runs a command, no assignment)
_PRINT = re.compile(r"(echo|printf|print_banner_text|print_repeats)(\s.*)?")
_EXPORT = re.compile(r"export ([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"$`\\]*\"|'[^']*'|[^\s\"'$`\\;&|<>()]*)")
_HEREDOC = re.compile(r"cat <<-?\s*(['\"]?)([A-Za-z_]+)\1")
#: what makes a print line run or write something: command substitution, arithmetic with assignment, a
#: default-assigning expansion, a list or pipe, a redirection (other than to stderr)
_RUNS = re.compile(r"\$\(|`|:=|;|&&|\|\||\||<|>(?!&2\b)|\bsource\b|\beval\b|^printf\s+(\S+\s+)*-v\b|\$\[")
#: (ifc62) `printf -v NAME ...` assigns NAME: a variable the image's Env exported reaches the command changed;
#: (irobust10) `$[X=5]` is bash's old arithmetic (it assigns, as `$((X=5))` does, which `$(` already covers); `${X?}`
#: is _exits_unset's


@dataclass
class EntrypointReading:
    """The command the image's Entrypoint + Cmd runs (`command`) and the environment after the parts (`env`), where
    the script is read (`placed`); else `why` (one line) says what stopped the reading."""

    placed: bool
    command: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    why: str | None = None
    parts: list[str] = field(default_factory=list)


def _lines(text: str) -> list[tuple[int, str]]:
    """The script's lines with their numbers: comments and blank lines dropped, whitespace collapsed, a trailing `>&2`
    dropped."""
    out: list[tuple[int, str]] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = " ".join(raw.split())
        if not line or (line.startswith("#") and not line.startswith("#!")):
            continue
        line = re.sub(r"\s*1?>&2$", "", line)
        line = re.sub(r"\s*>&2;;$", ";;", line)
        out.append((number, line))
    return out


def _read(view: FileView, path: str) -> str | None:
    try:
        stat = view.stat(path)
        if stat is None or stat.kind != "file" or stat.size > _LIMIT:
            return None
        return view.read_bytes(path, _LIMIT).decode("utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def script_shape(text: str) -> str | None:
    """None where `text` is the wrapper shape (sources its entrypoint.d parts, then `exec "$@"`), else why not."""
    lines = _lines(text)
    if not lines or not lines[0][1].startswith("#!"):
        return "it is not a bash script"
    seen: set[str] = set()
    for number, line in lines:
        for pattern in _SCRIPT_LINES:
            if pattern.fullmatch(line):
                seen.add(pattern.pattern)
                break
        else:
            if _PRINT.fullmatch(line) and not _RUNS.search(line) and not _exits_unset(line):
                continue
            return f"its line {number} is not one of the wrapper's"  # (its text is not shown: it may hold a secret)
    needed = (_SCRIPT_LINES[4], _SCRIPT_LINES[13], _SCRIPT_LINES[20])  # (the glob, the source, exec "$@")
    if any(p.pattern not in seen for p in needed):
        return "it does not gather entrypoint.d parts and exec its arguments"
    if lines[0][1] not in ("#!/bin/bash", "#!/usr/bin/bash", "#!/usr/bin/env bash"):
        return "its interpreter line is not bash's"
    return None


#: a scratch assignment of the driver check: `_NAME=$(...)` / `_NAME="${_A}${_B}"`, the substitution's words checked
_SCRATCH = re.compile(r"(_[A-Z_]+)=(.*)")
#: the words a scratch substitution may hold: read-only look-ups (ldconfig -p, ls, grep) and the shell's loop words
_READ_ONLY_WORDS = frozenset({"ldconfig", "-p", "grep", "-v", "-q", "compat", "ls", "true", "for", "i", "in", "do",
                              "done", "IFS=:", "2>/dev/null", "||", "|", ";", "(", ")", "$(", "$(("})  # fmt: skip
_IF_EMPTY = re.compile(r'if \[\[ -z "\$\{_[A-Z_]+\}"( \|\| -z "\$\{_[A-Z_]+\}")* \]\]; then')
#: exports made only inside the driver check's `if` (the driver not found), read by nothing the gate judges:
#: NVIDIA_CPU_ONLY (nvidia/cuda entrypoint.d/50-gpu-driver-check.sh: exported where neither libcuda.so.1 nor a
#: /dev/nvidiactl / dxg / nvgpu node is found; no .py file of sglang 0.5.23's or torch 2.9.1's wheels names it,
#: imend9 2026-12-07: inferred for other releases)
_CONDITIONAL_OK = frozenset({"NVIDIA_CPU_ONLY"})


def _scratch_ok(value: str) -> bool:
    """Whether a scratch assignment's value only reads (module doc): its words are all look-ups or expansions."""
    spaced = re.sub(r"(\$\(\(?|\)|\|\||\||;|\(|\$\{[A-Za-z_]+\}|\$[A-Za-z_]+)", r" \1 ", value.strip('"'))
    for word in spaced.split():
        if word in _READ_ONLY_WORDS or re.fullmatch(r"\$\{?[A-Za-z_]+\}?|/?libcuda\.so\.1|"
                                                     r"/dev/(nvidiactl|dxg|nvgpu)", word):  # fmt: skip
            continue
        return False
    return ":=" not in value and "`" not in value and ">" not in value.replace("2>/dev/null", "")


def _exits_unset(line: str) -> bool:
    """Whether a `${...}` of `line` holds a `?` (`${X?}`, `${X:?msg}`: the non-interactive shell exits where X is unset,
    before `exec "$@"`; any other `?` there, a pattern's, is taken for one too). One pass over the line: a regular
    expression scanning from each `${` to the next `}` went quadratic on a line of unclosed `${` (8,000: 0.09 s)."""
    return any("?" in part.partition("}")[0] for part in line.split("${")[1:])


def part_exports(text: str) -> tuple[dict[str, str], str | None]:
    """The literal exports of a .sh part that otherwise only prints, else ({}, why). The driver check's shape is
    read too: scratch `_NAME=$(...)` look-ups, `if [[ -z "${_NAME}" ... ]]; then` printing and exporting only a name
    of _CONDITIONAL_OK, `fi`, `unset _NAME...` (the environment the launch sees is not changed by it)."""
    env: dict[str, str] = {}
    heredoc: str | None = None
    depth = 0
    for number, raw in enumerate(text.splitlines(), 1):
        if heredoc is not None:
            if raw.strip() == heredoc:
                heredoc = None
            elif "$(" in raw or "`" in raw or ":=" in raw:
                return {}, "its heredoc runs a command substitution or assigns"
            continue
        line = " ".join(raw.split())
        if not line or line.startswith("#"):
            continue
        line = re.sub(r"\s*1?>&2$", "", line)
        doc = _HEREDOC.fullmatch(line)
        if doc is not None:
            heredoc = doc.group(2)
            continue
        if _IF_EMPTY.fullmatch(line) and depth == 0:
            depth = 1
            continue
        if line == "fi" and depth == 1:
            depth = 0
            continue
        scratch = _SCRATCH.fullmatch(line)
        if scratch is not None and depth == 0 and _scratch_ok(scratch.group(2)):
            continue
        if re.fullmatch(r"unset( _[A-Z_]+)+", line):
            continue
        export = _EXPORT.fullmatch(line)
        if export is not None and depth == 1:
            if export.group(1) not in _CONDITIONAL_OK:
                return {}, f"it exports {export.group(1)} only where a test holds"
            continue
        if export is not None and re.match(r"~|[^\"']*:~", export.group(2)):
            # (ifc62: bash expands an unquoted ~ at the start of an assignment's value and after each ':')
            return {}, f"its line {number} exports a value bash expands (~)"
        if export is not None:
            value = export.group(2)
            env[export.group(1)] = value[1:-1] if value[:1] in ("'", '"') else value
            continue
        if _PRINT.fullmatch(line) and not _RUNS.search(line) and not _exits_unset(line):
            continue
        return {}, f"its line {number} does more than print or export a literal value"
    if heredoc is not None or depth:
        return {}, "its heredoc or if is not closed"
    return env, None


def read_entrypoint(view: FileView, command: Sequence[str], env: dict[str, str]) -> EntrypointReading:
    """The command and environment after `command[0]`, an absolute path to a script in the image, where it is the
    wrapper shape and its parts only print or export (module doc)."""
    if not command or not command[0].startswith("/"):
        return EntrypointReading(False, why="the Entrypoint is not a script named by an absolute path")
    try:
        real = view.realpath(command[0])
    except (OSError, ValueError):
        return EntrypointReading(False, why=f"{command[0]} is not found in the image")
    text = _read(view, real)
    if text is None:
        return EntrypointReading(False, why=f"{command[0]} is not read from the image")
    why = script_shape(text)
    if why is not None:
        return EntrypointReading(False, why=f"{command[0]}: {why}")
    parts_dir = posixpath.join(posixpath.dirname(real), _PARTS_DIR)
    try:
        names = view.listdir(parts_dir) if view.stat(parts_dir) is not None else []
    except OSError:
        return EntrypointReading(False, why=f"{parts_dir} is not read")
    out = dict(env)
    parts: list[str] = []
    # (glob order: C-locale names assumed; ifc62: the glob's leading * matches no name starting with '.', which bash
    # leaves out without dotglob, so a hidden part is not sourced and its exports never reach the command)
    for name in sorted(n for n in names if n.endswith((".txt", ".sh")) and not n.startswith(".")):
        path = posixpath.join(parts_dir, name)
        stat = view.stat(path)
        if stat is None or stat.kind != "file":
            return EntrypointReading(False, why=f"{path} is not a regular file")
        if name.endswith(".txt"):
            continue  # (cat'ed: printed only)
        body = _read(view, path)
        if body is None:
            return EntrypointReading(False, why=f"{path} is not read from the image")
        exports, why = part_exports(body)
        if why is not None:
            return EntrypointReading(False, why=f"{path}: {why}")
        out.update(exports)
        parts.append(name)
    rest = list(command[1:]) or ["/bin/bash"]
    return EntrypointReading(True, command=rest, env=out, parts=parts)
