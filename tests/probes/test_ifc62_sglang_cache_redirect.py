"""ifc62 (the sixty-second sample, population c): SGLang 0.5.18-0.5.23's `import sglang` sets FLASHINFER_WORKSPACE_BASE
to its own cache directory (expanduser(SGLANG_CACHE_DIR), default ~/.cache/sglang) where it is unset, before FlashInfer
is imported (sglang/__init__.py:10-14, environ.py redirect_third_party_caches), so the server's FlashInfer looks for
its cubins in ~/.cache/sglang/.cache/flashinfer/cubins. The probe read ~/.cache/flashinfer/cubins: cubins there were
called present (the trtllm-gen features ok) while the server finds none and downloads them, or under
FLASHINFER_NO_DOWNLOAD raises 'Artifact not found locally'. The files below are written here in FlashInfer's shape."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import stackcheck_json

from stackcheck.probes.flashinfer_cubins import probe_cubins
from stackcheck.readers.fsview import HostView

LIST = b"11 one.cubin\n22 include/flashInferMetaInfo.h\n"
FAMILY = "feed01/fmha/trtllm-gen/"


def _site(tmp: Path) -> Path:
    site = tmp / "site"
    (site / "flashinfer").mkdir(parents=True)
    sha = hashlib.sha256(LIST).hexdigest()
    (site / "flashinfer" / "artifacts.py").write_text(
        f'class ArtifactPath:\n    TRTLLM_GEN_FMHA: str = "{FAMILY}"\n\nclass CheckSumHash:\n'
        f'    TRTLLM_GEN_FMHA: str = "{sha}"\n'
    )
    return site


def _fill(cubins: Path) -> None:
    fam = cubins / FAMILY
    (fam / "include").mkdir(parents=True)
    (fam / "checksums.txt").write_bytes(LIST)
    (fam / "one.cubin").write_bytes(b"x")
    (fam / "include" / "flashInferMetaInfo.h").write_bytes(b"x")


def _facts(site: Path, sglang: str | None) -> dict[str, Any]:
    pkgs: dict[str, Any] = {"flashinfer-python": {"installed": True, "version": "0.6.17", "location": str(site)}}
    if sglang is not None:
        pkgs["sglang"] = {"installed": True, "version": sglang}
    return {"packages": pkgs}


def _ready(tmp: Path, sglang: str | None, env: dict[str, str]) -> tuple[Any, Any]:
    section = probe_cubins(_facts(_site(tmp), sglang), env, HostView())
    assert section is not None
    return section["ready"]["TRTLLM_GEN_FMHA"], section["dir"]


@pytest.mark.parametrize("sglang", ["0.5.18", "0.5.20", "0.5.23"])
def test_cubins_in_flashinfers_own_cache_are_not_the_servers(tmp_path: Path, sglang: str) -> None:
    home = tmp_path / "home"
    _fill(home / ".cache" / "flashinfer" / "cubins")
    ready, where = _ready(tmp_path, sglang, {"HOME": str(home)})
    assert ready is None and where == f"{home}/.cache/sglang/.cache/flashinfer/cubins"
    ready, _ = _ready(tmp_path / "nodl", sglang, {"HOME": str(home), "FLASHINFER_NO_DOWNLOAD": "1"})
    assert ready is False  # (the manifest missing there: RuntimeError 'Artifact not found locally')


def test_cubins_in_sglangs_cache_are_found(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _fill(home / ".cache" / "sglang" / ".cache" / "flashinfer" / "cubins")
    assert _ready(tmp_path, "0.5.18", {"HOME": str(home)})[0] is True
    # 0.5.17 has no redirect: FlashInfer's own cache
    assert _ready(tmp_path / "old", "0.5.17", {"HOME": str(home)})[0] is None


def test_the_variables_that_move_it(tmp_path: Path) -> None:
    from stackcheck.probes.flashinfer_cubins import sglang_workspace_base

    home = tmp_path / "home"
    _fill(tmp_path / "ws" / ".cache" / "flashinfer" / "cubins")
    # FLASHINFER_WORKSPACE_BASE set: setdefault keeps it
    assert _ready(tmp_path / "a", "0.5.23", {"HOME": str(home), "FLASHINFER_WORKSPACE_BASE": str(tmp_path / "ws")})[0]
    # SGLANG_CACHE_DIR, and SGL_CACHE_DIR copied over it by the release's import
    assert _ready(tmp_path / "b", "0.5.23", {"HOME": str(home), "SGLANG_CACHE_DIR": str(tmp_path / "ws")})[0]
    assert _ready(tmp_path / "c", "0.5.23", {"HOME": str(home), "SGL_CACHE_DIR": str(tmp_path / "ws")})[0]
    # no sglang installed: FlashInfer's own default, unchanged
    assert sglang_workspace_base(None, {"HOME": "/h"}) == ({"HOME": "/h"}, None)
    # HOME not known, an SGLang release not known: not known, never the old directory
    assert sglang_workspace_base({"installed": True, "version": "0.5.18"}, {})[1] is not None
    assert sglang_workspace_base({"installed": True, "version": None}, {"HOME": "/h"})[1] is not None
    assert _ready(tmp_path / "d", None, {"HOME": str(home)})[1] == f"{home}/.cache/flashinfer/cubins"


def test_a_launch_setting_sglang_cache_dir_leaves_the_rule_unknown(tmp_path: Path) -> None:
    case = Path(__file__).resolve().parents[1] / "cases" / "b200-cubin-package" / "facts.json"
    line = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--attention-backend", "trtllm_mha"]
    doc = stackcheck_json("gate", "--facts", str(case), "--format", "json", "--", "env", "SGLANG_CACHE_DIR=/x", *line)
    feature = next(f for f in doc["reasons"] if f["feature"] == "attention-trtllm-mha")
    rule = next(r for r in feature["reasons"] if r.get("rule") == "fmha-cubins")
    assert rule["result"] == "unknown" and "SGLANG_CACHE_DIR" in json.dumps(rule)
