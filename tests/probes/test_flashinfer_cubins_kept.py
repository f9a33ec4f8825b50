"""The flashinfer_cubins probe keeps what it read of this host's cubin directory between runs (issue 21, iperf38):
a family's status under the stamps of its checksums.txt and of every directory its names lie in, artifacts.py's
constants under that file's stamp (stackcheck.readers.kept). The kept answers are compared with the straightforward
reading (family_status without a keeper) on generated families, before and after random changes to their files; a
kept answer is served without reading, listing or hashing anything; a view other than this host's keeps nothing;
a directory changed too recently is never kept. The trees are written here in the shape of FlashInfer's files."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes import flashinfer_cubins as fc
from stackcheck.readers import kept
from stackcheck.readers.fsview import HostView

REL = "00ff/fmha/trtllm-gen/"


@pytest.fixture(autouse=True)
def _old_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files made by the test are seconds old at most: never kept (RACY_NS) unless it is 0 here; the caches are
    turned off by conftest.py unless a test turns them on. Every change below moves the changed files' and
    directories' times on by a whole second (_touch), as a change made later would."""
    monkeypatch.setattr(kept, "RACY_NS", 0)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")


_CLOCK = [1_700_000_000_000_000_000]


def _touch(*paths: Path) -> None:
    """Set each existing path's times to a new second (coarse file-system clocks could otherwise give a change made
    in the same tick the same times as the stamp before it; see readers/kept.py's RACY_NS)."""
    for path in paths:
        _CLOCK[0] += 1_000_000_000
        if os.path.lexists(path):
            os.utime(path, ns=(_CLOCK[0], _CLOCK[0]), follow_symlinks=False)


def _family(rng: random.Random, base: Path) -> tuple[Path, list[str], bytes]:
    """A family directory under `base` with a checksums.txt listing names in 0-3 sub-directories (some lines
    malformed, absolute or with '..'), a random part of the listed files present; (dir, names, manifest bytes)."""
    fam = base / REL
    fam.mkdir(parents=True, exist_ok=True)
    subs = ["", "include", "a/b", "kernels/sm100"][: rng.randint(1, 4)]
    names = [posixpathjoin(rng.choice(subs), f"k{i}_{rng.randint(0, 99)}.cubin") for i in range(rng.randint(0, 40))]
    lines = [f"{rng.getrandbits(64):016x} {n}" for n in names]
    if rng.random() < 0.3:
        lines += ["garbage", "aa /abs/path.cubin", "bb ../up.cubin", "cc x y z"]
    rng.shuffle(lines)
    data = ("\n".join(lines) + ("\n" if rng.random() < 0.5 else "")).encode()
    if rng.random() < 0.9:
        (fam / "checksums.txt").write_bytes(data)
    for name in names:
        if rng.random() < 0.8:
            (fam / name).parent.mkdir(parents=True, exist_ok=True)
            (fam / name).write_bytes(b"x")
    if rng.random() < 0.1 and (fam / "include").is_dir():
        shutil.rmtree(fam / "include")
    return fam, names, data


def posixpathjoin(sub: str, leaf: str) -> str:
    return f"{sub}/{leaf}" if sub else leaf


def _sha(rng: random.Random, data: bytes) -> str | None:
    pick = rng.random()
    if pick < 0.6:
        return hashlib.sha256(data).hexdigest().upper() if pick < 0.1 else hashlib.sha256(data).hexdigest()
    return None if pick < 0.8 else "0" * 64


def _change(rng: random.Random, fam: Path, names: list[str]) -> None:
    """One change a user or an installer could make: a listed file removed or added, a directory removed or made,
    the manifest rewritten, removed or replaced by a directory, a stray file added."""
    pick = rng.randrange(7)
    present = [n for n in names if (fam / n).is_file()]
    absent = [n for n in names if not (fam / n).exists()]
    if pick == 0 and present:
        victim = fam / rng.choice(present)
        victim.unlink()
        _touch(victim.parent)
    elif pick == 1 and absent:
        made = fam / rng.choice(absent)
        created = [p for p in (made.parent, *made.parent.parents) if not p.exists()]
        made.parent.mkdir(parents=True, exist_ok=True)
        made.write_bytes(b"x")
        _touch(made.parent, *(p.parent for p in created))
    elif pick == 2:
        sub = fam / rng.choice(["include", "a/b", "kernels/sm100", "a"])
        if sub.is_dir():
            shutil.rmtree(sub)
            _touch(sub.parent)
        else:
            sub.mkdir(parents=True, exist_ok=True)
            _touch(sub, sub.parent)
    elif pick == 3:
        manifest = fam / "checksums.txt"
        extra = rng.choice(names) if names else "new.cubin"
        if manifest.is_dir():
            manifest.rmdir()
        manifest.write_bytes((manifest.read_bytes() if manifest.is_file() else b"") + f"dd {extra}\n".encode())
        _touch(manifest, fam)
    elif pick == 4:
        manifest = fam / "checksums.txt"
        if manifest.is_file():
            manifest.unlink()
            _touch(fam)
    elif pick == 5:
        stray = fam / "include" / "stray.h"
        if stray.parent.is_dir():
            stray.write_bytes(b"x")
            _touch(stray.parent)
    else:
        manifest = fam / "checksums.txt"
        if manifest.is_file():
            manifest.unlink()
            manifest.mkdir()
            _touch(manifest, fam)


