"""`stackcheck explain FEATURE [--assume-gpu 12.0]`: what a feature needs on an architecture, release by
release, with sources. It answers "why is this blocked, and since when does it work" by evaluating the
feature against every release the manifests know (with that release's own pins), through the same engine
as the audit."""

from __future__ import annotations

import argparse
from typing import Any

from stackcheck.errors import EXIT_OK, UsageError
from stackcheck.options import add_output_options, emit


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("feature", help="a feature id (see `stackcheck audit`)")
    p.add_argument(
        "--assume-gpu",
        metavar="CC",
        default=None,
        help="the architecture to explain for (default: this box's GPUs from --facts, else 12.0)",
    )
    p.add_argument("--facts", metavar="FILE", help="take the GPUs and topology from a saved report")
    p.add_argument("--manifests", metavar="DIR", action="append", default=[])
    p.add_argument("--tp", type=int, default=None, help="tensor-parallel size to assume (default: 8)")
    p.add_argument(
        "--assume-interconnect",
        metavar="KIND",
        default=None,
        help="nvswitch | nvlink | pcie-switch | pcie-host-bridge | cross-socket | pcie (default: --facts)",
    )
    add_output_options(p, ["table", "json"])


def release_facts(
    base: dict[str, Any], manifests: Any, sglang: str | None, torch_release: dict[str, Any] | None, variant: str | None
) -> dict[str, Any]:
    """Facts of a box that has one SGLang release with its pinned dependencies installed."""
    from stackcheck.versions import cuda_from_tag, public

    facts = dict(base)
    pkgs: dict[str, Any] = {}
    if sglang is not None:
        pkgs["sglang"] = {"installed": True, "version": sglang}
        rel: dict[str, Any] = next((r for r in manifests.releases("sglang") if r.get("version") == sglang), {})
        for dep, spec in (rel.get("requires") or {}).items():
            pin = str(spec).lstrip("=<>~! ").split(",")[0]
            if public(pin) is not None:
                pkgs[dep] = {"installed": True, "version": pin}
    if torch_release is not None:
        pkgs["torch"] = {"installed": True, "version": torch_release["version"]}
    if "torch" in pkgs:
        v = variant or "cu130"
        pkgs["torch"] = {**pkgs["torch"], "variant": v, "cuda": cuda_from_tag(v)}
    facts["packages"] = pkgs
    return facts


