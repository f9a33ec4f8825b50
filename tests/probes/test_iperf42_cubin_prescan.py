"""iperf42 (issue 21): the cubin probe's kept answer is checked against each kept directory's stamp and its names that
are no non-empty regular file (imend16: a cubin emptied in place, one lstat per name). That check now runs in a
thread the runner starts beside the first wave (FlashinferCubinsProbe.prepare -> KeptFamilies.prescan), not after
the packages probe. The answers must stay the reading's: every kind of name scanned as a plain listdir + lstat does
(the scan is still fstatat relative to the directory held open: os.scandir's d_type was measured no cheaper), and a
file emptied in place still seen through prepare + run. Trees written here in the shape of FlashInfer's (no upstream
file)."""

from __future__ import annotations

import importlib.util
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes import flashinfer_cubins as fc
from stackcheck.probes import lazy_registry
from stackcheck.probes.interface import ProbeContext, view_of
from stackcheck.readers import kept

REL = "00ff/fmha/trtllm-gen/"
MANIFEST = b"aa one.cubin\nbb two.cubin\ncc kernels/three.cubin\n"
_CLOCK = [1_700_000_000_000_000_000]


@pytest.fixture(autouse=True)
def _old_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept, "RACY_NS", 0)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")


def _touch(*paths: Path) -> None:
    for path in paths:
        _CLOCK[0] += 1_000_000_000
        os.utime(path, ns=(_CLOCK[0], _CLOCK[0]), follow_symlinks=False)


def _box(tmp_path: Path) -> tuple[Path, dict[str, Any], dict[str, str]]:
    base = tmp_path / "cubins"
    fam = base / REL
    (fam / "kernels").mkdir(parents=True)
    (fam / "checksums.txt").write_bytes(MANIFEST)
    for name in ("one.cubin", "two.cubin", "kernels/three.cubin"):
        (fam / name).write_bytes(b"\x7fELF" * 8)
    _touch(*(fam / n for n in ("one.cubin", "two.cubin", "kernels/three.cubin", "checksums.txt")))
    _touch(fam / "kernels", fam)
    site = tmp_path / "site"
    (site / "flashinfer").mkdir(parents=True)
    (site / "flashinfer" / "artifacts.py").write_text(f'class ArtifactPath:\n    TRTLLM_GEN_FMHA: str = "{REL}"\n')
    pkg = {"installed": True, "version": "0.6.13", "location": str(site)}
    facts = {"packages": {"flashinfer-python": pkg}, "python": {}}
    env = {"HOME": str(tmp_path), "FLASHINFER_CUBIN_DIR": str(base), "FLASHINFER_NO_DOWNLOAD": "1"}
    return base, facts, env


def _ctx(tmp_path: Path, facts: dict[str, Any], env: dict[str, str]) -> ProbeContext:
    return ProbeContext(env={}, launch_env=env, facts=facts, cache_dir=str(tmp_path / "cache"))


def _prepared_run(ctx: ProbeContext, calls: list[str]) -> dict[str, Any]:
    probe = fc.FlashinferCubinsProbe()
    probe.prepare(ctx)
    calls.append("run")
    got = probe.run(ctx).facts["flashinfer_cubins"]
    assert isinstance(got, dict)
    return got


def test_the_runner_prepares_the_cubin_probe() -> None:
    assert lazy_registry()["flashinfer_cubins"].prepares
    assert fc.FlashinferCubinsProbe.prepares


def test_the_kept_directories_are_scanned_in_prepare_and_an_emptied_file_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, facts, env = _box(tmp_path)
    ctx = _ctx(tmp_path, facts, env)
    calls: list[str] = []
    real = fc._dir_state

    def spied(path: str) -> Any:
        calls.append(threading.current_thread().name)
        return real(path)

    monkeypatch.setattr(fc, "_dir_state", spied)
    first = _prepared_run(ctx, calls)  # (nothing kept yet: prepare starts no thread)
    assert first["ready"]["TRTLLM_GEN_FMHA"] is True
    assert calls == ["run"]
    calls.clear()
    assert _prepared_run(ctx, calls) == first
    # both kept directories (the family's and kernels/) scanned in prepare's thread, none again in run
    assert sorted(calls) == ["probe-flashinfer-cubins-prescan"] * 2 + ["run"]
    os.truncate(base / REL / "kernels" / "three.cubin", 0)
    _touch(base / REL / "kernels" / "three.cubin")
    calls.clear()
    again = _prepared_run(ctx, calls)
    assert sorted(calls) == ["probe-flashinfer-cubins-prescan"] * 2 + ["run"]
    assert again["ready"]["TRTLLM_GEN_FMHA"] is not True
    assert again["families"]["TRTLLM_GEN_FMHA"]["missing_first"] == ["kernels/three.cubin"]
    assert again == fc.probe_cubins(facts, env, view_of(ctx))


def test_a_prescan_of_a_changed_manifest_scans_nothing(tmp_path: Path) -> None:
    base, facts, env = _box(tmp_path)
    ctx = _ctx(tmp_path, facts, env)
    _prepared_run(ctx, [])
    keep = fc.KeptFamilies.open(view_of(ctx), ctx.cache_dir)
    assert keep is not None and keep.prescan() == 2
    (base / REL / "checksums.txt").write_bytes(MANIFEST + b"dd four.cubin\n")
    keep = fc.KeptFamilies.open(view_of(ctx), ctx.cache_dir)
    assert keep is not None and keep.prescan() == 0


def test_no_prescan_without_a_kept_document_or_a_cache(tmp_path: Path) -> None:
    _base, facts, env = _box(tmp_path)
    probe = fc.FlashinferCubinsProbe()
    probe.prepare(_ctx(tmp_path, facts, env))
    assert probe._early is None
    probe.prepare(ProbeContext(env={}, launch_env=env, facts=facts, cache_dir=""))
    assert probe._early is None


def _reference_scan(directory: str) -> tuple[set[str], list[str], set[str]]:
    """imend16's scan: listdir, then one lstat per name."""
    names = os.listdir(directory)
    odd, links = [], set()
    for name in names:
        try:
            st = os.lstat(os.path.join(directory, name))
        except OSError:
            odd.append(name)
            continue
        if not (stat.S_ISREG(st.st_mode) and st.st_size > 0):
            odd.append(name)
            if stat.S_ISLNK(st.st_mode):
                links.add(name)
    return set(names), sorted(odd), links


def test_the_scan_judges_every_kind_of_name_as_listdir_and_lstat_do(tmp_path: Path) -> None:
    path = Path(__file__).with_name("test_flashinfer_cubins_dirfd.py")
    spec = importlib.util.spec_from_file_location("iperf42_dirfd_kinds", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fam, _names = module._family(tmp_path)
    seen = 0
    for root, _dirs, _files in os.walk(fam):
        got = fc._scan(root)
        assert got == _reference_scan(root)
        seen += len(got[1]) if got else 0
    assert seen > 20  # (links, empty files, a directory, a FIFO among them)
    assert fc._scan(str(tmp_path / "absent")) is None
