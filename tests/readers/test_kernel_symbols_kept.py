"""The kernel symbol probe's kept answers (readers/kernelsymbols.py _KeptAnswers): a repeat run of an unchanged box
serves the section without reading an ELF file, identical to a fresh read; one changed stamp (the library's or that
of a torch or libcuda library it was resolved against) reads it all again; a garbled document is a miss; never for a
--root view, never an error."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from elfwriter import write_so

from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.kernel_symbols import KernelSymbolsProbe
from stackcheck.readers import kept as kept_module
from stackcheck.readers import kernelsymbols
from stackcheck.readers.fsview import HostView
from stackcheck.readers.kernelsymbols import probe_kernel_symbols

SET_DEVICE = "_ZN3c104cuda9SetDeviceEab"
ALLOC = "_ZN3c1019UndefinedTensorImpl10_singletonE"
OP = "_ZN2at4_ops3add4callERKNS_6TensorES4_RKN3c106ScalarE"
THP = "THPVariableClass"  # a name of torch's Python bindings (libtorch_python.so)
DOC = "deep/kernel_symbols.json"


@pytest.fixture(autouse=True)
def _not_racy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The files are written by the test a moment before they are read: not "racily clean" here; the caches on (the
    suite turns them off)."""
    monkeypatch.setattr(kept_module, "RACY_NS", 0)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")


def _box(root: Path) -> tuple[dict[str, Any], str]:
    site = root / "site"
    lib = site / "torch" / "lib"
    lib.mkdir(parents=True)
    write_so(lib / "libtorch.so", needed=["libtorch_cpu.so", "libc10.so"], soname="libtorch.so")
    write_so(lib / "libtorch_cpu.so", defined=[OP], needed=["libc10.so"])
    write_so(lib / "libc10.so", defined=[ALLOC])
    write_so(lib / "libc10_cuda.so", defined=[SET_DEVICE])
    (site / "sgl_kernel").mkdir()
    write_so(
        site / "sgl_kernel" / "common_ops.abi3.so",
        undefined=[ALLOC, OP, SET_DEVICE, "cuInit"],
        needed=["libtorch.so", "libc10_cuda.so", "libcuda.so.1"],
    )
    (site / "torchao").mkdir()
    write_so(site / "torchao" / "_C.abi3.so", undefined=[OP, SET_DEVICE], needed=["libtorch.so", "libc10_cuda.so"])
    drv = root / "drv"
    drv.mkdir()
    write_so(drv / "libcuda.so.1", defined=["cuInit"])
    here = {"installed": True, "location": str(site)}
    return {"sgl-kernel": {**here, "version": "0.3.0"}, "torch": {**here, "version": "2.8.0"}}, str(
        drv / "libcuda.so.1"
    )


def _described(section: dict[str, Any] | None) -> dict[str, Any]:
    assert section is not None
    return {k: v for k, v in section.items() if k != "ms"}  # (the probe's time: a per-run measure)


