"""`stackcheck gate`: refuse to start a server whose features are blocked, else exec it.

    stackcheck gate --require FEATURE... [--allow-unknown] [--facts FILE] [--format text|json]
    stackcheck gate [options] [--dry-run] -- COMMAND...
    stackcheck gate --watch [options] -- COMMAND...   (a child, not exec: triage if it dies)

With a command, the gate reads the SGLang command line and its environment (manifests/launch.json), derives
the features it needs and the launch facts (tp, attention backend, quantization, speculative algorithm),
evaluates them, and then either replaces itself with the command (os.execvp: same pid, argv exactly as
given, no shell; the exit status and signals are the server's own) or refuses: the server never starts.
The policy for explicit, default and every-launch features and checks is in stackcheck/launch/gate.py's
docstring and in --help. What the gate prints (the decision, the command line) has secrets masked
(stackcheck.redact) and control characters escaped; the command that runs is never changed.

Output: when the command is exec'd, the gate writes only to stderr (warnings; nothing with --quiet), so the
server's stdout is its own. A refusal, --dry-run, or a --require check without a command write the
decision to stdout (text, or JSON with --format json).

Exit codes: 0 every required feature ok (no command, or --dry-run that would allow); 1 refused (a required
feature is not ok); 2 usage error or bad input (no command after --, an unknown --require feature, a
malformed server flag such as `--tp` without a value, a bad facts file or manifest); 3 a probe failed and
--strict was given; 4 internal error in the gate: it refuses and never execs; 126/127 the command could
not be executed / was not found (as a shell says; an empty command is 127). Once exec'd, the status is the
server's; with --watch too (128 + N when signal N ended it)."""

from __future__ import annotations

import os
import sys

from stackcheck.commands.arguments import add_facts_options, file_name, given, options_from
from stackcheck.errors import EXIT_FINDING, EXIT_INTERNAL, EXIT_OK, BadInputError, StackcheckError, UsageError
from stackcheck.lean_typing import TYPE_CHECKING, cast
from stackcheck.render import GATE_FORMATS
from stackcheck.render.interface import RenderOptions

if TYPE_CHECKING:
    import argparse  # (at run time where the parser is built: `gate ... --` of the fast path imports no argparse)
    from collections.abc import Callable, Sequence
    from typing import Any

    from stackcheck.knowledge.types import Feature
    from stackcheck.plan.json_shapes import PlanJSON
    from stackcheck.verdicts.types import FeatureVerdict

SCHEMA_VERSION = 1  # of the decision document (--format json; schemas/gate.schema.json)

HELP_EPILOG = """decision policy:
  explicit features (--require, or turned on by a flag or value in COMMAND) must be ok: blocked refuses,
  unknown refuses unless --allow-unknown, not-applicable (a package it needs is missing) refuses.
  default features (custom-allreduce when tp > 1 unless --disable-custom-all-reduce; cuda-graph unless
  --disable-cuda-graph; deepgemm unless SGLANG_ENABLE_JIT_DEEPGEMM is false; attention-flashinfer when
  FlashInfer is the default sampler or attention backend) are checked too: blocked with
  effect crash or wrong-output (the server starts and serves wrong results, no error) refuses, blocked
  with effect disabled/degraded only warns; unknown refuses (unless --allow-unknown) when one of the
  feature's rules can crash or serve wrong output, else warns.
  values the manifests do not know are unknown; a flag the installed SGLang lacks refuses, also one launch.json
  does not list (a typo, a flag renamed or removed: every release's flags are in the data); flags it does
  not read are one note line; --config FILE is merged as SGLang merges it.
  deepgemm (default on) fails only with FP8 models: it warns; --quantization fp8 requires fp8-block-gemm.
  every SGLang launch also needs what crashes any launch on this box (manifests' required_by): torch and the
  kernel package compiled for the GPU, the kernel package paired with torch, its CUDA libraries, the kernel
  version SGLang checks at start, the driver against torch's CUDA, matching FlashInfer packages, one NCCL
  wheel, Triton's ptxas, and SGLang 0.5.9+'s nvcc (its RoPE kernel is compiled at run time). Other checks
  are needed by the launches they reach: the JIT toolchain with the features FlashInfer or DeepGEMM compile,
  NCCL's releases and PCIe peer traffic with tp > 1 or pp > 1, peer access with custom-allreduce, cuDNN
  with a multimodal model (a model the gate cannot read counts as one). A crash or a wrong output refuses,
  a degrading failure warns (SGLang's metadata pins, stated), unknown refuses unless --allow-unknown.
  a probe that failed or timed out is unknown, never "not installed": it refuses unless --allow-unknown.
  an explicit feature that is blocked only as slower (degraded) or a no-op (disabled) warns, unless
  --strict-features; --allow FEATURE (or a check id) accepts a known blocker on purpose and says so.
  a command in which no SGLang launch or flag is found needs no feature (only --require is checked).

preflight (an SGLang launch; manifests/preflight.json):
  gpu-count: the GPUs the ranks take (tp x pp [x dp], per node, --base-gpu-id) against those visible after
  CUDA_VISIBLE_DEVICES; gpu-memory: free memory and the processes holding it on those GPUs against
  --mem-fraction-static (or the release's default) and the model's weights; model: config.json and
  hf_quant_config.json from a local path or the Hugging Face cache (never the network), whose format adds
  features (FP8 block -> fp8-block-gemm + deepgemm, MXFP4 -> mxfp4-moe, NVFP4 -> nvfp4); --config FILE is
  merged as SGLang merges it; dependencies: SGLang's Requires-Dist in the target environment (pip check's
  rules); shm, port, memlock: /dev/shm when tp > 1, the --host/--port in use (a loopback bind, no
  connection), ulimit -l across nodes. fail refuses; unknown refuses unless --allow-unknown; warn warns.
  With --facts FILE the box's live state (memory, port, shm, ulimit, dependencies) is not read.

output: the decision (stdout, or stderr when the command runs) masks secrets: values of --api-key,
  --admin-api-key, --hf-token and other secret-looking flags, token-shaped values, credentials in URLs.

gate exit codes:
  0  allowed (no command, or --dry-run); with a command the server replaces the gate: its status is returned
  1  refused: a required feature is not ok (one line per reason, with the plan step that fixes it)
  2  usage error or bad input (no command after --, unknown feature, malformed server flag, bad facts file)
  3  a probe failed and --strict was given
  4  internal error in the gate: refused, the command is never run
  126/127  the command could not be executed / was not found
"""


#: --started-by's values: stackcheck.commands.audit STARTED_BY_CHOICES (not imported: ~0.5 ms of every gate's start)
STARTED_BY_CHOICES = ("docker-gpus", "nvidia-runtime", "cdi-device")


def add_arguments(p: argparse.ArgumentParser) -> None:
    import argparse  # (imported by the parser's builder already: commands.lean_gettext)

    p.epilog = HELP_EPILOG
    add_facts_options(p)
    p.add_argument(
        "--started-by",
        choices=STARTED_BY_CHOICES,
        metavar="HOW",
        help="with --image: how its containers start, which decides what checks NVIDIA_REQUIRE_* (see `stackcheck "
        "audit --help`): docker-gpus | nvidia-runtime | cdi-device",
    )
    p.add_argument(
        "--require",
        metavar="FEATURE",
        type=given,  # `--require "$FEATURES"` unset: required nothing, and the gate allowed (fail closed: exit 2)
        nargs="+",
        action="extend",
        default=[],
        help="features that must be ok (repeatable, or comma-separated); see `stackcheck audit` for ids",
    )
    p.add_argument("--allow-unknown", action="store_true", help="do not refuse on unknown (fail open on unknowns)")
    p.add_argument(
        "--allow",
        metavar="FEATURE",
        action="append",
        default=[],
        help="accept a known blocked feature (or a failing stack or preflight check) on purpose: it warns, and the "
        "decision says it was allowed (repeatable, or comma-separated)",
    )
    p.add_argument(
        "--strict-features",
        action="store_true",
        help="refuse an explicit feature that is blocked only as slower or a no-op (by default it warns)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print what was derived and decided; run nothing (implied by --root: a root's launch is judged inside "
        "it, with its default PATH and not this host's environment, its model path and Hugging Face cache read in "
        "the root, and never run here; GPU memory, the port and /dev/shm stay this host's readings; with --image, "
        "which runs nothing here either, the model path and Hugging Face cache are read inside the image, from its "
        "WorkingDir, Env and User's home, a model it lacks is a note, and no live state of this host is read)",
    )
    p.add_argument(
        "--cwd",
        metavar="DIR",
        type=file_name,
        help="the directory the server starts in (default: the gate's own, where it runs the server; with --facts "
        "none, so what a relative path would name there is unknown): its ./sglang shadowing the installed one, a "
        "relative --model-path, --config or SGLANG_NCCL_SO_PATH, a relative LD_LIBRARY_PATH or PATH entry are read "
        "from there (the JSON's launch_dir says which), and the server is run there; a DIR that is not a readable "
        "directory exits 2",
    )
    p.add_argument("--format", choices=list(GATE_FORMATS), default="text", help="decision format (default text)")
    p.add_argument("-q", "--quiet", action="store_true", help="no warnings on stderr when the command is run")
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also list the server flags the gate does not read (they pass to the server unchecked)",
    )
    p.add_argument(
        "--advise", action="store_true", help="notes with every recommendation for this launch (stackcheck recommend)"
    )
    p.add_argument(
        "--watch",
        action="store_true",
        help="run the server as a child instead of exec: pass its output through, say when it is ready, "
        "and if it dies print the triaged root cause (exit status is the server's)",
    )
    p.add_argument(
        "--log",
        metavar="FILE",
        type=file_name,
        help="with --watch: also append the server's whole output to FILE (a writer that never slows the "
        "server down: what the disk cannot take is dropped and counted)",
    )
    p.add_argument(
        "--log-keep",
        metavar="MB",
        type=_positive_float,
        default=8.0,
        help="with --watch: the last MB of the server's output kept in memory for triage (default 8)",
    )
    p.add_argument(
        "--drain",
        metavar="SECONDS",
        type=_positive_float,
        default=2.0,
        help="with --watch: after the server dies, how long to keep reading output its children still "
        "write (default 2)",
    )
    p.add_argument(
        "--ready-pattern",
        metavar="TEXT",
        default="The server is fired up",
        help="with --watch: the log text that means the server is ready (default: SGLang's)",
    )
    p.add_argument(
        "server_command", metavar="-- COMMAND", nargs=argparse.REMAINDER, help="the server to start, after --"
    )


