"""The GPU's brand in NVIDIA_REQUIRE_* (issue 16): read by the NVML probe, named as libnvidia-container names it
per release (components.json driver.container_brands), judged; unknown where the release on the box decides."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_nvml import FakeNVML, synthetic_doc

from stackcheck.image.require import Judgement, brand_words, judge_facts, parse_nvidia_require, shipped_brand_table
from stackcheck.probes.nvml_read import _Reader, read_nvml

# The brand words NVIDIA's CUDA base images list, and the driver branches of two releases' images (the shape of
# dist/12.8.1/ubuntu2004/base and dist/13.0.0/ubuntu2204/base; the strings are built here, not copied).
WORDS = [
    "unknown",
    "grid",
    "tesla",
    "nvidia",
    "quadro",
    "quadrortx",
    "nvidiartx",
    "vapps",
    "vpc",
    "vcs",
    "vws",
    "cloudgaming",
]


def shaped(cuda: str, branches: tuple[int, ...]) -> str:
    terms = [f"cuda>={cuda}"]
    terms += [f"brand={w},driver>={b},driver<{b + 1}" for b in branches for w in WORDS]
    return " ".join(terms)


CUDA_12_8 = shaped("12.8", (470, 535, 550, 560, 565))
CUDA_13_0 = shaped("13.0", (535, 550, 565, 570, 575))


def image(text: str) -> dict[str, Any]:
    return {"nvidia_require": parse_nvidia_require({"NVIDIA_REQUIRE_CUDA": text}).to_facts()}


def gpu(brand: str | None, cc: str = "9.0") -> dict[str, Any]:
    g: dict[str, Any] = {"index": 0, "compute_capability": cc}
    if brand is not None:
        g["brand"] = brand
    return g


R550 = {"version": "550.163.01", "cuda": "12.4"}
R535 = {"version": "535.247.01", "cuda": "12.2"}


def every_checker(image_facts: dict[str, Any], driver: dict[str, str], gpus: list[dict[str, Any]]) -> Judgement:
    """The outcome over every checker that evaluates NVIDIA_REQUIRE_* and is modelled (libnvidia-container's words of
    every release, the toolkit's own check of a later release): judge_facts with the toolkit not read, which says
    a refusal in its reason and is itself unknown there (cdi / jit-cdi start the container unchecked)."""
    j = judge_facts(image_facts, driver, gpus)
    assert "--host-facts" in j.reason and j.satisfied is not False, j.reason
    unmet = j.satisfied is None and j.reason.startswith("not known: unmet where")
    return Judgement(False if unmet else j.satisfied, j.failed, j.reason)


@pytest.mark.parametrize("brand", ["NVIDIA", "TESLA"])
def test_datacenter_gpu_on_r550_starts_a_cuda13_image(brand: str) -> None:
    # H100/H200 report NVML_BRAND_NVIDIA: "Unknown" before libnvidia-container 1.9.0, "Nvidia" from it; the image
    # lists both words for 550, so every release starts it
    j = every_checker(image(CUDA_13_0), R550, [gpu(brand)])
    assert j.satisfied is True, j.reason


def test_geforce_on_535_fails_a_cuda_12_8_image_naming_requirement_driver_and_brand() -> None:
    j = every_checker(image(CUDA_12_8), R535, [gpu("GEFORCE", "8.9")])
    assert j.satisfied is False
    assert j.failed == CUDA_12_8
    assert "535.247.01" in j.reason and "GEFORCE" in j.reason and "GeForce" in j.reason


def test_brand_absent_is_unknown() -> None:
    j = every_checker(image(CUDA_12_8), R535, [gpu(None, "8.9")])
    assert j.satisfied is None and "brand" in j.reason


def test_cuda_met_decides_without_the_brand() -> None:
    assert every_checker(image(CUDA_12_8), {"version": "570.86.10", "cuda": "12.8"}, [gpu(None)]).satisfied is True


def test_release_dependent_word_is_unknown() -> None:
    # QUADRO_RTX is "Unknown" before 1.9.0 and "QuadroRTX" from it: a requirement naming only one of them depends on
    # the libnvidia-container on the box, which is not read
    j = every_checker(image("cuda>=12.8 brand=quadrortx,driver>=535,driver<536"), R535, [gpu("QUADRO_RTX", "7.5")])
    assert j.satisfied is None and "1.9.0" in j.reason
    # where the image lists both words, every release agrees
    assert every_checker(image(CUDA_12_8), R535, [gpu("QUADRO_RTX", "7.5")]).satisfied is True


def test_brand_the_newest_switch_read_does_not_name_stays_unknown() -> None:
    # NVIDIA_NPU (19) is "Unknown" in every release read; a later one may name it
    assert every_checker(image(CUDA_12_8), R535, [gpu("NVIDIA_NPU")]).satisfied is None
    assert every_checker(image(CUDA_12_8), R535, [gpu("CODE-42")]).satisfied is None


def test_every_gpu_must_meet_it_in_legacy_mode_gpu0_only_in_cdi_mode() -> None:
    geforce_first = [gpu("GEFORCE", "8.9"), {**gpu("TESLA"), "index": 1}]
    j = every_checker(image(CUDA_13_0), R550, geforce_first)
    assert j.satisfied is False and "GEFORCE" in j.reason
    # nvidia-container-cli checks every GPU (fails on the GeForce); the toolkit's CDI/CSV check reads GPU 0 only
    # (starts): which one runs is not read
    tesla_first = [gpu("TESLA"), {**gpu("GEFORCE", "8.9"), "index": 1}]
    assert every_checker(image(CUDA_13_0), R550, tesla_first).satisfied is None


def test_unknown_brand_differs_between_cli_and_cdi_mode() -> None:
    # libnvidia-container says "Unknown" (listed); the CDI/CSV check leaves the brand empty (matches nothing)
    assert every_checker(image(CUDA_13_0), R550, [gpu("UNKNOWN")]).satisfied is None
    assert every_checker(image("cuda>=13.0"), {"version": "580.95.05", "cuda": "13.0"}, [gpu("UNKNOWN")]).satisfied


def test_a_hostile_brand_is_unknown_and_not_echoed() -> None:
    j = every_checker(image(CUDA_12_8), R535, [gpu("GEFORCE\x1b[2J")])
    assert j.satisfied is None and "\x1b" not in j.reason
    j = every_checker(image("cuda>=12.8"), R535, [gpu("\x1b[31mX")])
    assert j.satisfied is False and "\x1b" not in j.reason and "brand ?" in j.reason


def test_brand_words_per_toolkit() -> None:
    table = shipped_brand_table()

    def words(name: str | None) -> list[str | None]:
        return [w.word for w in brand_words(name, table)]

    assert words("GEFORCE") == ["GeForce", "geforce"]
    assert words("Tesla") == ["Tesla", "tesla"]  # NVML's name, any case
    assert words("NVIDIA") == ["Unknown", "Nvidia", "nvidia"]
    assert words("UNKNOWN") == ["Unknown", ""]
    assert words("NVIDIA_VGAMEDEV") == ["Unknown", None, "", None]
    assert words(None) == [None]
    cdi = brand_words("TESLA", table)[-1]
    assert cdi.exact and cdi.first_only


def test_table_names_match_nvidia_ml_py() -> None:
    pynvml = pytest.importorskip("pynvml")
    table = shipped_brand_table()
    codes = {int(k): v for k, v in table["nvml_enum"]["codes"].items()}
    for code, name in codes.items():
        assert getattr(pynvml, f"NVML_BRAND_{name}") == code
    for entry in table["toolkit_words"]:
        assert set(entry["words"]) <= set(codes.values())


def test_reader_names_codes_from_the_module() -> None:
    pynvml = pytest.importorskip("pynvml")
    r = _Reader(pynvml)
    assert [r.brand_name(c) for c in (2, 5, 11, 14)] == ["TESLA", "GEFORCE", "NVIDIA_CLOUD_GAMING", "NVIDIA"]
    assert r.brand_name(99) == "CODE-99"


def test_nvml_probe_reads_the_brand() -> None:
    doc = synthetic_doc(2, nvswitch=False, name="NVIDIA H200", cc="9.0")
    doc["facts"]["gpus"][0]["brand_code"] = 14
    fake = FakeNVML(doc)
    fake.nvmlInit()
    result = read_nvml(fake)
    gpus = result.facts["gpus"]
    assert gpus[0]["brand"] == "NVIDIA" and gpus[0]["brand_code"] == 14
    assert "brand" not in gpus[1]  # NotSupported: absent, quietly
    assert fake.calls["nvmlDeviceGetBrand"] == 2
    assert result.status == "ok"


CASE = Path(__file__).resolve().parent.parent / "cases" / "image-driver-too-old" / "facts.json"


LEGACY = {"mode": "legacy", "mode_source": "config", "libnvidia_container": "1.17.8", "disable_require": False}


def audit_check(
    tmp_path: Path, text: str, driver: dict[str, str], brand: str | None, toolkit: dict[str, Any] | None = LEGACY
) -> dict[str, Any]:
    """The image-nvidia-require check of a whole audit (the pipeline, the shipped manifests' brand words) on a host
    whose toolkit is `toolkit` (None: not read)."""
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import build_report

    doc = json.loads(CASE.read_text())
    facts = doc["facts"]
    facts["driver"].update(driver)
    facts["image"]["nvidia_require"] = image(text)["nvidia_require"]
    for g in facts["gpus"]:
        g.pop("brand", None)
        if brand is not None:
            g["brand"] = brand
    facts.pop("container_toolkit", None)
    if toolkit is not None:
        facts["container_toolkit"] = toolkit
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    report, _ = build_report(Options(facts_file=str(path)))
    return dict(next(c for c in report["checks"] if c["id"] == "image-nvidia-require"))


def test_audit_fails_geforce_on_535_and_passes_datacenter_on_550(tmp_path: Path) -> None:
    failed = audit_check(tmp_path, CUDA_12_8, R535, "GEFORCE")
    assert failed["status"] == "failed" and "GEFORCE" in json.dumps(failed) and "535.247.01" in json.dumps(failed)
    assert audit_check(tmp_path, CUDA_13_0, R550, "NVIDIA")["status"] == "ok"
    assert audit_check(tmp_path, CUDA_12_8, R535, None)["status"] == "unknown"


def test_audit_without_the_hosts_toolkit_does_not_fail_and_says_what_to_give(tmp_path: Path) -> None:
    # irel4: legacy mode refuses it, cdi / jit-cdi start it unchecked: not failed (a false block where the host runs
    # CDI) but unknown, the reason naming what to give; met by every modelled checker stays ok, saying the same
    check = audit_check(tmp_path, CUDA_12_8, R535, "GEFORCE", toolkit=None)
    said = json.dumps(check)
    assert check["status"] == "unknown", said
    assert "container toolkit was not read" in said and "--host-facts" in said and "audit --image" in said
