"""pipeline.reevaluate_unknown fails closed on a boolean launch fact that is not known (`mla`, `draft_mla`): judged
with the fact true and with it false, a verdict that is ok either way stays as judged, one whose two cases differ
is unknown, one not ok alike either way keeps that status; never ok where either case is not. On every case
folder's facts, several launches, with and without the facts file's implied versions.

Before, only the verdicts ok with the fact false were looked at: trtllm_mla, which refuses a model it does not run
as MLA (false: blocked) and passes DeepSeek's dims (true: ok), stayed ok for a model of unknown kind."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly import pipeline
from stackcheck.assembly.options import Options

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


def _cases(report: Any, ctx: Any, opts: Any, key: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The verdicts judged again with the fact true and with it false (pipeline.reevaluate on copies), by id."""
    out: list[dict[str, Any]] = []
    for value in (True, False):
        again = copy.deepcopy(report)
        pipeline.reevaluate(again, ctx, opts, {key: value})
        out.append({str(v.get("id")): v for part in ("features", "checks") for v in again.get(part) or []})
    return out[0], out[1]


@pytest.mark.parametrize("facts", FACTS, ids=[p.parent.name for p in FACTS])
def test_reevaluate_unknown_fails_closed(facts: Path) -> None:
    for launch in LAUNCHES:
        opts = Options(facts_file=str(facts), launch=launch)
        report, ctx = pipeline.build_report(opts, want_plan=False)
        before = {str(v.get("id")): v for v in (*report["features"], *report["checks"])}
        true, false = _cases(report, ctx, opts, "mla")
        ours = copy.deepcopy(report)
        pipeline.reevaluate_unknown(ours, ctx, opts, "mla", "not known")
        for v in (*ours["features"], *ours["checks"]):
            vid = str(v.get("id"))
            t, f = true.get(vid), false.get(vid)
            if t is None or f is None:
                assert v == before[vid], (launch, vid)
                continue
            ts, fs = t.get("status"), f.get("status")
            if ts == fs == "ok":
                assert v == before[vid], (launch, vid)
            elif ts != fs:
                assert v.get("status") == "unknown" and v.get("effect") is None, (launch, vid)
            else:
                assert v.get("status") == ts, (launch, vid)
            for r in v.get("reasons") or []:
                if r.get("result") == "unknown" and str(r.get("message", "")).startswith("not known;"):
                    assert str(r["message"]).startswith(("not known; if it is, ", "not known; if it is not, "))


def test_trtllm_mla_is_unknown_for_a_model_of_unknown_kind() -> None:
    """8x B200 with --attention-backend trtllm_mla and DeepSeek's dims: ok for an MLA model, blocked for another
    (mla-models-only), so unknown where MLA or not is not known, the not-MLA case named."""
    dims = {
        "mla_kv_rope": "512/64",
        "mla_qk_nope_head_dim": 128,
        "mla_prefill_dims": "192/128",
        "mla_heads_per_gpu": 16,
    }
    launch = {"attention_backend": "trtllm_mla", "tp": 8, "model_config_read": True, **dims}
    # (icubin1: the b200 box with flashinfer-cubin, so the trtllm-gen cubins are known to be there)
    opts = Options(facts_file=str(ROOT / "tests" / "cases" / "b200-cubin-package" / "facts.json"), launch=launch)
    report, ctx = pipeline.build_report(opts, want_plan=False)
    assert next(v for v in report["features"] if v["id"] == "attention-trtllm-mla")["status"] == "ok"
    pipeline.reevaluate_unknown(report, ctx, opts, "mla", "not known")
    v = next(v for v in report["features"] if v["id"] == "attention-trtllm-mla")
    assert v["status"] == "unknown"
    assert [(r["rule"], r["result"]) for r in v["reasons"]] == [("mla-models-only", "unknown")]
    assert v["reasons"][0]["message"].startswith("not known; if it is not, ")


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
