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
  as before, an assignment word where the program runs its command refused (blocked). For mpirun (igap56) only where
  its installation gives no host either: no OMPI_MCA_ / PRTE_MCA_ host parameter in the environment, and (read on
  this host by mpi_default_hosts, unknown under --facts / --root / --image) no host in its default hostfile and no
  host parameter in its MCA parameter files.

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
    from typing import Any


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
    # (irobust11: `sbatch --wrap "python -m sglang.launch_server ..."` was read as an SGLang wrapper and judged on this
    # box with none of the string's flags; sbatch(1): it submits a batch script, or with --wrap the command string
    # wrapped in an sh script, to the Slurm controller, which runs it on the job's allocated nodes)
    "sbatch": ("sbatch submits the command (its --wrap string, or a batch script) to Slurm, which runs it later on "
               "the job's allocated node", "on that node (inside the job: `srun stackcheck gate -- ...`)"),
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
#: a resource manager's allocation, whose nodes mpirun places ranks on without -H (irev75: Grid Engine's too, whose
#: ras component reads PE_HOSTFILE's hosts where SGE_ROOT, ARC, PE_HOSTFILE and JOB_ID are set: orte/mca/ras/gridengine
#: ras_gridengine_component.c and PRRTE's copy; any one of them set is taken, fail closed)
_ALLOCATION = ("SLURM_JOB_ID", "SLURM_JOBID", "PBS_JOBID", "PBS_NODEFILE", "LSB_JOBID", "PE_HOSTFILE",
               "OMPI_MCA_orte_default_hostfile")  # fmt: skip
_LOCAL = frozenset({"localhost", "127.0.0.1", "::1"})
#: (igap56) Open MPI's MCA variables that give mpirun hosts without -H / --hostfile: 4.x orte_default_hostfile (default
#: $sysconfdir/openmpi-default-hostfile) and orte_default_dash_host (orte/runtime/orte_mca_params.c, v4.1.x), 5.x
#: PRRTE's prte_default_hostfile (default $sysconfdir/prte-default-hostfile) and prte_default_dash_host
#: (prrte src/runtime/prte_mca_params.c), the rank file of rmaps (rmaps_rank_file_path), and mca_param_files (files
#: that may set any of them); read from the environment as OMPI_MCA_ / PRTE_MCA_ / PMIX_MCA_ NAME (the prefixes of
#: the MCA base): any name with one of these words is taken (fail closed: a spelling not read here, e.g.
#: rmaps_default_hostfile, is inferred to mean the same). irev75: the MCA base's other parameter files too, which may
#: set any of them: mca_base_override_param_file ($sysconfdir/openmpi-mca-params-override.conf, read over the
#: environment), mca_base_param_file_prefix / _path / _path_force (`--am FILE` aggregate sets) and
#: mca_base_envar_file_prefix (`--tune FILE`) (opal/mca/base/mca_base_var.c mca_base_var_cache_files, open-mpi/ompi)
_MCA_PREFIXES = ("OMPI_MCA_", "PRTE_MCA_", "PMIX_MCA_", "OPAL_MCA_")
_MCA_HOST_WORDS = ("hostfile", "dash_host", "rank_file", "rankfile", "machinefile", "param_file", "envar_file")


#: (irev75) a mapping policy that places ranks by a file: PRRTE's `--map-by rankfile:file=F` / any `:file=F` modifier,
#: `seq` (read by its prefix: strncasecmp with the word's length, "se" on; the sequential mapper's file), and 4.x's
#: `--mca rmaps seq` / `rank_file` (prrte src/mca/rmaps/base/rmaps_base_frame.c prte_rmaps_base_set_mapping_policy
#: and check_modifiers): the policy's MCA parameters are PRRTE's rmaps_default_mapping_policy and 4.x's
#: rmaps_base_mapping_policy and rmaps (the component)
_MCA_MAPPING_WORDS = ("mapping_policy", "map_by")


def _map_by_file(value: str) -> bool:
    """Whether a mapping policy (`--map-by VALUE`, its MCA parameter) places ranks by a file (irev75)."""
    lowered = value.lower()  # (a value quoted in a parameter file is read unquoted too: fail closed, irev75)
    return "file" in lowered or lowered.split(":")[0].split(",")[0].strip(" \t\r\"'").startswith("se")


