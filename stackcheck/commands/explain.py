"""`stackcheck explain FEATURE`: what a feature needs on this box's GPUs (or `--assume-gpu`), release by
release, with sources. It answers "why is this blocked, and since when does it work" by evaluating the
feature against every release the manifests know (with that release's own pins), through the same engine
as the audit, and groups the releases into ranges with the same verdict (the sources said once per range).

Which GPUs: `--assume-gpu` (any spelling `--assume-gpu` takes: 12.0x8, sm_120, "RTX 5090"), else those of
`--facts FILE`, else this box's (NVML); with none visible, every architecture the manifests know. The
output says which. `--assume-interconnect` and `--tp` set the topology and the tensor-parallel size."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

from stackcheck.commands.arguments import (
    add_output_options,
    emit,
    feature_id,
    file_name,
    format_choice,
    given,
    render_options,
)
from stackcheck.errors import EXIT_OK, UsageError
from stackcheck.render import EXPLAIN_FORMATS

if TYPE_CHECKING:
    from stackcheck.knowledge.types import Feature

SCHEMA_VERSION = 1


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("feature", nargs="?", help="a feature id (`_` or `-`; see --list)")
    p.add_argument("--list", action="store_true", help="list the feature ids and titles")
    p.add_argument(
        "--assume-gpu",
        metavar="GPU",
        type=given,
        default=None,
        help="the GPUs to explain for: 12.0, 12.0x8, 8x12.0, sm_120, 120, or a GPU name ('RTX 5090', B200) "
        "(default: this box's GPUs, or those of --facts; without a count, 8 or --tp)",
    )
    p.add_argument(
        "--assume-interconnect",
        metavar="KIND",
        type=given,
        help="nvswitch | nvlink | pcie-switch | pcie-host-bridge | cross-socket | pcie "
        "(default: the box's, else unknown)",
    )
    p.add_argument("--facts", metavar="FILE", type=file_name, help="take the GPUs and topology from a saved report")
    p.add_argument("--manifests", metavar="DIR", action="append", default=[])
    p.add_argument("--tp", type=int, default=None, help="tensor-parallel size (default: the number of GPUs)")
    add_output_options(p, EXPLAIN_FORMATS, sources=True)


def release_facts(
    base: dict[str, Any], manifests: Any, sglang: str | None, torch_release: dict[str, Any] | None, variant: str | None
) -> dict[str, Any]:
    """Facts of a box that has one SGLang release with its pinned dependencies installed."""
    from stackcheck.facts.versions import cuda_from_tag, public

    def public_text(version: str) -> str:
        parsed = public(version)
        return str(parsed) if parsed is not None else version

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
    if "torch" in pkgs and "triton" not in pkgs:
        # torch pins its Triton (x86_64 Linux wheels): the Triton backends assemble with that Triton's ptxas
        trel: dict[str, Any] = next(
            (r for r in manifests.releases("torch") if r.get("version") == public_text(pkgs["torch"]["version"])), {}
        )
        spec = (trel.get("requires") or {}).get("triton")
        if isinstance(spec, str):
            pin = spec.lstrip("=<>~! ").split(",")[0]
            if public(pin) is not None:
                pkgs["triton"] = {"installed": True, "version": pin}
    if "torch" in pkgs:
        v = variant or "cu130"
        pkgs["torch"] = {**pkgs["torch"], "variant": v, "cuda": cuda_from_tag(v)}
    facts["packages"] = pkgs
    return facts


# ---- which GPUs -----------------------------------------------------------------------------------------


def _box_gpus(args: argparse.Namespace, manifests: Any) -> tuple[list[dict[str, Any]], str]:
    """One facts base per architecture to explain for, and a line saying where the GPUs come from."""
    from stackcheck.assembly.options import gpu_spec
    from stackcheck.verdicts.context import assumed_gpus

    base: dict[str, Any] = {}
    origin = "this box's"
    if args.facts:
        from stackcheck.facts.filled import fill
        from stackcheck.facts.model import load_facts_file

        saved, filled = fill(load_facts_file(args.facts), manifests)  # a name without its capability, as audit fills it
        base = {k: v for k, v in saved.items() if k in ("gpus", "topology", "driver")}
        origin = f"those of {args.facts}"
        if filled:
            origin += f" (filled from the manifests, not stated: {'; '.join(filled)})"
        machine = (saved.get("system") or {}).get("machine")
        if machine:  # an Arm box gets other kernel wheels (Context.machine); none named: each machine is judged
            base["system"] = {"machine": machine}
            if machine in ("aarch64", "arm64"):
                origin += f" ({machine}: judged by the {machine} kernel wheels)"
    elif not args.assume_gpu:
        from stackcheck.probes.interface import ProbeContext
        from stackcheck.probes.runner import run_probes

        facts, _ = run_probes(["nvml"], ProbeContext(), budget_s=8.0)
        base = {k: v for k, v in facts.items() if k in ("gpus", "topology", "driver")}
        base["system"] = {"machine": os.uname().machine}  # this box's GPUs: this box's machine
    if args.assume_gpu:
        # without xN: the box's count, else --tp, else 8 (the features explained are mostly multi-GPU ones)
        cc, n, name = gpu_spec(args.assume_gpu, manifests, len(base.get("gpus") or []) or (args.tp or 8))
        base["gpus"] = assumed_gpus(manifests, f"{cc}x{n}", name)
        base["topology"] = {"interconnect": "single-gpu" if n == 1 else None, "same_model": True, "gpu_count": n}
        origin = f"assumed (--assume-gpu {args.assume_gpu})"
    if args.assume_interconnect:
        from stackcheck.assembly.pipeline import INTERCONNECTS, apply_interconnect

        link = args.assume_interconnect
        if link not in INTERCONNECTS:
            raise UsageError(f"--assume-interconnect {link!r}: expected one of {', '.join(INTERCONNECTS)}")
        topo = dict(base.get("topology") or {})
        apply_interconnect(topo, "pcie-host-bridge" if link == "pcie" else link)
        base["topology"] = topo
    if base.get("gpus"):
        return [base], origin
    # no GPU here and none assumed: every architecture the manifests know, so the answer is still useful
    why = ((base.get("driver") or {}).get("error") or "no GPU visible") if not args.facts else "it has none"
    bases = []
    n = args.tp or 8
    assumed_topo = dict(base.get("topology") or {}) if args.assume_interconnect else {}
    for arch in manifests.architectures:
        cc = str(arch.get("compute_capability"))
        topo = {"interconnect": None, "same_model": True, "gpu_count": n}  # not the empty box's topology error
        topo.update({k: assumed_topo[k] for k in ("interconnect", "nvswitch", "p2p") if k in assumed_topo})
        bases.append({"gpus": assumed_gpus(manifests, f"{cc}x{n}"), "topology": topo})
    where = "this box" if origin == "this box's" else args.facts
    return bases, f"every architecture the manifests know: none from {where} ({why}); --assume-gpu picks one"


# ---- rows and ranges ------------------------------------------------------------------------------------


def _rows(base: dict[str, Any], feature: Feature, manifests: Any, tp: int | None) -> list[dict[str, Any]]:
    needs = " ".join(feature.get("needs") or [])
    rows: list[dict[str, Any]] = []
    if "sglang" in needs:
        for rel in manifests.releases("sglang"):
            facts = release_facts(base, manifests, str(rel.get("version")), None, None)
            rows.append(_row("sglang", str(rel.get("version")), facts, feature, manifests, tp))
    else:
        for rel in manifests.releases("torch"):
            for var in rel.get("variants") or []:
                facts = release_facts(base, manifests, None, rel, var.get("variant"))
                rows.append(_row("torch", f"{rel.get('version')}+{var.get('variant')}", facts, feature, manifests, tp))
    return rows


#: the machines whose wheels the manifests read (components.json `archs` / `libs` and their `_aarch64` lists)
MACHINES = ("x86_64", "aarch64")


def _machine_rows(
    base: dict[str, Any], feature: Feature, manifests: Any, tp: int | None
) -> list[tuple[str | None, list[dict[str, Any]]]]:
    """The rows of each machine the GPUs can sit in: one list (machine None) where the facts name the machine or
    both machines' wheels give the same verdicts, else one per machine (an x86_64 and an aarch64 wheel of one
    release can carry other libraries: sglang-kernel 0.4.4+ ship no FA3 library on aarch64)."""
    if (base.get("system") or {}).get("machine"):
        return [(None, _rows(base, feature, manifests, tp))]
    per = [(m, _rows({**base, "system": {"machine": m}}, feature, manifests, tp)) for m in MACHINES]
    verdicts = [[(r["version"], r["status"], r["effect"]) for r in rows] for _, rows in per]
    if verdicts[0] == verdicts[1]:  # the same verdict release by release: one answer serves both machines
        return [(None, per[0][1])]
    return [(m, rows) for m, rows in per]


def _row(
    component: str, version: str, facts: dict[str, Any], feature: Feature, manifests: Any, tp: int | None
) -> dict[str, Any]:
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_feature, workaround_for
    from stackcheck.verdicts.kernel_path import path_summary

    launch = {"tp": tp} if tp else {}
    ctx = Context(facts=facts, manifests=manifests, launch=launch)  # type: ignore[arg-type]
    v = evaluate_feature(feature, ctx)
    failing = [r for r in v.get("reasons") or [] if r.get("result") in ("fail", "unknown")]
    first = failing[0] if failing else None
    hops = path_summary(feature, ctx, v.get("reasons") or [])
    return {
        "component": component,
        "version": version,
        "status": v.get("status"),
        "effect": v.get("effect"),
        "rules": sorted({str(r.get("rule")) for r in failing}),
        "why": first.get("message") if first else None,
        "source": first.get("source") if first else None,
        "workaround": workaround_for(feature, v) is not None,
        # how each hop of the path that describes this release came out (features.json `path`)
        "hops": [{"hop": h["hop"], "result": h["result"], "check": h["check"]} for h in hops],
    }


def ranges(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive releases with the same verdict (status, effect, failing rules) and the same hop results as
    one range; the reason and the sources are those of the range's first release."""
    out: list[dict[str, Any]] = []
    for row in rows:
        hops = tuple((h["hop"], h["result"], h["check"]) for h in row.get("hops") or [])
        key = (row["status"], row["effect"], tuple(row["rules"]), row["component"], hops)
        if out and out[-1]["_key"] == key:
            out[-1]["last"] = row["version"]
            out[-1]["releases"].append(row["version"])
            continue
        out.append(
            {
                "_key": key,
                "component": row["component"],
                "first": row["version"],
                "last": row["version"],
                "releases": [row["version"]],
                "status": row["status"],
                "effect": row["effect"],
                "why": row["why"],
                "source": row["source"],
                "hops": row.get("hops") or [],
            }
        )
    for r in out:
        del r["_key"]
    return out