#: words that start a server command line rather than follow a gate option (--require takes several values)
_COMMAND_WORDS = frozenset(
    {"sglang", "uv", "conda", "mamba", "micromamba", "env", "nohup", "srun", "docker", "bash", "sh", "exec",
     "numactl", "taskset", "torchrun", "sudo", "nice", "ionice", "stdbuf", "timeout", "time"}
)  # fmt: skip


def corrected_argv(argv: list[str], parser: argparse.ArgumentParser) -> list[str] | None:
    """The gate's own arguments with the `--` a user left out put back before the server command, or None
    when nothing is missing. The gate's options are read as argparse would (`--opt value`, `--opt=value`,
    a unique prefix); the first word that is not one of them starts the command."""
    import argparse  # (the parser's: imported already)

    options = {o: a for a in parser._actions for o in a.option_strings}
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return None
        if not word.startswith("-") or word == "-":
            break
        name = word.split("=", 1)[0]
        hits = [o for o in options if o == name] or [o for o in options if o.startswith(name) and o.startswith("--")]
        if len(hits) != 1:
            break  # not a gate option (`-m`, `--tp`): the command starts here
        action = options[hits[0]]
        if "=" in word or action.nargs == 0:
            i += 1
        elif action.nargs in ("+", "*"):
            i += 2
            while i < len(argv) and not _starts_command(argv[i]):
                i += 1
        elif action.nargs == argparse.REMAINDER:
            return None
        else:
            i += 1 + (action.nargs if isinstance(action.nargs, int) else 1)
    if i >= len(argv):
        return None
    return [*argv[:i], "--", *argv[i:]]


def _starts_command(word: str) -> bool:
    base = word.rsplit("/", 1)[-1]
    return word.startswith("-") or "/" in word or base.startswith("python") or base in _COMMAND_WORDS


def _positive_float(text: str) -> float:
    import argparse  # (argparse calls it while parsing: imported already)

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number") from None
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a positive number")
    return value


#: the most words of a server command the gate reads (irobust5): a real launch line has a few hundred at most, and
#: reading one costs ~0.1-0.4 ms a word in each of the gate's passes (100,000 words: half a minute); a longer one is
#: refused unread (exit 2, never run) rather than judged after minutes
MAX_COMMAND_WORDS = 4096


def command_bounded(cmd: list[str]) -> list[str]:
    """`cmd`, or a UsageError where it has more than MAX_COMMAND_WORDS words, the blank-separated words inside each of
    its arguments counted (irobust6: a shell's command string, `bash -c "python -m sglang.launch_server ..."`, is read
    word by word as the command is: one 128 KiB argument of 40,000 words took ~15 s, under the cap as one word)."""
    count = sum(max(1, len(word.split())) for word in cmd)
    if count > MAX_COMMAND_WORDS:
        where = "" if count == len(cmd) else " (the words inside its arguments counted)"
        raise UsageError(
            f"the command after -- has {count} words{where}, more than the {MAX_COMMAND_WORDS} stackcheck reads; it "
            "was not read (nor run)"
        )
    return cmd


def _command(args: argparse.Namespace) -> list[str] | None:
    cmd = list(args.server_command or [])
    if not cmd:
        return None
    if cmd[0] == "--":
        cmd = cmd[1:]
        if not cmd:
            raise UsageError("missing command after -- (expected, e.g., -- python -m sglang.launch_server ...)")
        return command_bounded(cmd)
    raise UsageError(f"unexpected argument {cmd[0]!r}: put the server command after --")


