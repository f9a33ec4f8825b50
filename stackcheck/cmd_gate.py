"""`stackcheck gate`: refuse to start a server whose features are blocked, else exec it.

    stackcheck gate --require FEATURE... [--allow-unknown] [--facts FILE] [--format text|json]
    stackcheck gate [options] [--dry-run] -- COMMAND...
    stackcheck gate --watch [options] -- COMMAND...   (a child, not exec: triage if it dies)

With a command, the gate reads the SGLang command line and its environment (manifests/launch.json), derives
the features it needs and the launch facts (tp, attention backend, quantization, speculative algorithm),
evaluates them, and then either replaces itself with the command (os.execvp: same pid, argv exactly as
given, no shell; the exit status and signals are the server's own) or refuses: the server never starts.
The policy for explicit and default features is in stackcheck/gate.py's docstring and in --help.

Output: when the command is exec'd, the gate writes only to stderr (warnings; nothing with --quiet), so the
server's stdout is its own. A refusal, --dry-run, or a --require check without a command write the
decision to stdout (text, or JSON with --format json).

Exit codes: 0 every required feature ok (no command, or --dry-run that would allow); 1 refused (a required
feature is not ok); 2 usage error or bad input (no command after --, an unknown --require feature, a
malformed server flag such as `--tp` without a value, a bad facts file or manifest); 3 a probe failed and
--strict was given; 4 internal error in the gate: it refuses and never execs; 126/127 the command could
not be executed / was not found (as a shell says). Once exec'd, the status is the server's."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from stackcheck.errors import EXIT_FINDING, EXIT_INTERNAL, EXIT_OK, StackcheckError, UsageError
from stackcheck.options import add_facts_options, options_from

HELP_EPILOG = """decision policy:
  explicit features (--require, or turned on by a flag or value in COMMAND) must be ok: blocked refuses,
  unknown refuses unless --allow-unknown, not-applicable (a package it needs is missing) refuses.
  default features (custom-allreduce when tp > 1 unless --disable-custom-all-reduce; cuda-graph unless
  --disable-cuda-graph; deepgemm unless SGLANG_ENABLE_JIT_DEEPGEMM is false; attention-flashinfer when
  FlashInfer is the default sampler or attention backend) are checked too: blocked with
  effect crash refuses, blocked with effect disabled/degraded only warns; unknown refuses (unless
  --allow-unknown) when one of the feature's rules can crash, else warns.
  values the manifests do not know are unknown; a flag the installed SGLang lacks refuses; flags launch.json
  does not list pass through unchecked (one note line); --config makes the launch facts unknown.
  deepgemm (default on) fails only with FP8 models: it warns; --quantization fp8 requires fp8-block-gemm.
  a command in which no SGLang launch or flag is found needs no feature (only --require is checked).

