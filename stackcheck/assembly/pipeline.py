"""Building the parts for a command: gather facts (probe, or read a saved file), apply --assume-*
options, evaluate, plan. The command modules call these; the core stays pure."""

from __future__ import annotations

from collections.abc import Callable

from stackcheck.digits import whole_number
from stackcheck.errors import BadInputError, ProbeFailedError, UsageError
from stackcheck.facts.model import cc_tuple, load_facts_document
from stackcheck.lean_typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # the engine is imported lazily: see build_report()
    from typing import Any

    from stackcheck.assembly.options import Options
    from stackcheck.documents.types import Report
    from stackcheck.facts.model import Facts, ProbeOutcome
    from stackcheck.knowledge.loader import Manifests
    from stackcheck.plan.json_shapes import PlanJSON
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.types import CheckVerdict, FeatureVerdict

INTERCONNECTS = ("nvswitch", "nvlink", "pcie-switch", "pcie-host-bridge", "cross-socket", "pcie")
#: the facts sections --host-facts takes from a saved report: what belongs to the host, not the environment
HOST_SECTIONS = ("driver", "gpus", "topology", "pcie", "container_toolkit", "docker_daemon")


def parse_assume_gpu(spec: str, default_count: int = 1) -> tuple[str, int]:
    """'12.0x8' -> ('12.0', 8); without xN, `default_count` (the box's own GPU count when it has GPUs)."""
    cc, _, count = spec.strip().lower().partition("x")
    number = whole_number(count, 4) if count else None
    if cc_tuple(cc) is None or (count and not 0 < (number or 0) <= 4096):
        raise UsageError(f"--assume-gpu {spec!r}: expected CAPABILITY[xCOUNT], for example 12.0x8 or 9.0")
    return cc, number if number is not None else max(1, default_count)


def check_known_cc(manifests: Manifests, cc: str, option: str = "--assume-gpu") -> None:
    known = sorted(
        {str(a.get("compute_capability")) for a in manifests.architectures}, key=lambda c: cc_tuple(c) or (0, 0)
    )
    if known and cc not in known:
        raise UsageError(
            f"{option} {cc}: no architecture with compute capability {cc} in the manifests (known: {', '.join(known)})"
        )


def load_manifests(dirs: list[str], texts_out: list[str] | None = None) -> Manifests:
    from stackcheck.knowledge.loader import load

    return load(dirs, texts_out=texts_out)