# ---- the command ----------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    from stackcheck.knowledge.loader import load
    from stackcheck.knowledge.sources import normalize
    from stackcheck.redact import terminal_safe

    if args.tp is not None and not 0 < args.tp <= 4096:
        raise UsageError(f"--tp {args.tp}: expected a tensor-parallel size of 1 or more")
    fmt = format_choice(args)
    manifests = load(args.manifests)
    known = [str(f.get("id")) for f in manifests.features]
    if args.list or not args.feature:
        if not args.list:
            raise UsageError("explain: which feature? give its id, e.g. `stackcheck explain torch-symm-mem` (--list)")
        text = "".join(f"{f.get('id')}: {f.get('title')}\n" for f in manifests.features)
        emit(terminal_safe(text), args)
        return EXIT_OK
    fid = feature_id(args.feature, known, "explain")
    feature = next(f for f in manifests.features if f.get("id") == fid)
    bases, origin = _box_gpus(args, manifests)
    archs: list[dict[str, Any]] = []
    for base in bases:
        gpus = base.get("gpus") or []
        tp = args.tp or len(gpus) or None
        for machine, rows in _machine_rows(base, feature, manifests, tp):
            cc = str(gpus[0].get("compute_capability")) if gpus else "?"
            first_ok = next((f"{r['component']} {r['version']}" for r in rows if r["status"] == "ok"), None)
            arch: dict[str, Any] = {
                "compute_capability": cc,
                "gpus": _gpu_text(gpus),
                "interconnect": (base.get("topology") or {}).get("interconnect"),
                "tp": tp,
                "first_ok": first_ok,
                "ranges": ranges(rows),
            }
            if machine is not None:
                arch["machine"] = machine
            if any(r["workaround"] for r in rows):  # only where it answers a failing rule on this architecture
                arch["workaround"] = feature.get("workaround")
            archs.append(arch)
    doc = {
        "schema_version": SCHEMA_VERSION,
        "feature": fid,
        "title": feature.get("title"),
        "gpus_from": origin,
        "enable": feature.get("enable"),
        "upstream": feature.get("upstream"),
        "path": feature.get("path") or [],
        "architectures": archs,
    }
    doc = normalize(doc, manifests.sources)
    emit(EXPLAIN_FORMATS[fmt](doc, render_options(args)), args)
    return EXIT_OK


def _gpu_text(gpus: list[dict[str, Any]]) -> str:
    models: dict[str, int] = {}
    for g in gpus:
        key = f"{g.get('name') or 'GPU'} (cc {g.get('compute_capability') or '?'})"
        models[key] = models.get(key, 0) + 1
    return ", ".join(f"{n}× {k}" for k, n in models.items())