def _mca_sets_hosts(name: str, value: str | None) -> bool:
    """Whether an MCA parameter (its name, without the OMPI_MCA_ prefix or with it; its value where known, None where
    not read) may give mpirun hosts: a host word in the name (igap56), or a mapping policy by a file (irev75)."""
    lowered = name.lower()
    if any(word in lowered for word in _MCA_HOST_WORDS):
        return True
    mapping = any(w in lowered for w in _MCA_MAPPING_WORDS) or lowered.endswith("_rmaps") or lowered == "rmaps"
    return mapping and (value is None or _map_by_file(value))


def _mca_hosts_variable(name: str, value: str | None = None) -> bool:
    """Whether an environment variable sets an Open MPI / PRRTE MCA parameter that gives mpirun hosts (igap56)."""
    if not name.startswith(_MCA_PREFIXES):
        return False
    return _mca_sets_hosts(name, value)


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
        if name.lstrip("-") == "map-by" and _map_by_file(value if eq else (argv[j + 1] if j + 1 < len(argv) else "")):
            return Wrapped(prog, "opaque", f"{prog} {name} maps the ranks by a file (a rankfile or the sequential "
                           "mapper's), whose hosts may be others"), None  # fmt: skip
        if name in _MPI_VALUE:
            j += 1 if eq else 2
            continue
        if name in _MPI_TWO:
            param = value if eq else (argv[j + 1] if j + 1 < len(argv) else "")
            setting = argv[j + 1 + (0 if eq else 1)] if j + 1 + (0 if eq else 1) < len(argv) else ""
            if _mca_sets_hosts(param, setting):  # (igap56: `--mca orte_default_hostfile F`; irev75: a mapping file)
                shown = redact_value(param)[:80]
                return Wrapped(prog, "opaque", f"{prog} {name} {shown} sets a default host list or parameter file it "
                               "places ranks on (another host may run the command)"), None  # fmt: skip
            j += 2 if eq else 3  # (`--mca=NAME VALUE`: two words; imend9, three before)
            continue
        if name in _MPI_PLAIN and not eq:
            j += 1
            continue
        return Wrapped(prog, "opaque", f"{prog}'s option `{name}` is not read (its value, the directory, environment "
                       "or hosts it sets)"), None  # fmt: skip
    held = [name for name in _ALLOCATION if name in env] or [n for n, v in env.items() if _mca_hosts_variable(n, v)]
    if held:
        if held[0] not in _ALLOCATION or held[0].startswith("OMPI_MCA_"):
            return Wrapped(prog, "opaque", f"{prog} reads {held[0]} from the environment, a default host list or "
                           "parameter file it places ranks on (another host may run the command)"), None  # fmt: skip
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
            # (irobust13: `--e` / `--u` too: strace 6.1's only long options that start so, getopt_long's unique
            # prefixes; run here, `strace --e A=1 env` prints A=1)
            if name and ("env".startswith(name) or "user".startswith(name)):
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


#: (igap56) the files of an Open MPI installation that give `mpirun -np 1` hosts without any option: the default
#: hostfile in its sysconfdir (4.x openmpi-default-hostfile, 5.x PRRTE prte-default-hostfile: with a host in it the
#: job's ranks go to its hosts, the first one first, not beside mpirun: orte_hosts(7) "Default hostfile defines
#: resource list for the job"), and the MCA parameter files that may set orte_default_hostfile / prte_default_hostfile
#: / *_default_dash_host / rmaps_rank_file_path (mca_param_files' default: $HOME/.openmpi/mca-params.conf and
#: $sysconfdir/openmpi-mca-params.conf; PRRTE: $HOME/.prte/mca-params.conf and $sysconfdir/prte-mca-params.conf).
#: sysconfdir is where the build installed openmpi-mca-params.conf / prte-mca-params.conf (make install always puts
#: one there): looked for in mpirun's prefix/etc and, for a launcher under /usr, /etc/openmpi* (Debian's and Fedora's
#: packages); a build whose sysconfdir is none of them is not found, and unknown. The directories OPAL_ / PRTE_ / PMIX_
#: SYSCONFDIR and PREFIX (/etc) give are read whatever they hold (irev75)
_MPI_HOSTFILES = ("openmpi-default-hostfile", "prte-default-hostfile")
#: (irev75) the names Open MPI's launcher has once its links are resolved: 4.x mpirun / mpiexec -> orterun, 5.x mpirun
#: (which runs prterun), Debian's and Fedora's mpirun.openmpi alternatives; a launcher resolving to another name
#: (MPICH's mpiexec.hydra, Debian's mpirun.mpich, Intel MPI's) reads other host settings (HYDRA_HOST_FILE, its own
#: options: MPICH wiki Using_the_Hydra_Process_Manager, HYDRA_HOST_FILE the default host file; inferred for Intel MPI)
#: and is unknown; so is the /etc/openmpi* fallback for
#: a launcher outside /usr (a decoy: another installation's configuration)
_OPEN_MPI_PROGRAMS = frozenset({"mpirun", "mpiexec", "orterun", "prterun", "mpirun.openmpi", "mpiexec.openmpi",
                                "orterun.openmpi", "prterun.openmpi"})  # fmt: skip
