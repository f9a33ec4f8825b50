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


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


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
    # (imend6: its long options as util-linux sys-utils/flock.c's long_options table lists them, with --wait,
    # --fcntl, --start, --length; read_flock reads where its command stands and whether it runs one)
    "flock": Runner("wE", "sxeunoFhV", _f("timeout", "wait", "conflict-exit-code", "start", "length"),
                    _f("shared", "exclusive", "unlock", "nonblocking", "nb", "close", "no-fork", "verbose", "fcntl",
                       "help", "version"), 1),
    # (igap54) strace 6.1: getopt "+a:Ab:cCdDe:E:fFhiI:kno:O:p:P:qrs:S:tTu:U:vVwxX:yYzZ" (read from the binary on
    # this box); long options from `strace --help` (those with a required value; one not listed may take the next
    # word); -p / --attach traces a running process, no command. -E / -u are read in launch/elsewhere.py (opaque).
    "strace": Runner(
        "abeEIoOpPsSuUX", "AcCdDfFhiknqrtTvVwxyzZ",
        _f("abbrev", "attach", "columns", "const-print-style", "env", "fault", "inject", "interruptible", "output",
           "raw", "read", "signal", "status", "string-limit", "summary-columns", "summary-sort-by",
           "summary-syscall-overhead", "trace", "trace-path", "user", "verbose", "write"),
        _f("debug", "failed-only", "follow-forks", "help", "instruction-pointer", "no-abbrev", "output-append-mode",
           "output-separately", "seccomp-bpf", "stack-traces", "successful-only", "summary", "summary-only",
           "summary-wall-clock", "syscall-number", "version"),
        0, "p", _f("attach"), every_long_known=False,
    ),
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


#: Slurm 26.05.3's srun long options (src/common/slurm_opt.c: common_options :4382, each entry with a `set_func` or
#: `set_func_srun` goes into the table slurm_option_table_create builds, :4558-4605, which src/srun/opt.c hands to
#: getopt_long, :709): by how each takes a value. getopt_long takes an exact name, else a prefix that names one
#: entry; a prefix naming several is "ambiguous" and srun exits. SPANK plugins (pyxis: --container-image, ...) add
#: entries of their own at run time (spank_option_table_create, :4622), which no table here holds.
SRUN_LONG_VALUE = _names(
    "accel-bind account acctg-freq autocomplete bb bbf bcast-exclude begin chdir cluster "
    "cluster-constraint clusters comment constraint container container-id container-type context "
    "core-spec cores-per-socket cpu-bind cpu-freq cpu_bind cpus-per-gpu cpus-per-task deadline delay-boot "
    "dependency distribution epilog error exclude export extra extra-node-info gpu-bind gpu-freq gpus "
    "gpus-per-node gpus-per-socket gpus-per-task gres gres-flags het-group hint ignore-signals input "
    "job-name jobid licenses mail-type mail-user mcs-label mem mem-bind mem-per-cpu mem-per-gpu "
    "mem-update mincpus mpi msg-timeout network nodefile nodelist nodes ntasks ntasks-per-core "
    "ntasks-per-gpu ntasks-per-node ntasks-per-socket ntasks-per-tres open-mode output pack-group "
    "partition prefer priority profile prolog qos relative reservation resources segment signal "
    "slurmd-debug sockets-per-node switches task-epilog task-prolog tasks-per-node thread-spec threads "
    "threads-per-core time time-min tmp treewidth tres-bind tres-per-task wait wckey"
)
SRUN_LONG_PLAIN = _names(
    "async consolidate-segments contiguous debugger-test disable-status exact help hold interactive label "
    "multi-prog no-allocate overcommit oversubscribe parsable preserve-env quiet quit-on-interrupt reboot "
    "spread-job spread-segments stepmgr test-only unbuffered usage use-min-nodes verbose version "
    "wait-for-children whole"
)
SRUN_LONG_OPTIONAL = _names(  # (a value only as --name=value)
    "bcast compress exclusive external-launcher immediate kill-on-bad-exit nice no-kill oom-kill-step "
    "overlap propagate pty resv-ports send-libs x11"
)


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


