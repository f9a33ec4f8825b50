"""Check driver-kernel-modules: the flavour of the loaded NVIDIA kernel modules (driver.kernel_modules, read by
the NVML probe from /proc/driver/nvidia/version) against the GPUs' architecture (architectures.json
`proprietary_kernel_modules`): a Blackwell GPU (sm100, sm103, sm120) under the proprietary flavour fails, the
GB10 (sm121, sources in conflict) is unknown, Hopper/Ada/Ampere under either flavour are ok, a GH200 under the
proprietary flavour fails; the flavour not read is unknown only where it matters."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from fake_nvml import FakeNVML, load_doc

from stackcheck.knowledge.loader import Manifests
from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.nvml import NvmlProbe, kernel_modules_flavour
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.types import CheckVerdict

ROOT = Path(__file__).resolve().parent.parent.parent
ID = "driver-kernel-modules"
# Both lines written here in the shape of the real file (the open flavour's names the 'Open Kernel Module'),
# with a made-up builder and date.
OPEN_LINE = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (builder@host)  "
    "Mon Sep  1 10:00:00 UTC 2025\nGCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n"
)
PROPRIETARY_LINE = (
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  595.71.05  Tue Apr 21 09:00:00 UTC 2026\n"
    "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n"
)
RTXPRO = ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "12.0")
B200 = ("NVIDIA B200", "10.0")
B300 = ("NVIDIA B300 SXM6 AC", "10.3")
GB10 = ("NVIDIA GB10", "12.1")
H100 = ("NVIDIA H100 80GB HBM3", "9.0")
GH200 = ("NVIDIA GH200 480GB", "9.0")
L40S = ("NVIDIA L40S", "8.9")
A100 = ("NVIDIA A100-SXM4-80GB", "8.0")


def verdict(
    manifests: Manifests,
    gpu: tuple[str, str] | None,
    flavour: str | None,
    extra: dict[str, Any] | None = None,
    source: str | None = None,
) -> CheckVerdict:
    """A hand-written facts file by default (no driver.source): its GPUs were not listed by the box's NVML."""
    spec = next(c for c in manifests.checks if c["id"] == ID)
    facts: dict[str, Any] = {
        "gpus": [] if gpu is None else [{"index": 0, "name": gpu[0], "compute_capability": gpu[1]}]
    }
    facts["driver"] = {"version": "580.95.05"} | ({"source": source} if source else {})
    if flavour is not None:
        facts["driver"]["kernel_modules"] = flavour
    facts.update(copy.deepcopy(extra or {}))
    return evaluate_check(spec, Context(facts=facts, manifests=manifests, launch={}))  # type: ignore[arg-type]


def rules(v: CheckVerdict, result: str) -> list[str]:
    return [str(r.get("rule")) for r in v["reasons"] if r.get("result") == result]


# ---- the probe's read of the flavour ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "flavour"),
    [
        (OPEN_LINE, "open"),
        (PROPRIETARY_LINE, "proprietary"),
        (OPEN_LINE.replace("x86_64", "aarch64"), "open"),
        (PROPRIETARY_LINE.replace("x86_64", "aarch64"), "proprietary"),
        ("GCC version:  gcc version 13.3.0\n", None),
        ("NVRM version: something else  1.2.3\n", None),
        ("", None),
    ],
)
def test_flavour_from_the_version_line(text: str, flavour: str | None) -> None:
    assert kernel_modules_flavour(text) == flavour


def _ctx(tmp_path: Path, text: str | None) -> ProbeContext:
    if text is not None:
        proc = tmp_path / "proc/driver/nvidia"
        proc.mkdir(parents=True)
        (proc / "version").write_text(text, encoding="utf-8")
    return ProbeContext(
        env={"PATH": ""},
        root=tmp_path,
        path_dirs=[],
        subprocess_timeout_s=3.0,
        nvml=FakeNVML(load_doc("sm120-8x-pcie.json")),
    )


@pytest.mark.parametrize(("text", "flavour"), [(OPEN_LINE, "open"), (PROPRIETARY_LINE, "proprietary"), (None, None)])
def test_probe_records_the_flavour(tmp_path: Path, text: str | None, flavour: str | None) -> None:
    driver = NvmlProbe().run(_ctx(tmp_path, text)).facts["driver"]
    assert driver.get("kernel_modules") == flavour
    assert ("kernel_modules" in driver) == (flavour is not None)  # not read: left out, never guessed


def test_probe_reads_the_flavour_when_nvml_fails(tmp_path: Path) -> None:
    """The failing box: NVML does not start (no device initialised), the flavour is still read."""
    ctx = _ctx(tmp_path, PROPRIETARY_LINE)
    assert isinstance(ctx.nvml, FakeNVML)
    ctx.nvml.fail("nvmlInit", "LibRmVersionMismatch")
    driver = NvmlProbe().run(ctx).facts["driver"]
    assert driver["kernel_modules"] == "proprietary" and driver["source"] == "proc"


# ---- the verdicts ----------------------------------------------------------------------------------


@pytest.mark.parametrize("gpu", [RTXPRO, B200, B300, GH200])
def test_proprietary_with_an_open_only_gpu_fails(manifests: Manifests, gpu: tuple[str, str]) -> None:
    v = verdict(manifests, gpu, "proprietary")
    assert v["status"] == "failed", v
    failed = [r for r in v["reasons"] if r.get("result") == "fail"]
    assert [r["rule"] for r in failed] == ["proprietary-runs-gpu"]
    assert failed[0]["observed"] == "no"
    text = str(failed[0]["message"])
    assert "open kernel module" in text and "proprietary" in text and gpu[1] in text
    assert failed[0]["source"]