_MPI_PARAM_FILES = ("openmpi-mca-params.conf", "prte-mca-params.conf", "pmix-mca-params.conf", "prrte-mca-params.conf",
                    # (irev75: read after the others and over the environment: mca_base_var.c, PMIx's and PRRTE's)
                    "openmpi-mca-params-override.conf", "prte-mca-params-override.conf",
                    "pmix-mca-params-override.conf", "prrte-mca-params-override.conf")  # fmt: skip
_MPI_HOME_PARAMS = (".openmpi/mca-params.conf", ".prte/mca-params.conf", ".pmix/mca-params.conf")
MPI_HOSTFILE_SOURCES = [
    {"title": "Open MPI 4.1 orte_hosts(7): the default hostfile defines the resource list for the job",
     "url": "https://www.open-mpi.org/doc/v4.1/man7/orte_hosts.7.php"},
    {"repo": "open-mpi/ompi", "path": "orte/runtime/orte_mca_params.c", "ref": "v4.1.x"},
    {"repo": "openpmix/prrte", "path": "src/runtime/prte_mca_params.c", "ref": "master"},
]  # fmt: skip


#: (irev75) the lines of a default hostfile read as giving this host only, in the shape Open MPI's hostfile lexer reads
#: them (orte/util/hostfile/hostfile_lex.l and hostfile.c hostfile_parse_line, v4.1.x; PRRTE's copy in 5.x, inferred
#: the same): whitespace is space, tab, form feed and vertical tab only (a carriage return is no whitespace: an
#: error); a comment is `#` to the end of a line ended by a newline (also after a host); one host a line, then
#: keyword=integer pairs (another word is a parse error, mpirun exits); `//` and `/* */` comments, quoted strings,
#: user@host, `rank N=HOST`, relative `+n1` and `^host` exclusions are not read here (unknown)
_HOSTFILE_WHITE = " \t\f\v"
_HOSTFILE_KEYS = "slots|count|cpu|max_slots|max-slots|slots_max|slots-max"
_HOSTFILE_LOCAL_LINE = (r"[ \t\f\v]*(?:(?:localhost|127\.0\.0\.1|::1)(?:[ \t\f\v]+(?:" + _HOSTFILE_KEYS +
                        r")[ \t\f\v]*=[ \t\f\v]*[0-9]+)*[ \t\f\v]*)?(?P<comment>#.*)?")  # fmt: skip


def _hostfile_not_local(text: str) -> str | None:
    """Why a default hostfile's text may give mpirun a host other than this one, or None where each line is blank, a
    comment or this host (localhost, 127.0.0.1, ::1) with its slot counts (irev75: a line was read by its first word,
    so `localhost slots=2 node7` or a CRLF file read as this host's where mpirun fails on them)."""
    import re

    local_line = re.compile(_HOSTFILE_LOCAL_LINE)
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        last = number == len(lines)  # (no newline after it: a comment there is an error to the lexer)
        got = local_line.fullmatch(line)
        if got is not None and not (last and got.group("comment")):
            continue
        words = line.strip(_HOSTFILE_WHITE).split()
        first = words[0] if words else ""
        if first and first not in _LOCAL and not first.startswith("#") and first != "rank":
            return f"lists the host {first[:80]!r}"
        return f"has line {number}, which is not read here as this host's alone"
    return None


def _mpi_file_text(view: Any, path: str) -> tuple[bool, str | None]:
    """(present, its text: None where it could not be read or is over 1 MiB)."""
    try:
        st = view.stat(path)
    except (OSError, ValueError):
        return True, None
    if st is None:  # (irev75: a link that does not resolve, a loop or a dangling one, is there and not read: unknown)
        try:
            there = view.stat(path, follow_symlinks=False) is not None
        except (OSError, ValueError):
            there = True
        return there, (None if there else "")
    try:
        raw = view.read_bytes(path, 1 << 20)
    except (OSError, ValueError):
        return True, None
    return True, (None if len(raw) >= 1 << 20 else raw.decode("utf-8", "replace"))


