"""The second hop of audit --deep's shared-library check (stackcheck.readers.libs.follow_torch_libraries): the
CUDA libraries torch loads find their own dependencies through their own search path (a wheel library's
RUNPATH loses to LD_LIBRARY_PATH), and the symbols they ask of them are looked up in the copy found.

With gcc, a site-packages in the wheels' shape is built (a stand-in libtorch_cuda.so with torch's RPATH, a
libcusparse.so.12 with the cuSPARSE wheel's RUNPATH that calls a 12.4 nvJitLink entry point, a new and an old
libnvJitLink.so.12 with one version node) and the real loader is asked too: it must refuse exactly where the
check fails. The registry test does the same with the real nvidia-cusparse-cu12 12.3.1.170 (torch 2.5.1's pin)
and nvidia-nvjitlink-cu12 12.4.127 / 12.2.140 wheels."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from torch_cuda_tree import GCC, JIT, build_library, jitlink, needs_gcc, torch_cuda_site, torch_facts, torch_stand_in

from stackcheck.readers import libs
from stackcheck.readers.elf import DynamicSymbols, ElfFile


def _site(tmp: Path) -> tuple[Path, Path]:
    """A site-packages in the wheels' shape (torch_cuda_site), and a directory holding an older libnvJitLink.so.12."""
    site = torch_cuda_site(tmp)
    return site, jitlink(tmp / "cuda-12.2/lib64", [0, 1, 2]).parent


