"""The kernel symbol probe (readers/kernelsymbols.py, probes/kernel_symbols.py) over a fake site-packages of
small libraries written by tests/elfwriter.py, and the two checks it decides (sgl-kernel-torch-abi and
driver-api) through the whole pipeline."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from elfwriter import write_so

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report
from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.kernel_symbols import KernelSymbolsProbe
from stackcheck.readers.fsview import HostView
from stackcheck.readers.kernelsymbols import is_driver_symbol, is_torch_symbol, probe_kernel_symbols, readable

SET_DEVICE_NEW = "_ZN3c104cuda9SetDeviceEab"  # torch 2.8's c10::cuda::SetDevice(signed char, bool)
SET_DEVICE_OLD = "_ZN3c104cuda9SetDeviceEa"  # torch 2.7's
ALLOC = "_ZN3c1019UndefinedTensorImpl10_singletonE"
OP = "_ZN2at4_ops3add4callERKNS_6TensorES4_RKN3c106ScalarE"


def _box(
    root: Path,
    *,
    torch_exports: list[str],
    kernel_needs: list[str],
    driver_exports: list[str] | None,
    variants: tuple[str, ...] = ("",),
    kernel_needed: tuple[str, ...] = ("libtorch.so", "libc10.so"),
) -> Path:
    site = root / "site"
    lib = site / "torch" / "lib"
    lib.mkdir(parents=True)
    write_so(lib / "libtorch.so", needed=["libtorch_cpu.so", "libtorch_cuda.so"], soname="libtorch.so")
    write_so(lib / "libtorch_cpu.so", defined=[OP], needed=["libc10.so"])
    write_so(lib / "libtorch_cuda.so", defined=["_ZN2at4cuda20getCurrentCUDAStreamEa"], needed=["libc10_cuda.so"])
    write_so(lib / "libc10.so", defined=[ALLOC])
    write_so(lib / "libc10_cuda.so", defined=torch_exports)
    for v in variants:
        d = site / "sgl_kernel" / v if v else site / "sgl_kernel"
        d.mkdir(parents=True, exist_ok=True)
        write_so(
            d / "common_ops.abi3.so",
            undefined=[ALLOC, OP, *kernel_needs, "memcpy", "cudaMalloc", "_ZNSt6vectorIiSaIiEE9push_backERKi"],
            needed=[*kernel_needed, "libcuda.so.1"],
        )
    if driver_exports is not None:
        drv = root / "usr" / "lib" / "x86_64-linux-gnu"
        drv.mkdir(parents=True)
        write_so(drv / "libcuda.so.1", defined=driver_exports)
    return site


def _packages(site: Path, kernel_version: str | None = "0.3.0", torch_version: str | None = "2.7.1") -> dict[str, Any]:
    kernel: dict[str, Any] = {"installed": True, "location": str(site)}
    if kernel_version:
        kernel["version"] = kernel_version
    torch: dict[str, Any] = {"installed": True, "location": str(site)}
    if torch_version:
        torch["version"] = torch_version
    return {"sgl-kernel": kernel, "torch": torch}


def test_symbol_classes_and_readable_names() -> None:
    assert is_torch_symbol(SET_DEVICE_NEW) and is_torch_symbol(OP) and is_torch_symbol("_ZNK3c1010TensorImpl4sizeEl")
    assert is_torch_symbol("_ZTVN3c1011StorageImplE") and is_torch_symbol("_ZN3c10dvERKNS_6SymIntEi")
    assert is_torch_symbol("_ZN5torch3jit17parseSchemaOrNameERKSsb")
    assert not is_torch_symbol("_ZNSt6vectorIN3c106IValueESaIS1_EE7reserveEm")  # std::, defined by the extension
    assert not is_torch_symbol("_ZN6atomic3getEv") and not is_torch_symbol("memcpy")
    assert is_driver_symbol("cuGreenCtxCreate") and is_driver_symbol("cuCtxPushCurrent_v2")
    assert not is_driver_symbol("cudaMalloc") and not is_driver_symbol("cublasCreate_v2")
    # GPUDirect Storage's API (libcufile, not libcuda): torch 2.11's libtorch_python.so calls these, and a driver
    # that lacks them is not too old (read on the H200, driver 580.159.04)
    assert not is_driver_symbol("cuFileBufRegister") and not is_driver_symbol("cuFileHandleDeregister")
    assert readable(SET_DEVICE_NEW) == "c10::cuda::SetDevice"
    assert readable("_ZN5torch3jit17parseSchemaOrNameERKSsb") == "torch::jit::parseSchemaOrName"
    assert readable("_ZTVN3c1011StorageImplE") == "vtable for c10::StorageImpl"
    assert readable("_ZN3c1010TensorImplD2Ev") == "c10::TensorImpl::~TensorImpl"
    assert readable("_ZN3c108ArrayRefIlEC1Ev") == "c10::ArrayRef<…>::ArrayRef"
    assert readable("_ZN3c10dvERKNS_6SymIntEi") == "_ZN3c10dvERKNS_6SymIntEi"  # an operator: left mangled
    assert readable("memcpy") == "memcpy"


def test_mismatched_torch_names_the_missing_symbol(tmp_path: Path) -> None:
    site = _box(tmp_path, torch_exports=[SET_DEVICE_OLD], kernel_needs=[SET_DEVICE_NEW], driver_exports=None)
    ks = probe_kernel_symbols(_packages(site), HostView("/"), None)
    assert ks is not None and "error" not in ks
    (f,) = ks["files"]
    assert f["path"] == "sgl_kernel/common_ops.abi3.so"
    assert f["torch_symbols"] == 3 and f["driver_symbols"] == 0
    assert f["torch_missing_count"] == 1 and f["torch_missing"] == [SET_DEVICE_NEW]
    # DT_NEEDED followed breadth first inside torch/lib (libtorch.so brings libtorch_cpu and libtorch_cuda)
    assert f["torch_libs"] == ["libtorch.so", "libc10.so", "libtorch_cpu.so", "libtorch_cuda.so", "libc10_cuda.so"]
    assert "driver_missing_count" not in f  # no libcuda looked at: the driver half does not decide


def test_matching_torch_and_per_arch_copies(tmp_path: Path) -> None:
    site = _box(tmp_path, torch_exports=[SET_DEVICE_NEW], kernel_needs=[SET_DEVICE_NEW], driver_exports=None,
                variants=("sm90", "sm100"))  # fmt: skip
    ks = probe_kernel_symbols(_packages(site), HostView("/"), None)
    assert ks is not None
    assert [f["path"] for f in ks["files"]] == [
        "sgl_kernel/sm100/common_ops.abi3.so",
        "sgl_kernel/sm90/common_ops.abi3.so",
    ]
    assert all(f["torch_missing_count"] == 0 for f in ks["files"])


def test_no_torch_library_named_uses_the_usual_ones(tmp_path: Path) -> None:
    site = _box(tmp_path, torch_exports=[SET_DEVICE_NEW], kernel_needs=[SET_DEVICE_NEW], driver_exports=None,
                kernel_needed=())  # fmt: skip
    ks = probe_kernel_symbols(_packages(site), HostView("/"), None)
    assert ks is not None
    assert ks["files"][0]["torch_missing_count"] == 0
    assert set(ks["files"][0]["torch_libs"]) == {
        "libtorch.so",
        "libtorch_cpu.so",
        "libtorch_cuda.so",
        "libc10.so",
        "libc10_cuda.so",
    }


C10D = "_ZN4c10d16ProcessGroupNCCL14getBackendNameB5cxx11Ev"  # c10d:: (libtorch_cuda.so), shape of a real export
WRAP = "_Z16THPVariable_WrapN2at10TensorBaseE"  # THPVariable_Wrap(at::TensorBase), libtorch_python.so
CLASS = "THPVariableClass"  # a variable of torch's Python bindings: unmangled


def test_c10d_and_python_binding_names_are_torch_names() -> None:
    assert is_torch_symbol(C10D) and is_torch_symbol("_ZTVN4c10d7BackendE") and is_torch_symbol(WRAP)
    assert is_torch_symbol(CLASS) and is_torch_symbol("_ZTI13THPObjectPtr")
    assert (
        not is_torch_symbol("_ZN4c10x3fooEv")
        and not is_torch_symbol("THREAD_local")
        and not is_torch_symbol("PyModule_Create2")
    )


def test_c10d_and_python_binding_names_are_looked_up(tmp_path: Path) -> None:
    """A hand-built kernel needing c10d:: (libtorch_cpu / libtorch_cuda) and THP* names (libtorch_python.so) that
    the installed torch does not export: before, these names were not torch's, so the check said ok."""
    site = _box(tmp_path, torch_exports=[SET_DEVICE_NEW], kernel_needs=[SET_DEVICE_NEW, C10D, WRAP, CLASS],
                driver_exports=None, kernel_needed=("libtorch.so", "libc10.so", "libtorch_python.so"))  # fmt: skip
    write_so(site / "torch/lib/libtorch_python.so", defined=[CLASS], needed=["libtorch.so"])
    ks = probe_kernel_symbols(_packages(site), HostView("/"), None)
    assert ks is not None
    (f,) = ks["files"]
    assert f["torch_symbols"] == 6 and "libtorch_python.so" in f["torch_libs"]
    assert f["torch_missing_count"] == 2 and f["torch_missing"] == [C10D, WRAP]
    write_so(site / "torch/lib/libtorch_python.so", defined=[CLASS, WRAP], needed=["libtorch.so"])
    write_so(site / "torch/lib/libtorch_cuda.so", defined=[C10D], needed=["libc10_cuda.so"])
    ks = probe_kernel_symbols(_packages(site), HostView("/"), None)
    assert ks is not None and ks["files"][0]["torch_missing_count"] == 0


