"""attention-fa4 on SGLang 0.5.10-0.5.15, which run FA4 from the separate flash-attn-4 package: the path is
SGLang's admission (a valid --attention-backend) and then flash-attn-4's own checks, judged by its version.

A known flash-attn-4 release is judged by the gates read in its wheel (the forward majors, the paged-KV
refusals, the SM100 kernel's architecture check); an installed one of unknown version is swept over the
releases the facts' day admits (`quantify`), and is never ok. Facts are written here by hand; the wheels
themselves are read in test_flash_attn_4_registry.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.kernel_path import path_summary

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

MANIFESTS = load_manifests([])
FA4 = next(f for f in MANIFESTS.features if f["id"] == "attention-fa4")


def facts(sglang: str, cc: str, fa4: dict[str, Any] | None, day: str | None = None) -> Facts:
    packages: dict[str, Any] = {"sglang": {"installed": True, "version": sglang}}
    if fa4 is not None:
        packages["flash-attn-4"] = fa4
    doc: dict[str, Any] = {
        "gpus": [{"index": i, "name": "GPU", "compute_capability": cc} for i in range(2)],
        "packages": packages,
    }
    if day is not None:
        doc["collected_at"] = day
    return cast("Facts", doc)


def judge(f: Facts) -> dict[str, Any]:
    return dict(evaluate_feature(FA4, Context(facts=f, manifests=MANIFESTS)))


def version(v: str) -> dict[str, Any]:
    return {"installed": True, "version": v}


def failing(verdict: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(r["rule"]): r for r in verdict["reasons"] if r.get("result") == "fail"}


def test_b300_with_a_release_before_the_family_check_is_blocked() -> None:
    """4.0.0b3-4.0.0b14 check sm_100 <= arch <= sm_110f, which sm_103 fails with SGLang 0.5.12's cutlass-dsl
    4.5.0: blocked, naming what was observed, what is required and the wheel it was read in."""
    for v in ("4.0.0b9", "4.0.0b13", "4.0.0b14"):
        verdict = judge(facts("0.5.12", "10.3", version(v)))
        assert verdict["status"] == "blocked" and verdict["effect"] == "crash", v
        reason = failing(verdict)["flash-attn-4-sm100-arch"]
        assert reason["observed"] == 103
        assert "103" in str(reason["required"])
        assert "Only SM 10.x and 11.x are supported" in reason["message"] and "4.0.0b15" in reason["message"]
        titles = " ".join(s["title"] for s in reason["source"])
        assert "flash-attn-4" in titles and "flash_fwd_sm100.py" in titles and "arch.py" in titles


def test_b300_with_the_family_check_is_ok() -> None:
    """From 4.0.0b15 the SM100 kernel checks the SM 10.x / 11.x families: nothing of flash-attn-4 refuses
    a B300 (majors 8-12 admitted, paged KV refused on 8 and 12 only)."""
    for v in ("4.0.0b15", "4.0.0b36"):
        verdict = judge(facts("0.5.12", "10.3", version(v)))
        assert verdict["status"] == "ok", (v, verdict["reasons"])
        passed = {r["rule"] for r in verdict["reasons"] if r.get("result") == "pass"}
        assert {"flash-attn-4-majors", "flash-attn-4-paged-kv", "flash-attn-4-sm100-arch"} <= passed


def test_sglang_0_5_11_pins_a_dsl_without_the_alias() -> None:
    """SGLang 0.5.10-0.5.11 pin nvidia-cutlass-dsl 4.4.x, whose sm_110f is (11, 0): the range admits sm_103
    there, so the architecture rule does not apply (the reporter's 0.5.11 image worked)."""
    verdict = judge(facts("0.5.11", "10.3", version("4.0.0b13")))
    assert verdict["status"] == "ok"
    assert "flash-attn-4-sm100-arch" not in {r["rule"] for r in verdict["reasons"]}
    assert {"flash-attn-4-majors", "flash-attn-4-paged-kv"} <= {r["rule"] for r in verdict["reasons"]}


@pytest.mark.parametrize(
    ("cc", "v", "rule"),
    [
        ("12.0", "4.0.0b4", "flash-attn-4-majors"),  # 4.0.0b3-b4 admit majors 9-11
        ("8.0", "4.0.0b4", "flash-attn-4-majors"),
        ("12.0", "4.0.0b13", "flash-attn-4-paged-kv"),  # 'Paged KV not supported on SM 12.0 in this PR'
        ("8.0", "4.0.0b36", "flash-attn-4-paged-kv"),
        ("9.0", "4.0.0b4", "flash-attn-4-paged-kv"),  # 'paged KV not supported on SM 9.0'
    ],
)
def test_majors_and_paged_kv_per_release(cc: str, v: str, rule: str) -> None:
    verdict = judge(facts("0.5.10", cc, version(v)))
    assert verdict["status"] == "blocked" and rule in failing(verdict)


def test_hopper_from_b5_and_b200_are_ok() -> None:
    assert judge(facts("0.5.13", "9.0", version("4.0.0b5")))["status"] == "ok"
    assert judge(facts("0.5.12", "10.0", version("4.0.0b13")))["status"] == "ok"


def test_unknown_version_is_swept_over_the_releases_of_the_day() -> None:
    """Installed, version not known: on 2026-05-18 a box can hold 4.0.0b3-4.0.0b13 (4.0.0b14 came on 05-20),
    each refusing sm_103: blocked. Without a day, or on a day that admits 4.0.0b15, it stays unknown: never ok."""
    blocked = judge(facts("0.5.12", "10.3", {"installed": True}, "2026-05-18"))
    assert blocked["status"] == "blocked"
    first = blocked["reasons"][0]
    assert first["rule"] == "every-release" and "4.0.0b3-4.0.0b13" in first["required"]
    assert "4.0.0b14" in first["message"] and "sm_103" in first["message"]
    for day in (None, "2026-05-27", "2026-12-01"):
        assert judge(facts("0.5.12", "10.3", {"installed": True}, day))["status"] == "unknown", day
    # a B200 is not refused by any release of that day
    assert judge(facts("0.5.12", "10.0", {"installed": True}, "2026-05-18"))["status"] == "unknown"


def test_candidates_narrow_the_sweep() -> None:
    """A report that narrows flash-attn-4 to a few releases (a traceback's line number) is swept over those."""
    narrowed = judge(facts("0.5.12", "10.3", {"installed": True, "candidates": ["4.0.0b11", "4.0.0b14"]}))
    assert narrowed["status"] == "blocked"
    mixed = judge(facts("0.5.12", "10.3", {"installed": True, "candidates": ["4.0.0b14", "4.0.0b15"]}))
    assert mixed["status"] == "unknown"


@pytest.mark.parametrize("entry", [None, {"installed": False}, {"error": "probe timed out"}])
def test_not_installed_or_not_known_is_never_ok(entry: dict[str, Any] | None) -> None:
    verdict = judge(facts("0.5.12", "10.3", entry, "2026-05-18"))
    assert verdict["status"] == "unknown"
    unknown = [r for r in verdict["reasons"] if r.get("result") == "unknown"]
    assert any(str(r["rule"]).startswith("flash-attn-4-") for r in unknown)


def test_newer_than_the_data_is_unknown() -> None:
    verdict = judge(facts("0.5.12", "10.3", version("4.0.0b37")))
    assert verdict["status"] == "unknown"


def test_other_sglang_releases_do_not_read_flash_attn_4() -> None:
    """0.5.9 and 0.5.16+ vendor FA4, 0.5.8 and before use sgl-kernel: their verdicts do not depend on it."""
    for sglang, cc in (("0.5.9", "10.3"), ("0.5.16", "10.3"), ("0.5.18", "12.0"), ("0.5.16", "9.0")):
        base = judge(facts(sglang, cc, None))
        for entry in ({"installed": True}, version("4.0.0b4"), version("4.0.0b13")):
            again = judge(facts(sglang, cc, entry, "2026-05-18"))
            assert again["status"] == base["status"], (sglang, cc, entry)


def test_the_path_goes_from_sglang_to_flash_attn_4() -> None:
    """The verdict's path names SGLang's admission and flash-attn-4's kernel hop, failing on the B300."""
    f = facts("0.5.12", "10.3", version("4.0.0b13"))
    verdict = judge(f)
    hops = path_summary(FA4, Context(facts=f, manifests=MANIFESTS), verdict["reasons"])
    kinds = [(h["hop"], h["package"]) for h in hops]
    assert kinds[0] == ("admission", "sglang")
    kernel = next(h for h in hops if h["package"] == "flash-attn-4")
    assert kernel["hop"] == "kernel" and kernel["result"] == "fail"
    assert all(h["package"] != "sgl-kernel" for h in hops)
