"""Filled facts (stackcheck/facts/filled.py): what a facts file leaves out that the manifests' sourced tables decide
exactly (a GPU's compute capability from its exact name, per architectures.json; the driver's CUDA from its version,
per components.json's CUDA releases), marked where it lies and on every rule that reads it.

Besides the cases, two generated properties: every GPU name architectures.json lists fills the capability it is
listed under (or nothing, where two capabilities list it), and every facts file of the repository that states a GPU
name with its capability, or a driver version with its CUDA, judges the same with the stated value removed and
filled again (the filled value is the stated one, or nothing is filled)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report, load_manifests
from stackcheck.facts.filled import driver_cuda_bracketed, fill, filled_texts, gpu_name_capability
from stackcheck.facts.versions import compare_numeric
from stackcheck.render.text import render_plain
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

REPO = Path(__file__).resolve().parent.parent.parent
MANIFESTS = load_manifests([])


def _facts(**sections: Any) -> Facts:
    return cast("Facts", sections)


def _write(tmp_path: Path, facts: dict[str, Any], name: str = "facts.json", **doc: Any) -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"schema_version": 1, "facts": facts, **doc}))
    return str(path)


def _audit(path: str) -> dict[str, Any]:
    report, _ = build_report(Options(facts_file=path), want_plan=False)
    return cast("dict[str, Any]", report)


def _reasons(report: dict[str, Any], kind: str, item: str) -> list[dict[str, Any]]:
    return [dict(r) for v in report[kind] if v["id"] == item for r in v.get("reasons") or []]


def _status(report: dict[str, Any], kind: str, item: str) -> str:
    return next(str(v["status"]) for v in report[kind] if v["id"] == item)


# ---- the compute capability from the GPU's name -------------------------------------------------------------


def test_exact_name_fills_its_one_capability_and_says_from_what() -> None:
    facts, texts = fill(_facts(gpus=[{"index": 0, "name": "NVIDIA GeForce RTX 5090"}]), MANIFESTS)
    gpu = cast("dict[str, Any]", facts["gpus"][0])
    assert gpu["compute_capability"] == "12.0"
    record = gpu["filled"]["compute_capability"]
    assert record["table"] == "architectures.json" and record["from"] == {"gpu_name": "NVIDIA GeForce RTX 5090"}
    assert "CUDA-GPUS" in record["source"]
    assert texts == [record["text"]] and "compute capability 12.0 of GPU 0" in texts[0]
    assert "from its name, per architectures.json" in texts[0]
    assert filled_texts(facts) == texts


def test_every_listed_name_fills_the_capability_it_is_listed_under() -> None:
    listed: dict[str, set[str]] = {}
    for arch in MANIFESTS.architectures:
        for name in arch.get("gpus") or []:
            listed.setdefault(str(name), set()).add(str(arch["compute_capability"]))
    assert len(listed) > 30
    for name, ccs in listed.items():
        facts, _ = fill(_facts(gpus=[{"index": 0, "name": name}]), MANIFESTS)
        got = cast("dict[str, Any]", facts["gpus"][0]).get("compute_capability")
        assert got == (next(iter(ccs)) if len(ccs) == 1 else None), name


@pytest.mark.parametrize(
    "name",
    [
        "NVIDIA H100",  # a shortened name: several cards (and nvidia-smi never prints it so)
        "NVIDIA GeForce RTX 4060 Ti",  # a card architectures.json does not list
        "nvidia geforce rtx 5090",  # not the exact string
        "RTX 5090",
        "",
    ],
)
def test_a_name_not_listed_exactly_fills_nothing(name: str) -> None:
    facts = _facts(gpus=[{"index": 0, "name": name}])
    assert fill(facts, MANIFESTS) == (facts, [])


def test_a_name_two_capabilities_list_fills_nothing() -> None:
    manifests = copy.deepcopy(MANIFESTS)
    archs = manifests.docs["architectures.json"]["architectures"]
    hopper = next(a for a in archs if a["compute_capability"] == "9.0")
    hopper["gpus"].append("NVIDIA GeForce RTX 5090")  # now 9.0 and 12.0 both list it
    manifests.forget_indexes()
    assert gpu_name_capability(manifests, "NVIDIA GeForce RTX 5090") is None
    facts = _facts(gpus=[{"index": 0, "name": "NVIDIA GeForce RTX 5090"}])
    assert fill(facts, manifests) == (facts, [])


def test_a_given_capability_wins_even_a_wrong_one_and_null_or_an_error_is_left() -> None:
    given = _facts(gpus=[{"index": 0, "name": "NVIDIA GeForce RTX 5090", "compute_capability": "8.9"}])
    assert fill(given, MANIFESTS) == (given, [])
    probed = _facts(gpus=[{"index": 0, "name": "NVIDIA GeForce RTX 5090", "compute_capability": None}])
    assert fill(probed, MANIFESTS) == (probed, [])
    failed = _facts(gpus=[{"index": 0, "name": "NVIDIA GeForce RTX 5090", "error": "NVML: GPU is lost"}])
    assert fill(failed, MANIFESTS) == (failed, [])


def test_each_gpu_is_filled_alone_and_the_input_is_not_changed() -> None:
    gpus = [
        {"index": 0, "name": "NVIDIA GeForce RTX 5090"},
        {"index": 1, "name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"},
        {"index": 2, "name": "NVIDIA GeForce RTX 4090"},
    ]
    before = copy.deepcopy(gpus)
    facts, texts = fill(_facts(gpus=gpus), MANIFESTS)
    assert gpus == before
    got = [cast("dict[str, Any]", g) for g in facts["gpus"]]
    assert [g["compute_capability"] for g in got] == ["12.0", "8.9", "8.9"]
    assert ["filled" in g for g in got] == [True, False, True]
    assert len(texts) == 2 and "of GPU 2 (NVIDIA GeForce RTX 4090)" in texts[1]


# ---- the driver's CUDA from its version ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "cuda"),
    [
        ("535.86.10", "12.2"),
        ("550.54.15", "12.4"),
        ("570.86.10", "12.8"),
        ("570.26", "12.8"),  # the minimum itself
        ("575.51.02", "12.8"),  # just below 12.9's
        ("580.95.05", "13.0"),
        ("590.48.01", "13.1"),
    ],
)
def test_driver_version_fills_the_cuda_the_table_brackets(version: str, cuda: str) -> None:
    facts, texts = fill(_facts(driver={"version": version}), MANIFESTS)
    driver = cast("dict[str, Any]", facts["driver"])
    assert driver["cuda"] == cuda == MANIFESTS.driver_cuda(version)
    assert driver["filled"]["cuda"]["source"] == ["CUDA-RN"]
    assert texts == [f"{driver['filled']['cuda']['text']}"] and f"driver CUDA {cuda} of driver {version}" in texts[0]


@pytest.mark.parametrize(
    "version",
    [
        "515.65.01",  # older than every CUDA release of the table
        "565.57.01",  # R565 reports CUDA 12.7, whose driver row was never published: 12.6 or 12.7
        "616.10",  # 13.4's row is marked inferred
        "615.23",  # below 13.4's inferred R616 minimum: 13.3 or 13.4 (tests/cases/rubin-sm107 says 13.4)
        "700.10",  # newer than every row: a newer CUDA may be out
        "garbage",
    ],
)
def test_driver_version_the_table_does_not_bracket_fills_nothing(version: str) -> None:
    facts = _facts(driver={"version": version})
    assert fill(facts, MANIFESTS) == (facts, [])


def test_a_given_driver_cuda_wins_and_a_driver_without_version_or_with_an_error_is_left() -> None:
    for driver in (
        {"version": "570.86.10", "cuda": "12.9"},  # stated (even a contradiction): kept
        {"version": "570.86.10", "cuda": None},  # probed, not read
        {"version": "570.86.10", "error": "nvidia-smi failed"},
        {"cuda": "12.8"},
        {},
    ):
        facts = _facts(driver=driver)
        assert fill(facts, MANIFESTS) == (facts, []), driver
    assert driver_cuda_bracketed(MANIFESTS, "570.86.10") is not None


# ---- what a user sees, and what the rules reading a filled value say --------------------------------------


def test_audit_of_a_name_only_file_judges_the_gpu_and_marks_the_rules_inferred(tmp_path: Path) -> None:
    """An inventory that names an RTX 5090 with a cu124 torch: without the capability, torch-arch is unknown (on the
    parent commit); filled from the name it fails, its reasons inferred and naming the filled fact."""
    path = _write(
        tmp_path,
        {"gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 5090"}], "packages": {"torch": {"version": "2.6.0+cu124"}}},
    )
    report = _audit(path)
    assert _status(report, "checks", "torch-arch") == "failed"
    failing = [r for r in _reasons(report, "checks", "torch-arch") if r["result"] == "fail"]
    assert failing and all(r["inferred"] for r in failing)
    assert all(any("compute capability 12.0 of GPU 0" in t for t in r["filled"]) for r in failing)
    text = render_plain(cast("Any", report), width=400)
    assert "note:  filled from the manifests, not stated: compute capability 12.0 of GPU 0" in text
    assert "(cc 12.0)" in text and "(inferred)" in text


def test_audit_of_a_driver_version_only_file_judges_driver_vs_torch(tmp_path: Path) -> None:
    """driver 535 (CUDA 12.2) with a cu130 torch: failed, where the parent commit left it unknown."""
    path = _write(tmp_path, {"driver": {"version": "535.86.10"}, "packages": {"torch": {"version": "2.9.1+cu130"}}})
    report = _audit(path)
    assert _status(report, "checks", "driver-vs-torch-cuda") == "failed"
    failing = [r for r in _reasons(report, "checks", "driver-vs-torch-cuda") if r["result"] == "fail"]
    assert failing and all(r.get("inferred") and "driver CUDA 12.2" in r["filled"][0] for r in failing)
    assert report["facts"]["driver"]["filled"]["cuda"]["from"] == {"driver_version": "535.86.10"}


def test_rules_that_read_no_filled_fact_are_not_marked(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "gpus": [{"index": 0, "name": "NVIDIA H200"}],
            "packages": {"torch": {"version": "2.9.1+cu128"}, "sglang": {"version": "0.5.9"}},
        },
    )
    report = _audit(path)
    reasons = [r for v in report["features"] + report["checks"] for r in v["reasons"]]
    marked = {r["rule"] for r in reasons if r.get("filled")}
    assert "torch-covers-gpu" in marked
    assert {r["rule"] for r in reasons if not r.get("filled")} - marked  # the rules that read no GPU fact
    assert not any(r.get("filled") for r in _reasons(report, "checks", "driver-vs-torch-cuda"))


def test_a_probed_report_is_untouched(tmp_path: Path) -> None:
    """A saved report writes every value it looked for (null where not read): nothing is absent, nothing filled."""
    facts = {
        "driver": {"version": "570.86.10", "cuda": None, "source": "nvml", "error": "cuDriverGetVersion failed"},
        "gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 5090", "compute_capability": None, "error": "NVML: lost"}],
        "packages": {"torch": {"installed": True, "version": "2.6.0+cu124"}},
    }
    probes = [{"name": "nvml", "status": "partial", "reason": "GPU lost", "duration_ms": 1.0}]
    report = _audit(_write(tmp_path, copy.deepcopy(facts), probes=probes))
    assert report["facts"]["gpus"] == facts["gpus"] and report["facts"]["driver"] == facts["driver"]
    assert not any(r.get("filled") for v in report["features"] + report["checks"] for r in v["reasons"])
    assert "filled from the manifests" not in render_plain(cast("Any", report), width=400)


def test_live_probes_are_never_filled() -> None:
    """Only `--facts` input is filled: facts that come from the probes (here handed in as gathered) stay as read."""
    facts = _facts(gpus=[{"index": 0, "name": "NVIDIA GeForce RTX 5090"}], driver={"version": "570.86.10"})
    report, ctx = build_report(Options(), want_plan=False, gathered=lambda: (copy.deepcopy(facts), [], None))
    assert "compute_capability" not in report["facts"]["gpus"][0] and "cuda" not in report["facts"]["driver"]
    assert not ctx.any_filled()


# ---- generated: the filled value is the stated one, and judges as it does -----------------------------------


def _repository_facts() -> list[Path]:
    roots = [REPO / "tests" / "realworld", REPO / "tests" / "cases", REPO / "examples"]
    return sorted(p for root in roots if root.is_dir() for p in root.rglob("*.json") if _has_facts(p))


def _has_facts(path: Path) -> bool:
    try:
        doc = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(doc, dict) and isinstance(doc.get("facts"), dict) and "schema_version" in doc


def _verdicts(facts: Facts) -> dict[str, str]:
    features, checks = evaluate_all(Context(facts=facts, manifests=MANIFESTS))
    return {str(v["id"]): str(v["status"]) for v in [*features, *checks]}


def test_every_stated_capability_and_driver_cuda_is_what_the_tables_fill() -> None:
    """Every facts file of the repository with a GPU name and capability, or a driver version and CUDA: removed and
    filled again, the value is the stated one (or nothing is filled), and every verdict is the stated facts'."""
    compared = 0
    raised: list[str] = []
    for path in _repository_facts():
        stated = cast("Facts", json.loads(path.read_text())["facts"])
        gone = cast("dict[str, Any]", copy.deepcopy(stated))
        removed = False
        for gpu in gone.get("gpus") or []:
            if isinstance(gpu, dict) and isinstance(gpu.get("compute_capability"), str) and gpu.get("name"):
                del gpu["compute_capability"]
                removed = True
        driver = gone.get("driver")
        if isinstance(driver, dict) and isinstance(driver.get("cuda"), str) and isinstance(driver.get("version"), str):
            del driver["cuda"]
            removed = True
        if not removed:
            continue
        filled, texts = fill(cast("Facts", gone), MANIFESTS)
        if not texts:
            continue
        for before, after in zip(stated.get("gpus") or [], filled.get("gpus") or [], strict=True):
            if "filled" in after:
                assert after["compute_capability"] == before["compute_capability"], (path, before)
            elif "compute_capability" in before:  # not filled (a name the table does not list): as stated
                cast("dict[str, Any]", after)["compute_capability"] = before["compute_capability"]
        said = stated.get("driver") or {}
        if "filled" in (filled.get("driver") or {}) and "cuda" in said and filled["driver"]["cuda"] != said["cuda"]:
            # the driver's own CUDA is a lower bound: a forward-compatibility package (cuda-compat, in NGC images)
            # raises what the box reports, never lowers it
            assert (compare_numeric(str(filled["driver"]["cuda"]), str(said["cuda"])) or 0) < 0, (path, said)
            raised.append(path.parent.name)
            cast("dict[str, Any]", filled["driver"])["cuda"] = said["cuda"]
        elif isinstance(filled.get("driver"), dict) and "cuda" in said:
            cast("dict[str, Any]", filled["driver"])["cuda"] = said["cuda"]
        assert _verdicts(filled) == _verdicts(fill(stated, MANIFESTS)[0]), path  # (what the file lacks, filled too)
        compared += 1
    assert compared >= 20
    assert raised == ["flashinfer-911-aot-kernels-ngc-torch25"]  # driver 550 in an NGC 24.08 image: CUDA 12.6