class Background:
    """Run a function in a thread now and take its result (or its exception) later. Used to load the
    manifests and import the engine while the probes wait on the driver (NVML calls release the GIL)."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        import threading  # (here: an audit of saved facts starts no thread, and does not import threading)

        self._fn = fn
        self._result: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="stackcheck-preload")
        self._thread.start()

    def _run(self) -> None:
        try:
            self._result = self._fn()
        except BaseException as exc:  # re-raised in the caller's thread by get()
            self._error = exc

    def get(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result

    def settle(self) -> None:
        """Wait for the thread and drop its result: called before an error leaves the command, so that the
        interpreter never shuts down while this daemon thread is still importing modules (CPython can crash
        with SIGSEGV then: seen as exit -11 of `audit --facts BAD` on a loaded machine)."""
        self._thread.join()


def gather(
    opts: Options, manifests: Callable[[], Manifests] | None = None
) -> tuple[Facts, list[ProbeOutcome], dict[str, Any] | None]:
    """Facts from a saved file, or from the probes; the host block of a saved report is kept.

    Probing: the view (this host, --root, --image) and the target interpreter (stackcheck.assembly.target) are
    chosen first (a bad --python / --env / --root is a usage error before anything runs), then every
    probe runs through the one runner under --timeout. A target named explicitly that turns out not to be
    a Python interpreter is bad input (exit 2); any other is a recorded reason."""
    if opts.facts_file:
        probing = [o for o, v in (("--python", opts.python), ("--env", opts.env_dir), ("--root", opts.root),
                                  ("--image", opts.image), ("--host-facts", opts.host_facts)) if v]  # fmt: skip
        if probing:
            raise UsageError(f"--facts and {probing[0]}: saved facts are not probed; give one of them")
        facts, host = load_facts_document(opts.facts_file)
        return facts, [{"name": "facts-file", "status": "ok", "reason": str(opts.facts_file), "duration_ms": 0.0}], host
    import os

    from stackcheck.assembly.target import (
        choose_target,
        command_directory,
        command_environment,
        command_first_path,
        open_view,
    )
    from stackcheck.probes import DEEP_PROBES, DEFAULT_PROBES, HOST_PROBES
    from stackcheck.probes.interface import ProbeContext
    from stackcheck.probes.runner import run_probes
    from stackcheck.readers.fsview import is_host

    host_facts: dict[str, Any] | None = None
    if opts.host_facts:
        host_facts = load_host_facts(opts.host_facts)
    view = open_view(opts)
    try:
        environ: dict[str, str] = dict(os.environ)
        configured = getattr(view, "environment", None)
        if callable(configured):  # an image: the server starts with the image config's Env, not ours
            environ = dict(configured())
        elif not is_host(view):  # a root: nothing of this host's environment describes it (its PATH, CUDA_HOME,
            environ = root_environment()  # CXX, PYTHONPATH would find or pick the wrong programs: issue 16)
        command, cwd, command_is = opts.command, opts.cwd, "the gated command"
        default_command = getattr(view, "command", None)
        if callable(default_command):
            # an image: its containers start in the config's WorkingDir whichever command they run (the OCI image
            # spec's config.md, WorkingDir: "the current working directory of the entrypoint process", a default
            # that only a working directory given when the container is made replaces; irobust: a command given
            # after `--` was judged from "/", missing a WorkingDir checkout's ./sglang)
            cwd = view.workdir() if hasattr(view, "workdir") else "/"
            if command is None:  # the command its containers run
                command, command_is = default_command() or None, "the image's command"
        own_setting = os.environ.get("STACKCHECK_PYTHON") or ""
        target = choose_target(view, environ, opts.python, opts.env_dir, command, cwd, own_setting, command_is)
        names = [*DEFAULT_PROBES, *(DEEP_PROBES if opts.deep else ())]
        # the driver and GPUs come from a saved host, or are all assumed: the host's own are not read (a
        # CPU-only CI runner auditing an image for a fleet has no driver, and its failure would be noise)
        assumed_host = bool(opts.assume_gpu and opts.assume_driver)
        if host_facts is not None or assumed_host:
            names = [n for n in names if n not in HOST_PROBES]
        load = manifests or (lambda: load_manifests(opts.manifests_dirs))
        first_path = command_first_path(command, environ, cwd, view) if command else None
        first_before_311 = command_first_path(command, environ, cwd, view, before_311=True) if command else None
        ctx = ProbeContext(
            env=target.env,
            host_env=None if is_host(view) else dict(os.environ),
            # the loader's path of the launch itself, whichever interpreter is audited (--python: the audit's env)
            launch_env=command_environment(command, environ) if command else None,
            # the working directory of `python -m`, a script's directory: the extension checks look there first
            launch_first_path=first_path,
            launch_first_path_before_311=first_before_311 if first_before_311 != first_path else None,
            # gate --cwd: where the launch starts (a relative SGLANG_NCCL_SO_PATH is opened from there)
            # (and `env -C DIR` of the command's own wrappers: irobust)
            # (a gate of this host without --cwd: its own working directory, where it runs the server: opts.launch_dir)
            # (an audit of this host: its own working directory, where the server is taken to start: audit.run)
            launch_cwd=command_directory(command, environ, cwd if opts.cwd else getattr(opts, "launch_dir", None))
            if command
            else getattr(opts, "launch_dir", None),
            view=view,
            target=target,
            gates=lambda: load().gates,
            manifests=load,
            cache_dir=opts.cache_dir,
            # (the GPUs the verdicts judge: --assume-gpu's are set after probing, not known here; --host-facts' are)
            judged_gpus=None if opts.assume_gpu else ("probed" if host_facts is None else host_facts.get("gpus")),
        )
        facts, outcomes = run_probes(names, ctx, budget_s=opts.timeout_s)
        if assumed_host and host_facts is None:
            for name in HOST_PROBES:
                why = "the driver and GPUs are assumed (--assume-gpu, --assume-driver)"
                outcomes.insert(0, {"name": name, "status": "skipped", "reason": why, "duration_ms": 0.0})
        image_facts = getattr(view, "image_facts", None)
        if callable(image_facts):
            facts["image"] = image_facts()
    finally:
        close = getattr(view, "close", None)
        if callable(close):  # an image holds its file open; a probe still running past --timeout reads
            close()  # nothing more that matters (its result is already discarded)
    if host_facts is not None:
        for section in HOST_SECTIONS:
            if section in host_facts:
                facts[section] = host_facts[section]  # type: ignore[literal-required]
        reason = f"{', '.join(s for s in HOST_SECTIONS if s in host_facts)} from {opts.host_facts}"
        outcomes.insert(0, {"name": "host-facts", "status": "ok", "reason": reason, "duration_ms": 0.0})
    python = facts.get("python")
    if target.explicit and isinstance(python, dict) and python.get("sys_path") is None:
        raise BadInputError(f"{target.chosen_by} {target.executable}: {python.get('error') or 'not readable'}")
    scrub_home(facts)
    scrub_home(outcomes)  # probes[].reason names files too (a broken dist-info in ~/.venv)
    from stackcheck.paths import SCRUBBED_HOME

    SCRUBBED_HOME[:] = [os.path.expanduser("~")]  # (paths.unscrub_home maps "~" back to this home only)
    if opts.strict:
        bad = [o for o in outcomes if o.get("status") in ("failed", "timeout")]
        if bad:
            raise ProbeFailedError(
                "; ".join(f"probe {o.get('name')} {o.get('status')}: {o.get('reason')}" for o in bad)
            )
    return facts, outcomes, None


def root_environment() -> dict[str, str]:
    """The environment `--root DIR` is audited with: the default PATH (docker's for an image config without one, as
    `--image` uses), looked up inside the root, and nothing else. The host's own
    environment names the host's programs and toolkits (a host nvcc 13 on its PATH, its CUDA_HOME, CXX,
    PYTHONPATH, VIRTUAL_ENV): read through the root they would report a compiler or toolkit the root's server never
    finds. A launch's own `env NAME=VALUE` prefix still applies on top (stackcheck.assembly.target)."""
    from stackcheck.assembly.target import DEFAULT_PATH

    return {"PATH": DEFAULT_PATH}