def run(args: argparse.Namespace) -> int:
    from stackcheck.assembly import gate_cache

    slot = gate_cache.slot_for(args)  # the decision kept for this command line on this box, when one may be
    watched = None
    if slot is not None:
        from stackcheck.assembly.plan_cache import Watched

        gate_cache.ACTIVE[:] = [slot]  # what the decision reads is recorded (gate_cache.note, Recording)
        watched = sys.stderr = Watched(sys.stderr)
    try:
        outcome = _decide(args, slot)
    except StackcheckError:
        raise  # usage / bad input / probe failures: cli prints one line and exits 2 or 3; never exec
    except Exception as exc:  # a bug in the gate: refuse, never exec
        from stackcheck.redact import message_safe

        line = f"stackcheck gate: internal error: {type(exc).__name__}: {exc}".splitlines()[0]
        print(message_safe(line), file=sys.stderr)
        print("stackcheck gate: refused: the command was not run (exit 4)", file=sys.stderr)
        if os.environ.get("STACKCHECK_DEBUG"):
            from stackcheck.redact import traceback_lines

            print("\n".join(traceback_lines()), file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        gate_cache.ACTIVE.clear()
        if watched is not None and sys.stderr is watched:
            sys.stderr = watched.stream
    if slot is not None and watched is not None and watched.used:
        slot.spoiled = True  # (something was written to stderr while deciding: not kept)
    doc, command = outcome
    if isinstance(doc, Kept):  # the same launch on the same box, nothing it read changed: what was printed then
        if doc.entry["exec"] and command is not None:
            _enter(args)  # (--cwd: where the server starts)
        return doc.serve(command)
    allow = doc["decision"] == "allow"
    # what is printed is masked by the format's renderer (stackcheck.render, redact.public_document: the values of
    # secret-looking flags of the command line, credentials in URLs, token-shaped values); the command that runs is
    # unchanged
    shown = doc
    render = GATE_FORMATS[args.format]
    if command is None or args.dry_run or not allow:
        from stackcheck.atomic import write_stdout

        text = render(shown, RenderOptions(verbose=args.verbose))
        code = EXIT_OK if allow else EXIT_FINDING
        if slot is not None:
            gate_cache.keep(slot, text, "", code, False)
        write_stdout(text)
        return code
    warnings = ""
    if not args.quiet:  # the server's stdout is its own: the warnings (the JSON on one line) go to stderr
        warnings = render(shown, RenderOptions(verbose=args.verbose, warnings_only=True, compact=True))
    if slot is not None and not args.watch:
        gate_cache.keep(slot, "", warnings, EXIT_OK, True)
    if warnings:
        _err(warnings)
    _enter(args)
    if args.watch:
        import gc

        from stackcheck.launch.watch import watch

        gc.enable()  # the parent lives as long as the server: the collector cli.main paused for the decision runs
        _settle_nvml()
        return watch(
            command,
            ready=args.ready_pattern.encode(),
            keep_bytes=int(args.log_keep * 2**20),
            log_path=args.log,
            drain_s=args.drain,
            assumed=list(doc.get("assumed") or []) or None,
        )
    return _exec(command)


class Kept:
    """A decision kept by stackcheck.assembly.gate_cache: what it printed (stdout, stderr), its exit status and
    whether the command was run."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.entry = entry

    def serve(self, command: list[str] | None) -> int:
        entry = self.entry
        if entry["out"]:
            from stackcheck.atomic import write_stdout

            write_stdout(entry["out"])
        if entry["err"]:
            _err(entry["err"])
        if entry["exec"] and command is not None:
            return _exec(command)
        return int(entry["code"])


def _err(text: str) -> None:
    """A diagnostic on stderr; a closed or broken stderr must never stop the server from starting."""
    try:
        if sys.stderr is not None:
            sys.stderr.write(text)
            sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _settle_nvml() -> None:
    """The forked NVML reader, which shuts NVML down after its answer, reaped (waited for a little; one still hung
    is stopped) before the server replaces this process or starts under it: the server inherits no child of
    ours (stackcheck.probes.nvml_early.discard)."""
    early = sys.modules.get("stackcheck.probes.nvml_early")
    if early is not None:
        early.discard(early.REAP_WAIT_S)


#: the decision's `dry_run` with --root (schemas/gate.schema.json; the text's note line)
ROOT_DRY_RUN = (
    "implied by --root: the launch was judged with the root's programs, packages and default environment (the PATH "
    "only, and the command's own env prefix), not this host's; the model path and the Hugging Face cache were read "
    "inside the root (a relative path from its /, HF_HOME / HF_HUB_CACHE from that environment, ~ its uid 0's home); "
    "GPU memory, the port and /dev/shm are this host's readings (a root directory has no GPUs, sockets or mounts of "
    "its own); the server is not run here"
)


#: what the decision's `note` says of an image's SGLang launch (gate --image): where its model and live state were read
IMAGE_READINGS = (
    "the model path and the Hugging Face cache were read inside the image (a relative path from its WorkingDir, "
    "HF_HOME / HF_HUB_CACHE from its Env and the command's env prefix, ~ its User's home), never on this host; a model "
    "the image lacks (a volume mounted when the container is made) is a note, its needs not derived; GPU memory, the "
    "port and /dev/shm were not read (they are the container's host's)"
)


def _root_fields(doc: dict[str, Any], opts: Any) -> None:
    if opts.root:
        doc["root"] = opts.root
        doc["dry_run"] = ROOT_DRY_RUN


def _mpi_view(opts: Any) -> tuple[Any, str | None, str]:
    """(the view mpirun's installation is read through: this host's, None under --facts / --root / --image; the
    directory the server starts in, where known; why it is not read)."""
    if opts.facts_file or opts.image or opts.root:
        return None, None, ("its installation's files are those of the box or image the server runs on, not read "
                            "here (gate --facts / --root / --image)")  # fmt: skip
    from stackcheck.assembly import gate_cache

    return gate_cache.host_view(), opts.cwd or opts.launch_dir, ""


def _dir_test(opts: Any) -> Callable[[str], bool] | None:
    """Whether a directory is one where the server starts: this host's (read through the gate's view), None under
    --facts (another box: not read, chdir_problems says unknown)."""
    if opts.facts_file:
        return None
    from stackcheck.assembly import gate_cache
    from stackcheck.readers.fsview import is_dir

    view = gate_cache.host_view()
    return lambda path: is_dir(view, path)


def _launch_dir(path: str) -> str:
    """gate --cwd DIR as an absolute path with its symbolic links resolved (the server's working directory is the
    directory chdir reaches, and a relative `../models/m` is read from there, not from beside the link: irev65), or a
    usage error (exit 2, one line) where it is no directory this process can enter and list: the launch would not
    start there, and what the gate reads there would not be read."""
    from stackcheck.redact import field_safe

    where = os.path.realpath(path)
    if not os.path.isdir(where):
        what = "does not exist" if not os.path.lexists(where) else "is not a directory"
        try:
            os.stat(path)
        except OSError as exc:  # (irobust: realpath leaves a loop of links unresolved, which lexists then finds)
            import errno

            if exc.errno == errno.ELOOP:
                what = "too many levels of symbolic links (a link loop?)"
        raise UsageError(f"--cwd {field_safe(path)}: {what}")
    if not os.access(where, os.R_OK | os.X_OK):
        raise UsageError(f"--cwd {field_safe(path)}: not readable (the server could not start there)")
    return where


def _enter(args: argparse.Namespace) -> None:
    """gate --cwd: the server starts in DIR (exec'd or --watch's child), where the decision read it."""
    where = getattr(args, "cwd", None)
    if where is not None:
        if getattr(args, "log", None):  # `--log server.log` names a file of the shell's directory, not of DIR
            args.log = os.path.abspath(args.log)
        try:
            os.chdir(where)
        except OSError as exc:
            from stackcheck.redact import field_safe

            raise UsageError(f"--cwd {field_safe(where)}: {field_safe(exc.strerror or str(exc))}") from None


def _exec(command: list[str]) -> int:
    from stackcheck.redact import field_safe

    _settle_nvml()
    name = field_safe(command[0])
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    if not command[0]:
        _err("stackcheck gate: '': command not found (the command is an empty string)\n")
        return 127
    ignored = _default_signals()
    try:
        os.execvp(command[0], command)  # noqa: S606 - the point of the gate: argv exactly, no shell
    except FileNotFoundError:
        _restore_handlers(ignored)
        _err(f"stackcheck gate: {name}: command not found\n")
        return 127
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in an argument
        _restore_handlers(ignored)
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        _err(f"stackcheck gate: {name}: cannot execute: {field_safe(why)}\n")
        return 126


#: the signals the interpreter ignores at its start (SIGPIPE, SIGXFSZ; Python's own pylifecycle), which an ignored
#: disposition would pass on through exec: the server gets them at their default, as from a shell (and as
#: subprocess.Popen's restore_signals gives the server `--watch` starts)
INTERPRETER_IGNORED = ("SIGPIPE", "SIGXFSZ", "SIGXFZ")


def _default_signals() -> dict[int, Any]:
    """Before the exec: the interpreter's ignored signals back at their default; what they were, for a failed exec."""
    import signal

    before: dict[int, Any] = {}
    for name in INTERPRETER_IGNORED:
        number = getattr(signal, name, None)
        if number is None:
            continue
        try:
            if signal.getsignal(number) == signal.SIG_IGN:
                before[number] = signal.signal(number, signal.SIG_DFL)
        except (OSError, ValueError):  # not settable here (not the main thread): left as it is
            continue
    return before


def _restore_handlers(before: dict[int, Any]) -> None:
    """After an exec that failed: this process's signal dispositions as they were (its own error lines must not
    end it by SIGPIPE on a closed stderr)."""
    import signal

    for number, handler in before.items():
        try:
            signal.signal(number, handler)
        except (OSError, ValueError):
            continue


def _decide(args: argparse.Namespace, slot: Any = None) -> tuple[Any, list[str] | None]:
    from stackcheck.knowledge.loader import load as load_manifests

    command = _command(args)
    require = [x.strip() for item in args.require or [] for x in item.split(",") if x.strip()]
    if args.require and not require:  # `--require ','`: a list naming no feature, refused as an empty one is
        raise UsageError(f"--require {args.require[0]!r}: names no feature")
    opts = options_from(args)
    if getattr(args, "cwd", None) is not None:
        opts.cwd = args.cwd = _launch_dir(args.cwd)  # (the server is run in the directory judged: _enter)
    # the server's environment: this one, or in an image the one its containers start with; an image's
    # server is never started here (it runs in a container): the gate decides, as with --dry-run
    server_env: dict[str, str] = dict(os.environ)
    image_command: list[str] | None = None
    from stackcheck.assembly.target import check_view_options

    check_view_options(opts)
    if opts.image:
        if args.watch:
            raise UsageError("--watch with --image: the image's server runs in a container, not here")
        if opts.cwd is not None:  # (irobust: it was read inside the image, where the container does not start)
            raise UsageError("--cwd with --image: the image's server starts in its WorkingDir (--cwd names a "
                             "directory of this host)")  # fmt: skip
        entry = getattr(args, "entrypoint", None)  # (a `--entrypoint PROG` option, once the parser has one)
        server_env, image_command, args.image_entry_note = _image_launch(opts.image, opts.platform, command, entry)
        if command is not None and image_command is not None and image_command != command:
            # (iallow2: `docker run IMAGE COMMAND` runs the image's Entrypoint with COMMAND as its arguments, as
            # `docker run --entrypoint PROG IMAGE COMMAND` runs PROG with them: the gate judges what runs)
            args.image_entry_prepended = image_command[: len(image_command) - len(command)]
            command = image_command
    elif opts.root:
        # a root's launch is judged inside it, with the environment its own processes start with (the default PATH
        # looked up in the root, as `audit --root`): this host's PATH, CUDA_HOME, SGLANG_* never reach it; and its
        # server is never run here (this host's loader and packages would run it, not the root's): --dry-run
        if args.watch:
            raise UsageError("--watch with --root: the root's server is not run here (--root implies --dry-run)")
        if opts.cwd is not None:
            raise UsageError("--cwd with --root: a root's launch is judged from its own / (--cwd names a directory "
                             "of this host)")  # fmt: skip
        from stackcheck.assembly.pipeline import root_environment

        server_env = root_environment()
        args.dry_run = True
    if opts.cwd is None and not (opts.image or opts.root or opts.facts_file):
        # a gate of this host runs the server in its own working directory (exec, --watch's child), the default --cwd
        # documents: the probes read a relative LD_LIBRARY_PATH / PATH entry and a relative SGLANG_NCCL_SO_PATH from
        # there, as the preflight reads a relative --model-path (igap45, issue 16; before, they were unknown and a
        # relative SGLANG_NCCL_SO_PATH refused at tp > 1). Never for --facts (saved on a box whose directory the gate
        # does not know), --image (its WorkingDir) or --root (its own /); the JSON says which (launch_dir).
        try:
            opts.launch_dir = os.getcwd()
        except OSError:  # (a working directory removed under the gate: not known)
            opts.launch_dir = None
    launch_command = command if command is not None else image_command
    if launch_command is None and not require:
        what = " (the image has no Entrypoint or Cmd)" if opts.image else ""
        raise UsageError(f"nothing to gate{what}: give --require FEATURE... and/or -- COMMAND...")
    opts.command = command  # the packages audited are those of the command's own interpreter
    from stackcheck.assembly.pipeline import Background, gather

    # the probes wait on the driver: start them now, while the manifests are read and the command derived
    texts: list[str] = []  # the manifests' texts: the plan cache's key
    later_manifests = Background(lambda: load_manifests(opts.manifests_dirs, texts_out=texts))

    def probe() -> Any:  # --started-by: facts.image.started_by, set before the gate cache's digest of the facts
        facts, outcomes, host = gather(opts, later_manifests.get)
        how = getattr(args, "started_by", None)
        if how is not None:
            image = facts.get("image")
            if not isinstance(image, dict):
                raise UsageError("--started-by: the facts hold no image section (give --image, or a facts document "
                                 "with one)")  # fmt: skip
            image["started_by"] = how
        return facts, outcomes, host

    if getattr(args, "started_by", None) is not None and not opts.image and not opts.facts_file:
        raise UsageError("--started-by: no image is audited (give --image, or --facts with an image section)")
    later_facts = Background(probe)
    try:
        usage = None
        if slot is not None and slot.entry is not None:  # a decision kept for this command line on this box
            kept, usage = _kept(slot, opts, command, later_facts)
            if kept is not None:
                return kept, command
        return _decide_with(args, opts, command, image_command, launch_command, server_env, require, later_manifests,
                            later_facts, texts, slot, usage)  # fmt: skip
    except Exception:  # (an interrupt does not wait)
        later_facts.settle()  # never leave a probe thread running while the interpreter shuts down
        later_manifests.settle()
        raise


