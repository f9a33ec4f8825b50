"""Programs before the launch that run it on another machine or in a container, or run the word after them their own
way (igap54). The gate found the Python command after any such word and judged it on this box's facts as if the
program were absent: `ssh gpu1 python -m sglang.launch_server ...`, `docker exec c python ...`, `conda run -n env
python ...`, `torchrun -m sglang.launch_server ...` were allowed. Now each is one of:

- elsewhere: the command runs on another machine or in a container's filesystem (ssh, pdsh, docker / podman / nerdctl,
  kubectl, nsenter, apptainer / singularity, machinectl, mpirun with hosts): this box's facts do not decide it. The
  gate refuses it as unknown, naming the program; with --facts (the facts of the box the server runs on, by the
  user's word, as for any --facts gate) and the launch's whole environment given after the program (`ssh HOST env
  -i NAME=VALUE ... python ...`: else the server starts with that box's environment, not the gate's) the launch
  after it is judged on them, with a note naming the program. ssh and pdsh join the words and the remote user's
  shell reads them again: a word with a blank or a shell character, or an assignment before the command, is
  opaque.
- opaque: the command runs here but in a way the gate does not read (another interpreter or environment: uv / conda /
  pipenv / poetry run; its words re-read or extended: xargs, watch, script -c, gdb --args; several copies or its own
  interpreter: torchrun, mpirun without -np 1; a profiler or emulator that changes how it runs: nsys, ncu, valgrind,
  ltrace; strace -E / -u; perf, whose events the kernel may refuse before it runs the command (ifc58); mpirun
  without --allow-run-as-root, which Open MPI refuses to run as root (ifc58)): unknown, with or without --facts.
- read: the program execvp's its command unchanged on this box (strace without -E / -u, whose options are read in
  runners.RUNNERS; mpirun -np 1 --allow-run-as-root with its options all read and no host given): judged
  as before, an assignment word where the program runs its command refused (blocked).

A program in none of these tables was passed over until iallow1; now the gate's walk from the command's first word
(gate.unplaced_before) steps only through programs whose readers place their command (runners.RUNNERS and
POLICY_READERS, nohup, timeout, env, flock, a shell's -c), and the first other word is unknown.

Sources, read (manuals and option tables; no code or prose of theirs is here): ssh(1) SYNOPSIS (`ssh [options]
destination [command [argument ...]]`: the command is executed on the remote host); pdsh(1); docker container exec /
run reference; podman-exec(1); kubectl exec reference; nsenter(1) (util-linux: enters the namespaces of a target
process, with -m / --mount its filesystem); apptainer exec / singularity exec (the command runs inside the container
image); machinectl(1) shell (a shell in a local container); Open MPI mpirun(1) (-np, -H / --host, --hostfile, -x,
--wdir; without -np a copy per slot; under a resource manager its allocation's nodes); torch torch/distributed/run.py
(torchrun runs `sys.executable -u SCRIPT`, `-m` a module, `--no-python` a program, as worker processes with RANK,
WORLD_SIZE, LOCAL_RANK, MASTER_ADDR set); xargs(1) (appends the words read from stdin); watch(1) (`sh -c` of the
words joined, every 2 s); script(1) -c (run by $SHELL); gdb(1) --args (the program starts on `run`, through $SHELL
with startup-with-shell on); strace 6.1 (getopt "+a:Ab:cCdDe:E:fFhiI:kno:O:p:P:qrs:S:tTu:U:vVwxX:yYzZ", read from
the binary here; -E VAR=VAL sets the command's environment, -u USER runs it as another user); perf-record(1) (`perf
record [options] -- <command>`); uv run, conda run, pipenv run, poetry run (run the command in the project's or the
named environment, with its interpreter and its activation's variables)."""

from __future__ import annotations

import os

from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


class Wrapped(NamedTuple):
    """A program before the launch that the gate does not judge as absent."""

    program: str  # the word as written (its basename)
    kind: str  # "elsewhere" (another machine or container) | "opaque" (here, run in a way not read)
    why: str  # what it does, said after "`PROGRAM` stands before the launch: "