def run(args: argparse.Namespace) -> int:
    from stackcheck.context import assumed_gpus
    from stackcheck.facts import load_facts_file
    from stackcheck.manifest_loader import load
    from stackcheck.pipeline import parse_assume_gpu
    from stackcheck.render.interface import source_text

    if args.tp is not None and not 0 < args.tp <= 4096:
        raise UsageError(f"--tp {args.tp}: expected a tensor-parallel size of 1 or more")
    manifests = load(args.manifests)
    feature = next((f for f in manifests.features if f.get("id") == args.feature), None)
    if feature is None:
        known = ", ".join(sorted(str(f.get("id")) for f in manifests.features))
        raise UsageError(f"unknown feature {args.feature!r}; known: {known}")
    base: dict[str, Any] = {}
    if args.facts:
        saved = load_facts_file(args.facts)
        base = {k: v for k, v in saved.items() if k in ("gpus", "topology", "driver")}
    if args.assume_gpu or not base.get("gpus"):
        cc, n = parse_assume_gpu(args.assume_gpu or "12.0")
        from stackcheck.pipeline import check_known_cc

        check_known_cc(manifests, cc)
        n = max(n, args.tp or 8)
        base["gpus"] = assumed_gpus(manifests, f"{cc}x{n}")
        base.setdefault("topology", {"interconnect": None, "same_model": True, "gpu_count": n})
    if args.assume_interconnect:
        from stackcheck.pipeline import INTERCONNECTS, apply_interconnect

        link = args.assume_interconnect
        if link not in INTERCONNECTS:
            raise UsageError(f"--assume-interconnect {link!r}: expected one of {', '.join(INTERCONNECTS)}")
        topo = dict(base.get("topology") or {})
        apply_interconnect(topo, "pcie-host-bridge" if link == "pcie" else link)
        base["topology"] = topo
    needs = " ".join(feature.get("needs") or [])
    rows: list[dict[str, Any]] = []
    if "sglang" in needs:
        for rel in manifests.releases("sglang"):
            facts = release_facts(base, manifests, str(rel.get("version")), None, None)
            rows.append(_row(str(rel.get("version")), "sglang", facts, feature, manifests, args))
    else:
        for rel in manifests.releases("torch"):
            for var in rel.get("variants") or []:
                facts = release_facts(base, manifests, None, rel, var.get("variant"))
                rows.append(
                    _row(f"{rel.get('version')}+{var.get('variant')}", "torch", facts, feature, manifests, args)
                )
    cc_text = ", ".join(sorted({g.get("compute_capability") or "?" for g in base.get("gpus") or []}))
    if args.format == "json":
        import json

        doc = {
            "feature": feature.get("id"),
            "title": feature.get("title"),
            "compute_capability": cc_text,
            "enable": feature.get("enable"),
            "workaround": feature.get("workaround"),
            "upstream": feature.get("upstream"),
            "path": feature.get("path") or [],
            "releases": rows,
        }
        emit(json.dumps(doc, indent=2) + "\n", args)
        return EXIT_OK
    lines = [f"{feature.get('id')}: {feature.get('title')}", f"on compute capability {cc_text}"]
    enable = feature.get("enable") or {}
    if enable.get("flags") or enable.get("env"):
        lines.append(f"turned on by: {' '.join(enable.get('flags') or [])} {enable.get('env') or ''}".rstrip(" {}"))
    lines.append("")
    if feature.get("path"):
        lines.append("path to the kernel (admission -> dispatch -> kernel -> runtime), each hop with its source:")
        lines.extend(_path_lines(feature["path"], source_text))
        lines.append("")
    for row in rows:
        line = f"  {row['release']:<22} {row['status']}" + (f" ({row['effect']})" if row.get("effect") else "")
        if row.get("why"):
            line += f": {row['why']}"
        lines.append(line)
        if row.get("hops"):
            chain = " -> ".join(f"{h['hop']} {h['result']}" for h in row["hops"])
            lines.append(f"  {'':<22} hops: {chain}")
        if row.get("source"):
            lines.append(f"  {'':<22} source: {source_text(row['source'])}")
    first_ok = next((r["release"] for r in rows if r["status"] == "ok"), None)
    lines.append("")
    lines.append(
        f"first release where it is ok: {first_ok}"
        if first_ok
        else "no release in the manifests makes it ok on this architecture"
    )
    if feature.get("workaround"):
        w = feature["workaround"]
        lines.append(f"workaround (unsupported upstream): {w.get('text') if isinstance(w, dict) else w}")
    emit("\n".join(lines) + "\n", args)
    return EXIT_OK


def _path_lines(path: list[Any], source_text: Any) -> list[str]:
    """The recorded hops, grouped by kind in path order."""
    from stackcheck.path import HOP_ORDER

    rank = {name: i for i, name in enumerate(HOP_ORDER)}
    hops = sorted((h for h in path if isinstance(h, dict)), key=lambda h: rank.get(str(h.get("hop")), len(rank)))
    lines = []
    for hop in hops:
        where = " ".join(str(hop[k]) for k in ("package", "versions") if hop.get(k))
        if hop.get("majors"):
            where += f" on major {', '.join(map(str, hop['majors']))}"
        lines.append(
            f"  {hop.get('hop', '?'):<9} {where}: {hop.get('check')}" + (" [inferred]" if hop.get("inferred") else "")
        )
        detail = [f"file {hop['file']}"] if hop.get("file") else []
        if hop.get("gate"):
            detail.append(f"gate {hop['gate']}")
        if hop.get("rules"):
            detail.append(f"rules {', '.join(hop['rules'])}")
        if detail:
            lines.append(f"  {'':<9} {'; '.join(detail)}")
        lines.append(f"  {'':<9} source: {source_text(hop.get('source'))}")
    return lines


def _row(
    label: str, component: str, facts: dict[str, Any], feature: dict[str, Any], manifests: Any, args: argparse.Namespace
) -> dict[str, Any]:
    from stackcheck.context import Context
    from stackcheck.path import path_summary
    from stackcheck.verdicts import evaluate_feature

    launch = {"tp": args.tp} if args.tp else {}
    ctx = Context(facts=facts, manifests=manifests, launch=launch)  # type: ignore[arg-type]
    v = evaluate_feature(feature, ctx)
    first = next((r for r in v.get("reasons") or [] if r.get("result") in ("fail", "unknown")), None)
    hops = path_summary(feature, ctx, v.get("reasons") or [])
    return {
        "release": f"{component} {label}",
        "status": v.get("status"),
        "effect": v.get("effect"),
        "why": first.get("message") if first else None,
        "source": first.get("source") if first else None,
        "hops": [{"hop": h["hop"], "result": h["result"], "check": h["check"]} for h in hops],
    }
