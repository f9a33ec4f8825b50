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

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.types import CheckVerdict

CORPUS = Path(__file__).resolve().parent.parent / "realworld"


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


def arm_box(cc: str, version: str) -> dict[str, Any]:
    doc = box(cc, {"installed": True, "version": version})
    doc["system"] = {"machine": "aarch64"}
    return doc


@pytest.mark.parametrize(
    ("cc", "status"),
    [
        ("8.0", "ok"),  # common_ops sm_80 SASS in the aarch64 wheel (A100 on an Arm host)
        ("8.7", "ok"),  # sm_87
        ("8.9", "ok"),  # sm_89 (L4 / L40S)
        ("9.0", "ok"),
        ("12.0", "ok"),
        ("12.1", "failed"),  # GB10: sm_120a does not run on 12.1 (MEDS_EIC_AR#163)
    ],
)
def test_the_aarch64_pypi_build_of_0_3_21_is_judged_by_its_wheel(manifests: Manifests, cc: str, status: str) -> None:
    """The PyPI aarch64 wheel of sgl-kernel 0.3.21 carries sm_80, sm_87 and sm_89 as well (read with scan_file,
    icorpO 2026-12-03); an Arm box of cc 8.x was failed from an older assumed list."""
    v = kernel_arch(manifests, arm_box(cc, "0.3.21"))
    assert v["status"] == status, v.get("reasons")


def test_each_summary_target_list_serves_the_gpus_its_libraries_serve(manifests: Manifests) -> None:
    """Where a kernel build records its libraries' targets (libs / libs_aarch64, read from the wheel), the summary
    list that kernel-arch judges (archs / archs_aarch64) serves every GPU of architectures.json exactly as the
    libraries together do: a summary written before the wheel was read must not disagree with it.

    One known disagreement is left as it is and listed: sglang-kernel 0.4.6-0.4.10's aarch64 summary names sm_100a
    and sm_103a, while their aarch64 wheels (0.4.10's read again by icorpO 2026-12-03) carry sm_100f, sm_103a and no
    sm_100a. Both serve 10.0 and 10.3; they differ only on 10.7 (Rubin), where sm_100f runs by the family rule of
    architectures.json. Making the summary follow the wheel would turn an Arm SM107 box from failed to ok on that
    rule alone, which no thread read here establishes for 10.7: left for the lead, not changed."""
    from stackcheck.facts.archs import coverage, expand_arch_list

    archs = json.loads((Path(__file__).resolve().parents[2] / "manifests" / "architectures.json").read_text())
    ccs = sorted({str(a["compute_capability"]) for a in archs["architectures"]})
    assert ccs, "no compute capabilities read from architectures.json"
    wrong = []
    for name in ("sgl-kernel", "sglang-kernel"):
        for rel in manifests.releases(name):
            for variant in rel.get("variants") or []:
                var: dict[str, Any] = dict(variant)
                for summary, libs in (("archs", "libs"), ("archs_aarch64", "libs_aarch64")):
                    if not var.get(summary) or not var.get(libs):
                        continue
                    union = sorted({t for targets in var[libs].values() for t in targets})
                    for cc in ccs:
                        major, minor = (int(x) for x in cc.split("."))
                        a = coverage(expand_arch_list(list(var[summary])), (major, minor))
                        b = coverage(expand_arch_list(union), (major, minor))
                        if a != b:
                            wrong.append((name, rel.get("version"), var.get("variant"), summary, cc, a, b))
    known = {("sglang-kernel", v, "cu130", "archs_aarch64", "10.7") for v in ("0.4.6", "0.4.6.post1", "0.4.7", "0.4.8")}
    known |= {("sglang-kernel", v, "cu130", "archs_aarch64", "10.7") for v in ("0.4.9", "0.4.10")}
    assert not [w for w in wrong if w[:5] not in known], wrong


def test_the_norm_signature_tells_a_gb10_user_which_build_has_sm_121a() -> None:
    """The RMSNorm 'no kernel image' line of a GB10 (MEDS_EIC_AR#163) is named by sgl-kernel-norm-no-kernel-image;
    its text says that no PyPI sgl-kernel 0.3.x has sm_121a and which builds do (SGLang 0.5.11+'s sglang-kernel
    0.4.2+ aarch64 wheels, or the +cu130 builds of SGLang's index), not only the SM120 fix of 2025."""
    from stackcheck.launch.triage import triage_file

    result = triage_file(CORPUS / "meds-eic-ar-163-spark-pypi-sgl-kernel-no-sm121" / "server.log")
    rc = result.root_cause
    assert rc is not None and rc.signature is not None and rc.signature.id == "sgl-kernel-norm-no-kernel-image"
    text = f"{rc.signature.explanation} {rc.signature.fix}"
    assert "sm_121a" in text and "GB10" in text
    assert "+cu130" in text and "0.4.2" in text
