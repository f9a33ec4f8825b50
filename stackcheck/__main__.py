"""The command's entry point, for `python -m stackcheck` and the installed `stackcheck` script alike: the driver's
start first, from the command line's words alone, before the command line's own imports (stackcheck.cli, whose
run() then finds it started)."""

import sys

from stackcheck.driver_words import reads_driver, verb_of


def main() -> None:
    args = sys.argv[1:]
    if reads_driver(verb_of(args), args):
        from stackcheck.probes import nvml_early

        nvml_early.start(usage=verb_of(args) == "gate")
    from stackcheck.cli import run

    run()


if __name__ == "__main__":
    main()