def test_python_bindings_are_in_scope_only_when_named_or_global(tmp_path: Path) -> None:
    """torch._C loads libtorch_python.so with RTLD_LOCAL: a kernel that needs THPVariable_Wrap without naming the
    library fails to import ('undefined symbol'), unless torch was imported with RTLD_GLOBAL
    (TORCH_USE_RTLD_GLOBAL in the server's environment)."""
    site = _box(tmp_path, torch_exports=[SET_DEVICE_NEW], kernel_needs=[SET_DEVICE_NEW, WRAP], driver_exports=None)
    write_so(site / "torch/lib/libtorch_python.so", defined=[WRAP], needed=["libtorch.so"])
    ks = probe_kernel_symbols(_packages(site), HostView("/"), None)
    assert ks is not None and ks["files"][0]["torch_missing"] == [WRAP]
    ks = probe_kernel_symbols(_packages(site), HostView("/"), None, global_torch=True)
    assert ks is not None and ks["torch_global"] is True
    assert ks["files"][0]["torch_missing_count"] == 0 and "libtorch_python.so" in ks["files"][0]["torch_libs"]
    root_site = "/" + str(site.relative_to(tmp_path))
    for env, missing in (({}, 1), ({"TORCH_USE_RTLD_GLOBAL": "1"}, 0)):
        ctx = ProbeContext(env={}, launch_env=env, root=str(tmp_path), facts={"packages": _packages(Path(root_site))})
        assert KernelSymbolsProbe().run(ctx).facts["kernel_symbols"]["files"][0]["torch_missing_count"] == missing