def srun_long(word: str) -> tuple[str, ...]:
    """The srun long options the word `--name[=value]` names as getopt_long reads it (igap53): the exact name, else
    every entry it is a prefix of, among Slurm's table and the SPANK options listed for srun in RUNNERS; () for none
    (a SPANK option not listed, or srun rejects it); more than one: ambiguous (srun exits, "is ambiguous")."""
    name = word[2:].split("=", 1)[0]
    spec = RUNNERS["srun"]
    names = SRUN_LONG_VALUE | SRUN_LONG_PLAIN | SRUN_LONG_OPTIONAL | spec.long_value | spec.long_plain
    if not name:
        return ()
    if name in names:
        return (name,)
    return tuple(sorted(n for n in names if n.startswith(name)))


def srun_options(argv: Sequence[str], at: int) -> list[tuple[tuple[str, ...], str | None]]:
    """The long options srun (argv[at]) is given before its command, each as (the names it may be: srun_long, its
    value: after `=`, else the next word for an option that takes one, else None); where the command's place is not
    known (read_runner), every later word is read as one (fail closed: an option seen where it may not be)."""
    end = read_runner(argv, at).command
    words = argv[at + 1 : len(argv) if end is None else end]
    out: list[tuple[tuple[str, ...], str | None]] = []
    for k, word in enumerate(words):
        if word == "--":
            break
        if not word.startswith("--"):
            continue
        names = srun_long(word)
        if "=" in word:
            value: str | None = word.split("=", 1)[1]
        elif len(names) == 1 and names[0] in SRUN_LONG_VALUE | RUNNERS["srun"].long_value:
            value = words[k + 1] if k + 1 < len(words) else ""
        else:
            value = None
        out.append((names, value))
    return out


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
            if got is None and spec is RUNNERS["srun"]:
                names = srun_long(word)
                if len(names) > 1:  # (igap53: srun exits on an ambiguous prefix)
                    return Reading(None, f"`{word.split('=', 1)[0]}` names several srun options ({', '.join(names)}: "
                                   "getopt_long refuses it as ambiguous)")  # fmt: skip
                if names:
                    got = names[0], names[0] in SRUN_LONG_VALUE | spec.long_value
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


#: util-linux flock(1)'s long options that are one option under two names (sys-utils/flock.c long_options: --nb and
#: --nonblocking are 'n', --wait and --timeout are 'w'): getopt_long takes a prefix of both as that option, not as
#: ambiguous (glibc's rule: several matches are ambiguous only where they differ in what they set)
_FLOCK_SAME = {"nb": "nonblocking", "wait": "timeout"}


class FlockReading(NamedTuple):
    """What util-linux flock(1) at argv[at] runs (read_flock): `kind` "argv" (the command's words from `at`),
    "string" (argv[at], run through `$SHELL -c`, /bin/sh where SHELL is unset or empty), "none" (it runs nothing:
    `flock FD`, or -h / -V, which print and exit) or "refused" (it exits with a usage error before running anything:
    `why`)."""

    kind: str
    at: int | None = None
    why: str | None = None


#: (irobust7) the values flock's -w / --timeout and -E / --conflict-exit-code take, as util-linux 2.38.1's flock reads
#: them (run here: `flock -w abc F true` "invalid timeout value", exit 64; -w -1 / inf / nan / 1e19 "cannot set up
#: timer", exit 71; -E 256 / -1 "exit code out of range", -E '5 ' "invalid exit code", exit 64): a timeout is a number
#: strtod reads whole (leading blanks, a sign, decimal or hex, an exponent), not below 0 and below 2**63 seconds; an
#: exit code a decimal integer (leading blanks, a sign) from 0 to 255
_C_BLANKS = " \t\n\v\f\r"
_STRTOD = re.compile(
    r"[" + _C_BLANKS + r"]*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)"
)
_EXIT_CODE = re.compile(r"[" + _C_BLANKS + r"]*[+-]?[0-9]{1,12}")


