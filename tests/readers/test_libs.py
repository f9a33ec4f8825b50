"""Shared-library resolution: RPATH vs LD_LIBRARY_PATH vs RUNPATH vs cache vs defaults, checked against ld.so."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.readers import libs
from stackcheck.readers.elf import ElfError, ElfFile

GCC = shutil.which("gcc")
needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc not installed")


def _gcc(args: list[str]) -> None:
    assert GCC is not None
    subprocess.run([GCC, *args], check=True, capture_output=True, timeout=60)


def _make_dep(dir_: Path, tag: str, name: str = "libsctdep.so.1") -> Path:
    dir_.mkdir(parents=True, exist_ok=True)
    src = dir_ / "dep.c"
    src.write_text(f'const char *sct_dep_tag(void) {{ return "{tag}"; }}\n')
    out = dir_ / name
    _gcc(["-shared", "-fPIC", f"-Wl,-soname,{name}", "-o", str(out), str(src)])
    return out


def _make_user(dir_: Path, dep_dir: Path, path_flag: str, dtags: str, name: str = "libsctuser.so") -> Path:
    """A library needing libsctdep.so.1, linked with an RPATH (dtags 'old') or RUNPATH ('new')."""
    dir_.mkdir(parents=True, exist_ok=True)
    src = dir_ / "user.c"
    src.write_text("const char *sct_dep_tag(void);\nconst char *sct_user(void) { return sct_dep_tag(); }\n")
    out = dir_ / name
    dt = "--disable-new-dtags" if dtags == "old" else "--enable-new-dtags"
    _gcc(
        [
            "-shared",
            "-fPIC",
            "-o",
            str(out),
            str(src),
            f"-L{dep_dir}",
            "-l:libsctdep.so.1",
            f"-Wl,{dt}",
            f"-Wl,-rpath,{path_flag}",
        ]
    )
    return out


def _real_loader(lib: Path, ld_library_path: str | None) -> str | None:
    """Which libsctdep.so.1 the real dynamic loader maps when `lib` is dlopen'ed."""
    code = (
        "import ctypes, sys\n"
        "ctypes.CDLL(sys.argv[1])\n"
        "for line in open('/proc/self/maps'):\n"
        "    if line.rstrip().endswith('libsctdep.so.1'):\n"
        "        print(line.split()[-1]); break\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    if ld_library_path is not None:
        env["LD_LIBRARY_PATH"] = ld_library_path
    done = subprocess.run(
        [sys.executable, "-c", code, str(lib)], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    return done.stdout.strip() or None


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    if GCC is None:
        pytest.skip("gcc not installed")
    a = _make_dep(tmp_path / "own", "own")
    b = _make_dep(tmp_path / "env", "env")
    return {"own": a.parent, "env": b.parent, "root": tmp_path}


def _resolve(lib: Path, env: dict[str, str]) -> dict[str, object]:
    obj = libs.read_object(lib)
    return libs.resolve_needed(obj, "libsctdep.so.1", env, cache=[], dirs_default=[])


@needs_gcc
def test_rpath_beats_ld_library_path(tree: dict[str, Path]) -> None:
    user = _make_user(tree["root"] / "u1", tree["own"], str(tree["own"]), "old")
    obj = libs.read_object(user)
    assert obj.rpath == str(tree["own"]) and obj.runpath is None
    env = {"LD_LIBRARY_PATH": str(tree["env"])}
    res = _resolve(user, env)
    assert res["winner"] == str(tree["own"] / "libsctdep.so.1") and res["via"] == "rpath"
    assert str(tree["env"] / "libsctdep.so.1") in res["other_copies"]  # type: ignore[operator]
    assert libs.warnings_for(res, "u1") == []
    assert _real_loader(user, str(tree["env"])) == res["winner"]


@needs_gcc
def test_ld_library_path_beats_runpath_and_warns(tree: dict[str, Path]) -> None:
    user = _make_user(tree["root"] / "u2", tree["own"], str(tree["own"]), "new")
    obj = libs.read_object(user)
    assert obj.runpath == str(tree["own"]) and obj.rpath is None
    res = _resolve(user, {"LD_LIBRARY_PATH": str(tree["env"])})
    assert res["winner"] == str(tree["env"] / "libsctdep.so.1") and res["via"] == "LD_LIBRARY_PATH"
    assert res["built_for"] == str(tree["own"] / "libsctdep.so.1")
    res["runpath"] = True
    (warning,) = libs.warnings_for(res, "u2")
    assert "LD_LIBRARY_PATH" in warning and "RUNPATH" in warning
    assert _real_loader(user, str(tree["env"])) == res["winner"]
    # without LD_LIBRARY_PATH the RUNPATH copy wins
    res2 = _resolve(user, {})
    assert res2["via"] == "runpath" and _real_loader(user, None) == res2["winner"]


@needs_gcc
def test_origin_expansion_and_not_found(tree: dict[str, Path]) -> None:
    sub = tree["root"] / "pkg" / "lib"
    _make_dep(tree["root"] / "pkg" / "nvidia" / "lib", "wheel")
    user = _make_user(sub, tree["own"], "$ORIGIN/../nvidia/lib", "old")
    res = _resolve(user, {})
    assert res["winner"] == str(tree["root"] / "pkg" / "nvidia" / "lib" / "libsctdep.so.1")
    assert _real_loader(user, None) == res["winner"]
    lonely = _make_user(tree["root"] / "lonely", tree["own"], "/nonexistent-sct", "new")
    res3 = _resolve(lonely, {})
    assert res3["winner"] is None
    assert "not found" in libs.warnings_for(res3, "lonely")[0]


def test_expand_dirs() -> None:
    assert libs.expand_dirs("$ORIGIN/../lib:${ORIGIN}/x::/abs/$LIB", "/a/b") == ["/a/lib", "/a/b/x", "/abs/lib64"]
    assert libs.expand_dirs(None, "/a") == []


def test_search_order_cache_and_defaults() -> None:
    obj = libs.ObjectInfo("/p/libx.so", ["libcudart.so.13"], None, None, 62)
    files = {"/cache/libcudart.so.13", "/usr/lib/libcudart.so.13", "/lib32/libcudart.so.13"}
    cache = [
        libs.CacheEntry("libcudart.so.13", "/lib32/libcudart.so.13", 0x0003 | 0x0800),  # other arch flag
        libs.CacheEntry("libcudart.so.13", "/cache/libcudart.so.13", 0x0303),
    ]
    res = libs.resolve_needed(
        obj,
        "libcudart.so.13",
        {},
        cache,
        dirs_default=["/usr/lib"],
        is_file=files.__contains__,
        compatible=lambda p, m: True,
    )
    assert res["winner"] == "/cache/libcudart.so.13" and res["via"] == "ld.so.cache"
    assert res["other_copies"] == ["/usr/lib/libcudart.so.13"]


def _build_cache(entries: list[tuple[str, str, int]], old_prefix: bool = False) -> bytes:
    header_size = 48
    strings = b""
    offs = []
    table_end = header_size + 24 * len(entries)
    for soname, path, _ in entries:
        k = table_end + len(strings)
        strings += soname.encode() + b"\0"
        v = table_end + len(strings)
        strings += path.encode() + b"\0"
        offs.append((k, v))
    body = struct.pack("<20sIIB3xI12x", b"glibc-ld.so.cache1.1", len(entries), len(strings), 2, 0)
    for (k, v), (_, _, flags) in zip(offs, entries, strict=True):
        body += struct.pack("<iIIIQ", flags, k, v, 0, 0)
    body += strings
    if old_prefix:
        old = b"ld.so-1.7.0\0" + struct.pack("<I", 1) + struct.pack("<iII", 3, 0, 0)
        old += b"\0" * ((8 - len(old) % 8) % 8)
        return old + body
    return body


@pytest.mark.parametrize("old_prefix", [False, True])
def test_parse_ld_so_cache_synthetic(old_prefix: bool) -> None:
    data = _build_cache([("libfoo.so.1", "/x/libfoo.so.1", 0x303), ("libbar.so", "/y/libbar.so", 0x303)], old_prefix)
    got = libs.parse_ld_so_cache(data)
    assert [(e.soname, e.path) for e in got] == [("libfoo.so.1", "/x/libfoo.so.1"), ("libbar.so", "/y/libbar.so")]


def test_parse_ld_so_cache_rejects_garbage() -> None:
    with pytest.raises(libs.LdCacheError, match=r"not an ld\.so cache"):
        libs.parse_ld_so_cache(b"garbage" * 10)
    with pytest.raises(libs.LdCacheError, match="do not fit"):
        libs.parse_ld_so_cache(_build_cache([("a", "b", 0x303)])[:60])


@pytest.mark.skipif(
    not Path("/etc/ld.so.cache").is_file() or shutil.which("ldconfig") is None,
    reason="no /etc/ld.so.cache or ldconfig on this machine",
)
def test_parse_real_cache_matches_ldconfig() -> None:
    parsed = libs.parse_ld_so_cache(Path("/etc/ld.so.cache").read_bytes())
    done = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=30, check=True)
    listed = libs.parse_ldconfig_p(done.stdout)
    assert [(e.soname, e.path) for e in parsed] == [(e.soname, e.path) for e in listed]


def test_garbage_and_truncated_objects(tmp_path: Path) -> None:
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"not an elf at all" * 100)
    short = tmp_path / "short.so"
    short.write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 20)
    elf32 = tmp_path / "e32.so"
    elf32.write_bytes(b"\x7fELF\x01\x01\x01" + b"\0" * 100)
    for p, msg in ((junk, "not an ELF"), (short, "truncated"), (elf32, "32-bit")):
        with pytest.raises(ElfError, match=msg):
            ElfFile(p)
        out = libs.resolve_object(p, p.name, {}, [])
        assert msg in out["error"]


