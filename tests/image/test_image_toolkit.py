"""NVIDIA_REQUIRE_* judged by the checker that runs on the box (facts.container_toolkit, read by
stackcheck/probes/container_toolkit.py; components.json driver.container_brands runtime_modes): libnvidia-container's
words of its own release in legacy mode, no check in cdi / jit-cdi mode of the releases read, unknown in csv mode
and wherever the mode and version leave more than one checker whose outcomes differ."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.image.require import judge_facts, parse_nvidia_require, select_checkers, shipped_brand_table

R535 = {"version": "535.247.01", "cuda": "12.2"}
R550 = {"version": "550.163.01", "cuda": "12.4"}
# one brand term each (the shape of NVIDIA's CUDA images, written here)
QUADRORTX_ONLY = "cuda>=12.8 brand=quadrortx,driver>=535,driver<536"
UNKNOWN_550 = "cuda>=13.0 brand=unknown,driver>=550,driver<551 brand=nvidia,driver>=550,driver<551"
GEFORCE_FAILS = "cuda>=12.8 brand=tesla,driver>=535,driver<536"


def image(text: str) -> dict[str, Any]:
    return {"nvidia_require": parse_nvidia_require({"NVIDIA_REQUIRE_CUDA": text}).to_facts()}


def gpu(brand: str, cc: str = "9.0") -> dict[str, Any]:
    return {"index": 0, "compute_capability": cc, "brand": brand}


def toolkit(mode: str | None, lib: str | None = None, **more: Any) -> dict[str, Any]:
    return {"mode": mode, "mode_source": "config", "libnvidia_container": lib, "disable_require": False, **more}


def test_library_version_picks_its_words() -> None:
    req, dev = image(QUADRORTX_ONLY), [gpu("QUADRO_RTX", "7.5")]
    assert judge_facts(req, R535, dev).satisfied is None  # not read: "Unknown" before 1.9.0, "QuadroRTX" from it
    new = judge_facts(req, R535, dev, toolkit=toolkit("legacy", "1.17.8"))
    assert new.satisfied is True and "libnvidia-container 1.17.8" in new.reason
    old = judge_facts(req, R535, dev, toolkit=toolkit("legacy", "1.8.1"))
    assert old.satisfied is False and "1.8.1" in old.reason and "QUADRO_RTX" in old.reason


def test_unknown_brand_in_legacy_mode_starts() -> None:
    # libnvidia-container says "Unknown" (listed); only the toolkit's own check (not in legacy mode) leaves it empty
    req, dev = image(UNKNOWN_550), [gpu("UNKNOWN")]
    assert judge_facts(req, R550, dev).satisfied is None
    assert judge_facts(req, R550, dev, toolkit=toolkit("legacy")).satisfied is True


def test_auto_before_1_18_is_legacy() -> None:
    j = judge_facts(image(GEFORCE_FAILS), R535, [gpu("GEFORCE", "8.9")], toolkit=toolkit("auto", "1.17.8"))
    assert j.satisfied is False and "mode auto, here legacy" in j.reason


def test_auto_from_1_18_may_be_jit_cdi_which_does_not_check() -> None:
    # the runtime (--runtime=nvidia) resolves auto to jit-cdi, the hook (docker --gpus) to legacy
    j = judge_facts(image(GEFORCE_FAILS), R535, [gpu("GEFORCE", "8.9")], toolkit=toolkit("auto", "1.18.0"))
    assert j.satisfied is None and "does not check" in j.reason and "jit-cdi or legacy" in j.reason
    # an outcome every checker agrees on stands
    ok = judge_facts(image("cuda>=12.0"), R535, [gpu("GEFORCE", "8.9")], toolkit=toolkit("auto", "1.18.0"))
    assert ok.satisfied is True


@pytest.mark.parametrize("mode", ["cdi", "jit-cdi"])
def test_cdi_modes_of_released_toolkits_do_not_check(mode: str) -> None:
    dev = [gpu("GEFORCE", "8.9")]
    j = judge_facts(image(GEFORCE_FAILS), R535, dev, toolkit=toolkit(mode, "1.20.0"))
    assert j.satisfied is True and "not evaluated" in j.reason
    # a toolkit newer than the releases read (or not bounded by a library version) may check: unknown
    assert judge_facts(image(GEFORCE_FAILS), R535, dev, toolkit=toolkit(mode, "1.21.0")).satisfied is None
    assert judge_facts(image(GEFORCE_FAILS), R535, dev, toolkit=toolkit(mode)).satisfied is None


def test_csv_mode_is_unknown() -> None:
    j = judge_facts(image("cuda>=12.0"), R535, [gpu("TESLA")], toolkit=toolkit("csv", "1.17.8"))
    assert j.satisfied is None and "not modelled" in j.reason


def test_an_unknown_mode_or_a_second_toolkit_does_not_decide() -> None:
    bad = judge_facts(image("cuda>=12.0"), R535, [gpu("TESLA")], toolkit=toolkit("?"))
    assert bad.satisfied is None and "mode ?" in bad.reason
    req, dev = image(QUADRORTX_ONLY), [gpu("QUADRO_RTX", "7.5")]
    second = toolkit("legacy", "1.17.8", other_installs=["/usr/local/nvidia/toolkit"])
    assert judge_facts(req, R535, dev, toolkit=second).satisfied is None
    assert judge_facts(req, R535, dev, toolkit={"error": "no toolkit", "mode": None}).satisfied is None


def test_tegra_auto_is_csv_and_unknown() -> None:
    j = judge_facts(image("cuda>=12.0"), R535, [gpu("TESLA")], toolkit=toolkit("auto", "1.17.8", tegra=True))
    assert j.satisfied is None


def test_select_checkers_reads_the_manifest() -> None:
    table = shipped_brand_table()
    legacy = select_checkers(table, toolkit("legacy", "1.17.8"))
    assert [e["libnvidia_container"] for e in legacy.entries] == [">=1.9.0"] and not legacy.unchecked
    assert len(select_checkers(table, None).entries) == 3  # not read: every checker with words


CASE = Path(__file__).resolve().parent.parent / "cases" / "image-driver-too-old" / "facts.json"


def test_audit_reads_the_toolkit_facts(tmp_path: Path) -> None:
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import build_report

    def status(tk: dict[str, Any] | None) -> str:
        doc = json.loads(CASE.read_text())
        facts = doc["facts"]
        facts["driver"].update(R535)
        facts["image"]["nvidia_require"] = image(QUADRORTX_ONLY)["nvidia_require"]
        for g in facts["gpus"]:
            g["brand"] = "QUADRO_RTX"
            g["compute_capability"] = "7.5"
        facts.pop("container_toolkit", None)
        if tk is not None:
            facts["container_toolkit"] = tk
        path = tmp_path / "facts.json"
        path.write_text(json.dumps(doc))
        report, _ = build_report(Options(facts_file=str(path)))
        return str(next(c for c in report["checks"] if c["id"] == "image-nvidia-require")["status"])

    assert status(None) == "unknown"
    assert status(toolkit("legacy", "1.17.8")) == "ok"
    assert status(toolkit("legacy", "1.8.1")) == "failed"


def test_disable_require_turns_the_hooks_check_off() -> None:
    # config.toml's top-level disable-require = true: the hook sets NVIDIA_DISABLE_REQUIRE, nvidia-container-cli
    # checks nothing; not read (facts without the key, an unreadable file): it may, so a refusal is not certain
    req, dev = image(GEFORCE_FAILS), [gpu("GEFORCE", "8.9")]
    off = judge_facts(req, R535, dev, toolkit=toolkit("legacy", "1.17.8", disable_require=True))
    assert off.satisfied is True and "disable-require = true" in off.reason and "not evaluated" in off.reason
    unread = toolkit("legacy", "1.17.8")
    del unread["disable_require"]
    maybe = judge_facts(req, R535, dev, toolkit=unread)
    assert maybe.satisfied is None and "disable-require not read" in maybe.reason
    assert judge_facts(req, R535, dev, toolkit=toolkit("legacy", "1.17.8")).satisfied is False
    # an outcome that holds either way stands
    assert judge_facts(image("cuda>=12.0"), R535, dev, toolkit=unread).satisfied is True


@pytest.mark.parametrize(
    ("tk", "why"),
    [
        (None, "no container_toolkit facts"),
        ({"mode": None, "mode_error": "/etc/nvidia-container-runtime/config.toml: larger than 262144 bytes"}, "larger"),
        ({"mode": None, "error": "no NVIDIA container toolkit found"}, "no NVIDIA container toolkit found"),
        (toolkit("legacy", "1.17.8", other_installs=["/usr/local/nvidia/toolkit"]), "second container toolkit"),
    ],
)
def test_toolkit_not_read_never_refuses_and_says_what_to_give(tk: dict[str, Any] | None, why: str) -> None:
    dev = [gpu("GEFORCE", "8.9")]
    refused = judge_facts(image(GEFORCE_FAILS), R535, dev, toolkit=tk)  # legacy refuses; cdi starts it unchecked
    assert refused.satisfied is None and refused.failed == GEFORCE_FAILS and "unmet where" in refused.reason
    met = judge_facts(image("cuda>=12.0"), R535, dev, toolkit=tk)  # every modelled checker starts it: it stands
    assert met.satisfied is True and "by every checker modelled" in met.reason and "not modelled" in met.reason
    for j in (refused, met):
        assert why in j.reason and "--host-facts" in j.reason and "stackcheck audit --image" in j.reason
    # what the image does not ask for holds whatever the toolkit
    none = {"nvidia_require": parse_nvidia_require({"PATH": "/usr/bin"}).to_facts()}
    assert judge_facts(none, R535, dev, toolkit=tk).satisfied is True
    disabled = {"nvidia_require": parse_nvidia_require({"NVIDIA_DISABLE_REQUIRE": "true"}).to_facts()}
    assert judge_facts(disabled, R535, dev, toolkit=tk).satisfied is True
