"""pipeline.reevaluate_unknown judges the fact true only for the verdicts that are ok with it false (only those can
become unknown): the same report as the straightforward reading, which judges both values for every verdict that
reads the fact, on every case folder's facts, several launches, with and without the facts file's implied
versions."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly import pipeline
from stackcheck.assembly.options import Options
from stackcheck.documents.report import summarize

ROOT = Path(__file__).resolve().parents[2]
FACTS = sorted((ROOT / "tests" / "cases").glob("*/facts.json"))
LAUNCHES: list[dict[str, Any]] = [
    {},
    {"attention_backend": "fa3", "tp": 2},
    {"attention_backend": "fa4"},
    {"attention_backend": "trtllm_mla", "model_mla_kv_rope": [512, 64]},
    {"attention_backend": "flashmla", "model_config_read": False},
    {"attention_backend": "flashinfer", "tp": 8},
]


def reference(report: Any, ctx: Any, opts: Any, key: str, why: str) -> None:
    """Both values judged for every verdict that reads the fact, then merged as reevaluate_unknown merges them."""
    judged: list[Any] = []
    for value in (True, False):
        again = report.copy()
        pipeline.reevaluate(again, ctx, opts, {key: value})
        judged.append(again)
    for part in ("features", "checks"):
        true = {str(v.get("id")): v for v in judged[0].get(part) or []}
        false = {str(v.get("id")): v for v in judged[1].get(part) or []}
        out = []
        for v in report.get(part) or []:
            t, f = true.get(str(v.get("id"))), false.get(str(v.get("id")))
            if t is None or f is None or t.get("status") == "ok" or f.get("status") != "ok":
                out.append(v)
                continue
            kept = {(r.get("rule"), r.get("result")) for r in f.get("reasons") or []}
            reasons = [
                r if (r.get("rule"), r.get("result")) in kept
                else {**r, "result": "unknown", "message": f"{why}; if it is, {r.get('message', '')}"}
                for r in t.get("reasons") or []
                if r.get("result") in ("fail", "unknown")
            ]  # fmt: skip
            out.append({**t, "status": "unknown", "effect": None, "reasons": reasons or list(t.get("reasons") or [])})
        report[part] = out
    report["summary"] = summarize(report["features"], report["checks"])


@pytest.mark.parametrize("facts", FACTS, ids=[p.parent.name for p in FACTS])
def test_reevaluate_unknown_equals_the_reference(facts: Path) -> None:
    for launch in LAUNCHES:
        opts = Options(facts_file=str(facts), launch=launch)
        report, ctx = pipeline.build_report(opts, want_plan=False)
        ours, theirs = copy.deepcopy(report), copy.deepcopy(report)
        pipeline.reevaluate_unknown(ours, ctx, opts, "mla", "not known")
        reference(theirs, ctx, opts, "mla", "not known")
        assert ours == theirs, launch


def test_some_verdict_turns_unknown() -> None:
    """The comparison above is not empty: on the newest H200 box a verdict hangs on the fact."""
    turned = 0
    for facts in [ROOT / "tests" / "cases" / "h200-newest" / "facts.json"]:
        for launch in LAUNCHES:
            opts = Options(facts_file=str(facts), launch=launch)
            report, ctx = pipeline.build_report(opts, want_plan=False)
            before = {v["id"]: v["status"] for v in [*report["features"], *report["checks"]]}
            pipeline.reevaluate_unknown(report, ctx, opts, "mla", "not known")
            after = {v["id"]: v["status"] for v in [*report["features"], *report["checks"]]}
            turned += sum(1 for k in after if after[k] == "unknown" and before.get(k) != "unknown")
    assert turned > 0