@needs_gcc
def test_probe_libs_torch_rpath_and_kernel_reuse(tmp_path: Path) -> None:
    """A fake site-packages: torch with RPATH to its nvidia wheel; a kernel package with RUNPATH."""
    site = tmp_path / "site"
    wheel = site / "nvidia" / "cuda_runtime" / "lib"
    _make_dep(wheel, "wheel", "libcudart.so.13")
    sysdir = tmp_path / "usr-local-cuda"
    _make_dep(sysdir, "system", "libcudart.so.13")
    tlib = site / "torch" / "lib"
    tlib.mkdir(parents=True)
    src = tlib / "t.c"
    src.write_text("int t(void) { return 1; }\n")
    _gcc(
        [
            "-shared",
            "-fPIC",
            "-o",
            str(tlib / "libtorch_cuda.so"),
            str(src),
            f"-L{wheel}",
            "-Wl,--no-as-needed",
            "-l:libcudart.so.13",
            "-Wl,--disable-new-dtags",
            "-Wl,-rpath,$ORIGIN/../../nvidia/cuda_runtime/lib",
        ]
    )
    kdir = site / "sgl_kernel"
    kdir.mkdir()
    _gcc(
        [
            "-shared",
            "-fPIC",
            "-o",
            str(kdir / "common_ops.so"),
            str(src),
            f"-L{sysdir}",
            "-Wl,--no-as-needed",
            "-l:libcudart.so.13",
            "-Wl,--enable-new-dtags",
            f"-Wl,-rpath,{sysdir}",
        ]
    )
    facts = {
        "packages": {
            "torch": {"installed": True, "location": str(site)},
            "sgl-kernel": {"installed": True, "location": str(site)},
        }
    }
    env = {"LD_LIBRARY_PATH": str(sysdir)}
    out = libs.probe_libs(facts, env, cache=[], cache_source="test")
    json.dumps(out)
    (tobj,) = out["packages"]["torch"]["objects"]
    (cudart,) = tobj["libs"]
    assert cudart["via"] == "rpath" and cudart["winner"] == str(wheel / "libcudart.so.13")
    assert str(sysdir / "libcudart.so.13") in cudart["other_copies"]
    (kobj,) = out["packages"]["sgl-kernel"]["objects"]
    (kc,) = kobj["libs"]
    assert kc["via"] == "already loaded by torch" and kc["winner"] == cudart["winner"]
    assert kc["own_via"] == "LD_LIBRARY_PATH"
    assert any("sgl_kernel/common_ops.so" in w for w in out["warnings"])
