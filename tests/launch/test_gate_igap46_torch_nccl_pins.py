"""igap46 (issue 16, package open items): torch builds whose NCCL pin the manifests did not state.

torch-nccl-wheel-pin-cu12 / -cu13 had `torch.nccl exists` in their `when`, so a torch build without a recorded pin
(2.9.x cu130, the cu126 / cu129 builds of 2.8-2.10, 2.14.1 cu132) got no verdict at all: a gate allowed
torch 2.9.1+cu126 beside nvidia-nccl-cu12 2.26.2, whose libnccl.so.2 lacks ncclCommWindowRegister / Deregister that
the same release's libtorch_cuda.so imports. The pins are now recorded (inferred from the same release's PyPI build of
the same CUDA major, components.json `nccl_read`), and a build still without one is unknown, never ok."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

RULE13 = "torch-nccl-wheel-pin-cu13"
RULE12 = "torch-nccl-wheel-pin-cu12"


def _gate(tmp_path: Path, torch: str, wheels: dict[str, str | None]) -> tuple[int, dict[str, str], str]:
    path = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(path.read_text())
    packages = doc["facts"]["packages"]
    version, variant = torch.split("+")
    packages["torch"].update(
        version=torch, dist_version=version, variant=variant, cuda=f"{variant[2:-1]}.{variant[-1]}"
    )
    for name, wheel in wheels.items():
        packages[name] = {"installed": True, "version": wheel, "dist_version": wheel} if wheel else {"installed": False}
    path.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3)), "--tp", "2"]
    rc, out = cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])
    reasons = [x for r in out.get("reasons") or [] for x in r.get("reasons") or []]
    text = " ".join(str(x.get("message")) for x in reasons if str(x.get("rule")).startswith("torch-nccl-wheel-pin"))
    return rc, {str(x.get("rule")): str(x.get("result")) for x in reasons}, text


CU12_ONLY = {"nvidia-nccl-cu13": None}


@pytest.mark.parametrize(
    ("torch", "wheels", "rule", "result"),
    [
        # fails on the parent (no verdict): a wheel of an earlier major.minor than the build's (inferred) pin
        ("2.9.1+cu126", {**CU12_ONLY, "nvidia-nccl-cu12": "2.26.2"}, RULE12, "fail"),
        ("2.8.0+cu129", {**CU12_ONLY, "nvidia-nccl-cu12": "2.26.2"}, RULE12, "fail"),
        ("2.10.0+cu126", {**CU12_ONLY, "nvidia-nccl-cu12": "2.26.2"}, RULE12, "fail"),
        ("2.14.1+cu132", {"nvidia-nccl-cu13": "2.28.9"}, RULE13, "fail"),
        # at the pin: passes
        ("2.9.1+cu126", {**CU12_ONLY, "nvidia-nccl-cu12": "2.27.5"}, RULE12, None),
        ("2.9.1+cu130", {"nvidia-nccl-cu13": "2.27.7"}, RULE13, None),
        ("2.9.0+cu130", {"nvidia-nccl-cu13": "2.28.9"}, RULE13, None),
        # below the pin, its major.minor: not read
        ("2.8.0+cu126", {**CU12_ONLY, "nvidia-nccl-cu12": "2.27.1"}, RULE12, "unknown"),
        # still no pin recorded (2.11.0's CUDA 12 builds): unknown, never ok
        ("2.11.0+cu126", {**CU12_ONLY, "nvidia-nccl-cu12": "2.29.3"}, RULE12, "unknown"),
    ],
)
def test_the_builds_pins(
    tmp_path: Path, torch: str, wheels: dict[str, str | None], rule: str, result: str | None
) -> None:
    rc, results, text = _gate(tmp_path, torch, wheels)
    assert results.get(rule) == result, results
    if result is not None:
        assert rc == 1, (rc, results)
    if result == "unknown" and torch.startswith("2.11.0"):
        assert "no NCCL pin for torch 2.11.0 cu126" in text, text


def test_the_recorded_pins() -> None:
    from stackcheck.knowledge.loader import load

    pins = {
        (r["version"], v["variant"]): v.get("nccl") for r in load().releases("torch") for v in r.get("variants") or []
    }
    assert pins[("2.9.1", "cu130")] == pins[("2.9.0", "cu130")] == "2.27.7"
    assert pins[("2.8.0", "cu126")] == pins[("2.8.0", "cu129")] == "2.27.3"
    assert pins[("2.9.1", "cu126")] == pins[("2.10.0", "cu126")] == "2.27.5"
    assert pins[("2.14.1", "cu132")] == "2.30.7"
    assert pins[("2.11.0", "cu126")] is None and pins[("2.11.0", "cu128")] is None