def _kept(slot: Any, opts: Any, command: list[str] | None, later_facts: Any) -> tuple[Kept | None, Any]:
    """The decision kept for this command line (stackcheck.assembly.gate_cache) when this run's facts and every read
    it made agree, found before the launch is read again: the entry's key holds all that reading depends on
    besides this box's files (the command line, the environment, the working directory, the shipped manifests,
    stackcheck's code), and the reads it made of those (a --config file) are made again by the replay. So a hit
    parses no launch, feature or check table and imports no gate module, and its reads of this box other than the
    GPU usage are made again before the facts are in. Returns the entry (or None: a miss,
    whose decision is made as usual, from the same facts) and the GPU usage reader started for the replay (the
    forked NVML reader's, taken once: the usual path reuses it)."""
    from stackcheck.assembly import gate_cache

    reads = slot.entry["reads"]
    usage = None
    if any(r[0] == "usage" for r in reads):  # (an SGLang launch on this box: the usual path starts it likewise)
        from stackcheck.launch.usage import start_usage  # (not gate_preflight: a hit reads no preflight table)

        usage = start_usage(opts.facts_file, command)
    import stackcheck.atomic  # noqa: F401 - (what a hit prints with: imported while the probes run)

    # the reads that wait on nothing (all but the GPU usage, which the NVML reader takes with the driver's facts)
    # are made again now, while the probes run; a changed one is a miss whatever the facts
    same = gate_cache.unchanged([r for r in reads if r[0] != "usage"], {})
    try:
        probed = later_facts.get()
    except Exception:
        return None, usage  # (the usual path raises it again, after the errors it finds first)
    if not same:
        slot.facts = gate_cache.facts_digest(probed)
        return None, usage
    # then the facts' digest and the usage reading, as gate_cache.hit checks an entry
    rest = gate_cache.Slot(slot.directory, slot.key, {**slot.entry, "reads": [r for r in reads if r[0] == "usage"]})
    entry = gate_cache.hit(rest, probed, {"usage": gate_cache.usage_reader(usage)})
    slot.facts = rest.facts
    return (Kept(slot.entry) if entry is not None else None), usage