def test_a_torch_library_not_read_leaves_a_name_unknown(tmp_path: Path) -> None:
    """The kernel names libtorch_python.so, which is not in torch/lib (not read): a THP name none of the libraries
    read exports may be its; unknown (torch_error), never missing. With every name found, nothing is unknown."""
    site = _box(tmp_path, torch_exports=[SET_DEVICE_NEW], kernel_needs=[SET_DEVICE_NEW, WRAP], driver_exports=None,
                kernel_needed=("libtorch.so", "libc10.so", "libtorch_python.so"))  # fmt: skip
    ks = probe_kernel_symbols(_packages(site), HostView("/"), None)
    assert ks is not None
    (f,) = ks["files"]
    assert "torch_missing_count" not in f and f["torch_unread"] == ["libtorch_python.so"]
    assert "libtorch_python.so" in f["torch_error"] and WRAP in f["torch_error"]
    site2 = _box(tmp_path / "b", torch_exports=[SET_DEVICE_NEW], kernel_needs=[SET_DEVICE_NEW], driver_exports=None,
                 kernel_needed=("libtorch.so", "libc10.so", "libtorch_python.so"))  # fmt: skip
    ks = probe_kernel_symbols(_packages(site2), HostView("/"), None)
    assert ks is not None and ks["files"][0]["torch_missing_count"] == 0 and "torch_error" not in ks["files"][0]