def test_gate_says_what_it_filled(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from stackcheck.cli import main

    path = _write(tmp_path, {"gpus": [{"index": 0, "name": "NVIDIA H200"}], "driver": {"version": "580.95.05"}})
    launch = ["--", "python", "-m", "sglang.launch_server", "--model-path", "m"]
    main(["gate", "--facts", path, "--format", "json", *launch])
    doc = json.loads(capsys.readouterr().out)
    assert [t.split(":")[0] for t in doc["filled"]] == [
        "compute capability 9.0 of GPU 0 (NVIDIA H200)",
        "driver CUDA 13.0 of driver 580.95.05",
    ]
    main(["gate", "--facts", path, *launch])
    assert "filled from the manifests, not stated: compute capability 9.0 of GPU 0" in capsys.readouterr().out


def test_recommend_and_explain_fill_as_the_audit_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from stackcheck.cli import main

    path = _write(tmp_path, {"gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 5090"}]})
    main(["recommend", "--facts", path])
    out = capsys.readouterr().out
    assert "(cc 12.0)" in out and "note: filled from the manifests, not stated: compute capability 12.0" in out
    main(["explain", "attention-fa3", "--facts", path])
    out = capsys.readouterr().out
    assert "filled from the manifests, not stated: compute capability 12.0 of GPU 0" in out
    assert "12.0" in out.split("path to the kernel")[0]
