"""`stackcheck gate`, the pure part: an SGLang command line -> the features it needs and its launch facts,
then the verdicts -> allow or refuse. No I/O, no environment reads: the caller passes argv and env in.

How a command line is read (all of it data, manifests/launch.json):
- the command is an SGLang launch when it is `python[3[.x]] [python options] -m sglang.launch_server ...` or
  `sglang serve ...` (an `env [-i] [-u NAME] [NAME=VALUE]...` prefix is read for its assignments), also
  behind a launcher (`uv run python -m ...`, `srun -n1 python3 -m ...`, `docker exec c sglang serve ...`,
  `bash -c "python -m ..."`). Behind one, the launch is judged only where a walk from the command's first word
  reaches it through programs whose readers place their command (unplaced_before, iallow1: nice, taskset, srun,
  nohup, timeout, env, flock, sudo, tini --, a shell's -c string, ...); a program refused as running it elsewhere or
  its own way (launch/elsewhere.py) ends the walk with its own refusal, and any other word (a program in no table,
  a script an interpreter or shell runs, an option its reader does not list) is an unknown command problem. Any
  other command (a wrapper script) is scanned too: if an SGLang flag of
  launch.json or an entrypoint's name appears in it, it is treated as an SGLang launch; if none does, it
  needs no feature (only --require is checked).
- flags are read as SGLang's argparse reads them: `--flag VALUE` and `--flag=VALUE`, aliases
  (`--tensor-parallel-size`), and unique-prefix abbreviations of a listed flag (`--tp` for `--tp-size`);
  a prefix of several listed flags is reported as unknown. The last occurrence wins, as in argparse.
- each option maps values to features (`--attention-backend fa3` -> attention-fa3); a value that
  launch.json does not know is reported as unknown (it may be new, or SGLang may reject it). Flags
  launch.json does not list at all (it lists only those that gate features) are named in one note; for a
  `python -m sglang.launch_server` command of a release launch.json's `release_flags` covers (every flag each
  release declares, read from its wheel), or newer than the data (its own server arguments), a flag the
  release neither declares nor abbreviates uniquely is refused (argparse exits with 'unrecognized arguments'
  or 'ambiguous option'; from 0.5.11, which loads plugins first, an undeclared flag is unknown: it may be a
  plugin's); `--config FILE` makes the launch facts unknown (its settings are not read). With how many values
  each declared flag takes (release_flags `nargs`), the rest of argparse's reading is followed too
  (argv_problems): a single-dash option (`-tp 8`), a switch given a value (`--flag=false`, `--flag false`), a
  word no option takes, anything after '--', a flag left without its value, and a choice in another case
  (`FA3` for `fa3`) end the launch with exit status 2 and are refused (unknown where a plugin may add them).
- deepgemm, on by default, fails only with FP8 block-quantized models: its default entry says
  `"refuse": false`, so a blocked deepgemm warns; `--quantization fp8` requires fp8-block-gemm, which refuses.
- per SGLang release, an option says whether the installed release has the flag at all; a flag the
  installed release lacks is a refusal (SGLang exits with `unrecognized arguments`), a release no entry
  covers is unknown.

Decision policy:
- explicit features (from `--require`, or turned on by a flag or a value in the command) must be `ok`:
  `blocked` (any effect) refuses; `unknown` refuses unless --allow-unknown; `not-applicable` (a package it
  needs is not installed) refuses.
- default features (on without any flag: custom-allreduce when tp > 1 unless --disable-custom-all-reduce,
  cuda-graph unless --disable-cuda-graph, deepgemm unless SGLANG_ENABLE_JIT_DEEPGEMM is false,
  attention-flashinfer when FlashInfer is installed, as SGLang's default sampler unless --sampling-backend
  says otherwise and its default attention backend unless --attention-backend is given):
  `blocked` with effect `crash` or `wrong-output` (the server starts and serves wrong results with no
  error) refuses; `blocked` with `disabled` or `degraded` only warns (the server starts and falls back);
  `unknown` refuses (unless --allow-unknown) when any rule of the feature can crash or serve wrong output,
  else warns; `not-applicable` is ignored.
- what every SGLang launch needs (`required_by: {"launches": "every"}` in features.json / checks.json:
  torch compiled for the GPU, the kernel package's code, build, libraries and pairing with torch, the
  minimum SGLang's engine checks at start, the driver against torch's CUDA, FlashInfer's package versions,
  Triton's ptxas, one NCCL wheel) is required of every launch the gate sees; a check scoped to features
  (`{"features": [...]}`) of a launch that needs one of them; a check scoped to launch conditions
  (`{"when": [...]}`: tp > 1 or pp > 1, a multimodal model) of a launch that meets them, or whose condition
  reads a launch fact the gate could not read (fail closed); a rule's own `required_by` scopes that rule
  alone (the check is then judged on the rules the launch needs): a failure with effect crash or
  wrong-output refuses, a degrading one warns (SGLang's metadata pins); unknown refuses unless
  --allow-unknown (when a rule that could crash or serve wrong output is unknown); not installed
  (not-applicable, skipped) is ignored.
- problems found while reading the command (unknown values, ambiguous abbreviations, flags the release
  lacks) are `unknown` (refuse unless --allow-unknown) or `blocked` with effect crash (refuse); so are the flag
  combinations the installed release refuses while it reads its arguments, and the few it starts with and
  serves wrong output (`blocked` with effect wrong-output: refused the same way) (launch.json `refusals`,
  launch/refusals.py: EAGLE top-k > 1 with pages > 1 on a backend that cannot page the tree, trtllm_mha with
  top-k > 1, STANDALONE/NGRAM with DP attention, Flex Attention with speculative decoding, the speculative
  steps and top-k given one without the other), unknown where a value SGLang chooses at start (its auto top-k
  when the model's config.json is not found, its attention backend) decides.
- a probe the decision reads (nvml, toolkits, packages, system) that failed or timed out is `unknown`
  (refuse unless --allow-unknown); a package the probe could not read is unknown, never "not installed".
"""

from __future__ import annotations

import bisect
import os
import posixpath
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence

from stackcheck.digits import whole_number
from stackcheck.errors import UsageError
from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.record import field, record
from stackcheck.verdicts import EFFECT_ORDER, REFUSED_EFFECTS

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.launch.runners import SrunLine

_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
# python options that take a separate value (python -X dev -W error -m mod)
_PY_VALUE_OPTS = {"-X", "-W", "-Q", "--check-hash-based-pycs"}


@record
class Requirement:
    feature: str  # a feature id, or a stack check id when `check`
    kind: str  # "explicit" | "default" | "default-warn" | "launch"
    why: str  # the flag, value or rule that asks for it
    check: bool = False  # a stack check (checks.json) rather than a feature
    # a check whose rules have scopes of their own (a rule's `required_by`): the rules this launch needs, each
    # with the kind it is needed as; None: every rule, as `kind`. A feature needed for some of its rules only (a
    # launch.json / preflight.json requirement with `rules`, e.g. SGLang's loader admission of FP8 weights): the
    # rules named, each as `kind`; the feature's other rules are not needed (judged on those named alone)
    rules: dict[str, str | None] | None = None


@record
class Problem:
    """Something about the command itself: an unknown value, an ambiguous flag, a flag the release lacks."""

    subject: str  # e.g. "--attention-backend=foo"
    status: str  # "unknown" | "blocked" | "note" (never refuses)
    effect: str | None
    message: str
    source: Any = None
    observed: str | None = None  # what the command has, where a rule compares it (refusals.py)
    required: str | None = None  # what the rule asks for


@record
class Derived:
    command: list[str]
    entrypoint: str | None  # launch.json entrypoint id, "wrapper" or None
    sglang_args: list[str]
    launch: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)  # canonical flag -> value (True for bool)
    env: dict[str, bool] = field(default_factory=dict)  # launch.json env names -> parsed values
    required: list[Requirement] = field(default_factory=list)
    off: list[str] = field(default_factory=list)  # default features turned off, with the reason
    problems: list[Problem] = field(default_factory=list)
    unlisted: list[str] = field(default_factory=list)  # flags launch.json does not list, in order, once each
    defaults: dict[str, Any] = field(default_factory=dict)  # launch.json flag -> its default value
    release: str | None = None  # the installed SGLang release the conditions were read for (None: not known)
    reads_release: bool = False  # a condition on the release was read: derive again once the release is known
    out_of_scope: str | None = None  # why the gate does not judge this launch (--device other than cuda)
    # (igap56) the Open MPI mpiruns read as running the launch here, with the environment each starts with
    mpi_local: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    # (ifc66) the host files the sruns before the launch read their node list from: (the file as written, how given)
    srun_hostfiles: list[tuple[str, str]] = field(default_factory=list)
    shell_string: bool = False  # the launch's words are a shell string's, unexpanded (parse_flags' `unexpanded`)
    #: (irev76) why the server's memory cgroup may not be the one the facts' memory_available_bytes was read in
    #: (own_cgroup_memory_limit: the probe's own): an srun step with a memory option, a systemd-run unit; None: the same
    other_cgroup: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "entrypoint": self.entrypoint,
            "launch": dict(self.launch),
            "options": dict(self.options),
            "env": dict(self.env),
            "required": [
                {
                    "feature": r.feature,
                    "kind": r.kind,
                    "why": r.why,
                    **({"check": True} if r.check else {}),
                    **({"rules": dict(r.rules)} if r.rules is not None else {}),
                }
                for r in self.required
            ],
            "off": list(self.off),
            "problems": [problem_json(p) for p in self.problems],
        }


def problem_json(p: Problem) -> dict[str, Any]:
    out = {"subject": p.subject, "status": p.status, "effect": p.effect, "message": p.message, "source": p.source}
    return {**out, **_compared(p)}


def _compared(p: Problem) -> dict[str, Any]:
    """A problem's observed and required values, where a rule compared them."""
    return {k: v for k, v in (("observed", p.observed), ("required", p.required)) if v is not None}


# ---- reading the command --------------------------------------------------------------------------


