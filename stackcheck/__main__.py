"""The command's entry point, for `python -m stackcheck` and the installed `stackcheck` script alike: the driver's
start first, from the command line's words alone, before the command line's own imports (stackcheck.cli, whose
run() then finds it started). The cyclic collector is paused before anything else, as run() pauses it for the
whole program (stackcheck.cli._paused_collector says why): the imports before run(), and the forked NVML reader,
which inherits the collector's state and imports pynvml and its reader, then run no collections (a served gate on
the 2-core box, callgrind: ~1.3 M instructions of collections in the command's main thread and ~4 M in the
reader's, that the reader forked from cli.main_inner, after run() had paused the collector, did not spend)."""

import gc
import sys

from stackcheck.driver_words import reads_driver, verb_of


def main() -> None:
    gc.disable()  # (run() disables it again and leaves with it paused; gate --watch turns it back on)
    args = sys.argv[1:]
    try:
        if reads_driver(verb_of(args), args):
            from stackcheck.probes import nvml_early

            nvml_early.start(usage=verb_of(args) == "gate")
        from stackcheck.cli import run

        run()
    except KeyboardInterrupt:
        _interrupted()


def _interrupted() -> None:
    """Ctrl-C outside the command (irobust3): in the imports and the driver's start before cli.run(), or in run()'s
    exit after the command, where cli's own handler (one line, exit 130) does not reach; it printed a traceback and the
    process died of the signal. Now the same line and exit status as cli's, the early NVML start dropped, what the
    command wrote to stdout flushed."""
    import contextlib
    import os

    early = sys.modules.get("stackcheck.probes.nvml_early")
    with contextlib.suppress(Exception, KeyboardInterrupt):
        if early is not None:
            early.discard()
    with contextlib.suppress(OSError, ValueError, KeyboardInterrupt):
        if sys.stdout is not None:
            sys.stdout.flush()  # (what the command wrote stays written)
    with contextlib.suppress(OSError, ValueError, KeyboardInterrupt):
        if sys.stderr is not None:
            sys.stderr.write("stackcheck: interrupted\n")
            sys.stderr.flush()
    os._exit(130)


if __name__ == "__main__":
    main()
