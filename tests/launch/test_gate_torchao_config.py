"""The gate on --torchao-config by what SGLang's apply_torchao_config_to_model really runs (igap23; the check
torchao-import's rules torchao-installed and torchao-function-configs, extension-torch-abi-torchao's builtin rule
torchao-config):

- torchao 0.16+ no longer exports the function-style configs SGLang 0.5.1-0.5.17 import, and SGLang 0.5.11-0.5.17
  pin torchao 0.17.0: any non-empty --torchao-config there fails at model load (was allowed: a false pass), and every
  launch of 0.4.6-0.5.8, which import torchao on every model load;
- a torchao whose compiled _C is not found serves int8wo / int8dq / fp8wo / fp8dq (and int4wo before 0.14): none
  of them calls torchao's compiled ops (was unknown: refused) where the packages probe lists torchao installed;
- torchao not installed fails the import; int4wo from torchao 0.14 needs fbgemm-gpu-genai (not probed: unknown);
  a value SGLang raises on fails.

The facts are the h200-newest case with SGLang set to the release tested and the kernel symbol probe's section
written in its shape (torchao's _C found resolving, or none found)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, gate_json, model_dir

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
CHECK = "extension-torch-abi-torchao"
IMPORT = "torchao-import"
SITE = "/opt/venv/lib/python3.12/site-packages"


def _facts(tmp_path: Path, sglang: str, torchao: str | None, c_found: bool, listed: bool = True) -> Path:
    """h200-newest with SGLang `sglang`, torchao `torchao` (None: listed not installed; listed False: a packages
    list that does not name torchao, an older stackcheck's), its _C found resolving or not found at all."""
    doc = json.loads(H200.read_text())
    packages = doc["facts"]["packages"]
    packages["sglang"].update(version=sglang, dist_version=sglang)
    if listed:
        absent = {"installed": False}
        packages["torchao"] = {"installed": True, "version": torchao, "location": SITE} if torchao else absent
    common = {
        "path": "sgl_kernel/sm90/common_ops.abi3.so", "torch_symbols": 107, "driver_symbols": 19,
        "torch_missing_count": 0, "torch_missing": [], "driver_missing_count": 0, "driver_missing": [],
    }  # fmt: skip
    ext = {"extension": "torchao", "path": "torchao/_C.abi3.so", "torch_symbols": 40, "torch_missing_count": 0}
    doc["facts"]["kernel_symbols"] = {
        "package": "sglang-kernel", "version": "0.4.10", "files": [common], "extension_dirs": [SITE],
        "extensions": [ext] if c_found else [], "libcuda": "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
    }  # fmt: skip
    path = tmp_path / f"facts-{sglang}-{torchao}-{c_found}-{listed}.json"
    path.write_text(json.dumps(doc))
    return path


def _gate(tmp_path: Path, facts: Path, *flags: str) -> dict[str, Any]:
    return gate_json(facts, "--model-path", str(model_dir(tmp_path, "llama", LLAMA3)), *flags, dry_run=True)


def _blocking(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The two checks' reasons where the gate counts them against the launch (blocked or unknown), [] otherwise."""
    return [r for f in doc["reasons"] if f.get("feature") in (CHECK, IMPORT) for r in f["reasons"]]


def test_torchao_017_pinned_by_sglang_0513_refuses_any_torchao_config(tmp_path: Path) -> None:
    """SGLang 0.5.13's own pin, torchao 0.17.0, with its compiled libraries resolving: the import of
    float8_dynamic_activation_float8_weight fails, so --torchao-config int8wo is refused (it was allowed)."""
    facts = _facts(tmp_path, "0.5.13", "0.17.0", c_found=True)
    doc = _gate(tmp_path, facts, "--torchao-config", "int8wo")
    assert doc["decision"] == "refuse", doc["decision"]
    (reason,) = [r for r in _blocking(doc) if r.get("result") == "fail"]
    assert reason["rule"] == "torchao-function-configs" and "cannot import name" in reason["message"], reason
    # the same box without the flag: 0.5.13 imports torchao only for a non-empty value
    assert _blocking(_gate(tmp_path, facts)) == []
    assert _blocking(_gate(tmp_path, facts, "--torchao-config", "")) == []


def test_every_launch_of_sglang_058_imports_torchao(tmp_path: Path) -> None:
    """0.5.8 imports torchao.quantization before it tests for an empty value: torchao 0.17 fails every launch,
    torchao 0.15.0 (the last with the names) does not."""
    bad = _gate(tmp_path, _facts(tmp_path, "0.5.8", "0.17.0", c_found=True))
    assert [r["rule"] for r in _blocking(bad) if r.get("result") == "fail"] == ["torchao-function-configs"]
    good = _gate(tmp_path, _facts(tmp_path, "0.5.8", "0.15.0", c_found=True))
    assert _blocking(good) == []


@pytest.mark.parametrize("value", ["int8wo", "int8dq", "fp8wo", "fp8dq-per_row", "int4wo-128"])
def test_torchao_without_compiled_libraries_serves_the_configs_that_call_none(tmp_path: Path, value: str) -> None:
    """torchao 0.9.0 (the pin of 0.5.1-0.5.10) listed installed with no _C found: each config SGLang builds runs
    torch's own kernels, so the launch is judged as the one without the flag (was unknown: refused)."""
    facts = _facts(tmp_path, "0.5.9", "0.9.0", c_found=False)
    doc = _gate(tmp_path, facts, "--torchao-config", value)
    plain = _gate(tmp_path, facts)
    assert doc["decision"] == plain["decision"], (doc["decision"], plain["decision"], _blocking(doc))
    assert _blocking(doc) == []


def test_torchao_missing_or_not_probed(tmp_path: Path) -> None:
    """torchao listed not installed: the import fails (refused as a crash); a packages list that does not name
    torchao (an older stackcheck's) keeps the check's unknown (still refused, fail closed)."""
    gone = _gate(tmp_path, _facts(tmp_path, "0.5.9", None, c_found=False), "--torchao-config", "int8wo")
    (reason,) = [r for r in _blocking(gone) if r.get("result") == "fail"]
    assert reason["rule"] == "torchao-installed" and "No module named 'torchao'" in reason["message"], reason
    old = _gate(tmp_path, _facts(tmp_path, "0.5.9", "0.9.0", False, listed=False), "--torchao-config", "int8wo")
    assert old["decision"] == "refuse"
    assert [r["result"] for r in _blocking(old)] == ["unknown"], _blocking(old)


def test_int4wo_from_torchao_014_needs_fbgemm_which_is_not_probed(tmp_path: Path) -> None:
    """torchao 0.14.1's Int4WeightOnlyConfig is version 2 (fbgemm-gpu-genai's int4 kernels): unknown; 0.13.0's
    is torch's tinygemm: passes."""
    new = _gate(tmp_path, _facts(tmp_path, "0.5.9", "0.14.1", c_found=True), "--torchao-config", "int4wo-128")
    assert [(r["rule"], r["result"]) for r in _blocking(new)] == [("torchao-config", "unknown")], _blocking(new)
    assert "fbgemm-gpu-genai" in _blocking(new)[0]["message"]
    # torchao 0.13.0 with its _C resolving under this box's torch 2.14.1 would abort (rule torchao-abi-abort,
    # test_gate_torchao_abort.py): its libraries are not found here
    old = _gate(tmp_path, _facts(tmp_path, "0.5.9", "0.13.0", c_found=False), "--torchao-config", "int4wo-128")
    assert _blocking(old) == []


@pytest.mark.parametrize(
    ("value", "raised"),
    [("int4wo-100", "AssertionError"), ("int4wo", "ValueError"), ("fp8dq-per_block", "AssertionError"),
     ("nf4", "ValueError"), ("gemlite-4-64", "ValueError")],
)  # fmt: skip
def test_a_value_sglang_raises_on_is_refused(tmp_path: Path, value: str, raised: str) -> None:
    """SGLang 0.5.9's dispatch raises on these (gemlite left it in 0.5.7). torchao 0.9.0's _C is not found (one
    resolving under this box's torch 2.14.1 would add rule torchao-abi-abort's failure)."""
    doc = _gate(tmp_path, _facts(tmp_path, "0.5.9", "0.9.0", c_found=False), "--torchao-config", value)
    assert doc["decision"] == "refuse"
    (reason,) = [r for r in _blocking(doc) if r.get("result") == "fail"]
    assert reason["rule"] == "torchao-config" and raised in reason["message"] and reason["effect"] == "crash"


def test_gemlite_on_sglang_056_is_unknown() -> None:
    """0.5.1-0.5.6 take gemlite-...: it imports the gemlite package, which no probe reads."""
    from stackcheck.verdicts.torchao_config import config_kind

    assert config_kind("gemlite-4-64", "0.5.6") == ("gemlite", None)
    assert config_kind("gemlite-4-64", "0.5.7")[1] == "ValueError: Unexpected config: gemlite-4-64"
    assert config_kind("int8wo-int4wo", "0.5.9") == ("int8wo", None)  # the first word in SGLang's order wins


def test_audit_states_no_failure_without_the_flag(tmp_path: Path) -> None:
    """An audit of SGLang 0.5.13 with its pinned torchao 0.17.0: no launch here imports torchao unless given the
    flag, so the check does not fail."""
    from gate_cli import cli_json

    facts = _facts(tmp_path, "0.5.13", "0.17.0", c_found=True)
    _, doc = cli_json(["audit", "--facts", str(facts), "--format", "json"])
    assert {c["id"]: c["status"] for c in doc["checks"] if c.get("id") in (CHECK, IMPORT)} == {
        CHECK: "ok",
        IMPORT: "skipped",
    }
    # the same torchao under 0.5.8, which imports it on every model load: failed in the audit too
    _, old = cli_json(["audit", "--facts", str(_facts(tmp_path, "0.5.8", "0.17.0", c_found=True)), "--format", "json"])
    (check,) = [c for c in old["checks"] if c.get("id") == IMPORT]
    assert check["status"] == "failed", check
    assert [r["rule"] for r in check["reasons"] if r["result"] == "fail"] == ["torchao-function-configs"], check
