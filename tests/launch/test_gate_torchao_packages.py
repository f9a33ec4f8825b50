"""--torchao-config values that need a package besides torchao (igap25; rule torchao-config of the check
extension-torch-abi-torchao, stackcheck/verdicts/torchao_config.py):

- int4wo on torchao 0.14.0-0.15.0 builds Int4WeightOnlyConfig version 2, whose tensor imports
  fbgemm_gpu.experimental.gen_ai inside a bare try and raises 'ImportError: Requires fbgemm-gpu-genai >= 1.2.0'
  as it quantizes where that failed (int4_tensor.py:22-25, :100-101 of each wheel);
- gemlite-... on SGLang 0.5.1-0.5.6 runs `from gemlite.core import GemLiteLinearTriton` first, outside a try.

The packages probe now lists fbgemm-gpu-genai and gemlite: listed not installed, the launch fails at model load (was
unknown); installed, or a packages list that does not name them (an older stackcheck's), unknown as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gate_cli import LLAMA3, gate_json, model_dir

from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.packages import PackagesProbe

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
CHECK = "extension-torch-abi-torchao"
SITE = "/opt/venv/lib/python3.12/site-packages"


def _facts(tmp_path: Path, sglang: str, torchao: str, extra: dict[str, Any]) -> Path:
    """h200-newest with SGLang `sglang`, torchao `torchao` listed installed with no compiled library found, and the
    packages entries `extra` (a name mapped to None: left out of the list)."""
    doc = json.loads(H200.read_text())
    packages = doc["facts"]["packages"]
    packages["sglang"].update(version=sglang, dist_version=sglang)
    packages["torchao"] = {"installed": True, "version": torchao, "location": SITE}
    for name, entry in extra.items():
        if entry is None:
            packages.pop(name, None)
        else:
            packages[name] = entry
    doc["facts"]["kernel_symbols"] = {
        "package": "sglang-kernel", "version": "0.4.10", "files": [], "extension_dirs": [SITE], "extensions": [],
    }  # fmt: skip
    path = tmp_path / f"facts-{sglang}-{torchao}-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(doc))
    return path


def _config_reasons(tmp_path: Path, facts: Path, value: str) -> list[dict[str, Any]]:
    doc = gate_json(facts, "--model-path", str(model_dir(tmp_path, "llama", LLAMA3)), "--torchao-config", value)
    entries = [f for key in ("reasons", "warnings") for f in doc.get(key) or [] if f.get("feature") == CHECK]
    return [r for f in entries for r in f["reasons"] if r.get("rule") == "torchao-config"]


def test_int4wo_on_torchao_015_without_fbgemm_genai_fails(tmp_path: Path) -> None:
    gone = _facts(tmp_path, "0.5.9", "0.15.0", {"fbgemm-gpu-genai": {"installed": False}})
    (reason,) = _config_reasons(tmp_path, gone, "int4wo-128")
    assert (reason["result"], reason.get("effect")) == ("fail", "crash"), reason
    assert "Requires fbgemm-gpu-genai >= 1.2.0" in reason["message"] and "not installed" in reason["message"]
    there = {"installed": True, "version": "1.4.0", "location": SITE}
    (known,) = _config_reasons(tmp_path, _facts(tmp_path, "0.5.9", "0.15.0", {"fbgemm-gpu-genai": there}), "int4wo-128")
    assert known["result"] == "unknown" and "fbgemm-gpu-genai 1.4.0 is installed" in known["message"], known
    (old,) = _config_reasons(tmp_path, _facts(tmp_path, "0.5.9", "0.15.0", {"fbgemm-gpu-genai": None}), "int4wo-128")
    assert old["result"] == "unknown" and "does not name it" in old["message"], old
    # torchao 0.13.0's int4wo is torch's tinygemm: fbgemm-gpu-genai's absence does not matter (the check passes,
    # so the gate does not list it)
    tiny = _facts(tmp_path, "0.5.9", "0.13.0", {"fbgemm-gpu-genai": {"installed": False}})
    assert [r for r in _config_reasons(tmp_path, tiny, "int4wo-128") if r["result"] != "pass"] == []


def test_gemlite_on_sglang_056_without_gemlite_fails(tmp_path: Path) -> None:
    gone = _facts(tmp_path, "0.5.6", "0.9.0", {"gemlite": {"installed": False}})
    (reason,) = _config_reasons(tmp_path, gone, "gemlite-4-64")
    assert (reason["result"], reason.get("effect")) == ("fail", "crash"), reason
    assert "No module named 'gemlite'" in reason["message"]
    there = {"installed": True, "version": "0.4.7", "location": SITE}
    (known,) = _config_reasons(tmp_path, _facts(tmp_path, "0.5.6", "0.9.0", {"gemlite": there}), "gemlite-4-64")
    assert known["result"] == "unknown" and "gemlite 0.4.7 is installed" in known["message"], known


def test_the_packages_probe_lists_them(tmp_path: Path) -> None:
    sp = tmp_path / "site-packages"
    for name, version in (("torch", "2.9.1"), ("fbgemm_gpu_genai", "1.4.0")):
        info = sp / f"{name}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n")
    result = PackagesProbe().run(ProbeContext(env={}, path_dirs=[str(sp)]))
    packages = result.facts["packages"]
    assert packages["fbgemm-gpu-genai"]["installed"] is True and packages["fbgemm-gpu-genai"]["version"] == "1.4.0"
    assert packages["gemlite"] == {"installed": False}