def test_broken_kernel_file_is_an_error_string(tmp_path: Path) -> None:
    site = _box(tmp_path, torch_exports=[], kernel_needs=[], driver_exports=None)
    so = site / "sgl_kernel" / "common_ops.abi3.so"
    so.write_bytes(so.read_bytes()[:100])
    ks = probe_kernel_symbols(_packages(site), HostView("/"), None)
    assert ks is not None
    err = ks["files"][0]["error"]
    assert "common_ops.abi3.so" in err and "\n" not in err


@pytest.mark.parametrize("how", ["dangling", "loop", "fifo"])
def test_unreadable_per_arch_copy_is_an_error_not_left_out(tmp_path: Path, how: str) -> None:
    """A per-architecture copy that is a dangling symlink, a symlink loop or a FIFO is what sgl_kernel loads on
    that GPU (and fails to): an error entry (the checks say unknown), not a file silently left out of the list
    while the other copy passes."""
    import os

    site = _box(tmp_path, torch_exports=[SET_DEVICE_NEW], kernel_needs=[SET_DEVICE_NEW], driver_exports=None,
                variants=("", "sm90"))  # fmt: skip
    so = site / "sgl_kernel" / "sm90" / "common_ops.abi3.so"
    so.unlink()
    if how == "dangling":
        os.symlink(tmp_path / "gone.so", so)
    elif how == "loop":
        os.symlink(so, so)
    else:
        os.mkfifo(so)
    ks = probe_kernel_symbols(_packages(site), HostView("/"), None)
    assert ks is not None
    by_path = {f["path"]: f for f in ks["files"]}
    assert "sgl_kernel/sm90/common_ops.abi3.so" in by_path, ks["files"]
    assert "error" in by_path["sgl_kernel/sm90/common_ops.abi3.so"]


def test_broken_torch_library_is_a_torch_error(tmp_path: Path) -> None:
    site = _box(tmp_path, torch_exports=[SET_DEVICE_NEW], kernel_needs=[SET_DEVICE_NEW], driver_exports=None)
    (site / "torch" / "lib" / "libc10_cuda.so").write_bytes(b"\x7fELF\x01" + b"\0" * 80)  # a 32-bit header
    ks = probe_kernel_symbols(_packages(site), HostView("/"), None)
    assert ks is not None
    (f,) = ks["files"]
    assert "libc10_cuda.so" in f["torch_error"] and "not ELF64" in f["torch_error"]
    assert "torch_missing_count" not in f  # not judged: the release pins decide