def _no_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every library the probe opens with the ELF reader (served: none)."""
    opened: list[str] = []
    real = kernelsymbols._open

    def spy(view: Any, path: str) -> Any:
        opened.append(path)
        return real(view, path)

    monkeypatch.setattr(kernelsymbols, "_open", spy)
    return opened


def test_repeat_run_is_served_and_identical_to_a_fresh_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    packages, libcuda = _box(tmp_path)
    cache = str(tmp_path / "cache")
    fresh = _described(probe_kernel_symbols(packages, HostView("/"), libcuda))  # no cache ("")
    first = _described(probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache))
    assert (tmp_path / "cache" / DOC).is_file()
    opened = _no_reads(monkeypatch)
    served = _described(probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache))
    assert opened == []  # no ELF file read
    assert served == first == fresh  # bytes_read included
    assert [e["extension"] for e in served["extensions"]] == ["torchao"]
    assert served["files"][0]["torch_missing_count"] == 0 and served["files"][0]["driver_missing_count"] == 0


@pytest.mark.parametrize("changed", ["torch/lib/libc10_cuda.so", "sgl_kernel/common_ops.abi3.so", "libcuda"])
def test_a_changed_stamp_reads_the_section_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changed: str) -> None:
    """Rewritten with the same bytes (only the stamp moves): read again; a torch library that lost a symbol: the
    kept answer (nothing missing) is not served."""
    packages, libcuda = _box(tmp_path)
    cache = str(tmp_path / "cache")
    first = _described(probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache))
    path = Path(libcuda) if changed == "libcuda" else tmp_path / "site" / changed
    data = path.read_bytes()
    path.unlink()  # (a new inode, as a package manager's rename gives)
    path.write_bytes(data)
    opened = _no_reads(monkeypatch)
    again = _described(probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache))
    assert str(path) in opened and again == first
    if changed.startswith("torch/"):
        write_so(path, defined=["_ZN3c104cuda9SetDeviceEa"])  # torch 2.7's SetDevice only
        after = probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache)
        assert after is not None
        assert after["files"][0]["torch_missing"] == [SET_DEVICE]
        assert after["extensions"][0]["torch_missing"] == [SET_DEVICE]


def test_a_new_torch_library_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """torch/lib's listing decides the closure: a library added there (its directory's stamp) reads it again."""
    packages, libcuda = _box(tmp_path)
    cache = str(tmp_path / "cache")
    probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache)
    write_so(tmp_path / "site" / "torch" / "lib" / "libtorch_cuda.so", defined=[])
    opened = _no_reads(monkeypatch)
    probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache)
    assert opened


def test_an_unknown_for_a_torch_library_not_in_torch_lib_is_kept_until_it_comes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sgl-deep-ep 0.1.1's _C needs libtorch_python.so: where torch/lib lacks it the entry is unknown (torch_unread),
    an answer of the files, not an error of reading: kept, so the section is served; the library added: read again."""
    packages, libcuda = _box(tmp_path)
    cache = str(tmp_path / "cache")
    ext = tmp_path / "site" / "torchao" / "_C.abi3.so"
    write_so(ext, undefined=[OP, THP], needed=["libtorch.so", "libtorch_python.so"])
    first = probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache)
    assert first is not None and first["extensions"][0]["torch_unread"] == ["libtorch_python.so"]
    assert "torch_error" in first["extensions"][0]
    opened = _no_reads(monkeypatch)
    assert _described(probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache)) == _described(first)
    assert opened == []
    write_so(tmp_path / "site" / "torch" / "lib" / "libtorch_python.so", defined=[THP])
    after = probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache)
    assert after is not None and opened
    assert "torch_error" not in after["extensions"][0] and after["extensions"][0]["torch_missing_count"] == 0


def test_a_broken_torch_library_is_never_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    packages, libcuda = _box(tmp_path)
    cache = tmp_path / "cache"
    (tmp_path / "site" / "torch" / "lib" / "libc10_cuda.so").write_bytes(b"\x7fELF\x02 cut short")
    first = probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=str(cache))
    assert first is not None and first["files"][0]["torch_error"].startswith(str(tmp_path))
    assert not (cache / DOC).exists()  # no entry kept (every library needs libc10_cuda.so)
    opened = _no_reads(monkeypatch)
    probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=str(cache))
    assert opened


def _doc(tmp_path: Path) -> Path:
    return tmp_path / "cache" / DOC


@pytest.mark.parametrize(
    "garble",
    [
        lambda doc: "not json {",
        lambda doc: json.dumps([1, 2]),
        lambda doc: "[" * 100000,
        # the right key, values of another shape: each a miss
        lambda doc: _each(doc, lambda v: {**v, "bytes": "7"}),
        lambda doc: _each(doc, lambda v: {**v, "deps": [["/x", [1, 2]]]}),
        lambda doc: _each(doc, lambda v: {**v, "deps": "everything"}),
        lambda doc: _each(doc, lambda v: {**v, "entry": ["path"]}),
        lambda doc: _each(doc, lambda v: {**v, "entry": {**v["entry"], "torch_error": "kept"}}),
        lambda doc: _each(doc, lambda v: {**v, "deps": [[d, [0, 0, 0, 0, 0]] for d, _ in v["deps"]]}),
        lambda doc: _each(doc, lambda v: None),
    ],
)
def test_a_garbled_kept_document_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, garble: Any) -> None:
    packages, libcuda = _box(tmp_path)
    cache = str(tmp_path / "cache")
    first = _described(probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache))
    doc = _doc(tmp_path)
    doc.write_text(garble(json.loads(doc.read_text())))
    os.chmod(doc, 0o600)
    opened = _no_reads(monkeypatch)
    again = _described(probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache))
    assert opened and again == first


