"""The command line: parse into options, build the parts, run the core, return an int.

Each verb lives in its own module (commands/<verb>.py) with `add_arguments(parser)` and `run(args) -> int`."""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator, Sequence

from stackcheck.driver_words import reads_driver, verb_of
from stackcheck.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, StackcheckError
from stackcheck.lean_typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import argparse
    from typing import NoReturn

# verb -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "audit": ("stackcheck.commands.audit", "probe this box (or read --facts) and say which serving features work"),
    "probe": ("stackcheck.commands.probe", "print the facts about this box: driver, GPUs, toolkits, packages, system"),
    "plan": ("stackcheck.commands.plan", "ordered upgrade steps with commands, and what each unblocks"),
    "recommend": (
        "stackcheck.commands.recommend",
        "the launch that works and is fastest here: plan, command line, why",
    ),
    "gate": ("stackcheck.commands.gate", "refuse to start a server whose features are blocked, else exec it"),
    "explain": ("stackcheck.commands.explain", "what a feature needs on an architecture, release by release"),
    "triage": ("stackcheck.commands.triage", "find the root cause of a crash in a server log"),
    "fleet": ("stackcheck.commands.fleet", "summarise many saved reports: stacks, drift, upgrade waves"),
    "diff": ("stackcheck.commands.diff", "what changed between two reports of a box, or a report and the box now"),
    "facts": ("stackcheck.commands.facts", "facts files: a commented template to start from, or check one"),
    "manifests": ("stackcheck.commands.manifests", "validate manifest files (shipped or your own)"),
}


def build_parser(only: str | None = None, full: bool = False) -> argparse.ArgumentParser:
    """The argument parser (stackcheck.commands.parser.build_parser): of the verb `only`, else of the verb names."""
    from stackcheck.commands.lean_gettext import import_argparse

    import_argparse()  # (its messages without gettext and locale where no catalog can exist)
    from stackcheck.commands.parser import build_parser as build

    return build(COMMANDS, only, full)


def main_inner(argv: Sequence[str]) -> int:
    argv = list(argv)
    verb = verb_of(argv)
    if reads_driver(verb, argv):
        # the driver's start is the longest wait of an audit and NVML calls release the interpreter lock: it
        # starts now, and everything else (imports, manifests, the other probes, the command line) runs
        # while it does; the NVML probe adopts the result (`python -m stackcheck` started it before this module
        # was imported, stackcheck.__main__: a second start while one is pending does nothing)
        from stackcheck.probes import nvml_early

        nvml_early.start(usage=verb == "gate")  # the gate's GPU-usage reading too, in the same session
    elif verb == "plan":
        return _plan(argv)
    if verb in _FAST:
        args = _fast_args(argv)
        if args is not None:  # (its namespace is argparse's without argparse: the verb's module imports none either)
            module = importlib.import_module(COMMANDS[verb][0])
            return int(module.run(args))
    return _verb(argv, verb)


#: what argparse gives `stackcheck audit` and `stackcheck gate` for every option not on the command line
#: (tests/test_cli_fast_args.py compares the whole namespace with the parser's, on listed and generated command lines)
_FACTS_DEFAULTS: dict[str, object] = {
    "version": None, "facts": None, "manifests": [], "strict": False, "deep": False, "timeout": 8.0, "python": None,
    "env_dir": None, "root": None, "image": None, "platform": None, "host_facts": None, "assume_gpu": None,
    "assume_driver": None, "assume_interconnect": None, "started_by": None,
}  # fmt: skip
_AUDIT_DEFAULTS: dict[str, object] = {
    **_FACTS_DEFAULTS, "command": "audit", "format": None, "output": None, "sources": False,
}  # fmt: skip
_GATE_DEFAULTS: dict[str, object] = {
    **_FACTS_DEFAULTS, "command": "gate", "require": [], "allow_unknown": False, "allow": [], "strict_features": False,
    "dry_run": False, "format": "text", "quiet": False, "verbose": False, "advise": False, "watch": False, "log": None,
    "log_keep": 8.0, "drain": 2.0, "ready_pattern": "The server is fired up", "server_command": [], "cwd": None,
}  # fmt: skip
#: verb -> (its defaults, option -> (the namespace's name, whether it takes a value), the registry of its formats
#: in stackcheck.render, whether a server command follows `--`)
_FAST: dict[str, tuple[dict[str, object], dict[str, tuple[str, bool]], str, bool]] = {
    "audit": (
        _AUDIT_DEFAULTS,
        {"--format": ("format", True), "--facts": ("facts", True), "--deep": ("deep", False),
         "--sources": ("sources", False), "--strict": ("strict", False)},
        "REPORT_FORMATS",
        False,
    ),
    "gate": (
        _GATE_DEFAULTS,
        {"--format": ("format", True), "--facts": ("facts", True), "--dry-run": ("dry_run", False),
         "--deep": ("deep", False), "--strict": ("strict", False), "--allow-unknown": ("allow_unknown", False),
         "--strict-features": ("strict_features", False), "--quiet": ("quiet", False),
         "--verbose": ("verbose", False), "--advise": ("advise", False)},
        "GATE_FORMATS",
        True,
    ),
}  # fmt: skip