def _decide_with(
    args: argparse.Namespace,
    opts: Any,
    command: list[str] | None,
    image_command: list[str] | None,
    launch_command: list[str] | None,
    server_env: dict[str, str],
    require: list[str],
    later_manifests: Any,
    later_facts: Any,
    texts: list[str],
    slot: Any = None,
    early_usage: Any = None,
) -> tuple[Any, list[str] | None]:
    from stackcheck.launch import gate, gate_preflight

    manifests = later_manifests.get()
    from stackcheck.commands.arguments import allow_ids, feature_id

    known = [str(f.get("id")) for f in manifests.features]
    require = [feature_id(f, known, "--require") for f in require]  # `_` or `-`; a near miss names the id
    # --allow reads ids as --require does (`_` or `-`, any case)
    allow = allow_ids(args.allow or [], lambda ids: gate_preflight.check_allow(ids, manifests.features,
                                                                               manifests.checks))  # fmt: skip
    mapping = manifests.launch
    config_problem = None
    config_path = None
    if launch_command is not None:
        to_derive, config_path, config_problem = gate_preflight.expand_config(
            launch_command, mapping, manifests.preflight, server_env, opts.cwd, bool(opts.facts_file)
        )

        def derive(own: set[str] | None = None, release: str | None = None) -> Any:
            d = gate.derive(to_derive, mapping, server_env, require, own or (), release, bool(opts.facts_file))
            d.command = list(launch_command or [])  # exec'd as given: the config file is SGLang's to read again
            if config_path:
                d.problems.append(
                    gate.Problem("--config", "note", None, f"--config {config_path}: its settings were read as flags")
                )
            if opts.image:
                gate.add_image_requirements(d, manifests.features, manifests.checks)
            return d

        derived = derive()
    else:
        derived = gate.Derived(command=[], entrypoint=None, sglang_args=[])
        for f in require:
            derived.required.append(gate.Requirement(f, "explicit", "--require"))
        if opts.image:
            gate.add_image_requirements(derived, manifests.features, manifests.checks)
    # an SGLang launch here: read GPU usage in a thread now, while the probes wait on the driver (an image's
    # server runs elsewhere: this box's GPU usage says nothing about it)
    usage_command = command if derived.entrypoint and not opts.image else None
    usage = early_usage if early_usage is not None and usage_command else None  # (_kept's, on a miss)
    if usage is None:
        usage = gate_preflight.start_usage(opts.facts_file, usage_command)
    if derived.entrypoint is None and not derived.required and not derived.problems:
        from stackcheck.facts.model import load_facts_file

        for named in (opts.facts_file, opts.host_facts):
            if named:  # nothing reads it here, but a facts file that cannot be read is bad input (exit 2) all the same
                load_facts_file(named)
        doc = _document(derived, gate.Decision(True, [], [], []), [])
        doc["note"] = (
            derived.out_of_scope or "no SGLang launch or flag found in the command and no --require: nothing to check"
        )
        _root_fields(doc, opts)
        return doc, None if opts.image else command
    from stackcheck.assembly.pipeline import build_report

    opts.launch = dict(derived.launch)

    advice = launch_command is not None and not args.quiet
    live = derived.entrypoint is not None and not opts.facts_file and not opts.image

    def also() -> None:  # (in build_report's loading thread, while the probes wait on the driver)
        _import_later(later_modules(live, advice, args.format, preflight=derived.entrypoint is not None))
        _prepare(manifests, advice, bool(opts.facts_file), args.format)
        if not opts.facts_file:  # the plan key's part that is not the facts, for a refusal's plan
            from stackcheck.assembly import plan_cache

            plan_cache.prepare(texts, getattr(slot, "stamp", None))  # (the code stamp the gate's own key took)

    gathered = later_facts.get
    if slot is not None:
        from stackcheck.assembly import gate_cache

        if slot.entry is None:  # (with an entry, _kept found it a miss and kept these facts' digest in the slot)

            def gathered() -> Any:  # (the facts' digest, for the entry this decision makes)
                probed = later_facts.get()
                slot.facts = gate_cache.facts_digest(probed)
                return probed

    if opts.facts_file and launch_command is not None:
        # a saved report's loader answers are for its own LD_LIBRARY_PATH: those the launch's own prefix may change are
        # unknown (igap43, issue 16: `env LD_LIBRARY_PATH=/x` was judged on the report's view, never ok on it); on a
        # copy, so that the gate cache's digest stays the file's
        from stackcheck.assembly.target import command_directory
        from stackcheck.launch.facts_loader_path import apply_launch_loader_path

        saved_facts = gathered
        # (a relative or empty LD_LIBRARY_PATH element is read from the launch directory: gate --cwd, `env -C DIR`)
        facts_cwd = command_directory(launch_command, server_env, opts.cwd)

        def gathered() -> Any:
            facts, outcomes, host = saved_facts()
            if isinstance(facts, dict):
                facts = dict(facts)  # (each section it changes is replaced by a changed copy)
                apply_launch_loader_path(facts, launch_command, mapping, facts_cwd)
                # the same for the toolkit a JIT build picks: the launch's own CUDA_HOME / CUDA_PATH (ifc49)
                from stackcheck.launch.facts_toolkit_env import apply_launch_toolkit_env

                apply_launch_toolkit_env(facts, launch_command, mapping)
            return facts, outcomes, host

    if not opts.facts_file and launch_command is not None:
        # the probes read the launch's environment without a shell string's own words before it (target.
        # command_environment): where the launch's own differs, the answers read with it are unknown (irev70)
        from stackcheck.assembly.target import command_environment

        probed_env = command_environment(launch_command, server_env)
        argv, prefixed = gate.split_env_prefix(launch_command, server_env)
        entry, _, launch_env = gate.find_launch(argv, mapping, prefixed)
        if entry is not None and probed_env != launch_env:
            from stackcheck.launch.facts_loader_path import apply_launch_env_unread

            start = opts.cwd or opts.launch_dir
            where = gate.launch_cwd(launch_command, mapping, server_env, start) if start else None
            probed_facts = gathered

            def gathered() -> Any:
                facts, outcomes, host = probed_facts()
                if isinstance(facts, dict):
                    facts = dict(facts)  # (each section it changes is replaced by a changed copy)
                    apply_launch_env_unread(facts, probed_env, launch_env, where if isinstance(where, str) else None)
                return facts, outcomes, host

    report, ctx = build_report(opts, want_plan=False, manifests=manifests, gathered=gathered, also=also)
    # an SGLang newer than the data: its flags are read from its own server arguments (facts.derived)
    newer = (ctx.facts.get("derived") or {}).get("sglang") if ctx.newer_than_manifests("sglang") else None
    flags = newer.get("flags") if isinstance(newer, dict) and isinstance(newer.get("flags"), dict) else None
    own = gate.own_spellings(derived, mapping, ctx.installed_version("sglang"), flags)
    # a flag of this release's own that derive took for an abbreviation, or a need that depends on the release
    if (own or derived.reads_release) and launch_command is not None:
        derived = derive(own, ctx.installed_version("sglang"))
        # the launch facts launch.json's variables set, read again for the release (SGLang 0.5.3+ copies SGL_X over
        # SGLANG_X: facts/sgl_prefix.py): the rules on those that changed judged again (imend5)
        env_facts = {
            str(s.get(k)) for s in mapping.get("env") or [] if isinstance(s, dict) for k in ("fact", "set_fact")
        }
        moved = {k: v for k, v in derived.launch.items() if k in env_facts and opts.launch.get(k) != v}
        if moved:
            from stackcheck.assembly.pipeline import reevaluate

            opts.launch = {**opts.launch, **moved}
            ctx = reevaluate(report, ctx, opts, moved)
    extra = gate.release_problems(derived, mapping, ctx.installed_version("sglang"), flags)
    extra += gate.own_flag_problems(derived, mapping, ctx.installed_version("sglang"), own)
    extra += gate.release_choice_problems(derived, mapping, ctx.installed_version("sglang"))
    undeclared, covered = gate.undeclared_problems(derived, mapping, ctx.installed_version("sglang"), flags)
    extra += undeclared
    if covered:  # the flags it does not read were checked against the release's own list: say so
        gate.relabel_unlisted(derived, {p.subject for p in undeclared}, str(ctx.installed_version("sglang")))
    extra += gate.installation_problems(derived, ctx.package_state("sglang"), _environment_text(ctx.facts))
    extra += gate.interpreter_option_problems(launch_command, server_env, ctx.facts)  # (python -P before 3.11)
    from stackcheck.launch.runners import process_limits

    here = None if (opts.facts_file or opts.image or opts.root) else process_limits()  # (the launch's process)
    extra += gate.ionice_problems(launch_command, server_env, ctx.facts, here, mapping)  # (irunner3: its values)
    extra += gate.scheduler_problems(launch_command, server_env, here, mapping)  # (irunner3: taskset, chrt)
    if launch_command is not None and not (opts.facts_file or opts.image or opts.root):  # (irev78: the launch's own)
        from stackcheck.assembly import gate_cache

        start = opts.cwd or opts.launch_dir or os.getcwd()
        extra += gate.interpreter_mismatch_problems(
            launch_command, mapping, server_env, start, ctx.facts, gate_cache.host_view()
        )
        from stackcheck.launch.facts_loader_path import CUBIN_ENV, JIT_ENV

        wrapper_read = ("LD_LIBRARY_PATH", "LD_PRELOAD", *JIT_ENV, *CUBIN_ENV)  # (igap58: a wrapper script's exports)
        extra += gate.interpreter_script_problems(launch_command, mapping, server_env, start, wrapper_read,
                                                  gate_cache.host_view())  # fmt: skip
        # (irev82) a launch in a shell string whose directory or first sys.path entry the probes did not read
        extra += gate.launch_directory_problems(launch_command, mapping, server_env, start, gate_cache.host_view())
    if launch_command is not None and not (opts.image or opts.root):  # `env -C DIR`: env exits 125 where it cannot
        extra += gate.chdir_problems(launch_command, mapping, server_env, opts.cwd or opts.launch_dir, _dir_test(opts))
    if launch_command is not None:  # (igap56: mpirun -np 1's default hostfile, read on this host only)
        extra += gate.mpi_hostfile_problems(derived, *_mpi_view(opts))
        if derived.srun_hostfiles:  # (ifc66: srun -F / SLURM_HOSTFILE, read where srun is typed: this host)
            view, cwd, _ = _mpi_view(opts)
            srun_dir = gate.launch_cwd(launch_command, mapping, server_env, cwd) if cwd else None  # (irobust14: env -C)
            extra += gate.srun_hostfile_problems(derived, view, cwd, "it is a file of the host srun runs on (gate "
                                                 "--facts / --root / --image)", srun_dir)  # fmt: skip
    extra += gate.probe_problems(report.get("probes") or [])  # a failed probe is unknown, never "absent"
    if config_problem:
        extra.append(gate.Problem("--config", "blocked", "crash", config_problem))
    pre = None
    if derived.entrypoint is not None:
        pre = gate_preflight.run_for_gate(
            derived,
            mapping,
            manifests,
            {"facts": ctx.facts},
            ctx.installed_version("sglang"),
            gate_preflight.server_env(launch_command or [], server_env),
            usage,
            live=not opts.facts_file and not opts.image,
            opts=opts,
        )
        # a MoE runner value the model never runs (a dense model; an unquantized MoE one on releases whose
        # unquantized MoE method ignores it): its needs dropped before the launch's own needs are derived from them
        from stackcheck.launch.refusals import drop_idle_needs, idle_moe_choice, model_architecture, model_attention

        idle = idle_moe_choice(
            derived, mapping, ctx.installed_version("sglang"), model_architecture(pre), model_attention(pre)
        )
        if idle is not None:
            drop_idle_needs(derived, mapping, *idle)
        # every launch fact read from the model's files, by the one function recommend judges its line with too
        # (irecmodel): --quantization on a checkpoint without quantization (SGLang quantizes while loading, another
        # kernel path: its needs replaced on derived); ireal2: the MoE runner SGLang picks itself for this model
        # (launch.json refusals.auto.moe_runner: the DeepSeek family's flashinfer_trtllm on SM100), which
        # fp8-block-gemm's moe-bmm-cubins-auto rules read; icubin3: whether the launch runs any MoE layer (the
        # model's and its draft's config.json), which the rules on the MoE runner SGLang may pick itself read (a dense
        # model runs no trtllm-gen fused MoE: no BMM cubins); the checkpoint's own quantization (rules on
        # launch.model_quant_method: checks.json sglang-gpu-min-cc); ifc64: whether its top-k renormalizes
        model_read = gate_preflight.model_file_facts(pre, derived, mapping, ctx.installed_version("sglang"))
        quantized = model_read.get("checkpoint_quantized")
        picked = model_read.get("moe_runner_auto")
        moe_layers = model_read.get("model_moe")
        # what the launch needs beyond its features (manifests' required_by), now that the model's needs and
        # facts (model_multimodal; model_moe and moe_runner_auto, iasan) are known: a scope on a fact still unknown is
        # required (fail closed)
        # (irec3: and model_dsv3_routing, which scopes the asan-header rules' DeepSeek-V3 routing to the models that
        # may take it, instead of every MoE model)
        facts_read = (("moe_runner_auto", picked), ("model_moe", moe_layers))
        read_facts = {k: v for k, v in facts_read if v is not None}
        if model_read.get("model_dsv3_routing") is False:
            read_facts["model_dsv3_routing"] = False
        from stackcheck.launch.refusals import auto_pick_off_gpus, gpu_majors

        if auto_pick_off_gpus(picked, mapping, ctx.installed_version("sglang"), gpu_majors(ctx.facts)):
            read_facts["moe_runner_auto"] = "auto"  # (irec3) a pick SGLang makes on SM100 only, on a box without one
        gate.add_launch_requirements(derived, manifests.features, manifests.checks, read_facts)
        # the MLA dims and heads per GPU config.json states, the draft model's too (rules on launch.mla_kv_rope,
        # launch.mla_heads_per_gpu, launch.draft_*: trtllm_mla's and flashmla's kernels), and whether it was read
        dims = gate_preflight.model_launch_facts(pre, derived, mapping)
        from stackcheck.assembly.pipeline import reevaluate

        quant_keys = ("model_quant_method", "model_quant_schemes", "model_kv_cache_fp8", "model_quant_loaded")
        if "model_quant_method" in model_read:
            ctx = reevaluate(report, ctx, opts, {k: model_read[k] for k in quant_keys if k in model_read})
        if picked is not None:
            ctx = reevaluate(report, ctx, opts, {"moe_runner_auto": picked})
        # (icute2: with whether the speculative draft has routed experts, which scopes the draft's MoE runner rules)
        moe_read: dict[str, Any] = {k: model_read[k] for k in ("model_moe", "draft_model_moe") if k in model_read}
        if moe_read:
            ctx = reevaluate(report, ctx, opts, moe_read)
        if "model_moe_renormalize" in model_read:
            keys = ("model_moe_renormalize", "model_moe_topk_kept")  # (imend17: read together)
            ctx = reevaluate(report, ctx, opts, {k: model_read[k] for k in keys if k in model_read})
        else:  # irobust12: stated but no boolean: the rules on it judged both ways, unknown where they differ
            from stackcheck.launch.refusals import moe_renormalize_unread

            if (renormalize_why := moe_renormalize_unread(model_attention(pre))) is not None:
                from stackcheck.assembly.pipeline import reevaluate_unknown

                reevaluate_unknown(report, ctx, opts, "model_moe_renormalize", renormalize_why)
        if isinstance(pre.launch.get("model_mla"), bool):  # rules on launch.mla (attention-fa3, -fa4): judge again
            from stackcheck.assembly.pipeline import reevaluate

            ctx = reevaluate(report, ctx, opts, {"mla": pre.launch["model_mla"], **dims})
        # read but MLA or not is not known, or not read at all: the rules on launch.mla are unknown, never dropped
        elif (mla_why := gate_preflight.mla_unknown(pre) or gate_preflight.mla_unread(pre)) is not None:
            from stackcheck.assembly.pipeline import reevaluate, reevaluate_unknown

            ctx = reevaluate(report, ctx, opts, dims) if dims else ctx
            reevaluate_unknown(report, ctx, opts, "mla", mla_why)
        elif dims:  # not read: the rules on the model's MLA dims for a backend the command gives are unknown
            from stackcheck.assembly.pipeline import reevaluate

            ctx = reevaluate(report, ctx, opts, dims)
        if isinstance(quantized, bool):  # rules on launch.checkpoint_quantized (the online FP8 kernel): judge again
            from stackcheck.assembly.pipeline import reevaluate

            ctx = reevaluate(report, ctx, opts, {"checkpoint_quantized": quantized})
        # the draft read but MLA or not not known (a release newer than the MLA data): its draft-* rules are unknown
        if (draft_why := gate_preflight.draft_mla_unknown(pre, dims)) is not None:
            from stackcheck.assembly.pipeline import reevaluate_unknown

            reevaluate_unknown(report, ctx, opts, "draft_mla", draft_why)
    from stackcheck.launch.refusals import (
        auto_backend_features,
        auto_backend_unread,
        backends_not_running,
        box_memory,
        gpu_majors,
        known_gpu_majors,
        lowest_gpu_sm,
        model_architecture,
        model_attention,
        model_kernel_features,
        refusal_problems,
    )

    # the attention backend SGLang picks itself (no attention flag): fa3 on Hopper (which an aarch64 kernel wheel
    # can lack), trtllm_mha for MHA models on SM100 (which FlashInfer's runner refuses on SM107 before 0.5.18)
    for feature, why in auto_backend_features(
        derived,
        mapping,
        ctx.installed_version("sglang"),
        known_gpu_majors(ctx.facts),
        ctx.torch_cuda(),
        pre.launch.get("model_mla") if pre is not None and isinstance(pre.launch.get("model_mla"), bool) else None,
        model_architecture(pre),
        model_attention(pre).get("model"),
    ):
        gate._add(derived, feature, "default", why)
    # a model override's pick where the model was not read: unknown where that feature is not ok on this box
    verdicts = {str(f.get("id")): f for f in report["features"] if isinstance(f, dict)}
    # a kernel path SGLang takes for the model whatever the flags (DeepSeek-V4's FlashMLA sparse prefill): required
    # for that model; where the model was not read, unknown where that feature is blocked on this box (not where it
    # is only unknown: every unread launch of the release would be unknown for a path of one model)
    kernels, kernels_unread = model_kernel_features(
        mapping, ctx.installed_version("sglang"), model_architecture(pre), derived, known_gpu_majors(ctx.facts)
    )
    for feature, why in kernels if derived.entrypoint is not None else []:
        gate._add(derived, feature, "default", why)
    for feature, why in kernels_unread if derived.entrypoint is not None else []:
        status = str((verdicts.get(feature) or {}).get("status", "unknown"))
        if status == "blocked" and not any(r.feature == feature for r in derived.required):
            extra.append(
                gate.Problem(
                    feature, "unknown", None,
                    f"{why} ({feature} is {status} on this box); the gate could not read the model's architecture "
                    "(config.json), so whether the launch serves one of those models is not known: "
                    f"{gate_preflight.unread_hint(pre)}",
                )
            )  # fmt: skip
    for feature, why in auto_backend_unread(
        derived, mapping, ctx.installed_version("sglang"), known_gpu_majors(ctx.facts), ctx.torch_cuda(),
        model_architecture(pre),
    ):  # fmt: skip
        status = str((verdicts.get(feature) or {}).get("status", "unknown"))
        if status != "ok" and not any(r.feature == feature for r in derived.required):
            extra.append(
                gate.Problem(
                    feature,
                    "unknown",
                    None,
                    f"{why} ({feature} is {status} on this box); the gate could not read the model's architecture "
                    "(config.json), so whether that override applies is not known: give --attention-backend, or "
                    f"{gate_preflight.unread_hint(pre)}",
                )
            )
    # the architecture was read but whether SGLang serves it as MLA is not (a release newer than the MLA data):
    # SGLang's picks for an MLA model are unknown where they are not ok on this box
    if pre is not None and (mla_why := gate_preflight.mla_unknown(pre)) is not None:
        for feature, why in auto_backend_unread(
            derived, mapping, ctx.installed_version("sglang"), known_gpu_majors(ctx.facts), ctx.torch_cuda(),
            model_architecture(pre), mla_only=True,
        ):  # fmt: skip
            status = str((verdicts.get(feature) or {}).get("status", "unknown"))
            if status != "ok" and not any(r.feature == feature for r in derived.required):
                extra.append(
                    gate.Problem(
                        feature, "unknown", None,
                        f"{why} ({feature} is {status} on this box); {mla_why}: give --attention-backend",
                    )
                )  # fmt: skip

    # the flag combinations the installed SGLang refuses while it reads its arguments or starts its attention
    # backend: after the preflight, whose reading of the model's config.json gives the architecture SGLang's own
    # EAGLE top-k depends on and the attention heads trtllm_mha's pages of 128 need
    version = ctx.installed_version("sglang")
    # a refusal's advice names only backends this box runs (fa3 is no advice on SM120, ascend on no NVIDIA GPU)
    statuses = {name: str(v.get("status")) for name, v in verdicts.items()}
    mla = pre.launch.get("model_mla") if pre is not None else None
    memory = box_memory(ctx.facts)
    extra += refusal_problems(
        derived, mapping, version, gpu_majors(ctx.facts), model_architecture(pre), model_attention(pre),
        torch_cuda=ctx.torch_cuda(), unrunnable=backends_not_running(mapping, statuses),
        model_mla=mla if isinstance(mla, bool) else None, gpu_sm=lowest_gpu_sm(ctx.facts),
        box_memory=memory,
    )  # fmt: skip
    if memory.read_available:  # (imend8: the memory available now, which the facts' digest leaves out: not kept)
        from stackcheck.assembly import gate_cache

        for kept in gate_cache.ACTIVE:
            kept.spoiled = True
    decision = gate.decide(
        derived, report["features"], manifests.features, args.allow_unknown, extra, report.get("checks") or []
    )
    if pre is not None:
        gate_preflight.merge(decision, pre, args.allow_unknown)
    allowed = gate.apply_policy(decision, args.strict_features, allow)
    plan: PlanJSON | str | None = None
    if decision.blocking:
        plan = _plan(ctx, report["features"], texts)
    verdicts = {str(v.get("id")): v for v in report["features"]}
    for b in [*decision.blocking, *decision.warnings]:
        b.fix = _fix(b.feature, plan, manifests.features, verdicts.get(b.feature))
    doc = _document(derived, decision, extra)
    if pre is not None:
        doc["preflight"] = gate_preflight.document(pre)
    if allowed:
        doc["allowed"] = allowed
    if (report.get("facts") or {}).get("assumed"):
        doc["assumed"] = list(report["facts"]["assumed"])  # a what-if: said on every line that reports it
    from stackcheck.facts.filled import filled_texts

    filled = filled_texts(report.get("facts") or {})
    if filled:  # what the facts file left out, filled from the manifests' tables: said once, as in the audit
        doc["filled"] = filled
    from stackcheck.facts.model import shadow_texts

    shadowed = shadow_texts(report.get("facts") or {})
    if shadowed:  # ./sglang of a checkout imported instead of the installed sglang: the verdicts judge that copy
        doc["shadowed"] = shadowed
    driver = (report.get("facts") or {}).get("driver") or {}
    if driver.get("error") and not driver.get("version"):
        doc["driver_error"] = str(driver["error"])  # said once in the text, not in every reason
    doc["sglang"] = ctx.installed_version("sglang")
    doc["facts"] = opts.facts_file or "probed"
    if launch_command is not None and (opts.cwd or opts.launch_dir):
        how = "--cwd" if opts.cwd else "the gate's own working directory (no --cwd)"
        doc["launch_dir"] = {"path": opts.cwd or opts.launch_dir, "from": how}
    if launch_command is not None and not args.quiet:  # the advice of `stackcheck recommend`; never the decision
        from stackcheck.launch.recommend import gate_advice

        try:
            explicit = [(r.feature, r.why) for r in derived.required if r.kind == "explicit"]
            seen = model_attention(pre).get("model")  # the model as the preflight read it: no advice the gate refuses
            models = pre.models if pre is not None else []  # (the served model as read: its facts judge each line)
            served = next((m for m in models if m.role == "model" and m.attention is not None), None)
            doc["advice"] = gate_advice(ctx, launch_command, derived.sglang_args, explicit, server_env, args.advise,
                                        model_architecture(pre), seen if isinstance(seen, dict) else None,
                                        served)  # fmt: skip
        except Exception as exc:
            lines = str(exc).strip().splitlines()
            if not isinstance(exc, StackcheckError):
                doc["advice"] = [f"no advice: {type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")]
            elif lines:  # (the advice could not read this command line: its own words, never a bare class name)
                doc["advice"] = [f"no advice for this command line: {lines[0]}"]
    if isinstance(plan, str):
        doc["plan_error"] = plan
    from stackcheck.knowledge.sources import normalize

    doc = normalize(doc, manifests.sources)  # every `source` as [{id, title, url}]
    _root_fields(doc, opts)
    if opts.image:
        doc["image"] = opts.image
        notes = [IMAGE_READINGS] if derived.entrypoint is not None else []
        prepended = getattr(args, "image_entry_prepended", None)
        if command is None and image_command is not None:
            notes.insert(0, "the command is the image's own (Entrypoint + Cmd); it runs in a container, not here")
            if getattr(args, "image_entry_note", None):  # (imend9: the Entrypoint script read, or why not)
                notes.insert(1, str(args.image_entry_note))
        elif prepended is not None:
            notes.insert(0, "the command runs as the arguments of the image's Entrypoint, as `docker run IMAGE "
                         "COMMAND` runs it (a `docker run --entrypoint` form is not read here: gate its command inside "
                         "that container)")  # fmt: skip
            if getattr(args, "image_entry_note", None):
                notes.insert(1, str(args.image_entry_note))
        if notes:
            doc["note"] = "; ".join(notes)
        return doc, None
    return doc, command


