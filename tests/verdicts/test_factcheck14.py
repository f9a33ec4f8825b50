"""The fourteenth fact-check sample (tests/realworld/FACTCHECK.md, "Fourteenth sample"): stack-check ok verdicts.

No drawn row was a false pass, so nothing here failed before; these tests hold what the rows were checked against,
so that a later manifest change cannot turn them without a test saying so:

- the generated release x architecture rows (the h200-newest box's driver and toolkit, eight GPUs of one compute
  capability, one SGLang release with its pins) stay ok with the rules they were checked on;
- kernel-arch follows the library SGLang loads (read 2026-12-03 with cuobjdump 12.8 from the triton 3.6.0 wheel):
  sgl-kernel 0.3.9.post2's common_ops carries SASS sm_80/89/90/90a/100a/101a/120a only, so a GPU of 10.3 has no
  image in it (an 'a' target runs on its own minor only), while sglang-kernel 0.4.7's sm100/common_ops (the
  directory load_utils.py picks for every capability but 9.0) carries a non-'a' SM 10.0 target that runs on 10.3;
- triton-ptxas on major 10 judges ptxas-blackwell (triton 3.6.0 compiler.py get_ptxas: arch >= 100; CUDA 12.9.86).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import Manifests, pypi_variant
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.types import CheckVerdict

ROOT = Path(__file__).resolve().parents[2]


def generated_box(manifests: Manifests, cc: str, sglang: str) -> dict[str, Any]:
    """The h200-newest box with eight GPUs of CC and SGLang SGLANG with its pins (torch's PyPI build)."""
    doc = json.loads((ROOT / "tests" / "cases" / "h200-newest" / "facts.json").read_text())
    base = copy.deepcopy(doc.get("facts", doc))
    base["gpus"] = assumed_gpus(manifests, f"{cc}x8")
    rel = next(r for r in manifests.releases("sglang") if r.get("version") == sglang)
    torch_pin = str((rel.get("requires") or {})["torch"]).lstrip("=")
    trel = next(r for r in manifests.releases("torch") if r.get("version") == torch_pin)
    return release_facts(base, manifests, sglang, None, pypi_variant(trel) or "cu128")


def check(manifests: Manifests, facts: dict[str, Any], check_id: str) -> CheckVerdict:
    spec = next(c for c in manifests.checks if c["id"] == check_id)
    return evaluate_check(spec, Context(facts=facts, manifests=manifests, launch={"tp": 8}))  # type: ignore[arg-type]


def results(v: CheckVerdict) -> dict[str, str]:
    return {str(r.get("rule")): str(r.get("result")) for r in v["reasons"]}


GENERATED = [
    (row["cc"], row["sglang"], row["check"])
    for row in json.loads((ROOT / "bench" / "factcheck14_drawn.json").read_text())
    if row["pop"] == "b"
]


@pytest.mark.parametrize(("cc", "sglang", "check_id"), GENERATED)
def test_the_drawn_generated_rows_stay_ok(manifests: Manifests, cc: str, sglang: str, check_id: str) -> None:
    v = check(manifests, generated_box(manifests, cc, sglang), check_id)
    assert v["status"] == "ok", v
    assert set(results(v).values()) == {"pass"}


@pytest.mark.parametrize("sglang", ["0.5.2", "0.5.4", "0.5.10"])
def test_an_sm_100a_only_kernel_package_does_not_cover_a_10_3_gpu(manifests: Manifests, sglang: str) -> None:
    v = check(manifests, generated_box(manifests, "10.3", sglang), "kernel-arch")
    assert v["status"] == "failed", v


@pytest.mark.parametrize("sglang", ["0.5.11", "0.5.20"])
def test_an_sm_100_family_or_103a_kernel_package_covers_a_10_3_gpu(manifests: Manifests, sglang: str) -> None:
    assert check(manifests, generated_box(manifests, "10.3", sglang), "kernel-arch")["status"] == "ok"


def test_triton_on_major_10_is_judged_on_ptxas_blackwell(manifests: Manifests) -> None:
    v = check(manifests, generated_box(manifests, "10.0", "0.5.11"), "triton-ptxas")
    observed = {str(r.get("rule")): r.get("observed") for r in v["reasons"]}
    assert v["status"] == "ok" and observed["ptxas-knows-gpu"] == "12.9", v
