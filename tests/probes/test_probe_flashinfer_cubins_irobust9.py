"""irobust9: a cubin directory whose listed names are there but are no file FlashInfer can load. FlashInfer's
load_cubin opens `<dir>/<ArtifactPath.F><name>` and reads it (0.6.13 jit/cubin_loader.py:181-204): a dangling
symlink, a directory, a FIFO (open blocks) or an empty file gives b"", which get_artifact treats as missing (download,
or under FLASHINFER_NO_DOWNLOAD RuntimeError 'Artifact not found locally' :221-228). The probe took the directory's
listing alone as 'present', so such a family was ready (true): a false pass of the gate. Trees written here in the
shape of FlashInfer's files (no upstream file copied)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes.flashinfer_cubins import probe_cubins
from stackcheck.readers.fsview import HostView

FMHA = "feed0001/fmha/trtllm-gen/"
NAMES = ["kernels/one.cubin", "kernels/two.cubin", "flashinferMetaInfo.h"]
ENV = {"HOME": "/root", "FLASHINFER_NO_DOWNLOAD": "1"}


def _tree(tmp: Path) -> tuple[dict[str, Any], Path]:
    manifest = "".join(f"{hashlib.sha256(n.encode()).hexdigest()} {n}\r\n" for n in NAMES).encode()
    site = tmp / "site"
    (site / "flashinfer").mkdir(parents=True)
    (site / "flashinfer" / "artifacts.py").write_text(
        "class ArtifactPath:\n"
        f'    TRTLLM_GEN_FMHA: str = "{FMHA}"\n\n'
        "class CheckSumHash:\n"
        f'    TRTLLM_GEN_FMHA: str = "{hashlib.sha256(manifest).hexdigest()}"\n'
    )
    fam = site / "flashinfer_cubin" / "cubins" / FMHA
    (fam / "kernels").mkdir(parents=True)
    (fam / "checksums.txt").write_bytes(manifest)
    pkg = {"installed": True, "version": "0.6.13", "location": str(site)}
    return {"packages": {"flashinfer-python": dict(pkg), "flashinfer-cubin": dict(pkg)}}, fam


def _spoil(path: Path, how: str, tmp: Path) -> None:
    if how == "dangling":
        path.symlink_to(tmp / "gone.cubin")
    elif how == "loop":
        path.symlink_to(path)
    elif how == "directory":
        path.mkdir()
    elif how == "fifo":
        os.mkfifo(path)
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "devnull":
        path.symlink_to("/dev/null")


HOW = ["dangling", "loop", "directory", "fifo", "empty", "devnull"]


def test_every_listed_file_loadable_is_ready(tmp_path: Path) -> None:
    facts, fam = _tree(tmp_path)
    for name in NAMES:
        (fam / name).write_bytes(b"x")
    got = probe_cubins(facts, ENV, HostView())
    assert got is not None and got["ready"]["TRTLLM_GEN_FMHA"] is True


@pytest.mark.parametrize("how", HOW)
def test_one_listed_name_that_is_no_loadable_file_is_not_ready(tmp_path: Path, how: str) -> None:
    facts, fam = _tree(tmp_path)
    (fam / NAMES[0]).write_bytes(b"x")
    (fam / NAMES[2]).write_bytes(b"x")
    _spoil(fam / NAMES[1], how, tmp_path)
    got = probe_cubins(facts, ENV, HostView())
    assert got is not None
    assert got["ready"]["TRTLLM_GEN_FMHA"] is None  # (which file a kernel loads is not known: unknown, never ok)
    family = got["families"]["TRTLLM_GEN_FMHA"]
    assert family["missing"] == 1 and family["missing_first"] == [NAMES[1]]


@pytest.mark.parametrize("how", HOW)
def test_every_listed_name_no_loadable_file_refuses_without_downloads(tmp_path: Path, how: str) -> None:
    facts, fam = _tree(tmp_path)
    for name in NAMES:
        _spoil(fam / name, how, tmp_path)
    got = probe_cubins(facts, ENV, HostView())
    assert got is not None
    assert got["ready"]["TRTLLM_GEN_FMHA"] is False
    assert "FLASHINFER_NO_DOWNLOAD" in got["ready_reason"]["TRTLLM_GEN_FMHA"]


def test_the_same_below_a_root(tmp_path: Path) -> None:
    # --root: a link is resolved inside the root; one leading out of it to nothing is no file there
    facts, fam = _tree(tmp_path)
    (fam / NAMES[0]).write_bytes(b"x")
    (fam / NAMES[2]).write_bytes(b"x")
    (fam / NAMES[1]).symlink_to("/nonexistent-irobust9/one.cubin")
    root_facts: dict[str, Any] = {"packages": {}}
    for key, pkg in facts["packages"].items():
        root_facts["packages"][key] = {**pkg, "location": "/" + str(Path(pkg["location"]).relative_to(tmp_path))}
    got = probe_cubins(root_facts, ENV, HostView(str(tmp_path)))
    assert got is not None and got["ready"]["TRTLLM_GEN_FMHA"] is None
