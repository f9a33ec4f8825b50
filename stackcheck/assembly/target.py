"""Which box and which Python environment are audited: the filesystem view and the target interpreter.

`open_view(opts)` gives the one filesystem view every probe reads through (stackcheck.readers.fsview): this
host, a root directory (`--root DIR`) or a container image (`--image PATH`, from the stackcheck.image package
when it is installed).

`choose_target(...)` picks the interpreter whose packages, sources and binaries are audited. The first rule
that names one wins, and the report says which (`facts.python.chosen_by`):

1. `--python PATH` (a path, or a name looked up on PATH), `--env DIR` (a venv or conda prefix), then
   `STACKCHECK_PYTHON`: explicit; a path that is not there is a usage error (exit 2);
2. the gated command (`gate -- COMMAND`): a Python on argv[0] (`/opt/serve/bin/python -m ...`, or
   `python3 -m ...` looked up on the command's own PATH), a console script through its shebang
   (`sglang serve ...`: `#!/opt/serve/bin/python3`, `#!/usr/bin/env python3`, and pip's `/bin/sh` launcher
   for long paths), `uv run ...` (the project's environment: `--python PATH`, UV_PROJECT_ENVIRONMENT,
   `.venv` at the project or workspace root), `conda run -n ENV|-p PREFIX ...`, `mamba run`,
   `micromamba run`; `env NAME=VALUE ...` and `nohup` in front are followed, and so are the programs the gate's
   walk steps through to the launch (nice, taskset, timeout, srun, sudo, systemd-run, flock, ...: irev78). For an
   image without a gated command, the command its containers run (the config's Entrypoint + Cmd, from its
   WorkingDir) takes this place ("the image's command");
3. an active `VIRTUAL_ENV`, then `CONDA_PREFIX`, that is not stackcheck's own environment;
4. for a root directory or an image: `python3` (then `python`) on its PATH (an image's PATH is its
   config's, or docker's default when it sets none);
5. stackcheck's own interpreter (nothing is run: this process's sys.path).

A rule that cannot name an environment (an `uv run --isolated`, a `VIRTUAL_ENV` whose directory is gone) is
skipped with a note, kept in `facts.python.notes`. Nothing here runs anything: the interpreter is run (or its
layout read) by the python probe (stackcheck.probes.python_env).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import sys
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from stackcheck.errors import UsageError
from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple
from stackcheck.readers.fsview import FileView, HostView, is_dir, is_file, is_host, kind_of, which

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.assembly.options import Options

#: a shebang or launcher is read this far (a console script's first lines)
SCRIPT_HEAD = 4096
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#: an interpreter's file name: python, python3, python3.12, python3.13t, pypy3
PY_NAME = re.compile(r"^(?:python|pypy)(?:\d+(?:\.\d+)*)?t?$")
#: environment variables that change an interpreter's sys.path: part of the "same as mine" test and of the
#: cache key
PATH_VARS = ("PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE", "PYTHONUSERBASE", "PYTHONPLATLIBDIR", "PYTHONSAFEPATH")


class Target(NamedTuple):
    """The interpreter to audit.

    `executable` is a box path (None: stackcheck's own when `own`, else no interpreter was found); `env` is
    the environment it runs in (the gated command's: PYTHONPATH counts); `explicit` makes a bad interpreter
    a usage error instead of a recorded reason; `notes` say which rules were skipped and why.
    """

    executable: str | None
    chosen_by: str
    env: Mapping[str, str] = MappingProxyType({})  # read only: one empty default shared by every Target
    explicit: bool = False
    own: bool = False
    notes: tuple[str, ...] = ()


# -- the view ---------------------------------------------------------------------------------------------


def check_view_options(opts: Options) -> None:
    """--image / --root / --platform combinations (UsageError, exit 2, before anything is read)."""
    image = getattr(opts, "image", None)
    platform = getattr(opts, "platform", None)
    if image and getattr(opts, "root", None):
        raise UsageError("--image and --root: give one of them")
    if platform and not image:
        raise UsageError("--platform: only with --image (it chooses one image of a multi-platform file)")
    if platform and not re.match(r"^[a-z0-9]+/[a-z0-9_]+(?:/[a-z0-9]+)?$", platform):
        raise UsageError(f"--platform {platform!r}: expected OS/ARCH[/VARIANT], for example linux/arm64")


def open_view(opts: Options) -> FileView:
    """The filesystem view the probes read: `--image PATH`, `--root DIR`, or this host."""
    check_view_options(opts)
    image = getattr(opts, "image", None)
    root = getattr(opts, "root", None)
    platform = getattr(opts, "platform", None)
    if image:
        import importlib

        try:
            module: Any = importlib.import_module("stackcheck.image")
        except ImportError:
            raise UsageError(
                f"--image {image}: image support is not installed in this stackcheck (use --root DIR on an "
                "unpacked or mounted root filesystem)"
            ) from None
        view: FileView = module.open_image_view(image, platform=platform)
        return view
    if root:
        real = os.path.abspath(root)
        if not os.path.isdir(real):
            raise UsageError(f"--root {root}: not a directory")
        return HostView(real)
    return HostView()


# -- the interpreter --------------------------------------------------------------------------------------


def choose_target(
    view: FileView,
    environ: Mapping[str, str],
    python: str | None = None,
    env_dir: str | None = None,
    command: Sequence[str] | None = None,
    cwd: str | None = None,
    stackcheck_python: str | None = None,
    command_is: str = "the gated command",
) -> Target:
    """The interpreter to audit, by the rules in the module docstring. `environ` is the environment the
    server starts with; STACKCHECK_PYTHON is read from it unless given (an image's Env does not carry
    stackcheck's settings). `command_is` names where `command` comes from in the rule and the notes ("the
    image's command": its Entrypoint and Cmd). Raises UsageError for a bad `--python`, `--env` or
    STACKCHECK_PYTHON."""
    if python and env_dir:
        raise UsageError("--python and --env: give one of them")
    notes: list[str] = []
    if python:
        return _explicit(view, environ, python, "--python")
    if env_dir:
        return Target(_env_dir_interpreter(view, env_dir, "--env"), "--env", dict(environ), explicit=True)
    from_env = stackcheck_python if stackcheck_python is not None else environ.get("STACKCHECK_PYTHON")
    if from_env:
        return _explicit(view, environ, from_env, "STACKCHECK_PYTHON")
    if command:
        found = interpreter_of_command(command, environ, view, cwd, notes)
        if command_is != "the gated command":
            notes = [n.replace("the gated command", command_is) for n in notes]
        if found is not None:
            exe, rule, cmd_env = found
            rule = rule.replace("the gated command", command_is)
            return _maybe_own(view, Target(exe, rule, cmd_env, notes=tuple(notes)))
    for var in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        prefix = environ.get(var)
        if not prefix:
            continue
        venv_exe = _prefix_interpreter(view, prefix)
        if venv_exe is None:
            notes.append(f"{var}={prefix}: no bin/python there; not used")
            continue
        if is_host(view) and _same_prefix(prefix, sys.prefix):
            continue  # stackcheck's own environment: rule 5 says the same, without running anything
        return _maybe_own(view, Target(venv_exe, var, dict(environ), notes=tuple(notes)))
    if not is_host(view):
        path_value = environ.get("PATH") or DEFAULT_PATH
        where = "the image's PATH" if hasattr(view, "image_facts") else "the root's PATH"
        for name in ("python3", "python"):
            on_path = which(view, name, path_value)
            if on_path is not None:
                return Target(on_path, f"{name} on {where}", dict(environ), notes=tuple(notes))
        notes.append(f"no python3 or python on {where} ({path_value})")
        return Target(None, where, dict(environ), notes=tuple(notes))
    return Target(sys.executable or None, "stackcheck's own interpreter", dict(environ), own=True, notes=tuple(notes))


def _explicit(view: FileView, environ: Mapping[str, str], value: str, how: str) -> Target:
    path = value
    if "/" not in value:
        found = which(view, value, environ.get("PATH"))
        if found is None:
            raise UsageError(f"{how} {value}: not found on PATH")
        path = found
    elif not path.startswith("/"):
        if not is_host(view):
            raise UsageError(f"{how} {value}: give an absolute path inside the {view.description}")
        path = os.path.abspath(path)
    kind = kind_of(view, path)
    if kind is None:
        link = kind_of(view, path, follow_symlinks=False)
        if link == "link" and _venv_cfg_dir(view, path) is not None:
            # a venv whose base interpreter was removed: its packages can still be read, statically
            return Target(path, how, dict(environ), explicit=True)
        raise UsageError(f"{how} {value}: no such file")
    if kind == "dir":
        raise UsageError(f"{how} {value}: is a directory (for a venv or conda prefix use --env DIR)")
    if kind != "file":
        raise UsageError(f"{how} {value}: not a regular file")
    return _maybe_own(view, Target(path, how, dict(environ), explicit=True))


def _env_dir_interpreter(view: FileView, directory: str, how: str) -> str:
    path = directory if directory.startswith("/") or not is_host(view) else os.path.abspath(directory)
    if not is_dir(view, path):
        raise UsageError(f"{how} {directory}: not a directory")
    exe = _prefix_interpreter(view, path, allow_dangling=True)
    if exe is None:
        raise UsageError(f"{how} {directory}: no bin/python3 or bin/python: not a venv or conda prefix")
    return exe


def _prefix_interpreter(view: FileView, prefix: str, allow_dangling: bool = False) -> str | None:
    """bin/python3, bin/python of a prefix (a dangling link only when asked: a venv whose base is gone)."""
    for name in ("python3", "python"):
        candidate = posixpath.join(prefix, "bin", name)
        if is_file(view, candidate):
            return candidate
    if allow_dangling:
        for name in ("python3", "python"):
            candidate = posixpath.join(prefix, "bin", name)
            if kind_of(view, candidate, follow_symlinks=False) == "link":
                return candidate
    return None


def _venv_cfg_dir(view: FileView, exe: str) -> str | None:
    """The venv prefix of an interpreter path (where pyvenv.cfg is, as site.venv() looks), else None."""
    exe_dir = posixpath.dirname(exe)
    for directory in (exe_dir, posixpath.dirname(exe_dir)):
        if is_file(view, posixpath.join(directory, "pyvenv.cfg")):
            return posixpath.dirname(exe_dir)  # sys.prefix is the bin directory's parent either way
    return None


def prefix_of(view: FileView, exe: str) -> str:
    """The prefix an interpreter path belongs to: its venv, else the parent of its real bin directory."""
    venv = _venv_cfg_dir(view, exe)
    if venv is not None:
        return venv
    try:
        real = view.realpath(exe)
    except (OSError, ValueError):
        real = exe
    return posixpath.dirname(posixpath.dirname(real))


def _same_prefix(a: str, b: str) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def _maybe_own(view: FileView, target: Target) -> Target:
    """Mark a target that is this very environment, run with the same path variables: its sys.path is this
    process's, so nothing needs to run."""
    if not is_host(view) or target.executable is None:
        return target
    if not _same_prefix(prefix_of(view, target.executable), sys.prefix):
        return target
    if any(target.env.get(v) != os.environ.get(v) for v in PATH_VARS):
        return target
    return Target(target.executable, target.chosen_by, target.env, target.explicit, True, target.notes)


# -- the gated command ------------------------------------------------------------------------------------


def interpreter_of_command(
    command: Sequence[str],
    environ: Mapping[str, str],
    view: FileView,
    cwd: str | None = None,
    notes: list[str] | None = None,
) -> tuple[str, str, dict[str, str]] | None:
    """(interpreter, rule, the command's environment) for a server command line, or None (with a note
    saying why) when the command does not name its environment without running it."""
    notes = notes if notes is not None else []
    env = dict(environ)
    known_cwd = cwd or (os.getcwd() if is_host(view) else None)  # (a root's launch directory is not known)
    dirs: list[str] = []
    unwrapped = _unwrap(command, env, notes, dirs)
    if unwrapped is None:
        return None
    args = unwrapped
    known_cwd = _entered_known(known_cwd, dirs)  # `env -C DIR`: the program is run from there (irobust)
    cwd = known_cwd or "/"
    if not args:
        notes.append("the gated command has no program after its wrappers")
        return None
    prog = args[0]
    # (a relative PATH entry, `PATH=.venv/bin:...`, is the launch directory's: execvp runs the program found there)
    resolved = which(view, prog, env.get("PATH"), known_cwd) if "/" not in prog else _absolute(prog, cwd)
    name = posixpath.basename(prog)
    if PY_NAME.match(name):
        if resolved is None:
            notes.append(f"the gated command's {prog}: not found on its PATH")
            return None
        return resolved, "the gated command", env
    if name == "uv":
        return _uv_run(args[1:], env, view, cwd, notes)
    if name in ("conda", "mamba", "micromamba"):
        return _conda_run(name, resolved, args[1:], env, view, notes)
    if resolved is None:
        notes.append(f"the gated command's {prog}: not found on its PATH")
        return None
    exe = script_interpreter(view, resolved, env, known_cwd)
    if exe is None:
        notes.append(f"the gated command's {prog} ({resolved}) does not name a Python interpreter on its first line")
        return None
    return exe, f"the gated command's script ({resolved})", env


def _entered(cwd: str, dirs: Sequence[str]) -> str:
    """`cwd` after chdir to each of `dirs` (`env -C DIR`): joined, not normalised, so that `sub/..` through a link
    `sub` resolves as chdir does when the path is read (irev65)."""
    for directory in dirs:
        cwd = posixpath.join(cwd, directory)
    return cwd


def command_directory(command: Sequence[str], environ: Mapping[str, str], cwd: str | None) -> str | None:
    """The directory the gated command's program starts in, where known: `cwd` (None: not known) after each `env -C
    DIR` of its wrappers, leading or behind another launcher (`timeout 600 env -C DIR ...`), each chdir from the one
    before as GNU env does it (an absolute DIR is known whatever `cwd` is)."""
    return _entered_known(cwd, _launch_wrappers(command, environ)[1])


def _entered_known(cwd: str | None, dirs: Sequence[str]) -> str | None:
    """`cwd` (None: not known) after chdir to each of `dirs` (`env -C DIR`): an absolute DIR is known whatever `cwd`
    is; joined, not normalised, as _entered."""
    for directory in dirs:
        cwd = directory if directory.startswith("/") else (None if cwd is None else posixpath.join(cwd, directory))
    return cwd


def command_environment(command: Sequence[str], environ: Mapping[str, str]) -> dict[str, str]:
    """The environment the gated command's program starts with: `environ` with the command's leading `env
    [-i] [-u NAME] [NAME=VALUE]...` and `nohup` wrappers applied (up to an `env` option not followed)."""
    return _launch_wrappers(command, environ)[0]


def _launch_wrappers(command: Sequence[str], environ: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """(the environment the gated command's program starts with, each `env -C DIR` on the way in order): its leading
    `env` and `nohup` wrappers, then an `env` behind another launcher (`timeout 600 env ...`, `sudo -u svc env ...`),
    before the interpreter or SGLang's own program, applied where its reading does not stop, as the gate's
    find_launch applies it to the launch (irev68: the probes read SGLANG_NCCL_SO_PATH, PATH and LD_LIBRARY_PATH from
    the environment before it; imend3: its -C moves the launch directory too)."""
    env = dict(environ)
    dirs: list[str] = []
    args = _unwrap(command, env, [], dirs) or []
    from stackcheck.assembly.env_prefix import read_env

    i = 0
    while i < len(args):
        word = posixpath.basename(args[i])
        if _LAUNCH_PROGRAM.fullmatch(word):
            break
        if word == "env":
            read = read_env(args[i + 1 :], env)
            if read.stop is not None or not any(_LAUNCH_PROGRAM.fullmatch(posixpath.basename(w)) for w in read.command):
                break
            env, args, i = dict(read.env), read.command, 0  # (the program env runs may be another launcher)
            dirs.extend(read.dirs)
            continue
        i += 1
    return env, dirs


#: a word that runs the launch itself (a Python interpreter's name, as the gate's find_launch takes it, or SGLang's
#: own `sglang` program): an `env` after it is an argument, not a wrapper
_LAUNCH_PROGRAM = _lazy(r"python(?:\d+(?:\.\d+)?)?|sglang")


#: Python's options that take an argument (the next word, or the rest of the same word): -W and -X; -c and -m end
#: the options (what follows is the command or the module's own arguments)
_PY_ARG_OPTIONS = frozenset("WX")


def command_first_path(
    command: Sequence[str], environ: Mapping[str, str], cwd: str | None, view: FileView, before_311: bool = False
) -> str | None:
    """The directory a gated `python [OPTIONS] -m MODULE` / `-c CMD` (the working directory) or `python [OPTIONS]
    SCRIPT` (the script's own directory, symbolic links resolved) puts first on sys.path, before the environment's
    entries; None where it puts none (-I, -P, or PYTHONSAFEPATH without -E: Python 3.11+) or the command is not a
    plain Python interpreter after its `env`/`nohup` wrappers (a console script, uv run, conda run: not modelled).
    The python probe leaves this entry out of facts.python.sys_path (how the server is started, not the
    environment). `before_311`: as a Python older than 3.11 does, which ignores PYTHONSAFEPATH (-P, also 3.11's, is
    an error there: still taken to put none)."""
    env = dict(environ)
    dirs: list[str] = []
    args = _unwrap(command, env, [], dirs)
    if not args or not PY_NAME.match(posixpath.basename(args[0])):
        return None
    cwd = cwd or (os.getcwd() if is_host(view) else "/")
    letters, mode, script = _python_options(args[1:])
    safe, ignore_env = bool(set(letters) & set("IP")), bool(set(letters) & set("IE"))
    if mode is None or safe or (env.get("PYTHONSAFEPATH") and not ignore_env and not before_311):
        return None
    cwd = _entered(cwd, dirs)  # `env -C DIR`: Python starts in DIR (irobust)
    if mode in ("cwd", "stdin"):
        return cwd
    path = _absolute(script, cwd)
    with contextlib.suppress(OSError):
        path = view.realpath(path)
    return posixpath.dirname(path) or "/"


def python_option_letters(command: Sequence[str], environ: Mapping[str, str]) -> str | None:
    """The one-letter options a gated plain Python interpreter (after its `env` / `nohup` wrappers) is given before
    its script, -m or -c, in order ("uP" for `python -u -P -m sglang.launch_server`; an option's argument, -W's and
    -X's, left out); None where the command is no plain Python interpreter."""
    env = dict(environ)
    args = _unwrap(command, env, [])
    if not args or not PY_NAME.match(posixpath.basename(args[0])):
        return None
    return _python_options(args[1:])[0]


def _python_options(words: Sequence[str]) -> tuple[str, str | None, str]:
    """(the one-letter options, in order; "cwd" for -m / -c, "script", "stdin" or None; the script) of a Python
    interpreter's arguments `words` after its own name, read as CPython's getopt reads them (Python/getopt.c: letters
    run together, -W / -X take the rest of the word or the next one, --check-hash-based-pycs the next one)."""
    letters, mode, script = "", None, ""
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if word == "-" or not word.startswith("-"):
            mode = "script" if word != "-" else "stdin"
            script = word
            break
        if word == "--":
            if rest:
                mode, script = "script", rest.pop(0)
            break
        if word.startswith("--"):
            if word == "--check-hash-based-pycs" and rest:
                rest.pop(0)
            continue
        for i, letter in enumerate(word[1:]):
            letters += letter
            if letter in "cm":
                mode = "cwd"
                break
            if letter in _PY_ARG_OPTIONS:
                if i == len(word) - 2 and rest:
                    rest.pop(0)
                break
        if mode is not None:
            break
    return letters, mode, script


def _unwrap(
    command: Sequence[str], env: dict[str, str], notes: list[str], dirs: list[str] | None = None
) -> list[str] | None:
    """The command after its `env ...` and `nohup` wrappers, applying each `env`'s settings to `env` and adding
    each `env`'s -C DIR (its last, as env runs it) to `dirs` (in order); None (with a note) where the reading of an
    `env` stops (env_prefix.read_env: env fails there, or does what is not read here)."""
    args = list(command)
    placed = False  # (a program of _placed_command stepped through)
    while args:
        head = posixpath.basename(args[0])
        if head == "env":  # (read as GNU env reads it: assembly/env_prefix.py, shared with the gate)
            from stackcheck.assembly.env_prefix import read_env

            read = read_env(args[1:], env)
            if placed and (
                read.stop is not None or not any(_LAUNCH_PROGRAM.fullmatch(posixpath.basename(w)) for w in read.command)
            ):
                break  # (behind a placed program, an `env` is applied where it runs the launch: _launch_wrappers)
            if read.stop is not None:
                notes.append(f"env: {read.stop}; the command's interpreter is not known")
                return None
            env.clear()
            env.update(read.env)
            if dirs is not None:
                dirs.extend(read.dirs)
            args = read.command
            continue
        if head == "nohup":  # (its only options, --help / --version, end at `--`, as the gate's walk reads it: irev79)
            args = args[2:] if len(args) > 1 and args[1] == "--" else args[1:]
            continue
        at = _placed_command(args)
        if at is not None:
            args, placed = args[at:], True
            continue
        break
    return args


def _placed_command(args: Sequence[str]) -> int | None:
    """Where the command of args[0] stands where it is a program the gate's walk steps through to the launch
    (gate.unplaced_before: launch/runners.py's RUNNERS and POLICY_READERS, timeout, flock with a program, a local
    mpirun; irev81: srun / strace past a long option not listed), so the interpreter after it is the launch's (irev78:
    `nice -n 5 /srv/bin/python -m sglang.launch_server`, `timeout 600 ...`, `systemd-run --scope ...`, `sudo -E ...`
    were allowed by the gate with the interpreter of the VIRTUAL_ENV or stackcheck's own audited, as for a program
    that names none); None for any other word or where its reading does not place the command (the gate refuses the
    launch there)."""
    head = posixpath.basename(args[0]) if args else ""
    if not head or PY_NAME.match(head) or head in ("uv", "conda", "mamba", "micromamba"):
        return None  # (the launch's own interpreter or environment tool: read by interpreter_of_command)
    from stackcheck.launch.runners import POLICY_READERS, RUNNERS, chain_end, read_flock, read_policy, read_runner

    if head == "timeout":
        end = chain_end(args, 0)[0]
        return end if 0 < end < len(args) else None
    if head == "flock":
        got = read_flock(args, 0)
        return got.at if got.kind == "argv" and got.at else None
    if head in RUNNERS or head in POLICY_READERS:
        reading = read_runner(args, 0) if head in RUNNERS else read_policy(args, 0)
        if reading.command is None and head in RUNNERS and not RUNNERS[head].every_long_known:
            # (irev81) srun / strace with a long option not listed, whose value may be the next word: the gate's walk
            # passes over the option words to the program there (a word that is none it refuses)
            unsure = reading.unsure or ""
            at = 1 if unsure.startswith("whether") else len(args)
            while at < len(args) and args[at].startswith("-"):
                at += 1
            return at if at < len(args) else None
        return reading.command if reading.command and reading.command < len(args) else None
    from stackcheck.launch.elsewhere import _MPI, command_at

    if head in _MPI:  # (irev81: a local mpirun -np 1, where the gate's walk steps: elsewhere.command_at)
        place = command_at(args, 0)
        return place if place and place < len(args) else None
    return None


def _absolute(path: str, cwd: str) -> str:
    return path if path.startswith("/") else posixpath.normpath(posixpath.join(cwd, path))


_PIP_LAUNCHER = _lazy(r"""^'''exec' (?:"([^"]+)"|(\S+)) "\$0" "\$@"\s*$""")


def script_interpreter(view: FileView, script: str, env: Mapping[str, str], cwd: str | None = None) -> str | None:
    """The Python a console script runs with, from its first lines: `#!/path/python3`, `#!/usr/bin/env
    python3` (looked up on the command's PATH), or pip's `#!/bin/sh` launcher for interpreter paths too
    long for a shebang (`'''exec' "/long/path/python" "$0" "$@"`). None for anything else."""
    try:
        head = view.read_bytes(script, SCRIPT_HEAD)
    except (OSError, ValueError):
        return None
    if not head.startswith(b"#!"):
        return None
    lines = head.decode("utf-8", errors="replace").splitlines()
    words = lines[0][2:].strip().split()
    if not words:
        return None
    interp = words[0]
    if posixpath.basename(interp) == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        if rest and PY_NAME.match(posixpath.basename(rest[0])):
            return which(view, rest[0], env.get("PATH"), cwd)  # (env's execvp: a relative entry is cwd's)
        return None
    if PY_NAME.match(posixpath.basename(interp)):
        return interp
    if posixpath.basename(interp) == "sh" and len(lines) > 1:
        m = _PIP_LAUNCHER.match(lines[1])
        if m:
            path = m.group(1) or m.group(2)
            if PY_NAME.match(posixpath.basename(path)):
                return path
    return None


#: uv run options that take a value (as a separate word); anything else that starts with "-" is a flag
_UV_VALUE_OPTIONS = frozenset(
    {
        "--python", "-p", "--directory", "--project", "--with", "--with-editable", "--with-requirements",
        "--extra", "--group", "--no-group", "--only-group", "--package", "--env-file", "--index",
        "--default-index", "--index-url", "-i", "--extra-index-url", "--find-links", "-f", "--upgrade-package",
        "-P", "--reinstall-package", "--index-strategy", "--keyring-provider", "--resolution", "--prerelease",
        "--fork-strategy", "--exclude-newer", "--link-mode", "--config-setting", "-C",
        "--no-build-isolation-package", "--no-binary-package", "--no-build-package", "--refresh-package",
        "--cache-dir", "--config-file", "--color", "--python-preference", "--python-platform",
        "--allow-insecure-host", "--no-sources-package", "--exclude-newer-package", "--torch-backend",
    }
)  # fmt: skip
_UV_EPHEMERAL = ("--isolated", "--no-project", "--script", "--gui-script", "--no-sync-isolated")


def _uv_run(
    args: list[str], env: dict[str, str], view: FileView, cwd: str, notes: list[str]
) -> tuple[str, str, dict[str, str]] | None:
    opts: dict[str, str] = {}
    flags: set[str] = set()
    i = 0
    seen_run = False
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if not a.startswith("-"):
            if not seen_run:
                if a != "run":
                    notes.append(f"uv {a}: only `uv run` names an environment")
                    return None
                seen_run = True
                i += 1
                continue
            break
        key, eq, value = a.partition("=")
        if eq:
            opts[key] = value
        elif a in _UV_VALUE_OPTIONS and i + 1 < len(args):
            opts[a] = args[i + 1]
            i += 1
        else:
            flags.add(a)
        i += 1
    if not seen_run:
        notes.append("uv without `run`: no environment to read")
        return None
    rest = args[i:]
    if rest and rest[0].startswith("/") and PY_NAME.match(posixpath.basename(rest[0])):
        return rest[0], "uv run (the interpreter it is given)", env
    python = opts.get("--python") or opts.get("-p")
    if python and "/" in python:
        path = _absolute(python, cwd)
        if is_dir(view, path):
            exe = _prefix_interpreter(view, path)
            if exe is not None:
                return exe, "uv run --python", env
        elif is_file(view, path):
            return path, "uv run --python", env
    ephemeral = [f for f in _UV_EPHEMERAL if f in flags]
    if ephemeral or "--with" in opts or "--with-requirements" in opts:
        what = ephemeral[0] if ephemeral else "--with"
        notes.append(f"uv run {what}: uv makes the environment when it runs; it cannot be named beforehand")
        return None
    start = _absolute(opts.get("--project") or opts.get("--directory") or cwd, cwd)
    root = _uv_project_root(view, start)
    if root is not None:
        venv = env.get("UV_PROJECT_ENVIRONMENT") or ".venv"
        prefix = _absolute(venv, root)
        exe = _prefix_interpreter(view, prefix)
        if exe is None:
            notes.append(f"uv run: the project environment {prefix} does not exist yet (uv would create it)")
            return None
        return exe, f"uv run (project environment {prefix})", env
    if "--active" in flags or env.get("VIRTUAL_ENV"):
        venv_dir = env.get("VIRTUAL_ENV")
        exe = _prefix_interpreter(view, venv_dir) if venv_dir else None
        if exe is not None:
            return exe, "uv run (the active VIRTUAL_ENV)", env
    directory = start
    while True:
        exe = _prefix_interpreter(view, posixpath.join(directory, ".venv"))
        if exe is not None:
            return exe, f"uv run ({directory}/.venv)", env
        parent = posixpath.dirname(directory)
        if parent == directory:
            break
        directory = parent
    notes.append("uv run: no project, no active environment and no .venv: uv would pick an interpreter itself")
    return None


def _uv_project_root(view: FileView, start: str) -> str | None:
    """The nearest directory with a pyproject.toml, or above it the workspace root that lists it (a file
    with a [tool.uv.workspace] table): where uv puts the project's .venv."""
    directory = start
    project: str | None = None
    while True:
        pyproject = posixpath.join(directory, "pyproject.toml")
        if is_file(view, pyproject):
            if project is None:
                project = directory
            try:
                text = view.read_bytes(pyproject, 256 * 1024).decode("utf-8", errors="replace")
            except (OSError, ValueError):
                text = ""
            if "[tool.uv.workspace]" in text:
                return directory
        parent = posixpath.dirname(directory)
        if parent == directory:
            return project
        directory = parent


def _conda_run(
    tool: str, resolved: str | None, args: list[str], env: dict[str, str], view: FileView, notes: list[str]
) -> tuple[str, str, dict[str, str]] | None:
    if not args or args[0] != "run":
        notes.append(f"{tool} {args[0] if args else ''}: only `{tool} run` names an environment".replace("  ", " "))
        return None
    name: str | None = None
    prefix: str | None = None
    i = 1
    while i < len(args):
        a = args[i]
        if a == "--":
            break
        if not a.startswith("-"):
            break
        key, eq, value = a.partition("=")
        if key in ("-n", "--name", "-p", "--prefix", "--cwd", "-a", "--attach", "-r", "--root-prefix"):
            if not eq:
                if i + 1 >= len(args):
                    break
                value = args[i + 1]
                i += 1
            if key in ("-n", "--name"):
                name = value
            elif key in ("-p", "--prefix"):
                prefix = value
        i += 1
    if prefix is None:
        if name is None:
            active = env.get("CONDA_PREFIX")
            if tool != "micromamba" and active:
                prefix = active
            else:
                notes.append(f"{tool} run without -n/-p: the environment is not named")
                return None
        else:
            prefix = conda_env_prefix(view, tool, name, resolved, env)
            if prefix is None:
                notes.append(f"{tool} run -n {name}: no such environment in the usual places")
                return None
    exe = _prefix_interpreter(view, prefix)
    if exe is None:
        notes.append(f"{tool} run: {prefix} has no bin/python")
        return None
    rule = f"{tool} run -n {name}" if name else f"{tool} run -p {prefix}"
    return exe, rule, env


def conda_env_prefix(view: FileView, tool: str, name: str, resolved: str | None, env: Mapping[str, str]) -> str | None:
    """Where a named conda / mamba / micromamba environment lives, found as conda looks: the envs dirs
    (CONDA_ENVS_PATH, CONDA_ENVS_DIRS, <root>/envs, ~/.conda/envs), then conda's environments.txt."""
    roots: list[str] = []
    if resolved:
        try:
            real = view.realpath(resolved)
        except (OSError, ValueError):
            real = resolved
        parent = posixpath.dirname(posixpath.dirname(real))  # <root>/bin/conda, <root>/condabin/conda
        if tool != "micromamba":
            roots.append(parent)
    for var in ("CONDA_EXE", "MAMBA_EXE"):
        value = env.get(var)
        if value and tool != "micromamba":
            roots.append(posixpath.dirname(posixpath.dirname(value)))
    for var in ("MAMBA_ROOT_PREFIX", "CONDA_ROOT"):
        if env.get(var):
            roots.append(env[var])
    roots = list(dict.fromkeys(r for r in roots if r and r != "/"))
    if name == "base":
        return next((r for r in roots if _prefix_interpreter(view, r) is not None), None)
    home = env.get("HOME") or ""
    dirs: list[str] = []
    for var in ("CONDA_ENVS_PATH", "CONDA_ENVS_DIRS"):
        dirs += [d for d in (env.get(var) or "").split(":") if d]
    dirs += [posixpath.join(r, "envs") for r in roots]
    if home:
        dirs += [posixpath.join(home, ".conda", "envs"), posixpath.join(home, "micromamba", "envs")]
    for d in dict.fromkeys(dirs):
        candidate = posixpath.join(d, name)
        if is_dir(view, candidate):
            return candidate
    if home:
        for line in _environments_txt(view, home):
            if posixpath.basename(line.rstrip("/")) == name and is_dir(view, line):
                return line
    return None


def _environments_txt(view: FileView, home: str) -> list[str]:
    """conda's list of the environments it made (~/.conda/environments.txt), one prefix a line."""
    try:
        text = view.read_bytes(posixpath.join(home, ".conda", "environments.txt"), 256 * 1024)
    except (OSError, ValueError):
        return []
    return [
        line.strip() for line in text.decode("utf-8", errors="replace").splitlines() if line.strip().startswith("/")
    ]
