"""The kernel-arch check judges the PyPI builds of sgl-kernel, whose targets were read from the published wheels
(0.3.5 on: i16n; 0.1.0-0.3.4.post1: iold), and sweeps an sgl-kernel of unknown version over the releases the
facts' day allows (checks.json kernel-arch `quantify`): the RTX 5060 report of 2025-08-25 (sglang#9600) can only
hold 0.1.0-0.3.5 of the releases the manifests know, and none of their PyPI builds has code for cc 12.0; nor has
any that the RTX 5090 report of 2025-06-16 (sglang#7249) can hold (0.1.0-0.1.9). A cc 7.5 box is never concluded
failed that way: every PyPI build through 0.3.5 carries sm_75."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests, load
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.types import CheckVerdict

CORPUS = Path(__file__).resolve().parent.parent / "realworld"


@pytest.fixture(scope="module")
def manifests() -> Manifests:
    return load([])


def kernel_arch(manifests: Manifests, doc: dict[str, Any]) -> CheckVerdict:
    spec = next(c for c in manifests.checks if c["id"] == "kernel-arch")
    return evaluate_check(spec, Context(facts=copy.deepcopy(doc), manifests=manifests, launch={}))  # type: ignore[arg-type]


def box(cc: str, sgl_kernel: dict[str, Any], day: str | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "gpus": [{"index": 0, "name": "GPU", "compute_capability": cc}],
        "packages": {
            "sgl-kernel": sgl_kernel,
            "sglang-kernel": {"installed": False},
            "flashinfer-jit-cache": {"installed": False},
            "vllm": {"installed": False},
        },
    }
    if day is not None:
        doc["collected_at"] = day
    return doc


def fails(v: CheckVerdict) -> list[dict[str, Any]]:
    return [dict(r) for r in v.get("reasons") or [] if r.get("result") == "fail"]


@pytest.mark.parametrize(
    ("version", "cc", "status"),
    [
        ("0.3.5", "12.0", "failed"),  # the PyPI build: sm_75-sm_90a, no Blackwell code
        ("0.3.5", "7.5", "ok"),  # sm_75 SASS in common_ops
        ("0.3.5", "10.0", "failed"),
        ("0.3.7", "12.0", "failed"),
        ("0.3.7", "7.5", "failed"),  # sm_75 dropped from 0.3.6.post1 on
        ("0.3.7", "9.0", "ok"),
        ("0.3.5+cu128", "12.0", "ok"),  # the index build (its archs stay as recorded)
        ("0.3.9", "12.0", "ok"),  # the first PyPI wheel with sm_120a
        ("0.3.9", "12.1", "failed"),  # sm_120a does not run on 12.1
    ],
)
def test_the_pypi_builds_read_from_the_wheels_are_judged(
    manifests: Manifests, version: str, cc: str, status: str
) -> None:
    v = kernel_arch(manifests, box(cc, {"installed": True, "version": version}))
    assert v["status"] == status, v
    if status == "failed":
        (fail,) = fails(v)
        assert fail["rule"] == "sgl-kernel-coverage" and fail["effect"] == "crash"
        assert f"cc {cc}" in str(fail["message"]) and "sgl-kernel" in str(fail["message"])


def test_the_pypi_variant_records_its_wheel_and_each_library(manifests: Manifests) -> None:
    for version in ("0.3.5", "0.3.7", "0.3.9"):
        rel = next(r for r in manifests.releases("sgl-kernel") if r.get("version") == version)
        pypi = [v for v in rel["variants"] if v.get("pypi")]
        assert len(pypi) == 1 and rel.get("pypi_variant") == pypi[0]["variant"]
        src = pypi[0]["libs_source"]
        assert f"sgl_kernel-{version}-cp310-abi3-manylinux2014_x86_64.whl" in src["title"] and src["url"]
        union = {a for libs in pypi[0]["libs"].values() for a in libs}
        assert union == set(pypi[0]["archs"])
        assert pypi[0]["inferred"] is True and "CUDA label is inferred" in pypi[0]["note"]


def test_an_unknown_release_on_the_day_of_the_5060_report_is_swept_to_0_3_5(manifests: Manifests) -> None:
    v = kernel_arch(manifests, box("12.0", {"installed": True}, "2025-08-25"))
    assert v["status"] == "failed"
    fail = fails(v)[0]
    assert fail["rule"] == "sgl-kernel-coverage" and fail["effect"] == "crash"
    assert "(0.1.0-0.3.5;" in str(fail["message"]) and "2025-08-25" in str(fail["message"])
    assert "0.3.7" in str(fail["message"])  # named as later, not swept


@pytest.mark.parametrize(
    ("cc", "day"),
    [
        ("12.0", "2025-09-20"),  # 0.3.9.post2 (sm_120a) may be installed then
        ("12.0", "2025-09-09"),  # 0.3.9, uploaded that day, has sm_120a
        ("12.0", None),  # no day: every release, and later ones have sm_120a
        ("7.5", "2025-08-25"),  # 0.3.5 has sm_75
        ("7.5", "2026-05-03"),  # nothing later is known: no rule holds beyond the sweep
        ("12.0", "2025-04-22"),  # before 0.1.0, the oldest release PyPI serves: nothing is swept (no `earlier`)
        ("7.5", "2025-06-16"),  # 0.1.0-0.1.9 all have sm_75
    ],
)
def test_the_sweep_does_not_conclude_where_a_release_may_run(manifests: Manifests, cc: str, day: str | None) -> None:
    v = kernel_arch(manifests, box(cc, {"installed": True}, day))
    assert v["status"] == "unknown", v


def test_a_day_between_0_3_7_and_0_3_9_sweeps_both(manifests: Manifests) -> None:
    v = kernel_arch(manifests, box("12.0", {"installed": True}, "2025-09-05"))
    assert v["status"] == "failed"
    assert "(0.1.0-0.3.7;" in str(fails(v)[0]["message"])


@pytest.mark.parametrize(
    ("cc", "day", "span"),
    [("12.0", "2025-06-16", "0.1.0-0.1.9"), ("10.0", "2025-05-01", "0.1.0-0.1.1"), ("12.0", "2025-04-23", "0.1.0")],
)
def test_an_early_2025_box_is_swept_over_the_old_releases(manifests: Manifests, cc: str, day: str, span: str) -> None:
    """A Blackwell box of a day before 0.3.5's upload holds one of 0.1.0-0.3.4.post1 (read from their wheels:
    sm_75-sm_90a SASS, no PTX): failed, where it was unknown while the manifests started at 0.3.5."""
    v = kernel_arch(manifests, box(cc, {"installed": True}, day))
    assert v["status"] == "failed", v
    (fail,) = fails(v)
    assert fail["rule"] == "sgl-kernel-coverage" and fail["effect"] == "crash"
    assert f"({span};" in str(fail["message"]) and f"cc {cc}" in str(fail["message"])


def test_the_old_pypi_builds_record_their_wheels(manifests: Manifests) -> None:
    releases = [str(r["version"]) for r in manifests.releases("sgl-kernel")]
    old = [r for r in manifests.releases("sgl-kernel") if releases.index(str(r["version"])) < releases.index("0.3.5")]
    assert len(old) == 31 and old[0]["version"] == "0.1.0" and old[-1]["version"] == "0.3.4.post1"
    for rel in old:
        (build,) = rel["variants"]
        assert build["pypi"] is True and rel["pypi_variant"] == build["variant"] == "cu124"
        assert f"sgl_kernel-{rel['version']}-" in build["libs_source"]["title"] and rel["uploaded"] <= "2025-08-13"
        assert {a for libs in build["libs"].values() for a in libs} == set(build["archs"])
        assert "sm_75" in build["libs"]["common_ops"] and not [a for a in build["archs"] if not a.startswith("sm_")]
        assert build["inferred"] is True and "CUDA label is inferred" in build["note"]
        assert rel["requires"]["torch"] in ("==2.6.0", "==2.7.1", "==2.8.0") and rel["inferred"] is True


def test_the_real_world_cases(manifests: Manifests) -> None:
    def audit(case: str) -> CheckVerdict:
        doc = json.loads((CORPUS / case / "facts.json").read_text(encoding="utf-8"))["facts"]
        return kernel_arch(manifests, doc)

    for case in ("sglang-9600-rmsnorm-no-kernel-image-5060", "sglang-7249-rmsnorm-no-kernel-image-5090"):
        v = audit(case)
        assert v["status"] == "failed", case
        text = " ".join(str(r.get("message")) for r in fails(v))
        assert "sgl-kernel" in text and "cc 12.0" in text
    v = audit("sglang-9600-rmsnorm-no-kernel-image-5060")
    assert v["status"] == "failed"
    text = " ".join(str(r.get("message")) for r in fails(v))
    assert "sgl-kernel" in text and "cc 12.0" in text
    # the RTX 2080 report cannot be narrowed to a release, and the 0.3.5 PyPI build has code for cc 7.5
    assert audit("sglang-24302-gemma-rmsnorm-sm75-2080")["status"] == "unknown"
