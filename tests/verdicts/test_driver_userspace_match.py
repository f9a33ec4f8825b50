"""Check driver-userspace-match: the loaded kernel module (driver.version) and the user-space driver
(driver.userspace_version, the release of the file behind libnvidia-ml.so.1) are one release; NVML's own init
error (driver.nvml_init_error) decides where the files did not say; not read is unknown in the audit and not
refused by the gate (the convention of gpu-fabric-state's fabric-not-read)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from fake_nvml import FakeNVML, load_doc
from probes.test_driver_userspace import PROC, driver_tree

from stackcheck.cli import main
from stackcheck.knowledge.loader import Manifests
from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.nvml import NvmlProbe
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.types import CheckVerdict

ROOT = Path(__file__).resolve().parent.parent.parent
GOOD = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
LLAMA = str(ROOT / "tests" / "data" / "models" / "llama3-8b")
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", LLAMA]
CASE = ROOT / "tests" / "realworld" / "tinygrad-ogkm-47-nvml-mismatch-570-124" / "facts.json"
ID = "driver-userspace-match"


def verdict(manifests: Manifests, driver: dict[str, Any] | None) -> CheckVerdict:
    spec = next(c for c in manifests.checks if c["id"] == ID)
    facts: dict[str, Any] = {"gpus": [{"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0"}]}
    if driver is not None:
        facts["driver"] = copy.deepcopy(driver)
    return evaluate_check(spec, Context(facts=facts, manifests=manifests, launch={}))  # type: ignore[arg-type]


def rules(v: CheckVerdict, result: str) -> list[str]:
    return [str(r.get("rule")) for r in v["reasons"] if r.get("result") == result]


def test_one_release_is_ok(manifests: Manifests) -> None:
    v = verdict(manifests, {"version": "570.124.06", "source": "proc", "userspace_version": "570.124.06"})
    assert v["status"] == "ok" and rules(v, "pass") == ["userspace-equals-kernel-module"]


@pytest.mark.parametrize(
    ("kernel", "userspace"),
    [("570.124.06", "570.124.04"), ("535.230.02", "535.247.01"), ("570.124.06", "580.95.05"), ("396.26", "396.24")],
)
def test_two_releases_fail_whatever_part_differs(manifests: Manifests, kernel: str, userspace: str) -> None:
    """The module's strict check compares the whole string: the last part alone differing fails too."""
    v = verdict(manifests, {"version": kernel, "source": "nvml", "userspace_version": userspace})
    assert v["status"] == "failed" and rules(v, "fail") == ["userspace-equals-kernel-module"]
    text = json.dumps(v["reasons"])
    assert kernel in text and userspace in text and "kernel module" in text and "mismatch" in text
    assert v.get("fix", {}).get("component") == "system"


def test_a_kernel_module_not_known_is_unknown(manifests: Manifests) -> None:
    v = verdict(manifests, {"version": None, "source": "none", "userspace_version": "570.124.04"})
    assert v["status"] == "unknown"


@pytest.mark.parametrize(
    "driver",
    [
        {"version": "580.95.05", "cuda": "13.0"},
        {"version": "580.95.05", "source": "nvml", "userspace_version": None, "userspace_reason": "not found"},
        {"version": "570.124.06", "source": "proc", "nvml_init_error": "DriverNotLoaded"},
        # a hand-written driver.error is prose: it never decides (only the probe's nvml_init_error does)
        {"version": "570.124.06", "source": "proc", "error": "NVML: driver/library version mismatch: reboot"},
    ],
    ids=["hand-written", "probed-not-found", "other-nvml-error", "error-text"],
)
def test_not_read_is_unknown_never_ok(manifests: Manifests, driver: dict[str, Any] | None) -> None:
    v = verdict(manifests, driver)
    assert v["status"] == "unknown" and rules(v, "unknown") == ["userspace-not-read"]


def test_nvml_refusing_at_init_fails_where_the_files_did_not_say(manifests: Manifests) -> None:
    driver = {"version": "570.124.06", "source": "proc", "userspace_version": None}
    driver["nvml_init_error"] = "LibRmVersionMismatch"
    v = verdict(manifests, driver)
    assert v["status"] == "failed" and rules(v, "fail") == ["nvml-init-version-mismatch"]
    # where the files name one release, they decide (the launch's own loader path, not this process's NVML)
    v = verdict(manifests, {**driver, "userspace_version": "570.124.06"})
    assert v["status"] == "ok"


