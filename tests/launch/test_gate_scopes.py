"""Which launches need which stack check (manifests' `required_by`, issue 16's checks merged with issue 14's
gate): what every launch imports or runs is refused for a bare launch, what only multi-GPU launches, FP8 models
or multimodal models reach is required of those launches only, and a rule of a check can have a scope of its
own (NCCL's duplicate wheels break `import torch`; its old releases only collectives).

Also: SGLang's metadata pins warn (issue 17's rule) while the minimums its engine checks at start refuse."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report
from stackcheck.cli import main
from stackcheck.knowledge.loader import load
from stackcheck.knowledge.validate import validate_documents
from stackcheck.launch import gate
from stackcheck.verdicts.types import CheckVerdict

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = ROOT / "tests" / "cases"
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m"]
MANIFESTS = load([], env={})


def _facts(tmp_path: Path, case: str, **packages: str | None) -> Path:
    """A case's facts with some packages changed (None: not installed; `_` stands for `-`)."""
    doc = json.loads((CASES / case / "facts.json").read_text())
    for name, version in packages.items():
        entry = {"installed": True, "version": version, "location": "/x"} if version else {"installed": False}
        doc["facts"]["packages"][name.replace("_", "-")] = entry
    path = tmp_path / f"{case}.json"
    path.write_text(json.dumps(doc))
    return path


def _sm120_pair(tmp_path: Path, **packages: str | None) -> Path:
    """Two RTX PRO 6000 (SM 12.0) on PCIe with h200-newest's software, packages changed."""
    path = _facts(tmp_path, "h200-newest", **packages)
    doc = json.loads(path.read_text())
    doc["facts"]["gpus"] = [
        {"index": i, "name": "NVIDIA RTX PRO 6000 Blackwell Server Edition", "compute_capability": "12.0",
         "uuid": None, "pci_bus_id": None, "memory_bytes": None}
        for i in range(2)
    ]  # fmt: skip
    doc["facts"]["topology"] = {"interconnect": "nvlink", "same_model": True, "gpu_count": 2, "p2p": "all", "pairs": []}
    path.write_text(json.dumps(doc))
    return path


def gate_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    rc = main(["gate", "--dry-run", "--format", "json", *args])
    return rc, json.loads(capsys.readouterr().out)


def _named(blockers: list[dict[str, Any]], check: str) -> list[dict[str, Any]]:
    """The reasons of a check among a decision's refusals or warnings."""
    return [x for b in blockers if b["feature"] == check and b.get("check") for x in b["reasons"]]


def _required(doc: dict[str, Any], check: str) -> dict[str, Any] | None:
    return next((r for r in doc["derived"]["required"] if r["feature"] == check and r.get("check")), None)


# ---- NCCL: the duplicate wheels break every launch, old releases only multi-GPU ones --------------------------


def test_two_nccl_wheels_refuse_even_a_one_gpu_launch(capsys: pytest.CaptureFixture[str]) -> None:
    facts = str(CASES / "b200-deepgemm-nvcc128" / "facts.json")  # nvidia-nccl-cu12 and -cu13 both installed
    rc, doc = gate_json(["--facts", facts, "--", *LAUNCH], capsys)
    assert rc == 1
    assert {x["rule"] for x in _named(doc["reasons"], "nccl")} == {"one-nccl-wheel"}
    req = _required(doc, "nccl")
    assert req is not None and req["rules"]["one-nccl-wheel"] == "launch"
    assert req["rules"]["nvidia-nccl-cu13-blackwell-code"] is None  # tp = 1: no collective, not needed


def test_an_old_nccl_refuses_tensor_and_pipeline_parallel_launches_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # illegal memory accesses on SM 12.0; torch 2.7.1+cu126 pins this wheel (ifc46: an NCCL below torch's pin fails
    # `import torch` on every launch, rule torch-nccl-wheel-pin-cu12)
    facts = str(_sm120_pair(tmp_path, torch="2.7.1+cu126", nvidia_nccl_cu13=None, nvidia_nccl_cu12="2.26.2"))
    rc, doc = gate_json(["--facts", facts, "--", *LAUNCH], capsys)
    assert not _named(doc["reasons"], "nccl") and not _named(doc["warnings"], "nccl")
    req = _required(doc, "nccl")  # needed for its duplicate-wheel rule only
    assert req is not None and req["rules"]["nvidia-nccl-cu12-sm120-fixes"] is None
    for flags in (["--tp", "2"], ["--pp-size", "2"]):
        rc, doc = gate_json(["--facts", facts, "--", *LAUNCH, *flags], capsys)
        assert rc == 1, flags
        assert {x["rule"] for x in _named(doc["reasons"], "nccl")} == {"nvidia-nccl-cu12-sm120-fixes"}, flags
        assert "tp > 1 or pp > 1" in str(_required(doc, "nccl")), flags


