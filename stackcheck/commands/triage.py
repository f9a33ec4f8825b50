"""`stackcheck triage LOGFILE`: the root cause of a crashed server, from its log.

With `--facts FILE` (a saved report of the box that crashed) or `--probe` (this box, probed now), it also
says which step of the upgrade plan fixes the root cause; for a generic error (signatures.json `caused_by`:
"no kernel image is available" has several causes) it names the causes whose verdicts fail on that box.

Exit codes: 0 when the log was read (whether or not an error was found), 2 when it (or the facts file)
cannot be read.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from stackcheck.commands.arguments import emit, file_name
from stackcheck.launch.triage import (
    TriageReport,
    launch_rules,
    name_causes,
    plan_answer,
    triage_file,
    triage_with_plan,
)
from stackcheck.render import TRIAGE_FORMATS
from stackcheck.render.interface import RenderOptions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", help="the server log to read; '-' reads standard input")
    parser.add_argument("--format", choices=list(TRIAGE_FORMATS), default="text", help="output format (default: text)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--facts",
        metavar="FILE",
        type=file_name,
        default=None,
        help="the crashed box's saved report: name the plan step",
    )
    which.add_argument("--probe", action="store_true", help="probe this box to name the plan step that fixes it")
    parser.add_argument("--manifests", metavar="DIR", action="append", default=[])
    parser.add_argument("--output", metavar="FILE", type=file_name, help="write to FILE atomically instead of stdout")


def plan_fix(
    args: argparse.Namespace, result: Any
) -> tuple[bool, dict[str, Any] | None, dict[str, Any] | None, dict[str, Any] | None]:
    """(asked, fix, cause, launch): whether facts were given, the plan's (or the stack check's) answer for the root
    cause, for a generic error (a signature with `caused_by`) its causes that fail on the box (the answer is then
    the one for the cause named, when it is alone), and the launch it was judged for: the one whose arguments
    SGLang logged (`launch_from_log`), else None (the default launch)."""
    asked = bool(args.facts or args.probe)
    sig = result.root_cause.signature if result.root_cause is not None else None
    generic = sig is not None and bool(sig.caused_by)
    if not asked or (result.feature is None and result.check is None and not generic):
        return asked, None, None, None
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import build_report, load_manifests

    manifests = load_manifests(list(args.manifests))
    logged = launch_from_log(result, manifests.launch)
    opts = Options(facts_file=args.facts, manifests_dirs=list(args.manifests))
    opts.launch = dict(logged["facts"]) if logged is not None else {}
    report, ctx = build_report(opts, manifests=manifests)
    if logged is not None and logged["reads_release"]:  # a flag whose meaning depends on the release: derive again
        again = launch_from_log(result, manifests.launch, ctx.installed_version("sglang"))
        if again is not None and again["facts"] != logged["facts"]:
            logged, opts.launch = again, dict(again["facts"])
            report, ctx = build_report(opts, manifests=manifests)
    plan: Mapping[str, Any] = report.get("plan") or {}
    checks: list[Any] = report.get("checks") or []
    # the rules that read a launch fact the log did not state (all of them without its arguments; the model's own
    # facts with them) are not judged for the launch that crashed
    launch_only = launch_rules(ctx.manifests, logged["stated"] if logged is not None else ())
    fix = triage_with_plan(result, plan, checks, launch_only)
    cause = name_causes(result, report, launch_only) if generic else None
    if cause is not None and cause["alone"] and fix is None:
        named = cause["causes"][0]
        fix = plan_answer(named["feature"], named["check"], None, plan, checks, launch_only)
    shown = {k: logged[k] for k in ("line", "flags", "facts")} if logged is not None else None
    return True, fix, cause, shown


def launch_from_log(result: Any, mapping: Mapping[str, Any], release: str | None = None) -> dict[str, Any] | None:
    """The launch whose arguments SGLang logged as it started (TriageResult.server_args): {line, flags (the command
    line's flags that reproduce them), facts (the launch facts the gate derives from those flags), stated (the launch
    facts the line decides: derived ones and those of the options it states), reads_release}; None where the log
    has no such line, it states none of launch.json's options, or the flags cannot be derived."""
    if result.server_args is None:
        return None
    from stackcheck.errors import StackcheckError
    from stackcheck.launch import gate
    from stackcheck.launch.server_args import ENTRYPOINT, launch_flags

    line, text = result.server_args
    flags, stated = launch_flags(text, mapping.get("options") or [])
    if not stated and not flags:
        return None
    try:
        derived = gate.derive([*ENTRYPOINT, *flags], mapping, {}, (), (), release)
    except (StackcheckError, ValueError):
        return None
    facts = dict(derived.launch)
    return {"line": line, "flags": flags, "facts": facts, "stated": sorted({*stated, *facts}),
            "reads_release": derived.reads_release}  # fmt: skip


def run(args: argparse.Namespace) -> int:
    result = triage_file(args.log)
    asked, fix, cause, launch = plan_fix(args, result)

    def sources() -> Any:
        from stackcheck.knowledge.loader import load

        return load(list(args.manifests)).sources

    report = TriageReport(result, fix, asked, sources, cause, launch)
    emit(TRIAGE_FORMATS[args.format](report, RenderOptions()), args)
    return 0
