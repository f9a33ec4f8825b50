"""The packages probe lists the packages whose compiled torch extensions the kernel symbol probe reads (torchao,
LMCache: readers/kernelsymbols.py EXTENSIONS), with their versions, and their site-packages directory is then one
the extension search looks in, where it is not torch's (igap22)."""

from __future__ import annotations

from pathlib import Path

from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.packages import WANTED, PackagesProbe, normalise
from stackcheck.readers.kernelsymbols import EXTENSIONS, _site_dirs


def _dist(sp: Path, name: str, version: str) -> None:
    info = sp / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\n", encoding="utf-8")


def _packages(dirs: list[Path]) -> dict[str, dict[str, object]]:
    result = PackagesProbe().run(ProbeContext(env={}, path_dirs=[str(d) for d in dirs]))
    packages: dict[str, dict[str, object]] = result.facts["packages"]
    return packages


def test_torchao_and_lmcache_are_listed_with_their_versions(tmp_path: Path) -> None:
    sp = tmp_path / "site-packages"
    _dist(sp, "torch", "2.8.0")
    _dist(sp, "torchao", "0.13.0")
    _dist(sp, "lmcache", "0.3.9")
    packages = _packages([sp])
    assert packages["torchao"]["installed"] is True and packages["torchao"]["version"] == "0.13.0"
    assert packages["lmcache"]["installed"] is True and packages["lmcache"]["version"] == "0.3.9"
    assert packages["torchao"]["location"] == str(sp)


def test_not_installed_is_said(tmp_path: Path) -> None:
    sp = tmp_path / "site-packages"
    _dist(sp, "torch", "2.8.0")
    packages = _packages([sp])
    assert packages["torchao"] == {"installed": False} and packages["lmcache"] == {"installed": False}


def test_an_extension_in_another_site_packages_is_searched(tmp_path: Path) -> None:
    """LMCache in the user site, torch in the system's: the extension search covers the user site only through
    LMCache's own entry (no other wanted package there), else c_ops is never found and its check passes."""
    system, user = tmp_path / "system", tmp_path / "user"
    _dist(system, "torch", "2.8.0")
    _dist(user, "lmcache", "0.3.9")
    packages = _packages([user, system])
    assert str(user) in _site_dirs(packages, str(system))


def test_every_read_extension_whose_distribution_name_is_its_import_name_is_wanted() -> None:
    """EXTENSIONS is keyed by import name; where the distribution has the same name, the probe lists it (deep_ep:
    deep-ep / sgl-deep-ep; deep_gemm: deep-gemm / sgl-deep-gemm; flash_attn: flash-attn, not read here)."""
    wanted = {normalise(n) for n in WANTED}
    for name in ("lmcache", "torchao", "vllm", "deep_ep", "deep_gemm"):
        assert name in EXTENSIONS
        assert normalise(name) in wanted, name
