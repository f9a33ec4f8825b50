"""torchao's own gate on loading its compiled libraries, and the abort of a library built before torch 2.9 loaded
under 2.9+ (igap25; check extension-torch-abi-torchao, rules torchao-abi-abort and torchao-load-gate,
stackcheck/verdicts/torchao_gate.py):

- torchao 0.12.0 has no gate and is built against torch 2.8: under torch 2.9.1 its _C.abi3.so resolves every torch
  symbol (read in the wheels: tests/launch/test_gate_torchao_abort_registry.py), so torch.ops.load_library opens it
  and the process aborts (pytorch/ao#2901, PR #2908). The check passed that file and the launch was allowed (or,
  with _C_cutlass_90a.abi3.so missing c10::SymInt::sym_ne, judged only degraded): now refused as a crash;
- torchao 0.13.0's string test ('2.10.0' >= '2.9' is False) loads its libraries under torch 2.10, where each misses
  a torch symbol: a caught OSError, degraded, no abort;
- a release whose gate does not load them (0.13.0 and 0.15.0 under torch 2.10.0's neighbours) opens none: a pass
  that says so, where a missing symbol of a file never opened was judged a failure.

The facts are the h200-newest case with SGLang, torch and torchao set to the pair tested and the kernel symbol
probe's section written in its shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gate_cli import LLAMA3, cli_json, gate_json, model_dir

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
CHECK = "extension-torch-abi-torchao"
SITE = "/opt/venv/lib/python3.12/site-packages"


def _facts(tmp_path: Path, sglang: str, torch: str, torchao: str, missing: dict[str, int]) -> Path:
    """h200-newest with SGLang `sglang`, torch `torch`, torchao `torchao` whose libraries (file name: torch symbols
    missing) were read against that torch."""
    doc = json.loads(H200.read_text())
    packages = doc["facts"]["packages"]
    packages["sglang"].update(version=sglang, dist_version=sglang)
    packages["torch"].update(version=torch, dist_version=torch.split("+", maxsplit=1)[0])
    packages["torchao"] = {"installed": True, "version": torchao, "location": SITE}
    common = {
        "path": "sgl_kernel/sm90/common_ops.abi3.so", "torch_symbols": 107, "driver_symbols": 19,
        "torch_missing_count": 0, "torch_missing": [], "driver_missing_count": 0, "driver_missing": [],
    }  # fmt: skip
    symbol = "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib"
    ext = [
        {"extension": "torchao", "path": f"torchao/{name}", "torch_symbols": 60, "torch_missing_count": count,
         "torch_missing": [symbol] * count}
        for name, count in missing.items()
    ]  # fmt: skip
    doc["facts"]["kernel_symbols"] = {
        "package": "sglang-kernel", "version": "0.4.10", "files": [common], "extension_dirs": [SITE],
        "extensions": ext, "libcuda": "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "torch_version": torch,
    }  # fmt: skip
    path = tmp_path / f"facts-{sglang}-{torch}-{torchao}-{sum(missing.values())}.json"
    path.write_text(json.dumps(doc))
    return path


def _check(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The check's reasons where the gate states them: refusing (reasons) or not (warnings)."""
    listed = [f for key in ("reasons", "warnings") for f in doc.get(key) or [] if isinstance(f, dict)]
    return [r for f in listed if f.get("feature") == CHECK for r in f["reasons"]]