def scrub_home(value: Any, home: str | None = None) -> Any:
    """Replace the home directory in every path of the facts with "~" (in place), once the probes that need
    the real paths have run: a report names no user where a path is not needed."""
    import os

    home = (home if home is not None else os.path.expanduser("~")).rstrip("/")
    if not home or home == "~":
        return value
    if isinstance(value, dict):
        for k, v in value.items():
            value[k] = scrub_home(v, home)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            value[i] = scrub_home(v, home)
    elif isinstance(value, str) and home in value:
        if value == home:
            return "~"
        # only where the home's path begins (the text's start, after a separator, a file:// URL's slashes): a path
        # that holds it inside (/mnt/home/al/venv for /home/al) is another directory, and the gate opens these paths
        # again (paths.unscrub_home), so "/mnt~/venv" would be read where the environment is not
        if home + "/" not in value:
            return value
        import re

        return re.sub(r"(?:(?<![^\s:=,;'\"(\[<>])|(?<=//))" + re.escape(home) + "/", "~/", value)
    return value


def load_host_facts(path: str) -> dict[str, Any]:
    """The driver, GPUs and topology of a saved report or facts document (--host-facts): "will this
    environment work on that host?" answered where the host is not. BadInputError when it has none."""
    facts, _host = load_facts_document(path)
    out = {s: facts[s] for s in HOST_SECTIONS if s in facts}  # type: ignore[literal-required]
    if "driver" not in out and "gpus" not in out:
        raise BadInputError(f"{path}: $.facts: no driver and no gpus: nothing to take from this host's facts")
    return out


def apply_interconnect(topo: dict[str, Any], link: str) -> None:
    """An assumed interconnect: `nvswitch` is NVLink through an NVSwitch (NVLink multicast), `nvlink` says
    nothing about a switch; PCIe kinds have no NVLink at all, so no multicast either."""
    if link == "nvswitch":
        topo.update(interconnect="nvlink", nvswitch=True, p2p="all")
    elif link == "nvlink":
        topo.update(interconnect="nvlink", p2p="all")
    else:
        topo.update(interconnect=link, nvswitch=False)


def apply_assumptions(facts: Facts, opts: Options, manifests: Manifests) -> Facts:
    """--assume-gpu / --assume-driver / --assume-interconnect: evaluate for hardware that is not here."""
    if not (opts.assume_gpu or opts.assume_driver or opts.assume_interconnect):
        return facts
    import copy

    out: Facts = copy.deepcopy(facts)
    assumed = list(out.get("assumed") or [])
    if opts.assume_gpu:
        from stackcheck.assembly.options import gpu_spec
        from stackcheck.verdicts.context import assumed_gpus

        cc, n, name = gpu_spec(opts.assume_gpu, manifests, len(out.get("gpus") or []))
        out["gpus"] = assumed_gpus(manifests, f"{cc}x{n}", name)
        topo = dict(out.get("topology") or {})
        topo.update({"gpu_count": n, "same_model": True, "pairs": []})
        topo["interconnect"] = "single-gpu" if n == 1 else None
        topo["p2p"] = None
        topo.pop("error", None)
        out["topology"] = topo  # type: ignore[typeddict-item]
        assumed.append(f"gpus={cc}x{n}" + (f" ({name})" if name else ""))
    if opts.assume_interconnect:
        link = opts.assume_interconnect
        if link not in INTERCONNECTS:
            raise UsageError(f"--assume-interconnect {link!r}: expected one of {', '.join(INTERCONNECTS)}")
        if link == "pcie":
            link = "pcie-host-bridge"
        topo = dict(out.get("topology") or {})
        apply_interconnect(topo, link)
        out["topology"] = topo  # type: ignore[typeddict-item]
        assumed.append(f"interconnect={opts.assume_interconnect}")
    if opts.assume_driver:
        from stackcheck.assembly.options import driver_spec

        version, said = driver_spec(opts.assume_driver, manifests)  # 580 (a branch) or 580.95.05; 13.0 is refused
        out["driver"] = {"version": version, "cuda": manifests.driver_cuda(version), "source": "assumed"}
        assumed.append(said)
    out["assumed"] = assumed
    return out