def test_probe_reads_the_driver_of_a_host_view(tmp_path: Path) -> None:
    site = _box(tmp_path, torch_exports=[SET_DEVICE_NEW], kernel_needs=[SET_DEVICE_NEW, "cuGreenCtxCreate", "cuInit"],
                driver_exports=["cuInit", "cuCtxCreate_v2"])  # fmt: skip
    # the view is the fake root; package locations are box paths under it
    box_site = "/" + str(site.relative_to(tmp_path))
    ctx = ProbeContext(env={"LD_LIBRARY_PATH": ""}, root=str(tmp_path), facts={"packages": _packages(Path(box_site))})
    result = KernelSymbolsProbe().run(ctx)
    assert result.status == "ok", result.reason
    ks = result.facts["kernel_symbols"]
    assert ks["libcuda"] == "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
    (f,) = ks["files"]
    assert f["driver_symbols"] == 2 and f["driver_missing_count"] == 1 and f["driver_missing"] == ["cuGreenCtxCreate"]
    assert f["torch_missing_count"] == 0


def test_probe_reads_the_libcuda_of_the_launch_environment(tmp_path: Path) -> None:
    """A gate whose command sets LD_LIBRARY_PATH (`env LD_LIBRARY_PATH=/usr/local/cuda/compat python -m
    sglang.launch_server`, a CUDA forward-compat libcuda) is judged against the libcuda that launch loads, not
    the audit's: before, an older driver in the default directory was read, and with the compat copy the launch
    needs missing a symbol the check passed (or the other way round)."""
    site = _box(tmp_path, torch_exports=[SET_DEVICE_NEW], kernel_needs=[SET_DEVICE_NEW, "cuGreenCtxCreate"],
                driver_exports=["cuGreenCtxCreate"])  # fmt: skip
    compat = tmp_path / "usr/local/cuda/compat"
    compat.mkdir(parents=True)
    write_so(compat / "libcuda.so.1", defined=["cuInit"])
    box_site = "/" + str(site.relative_to(tmp_path))
    facts = {"packages": _packages(Path(box_site))}
    launch = {"LD_LIBRARY_PATH": "/usr/local/cuda/compat"}
    ctx = ProbeContext(env={"LD_LIBRARY_PATH": ""}, launch_env=launch, root=str(tmp_path), facts=facts)
    ks = KernelSymbolsProbe().run(ctx).facts["kernel_symbols"]
    assert ks["libcuda"] == "/usr/local/cuda/compat/libcuda.so.1"
    assert ks["files"][0]["driver_missing"] == ["cuGreenCtxCreate"]
    audit = ProbeContext(env={"LD_LIBRARY_PATH": ""}, root=str(tmp_path), facts=facts)  # no launch: the audit's
    assert (
        KernelSymbolsProbe().run(audit).facts["kernel_symbols"]["libcuda"] == "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
    )


def test_gather_gives_the_probes_the_gated_commands_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """`stackcheck gate --python PY -- env LD_LIBRARY_PATH=/compat python -m sglang.launch_server ...`: the target
    interpreter runs with the audit's environment (--python), the loader's probes see the launch's."""
    from stackcheck.assembly import pipeline
    from stackcheck.probes import runner

    seen: list[ProbeContext] = []

    def fake_run_probes(names: list[str], ctx: ProbeContext, budget_s: float | None = None) -> tuple[Any, Any]:
        seen.append(ctx)
        return {}, []

    monkeypatch.setattr(runner, "run_probes", fake_run_probes)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/audit/lib")
    command = ["env", "-u", "FOO", "LD_LIBRARY_PATH=/compat", "nohup", "python3", "-m", "sglang.launch_server"]
    pipeline.gather(Options(python=sys.executable, command=command))
    assert seen[-1].env["LD_LIBRARY_PATH"] == "/audit/lib"
    assert seen[-1].loader_environ["LD_LIBRARY_PATH"] == "/compat"
    pipeline.gather(Options(python=sys.executable))  # an audit: no launch, the audit's environment
    assert seen[-1].loader_environ["LD_LIBRARY_PATH"] == "/audit/lib"