# what the decision imports after the verdicts: the plan cache and its hash (a refusal's fixes), the command's shell
# words, the sources' normalization, the masking and the output; with the advice (not --quiet), its module; for the
# text format, its renderer and layout; for a live SGLang launch (this box's facts, no image), what the preflight's
# live checks read after the facts: the dependency reader, the host checks' C modules (a locked-memory limit, a port
# bind), the GPU-usage reading's module and the model-architecture check. One a command line does not use is not
# imported (gate --facts reads no port, no locked-memory limit, no dependency)
_LATER_MODULES = (
    "stackcheck.facts.pep440",  # (the verdicts' release order and ranges: it was imported after the facts arrived)
    "shlex",
    "stackcheck.assembly.plan_cache",
    "_blake2",
    "stackcheck.knowledge.sources",
    "stackcheck.redact",
    "stackcheck.atomic",
    "stackcheck.facts.filled",  # (what a facts file left out, said in the decision: imported after the facts)
)
_ADVICE_MODULES = ("stackcheck.launch.recommend",)
# the preflight's checks, which every decision on an SGLang launch runs (live or from a facts file: the GPU layout,
# the memory estimate, the model's reading, the MoE all-to-all package); imported by preflight.run and run_for_gate
# after the facts (~3 ms CPU on the 2-core box), now here. Not the Requires-Dist reader (preflight.lean_req: only
# where the target has SGLang, which the facts say) nor the planner (only a refusal whose plan is not kept)
_PREFLIGHT_MODULES = (
    "stackcheck.launch.preflight.gpus",
    "stackcheck.launch.preflight.memory",
    "stackcheck.launch.preflight.model",
    "stackcheck.launch.preflight.shapes",  # (ishape: the model's shape against the launch's sizes)
    "stackcheck.launch.preflight.w4afp8",
    "stackcheck.verdicts.package_checks",
)
_TEXT_MODULES = ("stackcheck.render.gate", "stackcheck.render.layout")
_LIVE_MODULES = (
    "stackcheck.launch.preflight.deps",
    "resource",
    "_socket",
    "stackcheck.probes.gpu_usage",
    "stackcheck.launch.preflight.architecture",
)
# (igap58) the live gate's wrapper-script check reads JIT_ENV / CUBIN_ENV after the facts; a gate of saved facts may
# import it too (an env prefix's loader path), so it is not among the live checks' own modules above
_LIVE_ALSO = ("stackcheck.launch.facts_loader_path",)