if TYPE_CHECKING:
    Gathered = tuple[Facts, list[ProbeOutcome], dict[str, Any] | None]


def build_report(
    opts: Options,
    want_plan: bool = True,
    manifests: Manifests | None = None,
    gathered: Callable[[], Gathered] | None = None,
    plan_cache: bool = False,
    also: Callable[[], None] | None = None,
    plan_reported: bool = False,
    checks_shown: bool = True,
    upstream_out: dict[str, str | None] | None = None,
    verdicts_out: list[FeatureVerdict] | None = None,
    keep_lookups: bool = False,
    upstream_slot: list[tuple[str, str]] | None = None,
    box_out: list[Any] | None = None,
) -> tuple[Report, Context]:
    """The whole audit: facts -> verdicts -> plan, as a report document. `manifests`, when the caller has
    loaded them already, are not read again; `gathered`, when the caller started the probes earlier (the
    gate starts them before it reads the command line), gives their result. `plan_cache`: the plan is read
    from, and kept in, stackcheck.assembly.plan_cache when the manifests are read here (the command line's audit;
    a caller's own manifests may have been edited in memory, and are never cached). The cache entry keeps the
    verdicts too: an audit that finds it judges nothing again (the engine is not even imported); without
    `want_plan` (a plan with a request), the verdicts are read from an entry an audit or a plan kept, and nothing
    new is kept (a merge of implied versions aside: Entry.merged). `also`, when
    given, runs in the same loading thread after the engine's imports (the gate imports the modules its decision
    needs after the verdicts there); the verdicts wait for it. The plan is made from the verdicts of the stated
    facts (the audit's); `plan_reported`: from the verdicts as reported, a facts file's implied versions merged
    in (`stackcheck plan`'s), which is the same plan, and the same cache entry, where the merge changed none.
    `checks_shown` False: the caller shows no check (`stackcheck plan`'s text), so the checks are not judged unless
    the plan cache keeps them (`checks` then as the stated facts leave them, else empty), and a facts file's implied
    versions are merged into the features only. `upstream_out`: filled with the upstream answers the plan cache's
    entry keeps with the verdicts (plan_cache.Entry.upstream), and with those a plan with a request kept under the
    same key (plan_cache.load_upstream), for a plan with a request to read; `upstream_slot`: given with
    `upstream_out`, filled with (directory, key) where such answers can be kept (plan_cache.keep_upstream, by the
    caller once its plan has added to them); `verdicts_out`:
    with the features as judged on the stated facts (before a facts file's implied versions are merged in: the
    planner's `box_verdicts`). `keep_lookups`: the context keeps each fact path's value once read
    (Context.keep_lookups), for a caller that changes neither its facts nor its launch (`stackcheck plan`, iperf27).
    `box_out`, given with `upstream_slot`: filled with [the box's verdicts to keep with the answers ({way:
    plan_cache.Box}: those kept under the key, and the way judged now), whether one was judged now, the checks
    failing on the box kept under the key ({way: [verdict, ...]}, plan_cache.load_upstream_parts: the planner reads
    this way's instead of judging every check on the box again, iperf40), this way]; the box's verdicts of this way,
    kept by an earlier request under the key, are read instead of judged (iperf38)."""
    report, _manifests, context = _report(
        opts,
        want_plan,
        manifests,
        gathered,
        plan_cache,
        also,
        plan_reported,
        checks_shown,
        upstream_out,
        verdicts_out,
        keep_lookups=keep_lookups,
        upstream_slot=upstream_slot,
        box_out=box_out,
    )
    return report, context()


def audit_report(
    opts: Options, gathered: Callable[[], Gathered] | None = None, also: Callable[[], None] | None = None
) -> tuple[Report, Manifests]:
    """build_report(opts, plan_cache=True, ...)'s report, with the manifests it read, for a caller that reads no
    evaluation context (the audit): where the plan cache's entry holds the verdicts and the plan, the context's
    module (stackcheck.verdicts.context, with the version and architecture readers it imports) is not imported
    at all (issue 21); elsewhere it is imported with the engine, after the facts."""
    report, manifests, _context = _report(opts, plan_cache=True, gathered=gathered, also=also, preload_context=False)
    return report, manifests


