"""triage --facts: a generic error ("no kernel image is available", signatures.json `caused_by`) is named by the
one of its causes that fails on the crashed box (issue 16, itriage2): the failing verdict's observed and required
values and source; several failing are all named (the log cannot tell them apart); an unknown verdict names
nothing; without facts, or with none failing, the output is what it was."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.errors import ManifestError
from stackcheck.launch.triage import (
    TriageReport,
    TriageResult,
    load_signatures,
    name_causes,
    parse_signatures,
    triage_stream,
)
from stackcheck.render.triage import render_report

REPO = Path(__file__).resolve().parent.parent.parent

# written for these tests: a scheduler crash whose log names no library (no frame inside torch or a kernel package)
GENERIC_LOG = (
    "[2026-05-04 11:00:00 TP0] Load weight begin.\n"
    "[2026-05-04 11:00:09 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/opt/env/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 41, in run\n'
    "    warm_up()\n"
    '  File "/opt/env/lib/python3.12/site-packages/sglang/srt/model_executor/runner.py", line 77, in warm_up\n'
    "    out = model(x)\n"
    "torch.AcceleratorError: CUDA error: no kernel image is available for execution on the device\n"
    "[2026-05-04 11:00:10] Rank 0 scheduler is dead. Please check if there are relevant logs.\n"
)


def _result(text: str = GENERIC_LOG) -> TriageResult:
    return triage_stream(io.BytesIO(text.encode()), "<t>")


def _reason(rule: str, observed: Any, required: Any, message: str, result: str = "fail") -> dict[str, Any]:
    return {"rule": rule, "observed": observed, "required": required, "message": message, "result": result,
            "source": [{"id": "x", "title": "a source", "url": "https://example.org/x"}]}  # fmt: skip


def _report(
    torch: str = "ok", kernel: str = "ok", mixed: str = "ok", ccs: tuple[str | None, ...] = ("12.0",)
) -> dict[str, Any]:
    """An audit's features, checks and GPUs, in the report's shape: each cause's verdict by its status."""

    def verdict(ident: str, status: str, reasons: list[dict[str, Any]]) -> dict[str, Any]:
        if status in ("ok", "skipped"):
            reasons = [dict(r, result="pass") for r in reasons] if status == "ok" else []
        elif status == "unknown":
            reasons = [{"rule": r["rule"], "result": "unknown", "message": "not in the facts"} for r in reasons]
        return {"id": ident, "status": status, "reasons": reasons}

    torch_reason = _reason("torch-covers-gpu", "no target runs on it", "a target for 12.0 in ['sm_80', 'sm_90']",
                           "torch has no code for this GPU")  # fmt: skip
    kernel_reason = _reason("sglang-kernel-coverage", "sm_80, sm_90", "a target that runs on cc 12.0",
                            "sglang-kernel has no code for cc 12.0")  # fmt: skip
    mixed_reason = _reason("same-model", False, True, "the visible GPUs are not all the same model")
    feature_status = {"fail": "blocked", "ok": "ok", "unknown": "unknown"}[torch]
    check_status = {"fail": "failed", "ok": "ok", "unknown": "unknown"}
    return {
        "features": [verdict("torch-cuda-arch", feature_status, [torch_reason])],
        "checks": [
            verdict("torch-arch", check_status[torch], [torch_reason]),
            verdict("kernel-arch", check_status[kernel], [kernel_reason]),
            verdict("mixed-gpus", {"fail": "warning", "ok": "ok", "unknown": "unknown"}[mixed], [mixed_reason]),
        ],
        "facts": {"gpus": [{"index": i, "compute_capability": cc} for i, cc in enumerate(ccs)]},
    }


def test_the_generic_signature_lists_its_causes_by_known_ids() -> None:
    sig = next(s for s in load_signatures() if s.id == "no-kernel-image")
    labels = [(c.feature, c.check) for c in sig.caused_by]
    assert labels == [("torch-cuda-arch", "torch-arch"), (None, "kernel-arch"), (None, "mixed-gpus")]
    features = {f["id"] for f in json.loads((REPO / "manifests" / "features.json").read_text())["features"]}
    checks = {c["id"] for c in json.loads((REPO / "manifests" / "checks.json").read_text())["checks"]}
    for s in load_signatures():
        for c in s.caused_by:
            assert c.feature is None or c.feature in features, (s.id, c.feature)
            assert c.check is None or c.check in checks, (s.id, c.check)
            assert c.source, (s.id, c.label)