@pytest.mark.parametrize("seed", range(40))
def test_kept_status_is_the_reading_before_and_after_changes(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    base = tmp_path / "cubins"
    fam, names, data = _family(rng, base)
    sha = _sha(rng, data)
    view = HostView()
    cache = str(tmp_path / "cache")
    for _round in range(6):
        want = fc.family_status(view, str(base), REL, sha)
        keep = fc.KeptFamilies.open(view, cache)
        assert keep is not None
        first = fc.family_status(view, str(base), REL, sha, keep)  # (read, or served from the previous round)
        keep.save()
        keep = fc.KeptFamilies.open(view, cache)
        assert keep is not None
        second = fc.family_status(view, str(base), REL, sha, keep)  # (served where it could be kept)
        assert first == want and second == want, (seed, _round)
        _change(rng, fam, names)


def _reading_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: Any, **_kw: Any) -> Any:
        raise AssertionError("read on the kept path")

    read = HostView.read_bytes

    def read_absent(self: HostView, path: str, limit: int, offset: int = 0) -> bytes:
        if os.path.lexists(path):  # (a missing checksums.txt is looked for again: no stamp to keep it under)
            raise AssertionError(f"{path} read on the kept path")
        return read(self, path, limit, offset)

    monkeypatch.setattr(HostView, "read_bytes", read_absent)
    monkeypatch.setattr(HostView, "listdir", refuse)
    monkeypatch.setattr(hashlib, "sha256", refuse)
    monkeypatch.setattr(fc, "parse_artifacts", refuse)


def _site(tmp_path: Path, manifest: bytes, present: list[str]) -> dict[str, Any]:
    """A flashinfer-python 0.6.13 + flashinfer-cubin 0.6.13 site-packages with an FMHA family and one other."""
    site = tmp_path / "site"
    (site / "flashinfer").mkdir(parents=True)
    sha = hashlib.sha256(manifest).hexdigest()
    (site / "flashinfer" / "artifacts.py").write_text(
        "class ArtifactPath:\n"
        f'    TRTLLM_GEN_FMHA: str = "{REL}"\n'
        '    TRTLLM_GEN_BMM: str = "11ee/batched_gemm/"\n'
        "class CheckSumHash:\n"
        f'    TRTLLM_GEN_FMHA: str = "{sha}"\n'
    )
    fam = site / "flashinfer_cubin" / "cubins" / REL
    (fam / "include").mkdir(parents=True)
    (fam / "checksums.txt").write_bytes(manifest)
    for name in present:
        (fam / name).write_bytes(b"x")
    (site / "flashinfer_cubin" / "cubins" / "11ee" / "batched_gemm").mkdir(parents=True)
    pkg = {"installed": True, "version": "0.6.13", "location": str(site)}
    return {"packages": {"flashinfer-python": pkg, "flashinfer-cubin": dict(pkg)}}


MANIFEST = b"aa one.cubin\nbb two.cubin\ncc include/meta.h\n"


def test_a_second_probe_reads_nothing_and_gives_the_same_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = _site(tmp_path, MANIFEST, ["one.cubin", "two.cubin"])
    env = {"HOME": str(tmp_path / "home"), "FLASHINFER_NO_DOWNLOAD": "1"}
    cache = str(tmp_path / "cache")
    want = fc.probe_cubins(facts, env, HostView())
    assert want is not None and want["families"]["TRTLLM_GEN_FMHA"]["missing"] == 1
    assert fc.probe_cubins(facts, env, HostView(), cache_dir=cache) == want
    doc = json.loads((tmp_path / "cache" / "deep" / "flashinfer_cubins.json").read_text())
    assert len(doc["files"]) == 2  # artifacts.py, FMHA's checksums.txt (BMM's is missing: no stamp)
    _reading_forbidden(monkeypatch)
    assert fc.probe_cubins(facts, env, HostView(), cache_dir=cache) == want


def test_the_probe_class_keeps_in_the_context_cache_dir(tmp_path: Path) -> None:
    from stackcheck.probes.interface import ProbeContext

    facts = _site(tmp_path, MANIFEST, ["one.cubin", "two.cubin", "include/meta.h"])
    ctx = ProbeContext(env={}, launch_env={"HOME": str(tmp_path)}, facts={**facts, "python": {}},
                       cache_dir=str(tmp_path / "cache"))  # fmt: skip
    got = fc.FlashinferCubinsProbe().run(ctx)
    assert got.facts["flashinfer_cubins"]["ready"]["TRTLLM_GEN_FMHA"] is True
    assert (tmp_path / "cache" / "deep" / "flashinfer_cubins.json").is_file()