def _report(
    opts: Options,
    want_plan: bool = True,
    manifests: Manifests | None = None,
    gathered: Callable[[], Gathered] | None = None,
    plan_cache: bool = False,
    also: Callable[[], None] | None = None,
    plan_reported: bool = False,
    checks_shown: bool = True,
    upstream_out: dict[str, str | None] | None = None,
    verdicts_out: list[FeatureVerdict] | None = None,
    preload_context: bool = True,
    keep_lookups: bool = False,
    upstream_slot: list[tuple[str, str]] | None = None,
    box_out: list[Any] | None = None,
) -> tuple[Report, Manifests, Callable[[], Context]]:
    """build_report's work: the report, the manifests and the evaluation context, made on the first call (none is made
    where the verdicts and the plan are kept). `preload_context`: the context's module is imported in the loading
    thread (False: the caller reads no context, so it is imported only where the verdicts are judged)."""
    loaded = manifests
    texts: list[str] | None = [] if plan_cache and manifests is None else None

    def preload(beside: bool = False) -> Manifests:
        m = loaded if loaded is not None else load_manifests(opts.manifests_dirs, texts)
        if beside and texts is not None:  # (in the loading thread, while the probes wait on the driver)
            from stackcheck.assembly import plan_cache

            plan_cache.prepare(texts)  # the key's part that is not the facts
        if beside:  # every report is masked as it is rendered (stackcheck.render: redact.public_document)
            from stackcheck.redact import prepare_public

            prepare_public()
        import stackcheck.documents.report

        if preload_context or texts is None:
            import stackcheck.verdicts.context
        if texts is None:  # with a cache, the engine and the planner are imported only when they have to run
            import stackcheck.verdicts.engine

            if want_plan:
                import stackcheck.plan  # noqa: F401
        if also is not None:
            also()
        return m

    if opts.facts_file and gathered is None:
        # saved facts: nothing waits on a driver, so nothing runs beside the loading (the facts first, as with
        # the thread: a bad facts file is the error reported, whatever the manifests hold)
        facts, outcomes, host = gather(opts)
        manifests = preload()
    else:
        later = Background(lambda: preload(beside=True))
        try:
            facts, outcomes, host = gathered() if gathered is not None else gather(opts, later.get)
        except Exception:  # (an interrupt does not wait)
            later.settle()
            raise
        manifests = later.get()
    assert manifests is not None
    from stackcheck.documents.report import base_report, summarize

    facts = apply_assumptions(facts, opts, manifests)
    if opts.facts_file:  # what a facts file leaves out that the manifests' tables decide exactly, marked where it lies
        from stackcheck.facts.filled import fill

        facts = fill(facts, manifests)[0]
    launch = dict(opts.launch)
    made: list[Context] = []
    judged = manifests

    def context() -> Context:
        if not made:
            from stackcheck.verdicts.context import Context

            made.append(Context(facts=facts, manifests=judged, launch=launch))
            if keep_lookups:
                made[0].keep_lookups()
        return made[0]

    kept = _Kept(facts, launch, texts, context) if texts is not None else None
    box_kept: dict[str, Any] = {}  # the box's verdicts an earlier request kept under the key, per way (iperf38)
    failing_kept: dict[str, list[Any]] = {}  # the checks failing on the box an earlier request kept, per way (iperf40)
    answers: dict[str, str | None] = {}
    if kept is not None and upstream_out is not None:
        if kept.key:  # a plan with a request: the answers an earlier request on the same key kept (iperf37)
            from stackcheck.assembly.plan_cache import load_upstream_parts, upstream_dir

            where = upstream_dir()
            if where:
                answers, box_kept, failing_kept = load_upstream_parts(where, kept.key)
                upstream_out.update(answers)
                if upstream_slot is not None:
                    upstream_slot.append((where, kept.key))
        upstream_out.update(kept.upstream)
    way = "all" if checks_shown else "features"
    served = None
    if kept is not None and kept.verdicts is None and upstream_slot is not None and not want_plan:
        got = box_kept.get(way)
        if got is not None and (got[2] is not None) == bool(opts.facts_file):
            served = got
    if kept is not None and kept.verdicts is not None:
        features, checks = cast("tuple[list[FeatureVerdict], list[CheckVerdict]]", kept.verdicts)
    elif served is not None:  # as this request would judge them: a function of the key (plan_cache.Box)
        features, checks = list(served[0]), list(served[1])
    elif not checks_shown and (kept is None or not (kept.directory and kept.key) or not want_plan):
        # no check is shown nor kept in the plan cache (whose entry holds both kinds for a later audit; none is
        # kept without the plan): the features alone, as evaluate_all judges them; the plan reads no check
        from stackcheck.verdicts.engine import evaluate_feature, prepare

        # the planner runs after (this is `stackcheck plan`'s text): it reads every rule's per-GPU shape from the kept
        # answers (engine.prepare, once per manifests), so the features are judged with them read already, not worked
        # out rule by rule here first
        prepare(manifests)
        ctx = context()
        features, checks = [evaluate_feature(f, ctx) for f in manifests.features], []
    else:
        from stackcheck.verdicts.engine import evaluate_all

        features, checks = evaluate_all(context())
    if verdicts_out is not None:
        verdicts_out.extend(features)
    report = base_report(facts, outcomes, manifests, host)
    report["features"] = features
    report["checks"] = checks
    judged_now: dict[str, Any] | None = None  # (the merge made now, for box_out)
    if opts.facts_file:  # versions a partial facts file lacks that its releases pin: only ever to fail
        merged = kept.merged.get(way) if kept is not None and kept.verdicts is not None else None
        if merged is None and served is not None:
            merged = served[2]
        if merged is not None:  # the merge of these verdicts, kept with them (the same function of the same key)
            for field, value in merged.items():
                report[field] = value  # type: ignore[literal-required]
        else:
            from stackcheck.facts.implied import apply as apply_implied

            before = {k: report.get(k) for k in ("features", "checks", "implied")}
            apply_implied(report, context(), checks=checks_shown)
            judged_now = {k: report.get(k) for k, v in before.items() if report.get(k) is not v}
            if kept is not None:
                kept.merged[way] = judged_now
    if box_out is not None and upstream_slot:
        # kept from the second request on these facts (an earlier one kept its answers): a first request (a box
        # planned once) pays neither the copy nor its writing
        new = (
            served is None
            and kept is not None
            and kept.verdicts is None
            and not want_plan
            and bool(answers or box_kept)
        )
        box_out[:] = [dict(box_kept), new, dict(failing_kept), way]
        copy = _box_copy(features, checks, judged_now if opts.facts_file else None) if new else None
        if copy is not None:
            box_out[0][way] = copy
        box_out[1] = copy is not None
    report["summary"] = summarize(report["features"], report["checks"])
    if want_plan and plan_reported and report["features"] != features:
        # the implied versions changed a verdict
        report["plan"] = _compute_plan(context(), report["features"], box=features)
    elif want_plan:
        report["plan"] = kept.plan(features, checks) if kept is not None else _compute_plan(context(), features)
    elif kept is not None:
        kept.keep_merged()
    return report, manifests, context