def test_probe_without_kernel_package_is_skipped() -> None:
    ctx = ProbeContext(env={}, facts={"packages": {"torch": {"installed": True, "location": "/nowhere"}}})
    assert KernelSymbolsProbe().run(ctx).status == "skipped"


# -- the checks -------------------------------------------------------------------------------------------------


def _report(tmp_path: Path, facts: dict[str, Any]) -> dict[str, Any]:
    doc = {"schema_version": 1, "facts": facts}
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    report, _ = build_report(Options(facts_file=str(path)))
    return {c["id"]: c for c in report["checks"]}


BASE: dict[str, Any] = {
    "driver": {"version": "580.95.05", "cuda": "13.0"},
    "gpus": [{"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0"}],
}


def _file(**kw: Any) -> dict[str, Any]:
    return {"path": "sgl_kernel/common_ops.abi3.so", "torch_symbols": 107, "driver_symbols": 19, **kw}


def test_torch_abi_fails_for_a_hand_built_kernel_without_version(tmp_path: Path) -> None:
    facts = {
        **BASE,
        "packages": {"sgl-kernel": {"installed": True}, "torch": {"installed": True, "version": "2.7.1"}},
        "kernel_symbols": {
            "package": "sgl-kernel",
            "version": None,
            "torch_version": "2.7.1",
            "files": [_file(torch_missing_count=1, torch_missing=[SET_DEVICE_NEW])],
        },
    }
    check = _report(tmp_path, facts)["sgl-kernel-torch-abi"]
    assert check["status"] == "failed"
    msg = check["reasons"][0]["message"]
    assert "torch 2.7.1" in msg and "c10::cuda::SetDevice" in msg and SET_DEVICE_NEW in msg
    assert check["fix"]["component"] == "sgl-kernel" and "rebuild" in check["fix"]["text"]
    # the same box without the section: skipped; the release path (sgl-kernel-torch-pair) cannot tell
    del facts["kernel_symbols"]
    checks = _report(tmp_path, facts)
    assert checks["sgl-kernel-torch-abi"]["status"] == "skipped"
    assert checks["sgl-kernel-torch-pair"]["status"] == "unknown"


def test_torch_abi_passes_when_every_symbol_resolves_and_is_skipped_without_it(tmp_path: Path) -> None:
    facts = {
        **BASE,
        "packages": {
            "sgl-kernel": {"installed": True, "version": "0.3.0"},
            "torch": {"installed": True, "version": "2.7.1"},
        },
        "kernel_symbols": {"package": "sgl-kernel", "version": "0.3.0", "files": [_file(torch_missing_count=0)]},
    }
    checks = _report(tmp_path, facts)
    assert checks["sgl-kernel-torch-abi"]["status"] == "ok"
    assert checks["sgl-kernel-torch-pair"]["status"] == "failed"  # the release pins still say what SGLang pins
    del facts["kernel_symbols"]  # without the section the release pins decide, in sgl-kernel-torch-pair only
    checks = _report(tmp_path, facts)
    skipped = checks["sgl-kernel-torch-abi"]
    assert skipped["status"] == "skipped" and [r["result"] for r in skipped["reasons"]] == ["pass"]
    assert "sgl-kernel-torch-pair" in skipped["reasons"][0]["message"]  # it says why: the pins decide
    assert checks["sgl-kernel-torch-pair"]["status"] == "failed"


