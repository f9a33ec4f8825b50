"""FlashAttention backends and MLA models (the second fact check, tests/realworld/FACTCHECK.md): the verdict
follows the model when the launch says whether it is MLA (`launch.mla`).

- attention-fa4, SGLang 0.5.8: the MLA decode calls sgl-kernel's FA3 (no ver=4), which has no code for SM100;
- attention-fa4, SGLang 0.5.9 and 0.5.16: the FA4 wrapper refuses the latent query (qv) the MLA decode passes;
- attention-fa3 on Ampere/Ada: SGLang's FA3 backend asserts major 9 for MLA models.

The gate learns `mla` from the model's config.json after its first verdicts and judges again."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from release_box import judge, rules

from stackcheck.cli import main
from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context, assumed_gpus

ROOT = Path(__file__).resolve().parent.parent.parent
B200 = ROOT / "tests" / "cases" / "b200" / "facts.json"


def _verdict(manifests: Manifests, feature: str, cc: str, sglang: str, launch: dict[str, Any]) -> tuple[Any, ...]:
    v = judge(manifests, feature, cc, sglang, launch)
    return v["status"], v["effect"], rules(v)


@pytest.mark.parametrize(
    ("cc", "sglang", "rule"),
    [
        ("10.0", "0.5.8", "mla-decode-fa3-kernel"),
        ("10.3", "0.5.8", "mla-decode-fa3-kernel"),
        ("10.0", "0.5.9", "mla-decode-qv-refused"),
        ("10.0", "0.5.16", "mla-decode-qv-refused"),
    ],
)
def test_fa4_decode_of_an_mla_model(manifests: Manifests, cc: str, sglang: str, rule: str) -> None:
    fa4 = {"attention_backend": "fa4"}
    assert _verdict(manifests, "attention-fa4", cc, sglang, {**fa4, "mla": True}) == ("blocked", "crash", [rule])
    # the same box with an MHA model, and with a model the launch does not describe: the release's own verdict
    assert _verdict(manifests, "attention-fa4", cc, sglang, {**fa4, "mla": False})[0] == "ok"
    assert _verdict(manifests, "attention-fa4", cc, sglang, fa4)[0] == "ok"
    # FA4 only for prefill: the MLA decode runs another backend
    split = {"prefill_attention_backend": "fa4", "decode_attention_backend": "trtllm_mla", "mla": True}
    assert rule not in _verdict(manifests, "attention-fa4", cc, sglang, split)[2]


def test_fa4_mla_decode_from_0_5_17(manifests: Manifests) -> None:
    launch = {"attention_backend": "fa4", "mla": True}
    for sglang in ("0.5.17", "0.5.20", "0.5.23"):
        assert _verdict(manifests, "attention-fa4", "10.0", sglang, launch)[0] == "ok"


def test_fa3_mla_needs_hopper(manifests: Manifests) -> None:
    fa3 = {"attention_backend": "fa3"}
    for cc in ("8.0", "8.9"):
        assert _verdict(manifests, "attention-fa3", cc, "0.5.9", {**fa3, "mla": True}) == (
            "blocked",
            "crash",
            ["mla-needs-hopper"],
        )
        assert _verdict(manifests, "attention-fa3", cc, "0.5.9", {**fa3, "mla": False})[0] == "ok"
    assert _verdict(manifests, "attention-fa3", "9.0", "0.5.9", {**fa3, "mla": True})[0] == "ok"


def _gate(facts: Path, model: Path) -> tuple[str, list[str]]:
    out = io.StringIO()
    command = ["python", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "8"]
    with contextlib.redirect_stdout(out):
        main(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *command,
              "--attention-backend", "fa4"])  # fmt: skip
    doc = json.loads(out.getvalue())
    fa4 = next(f for f in doc["features"] if f["feature"] == "attention-fa4")
    rules = [str(r.get("rule")) for b in doc["reasons"] if b["feature"] == "attention-fa4" for r in b["reasons"]]
    return str(fa4["status"]), rules


def test_gate_reads_the_model_before_it_judges_fa4(tmp_path: Path) -> None:
    doc = json.loads(B200.read_text(encoding="utf-8"))
    pkgs = doc.get("facts", doc)["packages"]
    for name, version in (("sglang", "0.5.16"), ("sglang-kernel", "0.4.5"), ("flashinfer-python", "0.6.14")):
        pkgs[name].update(version=version, dist_version=version)  # SGLang 0.5.16 with its pins on a B200
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(doc), encoding="utf-8")
    models = {"ds": ["DeepseekV3ForCausalLM"], "llama": ["LlamaForCausalLM"]}
    for name, architectures in models.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text(json.dumps({"architectures": architectures}), encoding="utf-8")
    status, rules = _gate(facts, tmp_path / "ds")
    assert (status, rules) == ("blocked", ["mla-decode-qv-refused"])
    assert _gate(facts, tmp_path / "llama")[0] == "ok"


def test_reevaluate_judges_again_only_what_reads_the_fact(manifests: Manifests) -> None:
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import reevaluate
    from stackcheck.documents.report import summarize
    from stackcheck.verdicts.engine import evaluate_all

    facts = release_facts({"gpus": assumed_gpus(manifests, "10.0x8")}, manifests, "0.5.8", None, None)
    ctx = Context(facts=facts, manifests=manifests, launch={"tp": 8, "attention_backend": "fa4"})  # type: ignore[arg-type]
    features, checks = evaluate_all(ctx)
    report: Any = {"features": features, "checks": checks, "summary": summarize(features, checks)}
    before = {str(v["id"]): v for v in features}
    again = reevaluate(report, ctx, Options(), {"mla": True})
    assert again.launch["mla"] is True and "mla" not in ctx.launch
    after = {str(v["id"]): v for v in report["features"]}
    assert (after["attention-fa4"]["status"], after["attention-fa4"]["effect"]) == ("blocked", "crash")
    assert before["attention-fa4"]["status"] == "ok"
    # a feature whose rules do not read launch.mla is the very verdict of the first pass
    assert after["attention-triton"] is before["attention-triton"]
    assert report["checks"] == checks
    assert report["summary"] == summarize(report["features"], checks)
    assert reevaluate(report, again, Options(), {"mla": True}) is again  # nothing new: no work