def test_the_one_failing_cause_is_named_with_its_observed_and_required_values() -> None:
    cause = name_causes(_result(), _report(kernel="fail", torch="unknown"))
    assert cause is not None and cause["alone"] is True and cause["signature"] == "no-kernel-image"
    [named] = cause["causes"]
    assert (named["feature"], named["check"]) == (None, "kernel-arch")
    [reason] = named["reasons"]
    assert reason["observed"] == "sm_80, sm_90" and reason["required"] == "a target that runs on cc 12.0"
    assert reason["source"][0]["url"] == "https://example.org/x" and reason["in"] == "check kernel-arch"
    # torch could not be judged: not ruled out, and not named
    assert cause["not_ruled_out"] == ["feature torch-cuda-arch / check torch-arch"]
    assert cause["ruled_out"] == ["check mixed-gpus"]


def test_a_feature_and_its_check_are_one_cause_with_its_reason_once() -> None:
    cause = name_causes(_result(), _report(torch="fail"))
    assert cause is not None and cause["alone"] is True
    [named] = cause["causes"]
    assert (named["feature"], named["check"]) == ("torch-cuda-arch", "torch-arch")
    assert len(named["reasons"]) == 1  # the same rule's failing reason in the feature and the check


def test_several_failing_causes_are_all_named_and_not_alone() -> None:
    cause = name_causes(_result(), _report(torch="fail", kernel="fail"))
    assert cause is not None and cause["alone"] is False
    assert [c["check"] for c in cause["causes"]] == ["torch-arch", "kernel-arch"]
    report = TriageReport(_result(), None, True, None, cause)
    text = render_report(report)
    assert "the log cannot tell which of them it comes from" in text
    assert "check kernel-arch, rule sglang-kernel-coverage" in text and "feature torch-cuda-arch" in text


@pytest.mark.parametrize(
    "report",
    [_report(), _report(torch="unknown", kernel="unknown", mixed="unknown"), {"features": [], "checks": []}],
    ids=["all-pass", "all-unknown", "nothing-judged"],
)
def test_no_failing_cause_names_nothing(report: dict[str, Any]) -> None:
    assert name_causes(_result(), report) is None


def test_mixed_gpus_counts_only_where_the_architectures_differ() -> None:
    differ = name_causes(_result(), _report(mixed="fail", ccs=("8.9", "8.6")))
    assert differ is not None and [c["check"] for c in differ["causes"]] == ["mixed-gpus"]
    assert differ["causes"][0]["gpus_differ_in"] == "compute_capability"
    # two models of one architecture (a 40 GB and an 80 GB card) run the same code: not this error's cause
    assert name_causes(_result(), _report(mixed="fail", ccs=("8.0", "8.0"))) is None
    # an architecture not read: not judged, so not named
    assert name_causes(_result(), _report(mixed="fail", ccs=("8.0", None))) is None


def test_a_signature_without_causes_names_nothing() -> None:
    log = GENERIC_LOG.replace("CUDA error: no kernel image is available for execution on the device",
                              "CUDA error: an illegal memory access was encountered")  # fmt: skip
    assert name_causes(_result(log), _report(torch="fail")) is None


def _doc(caused_by: object) -> dict[str, Any]:
    base = {"pattern": "boom", "feature": None, "title": "t", "explanation": "e", "fix": "f", "source": "s"}
    return {"signatures": [{"id": "a", **base, "caused_by": caused_by}]}


def test_rules_limit_a_cause_to_the_rules_listed() -> None:
    [sig] = parse_signatures(_doc([{"check": "kernel-arch", "rules": ["sgl-kernel-coverage"], "source": "s"}]), "x")
    result = triage_stream(io.BytesIO(b"RuntimeError: boom\n"), "<t>", [sig])
    # sglang-kernel-coverage fails, sgl-kernel-coverage passes: the cause listed does not fail
    report = _report(kernel="fail")
    report["checks"][1]["reasons"].append(_reason("sgl-kernel-coverage", "sm_120a", "cc 12.0", "ok", "pass"))
    assert name_causes(result, report) is None
    report["checks"][1]["reasons"][-1]["result"] = "fail"
    cause = name_causes(result, report)
    assert cause is not None and [r["rule"] for r in cause["causes"][0]["reasons"]] == ["sgl-kernel-coverage"]


