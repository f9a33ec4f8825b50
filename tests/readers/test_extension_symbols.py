"""Other packages' compiled torch extensions (readers/kernelsymbols.py EXTENSIONS: LMCache's c_ops, torchao's _C,
...) read beside sgl-kernel's common_ops, over a fake site-packages of small libraries written by
tests/elfwriter.py, and the extension-torch-abi-* checks that judge them (manifests/checks.json)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from elfwriter import write_so

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report
from stackcheck.readers import kernelsymbols
from stackcheck.readers.fsview import HostView
from stackcheck.readers.kernelsymbols import probe_kernel_symbols

ERROR_CTOR = "_ZN3c105ErrorC2ENS_14SourceLocationESs"  # c10::Error's constructor of an older torch (LMCache#1294)
ALLOC = "_ZN3c1019UndefinedTensorImpl10_singletonE"
OP = "_ZN2at4_ops3add4callERKNS_6TensorES4_RKN3c106ScalarE"
SCHEMA = "_ZN5torch3jit17parseSchemaOrNameERKSsb"  # only in libtorch_python.so below


def _site(root: Path, lmcache_needs: list[str], lmcache_needed: tuple[str, ...] = ("libc10.so",)) -> Path:
    site = root / "site"
    lib = site / "torch" / "lib"
    lib.mkdir(parents=True)
    write_so(lib / "libtorch.so", needed=["libtorch_cpu.so"], soname="libtorch.so")
    write_so(lib / "libtorch_cpu.so", defined=[OP], needed=["libc10.so"])
    write_so(lib / "libc10.so", defined=[ALLOC])
    write_so(lib / "libtorch_python.so", defined=[SCHEMA], needed=["libtorch.so"])
    (site / "sgl_kernel").mkdir()
    write_so(site / "sgl_kernel" / "common_ops.abi3.so", undefined=[ALLOC, OP], needed=["libtorch.so", "libc10.so"])
    (site / "lmcache").mkdir()
    write_so(
        site / "lmcache" / "c_ops.cpython-312-x86_64-linux-gnu.so",
        undefined=[ALLOC, *lmcache_needs, "memcpy"],
        needed=list(lmcache_needed),
    )
    (site / "torchao").mkdir()
    write_so(site / "torchao" / "_C_cutlass_90a.abi3.so", undefined=[OP], needed=["libtorch.so"])
    return site


def _packages(site: Path) -> dict[str, Any]:
    return {
        "sgl-kernel": {"installed": True, "version": "0.3.21", "location": str(site)},
        "torch": {"installed": True, "version": "2.8.0", "location": str(site)},
    }


def test_extension_built_against_another_torch_names_the_missing_symbol(tmp_path: Path) -> None:
    site = _site(tmp_path, [ERROR_CTOR])
    section = probe_kernel_symbols(_packages(site), HostView("/"), None)
    assert section is not None and section["extension_dirs"] == [str(site)]
    by = {e["extension"]: e for e in section["extensions"]}
    assert set(by) == {"lmcache", "torchao"}
    lm = by["lmcache"]
    assert lm["path"] == "lmcache/c_ops.cpython-312-x86_64-linux-gnu.so"
    assert lm["torch_missing_count"] == 1 and lm["torch_missing"] == [ERROR_CTOR] and lm["torch_libs"] == ["libc10.so"]
    assert by["torchao"]["torch_missing_count"] == 0 and by["torchao"]["torch_symbols"] == 1
    assert section["files"][0]["torch_missing_count"] == 0  # sgl-kernel itself is fine


def test_a_symbol_a_needed_library_exports_is_not_missing(tmp_path: Path) -> None:
    # the extension names libtorch_python.so in DT_NEEDED: the loader searches it, so its symbol resolves
    site = _site(tmp_path, [SCHEMA], lmcache_needed=("libc10.so", "libtorch_python.so"))
    section = probe_kernel_symbols(_packages(site), HostView("/"), None)
    assert section is not None
    lm = next(e for e in section["extensions"] if e["extension"] == "lmcache")
    assert lm["torch_missing_count"] == 0 and "libtorch_python.so" in lm["torch_libs"]
    # without naming it (nor RTLD_GLOBAL) the same symbol is what the import fails on
    site2 = _site(tmp_path / "b", [SCHEMA])
    section2 = probe_kernel_symbols(_packages(site2), HostView("/"), None)
    assert section2 is not None
    lm2 = next(e for e in section2["extensions"] if e["extension"] == "lmcache")
    assert lm2["torch_missing"] == [SCHEMA]


def test_a_library_past_the_size_cap_is_unknown(tmp_path: Path, monkeypatch: Any) -> None:
    site = _site(tmp_path, [])
    monkeypatch.setattr(kernelsymbols, "EXTENSION_MAX_BYTES", 16)
    section = probe_kernel_symbols(_packages(site), HostView("/"), None)
    assert section is not None
    errors = [e for e in section["extensions"] if "error" in e]
    assert {e["extension"] for e in errors} == {"lmcache", "torchao"}
    assert all("limit: not read" in e["error"] and "torch_missing_count" not in e for e in errors)


# -- the checks -------------------------------------------------------------------------------------------------


def _checks(tmp_path: Path, facts: dict[str, Any], launch: dict[str, Any] | None = None) -> dict[str, Any]:
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    report, _ = build_report(Options(facts_file=str(path), launch=launch or {}))
    return {c["id"]: c for c in report["checks"]}


def _facts(extensions: list[dict[str, Any]] | None) -> dict[str, Any]:
    ks: dict[str, Any] = {
        "package": "sgl-kernel",
        "version": "0.3.21",
        "torch_version": "2.8.0",
        "files": [{"path": "sgl_kernel/common_ops.abi3.so", "torch_symbols": 2, "torch_missing_count": 0}],
    }
    if extensions is not None:
        ks["extension_dirs"] = ["/site"]
        ks["extensions"] = extensions
    return {
        "driver": {"version": "580.95.05", "cuda": "13.0"},
        "gpus": [{"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0"}],
        "packages": {
            "sgl-kernel": {"installed": True, "version": "0.3.21"},
            "torch": {"installed": True, "version": "2.8.0"},
        },
        "kernel_symbols": ks,
    }


def test_checks_fail_pass_unknown_and_skip(tmp_path: Path) -> None:
    lm = {
        "extension": "lmcache",
        "path": "lmcache/c_ops.cpython-312-x86_64-linux-gnu.so",
        "torch_symbols": 40,
        "torch_missing_count": 1,
        "torch_missing": [ERROR_CTOR],
    }
    vllm = {"extension": "vllm", "path": "vllm/_C.abi3.so", "error": "vllm/_C.abi3.so: 1400 MiB, past the limit"}
    checks = _checks(tmp_path, _facts([lm, vllm]), {"enable_lmcache": True})  # a launch with --enable-lmcache
    c = checks["extension-torch-abi-lmcache"]
    assert c["status"] == "failed"
    r = c["reasons"][0]
    assert r["observed"] == "1 of 40 missing" and r["required"] == "0 missing" and r["source"] == "ELF-DYNSYM"
    assert "c10::Error::Error" in r["message"] and ERROR_CTOR in r["message"] and "torch 2.8.0" in r["message"]
    assert r["effect"] == "crash"
    # an audit (no launch sets enable_lmcache): the same failure is information, a warning
    audit = _checks(tmp_path, _facts([lm, vllm]))["extension-torch-abi-lmcache"]
    assert audit["status"] == "warning" and audit["reasons"][0]["effect"] == "degraded"
    assert "information only" in audit["reasons"][0]["message"]
    assert checks["extension-torch-abi-start"]["status"] == "unknown"  # vLLM's _C not read
    assert checks["extension-torch-abi-deepep"]["status"] == "ok"  # looked, none installed
    assert "no compiled library of deep_ep" in checks["extension-torch-abi-deepep"]["reasons"][0]["message"]
    # a degraded failure (torchao catches its own load failure) is a warning, not a failure
    tao = {**lm, "extension": "torchao", "path": "torchao/_C.abi3.so"}
    assert _checks(tmp_path, _facts([tao]))["extension-torch-abi-torchao"]["status"] == "warning"
    # an older facts document (no extension_dirs): skipped, never a guess
    old = _checks(tmp_path, _facts(None))
    assert all(old[i]["status"] == "skipped" for i in old if i.startswith("extension-torch-abi-"))


def test_torchao_is_loaded_on_every_launch_of_older_sglang(tmp_path: Path) -> None:
    """SGLang 0.4.6-0.5.8 import torchao on every model load (their apply_torchao_config_to_model imports it before
    testing the config): the failure is stated as such in an audit; 0.5.9 on only with --torchao-config."""
    tao = {
        "extension": "torchao",
        "path": "torchao/_C.abi3.so",
        "torch_symbols": 64,
        "torch_missing_count": 1,
        "torch_missing": ["_ZN3c104cuda9SetDeviceEab"],
    }
    for sglang, every in (("0.5.4", True), ("0.5.10", False)):
        facts = _facts([tao])
        facts["packages"]["sglang"] = {"installed": True, "version": sglang}
        (r,) = _checks(tmp_path, facts)["extension-torch-abi-torchao"]["reasons"]
        assert r["result"] == "fail" and r["effect"] == "degraded"
        assert ("imports it on every model load" in r["message"]) is every, r["message"]
        assert ("information only" in r["message"]) is not every, r["message"]


def test_an_editable_deep_ep_build_is_read_in_its_project_directory(tmp_path: Path) -> None:
    """irev52: DeepEP installed with `pip install -e` keeps deep_ep_cpp.*.so in its project directory (the packages
    probe's extension_dir), not in site-packages: read there, not passed as 'none installed'."""
    site = _site(tmp_path, [])
    project = tmp_path / "DeepEP"
    project.mkdir()
    write_so(project / "deep_ep_cpp.cpython-312-x86_64-linux-gnu.so", undefined=[ERROR_CTOR], needed=["libc10.so"])
    packages = _packages(site)
    packages["deep-ep"] = {
        "installed": True,
        "version": "1.2.1",
        "location": str(site),
        "extension_dir": str(project),
        "extension_files": ["deep_ep_cpp.cpython-312-x86_64-linux-gnu.so"],
    }
    section = probe_kernel_symbols(packages, HostView("/"), None)
    assert section is not None and section["extension_dirs"] == [str(site), str(project)]
    (ep,) = [e for e in section["extensions"] if e["extension"] == "deep_ep"]
    assert ep["torch_missing_count"] == 1 and ep["torch_missing"] == [ERROR_CTOR]


def test_a_launch_that_loads_an_extension_found_nowhere_is_unknown(tmp_path: Path) -> None:
    """irev52: --enable-lmcache with no lmcache library in the directories the probe looked in (an editable LMCache
    build, a user site, or none at all): whether its c_ops loads is unknown, never 'ok'; an audit still passes."""
    gate = _checks(tmp_path, _facts([]), {"enable_lmcache": True})["extension-torch-abi-lmcache"]
    assert gate["status"] == "unknown", gate
    assert "looked in /site" in gate["reasons"][0]["message"]
    assert _checks(tmp_path, _facts([]))["extension-torch-abi-lmcache"]["status"] == "ok"


def test_the_copy_python_imports_first_is_the_one_read(tmp_path: Path) -> None:
    """irev53: the extension is read where the target's sys.path (facts.python.sys_path) finds it first, as Python's
    import does, not in torch's site-packages first: a user site or a PYTHONPATH directory comes before the system
    site-packages, so an LMCache there built against another torch is what `--enable-lmcache` loads (a false pass
    when the system copy, built for this torch, was read instead); one in a directory no probed package lives in
    is read too."""
    from stackcheck.probes.interface import ProbeContext
    from stackcheck.probes.kernel_symbols import KernelSymbolsProbe

    site = _site(tmp_path, [])  # torch's site-packages: an LMCache built for this torch
    user = tmp_path / "user-site"
    (user / "lmcache").mkdir(parents=True)
    (user / "lmcache" / "__init__.py").write_text("")
    write_so(user / "lmcache" / "c_ops.cpython-312-x86_64-linux-gnu.so", undefined=[ERROR_CTOR], needed=["libc10.so"])
    stdlib = tmp_path / "stdlib"
    stdlib.mkdir()
    sys_path = [str(stdlib), str(user), str(site)]
    ctx = ProbeContext(env={}, cache_dir="", facts={"python": {"sys_path": sys_path}, "packages": _packages(site)})
    ks = KernelSymbolsProbe().run(ctx).facts["kernel_symbols"]
    assert ks["extension_dirs"] == sys_path
    (lm,) = [e for e in ks["extensions"] if e["extension"] == "lmcache"]
    assert lm["path"] == "lmcache/c_ops.cpython-312-x86_64-linux-gnu.so"
    assert lm["torch_missing_count"] == 1 and lm["torch_missing"] == [ERROR_CTOR]
    # the gate of an --enable-lmcache launch refuses on that file's facts
    facts = _facts([lm])
    facts["kernel_symbols"]["extension_dirs"] = ks["extension_dirs"]
    assert _checks(tmp_path, facts, {"enable_lmcache": True})["extension-torch-abi-lmcache"]["status"] == "failed"
    # with the system site-packages first on the path, its copy (built for this torch) is the one loaded
    ctx = ctx.replace(facts={"python": {"sys_path": [str(site), str(user)]}, "packages": _packages(site)})
    ks = KernelSymbolsProbe().run(ctx).facts["kernel_symbols"]
    (lm,) = [e for e in ks["extensions"] if e["extension"] == "lmcache"]
    assert lm["torch_missing_count"] == 0


def test_a_regular_package_first_on_the_path_without_the_library_loads_none(tmp_path: Path) -> None:
    """irev53: Python imports a package from the first sys.path entry where it is a regular package (its
    __init__.py there) and looks for its extension module only inside it: an LMCache source checkout on PYTHONPATH
    with no c_ops built shadows the installed copy, so --enable-lmcache fails to import c_ops whatever that copy
    holds. Not read as the installed copy (a false pass): none loads, unknown for the launch that imports it. A
    namespace portion (no __init__.py) does not shadow: the installed copy is read."""
    from stackcheck.probes.interface import ProbeContext
    from stackcheck.probes.kernel_symbols import KernelSymbolsProbe

    site = _site(tmp_path, [])  # an LMCache built for this torch, installed
    checkout = tmp_path / "LMCache"
    (checkout / "lmcache").mkdir(parents=True)
    (checkout / "lmcache" / "__init__.py").write_text("")
    facts = {"python": {"sys_path": [str(checkout), str(site)]}, "packages": _packages(site)}
    ks = KernelSymbolsProbe().run(ProbeContext(env={}, cache_dir="", facts=facts)).facts["kernel_symbols"]
    assert [e for e in ks["extensions"] if e["extension"] == "lmcache"] == []
    assert [e["extension"] for e in ks["extensions"]] == ["torchao"]  # torchao is not shadowed
    report = _facts([e for e in ks["extensions"] if e["extension"] == "lmcache"])
    gate = _checks(tmp_path, report, {"enable_lmcache": True})["extension-torch-abi-lmcache"]
    assert gate["status"] == "unknown", gate
    assert "shadowed by a copy of its package" in gate["reasons"][0]["message"]  # (the user site is read now)
    (checkout / "lmcache" / "__init__.py").unlink()  # a namespace portion: the regular package in site wins
    ks = KernelSymbolsProbe().run(ProbeContext(env={}, cache_dir="", facts=facts)).facts["kernel_symbols"]
    (lm,) = [e for e in ks["extensions"] if e["extension"] == "lmcache"]
    assert lm["torch_missing_count"] == 0 and lm["path"] == "lmcache/c_ops.cpython-312-x86_64-linux-gnu.so"


def test_lmcache_054_on_ships_cuda_ops_not_c_ops(tmp_path: Path) -> None:
    """irev53: LMCache 0.5.4-0.5.6 ship lmcache/cuda_ops.*.so and no c_ops (wheel file lists), loaded inside a try
    that logs and stays on torch ops (lmcache/v1/platform/cuda/device_ops.py:30-39 in 0.5.4). An --enable-lmcache
    launch on such an install was refused as 'no compiled library found' (over-refusal): its cuda_ops is read and
    judged, a missing torch symbol there degraded (a warning), not a crash."""
    site = _site(tmp_path, [])
    for p in (site / "lmcache").iterdir():
        p.unlink()
    (site / "lmcache" / "__init__.py").write_text("")
    write_so(site / "lmcache" / "cuda_ops.cpython-312-x86_64-linux-gnu.so", undefined=[ALLOC], needed=["libc10.so"])
    section = probe_kernel_symbols(_packages(site), HostView("/"), None, sys_path=[str(site)])
    assert section is not None
    (cu,) = [e for e in section["extensions"] if e["extension"].startswith("lmcache")]
    assert cu["extension"] == "lmcache_cuda_ops" and cu["torch_missing_count"] == 0
    ok = _checks(tmp_path, _facts([cu]), {"enable_lmcache": True})["extension-torch-abi-lmcache"]
    assert ok["status"] == "ok", ok
    broken = {**cu, "torch_symbols": 65, "torch_missing_count": 1, "torch_missing": [ERROR_CTOR]}
    gate = _checks(tmp_path, _facts([broken]), {"enable_lmcache": True})["extension-torch-abi-lmcache"]
    assert gate["status"] == "warning" and gate["reasons"][0]["effect"] == "degraded", gate
    assert "cuda_ops" in gate["reasons"][0]["message"]
    # c_ops (LMCache 0.3.0-0.5.3) keeps the check's effect: a crash for the launch that imports it
    c_ops = {**broken, "extension": "lmcache", "path": "lmcache/c_ops.cpython-312-x86_64-linux-gnu.so"}
    assert _checks(tmp_path, _facts([c_ops]), {"enable_lmcache": True})["extension-torch-abi-lmcache"]["status"] == (
        "failed"
    )


def test_the_directory_the_gated_command_puts_first_on_sys_path() -> None:
    """irev54: `python -m MOD` and `python -c` put the working directory first on sys.path, `python SCRIPT` the
    script's directory; -I, -P and PYTHONSAFEPATH (unless -E) put none (Python 3.11+ docs, sys.path). The python probe
    leaves that entry out of facts.python.sys_path (it belongs to how the server is started), so the gate adds it
    where it knows the command and its working directory."""
    from stackcheck.assembly.target import command_first_path

    view = HostView("/")
    run = ["python3", "-m", "sglang.launch_server", "--model-path", "/m"]
    assert command_first_path(run, {}, "/work/LMCache", view) == "/work/LMCache"
    assert command_first_path(["env", "A=1", "nohup", "python", "-u", "-W", "ignore", *run[1:]], {}, "/w", view) == "/w"
    assert command_first_path(["python", "-c", "import sglang"], {}, "/w", view) == "/w"
    assert command_first_path(["python", "-X", "dev", "/srv/app/run.py"], {}, "/w", view) == "/srv/app"
    assert command_first_path(["python", "app/run.py"], {}, "/srv", view) == "/srv/app"
    for safe in (["python", "-I", *run[1:]], ["python", "-P", *run[1:]], ["python", "-uP", *run[1:]]):
        assert command_first_path(safe, {}, "/w", view) is None, safe
    assert command_first_path(run, {"PYTHONSAFEPATH": "1"}, "/w", view) is None
    assert command_first_path(["env", "PYTHONSAFEPATH=1", *run], {}, "/w", view) is None
    assert command_first_path(["python", "-E", *run[1:]], {"PYTHONSAFEPATH": "1"}, "/w", view) == "/w"
    # a console script (its own bin directory), uv / conda run and no command: not modelled
    assert command_first_path(["sglang", "serve", "--model-path", "/m"], {}, "/w", view) is None
    assert command_first_path(["uv", "run", *run], {}, "/w", view) is None
    assert command_first_path([], {}, "/w", view) is None


def test_a_checkout_in_the_working_directory_of_python_m_shadows_the_installed_copy(tmp_path: Path) -> None:
    """irev54: `cd ~/LMCache && python -m sglang.launch_server --enable-lmcache` imports lmcache from the working
    directory (sys.path[0]), a source checkout with no c_ops built when LMCache was installed with `pip install .`,
    so the adapter's import of c_ops fails whatever the installed copy holds. Before, only facts.python.sys_path
    (without that entry) was searched and the installed copy, built for this torch, was read: a pass for a launch
    that crashes. Now the gated command's first entry leads, and none loads there (unknown for that launch)."""
    from stackcheck.probes.interface import ProbeContext
    from stackcheck.probes.kernel_symbols import KernelSymbolsProbe

    site = _site(tmp_path, [])
    checkout = tmp_path / "LMCache"
    (checkout / "lmcache").mkdir(parents=True)
    (checkout / "lmcache" / "__init__.py").write_text("")
    facts = {"python": {"sys_path": [str(site)]}, "packages": _packages(site)}
    ctx = ProbeContext(env={}, cache_dir="", facts=facts, launch_first_path=str(checkout))
    ks = KernelSymbolsProbe().run(ctx).facts["kernel_symbols"]
    assert ks["extension_dirs"][:2] == [str(checkout), str(site)], ks["extension_dirs"]
    assert [e["extension"] for e in ks["extensions"]] == ["torchao"], ks["extensions"]
    gate = _checks(tmp_path, _facts([]), {"enable_lmcache": True})["extension-torch-abi-lmcache"]
    assert gate["status"] != "ok", gate
    # started elsewhere (no such directory first), the installed copy is the one read
    ks = KernelSymbolsProbe().run(ctx.replace(launch_first_path=str(tmp_path))).facts["kernel_symbols"]
    (lm,) = [e for e in ks["extensions"] if e["extension"] == "lmcache"]
    assert lm["torch_missing_count"] == 0


def test_the_pipeline_hands_the_gated_commands_first_path_to_the_probes(tmp_path: Path, monkeypatch: Any) -> None:
    """irev54: gather() builds the probe context with the gated command's sys.path[0] (its working directory for
    `python -m`), and with none for an audit without a command."""
    from stackcheck.assembly import pipeline
    from stackcheck.probes import runner

    seen: list[Any] = []

    def fake_run_probes(names: Any, ctx: Any, budget_s: Any = None) -> tuple[dict[str, Any], list[Any]]:
        seen.append(ctx.launch_first_path)
        return {"python": {"sys_path": []}}, []

    monkeypatch.setattr(runner, "run_probes", fake_run_probes)
    work = tmp_path / "work"
    work.mkdir()
    command = [sys.executable, "-m", "sglang.launch_server", "--model-path", "/m"]
    opts = Options(command=command, cwd=str(work), python=sys.executable, cache_dir="")
    pipeline.gather(opts)
    pipeline.gather(Options(python=sys.executable, cache_dir=""))
    assert seen == [str(work), None]