def _box_copy(features: list[Any], checks: list[Any], merged: dict[str, Any] | None) -> Any:
    """A copy of the box's verdicts as judged now (plan_cache.Box), taken before the planner runs on them; None where
    they are not plain JSON (nothing is kept) or a facts file's merge was not made here."""
    from stackcheck import lean_json

    try:
        text = lean_json.dumps([features, checks, merged])
    except (TypeError, ValueError):
        return None
    copy = lean_json.loads(text)
    return None if copy != [features, checks, merged] else tuple(copy)


def reevaluate(
    report: Report, ctx: Context, opts: Options, launch: dict[str, Any], only: set[str] | None = None
) -> Context:
    """The verdicts again with launch facts learnt after them (the gate's preflight reads the model's config.json
    after the report: `mla`), in place in `report`; the context they were judged in is returned. Only the
    features and checks whose rules read one of those facts are judged again (a few milliseconds, not the whole
    stack), and of those, with `only`, the ids it holds; with a facts file, the implied versions are merged into
    those as into every verdict of the report."""
    if all(ctx.launch.get(k) == v for k, v in launch.items()):
        return ctx
    from stackcheck.documents.report import summarize
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_check, evaluate_feature

    again = Context(facts=ctx.facts, manifests=ctx.manifests, launch={**ctx.launch, **launch})
    index = _launch_readers(ctx.manifests)
    # the items whose rules text holds "launch.K" for a K given: from the index, or (a K with a quote, which the index
    # does not hold) from the texts themselves
    readers = {i for k in launch if '"' not in k for i in index.get(k, ())}
    names = tuple(f'"launch.{k}"' for k in launch if '"' in k)
    texts = ctx.manifests.derived("rules-text")  # item id -> its rules as JSON text, written once per manifests

    def reads(item: Any) -> bool:
        if only is not None and str(item.get("id")) not in only:
            return False
        return id(item) in readers or any(n in _rules_text(texts, item) for n in names)

    part: Any = {
        "features": [evaluate_feature(f, again) for f in ctx.manifests.features if reads(f)],
        "checks": [evaluate_check(c, again) for c in ctx.manifests.checks if reads(c)],
    }
    if opts.facts_file:  # the implied versions, merged into the verdicts judged again as build_report merged them
        from stackcheck.facts.implied import apply as apply_implied

        apply_implied(part, again)
    features = {str(v.get("id")): v for v in part["features"]}
    checks = {str(v.get("id")): v for v in part["checks"]}
    report["features"] = [features.get(str(v.get("id")), v) for v in report.get("features") or []]
    report["checks"] = [checks.get(str(v.get("id")), v) for v in report.get("checks") or []]
    report["summary"] = summarize(report["features"], report["checks"])
    return again


