"""--enable-memory-saver: SGLang starts every scheduler with torch_memory_saver's hook in LD_PRELOAD, and the child's
dynamic loader must find the libcudart.so.N that hook needs before Python (and torch's RPATH) is there (real-world
corpus: sglang#36533, a CUDA 13 pip venv whose schedulers exit 127). The feature memory-saver in the audit and the
gate, and the hooks' dynamic sections read in the real wheels."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from registry_wheels import extract, fetch_wheel, read_texts

from stackcheck.cli import main
from stackcheck.readers.elf import ElfFile

CU13 = {"installed": True, "version": "2.11.0+cu130", "variant": "cu130", "cuda": "13.0"}
CU12 = {"installed": True, "version": "2.9.1+cu128", "variant": "cu128", "cuda": "12.8"}
FOUND12 = "/usr/local/cuda-12.8/lib64/libcudart.so.12"
FOUND13 = "/usr/local/cuda-13.0/lib64/libcudart.so.13"


def _facts(
    sglang: str, torch: dict[str, Any], tms: dict[str, Any] | None, libs: Mapping[str, str | None] | None
) -> dict[str, Any]:
    packages: dict[str, Any] = {"sglang": {"installed": True, "version": sglang}, "torch": torch}
    if tms is not None:
        packages["torch-memory-saver"] = tms
    facts: dict[str, Any] = {"gpus": [{"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0"}],
                             "packages": packages}  # fmt: skip
    if libs is not None:
        facts["cuda_libs"] = dict(libs)
    return facts


def _write(tmp_path: Path, facts: dict[str, Any]) -> Path:
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    return path


def _feature(tmp_path: Path, capsys: pytest.CaptureFixture[str], facts: dict[str, Any]) -> dict[str, Any]:
    main(["audit", "--facts", str(_write(tmp_path, facts)), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    return next(f for f in report["features"] if f["id"] == "memory-saver")


def _v(version: str) -> dict[str, Any]:
    return {"installed": True, "version": version}


BOTH_MISSING: dict[str, str | None] = {"libcudart.so.12": None, "libcudart.so.13": None}


@pytest.mark.parametrize(
    ("facts", "status", "soname"),
    [
        # sglang#36533's box: a CUDA 13 pip venv, nothing of CUDA 13 on the loader's path
        (_facts("0.5.18", CU13, _v("0.0.9.post1"), BOTH_MISSING), "blocked", "libcudart.so.13"),
        (_facts("0.5.18", CU13, _v("0.0.9.post1"), {**BOTH_MISSING, "libcudart.so.13": FOUND13}), "ok", None),
        (_facts("0.5.23", CU12, _v("0.0.10"), BOTH_MISSING), "blocked", "libcudart.so.12"),
        (_facts("0.5.23", CU12, _v("0.0.10"), {**BOTH_MISSING, "libcudart.so.12": FOUND12}), "ok", None),
        # a CUDA 13 torch finding only libcudart.so.13 is not enough for a CUDA 12 hook
        (_facts("0.5.23", CU13, _v("0.0.10"), {**BOTH_MISSING, "libcudart.so.12": FOUND12}), "blocked", ".so.13"),
        # SGLang 0.5.4-0.5.10 pin torch_memory_saver 0.0.9, whose one hook needs libcudart.so.12 whatever torch's CUDA
        (_facts("0.5.9", CU13, _v("0.0.9"), {**BOTH_MISSING, "libcudart.so.13": FOUND13}), "blocked", ".so.12"),
        (_facts("0.5.9", CU12, _v("0.0.9"), {**BOTH_MISSING, "libcudart.so.12": FOUND12}), "ok", None),
        # torch_memory_saver listed as not installed: SGLang raises the ImportError
        (_facts("0.5.18", CU13, {"installed": False}, {**BOTH_MISSING, "libcudart.so.13": FOUND13}), "blocked", None),
    ],
)
def test_the_hook_needs_the_loader_to_find_its_cuda_runtime(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], facts: dict[str, Any], status: str, soname: str | None
) -> None:
    feature = _feature(tmp_path, capsys, facts)
    assert feature["status"] == status
    if status == "blocked":
        assert feature["effect"] == "crash"
        text = " ".join(r["message"] for r in feature["reasons"] if r["result"] == "fail")
        assert "--enable-memory-saver" in text
        if soname:
            assert soname in text and "LD_LIBRARY_PATH" in text


@pytest.mark.parametrize(
    "facts",
    [
        _facts("0.5.18", CU13, _v("0.0.11"), BOTH_MISSING),  # a torch_memory_saver release not read
        _facts("0.5.18", CU13, _v("0.0.8"), BOTH_MISSING),
        _facts("0.5.3", CU13, _v("0.0.9rc2"), BOTH_MISSING),  # SGLang before 0.5.4 pins hooks not read
        _facts("0.5.24", CU13, _v("0.0.10"), BOTH_MISSING),  # an SGLang release after the data
        _facts("0.5.18", CU13, None, BOTH_MISSING),  # a hand-written list that does not name it
        _facts("0.5.18", CU13, _v("0.0.10"), None),  # the loader's libraries not probed
        _facts("0.5.18", {"installed": True, "version": "2.11.0+cpu", "variant": "cpu"}, _v("0.0.10"), BOTH_MISSING),
    ],
)
def test_what_was_not_read_is_unknown_never_ok(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], facts: dict[str, Any]
) -> None:
    assert _feature(tmp_path, capsys, facts)["status"] == "unknown"


def test_a_report_saved_before_the_probe_looked_for_it_is_not_blocked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a probed (complete) packages list without the entry: that stackcheck did not look for torch-memory-saver
    facts = _facts("0.5.18", CU13, None, {**BOTH_MISSING, "libcudart.so.13": FOUND13})
    facts["packages_complete"] = True
    feature = _feature(tmp_path, capsys, facts)
    assert feature["status"] == "unknown"
    assert "did not look for torch-memory-saver" in json.dumps(feature["reasons"])


def _gate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str]:
    path = _write(tmp_path, _facts("0.5.18", CU13, _v("0.0.9.post1"), BOTH_MISSING))
    argv = ["python", "-m", "sglang.launch_server", "--model-path", "m", *flags]
    code = main(["gate", "--facts", str(path), "--", *argv])
    return code, capsys.readouterr().out


def test_the_gate_refuses_enable_memory_saver_without_the_runtime(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _gate(tmp_path, capsys, "--enable-memory-saver")
    assert code != 0
    assert "REFUSE memory-saver" in out


def test_without_the_flag_the_gate_does_not_need_memory_saver(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out = _gate(tmp_path, capsys)
    assert "memory-saver" not in out


def _rule(rule_id: str) -> dict[str, Any]:
    manifest = json.loads((Path(__file__).parents[2] / "manifests" / "features.json").read_text())
    feature = next(f for f in manifest["features"] if f["id"] == "memory-saver")
    rule: dict[str, Any] = next(r for r in feature["rules"] if r["id"] == rule_id)
    return rule


@pytest.mark.registry
@pytest.mark.parametrize(
    ("version", "hooks"),
    [
        ("0.0.9", {"torch_memory_saver_hook_mode_preload.abi3.so": ("libcudart.so.12", "hook-cudart-12-tms-009")}),
        (
            "0.0.9.post1",
            {
                "torch_memory_saver_hook_mode_preload_cu12.abi3.so": ("libcudart.so.12", "hook-cudart-12"),
                "torch_memory_saver_hook_mode_preload_cu13.abi3.so": ("libcudart.so.13", "hook-cudart-13"),
            },
        ),
        (
            "0.0.10",
            {
                "torch_memory_saver_hook_mode_preload_cu12.abi3.so": ("libcudart.so.12", "hook-cudart-12"),
                "torch_memory_saver_hook_mode_preload_cu13.abi3.so": ("libcudart.so.13", "hook-cudart-13"),
            },
        ),
    ],
)
def test_the_rules_are_the_wheels_hooks(tmp_path: Path, version: str, hooks: dict[str, tuple[str, str]]) -> None:
    wheel = fetch_wheel("torch-memory-saver", version)
    root = extract(wheel, tmp_path, lambda n: "hook_mode_preload" in n or n.endswith("hooks/mode_preload.py"))
    for name, (soname, rule_id) in hooks.items():
        with ElfFile(root / name) as elf:
            dynamic = elf.dynamic()
        assert soname in dynamic.needed
        assert dynamic.rpath is None and dynamic.runpath is None  # only the loader's own path finds it
        assert _rule(rule_id)["require"]["fact"] == "cudalib.cudart." + soname.rsplit(".", 1)[1]
    source = (root / "torch_memory_saver" / "hooks" / "mode_preload.py").read_text()
    assert "LD_PRELOAD" in source and "LD_LIBRARY_PATH" not in source


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.5.4", "0.5.18", "0.5.23"])
def test_sglang_starts_its_schedulers_under_configure_subprocess(version: str) -> None:
    wheel = fetch_wheel("sglang", version)
    (engine,) = read_texts(wheel, lambda n: n.endswith("srt/entrypoints/engine.py")).values()
    assert "memory_saver_adapter.configure_subprocess()" in engine
    assert "LD_LIBRARY_PATH" not in engine