def _each(doc: dict[str, Any], change: Any) -> str:
    doc["files"] = {k: [stamp, change(v)] for k, (stamp, v) in doc["files"].items()}
    return json.dumps(doc)


def test_a_kept_document_another_user_could_write_is_not_read(tmp_path: Path) -> None:
    """What the document holds is trusted through the stamps only, so it must be this user's own (read_private): a
    well-formed lie in a document another user could write is not served."""
    packages, libcuda = _box(tmp_path)
    cache = str(tmp_path / "cache")
    probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache)
    doc = _doc(tmp_path)
    lie = {
        **json.loads(
            _each(json.loads(doc.read_text()), lambda v: {**v, "entry": {**v["entry"], "torch_missing_count": 3}})
        )
    }
    lie.pop("mark")  # (iperf42: a lie written with its own mark: the document's owner is what is judged)
    doc.write_bytes(kept_module._marked(json.dumps(lie).encode()))
    os.chmod(doc, 0o600)
    served = probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache)
    assert served is not None and served["files"][0]["torch_missing_count"] == 3  # (the stamps vouch for it)
    os.chmod(doc, 0o666)
    read = probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache)
    assert read is not None and read["files"][0]["torch_missing_count"] == 0


def test_errors_are_never_kept_and_other_views_keep_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    packages, libcuda = _box(tmp_path)
    cache = tmp_path / "cache"
    (tmp_path / "site" / "torchao" / "_C.abi3.so").write_bytes(b"\x7fELF broken")
    probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=str(cache))
    kept = json.loads((cache / DOC).read_text())["files"]
    assert len(kept) == 1 and "common_ops" in next(iter(kept))  # the broken extension: not kept
    opened = _no_reads(monkeypatch)
    again = probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=str(cache))
    assert again is not None and "error" in again["extensions"][0] and opened  # read again: never served

    other = tmp_path / "other"
    box, _ = _box(other)
    rooted = {n: {**v, "location": "/site"} for n, v in box.items()}
    section = probe_kernel_symbols(rooted, HostView(str(other)), None, cache_dir=str(other / "cache"))
    assert section is not None and section["files"][0]["torch_missing_count"] == 0
    assert not (other / "cache").exists()  # a --root view: nothing kept


def test_the_probe_keeps_its_answers_in_the_contexts_cache_dir(tmp_path: Path) -> None:
    packages, _ = _box(tmp_path)
    for cache_dir, kept in (("", False), (str(tmp_path / "cache"), True)):
        ctx = ProbeContext(env={"LD_LIBRARY_PATH": ""}, facts={"packages": packages}, cache_dir=cache_dir)
        result = KernelSymbolsProbe().run(ctx)
        assert result.status == "ok", result.reason
        assert (tmp_path / "cache" / DOC).is_file() is kept


def test_the_bench_kept_row_checks_the_served_section(tmp_path: Path) -> None:
    """bench/bench_kernel_symbols.py --kept: served against read, after checking the two sections are the same."""
    import subprocess
    import time

    _box(tmp_path)
    time.sleep(0.01)
    root = Path(__file__).resolve().parents[2]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "STACKCHECK_PLAN_CACHE": "1"}
    run = subprocess.run(
        [sys.executable, str(root / "bench" / "bench_kernel_symbols.py"), "--site", str(tmp_path / "site"), "--kept",
         "--runs", "1"],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    # the files were written a moment ago (racily clean: not kept), so the row says why it is not timed
    assert "kept: nothing kept (a file changed in the last 2 s" in run.stdout, run.stdout
    time.sleep(2.1)  # (kept.RACY_NS: the files are now old enough to be kept)
    again = subprocess.run(run.args, capture_output=True, text=True, timeout=120, check=False, env=env)
    assert again.returncode == 0, again.stderr
    assert "kept: served section identical to the read one (less ms): True" in again.stdout, again.stdout
    assert "probe kept: median wall" in again.stdout and "probe read: median wall" in again.stdout
