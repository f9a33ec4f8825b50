"""Findings of the adversarial review of 2 December (branch irev): inputs that gave a verdict naming the wrong
cause, each checked against the engine as a user's facts file reaches it."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import collected_day, evaluate_check
from stackcheck.verdicts.types import CheckVerdict


def pkg(version: str, **kw: Any) -> dict[str, Any]:
    return {"installed": True, "version": version, **kw}


def kernel_box(toolkits: list[dict[str, Any]] | None) -> dict[str, Any]:
    """An H100 with sgl-kernel 0.3.14.post1 (one of the releases that raise without a CUDA lib directory) and
    a pip CUDA 12.8 torch, its CUDA 12 libraries found."""
    facts: dict[str, Any] = {
        "driver": {"version": "580.95.05", "cuda": "13.0"},
        "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}],
        "packages": {
            "torch": pkg("2.8.0+cu128", cuda="12.8", variant="cu128"),
            "sgl-kernel": pkg("0.3.14.post1"),
        },
        "system": {"env": {}},
        "cuda_libs": {
            "libcudart.so.12": "/x/libcudart.so.12",
            "libnvrtc.so.12": "/x/libnvrtc.so.12",
            "libnuma.so.1": "/x/libnuma.so.1",
        },
    }
    if toolkits is not None:
        facts["cuda_toolkits"] = toolkits
    return facts


def check(manifests: Manifests, facts: dict[str, Any], cid: str) -> CheckVerdict:
    spec = next(c for c in manifests.checks if c["id"] == cid)
    return evaluate_check(spec, Context(facts=copy.deepcopy(facts), manifests=manifests, launch={}))  # type: ignore[arg-type]


def failed(v: CheckVerdict) -> list[str]:
    return [str(r.get("rule")) for r in v["reasons"] if r.get("result") == "fail"]


def test_a_hand_written_toolkit_without_active_for_build_is_not_a_missing_toolkit(manifests: Manifests) -> None:
    """A report that lists its toolkit as the facts template shows it, but without `active_for_build` (the
    schema does not require it), does not say which directory a build picks: cuda-lib-dir must not claim
    that no toolkit directory exists (it did: 'toolkit directory found: False', a crash)."""
    listed = [{"path": "/usr/local/cuda-12.8", "version": "12.8"}]
    v = check(manifests, kernel_box(listed), "kernel-runtime-libs")
    assert "cuda-lib-dir" not in failed(v)
    assert v["status"] == "unknown"
    assert any("active_for_build" in str(r.get("message")) for r in v["reasons"] if r.get("result") == "unknown")
    # what the probe writes still decides: marked and there passes, nothing marked (probed) fails
    marked = [{**listed[0], "active_for_build": True, "active_for_torch": False}]
    assert check(manifests, kernel_box(marked), "kernel-runtime-libs")["status"] == "ok"
    unmarked = [{**listed[0], "active_for_build": False, "active_for_torch": False}]
    assert failed(check(manifests, kernel_box(unmarked), "kernel-runtime-libs")) == ["cuda-lib-dir"]
    assert failed(check(manifests, kernel_box([]), "kernel-runtime-libs")) == ["cuda-lib-dir"]


@pytest.mark.parametrize(
    ("value", "day"),
    [
        ("2026-02-03", "2026-02-03"),
        ("2026-02-03T12:00:00Z", "2026-02-03"),
        ("2026-02-03T12:00:00+00:00", "2026-02-03"),
        # a local time west of UTC that is already the next UTC day: releases uploaded that UTC day count
        ("2026-02-03T21:30:00-05:00", "2026-02-04"),
        ("2026-12-31T23:00:00-02:00", "2027-01-01"),
        # east of UTC, still the previous UTC day
        ("2026-02-04T02:00:00+09:00", "2026-02-03"),
        ("2026-03-01T01:00+05:30", "2026-02-28"),
        ("2026-02-03T21:30:00.123456-05:00", "2026-02-04"),
        # an offset that cannot be read leaves the day unreadable (nothing is left out of a sweep)
        ("2026-02-03T21:30:00-5", None),
        ("2026-02-30", "2026-02-30"),
    ],
)
def test_collected_at_is_read_as_a_utc_day(manifests: Manifests, value: str, day: str | None) -> None:
    ctx = Context(facts={"collected_at": value}, manifests=manifests, launch={})
    assert collected_day(ctx) == day


@pytest.mark.parametrize("bad", ["zzz", "1.x", "latest"])
def test_a_candidate_that_is_not_a_version_is_bad_input(tmp_path: Any, bad: str) -> None:
    """A facts file whose packages.NAME.candidates holds a non-version passed the schema and the sweep then
    ignored the whole list without a word; reading the file now names the entry (exit 2 on the command line)."""
    import json

    from stackcheck.errors import BadInputError
    from stackcheck.facts.model import load_facts_file

    entry = {"installed": True, "candidates": ["0.6.12", bad]}
    path = tmp_path / "f.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": {"packages": {"flashinfer-python": entry}}}))
    where = r"\$\.facts\.packages\.flashinfer-python\.candidates\[1\]"
    with pytest.raises(BadInputError, match=where + ": .* not a version"):
        load_facts_file(path)
    entry["candidates"] = ["0.6.12", "0.6.11.post1"]
    path.write_text(json.dumps({"schema_version": 1, "facts": {"packages": {"flashinfer-python": entry}}}))
    assert load_facts_file(path)["packages"]["flashinfer-python"]["candidates"] == ["0.6.12", "0.6.11.post1"]


def test_a_misspelt_fact_in_quantify_earlier_when_is_a_manifest_problem() -> None:
    """A rule's `when` with an unknown fact path is refused by the validator; `quantify.earlier.when` was not
    checked, so a misspelt fact there left `earlier` unknown on every box without a word."""
    import json

    from stackcheck.knowledge.loader import load as load_shipped
    from stackcheck.knowledge.validate import validate_documents

    shipped = load_shipped([])
    item = copy.deepcopy(
        next(f for f in shipped.features if isinstance((f.get("quantify") or {}).get("earlier"), dict))
    )
    item["quantify"]["earlier"]["when"] = {
        "all": [{"fact": "gpu.cc_major", "op": ">=", "value": 9}, {"fact": "gpu.nope", "op": "==", "value": 1}]
    }
    doc = json.loads(json.dumps({"features": [item]}))
    problems = validate_documents({"features.json": ("user/features.json", doc)}, partial=True)
    assert [p for p in problems if "quantify.earlier.when.all[1].fact: unknown fact path 'gpu.nope'" in p], problems
    item["quantify"]["earlier"]["when"]["all"].pop()
    doc["features"] = [item]
    assert validate_documents({"features.json": ("user/features.json", doc)}, partial=True) == []


def test_a_quantify_package_unknown_to_components_is_a_manifest_problem() -> None:
    """The sweep reads the quantify package's releases from components.json: a package that is not there (a
    misspelling, 'flashinfer' for flashinfer-python) would leave the sweep off on every box without a word."""
    import json

    from stackcheck.knowledge.loader import load as load_shipped
    from stackcheck.knowledge.validate import validate_documents

    shipped = load_shipped([])
    item = copy.deepcopy(next(f for f in shipped.features if isinstance(f.get("quantify"), dict)))
    item["quantify"]["package"] = "flashinfer"
    doc = json.loads(json.dumps({"features": [item]}))
    problems = validate_documents({"features.json": ("user/features.json", doc)}, partial=True)
    assert [p for p in problems if "quantify.package: 'flashinfer' is not a package of components.json" in p], problems
    item["quantify"]["package"] = "sglang"
    doc["features"] = [item]
    assert validate_documents({"features.json": ("user/features.json", doc)}, partial=True) == []