def _launch_readers(manifests: Manifests) -> dict[str, frozenset[int]]:
    """Per launch fact K, the items (features and checks, by identity: the manifests keep them alive) whose rules as
    JSON text hold `"launch.K"`: what reevaluate judges again when K is learnt, found once per manifests where each
    re-judging searched every item's text for each fact (~0.3 ms a gate of an unread model, 2-core box). Exact for a
    K without a quote: the text holds `"launch.K"` where an occurrence of `"launch.` is followed by K and the first
    quote after it, which is the K read here."""
    memo = manifests.derived("launch-readers")
    items = (*manifests.features, *manifests.checks)
    index: dict[str, frozenset[int]] | None = memo.get("index")
    kept = memo.get("items")  # (the items it was made of, alive: a list edited in memory is read again)
    same = kept is not None and len(kept) == len(items) and all(a is b for a, b in zip(kept, items, strict=True))
    if index is None or not same:
        texts = manifests.derived("rules-text")
        found: dict[str, set[int]] = {}
        for item in items:
            text = _rules_text(texts, item)
            at = text.find('"launch.')
            while at >= 0:
                end = text.find('"', at + 8)
                if end < 0:
                    break
                found.setdefault(text[at + 8 : end], set()).add(id(item))
                at = text.find('"launch.', at + 1)
        index = {k: frozenset(v) for k, v in found.items()}
        memo["index"], memo["items"] = index, items
    return index


def rules_texts(manifests: Manifests) -> None:
    """Write reevaluate's text of every feature's and check's rules (what it searches for the launch facts they
    read), and the index of those texts by launch fact (_launch_readers), into the manifests' memo now: the gate does
    it in its loading thread while the probes wait on the driver, where reevaluate wrote ~2 ms of JSON on the main
    thread after the facts (2-core box)."""
    kept = _kept_readers(manifests)
    if kept is not None and kept[2] is not None:
        return  # (the index as an earlier run made it of these very files: texts are written only where one is read)
    texts = manifests.derived("rules-text")
    for item in (*manifests.features, *manifests.checks):
        _rules_text(texts, item)
    index = _launch_readers(manifests)
    if kept is not None:
        _keep_readers(manifests, kept[0], kept[1], index)


#: the shipped documents the launch readers' index is made of, in its order of items
_READER_DOCS = ("features.json", "checks.json")


def _kept_readers(manifests: Manifests) -> tuple[str, str, Any] | None:
    """(directory, key, the index put in the memo or None) of the launch readers' index an earlier run kept for the
    same shipped features.json and checks.json (knowledge/prepared.py: their stamps, this module's and Python's in
    the key; positions of items, mapped back to this run's items); None when it cannot be kept (a document not as
    shipped, the caches off)."""
    from stackcheck.knowledge import loader, prepared

    kept = prepared.kept_for(manifests, "launch-readers", _READER_DOCS, __file__, loader.__file__ or "")
    if kept is None:
        return None
    where, key, value = kept
    items = (*manifests.features, *manifests.checks)
    if value is None or value.get("items") != len(items) or type(value.get("index")) is not dict:
        return where, key, None
    index: dict[str, frozenset[int]] = {}
    for k, positions in value["index"].items():
        if type(k) is not str or type(positions) is not list:
            return where, key, None  # (another shape: a miss, made again and kept anew)
        if not all(type(i) is int and 0 <= i < len(items) for i in positions):
            return where, key, None
        index[k] = frozenset(id(items[i]) for i in positions)
    memo = manifests.derived("launch-readers")
    memo["index"], memo["items"] = index, items
    return where, key, index


def _keep_readers(manifests: Manifests, where: str, key: str, index: dict[str, frozenset[int]]) -> None:
    """Keep the launch readers' index as positions of items (_kept_readers reads it)."""
    from stackcheck.knowledge import prepared

    items = (*manifests.features, *manifests.checks)
    position = {id(item): n for n, item in enumerate(items)}
    value = {"items": len(items), "index": {k: sorted(position[i] for i in v) for k, v in index.items()}}
    prepared.keep(where, "launch-readers", key, value)


def _rules_text(texts: dict[Any, str], item: Any) -> str:
    """An item's rules as JSON text, from the manifests' memo (written there the first time)."""
    key = (id(item), str(item.get("id")))
    text = texts.get(key)
    if text is None:
        from stackcheck import lean_json

        text = texts[key] = lean_json.dumps(item.get("rules"))
    return text