def later_modules(live: bool, advice: bool, fmt: str, preflight: bool = False) -> tuple[str, ...]:
    """The modules _import_later loads for a decision: _LATER_MODULES, and those of the advice (`advice`), the
    preflight of an SGLang launch (`preflight`), the text format and a live SGLang launch (`live`: its preflight
    reads this box after the facts) where they apply."""
    return (
        *_LATER_MODULES,
        *(_ADVICE_MODULES if advice else ()),
        *(_PREFLIGHT_MODULES if preflight else ()),
        *(_TEXT_MODULES if fmt == "text" else ()),
        *(_LIVE_MODULES + _LIVE_ALSO if live else ()),
    )


def _import_later(names: Sequence[str]) -> None:
    """Import `names` (later_modules) in build_report's loading thread, while the probes wait on the driver (NVML
    calls release the GIL), so that the decision does not load them after the facts arrive. A module that cannot be
    imported is skipped here: it fails again where the decision uses it (refused, exit 4), as before."""
    from importlib import import_module

    for name in names:
        try:
            import_module(name)
        except Exception:  # noqa: S112 - imported again, and the error raised, where it is used
            continue


#: the manifest documents the decision reads after the facts arrive (the verdicts: components, architectures,
#: gates; the report: meta; the decision: sources) beside those read before (features, checks, launch, preflight)
_LATER_DOCUMENTS = ("components.json", "architectures.json", "gates.json", "meta.json", "sources.json")


#: the stackcheck.redact patterns a decision compiles when it is masked (redact.public_document) and rendered, as text
#: and as JSON (traced on gate --dry-run of an SGLang command line; one a decision uses beyond these is compiled
#: where it is first used, as before)
#: (the escaping's _UNSAFE and _JSON_UNSAFE are left out: ASCII output, which the shipped manifests make, never
#: compiles them, redact.terminal_safe and json_safe; a decision with other characters compiles one where it is used)
_MASKING = (
    "_TOKEN",
    "_ASSIGN_WORD",
    "_URL",
    "_ENV_ASSIGN",
    "_TOKEN_SPLIT",
    "_TOKEN_CHARS",
    "_UUID",
    "_FLAG_VALUE",
    "_FLAG_AHEAD",
)


#: modules whose patterns (stackcheck.lazy_re, compiled on first use) the verdicts (facts.versions: version
#: clauses and CUDA tags; facts.archs: an architecture target) and the sources' normalization compile after the
#: facts: all of them are compiled first; with a facts file, the implied versions' too (facts.implied: an exact pin)
_LAZY_PATTERNS = ("stackcheck.facts.versions", "stackcheck.facts.archs", "stackcheck.knowledge.sources")
_IMPLIED_PATTERNS = ("stackcheck.facts.implied",)