#: another machine or container: what the program does, and where `stackcheck gate` should run instead
ELSEWHERE: dict[str, tuple[str, str]] = {
    "ssh": ("ssh runs the command on the remote host it names", "on that host (`ssh HOST stackcheck gate -- ...`)"),
    "pdsh": ("pdsh runs the command on each remote host of its list", "on those hosts"),
    "docker": ("docker runs the command in a container, on the container's filesystem",
               "inside the container (`docker exec C stackcheck gate -- ...`), or `stackcheck gate --image` for an "
               "image"),
    "podman": ("podman runs the command in a container, on the container's filesystem",
               "inside the container, or `stackcheck gate --image` for an image"),
    "nerdctl": ("nerdctl runs the command in a container, on the container's filesystem",
                "inside the container, or `stackcheck gate --image` for an image"),
    "kubectl": ("kubectl exec / run starts the command in a pod's container, on the node that runs the pod",
                "inside the pod (`kubectl exec POD -- stackcheck gate -- ...`)"),
    "nsenter": ("nsenter runs the command in the namespaces of another process (with -m / -a its mount namespace: "
                "another filesystem)", "inside those namespaces"),
    "apptainer": ("apptainer runs the command inside a container image's filesystem",
                  "inside the container (`apptainer exec IMG stackcheck gate -- ...`)"),
    "singularity": ("singularity runs the command inside a container image's filesystem",
                    "inside the container (`singularity exec IMG stackcheck gate -- ...`)"),
    "machinectl": ("machinectl shell runs the command in a local container (systemd-nspawn) on its own filesystem",
                   "inside the container"),
    # (irobust7: each of these was passed over as a word before the launch, which was judged on this box's facts;
    # what each does is its manual's synopsis as known, not re-read for this entry: inferred)
    "rsh": ("rsh runs the command on the remote host it names", "on that host"),
    "autossh": ("autossh runs ssh, which runs the command on the remote host it names", "on that host"),
    "mosh": ("mosh runs the command on the remote host it names", "on that host"),
    "clush": ("clush runs the command on each remote node of its list", "on those nodes"),
    "lxc": ("lxc exec runs the command in an LXD container, on the container's filesystem", "inside the container"),
    "incus": ("incus exec runs the command in an Incus container, on the container's filesystem",
              "inside the container"),
    "oc": ("oc exec / run starts the command in a pod's container, on the node that runs the pod",
           "inside the pod"),
    "crictl": ("crictl exec runs the command in a CRI container, on the container's filesystem",
               "inside the container"),
    "ctr": ("ctr run / task exec runs the command in a containerd container, on the container's filesystem",
            "inside the container"),
    "docker-compose": ("docker-compose exec / run runs the command in a service's container, on its filesystem",
                       "inside the container"),
    "podman-remote": ("podman-remote runs the command in a container of a remote Podman service",
                      "inside the container"),
    "enroot": ("enroot start runs the command in a container image's root filesystem", "inside the container"),
    "systemd-nspawn": ("systemd-nspawn runs the command in a container on the directory or image it names",
                       "inside the container (`stackcheck gate --root DIR`)"),
    "distrobox": ("distrobox enter runs the command in a container, on the container's filesystem",
                  "inside the container"),
    "toolbox": ("toolbox run runs the command in a container, on the container's filesystem", "inside the container"),
    "bwrap": ("bwrap (bubblewrap) runs the command in new namespaces on the filesystem its --bind options build",
              "inside that sandbox"),
    "proot": ("proot runs the command with another root directory (-r) and binds", "inside that root"),
    "bsub": ("bsub submits the command to LSF, which runs it on a node of the cluster", "on that node"),
    "qsub": ("qsub submits the command to the batch system, which runs it on a node of the cluster", "on that node"),
    "aprun": ("aprun runs the command on the compute nodes of its allocation (Cray ALPS)", "on those nodes"),
    "jsrun": ("jsrun runs the command on the compute nodes of its allocation (IBM LSF / CSM)", "on those nodes"),
}  # fmt: skip