gate exit codes:
  0  allowed (no command, or --dry-run); with a command the server replaces the gate: its status is returned
  1  refused: a required feature is not ok (one line per reason, with the plan step that fixes it)
  2  usage error or bad input (no command after --, unknown feature, malformed server flag, bad facts file)
  3  a probe failed and --strict was given
  4  internal error in the gate: refused, the command is never run
  126/127  the command could not be executed / was not found
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.epilog = HELP_EPILOG
    add_facts_options(p)
    p.add_argument(
        "--require",
        metavar="FEATURE",
        nargs="+",
        action="extend",
        default=[],
        help="features that must be ok (repeatable, or comma-separated); see `stackcheck audit` for ids",
    )
    p.add_argument("--allow-unknown", action="store_true", help="do not refuse on unknown (fail open on unknowns)")
    p.add_argument("--dry-run", action="store_true", help="print what was derived and decided; run nothing")
    p.add_argument("--format", choices=["text", "json"], default="text", help="decision format (default text)")
    p.add_argument("-q", "--quiet", action="store_true", help="no warnings on stderr when the command is run")
    p.add_argument(
        "--watch",
        action="store_true",
        help="run the server as a child instead of exec: pass its output through, say when it is ready, "
        "and if it dies print the triaged root cause (exit status is the server's)",
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


def _command(args: argparse.Namespace) -> list[str] | None:
    cmd = list(args.server_command or [])
    if not cmd:
        return None
    if cmd[0] == "--":
        cmd = cmd[1:]
        if not cmd:
            raise UsageError("missing command after -- (expected, e.g., -- python -m sglang.launch_server ...)")
        return cmd
    raise UsageError(f"unexpected argument {cmd[0]!r}: put the server command after --")


def run(args: argparse.Namespace) -> int:
    try:
        outcome = _decide(args)
    except StackcheckError:
        raise  # usage / bad input / probe failures: cli prints one line and exits 2 or 3; never exec
    except Exception as exc:  # a bug in the gate: refuse, never exec
        print(f"stackcheck gate: internal error: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        print("stackcheck gate: refused: the command was not run (exit 4)", file=sys.stderr)
        if os.environ.get("STACKCHECK_DEBUG"):
            import traceback

            traceback.print_exc()
        return EXIT_INTERNAL
    doc, command = outcome
    allow = doc["decision"] == "allow"
    if command is None or args.dry_run or not allow:
        text = json.dumps(doc, indent=2, default=str) + "\n" if args.format == "json" else render_text(doc)
        sys.stdout.write(text)
        sys.stdout.flush()
        return EXIT_OK if allow else EXIT_FINDING
    if not args.quiet:
        if args.format == "json":
            sys.stderr.write(json.dumps(doc, default=str) + "\n")
        else:
            for line in render_text(doc, warnings_only=True).splitlines():
                sys.stderr.write(line + "\n")
    if args.watch:
        from stackcheck.watch import watch

        return watch(command, ready=args.ready_pattern.encode())
    return _exec(command)


def _exec(command: list[str]) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp(command[0], command)  # noqa: S606 - the point of the gate: argv exactly, no shell
    except FileNotFoundError:
        print(f"stackcheck gate: {command[0]}: command not found", file=sys.stderr)
        return 127
    except OSError as exc:
        print(f"stackcheck gate: {command[0]}: cannot execute: {exc.strerror or exc}", file=sys.stderr)
        return 126


def _decide(args: argparse.Namespace) -> tuple[dict[str, Any], list[str] | None]:
    from stackcheck import gate
    from stackcheck.manifest_loader import load as load_manifests

    command = _command(args)
    require = [x.strip() for item in args.require or [] for x in item.split(",") if x.strip()]
    if command is None and not require:
        raise UsageError("nothing to gate: give --require FEATURE... and/or -- COMMAND...")
    opts = options_from(args)
    from stackcheck.pipeline import Background, gather

    # the probes wait on the driver: start them now, while the manifests are read and the command derived
    later_manifests = Background(lambda: load_manifests(opts.manifests_dirs))
    later_facts = Background(lambda: gather(opts, later_manifests.get))
    manifests = later_manifests.get()
    known = {str(f.get("id")) for f in manifests.features}
    bad = [f for f in require if f not in known]
    if bad:
        raise UsageError(f"--require: unknown feature {', '.join(bad)} (known: {', '.join(sorted(known))})")
    mapping = manifests.launch
    if command is not None:
        derived = gate.derive(command, mapping, os.environ, require)
    else:
        derived = gate.Derived(command=[], entrypoint=None, sglang_args=[])
        for f in require:
            derived.required.append(gate.Requirement(f, "explicit", "--require"))
    if not derived.required and not derived.problems:
        doc = _document(derived, gate.Decision(True, [], [], []), [])
        doc["note"] = "no SGLang launch or flag found in the command and no --require: nothing to check"
        return doc, command
    from stackcheck.pipeline import evaluate

    opts.launch = dict(derived.launch)
    report, ctx = evaluate(opts, want_plan=False, manifests=manifests, gathered=later_facts.get)
    newer = (ctx.facts.get("derived") or {}).get("sglang") if ctx.newer_than_manifests("sglang") else None
    flags = newer.get("flags") if isinstance(newer, dict) and isinstance(newer.get("flags"), dict) else None
    extra = gate.release_problems(derived, mapping, ctx.installed_version("sglang"), flags)
    decision = gate.decide(derived, report["features"], manifests.features, args.allow_unknown, extra)
    plan: Any = None
    if decision.blocking:
        plan = _plan(ctx, report["features"])
    for b in [*decision.blocking, *decision.warnings]:
        b.fix = _fix(b.feature, plan, manifests.features)
    doc = _document(derived, decision, extra)
    doc["sglang"] = ctx.installed_version("sglang")
    doc["facts"] = opts.facts_file or "probed"
    if plan is not None and not isinstance(plan, dict):
        doc["plan_error"] = str(plan)
    return doc, command


def _plan(ctx: Any, features: Any) -> Any:
    """The planner's plan, if the planner is importable and works; else None (or the error text)."""
    try:
        from stackcheck.plan import make_plan
    except ImportError:
        return None
    try:
        return make_plan(ctx, features)
    except Exception as exc:  # the planner failing must not change the decision
        return f"planner failed: {type(exc).__name__}: {exc}".splitlines()[0]


def _step_features(step: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    for key in ("unblocks", "fixes", "features", "unblocked"):
        for x in step.get(key) or []:
            if isinstance(x, str):
                out.add(x)
            elif isinstance(x, dict):
                for k in ("id", "feature"):
                    if isinstance(x.get(k), str):
                        out.add(x[k])
    return out


def _fix(feature: str, plan: Any, features: list[dict[str, Any]]) -> str | None:
    """The plan step that unblocks the feature (planner output: steps[] with unblocks[]), else what the
    plan says stays blocked, else the feature's workaround and first fixed release from the manifests."""
    still: str | None = None
    if isinstance(plan, dict):
        for i, step in enumerate(plan.get("steps") or []):
            if isinstance(step, dict) and feature in _step_features(step):
                name = next((str(step[k]) for k in ("title", "summary", "action") if step.get(k)), None)
                if name is None and step.get("component"):
                    name = f"{step['component']} {step.get('from') or 'not installed'} -> {step.get('to')}"
                cmds = step.get("commands") or step.get("command")
                text = f"plan step {step.get('n') or i + 1}: {name or step.get('id', '')}"
                if cmds:
                    text += f" ({cmds if isinstance(cmds, str) else '; '.join(map(str, cmds))})"
                return text
        for item in plan.get("still_blocked") or []:
            if isinstance(item, dict) and item.get("feature") == feature:
                still = "no plan step fixes it (still blocked after the plan)"
    spec = next((f for f in features if f.get("id") == feature), None)
    parts = [still] if still else []
    if spec is not None:
        w = spec.get("workaround")
        if isinstance(w, dict) and w.get("text"):
            parts.append(f"workaround: {w['text']}")
        up = spec.get("upstream")
        if isinstance(up, dict) and isinstance(up.get("first_ok"), dict) and up["first_ok"]:
            parts.append("fixed in " + ", ".join(f"{k} {v}" for k, v in up["first_ok"].items()))
    return "; ".join(parts) or None


def _document(derived: Any, decision: Any, extra: list[Any]) -> dict[str, Any]:
    def blocker(b: Any) -> dict[str, Any]:
        return {
            "feature": b.feature,
            "kind": b.kind,
            "status": b.status,
            "effect": b.effect,
            "reasons": b.reasons,
            "fix": b.fix,
        }

    derived_json = derived.to_json()
    from stackcheck.gate import problem_json

    derived_json["problems"] += [problem_json(p) for p in extra]
    return {
        "decision": "allow" if decision.allow else "refuse",
        "command": list(derived.command),
        "derived": derived_json,
        "features": list(decision.checked),
        "reasons": [blocker(b) for b in decision.blocking],
        "warnings": [blocker(b) for b in decision.warnings],
    }


def source_text(src: Any) -> str:
    if isinstance(src, list):
        if not src:
            return "no source"
        head = source_text(src[0])
        return head + (f" (+{len(src) - 1} more)" if len(src) > 1 else "")
    if isinstance(src, dict):
        if src.get("title") and src.get("url"):
            return f"{src['title']} <{src['url']}>"
        if src.get("repo"):
            return f"{src['repo']}:{src.get('path')}@{src.get('ref')}"
        return str(src.get("title") or src)
    if isinstance(src, str):
        return src
    return "no source"


def _reason_text(r: dict[str, Any]) -> str:
    text = str(r.get("message", ""))
    bits = []
    if "observed" in r:
        bits.append(f"observed {r['observed']}")
    if "required" in r:
        bits.append(f"required {r['required']}")
    if bits:
        text += f" [{'; '.join(bits)}]"
    if r.get("gpu"):
        text += f" on {r['gpu']}"
    return text + (f" (source: {source_text(r['source'])})" if r.get("source") else "")


def _line(prefix: str, b: dict[str, Any]) -> list[str]:
    status = b["status"] + (f" ({b['effect']})" if b.get("effect") else "")
    kind = {"default": " [default]", "default-warn": " [default]", "command": " [command]"}.get(b["kind"], "")
    reasons = b.get("reasons") or [{"message": "not ok"}]
    if b["status"] == "note":
        return [f"note: {_reason_text(reasons[0])}"]
    out = [f"{prefix} {b['feature']}{kind}: {status}: {_reason_text(reasons[0])}"]
    out += [f"    also: {_reason_text(r)}" for r in reasons[1:]]
    if b.get("fix"):
        out.append(f"    fix: {b['fix']}")
    return out


def render_text(doc: dict[str, Any], warnings_only: bool = False) -> str:
    lines: list[str] = []
    if not warnings_only:
        d = doc["derived"]
        if doc["command"]:
            launch = ", ".join(f"{k}={v}" for k, v in d["launch"].items()) or "-"
            lines.append(f"command: entrypoint {d['entrypoint'] or 'none'}; launch {launch}")
            for r in d["required"]:
                lines.append(f"  needs {r['feature']} ({r['kind']}: {r['why']})")
            for off in d["off"]:
                lines.append(f"  {off}")
        if doc.get("note"):
            lines.append(f"note: {doc['note']}")
        for f in doc["features"]:
            lines.append(f"  {f['feature']}: {f['status']}" + (f" ({f['effect']})" if f.get("effect") else ""))
        for b in doc["reasons"]:
            lines += _line("REFUSE", b)
    for b in doc["warnings"]:
        lines += _line("warning:", b)
    if not warnings_only:
        verb = "allow" if doc["decision"] == "allow" else "refuse"
        tail = " (dry run: nothing was run)" if doc["decision"] == "allow" and doc["command"] else ""
        lines.append(f"decision: {verb}{tail}")
    elif doc["warnings"]:
        lines.insert(0, "stackcheck gate: allow, with warnings:")
    return "\n".join(lines) + ("\n" if lines else "")
