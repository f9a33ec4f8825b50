"""Generate N realistic stackcheck reports for `stackcheck fleet` benchmarks and tests.

    python bench/gen_reports.py N OUT            # OUT a directory: one report per file (hostNNNNNN.json)
    python bench/gen_reports.py N OUT.jsonl      # one JSON Lines file, one report a line

The reports are real: the shipped manifests evaluate variations (GPU model, driver, torch build, kernels,
flashinfer, sglang) of the synthetic facts under tests/cases, so every report has the full set of features,
checks and reasons. When the pipeline gives no plan yet, a small plan is added (upgrade the components that
differ from the newest stack of that GPU model) so that the upgrade waves have data. About 2% of the hosts
report twice (an older report too) and about 0.2% of the documents are bad (truncated, binary, empty,
foreign, newer schema_version). Deterministic for a given N and --seed.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CASES = ["writeup-after", "writeup-before", "b200", "h200-newest", "gb10-no-sm121a", "rtx5090-torch-cu126"]
DRIVERS = ["580.95.05", "580.105.08", "570.172.08", "580.159.04"]
SGLANG = ["0.5.9", "0.5.9", "0.5.20", "0.5.23"]
FLASHINFER = ["0.6.3", "0.6.4", "0.7.2"]
NEWEST = {"driver": "580.159.04", "sglang": "0.5.23", "flashinfer-python": "0.7.2"}


def _variant(facts: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    f = copy.deepcopy(facts)
    drv = f.get("driver") or {}
    if drv.get("version"):
        drv["version"] = rng.choice(DRIVERS)
    pkgs = f.get("packages") or {}
    if (pkgs.get("sglang") or {}).get("installed"):
        v = rng.choice(SGLANG)
        pkgs["sglang"]["version"] = pkgs["sglang"]["dist_version"] = v
    if (pkgs.get("flashinfer-python") or {}).get("installed"):
        v = rng.choice(FLASHINFER)
        pkgs["flashinfer-python"]["version"] = pkgs["flashinfer-python"]["dist_version"] = v
    return f


def _plan(report: dict[str, Any]) -> dict[str, Any]:
    facts = report["facts"]
    steps = []
    drv = (facts.get("driver") or {}).get("version")
    if drv and drv != NEWEST["driver"]:
        steps.append(_step("driver", drv, NEWEST["driver"]))
    pkgs = facts.get("packages") or {}
    for name in ("flashinfer-python", "sglang"):
        v = (pkgs.get(name) or {}).get("version")
        if v and v != NEWEST[name]:
            steps.append(_step(name, v, NEWEST[name]))
    return {"steps": steps, "still_blocked": []}


def _step(component: str, frm: str, to: str) -> dict[str, Any]:
    cmd = f"pip install '{component}=={to}'" if component != "driver" else f"install NVIDIA driver {to}"
    return {"component": component, "from": frm, "to": to, "commands": [cmd], "unblocks": [], "reason": "synthetic"}


def templates(n_variants: int, seed: int) -> list[str]:
    """Compact JSON reports with @@HOST@@ and @@TS@@ placeholders."""
    sys.path.insert(0, str(ROOT))
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import build_report

    rng = random.Random(seed)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(n_variants):
            case = CASES[i % len(CASES)]
            facts = json.loads((ROOT / "tests" / "cases" / case / "facts.json").read_text())
            inner = facts.get("facts", facts)
            inner = _variant(inner, rng) if i >= len(CASES) else inner
            doc = {"schema_version": 1, "facts": inner} if "facts" in facts else inner
            path = Path(tmp) / f"{i}.json"
            path.write_text(json.dumps(doc))
            report, _ = build_report(Options(facts_file=str(path)))
            if "plan" not in report:
                report["plan"] = _plan(report)
            report["host"] = {"hostname": "@@HOST@@", "collected_at": "@@TS@@"}
            out.append(json.dumps(report, separators=(",", ":")))
    return out


def bad_document(kind: int, good: str) -> bytes:
    if kind == 0:
        return good.encode()[: len(good) // 3]  # truncated
    if kind == 1:
        return bytes(random.Random(len(good)).getrandbits(8) for _ in range(512))  # binary garbage
    if kind == 2:
        return b""  # empty
    if kind == 3:
        return b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}'  # foreign
    return good.replace('"schema_version":1', '"schema_version":2', 1).encode()  # newer schema


def generate(n: int, out: str, seed: int = 7, variants: int = 36) -> dict[str, int]:
    rng = random.Random(seed)
    tpls = templates(variants, seed)
    jsonl = out.endswith(".jsonl")
    if jsonl:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        fh = open(out, "wb")  # noqa: SIM115
    else:
        os.makedirs(out, exist_ok=True)
    counts = {"documents": 0, "bad": 0, "duplicates": 0}
    hosts = max(1, n)
    try:
        i = 0
        while counts["documents"] < n:
            h = i % hosts
            i += 1
            tpl = tpls[rng.randrange(len(tpls))]
            name = f"gpu-{h:06d}.dc{h % 7}.example.net"
            day = 1 + rng.randrange(27)
            doc = tpl.replace("@@HOST@@", name).replace("@@TS@@", f"2026-11-{day:02d}T{h % 24:02d}:00:00Z")
            roll = rng.random()
            if roll < 0.002:
                data = bad_document(rng.randrange(5), doc)
                counts["bad"] += 1
            else:
                data = doc.encode()
            docs = [data]
            if roll > 0.98 and counts["documents"] + 1 < n:  # the same host, an older report
                docs.append(tpl.replace("@@HOST@@", name).replace("@@TS@@", "2026-10-01T00:00:00Z").encode())
                counts["duplicates"] += 1
            for k, d in enumerate(docs):
                if jsonl:
                    fh.write(d.replace(b"\n", b" ") + b"\n")
                else:
                    Path(out, f"host{h:06d}{'-old' if k else ''}.json").write_bytes(d)
                counts["documents"] += 1
    finally:
        if jsonl:
            fh.close()
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    counts = generate(args.n, args.out, args.seed)
    print(f"{args.out}: {counts['documents']} documents ({counts['bad']} bad, {counts['duplicates']} duplicates)")


if __name__ == "__main__":
    main()