def test_pcie_peer_traffic_is_needed_by_multi_gpu_launches(capsys: pytest.CaptureFixture[str]) -> None:
    facts = str(CASES / "rtxpro6000-pcie-iommu-translated" / "facts.json")
    rc, doc = gate_json(["--facts", facts, "--", *LAUNCH], capsys)
    assert _required(doc, "pcie-p2p-path") is None and not _named(doc["reasons"], "pcie-p2p-path")
    rc, doc = gate_json(["--facts", facts, "--", *LAUNCH, "--tp", "2"], capsys)
    assert rc == 1 and {x["rule"] for x in _named(doc["reasons"], "pcie-p2p-path")} == {"iommu-not-translating"}
    why = _required(doc, "pcie-p2p-path")["why"]  # type: ignore[index]
    assert why == (
        "needed: the launch has (tp > 1 or pp > 1) and "
        "(--disable-custom-all-reduce not given or NCCL_P2P_DISABLE is false)"
    )


@pytest.mark.parametrize(
    ("env", "flags", "needed"),
    [
        (["NCCL_P2P_DISABLE=1"], ["--disable-custom-all-reduce"], False),  # the check's own fix: no peer traffic
        (["NCCL_P2P_DISABLE=1"], [], True),  # the custom all-reduce still uses CUDA IPC between the GPUs
        ([], ["--disable-custom-all-reduce"], True),  # NCCL's P2P transport is still on
        (["NCCL_P2P_DISABLE=true"], ["--disable-custom-all-reduce"], True),  # NCCL reads an integer: only 1 disables
    ],
)
def test_turning_peer_traffic_off_takes_both_switches(
    capsys: pytest.CaptureFixture[str], env: list[str], flags: list[str], needed: bool
) -> None:
    facts = str(CASES / "rtxpro6000-pcie-iommu-translated" / "facts.json")
    command = ["env", *env, *LAUNCH, "--tp", "2", *flags]
    _rc, doc = gate_json(["--facts", facts, "--", *command], capsys)
    assert bool(_named(doc["reasons"], "pcie-p2p-path")) is needed
    assert (_required(doc, "pcie-p2p-path") is not None) is needed


# ---- cuDNN: SGLang 0.5.6-0.5.9 check it for multimodal models only ------------------------------------------


def _model(tmp_path: Path, architecture: str) -> str:
    d = tmp_path / architecture
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"architectures": [architecture], "model_type": "x"}))
    return str(d)


@pytest.mark.parametrize(
    ("architecture", "flags", "needed"),
    [
        ("Qwen2_5_VLForConditionalGeneration", [], True),
        ("LlamaForCausalLM", [], False),
        ("Gemma3ForConditionalGeneration", [], False),  # text-only unless --enable-multimodal
        ("Gemma3ForConditionalGeneration", ["--enable-multimodal"], True),
    ],
)
def test_cudnn_is_needed_by_multimodal_models(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], architecture: str, flags: list[str], needed: bool
) -> None:
    facts = str(CASES / "gb10-cu130-pypi-kernel" / "facts.json")  # torch 2.9.1 + cuDNN 9.13, SGLang 0.5.9
    command = ["python", "-m", "sglang.launch_server", "--model-path", _model(tmp_path, architecture), *flags]
    _rc, doc = gate_json(["--facts", facts, "--", *command], capsys)
    assert bool(_named(doc["reasons"], "cudnn-torch")) is needed
    assert (_required(doc, "cudnn-torch") is not None) is needed
    assert doc["preflight"]["models"][0]["multimodal"] is needed


