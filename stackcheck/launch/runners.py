"""The programs that run a command after their own options without a shell (`nice -n 5 CMD`, `taskset -c 0-7 CMD`,
`numactl --cpunodebind=0 CMD`, `srun -N1 CMD`, `chrt -f 50 CMD`, `ionice -c 2 CMD`, `stdbuf -oL CMD`): each execvp's
the word after its options (and taskset's mask, chrt's priority), so a shell assignment there (`nice A=1 python ...`)
is looked up as a program and the server never starts ('No such file or directory', exit 127 or the runner's own
failure; setsid, GNU time and flock likewise). The gate found the Python command after such a word and judged it
(irobust5). Read here: where each runner's command stands, from the options each one documents, and where that
cannot be told (an option not listed, whose value may be the next word) whether an assignment word stands before the
launch at all.

Sources (manuals and option tables, read; no code of theirs is here): coreutils nice (getopt "+n:" with
--adjustment, and the obsolete `-N` adjustment), stdbuf ("+i:o:e:", --input/--output/--error); util-linux
taskset(1) (-a -c -p, then MASK and the command; with -p a pid, no command), chrt(1) (-T -P -D take a value; the
priority before the command; -p / -m run none), ionice(1) (-c -n take a value; -p -P -u name processes, no
command); numactl/numactl numactl.c (its `opts` table: getopt_long with a `+` string built from it); Slurm srun(1)
(its short options with an argument; long options as `--name=value` or `--name value`)."""

from __future__ import annotations

import os
import re

from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Sequence

#: a shell's assignment word (NAME=VALUE)
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


class Runner(NamedTuple):
    """How one program reads its options before the command it runs. (A NamedTuple, not a dataclass: importing
    dataclasses, with inspect, ast, dis and tokenize, cost each gate --dry-run ~42 M instructions and each
    recommend ~34 M; iperf35.)"""

    short_value: str  # short options that take a value (`-n 5`, `-n5`)
    short_plain: str  # short options without one
    long_value: frozenset[str]  # long options that take one (`--name=v`, `--name v`)
    long_plain: frozenset[str]
    positional: int = 0  # words after the options before the command (taskset's MASK, chrt's priority)
    no_command: str = ""  # short options after which no command is run (a pid mode)
    no_command_long: frozenset[str] = frozenset()
    every_long_known: bool = True  # False: an unlisted long option may take the next word (srun)


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


RUNNERS: dict[str, Runner] = {
    "nice": Runner("n", "", _f("adjustment"), _f("help", "version")),
    "stdbuf": Runner("ioe", "", _f("input", "output", "error"), _f("help", "version")),
    "taskset": Runner("", "achV", _f(), _f("all-tasks", "cpu-list", "help", "version"), 1, "p", _f("pid")),
    "chrt": Runner(
        "TPD", "abdefiorRvhV", _f("sched-runtime", "sched-period", "sched-deadline"),
        _f("all-tasks", "batch", "deadline", "fifo", "idle", "other", "rr", "reset-on-fork", "verbose", "help",
           "version", "ext"),
        1, "pm", _f("pid", "max"),
    ),
    "ionice": Runner("cn", "thV", _f("class", "classdata"), _f("ignore", "help", "version"), 0, "pPu",
                     _f("pid", "pgid", "uid")),
    "numactl": Runner(
        "iwpPcNCmSfoLMI", "slHtdDuTVab",
        _f("interleave", "weighted-interleave", "preferred", "preferred-many", "cpubind", "cpunodebind",
           "physcpubind", "membind", "shm", "file", "offset", "length", "shmmode", "shmid"),
        _f("localalloc", "strict", "dump", "dump-nodes", "huge", "touch", "verify", "all", "balancing"),
        0, "sH", _f("show", "hardware"),
    ),
    # (irobust5, from their manuals) util-linux setsid(1): -c/--ctty, -f/--fork, -w/--wait, then the program; GNU
    # time(1): getopt "+af:o:pqvV" (-f FORMAT, -o FILE) and their long forms; util-linux flock(1): -w SECONDS and
    # -E CODE take a value, then the lock FILE and the command (`flock FILE -c STRING` runs a shell string: read as
    # an option not listed, unknown where an assignment follows)
    "setsid": Runner("", "cfwhV", _f(), _f("ctty", "fork", "wait", "help", "version")),
    "time": Runner("fo", "apqvV", _f("format", "output"), _f("append", "portability", "quiet", "verbose", "help",
                                                              "version")),
    "flock": Runner("wE", "sxeunoFhV", _f("timeout", "conflict-exit-code"),
                    _f("shared", "exclusive", "unlock", "nonblock", "nb", "close", "no-fork", "verbose", "help",
                       "version"), 1),
    "srun": Runner(
        "ABcCdDeGiJLmMnNopqStTwWx", "EhHjklOQsuvVXZ",
        _f("account", "nodes", "ntasks", "cpus-per-task", "gres", "gpus", "gpus-per-node", "gpus-per-task",
           "partition", "job-name", "time", "mem", "mem-per-cpu", "mem-per-gpu", "qos", "export", "chdir", "output",
           "error", "input", "nodelist", "exclude", "constraint", "mpi", "ntasks-per-node", "distribution",
           "cpu-bind", "reservation", "dependency", "jobid", "container", "container-image", "container-mounts",
           "container-workdir", "container-name", "network"),
        _f("pty", "overlap", "overcommit", "quiet", "verbose", "unbuffered", "label", "no-kill", "exact", "whole",
           "disable-status", "test-only", "spread-job", "help", "usage", "version", "container-remap-root",
           "no-container-mount-home", "container-writable"),
        every_long_known=False,
    ),
}  # fmt: skip


