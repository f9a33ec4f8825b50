"""`stackcheck plan`: the ordered upgrade steps for this box (or --facts), with their commands and what each
unblocks. --want FEATURE... plans the fewest changes that make those features ok; --hold COMPONENT keeps a
component where it is; --to COMPONENT==VERSION pins a target.

Exit 0 when a plan exists (even an empty one), 1 when no stack satisfies the request, 2 on bad input."""

from __future__ import annotations

from stackcheck.commands.arguments import (
    add_facts_options,
    add_output_options,
    emit,
    format_choice,
    options_from,
    render_options,
)
from stackcheck.errors import EXIT_FINDING, EXIT_OK, UsageError
from stackcheck.facts.model import KERNEL_PACKAGES
from stackcheck.lean_typing import TYPE_CHECKING, cast
from stackcheck.render import FORMAT_ALIASES, PLAN_FORMATS

if TYPE_CHECKING:  # argparse is imported where the parser is built: a plan of saved facts needs none
    import argparse
    from typing import Any

    from stackcheck.verdicts.types import FeatureVerdict


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_facts_options(p)
    add_output_options(p, PLAN_FORMATS, sources=True)
    p.add_argument(
        "--want", nargs="+", metavar="FEATURE", default=[], help="plan the fewest changes that make these features ok"
    )
    p.add_argument(
        "--hold",
        action="append",
        metavar="COMPONENT",
        default=[],
        help=f"keep a component where it is: driver, torch, {'/'.join(KERNEL_PACKAGES)}, flashinfer, sglang "
        "(repeatable)",
    )
    p.add_argument(
        "--to",
        action="append",
        metavar="COMPONENT==VERSION",
        default=[],
        help="pin a target, e.g. --to torch==2.9.1+cu130, --to driver==580, --to sglang==0.5.9 (repeatable)",
    )


#: what argparse gives `stackcheck plan` for every option not on the command line (tests/commands/
#: test_plan_args.py compares the whole namespace with the parser's on generated command lines)
_DEFAULTS: dict[str, object] = {
    "version": None, "command": "plan", "facts": None, "manifests": [], "strict": False, "deep": False, "timeout": 8.0,
    "python": None, "env_dir": None, "root": None, "image": None, "platform": None, "host_facts": None,
    "assume_gpu": None, "assume_driver": None, "assume_interconnect": None, "format": None, "output": None,
    "sources": False, "want": [], "hold": [], "to": [],
}  # fmt: skip
#: option -> (the namespace's name, how it takes values: "one", "many" (nargs +), "append", "flag")
_READ = {"--facts": ("facts", "one"), "--format": ("format", "one"), "--want": ("want", "many"),
         "--hold": ("hold", "append"), "--to": ("to", "append"), "--sources": ("sources", "flag")}  # fmt: skip


def args_of(argv: list[str]) -> argparse.Namespace | None:
    """The arguments the parser gives `stackcheck plan ...` (argv starts with `plan`), read without argparse
    (its import and the parser's build are ~5 ms of a plan's first run) for the command lines a plan of saved
    facts has: `--facts`, `--want`, `--hold`, `--to`, `--format` and `--sources`, spelled in full, each value a
    word of its own or after `=`, no value that starts with `-` or is empty, `--facts`, `--want`, `--format`
    and `--sources` once each, a known format. None for anything else: the parser reads it, and says what is
    wrong with it."""
    if not argv or argv[0] != "plan":
        return None
    out: dict[str, object] = {k: list(v) if isinstance(v, list) else v for k, v in _DEFAULTS.items()}
    seen: set[str] = set()
    words = argv[1:]
    i = 0
    while i < len(words):
        name, eq, value = words[i].partition("=")
        how = _READ.get(name)
        if how is None or (name in seen and how[1] != "append"):
            return None
        seen.add(name)
        dest, kind = how
        i += 1
        if kind == "flag":
            if eq:
                return None
            out[dest] = True
            continue
        values = [value] if eq else []
        if not eq:
            while i < len(words) and not words[i].startswith("-") and (kind == "many" or not values):
                values.append(words[i])
                i += 1
        if not values or any(not v or v.startswith("-") for v in values):
            return None
        if kind == "append":
            cast("list[str]", out[dest]).append(values[0])
        elif kind == "many":
            out[dest] = values
        elif dest == "format" and values[0] not in PLAN_FORMATS and FORMAT_ALIASES.get(values[0]) not in PLAN_FORMATS:
            return None
        else:
            out[dest] = values[0]
    from types import SimpleNamespace

    return cast("argparse.Namespace", SimpleNamespace(**out))


