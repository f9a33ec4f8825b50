"""fbgemm-gpu-genai's library where torchao loads it (igap25; rule fbgemm-genai-symbols of the check
extension-torch-abi-torchao, stackcheck/verdicts/torchao_gate.py fbgemm_reasons):

`import fbgemm_gpu` loads fbgemm_gpu/experimental/gen_ai/fbgemm_gpu_experimental_gen_ai.so and re-raises a failure
(fbgemm-gpu-genai 1.4.0, fbgemm_gpu/__init__.py:44-106, :165-178). torchao 0.15.0 reaches it as torchao itself is
imported (int4_preshuffled_tensor.py:25, outside a try), so an fbgemm-gpu-genai built for another torch (1.4.0, for
torch 2.9, misses c10 symbols in torch 2.10.0 and 2.11.0: read in the wheels) fails every launch that imports
torchao; the check passed it (nothing read the file). So do 0.12.0-0.14.1 (imend: their int4 preshuffled tensor
module imports fbgemm_gpu as torchao.quantization is imported; igap25 had read them to reach it only for fp8wo /
fp8dq, and int4wo on 0.14); 0.9.0-0.11.0 import no fbgemm_gpu."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, gate_json, model_dir

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
CHECK = "extension-torch-abi-torchao"
SITE = "/opt/venv/lib/python3.12/site-packages"
GENAI = "fbgemm_gpu/experimental/gen_ai/fbgemm_gpu_experimental_gen_ai.so"


def _facts(tmp_path: Path, sglang: str, torchao: str, missing: int) -> Path:
    """h200-newest with torch 2.10.0, torchao `torchao` (no _C found) and fbgemm-gpu-genai 1.4.0 whose library
    misses `missing` torch symbols."""
    doc = json.loads(H200.read_text())
    packages = doc["facts"]["packages"]
    packages["sglang"].update(version=sglang, dist_version=sglang)
    packages["torch"].update(version="2.10.0+cu128", dist_version="2.10.0")
    packages["torchao"] = {"installed": True, "version": torchao, "location": SITE}
    packages["fbgemm-gpu-genai"] = {"installed": True, "version": "1.4.0", "location": SITE}
    lib = {
        "extension": "fbgemm_gpu_genai", "path": GENAI, "torch_symbols": 130, "torch_missing_count": missing,
        "torch_missing": ["_ZN3c1013MessageLoggerC1EPKcii"] * missing,
    }  # fmt: skip
    doc["facts"]["kernel_symbols"] = {
        "package": "sglang-kernel", "version": "0.4.10", "files": [], "extension_dirs": [SITE], "extensions": [lib],
        "torch_version": "2.10.0+cu128",
    }  # fmt: skip
    path = tmp_path / f"facts-{sglang}-{torchao}-{missing}.json"
    path.write_text(json.dumps(doc))
    return path


def _gate(tmp_path: Path, facts: Path, *flags: str) -> dict[str, Any]:
    return gate_json(facts, "--model-path", str(model_dir(tmp_path, "llama", LLAMA3)), *flags, dry_run=True)


def _rule(doc: dict[str, Any], refusing: bool) -> list[dict[str, Any]]:
    keys = ("reasons",) if refusing else ("reasons", "warnings")
    entries = [f for k in keys for f in doc.get(k) or [] if f.get("feature") == CHECK]
    return [r for f in entries for r in f["reasons"] if r.get("rule") == "fbgemm-genai-symbols"]


def test_torchao_015_imports_a_broken_fbgemm_genai_on_any_config(tmp_path: Path) -> None:
    doc = _gate(tmp_path, _facts(tmp_path, "0.5.9", "0.15.0", 2), "--torchao-config", "int8wo")
    (reason,) = _rule(doc, refusing=True)
    assert (reason["result"], reason["effect"]) == ("fail", "crash"), reason
    assert GENAI in reason["message"] and "int4_preshuffled_tensor.py:25" in reason["message"], reason
    # resolving: a pass, nothing refused for it
    assert _rule(_gate(tmp_path, _facts(tmp_path, "0.5.9", "0.15.0", 0), "--torchao-config", "int8wo"), True) == []
    # SGLang 0.5.9 without the flag imports no torchao, where transformers does not either (4.50.3; 4.51-4.57 and 5.x
    # import torchao 0.15.0 on every launch: tests/launch/test_gate_irev58_torchao_via_transformers.py): information
    bare = _facts(tmp_path, "0.5.9", "0.15.0", 2)
    doc_456 = json.loads(bare.read_text())
    doc_456["facts"]["packages"]["transformers"] = {"installed": True, "version": "4.50.3", "location": SITE}
    bare.write_text(json.dumps(doc_456))
    plain = _gate(tmp_path, bare)
    assert _rule(plain, refusing=True) == [] and [r["effect"] for r in _rule(plain, False)] == ["degraded"]


@pytest.mark.parametrize("torchao", ["0.12.0", "0.13.0", "0.14.0", "0.14.1"])
def test_torchao_012_to_014_import_it_on_any_config(tmp_path: Path, torchao: str) -> None:
    """imend: was 'loads it for fp8 only' (int8wo on 0.14.1 passed). torchao/__init__.py imports torchao.quantization
    outside a try (0.13.0 :63, 0.14.0 :100, 0.14.1 :110), whose int4 preshuffled tensor module runs
    find_spec('fbgemm_gpu.experimental') (0.13.0 :24-27, 0.14.x :25-28), which imports the parent package fbgemm_gpu
    and re-raises its OSError (importlib.util.find_spec; run on Python 3.11.7), then imports
    fbgemm_gpu.experimental.gen_ai.quantize (0.12.0: int4_groupwise_preshuffle_tensor.py:27-30): every config."""
    facts = _facts(tmp_path, "0.5.9", torchao, 2)
    (reason,) = _rule(_gate(tmp_path, facts, "--torchao-config", "int8wo"), refusing=True)
    assert (reason["result"], reason["effect"]) == ("fail", "crash"), reason
    assert "imports it as torchao itself is imported" in reason["message"], reason


def test_torchao_011_imports_no_fbgemm(tmp_path: Path) -> None:
    """0.9.0-0.11.0 import no fbgemm_gpu (grep of the wheels): the library is not judged for them."""
    facts = _facts(tmp_path, "0.5.9", "0.11.0", 2)
    assert _rule(_gate(tmp_path, facts, "--torchao-config", "fp8dq-per_row"), refusing=False) == []


@pytest.mark.registry
def test_real_fbgemm_genai_140_is_read_against_torch(tmp_path: Path) -> None:
    """1.4.0 (FBGEMM's pair for torch 2.9): resolves in torch 2.9.1, misses c10 symbols in torch 2.11.0."""
    sys.path.insert(0, str(ROOT / "tests"))
    from registry_wheels import extract_dynamic, fetch_wheel

    from stackcheck.readers.fsview import HostView
    from stackcheck.readers.kernelsymbols import probe_kernel_symbols

    got: dict[str, Any] = {}
    for torch in ("2.9.1", "2.11.0"):
        site = tmp_path / torch
        for d in ("sgl_kernel", "fbgemm_gpu/experimental/gen_ai", "torch/lib"):
            (site / d).mkdir(parents=True)
        kernel = fetch_wheel("sgl-kernel", "0.3.0")
        common = extract_dynamic(kernel, "sgl_kernel/common_ops.abi3.so")
        (site / "sgl_kernel" / "common_ops.abi3.so").symlink_to(common)
        (site / GENAI).symlink_to(extract_dynamic(fetch_wheel("fbgemm-gpu-genai", "1.4.0"), GENAI))
        wheel = fetch_wheel("torch", torch)
        with zipfile.ZipFile(wheel) as zf:
            present = set(zf.namelist())
        for lib in ("libtorch.so", "libtorch_cpu.so", "libtorch_cuda.so", "libc10.so", "libc10_cuda.so",
                    "libtorch_python.so", "libshm.so", "libtorch_nvshmem.so"):  # fmt: skip
            if f"torch/lib/{lib}" in present:
                (site / "torch" / "lib" / lib).symlink_to(extract_dynamic(wheel, f"torch/lib/{lib}"))
        packages = {
            "sgl-kernel": {"installed": True, "version": "0.3.0", "location": str(site)},
            "torch": {"installed": True, "version": torch, "location": str(site)},
        }
        ks = probe_kernel_symbols(packages, HostView("/"), None)
        assert ks is not None
        (entry,) = [e for e in ks["extensions"] if e["extension"] == "fbgemm_gpu_genai"]
        got[torch] = entry["torch_missing_count"]
    assert got["2.9.1"] == 0 and got["2.11.0"] > 0, got


def test_torchao_pre_releases_are_read_as_ranges_are(tmp_path: Path) -> None:
    """A pre-release or dev build of 0.12.0 runs 0.12.0's code or 0.11.0's: on every config 0.12.0 loads the library
    and 0.11.0 does not, so it is not known (unknown, not a silent pass). One of 0.15.0 runs 0.15.0's or 0.14.1's
    code, both of which load it (imend: 0.14.1 on every config too), so the crash stands. A pre-release of a release no
    range splits from the one before it is judged as that release (0.14.1rc1)."""
    from stackcheck.verdicts.torchao_gate import fbgemm_loading

    for pre in ("0.12.0rc1", "0.12.0.dev20250601+cu128"):
        (reason,) = _rule(_gate(tmp_path, _facts(tmp_path, "0.5.9", pre, 2), "--torchao-config", "int8wo"), False)
        assert reason["result"] == "unknown" and "0.11.0" not in reason["message"], reason
        assert f"torchao {pre} is a pre-release or dev build of 0.12.0" in reason["message"], reason
        assert "int4_groupwise_preshuffle_tensor.py:27-30" in reason["message"], reason
    for pre in ("0.15.0rc1", "0.15.0.dev20251001+cu128"):
        for config in ("int8wo", "fp8dq-per_row"):
            (got,) = _rule(_gate(tmp_path, _facts(tmp_path, "0.5.9", pre, 2), "--torchao-config", config), True)
            assert (got["result"], got["effect"]) == ("fail", "crash"), got
    table = _library_loads()
    assert fbgemm_loading("0.14.1rc1", "int8wo", table)[0] is True  # (0.14.0's code or 0.14.1's: both load it)
    assert fbgemm_loading("0.12.0rc2", "", table)[0] is None  # 0.12.0 loads it, 0.11.0 does not
    assert fbgemm_loading("0.16.0.dev1", "", table)[0] is None  # 0.16.0 (asks for mslk instead) or 0.15.0's code
    assert fbgemm_loading("0.15.0+git1a2b", "", table)[0] is True
    assert fbgemm_loading("0.16.0", "fp8wo", table)[0] is False


def _library_loads() -> Any:
    """The shipped check's table of the torchao releases that load fbgemm-gpu-genai's library."""
    from stackcheck.knowledge.loader import load

    (check,) = [c for c in load([]).checks if c["id"] == CHECK]
    return check["extension"]["library_loads"]


def test_the_library_loads_table_is_read_row_by_row() -> None:
    """imend: the ranges live in checks.json (extension.library_loads), each row with its kinds and why; the first
    row that holds decides and names its why; a check without the table leaves the load not known (a missing
    symbol then unknown, never passed as not loaded)."""
    from stackcheck.verdicts.torchao_gate import fbgemm_loading

    table = _library_loads()
    loaded, why = fbgemm_loading("0.15.0", "fp8wo", table)
    assert loaded is True and why.startswith("torchao 0.15.0 imports it as torchao itself is imported"), why
    own_rows = {"releases": table["releases"][1:]}  # (the kinds' rows, which the every-import row now covers)
    assert fbgemm_loading("0.14.0", "fp8dq", own_rows) == (
        True, "torchao 0.14.0's float8 tensor asks for it as it quantizes (--torchao-config fp8dq)")  # fmt: skip
    assert fbgemm_loading("0.11.0", "int4wo", table) == (
        False, "torchao 0.11.0 was not read to load it for this launch")  # fmt: skip
    own = {"releases": [{"kinds": ["int8wo"], "versions": ">=0.13.0", "why": "a site's own row ({kind})"}]}
    assert fbgemm_loading("0.13.0", "int8wo", own) == (True, "a site's own row (int8wo)")
    assert fbgemm_loading("0.15.0", "", own)[0] is False
    for missing in (None, {}, {"releases": "x"}, {"releases": ["x"]}):
        loaded, why = fbgemm_loading("0.15.0", "", missing)
        assert loaded is None and "table" in why, (missing, why)
    assert fbgemm_loading(None, "", table) == (False, "torchao's version is not given")


def test_the_library_loads_table_is_validated(manifests: Any) -> None:
    """A misspelt range or module in extension.library_loads is a manifest error with its JSON path (a range that
    parses to nothing would leave the library unjudged without a word)."""
    import copy

    from stackcheck.knowledge.validate import semantic_problems

    docs = {name: (f"manifests/{name}", copy.deepcopy(doc)) for name, doc in manifests.docs.items()}
    checks = docs["checks.json"][1]["checks"]
    i = next(i for i, c in enumerate(checks) if c["id"] == CHECK)
    assert not [p for p in semantic_problems(docs) if "library_loads" in p]
    table = checks[i]["extension"]["library_loads"]
    table["releases"][1]["versions"] = ">=0.13.0,<<0.16"
    table["module"] = "fbgemm_gpu"
    problems = "\n".join(semantic_problems(docs))
    where = f"$.checks[{i}].extension.library_loads"
    assert f"{where}.releases[1].versions: invalid version specifier '>=0.13.0,<<0.16'" in problems, problems
    assert f"{where}.module: 'fbgemm_gpu' is not one of the modules" in problems, problems