class Reading(NamedTuple):
    """Where the command of the runner at argv[at] stands (None: it runs none, or where is not known)."""

    command: int | None
    unsure: str | None = None  # why the command's place is not known (an option not listed, its value maybe next)


def _long(spec: Runner, word: str) -> tuple[str, bool] | None:
    """(the long option `word` names, whether it takes a value) by getopt_long's reading of an unambiguous prefix;
    None where it names none or several."""
    name = word[2:].split("=", 1)[0]
    names = spec.long_value | spec.long_plain | spec.no_command_long
    if name in names:
        return name, name in spec.long_value
    found = [n for n in names if n.startswith(name)] if name else []
    if len(found) == 1 and spec.every_long_known:
        return found[0], found[0] in spec.long_value
    return None


def read_runner(argv: Sequence[str], at: int) -> Reading:
    """Where the command of the runner argv[at] (a RUNNERS program) stands."""
    spec = RUNNERS[os.path.basename(argv[at])]
    i, n = at + 1, len(argv)
    while i < n:
        word = argv[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or word == "-":
            break
        if os.path.basename(argv[at]) == "nice" and re.fullmatch(r"-[+-]?\d+", word):
            i += 1  # (nice's obsolete `-N` adjustment)
            continue
        if word.startswith("--"):
            got = _long(spec, word)
            if got is None:
                if "=" in word or spec.every_long_known:
                    if spec.every_long_known:
                        return Reading(None, f"`{word}` is no option of {os.path.basename(argv[at])} the gate reads")
                    i += 1
                    continue
                return Reading(None, f"whether `{word}` takes the next word as its value is not read")
            name, takes = got
            if name in spec.no_command_long:
                return Reading(None)
            i += 2 if takes and "=" not in word else 1
            continue
        j = 1
        while j < len(word):  # a cluster of short options (`-ac`, `-n5`)
            letter = word[j]
            if letter in spec.no_command:
                return Reading(None)
            if letter in spec.short_value:
                i += 1 if j + 1 < len(word) else 2
                break
            if letter not in spec.short_plain:
                return Reading(None, f"`-{letter}` is no option of {os.path.basename(argv[at])} the gate reads")
            j += 1
        else:
            i += 1
    if spec.positional and os.path.basename(argv[at]) == "chrt" and i < n and not argv[i].isdigit():
        return Reading(i)  # (no priority given: the word is the command, or chrt refuses it as one)
    i += spec.positional
    return Reading(i if i < n else None)
