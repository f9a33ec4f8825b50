"""imend12: FLASHINFER_CUBIN_CHECKSUM_DISABLED decides one thing the cubin probe reads: a family's checksums.txt,
which the probe hashes against the release's CheckSumHash. FlashInfer's load_cubin (jit/cubin_loader.py, 0.5.0 to
0.7.4) returns any file it opens without hashing it when the variable is set, so a checksums.txt of another release is
taken as it is (not fetched again, not refused under FLASHINFER_NO_DOWNLOAD), with the files it lists. The probe
called it missing (ready false under FLASHINFER_NO_DOWNLOAD, a local repository holding one "lacking them"): now
unknown with the reason. Trees written here in the shape of the releases' files."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes.flashinfer_cubins import probe_cubins
from stackcheck.readers.fsview import HostView

FMHA = "0123abcd/fmha/trtllm-gen/"
RELEASED = b"aa kernel_one.cubin\nbb include/meta_info.h\n"
OTHER = b"cc kernel_two.cubin\ndd include/meta_info.h\n"  # (another release's manifest)
NOCHECK = {"FLASHINFER_CUBIN_CHECKSUM_DISABLED": "1"}
REFUSED = {"FLASHINFER_NO_DOWNLOAD": "1"}


def site(tmp: Path) -> Path:
    root = tmp / "site"
    (root / "flashinfer").mkdir(parents=True)
    (root / "flashinfer" / "artifacts.py").write_text(
        f'class ArtifactPath:\n    TRTLLM_GEN_FMHA: str = "{FMHA}"\n'
        f'class CheckSumHash:\n    TRTLLM_GEN_FMHA: str = "{hashlib.sha256(RELEASED).hexdigest()}"\n'
    )
    return root


def fill(base: Path, manifest: bytes) -> None:
    (base / FMHA / "include").mkdir(parents=True, exist_ok=True)
    (base / FMHA / "checksums.txt").write_bytes(manifest)
    for line in manifest.decode().splitlines():
        (base / FMHA / line.split()[1]).write_bytes(b"x")


def ready(tmp: Path, env: dict[str, str]) -> tuple[Any, str | None]:
    facts = {"packages": {"flashinfer-python": {"installed": True, "version": "0.7.2", "location": str(site(tmp))}}}
    out = probe_cubins(facts, {"HOME": str(tmp / "home"), **env}, HostView())
    assert out is not None
    return out["ready"]["TRTLLM_GEN_FMHA"], out["ready_reason"].get("TRTLLM_GEN_FMHA")


def cache(tmp: Path) -> Path:
    return tmp / "home" / ".cache" / "flashinfer" / "cubins"


def test_another_releases_manifest_taken_unchecked_is_unknown_not_missing(tmp_path: Path) -> None:
    fill(cache(tmp_path), OTHER)
    got, why = ready(tmp_path, {**REFUSED, **NOCHECK})
    assert got is None, why  # fails before: False ('checksums.txt does not match ... Artifact not found locally')
    assert why is not None and "FLASHINFER_CUBIN_CHECKSUM_DISABLED" in why and "takes it as it is" in why


def test_a_loader_that_checks_still_finds_it_missing(tmp_path: Path) -> None:
    fill(cache(tmp_path), OTHER)
    got, why = ready(tmp_path, REFUSED)
    assert got is False and why is not None and "CheckSumHash" in why


@pytest.mark.parametrize("env", [{}, NOCHECK, {**REFUSED, **NOCHECK}])
def test_the_releases_manifest_with_its_files_is_ready_either_way(tmp_path: Path, env: dict[str, str]) -> None:
    fill(cache(tmp_path), RELEASED)
    assert ready(tmp_path, env)[0] is True


def test_a_local_repository_holding_another_releases_manifest_is_not_lacking(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    fill(mirror, OTHER)
    cache(tmp_path).mkdir(parents=True)
    env = {"FLASHINFER_CUBINS_REPOSITORY": str(mirror), **NOCHECK}
    got, why = ready(tmp_path, env)
    assert got is None, why  # fails before: False ('the local FLASHINFER_CUBINS_REPOSITORY ... lacks them too')
    got, why = ready(tmp_path / "b", {"FLASHINFER_CUBINS_REPOSITORY": str(mirror)})
    assert got is False, why  # (a loader that checks: the mirror's manifest is missing to it)
