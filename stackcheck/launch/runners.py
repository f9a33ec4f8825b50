"""The programs that run a command after their own options without a shell (`nice -n 5 CMD`, `taskset -c 0-7 CMD`,
`numactl --cpunodebind=0 CMD`, `srun -N1 CMD`, `chrt -f 50 CMD`, `ionice -c 2 CMD`, `stdbuf -oL CMD`): each execvp's
the word after its options (and taskset's mask, chrt's priority), so a shell assignment there (`nice A=1 python ...`)
is looked up as a program and the server never starts ('No such file or directory', exit 127 or the runner's own
failure; setsid, GNU time and flock likewise). The gate found the Python command after such a word and judged it
(irobust5). Read here: where each runner's command stands, from the options each one documents, and where that
cannot be told (an option not listed, whose value may be the next word) whether an assignment word stands before the
launch at all. Since iallow1 these readers (and POLICY_READERS: sudo, doas, pkexec, runuser -u, systemd-run, run0)
are the allow-list of gate.unplaced_before: a program none of them reads, standing before the launch, is unknown.

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
    from collections.abc import Callable, Sequence
    from typing import TypeVar

    R = TypeVar("R")


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
    needs_dashdash: bool = False  # its command is read only after `--` (tini: getopt permutes, so a later `-m` is its)


def _f(*names: str) -> frozenset[str]:
    return frozenset(names)


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


RUNNERS: dict[str, Runner] = {
    # (imend14) the options after which a runner prints and exits, or refuses, without running its command are its
    # `no_command` / `no_command_long` (read_runner: Reading(None), "runs no command"); they were plain options here,
    # the launch after them judged as the one that runs. Read: coreutils src/nice.c / src/stdbuf.c (master aa0c0de35:
    # GETOPT_HELP_OPTION_DECL / case_GETOPT_HELP_CHAR, src/system.h :369-406: usage / version_etc then exit), util-linux
    # schedutils/taskset.c :183-209, chrt.c :480-580 (-m prints the priority ranges: no command), ionice.c :157-207,
    # sys-utils/setsid.c :73-88 (master 39465c780: 'V' print_version(EXIT_SUCCESS), 'h' usage()); run here (coreutils
    # 9.1, util-linux 2.38.1, GNU time 1.9, strace 6.1): `nice --help touch F`, `--version`, stdbuf's, `taskset -h` /
    # `-V`, chrt's, ionice's, setsid's, `time --help` / `-V` / `--version`, `strace -h` / `-V` print and exit, F not
    # made. numactl: below.
    "nice": Runner("n", "", _f("adjustment"), _f(), 0, "", _f("help", "version")),
    "stdbuf": Runner("ioe", "", _f("input", "output", "error"), _f(), 0, "", _f("help", "version")),
    "taskset": Runner("", "ac", _f(), _f("all-tasks", "cpu-list"), 1, "phV", _f("pid", "help", "version")),
    "chrt": Runner(
        "TPD", "abdefiorRv", _f("sched-runtime", "sched-period", "sched-deadline"),
        _f("all-tasks", "batch", "deadline", "fifo", "idle", "other", "rr", "reset-on-fork", "verbose", "ext"),
        1, "pmhV", _f("pid", "max", "help", "version"),
    ),
    "ionice": Runner("cn", "t", _f("class", "classdata"), _f("ignore"), 0, "pPuhV",
                     _f("pid", "pgid", "uid", "help", "version")),
    # (imend14) numactl/numactl numactl.c (v2.0.19-32-g93c1fe5, main :527-790): -s / --show and --version print and
    # exit; -H / --hardware prints once its options are read and exits; the shared-memory options never run a
    # command: -S / --shm and -f / --file attach a segment (then any command word is usage(), exit 1), -L / -M / -o /
    # -u (--length, --shmmode, --offset, --huge) are "shm related option ... for process" without one, -d / -D / -T /
    # -V (--dump, --dump-nodes, --touch, --verify) need one ("Cannot do --dump without shared memory", needshm). -V
    # was read as a plain option and the launch after it allowed.
    "numactl": Runner(
        "iwpPcNCmI", "ltab",
        _f("interleave", "weighted-interleave", "preferred", "preferred-many", "cpubind", "cpunodebind",
           "physcpubind", "membind", "shmid"),
        _f("localalloc", "strict", "all", "balancing", "cpu-compress"),
        0, "sHSfoLMudDTV", _f("show", "hardware", "shm", "file", "offset", "length", "shmmode", "huge", "dump",
                              "dump-nodes", "touch", "verify", "version"),
    ),
    # (irobust5, from their manuals) util-linux setsid(1): -c/--ctty, -f/--fork, -w/--wait, then the program; GNU
    # time(1): getopt "+af:o:pqvV" (-f FORMAT, -o FILE) and their long forms; util-linux flock(1): -w SECONDS and
    # -E CODE take a value, then the lock FILE and the command (`flock FILE -c STRING` runs a shell string: read as
    # an option not listed, unknown where an assignment follows)
    "setsid": Runner("", "cfw", _f(), _f("ctty", "fork", "wait"), 0, "hV", _f("help", "version")),
    "time": Runner("fo", "apqv", _f("format", "output"), _f("append", "portability", "quiet", "verbose"), 0, "V",
                   _f("help", "version")),
    # (imend6: its long options as util-linux sys-utils/flock.c's long_options table lists them, with --wait,
    # --fcntl, --start, --length; read_flock reads where its command stands and whether it runs one)
    "flock": Runner("wE", "sxeunoFhV", _f("timeout", "wait", "conflict-exit-code", "start", "length"),
                    _f("shared", "exclusive", "unlock", "nonblocking", "nb", "close", "no-fork", "verbose", "fcntl",
                       "help", "version"), 1),
    # (igap54) strace 6.1: getopt "+a:Ab:cCdDe:E:fFhiI:kno:O:p:P:qrs:S:tTu:U:vVwxX:yYzZ" (read from the binary on
    # this box); -p / --attach traces a running process, no command. -E / -u are read in launch/elsewhere.py (opaque).
    # (irobust13) its long options are strace 6.1's whole table (strace/strace v6.1 src/strace.c longopts[] :2270-2330;
    # those with an optional value, `--name[=VALUE]`, are plain here): getopt_long takes an unambiguous prefix of them
    # (`strace --hel` prints its help and exits) and exits on a name it does not know; only the options srun's SPANK
    # plugins may add are unlisted, strace has none. A later release's option (6.19: --always-show-pid, --arg-names,
    # --argv0, --kill-on-exit, --namespace, --syscall-limit, --trace-fds, --stack-trace-frame-limit) is not read:
    # unknown, where 6.1 exits on it. Before, an unlisted name was read as an option that might take the next word and
    # the launch after it judged: `strace --hel` and `strace --xyz` were allowed (run here: both exit, no command run)
    "strace": Runner(
        "abeEIoOpPsSuUX", "AcCdDfFiknqrtTvwxyzZ",
        _f("abbrev", "attach", "columns", "const-print-style", "detach-on", "env", "fault", "inject", "interruptible",
           "kvm", "output", "raw", "read", "signals", "status", "string-limit", "summary-columns", "summary-sort-by",
           "summary-syscall-overhead", "trace", "trace-path", "user", "verbose", "write", "decode-pids"),
        _f("debug", "failed-only", "failing-only", "follow-forks", "instruction-pointer", "no-abbrev",
           "output-append-mode", "output-separately", "seccomp-bpf", "stack-traces", "successful-only", "summary",
           "summary-only", "summary-wall-clock", "syscall-number", "pidns-translation", "daemonize", "daemonised",
           "daemonized", "relative-timestamps", "absolute-timestamps", "timestamps", "syscall-times",
           "strings-in-hex", "tips", "quiet", "silent", "silence", "decode-fds", "secontext"),
        0, "phV", _f("attach", "help", "version"),  # (imend14: -h / -V print and exit)
    ),
    # (irev80: its letters are SRUN_SHORT_VALUE's, imend11's reading of slurm_opt.c, and SRUN_SHORT_OPTIONAL's -I / -K
    # / -k take the rest of their cluster only, read_runner's srun case; -b / -F / -r were unknown here, -j plain,
    # which that getopt string has not: srun refuses it). imend13: -h / --help, --usage and -V / --version print and
    # exit (src/common/slurm_opt.c arg_set_help :1930, arg_set_usage :4114, arg_set_version :4184: exit(0)), and
    # --test-only asks the scheduler when the job would start and exits (src/srun/srun_job.c :1233-1239): no command
    # runs; they were read as plain options and the launch after them judged
    "srun": Runner(
        "ABbCcDdeFGiJLMmNnopqrSTtWwx", "EHlOQsuvXZ",
        _f("account", "nodes", "ntasks", "cpus-per-task", "gres", "gpus", "gpus-per-node", "gpus-per-task",
           "partition", "job-name", "time", "mem", "mem-per-cpu", "mem-per-gpu", "qos", "export", "chdir", "output",
           "error", "input", "nodelist", "exclude", "constraint", "mpi", "ntasks-per-node", "distribution",
           "cpu-bind", "reservation", "dependency", "jobid", "container", "container-image", "container-mounts",
           "container-workdir", "container-name", "network"),
        _f("pty", "overlap", "overcommit", "quiet", "verbose", "unbuffered", "label", "no-kill", "exact", "whole",
           "disable-status", "spread-job", "container-remap-root", "no-container-mount-home", "container-writable"),
        0, "hV", _f("help", "usage", "version", "test-only"),
        every_long_known=False,
    ),
    # (iallow1) Yelp/dumb-init dumb-init.c parse_command: getopt_long "+hvVcr:" (long: help, single-child, rewrite
    # with a value, verbose, version; -h / -V print and exit), then fork, setsid in the child and execvp of the rest
    "dumb-init": Runner("r", "vc", _f("rewrite"), _f("single-child", "verbose"), 0, "hV", _f("help", "version")),
    # (iallow1) krallin/tini src/tini.c parse_args: getopt with OPT_STRING "p:hvwgle:s" (no `+`: glibc permutes, so
    # `tini python -m ...` takes -m and the launch's own options as tini's; only `tini [options] -- COMMAND` runs the
    # command as written), -h / -l print and exit; then fork and execvp of argv[optind:]
    "tini": Runner("pe", "vwgs", _f(), _f(), 0, "hl", _f("version"), needs_dashdash=True),
    # (iallow1) tianon/gosu main.go: `gosu USER-SPEC COMMAND [ARGS...]` (-h / --help / -v / --version alone print and
    # exit), HOME unset and set from the user's entry, then syscall.Exec of argv[2:] by PATH; ncopa/su-exec su-exec.c:
    # `su-exec USER-SPEC COMMAND [ARGS...]`, setenv HOME, execvp(argv[2]); their HOME and user are ENV_POLICY's
    "gosu": Runner("", "", _f(), _f(), 1, "hv", _f("help", "version")),
    "su-exec": Runner("", "", _f(), _f(), 1, "hv", _f("help", "version")),
}  # fmt: skip


#: (ifc61) tini's signal names for -p (krallin/tini src/tini.c signal_names[], compared whole with strcmp: `SIGTERM`,
#: never `TERM` or `15`)
_TINI_SIGNALS = frozenset(
    "SIG" + name
    for name in ("HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV", "USR2", "PIPE",
                 "ALRM", "TERM", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU", "URG", "XCPU", "XFSZ", "VTALRM",
                 "PROF", "WINCH", "SYS")
)  # fmt: skip
_C_SPACE = " \t\n\v\f\r"


def _dumb_init_rewrite(value: str) -> str | None:
    """Why dumb-init exits 1 on `--rewrite VALUE` before it runs anything (Yelp/dumb-init dumb-init.c
    parse_rewrite_signum: `sscanf("%d:%d")`, the first 1-31 (MAXSIG), the second 0-31, else print_rewrite_signum_help,
    which exits 1); None where the value is taken. Only plain `S:R` digits are read as taken (sscanf's leading blanks
    and signs, a later release's signal names: not read, so not taken either: fail closed)."""
    m = re.fullmatch(r"(\d{1,9}):(\d{1,9})", value, re.ASCII)
    if m is None:
        return (
            f"its `--rewrite {value}` is not read as two signal numbers `S:R` (dumb-init exits 1 on a value it refuses)"
        )
    if not 1 <= int(m[1]) <= 31 or not 0 <= int(m[2]) <= 31:
        return (
            f"its `--rewrite {value}` is refused (dumb-init takes a signal 1-31 rewritten to 0-31, else it "
            "exits 1 before running the command)"
        )
    return None


def _tini_signal(value: str) -> str | None:
    """Why tini exits 1 on `-p VALUE` (src/tini.c set_pdeathsig: a name of signal_names[], else "Not a valid option
    for -p"); None where it is one."""
    if value in _TINI_SIGNALS:
        return None
    return (
        f"its `-p {value}` is no signal name tini knows (it takes SIGTERM, SIGKILL, ...; it exits 1 before "
        "running the command)"
    )


def _tini_status(value: str) -> str | None:
    """Why tini exits 1 on `-e VALUE` (src/tini.c add_expect_status: strtol base 10 over the whole word, 0-255, else
    "Not a valid option for -e"); None where it is taken. (strtol of an empty word converts nothing and stops at its
    end: status 0, taken.)"""
    m = re.fullmatch(f"[{_C_SPACE}]*([+-]?)(\\d+)", value, re.ASCII)
    digits = m[2].lstrip("0") if m is not None else ""  # (irobust10: int() of over 4,300 digits raised, exit 4)
    if value == "" or (m is not None and len(digits) <= 3 and 0 <= int(m[1] + (digits or "0")) <= 255):
        return None
    return f"its `-e {value}` is no exit status 0-255 (tini exits 1 before running the command)"


def _nice_adjustment(value: str) -> str | None:
    """Why GNU nice exits 125 on `-n VALUE` (coreutils src/nice.c: xstrtol base 10 over the whole word, else "invalid
    adjustment"; coreutils 9.1 run on this box: `1e3`, `0x5`, `5k` exit 125); None where it is taken. Decimal digits
    with an optional sign, at most 9 (a word with blanks or an overflowing number GNU clamps while uutils' reader may
    refuse it: unknown either way, irobust12)."""
    if re.fullmatch(r"[+-]?\d{1,9}", value, re.ASCII):
        return None
    return (
        f"its `-n {value[:40]}` is no adjustment nice reads as one (GNU nice takes a decimal integer and exits 125 "
        "on anything else, before running the command)"
    )


def _stdbuf_mode(letter: str) -> Callable[[str], str | None]:
    """Why GNU stdbuf exits 125 on `-LETTER MODE` (coreutils src/stdbuf.c parse_size: `L` (not for -i), else a size
    xstrtoumax reads with a unit suffix; coreutils 9.1 run on this box: `-oX`, `-o 1Q` exit 125); None where it is
    taken. Read here: L, digits (at most 12) with an optional K / M / G suffix (KB, KiB); anything else is unknown
    (irobust12)."""

    def check(value: str) -> str | None:
        if value == "L" and letter != "i":
            return None
        m = re.fullmatch(r"(\d{1,12})(?:([KMG])(i?B)?)?", value, re.ASCII)
        # (irobust13) a size past what the size type holds is refused too (coreutils 9.1 run on this box: `-o
        # 999999999999G` exits 125, `-o 100000G` runs the command): read only below 2^63 bytes
        if m is not None and int(m[1]) * (1000 if m[3] == "B" else 1024) ** " KMG".index(m[2] or " ") < 2**63:
            return None
        return (
            f"its `-{letter} {value[:40]}` is no buffering mode stdbuf reads as one (L or a size; GNU stdbuf exits 125 "
            "on anything else, before running the command)"
        )

    return check


#: util-linux ionice's class names (schedutils/ionice.c to_prio: none, realtime, best-effort, idle, any case)
_IONICE_CLASSES = ("none", "realtime", "best-effort", "idle")


def _ionice_number(what: str) -> Callable[[str], str | None]:
    """Why util-linux ionice exits 1 on `-c CLASS` / `-n LEVEL` (schedutils/ionice.c: a class name, else
    strtos32_or_err, which refuses anything but a whole number; util-linux 2.38 run on this box: `-c abc` exits 1);
    None where it is taken (irobust12). irev82: a CLASS is read as a number only where its first character is a digit
    (isdigit), else as a name: `-c +2` / `-c -1` exit 1 ("unknown scheduling class"); util-linux 2.38.1 run here."""

    def check(value: str) -> str | None:
        # (irobust13: a class is a name or digits alone: ionice reads it as a number only where its first character is
        # a digit, so `-c -1` / `-c +2` are names it does not know; util-linux 2.38.1 run on this box: both exit 1,
        # with or without -t)
        number = r"\d{1,9}" if what == "class" else r"[+-]?\d{1,9}"
        if re.fullmatch(number, value, re.ASCII) or (what == "class" and value.lower() in _IONICE_CLASSES):
            return None
        return f"its {what} `{value[:40]}` is no number ionice reads (it exits 1 before running the command)"

    return check


def _ionice_refused(options: Sequence[str]) -> str | None:
    """Why util-linux ionice exits 1 at ioprio_set before it runs its command, its options `options` read as
    getopt "+c:n:p:P:tu:hV" reads them (irobust13): a class number outside 0-3 (none, realtime, best-effort, idle),
    or, for the realtime and best-effort classes (best-effort where no class is given), a level outside 0-7, unless
    -t / --ignore makes ionice run the command whatever ioprio_set answers. util-linux 2.38.1 run on this box (kernel
    6.18): `-c 7`, `-c 4`, `-n -1`, `-c 2 -n 99999`, `-c 2 -n 2147483647` exit 1, the command not run; `-t -c 7`,
    `-c 0 -n 99`, `-c 3 -n -5` (none / idle set their own level), `-c 1 -n 8` run it. A level above 7 is the kernel's
    to take or refuse (6.18 took 8, which newer kernels read as a hint bit; EINVAL where the level is 3 bits alone):
    unknown too, as the sign of a level refused. The checks of the values' form are VALUE_CHECKS'."""
    klass: str | None = None
    level: str | None = None
    tolerant = False
    i = 0
    while i < len(options):
        word = options[i]
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            found = [n for n in ("class", "classdata", "ignore") if name and n.startswith(name)]
            full = name if name in found else found[0] if len(found) == 1 else None  # (getopt_long: exact, or unique)
            if full == "ignore":
                tolerant = True
            elif full in ("class", "classdata"):
                if not eq:
                    i += 1
                    value = options[i] if i < len(options) else ""
                if full == "class":
                    klass = value
                else:
                    level = value
        elif word.startswith("-") and len(word) > 1:
            j = 1
            while j < len(word):
                letter = word[j]
                if letter == "t":
                    tolerant = True
                elif letter in "cnpPu":
                    value = word[j + 1 :]
                    if not value:
                        i += 1
                        value = options[i] if i < len(options) else ""
                    if letter == "c":
                        klass = value
                    elif letter == "n":
                        level = value
                    break
                j += 1
        i += 1
    if tolerant:
        return None
    number = {name: n for n, name in enumerate(_IONICE_CLASSES)}.get((klass or "best-effort").lower())
    if number is None and klass is not None and klass.isdigit():
        number = int(klass)
        if number > 3:
            return (f"its class `{klass[:40]}` is none of 0-3 (ionice warns \"unknown prio class\", then ioprio_set "
                    "refuses it and ionice exits 1 before running the command; -t would run it)")  # fmt: skip
    if number in (1, 2) and level is not None and re.fullmatch(r"[+-]?\d{1,9}", level, re.ASCII):
        if int(level) < 0:  # (levels above 7: gate.ionice_problems judges them against the kernel, irunner3)
            return (f"its level `{level[:40]}` is below 0 for the realtime / best-effort class (ioprio_set "
                    "refuses it: ionice exits 1 before running the command; -t would run it)")  # fmt: skip
    return None


class IoniceReading(NamedTuple):
    """What util-linux ionice asks of ioprio_set before it execvp's its command (read_ionice): the class (0 none, 1
    realtime, 2 best-effort, 3 idle), the class data (level) it passes, and whether -t / --ignore makes a failing
    ioprio_set no failure (ionice.c ioprio_setid: `if (rc == -1 && !tolerant) err(EXIT_FAILURE, ...)`)."""

    ioclass: int
    data: int
    tolerant: bool


def read_ionice(argv: Sequence[str], at: int) -> IoniceReading | None:
    """The class and level the ionice at argv[at] sets before running its command, as schedutils/ionice.c main() reads
    its options (getopt_long "+n:c:p:P:u:tVh": the last -c / -n wins; the class best-effort and the level 4 where not
    given; the none class passes level 0 and the idle class level 7 whatever -n says); None where it runs no command or
    a value is not read (read_runner says why)."""
    if read_runner(argv, at).command is None:
        return None
    got: dict[str, str] = {}
    tolerant = [False]
    spec = RUNNERS["ionice"]

    def long_option(i: int, word: str) -> int:
        found = _long(spec, word)
        if found is None:
            return 1
        name, takes = found
        if name == "ignore":
            tolerant[0] = True
        if takes:
            got["c" if name == "class" else "n"] = word.split("=", 1)[1] if "=" in word else argv[i + 1]
            return 1 if "=" in word else 2
        return 1

    def short_option(i: int, word: str, j: int) -> int:
        if word[j] == "t":
            tolerant[0] = True
        if word[j] in "cn":
            got[word[j]] = word[j + 1 :] if j + 1 < len(word) else argv[i + 1]
            return 1 if j + 1 < len(word) else 2
        return 0

    walk_options(argv, at, long_option, short_option)
    word = got.get("c", "2")
    ioclass = int(word) if word[:1].isdigit() else _IONICE_CLASSES.index(word.lower())
    data = int(got.get("n", "4"))
    data = 0 if ioclass == 0 else 7 if ioclass == 3 else data
    return IoniceReading(ioclass, data, tolerant[0])


def runner_options(argv: Sequence[str], at: int) -> list[tuple[str, str | None]] | None:
    """(irunner3) The options a RUNNERS program at argv[at] is given before its command, each as (its short letter or
    long name, its value or None), in order; None where read_runner does not place its command."""
    if read_runner(argv, at).command is None:
        return None
    spec = RUNNERS[os.path.basename(argv[at])]
    out: list[tuple[str, str | None]] = []

    def long_option(i: int, word: str) -> int:
        found = _long(spec, word)
        if found is None:
            out.append((word[2:].split("=", 1)[0], None))
            return 1
        name, takes = found
        value = word.split("=", 1)[1] if "=" in word else argv[i + 1] if i + 1 < len(argv) else None
        value = value if takes else None
        out.append((name, value))
        return 1 if "=" in word or not takes else 2

    def short_option(i: int, word: str, j: int) -> int:
        if word[j] in spec.short_value:
            out.append((word[j], word[j + 1 :] if j + 1 < len(word) else argv[i + 1] if i + 1 < len(argv) else None))
            return 1 if j + 1 < len(word) else 2
        out.append((word[j], None))
        return 0

    walk_options(argv, at, long_option, short_option)
    return out


def _cpu_list(text: str) -> frozenset[int] | None:
    """The CPUs of a kernel CPU list (`0-3,8,10-11`: the form cpuset.cpus.effective and cpuset.effective_cpus are
    written in, bitmap_print_to_pagebuf's list form); None where it is not one, or names none."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        lo, sep, hi = part.partition("-")
        if not lo.isdigit() or (sep and not hi.isdigit()) or len(lo) > 5 or len(hi) > 5:
            return None
        first, last = int(lo), int(hi) if sep else int(lo)
        if last < first:
            return None
        cpus.update(range(first, last + 1))
    return frozenset(cpus) or None


def cgroup_cpus(root: str = "/") -> frozenset[int] | None:
    """(imend19) The CPUs this process's cpuset allows, which a taskset run here may name whatever the gate's own
    affinity is (sched_setaffinity(2): the mask asked is cut to the cpuset's CPUs, EINVAL only where nothing is
    left; kernel/sched/core.c __sched_setaffinity with cpuset_cpus_allowed): the cgroup of /proc/self/cgroup, v2's
    `0::PATH` line read at sys/fs/cgroup/PATH/cpuset.cpus.effective (a cgroup whose cpuset controller is not enabled
    has the file from its parent's effective set), else v1's `N:...cpuset...:PATH` line at
    sys/fs/cgroup/cpuset/PATH/cpuset.effective_cpus. None where neither reads (the caller says unknown)."""
    try:
        with open(os.path.join(root, "proc/self/cgroup"), encoding="ascii", errors="replace") as f:
            lines = f.read(65536).splitlines()
    except OSError:
        return None
    places: list[str] = []
    for line in lines:
        hid, _, rest = line.partition(":")
        controllers, sep, path = rest.partition(":")
        if not sep or not path.startswith("/") or "\x00" in path:
            continue
        if hid == "0" and controllers == "":
            places.append(os.path.join(root, "sys/fs/cgroup", path.lstrip("/"), "cpuset.cpus.effective"))
        elif "cpuset" in controllers.split(","):
            places.append(os.path.join(root, "sys/fs/cgroup/cpuset", path.lstrip("/"), "cpuset.effective_cpus"))
    for place in places:
        if ".." in place.split(os.sep):
            continue
        try:
            with open(place, encoding="ascii", errors="replace") as f:
                cpus = _cpu_list(f.read(65536))
        except OSError:
            continue
        if cpus is not None:
            return cpus
    return None


def process_limits(root: str = "/") -> dict[str, object]:
    """(irunner3) What a launch run here inherits from the gate's own process: `cpus` (imend19: the cgroup's cpuset,
    cgroup_cpus, not the gate's own affinity, which a `taskset -c 0` before the gate narrows), `cap_eff`
    (/proc/self/status CapEff), `rtprio` (RLIMIT_RTPRIO's soft limit; -1 unlimited); a value not read is absent. The
    one reader of them (imend18: gate.process_limits was its twin). The launch is taken to run as the gate's user
    with the gate's limits (inferred: a user who runs the gate under sudo and the server without it, or the reverse,
    is judged wrongly); a taskset / chrt / ionice after a program that runs its command as another process (sudo -u,
    su, runuser, srun, ...: gate._other_process) is not judged on them (unknown)."""

    out: dict[str, object] = {}
    cpus = cgroup_cpus(root)
    if cpus is not None:
        out["cpus"] = cpus
    try:
        with open(os.path.join(root, "proc/self/status"), encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    out["cap_eff"] = int(line.split()[1], 16)
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource

        out["rtprio"] = resource.getrlimit(resource.RLIMIT_RTPRIO)[0]
    except (ImportError, AttributeError, OSError, ValueError):
        pass
    return out


_TASKSET_RANGE = r"\d{1,5}(?:-\d{1,5}(?::\d{1,5})?)?"

#: (irobust13) numactl's node and CPU lists as libnuma reads them (numactl/numactl 93c1fe5 libnuma.c
#: __numa_parse_nodestring :2108-2201, __numa_parse_cpustring :2236: an optional `!` then `+`, then `all` or
#: comma-separated numbers and ranges; numactl.c :494-510 takes `same` for the last list), a string of letters
#: otherwise resolve_affinity's (netdev:, file:, ip:, block:, pci:: a device's nodes, not read here)
_NUMA_LIST = r"!?\+?(?:all|\d{1,5}(?:-\d{1,5})?(?:,\d{1,5}(?:-\d{1,5})?)*)"


#: numactl's options that take a node list (numactl.c's getopt string and long options: -i, -w, -N, -c, -m, -p, -P)
_NUMA_NODE_OPTIONS = ("i", "w", "N", "c", "m", "p", "P", "interleave", "weighted-interleave", "cpunodebind",
                      "cpubind", "membind", "preferred", "preferred-many")  # fmt: skip


def _numactl_list(what: str) -> Callable[[str], str | None]:
    """Why numactl exits 1 (numactl.c: "<VALUE> is invalid", then usage(), exit 1) before running its command on a
    node or CPU list it does not parse (irobust13: `numactl -N abc`, `-C x`, `--membind=` were read as taken and the
    launch allowed); None where the list is of _NUMA_LIST's form or `same`. A device's name (netdev:eth0) is unknown
    too: its nodes are not read. Whether the nodes or CPUs listed exist on the node is not read (libnuma refuses one
    that does not: "out of range"). Read in the sources, not run (no numactl on this box)."""

    def check(value: str) -> str | None:
        if value == "same" or re.fullmatch(_NUMA_LIST, value, re.ASCII):
            return None
        return (f"its {what} list `{value[:40]}` is not one numactl reads as one (libnuma's numbers, ranges or all; "
                "numactl prints \"is invalid\" and exits 1 before running the command), or names a device whose "
                "nodes the gate does not read")  # fmt: skip

    return check


def _cpu_ranges_ordered(value: str) -> bool:
    """(irobust13) Whether each `A-B[:S]` of a CPU list (_TASKSET_RANGE's form) has A <= B and a stride S above 0:
    util-linux 2.38.1 run on this box: `taskset -c 1-0 touch F`, `taskset -c 0-3:0 touch F` exit 1, F not made
    (lib/cpuset.c cpulist_parse refuses them); `-c 0-3:2`, `-c 00` run it."""
    for item in value.split(","):
        span, _, stride = item.partition(":")
        low, _, high = span.partition("-")
        if high and int(low) > int(high):
            return False
        if stride and int(stride) == 0:
            return False
    return True


def _positional_refused(program: str, options: Sequence[str], value: str) -> str | None:
    """Why taskset's MASK / CPU list or chrt's priority (the word after the options) is one the program refuses and
    exits 1 on before it runs the command (irobust12; util-linux 2.38 run on this box: `taskset 0`, `taskset 0xZZ`,
    `taskset -c abc`, `chrt -f 0`, `chrt -f 1000` exit 1); None where it is read as taken. taskset: a hexadecimal mask
    that is not zero, or with -c / --cpu-list a list of CPUs and ranges (whether those CPUs exist on the node is not
    read); chrt: 1-99 for SCHED_FIFO / SCHED_RR (its default), 0 for the others (-o, -b, -i, -d)."""
    shorts = "".join(w[1:] for w in options if w.startswith("-") and not w.startswith("--"))
    longs = {w[2:].split("=", 1)[0] for w in options if w.startswith("--")}
    if program == "taskset":
        if "c" in shorts or "cpu-list" in longs:
            if re.fullmatch(f"{_TASKSET_RANGE}(?:,{_TASKSET_RANGE})*", value, re.ASCII) and _cpu_ranges_ordered(value):
                return None
        elif re.fullmatch(r"(?:0[xX])?[0-9a-fA-F]{1,64}", value) and value.lower().removeprefix("0x").strip("0"):
            return None
        kind = "list" if "c" in shorts or "cpu-list" in longs else "mask"
        return f"its CPU {kind} `{value[:40]}` is not one taskset reads as one (it exits 1 before running the command)"
    if program == "chrt":
        # (irobust13) util-linux 2.38.1 run on this box: `chrt -a -f 5 touch F` exits 1 ("cannot obtain the list of
        # tasks": -a / --all-tasks reads the tasks of a pid, 0 without -p); `chrt -d 0 touch F` exits 1 (SCHED_DEADLINE
        # without its runtime: EINVAL), and with -T / -D / -P it runs the command in a process that cannot fork or
        # start a thread (`sh -c 'true & wait'`: "Cannot fork"; the kernel refuses a SCHED_DEADLINE task's clone
        # unless reset-on-fork, -R, gives the child another policy), where the server starts its schedulers and
        # threads; and the kernel admits a deadline task only within its bandwidth: unknown, not read
        if "a" in shorts or any(name and "all-tasks".startswith(name) for name in longs):
            return ("its -a / --all-tasks asks for the tasks of a pid (0 without -p: chrt exits 1, \"cannot obtain the "
                    "list of tasks\", before running the command)")  # fmt: skip
        if "d" in shorts or any(name and "deadline".startswith(name) for name in longs):
            return ("its SCHED_DEADLINE policy (-d / --deadline) is refused without a runtime (chrt exits 1), and "
                    "without -R the server's processes and threads cannot be started (fork / clone: EAGAIN); the "
                    "kernel's admission of its runtime, deadline and period is not read")  # fmt: skip
        if any(c in shorts for c in "TPD") or any(name.startswith("sched-") for name in longs):
            return ("its -T / -P / -D (--sched-runtime, --sched-period, --sched-deadline) are for SCHED_DEADLINE "
                    "alone: chrt exits 1 on them with another policy, before running the command")  # fmt: skip
        other = any(c in shorts for c in "obid") or bool(longs & {"other", "batch", "idle", "deadline"})
        deadline = ("d" in shorts.replace("D", "") or "deadline" in longs) and not any(c in shorts for c in "fro")
        if not deadline and (any(c in shorts for c in "TPD") or longs & {"sched-runtime", "sched-period",
                                                                           "sched-deadline"}):  # fmt: skip
            # (irunner3) util-linux chrt.c before 2.41: "--sched-{runtime,deadline,period} options are supported for
            # SCHED_DEADLINE only", exit 1 (2.38.1 run here: `chrt -o -T 5 0 true`); 2.41 (util-linux#3406) takes -T
            # for SCHED_OTHER / SCHED_BATCH (a custom slice, Linux 6.12+): which release runs here is not read
            return ("its -T / -P / -D (--sched-runtime / -period / -deadline) without -d: chrt before util-linux 2.41 "
                    "exits 1 on them outside SCHED_DEADLINE (2.41 takes -T for SCHED_OTHER / SCHED_BATCH); which chrt "
                    "runs here is not read")  # fmt: skip
        if (
            value.isascii()
            and value.isdigit()
            and len(value) <= 3
            and (int(value) == 0 if other else 1 <= int(value) <= 99)
        ):
            return None
        return (f"its priority `{value[:40]}` is out of the range chrt takes for its policy (1-99 for FIFO / RR, 0 "
                "for the others; it exits 1 before running the command)")  # fmt: skip
    return None


#: (ifc61) option values a runner checks before it runs its command, and refuses by exiting (program -> its option,
#: the short letter or the long name -> why the value is refused, None where taken): the launch never starts
VALUE_CHECKS: dict[str, dict[str, Callable[[str], str | None]]] = {
    "dumb-init": {"r": _dumb_init_rewrite, "rewrite": _dumb_init_rewrite},
    "tini": {"p": _tini_signal, "e": _tini_status},
    "nice": {"n": _nice_adjustment, "adjustment": _nice_adjustment},
    "stdbuf": {k: _stdbuf_mode(k[0]) for k in ("i", "o", "e", "input", "output", "error")},
    "ionice": {k: _ionice_number("class" if k in "c class" else "level") for k in ("c", "class", "n", "classdata")},
    "numactl": {**dict.fromkeys(_NUMA_NODE_OPTIONS, _numactl_list("node")), "C": _numactl_list("CPU")}
    | {"physcpubind": _numactl_list("CPU")},
}


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


#: (imend11) srun's short options by has_arg, as slurm_option_table_create (src/common/slurm_opt.c, master 284c3b95f0
#: :4599-4660) builds getopt_long's string from common_options (:4423): each entry with `set_func` or `set_func_srun`
#: and a letter, `:` for required_argument, `::` for optional_argument (srun: "?A:b:D:M:C:S:c:d:Xm:e:x:B:G:hHI::i:J:
#: K::lL:T:Zk::F:w:N:n:o:Osp:Eq:Qr:t:uvVW:"). A required one takes the rest of its cluster, else the next word
#: whatever it is (`-J --overlap`: the job's name); an optional one takes the rest of its cluster only (`-kN2`:
#: --no-kill's value `N2`, no -N), never the next word.
SRUN_SHORT_VALUE = "ABbCcDdeFGiJLMmNnopqrSTtWwx"
SRUN_SHORT_OPTIONAL = "IKk"


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


class SrunLine(NamedTuple):
    """srun's options before its command, read once for all their readers (imend10: two loops, each after its own
    read_runner, read them before). `command` / `unsure`: read_runner's; `options`: srun_options'; `counts`: -n / -N /
    --ntasks-per-node / -G / -w / -F / -m, {"ntasks" | "nodes" | "ntasks-per-node" | "gpus" | "nodelist" | "nodefile" |
    "distribution": the last value given; of -w and -F the last given alone}, and "hold": "" where -H is given in a
    cluster of short options (imend14; --hold is in `options`)."""

    command: int | None
    unsure: str | None
    options: list[tuple[tuple[str, ...], str | None]]
    counts: dict[str, str]


_SRUN_COUNTED = {"ntasks": "ntasks", "nodes": "nodes", "ntasks-per-node": "ntasks-per-node", "gpus": "gpus",
                 "n": "ntasks", "N": "nodes", "G": "gpus", "nodelist": "nodelist", "w": "nodelist",
                 "nodefile": "nodefile", "F": "nodefile", "distribution": "distribution",
                 "m": "distribution"}  # fmt: skip


def srun_line(argv: Sequence[str], at: int) -> SrunLine:
    """srun's (argv[at]) options in one walk (walk_options) of the words before its command, or of every later word
    where read_runner does not place it (fail closed), each value taken as getopt_long takes it by the option's
    has_arg (irobust7: `srun -n 4 -J -n1`, -n1 the job's name; `-vn2`; imend11: SRUN_SHORT_VALUE /
    SRUN_SHORT_OPTIONAL, SRUN_LONG_VALUE / SRUN_LONG_OPTIONAL), a non-option word passed over. `options` lists every
    `--name[=value]` word that is an option up to a `--`; a word another option takes as its value is none (imend11:
    `-J --overlap` is a job's name, no --overlap; they were listed before)."""
    reading = read_runner(argv, at)
    words = argv[at : len(argv) if reading.command is None else reading.command]  # (srun at 0)
    takes = SRUN_LONG_VALUE | RUNNERS["srun"].long_value
    options: list[tuple[tuple[str, ...], str | None]] = []
    counts: dict[str, str] = {}
    listing = [True]

    def listed(k: int) -> None:  # (srun_options' entry of the word words[k], where it is a `--name` word)
        word = words[k]
        if not listing[0] or not word.startswith("--"):
            return
        if word == "--":
            listing[0] = False
            return
        names = srun_long(word)
        nxt = (words[k + 1] if k + 1 < len(words) else "") if len(names) == 1 and names[0] in takes else None
        options.append((names, word.split("=", 1)[1] if "=" in word else nxt))

    def value_of(i: int, key: str | None, inline: str | None, takes_next: bool) -> int:
        value = inline if inline is not None else (words[i + 1] if i + 1 < len(words) else "?") if takes_next else None
        if key is not None:
            counts[key] = value if value is not None else "?"
            if key in ("nodelist", "nodefile"):  # (imend18: slurm_opt.c arg_set_nodefile / arg_set_nodelist free
                counts.pop("nodefile" if key == "nodelist" else "nodelist", None)  # each other's: the last wins)
        return 1 if inline is not None or not takes_next else 2

    def long_option(i: int, word: str) -> int:
        listed(i)
        names = srun_long(word)
        key = _SRUN_COUNTED.get(names[0]) if len(names) == 1 else None
        inline = word.split("=", 1)[1] if "=" in word else None
        return value_of(i, key, inline, inline is None and len(names) == 1 and names[0] in takes)

    def short_option(i: int, word: str, j: int) -> int:
        if word[j] == "H":
            counts["hold"] = ""  # (-H, --hold: no value)
        if word[j] in SRUN_SHORT_OPTIONAL:
            return 1  # (its value, if any, the rest of the cluster)
        if word[j] not in SRUN_SHORT_VALUE:
            return 0
        return value_of(i, _SRUN_COUNTED.get(word[j]), word[j + 1 :] or None, True)

    i, ended = 0, list[bool]()
    while i < len(words) and not ended:
        i = walk_options(words, i, long_option, short_option, ended)[0]  # (stops at a word that is no option: past it)
    return SrunLine(reading.command, reading.unsure, options, counts)


def srun_options(argv: Sequence[str], at: int) -> list[tuple[tuple[str, ...], str | None]]:
    """The long options srun (argv[at]) is given before its command, each as (the names it may be: srun_long, its
    value: after `=`, else the next word for an option that takes one, else None): srun_line's."""
    return srun_line(argv, at).options


def walk_options(
    argv: Sequence[str],
    at: int,
    long_option: Callable[[int, str], int | R],
    short_option: Callable[[int, str, int], int | R],
    ended: list[bool] | None = None,
) -> tuple[int, R | None]:
    """The one walk of a program's options before its command (imend8: read_runner's and read_flock's twin loops),
    as getopt reads them with `+` (options only before the first other word): `--` ends them (the command after
    it), `-` or a word without `-` is the first other word; a `--name[=value]` word is `long_option(i, word)`'s, a
    cluster of short options (`-ac`, `-n5`) `short_option(i, word, j)`'s letter by letter. Each answers how many
    words the option takes (a long one: 1 or 2; a short one: 0 to read the cluster's next letter, else the words
    its value ends the cluster with) or a reading that ends the walk. (where the options end, that reading or
    None; `ended` gets True where a `--` ended them.)"""
    i, n = at + 1, len(argv)
    while i < n:
        word = argv[i]
        if word == "--":
            if ended is not None:
                ended.append(True)  # (iallow1: `--` ended the options: tini's needs_dashdash)
            return i + 1, None
        if not word.startswith("-") or word == "-":
            return i, None
        if word.startswith("--"):
            got = long_option(i, word)
        else:
            got, j = 0, 1
            while isinstance(got, int) and got == 0 and j < len(word):
                got = short_option(i, word, j)
                j += 1
            if isinstance(got, int) and got == 0:
                got = 1  # (the whole cluster read, no value in it)
        if not isinstance(got, int):
            return i, got
        i += got
    return i, None


def read_runner(argv: Sequence[str], at: int) -> Reading:
    """Where the command of the runner argv[at] (a RUNNERS program) stands."""
    program = os.path.basename(argv[at])
    spec = RUNNERS[program]

    def long_option(i: int, word: str) -> int | Reading:
        if program == "nice" and re.fullmatch(r"-[+-]?\d+", word):
            return 1  # (nice's obsolete `-N` adjustment)
        got = _long(spec, word)
        if got is None and spec is RUNNERS["srun"]:
            names = srun_long(word)
            if len(names) > 1:  # (igap53: srun exits on an ambiguous prefix)
                return Reading(None, f"`{word.split('=', 1)[0]}` names several srun options ({', '.join(names)}: "
                               "getopt_long refuses it as ambiguous)")  # fmt: skip
            if names:
                got = names[0], names[0] in SRUN_LONG_VALUE | spec.long_value
        if got is None:
            if spec.every_long_known:
                return Reading(None, f"`{word}` is no option of {program} the gate reads")
            if "=" in word:
                return 1
            return Reading(None, f"whether `{word}` takes the next word as its value is not read")
        name, takes = got
        if name in spec.no_command_long:
            return Reading(None)
        check = VALUE_CHECKS.get(program, {}).get(name)
        if check is not None and takes:
            value = word.split("=", 1)[1] if "=" in word else argv[i + 1] if i + 1 < len(argv) else None
            why = check(value) if value is not None else None
            if why is not None:
                return Reading(None, why)
        return 2 if takes and "=" not in word else 1

    def short_option(i: int, word: str, j: int) -> int | Reading:
        if j == 1 and program == "nice" and re.fullmatch(r"-[+-]?\d+", word):
            return 1  # (nice's obsolete `-N` adjustment)
        letter = word[j]
        if letter in spec.no_command:
            return Reading(None)
        if program == "srun" and letter in SRUN_SHORT_OPTIONAL:
            return 1  # (an optional value: the rest of the cluster, if any, never the next word; srun_line's reading)
        if letter in spec.short_value:
            check = VALUE_CHECKS.get(program, {}).get(letter)
            value = word[j + 1 :] if j + 1 < len(word) else argv[i + 1] if i + 1 < len(argv) else None
            why = check(value) if check is not None and value is not None else None
            if why is not None:
                return Reading(None, why)
            return 1 if j + 1 < len(word) else 2
        if letter not in spec.short_plain:
            return Reading(None, f"`-{letter}` is no option of {program} the gate reads")
        return 0

    ended: list[bool] = []
    i, stop = walk_options(argv, at, long_option, short_option, ended)
    if stop is not None:
        return stop
    n = len(argv)
    if spec.needs_dashdash and not ended:
        return Reading(None, f"{program} reads the words after its command as its own options unless `--` ends its "
                       "options (getopt permutes them)")  # fmt: skip
    if program == "ionice":
        why = _ionice_refused(argv[at + 1 : i])
        if why is not None:
            return Reading(None, why)
    if spec.positional and program == "chrt" and i < n and not argv[i].isdigit():
        # (irunner3) no priority given: util-linux before 2.42 reads the command's word as the priority and exits 1
        # ("invalid priority argument"); 2.42 (util-linux#3620) runs the command for a policy with no priority, never
        # for SCHED_FIFO / SCHED_RR. It was read as the command (allowed); which release runs here is not read
        return Reading(None, f"its word `{argv[i][:40]}` stands where chrt reads a priority (util-linux before 2.42, "
                       "and any release for SCHED_FIFO / SCHED_RR, exits 1 on it; 2.42 runs it as the command for "
                       "another policy): which chrt runs here is not read")  # fmt: skip
    if spec.positional and i < n:
        why = _positional_refused(program, argv[at + 1 : i], argv[i])
        if why is not None:
            return Reading(None, why)
    i += spec.positional
    return Reading(i if i < n else None)


def chain_end(argv: Sequence[str], start: int) -> tuple[int, str | None]:
    """(where the command of a chain of `nohup` / `timeout` starting at argv[start] stands, the last of them or None
    where argv[start] is neither). Shared by the gate's walk (gate._chain_end) and the target reader
    (assembly/target.py), which follows the same words to the launch's interpreter (irev78). Each timeout is read by
    read_timeout, the one reader of its words the gate's walk (gate.unplaced_before) uses too (imend12: chain_end had
    its own loose walk, which placed the command behind `timeout -x 5` or `timeout abc` where read_timeout does not):
    where it does not place its command, the chain stops at that `timeout` (argv[i] is the timeout word; the gate's
    walk names it unknown; the runner is then the one before it, or None)."""
    i, runner = start, None
    while i < len(argv) - 1 and os.path.basename(argv[i]) in ("nohup", "timeout"):
        if os.path.basename(argv[i]) == "timeout":
            at = read_timeout(argv, i).command
            if at is None:
                return i, runner
            runner, i = argv[i], at
        else:
            runner, i = argv[i], i + 1
            if argv[i] == "--" and i < len(argv) - 1:
                i += 1
    return i, runner


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
    doubt: str | None = None  # (imend7: a -w / -E value flock may or may not take: the locale decides, say)


#: strtod's decimal form (lib/strutils.c strtotimeval_or_err: strtold_or_err, the whole word; leading blanks taken)
_FLOCK_SECONDS = re.compile(r"[ \t\n\v\f\r]*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: the forms strtold takes besides the decimal one: hexadecimal, inf / infinity, nan (glibc)
_FLOCK_OTHER = re.compile(r"[ \t\n\v\f\r]*[+-]?(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
                          r"(?:[pP][+-]?[0-9]+)?|(?i:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?))")  # fmt: skip
#: lib/strutils.c strtos32_or_err: strtol base 10 of the whole word, in int32 (leading blanks and a sign taken)
_FLOCK_CODE = re.compile(r"[ \t\n\v\f\r]*[+-]?[0-9]+")


#: the smallest normal long double (x86's 80-bit and aarch64's binary128 alike): glibc's strtold sets ERANGE for a
#: non-zero value below it (run here: flock 2.38.1 -w 1e-4940 / 1e-5000 'Numerical result out of range', exit 64)
_LDBL_MIN = "3.3621031431120935063e-4932"


def _flock_underflows(text: str) -> bool:
    """Whether strtold underflows on the decimal `text` (a _FLOCK_SECONDS match without its blanks): a non-zero
    magnitude below _LDBL_MIN, which util-linux's strtold_or_err refuses (errno ERANGE). ifc59: float() reads such a
    value as 0.0 (or a double), so `flock -w 1e-5000 FILE CMD` was read as taking it where flock exits 64. Read from
    the digits (no int() of a long digit string, no Decimal context)."""
    from decimal import Decimal

    m = re.fullmatch(r"[+-]?([0-9]*)\.?([0-9]*)(?:[eE]([+-]?[0-9]+))?", text)
    if m is None:
        return False
    whole, frac, exp_text = m.group(1), m.group(2), m.group(3) or "0"
    digits = (whole + frac).lstrip("0")
    if not digits:
        return False  # (zero: strtold takes it)
    exp_digits = exp_text.lstrip("+-").lstrip("0")
    if len(exp_digits) > 12:  # (an exponent past any long double's: below its range, or above it)
        return exp_text.startswith("-")
    # the power of ten of the value's leading digit (d.ddd x 10^lead)
    lead = (
        int(exp_text) + len(whole.lstrip("0")) - 1
        if whole.lstrip("0")
        else int(exp_text) - (len(frac) - len(frac.lstrip("0"))) - 1
    )
    low = Decimal(_LDBL_MIN)
    low_lead = low.adjusted()  # (-4932)
    if lead != low_lead:
        return lead < low_lead
    return Decimal(f"{digits[0]}.{digits[1:40]}") < low.scaleb(-low_lead)


def _flock_value(option: str, value: str) -> FlockReading | None:
    """flock's reading of the value of -w / --timeout / --wait or -E / --conflict-exit-code (imend7; util-linux
    sys-utils/flock.c main(): strtotimeval_or_err "invalid timeout value", strtos32_or_err "invalid exit code" then
    0-255 "exit code out of range", both exit 64 (EX_USAGE) before anything runs; a timeout that makes a negative or
    overflowing itimer fails setup_timer, "cannot set up timer", exit 71): a refusal, a doubt, or None (taken). Run
    here (flock 2.38.1, C.UTF-8): -w abc / '' / '5 ' / 1,5 / 5e exit 64, -w -1 / inf / nan / 1e19 exit 71, -w ' 5' /
    +2 / 0x10 / .5 / 1e-400 / -0.0000001 / 9.2e18 run the command; -E -1 / 256 / 0x10 / 1.0 / 99999999999 exit 64,
    -E ' 5' / +2 / 07 / 255 run it."""
    if option == "E":
        if _FLOCK_CODE.fullmatch(value) is None:
            return FlockReading("refused", why=f"-E {value!r}: not a whole number (invalid exit code)")
        digits = value.strip(" \t\n\v\f\r").lstrip("+-").lstrip("0")
        code = int(value.strip(" \t\n\v\f\r")) if len(digits) <= 12 else -1  # (int32: 10 digits at most)
        if not 0 <= code <= 255:
            return FlockReading("refused", why=f"-E {value!r}: exit code out of range (expected 0 to 255)")
        return None
    if _FLOCK_SECONDS.fullmatch(value) is not None:
        text = value.strip(" \t\n\v\f\r")
        if _flock_underflows(text):
            return FlockReading("refused", why=f"-w {value!r}: invalid timeout value (numerical result out of range)")
        seconds = float(text)
        if seconds >= 2**63 or int(seconds) < 0 or int((seconds - int(seconds)) * 1_000_000) < 0:
            return FlockReading("refused", why=f"-w {value!r}: a timer flock cannot set (cannot set up timer)")
        return None
    if _FLOCK_OTHER.fullmatch(value) is not None:
        low = value.strip(" \t\n\v\f\r").lstrip("+-").lower()
        if low.startswith(("inf", "nan")):
            return FlockReading("refused", why=f"-w {value!r}: a timer flock cannot set (cannot set up timer)")
        return FlockReading("argv", doubt=f"-w {value!r}: a hexadecimal timeout (strtold's reading not followed)")
    if "," in value and re.fullmatch(r"[ \t\n\v\f\r]*[+-]?[0-9]*,[0-9]*", value) and any(c.isdigit() for c in value):
        return FlockReading("argv", doubt=f"-w {value!r}: a decimal comma, which flock takes only where the locale's "
                            "LC_NUMERIC has it (it sets the locale from the environment)")  # fmt: skip
    return FlockReading("refused", why=f"-w {value!r}: invalid timeout value")


def read_flock(argv: Sequence[str], at: int) -> FlockReading:
    """Where the command of the flock at argv[at] stands, read as util-linux sys-utils/flock.c reads its argv (no code
    of it is here): getopt_long with "+sexnoFuw:E:hV?" (options only before the first other word; -w / -E take a
    value, attached or the next word) and its long_options (a unique prefix, `--name=value`); then the lock FILE (or
    directory) and, where more words follow, either exactly `-c` or `--command` (compared whole: `-lc`, `--command=S`
    are a program's name) followed by exactly one word, the string, or the program and its arguments; one word alone
    is a file descriptor (nothing runs). -F with -o is refused ("incompatible")."""
    spec = RUNNERS["flock"]
    n = len(argv)
    seen: set[str] = set()
    doubts: list[str] = []

    def value(option: str, text: str) -> FlockReading | None:
        read = _flock_value(option, text)
        if read is not None and read.kind == "refused":
            return read
        if read is not None and read.doubt is not None:
            doubts.append(read.doubt)
        return None

    def long_option(i: int, word: str) -> int | FlockReading:
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
        if full in ("timeout", "conflict-exit-code"):
            refused = value("w" if full == "timeout" else "E", word.partition("=")[2] if eq else argv[i + 1])
            if refused is not None:
                return refused
        seen.add({"no-fork": "F", "close": "o"}.get(full, full))
        return 2 if takes and not eq else 1

    def short_option(i: int, word: str, j: int) -> int | FlockReading:
        letter = word[j]
        if letter in "hV?":
            return FlockReading("none", why=f"-{letter} prints and exits")
        if letter in spec.short_value:
            attached = j + 1 < len(word)
            if not attached and i + 1 >= n:
                return FlockReading("refused", why=f"its option `-{letter}` requires an argument")
            refused = value(letter, word[j + 1 :] if attached else argv[i + 1])
            return refused if refused is not None else 1 if attached else 2
        if letter not in spec.short_plain:
            return FlockReading("refused", why=f"`-{letter}` is an invalid option of it")
        seen.add(letter)
        return 0

    i, stop = walk_options(argv, at, long_option, short_option)
    if stop is not None:
        return stop
    doubt = doubts[0] if doubts else None
    if "F" in seen and "o" in seen:
        return FlockReading("refused", why="the --no-fork and --close options are incompatible")
    if i >= n:
        return FlockReading("refused", why="it requires a file descriptor, file or directory")
    if i + 1 >= n:
        return FlockReading("none", why=f"`{argv[i]}` is a file descriptor to lock (no command)")
    if argv[i + 1] in ("-c", "--command"):
        if n != i + 3:
            return FlockReading("refused", why=f"{argv[i + 1]} requires exactly one command argument")
        return FlockReading("string", i + 2, doubt=doubt)
    return FlockReading("argv", i + 1, doubt=doubt)


class Policy(NamedTuple):
    """How a program that runs its command as another user or as a service (sudo, doas, pkexec, runuser -u,
    systemd-run, run0) reads its options (read_policy): `spec` the options read, `refuse` the options after which it
    does not run the command as written, here (a shell, another root or directory, a timer, another host), with
    why; `assignments`: NAME=VALUE words among its options are its settings (sudo); `optional`: long options whose
    value is given only as `--name=value` (getopt_long's optional_argument); `exact`: options compared whole, no
    prefix and no cluster (pkexec)."""

    spec: Runner
    refuse: dict[str, str]
    assignments: bool = False
    optional: frozenset[str] = frozenset()
    exact: bool = False
    needs: tuple[frozenset[str], str] = (frozenset(), "")  # (one of these options must be given, else why not)


def _refuse(why: str, *names: str) -> dict[str, str]:
    return dict.fromkeys(names, why)


#: (iallow1) sudo 1.9 src/parse_args.c: getopt_long with sudo_short_opts "+Aa:BbC:c:D:Eeg:Hh::iKklNnPp:R:r:SsT:t:
#: U:u:Vv" and sudo_long_opts, NAME=VALUE words (not starting with '/' or '=') taken among the options until `--`;
#: -i / -s run the words through the user's shell joined into one -c string, -R a chroot, -D a directory, -e / -l
#: / -v / -V / -K / -h / -U / -k alone no command, -a / -c / -r / -t platform settings (not read). OpenDoas doas.c:
#: getopt "+a:C:Lnsu:" (-C checks a config file, -L clears the timestamp, -s runs a shell). polkit pkexec.c main():
#: the words --help, --version, --user / -u NAME, --disable-internal-agent, --keep-cwd compared whole, the first
#: other word the program. util-linux runuser(1) / su-common.c: getopt_long "c:fg:G:lmpPs:u:hVw:" without `+`
#: (run here, util-linux 2.38.1: `runuser -u nobody echo -m hi` prints `hi`, -m taken as runuser's; `runuser -u
#: nobody echo --model-path x` exits 1, unrecognized option): with -u the command after `--`. systemd-run 252
#: (this box's binary: getopt_long "+hrH:M:E:p:tPqGdSu:"; systemd-run(1) here): -H / -M another host or container,
#: --on-* / the unit properties a timer, path or socket unit, -S a shell, -p a unit property (User=, RootDirectory=,
#: WorkingDirectory=, PrivateDevices=, Environment=, ...), --working-directory / -d another directory. run0(1)
#: (systemd 257): its options read as systemd-run's, those not listed here not read.
POLICY_READERS: dict[str, Policy] = {
    "sudo": Policy(
        Runner("CgpuT", "AbBEHkNnPS",
               _f("close-from", "group", "prompt", "command-timeout", "user"),
               _f("background", "preserve-env", "set-home", "preserve-groups", "askpass", "bell", "reset-timestamp",
                  "no-update", "non-interactive", "stdin")),
        {**_refuse("runs the command through the target user's shell, its words joined into one string", "-i", "-s",
                   "--login", "--shell"),
         **_refuse("runs the command under another root directory (chroot)", "-R", "--chroot"),
         **_refuse("runs the command in another directory, which the gate does not follow", "-D", "--chdir"),
         **_refuse("runs no command (an edit, list, validate, help, version or timestamp mode)", "-e", "-l", "-v",
                   "-V", "-K", "-h", "-U", "--edit", "--list", "--validate", "--version", "--help", "--host",
                   "--remove-timestamp", "--other-user"),
         **_refuse("sets what the gate does not read (a BSD auth type, login class, SELinux role or type)", "-a",
                   "-c", "-r", "-t", "--auth-type", "--login-class", "--role", "--type"),
         # (iallow2) sudo -T / --command-timeout: "terminate command after the specified time limit" (sudo's help
         # text, src/parse_args.c), a value the policy reads and permits only with sudoers' user_command_timeouts
         **_refuse("sets a command timeout, which the sudoers policy must permit (user_command_timeouts, else sudo "
                   "refuses to run the command) and which ends the server after it", "-T", "--command-timeout")},
        assignments=True, optional=_f("preserve-env"),
    ),
    "doas": Policy(
        Runner("au", "n", _f(), _f()),
        {**_refuse("runs a shell, not the command", "-s"),
         **_refuse("runs no command (-C checks a configuration file, -L clears the timestamp)", "-C", "-L")},
    ),
    "pkexec": Policy(
        Runner("u", "", _f("user"), _f("disable-internal-agent", "keep-cwd")),
        _refuse("prints and exits", "--help", "--version"), exact=True,
        # (pkexec(1) of polkit 121+, as recalled, not re-read here: inferred) without --keep-cwd the program runs in
        # the target user's home directory
        needs=(_f("--keep-cwd"), "runs the command in the target user's home directory, not this one, unless "
               "--keep-cwd is given"),
    ),
    "runuser": Policy(
        Runner("gGuw", "fmpP", _f("group", "supp-group", "user", "whitelist-environment"),
               _f("fast", "preserve-environment", "pty"), needs_dashdash=True),
        {**_refuse("starts a login: clears the environment and changes to the user's home directory", "-l",
                   "--login"),
         **_refuse("hands a string or a shell to the user's shell", "-c", "-s", "--command", "--session-command",
                   "--shell"),
         **_refuse("prints and exits", "-h", "-V", "--help", "--version")},
    ),
    "systemd-run": Policy(
        Runner("uE", "rtPqGhd", _f("unit", "description", "slice", "service-type", "uid", "gid", "nice", "setenv"),
               _f("no-ask-password", "scope", "slice-inherit", "remain-after-exit", "send-sighup", "pty", "pipe",
                  "quiet", "no-block", "wait", "collect", "user", "system", "same-dir")),
        {**_refuse("runs the command on another host or in a container", "-H", "-M", "--host", "--machine"),
         **_refuse("sets a unit property (User=, RootDirectory=, WorkingDirectory=, PrivateDevices=, Environment=, "
                   "...), which the gate does not read", "-p", "--property", "--path-property", "--socket-property",
                   "--timer-property"),
         **_refuse("runs the command later, from a timer", "--on-active", "--on-boot", "--on-startup",
                   "--on-unit-active", "--on-unit-inactive", "--on-calendar", "--on-clock-change",
                   "--on-timezone-change"),
         **_refuse("runs it in another directory, which the gate does not follow", "--working-directory"),
         **_refuse("runs a shell, not the command", "-S", "--shell"),
         **_refuse("prints and exits", "-h", "--help", "--version")},
        # (systemd.exec(5) WorkingDirectory=, this box's page: "If not set, defaults to the root directory when systemd
        # is running as a system instance and the respective user's home directory if run as user"; systemd-run(1):
        # --same-dir "uses the current working directory of the caller"; --scope runs it from systemd-run itself)
        needs=(_f("--scope", "--same-dir", "-d"), "runs the command as a service in the service manager's working "
               "directory (/ for the system instance, the user's home with --user), not this one, unless --same-dir "
               "or --scope is given"),
    ),
    "run0": Policy(
        Runner("ug", "", _f("user", "group", "nice", "unit", "description", "slice"),
               _f("no-ask-password", "slice-inherit")),
        {},
    ),
}  # fmt: skip


def _sudo_name(value: str) -> str | None:
    """Why sudo runs nothing on `-u VALUE` / `-g VALUE` (iallow2; sudo src/parse_args.c: the value is the rest of the
    word or the next word, an empty one refused by usage(1)): `-u=svc` hands `=svc` to the policy as the user's name,
    one no passwd or group entry is likely to hold (sudoers looks it up and stops: not run here, so unknown)."""
    if value == "":
        return "its user or group value is empty (sudo prints its usage and exits 1)"
    if value.startswith("="):
        return (f"takes `{value[:40]}` as the user or group name, `=` included (getopt hands -u / -g the rest of the "
                "word: `-u svc` or `--user=svc` name svc), a name the policy is not known to find")  # fmt: skip
    return None


def _sudo_close_from(value: str) -> str | None:
    """Why sudo exits 1 on `-C VALUE` (src/parse_args.c: strtonum(optarg, 3, INT_MAX) else "the argument to -C must be
    a number greater than or equal to 3" and usage(1)); None where the plain decimal value is taken."""
    digits = value.lstrip("0")  # (irobust10: int() of over 4,300 digits raises ValueError: exit 4 before)
    if value.isascii() and value.isdigit() and len(digits) <= 10 and 3 <= int(digits or "0") <= 2**31 - 1:
        return None
    return f"its `-C {value[:40]}` is no number 3 or greater (sudo exits 1 before running the command)"


def _sudo_env_list(value: str) -> str | None:
    """Why sudo exits 1 on `--preserve-env=LIST` (src/parse_args.c parse_env_list: a name with `=` in the
    comma-separated list is "invalid environment variable name" and usage(1)); None where it is taken."""
    if "=" in value:
        return f"its `--preserve-env={value[:40]}` names a variable with `=` (sudo exits 1 before running the command)"
    return None


#: (iallow2) option values a POLICY_READERS program refuses, or reads otherwise than written, before it runs its
#: command (program -> the short letter or long name -> why, None where taken)
POLICY_VALUE_CHECKS: dict[str, dict[str, Callable[[str], str | None]]] = {
    "sudo": {"u": _sudo_name, "user": _sudo_name, "g": _sudo_name, "group": _sudo_name, "C": _sudo_close_from,
             "close-from": _sudo_close_from, "preserve-env": _sudo_env_list},
}  # fmt: skip


#: (policy_options: an exact-reading program's first word that is no option of its, where the walk ends)
_FIRST_OTHER = "the first other word"


def read_policy(argv: Sequence[str], at: int) -> Reading:
    """Where the command of argv[at], a POLICY_READERS program, stands; Reading(None, why) where it runs no command
    as written here, or where its options are not read (one not listed: unsure)."""
    return policy_options(argv, at)[0]


def policy_options(argv: Sequence[str], at: int) -> tuple[Reading, frozenset[str]]:
    """read_policy's reading with the options it read before the command (`-d`, `--scope`: each by its full name, a
    prefix getopt_long takes read as the option it names; an option's value is no option). irev76: the options are
    walked by walk_options, the walk read_runner and read_flock share (its third twin loop, iallow1's, gone); sudo's
    NAME=VALUE words among its options resume the walk after them, and pkexec's words are compared whole."""
    prog = os.path.basename(argv[at])
    policy = POLICY_READERS[prog]
    spec = policy.spec
    n = len(argv)
    seen: set[str] = set()
    refused = {r[2:] for r in policy.refuse if r.startswith("--")}

    def exact(i: int, word: str) -> int | Reading:
        seen.add(word)
        if word in policy.refuse:
            return Reading(None, f"its option `{word}` {policy.refuse[word]}")
        name = word.lstrip("-")
        if (word[:2] == "--" and name in spec.long_value) or (word[1:2] != "-" and name in spec.short_value):
            return 2
        if word[:2] == "--" and name in spec.long_plain:
            return 1
        seen.discard(word)
        return Reading(i, _FIRST_OTHER)  # (pkexec: the first other word is the program; the checks below still run)

    def long_option(i: int, word: str) -> int | Reading:
        if policy.exact:
            return exact(i, word)
        name, eq, _ = word[2:].partition("=")
        names = spec.long_value | spec.long_plain | refused
        found = [name] if name in names else [x for x in names if x.startswith(name)] if name else []
        if len(found) != 1:
            return Reading(None, f"its option `{word.split('=', 1)[0]}` is no option of {prog} the gate reads")
        full = found[0]
        seen.add("--" + full)
        if full in refused:
            return Reading(None, f"its option `--{full}` {policy.refuse['--' + full]}")
        if full in spec.long_value:
            check = POLICY_VALUE_CHECKS.get(prog, {}).get(full)
            value = word.partition("=")[2] if eq else argv[i + 1] if i + 1 < n else None
            why = check(value) if check is not None and value is not None else None
            if why is not None:
                return Reading(None, why)
            return 1 if eq else 2
        check = POLICY_VALUE_CHECKS.get(prog, {}).get(full)
        why = check(word.partition("=")[2]) if check is not None and eq else None
        if why is not None:
            return Reading(None, why)
        if eq and full not in policy.optional:
            return Reading(None, f"its option `--{full}` takes no value")
        return 1

    def short_option(i: int, word: str, j: int) -> int | Reading:
        if policy.exact:
            return exact(i, word)
        letter = word[j]
        seen.add("-" + letter)
        if "-" + letter in policy.refuse:
            return Reading(None, f"its option `-{letter}` {policy.refuse['-' + letter]}")
        if letter in spec.short_value:
            check = POLICY_VALUE_CHECKS.get(prog, {}).get(letter)
            value = word[j + 1 :] if j + 1 < len(word) else argv[i + 1] if i + 1 < n else None
            why = check(value) if check is not None and value is not None else None
            if why is not None:
                return Reading(None, why)
            return 1 if j + 1 < len(word) else 2
        if letter not in spec.short_plain:
            return Reading(None, f"its option `-{letter}` is no option of {prog} the gate reads")
        return 0

    ended: list[bool] = []
    start = at
    while True:
        i, stop = walk_options(argv, start, long_option, short_option, ended)
        if stop is not None and stop.unsure is _FIRST_OTHER and stop.command is not None:
            i = stop.command
            if argv[i][:1] == "-":
                # (iallow2; polkit src/programs/pkexec.c main(): each word strcmp'd whole against --help, --version,
                # --user / -u (its value the next word), --disable-internal-agent, --keep-cwd; the first other word
                # is the program, looked up on PATH, "Cannot run program" where it is not found)
                word = argv[i].split("=", 1)[0][:40] + ("=..." if "=" in argv[i] else "")
                why = (f"takes `{word}` as the program it runs ({prog} compares its options whole: `--user NAME`, "
                       "never `--user=NAME`), a program not found")  # fmt: skip
                return Reading(None, why), frozenset(seen)
            break
        if stop is not None:
            return stop, frozenset(seen)
        word = argv[i] if i < n else ""
        if ended or not policy.assignments or word[:1] in ("/", "=", "-") or "=" not in word:
            break
        start = i  # (sudo: an environment setting among its options; the walk goes on after it)
    if spec.needs_dashdash and not ended:
        return Reading(None, f"{prog} reads the words after its command as its own options unless `--` ends its "
                       "options (getopt permutes them)"), frozenset(seen)  # fmt: skip
    if policy.needs[0] and not seen & policy.needs[0]:
        return Reading(None, policy.needs[1]), frozenset(seen)
    if prog == "run0" and seen & {"-u", "--user"}:
        # (irev76: systemd/systemd src/run/run.c parse_argv_sudo_mode: without --chdir, a --user other than the
        # caller's own runs in that user's home directory, "~"; only a switch to root stays in the current one)
        return Reading(None, "runs the command in the target user's home directory, not this one (-u / --user "
                       "without --chdir)"), frozenset(seen)  # fmt: skip
    return Reading(i if i < n else None), frozenset(seen)


#: (iallow2) GNU coreutils timeout (src/timeout.c main: getopt_long "+fk:ps:v" with the long options foreground,
#: kill-after (a value), preserve-status, signal (a value), verbose, help, version; then DURATION, then the command,
#: execvp'd; `timeout --help` of 9.1 on this box: DURATION "a floating point number with an optional suffix: 's'
#: ... 'm' ... 'h' ... 'd'", "A duration of 0 disables the associated timeout"). Run here (coreutils 9.1): `timeout
#: -x 5 true`, `timeout --foo 5 true`, `timeout abc true`, `timeout '5 ' true`, `timeout nan true`, `timeout -s FOO 5
#: true`, `timeout -k abc 5 true` exit 125 before running anything; `timeout 5 -- true` runs `--` (exit 127: getopt
#: stopped at the DURATION, so the `--` after it is the command), where uutils coreutils' timeout (the default
#: coreutils of Ubuntu 25.10 and later) takes it as the end of its options and runs `true`.
TIMEOUT = Runner("ks", "fpv", _f("kill-after", "signal"), _f("foreground", "preserve-status", "verbose"), 1, "",
                 _f("help", "version"))  # fmt: skip
#: the DURATION forms read (imend12), those GNU coreutils' parse_duration (src/timeout.c: xstrtod with cl_strtod,
#: ERANGE taken, then at most one of s m h d) and both uutils readers (uucore parse_time.rs: Rust's f64 parse of the
#: word less its suffix, and its later num_parser) take alike: decimal digits with an optional fraction and an optional
#: exponent (`1.5e3`, `5.`, `.5`, `1E2s`), or `inf` / `infinity` (no limit; with any suffix: imend14). Not read, so
#: unknown: hexadecimal (`0x10`: GNU's strtod and the later uutils take it, the earlier uutils refuses it, exit 125),
#: `INF` (the earlier uutils takes only lower case), a sign or leading blanks (Rust's parse refuses blanks), a decimal
#: comma (GNU takes it only in such a locale). Run here (GNU coreutils 9.1): 1.5e3, 1E2s, 5., .5, inf, infinity, 0x10,
#: 0x1p2, INF, ' 5', +5, 1e400, 1e-400 run the command; 1e, nan, '5 ', 1,5, 0x exit 125
#: (irobust10: `\d+\.?\d*` split a run of digits every way before failing, 7 s on 20,000 digits and an `x`; the
#: fraction and the exponent are each one optional group after the digits, so the reading is linear)
_TIMEOUT_DURATION = re.compile(r"((?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?)([smhd]?)", re.ASCII)
_TIMEOUT_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
#: signal names read for -s (gnulib operand2sig: upper-cased in the C locale, `SIG` optional; a number 0-64 too):
#: those every Linux kill -l lists; any other name is not read
_TIMEOUT_SIGNALS = _names(
    "HUP INT QUIT ILL TRAP ABRT BUS FPE KILL USR1 SEGV USR2 PIPE ALRM TERM CHLD CONT STOP TSTP TTIN TTOU URG XCPU XFSZ "
    "VTALRM PROF WINCH IO PWR SYS"
)


class TimeoutReading(NamedTuple):
    """What coreutils timeout at argv[at] runs (read_timeout): `command` where its command stands (None: none, or
    not read: `unsure` says why), `seconds` its DURATION (0: no timeout, an infinite one too), the signal sent then,
    the -k delay before KILL (None: none), and whether --foreground is given (the signal goes to the command alone,
    not its children)."""

    command: int | None
    unsure: str | None = None
    seconds: float = 0.0
    signal: str = "TERM"
    kill_after: float | None = None
    foreground: bool = False


def _timeout_seconds(value: str) -> float | None:
    """The seconds of a DURATION as the readers in _TIMEOUT_DURATION agree on them (inf: no limit), or None (not
    read). Also None: a non-zero decimal below the smallest double (GNU's strtod gives 0, no limit; the later uutils 1
    ns, the launch killed at once). imend14: `inf` / `infinity` with m / h / d, and any value past 2^64 seconds, are no
    limit (inf), as every reader reads them: GNU's parse_duration (src/timeout.c :371-391, master aa0c0de35: cl_strtod
    takes `inf`, apply_time_suffix multiplies, dtimespec_bound caps; run here, coreutils 9.1: `timeout infh true`,
    infm, infd, infinityh, 1e19d, 1e30h exit 0), uutils since 0.0.13 (388cb6c83a, 2022-03: Duration::saturating_mul,
    Duration::MAX) and its num_parser reader (parse_time.rs: Infinity is Duration::MAX, its test `infinityh`). They
    were unknown for uutils 0.0.12 and before (`duration * times` panics: a release of January 2022 or earlier, not
    followed here)."""
    m = _TIMEOUT_DURATION.fullmatch(value)
    if m is None:
        return None
    if m[1].startswith("inf"):
        return float("inf")
    number = float(m[1])
    if number == 0 and re.search("[1-9]", m[1].split("e")[0].split("E")[0]):
        return None
    seconds = number * _TIMEOUT_UNIT[m[2]]
    return float("inf") if seconds >= 2.0**64 else seconds


def _timeout_signal(value: str) -> str | None:
    if value.isascii() and value.isdigit():  # (irobust10: a bounded int(): over 4,300 digits it raises, exit 4)
        digits = value.lstrip("0")
        return value if len(digits) <= 2 and int(digits or "0") <= 64 else None
    name = value.upper() if value.isascii() else ""
    name = name[3:] if name.startswith("SIG") and name[3:] in _TIMEOUT_SIGNALS else name
    return name if name in _TIMEOUT_SIGNALS else None


def read_timeout(argv: Sequence[str], at: int) -> TimeoutReading:
    """coreutils timeout's reading of its words (iallow2): its options as getopt_long "+fk:ps:v" reads them (a prefix
    of a long option getopt_long takes), a -k / -s value and the DURATION read as it reads them; an option, value or
    DURATION it refuses (exit 125) or one whose reading is not followed here is unsure, as is a `--` after the
    DURATION (GNU runs `--`, uutils the command after it)."""
    spec = TIMEOUT
    got: dict[str, str] = {}

    def value(option: str, text: str) -> TimeoutReading | None:
        if option == "s":
            if _timeout_signal(text) is None:
                return TimeoutReading(None, f"its signal `-s {text}` is not read as one (timeout exits 125 on a name "
                                      "it does not know)")  # fmt: skip
            got["s"] = _timeout_signal(text) or "TERM"
        elif _timeout_seconds(text) is None:
            return TimeoutReading(None, f"its `-k {text}` is not read as a duration (timeout exits 125 on one it "
                                  "refuses; GNU's and uutils' timeout read some forms differently)")  # fmt: skip
        else:
            got["k"] = text
        return None

    def long_option(i: int, word: str) -> int | TimeoutReading:
        found = _long(spec, word)
        if found is None:
            return TimeoutReading(None, f"`{word.split('=', 1)[0]}` is no option of timeout the gate reads (timeout "
                                  "exits 125 on one it does not know)")  # fmt: skip
        name, takes = found
        if name in spec.no_command_long:
            return TimeoutReading(None, f"--{name} prints and exits")
        if not takes:
            if "=" in word:
                return TimeoutReading(None, f"its option `--{name}` takes no value (timeout exits 125)")
            got[name[0]] = ""
            return 1
        if "=" not in word and i + 1 >= len(argv):
            return TimeoutReading(None, f"its option `--{name}` has no value")
        refused = value(name[0], word.split("=", 1)[1] if "=" in word else argv[i + 1])
        return refused if refused is not None else 1 if "=" in word else 2

    def short_option(i: int, word: str, j: int) -> int | TimeoutReading:
        letter = word[j]
        if letter in spec.short_value:
            attached = j + 1 < len(word)
            if not attached and i + 1 >= len(argv):
                return TimeoutReading(None, f"its option `-{letter}` has no value")
            refused = value(letter, word[j + 1 :] if attached else argv[i + 1])
            return refused if refused is not None else 1 if attached else 2
        if letter not in spec.short_plain:
            return TimeoutReading(None, f"`-{letter}` is no option of timeout the gate reads (timeout exits 125 on "
                                  "one it does not know)")  # fmt: skip
        got[letter] = ""
        return 0

    i, stop = walk_options(argv, at, long_option, short_option)
    if stop is not None:
        return stop
    if i + 1 >= len(argv):
        return TimeoutReading(None)
    seconds = _timeout_seconds(argv[i])
    if seconds is None:
        return TimeoutReading(None, f"its DURATION `{argv[i][:40]}` is not read as one (timeout exits 125 on an "
                              "interval it refuses; GNU's and uutils' timeout read some forms differently: write "
                              "decimal digits, `1500` or `25m`)")  # fmt: skip
    if argv[i + 1] == "--":
        return TimeoutReading(None, "runs the word `--` after its DURATION as the command (GNU coreutils: its "
                              "options end before the DURATION, so it runs `--` and exits 127; uutils coreutils "
                              "reads `--` as the end of its options): which one runs here is not read")  # fmt: skip
    kill = _timeout_seconds(got["k"]) if "k" in got else None
    kill = kill if kill is not None and 0 < kill < float("inf") else None  # (0 or inf: no KILL)
    seconds = 0.0 if seconds == float("inf") else seconds  # (no limit, as a DURATION of 0)
    return TimeoutReading(i + 1, None, seconds, got.get("s", "TERM"), kill, "f" in got)


def runner_words(argv: Sequence[str]) -> frozenset[int]:
    """The indices of argv that the chain of known runners from argv[0] owns (imend15): each runner's own word, its
    options and their values and its positional words (taskset's MASK, timeout's DURATION), up to the command it runs,
    whose word starts the next link (nohup, timeout, flock, RUNNERS, POLICY_READERS: read as the gate's walk reads
    them). A word owned is none that runs: the scan for a launch written inside one word (gate._launch_in_one_word)
    never reads it (`srun -J 'python -m sglang.launch_server ...' ./serve.sh`: a job's name). Where a runner's reading
    places no command (an option not read, a value it may refuse: unsure), nothing from that runner on is owned (the
    scan reads those words: fail closed); a flock that refuses its words or runs none though words follow owns them
    all (gate._flock_problem blocks the launch: nothing after it runs). flock's -c string is no option value: the
    shell runs it, so it is not owned."""
    owned: set[int] = set()
    k, n = 0, len(argv)
    while k < n:
        prog = os.path.basename(argv[k])
        at: int | None
        if prog == "nohup":
            at = k + 2 if k + 2 < n and argv[k + 1] == "--" else k + 1
            at = at if at < n and argv[at][:2] != "--" else None
        elif prog == "timeout":
            at = read_timeout(argv, k).command
        elif prog == "flock":
            got = read_flock(argv, k)
            if got.kind == "refused" or (got.kind == "none" and k + 2 < n):
                owned.update(range(k, n))
                break
            at = got.at if got.kind in ("argv", "string") else None
        elif prog in RUNNERS:
            at = read_runner(argv, k).command
        elif prog in POLICY_READERS:
            at = read_policy(argv, k).command
        else:
            break
        if at is None or at <= k:
            break
        owned.update(range(k, at))
        k = at
    return frozenset(owned)


#: (imend17) util-linux su-common.c su_main (read at util-linux commit 00749b05, login-utils/su-common.c): getopt_long
#: with "c:fg:G:lmpPs:u:hVw:" and no leading `+`, so GNU getopt permutes: every word after su that starts with `-` is
#: read as su's option wherever it stands, up to `--`; `-c` / `--command` / `--session-command` take ONE word, the
#: string handed to the user's shell (`shell -c STRING ARGS...`, run_shell); an option not in the list (or a long one
#: not a unique prefix, or one missing its value) ends in errtryhelp(EXIT_FAILURE); `-u` is runuser's only, and with it
#: -c / -s / -f / -l are refused; -h / -V print and exit. After the options a first word `-` is a login, the next word
#: (su, runuser without -u) the user, the rest the shell's positional arguments.
SU_LONG: dict[str, bool] = {
    "command": True, "session-command": True, "fast": False, "login": False, "preserve-environment": False,
    "pty": False, "shell": True, "group": True, "supp-group": True, "user": True, "whitelist-environment": True,
    "help": False, "version": False,
}  # fmt: skip
_SU_LONG_LETTER: dict[str, str] = {"command": "c", "session-command": "C", "fast": "f", "login": "l",
                          "preserve-environment": "p", "pty": "P", "shell": "s", "group": "g", "supp-group": "G",
                          "user": "u", "whitelist-environment": "w", "help": "h", "version": "V"}  # fmt: skip


class SuReading(NamedTuple):
    """su / runuser's words as su_main reads them (read_su)."""

    refused: str | None  # why su / runuser exits before running anything, None where it runs something
    command: str | None  # the -c string (the last given), None where none
    operands: tuple[int, ...]  # the indices of the words left after the options (user, shell arguments, or the
    # command with runuser -u), in order
    commands: int  # how many -c / --command / --session-command were given (the last one wins)
    user_option: bool  # runuser -u: the operands are the command, execvp'd


def read_su(argv: Sequence[str], at: int) -> SuReading:
    """The su / runuser at argv[at] with the words after it read as GNU getopt_long permutes them (SU_LONG's note).
    Linear in the words."""
    program = os.path.basename(argv[at])
    runuser = program == "runuser"
    letters: list[str] = []
    command: str | None = None
    commands = 0
    operands: list[int] = []
    i, n = at + 1, len(argv)
    refused: str | None = None
    while i < n and refused is None:
        word = argv[i]
        if word == "--":
            operands.extend(range(i + 1, n))
            break
        if word == "-" or not word.startswith("-"):
            operands.append(i)
            i += 1
            continue
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            exact = [k for k in SU_LONG if k == name]
            found = exact or [k for k in SU_LONG if k.startswith(name)]
            if len(found) != 1:
                refused = (f"`{word}` is {'an ambiguous' if found else 'no'} option of {program} (util-linux "
                           f"su-common.c getopt_long: it exits 1 before running anything)")  # fmt: skip
                break
            key = found[0]
            if SU_LONG[key]:
                if not eq:
                    if i + 1 >= n:
                        refused = f"`{word}` lacks its value ({program} exits 1)"
                        break
                    value = argv[i + 1]
                    i += 1
                if key in ("command", "session-command"):
                    command, commands = value, commands + 1
            elif eq:
                refused = f"`{word}` takes no value ({program} exits 1)"
                break
            letters.append(_SU_LONG_LETTER[key])
            i += 1
            continue
        j = 1
        while j < len(word):
            letter = word[j]
            if letter not in "cfgGlmpPsuhVw":
                refused = (f"`-{letter}` (in `{word}`) is no option of {program} (util-linux su-common.c getopt_long "
                           f"\"c:fg:G:lmpPs:u:hVw:\": it exits 1 before running anything)")  # fmt: skip
                break
            letters.append(letter)
            if letter in "cgGsuw":
                value = word[j + 1 :]
                if not value:
                    if i + 1 >= n:
                        refused = f"`-{letter}` lacks its value ({program} exits 1)"
                        break
                    value = argv[i + 1]
                    i += 1
                if letter == "c":
                    command, commands = value, commands + 1
                break
            j += 1
        i += 1
    if refused is None:
        if "h" in letters or "V" in letters:
            refused = f"-h / -V / --help / --version: {program} prints and exits, running nothing"
        elif "u" in letters and not runuser:
            refused = "-u / --user is runuser's option only: su exits 1 (errtryhelp)"
        elif "u" in letters and set(letters) & set("cCsfl"):
            refused = "runuser refuses -u with -c / --session-command / -s / -f / -l (mutually exclusive: exits 1)"
        elif "u" in letters and not operands:
            refused = "runuser -u names no command (exits 1)"
    return SuReading(refused, command, tuple(operands), commands, "u" in letters)