def parse_to(items: list[str]) -> dict[str, str]:
    pins: dict[str, str] = {}
    for item in items:
        name, sep, version = item.partition("==")
        if not sep or not name.strip() or not version.strip():
            raise UsageError(f"--to {item!r}: expected COMPONENT==VERSION, for example torch==2.9.1+cu130")
        key = name.strip().lower()
        if key in pins and pins[key] != version.strip():
            raise UsageError(f"--to {item!r}: {key} is pinned twice")
        pins[key] = version.strip()
    return pins


def run(args: argparse.Namespace) -> int:
    from stackcheck.assembly.pipeline import build_report

    fmt = format_choice(args)
    pins = parse_to(list(args.to or []))
    holds = list(args.hold or [])
    if holds or pins:  # (the planner's package: not imported for a plan the cache may hold)
        from stackcheck.plan import component_name

        for h in holds:
            component_name(h)
        for name in pins:
            component_name(name, "--to")
    # the plan of the box as it is (no --want, --hold or --to) is the audit's: read from the plan cache when an
    # audit or an earlier plan kept it (the same key: facts, launch facts, manifest texts, stackcheck's code); a
    # request plans again, from the verdicts the entry keeps when there is one
    plain = not (args.want or holds or pins)
    # the text and markdown show the box and the plan, no check: a facts file's implied versions are not judged
    # against the checks for them
    upstream: dict[str, str | None] = {}  # which stack unblocks a feature, as the entry keeps it (planner)
    box: list[FeatureVerdict] = []  # the verdicts of the stated facts (planner: not judged again where unchanged)
    slot: list[tuple[str, str]] = []  # where the upstream answers are kept for a request (plan_cache.keep_upstream)
    kept_box: list[Any] = []  # the box's verdicts kept with them, and whether they were judged now (iperf38)
    report, ctx = build_report(
        options_from(args),
        want_plan=plain,
        plan_cache=True,
        plan_reported=True,
        checks_shown=fmt == "json",
        upstream_out=upstream,
        verdicts_out=box,
        keep_lookups=True,  # (this command changes neither the facts nor the launch of the context: iperf27)
        upstream_slot=slot if not plain else None,
        box_out=kept_box if not plain else None,
    )
    if plain:
        doc = report["plan"]
    else:
        from stackcheck.commands.arguments import feature_id
        from stackcheck.plan import make_plan

        read = dict(upstream)
        # the checks failing on the box as it is, kept by an earlier request under the key for this way (iperf40)
        failing_kept = kept_box[2].get(kept_box[3]) if len(kept_box) > 3 else None
        judged_failing: list[Any] = []
        known = [str(f.get("id")) for f in ctx.manifests.features]
        want = [feature_id(w, known, "--want") for w in args.want or []]  # `_` or `-`; a near miss names the id
        doc = make_plan(
            ctx,
            list(report["features"]),
            want=want or None,
            hold=holds,
            pins=pins,
            upstream_kept=upstream,
            box_verdicts=box,
            # the checks as judged on the stated facts: a text plan's (build_report merges no implied version into
            # them then, facts.implied.apply `checks` False), when it has them (the plan cache's entry); JSON's may
            # be merged, so they are judged again
            box_checks=list(report["checks"]) if fmt != "json" else None,
            box_failing=failing_kept,
            failing_out=judged_failing,
        ).to_json()
        # the checks failing on the box judged now: kept from the second request on these facts (as the box's
        # verdicts: a box planned once pays no writing for them), or with what is written anyway
        failing_new = bool(judged_failing) and len(kept_box) > 3 and bool(read or kept_box[0] or kept_box[2])
        if slot and (upstream != read or (kept_box and kept_box[1]) or failing_new):
            # answers the planner worked out now (iperf37), the box's verdicts judged now (iperf38), the checks failing
            # on the box judged now (iperf40): kept for the next request
            from stackcheck.assembly.plan_cache import keep_upstream

            failing = dict(kept_box[2]) if len(kept_box) > 3 else {}
            if judged_failing and len(kept_box) > 3:
                failing[kept_box[3]] = judged_failing[0]
            keep_upstream(slot[0][0], slot[0][1], upstream, kept_box[0] if kept_box else None, failing)
        request = {"want": want, "hold": holds, "to": [f"{k}=={v}" for k, v in pins.items()]}
        if any(request.values()):
            doc["request"] = request
    report["plan"] = doc
    if fmt != "json":  # the plan on its own (the box in a few lines, then the steps); JSON keeps the report
        report.pop("features", None)
        report.pop("checks", None)
        report.pop("summary", None)
    from stackcheck.knowledge.sources import normalize

    report = normalize(report, ctx.manifests.sources)  # every `source` as [{id, title, url}]
    text = PLAN_FORMATS[fmt](report, render_options(args))
    emit(text, args)
    from stackcheck.assembly.plan_cache import printed

    printed(text)  # the answer kept for this command line, when the command line has a slot (stackcheck.cli)
    return EXIT_FINDING if doc.get("error") else EXIT_OK
