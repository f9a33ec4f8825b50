"""Symbol versions in audit --deep's shared-library check: the DT_VERNEED / DT_VERDEF reader (stackcheck.readers
.elf), the per-library comparison (stackcheck.readers.libs) and the check's reasons (stackcheck.verdicts
.libversions). Objects written by tests/elfwriter.py; with gcc, a real versioned library pair is built and the
real loader is asked too (it must refuse exactly where the check fails)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from elfwriter import build_so, write_so

from stackcheck.readers import libs
from stackcheck.readers.elf import DynamicSymbols, ElfError, ElfFile

if TYPE_CHECKING:
    from stackcheck.readers.elf import VersionNeed


def version_reasons(libs_facts: dict[str, Any]) -> list[Any]:
    """The check's reasons for these facts (imported here, so the reader's tests run without the module)."""
    from stackcheck.verdicts.libversions import version_reasons as reasons

    return reasons(libs_facts)


CUDART = "libcudart.so.12"


def _versions(path: Path) -> tuple[list[VersionNeed], list[str] | None, int]:
    with ElfFile(path) as elf:
        d = DynamicSymbols(elf)
        return d.version_needs(), d.version_defs(), elf.bytes_read


def test_reads_version_needs_and_definitions(tmp_path: Path) -> None:
    user = write_so(
        tmp_path / "user.so",
        undefined=["f"],
        needed=[CUDART, "libc.so.6"],
        version_needs={CUDART: [CUDART, "libcudart.so.12.4?"], "libc.so.6": ["GLIBC_2.2.5"]},
    )
    lib = write_so(tmp_path / CUDART, defined=["f"], soname=CUDART, version_defs=[CUDART, "libcudart.so.12.2"])
    needs, defs, _ = _versions(user)
    assert [(n.file, n.name, n.weak) for n in needs] == [
        (CUDART, CUDART, False),
        (CUDART, "libcudart.so.12.4", True),
        ("libc.so.6", "GLIBC_2.2.5", False),
    ]
    assert defs is None
    needs, defs, read = _versions(lib)
    assert needs == [] and defs == [CUDART, "libcudart.so.12.2"]
    assert read < 2048


def test_unversioned_object_reads_as_no_versions(tmp_path: Path) -> None:
    plain = write_so(tmp_path / "plain.so", defined=["g"], needed=[CUDART])
    assert _versions(plain)[:2] == ([], None)


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ("next", "outside the file"),
        ("record", "unsupported"),
        ("name", "past the string table"),
        ("long", "chain of more than"),
    ],
)
def test_hostile_version_records_are_one_line_errors(tmp_path: Path, fault: str, message: str) -> None:
    bad = write_so(
        tmp_path / "bad.so", undefined=["f"], needed=[CUDART], version_needs={CUDART: [CUDART]}, version_fault=fault
    )
    with pytest.raises(ElfError, match=message) as err:
        _versions(bad)
    assert "\n" not in str(err.value) and str(bad) in str(err.value)


def test_truncated_version_records(tmp_path: Path) -> None:
    data = build_so(defined=["f"], soname=CUDART, version_defs=[CUDART, "libcudart.so.12.2"])
    cut = tmp_path / "cut.so"
    cut.write_bytes(data[:-10])  # the last Verdaux is cut short
    with pytest.raises(ElfError, match="outside the file"):
        _versions(cut)


def _site(
    tmp_path: Path, needs: list[str], defs: list[str] | None, fault: str | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """A fake site-packages with torch/lib/libtorch_cuda.so needing libcudart.so.12 versions `needs`, and a
    libcudart.so.12 defining `defs` in a directory on LD_LIBRARY_PATH."""
    site = tmp_path / "site"
    tlib = site / "torch" / "lib"
    tlib.mkdir(parents=True)
    write_so(
        tlib / "libtorch_cuda.so",
        undefined=["cudaMalloc"],
        needed=[CUDART],
        version_needs={CUDART: needs},
        version_fault=fault,
    )
    sysdir = tmp_path / "cuda" / "lib64"
    sysdir.mkdir(parents=True)
    write_so(sysdir / CUDART, defined=["cudaMalloc"], soname=CUDART, version_defs=defs)
    facts = {"packages": {"torch": {"installed": True, "location": str(site)}}}
    return facts, {"LD_LIBRARY_PATH": str(sysdir)}


def test_a_library_without_a_needed_version_fails_with_observed_and_required(tmp_path: Path) -> None:
    facts, env = _site(tmp_path, [CUDART], ["libcudart.so.11.0"])
    out = libs.probe_libs(facts, env, cache=[], cache_source="test")
    json.dumps(out)
    (failure,) = out["version_failures"]
    assert failure["package"] == "torch" and failure["object"] == "torch/lib/libtorch_cuda.so"
    assert failure["missing"] == [CUDART] and failure["defined"] == ["libcudart.so.11.0"]
    assert failure["winner"].endswith(f"cuda/lib64/{CUDART}") and failure["via"] == "LD_LIBRARY_PATH"
    (reason,) = version_reasons(out)
    assert reason["result"] == "fail" and reason["effect"] == "crash"
    assert reason["required"].startswith(f"version {CUDART}")
    assert reason["observed"].endswith("defines libcudart.so.11.0")
    assert f"version `{CUDART}' not found" in reason["message"] and reason["source"] == "GLIBC-DL-VERSION"


@pytest.mark.parametrize(
    ("needs", "defs"),
    [
        ([CUDART], [CUDART, "libcudart.so.12.2"]),  # satisfied
        ([CUDART, "libcudart.so.12.4?"], [CUDART]),  # only a weak version is missing: not fatal
        ([CUDART], None),  # the library defines no versions: the loader binds without comparing
    ],
)
def test_satisfied_weak_and_unversioned_pass(tmp_path: Path, needs: list[str], defs: list[str] | None) -> None:
    facts, env = _site(tmp_path, needs, defs)
    out = libs.probe_libs(facts, env, cache=[], cache_source="test")
    assert out["version_failures"] == [] and out["version_errors"] == []
    assert version_reasons(out) == []


def test_unreadable_version_records_leave_the_check_unknown(tmp_path: Path) -> None:
    facts, env = _site(tmp_path, [CUDART], [CUDART], fault="next")
    out = libs.probe_libs(facts, env, cache=[], cache_source="test")
    assert out["version_failures"] == []
    (error,) = out["version_errors"]
    assert error.startswith("torch: ") and "outside the file" in error
    (reason,) = version_reasons(out)
    assert reason["result"] == "unknown"
    # the resolution itself is still reported
    (obj,) = out["packages"]["torch"]["objects"]
    assert obj["libs"][0]["winner"].endswith(CUDART)


def test_the_check_fails_closed_through_the_engine(tmp_path: Path) -> None:
    from stackcheck.verdicts.engine import builtin_shared_libs

    facts, env = _site(tmp_path, [CUDART], ["libcudart.so.11.0"])
    doc = {"libs": libs.probe_libs(facts, env, cache=[], cache_source="test")}

    class Ctx:
        def __init__(self, facts: dict[str, Any]) -> None:
            self.facts = facts

    reasons = builtin_shared_libs(Ctx(doc))  # type: ignore[arg-type]
    assert [(r["rule"], r["result"], r.get("effect")) for r in reasons] == [("shared-libs-version", "fail", "crash")]
    # a kernel package other than the ones every launch imports: the failure is degraded, not a refusal
    doc["libs"]["version_failures"][0]["package"] = "vllm"
    assert [r.get("effect") for r in builtin_shared_libs(Ctx(doc))] == ["degraded"]  # type: ignore[arg-type]


GCC = shutil.which("gcc")


@pytest.mark.skipif(GCC is None, reason="gcc not installed")
def test_the_real_loader_refuses_where_the_check_fails(tmp_path: Path) -> None:
    """gcc builds libsctver.so.1 twice (version nodes SCT_1 only, then SCT_1 and SCT_2) and a user linked against
    the newer; with the older first on LD_LIBRARY_PATH the real loader refuses the user and the check fails."""
    assert GCC is not None

    def build(out: Path, script: str, src: str, *extra: str) -> None:
        (out.parent / "v.map").write_text(script)
        (out.parent / "s.c").write_text(src)
        args = ["-shared", "-fPIC", "-o", str(out), str(out.parent / "s.c"), *extra]
        subprocess.run([GCC, *args, f"-Wl,--version-script,{out.parent / 'v.map'}"], check=True, timeout=60)

    new, old, user = tmp_path / "new", tmp_path / "old", tmp_path / "user"
    for d in (new, old, user):
        d.mkdir()
    name = "libsctver.so.1"
    two = "int a(void){return 1;} int b(void){return 2;}"
    build(new / name, "SCT_1 { global: a; }; SCT_2 { global: b; } SCT_1;", two, f"-Wl,-soname,{name}")
    build(old / name, "SCT_1 { global: a; local: *; };", "int a(void){return 1;}", f"-Wl,-soname,{name}")
    build(user / "libsctuser.so", "SCTU { global: u; local: *; };", "int b(void); int u(void){return b();}",
          f"-L{new}", f"-l:{name}")  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1])", str(user / "libsctuser.so")],
        env={**{k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}, "LD_LIBRARY_PATH": str(old)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0 and "version `SCT_2' not found" in done.stderr
    out = libs.resolve_object(
        user / "libsctuser.so", "libsctuser.so", {"LD_LIBRARY_PATH": str(old)}, [], wanted=re.compile("libsctver")
    )
    (failure,) = out["version_failures"]
    assert failure["missing"] == ["SCT_2"] and failure["defined"] == [name, "SCT_1"]
    ok = libs.resolve_object(
        user / "libsctuser.so", "libsctuser.so", {"LD_LIBRARY_PATH": str(new)}, [], wanted=re.compile("libsctver")
    )
    assert ok["version_failures"] == []
