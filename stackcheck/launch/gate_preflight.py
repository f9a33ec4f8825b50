"""Wiring stackcheck/launch/preflight/ into `stackcheck gate`: what the gate checks besides the feature tables.

The order in commands/gate.py: the GPU-usage reading starts in a thread with the other probes (only when the facts are
this box's); `--config FILE` is merged into the server's arguments before they are derived (as SGLang merges
it); after the verdicts, `run_for_gate` reads the model(s), adds the features the model needs to the
launch's requirements (each with the line of the config that asks for it), runs the checks, and `merge`
turns their results into refusals and warnings: fail refuses; unknown refuses unless --allow-unknown; warn
warns. Every check is in the decision document (`preflight.checks`) with its observed and required values.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from stackcheck.errors import UsageError
from stackcheck.launch.preflight import Inputs, Preflight, read_live, run
from stackcheck.launch.preflight.result import CheckResult
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

PREFLIGHT_KIND = "preflight"


def start_usage(facts_file: str | None, command: Sequence[str] | None) -> Any:
    """Read GPU usage in a thread now (NVML calls release the GIL); None when the facts come from a file."""
    if facts_file or not command:
        return None
    from stackcheck.probes import nvml_early

    early = nvml_early.take_usage()
    if early is not None:  # the command line's forked NVML reader read it already, off this process
        return EarlyUsage(early)
    from stackcheck.assembly.pipeline import Background
    from stackcheck.probes.gpu_usage import read_gpu_usage

    return Background(read_gpu_usage)


class EarlyUsage:
    """GPU usage as the forked NVML reader read it (stackcheck.probes.nvml_early); where it has none (it
    died, or gave no answer within the NVML probe's timeout), a reading made here, or the reason why not."""

    def __init__(self, early: Any) -> None:
        self._early = early

    def get(self) -> Any:
        from stackcheck.probes.gpu_usage import UsageReading, read_gpu_usage
        from stackcheck.probes.nvml import NvmlProbe

        timeout_s = NvmlProbe.timeout_s
        reading = self._early.usage_reading(timeout_s)
        if reading is not None:
            return reading
        if not self._early.done.is_set():  # still no answer: a hung driver; reading it here would hang too
            return UsageReading([], f"NVML: no answer within {timeout_s:g} s")
        return read_gpu_usage()


def expand_config(
    command: list[str], mapping: Mapping[str, Any], data: Mapping[str, Any], env: Mapping[str, str]
) -> tuple[list[str], str | None, str | None]:
    """The command with an SGLang launch's `--config FILE` merged in (see preflight/configfile.py)."""
    from stackcheck.launch import gate

    argv, _ = gate.split_env_prefix(command, env)
    entry, args = gate.find_entrypoint(argv, mapping)
    if entry is None or "--config" not in args:
        return command, None, None
    from stackcheck.launch.preflight.configfile import expand_config as merge_config
    from stackcheck.readers.fsview import HostView

    head = command[: len(command) - len(args)]
    merged, path, problem = merge_config(args, HostView(), os.getcwd(), data)
    return [*head, *merged], path, problem


def server_env(command: Sequence[str], env: Mapping[str, str]) -> dict[str, str]:
    from stackcheck.launch import gate

    return gate.split_env_prefix(command, env)[1] if command else dict(env)


def run_for_gate(
    derived: Any,
    mapping: Mapping[str, Any],
    manifests: Any,
    report: Mapping[str, Any],
    sglang_version: str | None,
    env: Mapping[str, str],
    usage: Any,
    live: bool,
    opts: Any = None,
) -> Preflight:
    """Run the checks for a derived SGLang launch, and add the model's needs to its requirements."""
    from stackcheck.launch import gate
    from stackcheck.readers.fsview import HostView

    facts: dict[str, Any] = report["facts"] if isinstance(report.get("facts"), dict) else {}
    data = manifests.preflight
    readings = None
    if live:
        py: dict[str, Any] = facts["python"] if isinstance(facts.get("python"), dict) else {}
        search = py.get("sys_path") if isinstance(py.get("sys_path"), list) else None
        # the target environment's sys.path (the python probe: the gated command's interpreter, --python, a
        # venv) read through the same view as the packages: --root DIR; an image is not read again here
        search_dirs: list[str] | None = [str(p) for p in search] if search else [p for p in sys.path if p]
        deps_view = None
        if getattr(opts, "image", None):
            search_dirs = None
        elif getattr(opts, "root", None):
            from stackcheck.assembly.target import open_view

            deps_view = open_view(opts)
        readings = read_live(derived.options, data, usage.get() if usage is not None else None, search_dirs, facts)
        readings.deps_view = deps_view
    known = set((manifests.components.get("packages") or {}).keys())
    for pkg in list(known):
        known.update(str(n) for n in (manifests.package(pkg).get("names") or []))
    inputs = Inputs(
        options=derived.options,
        env=env,
        facts=facts,
        data=data,
        view=HostView(),
        cwd=os.getcwd(),
        home=env.get("HOME") or os.path.expanduser("~"),
        sglang_version=sglang_version,
        known_packages=known,
        readings=readings,
    )
    pre = run(inputs)
    defaults = {str(o["flag"]): o.get("default") for o in gate._options(mapping) if "default" in o}
    for req in pre.requirements:
        if gate._conds(req.when, derived, defaults):
            gate._add(derived, req.feature, "explicit", req.why)
    derived.launch.update(pre.launch)
    return pre


def mla_unknown(pre: Preflight) -> str | None:
    """Why the served model's attention kind is not known where its config.json was read (model.mla_of gave
    None: an architecture no SGLang release read makes MLA, with kv_lora_rank, on a release the data does not
    cover); None when it is known or the model was not read (the unread paths judge that case)."""
    for info in pre.models:
        if info.role == "model" and info.attention is not None and info.mla is None:
            return str(info.mla_why)
    return None


def mla_unread(pre: Preflight) -> str | None:
    """Why the served model's attention kind is not known where its config.json was not read (a Hugging Face id
    not in the cache, a path that is not there, facts from a file): the rules on launch.mla (attention-fa3's
    mla-needs-hopper, attention-fa4's MLA rules) are then neither met nor not, never dropped as if the model
    were not MLA; None when the model was read or no model is named."""
    for info in pre.models:
        if info.role == "model" and info.attention is None:
            return f"the gate could not read the model {info.spec}'s config.json, so whether it is MLA is not known"
    return None


def blocker_of(result: CheckResult) -> Any:
    from stackcheck.assembly.pipeline import scrub_home
    from stackcheck.launch.gate import Blocker

    subject = f"{result.check} ({result.subject})" if result.subject else result.check
    reason = {"message": scrub_home(result.message), "source": result.source}
    return Blocker(subject, PREFLIGHT_KIND, result.status, None, [reason])


def document(pre: Preflight) -> dict[str, Any]:
    """The preflight part of the decision document, with the home directory shown as ~ (as in reports)."""
    from stackcheck.assembly.pipeline import scrub_home

    doc: dict[str, Any] = scrub_home(pre.to_json())
    return doc


def merge(decision: Any, pre: Preflight, allow_unknown: bool) -> None:
    """Preflight results into the gate's decision: fail refuses, unknown refuses unless --allow-unknown."""
    for r in pre.results:
        if r.status == "ok":
            continue
        b = blocker_of(r)
        if r.status == "fail" or (r.status == "unknown" and not allow_unknown):
            decision.blocking.append(b)
        else:
            decision.warnings.append(b)
    decision.allow = not decision.blocking


def check_allow(
    allow: Sequence[str], features: Sequence[Mapping[str, Any]], stack_checks: Sequence[Mapping[str, Any]] = ()
) -> list[str]:
    """--allow values: feature ids, stack check ids (checks.json) or preflight check ids; anything else is a
    usage error."""
    from stackcheck.launch.preflight import LIVE_CHECKS

    ids = {str(f.get("id")) for f in features}
    checks = {*LIVE_CHECKS, "gpu-count", "parallel-layout", "model", "draft-model"}
    checks |= {str(c.get("id")) for c in stack_checks}
    out = [x.strip() for item in allow for x in item.split(",") if x.strip()]
    bad = [x for x in out if x not in ids and x not in checks]
    if bad:
        raise UsageError(
            f"--allow: unknown feature or check {', '.join(bad)} (features: {', '.join(sorted(ids))}; "
            f"checks: {', '.join(sorted(checks))})"
        )
    return out
