"""igap15: --moe-a2a-backend deepep_v2 needs a deep_ep that exports ElasticBuffer (check moe-a2a-package).

SGLang 0.5.19-0.5.23 import ElasticBuffer from deep_ep in a try block (token_dispatcher/deepep_v2.py) and raise
ImportError 'DeepEP v2 (ElasticBuffer) is not available' when the dispatcher first builds its buffer, before serving.
sgl-deep-ep 0.1.0 has no ElasticBuffer, 0.1.1 on export it (read in the wheels); DeepEP built from its repository has
it from version 2.0.0 (deepseek-ai/DeepEP b306af0). preflight.json a2a_packages gains a deepep_v2 entry with a floor
per distribution. On the parent (5e61616) 8 of the first 11 fail (no entry for deepep_v2: the check was not run at all;
the three registry readings of the wheels pass).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import QWEN3_MOE, gate_tp8, model_dir, release_box

A2A = "moe-a2a-package"


def _check(tmp_path: Path, sgl: dict[str, Any], deep_ep: dict[str, Any] | None = None,
           release: str = "0.5.23") -> dict[str, Any] | None:  # fmt: skip
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, release, "9.0")
    doc = json.loads(box.read_text())
    packages = doc["facts"]["packages"]
    packages["deep-ep"] = deep_ep or {"installed": False}
    packages["sgl-deep-ep"] = sgl
    packages["torch"]["cuda"] = "13.0"
    box.write_text(json.dumps(doc))
    out = gate_tp8(box, model_dir(tmp_path, "qwen3moe", QWEN3_MOE), "--moe-a2a-backend", "deepep_v2")
    return next((c for c in (out.get("preflight") or {}).get("checks") or [] if c.get("check") == A2A), None)


def _sgl(version: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"installed": True, "build_cuda_major": 13}
    if version is not None:
        out["version"] = version
    return out


def test_sgl_deep_ep_without_elastic_buffer_fails(tmp_path: Path) -> None:
    check = _check(tmp_path, _sgl("0.1.0"))
    assert check is not None and check["status"] == "fail", check
    assert "sgl-deep-ep 0.1.0" in check["message"] and "ElasticBuffer" in check["message"]
    assert check["required"] == "sgl-deep-ep>=0.1.1"


@pytest.mark.parametrize("version", ["0.1.1", "0.1.2", "0.1.2.post1"])
def test_sgl_deep_ep_with_elastic_buffer_passes(tmp_path: Path, version: str) -> None:
    check = _check(tmp_path, _sgl(version))
    assert check is not None and check["status"] == "ok", check  # (built for torch's CUDA 13: the prebuilt check)


def test_deep_ep_from_source_below_2_fails_and_2_passes(tmp_path: Path) -> None:
    old = _check(tmp_path / "a", {"installed": False}, {"installed": True, "version": "1.2.1+abc1234"})
    assert old is not None and old["status"] == "fail" and old["required"] == "deep-ep>=2.0.0", old
    new = _check(tmp_path / "b", {"installed": False}, {"installed": True, "version": "2.1.0+dd758ca"})
    assert new is not None and new["status"] == "ok", new


def test_a_version_not_read_or_two_that_disagree_is_unknown(tmp_path: Path) -> None:
    check = _check(tmp_path / "a", _sgl(None))
    assert check is not None and check["status"] == "unknown", check
    both = _check(tmp_path / "b", _sgl("0.1.2"), {"installed": True, "version": "1.2.1"})
    assert both is not None and both["status"] == "unknown" and "both installed" in both["message"], both


def test_none_installed_fails(tmp_path: Path) -> None:
    check = _check(tmp_path, {"installed": False})
    assert check is not None and check["status"] == "fail" and "not installed" in check["message"]


def test_releases_without_deepep_v2_have_no_entry() -> None:
    from stackcheck.verdicts.package_checks import check_a2a_package

    data = json.loads((Path(__file__).resolve().parents[2] / "manifests" / "preflight.json").read_text())
    facts = {"packages": {"sgl-deep-ep": _sgl("0.1.0"), "deep-ep": {"installed": False}}}
    assert check_a2a_package("deepep_v2", facts, data, "0.5.18") is None
    got = check_a2a_package("deepep_v2", facts, data, "0.5.19")
    assert got is not None and got.status == "fail"


@pytest.mark.registry
@pytest.mark.parametrize(("version", "has"), [("0.1.0", False), ("0.1.1", True), ("0.1.2.post1", True)])
def test_registry_which_sgl_deep_ep_exports_elastic_buffer(version: str, has: bool) -> None:
    import zipfile

    from registry_wheels import fetch_wheel

    with zipfile.ZipFile(fetch_wheel("sgl-deep-ep", version)) as zf:
        init = zf.read("deep_ep/__init__.py").decode()
    assert ("import ElasticBuffer" in init) is has


# ---- --moe-a2a-backend deepep with DeepEP 2.x: no deep_ep_cpp to look for -------------------------------------
# DeepEP's setup.py builds the top-level deep_ep_cpp up to 1.2.1 and deep_ep._C from 2.0.0 (b306af0), whose
# deep_ep/__init__.py imports deep_ep._C; the check failed DeepEP 2.x for its missing deep_ep_cpp (an over-refusal).
# On the parent (5e61616) the first and the third fail (fail: an over-refusal; fail where it is not decided); the
# second is a guard (fails there too, as here).


def _v1(version: str | None) -> Any:
    from stackcheck.verdicts.package_checks import check_a2a_package

    data = json.loads((Path(__file__).resolve().parents[2] / "manifests" / "preflight.json").read_text())
    deep_ep: dict[str, Any] = {"installed": True, "location": "/sp", "extension_files": []}
    if version is not None:
        deep_ep["version"] = version
    facts = {
        "packages": {"deep-ep": deep_ep, "sgl-deep-ep": {"installed": False}},
        "system": {"python": "3.12.3", "machine": "x86_64"},
    }
    return check_a2a_package("deepep", facts, data, "0.5.23")


def test_deep_ep_2_is_not_failed_for_deep_ep_cpp() -> None:
    got = _v1("2.1.0+dd758ca")
    assert got.status == "ok" and "builds no deep_ep_cpp" in got.message, got


def test_deep_ep_1_without_deep_ep_cpp_still_fails() -> None:
    got = _v1("1.2.1")
    assert got.status == "fail" and "deep_ep_cpp" in got.observed, got


def test_deep_ep_of_unknown_version_without_deep_ep_cpp_is_unknown() -> None:
    got = _v1(None)
    assert got.status == "unknown" and "does not build it" in got.message, got