def _flock_value(name: str, value: str) -> str | None:
    """Why flock exits on the value of its option `name` (timeout, conflict-exit-code) before running anything, None
    where it takes it (or the option is another)."""
    if name == "timeout":
        if value.strip(_C_BLANKS).lstrip("+-").lower() in ("inf", "infinity", "nan"):
            return f"value {value[:40]!r} is no timeout it can set (exit 71)"
        if _STRTOD.fullmatch(value) is None:
            return f"value {value[:40]!r} is no number (exit 64)"
        text = value.strip(_C_BLANKS)
        number = float.fromhex(text) if "x" in text.lower() else float(text)
        if not 0 <= number < 2**63 and number != 0:
            return f"value {value[:40]!r} is no timeout it can set (exit 71)"
        return None
    if name == "conflict-exit-code":
        if _EXIT_CODE.fullmatch(value) is None or not 0 <= int(value.strip(_C_BLANKS)) <= 255:
            return f"value {value[:40]!r} is no exit code from 0 to 255 (exit 64)"
    return None


def read_flock(argv: Sequence[str], at: int) -> FlockReading:
    """Where the command of the flock at argv[at] stands, read as util-linux sys-utils/flock.c reads its argv (no code
    of it is here): getopt_long with "+sexnoFuw:E:hV?" (options only before the first other word; -w / -E take a
    value, attached or the next word) and its long_options (a unique prefix, `--name=value`); then the lock FILE (or
    directory) and, where more words follow, either exactly `-c` or `--command` (compared whole: `-lc`, `--command=S`
    are a program's name) followed by exactly one word, the string, or the program and its arguments; one word alone
    is a file descriptor (nothing runs). -F with -o is refused ("incompatible")."""
    spec = RUNNERS["flock"]
    i, n = at + 1, len(argv)
    seen: set[str] = set()
    while i < n:
        word = argv[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-") or word == "-":
            break
        if word.startswith("--"):
            name, eq, _ = word[2:].partition("=")
            names = spec.long_value | spec.long_plain
            found = {_FLOCK_SAME.get(x, x) for x in names if x.startswith(name)} if name not in names else {name}
            found = {_FLOCK_SAME.get(x, x) for x in found}
            if len(found) != 1:
                why = "is ambiguous" if found else "is unrecognized"
                return FlockReading("refused", why=f"its option `{word.split('=', 1)[0]}` {why}")
            full = found.pop()
            if full in ("help", "version"):
                return FlockReading("none", why=f"--{full} prints and exits")
            takes = full in spec.long_value
            if not takes and eq:
                return FlockReading("refused", why=f"its option `--{full}` takes no argument")
            if takes and not eq and i + 1 >= n:
                return FlockReading("refused", why=f"its option `--{full}` requires an argument")
            seen.add({"no-fork": "F", "close": "o"}.get(full, full))
            bad = _flock_value(full, word.partition("=")[2] if eq else argv[i + 1]) if takes else None
            if bad is not None:
                return FlockReading("refused", why=f"its option `--{full}` {bad}")
            i += 2 if takes and not eq else 1
            continue
        j, step = 1, 1
        while j < len(word):
            letter = word[j]
            if letter in "hV?":
                return FlockReading("none", why=f"-{letter} prints and exits")
            if letter in spec.short_value:
                if j + 1 == len(word):
                    if i + 1 >= n:
                        return FlockReading("refused", why=f"its option `-{letter}` requires an argument")
                    step = 2
                value = word[j + 1 :] if j + 1 < len(word) else argv[i + 1]
                bad = _flock_value("timeout" if letter == "w" else "conflict-exit-code", value)
                if bad is not None:
                    return FlockReading("refused", why=f"its option `-{letter}` {bad}")
                break
            if letter not in spec.short_plain:
                return FlockReading("refused", why=f"`-{letter}` is an invalid option of it")
            seen.add(letter)
            j += 1
        i += step
    if "F" in seen and "o" in seen:
        return FlockReading("refused", why="the --no-fork and --close options are incompatible")
    if i >= n:
        return FlockReading("refused", why="it requires a file descriptor, file or directory")
    if i + 1 >= n:
        return FlockReading("none", why=f"`{argv[i]}` is a file descriptor to lock (no command)")
    if argv[i + 1] in ("-c", "--command"):
        if n != i + 3:
            return FlockReading("refused", why=f"{argv[i + 1]} requires exactly one command argument")
        return FlockReading("string", i + 2)
    return FlockReading("argv", i + 1)