def _load(target: Path, env_dir: Path | None, preload: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real loader: ctypes (RTLD_NOW, like Python's import of torch._C) in a fresh interpreter."""
    code = "import ctypes, sys\nif sys.argv[2]: ctypes.CDLL(sys.argv[2])\nctypes.CDLL(sys.argv[1])"
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    if env_dir is not None:
        env["LD_LIBRARY_PATH"] = str(env_dir)
    return subprocess.run(
        [sys.executable, "-c", code, str(target), str(preload or "")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _reasons(section: dict[str, Any]) -> list[Any]:
    from stackcheck.verdicts.libversions import version_reasons

    return version_reasons(section)


def test_undefined_from_reads_the_symbols_bound_to_each_needed_file(tmp_path: Path) -> None:
    if GCC is None:
        pytest.skip("gcc not installed")
    site, _ = _site(tmp_path)
    with ElfFile(site / "nvidia/cusparse/lib/libcusparse.so.12") as elf:
        got = DynamicSymbols(elf).undefined_from()
        only = DynamicSymbols(elf).undefined_from({"libc.so.6"})
    assert got[JIT] == [("__nvJitLinkComplete_12_4", JIT)]
    assert JIT not in only


@needs_gcc
def test_an_older_nvjitlink_first_on_ld_library_path_fails_like_the_real_loader(tmp_path: Path) -> None:
    site, old = _site(tmp_path)
    torch_cuda = site / "torch/lib/libtorch_cuda.so"
    refused = _load(torch_cuda, old)
    assert refused.returncode != 0
    assert "undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12" in refused.stderr
    assert _load(torch_cuda, None).returncode == 0

    section = libs.probe_libs(torch_facts(site), {"LD_LIBRARY_PATH": str(old)}, cache=[], cache_source="given")
    (failure,) = section["symbol_failures"]
    assert failure["needed"] == JIT and failure["winner"] == str(old / JIT) and failure["via"] == "LD_LIBRARY_PATH"
    assert failure["missing"] == [f"__nvJitLinkComplete_12_4@{JIT}"]
    assert section["version_failures"] == []  # one version node in every release: DT_VERDEF cannot tell them apart
    (reason,) = _reasons(section)
    assert (reason["rule"], reason["result"], reason["effect"]) == ("shared-libs-symbol", "fail", "crash")
    assert "nvJitLink" in reason["message"] and "older" in reason["message"]
    assert reason["observed"] and reason["required"] and reason["source"] == "GLIBC-DL-LOOKUP"

    fine = libs.probe_libs(torch_facts(site), {"LD_LIBRARY_PATH": ""}, cache=[], cache_source="given")
    assert fine["symbol_failures"] == [] and fine["version_errors"] == []
    (lib,) = [x for x in fine["torch_libraries"]["libraries"] if x["needed"] == JIT]
    assert lib["winner"] == str(site / "nvidia/nvjitlink/lib" / JIT) and lib["via"] == "runpath"


INIT_WITH_PRELOAD = """
def _load_global_deps():
    try:
        load_the_global_deps()
        maps = read_maps()
        if "nvidia/cuda_runtime/lib/libcudart.so" not in _maps:
            return
        _preload_cuda_deps("nvjitlink", "libnvJitLink.so.*[0-9]")
    except Exception:
        pass
"""


@needs_gcc
def test_torch_preloading_the_wheels_nvjitlink_wins_over_ld_library_path(tmp_path: Path) -> None:
    """torch 2.6+ loads nvidia/nvjitlink/lib/libnvJitLink.so.* itself when its libcudart is the wheel's; the
    soname is then loaded and the older copy on LD_LIBRARY_PATH is never looked at (real loader: the same)."""
    site, old = _site(tmp_path)
    (site / "torch/__init__.py").write_text(INIT_WITH_PRELOAD)
    wheel_copy = site / "nvidia/nvjitlink/lib" / JIT
    assert _load(site / "torch/lib/libtorch_cuda.so", old, preload=wheel_copy).returncode == 0
    section = libs.probe_libs(torch_facts(site), {"LD_LIBRARY_PATH": str(old)}, cache=[], cache_source="given")
    assert section["torch_libraries"]["preloaded"] == [str(wheel_copy)]
    assert section["symbol_failures"] == []
    # the guard: a libcudart found elsewhere than the wheel means no preload, and the search decides again
    (site / "torch/__init__.py").write_text(INIT_WITH_PRELOAD.replace("cuda_runtime/lib", "cu13/lib"))
    again = libs.probe_libs(torch_facts(site), {"LD_LIBRARY_PATH": str(old)}, cache=[], cache_source="given")
    assert again["torch_libraries"]["preloaded"] == [] and len(again["symbol_failures"]) == 1


@needs_gcc
def test_a_dependency_not_found_is_unknown_not_ok(tmp_path: Path) -> None:
    site, _ = _site(tmp_path)
    (site / "nvidia/nvjitlink/lib" / JIT).unlink()
    section = libs.probe_libs(torch_facts(site), {"LD_LIBRARY_PATH": ""}, cache=[], cache_source="given")
    assert section["symbol_failures"] == []
    assert any(JIT in e for e in section["version_errors"])
    assert [r["result"] for r in _reasons(section)] == ["unknown"]


@pytest.mark.registry
@needs_gcc
def test_real_cusparse_wheel_against_an_older_real_nvjitlink(tmp_path: Path) -> None:
    """nvidia-cusparse-cu12 12.3.1.170 (torch 2.5.1's pin) with nvidia-nvjitlink-cu12 12.4.127 beside it (as pip
    installs them) and 12.2.140 on LD_LIBRARY_PATH: the real loader and the check both refuse; without it both
    accept."""
    from registry_wheels import fetch_wheel

    site = tmp_path / "site"
    for dist, version, dest in (
        ("nvidia-cusparse-cu12", "12.3.1.170", site),
        ("nvidia-nvjitlink-cu12", "12.4.127", site),
        ("nvidia-nvjitlink-cu12", "12.2.140", tmp_path / "old"),
    ):
        with zipfile.ZipFile(fetch_wheel(dist, version)) as whl:
            for member in whl.namelist():
                if member.endswith(".so.12"):
                    whl.extract(member, dest)
    cusparse = site / "nvidia/cusparse/lib/libcusparse.so.12"
    old = tmp_path / "old/nvidia/nvjitlink/lib"
    torch_cuda = torch_stand_in(site, cusparse.parent, calls=False)
    refused = _load(torch_cuda, old)
    assert refused.returncode != 0 and "undefined symbol: __nvJitLink" in refused.stderr
    assert "version libnvJitLink.so.12" in refused.stderr
    assert _load(torch_cuda, None).returncode == 0
    section = libs.probe_libs(torch_facts(site), {"LD_LIBRARY_PATH": str(old)}, cache=[], cache_source="given")
    (failure,) = section["symbol_failures"]
    assert f"__nvJitLinkComplete_12_4@{JIT}" in failure["missing"] and failure["via"] == "LD_LIBRARY_PATH"
    fine = libs.probe_libs(torch_facts(site), {"LD_LIBRARY_PATH": ""}, cache=[], cache_source="given")
    assert fine["symbol_failures"] == [] and fine["version_errors"] == []


@needs_gcc
def test_audit_facts_judges_the_second_hop(tmp_path: Path) -> None:
    """The facts document records the second hop (facts.libs), and `stackcheck audit --facts` judges it: the
    shared-libs check fails and names nvJitLink, with the copy found and the symbol; with the copy torch
    installed found instead, the check passes."""
    import json

    site, old = _site(tmp_path)
    base = json.loads((Path(__file__).parents[1] / "cases/writeup-after/facts.json").read_text())
    base["facts"]["packages"]["torch"]["location"] = str(site)

    def audit(env: dict[str, str]) -> dict[str, Any]:
        doc = {**base, "facts": {**base["facts"], "libs": libs.probe_libs(base["facts"], env, cache=[])}}
        path = tmp_path / "facts.json"
        path.write_text(json.dumps(doc))
        proc = subprocess.run(
            [sys.executable, "-m", "stackcheck", "audit", "--facts", str(path), "--format", "json"],
            capture_output=True,
            text=True,
            timeout=120,
            cwd="/",
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
            check=False,
        )
        assert proc.stdout, proc.stderr
        checks = {c["id"]: c for c in json.loads(proc.stdout)["checks"]}
        return dict(checks["shared-libs"])

    bad = audit({"LD_LIBRARY_PATH": str(old)})
    assert bad["status"] == "failed"
    text = json.dumps(bad)
    assert "nvJitLink" in text and "__nvJitLinkComplete_12_4" in text and str(old) in text
    good = audit({"LD_LIBRARY_PATH": ""})
    assert good["status"] == "ok", good


INIT_WITH_LIST = """
def _preload_cuda_deps(err=None):
    wanted = [
        ("cuda_runtime", "libcudart.so.*[0-9]"),
        ("nvjitlink", "libnvJitLink.so.*[0-9]"),
    ]
    for folder, name in wanted:
        _preload_cuda_lib(folder, name)


def _load_global_deps():
    try:
        load_the_global_deps()
        if "libcudart.so" not in _maps:
            return
        _preload_cuda_deps()
    except Exception:
        pass
"""


@needs_gcc
def test_the_later_preload_list_and_its_first_missing_entry(tmp_path: Path) -> None:
    """Later torch lists (folder, glob) pairs that _preload_cuda_deps() walks behind a plain 'libcudart.so' guard;
    an entry not found raises and ends the walk, so the entries after it are not preloaded."""
    site, old = _site(tmp_path)
    (site / "torch/__init__.py").write_text(INIT_WITH_LIST)
    section = libs.probe_libs(torch_facts(site), {"LD_LIBRARY_PATH": str(old)}, cache=[], cache_source="given")
    assert section["torch_libraries"]["preloaded"] == [
        str(site / "nvidia/cuda_runtime/lib/libcudart.so.12"),
        str(site / "nvidia/nvjitlink/lib" / JIT),
    ]
    assert section["symbol_failures"] == []
    (site / "torch/__init__.py").write_text(
        INIT_WITH_LIST.replace('("cuda_runtime"', '("cusparselt", "libcusparseLt.so.*[0-9]"),\n        ("cuda_runtime"')
    )
    stopped = libs.probe_libs(torch_facts(site), {"LD_LIBRARY_PATH": str(old)}, cache=[], cache_source="given")
    assert stopped["torch_libraries"]["preloaded"] == [] and len(stopped["symbol_failures"]) == 1


@pytest.mark.registry
@needs_gcc
@pytest.mark.parametrize(("version", "fails"), [("2.5.1", True), ("2.6.0", False), ("2.8.0", False)])
def test_real_torch_init_decides_the_preload(tmp_path: Path, version: str, fails: bool) -> None:
    """torch's own __init__.py (read from the real cp310 wheel at test time) beside the stand-in libraries and an
    older libnvJitLink.so.12 on LD_LIBRARY_PATH: 2.5.1 preloads nothing (the failure of pytorch#144244); 2.6.0
    and 2.8.0 preload the wheels' libnvrtc and libnvJitLink when libcudart is the wheel's (pytorch#138460)."""
    from registry_wheels import fetch_wheel

    site, old = _site(tmp_path)
    build_library(
        site / "nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "int sct_rtc(void){return 0;}", "-Wl,-soname,libnvrtc.so.12"
    )
    with zipfile.ZipFile(fetch_wheel("torch", version, python="3.10")) as whl:
        (site / "torch/__init__.py").write_bytes(whl.read("torch/__init__.py"))
    section = libs.probe_libs(torch_facts(site), {"LD_LIBRARY_PATH": str(old)}, cache=[], cache_source="given")
    assert bool(section["symbol_failures"]) is fails
    preloaded = section["torch_libraries"]["preloaded"]
    assert preloaded == (
        [] if fails else [str(site / "nvidia/cuda_nvrtc/lib/libnvrtc.so.12"), str(site / "nvidia/nvjitlink/lib" / JIT)]
    )


@needs_gcc
def test_a_preload_found_in_another_site_directory(tmp_path: Path) -> None:
    """torch searches every sys.path entry for the wheel it preloads: an nvidia-nvjitlink-cu12 installed in another
    site directory (another package's location in the facts) is preloaded from there."""
    site, old = _site(tmp_path)
    (site / "torch/__init__.py").write_text(INIT_WITH_LIST)
    other = tmp_path / "user-site"
    (other / "nvidia/nvjitlink").mkdir(parents=True)
    shutil.move(str(site / "nvidia/nvjitlink/lib"), str(other / "nvidia/nvjitlink/lib"))
    facts = torch_facts(site)
    facts["packages"]["nvidia-nvjitlink-cu12"] = {"installed": True, "version": "12.4.127", "location": str(other)}
    section = libs.probe_libs(facts, {"LD_LIBRARY_PATH": str(old)}, cache=[], cache_source="given")
    assert section["torch_libraries"]["preloaded"][-1] == str(other / "nvidia/nvjitlink/lib" / JIT)
    assert section["symbol_failures"] == []
    alone = libs.probe_libs(torch_facts(site), {"LD_LIBRARY_PATH": str(old)}, cache=[], cache_source="given")
    assert len(alone["symbol_failures"]) == 1  # not preloaded: the older copy on LD_LIBRARY_PATH is found


@needs_gcc
@pytest.mark.parametrize("fault", ["versym-address", "versym-past-end"])
def test_a_corrupt_symbol_version_table_is_unknown_with_a_one_line_reason(tmp_path: Path, fault: str) -> None:
    """A library torch loads whose DT_VERSYM points outside its segments, or whose version table runs past the end
    of the file: the check is unknown with the file named, never a pass and never a traceback."""
    import struct

    site, _ = _site(tmp_path)
    path = site / "nvidia/cusparse/lib/libcusparse.so.12"
    data = bytearray(path.read_bytes())
    tag = struct.pack("<q", 0x6FFFFFF0)
    at = data.find(tag)
    assert at > 0 and at % 8 == 0
    if fault == "versym-address":
        data[at + 8 : at + 16] = struct.pack("<Q", 0x7FFF_FFFF_0000)
    else:  # a table that starts at the last bytes of the file's loaded image: its entries run past the end
        with ElfFile(path) as elf:
            last = max(p.vaddr + p.filesz for p in elf.segments if p.type == 1)
        data[at + 8 : at + 16] = struct.pack("<Q", last - 2)
    path.write_bytes(bytes(data))
    section = libs.probe_libs(torch_facts(site), {"LD_LIBRARY_PATH": ""}, cache=[], cache_source="given")
    assert section["symbol_failures"] == []
    (error,) = [e for e in section["version_errors"] if "libcusparse" in e]
    assert "\n" not in error and str(path) in error and "corrupt" in error
    assert [r["result"] for r in _reasons(section)] == ["unknown"]


@needs_gcc
@pytest.mark.parametrize("old_first", [False, True])
def test_the_hop_opens_each_library_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old_first: bool) -> None:
    """Checking a copy's machine, following it, looking symbols up in it and reading its version definitions
    share one open of the file (each was an open of its own), with the same symbol failures."""
    from collections import Counter

    from stackcheck.readers.fsview import HostView

    site, old = _site(tmp_path)
    opens: Counter[str] = Counter()
    real = ElfFile.__init__

    def counting(self: ElfFile, path: Any, *args: Any, **kwargs: Any) -> None:
        opens[str(path)] += 1
        real(self, path, *args, **kwargs)

    monkeypatch.setattr(ElfFile, "__init__", counting)
    env = {"LD_LIBRARY_PATH": str(old)} if old_first else {}
    torch_obj = str(site / "torch/lib/libtorch_cuda.so")
    hop = libs.follow_torch_libraries([torch_obj], str(site), env, [], HostView(), {})
    missing = [f["missing"] for f in hop["symbol_failures"]]
    assert missing == ([["__nvJitLinkComplete_12_4@" + JIT]] if old_first else [])
    assert hop["libraries"] and not hop["errors"]
    libraries = {k: n for k, n in opens.items() if k != torch_obj}
    assert libraries and max(libraries.values()) == 1, opens
