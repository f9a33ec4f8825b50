"""irev61: LMCache's c_ops found by the kernel symbol probe and not read (over 1 GiB, no ELF file, an error). The check
extension-torch-abi-lmcache said unknown only, so `gate --allow-unknown` allowed an --enable-lmcache launch of SGLang
0.5.1 with torch 2.8 and LMCache 0.3.3, the pair of ray-project/ray#56695 whose c_ops fails to load (undefined symbol
_ZN3c104cuda9SetDeviceEa): a false pass. The release table (ilmc) now judges the versions beside the unknown. The
launches run SGLang 0.5.2's pins (torch 2.8.0 as 0.5.1's): 0.5.1 declares no --enable-lmcache (ifc49), so its launch is
refused for the flag before the extension is judged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gate_cli import LLAMA3, gate_json, model_dir

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load

ROOT = Path(__file__).resolve().parent.parent.parent
SITE = "/opt/venv/lib/python3.12/site-packages"


def _box(tmp_path: Path, lmcache: str, extension: dict[str, Any]) -> Path:
    """h200-newest with SGLang 0.5.2's pins (torch 2.8.0+cu128), LMCache `lmcache` and one c_ops entry."""
    doc = json.loads((ROOT / "tests/cases/h200-newest/facts.json").read_text())
    packages = doc["facts"]["packages"]
    for name in ("sgl-kernel", "sglang-kernel", "triton"):
        packages[name] = {"installed": False}
    for name, pin in release_facts({}, load(), "0.5.2", None, None)["packages"].items():
        packages[name] = {"installed": True, "version": pin["version"], "dist_version": pin["version"]}
    packages["torch"].update(version="2.8.0+cu128", variant="cu128", cuda="12.8")
    packages.pop("nvidia-nccl-cu13", None)
    packages["lmcache"] = {"installed": True, "version": lmcache, "location": SITE}
    doc["facts"]["kernel_symbols"] = {
        "package": "sgl-kernel", "files": [], "extension_dirs": [SITE], "extensions": [extension],
    }  # fmt: skip
    path = tmp_path / f"facts-{lmcache}.json"
    path.write_text(json.dumps(doc))
    return path


UNREAD = {"extension": "lmcache", "path": f"{SITE}/lmcache/c_ops.cpython-312-x86_64-linux-gnu.so", "error": "not read"}


def _gate(tmp_path: Path, facts: Path) -> dict[str, Any]:
    model = model_dir(tmp_path, "llama", LLAMA3)
    return gate_json(facts, "--model-path", str(model), "--enable-lmcache", dry_run=True, options=["--allow-unknown"])


def test_an_unread_c_ops_of_the_ray_56695_pair_is_refused(tmp_path: Path) -> None:
    doc = _gate(tmp_path, _box(tmp_path, "0.3.3", UNREAD))
    assert doc["decision"] == "refuse", doc["decision"]
    failed = [r for f in doc["reasons"] for r in f["reasons"] if r.get("rule") == "release-symbols"]
    assert [r.get("effect") for r in failed] == ["crash"], failed
    assert "_ZN3c104cuda9SetDeviceEa" in failed[0]["message"] and "read none of them" in failed[0]["message"]


def test_an_unread_c_ops_of_a_release_built_for_torch_28_is_still_allowed(tmp_path: Path) -> None:
    # (LMCache 0.3.9's c_ops needs SetDevice(signed char, bool), which torch 2.8 exports: unknown only, allowed)
    assert _gate(tmp_path, _box(tmp_path, "0.3.9", UNREAD))["decision"] == "allow"