@pytest.mark.parametrize(
    ("caused_by", "message"),
    [
        ("kernel-arch", r"x\.json: \$\.signatures\[0\]\.caused_by: expected a list of causes"),
        ([{"source": "s"}], r"caused_by\[0\]: names neither a feature nor a check"),
        ([{"check": "kernel-arch"}], r"caused_by\[0\]: missing source"),
        ([{"check": "kernel-arch", "rules": "r", "source": "s"}], r"caused_by\[0\]\.rules: expected a list"),
        (["kernel-arch"], r"caused_by\[0\]: expected an object"),
    ],
)
def test_a_malformed_cause_is_a_manifest_error_naming_its_place(caused_by: object, message: str) -> None:
    with pytest.raises(ManifestError, match=message):
        parse_signatures(_doc(caused_by), "x.json")


# ---- the command line, on facts written for these tests -------------------------------------------------------


def _facts(path: Path, gpus: list[dict[str, Any]], torch_sass: list[str]) -> Path:
    doc = {
        "schema_version": 1,
        "facts": {
            "gpus": gpus,
            "packages": {"torch": {"installed": True, "version": "2.6.0+cu124", "variant": "cu124", "cuda": "12.4"}},
            "binaries": {"torch": {"sass": torch_sass, "source": "written for this test"}},
            "collected_at": "2026-05-04",
        },
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _cli(*argv: str) -> tuple[int, str]:
    from stackcheck.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    assert code == 0, err.getvalue()
    return code, out.getvalue()


def test_cli_names_torch_on_a_box_whose_torch_lacks_the_gpu(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(GENERIC_LOG, encoding="utf-8")
    gpu = {"index": 0, "name": "NVIDIA GeForce RTX 5070", "compute_capability": "12.0"}
    facts = _facts(tmp_path / "facts.json", [gpu], ["sm_75", "sm_80", "sm_86", "sm_90"])
    _, out = _cli("triage", str(log), "--facts", str(facts), "--format", "json")
    doc = json.loads(out)
    assert doc["root_cause"]["signature"]["id"] == "no-kernel-image"
    cause = doc["cause"]
    assert cause["alone"] is True and cause["causes"][0]["feature"] == "torch-cuda-arch"
    reason = cause["causes"][0]["reasons"][0]
    assert "12.0" in str(reason["required"]) and reason["observed"]
    assert all(isinstance(s, dict) and s.get("url") for s in reason["source"])  # ids resolved to {id, title, url}
    # the plan's answer is the one for the cause named: a torch step
    assert doc["fix"] is not None and doc["fix"].get("component") == "torch"
    _, text = _cli("triage", str(log), "--facts", str(facts))
    assert "cause on this box: feature torch-cuda-arch / check torch-arch fails on the facts given" in text
    assert "plan: step" in text and "torch" in text


def test_cli_output_is_unchanged_without_facts_or_without_a_failing_cause(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(GENERIC_LOG, encoding="utf-8")
    _, plain = _cli("triage", str(log), "--format", "json")
    assert "cause" not in json.loads(plain)
    gpu = {"index": 0, "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}
    facts = _facts(tmp_path / "facts.json", [gpu], ["sm_80", "sm_90"])
    _, out = _cli("triage", str(log), "--facts", str(facts), "--format", "json")
    doc = json.loads(out)
    assert "cause" not in doc and doc["fix"] is None
    _, text = _cli("triage", str(log), "--facts", str(facts))
    _, text_plain = _cli("triage", str(log))
    assert text == text_plain  # no cause, no fix line: what triage printed before


def test_cli_cause_lines_carry_no_control_characters_from_the_facts(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(GENERIC_LOG, encoding="utf-8")
    gpu = {"index": 0, "name": "NVIDIA GeForce RTX 5070\x1b]0;owned\x07\x1b[2J", "compute_capability": "12.0"}
    facts = _facts(tmp_path / "facts.json", [gpu], ["sm_80", "sm_90"])
    _, text = _cli("triage", str(log), "--facts", str(facts))
    assert "cause on this box" in text
    assert "\x1b" not in text and "\x07" not in text