def test_a_model_the_gate_cannot_read_counts_as_multimodal(capsys: pytest.CaptureFixture[str]) -> None:
    facts = str(CASES / "gb10-cu130-pypi-kernel" / "facts.json")
    rc, doc = gate_json(["--facts", facts, "--", *LAUNCH], capsys)  # `m`: not on this box, not read
    assert rc == 1 and {x["rule"] for x in _named(doc["reasons"], "cudnn-torch")} == {"torch291-cu13"}
    why = _required(doc, "cudnn-torch")["why"]  # type: ignore[index]
    assert "launch.model_multimodal not known" in why and "fail closed" in why


# ---- jit-toolchain: DeepGEMM's nvcc matters with FP8 models only -------------------------------------------------


def test_deepgemm_nvcc_warns_for_a_plain_launch_and_refuses_fp8(capsys: pytest.CaptureFixture[str]) -> None:
    facts = str(CASES / "b200-deepgemm-nvcc128" / "facts.json")  # sgl-deep-gemm 0.2.0 wants nvcc 12.9, 12.8 here
    rc, doc = gate_json(["--facts", facts, "--", *LAUNCH], capsys)
    assert not _named(doc["reasons"], "jit-toolchain")
    assert {x["rule"] for x in _named(doc["warnings"], "jit-toolchain")} == {"deepgemm-nvcc"}
    rc, doc = gate_json(["--facts", facts, "--", *LAUNCH, "--quantization", "fp8"], capsys)
    assert rc == 1 and {x["rule"] for x in _named(doc["reasons"], "jit-toolchain")} == {"deepgemm-nvcc"}


def test_sglang_own_jit_needs_nvcc_in_every_launch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """SGLang 0.5.9+ compiles its RoPE kernel with nvcc; with flashinfer-jit-cache (FlashInfer needs no nvcc
    then) and the FlashInfer sampler off, a launch still needs nvcc."""
    path = _facts(tmp_path, "writeup-after", flashinfer_jit_cache="0.6.4")
    doc = json.loads(path.read_text())
    doc["facts"]["jit"] = {"toolkit": None, "chosen_by": None, "nvcc": None, "nvcc_found": False, "cuda": None,
                           "fp8_header": None, "fp4_header": None, "triton_ptxas": {}}  # fmt: skip
    path.write_text(json.dumps(doc))
    command = [*LAUNCH, "--attention-backend", "triton", "--sampling-backend", "pytorch"]
    rc, out = gate_json(["--facts", str(path), "--allow-unknown", "--", *command], capsys)
    assert rc == 1 and {x["rule"] for x in _named(out["reasons"], "jit-toolchain")} == {"sglang-jit-nvcc"}


# ---- SGLang's pins: what its engine checks at start refuses, a metadata pin warns -----------------------------------


def test_a_metadata_pin_mismatch_warns_with_the_rule(capsys: pytest.CaptureFixture[str]) -> None:
    """The write-up box: SGLang 0.5.9 pins flashinfer-python and -cubin 0.6.3, 0.6.4 of both are installed.
    SGLang checks flashinfer-python >= 0.6.3 at start and FlashInfer that its packages match: both hold."""
    facts = str(CASES / "writeup-after" / "facts.json")
    rc, doc = gate_json(["--facts", facts, "--allow-unknown", "--", *LAUNCH], capsys)
    assert rc == 0, doc["reasons"]
    pins = _named(doc["warnings"], "sglang-pins")
    assert {(x["rule"], x["observed"], x["required"]) for x in pins} == {
        ("sglang-pins:flashinfer-python", "0.6.4", "==0.6.3"),
        ("sglang-pins:flashinfer-cubin", "0.6.4", "==0.6.3"),
    }
    assert all("metadata pin" in x["message"] and "does not check" in x["message"] for x in pins)
    assert not _named(doc["reasons"], "sglang-startup-versions")


def test_a_kernel_below_sglangs_start_check_refuses_every_launch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    facts = str(_facts(tmp_path, "writeup-after", sgl_kernel="0.3.20+cu130"))
    rc, doc = gate_json(["--facts", facts, "--allow-unknown", "--", *LAUNCH], capsys)
    reasons = _named(doc["reasons"], "sglang-startup-versions")
    assert rc == 1 and [(x["rule"], x["observed"], x["required"]) for x in reasons] == [
        ("sgl-kernel-at-start", "0.3.20+cu130", ">= 0.3.21")
    ]