#: here, but run in a way the gate does not read
OPAQUE: dict[str, str] = {
    # (a live gate audits the environment these name: assembly/target.py _uv_run / _conda_run; but what runs there is
    # not what was probed, or not with the environment read, and a --facts gate's facts are of an environment not
    # named)
    "uv": "uv run syncs the project's environment from its lock file before it runs the command (unless --no-sync "
    "/ --frozen), then runs it with that environment's variables: the packages and interpreter the server gets are "
    "not the ones probed before the sync, or, with --facts, not known to be the facts' environment",
    "conda": "conda run runs the named environment's activation scripts (etc/conda/activate.d, its env_vars), which "
    "may set CUDA_HOME, LD_LIBRARY_PATH or PATH, before the command, and with --facts that environment is not known "
    "to be the facts' one",
    "mamba": "mamba run runs the named environment's activation scripts before the command (variables not read)",
    "micromamba": "micromamba run runs the named environment's activation scripts before the command (variables not "
    "read)",
    "pipenv": "pipenv run starts the command in the project's virtualenv, with its .env file loaded, neither of "
    "which the gate reads",
    "poetry": "poetry run starts the command in the project's virtualenv, which the gate does not read",
    "pixi": "pixi run installs and activates the project's environment before the command, which the gate does not "
    "read",
    "torchrun": "torchrun runs its own interpreter with the script (`python -u SCRIPT`, `-m MODULE`, `--no-python` "
    "a program) as worker processes with RANK / WORLD_SIZE / MASTER_ADDR set, a copy per --nproc-per-node",
    "xargs": "xargs appends the words it reads from stdin to the command, so its arguments are not the ones written",
    "watch": "watch runs the words joined through `sh -c` again every interval, so they are re-read by a shell",
    "script": "script runs its command (-c STRING) through $SHELL, a shell the gate does not know",
    "gdb": "gdb starts the program only on `run`, through $SHELL (startup-with-shell), which re-reads its words",
    "valgrind": "valgrind runs the program on its own synthetic CPU, where CUDA's driver is not what the facts judge",
    "ltrace": "ltrace's options are not read here (where its command stands, and what -S / -x do to it)",
    "nsys": "nsys profile injects its own libraries into the command and its options are not read here",
    "ncu": "ncu replays each kernel under its own instrumentation and its options are not read here",
    "perf": "perf's options before the command are not read (write `perf record [options] -- COMMAND`)",
    "strace": "strace -E / -u sets the command's environment or user, which the gate does not follow",
    "mpirun": "mpirun's options are not all read",
    # (irobust7) launchers that start their own worker processes, as torchrun does (their documentation's synopsis,
    # not re-read here: inferred)
    "accelerate": "accelerate launch starts the script under its own launcher (torchrun's, a copy per process) with "
    "its config file's settings",
    "deepspeed": "the deepspeed launcher starts a copy of the script per GPU (and per host of its hostfile) with its "
    "own environment",
    # (iallow1, from the research note iplan1, which read DataDog/dd-trace-py ddtrace/commands/ddtrace_run.py and
    # opentelemetry-python-contrib opentelemetry-instrumentation auto_instrumentation/__init__.py run(); not re-read
    # here) each prepends its own directory to PYTHONPATH (a sitecustomize that patches libraries at start) and execs
    # the command
    "ddtrace-run": "ddtrace-run prepends its bootstrap directory to PYTHONPATH, whose sitecustomize patches the "
    "server's libraries at start, then runs the command",
    "opentelemetry-instrument": "opentelemetry-instrument prepends its own directory and the current directory to "
    "PYTHONPATH (a sitecustomize that instruments libraries at start) and sets OTEL_* variables from its options, then "
    "runs the command",
    # (iallow1, inferred from what each tool is, not read in its source: a debugger, CUDA instrumentation, a sampling
    # profiler that starts the program itself)
    "cuda-gdb": "cuda-gdb starts the program under its debugger (through a shell, as gdb does)",
    "compute-sanitizer": "compute-sanitizer runs the program under its CUDA instrumentation, which changes how its "
    "kernels run",
    "py-spy": "py-spy record starts the program under its sampling profiler, with options not read here",
}

_MPI = frozenset({"mpirun", "mpiexec", "orterun", "prterun"})
#: Open MPI mpirun(1) options by what they take: the hosts the ranks run on, a value, two values, none; --wdir /
#: --prefix / -x NAME=VALUE change the directory or environment (not followed: opaque)
_MPI_HOSTS = frozenset({"-H", "-host", "--host", "-hostfile", "--hostfile", "-machinefile", "--machinefile",
                        "-default-hostfile", "--default-hostfile", "-rf", "--rankfile", "-rankfile"})  # fmt: skip
_MPI_NP = frozenset({"-np", "--np", "-n", "--n", "-c"})
_MPI_VALUE = frozenset({"-map-by", "--map-by", "-rank-by", "--rank-by", "-bind-to", "--bind-to", "-x",
                        "--output-filename", "-output-filename", "-N", "-npernode", "--npernode"})  # fmt: skip
_MPI_TWO = frozenset({"-mca", "--mca", "-gmca", "--gmca"})
_MPI_PLAIN = frozenset({"--allow-run-as-root", "-allow-run-as-root", "--oversubscribe", "-oversubscribe",
                        "--report-bindings", "-report-bindings", "--tag-output", "-tag-output", "--timestamp-output",
                        "-q", "--quiet", "-v", "--verbose", "--display-map", "-display-map", "--display-allocation",
                        "--use-hwthread-cpus", "--nooversubscribe"})  # fmt: skip