@pytest.mark.parametrize(
    ("driver", "kernel", "file", "status", "words"),
    [
        # the symbol path decides: a 0.2.7 build on a CUDA 12.2 driver whose libcuda exports every function
        ("535.86.10", "0.2.7", {"driver_missing_count": 0}, "ok", ["exported by driver 535.86.10"]),
        # a build the release rule does not know (0.3.9) calling a function driver 550 lacks
        (
            "550.54.15",
            "0.3.9",
            {"driver_missing_count": 1, "driver_missing": ["cuGreenCtxStreamCreate"]},
            "failed",
            ["driver 550.54.15", "cuGreenCtxStreamCreate", "driver is too old"],
        ),
        # no driver half (an image): the release-number rule decides as before
        ("535.86.10", "0.2.7", {}, "failed", ["cuGreenCtxDestroy"]),
    ],
)
def test_driver_api_symbol_path(tmp_path: Path, driver: str, kernel: str, file: dict[str, Any], status: str,
                                words: list[str]) -> None:  # fmt: skip
    facts = {
        **BASE,
        "driver": {"version": driver, "cuda": "12.2" if driver.startswith("535") else "12.4"},
        "packages": {
            "sgl-kernel": {"installed": True, "version": kernel},
            "torch": {"installed": True, "version": "2.8.0"},
        },
        "kernel_symbols": {
            "package": "sgl-kernel",
            "version": kernel,
            "libcuda": "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
            "files": [_file(torch_missing_count=0, **file)],
        },
    }
    check = _report(tmp_path, facts)["driver-api"]
    assert check["status"] == status, check
    text = " ".join(str(r.get("message")) for r in check["reasons"])
    assert all(w in text for w in words), text


def test_probe_skips_an_image_view(tmp_path: Path) -> None:
    """Inside an image the libraries come out of compressed layers (seconds for torch's): not read there."""
    site = _box(tmp_path, torch_exports=[SET_DEVICE_NEW], kernel_needs=[SET_DEVICE_NEW], driver_exports=None)

    class NotAHost:  # any FileView that is not a HostView (an ImageView)
        pass

    ctx = ProbeContext(env={}, view=NotAHost(), facts={"packages": _packages(site)})  # type: ignore[arg-type]
    result = KernelSymbolsProbe().run(ctx)
    assert result.status == "skipped" and "image" in str(result.reason) and result.facts == {}


@pytest.mark.parametrize(
    "extra",
    [
        # a second common_ops copy the probe could not read: its driver calls are unknown
        {"files": [{"path": "sgl_kernel/sm100/common_ops.abi3.so", "error": "truncated"}]},
        # more copies than the probe reads
        {"files_skipped": 1},
    ],
)
def test_driver_api_release_rule_decides_when_a_file_was_not_read(tmp_path: Path, extra: dict[str, Any]) -> None:
    """A symbol half that read only some of the kernel's files does not silence the release rule: sgl-kernel
    0.2.7 on a CUDA 12.2 driver still fails driver-api (green-context) when one copy went unread."""
    facts = {
        **BASE,
        "driver": {"version": "535.86.10", "cuda": "12.2"},
        "packages": {
            "sgl-kernel": {"installed": True, "version": "0.2.7"},
            "torch": {"installed": True, "version": "2.8.0"},
        },
        "kernel_symbols": {
            "package": "sgl-kernel",
            "version": "0.2.7",
            "libcuda": "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
            "files": [_file(torch_missing_count=0, driver_symbols=0, driver_missing_count=0), *extra.get("files", [])],
            **{k: v for k, v in extra.items() if k != "files"},
        },
    }
    check = _report(tmp_path, facts)["driver-api"]
    assert check["status"] == "failed", check
    assert "cuGreenCtxDestroy" in " ".join(str(r.get("message")) for r in check["reasons"])


def test_torch_abi_is_unknown_with_copies_past_the_limit(tmp_path: Path) -> None:
    """Copies past MAX_FILES were not read: the judged ones passing does not make the check ok."""
    facts = {
        **BASE,
        "packages": {
            "sgl-kernel": {"installed": True, "version": "0.3.0"},
            "torch": {"installed": True, "version": "2.8.0"},
        },
        "kernel_symbols": {
            "package": "sgl-kernel",
            "version": "0.3.0",
            "files": [_file(torch_missing_count=0)],
            "files_skipped": 2,
        },
    }
    check = _report(tmp_path, facts)["sgl-kernel-torch-abi"]
    assert check["status"] == "unknown", check
    assert any("2" in str(r.get("message")) and "not read" in str(r.get("message")) for r in check["reasons"])