def test_a_planned_driver_brings_its_own_libraries(manifests: Manifests) -> None:
    v = verdict(manifests, {"version": "580.95.05", "cuda": "13.0", "source": "plan"})
    assert v["status"] == "skipped"


def test_no_driver_has_nothing_to_compare(manifests: Manifests) -> None:
    """No kernel module's release known (no driver on a CPU build host; driver-vs-toolkit says so): skipped, not an
    unknown in every audit of a box without a GPU."""
    assert verdict(manifests, None)["status"] == "skipped"
    assert verdict(manifests, {"error": "NVML: NVML library not found"})["status"] == "skipped"


def test_an_assumed_driver_has_no_files_to_compare(manifests: Manifests) -> None:
    """--assume-driver (a fleet's driver, no box read; an image gets the host's user-space driver mounted): skipped.
    As unknown, `gate --image --assume-driver ... --require F` refused it, since with no launch read the gate cannot
    decide the rule's no-launch condition (examples/ci/image-audit.sh's passing path, CI of ba9be04)."""
    v = verdict(manifests, {"version": "580.95.05", "cuda": "13.0", "source": "assumed"})
    assert v["status"] == "skipped"
    # a user-space release stated beside an assumed driver is still compared
    v = verdict(manifests, {"version": "580.95.05", "cuda": "13.0", "source": "assumed", "userspace_version": "570.1"})
    assert v["status"] == "failed"


def test_a_live_probe_of_the_source_case_fails(manifests: Manifests, tmp_path: Path) -> None:
    """The probe's facts, as a live audit hands them to the engine: both halves read, the check failed."""
    driver_tree(tmp_path, "570.124.04", "570.124.04")
    (tmp_path / "proc/driver/nvidia").mkdir(parents=True)
    (tmp_path / "proc/driver/nvidia/version").write_text(PROC.format(v="570.124.06"))
    fake = FakeNVML(load_doc("h200-1x.json")).fail("nvmlInit", "LibRmVersionMismatch")
    ctx = ProbeContext(env={"PATH": ""}, root=tmp_path, path_dirs=[], subprocess_timeout_s=3.0, nvml=fake)
    driver = NvmlProbe().run(ctx).facts["driver"]
    v = verdict(manifests, driver)
    assert v["status"] == "failed" and rules(v, "fail") == ["userspace-equals-kernel-module"]
    (tmp_path / "etc/ld.so.cache").unlink()  # the files not found: NVML's error decides
    for name in ("libnvidia-ml", "libcuda"):
        (tmp_path / f"usr/lib/x86_64-linux-gnu/{name}.so.1").unlink()
    driver = NvmlProbe().run(ctx).facts["driver"]
    assert driver["userspace_version"] is None
    assert rules(verdict(manifests, driver), "fail") == ["nvml-init-version-mismatch"]


def _facts(tmp_path: Path, **driver: Any) -> str:
    doc = json.loads(GOOD.read_text(encoding="utf-8"))
    doc["facts"]["driver"].update(driver)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def _gate(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    rc = main(["gate", "--dry-run", "--format", "json", *args])
    return rc, json.loads(capsys.readouterr().out)


def test_the_gate_refuses_a_mismatch_and_allows_what_it_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, doc = _gate(["--facts", str(GOOD), "--", *LAUNCH], capsys)  # no user-space release in the file
    assert rc == 0 and doc["decision"] == "allow", doc["reasons"]
    rc, doc = _gate(["--facts", _facts(tmp_path, userspace_version="580.159.04"), "--", *LAUNCH], capsys)
    assert rc == 0 and doc["decision"] == "allow", doc["reasons"]
    rc, doc = _gate(["--facts", _facts(tmp_path, userspace_version="580.126.09"), "--", *LAUNCH], capsys)
    assert rc == 1 and doc["decision"] == "refuse"
    assert [b["status"] for b in doc["reasons"] if b["feature"] == ID] == ["blocked"], doc["reasons"]
    assert "580.126.09" in json.dumps(doc["reasons"])


def test_the_audit_of_the_source_case(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["audit", "--facts", str(CASE), "--format", "json"])
    checks = {c["id"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert rc == 1 and checks[ID]["status"] == "failed"
    assert "570.124.04" in json.dumps(checks[ID]) and "570.124.06" in json.dumps(checks[ID])


def test_a_bad_user_space_release_in_a_facts_file_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A number where the release's text belongs: exit 2 with one line naming the file and the place."""
    path = _facts(tmp_path, userspace_version=570.124)
    assert main(["audit", "--facts", path]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "facts.json" in err[0] and "userspace_version" in err[0], err