#: a resource manager's allocation, whose nodes mpirun places ranks on without -H
_ALLOCATION = ("SLURM_JOB_ID", "SLURM_JOBID", "PBS_JOBID", "PBS_NODEFILE", "LSB_JOBID",
               "OMPI_MCA_orte_default_hostfile")  # fmt: skip
_LOCAL = frozenset({"localhost", "127.0.0.1", "::1"})


#: ssh(1) / pdsh(1): the command's words are joined with spaces and run by the remote user's shell (`$SHELL -c`)
_REMOTE_SHELL = frozenset({"ssh", "pdsh", "rsh", "autossh", "mosh", "clush"})
_SHELL_SPECIAL = frozenset(" \t\n$`\"'\\*?[]{}()<>|;&~#!")


def _assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq) and name.isidentifier() and name.isascii()


def command_at(argv: Sequence[str], i: int) -> int | None:
    """Where the command of a program read here (perf record / stat with `--`, mpirun read as local) stands; None for
    any other word."""
    prog = os.path.basename(argv[i])
    # (`--` looked for among the next 64 words: a chain of perfs is read in linear time; more options: not read)
    if prog == "perf" and i + 1 < len(argv) and argv[i + 1] in ("record", "stat") and "--" in argv[i + 2 : i + 66]:
        return argv.index("--", i + 2, i + 66) + 1
    if prog in _MPI:
        return _mpi(argv, i, {})[1]
    return None


def _mpi(argv: Sequence[str], i: int, env: Mapping[str, str]) -> tuple[Wrapped | None, int | None]:
    """(what mpirun argv[i] is where it is not read as local, where its command stands)."""
    from stackcheck.redact import redact_value

    prog = os.path.basename(argv[i])
    j, np = i + 1, None
    while j < len(argv) and argv[j].startswith("-"):
        word = argv[j]
        name, eq, value = word.partition("=")
        if word == "--":
            j += 1
            break
        if name in _MPI_HOSTS:
            hosts = value if eq else (argv[j + 1] if j + 1 < len(argv) else "")
            if name.lstrip("-") in ("H", "host") and all(h.split(":")[0] in _LOCAL for h in hosts.split(",") if h):
                j += 1 if eq else 2
                continue
            shown = redact_value(hosts)[:80]  # (irobust7: as the decision's command line shows it)
            return Wrapped(prog, "elsewhere", f"{prog} {name} {shown} places ranks on the hosts it names"), None
        if name in _MPI_NP:
            np = value if eq else (argv[j + 1] if j + 1 < len(argv) else "")
            j += 1 if eq else 2
            continue
        if name == "-x" and "=" in (value if eq else (argv[j + 1] if j + 1 < len(argv) else "")):
            return Wrapped(prog, "opaque", f"{prog} -x NAME=VALUE sets a variable of the command's environment, "
                           "which the gate does not follow"), None  # fmt: skip
        if name in _MPI_VALUE:
            j += 1 if eq else 2
            continue
        if name in _MPI_TWO:
            j += 3
            continue
        if name in _MPI_PLAIN and not eq:
            j += 1
            continue
        return Wrapped(prog, "opaque", f"{prog}'s option `{name}` is not read (its value, the directory, environment "
                       "or hosts it sets)"), None  # fmt: skip
    held = [name for name in _ALLOCATION if name in env]
    if held:
        return Wrapped(prog, "opaque", f"{prog} runs inside a resource manager's allocation ({held[0]} is set), whose "
                       "nodes it places ranks on"), None  # fmt: skip
    if np != "1":
        copies = "a copy per slot" if np is None else f"{redact_value(np)[:80]} copies"
        return Wrapped(prog, "opaque", f"{prog} starts {copies} of the command on this box (not -np 1): several "
                       "servers on one port and one set of GPUs"), None  # fmt: skip
    return None, j if j < len(argv) else None


#: ifc58: Open MPI's mpirun exits 1 before starting anything when run as root (euid 0) unless --allow-run-as-root is
#: given or OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are both set (open-mpi/ompi
#: orte/tools/orterun/orterun.c and orte_submit.c, https://github.com/open-mpi/ompi/pull/6911; Open MPI 5's mpirun
#: documents the same option); the user the launch runs as is not in the facts
_MPI_ROOT = ("{prog} (Open MPI) refuses to start anything when run as root unless --allow-run-as-root is given or "
             "OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are set, and the user this launch runs as "
             "is not in the facts")  # fmt: skip
