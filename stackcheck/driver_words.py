"""Which command lines read this box's driver, judged from their words alone, before anything else is imported:
`python -m stackcheck` (stackcheck.__main__) and stackcheck.cli start the driver's start (stackcheck.probes.nvml_early)
from it. Imports nothing."""

from __future__ import annotations

#: the verbs that read this box's driver and GPUs unless told not to (see reads_driver)
DRIVER_VERBS = frozenset({"audit", "probe", "plan", "recommend", "gate", "explain"})


def reads_driver(verb: str | None, argv: list[str]) -> bool:
    """Whether this command line will run the NVML probe, judged from the words alone before the parser is
    built: a probing verb without --help, --facts, --host-facts, both --assume-gpu and --assume-driver
    (or, for explain, --assume-gpu). The options may be abbreviated, as argparse allows; the server command
    after `--` is not read. A wrong guess only costs a started NVML that nobody reads."""
    if verb not in DRIVER_VERBS:
        return False
    words = argv[: argv.index("--")] if "--" in argv else argv

    def given(option: str, shortest: int) -> bool:
        return any(len(w.split("=", 1)[0]) >= shortest and option.startswith(w.split("=", 1)[0]) for w in words)

    if "-h" in words or given("--help", 4) or given("--facts", 4) or given("--host-facts", 4):
        return False
    gpu, driver = given("--assume-gpu", 10), given("--assume-driver", 10)
    return not (gpu and (driver or verb == "explain"))


def verb_of(argv: list[str]) -> str | None:
    """The command line's verb: its first word that is not an option."""
    return next((a for a in argv if not a.startswith("-")), None)
