import sys

from stackcheck.driver_words import reads_driver, verb_of

# the driver's start first, from the command line's words alone, before the command line's own imports
# (stackcheck.cli, whose main() then finds it started)
if reads_driver(verb_of(sys.argv[1:]), sys.argv[1:]):
    from stackcheck.probes import nvml_early

    nvml_early.start(usage=verb_of(sys.argv[1:]) == "gate")

from stackcheck.cli import run

run()