# -- the lazily imported modules (spatial_ops, flash_ops, flashmla_ops) --------------------------------------------


def test_lazily_imported_modules_are_read_too(tmp_path: Path) -> None:
    """sgl-kernel 0.3.21 ships spatial_ops, flash_ops and flashmla_ops beside common_ops, each imported only by the
    feature that uses it; before, they were not read at all (a torch or driver symbol missing there passed)."""
    site = _box(tmp_path, torch_exports=[SET_DEVICE_NEW], kernel_needs=[SET_DEVICE_NEW], driver_exports=None)
    write_so(site / "sgl_kernel/spatial_ops.abi3.so", undefined=[ALLOC, "cuGreenCtxCreate"], needed=["libc10.so"])
    write_so(site / "sgl_kernel/flash_ops.abi3.so", undefined=[ALLOC, SET_DEVICE_OLD], needed=["libc10.so"])
    (site / "sgl_kernel/common_ops.abi3.so.d").mkdir()  # not a library, nor a module
    ks = probe_kernel_symbols(_packages(site), HostView("/"), str(site / "torch/lib/libc10.so"))
    assert ks is not None
    assert [f["path"] for f in ks["files"]] == ["sgl_kernel/common_ops.abi3.so"]
    mods = {m["module"]: m for m in ks["modules"]}
    assert set(mods) == {"flash_ops", "spatial_ops"}
    assert mods["flash_ops"]["torch_missing"] == [SET_DEVICE_OLD] and mods["flash_ops"]["torch_libs"] == ["libc10.so"]
    assert mods["spatial_ops"]["torch_missing_count"] == 0 and mods["spatial_ops"]["driver_missing"] == [
        "cuGreenCtxCreate"
    ]


def test_a_module_missing_symbols_is_a_warning_not_a_crash(tmp_path: Path) -> None:
    """A module's failed load breaks the feature that imports it, not `import sgl_kernel`: a degraded failure (the
    check warns), while common_ops' own symbols still decide a crash."""
    module = {"module": "flash_ops", "path": "sgl_kernel/flash_ops.abi3.so", "torch_symbols": 40, "driver_symbols": 2}
    ks = {"package": "sgl-kernel", "version": "0.3.21", "torch_version": "2.9.1", "libcuda": "/x/libcuda.so.1"}
    common = _file(torch_missing_count=0, torch_missing=[], driver_missing_count=0, driver_missing=[])
    flash = {**module, "torch_missing_count": 1, "torch_missing": [SET_DEVICE_NEW], "driver_missing_count": 1}
    flash["driver_missing"] = ["cuGreenCtxCreate"]
    pkgs = {"sgl-kernel": {"installed": True, "version": "0.3.21"}, "torch": {"installed": True, "version": "2.9.1"}}
    checks = _report(
        tmp_path, {**BASE, "packages": pkgs, "kernel_symbols": {**ks, "files": [common], "modules": [flash]}}
    )
    for cid in ("sgl-kernel-torch-abi", "driver-api"):
        assert checks[cid]["status"] == "warning", checks[cid]
        (bad,) = [r for r in checks[cid]["reasons"] if r["result"] == "fail"]
        assert bad["effect"] == "degraded" and "sgl_kernel.flash_ops" in bad["message"], bad
    fine = {**flash, "torch_missing_count": 0, "torch_missing": [], "driver_missing_count": 0, "driver_missing": []}
    checks = _report(
        tmp_path, {**BASE, "packages": pkgs, "kernel_symbols": {**ks, "files": [common], "modules": [fine]}}
    )
    assert checks["sgl-kernel-torch-abi"]["status"] == "ok" and checks["driver-api"]["status"] == "ok"