def mpi_default_hosts(view: Any, prog: str, env: Mapping[str, str], cwd: str | None) -> str | None:
    """Why `prog` (Open MPI's mpirun read as local: -np 1, no host given) may run the command on another host through
    its installation's default hostfile or MCA parameter files (igap56), as text; None where neither is found there,
    read through `view` (the box the server starts on)."""
    import posixpath

    from stackcheck.readers.fsview import listdir_or_empty, which_known

    if "/" in prog and not prog.startswith("/"):  # (irev75: `bin/mpirun` is read from the server's directory)
        if cwd is None or not cwd.startswith("/"):
            return f"{prog} is relative to the server's working directory, which is not known here"
        prog = posixpath.join(cwd, prog)
    found, why = which_known(view, prog, env.get("PATH"), cwd, "the server's working directory")
    if found is None:
        return why or f"{prog} is not found on the launch's PATH, so its installation is not read"
    try:
        real = view.realpath(found)
    except (OSError, ValueError):
        return f"{found} could not be resolved, so its installation is not read"
    if posixpath.basename(real) not in _OPEN_MPI_PROGRAMS:  # (irev75: MPICH's / Intel MPI's hydra, another launcher)
        return (
            f"{found} is {posixpath.basename(real)[:80]!r}, not known as Open MPI's mpirun, so which hosts "
            "it reads (MPICH's and Intel MPI's hydra: HYDRA_HOST_FILE, I_MPI_HYDRA_HOST_FILE) is not read here"
        )
    # (irev75) OPAL_ / PRTE_ / PMIX_ SYSCONFDIR and PREFIX relocate the installation (opal/mca/installdirs/env, PRRTE's
    # prteinstalldirs/env: sysconfdir, or ${prefix}/etc; PMIx's inferred the same): the directory they give is read
    # whatever it holds, not only where a parameter file marks it
    given = {f"{p}_{k}": env.get(f"{p}_{k}") or "" for p in ("OPAL", "PRTE", "PMIX") for k in ("SYSCONFDIR", "PREFIX")}
    odd_given = [f"{n}={v[:80]!r}" for n, v in given.items() if v and not v.startswith("/")]
    if odd_given:
        return f"{odd_given[0]} is no absolute directory, so {prog}'s configuration directory is not known"
    forced = [posixpath.join(v, "etc") if n.endswith("_PREFIX") else v for n, v in given.items() if v]
    dirs = [posixpath.join(posixpath.dirname(posixpath.dirname(real)), "etc")]
    if real.startswith("/usr/"):  # (irev75: a distribution's package only; another prefix's is its own prefix/etc)
        dirs += [posixpath.join("/etc", n) for n in listdir_or_empty(view, "/etc") if n.startswith("openmpi")]
    homes = [env.get("HOME") or ""]
    conf = [d for d in dict.fromkeys([*forced, *dirs]) if d.startswith("/") and (d in forced or any(
        _mpi_file_text(view, posixpath.join(d, n))[0] for n in _MPI_PARAM_FILES))]  # fmt: skip
    if not conf:
        return (f"the configuration directory of the Open MPI that {real} belongs to (its openmpi-mca-params.conf) is "
                "not found, so its default hostfile is not read")  # fmt: skip
    for d in conf:
        for name in _MPI_HOSTFILES:
            path = posixpath.join(d, name)
            present, text = _mpi_file_text(view, path)
            if present and text is None:
                return f"{path} could not be read"
            odd = _hostfile_not_local(text or "")
            if odd is not None:
                return f"{path} {odd}, on which {prog} may place the command's rank (or fail to read the file)"
    if not homes[0].startswith("/"):
        return f"the launch's HOME is not known, so {prog}'s per-user parameter files are not read"
    params = [posixpath.join(d, n) for d in conf for n in _MPI_PARAM_FILES]
    params += [posixpath.join(homes[0], n) for n in _MPI_HOME_PARAMS]
    for path in params:
        present, text = _mpi_file_text(view, path)
        if present and text is None:
            return f"{path} could not be read"
        for line in (text or "").splitlines():
            name, _, setting = line.partition("=")
            name = name.strip().lower()
            if name and not name.startswith("#") and _mca_sets_hosts(name, setting):
                return f"{path} sets {name[:80]}, which gives {prog} hosts or parameter files of its own"
    return None