def _fast_args(argv: list[str]) -> argparse.Namespace | None:
    """The arguments the parser gives `stackcheck audit ...` or `stackcheck gate ... -- COMMAND` (argv starts with the
    verb), read without building the parser (~2-3 ms of the main thread's CPU on the 2-core box, which a probed audit
    or gate spent while the probes ran beside it, on the interpreter lock they need) for the command lines they mostly
    have: the options of _FAST (a format of the verb's own, not an old name: the parser warns of those; --facts; the
    flags), spelled in full, once each, a value a word of its own or after `=`, neither empty nor starting with `-`;
    for the gate, all of them before a `--` that a command follows (the parser keeps the `--` and every word after it
    as the server command). None for anything else: the parser reads it, and says what is wrong with it."""
    fast = _FAST.get(argv[0]) if argv else None
    if fast is None:
        return None
    defaults, read, registry, command = fast
    out: dict[str, object] = {k: list(v) if isinstance(v, list) else v for k, v in defaults.items()}
    words = argv[1:]
    if command:
        if "--" not in words:
            return None
        at = words.index("--")
        if at == len(words) - 1:
            return None  # (nothing after the `--`: the parser's answer, and the gate's error)
        words, out["server_command"] = words[:at], words[at:]
    seen: set[str] = set()
    i = 0
    while i < len(words):
        name, eq, value = words[i].partition("=")
        how = read.get(name)
        if how is None or name in seen:
            return None
        seen.add(name)
        dest, takes = how
        i += 1
        if not takes:
            if eq:
                return None
            out[dest] = True
            continue
        if not eq:
            if i >= len(words):
                return None
            value = words[i]
            i += 1
        if not value or value.startswith("-"):
            return None
        if dest == "format":
            import stackcheck.render

            if value not in getattr(stackcheck.render, registry):
                return None
        out[dest] = value
    from types import SimpleNamespace

    return cast("argparse.Namespace", SimpleNamespace(**out))


def _plan(argv: list[str]) -> int:
    """`stackcheck plan`: of saved facts, the answer kept for this command line when there is one (printed before
    any parser is built or any manifest read: stackcheck.assembly.plan_cache, Answer), else the ordinary path,
    whose answer is kept when it wrote nothing to standard error."""
    from stackcheck.assembly import plan_cache

    answer = plan_cache.answer_for(argv)
    if answer is None:
        return _plan_verb(argv)
    kept = plan_cache.read_answer(answer)
    if kept is not None:
        from stackcheck.atomic import write_stdout

        write_stdout(kept[0])
        return kept[1]
    watched = plan_cache.Watched(sys.stderr)
    plan_cache.PENDING[:] = [answer]
    sys.stderr = watched
    try:
        code = _plan_verb(argv)
    finally:
        if sys.stderr is watched:
            sys.stderr = watched.stream
        plan_cache.PENDING.clear()
    if not watched.used:
        plan_cache.keep_answer(answer, code)
    return code


def _plan_verb(argv: list[str]) -> int:
    """The ordinary path of `plan`: its arguments read without the parser where they can be (commands.plan.args_of),
    else by the parser."""
    from stackcheck.commands import plan

    args = plan.args_of(argv)
    return _verb(argv, "plan") if args is None else int(plan.run(args))


def _verb(argv: list[str], verb: str | None) -> int:
    """The ordinary path: the parser of the verb, its arguments, its module's run()."""
    parser = build_parser(verb if verb in COMMANDS else None)
    if verb == "gate":
        from stackcheck.commands.parser import gate_separator

        gate_separator(parser, argv[argv.index(verb) + 1 :])
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    module = importlib.import_module(COMMANDS[args.command][0])
    return int(module.run(args))


