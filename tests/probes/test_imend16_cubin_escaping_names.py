"""imend16: a checksums.txt line whose name is absolute or holds a '..' component was skipped, so a family whose
other names were all there read ready (a false pass: where such a name leads, and what the loader finds there, is
not judged). Such a family is now unknown, its reason naming checksums.txt and the line; a '..' inside a file name
is no component and changes nothing; the kept answer says the same. Trees written here in FlashInfer's shape (no
upstream file)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from stackcheck.probes import flashinfer_cubins as fc
from stackcheck.readers import kept
from stackcheck.readers.fsview import HostView

REL = "00ff/fmha/trtllm-gen/"


@pytest.fixture(autouse=True)
def _old_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept, "RACY_NS", 0)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")


def _site(tmp_path: Path, extra: str) -> tuple[dict[str, object], dict[str, str], Path]:
    base = tmp_path / "cubins"
    fam = base / REL
    (fam / "kernels").mkdir(parents=True)
    for name in ("one.cubin", "kernels/two.cubin", "kernels/two..dots.cubin"):
        (fam / name).write_bytes(b"\x7fELF")
    (base / "00ff" / "fmha" / "stray.cubin").write_bytes(b"\x7fELF")
    lines = ["aa one.cubin", "bb kernels/two.cubin", "cc kernels/two..dots.cubin"]
    if extra:
        lines.insert(2, extra)
    (fam / "checksums.txt").write_text("\n".join(lines) + "\n")
    site = tmp_path / "site"
    (site / "flashinfer").mkdir(parents=True)
    (site / "flashinfer" / "artifacts.py").write_text(f'class ArtifactPath:\n    TRTLLM_GEN_FMHA: str = "{REL}"\n')
    pkg = {"installed": True, "version": "0.6.13", "location": str(site)}
    env = {"HOME": str(tmp_path), "FLASHINFER_CUBIN_DIR": str(base), "FLASHINFER_NO_DOWNLOAD": "1"}
    return {"packages": {"flashinfer-python": pkg}}, env, base


@pytest.mark.parametrize(
    "name", ["../stray.cubin", "/abs/one.cubin", "kernels/../one.cubin", "..", "kernels/..", "./../stray.cubin"]
)
def test_an_escaping_name_makes_the_family_unknown(tmp_path: Path, name: str) -> None:
    facts, env, _base = _site(tmp_path, f"{hashlib.sha256(name.encode()).hexdigest()} {name}")
    got = fc.probe_cubins(facts, env, HostView())
    assert got is not None and got["ready"]["TRTLLM_GEN_FMHA"] is None
    why = got["ready_reason"]["TRTLLM_GEN_FMHA"]
    assert f"checksums.txt line 3 names {name!r}" in why and "'..'" in why
    family = got["families"]["TRTLLM_GEN_FMHA"]
    assert family["manifest"] is None and family["listed"] == 3 and family["missing"] == 0
    cache = str(tmp_path / "cache")
    assert fc.probe_cubins(facts, env, HostView(), cache_dir=cache) == got
    assert fc.probe_cubins(facts, env, HostView(), cache_dir=cache) == got  # (served from the kept answer)


@pytest.mark.parametrize("extra", ["", "dd kernels/two..dots.cubin", "malformed line here", "ee"])
def test_names_inside_the_directory_keep_the_family_ready(tmp_path: Path, extra: str) -> None:
    facts, env, _base = _site(tmp_path, extra)
    got = fc.probe_cubins(facts, env, HostView())
    assert got is not None and got["ready"]["TRTLLM_GEN_FMHA"] is True


def test_the_first_escaping_line_is_named_and_long_names_are_cut(tmp_path: Path) -> None:
    long = "../" + "x" * 200 + ".cubin"
    facts, env, base = _site(tmp_path, f"ff {long}")
    with (base / REL / "checksums.txt").open("a") as out:
        out.write("gg /later.cubin\n")
    got = fc.probe_cubins(facts, env, HostView())
    assert got is not None
    why = got["ready_reason"]["TRTLLM_GEN_FMHA"]
    assert "line 3 names '../xxx" in why and "later" not in why and len(why) < 400