def _prepare(manifests: Any, advice: bool, implied: bool, fmt: str = "text") -> None:
    """What the decision needs that does not depend on the facts, done in build_report's loading thread while the
    probes wait on the driver (after _import_later): the manifest documents parsed (recommend.json with the
    advice), the refusal rules' module imported (facts.implied with a facts file), the shipped architecture rules
    read, every rule's shape worked out (verdicts.engine.prepare), the text of every
    rule that reevaluate searches (pipeline.rules_texts), the masking's patterns compiled (_MASKING) and the
    JSON renderer imported for --format json. Nothing here changes a result: each is the memo or module
    the decision would fill or import itself. Anything that fails is skipped here, and fails again where the
    decision reads it (a manifest that is not JSON: its error)."""
    from importlib import import_module

    names = [*_LATER_DOCUMENTS, *(("recommend.json",) if advice else ())]
    steps: list[Any] = [lambda name=name: manifests.doc(name) for name in names]
    modules = ["stackcheck.launch.refusals", "stackcheck.verdicts.kernel_symbols"]
    if implied:
        modules.append("stackcheck.facts.implied")
    # (not the dependency check's lean Requires-Dist reader, preflight.lean_req, ~1.8 ms with its patterns on the
    # 2-core box: it is imported only where the target has SGLang, once the facts say so; the live gate is CPU-bound
    # on the H200, where removing this whole preparation moved its wall by +0.6 ms, within noise)
    if fmt == "json":  # (the text renderer is in _LATER_MODULES)
        modules += ["stackcheck.render.jsonout", "stackcheck.render.jsonindent"]
    steps += [lambda name=name: import_module(name) for name in modules]
    steps.append(lambda: import_module("stackcheck.facts.archs").shipped_rules())
    steps.append(lambda: import_module("stackcheck.verdicts.engine").prepare(manifests))
    steps.append(lambda: import_module("stackcheck.assembly.pipeline").rules_texts(manifests))
    steps.append(lambda: import_module("stackcheck.redact").compile_patterns(_MASKING))
    lazy = [*_LAZY_PATTERNS, *(_IMPLIED_PATTERNS if implied else ())]
    from stackcheck.lazy_re import compile_all

    steps += [lambda name=name: compile_all(import_module(name)) for name in lazy]
    for step in steps:
        try:
            step()
        except Exception:  # noqa: S112 - done again, and the error raised, where the decision needs it
            continue


def _environment_text(facts: Any) -> str | None:
    """Where the packages were read: the target interpreter's prefix, or the image."""
    python = facts.get("python") if isinstance(facts, dict) else None
    if isinstance(python, dict) and python.get("prefix"):
        return f"Python at {python['prefix']}"
    return None


def _image_launch(
    image: str, platform: str | None, given: list[str] | None = None, entrypoint: str | None = None
) -> tuple[dict[str, str], list[str] | None, str | None]:
    """The environment a container of the image starts with (its config's Env; PATH as docker defaults
    it), the command it runs (Entrypoint + Cmd, None when it has neither) and what was read of an Entrypoint script
    (a note, None where there is none). Reads the config, and the layers only for an Entrypoint script. `given`: the
    gated command, which replaces Cmd and runs as the Entrypoint's arguments (iallow2; docker run(1): "docker run
    IMAGE [COMMAND] [ARG...]" overrides CMD, never ENTRYPOINT); `entrypoint`: the program that replaces the
    Entrypoint (docker run --entrypoint: one word, the empty word none; the image's Cmd is dropped with it)."""
    try:
        from stackcheck.assembly.target import DEFAULT_PATH
        from stackcheck.image import read_image_info
    except ImportError:
        raise UsageError(f"--image {image}: image support is not installed in this stackcheck") from None
    info = read_image_info(image, platform=platform)
    # (irobust11) the config's Env, or the Entrypoint or Cmd this launch runs, not read whole: what a container runs,
    # or with which environment, is not known, so nothing is judged in its place (the Cmd alone was judged where the
    # Entrypoint was [1]; a Cmd cut at its 4096th word lost the flags after it; an Env of ["X=1", 5] was dropped). A
    # gated command replaces Cmd; --entrypoint replaces both.
    runs = (("Entrypoint",) if given is not None else ("Entrypoint", "Cmd")) if entrypoint is None else ()
    used = ("Env", *runs)
    for key in used:
        if key in info.unread:
            raise BadInputError(f"--image {image}: config: {key} {info.unread[key]}: what a container of it runs is "
                                "not known")  # fmt: skip
    env = dict(info.raw_env)
    env.setdefault("PATH", DEFAULT_PATH)
    entry = list(info.entrypoint) if entrypoint is None else [entrypoint] if entrypoint else []
    command = [*entry, *given] if given is not None else list(info.command) if entrypoint is None else entry
    if command and command[0].startswith("/") and command[0].endswith(".sh"):
        # (imend9) an Entrypoint script (nvidia/cuda's /opt/nvidia/nvidia_entrypoint.sh): read from the image, the
        # command after it placed where it is the wrapper shape and its entrypoint.d parts only print or export
        # (image/entrypoint.py); else it stays first and the gate's walk refuses it as unknown
        from stackcheck.image import DEFAULT_CAPTURE, open_image
        from stackcheck.image.entrypoint import read_entrypoint

        capture = (*DEFAULT_CAPTURE, command[0], "*/entrypoint.d/*", "*_entrypoint.sh", "*/entrypoint.sh")
        with open_image(image, platform=platform, capture=capture) as view:
            reading = read_entrypoint(view, command, env)
        if reading.placed:
            parts = f" (its .sh parts: {', '.join(reading.parts)})" if reading.parts else ""
            note = (
                f"the Entrypoint {command[0]} was read from the image: NVIDIA's wrapper shape, whose entrypoint.d "
                f"parts print or export only{parts}; the command after it is judged with their exports"
            )
            return reading.env, reading.command, note
        return env, command, f"the Entrypoint {command[0]} is not read as NVIDIA's wrapper: {reading.why}"
    return env, command or None, None


def _plan(ctx: Any, features: Any, texts: list[str]) -> PlanJSON | str | None:
    """The planner's plan (as JSON; from the plan cache when it holds this box's), if the planner is
    importable and works; else None (or the error text). A plan that failed is not kept."""
    from stackcheck.assembly import plan_cache

    directory, key, cached = plan_cache.lookup(ctx.facts, ctx.launch, texts)
    if cached is not None:
        return cast("PlanJSON", cached)
    try:
        from stackcheck.plan import make_plan
    except ImportError:
        return None
    try:
        plan = make_plan(ctx, features).to_json()
    except Exception as exc:  # the planner failing must not change the decision
        return f"planner failed: {type(exc).__name__}: {exc}".splitlines()[0]
    if directory and key:
        plan_cache.store(directory, key, dict(plan))
    return plan


def _fix(
    feature: str, plan: PlanJSON | str | None, features: list[Feature], verdict: FeatureVerdict | None = None
) -> str | None:
    """The plan step that unblocks the feature, else what the plan says stays blocked, else the feature's
    workaround (where it answers the failing rule of `verdict`) and first fixed release from the manifests.
    (`plan` is a str when the planner failed: its error, said once in the document.)"""
    still: str | None = None
    if plan is not None and not isinstance(plan, str):
        for n, step in enumerate(plan["steps"], 1):
            if feature in step["unblocks"]:
                text = f"plan step {n}: {step['component']} {step['from'] or 'not installed'} -> {step['to']}"
                if step["commands"]:
                    text += f" ({'; '.join(step['commands'])})"
                return text
        if any(item["feature"] == feature for item in plan["still_blocked"]):
            still = "no plan step fixes it (still blocked after the plan)"
    spec = next((f for f in features if f.get("id") == feature), None)
    parts = [still] if still else []
    if spec is not None:
        from stackcheck.verdicts.engine import workaround_for

        w = workaround_for(spec, verdict) if verdict is not None else None
        if isinstance(w, dict) and w.get("text"):
            parts.append(f"workaround: {w['text']}")
        up = spec.get("upstream")
        blocked = verdict is None or verdict.get("status") == "blocked"  # on an unknown GPU it is no answer
        if blocked and isinstance(up, dict) and isinstance(up.get("first_ok"), dict) and up["first_ok"]:
            parts.append("fixed in " + ", ".join(f"{k} {v}" for k, v in up["first_ok"].items()))
    return "; ".join(parts) or None


def _document(derived: Any, decision: Any, extra: list[Any]) -> dict[str, Any]:
    def blocker(b: Any) -> dict[str, Any]:
        out = {
            "feature": b.feature,
            "kind": b.kind,
            "status": b.status,
            "effect": b.effect,
            "reasons": b.reasons,
            "fix": b.fix,
        }
        if getattr(b, "check", False):
            out["check"] = True
        if b.kind == "launch" and getattr(b, "why", None):
            out["why"] = b.why  # the scope: every launch, a feature it needs, a condition it meets
        return out

    derived_json = derived.to_json()
    from stackcheck.launch.gate import problem_json

    derived_json["problems"] += [problem_json(p) for p in extra]
    return {
        "schema_version": SCHEMA_VERSION,
        "decision": "allow" if decision.allow else "refuse",
        "command": list(derived.command),
        "derived": derived_json,
        "features": list(decision.checked),
        "reasons": [blocker(b) for b in decision.blocking],
        "warnings": [blocker(b) for b in decision.warnings],
    }