@pytest.mark.parametrize("gpu", [H100, L40S, A100])
def test_proprietary_with_a_gpu_it_runs_is_ok(manifests: Manifests, gpu: tuple[str, str]) -> None:
    v = verdict(manifests, gpu, "proprietary")
    assert v["status"] == "ok" and rules(v, "pass") == ["proprietary-runs-gpu"]


@pytest.mark.parametrize("gpu", [RTXPRO, B200, B300, GB10, GH200, H100, L40S, A100])
def test_open_flavour_is_ok_from_turing_on(manifests: Manifests, gpu: tuple[str, str]) -> None:
    v = verdict(manifests, gpu, "open")
    assert v["status"] == "ok" and rules(v, "pass") == ["open-runs-turing-or-newer"]


def test_open_flavour_with_a_volta_gpu_fails(manifests: Manifests) -> None:
    v = verdict(manifests, ("Tesla V100-SXM2-32GB", "7.0"), "open")
    assert v["status"] == "failed" and rules(v, "fail") == ["open-runs-turing-or-newer"]


@pytest.mark.parametrize("source", ["nvml", "nvidia-smi"])
@pytest.mark.parametrize("gpu", [RTXPRO, B200, GB10, GH200])
def test_a_gpu_the_box_lists_is_never_failed(manifests: Manifests, gpu: tuple[str, str], source: str) -> None:
    """NVML (or nvidia-smi) listing the GPU means the loaded modules initialised it: not judged, whatever its chip."""
    v = verdict(manifests, gpu, "proprietary", source=source)
    assert v["status"] == "skipped" and not rules(v, "fail") and not rules(v, "unknown")


@pytest.mark.parametrize("gpu", [RTXPRO, GB10])
def test_flavour_not_read_on_a_listed_gpu_is_not_judged(manifests: Manifests, gpu: tuple[str, str]) -> None:
    assert verdict(manifests, gpu, None, source="nvml")["status"] == "skipped"


@pytest.mark.parametrize("source", ["proc", "plan"])
def test_proprietary_fails_where_the_box_did_not_list_the_gpu(manifests: Manifests, source: str) -> None:
    """driver.source proc: NVML and nvidia-smi did not answer; the GPU written by hand is judged by its chip."""
    assert verdict(manifests, RTXPRO, "proprietary", source=source)["status"] == "failed"


def test_gb10_under_proprietary_is_unknown_not_failed(manifests: Manifests) -> None:
    """NVIDIA's rule names Blackwell, Start9's maintainers report a GB10 running the proprietary 580.159.03."""
    v = verdict(manifests, GB10, "proprietary")
    assert v["status"] == "unknown" and not rules(v, "fail")
    assert "proprietary-gpu-unknown" in rules(v, "unknown")


@pytest.mark.parametrize("gpu", [RTXPRO, B200, GB10, GH200])
def test_flavour_not_read_is_unknown_where_it_matters(manifests: Manifests, gpu: tuple[str, str]) -> None:
    v = verdict(manifests, gpu, None)
    assert v["status"] == "unknown" and rules(v, "unknown") == ["flavour-not-read"]


@pytest.mark.parametrize("gpu", [H100, L40S])
def test_flavour_not_read_with_a_gpu_both_run_is_not_judged(manifests: Manifests, gpu: tuple[str, str]) -> None:
    assert verdict(manifests, gpu, None)["status"] == "skipped"


def test_no_gpu_and_no_driver_is_skipped(manifests: Manifests) -> None:
    spec = next(c for c in manifests.checks if c["id"] == ID)
    v = evaluate_check(spec, Context(facts={"gpus": []}, manifests=manifests, launch={}))
    assert v["status"] == "skipped"


def test_gpu_bound_but_not_listed_under_proprietary_is_unknown(manifests: Manifests) -> None:
    """The failing box: NVML lists no GPU, the nvidia module holds one on PCI: not failed (no chip read)."""
    pcie = {"pcie": {"gpus": ["0000:01:00.0"], "iommu": None, "acs": None}}
    v = verdict(manifests, None, "proprietary", pcie, source="proc")
    assert v["status"] == "unknown" and not rules(v, "fail")
    assert "proprietary-gpu-not-listed" in rules(v, "unknown")


def test_every_architecture_with_a_gpu_list_says_whether_proprietary_runs_it(manifests: Manifests) -> None:
    """Each architecture the manifests name GPUs for carries the entry, with a source (sm107 has no GPU)."""
    for arch in manifests.architectures:
        if not arch.get("gpus"):
            continue
        entry = arch.get("proprietary_kernel_modules")
        assert isinstance(entry, dict), arch["id"]
        assert entry["runs"] in ("yes", "no", "unknown") and entry["source"], arch["id"]
        if arch.get("generation") == "blackwell":
            assert entry["runs"] != "yes", arch["id"]


def test_realworld_rtx_pro_case_fails(manifests: Manifests) -> None:
    doc = json.loads(
        (ROOT / "tests/realworld/prathamesh-blog-proprietary-kmod-gb202-rtxpro6000/facts.json").read_text("utf-8")
    )
    spec = next(c for c in manifests.checks if c["id"] == ID)
    v = evaluate_check(spec, Context(facts=doc["facts"], manifests=manifests, launch={}))
    assert v["status"] == "failed"