def split_env_prefix(
    argv: Sequence[str],
    env: Mapping[str, str],
    dirs: list[str] | None = None,
    stops: list[tuple[str, bool]] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """`env [OPTION]... [-] [NAME=VALUE]... CMD ARGS` -> (CMD ARGS, the environment CMD would see), read as GNU env
    reads it (assembly/env_prefix.py, the target's reader too), and an `env` it runs in turn the same way; each one's
    -C DIR (its last, as GNU env keeps it) is added to `dirs`, in order (each chdir from the one before). Where the
    reading stops (env fails there: an unknown option, an -S string it rejects; or does what is not read here: a
    `${NAME}` not in `env`, --argv0), (why, whether env fails) is added to `stops` (derive refuses: fail closed,
    never a judgement of another command) and the words from there on are returned as the command, the environment
    as env started."""
    args, out = list(argv), dict(env)
    if not args or os.path.basename(args[0]) != "env":
        return args, out
    from stackcheck.assembly.env_prefix import read_env

    while args and os.path.basename(args[0]) == "env":  # (`env -C a env -C b CMD`: env runs env, imend3)
        read = read_env(args[1:], out)
        if read.stop is not None:
            if stops is not None:
                stops.append((read.stop, read.fails))
            return read.command, dict(read.env)
        if dirs is not None:
            dirs.extend(read.dirs)
        args, out = list(read.command), dict(read.env)
    return args, out


def find_entrypoint(argv: Sequence[str], mapping: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    """(entrypoint id, SGLang arguments) for a recognised launch, else (None, all arguments after argv[0]).

    The launch may sit behind a launcher (`uv run python -m sglang.launch_server`, `srun -n1 python3 -m ...`,
    `docker exec c sglang serve ...`): each later argument that is a Python interpreter or an entrypoint's
    program is tried too, so a launcher never hides the launch from the gate (it would then need nothing)."""
    entry, args, _ = find_launch(argv, mapping, {})
    return entry, args


def find_launch(
    argv: Sequence[str], mapping: Mapping[str, Any], env: Mapping[str, str], trace: dict[str, Any] | None = None
) -> tuple[str | None, list[str], dict[str, str]]:
    """find_entrypoint with the environment the launch sees (_find_launch_level, one command at a time): an `env`
    that runs the rest of the words is stepped into in a loop, its notes made once the launch is found inside it,
    innermost first (irobust8: it was a recursive call per `env`, so 2,500 `nohup env -u X` words ended in
    RecursionError, exit 4; and where the launch was not inside, each outer command scanned on through the words the
    inner one had read, calling each later `env` again: 2**n calls, 18 `nohup env` words took 17 s). Where the words
    after an `env` hold no launch, none is found: the words before it are that env's own options and assignments."""
    after: list[Callable[[], None]] = []
    level_argv, level_env = argv, env
    while True:
        got = _find_launch_level(level_argv, mapping, level_env, trace)
        if isinstance(got, _EnvHop):
            after.append(got.seen)
            level_argv, level_env = got.argv, got.env
            continue
        if got[0] is None:
            return None, list(argv[1:]), dict(env)
        for seen in reversed(after):
            seen()
        return got


@record
class _Seen:
    """What find_launch notes of one command (its words, environment, launch.json mapping) once the launch is found in
    it: the programs read on the way (ENV_POLICY, ROOT_CHANGE, srun's copies and GPU options from its environment, a
    wrapper). imend10: one record, noted at every return; the six notes were repeated at each and in _env_seen."""

    trace: dict[str, Any] | None
    argv: Sequence[str]
    env: Mapping[str, str]
    mapping: Mapping[str, Any]
    policy: str | None = None
    root: str | None = None
    copies: str | None = None
    srun_env: list[tuple[str, int | None]] = field(default_factory=list)
    srun_nodes: list[str] = field(default_factory=list)
    job_id: str | None = None
    wrapped: Any = None

    def passed(self, i: int) -> None:
        """argv[i], a word before the launch: the programs read there (the first of each kind kept)."""
        from stackcheck.launch.elsewhere import wrapper_at
        from stackcheck.launch.runners import srun_line

        argv, env = self.argv, self.env
        self.policy = self.policy or _env_policy(argv, i, env)
        self.root = self.root or _root_change(argv, i, env)
        if os.path.basename(argv[i]) == "srun":  # (its options read once for both: imend10)
            line = srun_line(argv, i)
            self.copies = self.copies or _srun_copies(line, env)
            # (imend13: an srun run as another srun's task runs inside that srun's job: its task environment has
            # SLURM_JOB_ID, srun(1) OUTPUT ENVIRONMENT VARIABLES; the outer one is passed first, at any level)
            in_job = self.trace is not None and bool(self.trace.get("srun_passed"))
            self.srun_env += srun_env_gpus(line, env, in_job)  # (imend8: srun's GPU options from its environment)
            self.job_id = self.job_id or srun_job_id_refused(line, env, in_job)
            if self.trace is not None:
                self.trace["srun_passed"] = True
            nodes, single = _srun_nodes(line, env)
            if not single and nodes is not None:  # (imend11: its environment's -N, for its line's --gpus share)
                self.srun_nodes.append(nodes)
            hostfile = _srun_hostfile_named(line, env)
            if hostfile is not None and self.trace is not None:  # (ifc66: srun exits where it cannot read it)
                self.trace.setdefault("srun_hostfiles", []).append(hostfile)
        if self.wrapped is None:
            self.wrapped = wrapper_at(argv, i, env)  # (igap54: ssh, docker exec, conda run, torchrun, ...)
            if self.wrapped is None:
                _mpi_seen(self.trace, argv, i, env)

    def note(self, target: int, level: Sequence[str], cleared: bool = False) -> None:
        """The notes of the launch found at (or through) argv[target], `level` the command's words before it;
        `cleared`: an `env -i` at argv[target] gives the launch's whole environment (no policy's, the wrapper's)."""
        trace = self.trace
        _policy_seen(trace, None if cleared else self.policy)
        _root_seen(trace, self.root)
        _copies_seen(trace, self.copies)
        _srun_env_seen(trace, self.srun_env)
        if trace is not None and self.job_id is not None:
            trace.setdefault("srun_job_id", self.job_id)
        if trace is not None and self.srun_nodes:
            trace.setdefault("srun_env_nodes", []).extend(self.srun_nodes)
        _wrapped_seen(trace, self.wrapped, cleared)
        _unplaced_seen(trace, self.argv, target, self.env, self.mapping)
        _level(trace, level)


class _EnvHop:
    """An `env` of find_launch's command that runs the rest: the words and environment it runs them with, and the
    notes to make for the command around it once the launch is found there."""

    __slots__ = ("argv", "env", "seen")

    def __init__(self, argv: list[str], env: dict[str, str], seen: Callable[[], None]) -> None:
        self.argv, self.env, self.seen = argv, env, seen


def _find_launch_level(
    argv: Sequence[str], mapping: Mapping[str, Any], env: Mapping[str, str], trace: dict[str, Any] | None = None
) -> tuple[str | None, list[str], dict[str, str]] | _EnvHop:
    """find_entrypoint with the environment the launch sees: `env` (the command's own, its `env` prefix applied),
    and where the launch is a simple command of a shell's command string (`bash -c "cd /x && export A=1 &&
    B=2 python -m sglang.launch_server ... 2>&1 | tee log"`) what the string does to it before (shell_commands):
    then the launch's arguments are its own words only, up to the next control operator, redirections left out.
    `trace`: where given, its "cwd" (the directory the command starts in) follows the string's `cd`s before the
    launch (launch_cwd)."""
    entry, args = _entrypoint_at(argv, mapping)
    if entry is not None:
        _level(trace, argv)
        _program_word_seen(trace, argv, 0, env)  # (imend12: `~/venv/bin/python`, `/opt/*/bin/python` as written)
        return entry, args, dict(env)
    shell = os.path.basename(argv[0]) in _C_RUNNERS if argv else False
    su = os.path.basename(argv[0]) in _SU if argv else False
    strings, stop = flock_sites(argv)
    from functools import partial

    seen = _Seen(trace, argv, env, mapping)
    if argv:
        seen.passed(0)
    seen.copies = seen.copies or _srun_nested(argv)
    shell_name = os.path.basename(argv[0]) if shell else None  # (the program whose -c string is read: `time` in it)
    for i in range(1, len(argv) if stop != 0 else 1):
        if i == stop:
            break  # (a flock that runs nothing, or refuses its words: what follows is no command run: runner_problems)
        prog = os.path.basename(argv[i])
        if prog == "env":
            # an `env` prefix behind a launcher (`nohup env -u A python ...`, `timeout 600 env -i ...`, `sudo -u svc
            # env ...`): the launch runs with what it does (irev68: it was skipped, and the gate judged the launch with
            # the environment before it). Where its reading stops (an option env rejects: the word may be another
            # launcher's value, `conda run -n env --no-capture-output ...`), it is passed over here (iallow1: where the
            # walk from the command's first word lands on it, unplaced_before makes it unknown); where env
            # runs the command with what is not read (`-a NAME`, a -S string's `${NAME}` not known: fails false), the
            # stop is derive's as a leading env's is (irev69: passed over, the launch was judged with the environment
            # before that env, whose -u / NAME=VALUE apply)
            stopped: list[tuple[str, bool]] = []
            dirs: list[str] = []
            got = _env_expanded(argv[i:]) if trace is not None and trace.get("unexpanded") else None
            if got is not None and trace is not None:  # (iallow2: `nice env -u $X python ...` in a string)
                trace.setdefault("unplaced", []).insert(0, got)
            after_env, inner_env = split_env_prefix(argv[i:], env, dirs, stopped)
            runs = [stop for stop in stopped if not stop[1]]
            stops = trace.get("env_stops") if trace is not None else None
            if runs and isinstance(stops, list) and runs[0] not in stops:
                stops.append(runs[0])
            cleared = False
            # (behind sudo: env starts from sudo's environment, known only where -i clears it; behind ssh / docker
            # exec likewise from the other box's, igap54)
            if seen.policy is not None or (seen.wrapped is not None and seen.wrapped.kind == "elsewhere"):
                from stackcheck.assembly.env_prefix import read_env

                read = read_env(argv[i + 1 :], {})
                cleared = read.stop is None and read.ignored
                if cleared:  # (and an env it runs in turn, from the environment it cleared: irev70)
                    again: list[tuple[str, bool]] = []
                    chain = split_env_prefix(argv[i:], {}, stops=again)
                    cleared = not again
                    if cleared:
                        after_env, inner_env = chain
            if not stopped:
                if trace is not None and dirs and isinstance(trace.get("cwd"), (str, CwdUnknown)):
                    trace["cwd"] = entered(trace["cwd"], dirs, trace.get("entered"))  # (`env -C DIR`)
                return _EnvHop(list(after_env), dict(inner_env), partial(seen.note, i, argv[:i], cleared))
        if _PYTHON.match(prog) or any(e.get("program") == prog for e in _entries(mapping)):
            found, rest = _entrypoint_at(argv[i:], mapping)
            if found is not None:
                seen.note(i, argv)
                return found, rest, dict(env)
        at = _shell_string_at(argv, i) if shell and _shell_c(argv[i]) else None
        text = argv[at] if at is not None else _su_command(argv, i) if su else None
        if text is None and i in strings:
            text = argv[i]  # (`flock FILE -c STRING` / `--command STRING`: read_flock)
        if text is not None:
            # `bash -c "python -m sglang.launch_server ..."`, and the spellings a shell takes as -c: an option cluster
            # (`bash -lc`, `sh -ec`), options before it (`bash -o pipefail -c`) or after it (`bash -c -- STRING`, `sh
            # -c -e STRING`), the shell behind a launcher (`sudo bash -c`, `docker exec c bash -c`); su's and
            # runuser's other spellings of -c (`--command=STRING`, `-cSTRING`: _su_command)
            # (su / runuser hand -c to the target user's shell, flock to $SHELL: not known here)
            inner = _shell_launch(text, mapping, env, trace, shell_name if at is not None and shell_name in _SHELLS
                                  else None)  # fmt: skip
            reads = _shell_start_files(argv, at, env) if inner is not None and at is not None else None
            if reads is not None and trace is not None:
                trace.setdefault("runner_problems", []).append(_in_shell_problem(reads, start=True))
            if inner is not None:
                seen.note(at if at is not None else i, argv[:i])
                return inner
            break
        shell = shell or prog in _C_RUNNERS
        if prog in _C_RUNNERS and shell_name is None:
            shell_name = prog
        su = su or prog in _SU
        # (each srun reads only its own options, runners.srun_options since igap53: a nested srun's --export is its
        # own, and 2,000 sruns read 2,000 short option lists, linear)
        seen.passed(i)
    return None, list(argv[1:]), dict(env)


#: (irev76) srun's memory options and the input variables that set them (srun(1): --mem, --mem-per-cpu, --mem-per-gpu;
#: SLURM_MEM_PER_NODE, SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU): the step's tasks run in a cgroup of that limit (Slurm
#: task/cgroup with ConstrainRAMSpace), whose headroom SGLang 0.5.21+ checks HiCache's pools against
_SRUN_MEM_OPTIONS = frozenset({"mem", "mem-per-cpu", "mem-per-gpu"})
_SRUN_MEM_ENV = ("SLURM_MEM_PER_NODE", "SLURM_MEM_PER_CPU", "SLURM_MEM_PER_GPU")


def _other_cgroup(argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """Why the launch's memory cgroup may not be the gate's own (Derived.other_cgroup): a word `srun` with a memory
    option on its line or in its environment (every such word read: one inside the launch's own words only makes the
    HiCache rule unknown), or a word `systemd-run` (its scope or service is a unit of its own slice: system.slice, or
    --slice's), else None."""
    from stackcheck.launch.runners import srun_line

    # (a prefix shorter than --mem names several srun options, which srun refuses: only a word from --mem on is read,
    # and srun's options only where one is there, so a line of many sruns is not read again: irobust6)
    mem_word = any(w.startswith("--mem") for w in argv)
    for i, word in enumerate(argv):
        prog = os.path.basename(word)
        if prog == "systemd-run":
            return "systemd-run runs it in a unit of its own slice"
        if prog != "srun":
            continue
        if mem_word and any(set(names) & _SRUN_MEM_OPTIONS for names, _ in srun_line(argv, i).options):
            return "srun --mem / --mem-per-cpu / --mem-per-gpu runs it in a step of that memory limit"
        if any(name in env for name in _SRUN_MEM_ENV):
            return "srun runs it in a step of the memory limit SLURM_MEM_PER_* set"
    return None


def _mpi_seen(trace: dict[str, Any] | None, argv: Sequence[str], i: int, env: Mapping[str, str]) -> None:
    """Note in `trace` an Open MPI mpirun argv[i] read as running its command here (-np 1, no host given: igap56),
    with the environment it starts with: whether its installation's default hostfile gives it hosts is read where the
    box is (mpi_hostfile_problems)."""
    from stackcheck.launch.elsewhere import _MPI

    if trace is not None and os.path.basename(argv[i]) in _MPI:  # (the word as written: /opt/ompi/bin/mpirun is that
        # installation's, not the one PATH finds: irev75)
        trace.setdefault("mpi_local", []).append((argv[i], dict(env)))


#: programs that run their command in an environment they rebuild by a policy of their own, which the gate does not
#: read (irobust4): the environment before them is not the server's. Read in sudo's plugins/sudoers/env.c
#: (sudo-project/sudo): rebuild_env starts empty under env_reset (the default) and keeps env_keep / env_check
#: variables and /etc/environment's, drops initial_badenv_table's (LD_*, PYTHONPATH, PYTHONHOME, ...) without it
#: too, and sets PATH to secure_path; doas.conf(5): the environment is reset unless keepenv / setenv; pkexec(1): "a
#: minimal known and safe environment" (the last two from their manuals, not their source)
ENV_POLICY: dict[str, str] = {
    "sudo": "sudo rebuilds the environment by the sudoers policy (env_reset, env_keep, env_delete with LD_* and "
    "PYTHONPATH, secure_path)",
    "doas": "doas resets the environment unless doas.conf's keepenv or setenv keep it",
    "pkexec": "pkexec sets a minimal environment of its own",
    # (irev70) systemd-run(1): a command run as a transient service (the default) "will run in a clean and detached
    # execution environment, with the service manager as its parent process"; one run as a transient scope (--scope)
    # is run by systemd-run itself and inherits the caller's (_env_policy); run0(1): the command is "invoked from a
    # fresh, isolated service forked off by the service manager" (systemd 256+, systemd-run's other name)
    "systemd-run": "systemd-run starts the command as a transient service of the service manager, in a clean "
    "environment of its own (unless --scope)",
    # (irev76; ifc61's row p2 the same) systemd/systemd src/run/run.c start_transient_scope: before execvpe it merges
    # into its own environ the --uid user's HOME, SHELL, USER and LOGNAME and the --setenv / -E variables
    # (strv_env_merge(environ, user_env, arg_environment)), which the gate does not apply
    "systemd-run --scope": "systemd-run --scope runs the command with its --setenv / -E variables and, with --uid, "
    "the user's HOME, SHELL, USER and LOGNAME set over the caller's environment",
    "run0": "run0 starts the command in a fresh, isolated service of the service manager",
    # (irobust5) su(1) / runuser(1) (util-linux su-common.c): without --preserve-environment they set HOME, SHELL,
    # USER, LOGNAME and PATH (login.defs ENV_PATH / ENV_SUPATH, /etc/default/su ALWAYS_SET_PATH); --login clears
    # everything but TERM; and with -c the command is run by the target user's shell, which reads its own start files
    "su": "su sets HOME, SHELL, USER, LOGNAME and PATH by login.defs (and clears the rest with --login), then runs the "
    "command through the target user's shell",
    "runuser": "runuser (su's code) sets HOME, SHELL, USER, LOGNAME and PATH by login.defs (and clears the rest with "
    "--login)",
    # (iallow1) tianon/gosu main.go: HOME unset, then set from the target user's passwd entry (SetupUser), the user and
    # groups switched; ncopa/su-exec su-exec.c: setenv("HOME", the user's home), setgroups / setgid / setuid
    "gosu": "gosu sets HOME to the target user's home and runs the command as that user",
    "su-exec": "su-exec sets HOME to the target user's home and runs the command as that user",
    # (irobust5) srun(1) --export: "Identify which environment variables from the submission environment are
    # propagated to the launched application"; NONE propagates none, a list adds to or replaces ALL (the default)
    "srun": "srun --export (or SRUN_EXPORT_ENV / SLURM_EXPORT_ENV) chooses which variables of the submission "
    "environment the tasks get",
}
ENV_POLICY_SOURCES = [
    {"title": "sudo plugins/sudoers/env.c: rebuild_env, initial_badenv_table, secure_path",
     "url": "https://github.com/sudo-project/sudo/blob/main/plugins/sudoers/env.c"},
    {"title": "doas.conf(5): keepenv, setenv", "url": "https://man.openbsd.org/doas.conf.5"},
    {"title": "pkexec(1): SECURITY NOTES", "url": "https://man.archlinux.org/man/pkexec.1"},
    {"title": "systemd-run(1): DESCRIPTION (a transient service's clean and detached execution environment; a "
     "transient scope inherits the caller's)", "url": "https://man7.org/linux/man-pages/man1/systemd-run.1.html"},
    {"title": "systemd src/run/run.c start_transient_scope: a scope's command run with the caller's environment, "
     "the --uid user's HOME, SHELL, USER, LOGNAME and each -E / --setenv merged in turn (irobust8)",
     "url": "https://github.com/systemd/systemd/blob/main/src/run/run.c"},
    {"title": "run0(1): DESCRIPTION (a fresh, isolated service forked off by the service manager)",
     "url": "https://freedesktop.org/software/systemd/man/257/run0.html"},
    {"title": "su(1) (util-linux): the environment set (HOME, SHELL, USER, LOGNAME, PATH by ENV_PATH / ENV_SUPATH), "
     "--login, --preserve-environment; runuser(1) the same", "url": "https://man7.org/linux/man-pages/man1/su.1.html"},
    {"title": "srun(1): --export=<[ALL,]environment variables|ALL|NONE>, SLURM_EXPORT_ENV",
     "url": "https://slurm.schedmd.com/srun.html#OPT_export"},
    {"title": "tianon/gosu main.go (HOME unset and set from the user's entry, then exec); ncopa/su-exec su-exec.c "
     "(setenv HOME, then execvp)", "url": "https://github.com/tianon/gosu/blob/master/main.go"},
]  # fmt: skip


def _env_policy(argv: Sequence[str], i: int, env: Mapping[str, str] | None = None) -> str | None:
    """The ENV_POLICY program `argv[i]` is, None for any other word (and for `systemd-run --scope`, which runs the
    command itself with the caller's environment: systemd-run(1); and for srun without an --export other than ALL,
    where none is given on its command line either in SLURM_EXPORT_ENV of `env`, the environment srun starts with:
    srun(1) "SLURM_EXPORT_ENV: Same as --export", irev72)."""
    prog = os.path.basename(argv[i])
    if prog not in ENV_POLICY:
        return None
    if prog == "systemd-run":
        from stackcheck.launch.runners import policy_options

        # (irev76: the --scope among its options, as read_policy reads them, a prefix getopt_long takes included; the
        # word anywhere after it, bash's $0 or an option's value, was read as one: a service allowed with the
        # caller's environment)
        seen = policy_options(argv, i)[1]
        if "--scope" not in seen:
            return prog
        return "systemd-run --scope" if seen & {"-E", "--setenv", "--uid"} else None
    if prog == "srun":
        from stackcheck.launch.runners import srun_options

        # (igap53) each --export by any prefix getopt_long takes for it (`--exp=NONE`); a prefix that names it among
        # others (`--ex=NONE`: srun refuses it as ambiguous) counts as one whose value is not read
        exports = [value if len(names) == 1 and value is not None else "?"
                   for names, value in srun_options(argv, i) if "export" in names]  # fmt: skip
        if not exports and env is not None:
            exports = _srun_env_exports(env)
        if not exports or all(e == "ALL" for e in exports):
            return None
    return prog


#: programs that run the command on another root than the box the facts describe (irobust5): chroot(8) changes the
#: root directory before execvp; srun's --container / --container-image (OCI containers, pyxis) run the task in an
#: image's filesystem. The interpreter, packages and libraries the server loads there are not the ones read here.
ROOT_CHANGE = {
    "chroot": "chroot runs the command with another root directory",
    "srun": "srun --container / --container-image (or SRUN_CONTAINER, a SPANK plugin's SLURM_SPANK_* variable) runs "
    "the task in a container's filesystem",
}
ROOT_CHANGE_SOURCES = [
    {"title": "chroot(1) (coreutils): run COMMAND with root directory set to NEWROOT",
     "url": "https://man7.org/linux/man-pages/man1/chroot.1.html"},
    {"title": "srun(1): --container; NVIDIA pyxis: --container-image",
     "url": "https://slurm.schedmd.com/srun.html#OPT_container"},
]  # fmt: skip


#: (irev73) Slurm 26.05.3 src/srun/opt.c env_vars[] (:546-645), each applied before the command line (:660-684), and
#: inside a heterogeneous job its NAME_HET_GROUP_<n> / NAME_PACK_GROUP_<n> twin after it: SLURM_EXPORT_ENV, then
#: SRUN_EXPORT_ENV ("overrides SLURM_EXPORT_ENV", :570-571) set --export; SRUN_CONTAINER, SRUN_CONTAINER_ID and
#: SRUN_CONTAINER_TYPE set --container, --container-id, --container-type (:639-641); a SPANK plugin's option is read
#: from SLURM_SPANK__SLURM_SPANK_OPTION_<plugin>_<option> (src/common/spank.c spank_process_env_options :1205-1240,
#: _opt_env_name :1407: '-' written '_'), pyxis' --container-image among them
_SRUN_GROUP_TWIN = re.compile(r"(SLURM_EXPORT_ENV|SRUN_EXPORT_ENV|SRUN_CONTAINER(?:_ID|_TYPE)?)_(?:HET|PACK)_GROUP_\d+")
_SRUN_CONTAINER_ENV = ("SRUN_CONTAINER", "SRUN_CONTAINER_ID", "SRUN_CONTAINER_TYPE")
_SPANK_ENV_PREFIX = "SLURM_SPANK__SLURM_SPANK_OPTION_"


def _srun_env_exports(env: Mapping[str, str]) -> list[str]:
    """The --export values srun takes from its environment, where its command line gives none: SRUN_EXPORT_ENV, else
    SLURM_EXPORT_ENV; beside a heterogeneous job's twin of either, every value (which one is last is not read)."""
    main = env.get("SRUN_EXPORT_ENV", env.get("SLURM_EXPORT_ENV"))
    twins = [n for n in env if (m := _SRUN_GROUP_TWIN.fullmatch(n)) is not None and "EXPORT" in m.group(1)]
    if twins:
        return [v for n, v in env.items() if n in ("SLURM_EXPORT_ENV", "SRUN_EXPORT_ENV") or n in twins]
    return [] if main is None else [main]


def _srun_env_container(env: Mapping[str, str]) -> bool:
    """Whether srun's environment sets a container option: SRUN_CONTAINER*, or a SPANK plugin's container option."""
    for name in env:
        if name in _SRUN_CONTAINER_ENV:
            return True
        twin = _SRUN_GROUP_TWIN.fullmatch(name)
        if twin is not None and "CONTAINER" in twin.group(1):
            return True
        rest = name[len(_SPANK_ENV_PREFIX) :] if name.startswith(_SPANK_ENV_PREFIX) else ""
        if "_container_" in f"_{rest}" and "_no_container_" not in f"_{rest}":
            return True
    return False


def _root_change(argv: Sequence[str], i: int, env: Mapping[str, str] | None = None) -> str | None:
    """The ROOT_CHANGE program `argv[i]` is (srun only with a --container option, on its command line or in the
    environment `env` it starts with), None for any other word."""
    prog = os.path.basename(argv[i])
    if prog == "srun":
        from stackcheck.launch.runners import srun_options

        if env is not None and _srun_env_container(env):
            return prog
        # (igap53) any option that may be a --container one by getopt_long's prefix reading (`--contai=IMG`; one
        # naming others too srun refuses as ambiguous: fail closed)
        if any(n.startswith("container") for names, _ in srun_options(argv, i) for n in names):
            return prog
        return None
    if prog == "chroot":
        return prog
    return None


#: (ifc56) srun runs its command once per task: `srun -n2 python -m sglang.launch_server ...` starts two servers.
#: Without -N / --nodes, srun allocates "enough nodes to satisfy the requested resources as expressed by per-job
#: specification options, e.g. -n, -c and --gpus" (srun(1), -N), so two one-CPU tasks share one node, and with -N
#: below -n some node runs more than one; --ntasks-per-node above 1 asks for that outright. Each copy is a whole
#: server on that node's GPUs (--base-gpu-id 0 by default) and its --port (30000 by default): the second finds the
#: GPUs' memory taken or the port bound (SGLang 0.5.23 entrypoints/http_server.py:2990-2996 binds get_serving().port
#: with uvicorn, no SO_REUSEPORT by default; inferred, not run). srun reads SLURM_NTASKS / SLURM_NPROCS,
#: SLURM_NNODES and SLURM_NTASKS_PER_NODE from its environment as -n, -N and --ntasks-per-node (srun(1) INPUT
#: ENVIRONMENT VARIABLES; a job's allocation sets them for the sruns inside it).
SRUN_TASKS_SOURCES = [
    {"title": "srun(1): -n, --ntasks (one task per node by default); -N, --nodes (without it, enough nodes for -n, -c "
     "and --gpus); --ntasks-per-node; INPUT ENVIRONMENT VARIABLES SLURM_NTASKS, SLURM_NNODES, SLURM_NTASKS_PER_NODE",
     "url": "https://slurm.schedmd.com/srun.html#OPT_ntasks"},
    {"title": "sglang 0.5.23 wheel (pip download --no-deps, ifc56 2026-12-06): sglang/srt/entrypoints/http_server.py "
     ":2990-2996 (the default case: uvicorn.Server(uvicorn.Config(app, host=..., port=get_serving().port)), no "
     "reuse-port socket; _bind_reuseport_socket :2705 only under enable_http_worker_reuseport)",
     "url": "https://pypi.org/project/sglang/0.5.23/"},
]  # fmt: skip


#: srun's input variables of -n in opt.c env_vars[]'s order (:595-597: SLURM_NPROCS "listed first so SLURM_NTASKS
#: overrides"), each with its group twins (_env_option)
_SRUN_TASKS_ENV = ("SLURM_NPROCS", "SLURM_NTASKS")


@record
class SrunHosts:
    """(imend18) Where an srun takes its node list from (srun_hosts), as Slurm 284c3b95f0 src/common/slurm_opt.c reads
    it: `how` "-F" (--nodefile), "-w" (--nodelist) or "SLURM_HOSTFILE"; `written` the value as given; `path` the file
    srun opens, as written (None: -w's host list, read as hosts): -F's value, -w's where it holds a `/`
    (proc_args.c verify_node_list reads such a list as a file), SLURM_HOSTFILE's (`./NAME` where it holds no `/`:
    _validate_nodelist); `empty`: the value is empty, which srun refuses before it reads any host (-F '':
    allocate.c slurm_read_hostfile returns NULL on an empty name, 'Invalid --nodefile node file', exit(-1);
    SLURM_HOSTFILE='': `./`, a directory that gives no host, 'Failure getting NodeNames from hostfile', exit(1))."""

    how: str
    written: str
    path: str | None
    empty: bool


def srun_hosts(line: SrunLine, env: Mapping[str, str]) -> SrunHosts | None:
    """(imend18) The one reading of an srun's node list (the three readers before disagreed on an empty
    SLURM_HOSTFILE, -F with -w, -w FILE): its line's -w / -F, the last given (arg_set_nodefile / arg_set_nodelist
    free each other's: runners.srun_line keeps one), else SLURM_HOSTFILE where set, empty too (_validate_nodelist:
    `xstrdup(getenv("SLURM_HOSTFILE"))`, taken where the line gives neither); None where srun is given none."""
    got = line.counts
    if got.get("nodefile") is not None:
        value = got["nodefile"]
        return SrunHosts("-F", value, value, not value)
    if got.get("nodelist") is not None:
        value = got["nodelist"]
        return SrunHosts("-w", value, value if "/" in value else None, False)
    if "SLURM_HOSTFILE" in env:
        value = env["SLURM_HOSTFILE"]
        return SrunHosts("SLURM_HOSTFILE", value, value if "/" in value else f"./{value}", not value)
    return None


#: (irobust13) srun's SLURM_HOSTFILE, where its line gives no -w / -F: Slurm src/common/slurm_opt.c _validate_nodelist
#: :5793-5834 (master 284c3b95f0; srun/libsrun/opt.c :979 in slurm-20-11-0-1) takes the variable's value, set at all
#: (xstrdup(getenv()): an empty value too, read as the file `./`, a directory whose read gives no host: "Hostlist is
#: empty!", then "Failure getting NodeNames from hostfile" and exit 1), as a file of hosts with the arbitrary
#: distribution; src/srun/opt.c _opt_verify :1110-1125 then sets the task count to the hosts listed (a host listed
#: twice: two tasks on that node, two servers on its GPUs and --port) where -n is not on the line (:939-943: one from
#: the environment is dropped), and _validate_arbitrary :5837-5849 (commit 140a8dd3ef, Slurm 23.11 on) exits on a -N
#: given on the line ("--nodes is incompatible with --distribution=arbitrary"). The file itself is not read (it is on
#: the box the job starts from, and a missing, unreadable or odd file ends srun too): unknown unless -n 1 is given
#: (one task, on the file's first host). Inferred from the sources; no Slurm here.
def _srun_hostfile(line: SrunLine, env: Mapping[str, str]) -> str | None:
    """Why an srun's SLURM_HOSTFILE (the note above) may run more than one copy of the launch on a node, or end
    srun before it runs one, as `hostfile: WHY`; None where the line gives -w / -F or the variable is not set."""
    got = line.counts
    given = srun_hosts(line, env)
    if given is None:
        return None
    listed = given.written if given.how == "-w" else None
    if given.how != "SLURM_HOSTFILE":
        # (the line's own list, with the arbitrary distribution: -m / SLURM_DISTRIBUTION `arbitrary` or `hostfile`,
        # proc_args.c _parse_dist_base: a task per host listed as well, _opt_verify)
        dist = got.get("distribution")
        dist = dist if dist is not None else _env_option(env, "SLURM_DISTRIBUTION")[0]
        if (dist or "").split(",", 1)[0].lower() not in ("arbitrary", "hostfile"):
            return None
        if (got.get("ntasks") or "").strip() in ("1", "01"):
            return None
        hosts = listed.split(",") if listed is not None and not any(c in listed for c in "[/ \t\n") else None
        if hosts is not None and len(set(hosts)) == len(hosts):
            return None  # (each host once: a task a node, _srun_spread's)
        where = f"{given.how} {given.written[:80]}"
        return (f"hostfile: the arbitrary distribution (-m {str(dist)[:40]}) takes a task per host of its {where}, "
                "with no -n 1 on its line: a node listed more than once runs more than one copy of the launch, each "
                "a whole server on that node's GPUs and --port (the list not read as distinct hosts)")  # fmt: skip
    name = given.written[:80]
    if given.empty:
        return ("hostfile: SLURM_HOSTFILE is set and empty: srun reads `./` as its hostfile, finds no host in it and "
                "exits before running the command")  # fmt: skip
    if got.get("nodes") is not None:
        return (
            f"hostfile: SLURM_HOSTFILE `{name}` and -N {got['nodes'][:40]} on its line: srun exits before running "
            'the command from Slurm 23.11 on ("--nodes is incompatible with --distribution=arbitrary")'
        )
    if (got.get("ntasks") or "").strip() in ("1", "01"):
        return None
    return (f"hostfile: SLURM_HOSTFILE `{name}` gives srun its hosts and, with no -n 1 on its line, a task per host "
            "listed: a node listed more than once runs more than one copy of the launch, each a whole server on that "
            "node's GPUs and --port (the gate does not read the file)")  # fmt: skip


def _srun_copies(line: SrunLine, env: Mapping[str, str]) -> str | None:
    """Why an srun (its options: runners.srun_line) may run more than one copy of its command on one node (ifc56:
    SRUN_TASKS_SOURCES), None where it runs at most one a node: no task count above 1, or -N at least the count with
    no --ntasks-per-node above 1. A count that is no whole number is taken as more than one (fail closed)."""
    got = line.counts
    hostfile = _srun_hostfile(line, env)
    if hostfile is not None:
        return hostfile
    ntasks_raw = got.get("ntasks") or _env_option(env, *_SRUN_TASKS_ENV)[0]

    def count(raw: str | None, low: bool) -> int | None:
        if raw is None:
            return None
        text = raw.strip()
        if low:  # (-N MIN[-MAX]: the fewest nodes srun may take)
            text = text.split("-", 1)[0]
        return _small_count(text, -1)

    nodes_raw = got.get("nodes")
    if nodes_raw is None:  # (imend11: SLURM_JOB_NUM_NODES, srun's -N from 17.11.1, SLURM_NNODES before: the fewest)
        given = [v for v in (_env_option(env, var)[0] for var in _SRUN_NODES_ENV) if v is not None]
        nodes_raw = min(given, key=lambda v: count(v, True) or 0) if given else None
    per_node_raw = got.get("ntasks-per-node") or _env_option(env, "SLURM_NTASKS_PER_NODE")[0]

    ntasks, nodes, per_node = count(ntasks_raw, False), count(nodes_raw, True), count(per_node_raw, False)
    if per_node is not None and per_node != 1:
        return f"--ntasks-per-node {per_node_raw}"
    if ntasks is None or ntasks == 1:
        return None
    if ntasks > 1 and nodes is not None and nodes >= ntasks:
        return None
    where = f" on -N {nodes_raw}" if nodes_raw is not None else " without -N"
    return f"-n {ntasks_raw}{where}"


#: (ifc56, row i2: `srun -N1 srun --exp=ALL python -m sglang.launch_server ...` allowed) an srun run as the command
#: of another srun's step asks for a step inside the same job, and from Slurm 20.11 on steps do not share the job's
#: CPUs (nor its memory, GRES) unless --overlap: the outer step holds them while it waits on the inner, which waits
#: for them ("Job step creation temporarily disabled, retrying (Requested nodes are busy)"): the server does not
#: start (srun(1) --overlap; inferred from the manual, not run: no Slurm here).
SRUN_NESTED_SOURCE = {"title": "srun(1): --overlap (\"Allow steps to overlap each other on the CPUs. By default steps "
                      "do not share CPUs with other parallel steps\"), and the same for memory and GRES",
                      "url": "https://slurm.schedmd.com/srun.html#OPT_overlap"}  # fmt: skip


def _srun_nested(argv: Sequence[str]) -> str | None:
    """Why an srun of `argv` runs as another srun's task without --overlap (SRUN_NESTED_SOURCE), None where none
    does. Every word is read (an `env` or a shell string between the two is no barrier: fail closed), in one pass."""
    from stackcheck.launch.runners import srun_options

    seen = False
    if "srun" not in "\0".join(argv):  # (irobust8: read again for each `env` find_launch steps into, so one C-level
        return None  # look first: 2,500 `nohup env -u X` words before the launch took 15 s)
    for i, word in enumerate(argv):
        if os.path.basename(word) != "srun":
            continue
        if seen and not any(names == ("overlap",) for names, _ in srun_options(argv, i)):
            return "nested srun without --overlap"
        seen = True
    return None


#: (ifc56, beside the sample: population s's `srun --gpus-per-task=1 python -m sglang.launch_server --tp 2` was
#: allowed) srun's GPU options give each task the GPUs of its request only: Slurm's gres/gpu plugin sets
#: CUDA_VISIBLE_DEVICES to the GPUs allocated to the step (and cgroup's ConstrainDevices hides the others), so a
#: server asking for more (--tp x --pp, over --nnodes) than --gpus-per-task / --gpus / -G / --gpus-per-node /
#: --gres=gpu:N give finds too few devices and fails at start (inferred from Slurm's manuals, not run).
SRUN_GPUS_SOURCE = [
    {"title": "srun(1): --gpus-per-task, -G/--gpus ([type:]number, the total for the job step over its nodes), "
     "--gpus-per-node, --gres (name[[:type]:count], per node), --gpus-per-socket (per socket), --tres-per-task "
     "(trackable resources a task, gres/gpu among them)", "url": "https://slurm.schedmd.com/srun.html#OPT_gpus-per-task"},
    {"title": "Slurm Generic Resource (GRES) Scheduling, GPU Management: CUDA_VISIBLE_DEVICES set to the GPUs "
     "allocated to the job / step", "url": "https://slurm.schedmd.com/gres.html#GPU_Management"},
]  # fmt: skip


def _gpu_count(option: str, value: str | None) -> int | None:
    """The GPU count an srun GPU option's value gives (None: not read). --gres: its gpu entry, `gpu` alone or with a
    type only is 1; the others `[type:]number`."""
    if value is None or option == "--gpus-per-socket":  # (ifc59: the sockets a task spans not read)
        return None
    if option == "--gres" and value.strip() == "none":
        return 0  # (imend11: srun(1) --gres: "--gres=none", the step gets no GPUs)
    if option == "--tres-per-task":  # (imend8: "trestype[/tresname]=count", srun(1); its gres/gpu entry)
        tres = [e for e in value.split(",") if e.split("=", 1)[0].split(":", 1)[0] == "gres/gpu"]
        if not tres:
            return 0
        return _small_count(tres[0].partition("=")[2], None)  # (no count, or one with a suffix: not read)
    if option == "--gres":
        entries = [e for e in value.split(",") if e.split(":", 1)[0] in ("gpu", "gres/gpu")]
        if not entries:
            return 0  # (no GPU asked by this --gres: the step's GPUs come from elsewhere or none)
        parts = entries[0].split(":")
        last = parts[-1]
        if len(parts) > 1 and last.isdigit():
            return _small_count(last, None)
        return 1 if len(parts) <= 2 else None
    last = value.rsplit(":", 1)[-1]
    return _small_count(last, None)


def _small_count(text: str, other: int | None) -> int | None:
    """A count srun reads: ASCII decimal digits, at most 9 of them (irobust7: int() of 5,000 digits raised ValueError,
    the gate's exit 4; a count that long is none srun or Slurm takes), else `other` (not read: fail closed)."""
    return int(text) if text.isdigit() and text.isascii() and len(text) <= 9 else other


def _no_gpu_asked(option: str, value: str | None) -> bool:
    """Whether an srun --gres / --tres-per-task value names no GPU at all (`--gres=nic:1`: the step's GPUs are the
    job's, as without it), as against one asking for none (srun(1) --gres's note: a zero count, `--gres=gpu:0`, or
    `--gres=none` gives the step no GRES: count 0)."""
    if value is None or option not in ("gres", "tres-per-task") or value.strip() == "none":
        return False
    if option == "gres":
        return not any(e.split(":", 1)[0] in ("gpu", "gres/gpu") for e in value.split(","))
    return not any(e.split("=", 1)[0].split(":", 1)[0] == "gres/gpu" for e in value.split(","))


#: (imend11) srun options that bind each task to some of its step's GPUs, with the input variable of each (Slurm
#: src/srun/opt.c env_vars[], master 284c3b95f0: :573 SLURM_GPU_BIND (from 18.08), :601 SLURM_NTASKS_PER_GPU (from
#: 20.11), :602 SLURM_NTASKS_PER_TRES, :630 SLURM_TRES_BIND (from 23.11)). srun(1): --gpu-bind is --tres-bind's
#: gres/gpu form (closest, single:N, map_gpu, mask_gpu, per_task:N, ...), and --ntasks-per-gpu sets a gres/gpu
#: single binding of its own: a task then sees the GPUs its binding picks, a count the gate does not derive (by
#: socket, by map), so the launch is unknown naming the option; `none` (with or without `verbose,`) binds nothing.
#: (--gpus-per-task / --tres-per-task's implicit per_task binding is their own count.)
SRUN_GPU_BINDS = (
    ("gpu-bind", "SLURM_GPU_BIND"),
    ("tres-bind", "SLURM_TRES_BIND"),
    ("ntasks-per-gpu", "SLURM_NTASKS_PER_GPU"),
    ("ntasks-per-tres", "SLURM_NTASKS_PER_TRES"),
)


def _binds(option: str, value: str) -> bool:
    """Whether an SRUN_GPU_BINDS option's value binds a task to some of the step's GPUs (fail closed: a value not
    read binds)."""
    if option == "gpu-bind":
        kinds = [k.strip() for k in value.split(",") if k.strip() != "verbose"]
        return kinds != ["none"]
    if option == "tres-bind":
        gpu = [e for e in value.split("+") if e.startswith(("gres/gpu", "gpu"))]
        if not gpu:
            return False  # (another TRES bound: the GPUs not)
        return any(_binds("gpu-bind", e.split(":", 1)[1] if ":" in e else "") for e in gpu)
    return True


def srun_gpus(sruns: Sequence[SrunLine], env: Mapping[str, str] | None = None) -> list[tuple[str, int | None]]:
    """Each GPU option of the sruns (runners.srun_line) on the line before their command, with the count it gives
    (_gpu_count; -G / --gpus: _gpus_share, its -N read from the line or the sruns' environment `env`)."""
    out: list[tuple[str, int | None]] = []
    for line in sruns:
        for names, value in line.options:
            if len(names) == 1 and names[0] in _GPU_OPTIONS:
                got = _gpu_count(f"--{names[0]}", value)  # (--tres-per-task gres/gpu:N, a form not read: None)
                if not _no_gpu_asked(names[0], value):
                    out.append((f"--{names[0]}={value}", got))
            elif len(names) == 1 and value is not None and any(names[0] == o for o, _ in SRUN_GPU_BINDS):
                if _binds(names[0], value):  # (imend11: a task bound to some of the step's GPUs)
                    out.append((f"--{names[0]}={value}", None))
        gpus = line.counts.get("gpus")  # (--gpus / -G: the last one given)
        if gpus is not None:
            out.append(_gpus_share(f"--gpus={gpus}", gpus, line, env or {}))
    return out


#: (imend11) srun's input variables of -N (Slurm src/srun/opt.c env_vars[]: SLURM_JOB_NUM_NODES is 'N' since
#: 17.11.1, commit 46378a3fa7 "Have srun read in modern env var's instead of obsolete ones", which replaced
#: SLURM_NNODES; master 284c3b95f0 :584), each also as NAME_PACK_GROUP_0 / NAME_HET_GROUP_0 (_opt_env :656-683).
#: SLURM_NNODES, read by srun before 17.11.1 and still set in a job's environment, is read too (fail closed).
_SRUN_NODES_ENV = ("SLURM_JOB_NUM_NODES", "SLURM_NNODES")


def _srun_nodes(line: SrunLine, env: Mapping[str, str]) -> tuple[str | None, bool]:
    """(the -N an srun runs its step on, as given: its line's -N / --nodes, else its environment's; whether it is
    exactly one node: `1` or `1-1`). None and True where none is given (srun's step of one task takes one node; more
    tasks are _srun_copies' and _srun_spread's); a value not read is not one node (fail closed)."""
    raw = line.counts.get("nodes")
    if raw is None:
        # (irev80) -w / --nodelist HOSTS, -F / --nodefile FILE: the step gets every node listed (srun(1) --nodelist),
        # more than one where the list has a `,` or a `[range]`, or is a file (-w with a `/`, -F): not read, fail closed
        # (irobust12) neither given: srun takes SLURM_HOSTFILE's file as the node list (src/srun/opt.c _opt_verify
        # `if (!opt.nodelist)`: the arbitrary distribution, a task per host listed); imend18: srun_hosts' reading
        hosts = srun_hosts(line, env)
        if hosts is not None and hosts.how == "-F":
            return f"--nodefile {hosts.written}", False
        if hosts is not None and hosts.how == "-w" and any(c in hosts.written.strip() for c in ",[/ \t\n"):
            return f"--nodelist {hosts.written}", False  # (irobust12: blanks separate hosts too)
        if hosts is not None and hosts.how == "SLURM_HOSTFILE":
            return f"--nodefile {hosts.written} (SLURM_HOSTFILE)", False
        given = [env[v] for var in _SRUN_NODES_ENV for v in (var, f"{var}_PACK_GROUP_0", f"{var}_HET_GROUP_0")
                 if v in env]  # fmt: skip
        if not given:
            return None, True
        raw = next((v for v in given if v.strip() not in ("1", "1-1")), given[0])
    parts = raw.strip().split("-", 1)
    return raw, all(_small_count(part, -1) == 1 for part in parts)


def _srun_hostfile_named(line: SrunLine, env: Mapping[str, str]) -> tuple[str, str] | None:
    """(ifc66) The file an srun reads its node list from, with how it was given (srun_hosts: -F, -w FILE, or
    SLURM_HOSTFILE, empty too); None where it reads none."""
    given = srun_hosts(line, env)
    return (given.written, given.how) if given is not None and given.path is not None else None


#: (ifc66) Slurm master 284c3b95f0 (2026-08-20): src/common/slurm_opt.c _validate_nodelist :5793-5830, called by
#: validate_options_salloc_sbatch_srun :5913, which srun/opt.c :954 runs before anything starts: -F FILE read by
#: slurm_read_hostfile (src/api/allocate.c :1128-1145: NULL where fopen fails) else `error("Invalid --nodefile node
#: file"); exit(-1)`; SLURM_HOSTFILE (a name without `/` read as ./NAME) through _valid_node_list, else
#: `error("Failure getting NodeNames from hostfile"); exit(1)`
SRUN_HOSTFILE_SOURCE = {
    "title": "Slurm 284c3b95f0 src/common/slurm_opt.c _validate_nodelist (-F / --nodefile: 'Invalid --nodefile node "
    "file', exit(-1); SLURM_HOSTFILE: 'Failure getting NodeNames from hostfile', exit(1)) and src/api/allocate.c "
    "slurm_read_hostfile (NULL where the file cannot be opened, its name is empty or it names no host), "
    "src/common/proc_args.c verify_node_list (-w / --nodelist holding a '/': read as a host file), run by "
    "srun/opt.c before the step starts",
    "url": "https://github.com/SchedMD/slurm/blob/284c3b95f0/src/common/slurm_opt.c",
}


def srun_hostfile_problems(
    derived: Derived, view: Any, cwd: str | None, where: str, launch_dir: Any = None
) -> list[Problem]:
    """(ifc66, the sixty-sixth sample's row s3) An srun before the launch reading its node list from a file (-F FILE,
    or SLURM_HOSTFILE) exits before it starts anything where it cannot open that file; the gate allowed `srun -F
    /missing/hosts python3 -m sglang.launch_server ...`. `view`: the host srun runs on (this host's: srun reads the
    file where it is typed), None where that is not read here (`where` says why): unknown then. A file this host
    has not: blocked; a relative name with the directory srun starts in not known: unknown. `launch_dir`: the directory
    the launch runs in (launch_cwd), where known; a relative name where it is not `cwd` is unknown (irobust14: `env -C
    DIR srun -F hosts` reads DIR/hosts, and was judged from `cwd`)."""
    from stackcheck.readers.fsview import is_file, kind_of

    out: list[Problem] = []
    for written, how in derived.srun_hostfiles:
        shown = f"srun {how} {written}" if how != "SLURM_HOSTFILE" else f"srun with SLURM_HOSTFILE={written}"
        path = written if how != "SLURM_HOSTFILE" or "/" in written else f"./{written}"
        fails = ("'Invalid --nodefile node file' and exits" if how == "-F" else
                 "'Failure getting NodeNames from hostfile' and exits" if how == "SLURM_HOSTFILE" else
                 "that it cannot read the file (or 'Hostlist is empty!') and exits")  # fmt: skip
        if not written:  # (imend18: srun_hosts' `empty`, whatever the host holds)
            what = ("an empty file name, which slurm_read_hostfile refuses (NULL)" if how == "-F" else
                    "`./` (an empty name made relative), a directory that gives no host")  # fmt: skip
            out.append(Problem("srun", "blocked", "crash", f"`{shown}`: srun reads its node list from {what}, so it "
                               f"says {fails} before the server starts", [SRUN_HOSTFILE_SOURCE], written or "(empty)",
                               "a host file srun can read"))  # fmt: skip
            continue
        moved = launch_dir is not None and launch_dir != cwd  # (irobust14: `env -C DIR` / a shell's `cd` before it)
        if not posixpath.isabs(path):
            path = posixpath.join(cwd, path) if cwd and not moved else ""
        unexpanded = derived.shell_string and (written.startswith("~") or any(c in written for c in "$`*?["))
        if unexpanded:  # (irobust14: `bash -c 'srun -F $HOSTS ...'` was blocked as the file "$HOSTS")
            path = ""
        if view is None or not path:
            why = where if view is None else "the directory srun starts in is not known"
            if view is not None and unexpanded:
                why = "the shell expands that word before srun reads it, which is not done here"
            elif view is not None and moved:
                why = ("the command changes directory on the way (env -C, or a shell's cd), which is not followed to "
                       "srun here")  # fmt: skip
            out.append(Problem("srun", "unknown", None,
                               f"`{shown}`: srun reads its node list from that file before the step starts and says "
                               f"{fails} where it cannot open it; not read here: {why} (fail closed)",
                               [SRUN_HOSTFILE_SOURCE]))  # fmt: skip
        elif not is_file(view, path):
            kind = kind_of(view, path)
            if kind is not None and kind != "dir":  # (irobust14: a FIFO, /dev/stdin: srun reads what it gives)
                out.append(Problem("srun", "unknown", None,
                                   f"`{shown}`: {path} is no regular file (a FIFO or a device): srun reads its node "
                                   f"list from what it gives and says {fails} where that names no host; not read "
                                   "here (fail closed)", [SRUN_HOSTFILE_SOURCE]))  # fmt: skip
                continue
            what = "a directory" if kind == "dir" else "no file"
            out.append(Problem("srun", "blocked", "crash",
                               f"`{shown}`: {path} is {what} on this host, so srun says {fails} before the server "
                               "starts", [SRUN_HOSTFILE_SOURCE], path, "a host file srun can read"))  # fmt: skip
        else:
            out += _hostfile_content_problems(view, path, shown, fails, how)
    return out


#: (irobust14) Slurm 284c3b95f0 src/api/allocate.c: BUFFER_SIZE 1024 (:73), fgets of at most 1023 bytes a line
_SLURM_HOSTFILE_LINE = 1023
_HOSTFILE_READ_LIMIT = 1 << 20


def _hostfile_content_problems(view: Any, path: str, shown: str, fails: str, how: str) -> list[Problem]:
    """(irobust14) A host file srun can open that still gives it no node list: Slurm 284c3b95f0 src/api/allocate.c
    slurm_read_hostfile :1128-1290 cuts each line at its first '#' not after a backslash (:1158-1176), skips a line
    left empty (:1214-1216), returns NULL with 'Invalid hostfile ... contents on line N' where a line then starts
    with neither a letter nor a digit (:1218-1226) and with 'Hostlist is empty!' where no line names a host
    (:1261-1263); srun exits then, as where it cannot open the file. A file this user cannot read is blocked too (the
    gate runs srun as itself); one too large, a line srun reads in pieces (1023 bytes or more), a NUL or non-ASCII
    first byte, or hosts given only as NAME*N (-F reads them with n 0, :1233-1235) is unknown."""
    from stackcheck.readers.fsview import NotRegularFile

    def problem(status: str, why: str) -> list[Problem]:
        if status == "blocked":
            return [Problem("srun", "blocked", "crash", f"`{shown}`: {path} {why}, so srun says {fails} before the "
                            "server starts", [SRUN_HOSTFILE_SOURCE], path, "a host file naming a host on its first "
                            "line that is not empty or a comment")]  # fmt: skip
        return [Problem("srun", "unknown", None, f"`{shown}`: {path} {why}: whether srun reads a node list from it is "
                        f"not judged here (it says {fails} where it reads none; fail closed)",
                        [SRUN_HOSTFILE_SOURCE])]  # fmt: skip

    try:
        data = view.read_bytes(path, _HOSTFILE_READ_LIMIT + 1)
    except PermissionError:
        return problem("blocked", "cannot be read by this user (permission denied)")
    except NotRegularFile:
        return problem("unknown", "is no regular file")
    except (OSError, ValueError) as err:
        return problem("unknown", f"could not be read ({type(err).__name__})")
    if len(data) > _HOSTFILE_READ_LIMIT:
        return problem("unknown", f"is larger than {_HOSTFILE_READ_LIMIT} bytes (not read)")
    hosts = starred = 0
    for number, raw in enumerate(data.split(b"\n"), 1):
        if len(raw) >= _SLURM_HOSTFILE_LINE or b"\0" in raw:
            return problem("unknown", f"has a line ({number}) srun reads in pieces or cut at a NUL byte")
        line, i = raw, 0
        while (i := line.find(b"#", i)) >= 0:
            if i > 0 and line[i - 1 : i] == b"\\":
                line = line[: i - 1] + line[i:]
                continue
            line = line[:i]
            break
        if not line:
            continue
        first = line[:1]
        if first[0] >= 0x80:
            return problem("unknown", f"has a line ({number}) starting with a byte that is not ASCII")
        if not first.isalnum():
            return problem("blocked", f"has line {number} starting with neither a letter nor a digit "
                           "(Slurm: 'Invalid hostfile contents')")  # fmt: skip
        for token in (t for t in line.split(b",") if t):
            star = token.find(b"*")
            if star >= 0 and _c_atoi(token[star + 1 :]) != 0:
                starred += 1
            else:
                hosts += 1
    if hosts or (starred and how != "-F"):
        return []
    if starred:
        return problem("unknown", "names its hosts only as NAME*N, which srun -F reads with a count of 0")
    return problem("blocked", "names no host (empty, or only blank and comment lines: Slurm: 'Hostlist is empty!')")


def _c_atoi(text: bytes) -> int:
    """C's atoi: optional blanks and sign, then the leading digits (0 where there are none)."""
    match = re.match(rb"[ \t\n\v\f\r]*([+-]?\d+)", text)
    return int(match.group(1)) if match else 0


def _gpus_share(shown: str, value: str, line: SrunLine, env: Mapping[str, str]) -> tuple[str, int | None]:
    """(the option as shown, the GPUs a task gets) of an srun's -G / --gpus VALUE, on its line or from SLURM_GPUS:
    the step's total over its nodes (srun(1) -G; ifc59), so its count is a task's only on one node (_srun_nodes);
    over more, or a -N not read, each node's share is not known (None: fail closed)."""
    nodes, single = _srun_nodes(line, env)
    if single:
        return shown, _gpu_count("--gpus", value)
    return f"{shown} over " + (str(nodes) if str(nodes).startswith("--") else f"-N {nodes}"), None


#: (imend8) srun's input environment variables of the GPU options srun_gpus reads (Slurm src/srun/opt.c, master
#: 2026-08-20 284c3b95f0: env_vars[] :546-631 maps SLURM_GPUS to -G, SLURM_GPUS_PER_NODE, SLURM_GPUS_PER_TASK,
#: SLURM_GRES and SLURM_TRES_PER_TASK to their long options; initialize_and_process_args :398-402 applies them before
#: the command line (_opt_env, then _opt_args), so an option on the line wins; _opt_env :656-683 reads each also as
#: NAME_PACK_GROUP_0 and NAME_HET_GROUP_0 after it, the later one winning; :947-950 drops SLURM_GPUS_PER_NODE inside
#: a job (SLURM_JOB_ID set) where --gpus is on the line). sbatch exports SLURM_GPUS_PER_TASK / SLURM_GPUS /
#: SLURM_GPUS_PER_NODE to the batch script for its own --gpus* (sbatch(1) OUTPUT ENVIRONMENT VARIABLES), so an srun
#: in a batch job inherits them; sbatch's own SBATCH_* input variables srun does not read (not in env_vars[]).
SRUN_GPU_ENV = (
    ("SLURM_GPUS", "gpus"),
    ("SLURM_GPUS_PER_NODE", "gpus-per-node"),
    ("SLURM_GPUS_PER_SOCKET", "gpus-per-socket"),  # (imend11: opt.c :576; not read before, a count not derived)
    ("SLURM_GPUS_PER_TASK", "gpus-per-task"),
    ("SLURM_GRES", "gres"),
    ("SLURM_TRES_PER_TASK", "tres-per-task"),
)
_GPU_OPTIONS = ("gpus-per-task", "gpus-per-node", "gpus-per-socket", "gres", "tres-per-task")
#: (imend11) srun's --exclusive and its input variable (opt.c env_vars[] :568 SLURM_EXCLUSIVE). srun(1): an srun that
#: starts a job with --exclusive gets whole nodes and gives its step only what the step asks for (--exact); a step
#: gets the job's GRES by default, but not those an exclusive job holds without asking (--gres's note). With no GPU
#: option the server's step may get none (inside a running job it is --exact, whose GPUs the gate cannot tell from a
#: new job's): unknown (fail closed). `=allocation` gives each step the whole allocation.
_EXCLUSIVE_ENV = "SLURM_EXCLUSIVE"
#: (imend13, imend12's item 6) an srun outside an allocation starts a job of its own (srun(1) DESCRIPTION: "If
#: necessary, srun will first create a resource allocation"): Slurm 26.05.3 src/srun/opt.c :351 takes it as a step of
#: an existing job only where SLURM_JOB_ID is set (is_step), and srun_job.c :1253 / allocate.c :697-703
#: existing_allocation only where --jobid is given, on its line or as SLURM_JOB_ID (env_vars[] :581; SLURM_JOBID is no
#: input variable of srun since 19.05, commit fa5e42fdf2, and neither name is read as a _HET_GROUP_ / _PACK_GROUP_
#: twin, _opt_env :665-667). A new job holds no GRES it does not ask for (gres.html Running Jobs: "Jobs will not be
#: allocated any generic resources unless specifically requested"): with no GPU option its step has none. What the
#: server then sees is the cluster's: no GPU under cgroup.conf ConstrainDevices=yes, CUDA_VISIBLE_DEVICES=NoDevFiles
#: before Slurm 20.02, every GPU of the node otherwise, or what a job_submit plugin adds: unknown (fail closed;
#: inferred from the sources and manuals, not run: no Slurm here). Not seen: a step of an `sbatch --exclusive` job with
#: no GPU option, which gets none of the GPUs the job holds without asking (gres.html: a step gets the job's GRES
#: "except those implicitly requested when a job is exclusive"): sbatch exports no SLURM_EXCLUSIVE to its script
#: (src/sbatch/opt.c :202 reads SBATCH_EXCLUSIVE as input alone; set_envs :1322-1408, common/env.c set_env_from_opts
#: :2398 and env_array_for_batch_job set none), so its environment is that of a job that asked for GPUs: judged as one
_JOB_ENV = "SLURM_JOB_ID"


def srun_env_gpus(line: SrunLine, env: Mapping[str, str], in_job: bool = False) -> list[tuple[str, int | None]]:
    """The GPU options an srun (runners.srun_line) takes from its environment `env` and not from its line, each with
    the count it gives (_gpu_count; --tres-per-task: its gres/gpu entry as --gres's, another TRES no GPU):
    SRUN_GPU_ENV; and with no GPU option anywhere, an --exclusive or a step outside an allocation (_srun_in_job;
    `in_job`: it runs as another srun's task, inside that srun's job), whose GPUs are not known (None)."""
    on_line = {names[0] for names, _ in line.options if len(names) == 1}
    if "gpus" in line.counts:
        on_line.add("gpus")
    out: list[tuple[str, int | None]] = []
    for var, option in SRUN_GPU_ENV:
        value, name = _env_option(env, var)
        if value is None or option in on_line:
            continue
        if option == "gpus-per-node" and "gpus" in on_line and "SLURM_JOB_ID" in env:
            continue
        if option == "tres-per-task" and "gpus-per-task" in on_line:
            continue  # (slurm_opt.c _set_tres_per_task_from_sibling_opt_internal: the line's --gpus-per-task wins)
        shown = f"--{option}={value} (from {name} in its environment)"
        if option == "gpus":  # (imend11: the step's total, as the line's --gpus: each node's share)
            out.append(_gpus_share(shown, value, line, env))
            continue
        if _no_gpu_asked(option, value):
            continue  # (a --gres / --tres-per-task of no GPU; `none` or a zero count asks for none: count 0)
        out.append((shown, _gpu_count(f"--{option}", value)))
    if "gres" not in on_line and not any(s.startswith("--gres=") for s, _ in out) and "SLURM_STEP_GRES" in env:
        value = env["SLURM_STEP_GRES"]  # (imend11: src/srun/launch.c :830-833, the step's --gres where none is given)
        if not _no_gpu_asked("gres", value):
            out.append((f"--gres={value} (from SLURM_STEP_GRES in its environment)", _gpu_count("--gres", value)))
    for option, var in SRUN_GPU_BINDS:  # (imend11: a task bound to some of the step's GPUs)
        value, name = _env_option(env, var)
        if value is not None and option not in on_line and _binds(option, value):
            out.append((f"--{option}={value} (from {name} in its environment)", None))
    exclusive = next((v if v is not None else "" for names, v in line.options if names == ("exclusive",)), None)
    name = "--exclusive (from its command line"
    if exclusive is None:
        exclusive, var = _env_option(env, _EXCLUSIVE_ENV)
        name = f"--exclusive (from {var} in its environment"
    asked = (
        bool(out)
        or "gpus" in line.counts
        or any(
            len(names) == 1 and names[0] in _GPU_OPTIONS and not _no_gpu_asked(names[0], v) for names, v in line.options
        )
    )
    if exclusive is not None and exclusive.strip() != "allocation" and not asked:
        out.append((f"{name}, with no GPU option: an exclusive job's GPUs are its steps' only where asked)", None))
    elif not asked and not in_job and not _srun_in_job(line, env):
        out.append(("no GPU option outside an allocation (no SLURM_JOB_ID in its environment, no --jobid: srun "
                    "starts a job of its own, which holds no GPU it does not ask for)", None))  # fmt: skip
    return out


#: (irobust13) the job ids srun reads, as every release since 20.11 reads them: src/common/slurm_opt.c arg_set_jobid
#: (slurm-20-11-0-1: parse_int("--jobid", arg, true), a positive int; slurm-23-02-0-1 and master 284c3b95f0:
#: slurm_parse_step_str, src/common/slurm_protocol_defs.c unfmt_job_id_string :1039, whose error is fatal(), "Bad
#: job/step specified"). srun reads SLURM_JOB_ID as --jobid (src/srun/opt.c env_vars[] :581, _opt_env :662-664: even
#: empty, getenv gives ""), so a value neither reads (empty, 0, a name, a sign or a blank, past 2^31 - 1) ends srun
#: before it runs a command, whatever the line says after it. Read here: a positive decimal with no sign, at most
#: 2147483647; the later forms (JOB_TASK, JOB+COMPONENT, JOB.STEP, a SLUID) that 20.11 refuses are not read: unknown.
_JOB_ID = _lazy(r"[1-9][0-9]{0,9}")
SRUN_JOB_ID_SOURCE = [
    {"title": "Slurm src/common/slurm_opt.c arg_set_jobid (slurm-20-11-0-1: parse_int; slurm-23-02-0-1 onward: "
     "slurm_parse_step_str, fatal on a bad id) and src/srun/opt.c env_vars[] (SLURM_JOB_ID read as --jobid)",
     "url": "https://github.com/SchedMD/slurm/blob/master/src/common/slurm_opt.c"},
]  # fmt: skip


def srun_job_id_refused(line: SrunLine, env: Mapping[str, str], in_job: bool = False) -> str | None:
    """The first job id an srun is given (SLURM_JOB_ID in its environment `env`, read first, then each --jobid of its
    line) that _JOB_ID does not read, as "WHERE `VALUE`"; None where every one is read. `in_job`: it runs as another
    srun's task, whose SLURM_JOB_ID that srun sets to its own job's id."""
    given = [] if in_job or _JOB_ENV not in env else [(_JOB_ENV, env[_JOB_ENV])]
    given += [("--jobid", value or "") for names, value in line.options if names == ("jobid",)]
    for where, value in given:
        if _JOB_ID.fullmatch(value) is None or int(value) > 2**31 - 1:
            shown = value[:40].encode("ascii", "backslashreplace").decode()
            return f"{where} `{shown}`"
    return None


def srun_job_id_problem(given: str) -> Problem:
    return Problem("srun", "unknown", None, f"`srun` stands before the launch with the job id {given}, which srun "
                   "does not read as one (a positive decimal job id): it exits (\"Bad job/step specified\" or "
                   "\"invalid --jobid\") before running the command, or reads a form the gate does not",
                   SRUN_JOB_ID_SOURCE)  # fmt: skip


def _srun_in_job(line: SrunLine, env: Mapping[str, str]) -> bool:
    """Whether an srun runs its step inside an existing job (_JOB_ENV): --jobid on its line, or SLURM_JOB_ID set in
    its environment; else it starts a job of its own."""
    if any(names == ("jobid",) for names, _ in line.options):
        return True
    # (irobust13: set at all, even empty: opt.c is_step = getenv() != NULL, and "" is then a job id srun refuses,
    # srun_job_id_refused; not a job of its own)
    return _JOB_ENV in env


def _env_option(env: Mapping[str, str], *variables: str) -> tuple[str | None, str]:
    """(the value srun takes for its input variable from `env`, the variable it comes from): opt.c _opt_env reads
    each of env_vars[]'s names in its order (`variables`: SLURM_NPROCS before SLURM_NTASKS, both -n), each as VAR,
    then VAR_PACK_GROUP_0 and VAR_HET_GROUP_0, the later one winning. The one reader of srun's input variables
    (irev80: -D's and the task counts' read the plain name alone); where none is set, (None, the first name)."""
    name, value = variables[0], None
    for var in variables:
        # (imend13: the job id is read under its own name alone, _opt_env :665-667)
        twins = () if var in ("SLURM_JOB_ID", "SLURM_JOBID") else (f"{var}_PACK_GROUP_0", f"{var}_HET_GROUP_0")
        for each in (var, *twins):
            if each in env:
                name, value = each, env[each]
    return value, name


def _srun_env_seen(trace: dict[str, Any] | None, found: list[tuple[str, int | None]]) -> None:
    if trace is not None and found:
        trace.setdefault("srun_env_gpus", []).extend(found)


def _devices_on_node(options: Mapping[str, Any], release: str | None = None) -> int:
    """How many CUDA devices the launch's ranks on this node need to see: the highest ordinal they take plus one
    (preflight/gpus.py gpu_ordinals, as SGLang lays them out: --dp-size groups without --enable-dp-attention each take
    tp x pp GPUs, 0.5.23 managers/data_parallel_controller.py:445-449 base_gpu_id += tp_size * pp_size *
    gpu_id_step; --base-gpu-id and --gpu-id-step move them), the rank count alone past MAX_NODE_RANKS. irev74:
    srun's GPU count was compared with tp x pp alone, so `srun --gpus-per-task=2 ... --tp 2 --dp-size 2` (4 GPUs)
    was allowed. imend8: SGLang 0.5.1-0.5.2 offset each DP group by tp_size * gpu_id_step alone (0.5.1
    data_parallel_controller.py:150, 0.5.2 :156; tp x pp from 0.5.3, :212-213; preflight.json gpu_layout.dp_offset),
    so with --pp-size the groups overlap and the highest ordinal is lower: `--tp 2 --pp-size 2 --dp-size 2` takes
    ordinals 0-5 there, not 0-7; counted as 8 for every release, a task given 6 or 7 GPUs was refused. The release
    unknown: the larger count (fail closed)."""
    from stackcheck.launch.preflight.gpus import MAX_NODE_RANKS, Layout, gpu_ordinals, ranks_on_node

    layout = Layout.from_options(options)
    if min(layout.tp, layout.pp, layout.dp, layout.nnodes, layout.gpu_id_step) < 1 or layout.base_gpu_id < 0:
        return 0  # (SGLang's own checks refuse these; the tp x pp reading stands)
    ranks = ranks_on_node(layout)
    if ranks > MAX_NODE_RANKS:
        return ranks
    includes_pp = not _release_inside(release, "<0.5.3")
    return max(gpu_ordinals(layout, includes_pp), default=-1) + 1


def srun_gpus_problem(given: str, needed: int) -> Problem:
    shown = f"`srun {given}`" if " (from " not in given and not given.startswith("no ") else f"srun with {given}"
    return Problem("srun", "unknown", None, f"{shown} stands before the launch: each task sees the GPUs srun "
                   f"gives it (CUDA_VISIBLE_DEVICES), fewer than the {needed} the launch asks for (--tp x --pp on "
                   "one node, x --dp-size without DP attention, past --base-gpu-id), or a count not read; the "
                   "server finds too few devices (fail closed); give srun at least as many GPUs a task",
                   SRUN_GPUS_SOURCE)  # fmt: skip


#: (ifc59, beside the fifty-ninth sample's population s: `srun -N2 python -m sglang.launch_server --tp 8 --nnodes 2
#: --node-rank 0 ...` allowed) srun runs its command unchanged on every node of its step, one task a node by default
#: (srun(1) -N, -n), and SGLang reads the node's rank from --node-rank alone (0 by default; no SLURM_NODEID or
#: SLURM_PROCID is read: 0.5.13 and 0.5.23 name no SLURM variable): every node then claims the same rank of --nnodes, so
#: torch's rendezvous at --dist-init-addr finds one rank twice and another never (a node other than the address's
#: cannot bind it as rank 0; the rest wait for the missing ranks): inferred from the manual and the sources, not run.
SRUN_NODE_RANK_SOURCE = [
    {"title": "srun(1): -N, --nodes (the step's nodes; one task a node by default), -n; INPUT ENVIRONMENT VARIABLES "
     "SLURM_NNODES, SLURM_NTASKS", "url": "https://slurm.schedmd.com/srun.html#OPT_nodes"},
    {"title": "sglang 0.5.13 / 0.5.23 wheels (pip download --no-deps, ifc59 2026-12-07): --node-rank (default 0) is "
     "the only reading of a node's rank; no file of either release reads a SLURM_ variable (0.5.23 names SLURM in "
     "a log message of layers/flashinfer_comm_fusion.py alone)",
     "url": "https://pypi.org/project/sglang/0.5.23/"},
]  # fmt: skip


def _srun_spread(sruns: Sequence[SrunLine], env: Mapping[str, str]) -> str | None:
    """How one of the sruns (runners.srun_line) runs its command on more than one node (-N / --nodes above 1,
    SLURM_NNODES from an allocation, or more than one task: on one node that is _srun_copies' refusal, else several
    nodes), None where every srun runs it on one node (a count not read: taken as several, fail closed)."""
    for line in sruns:
        got = line.counts
        ntasks_raw = got.get("ntasks") or _env_option(env, *_SRUN_TASKS_ENV)[0]
        nodes_raw, single = _srun_nodes(line, env)  # (imend11: SLURM_JOB_NUM_NODES too, a range 1-2 as more than one)
        if not single:
            return str(nodes_raw) if str(nodes_raw).startswith("--") else f"-N {nodes_raw}"
        if ntasks_raw is not None:
            tasks = _small_count(ntasks_raw.strip(), -1)
            if tasks is None or tasks < 0 or tasks > 1:
                return f"-n {ntasks_raw}"
    return None


#: (imend14) srun -H / --hold (Slurm src/common/slurm_opt.c slurm_opt_hold :1972-1982, 'H', no argument;
#: slurm_opt_create_job_desc :6089-6093 sets the job's priority 0 where it is given, which src/srun/allocate.c
#: _job_desc_msg_create_from_opts :743 uses for the job srun allocates, allocate_nodes :343; a step inside an existing
#: job, existing_allocation :697, asks for no job and has no priority to set). srun(1): "submit job in held state"; the
#: job pends until an administrator or its user releases it (`scontrol release JOBID`), and srun waits for it: the
#: launch is the one judged, but may never start. A note, not a refusal: the user asked for it, and nothing runs
#: otherwise than written (inferred from the sources and the manual; no Slurm here).
SRUN_HOLD_SOURCE = [
    {"title": "srun(1): -H, --hold: specify the job is to be submitted in a held state (priority of zero); a held job "
     "can be released with scontrol to reset its priority", "url": "https://slurm.schedmd.com/srun.html#OPT_hold"},
]  # fmt: skip


def _srun_holds(line: SrunLine) -> bool:
    """Whether an srun is given -H / --hold before its command (runners.srun_line: --hold in `options`, -H in a cluster
    of short options in `counts`)."""
    return "hold" in line.counts or any(names == ("hold",) for names, _ in line.options)


#: (irunner3) Slurm (SchedMD/slurm master 284c3b95f0): srun's -N / --nodes value (src/common/proc_args.c
#: verify_node_count :498-588: a count, `min-max`, or a size list with `,` / `:`; str_to_nodes :465 strtol with a k / m
#: suffix; a word with other characters, a negative count or a maximum below the minimum is an error, which
#: slurm_process_option_or_exit (src/srun/opt.c :709-713) turns into srun's exit); inside a job srun asks for a step of
#: the allocation: more nodes than it holds is "Only allocated %d nodes asked for %d" (src/srun/srun_job.c :1696-1706,
#: no step), and a -w / --nodelist naming a node outside the job is refused by the step manager (src/stepmgr/stepmgr.c
#: :1776-1780 "requested nodes ... not part of" the job: ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE, :1413), so srun
#: exits before the launch starts. Read from the sources, not run here (no Slurm on this box).
SRUN_ALLOCATION_SOURCE = [
    {"title": "Slurm src/common/proc_args.c verify_node_count / str_to_nodes; src/srun/srun_job.c 'Only allocated %d "
     "nodes asked for %d'; src/stepmgr/stepmgr.c: requested nodes not part of the job",
     "url": "https://github.com/SchedMD/slurm/blob/master/src/common/proc_args.c"},
    {"title": "srun(1): -N, --nodes=<minnodes>[-maxnodes]; -w, --nodelist=<node_name_list> (inside an allocation: "
     "nodes of that allocation)", "url": "https://slurm.schedmd.com/srun.html#OPT_nodes"},
]  # fmt: skip
_C_BLANKS = " \t\n\v\f\r"


def _slurm_str_to_nodes(text: str) -> tuple[int, str]:
    """Slurm's str_to_nodes (src/common/proc_args.c): (the count, what is left of the word after it), -1 where no
    digits lead (the word itself left) or the count is negative or past INT_MAX."""
    m = re.match(f"[{_C_BLANKS}]*([+-]?)(\\d+)", text, re.ASCII)
    if m is None:
        return -1, text
    digits = m[2].lstrip("0")
    num = int(m[1] + (digits or "0")) if len(digits) <= 12 else (2**40 if m[1] != "-" else -1)
    rest = text[m.end() :]
    for suffix, times in (("kK", 1024), ("mM", 1024 * 1024)):
        if rest[:1] and rest[0] in suffix:
            num, rest = num * times, rest[1:]
    return (-1 if num < 0 or num > 2**31 - 1 else num), rest


def srun_node_count(value: str) -> tuple[int, int] | str | None:
    """srun's reading of -N VALUE (verify_node_count): (min, max; max 0 is none), the error srun exits on (a str), or
    None where the form is not read here (a size list with `,` / `:`)."""
    if "," in value or ":" in value:
        return None
    if "-" in value:
        low_text, high_text = value.split("-", 1)
        low, left = _slurm_str_to_nodes(low_text)
        if left.strip(_C_BLANKS):
            return f'"{low_text[:40]}" is not a valid node count'
        low = 1 if low < 0 else low
        high, left = _slurm_str_to_nodes(high_text)
        if left.strip(_C_BLANKS):
            return f'"{high_text[:40]}" is not a valid node count'
    else:
        low, left = _slurm_str_to_nodes(value)
        if left.strip(_C_BLANKS) or low < 0:
            return f'"{value[:40]}" is not a valid node count'
        high = low
    if high != 0 and high < low:
        return f"Maximum node count {high} is less than minimum node count {low}"
    return low, high


def slurm_hostlist(text: str, cap: int = 100_000) -> list[str] | None:
    """The host names of a Slurm host list (`n[1-4,7]`, `gpu[01-02]`, `a1,b[2-3]`, `r[1-2]n[1-2]`: each bracket a
    list of numbers and ranges, a range's width kept where it is zero-padded), None where a part is not read (an
    unclosed bracket, a range backwards, a `{...}`, more than `cap` names)."""
    hosts: list[str] = []
    if not re.fullmatch(r"[,\s]*(?:(?:[^,\[\]\s]|\[[^\[\]]*\])+[,\s]*)*", text):
        return None  # (an unclosed or nested bracket)
    for part in re.findall(r"(?:[^,\[\s]|\[[^\]]*\])+", text):
        if "{" in part or "}" in part or part.count("[") != part.count("]"):
            return None
        names = [""]
        for piece in re.split(r"(\[[^\]]*\])", part):
            if not piece.startswith("["):
                if "]" in piece:
                    return None
                names = [n + piece for n in names]
                continue
            values: list[str] = []
            for item in piece[1:-1].split(","):
                m = re.fullmatch(r"(\d{1,9})(?:-(\d{1,9}))?", item, re.ASCII)
                if m is None or (m[2] is not None and int(m[2]) < int(m[1])):
                    return None
                width = len(m[1]) if m[1].startswith("0") else 0
                last = int(m[2]) if m[2] is not None else int(m[1])
                if last - int(m[1]) >= cap:
                    return None
                values += [str(k).zfill(width) for k in range(int(m[1]), last + 1)]
            names = [n + v for n in names for v in values]
            if len(names) > cap:
                return None
        hosts += names
        if len(hosts) > cap:
            return None
    return hosts or None


def srun_allocation_problem(line: SrunLine, env: Mapping[str, str]) -> Problem | None:
    """(irunner3) An srun whose -N or -w srun refuses before the launch starts: a -N value verify_node_count refuses
    (anywhere), and inside a job (SLURM_JOB_ID, --jobid) a -N above the allocation's node count (SLURM_JOB_NUM_NODES /
    SLURM_NNODES) or a -w naming a node outside SLURM_JOB_NODELIST (Slurm's host list syntax): blocked. Unknown where
    how srun reads it is not read: -N 0 or a size list, a host list not read. A job's environment always holds its node
    count and list (Slurm sets them in every job step and batch script); where the gate's does not, they are not
    judged (a job the gate does not see: its srun's allocation is not read)."""
    nodes = line.counts.get("nodes")
    in_job = _srun_in_job(line, env)

    def problem(status: str, why: str) -> Problem:
        return Problem("srun", status, "crash" if status == "blocked" else None, why, SRUN_ALLOCATION_SOURCE)

    if nodes is not None:
        got = srun_node_count(nodes)
        if isinstance(got, str):
            return problem("blocked", f"`srun -N {nodes[:40]}` is refused by srun ({got}): it exits before the launch "
                           "starts")  # fmt: skip
        if got is None or got[0] == 0:
            return problem("unknown", f"`srun -N {nodes[:40]}`: how srun reads this node count (a size list, or no "
                           "node) is not read (fail closed)")  # fmt: skip
        if in_job and got[0] > 1:
            held = _env_option(env, *_SRUN_NODES_ENV)[0]
            count = _small_count(held.strip(), -1) if held is not None else None
            if count is not None and got[0] > count:
                return problem("blocked", f"`srun -N {nodes[:40]}` asks for {got[0]} nodes inside a job of {count} "
                               f"(SLURM_JOB_NUM_NODES): srun exits with 'Only allocated {count} nodes asked for "
                               f"{got[0]}' before the launch starts")  # fmt: skip
    hosts_text = line.counts.get("nodelist")
    if in_job and hosts_text is not None and "/" not in hosts_text:
        wanted = slurm_hostlist(hosts_text)
        job_text = _env_option(env, "SLURM_JOB_NODELIST", "SLURM_NODELIST")[0]
        held_hosts = slurm_hostlist(job_text) if job_text else None
        if job_text and (wanted is None or held_hosts is None):
            what = "its host list" if wanted is None else "the job's nodes (SLURM_JOB_NODELIST)"
            return problem("unknown", f"`srun -w {hosts_text[:60]}` runs inside a job and {what} is not read: srun "
                           "refuses a node outside the job (fail closed)")  # fmt: skip
        outside = [h for h in wanted or [] if h not in set(held_hosts or [])]
        if outside and held_hosts and job_text:
            return problem("blocked", f"`srun -w {hosts_text[:60]}` names {outside[0][:40]}, which is not one of the "
                           f"job's nodes ({job_text[:60]}): Slurm refuses the step ('Requested node configuration is "
                           "not available') and srun exits before the launch starts")  # fmt: skip
    return None


def srun_hold_note() -> Problem:
    return Problem("srun", "note", None, "`srun -H` / `--hold` submits the job srun starts in a held state (priority "
                   "0): it pends, and srun waits, until someone releases it (`scontrol release JOBID`); the launch "
                   "judged here starts only then, or never", SRUN_HOLD_SOURCE)  # fmt: skip


def srun_node_rank_problem(spread: str, nnodes: int, rank: int) -> Problem:
    return Problem("srun", "unknown", None, f"`srun {spread}` runs the launch on more than one node, each with the "
                   f"same --node-rank {rank} of --nnodes {nnodes}: SGLang reads a node's rank from --node-rank alone "
                   "(no SLURM_NODEID), so the nodes claim one rank and leave the others empty, and the server's "
                   "rendezvous at --dist-init-addr does not complete (inferred, fail closed); run one srun a node "
                   "with its own --node-rank, or a shell that passes --node-rank \"$SLURM_NODEID\"",
                   SRUN_NODE_RANK_SOURCE)  # fmt: skip


#: (imend9, ifc59's leftover) srun(1) OUTPUT ENVIRONMENT VARIABLES: SLURM_NODEID "The relative node ID of the
#: current node" and SLURM_PROCID "The MPI rank (or relative process ID) of the current process", set by srun in each
#: task's environment: a shell srun runs on each of -N K nodes (one task a node) expands `--node-rank $SLURM_NODEID`
#: to that node's own index, 0..K-1 (and SLURM_PROCID likewise where the step has one task a node)
SRUN_NODE_ID_SOURCE = {"title": "srun(1): OUTPUT ENVIRONMENT VARIABLES SLURM_NODEID (the relative node ID of the "
                       "current node), SLURM_PROCID (the relative process ID of the current process), set in each task",
                       "url": "https://slurm.schedmd.com/srun.html#SECTION_OUTPUT-ENVIRONMENT-VARIABLES"}  # fmt: skip
_NODE_ID_VALUE = re.compile(r"\$(\{SLURM_(NODEID|PROCID)\}|SLURM_(NODEID|PROCID)(?![A-Za-z0-9_]))")


def srun_node_ids(argv: Sequence[str], trace: Mapping[str, Any], nnodes_word: str | None) -> str | None:
    """The SLURM_ variable a shell string's `--node-rank $VAR` may name so that each node gets its own rank (imend9),
    None where none may: the launch is a shell string run by an srun of the command's own words (`[nohup] srun -N K
    ... bash -c "... --node-rank $SLURM_NODEID"`: srun_path's two levels, srun in the first, none in the string), srun
    runs one task on each of exactly K nodes (-N K given as a number, no -n but K, no --ntasks-per-node but 1) and K
    is --nnodes; the variable is named once in the whole command (no assignment, unset or other reading of it), in
    the --node-rank value as `$VAR`, `${VAR}` or their double-quoted forms (single-quoted or escaped it is no
    expansion). SLURM_PROCID equals the node's index only with one task a node, which these conditions give."""
    levels = trace.get("levels")
    if not trace.get("shell_string") or not isinstance(levels, list) or len(levels) != 2:
        return None
    outer, inner = levels
    at = [k for k, w in enumerate(outer) if os.path.basename(w) == "srun"]
    if len(at) != 1 or any(os.path.basename(w) == "srun" for w in inner):
        return None
    from stackcheck.launch.runners import srun_line

    reading = srun_line(outer, at[0])  # (srun's command is the shell itself: `srun -N2 sudo bash -c` is not read)
    if reading.unsure is not None or reading.command != len(outer) - 1:
        return None
    got = reading.counts
    nodes = _small_count((got.get("nodes") or "").strip(), None)
    tasks = _small_count((got.get("ntasks") or str(nodes)).strip(), None)
    per_node = _small_count((got.get("ntasks-per-node") or "1").strip(), None)
    if nodes is None or nodes < 2 or tasks != nodes or per_node != 1 or nnodes_word != str(nodes):
        return None
    named = [m.group(1) for w in argv for m in re.finditer(r"SLURM_(NODEID|PROCID)", w)]
    if len(named) != 1:
        return None
    quoted = re.compile(r"--node-rank(=|\s+)(\"?)\$(\{SLURM_(NODEID|PROCID)\}|SLURM_(NODEID|PROCID))\2(?=$|[\s;&|)])")
    if not any(quoted.search(w) for w in argv):
        return None
    return f"SLURM_{named[0]}"


def _level(trace: dict[str, Any] | None, words: Sequence[str]) -> None:
    """Note in `trace` ("levels", outermost first: find_launch returns from the innermost command out) the words of
    a command on the way to the launch that stand before it: an outer command's words before the `env`, shell string
    or flock string it runs the launch through, the innermost command whole. irev74: srun's GPU options and an srun
    nested in another were read in the outermost command's words alone, so `srun -N1 bash -c "srun python -m
    sglang.launch_server ..."` and `bash -c "srun --gpus-per-task=1 python ... --tp 2"` were allowed."""
    if trace is not None:
        trace.setdefault("levels", []).insert(0, list(words))


def srun_path(trace: Mapping[str, Any], argv: Sequence[str]) -> list[str]:
    """The words before the launch across the levels find_launch noted (_level), outermost first; `argv` where none
    was noted."""
    levels = trace.get("levels")
    if not isinstance(levels, list) or not levels:
        return list(argv)
    return [word for level in levels for word in level]


def _copies_seen(trace: dict[str, Any] | None, copies: str | None) -> None:
    if trace is not None and copies is not None:
        trace.setdefault("srun_copies", []).append(copies)


def srun_copies_problem(why: str) -> Problem:
    """The unknown of a launch srun may start more than once on one node (_srun_copies), or an srun inside another's
    step without --overlap (_srun_nested)."""
    if why.startswith("hostfile: "):  # (irobust13: _srun_hostfile)
        return Problem("srun", "unknown", None, f"`srun` stands before the launch and {why.removeprefix('hostfile: ')} "
                       "(fail closed); give srun -n 1, or -w with each host once (and no SLURM_HOSTFILE)",
                       SRUN_TASKS_SOURCES)  # fmt: skip
    if why.startswith("nested"):
        return Problem("srun", "unknown", None, "an srun runs as the task of another srun before the launch, without "
                       "--overlap: the inner srun asks for a step inside the same job, whose CPUs and memory the "
                       "outer step holds while it waits on it (steps share none by default from Slurm 20.11 on): "
                       "the inner step waits and the server never starts (fail closed); give the inner srun "
                       "--overlap, or drop one srun", [SRUN_NESTED_SOURCE])  # fmt: skip
    return Problem("srun", "unknown", None, f"`srun {why}` stands before the launch: srun runs the command once per "
                   "task, and more than one task may land on one node (without -N srun takes as few nodes as the "
                   "tasks fit), each a whole server on that node's GPUs and --port: the second finds them taken "
                   "(fail closed); give one task a node (-N equal to -n, or --ntasks-per-node=1) or one task",
                   SRUN_TASKS_SOURCES)  # fmt: skip


def _root_seen(trace: dict[str, Any] | None, root: str | None) -> None:
    if trace is not None and root is not None:
        trace.setdefault("root_change", []).append(root)


def root_change_problem(program: str) -> Problem:
    """The refusal of a launch run on another root (ROOT_CHANGE): the files the facts describe are not its own."""
    return Problem("root", "unknown", None, f"`{program}` stands before the launch: {ROOT_CHANGE[program]}, so the "
                   "interpreter, packages, libraries and model files the server finds there are not the ones the "
                   "facts describe (fail closed); gate the command where it runs (inside the root or container: "
                   "`stackcheck gate --root DIR` or `--image`)", ROOT_CHANGE_SOURCES)  # fmt: skip


def _unread_wrapper(argv: Sequence[str], env: Mapping[str, str]) -> Any:
    """The first program of `argv` before its first Python word that runs its command elsewhere or its own way
    (elsewhere.wrapper_at), for a launch find_launch did not find (its words not read as the server's), else None."""
    from stackcheck.launch.elsewhere import wrapper_at

    before = next((i for i, w in enumerate(argv) if i and _PYTHON.match(os.path.basename(w))), len(argv))
    return next((w for w in (wrapper_at(argv, i, env) for i in range(before)) if w is not None), None)


def _wrapped_seen(trace: dict[str, Any] | None, wrapped: Any, cleared: bool = False) -> None:
    """Note in `trace` that the launch runs behind `wrapped` (elsewhere.Wrapped: another machine or container, or a
    program that runs it its own way); `cleared`: an `env -i` after it gives the launch's whole environment."""
    if trace is not None and wrapped is not None:
        trace.setdefault("wrapped", []).append((wrapped, cleared))


def _unplaced_seen(
    trace: dict[str, Any] | None, argv: Sequence[str], target: int, env: Mapping[str, str], mapping: Mapping[str, Any]
) -> None:
    """Note in `trace` ("unplaced", outermost first) the first word before argv[target] (where find_launch found the
    launch, the `env` that runs it or the string that holds it) that no reader places the command of (iallow1)."""
    if trace is not None and target > 0:
        notes: list[Problem] = []
        got = unplaced_before(argv, target, env, mapping, notes, unexpanded=bool(trace.get("unexpanded")))
        if got is not None:
            trace.setdefault("unplaced", []).insert(0, got)
        trace.setdefault("runner_notes", []).extend(notes)
    _program_word_seen(trace, argv, target, env)


def _program_word_seen(
    trace: dict[str, Any] | None, argv: Sequence[str], at: int, env: Mapping[str, str] | None = None
) -> None:
    """Note in `trace` ("unplaced") the launch's program word argv[at] where it does not run the program it names as
    written (_program_word; a shell string's text, a word with blanks, is not one: its own words are read inside), or,
    in a shell string, names a variable the launch's environment `env` does not hold (_program_variables)."""
    if trace is None or trace.get("unplaced") or not 0 <= at < len(argv) or any(c.isspace() for c in argv[at]):
        return
    why = _program_word(argv[at], bool(trace.get("unexpanded")))
    word = argv[at]
    tilde = word == "~" or word.startswith("~/")  # (`~`: HOME's value; unset, the user database's, not read here)
    if why is None and trace.get("unexpanded") and ("$" in word or tilde) and env is not None:
        read = "${HOME}" + word[1:] if tilde else word
        why = _program_variables(read, env, trace.get("gate_env"), bool(trace.get("target_facts")), word)
    if why is not None:
        from stackcheck.redact import redact_argv

        prog = os.path.basename(redact_argv(argv[: at + 1])[at])[:80]
        trace.setdefault("unplaced", []).insert(0, Problem(prog, "unknown", None, f"the launch's {why}, so what runs "
                                                           "may not be the launch the gate judged (fail closed)",
                                                           [PROGRAM_WORD_SOURCE]))  # fmt: skip


#: (imend12) the shell's expansions of a program word (_program_word)
PROGRAM_WORD_SOURCE = {
    "title": "POSIX.1-2017 Shell Command Language, 2.6.1 Tilde Expansion and 2.13 Pattern Matching Notation (pathname "
    "expansion; a pattern that matches nothing is left as written), made by the shell alone: execve(2) and execvp(3) "
    "take a path as written",
    "url": "https://pubs.opengroup.org/onlinepubs/9699919799/utilities/V3_chap02.html#tag_18_06_01",
}


def _program_word(word: str, unexpanded: bool) -> str | None:
    """Why a program word (a runner's, or the launch's interpreter) does not run the program it names as written, or
    None (imend12). A pattern (`*`, `?`, `[...]`: POSIX.1-2017 Shell Command Language 2.13, pathname expansion) is the
    shell's to expand against the files there: none left as written (bash; zsh refuses the line), one the program, more
    the first as the program and the rest its arguments. A leading `~` (2.6.1, tilde expansion) is the shell's too:
    in a shell string it is HOME's value and the program is the one named; in an argv no shell reads it, and exec
    looks for a directory named `~` in the working directory (exit 127 where there is none)."""
    if "*" in word or "?" in word or ("[" in word and "]" in word.partition("[")[2]):
        return (f"its program word `{word[:80]}` is a pattern the shell expands against the files there (none: the "
                "word as written, not found; several: the first runs the others as its arguments), which the gate "
                "does not do: write the path out")  # fmt: skip
    if word.startswith("~") and not unexpanded:
        return (
            f"its program word `{word[:80]}` starts with `~`, which no shell expands in an argv: exec looks for "
            "a directory named `~` in the working directory (exit 127 where there is none): write the path out"
        )
    if unexpanded and word.startswith("~") and not (word == "~" or word.startswith("~/")):
        # (irobust12) `~NAME/...` is NAME's home directory from the user database (`~+` / `~-`: PWD / OLDPWD), which
        # the gate does not read; it read the word as a relative path
        return (f"its program word `{word[:80]}` starts with a `~` and a name: the shell puts that user's home "
                "directory (or PWD / OLDPWD) there, which the gate does not read: write the path out")  # fmt: skip
    if unexpanded and _brace_groups(word):
        # (irobust12) bash, zsh and ksh expand `{a,b}` / `{1..3}` into several words (dash leaves them as written)
        return (f"its program word `{word[:80]}` holds a brace expansion, which bash, zsh and ksh make into several "
                "words (the first runs the others as its arguments; dash keeps the braces as written, not found): "
                "write the path out")  # fmt: skip
    return None


#: (irunner3) a parameter expansion the gate reads in a shell string's program word: `$NAME` / `${NAME}`
_SIMPLE_PARAMETER = _lazy(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")


def _program_variables(
    word: str, env: Mapping[str, str], gate_env: Mapping[str, str] | None, target_facts: bool, shown: str = ""
) -> str | None:
    """(irunner3) Why a shell string's program word with `$NAME` / `${NAME}` (`$V/bin/python`) may not run the program
    the gate judged, or None where each is set in the launch's environment as the gate sees it: the shell puts an
    unset variable's nothing there (`/bin/python`), and the target reader took the word as written. With --facts
    (`target_facts`) the gate's own environment is not the launch's: a value it holds counts only where the command
    sets it otherwise (an assignment before the launch). Any other `$` form (`$(...)`, `${V:-x}`, `$1`) is not read.
    `shown`: the word as written, where `word` is its reading (`~/x` read as `${HOME}/x`)."""
    rest = _SIMPLE_PARAMETER.sub("", word)
    written = shown or word
    if "$" in rest:
        return (f"program word `{written[:80]}` holds a shell expansion the gate does not read (only $NAME and "
                "${NAME} are): write the path out")  # fmt: skip
    for m in _SIMPLE_PARAMETER.finditer(word):
        name = m[1] or m[2]
        if name not in env:
            return (f"program word `{written[:80]}` reads ${name}, which is not set in the launch's environment the "
                    "gate sees: the shell puts nothing there (for `~`, the user's home from the user database, not "
                    "read here), so another program may run; set it before the launch or write the path "
                    "out")  # fmt: skip
        if target_facts and gate_env is not None and gate_env.get(name) == env[name]:
            return (f"program word `{written[:80]}` reads ${name}, set only in the gate's own environment, which is "
                    "not the launch's where its facts are given (--facts): set it before the launch or write the path "
                    "out")  # fmt: skip
    return None


#: (irobust12) a brace expansion in a word (bash(1) Brace Expansion: a comma list or a sequence between braces)
#: irobust13: a group between braces is read first and its comma or `..` looked for after, in linear time: the one
#: pattern `\{[^{}\s]*(?:,|\.\.)[^{}\s]*\}` backtracked over every comma of an unclosed group (`{a,a,a,...`: 10 s on a
#: 40,000-byte word, an argument's 128 KiB in minutes)
_BRACE_GROUP = _lazy(r"\{([^{}\s]*)\}")


def _brace_groups(word: str) -> list[str]:
    """The insides of the brace expansions in `word` (bash(1) Brace Expansion: a comma list or a sequence between
    braces, no blank in it), innermost groups."""
    return [m[1] for m in _BRACE_GROUP.finditer(word) if "," in m[1] or ".." in m[1]]


#: coreutils timeout(1) and its source (launch/runners.py TIMEOUT, read_timeout)
TIMEOUT_SOURCE = {
    "title": 'GNU coreutils timeout (src/timeout.c: getopt_long "+fk:ps:v", then DURATION and the command; without '
    "--foreground it sends the signal to its whole process group, with it to the command alone; -k sends KILL that "
    "long after); `timeout --help` of coreutils 9.1",
    "url": "https://www.gnu.org/software/coreutils/manual/html_node/timeout-invocation.html",
}


def _seconds_text(seconds: float) -> str:
    return f"{seconds:g} s" if seconds < 120 else f"{seconds / 60:g} min" if seconds < 7200 else f"{seconds / 3600:g} h"


def _timeout_note(timed: Any) -> Problem:
    """The note of a launch behind coreutils timeout (iallow2; runners.read_timeout): the server is ended DURATION
    after it starts, by its signal, and by KILL -k later. A note, never a refusal: the launch is the user's to time."""
    whom = ("the server's own process (--foreground: the processes it starts, SGLang's scheduler and detokenizer, "
            "are not signalled by timeout)" if timed.foreground else "the server and every process it starts (its "
            "process group)")  # fmt: skip
    then = f", then KILL {_seconds_text(timed.kill_after)} later if it still runs" if timed.kill_after else ""
    return Problem("timeout", "note", None, f"`timeout` ends the launch {_seconds_text(timed.seconds)} after it "
                   f"starts: it sends {timed.signal} to {whom}{then}; the server stops serving then, or never serves "
                   "if loading the model and capturing CUDA graphs take longer (a DURATION of 0 sets no limit)",
                   [TIMEOUT_SOURCE])  # fmt: skip


#: (iallow1) the readers of the programs the gate steps through before the launch (launch/runners.py names each)
ALLOWLIST_SOURCE = {
    "title": "the programs read before the launch: coreutils nice / stdbuf / nohup / timeout / env / time, util-linux "
    "taskset / chrt / ionice / setsid / flock / runuser, numactl, Slurm srun, strace, Yelp/dumb-init dumb-init.c, "
    "krallin/tini tini.c, tianon/gosu main.go, ncopa/su-exec su-exec.c, sudo src/parse_args.c, OpenDoas doas.c, polkit "
    "pkexec.c, systemd-run(1) / run0(1): each runs the word after its options as the program, unchanged; any other "
    "program before the launch is not read",
    "url": "https://github.com/sudo-project/sudo/blob/main/src/parse_args.c",
}
#: the programs whose reading places their command (named in the refusal of one that is not read)
_READ_NAMES = (
    "nice, taskset, numactl, srun, chrt, ionice, stdbuf, setsid, time, flock, strace, nohup, timeout, env, "
    "dumb-init, tini --, gosu, su-exec, sudo, doas, pkexec, runuser -u, systemd-run, run0, a shell's -c"
)


def _env_expanded(words: Sequence[str]) -> Problem | None:
    """The unknown of an `env` (words[0], in a shell string's words left unexpanded) whose
    options hold a word the shell expands first (iallow2): `env -u $X python ...` with X unset is `env -u python -m
    ...`, which unsets `python` and refuses `-m` (exit 125); `env -C $DIR` likewise. Its NAME=VALUE words are its
    reading's (a value's expansion is the environment's, not where the command starts)."""
    from stackcheck.assembly.env_prefix import read_env

    if not words or os.path.basename(words[0]) != "env":
        return None
    read = read_env(words[1:], {})
    end = len(words) - len(read.command) if read.stop is None else len(words)
    why = _expanded_before(words, 0, end, assignments=False)
    return None if why is None else _unplaced_problem(words, 0, why)


#: (irobust10) bash's, zsh's and ksh's brace expansion (bash manual 3.5.1: `{a,b}`, `{0..3}`), which makes one word
#: several before the program reads them: `taskset -c {0..3} python ...` is `taskset -c 0 1 2 3 python ...`, and
#: taskset runs `1` (dash does none: the word stays, so the reading is unknown either way)
def _brace_expansion(word: str) -> bool:
    """Whether `word` holds a brace list `{...,...}` or range `{A..B}` (no blank or inner brace): one pass over its
    parts (a regular expression took 6 s on a 40 KB word of commas after one `{`)."""
    for part in word.split("{")[1:]:
        inner, closed, _ = part.partition("}")
        if closed and ("," in inner or ".." in inner) and not any(c.isspace() for c in inner):
            return True
    return False


def _expanded_before(argv: Sequence[str], k: int, command: int, assignments: bool = True) -> str | None:
    """Why the command that the program at argv[k] runs from argv[command] is not placed, where a word between them
    (its options and their values, a shell string's words left unexpanded) holds an expansion the shell makes first
    (iallow2): `$NAME` empty is no word, `$NAME` with blanks several, so the program reads another command than the one
    placed here (`systemd-run --unit $NAME python ...` with NAME unset runs `-m` as its unit's ... or refuses it).
    `assignments` False: env's NAME=VALUE words are left to its reading (`env -u $X` is read here, `env A=$B` not)."""
    from stackcheck.redact import redact_argv

    for m in range(k + 1, command):
        expands = _EXPANSION.search(argv[m]) or _brace_expansion(argv[m])
        if expands and (assignments or not _ASSIGNMENT.match(argv[m])):
            shown = redact_argv(argv[: m + 1])[m][:80]
            return (f"its word `{shown}` is expanded by the shell before {os.path.basename(argv[k])[:40]} reads it (an "
                    "empty value is no word, one with blanks several, moving where its command starts), which the "
                    "gate does not do: write the value out")  # fmt: skip
    return None


def _unplaced_problem(
    argv: Sequence[str], k: int, why: str | None = None, script: bool = False, name_at: int | None = None
) -> Problem:
    """The refusal of the launch behind argv[k], a word whose command the gate does not place (iallow1): a program in
    no table (`why` None), one whose reading stops (`why`: what it does), or an interpreter or shell that runs a
    script (`script`). The words are shown as the decision's command line shows them (redact_argv), 80 characters."""
    from stackcheck.redact import redact_argv

    at = k + 1 if name_at is None else name_at
    shown = redact_argv(argv[: max(k, at) + 1])
    prog = os.path.basename(shown[k])[:80] or shown[k][:80]
    sources = [RUNNER_SOURCE, ALLOWLIST_SOURCE]
    tail = (f"gate the command as it runs there (`stackcheck gate` inside it, or the server's own command line), or "
            f"drop `{prog}`")  # fmt: skip
    if script:
        name = shown[at][:80] if at < len(shown) else ""
        return Problem(prog, "unknown", None, f"`{prog}` runs `{name}`, not the launch, with the launch's words as "
                       "its arguments: what runs is not the launch the gate judged (fail closed); " + tail,
                       sources)  # fmt: skip
    if why is not None:
        return Problem(prog, "unknown", None, f"`{prog}` stands before the launch and {why}, so what runs may not be "
                       "the launch the gate judged (fail closed); " + tail, sources)  # fmt: skip
    return Problem(prog, "unknown", None, f"`{prog}` stands before the launch and is no program the gate knows to run "
                   f"the command after it unchanged (those it reads: {_READ_NAMES}): where it runs the launch, with "
                   "which environment, user and interpreter, and how it reads the words after it are not read, so "
                   "what runs may not be the launch the gate judged (fail closed); " + tail, sources)  # fmt: skip


def _placed_word(word: str, programs: Collection[Any]) -> bool:
    """Whether `word` is a program some reader places the command of (where an unsure reading may stop)."""
    from stackcheck.launch.runners import POLICY_READERS, RUNNERS

    prog = os.path.basename(word)
    return (bool(_PYTHON.match(prog)) or prog in programs or prog in RUNNERS or prog in POLICY_READERS
            or prog in ("env", "nohup", "timeout", "flock") or prog in _C_RUNNERS)  # fmt: skip


def _string_reaches(argv: Sequence[str], k: int, target: int) -> bool:
    """Whether the shell / su / runuser at argv[k] runs the command string find_launch found at argv[target]. A shell
    takes options only before its -c cluster (_shell_string_at); su and runuser read theirs by getopt_long, which
    permutes, so a -c cluster anywhere after them is theirs, and so are their other spellings of -c at the target
    (_su_command: `--command=STRING`, `-cSTRING`, `--command STRING`, whose option word find_launch names). Only the
    words next to the target are looked at (64 at most): the walk stays linear."""
    if os.path.basename(argv[k]) in _SU:
        if _su_command(argv, target) is not None:
            return True
        m = target - 1
        while m > k and m >= target - 64 and argv[m][:1] in ("-", "+"):
            if _shell_c(argv[m]) and _shell_string_at(argv, m) == target:
                return True
            m -= 1
        return False
    m = k + 1
    while m < target and argv[m][:1] in ("-", "+") and argv[m] not in ("-", "--"):
        if _shell_c(argv[m]):
            return _shell_string_at(argv, m) == target
        m += 2 if argv[m][-1:] in ("o", "O") or argv[m] in ("--rcfile", "--init-file") else 1
    return False


def _srun_chdir(argv: Sequence[str], at: int, env: Mapping[str, str]) -> bool:
    """(irev78) Whether the srun at argv[at] runs its task in another directory: -D / --chdir among its options
    (srun(1): "Have the remote processes do a chdir to path before beginning execution"; a long option by any prefix
    that may name it, a short one anywhere in a cluster before a letter that takes a value: fail closed), or
    SLURM_WORKING_DIR in the environment it starts with (srun(1)'s input variables: "Same as -D, --chdir", as
    recalled, not re-read: inferred). The gate judged the launch from its own directory: a checkout's ./sglang there
    (the first sys.path entry of `python -m`), a relative --model-path, were not the server's."""
    from stackcheck.launch.runners import RUNNERS, read_runner, srun_long

    if _env_option(env, "SLURM_WORKING_DIR")[0]:  # (its heterogeneous job's group twins too: irev80)
        return True
    end = read_runner(argv, at).command
    values = RUNNERS["srun"].short_value
    for word in argv[at + 1 : len(argv) if end is None else end]:
        if word == "--":
            break
        if word.startswith("--"):
            if "chdir" in srun_long(word):
                return True
            continue
        if word.startswith("-"):
            for letter in word[1:]:
                if letter == "D":
                    return True
                if letter in values:
                    break
    return False


def unplaced_before(
    argv: Sequence[str],
    target: int,
    env: Mapping[str, str],
    mapping: Mapping[str, Any],
    notes: list[Problem] | None = None,
    unexpanded: bool = False,
) -> Problem | None:
    """The walk from argv[0] to argv[target] (iallow1): each program's reader places its command, and the walk steps
    there; the first word no reader places (a program in no table, a reading that stops or is unsure, a script run by
    an interpreter or shell, a reading that lands past the launch) is an unknown problem naming it. A program already
    refused elsewhere (elsewhere.wrapper_at: ssh, docker, uv, torchrun, perf, ...; a root change; a flock that
    refuses its words; an assignment where a runner runs it) ends the walk with no problem of its own. Linear: each
    reader reads only its own words. `notes` gets what a placed program does to the server that is no refusal
    (iallow2: coreutils timeout ends it after its DURATION). `unexpanded`: the words are a shell string's, left
    unexpanded (iallow2): a word the shell expands among a placed program's options (`systemd-run --unit $NAME`,
    `nice -n $N`, `timeout $T`) is unknown, since an empty value or one with blanks moves where its command starts."""
    from stackcheck.assembly.env_prefix import read_env
    from stackcheck.launch.elsewhere import _MPI, command_at, wrapper_at
    from stackcheck.launch.runners import POLICY_READERS, RUNNERS, read_flock, read_policy, read_runner

    programs = {e.get("program") for e in _entries(mapping)}
    k, before, placer = 0, None, None
    while k < target:
        word = argv[k]
        prog = os.path.basename(word)
        placer_before, placer = placer if placer is not None else k, k
        literal = _program_word(word, unexpanded) if not _ASSIGNMENT.match(word) else None
        if literal is not None:
            return _unplaced_problem(argv, k, literal)
        if _ASSIGNMENT.match(word):
            if before is None or before in RUNNERS or before in ("nohup", "timeout", "perf") or before in _MPI:
                return None  # (the command's first word, or a runner's: _exec_assignment / runner_problems)
            return _unplaced_problem(argv, placer_before, f"runs the word {word.split('=', 1)[0]}=... as a "
                                     "program (no such program is found)")  # fmt: skip
        if _PYTHON.match(prog) or prog in programs:
            return _unplaced_problem(argv, k, script=True)
        if wrapper_at(argv, k, env) is not None or _root_change(argv, k, env) is not None:
            return None  # (refused as elsewhere / opaque / another root)
        if prog == "env":
            read = read_env(argv[k + 1 :], env)
            rest = len(read.command)
            if read.stop is not None or list(argv[len(argv) - rest :]) != list(read.command):
                why = read.stop or "its -S string is split into words the walk does not follow"
                return _unplaced_problem(argv, k, f"its reading stops ({why})")
            k, before = len(argv) - rest, prog
            continue
        if prog == "timeout":
            from stackcheck.launch.runners import read_timeout

            timed = read_timeout(argv, k)
            if timed.command is None:
                return _unplaced_problem(argv, k, timed.unsure or "runs no command")
            expanded = _expanded_before(argv, k, timed.command) if unexpanded else None
            if expanded is not None:
                return _unplaced_problem(argv, k, expanded)
            if notes is not None and timed.seconds > 0:
                notes.append(_timeout_note(timed))
            k, before = timed.command, prog
            continue
        if prog == "nohup":
            end = k + 2 if k + 2 < len(argv) and argv[k + 1] == "--" else k + 1  # (its only options: --help, --version)
            if end <= k or argv[end][:2] == "--":
                return _unplaced_problem(argv, k, "runs no command")
            k, before = end, prog
            continue
        if prog == "flock":
            got = read_flock(argv, k)
            if got.kind in ("none", "refused"):
                return None  # (_flock_problem: blocked)
            # (irobust10) its lock file and options, expanded by the shell first: `flock $L python ...` with L unset
            # locks a file named python and runs `-m` (flock: failed to execute -m)
            expanded = _expanded_before(argv, k, got.at) if unexpanded and got.at else None
            if expanded is not None:
                return _unplaced_problem(argv, k, expanded)
            if got.kind == "string":
                return None if got.at == target else _unplaced_problem(argv, k, "runs another shell string")
            if got.at is None:
                return _unplaced_problem(argv, k, "runs no command")
            k, before = got.at, prog
            continue
        if prog in _MPI:
            at = command_at(argv, k)
            if at is None:
                return _unplaced_problem(argv, k, "runs no command the gate places")
            k, before = at, prog
            continue
        if prog in RUNNERS or prog in POLICY_READERS:
            if prog in _SU and _string_reaches(argv, k, target):
                return None
            if prog == "srun" and _srun_chdir(argv, k, env):
                return _unplaced_problem(argv, k, "runs the command in another directory (-D / --chdir, or "
                                         "SLURM_WORKING_DIR), which the gate does not follow")  # fmt: skip
            reading = read_runner(argv, k) if prog in RUNNERS else read_policy(argv, k)
            if prog == "systemd-run" and reading.command is not None:
                dollar = next((w for w in argv[reading.command :] if "$" in w), None)
                if dollar is not None:
                    why = (
                        "replaces $NAME and ${NAME} in the words after it with its environment's values before "
                        "it runs them (systemd 254+: --expand-environment, on by default), which the gate does not do"
                    )
                    return _unplaced_problem(argv, k, why)
            expanded = _expanded_before(argv, k, reading.command) if unexpanded and reading.command else None
            if expanded is not None:
                return _unplaced_problem(argv, k, expanded)
            if reading.command is not None:
                k, before = reading.command, prog
                continue
            if reading.unsure is None:
                return _unplaced_problem(argv, k, "runs no command (its options say so)")
            if prog in RUNNERS and not RUNNERS[prog].every_long_known and reading.unsure.startswith("whether"):
                m = k + 1  # (srun / strace: an option not listed, whose value may be the next word)
                while m < target and (argv[m].startswith("-") or not _placed_word(argv[m], programs)):
                    if not argv[m].startswith("-"):
                        from stackcheck.redact import redact_argv

                        bare = redact_argv(argv[: m + 1])[m][:80]
                        return _unplaced_problem(argv, k, f"{reading.unsure}, so whether `{bare}` is that option's "
                                                 f"value or the program {prog} runs is not read")  # fmt: skip
                    m += 1
                k, before = m, prog
                continue
            return _unplaced_problem(argv, k, reading.unsure)
        if prog in _C_RUNNERS:
            if _string_reaches(argv, k, target):
                return None
            m = k + 1
            while m < target and argv[m][:1] in ("-", "+") and argv[m] not in ("-", "--"):
                m += 2 if argv[m][-1:] in ("o", "O") or argv[m] in ("--rcfile", "--init-file") else 1
            if prog in _SHELLS:
                return _unplaced_problem(argv, k, script=True, name_at=m)
            return _unplaced_problem(argv, k, "runs the target user's shell, not the launch's words")
        return _unplaced_problem(argv, k)
    if k > target and placer is not None:
        why = "is read to run a word after the launch, the launch's own words taken as its options or arguments"
        return _unplaced_problem(argv, placer, why)
    return None


#: the manuals of the programs launch/elsewhere.py reads (its docstring names each)
ELSEWHERE_SOURCES = [
    {"title": "ssh(1): the command is executed on the remote host", "url": "https://man.openbsd.org/ssh.1"},
    {"title": "docker container exec: run a command in a running container",
     "url": "https://docs.docker.com/reference/cli/docker/container/exec/"},
    {"title": "nsenter(1) (util-linux): run a program in the namespaces of other processes",
     "url": "https://man7.org/linux/man-pages/man1/nsenter.1.html"},
    {"title": "Open MPI mpirun(1): -np, -H / --host, --hostfile, -x",
     "url": "https://docs.open-mpi.org/en/v5.0.x/man-openmpi/man1/mpirun.1.html"},
    {"title": "torchrun (torch/distributed/run.py): the script run by the worker processes with sys.executable",
     "url": "https://docs.pytorch.org/docs/stable/elastic/run.html"},
    {"title": "conda run / uv run: run a command in an environment",
     "url": "https://docs.astral.sh/uv/reference/cli/#uv-run"},
]  # fmt: skip


def wrapped_problem(wrapped: Any, target_facts: bool = False, cleared: bool = False) -> Problem:
    """The refusal of a launch behind `wrapped` (elsewhere.Wrapped). One that runs elsewhere is unknown on this box's
    facts; with `target_facts` (gate --facts: the facts of the box the server runs on, by the user's word) and its
    whole environment given after it (`cleared`: `ssh HOST env -i NAME=VALUE ... python ...`; else it starts with that
    box's environment, not the gate's) the launch is judged on them and this is a note naming the program. One run
    its own way is unknown either way."""
    from stackcheck.launch.elsewhere import where_to_gate

    name = wrapped.program
    if wrapped.kind == "elsewhere" and target_facts and not cleared:
        return Problem(name, "unknown", None, f"`{name}` stands before the launch: {wrapped.why}, where the server "
                       "starts with that box's environment, not the one the gate reads (fail closed); give it in full "
                       f"after {name} (`{name} ... env -i NAME=VALUE ... python -m sglang.launch_server ...`) or run "
                       f"`stackcheck gate` where the server runs, {where_to_gate(wrapped)}",
                       ELSEWHERE_SOURCES)  # fmt: skip
    if wrapped.kind == "elsewhere" and target_facts:
        return Problem(name, "note", None, f"`{name}` stands before the launch: {wrapped.why}; the launch after it was "
                       "judged on the facts given (--facts), which must be those of the machine or container it runs "
                       "in", ELSEWHERE_SOURCES)  # fmt: skip
    if wrapped.kind == "elsewhere":
        return Problem(name, "unknown", None, f"`{name}` stands before the launch: {wrapped.why}, so the facts of this "
                       "box do not decide it (fail closed); run `stackcheck gate` where the server runs, "
                       f"{where_to_gate(wrapped)}, or give that box's facts with --facts",
                       ELSEWHERE_SOURCES)  # fmt: skip
    return Problem(name, "unknown", None, f"`{name}` stands before the launch: {wrapped.why}, so what runs is not the "
                   "command the gate read (fail closed); gate the command as it runs there (`stackcheck gate` inside "
                   "that environment, or the server's own command line)", ELSEWHERE_SOURCES)  # fmt: skip


def _policy_seen(trace: dict[str, Any] | None, policy: str | None) -> None:
    """Note in `trace` that the launch runs behind `policy` (ENV_POLICY), whose environment is not known."""
    if trace is not None and policy is not None:
        trace.setdefault("env_policy", []).append(policy)


def env_policy_problem(program: str) -> Problem:
    """The refusal of a launch behind `program` (ENV_POLICY): the environment the server starts with is not known."""
    return Problem("env", "unknown", None, f"`{program}` stands before the launch: {ENV_POLICY[program]}, a policy "
                   "the gate does not read, so the environment the server starts with (its LD_LIBRARY_PATH, PATH, "
                   f"CUDA and SGLang variables) is not known (fail closed); give it in full after {program} "
                   f"(`{program} env -i NAME=VALUE ... python -m sglang.launch_server ...`) or gate the command as it "
                   "runs there",
                   ENV_POLICY_SOURCES)  # fmt: skip


_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
#: the programs whose -c STRING is a shell's command string: the shells, and su / runuser, which hand it to the target
#: user's shell (`su svc -c "python -m ..."`: irobust5, read as a wrapper before, its launch's flags never read)
_C_RUNNERS = _SHELLS | {"su", "runuser"}
# (irobust6: util-linux flock(1) `flock FILE -c COMMAND` / `--command COMMAND` runs COMMAND with `$SHELL -c` (flock.c:
# the word after FILE is compared with "-c" and "--command"): the string was passed over, its launch read as a
# wrapper whose flags and environment were never judged. imend6: read by flock_sites, from runners.read_flock, not as
# a shell's -c: `flock -c STRING FILE`, `flock FILE -lc STRING`, `flock FILE -c -- STRING` run no shell string, and
# the shell-string reader _shell_cut had not read `--command`)


def flock_sites(argv: Sequence[str]) -> tuple[frozenset[int], int | None]:
    """The flocks of `argv` as util-linux flock reads its words (runners.read_flock): (the indices of the command
    strings they run through the shell, the index of the first flock after which no command of `argv` runs (it runs
    nothing, or refuses its words), None where there is none). Each word named flock is read (as find_launch reads
    each word that may be a program), each once."""
    from stackcheck.launch.runners import read_flock

    strings: set[int] = set()
    if "flock" not in "\0".join(argv):  # (irobust8: as _srun_nested)
        return frozenset(), None
    for k, word in enumerate(argv):
        if os.path.basename(word) != "flock" or k in strings or any(c.isspace() for c in word):
            continue  # (a command string ending in `/x/flock` is no flock: its shell reads it)
        got = read_flock(argv, k)
        if got.kind in ("none", "refused"):
            return frozenset(strings), k
        if got.kind == "string" and got.at is not None:
            strings.add(got.at)
    return frozenset(strings), None


_SU = frozenset({"su", "runuser"})


def _su_command(argv: Sequence[str], i: int) -> str | None:
    """The command string su / runuser take from argv[i] in a spelling other than a `-c` word of its own (irobust6:
    `su svc --command="python -m ..."` was read as a wrapper, its launch's flags and environment never read): util-linux
    su-common.c reads options by getopt_long ("c:fg:G:lmpPs:u:hVw:"), so `--command STRING`, `--command=STRING`, a
    unique prefix of it (`--comm=STRING`), `--session-command` (the same string, run without a new session) and the
    string attached to -c in a cluster (`-cSTRING`, `-lcSTRING`). None for any other word."""
    word = argv[i]
    after = argv[i + 1] if i + 1 < len(argv) else None
    if word.startswith("--"):
        name, eq, value = word[2:].partition("=")
        if name and ("command".startswith(name) or (len(name) >= 2 and "session-command".startswith(name))):
            return value if eq else after
        return None
    if word.startswith("-") and len(word) > 2:
        for j in range(1, len(word)):
            if word[j] == "c":
                return word[j + 1 :] or after
            if word[j] not in "flmpP":  # (su's options without a value; another letter ends the reading)
                return None
    return None


def _shell_c(arg: str) -> bool:
    """Whether `arg` is a shell's short-option cluster holding -c (`-c`, `-lc`, `-ec`, `-xec`), not a long option."""
    opts = arg[1:]
    return arg[:1] == "-" and "c" in opts and opts.isascii() and opts.isalpha()


def _shell_string_at(argv: Sequence[str], i: int) -> int | None:
    """Where the command string of the shell whose -c cluster is argv[i] stands: the first word after the cluster that
    is no option (POSIX sh: `sh -c [-abCefhimnuvx] [-o option]... [--] command_string`; bash's `-O shopt` and `+o` /
    `+O` alike; `--` or `-` ends the options), None where there is none. An option cluster ending in o or O takes the
    next word as its argument (`-o pipefail`, `-eo pipefail`)."""
    j = i + 1
    takes_arg = argv[i][-1:] in ("o", "O")
    if takes_arg:
        j += 1
    while j < len(argv):
        word = argv[j]
        if word in ("--", "-"):
            j += 1
            break
        if len(word) > 1 and word[0] in "-+" and word[1:].isascii() and word[1:].isalpha():
            j += 2 if word[-1] in ("o", "O") else 1
            continue
        break
    return j if j < len(argv) else None


#: a shell's operators (POSIX sh grammar, XCU 2.9/2.10, with bash's `|&`, `&>`, `&>>`, `<<<`), longest first: the
#: control operators end a simple command, the redirection operators take the next word as their target
_CONTROL_OPS = ("&&", "||", ";;", "|&", ";", "&", "|", "(", ")")
_REDIRECT_OPS = ("&>>", "<<-", "<<<", "&>", ">>", "<<", ">&", "<&", "<>", ">|", "<", ">")
_OP_CHARS = frozenset("&|;()<>")
#: what ends a run of plain characters in a word: blanks, newlines, quotes, escapes, expansions and operators
_WORD_ENDS = frozenset(" \t\n'\"\\$`#&|;()<>")
#: reserved words and builtins that may stand before a command without being it (`if`, `then`, `{`, `exec`)
_SHELL_PREFIX = frozenset({"!", "{", "if", "then", "else", "elif", "do", "while", "until", "time", "exec"})


def shell_commands(text: str) -> list[list[str]] | None:
    """A shell's command string as its simple commands, each the words it runs, quotes removed (the words left
    unexpanded: `$X` stays `$X`), its redirections with their targets left out (`2>&1`, `> log`, `8>log`); the
    control operators (`&&`, `||`, `;`, `|`, `&`, newlines, parentheses) end a command, spaced or not; a comment
    ends the line; a here-document's body is no command. None where the string is not complete (a quote left
    open): the shell refuses it, the gate reads no command from it."""
    commands: list[list[str]] = []
    words: list[str] = []
    word: list[str] = []
    raw: list[str] = []  # the word as written, to tell `8>` (a redirection's fd) from `"8">`
    target = False  # the next word is a redirection's target
    heredoc: list[str] = []  # here-document delimiters whose bodies start at the next newline
    i, n = 0, len(text)

    def end_word() -> None:
        nonlocal target
        if raw:
            if target:
                target = False
            else:
                words.append("".join(word))
        word.clear()
        raw.clear()

    def end_command() -> None:
        end_word()
        if words:
            commands.append(list(words))
        words.clear()

    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            if text[i + 1] != "\n":  # (a backslash-newline joins lines)
                word.append(text[i + 1])
                raw.append(text[i : i + 2])
            i += 2
            continue
        if c in " \t":
            end_word()
            i += 1
            continue
        if c == "\n":
            end_command()
            i += 1
            for delim in heredoc:  # the here-document bodies: lines up to each delimiter
                while i < n:
                    j = text.find("\n", i)
                    line = text[i : n if j < 0 else j]
                    i = n if j < 0 else j + 1
                    if line.strip("\t") == delim:
                        break
            heredoc.clear()
            continue
        if c == "#" and not raw:
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "'":
            j = text.find("'", i + 1)
            if j < 0:
                return None
            word.append(text[i + 1 : j])
            raw.append(text[i : j + 1])
            i = j + 1
            continue
        if c == '"':
            j = i + 1
            part: list[str] = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n and text[j + 1] in '$`"\\\n':
                    if text[j + 1] != "\n":
                        part.append(text[j + 1])
                    j += 2
                    continue
                if text[j] == "$" and text[j + 1 : j + 2] in ("(", "{"):
                    k = _balanced(text, j + 1)
                    if k < 0:
                        return None
                    part.append(text[j:k])
                    j = k
                    continue
                if text[j] == "`":
                    k = text.find("`", j + 1)
                    if k < 0:
                        return None
                    part.append(text[j : k + 1])
                    j = k + 1
                    continue
                part.append(text[j])
                j += 1
            if j >= n:
                return None
            word.extend(part)
            raw.append(text[i : j + 1])
            i = j + 1
            continue
        if c == "$" and text[i + 1 : i + 2] in ("(", "{"):
            k = _balanced(text, i + 1)
            if k < 0:
                return None
            word.append(text[i:k])
            raw.append(text[i:k])
            i = k
            continue
        if c == "`":
            k = text.find("`", i + 1)
            if k < 0:
                return None
            word.append(text[i : k + 1])
            raw.append(text[i : k + 1])
            i = k + 1
            continue
        if c not in _OP_CHARS:
            j = i + 1
            while j < n and text[j] not in _WORD_ENDS:  # (a run of plain characters at once)
                j += 1
            word.append(text[i:j])
            raw.append(text[i:j])
            i = j
            continue
        redirect = next((op for op in _REDIRECT_OPS if text.startswith(op, i)), None)
        control = next((op for op in _CONTROL_OPS if text.startswith(op, i)), None)
        if redirect is not None and (control is None or len(redirect) > len(control)):
            if raw and "".join(raw).isdigit():  # `2>&1`, `8>log`: the digits name the redirected fd
                word.clear()
                raw.clear()
            end_word()
            i += len(redirect)
            if redirect in (">&", "<&"):  # `2>&1`, `>&2`: the fd or `-` is the target
                while i < n and text[i] in " \t":
                    i += 1
            target = True
            if redirect in ("<<", "<<-"):
                j = i
                while j < n and text[j] in " \t":
                    j += 1
                k = j
                while k < n and text[k] not in " \t\n;&|<>()":
                    k += 1
                heredoc.append(text[j:k].strip("'\"\\"))
            continue
        if control is not None:
            end_command()
            i += len(control)
            continue
        word.append(c)  # (`&` alone is a control operator: not reached)
        raw.append(c)
        i += 1
    if target and not raw:
        return None  # (a redirection without its target: a syntax error)
    end_command()
    return commands


def _balanced(text: str, start: int) -> int:
    """The index after the bracket closing the one at `start` (`$(...)`, `${...}`), nesting counted; -1 if none."""
    pair = {"(": ")", "{": "}"}[text[start]]
    depth = 0
    for j in range(start, len(text)):
        if text[j] == text[start]:
            depth += 1
        elif text[j] == pair:
            depth -= 1
            if depth == 0:
                return j + 1
    return -1


class CwdUnknown:
    """A working directory the gate cannot resolve from a shell string (`cd $DIR`, `cd -`, a relative `cd` after
    one of those): why. `shell` False: one the gate is not told where the command starts (gate --facts without
    --cwd: the box the facts describe), `why` then a whole sentence."""

    def __init__(self, why: str, shell: bool = True) -> None:
        self.why = why
        self.shell = shell

    def words(self) -> str:
        """Why, said after "which the gate cannot tell: "."""
        return f"the command's shell string changes it with {self.why}" if self.shell else self.why


#: where the command starts under gate --facts without --cwd: another box's directory, not this process's
FACTS_CWD = (
    "the facts come from another box (--facts), whose directory the server starts in the gate is not told "
    "(gate --cwd names it)"
)


def entered(
    cwd: str | CwdUnknown, dirs: Sequence[str], seen: list[tuple[str, str | CwdUnknown]] | None = None
) -> str | CwdUnknown:
    """`cwd` after chdir to each of `dirs` in turn (`env -C DIR`, GNU env's chdir: a relative DIR from the directory
    before it): an absolute DIR is known whatever `cwd` is, a relative one after a directory not known is not.
    `seen`: each DIR with the directory it names, appended in order (chdir_problems)."""
    for directory in dirs:
        if directory.startswith("/"):
            cwd = directory
        elif isinstance(cwd, CwdUnknown):
            cwd = CwdUnknown(f"`env -C {directory}`, relative to a directory not known ({cwd.why})")
        else:
            cwd = posixpath.join(cwd, directory)
        if seen is not None:
            seen.append((directory, cwd))
    return cwd


def _cd(words: Sequence[str], cwd: str | CwdUnknown, env: Mapping[str, str]) -> str | CwdUnknown:
    """The working directory after the shell's `cd` / `pushd` / `popd` command `words` run in `cwd` (POSIX cd:
    options -L / -P, `--`; no operand: $HOME; `-`: $OLDPWD, not followed; a word with an expansion is not expanded
    here). The directory is not checked to exist (a failing cd stops an `&&` list: then there is no launch)."""
    if words[0] == "popd":
        return CwdUnknown("`popd` (the directory stack is not followed)")
    operands = list(words[1:])
    while operands and operands[0] in ("-L", "-P", "-e", "-LP", "-PL"):
        operands.pop(0)
    if operands and operands[0] == "--":
        operands.pop(0)
    target = operands[0] if operands else env.get("HOME")
    if target is None:
        return CwdUnknown("`cd` with no directory and no HOME")
    if target == "-":
        return CwdUnknown("`cd -` (the previous directory is not followed)")
    if target.startswith("~"):
        home = env.get("HOME")
        if home is None or not (target == "~" or target.startswith("~/")):
            return CwdUnknown(f"`cd {target}` (a home directory the gate does not resolve)")
        target = home + target[1:]
    if any(c in target for c in "$`*?["):
        return CwdUnknown(f"`cd {target}` (a shell expansion the gate does not evaluate)")
    if target.startswith("/"):
        return posixpath.normpath(target)
    if isinstance(cwd, CwdUnknown):
        return CwdUnknown(f"`cd {target}`, relative to a directory not known ({cwd.why})")
    return posixpath.normpath(posixpath.join(cwd, target))


def launch_cwd(
    argv: Sequence[str],
    mapping: Mapping[str, Any],
    env: Mapping[str, str],
    start: str | CwdUnknown,
    seen: list[tuple[str, str | CwdUnknown]] | None = None,
) -> str | CwdUnknown:
    """The directory the launch runs in where the command starts in `start` (CwdUnknown: not known, gate --facts
    without --cwd): the directory a shell's command string `cd`s to before the launch (`bash -c "cd /models && python
    -m sglang.launch_server --model-path ./m"`), else `start`; CwdUnknown where a `cd` before it cannot be resolved,
    or a relative one (or `env -C`) starts from a directory not known. `seen`: each `env -C DIR` on the way with the
    directory it names (entered)."""
    dirs: list[str] = []
    argv, prefixed = split_env_prefix(argv, env, dirs)
    start = entered(start, dirs, seen)  # `env -C DIR` (irobust)
    trace: dict[str, Any] = {"cwd": start, "entered": seen}
    find_launch(argv, mapping, prefixed, trace)
    got = trace["cwd"]
    return got if isinstance(got, (str, CwdUnknown)) else start


def launch_directory_problems(
    command: Sequence[str], mapping: Mapping[str, Any], env: Mapping[str, str], start: str, view: Any = None
) -> list[Problem]:
    """(irev82) A launch in a shell's command string (`bash -c "cd /srv && python -m sglang.launch_server ..."`, or
    `bash -c "python -m ..."` alone) is read by find_launch, which follows its `cd` (launch_cwd); the python and
    packages probes are handed the directory and first sys.path entry of the target reader (assembly/target.py
    command_directory, command_first_path), which stops at the shell: `start`, and no first entry. So a ./sglang (or
    torch, flashinfer, ...: packages.SHADOW_IMPORTS) in the directory the server's `python -m` / `-c` puts first on
    sys.path, and a relative PYTHONPATH / PYTHONHOME / PYTHONUSERBASE entry the server reads from its own directory,
    were not the ones judged: the gate judged the installed sglang where the server imports the checkout (irev81's
    probe in the launch's directory and imend12's shell strings met here; a false pass where they differ). Unknown
    there (fail closed), with the directory named; nothing for a launch outside a shell string (the two readers
    agree on every runner form: irev82's differential of 74,088 lines) or where nothing there differs. Likewise a
    Python path variable (target.PATH_VARS) the string's own words set (`export PYTHONPATH=/x && python ...`): the
    probes read sys.path without it (irev70 made the loader's and the JIT's variables unknown there, not these)."""
    from stackcheck.assembly.target import (
        PATH_VARS,
        PY_NAME,
        _python_options,
        command_directory,
        command_environment,
        command_first_path,
    )
    from stackcheck.probes.packages import SHADOW_IMPORTS
    from stackcheck.probes.python_env import _relative_entry

    dirs: list[str] = []
    argv, prefixed = split_env_prefix(command, env, dirs)
    trace: dict[str, Any] = {"cwd": entered(start, dirs, None), "entered": None}
    entry, _, launch_env = find_launch(argv, mapping, prefixed, trace)
    if entry is None or not trace.get("shell_string"):
        return []
    where = trace.get("cwd")
    probed = command_directory(command, env, start)
    why: list[str] = []
    probed_env = command_environment(command, env)
    moved = [v for v in PATH_VARS if launch_env.get(v) != probed_env.get(v)]
    if (
        moved
    ):  # (`bash -c "export PYTHONPATH=/x && python -m ..."`: irev70's apply_launch_env_unread reads the loader's)
        why.append(f"its own words set {', '.join(moved)}, which Python reads its sys.path from")
    if not isinstance(where, str):
        if _relative_entry(launch_env):
            why.append("its directory is not known and a path variable of its environment has a relative entry")
    else:
        if where != probed and _relative_entry(launch_env):
            why.append(f"a relative entry of its PYTHONPATH / PYTHONHOME / PYTHONUSERBASE is read from {where}")
        words = list((trace.get("levels") or [[]])[-1])
        at = next((i for i, w in enumerate(words) if PY_NAME.match(os.path.basename(w))), None)
        letters, mode, _ = _python_options(words[at + 1 :]) if at is not None else ("", None, "")
        safe = bool(set(letters) & set("IP")) or (launch_env.get("PYTHONSAFEPATH") and not set(letters) & set("IE"))
        if mode in ("cwd", "stdin") and not safe and command_first_path(command, env, start, view) != where:
            from stackcheck.readers.fsview import HostView, is_file

            fs = view if view is not None else HostView()
            found = sorted(
                {m for m in SHADOW_IMPORTS.values()
                 if is_file(fs, os.path.join(where, m, "__init__.py")) or is_file(fs, os.path.join(where, m + ".py"))}
            )  # fmt: skip
            if found:
                why.append(f"its `python -{'m' if mode == 'cwd' else ''}` puts {where} first on sys.path, which holds "
                           f"{', '.join(found)}: imported instead of the installed packages judged")  # fmt: skip
    if not why:
        return []
    return [
        Problem("python", "unknown", None,
                "the launch runs inside a shell's command string, where " + "; ".join(why) + ", and the python and "
                "packages probes read the interpreter from the directory the command starts in "
                f"({probed or 'not known'}): what the server imports is not what was judged (fail closed); run the "
                "launch as `env -C DIR python -m sglang.launch_server ...` or gate it from that directory (--cwd)")
    ]  # fmt: skip


def interpreter_mismatch_problems(
    command: Sequence[str], mapping: Mapping[str, Any], env: Mapping[str, str], start: str, facts: Any, view: Any = None
) -> list[Problem]:
    """(irev78) The launch's own interpreter against the one the live gate audited on this host (facts.python): the
    target reader (assembly/target.py) names the interpreter of the command's first program after its wrappers and
    the placed programs, and falls back to the active VIRTUAL_ENV / CONDA_PREFIX or stackcheck's own environment
    where it names none; find_launch reads further (a shell's command string, su / flock -c, the `export PATH=...` and
    `cd` before the launch in it). Where the interpreter the launch runs (its word resolved on the launch's PATH from
    its directory, or a console script's shebang) is in another environment than the one audited, the packages judged
    are not the server's: unknown. `start`: the directory the command starts in. An interpreter named by --python /
    --env / STACKCHECK_PYTHON is the user's word: not compared; nor one not found (as before). `view`: this host's
    (the gate cache's recording view, so a kept decision is read again where these files change)."""
    python = facts.get("python") if isinstance(facts, Mapping) else None
    if not isinstance(python, Mapping) or python.get("chosen_by") in ("--python", "--env", "STACKCHECK_PYTHON"):
        return []
    audited = python.get("executable")
    if isinstance(audited, str):  # (irev81: the facts name the home directory "~": every venv under it differed)
        from stackcheck.paths import unscrub_home

        audited = unscrub_home(audited) or audited
    from stackcheck.assembly.target import PY_NAME, _same_prefix, _venv_cfg_dir, prefix_of, script_interpreter
    from stackcheck.readers.fsview import HostView

    view = view if view is not None else HostView()
    found = _launch_program(command, mapping, env, start, view)
    if found is None:
        return []
    word, path, launch_env, cwd = found
    runs = path if PY_NAME.match(posixpath.basename(word)) else script_interpreter(view, path, launch_env, cwd)
    if runs is None:
        return []
    if isinstance(audited, str) and audited and _same_prefix(prefix_of(view, runs), prefix_of(view, audited)):
        if _venv_cfg_dir(view, runs) is not None or _same_file(view, runs, audited):
            return []
        # (irobust10) one prefix that is no venv holds several interpreters (/usr/bin/python3.10 and python3.12),
        # each with its own lib/pythonX.Y/site-packages: the same prefix is not the same packages there
    from stackcheck.redact import redact_value

    shown, judged = redact_value(runs)[:200], redact_value(str(audited))[:200]
    return [Problem("python", "unknown", None, f"the launch runs {word!r} as {shown}, in another environment than the "
                    f"one audited ({judged}, chosen by {python.get('chosen_by')}): the packages judged are not the "
                    f"server's (fail closed); gate it with --python {shown}, or run the gate from that environment",
                    observed=judged, required=shown)]  # fmt: skip


def _launch_program(
    command: Sequence[str], mapping: Mapping[str, Any], env: Mapping[str, str], start: str, view: Any
) -> tuple[str, str, Mapping[str, str], str | None] | None:
    """(the word, the file it runs, the launch's environment, its directory) of the program that runs the server's
    entry point (`python3` of `python3 -m sglang.launch_server`, a console script), as find_launch reads the command
    and the launch's PATH finds it; None where it is not read."""
    from stackcheck.readers.fsview import which

    dirs: list[str] = []
    argv, prefixed = split_env_prefix(command, env, dirs)
    trace: dict[str, Any] = {"cwd": entered(start, dirs, None), "entered": None}
    entry, _, launch_env = find_launch(argv, mapping, prefixed, trace)
    levels = trace.get("levels")
    if entry is None or not isinstance(levels, list) or not levels:
        return None
    words = levels[-1]  # (the innermost command, whole: _level)
    programs = {e.get("program") for e in _entries(mapping)}
    # (irobust10: only an interpreter's or a program's word is tried, as runner_problems does: each try copies the
    # words after it, so 20,000 words before the launch took 2.4-5 s here)
    names = [os.path.basename(w) for w in words]
    tried = (k for k, name in enumerate(names) if _PYTHON.match(name) or name in programs)
    at = next((k for k in tried if _entrypoint_at(words[k:], mapping)[0] is not None), None)
    if at is None:
        return None
    word = words[at]
    if trace.get("shell_string") and "$" in word:
        # (irunner3) the shell's expansion of $NAME / ${NAME} from the launch's environment (derive says unknown
        # where one is not set there: _program_variables); any other `$` form: not read
        word = _SIMPLE_PARAMETER.sub(lambda m: launch_env.get(m[1] or m[2], "\0"), word)
        if "$" in word or "\0" in word:
            return None
    got = trace.get("cwd")
    cwd = got if isinstance(got, str) else None
    home = launch_env.get("HOME")
    if word.startswith("~/") and trace.get("shell_string") and home and home == prefixed.get("HOME"):
        # (irev81) a shell string's `~/...`: HOME's value, as _program_word reads it (imend12), where the string's
        # HOME is the command's own (one assigned or exported in the string: the cwd join below, fail closed)
        path: str | None = posixpath.join(home, word[2:])
    elif "/" in word:
        path = word if word.startswith("/") else (posixpath.join(cwd, word) if cwd else None)
    else:
        path = which(view, word, launch_env.get("PATH"), cwd)
    return None if path is None else (word, path, launch_env, cwd)


#: the lines of pyenv's shim (pyenv libexec/pyenv-rehash's prototype shim: set -e, the PYENV_DEBUG trace, program
#: from $0, PYENV_DIR from a script argument of `python`, PYENV_ROOT exported, then `exec "<pyenv>" exec "$program"
#: "$@"`) and asdf's (internal/shims/shims.go: `# asdf-plugin:` comments, then `exec [<dir>/]asdf exec "<name>"
#: "$@"`): each runs `pyenv exec` / `asdf exec`, which puts the chosen version's bin directory first on PATH and
#: execs the real interpreter; they set no variable the loader, a JIT build or FlashInfer's cubin lookup reads
_SHIM_LINES = _lazy(
    r"""^(?:set -e|\[ -n "\$PYENV_DEBUG" \] && set -x|program="\$\{0##\*/\}"|export PYENV_ROOT="[^"$`]*"|"""
    r"""if \[ "\$program" = "python" \]; then|for arg; do|case "\$arg" in|-c\* \| -- \) break ;;|\*/\* \)|"""
    r"""if \[ -f "\$arg" \]; then|export PYENV_DIR="\$\{arg%/\*\}"|break|fi|;;|esac|done)$"""
)
_SHIM_EXEC = _lazy(
    r"""^(?:exec "[^"$`]*/pyenv" exec "\$program" "\$@"|exec "\$\(command -v pyenv\)" exec "\$program" "\$@"|"""
    r"""exec (?:[^\s"$`]*/)?asdf exec "[\w.+-]+" "\$@"(?:\s+#.*)?)$"""
)
#: what in a wrapper script may set a variable the loader (LD_LIBRARY_PATH, LD_PRELOAD), a JIT build (JIT_ENV) or
#: FlashInfer's cubin lookup (CUBIN_ENV) reads: any bare word that names one (an assignment, `export`, `declare -x`,
#: `unset`, `read`, `printf -v`, an `env NAME=...` argument: every form but a `$NAME` / `${NAME...}` reading), a
#: `${NAME=...}` / `${NAME:=...}` expansion (it assigns), a FLASHINFER_* variable, or a file sourced / a module or
#: conda environment loaded (which may set any of them). Read on each line with its quotes and backslashes taken out
#: (irobust11: `export "LD_LIBRARY_PATH=/x"`, `env 'CUDA_HOME=/x' python3`, `unset LD_LIBRARY_PATH` and
#: `: "${CUDA_HOME:=/x}"` under `set -a` passed), and a `#` inside a line not taken for a comment (`X="a #b"
#: LD_PRELOAD=/x.so` passed): such a line is read whole, the stricter reading
_WRAPPER_WORDS = _lazy(
    r"""(?:^|(?<=[\s;&|(]))(source|\.|module|ml|conda|mamba|micromamba|eval|spack)(?=\s|$)"""
    r"""|(?<![\w$])(?<!\$\{)(?<!\$\{#)(?<!\$\{!)([A-Za-z_][A-Za-z0-9_]*)(?![\w])"""
    r"""|\$\{([A-Za-z_][A-Za-z0-9_]*):?="""
)
_QUOTING = str.maketrans("", "", "\"'\\")


def _wrapper_sets(text: str, read: Collection[str]) -> list[str]:
    """The variables of `read` (and FLASHINFER_*) a shell script may set before it execs Python (a sourced file, a
    module or conda activation, eval: named as such)."""
    got: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        for m in _WRAPPER_WORDS.finditer(line.translate(_QUOTING)):
            name = m.group(2) or m.group(3)
            if name is not None and (name in read or name.startswith("FLASHINFER_")):
                what = name
            elif m.group(1) is not None:
                what = f"`{m.group(1)} ...`"
            else:
                continue
            if what not in got:
                got.append(what)
    return got


def interpreter_script_problems(
    command: Sequence[str],
    mapping: Mapping[str, Any],
    env: Mapping[str, str],
    start: str,
    read: Collection[str],
    view: Any = None,
) -> list[Problem]:
    """(igap58) The launch's `python3` is a shell script (an environment-modules or conda activation wrapper) that
    sets a variable the loader, a JIT build or FlashInfer's cubin lookup reads (LD_LIBRARY_PATH, CUDA_HOME,
    FLASHINFER_*, ...) before it execs Python: the gate judges libraries, the JIT toolchain and the cubins with the
    launch's environment, not the one the server gets: unknown, naming the script. pyenv's and asdf's shims (they
    change PATH only, to exec the real interpreter) are recognised line by line and pass; so does a script that sets
    none of those variables and sources nothing; a compiled interpreter is not judged here. A console script's
    shebang interpreter is read the same way. `read`: the variables those readers read (the loader's,
    facts_loader_path.JIT_ENV and CUBIN_ENV: handed in, as that module imports this one). `view`: this host's."""
    from stackcheck.assembly.target import PY_NAME, SCRIPT_HEAD, script_interpreter
    from stackcheck.readers.fsview import HostView

    view = view if view is not None else HostView()
    found = _launch_program(command, mapping, env, start, view)
    if found is None:
        return []
    word, path = found[0], found[1]
    if not PY_NAME.match(posixpath.basename(word)):
        # a console script (`sglang serve`): the interpreter its shebang names, which the kernel runs as a script in
        # turn where it is one (binfmt_script's nested interpreter)
        runs = script_interpreter(view, path, found[2], found[3])
        if runs is None or not runs.startswith("/"):
            return []
        word, path = runs, runs
    try:
        head = view.read_bytes(path, SCRIPT_HEAD)
    except (OSError, ValueError):
        return []
    if not head or head.startswith(b"\x7fELF"):
        return []
    # (irobust11) a file with no `#!` line is a script too: execve fails with ENOEXEC and the shell that runs the
    # launch (bash, dash; glibc's execvp likewise) runs it with /bin/sh: its first line is read as a command then
    text = head.decode("utf-8", errors="replace")
    lines = text.splitlines()[1:] if head.startswith(b"#!") else text.splitlines()
    body = [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]
    if body and _SHIM_EXEC.match(body[-1]) and all(_SHIM_LINES.match(ln) for ln in body[:-1]):
        return []
    sets = _wrapper_sets("\n".join(lines), read)
    # (irobust12) a backslash-newline joins two lines into one before the shell reads words (`export LD_LIBRARY\` then
    # `_PATH=/x`): read joined too, the union kept (joined alone would fold a line after a comment ending in `\` into
    # that comment, where the shell does not)
    joined = "\n".join(lines).replace("\\\n", "")
    sets += [name for name in _wrapper_sets(joined, read) if name not in sets] if joined != "\n".join(lines) else []
    if not sets and len(head) < SCRIPT_HEAD:
        return []
    from stackcheck.redact import redact_value

    shown = redact_value(path)[:200]
    what = ", ".join(sets[:6]) if sets else "its text past the first 4096 bytes (not read)"
    return [Problem("python", "unknown", None, f"the launch's {word!r} is a shell script ({shown}) that sets or may "
                    f"set {what} before it runs Python: the libraries, the JIT toolchain and FlashInfer's cubins were "
                    "judged with the launch's environment, not the one the server gets (fail closed); gate the "
                    "interpreter it execs with that environment set (--python PATH, the variables before the command)",
                    observed=shown, required="an interpreter run with the launch's environment")]  # fmt: skip


def _same_file(view: Any, a: str, b: str) -> bool:
    """Whether the interpreter paths a and b are one file through the view (their links resolved)."""
    try:
        return bool(view.realpath(a) == view.realpath(b))
    except (OSError, ValueError):
        return False


def mpi_hostfile_problems(derived: Derived, view: Any, cwd: str | None, where: str) -> list[Problem]:
    """An Open MPI mpirun read as running the launch here (-np 1, no host: Derived.mpi_local) whose installation's
    default hostfile or MCA parameter files may give it another host (igap56: it was allowed whatever they held).
    `view`: the box the server starts on, None where it is not read here (`where` says why): unknown then; unknown
    too where a file gives a host other than this one or sets a host parameter, or the installation is not found."""
    if not derived.mpi_local:  # (no mpirun read as local: elsewhere.py is not imported after the facts, as before)
        return []
    from stackcheck.launch.elsewhere import MPI_HOSTFILE_SOURCES, mpi_default_hosts

    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    for word, env in derived.mpi_local:  # (each mpirun: a nested one may be another installation's, irev75)
        once = (word, tuple(sorted(env.items())))
        if once in seen:
            continue
        seen.add(once)
        prog = os.path.basename(word)
        why = where if view is None else mpi_default_hosts(view, word, env, cwd)
        if why is not None:
            return [Problem(prog, "unknown", None, f"`{prog} -np 1` stands before the launch with no host given, but "
                            "Open MPI places the rank on the hosts of its default hostfile or of a host parameter "
                            f"where its installation or the user's MCA parameter files give one: {why} (fail closed); "
                            "remove those hosts there, or gate the command where it runs",
                            MPI_HOSTFILE_SOURCES)]  # fmt: skip
    return []


def chdir_problems(
    command: Sequence[str],
    mapping: Mapping[str, Any],
    env: Mapping[str, str],
    start: str | None,
    is_dir: Callable[[str], bool] | None,
) -> list[Problem]:
    """`env -C DIR` on the way to the launch: GNU env changes to DIR before it runs the command and exits 125 where
    it cannot ("env: cannot change directory to DIR": coreutils src/env.c, chdir (newdir) failing is
    die (EXIT_CANCELED, ...)), each DIR from the directory the one before entered. `start`: where the command starts
    (None: not known); `is_dir`: whether a directory is one on the box the server starts on (this host's view, the
    gate of this host), None where that box is not read (gate --facts): each DIR is then unknown. A DIR that is no
    directory there blocks the launch (it never starts); one named from a directory not known is unknown."""
    seen: list[tuple[str, str | CwdUnknown]] = []
    launch_cwd(command, mapping, env, start if start is not None else CwdUnknown(FACTS_CWD, shell=False), seen)
    out: list[Problem] = []
    for written, where in seen:
        subject = f"env -C {written}"
        if isinstance(where, CwdUnknown) or is_dir is None:
            why = where.why if isinstance(where, CwdUnknown) else f"whether {where} is a directory there is not read"
            out.append(
                Problem(
                    subject, "unknown", None,
                    f"`env -C {written}` changes directory before the server starts, and env exits 125 where it "
                    f"cannot; where it leads is not known on the box the server starts on: {why}",
                    [ENV_SOURCE],
                )
            )  # fmt: skip
        elif not is_dir(where):
            out.append(
                Problem(
                    subject, "blocked", "crash",
                    f"`env -C {written}`: {where} is not a directory on this host, so env fails with 'cannot change "
                    "directory' and exits 125 before the server starts",
                    [ENV_SOURCE], where, "a directory env can change to",
                )
            )  # fmt: skip
    return out


def _shell_launch(
    text: str,
    mapping: Mapping[str, Any],
    env: Mapping[str, str],
    trace: dict[str, Any] | None = None,
    shell: str | None = None,
) -> tuple[str | None, list[str], dict[str, str]] | None:
    """The first simple command of a shell's command string that is an SGLang launch (find_launch), with the
    environment it sees: the shell's exports before it (`export A=1`, `declare -x A=1`, `unset A`, an assignment to
    a variable already exported) and its own `A=1` prefix and `env` prefix. None where none is a launch. `trace`:
    its "cwd" follows the `cd`s before the launch (the string's own; launch_cwd). `shell`: the program whose -c
    string it is (sh, bash, dash, ...), None where it is not known (su's target user's shell, flock's $SHELL): where
    `time` stands before an assignment (time_problem)."""
    commands = shell_commands(text)
    if not commands:
        return None
    exported = dict(env)
    shell_vars: dict[str, str] = {}
    start = trace.get("cwd") if trace is not None else None
    in_shell: str | None = None  # (irev76: the first command before the launch the shell runs in itself: _IN_SHELL)
    for words in commands:
        cmd_env = dict(exported)
        k = 0
        after_exec = False  # (irobust6: `exec A=1 python ...`: after exec an assignment is its command, exit 127)
        timed: str | None = None  # (igap54: the assignment word after `time`, which dash runs as a program)
        exec_words: list[str] = []  # (irobust10: exec's own options, `-a NAME` / `-c` / `-l`: _exec_options_problem)
        while k < len(words) and (words[k] in _SHELL_PREFIX or (_ASSIGNMENT.match(words[k]) and not after_exec)):
            if words[k] == "time":  # (bash's `time -p`; `--` ends its options in bash 5)
                while k + 1 < len(words) and words[k + 1] in ("-p", "--"):
                    k += 1
                if k + 1 < len(words) and _ASSIGNMENT.match(words[k + 1]) and timed is None:
                    timed = words[k + 1]
            if words[k] == "exec":  # `exec -a NAME`, `exec -cl`: exec's own options
                after_exec = True
                while k + 1 < len(words) and words[k + 1].startswith("-") and words[k + 1] != "--":
                    exec_words += words[k + 1 : k + 3] if words[k + 1] == "-a" else words[k + 1 : k + 2]
                    k += 2 if words[k + 1] == "-a" else 1
                if k + 1 < len(words) and words[k + 1] == "--":
                    k += 1
            elif _ASSIGNMENT.match(words[k]):
                name, _, value = words[k].partition("=")
                cmd_env[name] = value
            k += 1
        rest = words[k:]
        if not rest:  # assignments alone set shell variables: what is already exported takes the new value
            for name, value in cmd_env.items():
                shell_vars[name] = value
                if name in exported:
                    exported[name] = value
            continue
        if rest[0] in ("export", "declare", "typeset") and (rest[0] == "export" or "-x" in rest[1:]):
            for w in rest[1:]:
                if _ASSIGNMENT.match(w):
                    name, _, value = w.partition("=")
                    exported[name] = shell_vars[name] = value
                elif w in shell_vars:
                    exported[w] = shell_vars[w]
            continue
        if rest[0] == "unset":
            for w in rest[1:]:
                exported.pop(w, None)
                shell_vars.pop(w, None)
            continue
        if in_shell is None and _in_shell(rest):
            # (the command's name, and a tool's subcommand: a sourced file's path or an eval's string may hold a secret)
            sub = rest[1] if len(rest) > 1 and re.fullmatch(r"[A-Za-z][A-Za-z-]{0,30}|-[A-Za-z]{1,8}", rest[1]) else ""
            in_shell = f"{rest[0]} {sub}".strip() if rest[0] not in ("source", ".", "eval") else rest[0]
        if rest[0] in ("cd", "pushd", "popd") and trace is not None:
            trace["cwd"] = _cd(rest, trace.get("cwd", ""), {**shell_vars, **exported})
            if re.search(r"(?<!\$)\(", text):  # `(cd /x); ...`: a subshell's cd is not the launch's (no grouping kept)
                trace["cwd"] = CwdUnknown(f"`{' '.join(rest)}` in a string with a subshell (its scope is not followed)")
            continue
        stops = trace.get("env_stops") if trace is not None else None  # (derive's: an env prefix inside the string)
        dirs: list[str] = []
        env_word = _env_expanded(rest)  # (iallow2: a leading `env -u $X` in the string, if it runs the launch)
        argv, cmd_env = split_env_prefix(rest, cmd_env, dirs, stops=stops if isinstance(stops, list) else None)
        if not argv:
            continue
        before = trace.get("cwd") if trace is not None else None
        seen: list[tuple[str, str | CwdUnknown]] = []
        if trace is not None and dirs and isinstance(before, (str, CwdUnknown)):
            trace["cwd"] = entered(before, dirs, seen)  # (`env -C DIR` before this command: its own directory)
        record = trace.get("entered") if trace is not None else None
        at = len(record) if isinstance(record, list) else 0
        unexpanded = trace.get("unexpanded") if trace is not None else None
        srun_passed = trace.get("srun_passed") if trace is not None else None
        if trace is not None:
            trace["unexpanded"] = True  # (iallow2: the walk's words are this string's, unexpanded: unplaced_before)
        found = find_launch(argv, mapping, cmd_env, trace)
        if trace is not None:
            trace["unexpanded"] = unexpanded
            if found[0] is None:  # (imend13: an srun of a command before the launch's is no srun the launch runs in)
                trace["srun_passed"] = srun_passed
        if found[0] is not None:
            if env_word is not None and trace is not None:
                trace.setdefault("unplaced", []).insert(0, env_word)
            if isinstance(record, list):
                record[at:at] = seen
            if trace is not None:  # (`bash -c "nice A=1 python ..."`: the runner execs the word as argv does)
                trace["shell_string"] = True  # (its words are left unexpanded: parse_flags' `shell`)
                bad = _exec_assignment(argv)
                if bad is not None and bad[1] is None and after_exec and rest and rest[0] == bad[0]:
                    bad = (bad[0], "exec")  # (the shell's exec builtin runs the word as a program: bash, dash)
                trace.setdefault("runner_problems", []).extend(
                    ([_assignment_problem(*bad)] if bad is not None else []) + runner_problems(argv, mapping)
                )
                odd_exec = _exec_options_problem(exec_words, rest) if exec_words else None
                if odd_exec is not None:
                    trace["runner_problems"].append(odd_exec)
                late = time_problem(timed, shell) if timed is not None else None
                if late is not None:
                    trace["runner_problems"].append(late)
                if in_shell is not None:
                    trace["runner_problems"].append(_in_shell_problem(in_shell))
            return found
        if trace is not None:
            trace["cwd"] = before  # (env -C moves the command it runs, not the shell)
            # (imend7: `ssh h 'python -m sglang...'` in the string: its launch is one word ssh's remote shell reads,
            # not found here, as on the command line; the program is derive's refusal where no launch is found)
            behind = _unread_wrapper(argv, cmd_env) if mentions_sglang(argv, mapping) else None
            if behind is not None:
                trace.setdefault("unread_wrapped", []).append(behind)
    if trace is not None:
        trace["cwd"] = start  # no launch in this string: its cds are not the launch's
    return None


#: (irev76) the commands of a shell's string that the shell runs in itself and that may set its environment for the
#: commands after it (bash manual 4.1 / 4.2, dash(1)): `source` / `.` run a file's commands in the shell, `eval` a
#: string's, `set -a` (allexport) exports every later assignment; and the shell functions that environment tools
#: define to change the shell's own environment (Lmod / Environment Modules `module` / `ml`, `conda activate`,
#: `mamba` / `micromamba activate`, `spack load` / `spack env activate`, `pyenv shell`). The gate reads the string's
#: `export`, `unset`, `declare -x` and assignments; what these set is not read
_IN_SHELL_WORDS = frozenset({"source", ".", "eval", "module", "ml", "conda", "mamba", "micromamba", "spack", "pyenv"})
IN_SHELL_SOURCE = {
    "title": "bash manual 4.1 Bourne Shell Builtins (`.` / `source`: read and execute commands from a file in the "
    "current shell; `eval`) and 4.3.1 The Set Builtin (-a / allexport); Lmod `module`, conda `activate`: shell "
    "functions that change the calling shell's environment",
    "url": "https://www.gnu.org/software/bash/manual/bash.html#Bourne-Shell-Builtins",
}


BASH_STARTUP_SOURCE = {
    "title": "bash manual 6.2 Bash Startup Files (a login shell: /etc/profile, then ~/.bash_profile, ~/.bash_login or "
    "~/.profile; interactive: ~/.bashrc; non-interactive: $BASH_ENV); dash(1) Invocation (a login shell reads "
    "/etc/profile and .profile; interactive: $ENV); Debian's /etc/profile sets and exports PATH (read on this box)",
    "url": "https://www.gnu.org/software/bash/manual/bash.html#Bash-Startup-Files",
}


def _in_shell(words: Sequence[str]) -> bool:
    """Whether the simple command `words` of a shell's string may set the shell's own environment in a way the gate
    does not read (_IN_SHELL_WORDS; `set` with -a or -o allexport)."""
    if words[0] == "set":
        return any(w.startswith(("-", "+")) and "a" in w[1:] and not w.startswith("--") for w in words[1:]) or any(
            words[k] == "-o" and words[k + 1] == "allexport" for k in range(1, len(words) - 1)
        )
    return words[0] in _IN_SHELL_WORDS


def _shell_start_files(argv: Sequence[str], at: int, env: Mapping[str, str]) -> str | None:
    """What the shell whose command string is argv[at] reads before the string (irev76), None for nothing: a login
    shell (-l, --login: /etc/profile and ~/.profile, bash's ~/.bash_profile; Debian's /etc/profile sets PATH, so the
    launch's `python3` may be another interpreter; dash(1) alike), an interactive one (-i: ~/.bashrc; dash's $ENV), or
    a non-interactive bash given BASH_ENV (bash manual 6.2 Bash Startup Files). The shell is the nearest word before
    the string named as one (_SHELLS); its options are the words between."""
    k = at - 1
    while k >= 0 and os.path.basename(argv[k]) not in _SHELLS:
        k -= 1
    if k < 0:
        return None
    shell = os.path.basename(argv[k])
    skip = False
    for word in argv[k + 1 : at]:
        if skip:
            skip = False
            continue
        if word == "--login":
            return f"{shell} --login (a login shell reads /etc/profile and ~/.profile first)"
        if len(word) > 1 and word[0] in "-+" and word[1:].isascii() and word[1:].isalpha():
            if word[0] == "-" and ("l" in word[1:] or "i" in word[1:]):
                return (f"{shell} {word} (a login shell reads /etc/profile and ~/.profile, an interactive one "
                        "~/.bashrc or $ENV, first)")  # fmt: skip
            skip = word[-1] in ("o", "O")
    if shell == "bash" and env.get("BASH_ENV"):
        return "bash with BASH_ENV set (bash reads that file first)"
    return None


#: bash manual 4.1 Bourne Shell Builtins, exec: "If the -l option is supplied, the shell places a dash at the beginning
#: of the zeroth argument passed to command ... The -c option causes command to be executed with an empty environment.
#: If -a is supplied, the shell passes name as the zeroth argument to command"
EXEC_SOURCE = {
    "title": "bash manual 4.1 Bourne Shell Builtins: exec [-cl] [-a name] [command [arguments]]",
    "url": "https://www.gnu.org/software/bash/manual/bash.html#Bourne-Shell-Builtins",
}


def _exec_options_problem(options: Sequence[str], rest: Sequence[str]) -> Problem | None:
    """The unknown of a launch run by the shell's `exec` with options (irobust10; `options`: exec's words before its
    command, `rest` the words from `exec`'s command on): -c runs it with an empty environment, not the one the gate
    judges; -l or -a NAME hand an interpreter another zeroth argument, from which CPython finds its prefix (looked up on
    PATH where it has no slash: `bash -c 'exec -a sglang /srv/venv/bin/python ...'` ran with an empty sys.executable
    and the base interpreter's prefix, the venv's packages gone; `exec -l` likewise; run here with CPython 3.11), and an
    expanded NAME may be no word at all. None where exec's options change nothing the launch reads."""
    names = [options[i + 1] for i, w in enumerate(options[:-1]) if w == "-a"]
    named = {i + 1 for i, w in enumerate(options[:-1]) if w == "-a"}  # (the places of -a's NAME words)
    words = [w for i, w in enumerate(options) if i not in named and w != "-a"]
    letters = "".join(w[1:] if w[1:].isascii() and w[1:].isalpha() else "?" for w in words)
    program = rest[0] if rest else ""
    why = None
    if "c" in letters:
        why = "-c runs the command with an empty environment, not the one the gate reads"
    elif any(_EXPANSION.search(n) for n in names):
        why = "-a takes a word the shell expands (an empty value is no word, moving where its command starts)"
    elif _PYTHON.match(os.path.basename(program)) and ("l" in letters or any(n != program for n in names)):
        why = ("-l / -a NAME give the interpreter another zeroth argument, from which Python finds its prefix (a name "
               "without a slash is looked up on PATH), so its environment may not be the one judged")  # fmt: skip
    elif any(ch not in "acl" for ch in letters):
        from stackcheck.redact import redact_argv

        why = f"its options `{' '.join(redact_argv(list(options)))[:60]}` are not exec's (-a NAME, -c, -l)"
    if why is None:
        return None
    return Problem("exec", "unknown", None, f"`exec` runs the launch with options: {why}; gate the command as it "
                   "runs without them", [EXEC_SOURCE])  # fmt: skip


def _in_shell_problem(command: str, start: bool = False) -> Problem:
    """The refusal of a launch after `command` in the same shell string (_in_shell), or in a shell that reads start
    files first (`start`: _shell_start_files): its environment is not known."""
    if start:
        return Problem("env", "unknown", None, f"the launch's shell is `{command}`: what those files set in the "
                       "environment the server starts with (PATH, and so the interpreter: Debian's /etc/profile sets "
                       "PATH; LD_LIBRARY_PATH, CUDA and SGLang variables) is not read (fail closed); run it with a "
                       "plain `bash -c` / `sh -c`, or gate the command as it runs there",
                       [IN_SHELL_SOURCE, BASH_STARTUP_SOURCE])  # fmt: skip
    return Problem("env", "unknown", None, f"the shell string runs `{command}` before the launch, in the shell itself: "
                   "what it sets in the environment the server starts with (PATH, and so the interpreter; "
                   "LD_LIBRARY_PATH, CUDA and SGLang variables) is not read (fail closed); set the variables with "
                   "`export NAME=VALUE` or `env NAME=VALUE` in the string, or gate the command as it runs after it",
                   [IN_SHELL_SOURCE])  # fmt: skip


#: shells whose `time` is a reserved word that times a pipeline, assignments and all (bash manual 3.2.3 Pipelines;
#: zsh and ksh93 alike); dash has no `time` word: it runs the program time, which execvp's the word after it
#: (`dash -c 'time A=1 true'`: "time: cannot run A=1: No such file or directory", exit 127, dash 0.5.12 and GNU time
#: 1.9 run here; `bash -c 'time A=1 true'`: exit 0)
_TIME_KEYWORD = frozenset({"bash", "zsh", "ksh", "ksh93", "mksh"})
TIME_SOURCE = {
    "title": "bash manual 3.2.3 Pipelines (`time` a reserved word); dash(1) (no `time` reserved word or builtin: the "
    "program time(1) is run, which execs its command); run here: `dash -c 'time A=1 true'` exit 127, `bash -c 'time "
    "A=1 true'` exit 0",
    "url": "https://www.gnu.org/software/bash/manual/bash.html#Pipelines",
}


def time_problem(word: str, shell: str | None) -> Problem | None:
    """The refusal of `time NAME=VALUE python ...` in a shell's command string (igap54): bash, zsh and ksh read
    `time` as a reserved word and NAME=VALUE as an assignment (None: no problem); dash runs the program time, which
    execs NAME=VALUE and fails (blocked: the server never starts); sh (dash on Debian and Ubuntu, bash elsewhere) or
    a shell not known (su's, flock's $SHELL): unknown."""
    if shell in _TIME_KEYWORD:
        return None
    name = word.split("=", 1)[0]
    if shell == "dash":
        return Problem(f"{name}=", "blocked", "crash", f"`time {name}=...` in dash's command string: dash has no "
                       f"`time` keyword, so it runs the program time, which execs {name}=... as a program ('cannot "
                       f"run', exit 127) and the server never starts; write `time env {name}=... python ...` or run "
                       "it with bash -c", [TIME_SOURCE, ASSIGNMENT_SOURCE])  # fmt: skip
    which = f"`{shell}`" if shell else "the shell that runs the string (not known here)"
    return Problem(f"{name}=", "unknown", None, f"`time {name}=...` in a command string run by {which}: where that is "
                   f"dash (/bin/sh on Debian and Ubuntu) `time` is a program that execs {name}=... and fails (exit "
                   f"127), where it is bash an assignment; which one is not known (fail closed); write `time env "
                   f"{name}=... python ...`", [TIME_SOURCE, ASSIGNMENT_SOURCE])  # fmt: skip


def _launch_in_one_word(argv: Sequence[str], mapping: Mapping[str, Any]) -> Problem | None:
    """(irobust11) The unknown of a launch written whole inside one word of a program no reader places (`tmux
    new-session -d "python -m sglang.launch_server ..."`, `parallel ::: "..."`, `xterm -e "..."`): that program runs
    the string its own way (a shell, its own splitting), and the string's flags are not read, so the launch judged
    with SGLang's defaults alone was allowed where a flag in the string is one the release refuses. None where no
    word holds a launch with words after it. A word a known runner before it owns (runners.runner_words: its option
    values, its own words; imend15) is never read: nothing runs it (`srun -J '...'`: a job's name), and a runner that
    refuses its words (`flock -w abc F -c '...'`) is refused by its own problem, the string after it never run."""
    from stackcheck.launch.runners import runner_words

    modules = [str(e["python_module"]) for e in _entries(mapping) if isinstance(e.get("python_module"), str)]
    programs = [f"{e['program']} {e.get('subcommand') or ''}".strip() for e in _entries(mapping) if e.get("program")]
    names = [*modules, *(p for p in programs if " " in p)]
    owned = runner_words(argv)
    first = next((i for i in range(len(argv)) if i not in owned), 0)  # (the program the runners run: it runs the word)
    for k, word in enumerate(argv):
        if k not in owned and any(n in word for n in names) and len(word.split()) > 1:
            program = os.path.basename(argv[first]) if argv else "?"
            where = f"argument {k - first} of `{program}`" if k > first else "the command's first word"
            return Problem(program, "unknown", None, f"the launch is written inside one word ({where}), which that "
                           "program runs its own way (a shell or its own splitting): the flags in it are not read, so "
                           "the launch is not judged (fail closed); gate the command itself (`stackcheck gate -- "
                           "python -m sglang.launch_server ...`), or a shell string (`bash -c \"...\"`), which the "
                           "gate reads")  # fmt: skip
    return None


def mentions_sglang(argv: Sequence[str], mapping: Mapping[str, Any]) -> bool:
    """Whether any argument names an SGLang entrypoint (a module, or `sglang serve`) in a form the reader
    above could not follow (a script's argument, an unusual launcher): then the command is treated as an
    SGLang launch, so what every launch needs is still required (fail closed)."""
    modules = [str(e["python_module"]) for e in _entries(mapping) if isinstance(e.get("python_module"), str)]
    programs = [f"{e['program']} {e.get('subcommand') or ''}".strip() for e in _entries(mapping) if e.get("program")]
    return any(m in a for a in argv for m in modules) or any(p in a for a in argv for p in programs if " " in p)


def _entries(mapping: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [e for e in mapping.get("entrypoints") or [] if isinstance(e, dict)]


def _entrypoint_at(argv: Sequence[str], mapping: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    if not argv:
        return None, []
    prog = os.path.basename(argv[0])
    entries = [e for e in mapping.get("entrypoints") or [] if isinstance(e, dict)]
    if _PYTHON.match(prog):
        i = 1
        while i < len(argv):
            a = argv[i]
            if a == "-m" and i + 1 < len(argv):
                module = argv[i + 1]
                for e in entries:
                    if e.get("python_module") == module:
                        return str(e.get("id")), list(argv[i + 2 :])
                break
            if a.startswith("-m") and len(a) > 2:
                for e in entries:
                    if e.get("python_module") == a[2:]:
                        return str(e.get("id")), list(argv[i + 1 :])
                break
            if a in _PY_VALUE_OPTS:
                i += 2
                continue
            if not a.startswith("-") or a in ("-c", "-"):
                break
            i += 1
    for e in entries:
        if e.get("program") == prog:
            sub = e.get("subcommand")
            if sub is None:
                return str(e.get("id")), list(argv[1:])
            if len(argv) > 1 and argv[1] == sub:
                return str(e.get("id")), list(argv[2:])
    return None, list(argv[1:])


def _options(mapping: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [o for o in mapping.get("options") or [] if isinstance(o, dict) and isinstance(o.get("flag"), str)]


def _names(opt: Mapping[str, Any]) -> list[str]:
    return [str(opt["flag"]), *[str(a) for a in opt.get("aliases") or []]]


def _choices(opt: Mapping[str, Any], by_flag: Mapping[str, dict[str, Any]]) -> dict[str, Any] | None:
    if isinstance(opt.get("choices"), dict):
        return dict(opt["choices"])
    other = opt.get("choices_of")
    if isinstance(other, str) and isinstance(by_flag.get(other, {}).get("choices"), dict):
        return dict(by_flag[other]["choices"])
    return None


UNLISTED_NOTE = "passed through unchecked (not in stackcheck's launch data)"

# Flags whose presence means the launch settings come from somewhere the gate does not read.
CONFIG_FLAGS = ("--config",)


def _config_problem(name: str) -> Problem:
    """A config file makes the launch facts unknown: the gate fails closed (refuses unless --allow-unknown)."""
    return Problem(
        name,
        "unknown",
        None,
        f"{name}: settings in the config file (tp, backends, feature flags) are not read by the gate, "
        "so the features this launch needs are not known",
    )


def parse_flags(
    args: Sequence[str],
    mapping: Mapping[str, Any],
    own: Collection[str] = (),
    unexpanded: bool = False,
    node_ids: str | None = None,
) -> tuple[dict[str, Any], list[Problem], bool, list[str]]:
    """The listed flags found in args: canonical flag -> value (True for a bool flag), problems, whether any
    listed flag was found at all, and the flags launch.json does not list (once each, in order). `own`: names the
    installed release declares as flags of their own, which argparse therefore never reads as abbreviations of a
    listed flag (own_spellings). `unexpanded`: the args are a shell string's words, left unexpanded (shell_commands): a
    value with an expansion in it (`--tp $TP`, `--nnodes $(LWS_GROUP_SIZE)`) is what the shell makes of it when it
    runs, not known here: unknown, where a usage error said the command was malformed (ireal1)."""
    opts = _options(mapping)
    exact: dict[str, dict[str, Any]] = {}
    for o in opts:
        for n in _names(o):
            exact[n] = o
    found: dict[str, Any] = {}
    problems: list[Problem] = []
    unlisted: list[str] = []
    seen = False
    for i, name, eq, inline in _tokens(args):
        tok = args[i]
        opt = exact.get(name)
        how = name
        if opt is None and name in own:  # the release's own flag, not an abbreviation: argparse takes it exactly
            unlisted.append(name)
            continue
        if opt is None:
            hits = {id(o): o for n, o in exact.items() if n.startswith(name) and len(name) > 2}
            if len(hits) == 1:
                opt = next(iter(hits.values()))
                how = f"{name} (abbreviation of {opt['flag']})"
            elif len(hits) > 1:
                flags = sorted({str(o["flag"]) for o in hits.values()})
                problems.append(
                    Problem(
                        name,
                        "unknown",
                        None,
                        f"{name} is an abbreviation of several flags the gate reads ({', '.join(flags)}): "
                        "SGLang rejects it as ambiguous, or it is a flag the manifests do not know",
                    )
                )
                continue
            else:
                if name in CONFIG_FLAGS:
                    problems.append(_config_problem(name))
                else:
                    unlisted.append(name)
                continue
        seen = True
        flag = str(opt["flag"])
        kind = opt.get("value")
        if kind == "bool":
            if eq:
                raise UsageError(f"server command: {how} takes no value (got {tok!r})")
            found[flag] = True
            continue
        value = _values_at(args, i, eq, inline)[0]
        if value is None:
            raise UsageError(f"server command: {how} needs a value")
        if unexpanded and node_ids and flag == "--node-rank" and _NODE_ID_VALUE.fullmatch(value) and node_ids in value:
            # (imend9: srun_node_ids: each node's own index; judged as node 0's, whose rank serves the address)
            found[flag] = 0
            problems.append(Problem(flag, "note", None, f"{how} {value!r}: srun sets {node_ids} in each task, one task "
                                    "a node: each node expands its own rank (judged as node 0's)",
                                    [SRUN_NODE_ID_SOURCE]))  # fmt: skip
            continue
        if unexpanded and kind in ("int", "float") and _expands(value):  # (a choice's: kept, unknown later)
            problems.append(
                Problem(
                    flag, "unknown", None,
                    f"{how} {value!r}: the shell string expands it when it runs, the gate reads no expansion, so what "
                    f"SGLang gets for {flag} is not known (fail closed): write the value out in the string",
                    [EXPANSION_SOURCE],
                )
            )  # fmt: skip
            continue
        if kind == "int":
            try:
                found[flag] = int(value)
            except ValueError:
                raise UsageError(f"server command: {how} {value!r}: expected an integer") from None
            low, high = opt.get("min", 1), opt.get("max")
            if found[flag] < low or (high is not None and found[flag] > high):
                span = f"an integer from {low} to {high}" if high is not None else f"an integer of at least {low}"
                if low == 1 and high is None:
                    span = "a positive integer"
                raise UsageError(f"server command: {how} {value!r}: expected {span}")
        elif kind == "float":
            try:
                found[flag] = float(value)
            except ValueError:
                raise UsageError(f"server command: {how} {value!r}: expected a number") from None
            low, high = opt.get("min"), opt.get("max")
            if (
                found[flag] != found[flag]  # NaN
                or (low is not None and found[flag] <= low)
                or (high is not None and found[flag] > high)
            ):
                raise UsageError(f"server command: {how} {value!r}: expected a number above {low} and at most {high}")
        else:
            found[flag] = value
    return found, problems, seen, list(dict.fromkeys(unlisted))


#: a parameter expansion (`$X`, `${X}`, `$1`, `$@`), a command substitution (`$(...)`, backquotes) or an arithmetic
#: expansion (`$((...))`) in a word as shell_commands leaves it (POSIX.1-2017 Shell Command Language 2.6)
_EXPANSION = re.compile(r"\$[A-Za-z_{(0-9@*#?!$-]|`")
EXPANSION_SOURCE = {
    "title": "POSIX.1-2017 Shell Command Language, 2.6 Word Expansions (parameter expansion, command substitution, "
    "arithmetic expansion)",
    "url": "https://pubs.opengroup.org/onlinepubs/9699919799/utilities/V3_chap02.html#tag_18_06",
}


def _unlisted_note(names: Sequence[str], label: str = UNLISTED_NOTE) -> Problem:
    """The one note line naming the flags the gate does not read."""
    return Problem("flags", "note", None, f"{label}: {', '.join(names)}")


def parse_env(
    env: Mapping[str, str], mapping: Mapping[str, Any], release: str | None = None
) -> tuple[dict[str, bool], list[Problem]]:
    """The launch.json `env` variables as booleans, and a problem for a value SGLang's reader refuses; none where
    the installed `release` is known and outside the spec's `versions` (that release never reads the variable)."""
    out: dict[str, bool] = {}
    problems: list[Problem] = []
    for spec in mapping.get("env") or []:
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            continue
        name = str(spec["name"])
        default = bool(spec.get("default"))
        if name not in env:
            out[name] = default
            continue
        raw = (env[name].strip() if spec.get("strip") else env[name]).lower()
        if raw in [str(x) for x in spec.get("true") or []]:
            out[name] = True
        elif raw in [str(x) for x in spec.get("false") or []]:
            out[name] = False
        elif isinstance(spec.get("otherwise"), bool):  # a variable whose reader takes anything else as one value
            out[name] = bool(spec["otherwise"])
        else:
            out[name] = default
            versions = spec.get("versions")
            if release is not None and isinstance(versions, str):
                from stackcheck.facts.versions import version_in

                if version_in(release, versions) is False:  # this release does not read it
                    continue
            problems.append(
                Problem(
                    f"{name}={env[name]}",
                    "unknown",
                    None,
                    f"{name}={env[name]!r} is neither true ({', '.join(spec.get('true') or [])}) nor false "
                    f"({', '.join(spec.get('false') or [])}): SGLang raises ValueError when it reads it",
                    spec.get("source"),
                )
            )
    return out, problems


def _cond(c: Mapping[str, Any], d: Derived, defaults: Mapping[str, Any]) -> bool:
    if "any" in c:
        return any(_cond(x, d, defaults) for x in c.get("any") or [] if isinstance(x, dict))
    if "option" in c:
        flag = str(c["option"])
        value = d.options.get(flag, defaults.get(flag))
        return value in (c.get("in") or [])
    if "flag" in c:
        return (str(c["flag"]) in d.options) is bool(c.get("present"))
    if "env" in c:
        return d.env.get(str(c["env"])) in (c.get("in") or [])
    if "release" in c:  # a release not known is inside no range: write the condition so that this keeps a need
        d.reads_release = True
        return _release_inside(d.release, str(c["release"])) is bool(c.get("inside"))
    if "launch" in c and "in" in c:  # a string launch fact (moe_runner_auto) is one of `in`; absent: not met
        return isinstance(d.launch.get(str(c["launch"])), str) and d.launch.get(str(c["launch"])) in (c.get("in") or [])
    if "launch" in c:
        lhs = d.launch.get(str(c["launch"]))
        rhs = c.get("value")
        if not isinstance(lhs, int | float) or not isinstance(rhs, int | float):
            return False
        op = str(c.get("op"))
        return {
            "==": lhs == rhs,
            "!=": lhs != rhs,
            "<": lhs < rhs,
            "<=": lhs <= rhs,
            ">": lhs > rhs,
            ">=": lhs >= rhs,
        }.get(op, False)
    return False


def _release_inside(release: str | None, spec: str) -> bool:
    """Whether the installed SGLang release is known and inside `spec` (a release that does not parse: outside)."""
    if release is None:
        return False
    from stackcheck.facts.versions import version_in

    return version_in(release, spec) is True


def _conds(conds: Any, d: Derived, defaults: Mapping[str, Any]) -> bool:
    return all(_cond(c, d, defaults) for c in conds or [] if isinstance(c, dict))


# how strongly a kind of requirement holds: a stronger one replaces a weaker one for the same item
_KIND_RANK = {"default-warn": 0, "default": 1, "launch": 2, "explicit": 3}


def _add(
    d: Derived, feature: str, kind: str, why: str, check: bool = False, rules: Sequence[str] | None = None
) -> None:
    """Require an item (the stronger kind wins). `rules`: a feature needed for those of its rules only; a
    requirement of the whole feature, earlier or later, replaces it, and two such requirements add up."""
    for r in d.required:
        if r.feature == feature and r.check == check:
            if not check:
                if rules is None:
                    r.rules = None
                elif r.rules is not None:
                    r.rules.update({x: kind for x in rules if x not in r.rules})
            if _KIND_RANK.get(kind, 0) > _KIND_RANK.get(r.kind, 0):
                r.kind, r.why = kind, why
            return
    scoped: dict[str, str | None] | None = None if check or rules is None else dict.fromkeys(rules, kind)
    d.required.append(Requirement(feature, kind, why, check, scoped))


def _rule_ids(req: Mapping[str, Any]) -> list[str] | None:
    """A requirement's `rules` (the feature needed for those rules only), None when it names none (the whole)."""
    rules = req.get("rules")
    return [str(x) for x in rules if isinstance(x, str)] if isinstance(rules, list) else None


def _add_requirements(d: Derived, reqs: Any, why: str, defaults: Mapping[str, Any]) -> None:
    """A flag's needs: a feature id, or {feature, when}; several entries for one feature are alternatives (it is
    needed when any holds). A feature none of whose entries holds is listed as off, with each entry's reason."""
    met: set[str] = set()
    unmet: dict[str, list[str]] = {}
    for req in reqs or []:
        if isinstance(req, str):
            _add(d, req, "explicit", why)
        elif isinstance(req, dict) and isinstance(req.get("feature"), str) and _rule_ids(req) is not None:
            # the feature for some of its rules only: not an alternative of the whole, added wherever it holds
            if _conds(req.get("when"), d, defaults):
                _add(d, str(req["feature"]), "explicit", why, rules=_rule_ids(req))
        elif isinstance(req, dict) and isinstance(req.get("feature"), str) and req["feature"] not in met:
            feature = str(req["feature"])
            if _conds(req.get("when"), d, defaults):  # (the later alternatives are not read: no release asked)
                _add(d, feature, "explicit", why)
                met.add(feature)
            else:
                unmet.setdefault(feature, []).append(_off_reason(req.get("when"), d, defaults))
    for feature, reasons in unmet.items():
        if feature not in met and not any(r.feature == feature and not r.check for r in d.required):
            d.off.append(f"{feature}: off ({'; '.join(dict.fromkeys(reasons))})")


#: GNU env's manual and source, for a refusal of an `env` prefix read no further (assembly/env_prefix.py)
ENV_SOURCE = {
    "title": 'coreutils src/env.c (aa0c0de35, 2026-08-20): getopt_long with "+a:C:iS:u:v0" (:98) and its long '
    "options (:111-128), an unknown option or missing argument is usage(EXIT_CANCELED) (:1089-1098), -S strings split "
    "by build_argv (:624-760: escapes, ${VARNAME} from env's environment, # comments), assignments (:1158), execvp "
    "(:1238)",
    "url": "https://github.com/coreutils/coreutils/blob/master/src/env.c",
}


def _env_stop_problem(why: str, fails: bool) -> Problem:
    """The refusal of a command whose `env` prefix was read no further: env fails there (exit 125) or runs no
    command (crash), or does what the gate does not read (unknown); the gate judges no other command in its place."""
    if fails:
        return Problem("env", "blocked", "crash", f"the command's env prefix: {why}: the server never starts, so the "
                       "gate refuses it rather than judge the words after it", [ENV_SOURCE])  # fmt: skip
    return Problem("env", "unknown", None, f"the command's env prefix: {why}; the gate does not judge the "
                   "command as env would run it (fail closed)", [ENV_SOURCE])  # fmt: skip


#: a shell's assignment word (bash manual, Simple Command Expansion: the words before the command name of the form
#: NAME=VALUE are the shell's variable assignments, not the program)
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
ASSIGNMENT_SOURCE = {
    "title": "bash manual, 3.7.1 Simple Command Expansion (the words preceding the command name of the form NAME=VALUE "
    "are variable assignments of the shell); stackcheck/commands/gate.py _exec: os.execvp(command[0], command), argv "
    "exactly and no shell, FileNotFoundError -> 'command not found' (exit 127)",
    "url": "https://www.gnu.org/software/bash/manual/bash.html#Simple-Command-Expansion",
}


def _assignment_problem(word: str, runner: str | None = None) -> Problem:
    """The refusal of a command whose first word is a shell assignment (ifc49 row e1): no shell reads it, so exec
    looks for a program of that name and the server never starts; the gate judged the launch after it instead.
    `runner`: the `nohup` / `timeout` whose command the word is (irev70: they execvp it the same way)."""
    name = word.split("=", 1)[0]
    where = f"the command's first word {name}=..." if runner is None else f"the word {name}=... that `{runner}` runs"
    return Problem(f"{name}=", "blocked", "crash", f"{where} is a shell's variable "
                   "assignment, but the command runs as argv with no shell (the gate's exec, like env's and a "
                   f"launcher's): no program of that name is found ('command not found', exit 127), and {name} is "
                   f"never set; write it as `env {name}=... python ...`",
                   [ASSIGNMENT_SOURCE] + ([NOHUP_SOURCE] if runner and runner != "exec" else []))  # fmt: skip


#: coreutils nohup: its only options are --help / --version (and `--`); it execvp's the next word, and exits 127
#: where no such program is found ("nohup: failed to run command 'A=1': No such file or directory", coreutils 9.1
#: run here, `nohup A=1 true`: exit 127); timeout likewise for the word after its DURATION (`timeout 5 A=1 true`,
#: `timeout -k 5 -s TERM 5 A=1 true`: exit 127)
NOHUP_SOURCE = {
    "title": "GNU coreutils nohup and timeout (execvp of the word after their options and timeout's DURATION, exit "
    "127 on ENOENT); `nohup A=1 true`, `timeout 5 A=1 true` with coreutils 9.1: \"failed to run command 'A=1'\", "
    "exit 127",
    "url": "https://www.gnu.org/software/coreutils/manual/html_node/nohup-invocation.html",
}


def _exec_assignment(argv: Sequence[str]) -> tuple[str, str | None] | None:
    """(the NAME=VALUE word exec'd as a program, the `nohup` / `timeout` that runs it or None for the first word),
    where the command's first word, or the word a leading chain of `nohup` and `timeout` runs, is a shell assignment.
    nohup takes no option but `--`; timeout (coreutils) is read by runners.read_timeout, its options then its
    DURATION, then the command (`timeout 5 A=1 true`: exit 127); a timeout it does not place ends the chain."""
    i, runner = _chain_end(argv, 0)
    return (argv[i], runner) if i < len(argv) and _ASSIGNMENT.match(argv[i]) else None


def _chain_end(argv: Sequence[str], start: int) -> tuple[int, str | None]:
    """(where the command of a chain of `nohup` / `timeout` starting at argv[start] stands, the last of them or None
    where argv[start] is neither): runners.chain_end, which the target reader (assembly/target.py) shares (irev78)."""
    from stackcheck.launch.runners import chain_end

    return chain_end(argv, start)


#: the runners' manuals (launch/runners.py reads where each one's command stands)
RUNNER_SOURCE = {
    "title": "coreutils nice / stdbuf, util-linux taskset(1) / chrt(1) / ionice(1), numactl numactl.c opts, Slurm "
    "srun(1): each execvp's the word after its options (taskset's MASK, chrt's priority) with no shell",
    "url": "https://man7.org/linux/man-pages/man1/taskset.1.html",
}


#: util-linux flock(1), read in its source (imend6)
FLOCK_SOURCE = {
    "title": 'util-linux sys-utils/flock.c main(): getopt_long "+sexnoFuw:E:hV?" and long_options, then the lock '
    "file and either exactly -c / --command with exactly one command string (run as $SHELL -c, /bin/sh without SHELL; "
    "else 'requires exactly one command argument', EX_USAGE 64) or the program and its arguments (execvp); one word "
    "alone is a file descriptor and runs nothing; -h / -V print and exit",
    "url": "https://github.com/util-linux/util-linux/blob/04649d5ab4bb3ec8ac5886f6c70e417b5dbdf4a1/sys-utils/flock.c",
}


def _flock_problem(argv: Sequence[str], at: int) -> Problem | None:
    """What the flock at argv[at] does to the launch after it (imend6; runners.read_flock): blocked where it refuses
    its words (exit 64 before running anything) or runs nothing though words follow (-h, -V); unknown where the
    program it runs is a word starting with '-' (`flock FILE -lc STRING`, `flock FILE --command=STRING`, `flock FILE
    -n -c STRING`: flock compares only the whole words -c and --command, and takes options only before the file, so
    it execvp's that word as a program, which is almost never found); None otherwise."""
    from stackcheck.launch.runners import read_flock

    got = read_flock(argv, at)
    if got.kind == "refused" or (got.kind == "none" and at + 2 < len(argv)):
        effect = ("refuses its command line" if got.kind == "refused" else "runs no command") + f" ({got.why})"
        return Problem("flock", "blocked", "crash",
                       f"`flock` stands before the launch and {effect}: it exits before running anything, so the "
                       "server never starts; write `flock [options] FILE -c 'python -m sglang.launch_server ...'` "
                       "(options before the lock file, the command string as the one word after -c) or `flock "
                       "[options] FILE python -m sglang.launch_server ...`", [FLOCK_SOURCE])  # fmt: skip
    if got.doubt is not None and got.kind in ("argv", "string"):
        return Problem("flock", "unknown", None, f"`flock` stands before the launch and is given {got.doubt}: whether "
                       "it takes the value or exits before running anything (exit 64) was not read (fail closed); "
                       "write the value in decimal with a dot (`-w 30`, `-w 0.5`)", [FLOCK_SOURCE])  # fmt: skip
    if got.kind == "argv" and got.at is not None and argv[got.at][:1] == "-":
        word = argv[got.at]
        return Problem("flock", "unknown", None,
                       f"`flock` stands before the launch and runs the program `{word}` with the words after it: "
                       "flock takes options only before its lock file and reads a shell string only after the whole "
                       "word -c or --command, so no shell reads the launch as written, and a program of that name is "
                       "almost never found (fail closed); write `flock [options] FILE -c '...'`",
                       [FLOCK_SOURCE])  # fmt: skip
    return None


SU_SOURCE = {
    "title": 'util-linux login-utils/su-common.c su_main (commit 00749b05): getopt_long("c:fg:G:lmpPs:u:hVw:") '
    "permuting, -c takes one word (the shell's command string), errtryhelp(EXIT_FAILURE) on an unknown option, "
    "new_user = argv[optind++], run_shell(shell, command, argv + optind)",
    "url": "https://github.com/util-linux/util-linux/blob/master/login-utils/su-common.c",
}


def _su_problem(argv: Sequence[str], j: int, limit: int) -> Problem | None:
    """(imend17) The su / runuser at argv[j] read as su_main reads its words (runners.read_su): blocked where it exits
    before running anything (an option it does not take: `su -c python3 -m sglang.launch_server --model-path m` hands
    `-m` to su and su refuses `--model-path`), unknown where the launch the gate found stands among su's words after
    its -c string (limit: where the launch starts, len(argv) where it is in no word of its own) rather than in it,
    or where several -c strings are given (the last one runs)."""
    from stackcheck.launch.runners import read_su

    prog = os.path.basename(argv[j])
    got = read_su(argv, j)
    if got.refused is not None:
        return Problem(prog, "blocked", None, f"`{prog}` stands before the launch and reads every word after it that "
                       f"starts with `-` as its own option (GNU getopt_long permutes, up to `--`): {got.refused}, "
                       "so the server never starts; give the whole launch as ONE quoted -c string (`su USER -c "
                       "'python -m sglang.launch_server ...'`) or after `runuser -u USER --`", [SU_SOURCE])  # fmt: skip
    if got.user_option:
        return None  # (runuser -u USER -- COMMAND: its command execvp'd, read by POLICY_READERS)
    if limit > j and limit < len(argv):
        what = f"its -c string `{got.command}`" if got.command is not None else "the user's shell with no -c string"
        return Problem(prog, "unknown", None, f"`{prog}` runs {what} (one word, through the user's shell); the words "
                       "after its options are its user and that shell's positional arguments, so the launch the gate "
                       f"found among them (`{argv[limit]} ...`) is not what {prog} runs (fail closed); give the whole "
                       f"launch as ONE quoted -c string (`{prog} USER -c 'python -m sglang.launch_server ...'`)",
                       [SU_SOURCE])  # fmt: skip
    if got.commands > 1:
        return Problem(prog, "unknown", None, f"`{prog}` is given {got.commands} command strings and runs the last "
                       f"one only (`{got.command}`), which may not be the one the gate read (fail closed)",
                       [SU_SOURCE])  # fmt: skip
    return None


def runner_problems(argv: Sequence[str], mapping: Mapping[str, Any]) -> list[Problem]:
    """The refusals of the runners before the launch in `argv` (irobust5): a shell assignment where one of them runs
    its command (`nice -n 5 A=1 python ...`, `srun -N1 A=1 python ...`: no program of that name, the server never
    starts), or, where a runner's options are not all read (an option not listed, whose value may be the next word),
    any assignment word between it and the launch (unknown: the gate does not judge the command behind it)."""
    from stackcheck.launch.runners import RUNNERS, read_runner

    programs = {e.get("program") for e in _entries(mapping)}
    names = [os.path.basename(word) for word in argv]
    limit = next(
        (i for i, name in enumerate(names)
         if (_PYTHON.match(name) or name in programs) and _entrypoint_at(argv[i:], mapping)[0] is not None),
        len(argv),
    )  # fmt: skip
    out: list[Problem] = []
    strings = flock_sites(argv)[0]
    chained = 0  # (a chain of nohup / timeout is read once, from its first: linear in the words)
    seen_assignment = False
    su_read = False
    for j in range(limit):
        prog = names[j]
        if prog in ("nohup", "timeout") and j > 0 and j >= chained:
            at, runner = _chain_end(argv, j)
            chained = at
            if runner is not None and at < len(argv) and _ASSIGNMENT.match(argv[at]):
                out.append(_assignment_problem(argv[at], runner))
            continue
        if prog == "flock" and j not in strings and not any(c.isspace() for c in argv[j]):  # (as flock_sites reads)
            flocked = _flock_problem(argv, j)
            if flocked is not None:
                out.append(flocked)
                if flocked.status == "blocked":
                    break  # (nothing after it runs)
        if prog in ("perf", "mpirun", "mpiexec", "orterun", "prterun"):  # (igap54: read in launch/elsewhere.py)
            from stackcheck.launch.elsewhere import command_at

            runs = command_at(argv, j)
            if runs is not None and runs < len(argv) and _ASSIGNMENT.match(argv[runs]):
                out.append(_assignment_problem(argv[runs], argv[j]))
            continue
        # (a word su after an option word is likely that option's value, `sudo -u su python ...`: not read as su)
        # (only the first su is read: it reads every word after it, the words of a later one among them; linear)
        if (prog in _SU and not su_read and j not in strings and not any(c.isspace() for c in argv[j])
                and (j == 0 or not argv[j - 1].startswith("-") or argv[j - 1] == "--")):  # fmt: skip
            su_read = True
            su_problem = _su_problem(argv, j, limit)
            if su_problem is not None:
                out.append(su_problem)
                if su_problem.status == "blocked":
                    break  # (nothing after it runs)
            continue
        if prog not in RUNNERS or seen_assignment:
            continue
        reading = read_runner(argv, j)
        if reading.command is not None and _ASSIGNMENT.match(argv[reading.command]):
            out.append(_assignment_problem(argv[reading.command], argv[j]))
            out[-1].source = [ASSIGNMENT_SOURCE, RUNNER_SOURCE]
        elif reading.unsure is not None:
            words = [w for w in argv[j + 1 : limit] if _ASSIGNMENT.match(w)]
            seen_assignment = True  # (every later runner's words are among these: one problem)
            if words:
                name = words[0].split("=", 1)[0]
                out.append(
                    Problem(
                        f"{name}=", "unknown", None,
                        f"`{prog}` stands before the launch and {reading.unsure}, so whether the word {name}=... is "
                        f"an option's value or the command {prog} runs (then no program of that name is found and "
                        "the server never starts) is not known (fail closed); write the assignment as `env "
                        f"{name}=... python ...` after {prog}'s options",
                        [ASSIGNMENT_SOURCE, RUNNER_SOURCE],
                    )
                )  # fmt: skip
    return out


def derive(
    command: Sequence[str],
    mapping: Mapping[str, Any],
    env: Mapping[str, str],
    require: Sequence[str] = (),
    own: Collection[str] = (),
    release: str | None = None,
    target_facts: bool = False,
) -> Derived:
    """The features a command needs and its launch facts, from launch.json. Pure. `own`: names the installed
    release declares as flags of their own (own_spellings), read as unlisted flags rather than abbreviations.
    `release`: the installed SGLang release, for the conditions on it (None: not known yet, so no condition on the
    release holds inside a range; `reads_release` says whether one was read, to derive again once it is known).
    `target_facts`: the facts judged are given (gate --facts), by the user's word those of the box the server runs
    on: a launch behind ssh / docker exec / ... is then judged on them (wrapped_problem), else it is unknown."""
    stops: list[tuple[str, bool]] = []  # where an `env` prefix's reading stopped (its own, or a shell string's)
    argv, cmd_env = split_env_prefix(command, env, stops=stops)
    if not argv:
        raise UsageError("missing command after -- (expected, e.g., -- python -m sglang.launch_server ...)")
    trace: dict[str, Any] = {"env_stops": stops, "gate_env": env, "target_facts": target_facts}
    entry, args, cmd_env = find_launch(argv, mapping, cmd_env, trace)
    nnodes_word = None  # (`--nnodes N` / `--nnodes=N` as written, the last; another spelling: not read, None)
    for k, word in enumerate(args):
        if word == "--nnodes" or word.startswith("--nnodes="):
            nnodes_word = word[9:] if "=" in word else (args[k + 1] if k + 1 < len(args) else None)
    node_ids = srun_node_ids(argv, trace, nnodes_word)  # (imend9: `srun -N K bash -c "... --node-rank $SLURM_NODEID"`)
    found, problems, seen, unlisted = parse_flags(args, mapping, own, unexpanded=bool(trace.get("shell_string")),
                                                  node_ids=node_ids)  # fmt: skip
    problems[:0] = [_env_stop_problem(why, fails) for why, fails in stops[:1]]
    problems[:0] = [env_policy_problem(program) for program in trace.get("env_policy", [])[:1]]
    problems[:0] = [root_change_problem(program) for program in trace.get("root_change", [])[:1]]
    path = srun_path(trace, argv)
    if not trace.get("srun_copies") and entry is not None:
        nested_srun = _srun_nested(path)  # (irev74: across a shell string or flock string, srun_path)
        if nested_srun is not None:
            trace["srun_copies"] = [nested_srun]
    problems[:0] = [srun_copies_problem(why) for why in trace.get("srun_copies", [])[:1]]
    present = {p.subject for p in problems}
    if not stops:  # (a stopped env prefix is refused: the words after it are no command the walk reads)
        problems[:0] = [p for p in trace.get("unplaced", [])[:1] if p.subject not in present]  # (iallow1)
    behind = [wrapped_problem(w, target_facts, cleared) for w, cleared in trace.get("wrapped", [])]
    problems[:0] = [next((p for p in behind if p.status != "note"), behind[0])] if behind else []
    bad = None if stops else _exec_assignment(argv)
    if bad is not None:
        problems.insert(0, _assignment_problem(*bad))
    if not stops:
        seen_subjects = {p.subject for p in problems}
        ran = [*runner_problems(argv, mapping), *trace.get("runner_problems", [])]
        # (imend17: su's refusal of its words is blocked where the walk had only found it unsure: the refusal wins)
        stronger = {p.subject for p in ran if p.status == "blocked" and p.subject in seen_subjects}
        if stronger:
            problems[:] = [p for p in problems if p.subject not in stronger or p.status == "blocked"]
            seen_subjects = {p.subject for p in problems}
        problems[:0] = [p for p in ran if p.subject not in seen_subjects]
    if unlisted:
        problems.append(_unlisted_note(unlisted))
    if entry is not None and not stops:
        problems += trace.get("runner_notes", [])[:1]  # (iallow2: the outermost timeout that ends the server)
    if trace.get("shell_string") and entry is not None:
        problems += expanded_word_problems(args, mapping)
    d = Derived(
        command=list(command),
        entrypoint=entry,
        sglang_args=args,
        options=found,
        problems=problems,
        unlisted=unlisted,
        release=release,
        mpi_local=list(trace.get("mpi_local", [])),
        srun_hostfiles=list(dict.fromkeys(trace.get("srun_hostfiles", []))),
        other_cgroup=_other_cgroup(argv, cmd_env),
        shell_string=bool(trace.get("shell_string")),
    )
    for feature in require:
        _add(d, feature, "explicit", "--require")
    if entry is None and not seen and not mentions_sglang(argv, mapping):
        return d
    device = _device(args)
    if device is not None and device.split(":", 1)[0] != "cuda":
        # SGLang runs on the device --device names ('cuda', 'xpu', 'hpu', 'npu', 'cpu', 'musa': 0.5.1 server_args.py,
        # 0.5.23 arg_groups/fields/device.py); the manifests judge CUDA launches, so another device is not judged
        # here (no refusal of a CPU launch for what a CUDA one would need): only --require is checked
        d.entrypoint, d.problems = None, []
        d.out_of_scope = (
            f"--device {device}: a launch on a device other than an NVIDIA GPU (cuda) is out of scope; the gate "
            "judges SGLang's CUDA launches only, so nothing was checked for this one"
        )
        return d
    if entry is None:
        d.entrypoint = "wrapper"
        # (igap54: a launch not found behind ssh / docker / torchrun, `ssh host "python -m sglang..."`, `torchrun -m
        # sglang.launch_server`: the first such word of the command, its words not read as the server's; imend7: or
        # of a simple command of a shell's string that names SGLang, `bash -c "ssh h 'python -m sglang...'"`, as
        # _shell_launch noted it)
        found_at = _unread_wrapper(argv, cmd_env) or next(iter(trace.get("unread_wrapped", [])), None)
        if found_at is not None:  # (its launch's flags not read: unknown, even with the target's facts)
            d.problems.insert(0, wrapped_problem(found_at))
        else:
            held = _launch_in_one_word(argv, mapping)  # (the words known runners own not read: runner_words)
            if held is not None:
                d.problems.insert(0, held)
    from stackcheck.facts.sgl_prefix import sglang_environ

    # (SGLang 0.5.3+ copies each SGL_X over SGLANG_X at import: launch.json's variables as the release reads them)
    cmd_env, sgl_undecided = sglang_environ(cmd_env, release)
    d.env, env_problems = parse_env(cmd_env, mapping, release)
    if release is None and (env_problems or sgl_undecided):  # (the release's reading: judged again once known)
        d.reads_release = True
    d.problems.extend(env_problems)
    opts = _options(mapping)
    by_flag = {str(o["flag"]): o for o in opts}
    defaults = {str(o["flag"]): o.get("default") for o in opts if "default" in o}
    d.defaults = dict(defaults)
    for o in opts:
        fact = o.get("fact")
        if isinstance(fact, str):
            if o["flag"] in found:
                d.launch[fact] = found[o["flag"]]
            elif "default" in o and o.get("value") == "int":
                d.launch[fact] = o["default"]
    from stackcheck.launch.runners import srun_line

    sruns = [srun_line(path, i) for i, w in enumerate(path) if os.path.basename(w) == "srun"]  # (read once: imend10)
    nodes_env = dict(cmd_env)  # (imend11: a -N srun took from its own environment, for its --gpus share, fail closed)
    for nodes in trace.get("srun_env_nodes", [])[:1]:
        nodes_env["SLURM_JOB_NUM_NODES"] = nodes
    gpus_given = srun_gpus(sruns, nodes_env)
    gpus_given += trace.get("srun_env_gpus", [])  # (imend8: where the line gives none, srun's environment)
    if gpus_given:  # (ifc56: srun's GPU options against what the launch asks for)
        tp, pp = d.launch.get("tp"), d.launch.get("pp", 1)
        nodes = whole_number(str(found.get("--nnodes", "1")), None, ascii_only=True)
        if isinstance(tp, int) and isinstance(pp, int) and nodes:
            asked = max(-(-tp * pp // nodes), _devices_on_node(found, release))
            if release is None and _devices_on_node(found, "0.5.2") != _devices_on_node(found):
                d.reads_release = True  # (imend8: 0.5.1-0.5.2 lay DP groups out otherwise: judged again once known)
            short = next(((o, c) for o, c in gpus_given if c is None or c < asked), None)
            if short is not None:
                d.problems.insert(0, srun_gpus_problem(short[0], asked))
    if sruns:  # (ifc59: one --node-rank copied to every node)
        spread = _srun_spread(sruns, cmd_env)
        nnodes = whole_number(str(found.get("--nnodes", "1")), None, ascii_only=True)
        rank_raw = found.get("--node-rank", 0)
        rank = whole_number(str(rank_raw), None, ascii_only=True)
        per_node = node_ids is not None and "--node-rank" in found  # (imend9: each node's own rank)
        if spread is not None and nnodes is not None and nnodes > 1 and rank is not None and not per_node:
            d.problems.insert(0, srun_node_rank_problem(spread, nnodes, rank))
        if any(_srun_holds(s) and not _srun_in_job(s, cmd_env) for s in sruns):
            d.problems.append(srun_hold_note())
        refused = next((p for p in (srun_allocation_problem(s, cmd_env) for s in sruns) if p is not None), None)
        if refused is not None:  # (irunner3: -N / -w values srun refuses)
            d.problems.insert(0, refused)
    if isinstance(trace.get("srun_job_id"), str):  # (irobust13: a job id srun refuses: it runs nothing)
        d.problems.insert(0, srun_job_id_problem(trace["srun_job_id"]))
    for spec in mapping.get("env") or []:  # variables that are launch facts (launch.pcie_ipc_allreduce)
        if isinstance(spec, dict) and isinstance(spec.get("fact"), str) and spec.get("name") in d.env:
            d.launch[str(spec["fact"])] = d.env[str(spec["name"])]
        if isinstance(spec, dict) and isinstance(spec.get("set_fact"), str):  # whether it is set at all
            d.launch[str(spec["set_fact"])] = str(spec.get("name")) in cmd_env
    for o in opts:
        flag = str(o["flag"])
        if flag not in found:
            continue
        value = found[flag]
        if o.get("value") == "bool":
            _add_requirements(d, o.get("requires"), flag, defaults)
            continue
        choices = _choices(o, by_flag)
        if choices is None:
            continue
        if str(value) not in choices:
            d.problems.append(
                Problem(
                    f"{flag}={value}",
                    "unknown",
                    None,
                    f"{flag} {value!r} is not a value the manifests know (known: {', '.join(sorted(choices))}): "
                    "it may be new, or SGLang rejects it",
                    o.get("source"),
                )
            )
            continue
        _add_requirements(d, choices[str(value)], f"{flag} {value}", defaults)
    for spec in mapping.get("defaults") or []:
        if not isinstance(spec, dict) or not isinstance(spec.get("feature"), str):
            continue
        feature = str(spec["feature"])
        if _conds(spec.get("when"), d, defaults):
            if spec.get("refuse", True):
                _add(d, feature, "default", "on by default")
            else:
                _add(d, feature, "default-warn", "on by default; fails only with some models, so it warns")
        else:
            d.off.append(f"{feature}: off ({_off_reason(spec.get('when'), d, defaults)})")
    # a feature that several default entries can turn on (FlashInfer: the sampler, the attention default) is
    # off only when none does
    needed = {r.feature for r in d.required}
    d.off = [o for o in d.off if o.split(":", 1)[0] not in needed]
    return d


def _device(args: Sequence[str]) -> str | None:
    """--device as the command gives it (`--device X` or `--device=X`, the last one; None: not given), spelt in full:
    derive reads it before the release's flags are known."""
    return option_value(args, ("--device",), None, abbreviations=False)


def add_launch_requirements(
    d: Derived,
    features: Sequence[Mapping[str, Any]],
    checks: Sequence[Mapping[str, Any]],
    model_facts: Mapping[str, Any] | None = None,
) -> None:
    """What a launch needs beyond its features, from the manifests' `required_by` (features.schema.json):
    - `{"launches": "every"}`: the item fails every SGLang launch on this box when it fails (torch without the
      GPU's architecture, a kernel package without code for it, a driver older than torch's CUDA), so every
      launch the gate sees needs it;
    - `{"features": [...]}`: a launch that requires one of those features needs it (as strongly as the feature);
    - `{"when": [conditions]}`: a launch whose command meets the conditions (launch.json's form: `tp > 1`, a
      model fact) needs it; a condition on a launch fact that is not known (the model was not read) counts
      as met, so the gate fails closed.
    A check's rule may carry its own `required_by` (a JSON-rule check whose rules reach a launch in different
    ways: NCCL's duplicate wheels break `import torch`, its old releases only collectives): the launch then
    needs the rules whose scope it meets, each as strongly as its scope says (`Requirement.rules`).
    Call it once the launch facts are complete (after the model is read). `model_facts`: launch facts the gate's
    preflight read from the model and sets on the rules' context only (launch.model_moe, launch.moe_runner_auto),
    which a scope's conditions read too (iasan); one not given is not known there (fail closed). Pure."""
    if d.entrypoint is None:
        return  # no SGLang launch in the command: nothing but --require is checked
    if model_facts:
        saved = d.launch
        d.launch = {**saved, **{k: v for k, v in model_facts.items() if k not in saved}}
        try:
            add_launch_requirements(d, features, checks)
        finally:
            d.launch = saved
        return
    dflt = d.defaults
    for item in features:
        if isinstance(item.get("id"), str):
            hit = _scope(item.get("required_by"), d, _wanted(d), dflt)
            if hit is not None:
                _add(d, str(item["id"]), hit[0], hit[1])
    wanted = _wanted(d)
    for item in checks:
        if not isinstance(item.get("id"), str):
            continue
        base = item.get("required_by")
        rules = [r for r in item.get("rules") or [] if isinstance(r, dict) and isinstance(r.get("id"), str)]
        if not any(isinstance(r.get("required_by"), dict) for r in rules):
            hit = _scope(base, d, wanted, dflt)
            if hit is not None:
                _add(d, str(item["id"]), hit[0], hit[1], True)
            continue
        per_rule: dict[str, str | None] = {}
        whys: list[str] = []
        for rule in rules:
            rb = rule["required_by"] if isinstance(rule.get("required_by"), dict) else base
            hit = _scope(rb, d, wanted, dflt)
            per_rule[str(rule["id"])] = hit[0] if hit is not None else None
            if hit is not None and hit[1] not in whys:
                whys.append(hit[1])
        kinds = set(per_rule.values())
        if len(kinds) == 1 and None not in kinds:  # every rule is needed, alike: the check as a whole
            _add(d, str(item["id"]), kinds.pop() or "launch", "; ".join(whys), True)
        elif kinds - {None}:
            _add_scoped(d, str(item["id"]), per_rule, "; ".join(whys))


def _wanted(d: Derived) -> dict[str, Requirement]:
    """The features the launch needs, for an item required `{"features": [...]}`: a feature needed for some of its
    rules only (its loader admission) does not take the launch down the feature's path, so it is left out."""
    return {r.feature: r for r in d.required if not r.check and r.rules is None}


def _scope(
    rb: Any, d: Derived, wanted: Mapping[str, Requirement], defaults: Mapping[str, Any]
) -> tuple[str, str] | None:
    """(kind, why) when this launch needs an item of scope `rb` (a `required_by`), else None."""
    if not isinstance(rb, dict):
        return None
    if rb.get("launches") == "every":
        return "launch", "every SGLang launch needs it"
    if rb.get("launches") == "none":  # a rule the audit says and no launch needs (a fact not read)
        return None
    feats = rb.get("features")
    by_feature: tuple[str, str] | None = None
    if isinstance(feats, list):
        triggers = [wanted[f] for f in feats if isinstance(f, str) and f in wanted]
        if triggers:
            strongest = max(triggers, key=lambda r: _KIND_RANK.get(r.kind, 0))
            kind = "default-warn" if strongest.kind == "default-warn" else "launch"
            by_feature = kind, f"needed with {strongest.feature}"
            if kind == "launch":
                return by_feature
    # `when` beside `features` (iasan): a launch that needs one of the features or meets the conditions
    return _scope_when(rb, d, defaults) or by_feature


def _scope_when(rb: Mapping[str, Any], d: Derived, defaults: Mapping[str, Any]) -> tuple[str, str] | None:
    """(kind, why) when the launch meets the conditions of a scope's `when` (one not known counts as met)."""
    when = [c for c in rb.get("when") or [] if isinstance(c, dict)] if isinstance(rb.get("when"), list) else []
    if not when:
        return None
    values = [_cond3(c, d, defaults) for c in when]
    if any(v is False for v in values):
        return None
    text = " and ".join(describe_condition(c) for c in when)
    unknown = [c for c, v in zip(when, values, strict=True) if v is None]
    if unknown:
        facts = ", ".join(sorted({f"launch.{x}" for c in unknown for x in _launch_facts(c) if x not in d.launch}))
        return "launch", f"needed when {text}; {facts} not known, so it is required (fail closed)"
    return "launch", f"needed: the launch has {text}"


def _cond3(c: Mapping[str, Any], d: Derived, defaults: Mapping[str, Any]) -> bool | None:
    """A launch condition with a third value: None when it reads a launch fact the launch does not have."""
    if "any" in c:
        parts = [_cond3(x, d, defaults) for x in c.get("any") or [] if isinstance(x, dict)]
        if any(p is True for p in parts):
            return True
        return None if any(p is None for p in parts) else False
    if "launch" in c and "in" not in c and d.launch.get(str(c["launch"])) is None:
        return None  # (the `in` form decides an absent fact as not met: its data lists the fact's not-known value)
    return _cond(c, d, defaults)


def _launch_facts(c: Mapping[str, Any]) -> list[str]:
    if "any" in c:
        return [x for sub in c.get("any") or [] if isinstance(sub, dict) for x in _launch_facts(sub)]
    return [str(c["launch"])] if "launch" in c else []


def describe_condition(c: Mapping[str, Any]) -> str:
    """A launch condition in words: `tp > 1`, `--disable-custom-all-reduce not given`."""
    if "any" in c:
        return "(" + " or ".join(describe_condition(x) for x in c.get("any") or [] if isinstance(x, dict)) + ")"
    if "launch" in c and "in" in c:
        return f"{c['launch']} in {', '.join(str(x) for x in c.get('in') or [])}"
    if "launch" in c:
        value = c.get("value")
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        return f"{c['launch']} {c.get('op')} {shown}"
    if "flag" in c:
        return f"{c['flag']} {'given' if c.get('present') else 'not given'}"
    if "option" in c:
        return f"{c['option']} in {', '.join(str(x) for x in c.get('in') or [])}"
    if "env" in c:
        return f"{c['env']} is {' or '.join(str(x).lower() for x in c.get('in') or [])}"
    return "a condition"


def _add_scoped(d: Derived, check_id: str, per_rule: dict[str, str | None], why: str) -> None:
    """A check needed for some of its rules: merged with what an earlier call required (the stronger kind)."""
    kind = max((k for k in per_rule.values() if k is not None), key=lambda k: _KIND_RANK.get(k, 0))
    for r in d.required:
        if r.feature == check_id and r.check:
            if r.rules is None:
                return  # already needed for every rule
            for rule, k in per_rule.items():
                old = r.rules.get(rule)
                if k is not None and (old is None or _KIND_RANK.get(k, 0) > _KIND_RANK.get(old, 0)):
                    r.rules[rule] = k
            if _KIND_RANK.get(kind, 0) > _KIND_RANK.get(r.kind, 0):
                r.kind, r.why = kind, why
            return
    d.required.append(Requirement(check_id, kind, why, True, dict(per_rule)))


#: what a container of an image needs before anything in it runs (checks.json ids)
IMAGE_CHECKS = ("image-nvidia-require",)


def add_image_requirements(
    d: Derived, features: Sequence[Mapping[str, Any]], checks: Sequence[Mapping[str, Any]]
) -> None:
    """Gating an image (--image): the image exists to serve, so what every SGLang launch needs
    (`required_by: {"launches": "every"}`) is required even of a --require gate whose image command is not
    an SGLang launch, and first of all that a container of it starts on the host's driver and GPUs (its
    NVIDIA_REQUIRE_* check). Items about packages the image lacks are skipped by the engine, not refused."""
    for check in IMAGE_CHECKS:
        _add(d, check, "launch", "a container of the image must start (nvidia-container-toolkit)", True)
    if d.entrypoint is not None:
        return  # an SGLang launch: add_launch_requirements has added them
    for item, is_check in [(f, False) for f in features] + [(c, True) for c in checks]:
        rb = item.get("required_by")
        if isinstance(rb, dict) and rb.get("launches") == "every" and isinstance(item.get("id"), str):
            why = "every SGLang launch in the image needs it"
            rules = [r for r in item.get("rules") or [] if isinstance(r, dict) and isinstance(r.get("id"), str)]
            per_rule: dict[str, str | None] = {
                str(r["id"]): None if (r.get("required_by") or {}).get("launches") == "none" else "launch"
                for r in rules
            }
            if is_check and None in per_rule.values():  # a rule no launch needs (a fact not read): left out
                _add_scoped(d, str(item["id"]), per_rule, why)
            else:
                _add(d, str(item["id"]), "launch", why, is_check)


#: probes whose facts the decision reads: one that failed or timed out makes the launch unknown
DECISION_PROBES = ("nvml", "toolkits", "packages", "system")


def probe_problems(outcomes: Sequence[Mapping[str, Any]]) -> list[Problem]:
    """A probe the decision depends on that failed or timed out: its facts are unknown, and unknown refuses
    unless --allow-unknown (a failed package probe must never read as "nothing installed")."""
    out: list[Problem] = []
    for o in outcomes:
        name = str(o.get("name"))
        status = o.get("status")
        if name in DECISION_PROBES and status in ("failed", "timeout"):
            out.append(
                Problem(
                    f"probe {name}",
                    "unknown",
                    None,
                    f"the {name} probe {'timed out' if status == 'timeout' else 'failed'} ({o.get('reason')}): "
                    "the facts it reads are unknown, so the launch cannot be judged",
                )
            )
    return out


def _off_reason(conds: Any, d: Derived, defaults: Mapping[str, Any]) -> str:
    for c in conds or []:
        if isinstance(c, dict) and not _cond(c, d, defaults):
            if "flag" in c:
                return f"{c['flag']} given" if not c.get("present") else f"{c['flag']} not given"
            if "env" in c:
                return f"{c['env']} is {str(d.env.get(str(c['env']))).lower()}"
            if "launch" in c:
                return f"launch.{c['launch']} = {d.launch.get(str(c['launch']))}"
            if "option" in c:
                return f"{c['option']} = {d.options.get(str(c['option']))}"
            if "release" in c:
                where = "inside" if not c.get("inside") else "not inside"
                return f"SGLang {d.release or 'release not known'}: {where} {c['release']}"
    return "condition not met"


def installation_problems(d: Derived, sglang_state: str, where: str | None) -> list[Problem]:
    """An SGLang launch needs SGLang in the environment it runs in: absent there, the server dies at its
    first import ('No module named sglang'), so the launch is refused; not known there (a failed packages
    probe, or a wrapper script whose interpreter the gate cannot see), it is unknown (refused unless
    --allow-unknown). `sglang_state` is Context.package_state("sglang"); `where` names the environment."""
    if d.entrypoint is None or sglang_state == "installed":
        return []
    env = f" ({where})" if where else ""
    wrapper = d.entrypoint == "wrapper"
    if sglang_state == "absent" and not wrapper:
        return [
            Problem(
                "sglang",
                "blocked",
                "crash",
                f"sglang is not installed in the environment the server runs in{env}: the launch stops at its "
                "first import ('No module named sglang'); install it there, or point the gate at the right "
                "environment (--python PATH, --env DIR)",
            )
        ]
    return [
        Problem(
            "sglang",
            "unknown",
            None,
            f"sglang is not seen in the environment the gate reads{env}: "
            + ("the command is a wrapper, so the interpreter it runs is not known; " if wrapper else "")
            + "name it with --python PATH or --env DIR",
        )
    ]


#: the interpreter options that first came in Python 3.11: -P (don't prepend a potentially unsafe path to sys.path).
#: CPython 3.10's Python/getopt.c:44 SHORT_OPTS "bBc:dEhiIJm:OqRsStuvVW:xX:?" has no P, and a letter outside it is
#: "Unknown option: -%c" (its _PyOS_GetOpt), after which Py_Main prints the usage and exits 2 (Python/initconfig.c
#: config_usage); 3.11 added P (What's New in Python 3.11: the -P option and PYTHONSAFEPATH; Doc/using/cmdline.rst
#: "-P ... New in version 3.11"). Read from those sources, not run here (no 3.10 on this machine)
_PYTHON_311_OPTIONS = "P"


#: (irunner3) the sources of ionice_problems
IONICE_SOURCES = [
    {"title": "util-linux schedutils/ionice.c main (getopt_long \"+n:c:p:P:u:tVh\"; class best-effort and level 4 by "
     "default, none: level 0, idle: level 7) and ioprio_setid (ioprio_set failing: err(EXIT_FAILURE) unless -t), "
     "then execvp", "url": "https://github.com/util-linux/util-linux/blob/master/schedutils/ionice.c"},
    {"title": "Linux block/ioprio.c ioprio_check_cap before 6.5: realtime needs CAP_SYS_NICE or CAP_SYS_ADMIN "
     "(EPERM), realtime / best-effort data outside 0-7 EINVAL, a class other than 0-3 EINVAL",
     "url": "https://github.com/torvalds/linux/blob/v6.4/block/ioprio.c"},
    {"title": "Linux 6.5 (command duration limits: eca2040972b4 'scsi: block: ioprio: Clean up interface definition', "
     "01584c1e2337): the level is the data's low 3 bits, hints above it, so level 8 is taken (LTP ioprio_set03 "
     "'prio 8 should not work' fails there)", "url": "https://github.com/linux-test-project/ltp/issues/1192"},
]  # fmt: skip


def _kernel_release(facts: Any) -> tuple[int, int] | None:
    """(major, minor) of facts.system.kernel (`6.8.0-45-generic`), None where it is not read."""
    system = facts.get("system") if isinstance(facts, Mapping) else None
    kernel = system.get("kernel") if isinstance(system, Mapping) else None
    m = re.match(r"(\d{1,4})\.(\d{1,4})(?!\d)", kernel, re.ASCII) if isinstance(kernel, str) else None
    return (int(m[1]), int(m[2])) if m is not None else None


def _runner_levels(
    command: Sequence[str] | None, env: Mapping[str, str], mapping: Mapping[str, Any] | None
) -> list[list[str]]:
    """(irunner3) The words of each command on the way to the launch, as find_launch reads them (`trace["levels"]`:
    the command, then a shell string's simple command that runs the launch, ...), where `mapping` is given and the
    launch is found; else the command after its `env` prefix alone."""
    argv, prefixed = split_env_prefix(command or [], env)
    if mapping is not None and argv:
        trace: dict[str, Any] = {}
        entry = find_launch(argv, mapping, prefixed, trace)[0]
        levels = trace.get("levels")
        if entry is not None and isinstance(levels, list) and levels:
            return [list(level) for level in levels]
    return [argv]


#: capability bits (include/uapi/linux/capability.h: CAP_SYS_ADMIN 21, CAP_SYS_NICE 23)
_CAP_SYS_ADMIN, _CAP_SYS_NICE = 21, 23


#: (imend18) the programs before the launch that run their command as another user, with other capabilities, limits
#: or CPUs than the gate's own process (runners.process_limits, `here`): sudo / doas / pkexec / su / runuser / gosu /
#: su-exec / setpriv switch the user (and sudo / su / runuser open a PAM session, whose pam_limits sets the target
#: user's rlimits, RLIMIT_RTPRIO among them); systemd-run / run0 start it from the service manager (its cgroup,
#: capabilities and limits); srun from slurmstepd on a node of the job (its cpuset and task binding). A taskset,
#: chrt or ionice after one of them is judged on a process the gate did not read: unknown, never ok
_OTHER_PROCESS = frozenset({"sudo", "doas", "pkexec", "su", "runuser", "gosu", "su-exec", "setpriv", "systemd-run",
                            "run0", "srun"})  # fmt: skip


def _other_process(levels: Sequence[Sequence[str]], level: int, j: int) -> str | None:
    """The program of _OTHER_PROCESS that runs levels[level][j] (a word of an outer command, or one before it in its
    own), None where none does: the gate's process limits are then the ones the program at j inherits."""
    for k, words in enumerate(levels[: level + 1]):
        for word in words if k < level else words[:j]:
            name = os.path.basename(word)
            if name in _OTHER_PROCESS:
                return name
    return None


#: (irunner3) the sources of scheduler_problems
SCHED_SOURCES = [
    {"title": "util-linux schedutils/taskset.c (the mask or -c list, then sched_setaffinity: 'failed to set pid's "
     "affinity', exit 1) and chrt.c (-f / -r / -d ask for SCHED_FIFO / SCHED_RR (the default) / SCHED_DEADLINE; "
     "sched_setattr failing: 'failed to set pid 0's policy', exit 1); run here (util-linux 2.38.1): taskset -c 500 "
     "on a 2-CPU box exits 1, taskset -c 0,500 runs", "url": "https://github.com/util-linux/util-linux/tree/master/"
     "schedutils"},
    {"title": "sched_setaffinity(2): EINVAL where the mask holds no CPU physically on the system and permitted to the "
     "thread (cpuset); sched_setscheduler(2) / sched(7): a real-time policy needs CAP_SYS_NICE or a RLIMIT_RTPRIO at "
     "least the priority; SCHED_DEADLINE needs CAP_SYS_NICE",
     "url": "https://man7.org/linux/man-pages/man2/sched_setaffinity.2.html"},
]  # fmt: skip
_TASKSET_PIECE = re.compile(r"(\d{1,5})(?:-(\d{1,5})(?::(\d{1,5}))?)?", re.ASCII)


def _taskset_cpus(options: Sequence[tuple[str, str | None]], value: str) -> frozenset[int] | None:
    """The CPUs a taskset MASK or -c list names (util-linux lib/cpuset.c cpulist_parse: N, N-M, N-M:STRIDE), None
    where not read."""
    if any(name in ("c", "cpu-list") for name, _ in options):
        cpus: set[int] = set()
        for piece in value.split(","):
            m = _TASKSET_PIECE.fullmatch(piece)
            if m is None:
                return None
            first = int(m[1])
            last = int(m[2]) if m[2] is not None else first
            step = int(m[3]) if m[3] is not None else 1
            if last < first or step < 1:
                return None
            cpus.update(range(first, last + 1, step))
        return frozenset(cpus)
    digits = value.lower().removeprefix("0x")
    if not re.fullmatch(r"[0-9a-f]{1,64}", digits):
        return None
    number = int(digits, 16)
    return frozenset(k for k in range(number.bit_length()) if number >> k & 1)


def scheduler_problems(
    command: Sequence[str] | None,
    env: Mapping[str, str],
    here: Mapping[str, Any] | None,
    mapping: Mapping[str, Any] | None = None,
) -> list[Problem]:
    """(irunner3) A taskset or chrt before the launch that the kernel refuses for the process that runs it (the
    program exits 1 before running the command). `here`: process_limits() where the launch runs on this host as the
    gate's process (None: --facts, --image, --root, whose facts hold neither the CPUs a process may run on nor its
    user): taskset whose CPUs are none of those the process may run on is blocked (sched_setaffinity EINVAL), and
    unknown without `here`; chrt's SCHED_FIFO / SCHED_RR (its default) with neither CAP_SYS_NICE nor a RLIMIT_RTPRIO
    at least the priority, or SCHED_DEADLINE without CAP_SYS_NICE, is blocked (EPERM), unknown without `here`; chrt
    -e / --ext (SCHED_EXT, util-linux 2.42 and Linux 6.12 with a BPF scheduler; an older chrt refuses the option) is
    unknown."""
    from stackcheck.launch.runners import read_runner, runner_options

    levels = _runner_levels(command, env, mapping)
    sites = [(n, j) for n, argv in enumerate(levels) for p in ("taskset", "chrt") for j in _before_python(argv, p)]
    for n, j in sorted(sites, key=lambda site: site[1]):
        argv = levels[n]
        prog = os.path.basename(argv[j])
        options = runner_options(argv, j)
        at = read_runner(argv, j).command
        if options is None or at is None or at < 1:
            continue
        value = argv[at - 1]
        other = _other_process(levels, n, j)
        limits = here if other is None else None
        unread = ("the facts do not say which user runs the launch" if other is None else f"`{other}` runs it as a "
                  "process the gate did not read (another user, its limits or cgroup)")  # fmt: skip
        if prog == "taskset":
            cpus = _taskset_cpus(options, value)
            allowed = limits.get("cpus") if limits is not None else None
            if cpus is None or not isinstance(allowed, frozenset):
                where = ("the CPUs the launch may run on (its cpuset and the online CPUs) are not in the facts"
                         if other is None else f"`{other}` runs it as a process whose CPUs the gate did not "
                         "read")  # fmt: skip
                return [Problem("taskset", "unknown", None, f"`taskset {value[:40]}` before the launch: {where}, and "
                                "taskset exits 1 where the list holds none of them (fail closed)",
                                SCHED_SOURCES)]  # fmt: skip
            if not cpus & allowed:
                shown = ",".join(str(c) for c in sorted(allowed)[:16])
                return [Problem("taskset", "blocked", "crash", f"`taskset {value[:40]}` before the launch names none "
                                f"of the CPUs this process may run on ({shown}): sched_setaffinity fails (EINVAL) and "
                                "taskset exits 1 before it runs the command", SCHED_SOURCES,
                                observed=f"CPUs {value[:40]}", required=f"one of CPUs {shown}")]  # fmt: skip
            continue
        names = [name for name, _ in options]
        policy = next((n for n in reversed(names) if n in ("f", "r", "o", "b", "i", "d", "e", "fifo", "rr", "other",
                                                             "batch", "idle", "deadline", "ext")), "r")  # fmt: skip
        policy = policy[0] if policy != "ext" else "e"
        if policy == "e":
            return [Problem("chrt", "unknown", None, "`chrt -e` / `--ext` before the launch asks for SCHED_EXT: a chrt "
                            "before util-linux 2.42 (util-linux#3573) refuses the option and a kernel without "
                            "sched_ext (Linux 6.12+) the policy, neither read here (fail closed)",
                            SCHED_SOURCES)]  # fmt: skip
        if policy not in ("f", "r", "d"):
            continue
        priority = int(value) if value.isascii() and value.isdigit() and len(value) <= 3 else None
        what = {"f": "SCHED_FIFO", "r": "SCHED_RR", "d": "SCHED_DEADLINE"}[policy]
        cap = limits.get("cap_eff") if limits is not None else None
        if not isinstance(cap, int):
            return [Problem("chrt", "unknown", None, f"`chrt` before the launch asks for {what}, which the kernel "
                            "gives only a process with CAP_SYS_NICE (or, for FIFO / RR, a RLIMIT_RTPRIO at least the "
                            f"priority); {unread} (fail closed)", SCHED_SOURCES)]  # fmt: skip
        if cap >> _CAP_SYS_NICE & 1:
            continue
        rtprio = limits.get("rtprio") if limits is not None else None
        if policy != "d" and isinstance(rtprio, int) and priority is not None and (rtprio == -1 or rtprio >= priority):
            continue
        return [Problem("chrt", "blocked", "crash", f"`chrt` before the launch asks for {what} at priority "
                        f"{value[:20]}: this process has no CAP_SYS_NICE and its RLIMIT_RTPRIO is {rtprio}, so the "
                        "kernel refuses it (EPERM) and chrt exits 1 before it runs the command", SCHED_SOURCES,
                        observed=f"RLIMIT_RTPRIO {rtprio}, no CAP_SYS_NICE",
                        required="CAP_SYS_NICE or RLIMIT_RTPRIO >= the priority")]  # fmt: skip
    return []


def _before_python(argv: Sequence[str], program: str) -> list[int]:
    """The indices of the words named `program` before the first Python interpreter's word of `argv`."""
    out: list[int] = []
    for j, word in enumerate(argv):
        name = os.path.basename(word)
        if _PYTHON.match(name):
            break
        if name == program:
            out.append(j)
    return out


def ionice_problems(
    command: Sequence[str] | None,
    env: Mapping[str, str],
    facts: Any,
    here: Mapping[str, Any] | None = None,
    mapping: Mapping[str, Any] | None = None,
) -> list[Problem]:
    """(irunner3) An ionice before the launch whose ioprio_set the kernel refuses: ionice exits 1 ("ioprio_set
    failed") before it runs the command, unless -t. A class above 3 is refused before (runners._ionice_refused, by
    read_runner: never read here); a realtime or best-effort level outside 0-7 by a kernel before 6.5 (EINVAL:
    blocked), taken by 6.5 and later for 8-15 (the low three bits are the level, a note says so), not read past 15 or
    below 0 there (unknown); the kernel not read: unknown. The realtime class needs CAP_SYS_NICE or CAP_SYS_ADMIN
    (EPERM otherwise), judged on `here` (runners.process_limits) where no program before it runs it as another
    process (_other_process, imend18), else unknown. Each ionice of the line before its command is read
    (runners.read_ionice)."""
    from stackcheck.launch.runners import read_ionice

    out: list[Problem] = []
    kernel = _kernel_release(facts)
    levels = _runner_levels(command, env, mapping)
    sites = [(n, j) for n, argv in enumerate(levels) for j in _before_python(argv, "ionice")]
    for n, j in sites:
        argv = levels[n]
        reading = read_ionice(argv, j)
        if reading is None or reading.tolerant:
            continue
        cls, data = reading.ioclass, reading.data
        observed = f"ionice class {cls}, level {data}"
        # (a class above 3 without -t never reaches here: runners._ionice_refused refuses it first, read_runner
        # places no command and read_ionice answers None; the launch is judged unknown there, imend18)
        if not 0 <= data <= 7:
            if kernel is None:
                out.append(Problem("ionice", "unknown", None, f"`ionice` before the launch asks for I/O level {data}, "
                                   "which a Linux kernel before 6.5 refuses (EINVAL: ionice exits 1 before the "
                                   "command runs) and 6.5 and later take as level "
                                   f"{data & 7} with a hint; the kernel is not read (system.kernel)",
                                   IONICE_SOURCES, observed=observed, required="level 0-7"))  # fmt: skip
            elif kernel < (6, 5):
                out.append(Problem("ionice", "blocked", "crash", f"`ionice` before the launch asks for I/O level "
                                   f"{data}, which Linux {kernel[0]}.{kernel[1]} refuses (ioprio_set EINVAL: levels "
                                   "0-7 before 6.5): ionice exits 1 with 'ioprio_set failed' before it runs the "
                                   "command; give -n 0-7 (or -t to go on without it)",
                                   IONICE_SOURCES, observed=observed, required="level 0-7"))  # fmt: skip
            elif 8 <= data <= 15:
                out.append(Problem("ionice", "note", None, f"`ionice` before the launch asks for I/O level {data}: "
                                   f"Linux {kernel[0]}.{kernel[1]} takes it as level {data & 7} with a "
                                   "command-duration-limit hint (6.5 and later), not as a lower priority",
                                   IONICE_SOURCES))  # fmt: skip
            else:
                out.append(Problem("ionice", "unknown", None, f"`ionice` before the launch asks for I/O level {data}: "
                                   "whether Linux 6.5 and later take its hint bits is not read (fail closed)",
                                   IONICE_SOURCES, observed=observed, required="level 0-7"))  # fmt: skip
            continue
        other = _other_process(levels, n, j) if cls == 1 else None
        limits = here if other is None else None
        if cls == 1 and limits is not None and isinstance(limits.get("cap_eff"), int):
            if not limits["cap_eff"] >> _CAP_SYS_NICE & 1 and not limits["cap_eff"] >> _CAP_SYS_ADMIN & 1:
                out.append(Problem("ionice", "blocked", "crash", "`ionice` before the launch asks for the realtime I/O "
                                   "class, which the kernel gives only a process with CAP_SYS_NICE or CAP_SYS_ADMIN: "
                                   "this one has neither (CapEff), so ioprio_set fails (EPERM) and ionice exits 1 "
                                   "before it runs the command", IONICE_SOURCES, observed=observed,
                                   required="CAP_SYS_NICE or CAP_SYS_ADMIN"))  # fmt: skip
        elif cls == 1:
            out.append(Problem("ionice", "unknown", None, "`ionice` before the launch asks for the realtime I/O class, "
                               "which the kernel gives only a process with CAP_SYS_NICE or CAP_SYS_ADMIN (else "
                               "ioprio_set EPERM: ionice exits 1 before it runs the command); "
                               + ("the facts do not say which user runs the launch" if other is None else
                                  f"`{other}` runs it as a process the gate did not read (another user, its "
                                  "capabilities)") + " (fail closed)", IONICE_SOURCES,
                               observed=observed, required="root, CAP_SYS_NICE or CAP_SYS_ADMIN"))  # fmt: skip
    return out[:1]


def interpreter_option_problems(command: Sequence[str] | None, env: Mapping[str, str], facts: Any) -> list[Problem]:
    """A gated `python -P ...` on a Python older than 3.11 (igap42, issue 16): that interpreter stops at its own
    argument parsing ("Unknown option: -P", exit 2) before SGLang is imported, blocked; unknown where the audited
    interpreter's version (facts.python.version, the one ProbeContext.launch_sys_path0 reads) is not read. Nothing for
    a command that is no plain Python interpreter (a console script, a wrapper: python_option_letters None)."""
    from stackcheck.assembly.target import python_option_letters

    letters = python_option_letters(command or [], env)
    late = sorted({c for c in letters or "" if c in _PYTHON_311_OPTIONS})
    if not late:
        return []
    python = facts.get("python") if isinstance(facts, Mapping) else None
    version = str(python.get("version") or "") if isinstance(python, Mapping) else ""
    parts = version.split(".")
    options = ", ".join(f"-{c}" for c in late)
    if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
        return [
            Problem(
                options,
                "unknown",
                None,
                f"the command gives its Python {options}, an option of Python 3.11 and later, and the interpreter's "
                "version is not read (an older one exits with 'Unknown option')",
            )
        ]
    if (int(parts[0]), int(parts[1])) >= (3, 11):
        return []
    return [
        Problem(
            options,
            "blocked",
            "crash",
            f"the command gives its Python {options}, which Python {version[:20]} does not have (it came in 3.11): "
            f"the interpreter exits with 'Unknown option: {options}' and its usage before SGLang starts; drop it "
            "(PYTHONSAFEPATH is ignored before 3.11 too) or run Python 3.11 or later",
            {
                "title": "CPython 3.10 Python/getopt.c:44 (SHORT_OPTS without P); -P is new in 3.11",
                "url": "https://github.com/python/cpython/blob/3.10/Python/getopt.c#L44",
            },
            observed=f"Python {version[:20]}",
            required="Python 3.11 or later",
        )
    ]


def release_problems(
    d: Derived, mapping: Mapping[str, Any], sglang_version: str | None, declared: Mapping[str, Any] | None = None
) -> list[Problem]:
    """Flags the installed SGLang release does not have (blocked) or that no release entry covers (unknown).
    `declared`: for a release newer than the data, the flags read from its own server arguments (the facts
    section derived.sglang.flags): presence is then read, not taken from launch.json's ranges."""
    if sglang_version is None:
        return []
    from stackcheck.facts.versions import version_in

    out: list[Problem] = []
    for o in _options(mapping):
        flag = str(o["flag"])
        releases = [r for r in o.get("releases") or [] if isinstance(r, dict)]
        if declared is not None and flag in d.options:
            if flag not in set(declared.get("declared") or []):
                out.append(
                    Problem(
                        flag,
                        "blocked",
                        "crash",
                        f"SGLang {sglang_version} (newer than the data) declares no {flag} in its server arguments: "
                        "the server exits with 'unrecognized arguments'",
                        {
                            "title": f"sglang {sglang_version} installed, "
                            + ", ".join(declared.get("files") or [])[:200],
                            "url": f"https://pypi.org/project/sglang/{sglang_version.split('+', 1)[0]}/",
                        },
                    )
                )
            continue
        if flag not in d.options or not releases:
            continue
        hit = next((r for r in releases if version_in(sglang_version, str(r.get("versions"))) is True), None)
        if hit is None:
            out.append(
                Problem(
                    flag,
                    "unknown",
                    None,
                    f"the manifests do not say whether SGLang {sglang_version} has {flag}",
                    o.get("source"),
                )
            )
        elif not hit.get("present"):
            out.append(
                Problem(
                    flag,
                    "blocked",
                    "crash",
                    f"SGLang {sglang_version} has no {flag} (releases {hit.get('versions')}): the server exits "
                    "with 'unrecognized arguments'",
                    hit.get("source"),
                )
            )
    return out


def _positions(releases: list[str]) -> dict[str, int]:
    """Each listed release's first place in `releases` (what releases.index gives), looked up in constant time."""
    pos: dict[str, int] = {}
    for i, release in enumerate(releases):
        pos.setdefault(release, i)
    return pos


def _in_runs(version: str, releases: list[str], spans: Any, pos: Mapping[str, int] | None = None) -> bool:
    """Whether `version` lies in one of the runs ("FIRST-LAST" or one release) of the listed releases. `pos`:
    _positions(releases), when the caller asks for many flags' runs of the same releases."""
    pos = _positions(releases) if pos is None else pos
    at = pos.get(version)
    if at is None:
        return False
    for span in spans if isinstance(spans, list) else []:
        first, _, last = str(span).partition("-")
        lo, hi = pos.get(first), pos.get(last or first)
        if lo is not None and hi is not None and lo <= at <= hi:
            return True
    return False


#: the tokens argparse takes for negative numbers, so for arguments though they start with '-' (its
#: _negative_number_matcher as Python 3.10-3.11 have it; SGLang declares no option that looks like a negative
#: number). Later interpreters take more: underscores (cpython gh-123945, 3.12/3.13 backports) and from 3.14
#: scientific notation (gh-155339): there '--x -2.5e-6' gives a value, which this reading calls missing (a usage
#: error for a listed flag, a refusal for a choice flag: never a value made up)
_NEGATIVE = re.compile(r"^-\d+$|^-\d*\.\d+$")


def _is_argument(tok: str) -> bool:
    """Whether SGLang's argparse takes the token `tok` as an argument (a value), never as an option: it does not
    start with '-', is '-' alone, is a negative number, or has a space before any '=' (argparse's _parse_optional).
    '--' is neither: it ends the options."""
    if not tok.startswith("-") or tok == "-":
        return True
    return tok != "--" and (bool(_NEGATIVE.match(tok)) or " " in tok.partition("=")[0])


def _option_tokens(args: Sequence[str]) -> Iterator[tuple[int, str, str, str]]:
    """The tokens of an SGLang command line that argparse takes as long options, before '--' (after it every token
    is an argument): (place, name, "=" or "", the value after '=')."""
    for i, tok in enumerate(args):
        if tok == "--":
            return
        if tok.startswith("--") and not _is_argument(tok):
            name, eq, inline = tok.partition("=")
            if len(name) > 2:
                yield i, name, eq, inline


def _tokens(args: Sequence[str]) -> tuple[tuple[int, str, str, str], ...]:
    """_option_tokens of `args`, kept for the last command line read: the refusals ask the reader about a dozen
    flags of the same command for each of their ~60 rules (the parent's readers walked it each time too)."""
    key = tuple(args)
    kept = _TOKENS_KEPT
    if kept and kept[0] == key:
        got: tuple[tuple[int, str, str, str], ...] = kept[1]
        return got
    got = tuple(_option_tokens(key))
    _TOKENS_KEPT[:] = [key, got]
    return got


#: _tokens' last reading: [the command line as a tuple, its option tokens]
_TOKENS_KEPT: list[Any] = []


def _values_at(args: Sequence[str], i: int, eq: str, inline: str, many: bool = False) -> list[str | None]:
    """The values argparse gives the option at `i` (an _option_tokens entry): the text after '=' (one value, either
    way); else the next token when argparse takes it as an argument (_is_argument), [None] where none follows
    (argparse then exits with 'expected one argument', or the flag takes none); with `many` (nargs='*') every such
    token up to the next option or '--', none at all allowed ([])."""
    if eq:
        return [inline]
    j = i + 1
    while j < len(args) and (many or j == i + 1) and _is_argument(args[j]):
        j += 1
    return list(args[i + 1 : j]) if j > i + 1 or many else [None]


def _spelt(name: str, spellings: Collection[str], flags: Collection[str] | None, abbreviations: bool = True) -> bool:
    """Whether argparse reads the option `name` as the one spelt `spellings` (its flag and aliases): one of them,
    or (allow_abbrev, argparse's default, which SGLang keeps) a prefix of one that is no flag of its own. `flags`:
    the names that are flags of their own (reading_flags); None: not known, so any prefix is read. A prefix several
    flags share makes SGLang exit as ambiguous, which the gate refuses on its own (undeclared_problems), so reading
    it as this option passes no launch. `abbreviations` False: only the full spellings."""
    if name in spellings:
        return True
    if not abbreviations or (flags is not None and name in flags):
        return False
    return any(s.startswith(name) for s in spellings)


def option_values(
    args: Sequence[str],
    spellings: Collection[str],
    flags: Collection[str] | None,
    abbreviations: bool = True,
    many: bool = False,
) -> list[str | None]:
    """The one reader of an SGLang command line's options, as its argparse reads them: each occurrence of the option
    spelt `spellings` (its flag and every alias; abbreviated as _spelt allows), in command-line order, before
    '--': its value (`--flag=value`, or `--flag value` when argparse takes the next token as an argument:
    _is_argument), None where none follows (a flag that takes none, or argparse's 'expected one argument').
    argparse checks each occurrence's choices as it meets it; for a store action the last one wins
    (option_value). `many`: an option of nargs='*', each occurrence's values in turn (`--flag=value` one, else
    every argument up to the next option or '--'; an occurrence with none adds nothing, and nothing is None)."""
    return [v for i, name, eq, inline in _tokens(args) if _spelt(name, spellings, flags, abbreviations)
            for v in _values_at(args, i, eq, inline, many)]  # fmt: skip


def option_value(
    args: Sequence[str], spellings: Collection[str], flags: Collection[str] | None, abbreviations: bool = True
) -> str | None:
    """The value argparse keeps for a store option (the last occurrence wins); None: not given, or its last
    occurrence has no value (argparse exits)."""
    values = option_values(args, spellings, flags, abbreviations)
    return values[-1] if values else None


def option_given(
    args: Sequence[str], spellings: Collection[str], flags: Collection[str] | None, abbreviations: bool = True
) -> bool:
    """Whether the command gives the option spelt `spellings` at all (as option_values reads it)."""
    return any(_spelt(name, spellings, flags, abbreviations) for _, name, _, _ in _tokens(args))


def reading_flags(mapping: Mapping[str, Any], version: str | None) -> set[str]:
    """The names the readers above take as flags of their own, never as abbreviations: the flags the installed
    release declares (launch.json release_flags), or where they are not known (a release the data does not list,
    a local build, no release) every flag some listed release declares, so that a name which is a flag anywhere
    is not read as another's abbreviation (0.5.2's --speculative-draft-model is not
    --speculative-draft-model-quantization). Each caller gets its own copy."""
    declared = _declared_in(mapping, version) if version is not None else None
    if declared is not None:
        return declared
    table = mapping.get("release_flags")
    if not isinstance(table, dict):
        return set()
    parts = (table, table.get("builtin"), table.get("flags"))
    kept = _ANY_KEPT
    if not (kept and all(a is b for a, b in zip(kept[0], parts, strict=True))):
        names = frozenset([*(str(b) for b in table.get("builtin") or []), *(str(f) for f in table.get("flags") or {})])
        _ANY_KEPT[:] = [parts, names]
    return set(_ANY_KEPT[1])


#: reading_flags' last union: [(the table and its two parts, as objects), the flags]
_ANY_KEPT: list[Any] = []


def _int_or_none(value: str) -> int | None:
    """`value` as argparse's type=int reads it (Python's int()), None where that raises."""
    try:
        return int(value)
    except ValueError:
        return None


def _int_offered(offered: Sequence[str]) -> Callable[[str], bool]:
    """Whether a value, read as an integer, is one of `offered` (a release_choices run of a `type` int spec)."""
    numbers = {_int_or_none(c) for c in offered} - {None}
    return lambda v: _int_or_none(v) in numbers


def _declared_in(mapping: Mapping[str, Any], version: str) -> set[str] | None:
    """Every flag SGLang `version` declares, from launch.json's release_flags (None when the release is not one
    of its releases: a release between two listed ones is not taken as covered). ~630 flags' runs (~0.35 ms on
    the 2-core box), which a gate asks for up to four times for the same release: own_spellings,
    own_flag_problems (only with an own spelling), undeclared_problems and its refusal rules
    (refusals.refusal_problems, once for all of them). Read once (_declared_reading) and kept for the last table
    and release asked about; each caller gets its own copy."""
    table = mapping.get("release_flags")
    if not isinstance(table, dict):
        return None
    parts = (table, table.get("releases"), table.get("builtin"), table.get("flags"))
    kept = _DECLARED_KEPT
    if kept and kept[1] == version and all(a is b for a, b in zip(kept[0], parts, strict=True)):
        names = kept[2]
    else:
        names = _declared_reading(table, version)
        _DECLARED_KEPT[:] = [parts, version, names]
    return None if names is None else set(names)


#: _declared_in's last reading: [(the table and its three parts, as objects), the release, the flags or None]
_DECLARED_KEPT: list[Any] = []


def _declared_reading(table: Mapping[str, Any], version: str) -> frozenset[str] | None:
    """_declared_in's reading of a release_flags table."""
    releases = [str(r) for r in table.get("releases") or []]
    pos = _positions(releases)
    if version not in pos:
        return None
    out = {str(b) for b in table.get("builtin") or []}
    flags = table.get("flags") or {}
    out.update(str(flag) for flag, spans in flags.items() if _in_runs(version, releases, spans, pos))
    return frozenset(out)


def own_spellings(
    d: Derived, mapping: Mapping[str, Any], sglang_version: str | None, declared: Mapping[str, Any] | None = None
) -> set[str]:
    """The names of the command that derive read as abbreviations of a flag launch.json lists but that the
    installed release reads as flags of their own (SGLang 0.5.3's --nsa-decode and --nsa-prefill, where the listed
    --nsa-decode-backend and --nsa-prefill-backend exist from 0.5.4 only): argparse matches an exact flag before any
    prefix, and abbreviations among the release's declared flags only (0.5.3 reads --nsa-deco as --nsa-decode), so
    the command is to be derived again with them as the release's own (derive's `own`).
    `declared`: for a release newer than the data, the flags read from its own server arguments."""
    if sglang_version is None or d.entrypoint is None:
        return set()
    names = (
        {str(n) for n in declared.get("declared") or []}
        if declared is not None
        else _declared_in(mapping, sglang_version) or set()
    )
    listed = {n for o in _options(mapping) for n in _names(o)}
    out: set[str] = set()
    for _, name, _, _ in _tokens(d.sglang_args):
        if name in listed:
            continue
        took = {n for n in listed if n.startswith(name)}  # what derive read it as (one listed flag's names)
        if took and (name in names or (any(n.startswith(name) for n in names) and not took & names)):
            out.add(name)  # exactly a flag of the release, or an abbreviation of the release's flags, not of took
    return out


def own_flag_problems(
    d: Derived, mapping: Mapping[str, Any], sglang_version: str | None, own: Collection[str]
) -> list[Problem]:
    """A value outside the choices of a release's own flag (own_spellings: SGLang 0.5.3's --nsa-decode and
    --nsa-prefill, launch.json own_flag_choices) ends the launch with argparse's 'invalid choice' (blocked)."""
    if sglang_version is None or not own:
        return []
    from stackcheck.facts.versions import version_in

    names = _declared_in(mapping, sglang_version) or set()
    out: list[Problem] = []
    args = d.sglang_args
    for i, name, eq, inline in _tokens(args):
        if name not in own:
            continue
        hits = [name] if name in names else sorted(n for n in names if n.startswith(name))
        value = _values_at(args, i, eq, inline)[0]
        for spec in mapping.get("own_flag_choices") or []:
            if not isinstance(spec, dict) or hits != [spec.get("flag")]:
                continue
            if version_in(sglang_version, str(spec.get("versions") or "")) is not True:
                continue
            choices = [str(c) for c in spec.get("choices") or []]
            if value is None:  # a choice flag takes one value: argparse exits with 'expected one argument'
                out.append(
                    Problem(
                        name,
                        "blocked",
                        "crash",
                        f"SGLang {sglang_version} reads {name} as its own {spec['flag']}, which takes one value: none "
                        "follows it here, and the server exits at once with 'expected one argument' (exit status 2)",
                        spec.get("source"),
                        None,
                        ", ".join(choices),
                    )
                )
            elif value not in choices:
                out.append(
                    Problem(
                        name,
                        "blocked",
                        "crash",
                        f"SGLang {sglang_version} reads {name} as its own {spec['flag']}, whose choices are "
                        f"{', '.join(choices)}: {value!r} ends the launch with 'invalid choice' (exit status 2)",
                        spec.get("source"),
                        value,
                        ", ".join(choices),
                    )
                )
    return out


def release_choice_problems(d: Derived, mapping: Mapping[str, Any], sglang_version: str | None) -> list[Problem]:
    """A value of a listed choice flag that the installed release's parser does not offer (launch.json
    release_choices: each listed choice flag's list per run of releases, read from the wheels) ends the launch
    with argparse's 'invalid choice' (exit status 2): blocked; from the releases whose launcher loads plugins first
    (release_flags `plugins`), which may extend the list, unknown, unless the spec says no plugin extends it
    (`plugins_extend` false). Only values the option's choices know are judged here (any
    other is parse_flags' unknown), and only releases a run names (a newer one is not guessed). A flag no option
    lists (--moe-a2a-backend, which the refusals read raw), or one listed without choices, is read as argparse
    takes it, its known values the union of the spec's runs and its `known` values; a spec with `every_value`
    (its runs name every value the release's parser accepts) judges any value, a misspelt one included.
    Only the specs whose flags the command line names (in full or abbreviated) look up their run."""
    if sglang_version is None or d.entrypoint != "launch-server" or not mapping.get("release_choices"):
        return []
    names = {name for _, name, _, _ in _tokens(d.sglang_args)}
    table: Mapping[str, Any] = mapping["release_flags"] if isinstance(mapping.get("release_flags"), dict) else {}
    releases = [str(r) for r in table.get("releases") or []]
    pos = _positions(releases)
    # a local build (0.5.11+cu128) runs its public release's launcher, which loads plugins from 0.5.11 on
    may_plugin = _in_runs(sglang_version.partition("+")[0], releases, table.get("plugins"), pos)
    starts = tuple(names)
    by_flag = {str(o["flag"]): o for o in _options(mapping)}
    flags: list[set[str]] = []  # the names that are flags of their own, read once when a flag is met
    out: list[Problem] = []
    for spec in mapping.get("release_choices") or []:
        if not isinstance(spec, dict):
            continue
        runs = spec.get("runs")
        run: Mapping[str, Any] | None = None
        for flag in [str(f) for f in spec.get("flags") or []]:
            option = by_flag.get(flag)
            if option is not None:  # derive read it (in full, abbreviated or by an alias): its last value
                last = d.options.get(flag)
                if not isinstance(last, str):
                    continue
                spellings = _names(option)
            elif not flag.startswith(starts):  # not on the command line, not even abbreviated
                continue
            else:
                last, spellings = None, [flag]
            if not flags:
                # a release release_flags does not list (0.5.9+cu128): its flags are not known, so a shorter
                # name that is a flag of any listed release (--log-requests, --speculative-draft-model) is not
                # read as an abbreviation of this one (reading_flags)
                flags.append(reading_flags(mapping, sglang_version))
            # argparse checks the choices of each occurrence as it meets it (the last one only wins when every
            # one is offered): `--dtype bf16 --dtype bfloat16` exits at the first
            # (nargs='*': zero or more values each time, never 'expected one argument')
            occurrences = option_values(d.sglang_args, spellings, flags[0], many=spec.get("nargs") == "*")
            values = [v for v in dict.fromkeys(occurrences) if v is not None]
            if isinstance(last, str) and last not in values:
                values.append(last)
            if not occurrences and not values:
                continue
            if run is None:
                run = _choice_run(sglang_version, runs, pos)
                if run is None:
                    break
            offered = [str(c) for c in run.get("choices") or []]
            if None in occurrences:  # a choice flag of this release takes one value: none follows it here
                message = (
                    f"{flag} is given without a value (the end of the command, or another option, follows it): "
                    "the server exits at once with 'expected one argument' (exit status 2)"
                )
                out.append(Problem(flag, "blocked", "crash", message, run.get("source"), None, ", ".join(offered)))
                continue
            number = spec.get("type") == "int"  # argparse converts with int() first, then looks the number up
            takes = _int_offered(offered) if number else offered.__contains__
            if all(takes(v) for v in values):
                continue
            known = _choices(option, by_flag) if option is not None else None
            if known is None:  # no option lists it (--moe-a2a-backend) or lists no choices: the runs' union
                known = {str(c): [] for r in runs or [] if isinstance(r, dict) for c in r.get("choices") or []}
                known.update({str(c): [] for c in spec.get("known") or []})  # judged, offered by no run
            # argparse compares a value with the choices exactly: a known choice in another case ('FA3' for 'fa3')
            # is not offered, whatever the run lists besides
            folded = {c.casefold(): c for c in offered} if not number else {}
            judged = [
                v
                for v in values
                if not takes(v) and (v in known or spec.get("every_value") is True or v.casefold() in folded)
            ]
            if not judged:
                continue
            value = judged[0]
            text = f"SGLang {sglang_version} does not offer {value!r} among the choices of {flag}"
            if value.casefold() in folded:
                text += f" (argparse compares choices exactly, case included: {folded[value.casefold()]!r} is offered)"
            if number and _int_or_none(value) is None:
                text = f"SGLang {sglang_version} reads {flag} as an integer, and {value!r} is none"
            if may_plugin and spec.get("plugins_extend", True):
                message = (
                    f"{text}: unless an installed SGLang plugin adds it (this release loads plugins before it reads "
                    "the command line), the server exits at once with 'invalid choice' (exit status 2)"
                )
                sources = [*_as_list(run.get("source")), *_as_list(table.get("plugins_source"))]
                out.append(Problem(flag, "unknown", None, message, sources, value, ", ".join(offered)))
                continue
            message = f"{text}: the server exits at once with 'invalid choice' (exit status 2)"
            out.append(Problem(flag, "blocked", "crash", message, run.get("source"), value, ", ".join(offered)))
    return out + typed_value_problems(d, mapping, sglang_version, {p.subject for p in out})


def _typed_index(table: Mapping[str, Any]) -> tuple[list[str], list[int], list[tuple[str, dict[str, Any]]]]:
    """release_types' entries by name, for prefix look-ups: (every name sorted, the entry of each, the entries
    as (flag, entry)). Built once for the last table read (~320 entries; a look-up is a bisection per name of the
    command rather than a prefix test per entry)."""
    kept = _TYPED_KEPT
    if kept and kept[0] is table:
        got: tuple[list[str], list[int], list[tuple[str, dict[str, Any]]]] = kept[1]
        return got
    entries: list[tuple[str, dict[str, Any]]] = []
    pairs: list[tuple[str, int]] = []
    for flag, listed in (table.get("flags") or {}).items():
        for entry in listed if isinstance(listed, list) else []:
            if isinstance(entry, dict):
                for name in entry.get("names") or [flag]:
                    pairs.append((str(name), len(entries)))
                entries.append((str(flag), entry))
    pairs.sort()
    got = ([n for n, _ in pairs], [i for _, i in pairs], entries)
    _TYPED_KEPT[:] = [table, got]
    return got


#: _typed_index's last index: [the release_types table, its index]
_TYPED_KEPT: list[Any] = []


def _converts(kind: str, value: str) -> bool | None:
    """Whether argparse's type=int or type=float (Python's int() and float()) takes `value`: int() takes an
    optional sign, decimal digits (any script's), underscores between digits and surrounding whitespace, never
    '2.5' or '1e3'; float() also takes '1e3', 'inf' and 'nan'. None where this Python's answer may not be the
    server's: int()'s limit on the digits of a string (4300 from 3.11 and 3.10.7; none before)."""
    try:
        (int if kind == "int" else float)(value)
    except ValueError as exc:
        return None if "limit" in str(exc) else False
    return True


def typed_value_problems(
    d: Derived, mapping: Mapping[str, Any], sglang_version: str | None, judged: Collection[str] = ()
) -> list[Problem]:
    """A value that the installed release's parser converts with type=int or type=float (launch.json
    release_types, read from the wheels by tools/sglang_types.py) and that int() or float() rejects (`--tp 2.5`,
    `--ep-size abc`, `--mem-fraction-static 0.8x`) ends the launch with argparse's 'invalid int value' / 'invalid
    float value' (exit status 2): blocked. Each occurrence is converted as argparse meets it (nargs '+' and '*':
    each value). Only releases release_types lists (a local build, 0.5.9+cu128, is its public release); flags
    `judged` already names (release_choice_problems' int choices) are left to it. SGLang offers plugins no way to
    change a declared flag's type, so a release that loads plugins first is judged the same."""
    table = mapping.get("release_types")
    if sglang_version is None or d.entrypoint != "launch-server" or not isinstance(table, dict):
        return []
    tokens = _tokens(d.sglang_args)
    if not tokens:
        return []
    releases = [str(r) for r in table.get("releases") or []]
    pos = _positions(releases)
    version = sglang_version.partition("+")[0]
    if version not in pos:
        return []
    index = _typed_index(table)
    hit: dict[int, tuple[str, dict[str, Any]]] = {}  # the entries a name of the command spells, in full or abbreviated
    for _, name, _, _ in tokens:
        at = bisect.bisect_left(index[0], name)
        while at < len(index[0]) and index[0][at].startswith(name):
            hit.setdefault(index[1][at], index[2][index[1][at]])
            at += 1
    flags: set[str] | None = None
    out: list[Problem] = []
    for _, (flag, entry) in sorted(hit.items()):
        names = [str(n) for n in entry.get("names") or [flag]]
        if judged and set(names) & set(judged):
            continue
        if not _in_runs(version, releases, entry.get("releases"), pos):
            continue
        if flags is None:
            flags = reading_flags(mapping, version)
        many = entry.get("nargs") not in (None, "?")
        kind = str(entry.get("type"))
        for given in option_values(d.sglang_args, names, flags, many=many):
            if given is None:
                continue  # no value: another check's (argparse's 'expected one argument')
            if d.shell_string and _EXPANSION.search(given):  # (the shell's to expand: unknown, never 'invalid')
                if not any(p.subject == flag for p in d.problems):  # (parse_flags said it of a listed flag)
                    message = f"{flag} {given[:80]!r}: the shell string expands it when it runs, the gate reads no "
                    message += f"expansion, so whether SGLang's {kind} reading takes it is not known (fail closed)"
                    out.append(Problem(flag, "unknown", None, message, [EXPANSION_SOURCE]))
                continue
            took = _converts(kind, given)
            if took is True:
                continue
            # the value as the decision's command line shows it (redact_argv: a token or a random-looking value, a
            # password given to the wrong flag, masked): the refusal quotes it in its message and observed value
            from stackcheck.redact import redact_value

            value = redact_value(given)
            source = [
                {
                    "title": f"sglang {version} wheel, {entry.get('file')}: {flag} is declared with "
                    f"type={kind} (launch.json release_types, read by tools/sglang_types.py)",
                    "url": f"https://pypi.org/project/sglang/{version}/",
                },
                *_as_list(table.get("source")),
            ]
            word = "an integer" if kind == "int" else "a number (float)"
            if took is None:
                message = (
                    f"SGLang {sglang_version} reads {flag} as {word}; {value[:40]!r}... has more digits than this "
                    "Python's int() converts, and the server's Python may differ: not decided"
                )
                out.append(Problem(flag, "unknown", None, message, source, value[:80], f"type={kind}"))
            else:
                message = (
                    f"SGLang {sglang_version} reads {flag} as {word} (argparse type={kind}), and "
                    f"{value[:80]!r}{'...' if len(value) > 80 else ''} is none: the server exits at once with "
                    f"'invalid {kind} value' (exit status 2)"
                )
                out.append(Problem(flag, "blocked", "crash", message, source, value, f"type={kind}"))
            break  # argparse stops at the first value it cannot convert
    return out


def _choice_run(version: str, runs: Any, pos: Mapping[str, int]) -> Mapping[str, Any] | None:
    """The run of a release_choices spec whose versions hold `version`. A run ">=A,<=B" of two listed releases
    is compared by the releases' places in release_flags (`pos`, in release order): two dictionary lookups, where
    version_in parses both versions (~15 us each on the 2-core box, up to 18 runs for --tool-call-parser). Any
    other range, or a release release_flags does not list, is read by version_in."""
    from stackcheck.facts.versions import version_in

    at = pos.get(version)
    for run in runs if isinstance(runs, list) else []:
        if not isinstance(run, dict):
            continue
        spec = str(run.get("versions"))
        low, comma, high = spec.partition(",")
        lo = pos.get(low[2:]) if low.startswith(">=") else None
        hi = pos.get(high[2:]) if comma and high.startswith("<=") else None
        if at is not None and lo is not None and hi is not None:
            if lo <= at <= hi:
                return run
        elif version_in(version, spec) is True:
            return run
    return None


def _as_list(source: Any) -> list[Any]:
    return list(source) if isinstance(source, list) else [source] if source else []


def undeclared_problems(
    d: Derived, mapping: Mapping[str, Any], sglang_version: str | None, declared: Mapping[str, Any] | None = None
) -> tuple[list[Problem], bool]:
    """The flags of a `python -m sglang.launch_server` command that the installed release's parser rejects, read
    as argparse reads them: a `--name` (or `--name=value`) that is neither a declared flag nor the unique prefix
    of one is 'unrecognized arguments', a prefix of several is 'ambiguous option'; either ends the server at
    once (exit status 2). From the releases whose launcher loads plugins (entry points) before it parses the
    command line (release_flags `plugins`), an undeclared flag may be a plugin's: it is unknown (refused unless
    --allow-unknown) rather than blocked; an ambiguous prefix stays blocked (a plugin's flags only add to the
    matches). Flags launch.json lists with release entries are left to release_problems (their own release data).
    Returns (problems, whether the release's flags were known): they come from release_flags, or for a release
    newer than the data from its own server arguments (`declared`). `sglang serve` hands the same parser every
    argument but its own --model-type (from 0.5.10) unless the model is a diffusion model, whose parser passes over
    what it does not know (parse_known_args): judged as launch-server with `--model-type llm`, not at all with
    `--model-type diffusion`, else each problem unknown (whether the model is a diffusion model is not read; ireal1:
    every flag of a `sglang serve` line was passed unjudged)."""
    if sglang_version is None or d.entrypoint not in ("launch-server", "sglang-serve"):
        return [], False
    serve = d.entrypoint == "sglang-serve"
    serve_own = serve and _release_inside(sglang_version.split("+", 1)[0], ">=0.5.10")
    serve_type = _serve_model_type(d.sglang_args) if serve_own else "auto"
    no_model = _serve_model_problem(d.sglang_args, sglang_version) if serve else None
    if no_model is not None:
        return [no_model], False
    if serve and serve_type not in ("auto", "llm", "diffusion"):  # (0.5.11 serve.py:40-45 raises; 0.5.23: a plugin's?)
        why = f"`sglang serve` in SGLang {sglang_version} knows no --model-type {serve_type!r} (auto, llm, diffusion)"
        message = f"{why} unless an installed plugin adds that backend: else it stops before a server starts"
        return [Problem("--model-type", "unknown", None, message, [SERVE_SOURCE])], False
    if serve_type == "diffusion":
        return [], False  # (the diffusion parser passes over what it does not know)
    table: Mapping[str, Any] = mapping["release_flags"] if isinstance(mapping.get("release_flags"), dict) else {}
    releases = [str(r) for r in table.get("releases") or []]
    names: set[str] | None
    if declared is not None:
        names = {str(n) for n in declared.get("declared") or []} | {"--help"}
        source: Any = {
            "title": f"sglang {sglang_version} installed, " + ", ".join(declared.get("files") or [])[:200],
            "url": f"https://pypi.org/project/sglang/{sglang_version.split('+', 1)[0]}/",
        }
    else:
        names = _declared_in(mapping, sglang_version)
        source = table.get("source")
    if not names:
        return [], False
    # from the releases whose launcher loads plugins first, a flag the release does not declare may be a
    # plugin's: unknown (refused unless --allow-unknown), not blocked; newer than the data: as the newest listed
    judged = sglang_version if declared is None else (releases[-1] if releases else "")
    may_plugin = _in_runs(judged, releases, table.get("plugins"))
    plugin_source = table.get("plugins_source")
    # flags launch.json lists with their own release entries are release_problems'; one listed without them (it
    # says what the flag does, not which releases have it) is judged here by release_flags like any other flag
    # (ifc49: --enable-lmcache on 0.5.1.post3, --enable-kv-cache-sharding before 0.5.22 were allowed)
    listed = {n for o in _options(mapping) if o.get("releases") for n in _names(o)} | set(CONFIG_FLAGS)
    out: list[Problem] = []
    seen: set[str] = set()
    for _, name, _, _ in _tokens(d.sglang_args):
        if name in names or name in listed or name in seen or (serve_own and name == "--model-type"):
            continue
        seen.add(name)
        hits = sorted(n for n in names if n.startswith(name))
        if len(hits) == 1:
            continue  # a unique prefix: argparse takes it as that flag
        if hits:
            shown = ", ".join(hits[:6]) + (f" and {len(hits) - 6} more" if len(hits) > 6 else "")
            message = (
                f"{name} abbreviates several flags of SGLang {sglang_version} ({shown}): the server exits at once "
                "with 'ambiguous option' (exit status 2); spell the flag out"
            )
        else:
            import difflib

            near = difflib.get_close_matches(name, sorted(names), n=2, cutoff=0.75)
            hint = f"; did you mean {' or '.join(near)}?" if near else ""
            if may_plugin:
                message = (
                    f"SGLang {sglang_version} declares no {name}: unless an installed SGLang plugin adds it (this "
                    "release loads plugins from entry points before it reads the command line), the server exits "
                    f"at once with 'unrecognized arguments' (exit status 2){hint}"
                )
                out.append(Problem(name, "unknown", None, message, [*_as_list(source), *_as_list(plugin_source)]))
                continue
            message = (
                f"SGLang {sglang_version} declares no {name}: the server exits at once with 'unrecognized "
                f"arguments' (exit status 2){hint}"
            )
        out.append(Problem(name, "blocked", "crash", message, source))
    if serve and serve_type == "auto":
        out = [
            Problem(
                p.subject,
                "unknown",
                None,
                f"{p.message}, where `sglang serve` hands it to the LLM server; unless the model is a diffusion model "
                "(then the diffusion server's parser takes the flags it knows and passes over the rest), which the "
                "gate does not read (fail closed): `--model-type llm` says which",
                [*_as_list(p.source), SERVE_SOURCE],
            )
            for p in out
        ]
    if declared is None and not serve:  # (serve takes a positional model path of its own)
        out += argv_problems(d, mapping, sglang_version)
    return out, True


#: how `sglang serve` dispatches its arguments (ireal1)
SERVE_SOURCE = {
    "title": "sglang 0.5.9, 0.5.10, 0.5.11, 0.5.20 and 0.5.23 wheels, sglang/cli/serve.py: a model that is not a "
    "diffusion model goes to prepare_server_args, the launch_server parser (0.5.23 serve.py:97-106 _run_llm), a "
    "diffusion model to the diffusion parser's parse_known_args (0.5.23 serve.py:121-141); --model-type "
    "auto|llm|diffusion taken out of the arguments first from 0.5.10 (0.5.23 serve.py:30-59 and 181-219; absent in "
    "0.5.9)",
    "url": "https://pypi.org/project/sglang/0.5.23/",
}


def _serve_model_problem(args: Sequence[str], release: str) -> Problem | None:
    """`sglang serve` finds the model path itself before any server parses the arguments (cli/utils.py
    get_model_path): the exact spellings `--model-path X` / `--model-path=X`, from 0.5.11 also `--model X` /
    `--model=X`, from 0.5.16 a first word that is no option (after --model-type); an abbreviation is never its.
    Where it finds none it stops ('Error: --model-path is required') before a server starts (ireal1: `sglang serve
    --model X` on 0.5.9 / 0.5.10 was allowed)."""
    plain = release.split("+", 1)[0]
    names = ("--model-path", "--model") if _release_inside(plain, ">=0.5.11") else ("--model-path",)
    words = list(args)
    if _release_inside(plain, ">=0.5.10"):  # (--model-type and its value are taken out first)
        words = [w for i, w in enumerate(words) if w != "--model-type" and not w.startswith("--model-type=")
                 and not (i > 0 and words[i - 1] == "--model-type")]  # fmt: skip
    if any(h in words for h in ("-h", "--help")):
        return None  # (help: no server either way)
    if words and not words[0].startswith("-") and _release_inside(plain, ">=0.5.16"):
        return None
    for i, w in enumerate(words):
        if (w in names and i + 1 < len(words)) or any(w.startswith(n + "=") for n in names):
            return None
    spelled = " or ".join(names) + (" or a model path as the first word" if _release_inside(plain, ">=0.5.16") else "")
    return Problem(
        "--model-path",
        "blocked",
        "crash",
        f"`sglang serve` in SGLang {release} looks for the model itself as {spelled} (spelled out: it reads no "
        "abbreviation) and finds none here: it stops with 'Error: --model-path is required' before a server starts",
        [SERVE_MODEL_SOURCE],
    )


#: where `sglang serve` finds its model path (ireal1)
SERVE_MODEL_SOURCE = {
    "title": "sglang 0.5.9 and 0.5.10 wheels, sglang/cli/utils.py get_model_path (--model-path, --model-path= only: "
    "0.5.9 utils.py:135-160); 0.5.11 utils.py:102-110 and 0.5.23 utils.py:136-152 (also --model, --model=); 0.5.16 "
    "and later cli/serve.py _normalize_positional_model_path (a first word that is no option; absent in 0.5.15)",
    "url": "https://pypi.org/project/sglang/0.5.23/",
}


def _serve_model_type(args: Sequence[str]) -> str:
    """`sglang serve`'s --model-type (the last one, as its own scan keeps it; `auto` when none): only the exact
    spellings `--model-type X` and `--model-type=X` are its own (0.5.23 serve.py:30-59)."""
    kind = "auto"
    for i, a in enumerate(args):
        if a == "--":
            break
        if a == "--model-type" and i + 1 < len(args):
            kind = args[i + 1]
        elif a.startswith("--model-type="):
            kind = a.split("=", 1)[1]
    return kind


#: CPython argparse, the one reading of an option and what is left over (3.10-3.13 agree on every case read here)
ARGPARSE_SOURCE = {
    "title": "CPython Lib/argparse.py (3.10-3.13): _parse_optional (exact name, name=value, unique prefix, else an "
    "unknown option), consume_optional (a switch given '=value': 'ignored explicit argument'; nargs decides the "
    "arguments taken), '--' ends the options, parse_args exits 2 with 'unrecognized arguments' for what is left",
    "url": "https://github.com/python/cpython/blob/3.12/Lib/argparse.py",
}


def _release_nargs(table: Mapping[str, Any], version: str) -> dict[str, str] | None:
    """release_flags `nargs` for `version`: each flag that does not take exactly one value -> its nargs; None where
    the table has no nargs (an older manifest) or the release is not listed."""
    nargs = table.get("nargs")
    releases = [str(r) for r in table.get("releases") or []]
    if not isinstance(nargs, dict) or version not in releases:
        return None
    kept = _NARGS_KEPT
    if kept and kept[0] is nargs and kept[1] == version:
        got: dict[str, str] = kept[2]
        return got
    pos = _positions(releases)
    out = {
        str(flag): str(e.get("nargs"))
        for flag, entries in nargs.items()
        for e in (entries if isinstance(entries, list) else [])
        if isinstance(e, dict) and _in_runs(version, releases, e.get("releases"), pos)
    }
    _NARGS_KEPT[:] = [nargs, version, out]
    return out


def expanded_word_problems(args: Sequence[str], mapping: Mapping[str, Any]) -> list[Problem]:
    """The unknown of a launch in a shell's command string whose arguments hold a word the shell expands where
    argparse takes an option, not the value of the one before it (irobust8: `bash -c "python -m sglang.launch_server
    --model-path M $EXTRA_ARGS"`, `... \"$@\"`, `$(cat flags)`, `--enable-$X`: the words it becomes are flags the gate
    never read, an `--enable-lmcache` among them, and the launch was allowed). A word after a `--flag` that takes a
    value is that value (judged by the flag's own readings); after a switch (launch.json release_flags nargs 0 in
    any release, or a prefix of one: fail closed), a `--flag=value` word, a value or nothing, it stands alone.
    irobust13: a brace expansion too (`--{enable-dp-attention,enable-torch-compile}`, `{--enable-dp-attention,--dp-size
    =2}`: bash, zsh and ksh make several words of it, flags the gate never read; allowed before, with a note at most),
    and after a flag that takes a value one where a word it makes starts with `-` (_brace_option). dash leaves the
    braces as written, a word SGLang's parser then refuses: unknown either way."""
    table = mapping.get("release_flags")
    nargs = table.get("nargs") if isinstance(table, Mapping) else None
    switches = sorted(
        str(flag)
        for flag, entries in (nargs.items() if isinstance(nargs, Mapping) else [])
        if isinstance(entries, list) and any(isinstance(e, Mapping) and str(e.get("nargs")) == "0" for e in entries)
    )
    for k, word in enumerate(args):
        if word == "--":
            return []
        braces = bool(_brace_groups(word))
        if not _EXPANSION.search(word) and not braces:
            continue
        if word.startswith("-"):
            if "=" in word and not _expands(word.partition("=")[0]):
                continue  # (`--tp=$TP`, `--tp={2,4}`: the flag's value (each word's, a brace's), read by its own check)
        else:
            prev = args[k - 1] if k else ""
            if prev.startswith("--") and "=" not in prev and not _brace_option(word):
                at = bisect.bisect_left(switches, prev)
                if not (at < len(switches) and switches[at].startswith(prev)):
                    continue  # (the value of the option before it)
        from stackcheck.redact import redact_value

        shown = redact_value(word)[:80]
        message = (f"the shell string expands {shown!r} where SGLang's parser takes an option, into words the gate "
                   "does not read (flags, and the features they turn on, not judged: fail closed); write the flags out "
                   "in the command line")  # fmt: skip
        return [Problem(shown, "unknown", None, message, [BRACE_SOURCE if braces else EXPANSION_SOURCE])]
    return []


#: (irobust13) brace expansion, which POSIX sh leaves out and bash, zsh and ksh do before every other expansion
BRACE_SOURCE = {
    "title": "GNU Bash Reference Manual, 3.5.1 Brace Expansion (a comma list or a sequence between braces makes "
    "several words; performed before any other expansion)",
    "url": "https://www.gnu.org/software/bash/manual/html_node/Brace-Expansion.html",
}


def _expands(word: str) -> bool:
    """Whether a shell string's word holds an expansion (_EXPANSION) or a brace expansion (_brace_groups)."""
    return _EXPANSION.search(word) is not None or bool(_brace_groups(word))


def _brace_option(word: str) -> bool:
    """(irobust13) Whether a brace expansion in `word` makes a word that starts with `-` (`{x,--enable-foo}`): after a
    flag that takes a value, the first word it makes is that value and the others stand where argparse takes options."""
    return any(part.startswith("-") for inside in _brace_groups(word) for part in inside.split(","))


#: _release_nargs' last reading: [the nargs table, the release, its reading]
_NARGS_KEPT: list[Any] = []


def _shell_cut(command: Sequence[str], args: list[str]) -> list[str]:
    """The launch's arguments as its argparse gets them where the launch sits in a shell's command string (`bash
    -c "python -m sglang.launch_server ... \"$@\""`): up to the first word the shell expands (`$@`, `$X`, a command
    substitution), whose words the gate does not know (the string's operators and redirections are no argument
    already: shell_commands); a command run without a shell is its own argv, every word as given."""
    shell = su = False
    inside = False
    strings = flock_sites(command)[0]
    for i, word in enumerate(command):
        prog = os.path.basename(word)
        if (shell and _shell_c(word) and _shell_string_at(command, i) is not None) or i in strings:
            inside = True
            break
        if su and _su_command(command, i) is not None:
            inside = True
            break
        shell = shell or prog in _C_RUNNERS
        su = su or prog in _SU
    if not inside:
        return args
    for i, word in enumerate(args):
        if "$" in word or "`" in word:
            return args[:i]
    return args


def argv_problems(d: Derived, mapping: Mapping[str, Any], sglang_version: str | None) -> list[Problem]:
    """What SGLang's argparse leaves over or rejects in a `python -m sglang.launch_server` command, read with the
    installed release's flags and how many values each takes (launch.json release_flags `flags` and `nargs`):
    a single-dash option (`-tp 8`: SGLang declares only -h and --long names, and argparse matches a prefix of a
    long name only when it starts with '--'), a switch given a value (`--enable-torch-symm-mem=false`: 'ignored
    explicit argument'; `--enable-torch-symm-mem false`: 'false' is left over), a word no option takes
    (`--tp 8 stray`), anything after '--' (`-- --x`; the launcher's parser has no positional argument): each
    ends the launch at once with exit status 2. Double-dash names the release does not declare are
    undeclared_problems'. A word after such a name is not judged (in a release that loads plugins it may be the
    plugin flag's value). Not judged: a release release_flags does not list, or a table without `nargs`."""
    if sglang_version is None or d.entrypoint != "launch-server":
        return []
    table: Mapping[str, Any] = mapping["release_flags"] if isinstance(mapping.get("release_flags"), dict) else {}
    version = sglang_version.partition("+")[0]
    nargs = _release_nargs(table, version)
    names = _declared_in(mapping, version)
    if nargs is None or not names:
        return []
    from stackcheck.redact import redact_value

    names = names | {"--help", "-h"}
    nargs = {**nargs, "--help": "0", "-h": "0"}
    source = [*_as_list(table.get("source")), ARGPARSE_SOURCE]
    # from the releases that load plugins before they parse, a plugin may add an option (or an argument) of its
    # own: what only such an addition would take is unknown (refused unless --allow-unknown), as an undeclared flag
    plugin = _in_runs(version, [str(r) for r in table.get("releases") or []], table.get("plugins"))
    unless = (
        "unless an installed SGLang plugin adds it (this release loads plugins before it parses), " if plugin else ""
    )
    state, effect = ("unknown", None) if plugin else ("blocked", "crash")
    loose = [*source, *_as_list(table.get("plugins_source"))] if plugin else source
    args = _shell_cut(d.command, list(d.sglang_args))
    cut = len(args) < len(d.sglang_args)  # (an expanded word follows the last one: its value, maybe; ireal1)
    # a missing value of a flag launch.json reads is parse_flags' and release_choice_problems' to report
    elsewhere = {n for o in _options(mapping) for n in _names(o)} | {
        str(f)
        for spec in mapping.get("release_choices") or []
        if isinstance(spec, dict)
        for f in spec.get("flags") or []
    }
    out: list[Problem] = []
    left: list[str] = []  # the words no option takes
    i = 0
    while i < len(args):
        tok = args[i]
        i += 1
        if tok == "--":
            left += ["--", *args[i:]]
            break
        if _is_argument(tok):
            left.append(tok)
            continue
        name, eq, inline = tok.partition("=")
        if tok.startswith("--"):
            if name in names:
                flag = name
            else:
                hits = [n for n in names if n.startswith(name)]
                if len(hits) != 1:  # undeclared or ambiguous: undeclared_problems'; its words are not judged
                    while i < len(args) and args[i] != "--" and _is_argument(args[i]):
                        i += 1
                    continue
                flag = hits[0]
        elif tok.startswith("-h"):
            flag, eq, inline = "-h", "=" if len(tok) > 2 else "", tok[2:]  # -hX: -h given X ('ignored explicit')
        else:
            shown_tok = redact_value(tok)[:80]
            out.append(
                Problem(
                    shown_tok,
                    state,
                    effect,
                    f"SGLang {sglang_version} declares no {shown_tok}: its flags are --long names (argparse reads a "
                    f"single-dash {shown_tok} as an unknown option, never as an abbreviation of a --name), so "
                    f"{unless}the server exits at once with 'unrecognized arguments' (exit status 2); spell the flag "
                    "with '--'",
                    loose,
                    shown_tok,
                    "a --flag the release declares",
                )
            )
            while i < len(args) and args[i] != "--" and _is_argument(args[i]):
                i += 1  # its words go with it in argparse's message
            continue
        kind = nargs.get(flag, "1")
        if kind == "0":
            if eq and flag == "-h":  # -hX: CPython 3.10-3.12 exit 2 ('ignored explicit argument'), 3.13.0 prints help
                shown_h = redact_value(tok)[:80]
                text = (
                    f"argparse reads {shown_h} as -h (help) given {shown_h[2:]!r}: CPython 3.10-3.12 exit with "
                    "'ignored explicit argument' (exit status 2), 3.13.0 prints the help and exits 0; the server "
                    "never starts"
                )
                out.append(Problem(shown_h, "blocked", "crash", text, source, shown_h, "a --flag the release declares"))
                continue
            if eq:
                out.append(
                    Problem(
                        flag,
                        "blocked",
                        "crash",
                        f"{flag} is a switch in SGLang {sglang_version} (it takes no value): "
                        f"{flag + '=' + redact_value(inline)[:80]!r} ends the launch "
                        "with 'ignored explicit argument' (exit status 2); give the flag alone to turn it on, leave "
                        "it out to keep it off",
                        source,
                        flag + "=" + redact_value(inline)[:80],
                        f"{flag} alone",
                    )
                )
            continue
        if eq:
            continue
        start = i
        if kind in ("*", "+", "unknown"):
            while i < len(args) and args[i] != "--" and _is_argument(args[i]):
                i += 1
        elif kind in {"?", "1"} or kind.isdigit():
            for _ in range(int(kind) if kind.isdigit() else 1):
                if i < len(args) and args[i] != "--" and _is_argument(args[i]):
                    i += 1
        needed = 1 if kind in ("1", "+") else int(kind) if kind.isdigit() else 0
        if i - start < needed and flag not in elsewhere and not (cut and i >= len(args)):
            words = "one argument" if kind == "1" else "at least one argument" if kind == "+" else f"{kind} arguments"
            out.append(
                Problem(
                    flag,
                    "blocked",
                    "crash",
                    f"{flag} takes {words} in SGLang {sglang_version} and {i - start} follow it here (the end of the "
                    "command, another option or '--' does): the server exits at once with 'expected "
                    f"{words}' (exit status 2)",
                    source,
                    str(i - start),
                    words,
                )
            )
    if left:
        shown = " ".join(redact_value(w)[:80] for w in left[:6]) + (" ..." if len(left) > 6 else "")
        message = (
            f"SGLang {sglang_version}'s launcher takes no positional argument and no option takes {shown!r} here "
            f"(a switch takes no value; after '--' nothing is an option): {unless}the server exits at once with "
            "'unrecognized arguments' (exit status 2)"
        )
        required = "every word a value of the option before it"
        out.append(Problem("unrecognized arguments", state, effect, message, loose, shown, required))
    return out


def relabel_unlisted(d: Derived, refused: set[str], sglang_version: str) -> None:
    """After undeclared_problems covered the release: the unlisted flags it did not refuse are the release's
    own (declared, not read for features); the refused ones leave the note, which goes when none is left."""
    kept = [n for n in d.unlisted if n not in refused]
    out: list[Problem] = []
    for p in d.problems:
        if p.subject != "flags" or p.status != "note":
            out.append(p)
        elif kept:
            out.append(_unlisted_note(kept, f"declared by SGLang {sglang_version}, not read for features"))
    d.problems = out


# ---- deciding -------------------------------------------------------------------------------------


@record
class Blocker:
    feature: str
    kind: str  # explicit | default | command
    status: str
    effect: str | None
    reasons: list[dict[str, Any]]
    fix: str | None = None
    check: bool = False  # a stack check, not a feature
    why: str | None = None  # why the launch needs it (a launch requirement's scope)


@record
class Decision:
    allow: bool
    blocking: list[Blocker]
    warnings: list[Blocker]
    checked: list[dict[str, Any]]  # feature id, kind, status, effect


def worst_rule_effect(feature: Mapping[str, Any] | None) -> str | None:
    if not feature:
        return None
    effects = [str(r.get("effect", "crash")) for r in feature.get("rules") or [] if isinstance(r, dict)]
    return max(effects, key=lambda e: EFFECT_ORDER.get(e, 0)) if effects else None


def _check_effect(v: Mapping[str, Any]) -> tuple[str, str | None, list[dict[str, Any]]]:
    """A stack check's verdict in the terms of a feature's: (status, effect, reasons that matter)."""
    status = str(v.get("status"))
    reasons = [dict(x) for x in v.get("reasons") or [] if isinstance(x, dict)]
    fails = [r for r in reasons if r.get("result") == "fail"]
    unknown = [r for r in reasons if r.get("result") == "unknown"]
    if status in ("failed", "warning") and fails:
        effect = max((str(r.get("effect", "crash")) for r in fails), key=lambda e: EFFECT_ORDER.get(e, 0))
        return "blocked", effect, fails
    if status == "unknown":
        return "unknown", None, unknown
    if status == "skipped":
        return "not-applicable", None, reasons
    return ("ok", None, []) if status == "ok" else ("unknown", None, reasons)


def decide(
    d: Derived,
    verdicts: Sequence[Mapping[str, Any]],
    features: Sequence[Mapping[str, Any]],
    allow_unknown: bool,
    extra_problems: Sequence[Problem] = (),
    check_verdicts: Sequence[Mapping[str, Any]] = (),
) -> Decision:
    """Apply the policy of the module docstring."""
    by_id = {str(v.get("id")): v for v in verdicts}
    checks_by_id = {str(v.get("id")): v for v in check_verdicts}
    spec = {str(f.get("id")): f for f in features}
    blocking: list[Blocker] = []
    warnings: list[Blocker] = []
    checked: list[dict[str, Any]] = []
    for p in [*d.problems, *extra_problems]:
        reason = {"message": p.message, "source": p.source, **_compared(p)}
        b = Blocker(p.subject, "command", p.status, p.effect, [reason])
        if p.status == "note" or (p.status == "unknown" and allow_unknown):
            warnings.append(b)
        else:
            blocking.append(b)
    for r in d.required:
        if r.check:
            _decide_check(r, checks_by_id.get(r.feature), allow_unknown, blocking, warnings, checked)
            continue
        v = by_id.get(r.feature)
        if v is None:
            blocking.append(
                Blocker(r.feature, r.kind, "unknown", None, [{"message": f"feature {r.feature} not in the manifests"}])
            )
            checked.append({"feature": r.feature, "kind": r.kind, "status": "unknown", "effect": None})
            continue
        if r.rules is not None:
            v = scoped_feature_verdict(v, r.rules, spec.get(r.feature))
        status = str(v.get("status"))
        effect = v.get("effect")
        checked.append({"feature": r.feature, "kind": r.kind, "why": r.why, "status": status, "effect": effect})
        reasons = [dict(x) for x in v.get("reasons") or [] if x.get("result") in ("fail", "unknown")]
        if status == "not-applicable":
            reasons = [dict(x) for x in v.get("reasons") or []]
        b = Blocker(r.feature, r.kind, status, effect if isinstance(effect, str) else None, reasons, why=r.why)
        if status == "ok":
            continue
        if r.kind == "explicit":
            if status == "unknown" and allow_unknown:
                warnings.append(b)
            else:
                blocking.append(b)
            continue
        if (
            status == "blocked"
            and effect not in REFUSED_EFFECTS
            and r.kind in ("launch", "default")
            and not allow_unknown
        ):
            # a rule that only degrades failed, and one that could crash is unknown: the unknown one decides
            unknown = [
                x for x in reasons if x.get("result") == "unknown" and x.get("effect", "crash") in REFUSED_EFFECTS
            ]
            if unknown:
                blocking.append(Blocker(r.feature, r.kind, "unknown", None, [*unknown], why=r.why))
                continue
        # needed by every launch: what crashes (or serves wrong output) refuses, what degrades warns
        if r.kind == "launch":
            if status == "blocked":
                (blocking if effect in REFUSED_EFFECTS else warnings).append(b)
            elif status == "unknown":
                can_crash = _unknown_can_crash(reasons, spec.get(r.feature), (*REFUSED_EFFECTS, None))
                (blocking if can_crash and not allow_unknown else warnings).append(b)
            continue
        # default features
        if r.kind == "default-warn":
            if status in ("blocked", "unknown"):
                warnings.append(b)
            continue
        if status == "blocked":
            (blocking if effect in REFUSED_EFFECTS else warnings).append(b)
        elif status == "unknown":
            can_crash = _unknown_can_crash(reasons, spec.get(r.feature), tuple(REFUSED_EFFECTS))
            (blocking if can_crash and not allow_unknown else warnings).append(b)
    return Decision(not blocking, blocking, warnings, checked)


def _unknown_can_crash(
    reasons: Sequence[Mapping[str, Any]], feature: Mapping[str, Any] | None, worst_crashes: tuple[str | None, ...]
) -> bool:
    """Whether an unknown feature could crash the launch (or serve wrong output: either refuses; "crash" below
    stands for both): an unknown rule that crashes does; an unknown that
    is no rule's own (a needed package not known, a release older than the manifests) stands for every rule,
    so the feature's worst rule decides. An unknown rule that can only disable or degrade does not (custom
    all-reduce with the peer-to-peer state not known: it stays off). No unknown reason at all: the worst rule."""
    unknown = [x for x in reasons if x.get("result") == "unknown"]
    if not unknown:
        return worst_rule_effect(feature) in worst_crashes
    for x in unknown:
        effect = x.get("effect")
        if effect in REFUSED_EFFECTS:
            return True
        if effect is None and worst_rule_effect(feature) in worst_crashes:
            return True
    return False


def _decide_check(
    r: Requirement,
    v: Mapping[str, Any] | None,
    allow_unknown: bool,
    blocking: list[Blocker],
    warnings: list[Blocker],
    checked: list[dict[str, Any]],
) -> None:
    """A stack check a launch needs: a failing rule that crashes refuses (a degrading one warns); an unknown
    rule that could crash (or whose effect is not said) refuses unless --allow-unknown. A check needed for
    some of its rules (`r.rules`) is judged on those rules only, each as strongly as its scope says."""
    if v is None:
        blocking.append(
            Blocker(r.feature, r.kind, "unknown", None, [{"message": f"check {r.feature} not evaluated"}], check=True)
        )
        checked.append({"feature": r.feature, "check": True, "kind": r.kind, "status": "unknown", "effect": None})
        return
    if r.rules is not None:
        v = scoped_verdict(v, r.rules)
    status, effect, reasons = _check_effect(v)
    checked.append({"feature": r.feature, "check": True, "kind": r.kind, "why": r.why, "status": status,
                    "effect": effect})  # fmt: skip
    if status in ("ok", "not-applicable"):
        return

    def warns_only(x: Mapping[str, Any]) -> bool:  # the rule is needed only by a feature that warns
        return ((r.rules or {}).get(str(x.get("rule"))) or r.kind) == "default-warn"

    b = Blocker(r.feature, r.kind, status, effect, reasons, check=True, why=r.why)
    if status == "blocked":
        severe = any(x.get("effect", "crash") in REFUSED_EFFECTS and not warns_only(x) for x in reasons)
        # a rule that only degrades failed, and one that could crash is unknown: the unknown one decides
        unknown = [x for x in v.get("reasons") or [] if isinstance(x, dict) and x.get("result") == "unknown"]
        unknown = [x for x in unknown if x.get("effect") in (*REFUSED_EFFECTS, None) and not warns_only(x)]
        if not severe and unknown and not allow_unknown:
            b = Blocker(r.feature, r.kind, "unknown", None, [*unknown, *reasons], check=True, why=r.why)
            severe = True
        (blocking if severe else warnings).append(b)
        return
    can_crash = any(x.get("effect") in (*REFUSED_EFFECTS, None) and not warns_only(x) for x in reasons)
    can_crash = can_crash or (not reasons and r.kind != "default-warn")
    (blocking if can_crash and not allow_unknown else warnings).append(b)


def scoped_verdict(v: Mapping[str, Any], rules: Mapping[str, str | None]) -> dict[str, Any]:
    """A check's verdict on the rules a launch needs: the reasons of rules it does not need (None in `rules`)
    are dropped and the status is worked out again from the rest; reasons of no rule (`needs`) stay."""
    out = dict(v)
    if v.get("status") == "skipped":
        return out
    kept = [
        x for x in v.get("reasons") or [] if not (isinstance(x, dict) and rules.get(str(x.get("rule")), "") is None)
    ]
    if any(isinstance(x, dict) and "sweep" in x for x in kept):
        from stackcheck.verdicts.rule_cover import rescope  # only a report's swept check carries `sweep`

        kept = rescope(kept)  # a release sweep's per-rule reasons conclude again on the rules kept
    out["reasons"] = kept
    fails = [x for x in kept if x.get("result") == "fail"]
    if fails:
        out["status"] = "warning" if all(x.get("effect") == "degraded" for x in fails) else "failed"
    elif any(x.get("result") == "unknown" for x in kept):
        out["status"] = "unknown"
    else:
        out["status"] = "ok"
    return out


def scoped_feature_verdict(
    v: Mapping[str, Any], rules: Mapping[str, str | None], feature: Mapping[str, Any] | None
) -> dict[str, Any]:
    """A feature's verdict on the rules a launch needs of it (`Requirement.rules` of a feature): the reasons of
    its other rules are dropped, every other reason stays (no rule, or one the engine adds: needs, known-release,
    gpu, a sweep's or a newer release's head), and the status is worked out again from the rest (a failing rule:
    blocked with the worst effect among the failing; an unknown one: unknown). A verdict other than ok / blocked /
    unknown stays as it is."""
    out = dict(v)
    if v.get("status") not in ("ok", "blocked", "unknown"):
        return out  # not-applicable (a needed package absent) and the like say nothing of one rule
    own = {str(r.get("id")) for r in (feature or {}).get("rules") or [] if isinstance(r, dict)}
    kept = [
        x
        for x in v.get("reasons") or []
        if isinstance(x, dict) and (str(x.get("rule")) not in own or rules.get(str(x.get("rule"))) is not None)
    ]
    out["reasons"] = kept
    fails = [x for x in kept if x.get("result") == "fail"]
    if fails:
        out["status"] = "blocked"
        out["effect"] = max((str(x.get("effect", "crash")) for x in fails), key=lambda e: EFFECT_ORDER.get(e, 0))
    elif any(x.get("result") == "unknown" for x in kept):
        out["status"], out["effect"] = "unknown", None
    else:
        out["status"], out["effect"] = "ok", None
    return out


def apply_policy(decision: Decision, strict_features: bool, allow: Sequence[str]) -> list[str]:
    """The policy after `decide` (and after the preflight results are merged), returning what --allow let
    through:
    - an explicit feature that is blocked only with effect `degraded` or `disabled` (the server starts; the
      flag is slower or a no-op) warns instead of refusing, unless --strict-features;
    - a blocker named in --allow (a feature id, or a preflight check id) is accepted on purpose: it becomes a
      warning whose reasons say so, and the decision document lists it under `allowed`."""
    keep: list[Blocker] = []
    allowed: list[str] = []
    wanted = set(allow)
    for b in decision.blocking:
        name = b.feature.split(" (", 1)[0]  # preflight blockers read "check (subject)"
        if name in wanted:
            b.reasons = [*b.reasons, {"message": f"allowed on purpose (--allow {name}): not refused"}]
            decision.warnings.append(b)
            allowed.append(name)
            continue
        if (
            not strict_features
            and b.kind == "explicit"
            and b.status == "blocked"
            and b.effect in ("degraded", "disabled")
        ):
            what = "only slower" if b.effect == "degraded" else "a no-op (the server turns it off)"
            b.reasons = [*b.reasons, {"message": f"the flag is {what}: a warning (--strict-features refuses)"}]
            decision.warnings.append(b)
            continue
        keep.append(b)
    decision.blocking = keep
    decision.allow = not keep
    return list(dict.fromkeys(allowed))