def test_skipping_sglangs_version_check_is_honoured(tmp_path: Path) -> None:
    """SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK skips the kernel check, and from 0.5.7 on the FlashInfer one too."""
    path = _facts(tmp_path, "writeup-after", sgl_kernel="0.3.20+cu130")
    doc = json.loads(path.read_text())
    doc["facts"]["system"]["env"] = {"SGLANG_SKIP_SGL_KERNEL_VERSION_CHECK": "1"}
    path.write_text(json.dumps(doc))

    def start_check() -> CheckVerdict:
        report, _ = build_report(Options(facts_file=str(path)), want_plan=False)
        return next(c for c in report["checks"] if c["id"] == "sglang-startup-versions")

    assert start_check()["status"] == "skipped"  # SGLang 0.5.9: neither check runs
    doc["facts"]["packages"]["sglang"]["version"] = "0.5.6"
    path.write_text(json.dumps(doc))
    check = start_check()
    assert check["status"] == "ok" and {r["rule"] for r in check["reasons"]} == {"flashinfer-at-start"}


def test_an_old_flashinfer_refuses_only_launches_with_flashinfer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SGLang 0.5.9 checks flashinfer-python >= 0.6.3 only when its attention backend is flashinfer."""
    facts = str(_facts(tmp_path, "writeup-after", flashinfer_python="0.6.2", flashinfer_cubin="0.6.2"))
    rc, doc = gate_json(
        ["--facts", facts, "--allow-unknown", "--", *LAUNCH, "--attention-backend", "flashinfer"], capsys
    )
    assert rc == 1 and {x["rule"] for x in _named(doc["reasons"], "sglang-startup-versions")} == {"flashinfer-at-start"}
    other = [*LAUNCH, "--attention-backend", "triton", "--sampling-backend", "pytorch"]
    rc, doc = gate_json(["--facts", facts, "--allow-unknown", "--", *other], capsys)
    assert rc == 0 and not _named(doc["reasons"], "sglang-startup-versions"), doc["reasons"]


def test_a_release_the_manifests_do_not_know_leaves_the_start_check_unknown() -> None:
    report, _ = build_report(
        Options(facts_file=str(CASES / "sglang-newer-than-manifests" / "facts.json")), want_plan=False
    )
    check = next(c for c in report["checks"] if c["id"] == "sglang-startup-versions")
    assert check["status"] == "unknown"
    assert any("newer than the manifests" in r["message"] for r in check["reasons"] if r["result"] == "unknown")


# ---- the pure parts -------------------------------------------------------------------------------------------


def test_a_scope_on_an_unknown_launch_fact_is_required() -> None:
    d = gate.derive([*LAUNCH, "--tp", "2"], MANIFESTS.launch, {}, [])
    rb = {"when": [{"launch": "model_multimodal", "op": "==", "value": True}], "why": "w", "source": "s"}
    kind, why = gate._scope(rb, d, {}, d.defaults) or ("", "")
    assert kind == "launch" and "not known" in why
    d.launch["model_multimodal"] = False
    assert gate._scope(rb, d, {}, d.defaults) is None
    any_rb = {"when": [{"any": [{"launch": "tp", "op": ">", "value": 1}, {"launch": "pp", "op": ">", "value": 1}]}]}
    assert gate._scope(any_rb, d, {}, d.defaults) == ("launch", "needed: the launch has (tp > 1 or pp > 1)")
    one = gate.derive(LAUNCH, MANIFESTS.launch, {}, [])
    assert (one.launch["tp"], one.launch["pp"]) == (1, 1) and gate._scope(any_rb, one, {}, one.defaults) is None


def test_a_verdict_is_judged_on_the_rules_a_launch_needs() -> None:
    v = {
        "id": "c",
        "status": "failed",
        "reasons": [
            {"rule": "a", "result": "fail", "effect": "crash"},
            {"rule": "b", "result": "unknown"},
            {"rule": "needs", "result": "pass"},
        ],
    }
    assert gate.scoped_verdict(v, {"a": None, "b": "launch"})["status"] == "unknown"
    assert gate.scoped_verdict(v, {"a": "launch", "b": None})["status"] == "failed"
    only = gate.scoped_verdict(v, {"a": None, "b": None})
    assert only["status"] == "ok" and [x["rule"] for x in only["reasons"]] == ["needs"]
    assert gate.scoped_verdict({**v, "status": "skipped"}, {"a": None})["status"] == "skipped"


def _checks_doc(**rule_extra: Any) -> dict[str, Any]:
    doc: dict[str, Any] = copy.deepcopy({"checks": [c for c in MANIFESTS.checks if c["id"] == "nccl"]})
    doc["checks"][0]["rules"][1].update(rule_extra)
    return doc


def test_scopes_are_validated() -> None:
    ok = _checks_doc()
    assert validate_documents({"checks.json": ("checks.json", ok)}, partial=True) == []
    # (iasan: features and when together are one scope, a launch needing a feature or meeting the conditions; every
    # launch beside either is not)
    both = _checks_doc(required_by={"features": ["custom-allreduce"], "when": [{"launch": "tp", "op": ">", "value": 1}],
                                    "why": "w", "source": "sglang-wheels"})  # fmt: skip
    assert validate_documents({"checks.json": ("checks.json", both)}, partial=True) == []
    every = _checks_doc(required_by={"launches": "every", "features": ["custom-allreduce"], "why": "w",
                                     "source": "sglang-wheels"})  # fmt: skip
    assert validate_documents({"checks.json": ("checks.json", every)}, partial=True)
    flag = _checks_doc(required_by={"when": [{"flag": "--no-such-flag", "present": True}], "why": "w", "source": "x"})
    problems = validate_documents({"checks.json": ("checks.json", flag)}, partial=True)
    assert any("'--no-such-flag' is not a flag of launch.json" in p for p in problems), problems
    feature = copy.deepcopy({"features": [f for f in MANIFESTS.features if f["id"] == "custom-allreduce"]})
    feature["features"][0]["rules"][0]["required_by"] = {"launches": "every", "why": "w", "source": "sglang-wheels"}
    problems = validate_documents({"features.json": ("features.json", feature)}, partial=True)
    assert any("only a check's rules may have their own required_by" in p for p in problems), problems


def test_an_unknown_crash_rule_is_not_hidden_by_a_degrading_failure() -> None:
    """A check whose failing rule only degrades, and whose rule that could crash is unknown (Triton's TMA gather
    fails, its ptxas cannot be read): the unknown decides, so the gate refuses unless --allow-unknown."""
    d = gate.Derived(command=[], entrypoint="launch-server", sglang_args=[])
    d.required.append(gate.Requirement("triton-ptxas", "launch", "every SGLang launch needs it", True))
    verdict = {
        "id": "triton-ptxas",
        "status": "warning",
        "reasons": [
            {"rule": "sm12x-tma-gather", "result": "fail", "effect": "degraded", "message": "gather4"},
            {"rule": "ptxas-knows-gpu", "result": "unknown", "message": "triton.ptxas_cuda not known"},
        ],
    }
    decision = gate.decide(d, [], [], False, (), [verdict])
    assert not decision.allow and [b.status for b in decision.blocking] == ["unknown"]
    assert [x["rule"] for x in decision.blocking[0].reasons] == ["ptxas-knows-gpu", "sm12x-tma-gather"]
    decision = gate.decide(d, [], [], True, (), [verdict])
    assert decision.allow and [b.status for b in decision.warnings] == ["blocked"]


def test_a_default_feature_blocked_only_as_slower_with_an_unknown_crash_rule_refuses() -> None:
    d = gate.Derived(command=[], entrypoint="launch-server", sglang_args=[])
    d.required.append(gate.Requirement("custom-allreduce", "default", "on by default"))
    verdict = {
        "id": "custom-allreduce",
        "status": "blocked",
        "effect": "disabled",
        "reasons": [
            {"rule": "pcie-size", "result": "fail", "effect": "disabled", "message": "off on PCIe"},
            {"rule": "p2p", "result": "unknown", "effect": "crash", "message": "topology.p2p not known"},
        ],
    }
    decision = gate.decide(d, [verdict], MANIFESTS.features, False)
    assert [(b.feature, b.status) for b in decision.blocking] == [("custom-allreduce", "unknown")]
    decision = gate.decide(d, [verdict], MANIFESTS.features, True)
    assert decision.allow and [(b.feature, b.status) for b in decision.warnings] == [("custom-allreduce", "blocked")]
