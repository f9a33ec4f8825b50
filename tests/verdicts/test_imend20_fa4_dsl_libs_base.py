"""imend20 (ifc69's leftover): the cutlass-dsl-libs-* rules start at 0.5.16, but SGLang 0.5.10-0.5.15 run FA4 from
the flash-attn-4 wheel, which imports cutlass at module level too. At the DSL releases those SGLang pin (4.4.1-4.5.2)
the nvidia-cutlass-dsl wheel holds only its dist-info; nvidia-cutlass-dsl-libs-base holds cutlass and the .pth that
puts it on sys.path. A box with the DSL installed without libs-base (--no-deps) was ok there; now it is blocked by
rule flash-attn-4-cutlass-dsl-libs-base-installed. A box with libs-base passes; a list saved before the probe read the
library wheels, a DSL release not read and 0.5.16+ (the cutlass-dsl-libs-* rules' range) do not apply it."""

from __future__ import annotations

import copy
import zipfile
from typing import Any

import pytest

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.types import FeatureVerdict

RULE = "flash-attn-4-cutlass-dsl-libs-base-installed"
LIBS = ("nvidia-cutlass-dsl-libs-base", "nvidia-cutlass-dsl-libs-core", "nvidia-cutlass-dsl-libs-cu12",
        "nvidia-cutlass-dsl-libs-cu13")  # fmt: skip
ABSENT = {"installed": False}


def _verdict(sglang: str, packages: dict[str, dict[str, Any] | None]) -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, "10.0x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
        "system": {"machine": "x86_64", "python": "3.12.3"},
    }
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    facts["packages_complete"] = True
    for name, entry in packages.items():
        if entry is None:
            facts["packages"].pop(name, None)
        else:
            facts["packages"][name] = entry
    ctx = Context(facts=facts, manifests=m, launch={"tp": 8, "attention_backend": "fa4"})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == "attention-fa4"), ctx)


def _reason(v: FeatureVerdict) -> dict[str, Any] | None:
    return next((dict(r) for r in v["reasons"] if r.get("rule") == RULE), None)


def _box(dsl: str, libs: dict[str, dict[str, Any] | None]) -> dict[str, dict[str, Any] | None]:
    packages: dict[str, dict[str, Any] | None] = {"nvidia-cutlass-dsl": {"installed": True, "version": dsl}}
    packages.update(dict.fromkeys(LIBS, ABSENT))
    packages.update(libs)
    return packages


@pytest.mark.parametrize(
    ("sglang", "dsl", "libs"),
    [
        ("0.5.12", "4.5.0", {}),
        ("0.5.14", "4.5.2", {}),
        ("0.5.15", "4.5.2", {"nvidia-cutlass-dsl-libs-cu13": {"installed": True, "version": "4.5.2"}}),
        ("0.5.11", "4.4.2", {}),
    ],
)
def test_the_dsl_without_libs_base_blocks(sglang: str, dsl: str, libs: dict[str, dict[str, Any] | None]) -> None:
    v = _verdict(sglang, _box(dsl, libs))
    assert v["status"] == "blocked", v  # fails before: ok
    reason = _reason(v)
    assert reason is not None and reason["result"] == "fail" and reason["effect"] == "crash", v
    assert "Vendored FlashAttention CUTE is not available" in str(reason["message"])


def test_libs_base_installed_passes() -> None:
    v = _verdict("0.5.14", _box("4.5.2", {"nvidia-cutlass-dsl-libs-base": {"installed": True, "version": "4.5.2"}}))
    assert (_reason(v) or {}).get("result") == "pass", v
    assert v["status"] == "ok", v


@pytest.mark.parametrize(
    ("sglang", "dsl", "libs"),
    [
        ("0.5.14", "4.5.2", dict.fromkeys(LIBS)),  # a list saved before the probe read the library wheels
        ("0.5.14", "4.5.1", {}),  # a DSL release not read here
        ("0.5.16", "4.6.0", {}),  # cutlass-dsl-libs-installed's range
        ("0.5.9", "4.4.1", {}),
    ],
)
def test_not_applied(sglang: str, dsl: str, libs: dict[str, dict[str, Any] | None]) -> None:
    reason = _reason(_verdict(sglang, _box(dsl, libs)))
    assert reason is None or reason["result"] in ("skipped", "not_applicable"), reason


def test_a_hop_names_the_rule() -> None:
    feature = next(f for f in load().features if f["id"] == "attention-fa4")
    assert any(RULE in (h.get("rules") or []) for h in feature["path"])


@pytest.mark.registry
def test_the_real_wheels() -> None:
    from registry_wheels import fetch_wheel

    for version in ("4.4.1", "4.5.2"):
        with zipfile.ZipFile(fetch_wheel("nvidia-cutlass-dsl", version)) as z:
            names = z.namelist()
            meta = z.read(f"nvidia_cutlass_dsl-{version}.dist-info/METADATA").decode()
        assert all(".dist-info/" in n for n in names), names  # no .pth, no package
        assert f"Requires-Dist: nvidia-cutlass-dsl-libs-base=={version}" in meta.splitlines()
        with zipfile.ZipFile(fetch_wheel("nvidia-cutlass-dsl-libs-base", version)) as z:
            names = z.namelist()
            pth = z.read("nvidia_cutlass_dsl.pth").decode().strip()
        assert pth == "nvidia_cutlass_dsl/python_packages"
        assert "nvidia_cutlass_dsl/python_packages/cutlass/__init__.py" in names