def _say(text: str) -> None:
    """One diagnostic line on stderr, secrets masked and terminal-safe (a message quotes the value it could not
    read: a file name, a value from the box or the command line may be a token or hold controls); a closed or
    broken stderr loses the line, never the exit status."""
    from stackcheck.redact import message_safe

    try:
        if sys.stderr is not None:
            sys.stderr.write(message_safe(text) + "\n")
            sys.stderr.flush()
    except (OSError, ValueError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """One command; the cyclic garbage collector paused while it runs (see _paused_collector)."""
    if sys.stderr is not None:
        with contextlib.suppress(AttributeError, ValueError):
            sys.stderr.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    with _paused_collector():
        try:
            return _run_main(argv)
        finally:
            _drop_early_nvml()


@contextlib.contextmanager
def _paused_collector() -> Iterator[None]:
    """gc.disable() for one command, the collector's state restored after it. A command builds trees of dicts and
    lists (the manifests, facts, verdicts, the documents) that hold no cycles and are freed by their reference
    counts: the collections their allocations triggered (20-50 a run) walked them again and again and freed
    almost nothing (measured on the 2-core box: ~3-4 ms CPU of an audit --facts or a gate of saved facts, ~4
    of a live audit, ~8 of a live gate, ~7 of a plan with --want; 0-5 objects collected by the older
    generations). What outlives the command turns it back on: `gate --watch` before it watches its server; the
    program (run()) pauses it before main() and leaves with it paused."""
    import gc

    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def run() -> NoReturn:
    """The program (the `stackcheck` script, `python -m stackcheck`): main(), its output flushed, then the
    process leaves without tearing the interpreter down: freeing every module and the parsed manifests
    cost ~10 ms of each run, for nothing. Where something waits for the exit through the threading module (a
    thread that is not a daemon, a callback of threading's own exit hook) the ordinary exit is taken. The atexit
    callbacks (a coverage tool's; one a site hook registered: certifi.where(), called from a .pth file, registers
    one, certifi 2026.05.20 core.py:42, so every command of such an interpreter took the ordinary exit and its
    teardown, 66-90 ms on the loaded 2-core box, bench/exit_cost.py) are run here, as the ordinary exit runs
    them (atexit._run_exitfuncs: the last registered first, an error printed and passed over), the streams
    flushed again, and then the process leaves. The collector is paused
    from here to the exit (main() alone turns it back on after the command: the collection that then comes
    with the next allocation walks everything the command left, ~5 ms for a program about to leave)."""
    import gc

    gc.disable()
    code = main()
    if not _flushed():  # a closed or broken stream: the ordinary exit deals with it
        sys.exit(code)
    import atexit
    import os

    threads = sys.modules.get("threading")
    main_thread = threads.main_thread() if threads else None
    others = [t for t in threads.enumerate() if not t.daemon and t is not main_thread] if threads else []
    if others or getattr(threads, "_threading_atexits", None):
        sys.exit(code)
    if atexit._ncallbacks():
        with contextlib.suppress(BaseException):  # (3.10 raises the last callback's error again, once printed)
            atexit._run_exitfuncs()
        if not _flushed():  # (what the callbacks wrote)
            sys.exit(code)
    os._exit(code)


def _flushed() -> bool:
    """sys.stdout and sys.stderr flushed; False where one is closed or broken."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True


def _drop_early_nvml() -> None:
    """An NVML start that no probe adopted (a usage error, a verb that did not probe after all) is dropped,
    so that a later command in this process never reads it; its thread is waited for (briefly) so that the
    interpreter never shuts down while that thread imports a module."""
    early = sys.modules.get("stackcheck.probes.nvml_early")
    if early is not None:
        early.discard()


def _run_main(argv: Sequence[str] | None) -> int:
    try:
        return main_inner(sys.argv[1:] if argv is None else argv)
    except StackcheckError as exc:
        _say(f"stackcheck: error: {exc.message}")
        for extra in getattr(exc, "problems", [])[1:]:
            _say(f"stackcheck: error: {extra}")
        return exc.exit_code
    except KeyboardInterrupt:
        _say("stackcheck: interrupted")
        return 130
    except BrokenPipeError:
        from stackcheck.atomic import discard_stdout

        discard_stdout()  # the reader went away (`| head`): what is still buffered must not fail at exit
        return 0
    except ModuleNotFoundError as exc:
        missing = _missing_dependency(exc)
        if missing is None:
            return _internal_error(exc)
        _say(f"stackcheck: error: broken installation: stackcheck's dependency {missing} is not importable")
        _say(f"stackcheck: reinstall stackcheck with its dependencies, or: python -m pip install {missing}")
        return EXIT_INTERNAL
    except Exception as exc:  # the last line of defence: one line, exit 4, never a traceback by default
        return _internal_error(exc)


#: the top-level modules of stackcheck's runtime dependencies (pyproject.toml's `dependencies`, and jsonschema's
#: own), each with the distribution to install: a missing one is a broken installation, not a bug in stackcheck
DEPENDENCY_MODULES = {
    "pynvml": "nvidia-ml-py",
    "packaging": "packaging",
    "importlib_metadata": "importlib-metadata",
    "rich": "rich",
    "jsonschema": "jsonschema",
    "jsonschema_specifications": "jsonschema-specifications",
    "referencing": "referencing",
    "rpds": "rpds-py",
    "attrs": "attrs",
    "attr": "attrs",
    "typing_extensions": "typing-extensions",
}


def _missing_dependency(exc: ModuleNotFoundError) -> str | None:
    """The distribution to install when `exc` says one of stackcheck's dependencies is missing, else None."""
    name = (exc.name or "").partition(".")[0]
    return DEPENDENCY_MODULES.get(name)


def _internal_error(exc: BaseException) -> int:
    """The last line of defence: one line, exit 4, never a traceback unless STACKCHECK_DEBUG is set."""
    import os

    _say(f"stackcheck: internal error: {type(exc).__name__}: {exc}".splitlines()[0])
    _say("stackcheck: this is a bug; rerun with STACKCHECK_DEBUG=1 for the traceback")
    if os.environ.get("STACKCHECK_DEBUG"):
        from stackcheck.redact import traceback_lines

        for line in traceback_lines():
            _say(line)
    return EXIT_INTERNAL