#: ifc58: perf record / stat open their events (perf_event_open) before the command runs and exit without running it
#: where that fails: kernel.perf_event_paranoid above 2 (Ubuntu's kernels default to 4: no perf events without
#: CAP_PERFMON / CAP_SYS_ADMIN, https://askubuntu.com/questions/1400874), or a container's seccomp profile (Docker's
#: default allows perf_event_open only with CAP_SYS_ADMIN / CAP_PERFMON); neither the sysctl, the user nor the
#: seccomp profile is in the facts
_PERF_OPEN = ("perf opens its events before it runs the command and exits without running it where the kernel "
              "refuses them (kernel.perf_event_paranoid above 2 for a user without CAP_PERFMON, 4 by default on "
              "Ubuntu's kernels, or a container's seccomp profile), which the facts do not record")  # fmt: skip


def _mpi_root_allowed(options: Sequence[str], env: Mapping[str, str]) -> bool:
    """Whether mpirun's words before its command (`options`) or the environment let Open MPI's mpirun run as root."""
    if any(w in ("--allow-run-as-root", "-allow-run-as-root") for w in options):
        return True
    return env.get("OMPI_ALLOW_RUN_AS_ROOT") == "1" and env.get("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM") == "1"


def _strace(argv: Sequence[str], i: int) -> Wrapped | None:
    """strace with -E / --env (the command's environment) or -u / --user (its user) before its command: opaque."""
    from stackcheck.launch.runners import read_runner

    end = read_runner(argv, i).command
    for word in argv[i + 1 : len(argv) if end is None else end]:
        if word == "--":
            break
        if word.startswith("--"):
            name = word[2:].split("=", 1)[0]
            if name and ("env".startswith(name) or "user".startswith(name)) and name not in ("e", "u"):
                return Wrapped("strace", "opaque", OPAQUE["strace"])
            continue
        if word.startswith("-"):
            for letter in word[1:]:
                if letter in "Eu":
                    return Wrapped("strace", "opaque", OPAQUE["strace"])
                if letter in "abeIoOpPsSUX":  # (a value follows: the rest of the word, or the next one)
                    break
    return None


def wrapper_at(argv: Sequence[str], i: int, env: Mapping[str, str]) -> Wrapped | None:
    """The program argv[i] where it is one the gate does not judge as absent (ELSEWHERE, OPAQUE), else None."""
    prog = os.path.basename(argv[i])
    if prog in _REMOTE_SHELL:
        # (the words after it are joined and read again by the remote user's shell: a special character anywhere, an
        # assignment before the command's env or python word, which that shell takes as its own; an ssh option's
        # `-o Name=value` is read as one too: unknown, fail closed)
        rest = argv[i + 1 :]
        end = next((k for k, w in enumerate(rest) if os.path.basename(w) == "env" or w.startswith("python")), len(rest))
        at = next((k for k, w in enumerate(rest) if any(c in _SHELL_SPECIAL for c in w)
                   or (k < end and _assignment(w))), None)  # fmt: skip
        if at is not None:
            # (irobust7: the word as the decision's command line shows it, redact_argv over the words after the
            # program, so a secret flag's value or a random-looking assignment is masked here too; at most 80
            # characters)
            from stackcheck.redact import redact_argv

            word = redact_argv(rest[: at + 1])[at][:80]
            why = (f"{prog} joins the words after it with spaces and the remote user's shell reads them again "
                   f"(`{word}`), so the words the server gets are not the ones written")  # fmt: skip
            return Wrapped(prog, "opaque", why)
    if prog in ELSEWHERE:
        return Wrapped(prog, "elsewhere", ELSEWHERE[prog][0])
    if prog in _MPI:
        wrapped, at = _mpi(argv, i, env)
        if wrapped is None and not _mpi_root_allowed(argv[i + 1 : at], env):
            return Wrapped(prog, "opaque", _MPI_ROOT.format(prog=prog))
        return wrapped
    if prog == "strace":
        return _strace(argv, i)
    if prog == "perf":
        return Wrapped(prog, "opaque", _PERF_OPEN if command_at(argv, i) is not None else OPAQUE["perf"])
    if prog in OPAQUE:
        return Wrapped(prog, "opaque", OPAQUE[prog])
    if prog.startswith(("mpirun.", "mpiexec.")):  # (irobust7: Debian's alternatives, mpirun.openmpi, mpiexec.hydra)
        return Wrapped(prog, "opaque", OPAQUE["mpirun"])
    return None


def where_to_gate(w: Wrapped) -> str:
    """Where `stackcheck gate` should run for a launch behind `w`."""
    if w.program in ELSEWHERE:
        return ELSEWHERE[w.program][1]
    return "where the server runs"