def reevaluate_unknown(report: Report, ctx: Context, opts: Options, key: str, why: str) -> None:
    """The verdicts that hang on a boolean launch fact that is not known (the gate read a model's config.json but
    cannot tell whether SGLang serves it as MLA: `mla` for the served model, `draft_mla` for the speculative draft),
    in place in `report`: each feature or check judged with the fact true and with it false (the rules guard the
    fact with `exists`, so the verdict without it can be ok where both cases are not) becomes unknown where either
    case is not ok and the two differ (not ok alike either way: that status, where the verdict without the fact
    differs). Its reasons are the failing ones of both cases: those failing either way as they are, the others
    marked unknown and prefixed with `why` and the case they belong to (fail closed: never ok because the fact is
    missing; trtllm_mla refuses a model it does not run as MLA and checks an MLA model's dims, so a model of
    unknown kind on it is neither: it was ok before, when only the verdicts ok with the fact false were looked at)."""
    from stackcheck.documents.report import summarize

    # reevaluate puts new lists and a new summary in a copy; no verdict is changed in place
    judged: list[Any] = []
    for value in (True, False):
        case: Any = report.copy()
        reevaluate(case, ctx, opts, {key: value})
        judged.append(case)
    whole: Any = report
    for part in ("features", "checks"):
        true = {str(v.get("id")): v for v in judged[0].get(part) or []}
        false = {str(v.get("id")): v for v in judged[1].get(part) or []}
        out = []
        for v in whole.get(part) or []:
            vid = str(v.get("id"))
            t, f = true.get(vid), false.get(vid)
            if t is None or f is None or (t.get("status") == "ok" and f.get("status") == "ok"):
                out.append(v)  # ok either way: as judged
                continue
            same = t.get("status") == f.get("status")
            if same and v.get("status") == t.get("status"):
                out.append(v)  # not ok, alike either way and as judged
                continue
            bad = ("fail", "unknown")
            failing = [{(r.get("rule"), r.get("result")): r for r in c.get("reasons") or [] if r.get("result") in bad}
                       for c in (t, f)]  # fmt: skip
            reasons = list(failing[0][k] for k in failing[0] if k in failing[1])  # failing either way: as they are
            for side, mine, other in (("if it is", failing[0], failing[1]), ("if it is not", failing[1], failing[0])):
                reasons += [
                    {**r, "result": "unknown", "message": f"{why}; {side}, {r.get('message', '')}"}
                    for k, r in mine.items()
                    if k not in other
                ]
            # an earlier pass's unknowns (the target's kind, where the draft's is judged after it) are kept
            named = {(r.get("rule"), r.get("result")) for r in reasons}
            reasons += [
                r
                for r in v.get("reasons") or []
                if r.get("result") == "unknown" and (r.get("rule"), "unknown") not in named
            ]
            base = t if t.get("status") != "ok" else f
            status, effect = (base.get("status"), base.get("effect")) if same else ("unknown", None)
            out.append(
                {**base, "status": status, "effect": effect, "reasons": reasons or list(base.get("reasons") or [])}
            )
        whole[part] = out
    report["summary"] = summarize(report["features"], report["checks"])


class _Kept:
    """The audit's entry in stackcheck.assembly.plan_cache for these facts, launch facts and manifest texts:
    looked up before the verdicts (`verdicts`: (features, checks) when the entry holds them, else None);
    `plan()` gives the entry's plan, else computes it and keeps it with the verdicts."""

    def __init__(self, facts: Facts, launch: dict[str, Any], texts: list[str], context: Callable[[], Context]) -> None:
        from stackcheck.assembly import plan_cache

        self.context = context  # (made only where the plan is worked out here)
        self.directory, self.key, self.entry = plan_cache.lookup_entry(facts, launch, texts)
        self.verdicts = self.entry.verdicts if self.entry is not None else None
        #: the implied versions' merges of the verdicts (plan_cache.Entry.merged): the entry's, and one made now
        self.merged: dict[str, dict[str, Any]] = dict(self.entry.merged) if self.entry is not None else {}
        #: which stack unblocks each blocked feature (plan_cache.Entry.upstream): the entry's, or the plan's made now
        self.upstream: dict[str, str | None] = dict(self.entry.upstream) if self.entry is not None else {}

    def keep_merged(self) -> None:
        """A merge the entry (found with its verdicts) did not hold: kept with it now."""
        from stackcheck.assembly import plan_cache

        entry = self.entry
        if entry is None or self.verdicts is None or self.merged.keys() == entry.merged.keys():
            return
        if self.directory and self.key:
            plan_cache.store(self.directory, self.key, entry.plan, self.verdicts, self.merged, self.upstream)

    def plan(self, features: list[FeatureVerdict], checks: list[CheckVerdict]) -> PlanJSON:
        from stackcheck.assembly import plan_cache

        if self.entry is not None and self.verdicts is not None:
            self.keep_merged()
            return cast("PlanJSON", self.entry.plan)  # a plan this code stored (keyed by the code and the inputs)
        if self.entry is not None:  # kept by the gate, without verdicts: they are kept with it now
            plan = cast("PlanJSON", self.entry.plan)
        else:
            plan = _compute_plan(self.context(), features, self.upstream, features)
        if self.directory and self.key:
            plan_cache.store(self.directory, self.key, plan, (list(features), list(checks)), self.merged, self.upstream)
        return plan


def _compute_plan(
    ctx: Context,
    features: list[FeatureVerdict],
    upstream: dict[str, str | None] | None = None,
    box: list[FeatureVerdict] | None = None,
) -> PlanJSON:
    from stackcheck.plan import make_plan

    return make_plan(ctx, features, upstream_kept=upstream, box_verdicts=box).to_json()