def test_a_file_made_and_removed_again_is_seen(tmp_path: Path) -> None:
    facts = _site(tmp_path, MANIFEST, ["one.cubin", "two.cubin", "include/meta.h"])
    env = {"HOME": str(tmp_path / "home")}
    cache = str(tmp_path / "cache")
    fam = tmp_path / "site" / "flashinfer_cubin" / "cubins" / REL
    got = fc.probe_cubins(facts, env, HostView(), cache_dir=cache)
    assert got is not None and got["ready"]["TRTLLM_GEN_FMHA"] is True
    (fam / "include" / "meta.h").unlink()
    _touch(fam / "include")
    got = fc.probe_cubins(facts, env, HostView(), cache_dir=cache)
    assert got is not None and got["families"]["TRTLLM_GEN_FMHA"]["missing_first"] == ["include/meta.h"]
    assert got == fc.probe_cubins(facts, env, HostView())


def test_another_checksum_is_another_answer(tmp_path: Path) -> None:
    base = tmp_path / "cubins"
    (base / REL).mkdir(parents=True)
    (base / REL / "checksums.txt").write_bytes(MANIFEST)
    cache = str(tmp_path / "cache")
    right = hashlib.sha256(MANIFEST).hexdigest()
    for sha in (right, "1" * 64, None, right):
        keep = fc.KeptFamilies.open(HostView(), cache)
        got = fc.family_status(HostView(), str(base), REL, sha, keep)
        assert keep is not None
        keep.save()
        assert got == fc.family_status(HostView(), str(base), REL, sha)


def test_no_keeping_off_this_host_or_without_a_cache_dir(tmp_path: Path) -> None:
    facts = _site(tmp_path, MANIFEST, ["one.cubin"])
    assert fc.KeptFamilies.open(HostView(str(tmp_path)), str(tmp_path / "cache")) is None
    assert fc.KeptFamilies.open(HostView(), "") is None
    fc.probe_cubins(facts, {"HOME": str(tmp_path)}, HostView())
    assert not (tmp_path / "cache").exists()


def test_recently_changed_directories_are_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest's stamp old enough for kept.put, a directory's not: nothing kept; both old: kept."""
    monkeypatch.setattr(kept, "RACY_NS", 2_000_000_000)
    base = tmp_path / "cubins"
    (base / REL / "include").mkdir(parents=True)
    (base / REL / "checksums.txt").write_bytes(MANIFEST)
    real = kept.file_stamp

    def old(path: str) -> list[int] | None:
        got = real(path)
        return None if got is None else [*got[:3], 1, 1]

    monkeypatch.setattr(kept, "file_stamp", old)
    keep = fc.KeptFamilies.open(HostView(), str(tmp_path / "cache"))
    assert keep is not None
    fc.family_status(HostView(), str(base), REL, None, keep)
    assert keep.kept.files == {}  # (the directories were made just now)
    monkeypatch.setattr(
        fc, "_any_stamp", lambda path: None if (s := old(str(base / REL))) is None else [*s[:2], 0, 1, 1]
    )
    fc.family_status(HostView(), str(base), REL, None, keep)
    assert len(keep.kept.files) == 1


@pytest.mark.parametrize("change", ["target removed", "target emptied", "target moved away"])
def test_a_linked_cubin_whose_target_changes_is_read_again(tmp_path: Path, change: str) -> None:
    """Cubins linked from another directory (a shared store): the link's directory keeps its stamp when the target
    goes, is emptied or the store's file is swapped, so an answer kept under the family's stamps would count a
    dangling link or an empty file present, a false pass under FLASHINFER_NO_DOWNLOAD (irev79): a family whose
    names are links is read every time."""
    store = tmp_path / "store"
    store.mkdir()
    base = tmp_path / "cubins"
    (base / REL).mkdir(parents=True)
    (base / REL / "checksums.txt").write_bytes(b"aa one.cubin\nbb two.cubin\n")
    for name in ("one.cubin", "two.cubin"):
        (store / name).write_bytes(b"x")
        (base / REL / name).symlink_to(store / name)
    _touch(store, base / REL)
    cache = str(tmp_path / "cache")
    keep = fc.KeptFamilies.open(HostView(), cache)
    assert keep is not None
    first = fc.family_status(HostView(), str(base), REL, None, keep)
    keep.save()
    assert first["missing"] == 0
    if change == "target removed":
        (store / "one.cubin").unlink()
        _touch(store)
    elif change == "target emptied":
        (store / "one.cubin").write_bytes(b"")
        _touch(store / "one.cubin")
    else:
        (store / "elsewhere").mkdir()
        (store / "one.cubin").rename(store / "elsewhere" / "one.cubin")
        _touch(store, store / "elsewhere")
    want = fc.family_status(HostView(), str(base), REL, None)
    assert want["missing"] == 1 and want["missing_first"] == ["one.cubin"]
    keep = fc.KeptFamilies.open(HostView(), cache)
    assert keep is not None
    assert fc.family_status(HostView(), str(base), REL, None, keep) == want