def _refusing(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The check's entry among those the gate refuses the launch for (the box's other pins, torch moved from
    h200-newest's, refuse it too: the decision alone says nothing of this check)."""
    return next((f for f in doc["reasons"] if f.get("feature") == CHECK), None)


def _gate(tmp_path: Path, facts: Path, *flags: str) -> dict[str, Any]:
    return gate_json(facts, "--model-path", str(model_dir(tmp_path, "llama", LLAMA3)), *flags, dry_run=True)


RESOLVING_012 = {"_C.abi3.so": 0, "_C_cutlass_100a.abi3.so": 0, "_C_cutlass_90a.abi3.so": 1}


def test_torchao_012_under_torch_291_aborts_with_the_flag(tmp_path: Path) -> None:
    """0.12.0 (no gate, built against 2.8) under torch 2.9.1 with --torchao-config int8wo: refused as a crash
    naming the files that resolve; the same box without the flag (SGLang 0.5.9 imports torchao only for it) and with a
    transformers that does not import it (5.3.0) is not refused for it."""
    facts = _facts(tmp_path, "0.5.9", "2.9.1+cu128", "0.12.0", RESOLVING_012)
    doc = _gate(tmp_path, facts, "--torchao-config", "int8wo")
    refusing = _refusing(doc)
    assert doc["decision"] == "refuse" and refusing is not None and refusing["effect"] == "crash", doc["warnings"]
    (abort,) = [r for r in _check(doc) if r.get("rule") == "torchao-abi-abort"]
    assert abort["result"] == "fail" and abort["effect"] == "crash", abort
    assert "torchao/_C.abi3.so, torchao/_C_cutlass_100a.abi3.so resolve" in abort["message"], abort["message"]
    assert "Aborted" in abort["message"] and "0.14.1 for torch 2.9.0" in abort["message"]
    # without the flag only where transformers imports no torchao 0.12.0 (5.3.0: irev58; 4.57 imports it on every
    # launch: tests/launch/test_gate_irev58_torchao_via_transformers.py)
    doc_5 = json.loads(facts.read_text())
    doc_5["facts"]["packages"]["transformers"] = {"installed": True, "version": "5.3.0", "location": SITE}
    facts.write_text(json.dumps(doc_5))
    plain = _gate(tmp_path, facts)
    assert _refusing(plain) is None
    assert [r["effect"] for r in _check(plain) if r.get("rule") == "torchao-abi-abort"] == ["degraded"]


def test_every_launch_of_sglang_058_imports_the_aborting_torchao(tmp_path: Path) -> None:
    """SGLang 0.5.8 imports torchao on every model load: the abort refuses the launch without the flag too; with
    every library missing a torch symbol (0.12.0 under torch 2.10.0) no library is opened: no abort."""
    facts = _facts(tmp_path, "0.5.8", "2.9.1+cu128", "0.12.0", RESOLVING_012)
    doc = _gate(tmp_path, facts)
    assert _refusing(doc) is not None, doc["warnings"]
    assert [r["effect"] for r in _check(doc) if r.get("rule") == "torchao-abi-abort"] == ["crash"], _check(doc)
    unresolved = {name: 1 for name in RESOLVING_012}
    none = _gate(tmp_path, _facts(tmp_path, "0.5.8", "2.10.0+cu128", "0.12.0", unresolved))
    assert _refusing(none) is None and [r for r in _check(none) if r.get("rule") == "torchao-abi-abort"] == []
    assert {r["effect"] for r in _check(none) if r.get("result") == "fail"} == {"degraded"}, _check(none)


def test_torchao_013_string_gate_loads_under_torch_210(tmp_path: Path) -> None:
    """0.13.0's `str(torch.__version__) >= "2.9"` is False for 2.10.0, so its libraries load; each misses a torch
    symbol there: degraded (a caught OSError), not an abort; built with 2.8 under 2.8.0 it resolves: a pass."""
    missing = {"_C.abi3.so": 1, "_C_cutlass_100a.abi3.so": 1, "_C_cutlass_90a.abi3.so": 2}
    doc = _gate(tmp_path, _facts(tmp_path, "0.5.9", "2.10.0+cu128", "0.13.0", missing), "--torchao-config", "int8wo")
    rules = {(r["rule"], r["result"], r.get("effect")) for r in _check(doc)}
    assert rules >= {("torch-symbols", "fail", "degraded")} and not any(r[0] == "torchao-abi-abort" for r in rules)
    same = {name: 0 for name in missing}
    ok = _gate(tmp_path, _facts(tmp_path, "0.5.9", "2.8.0+cu128", "0.13.0", same), "--torchao-config", "int8wo")
    assert [r for r in _check(ok) if r.get("result") != "pass"] == [], _check(ok)


def test_a_release_that_skips_its_libraries_opens_none(tmp_path: Path) -> None:
    """0.13.0 under torch 2.9.1 ('2.9.1+cu128' >= '2.9') and 0.15.0 under 2.10.0 (its table: 2.9.1 only) skip
    their libraries: one pass of rule torchao-load-gate, where _C_cutlass_90a.abi3.so's missing symbol was a
    degraded failure."""
    missing = {"_C.abi3.so": 0, "_C_cutlass_90a.abi3.so": 1}
    for torch, torchao in (("2.9.1+cu128", "0.13.0"), ("2.10.0+cu128", "0.15.0")):
        doc = _gate(tmp_path, _facts(tmp_path, "0.5.9", torch, torchao, missing), "--torchao-config", "int8wo")
        assert [r for r in _check(doc) if r.get("result") != "pass"] == [], _check(doc)
    _, audit = cli_json(
        ["audit", "--facts", str(_facts(tmp_path, "0.5.8", "2.9.1+cu128", "0.13.0", missing)), "--format", "json"]
    )
    (check,) = [c for c in audit["checks"] if c.get("id") == CHECK]
    assert check["status"] == "ok", check
    assert [r["rule"] for r in check["reasons"]] == ["torchao-load-gate"], check["reasons"]
    assert "'2.9.1+cu128' >= '2.9'" in check["reasons"][0]["message"]


def test_without_the_kernel_symbol_section_the_read_pair_still_aborts(tmp_path: Path) -> None:
    """No library read (an image, a hand-written facts document): torchao 0.12.0 under torch 2.9.1, the pair whose
    wheels were read to resolve in full, is refused from the versions (was: the check skipped, the launch allowed
    for it); 0.12.0 under 2.10.0 (its libraries miss a symbol there) and 0.13.0 under 2.9.1 (its gate skips) are not."""

    def bare(torch: str, torchao: str) -> Path:
        path = _facts(tmp_path, "0.5.9", torch, torchao, {})
        doc = json.loads(path.read_text())
        del doc["facts"]["kernel_symbols"]
        path.write_text(json.dumps(doc))
        return path

    doc = _gate(tmp_path, bare("2.9.1+cu128", "0.12.0"), "--torchao-config", "int8wo")
    refusing = _refusing(doc)
    assert refusing is not None and refusing["effect"] == "crash", doc["warnings"]
    (abort,) = [r for r in refusing["reasons"] if r.get("rule") == "torchao-abi-abort"]
    assert "no file of this install was read" in abort["message"], abort
    for torch, torchao in (("2.10.0+cu128", "0.12.0"), ("2.9.1+cu128", "0.13.0")):
        other = _gate(tmp_path, bare(torch, torchao), "--torchao-config", "int8wo")
        assert [r for r in _check(other) if r.get("rule") == "torchao-abi-abort"] == [], (torch, torchao)
