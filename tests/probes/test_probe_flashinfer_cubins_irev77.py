"""irev77's review of the flashinfer_cubins probe (stackcheck/probes/flashinfer_cubins.py), on small trees written
here in the shape of FlashInfer's files: the false refusals and false passes found against the real wheels
(flashinfer-python 0.6.0-0.7.4, flashinfer-cubin 0.6.13)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes import flashinfer_cubins as fc
from stackcheck.probes.flashinfer_cubins import probe_cubins
from stackcheck.readers.fsview import HostView

FMHA = "0123abcd/fmha/trtllm-gen/"


def artifacts_text(fmha_sha: str) -> str:
    return (
        "from dataclasses import dataclass\n\n"
        "@dataclass(frozen=True)\nclass ArtifactPath:\n"
        f'    TRTLLM_GEN_FMHA: str = "{FMHA}"\n'
        '    TRTLLM_GEN_BMM: str = "0123abcd/batched_gemm/"\n\n'
        "@dataclass(frozen=True)\nclass CheckSumHash:\n"
        f'    TRTLLM_GEN_FMHA: str = "{fmha_sha}"\n'
    )


def package_tree(tmp: Path, manifest: bytes, files: list[str], release: str = "0.6.13") -> dict[str, Any]:
    """flashinfer-python's artifacts.py and a flashinfer-cubin package of the same release holding the FMHA family."""
    site = tmp / "site"
    (site / "flashinfer").mkdir(parents=True)
    (site / "flashinfer" / "artifacts.py").write_text(artifacts_text(hashlib.sha256(manifest).hexdigest()))
    fam = site / "flashinfer_cubin" / "cubins" / FMHA
    fam.mkdir(parents=True)
    (fam / "checksums.txt").write_bytes(manifest)
    for name in files:
        (fam / name).parent.mkdir(parents=True, exist_ok=True)
        (fam / name).write_bytes(b"x")
    pkg = {"installed": True, "version": release, "location": str(site)}
    return {"packages": {"flashinfer-python": dict(pkg), "flashinfer-cubin": dict(pkg)}}


def test_a_large_fmha_manifest_is_read(tmp_path: Path) -> None:
    # flashinfer-cubin 0.6.13's FMHA checksums.txt is 2,376,413 bytes (13,453 lines): over the first cap of 1 MiB,
    # which made the package's complete FMHA family 'missing' (blocked under FLASHINFER_NO_DOWNLOAD)
    names = [f"kernel_{i:05d}.cubin" for i in range(40)]
    lines = [f"{'ab' * 32} {names[i % len(names)]}\n" for i in range(30000)]
    manifest = "".join(lines).encode()
    assert len(manifest) > 2 * (1 << 20)
    facts = package_tree(tmp_path, manifest, names)
    got = probe_cubins(facts, {"HOME": "/root", "FLASHINFER_NO_DOWNLOAD": "1"}, HostView())
    assert got is not None and got["dir_source"] == "flashinfer-cubin"
    assert got["ready"]["TRTLLM_GEN_FMHA"] is True
    assert got["families"]["TRTLLM_GEN_FMHA"]["listed"] == 30000


def test_a_manifest_over_the_cap_is_unknown_never_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = b"aa kernel_one.cubin\n" * 100
    facts = package_tree(tmp_path, manifest, ["kernel_one.cubin"])
    monkeypatch.setattr(fc, "_MANIFEST_LIMIT", 64)
    got = probe_cubins(facts, {"HOME": "/root", "FLASHINFER_NO_DOWNLOAD": "1"}, HostView())
    assert got is not None
    assert got["ready"]["TRTLLM_GEN_FMHA"] is None  # present but not read: not 'missing', never blocked
    assert "not read" in got["ready_reason"]["TRTLLM_GEN_FMHA"]
    from stackcheck.facts.minischema import is_valid
    from stackcheck.facts.schema_check import report_schema

    schema = report_schema()
    section_schema = schema["$defs"]["facts"]["properties"]["flashinfer_cubins"]
    assert is_valid(got, section_schema, schema)  # "manifest": null is a value the report schema takes
