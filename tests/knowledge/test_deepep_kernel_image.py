"""Feature moe-a2a-deepep: DeepEP's own kernels need an image for the GPU (issue 16, the twenty-fourth sample's
note on DeepEP's architectures).

SGLang's DeepEP dispatcher launches DeepEP's kernels while the server starts (get_dispatch_layout / dispatch in
normal mode, clean_low_latency_buffer / low_latency_dispatch in low-latency mode: sglang 0.5.23
token_dispatcher/deepep.py:304-312, :648, :668, :843). They all live in one extension, device-linked (-rdc with
NVSHMEM) into one image per architecture: SGLang's prebuilt sgl-deep-ep 0.1.0-0.1.2.post1 carry sm_90, sm_100 and
sm_103 only; a source build carries what TORCH_CUDA_ARCH_LIST named (DeepEP setup.py defaults it to 9.0). The ELF
files below are written here, in the fatbin layout the binary probe reads; the registry test reads the real wheels.
"""

from __future__ import annotations

import contextlib
import io
import json
import struct
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report
from stackcheck.readers.binaries import probe_binaries
from stackcheck.verdicts.types import FeatureVerdict

GPUS = {
    "8.0": "NVIDIA A100-SXM4-80GB",
    "8.9": "NVIDIA L40S",
    "9.0": "NVIDIA H200",
    "10.0": "NVIDIA B200",
    "10.3": "NVIDIA B300 SXM6 AC",
    "12.0": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
}


# ---- small ELF files with a fatbin: loadable code and relocatable device-link input -------------------------


def _fatbin(entries: list[tuple[int, int]]) -> bytes:
    """One container of SASS (kind 2) / PTX (kind 1) entries for (kind, arch), 8-byte payloads."""
    body = b""
    for kind, arch in entries:
        head = struct.pack("<HHIQIIHHIIIQQQ", kind, 0x0101, 64, 8, 0, 0, 8, 1, arch, 0, 0, 0x11, 0, 0)
        body += head + b"\0" * (64 - len(head)) + b"\0" * 8
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def write_extension(path: Path, loadable: list[tuple[int, int]], relocatable: list[tuple[int, int]]) -> Path:
    """An x86_64 ELF64 shared object with .nv_fatbin (`loadable`) and __nv_relfatbin (`relocatable`)."""
    names = b"\0.shstrtab\0.nv_fatbin\0__nv_relfatbin\0"
    load, rel = _fatbin(loadable), _fatbin(relocatable)
    off_names = 64
    off_load = (off_names + len(names) + 7) & ~7
    off_rel = (off_load + len(load) + 7) & ~7
    off_sh = (off_rel + len(rel) + 7) & ~7

    def section(name: int, kind: int, offset: int, size: int) -> bytes:
        return struct.pack("<IIQQQQIIQQ", name, kind, 0, 0, offset, size, 0, 0, 8 if kind == 1 else 1, 0)

    table = [
        b"\0" * 64,
        section(1, 3, off_names, len(names)),
        section(11, 1, off_load, len(load)),
        section(22, 1, off_rel, len(rel)),
    ]
    ident = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    header = struct.pack("<16sHHIQQQIHHHHHH", ident, 3, 62, 1, 0, 0, off_sh, 0, 64, 56, 0, 64, len(table), 1)
    data = bytearray(off_sh + 64 * len(table))
    data[0:64] = header
    data[off_names : off_names + len(names)] = names
    data[off_load : off_load + len(load)] = load
    data[off_rel : off_rel + len(rel)] = rel
    data[off_sh:] = b"".join(table)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(data))
    return path


# the shape of sgl-deep-ep's _C: linked images for sm_90/100/103, relocatable objects down to sm_75 and sm_120 beside
PREBUILT_LOADABLE = [(2, 90), (2, 100), (2, 103)]
PREBUILT_RELOCATABLE = [(2, 75), (2, 80), (2, 89), (2, 90), (2, 120), (1, 120)]


def _packages(site: Path, **installed: str) -> dict[str, Any]:
    return {
        name: {"installed": name in installed, "version": installed.get(name), "location": str(site)}
        for name in ("deep-ep", "sgl-deep-ep")
    }


def test_the_binary_probe_reads_sgl_deep_ep_extension(tmp_path: Path) -> None:
    """deep_ep/_C (0.1.1+): the loadable targets only; the relocatable objects are not loaded at run time."""
    site = tmp_path / "site"
    write_extension(site / "deep_ep" / "_C.cpython-312-x86_64-linux-gnu.so", PREBUILT_LOADABLE, PREBUILT_RELOCATABLE)
    got = probe_binaries({"packages": _packages(site, **{"sgl-deep-ep": "0.1.2.post1"})})
    assert got["sgl-deep-ep"]["sass"] == ["sm_90", "sm_100", "sm_103"]
    assert got["sgl-deep-ep"]["ptx"] == []
    assert [f["path"] for f in got["sgl-deep-ep"]["files"]] == ["deep_ep/_C.cpython-312-x86_64-linux-gnu.so"]
    assert "deep-ep" not in got


def test_the_binary_probe_reads_a_source_builds_top_level_deep_ep_cpp(tmp_path: Path) -> None:
    """DeepEP's setup.py names the extension deep_ep_cpp, installed beside the deep_ep package (sgl-deep-ep 0.1.0
    too); another top-level library of site-packages is not DeepEP's."""
    site = tmp_path / "site"
    write_extension(site / "deep_ep_cpp.cpython-312-x86_64-linux-gnu.so", [(2, 90)], [])
    write_extension(site / "other_cpp.cpython-312-x86_64-linux-gnu.so", [(2, 120)], [])
    (site / "deep_ep").mkdir()
    (site / "deep_ep" / "__init__.py").write_text("")
    got = probe_binaries({"packages": _packages(site, **{"deep-ep": "1.2.1"})})
    assert got["deep-ep"]["sass"] == ["sm_90"]
    assert [f["path"] for f in got["deep-ep"]["files"]] == ["deep_ep_cpp.cpython-312-x86_64-linux-gnu.so"]


def test_the_binary_probe_reads_an_editable_source_builds_project_directory(tmp_path: Path) -> None:
    """pip install -e: setuptools builds deep_ep_cpp in the project directory (packages.deep-ep.extension_dir)."""
    site, project = tmp_path / "site", tmp_path / "DeepEP"
    site.mkdir()
    write_extension(project / "deep_ep_cpp.cpython-312-x86_64-linux-gnu.so", [(2, 90), (2, 100)], [])
    packages = _packages(site, **{"deep-ep": "1.2.1"})
    packages["deep-ep"]["extension_dir"] = str(project)
    got = probe_binaries({"packages": packages})["deep-ep"]
    assert got["sass"] == ["sm_90", "sm_100"]
    assert [f["path"] for f in got["files"]] == [str(project / "deep_ep_cpp.cpython-312-x86_64-linux-gnu.so")]


# ---- the feature's verdict ---------------------------------------------------------------------------------


def verdict(tmp_path: Path, facts: dict[str, Any]) -> FeatureVerdict:
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    report, _ = build_report(Options(facts_file=str(path)))
    return next(f for f in report["features"] if f["id"] == "moe-a2a-deepep")


def box(cc: str, *, sgl: str | None = None, source: bool = False, gpus: int = 1) -> dict[str, Any]:
    return {
        "system": {"machine": "x86_64"},
        "gpus": [{"index": i, "name": GPUS[cc], "compute_capability": cc} for i in range(gpus)],
        "topology": {"gpu_count": gpus, "p2p": "all"},
        "packages": {
            "sglang": {"installed": True, "version": "0.5.23"},
            "sgl-deep-ep": {"installed": sgl is not None, **({"version": sgl} if sgl else {})},
            "deep-ep": {"installed": source, **({"version": "1.2.1"} if source else {})},
        },
    }


def failing(v: FeatureVerdict) -> dict[str, Any]:
    return next(dict(r) for r in v["reasons"] if r.get("result") == "fail")


@pytest.mark.parametrize("cc", ["8.0", "8.9", "12.0"])
@pytest.mark.parametrize("release", ["0.1.0", "0.1.2.post1"])
def test_prebuilt_deepep_has_no_image_off_sm90_sm100_sm103(tmp_path: Path, cc: str, release: str) -> None:
    """Without --deep: components.json's record of the release (every wheel of it read)."""
    v = verdict(tmp_path, box(cc, sgl=release))
    assert (v["status"], v["effect"]) == ("blocked", "crash")
    fail = failing(v)
    assert fail["rule"] == ("deepep-kernel-image-top-level-module" if release == "0.1.0" else "deepep-kernel-image")
    assert fail["observed"] == "no target runs on it"
    assert f"compute capability {cc}, sm_{cc.replace('.', '')}" in fail["message"]
    assert "no kernel image" in fail["message"]
    assert fail["required"] == f"a target for {cc} in ['sm_90', 'sm_100', 'sm_103']"
    assert any("sgl-deep-ep wheels" in str(s) for s in fail["source"])


@pytest.mark.parametrize("cc", ["9.0", "10.0", "10.3"])
def test_prebuilt_deepep_runs_on_its_architectures(tmp_path: Path, cc: str) -> None:
    assert verdict(tmp_path, box(cc, sgl="0.1.2.post1"))["status"] == "ok"


def test_every_deepep_mode_is_judged_alike(tmp_path: Path) -> None:
    """One device-linked image holds the normal, internode and low-latency kernels: the gate blocks every mode."""
    facts = box("12.0", sgl="0.1.2.post1", gpus=8)
    for flags in ([], ["--deepep-mode", "normal"], ["--deepep-mode", "low_latency"]):
        assert _gate(tmp_path, facts, *flags)["status"] == "blocked", flags


def test_a_release_the_data_does_not_list_is_unknown_not_ok(tmp_path: Path) -> None:
    v = verdict(tmp_path, box("9.0", sgl="0.1.3"))
    assert v["status"] == "unknown"


def test_a_source_build_without_deep_is_unknown_not_ok(tmp_path: Path) -> None:
    """Its targets are TORCH_CUDA_ARCH_LIST at build time: only the binary says them."""
    v = verdict(tmp_path, box("9.0", source=True))
    assert v["status"] == "unknown"
    reason = next(r for r in v["reasons"] if r.get("rule") == "deepep-kernel-image-source-build")
    assert reason["result"] == "unknown" and "--deep reads the installed binaries" in reason["message"]


def test_a_source_build_read_with_deep(tmp_path: Path) -> None:
    facts = box("12.0", source=True)
    so = {"path": "deep_ep_cpp.cpython-312-x86_64-linux-gnu.so", "sass": ["sm_90"], "ptx": []}
    facts["binaries"] = {"deep-ep": {"sass": ["sm_90"], "ptx": [], "files": [so]}}
    v = verdict(tmp_path, facts)
    assert v["status"] == "blocked"
    fail = failing(v)
    assert fail["rule"] == "deepep-kernel-image-source-build"
    assert "sm_120" in fail["message"] and fail["required"] == "a target for 12.0 in ['sm_90']"
    so["sass"] = facts["binaries"]["deep-ep"]["sass"] = ["sm_90", "sm_120"]
    assert verdict(tmp_path, facts)["status"] == "ok"


def test_only_the_extension_deep_ep_imports_is_judged(tmp_path: Path) -> None:
    """sgl-deep-ep 0.1.1+ imports deep_ep._C (deep_ep/buffers/legacy.py:7); a deep_ep_cpp a source build left in
    site-packages is not imported, so its sm_120 code does not make the prebuilt kernels run on 12.0."""
    facts = box("12.0", sgl="0.1.2.post1")
    files = [
        {"path": "deep_ep/_C.cpython-312-x86_64-linux-gnu.so", "sass": ["sm_90", "sm_100", "sm_103"], "ptx": []},
        {"path": "deep_ep_cpp.cpython-312-x86_64-linux-gnu.so", "sass": ["sm_120"], "ptx": []},
    ]
    facts["binaries"] = {"sgl-deep-ep": {"sass": ["sm_90", "sm_100", "sm_103", "sm_120"], "ptx": [], "files": files}}
    v = verdict(tmp_path, facts)
    assert v["status"] == "blocked"
    assert failing(v)["rule"] == "deepep-kernel-image"


def test_the_installed_binary_comes_before_the_release_record(tmp_path: Path) -> None:
    """A local sgl-deep-ep build of a listed version with sm_120 code (--deep read it) is not blocked by PyPI's."""
    facts = box("12.0", sgl="0.1.2.post1")
    so = {"path": "deep_ep/_C.cpython-312-x86_64-linux-gnu.so", "sass": ["sm_120"], "ptx": []}
    facts["binaries"] = {"sgl-deep-ep": {"sass": ["sm_120"], "ptx": [], "files": [so]}}
    assert verdict(tmp_path, facts)["status"] == "ok"


def test_the_release_record_on_an_arm_box(tmp_path: Path) -> None:
    """The aarch64 wheels were read too (the same targets): GB200/GB300 run them, DGX Spark (12.1) does not."""
    facts = box("10.0", sgl="0.1.2.post1")
    facts["system"]["machine"] = "aarch64"
    assert verdict(tmp_path, facts)["status"] == "ok"
    facts["gpus"] = [{"index": 0, "name": "NVIDIA GB10", "compute_capability": "12.1"}]
    assert verdict(tmp_path, facts)["status"] == "blocked"


# ---- the gate ---------------------------------------------------------------------------------------------


LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp-size", "8", "--moe-a2a-backend", "deepep"]


def _gate(tmp_path: Path, facts: dict[str, Any], *flags: str) -> dict[str, Any]:
    from stackcheck.cli import main

    path = tmp_path / "box.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["gate", "--dry-run", "--format", "json", "--facts", str(path), "--", *LAUNCH, *flags])
    doc = json.loads(out.getvalue())
    got: dict[str, Any] = next(f for f in doc["features"] if f["feature"] == "moe-a2a-deepep")
    return got


def test_the_gate_on_hopper_allows_it(tmp_path: Path) -> None:
    assert _gate(tmp_path, box("9.0", sgl="0.1.2.post1", gpus=8))["status"] == "ok"


# ---- the real wheels ---------------------------------------------------------------------------------------


#: every sgl-deep-ep release on the index, with a CPython its wheels are built for
RELEASES = [("0.1.0", "3.12"), ("0.1.1", "3.11"), ("0.1.2", "3.11"), ("0.1.2.post1", "3.12")]


@pytest.mark.registry
@pytest.mark.parametrize(("release", "python"), RELEASES)
def test_real_wheels_match_the_release_record(tmp_path: Path, release: str, python: str) -> None:
    """The binary probe over the installed wheel's files reads what components.json records for the release."""
    from registry_wheels import extract, fetch_wheel

    from stackcheck.knowledge.loader import load

    wheel = fetch_wheel("sgl-deep-ep", release, python)
    site = extract(wheel, tmp_path / "site", lambda name: name.endswith(".so"))
    got = probe_binaries({"packages": _packages(site, **{"sgl-deep-ep": release})})["sgl-deep-ep"]
    assert len(got["files"]) == 1 and "error" not in got["files"][0]
    rel = next((r for r in load().releases("sgl-deep-ep") if r["version"] == release), None)
    assert rel is not None
    variant = next(v for v in rel["variants"] if v["variant"] == rel["pypi_variant"])
    assert sorted(got["sass"] + got["ptx"]) == sorted(variant["archs"])
    lib = "deep_ep_cpp" if release == "0.1.0" else "_C"
    assert Path(got["files"][0]["path"]).name.split(".")[0] == lib
    assert sorted(got["files"][0]["sass"]) == sorted(variant["libs"][lib])
    assert got["files"][0]["relocatable"]  # the device-link inputs beside the image, left out of the targets


@pytest.mark.registry
@pytest.mark.parametrize(("release", "unlisted"), [("0.1.0", "0.1.0.post9"), ("0.1.2.post1", "0.1.1.post9")])
def test_real_wheel_installed_read_by_the_probes_and_judged(tmp_path: Path, release: str, unlisted: str) -> None:
    """The installed wheel as the probes see it: the packages probe finds the distribution and its location, --deep's
    binary probe reads the extension deep_ep imports, and the verdict follows it (12.0 blocked, 9.0 ok). The facts
    then name a release the data does not list (between two it lists), so only the binary can decide (unknown
    without it)."""
    from registry_wheels import extract, fetch_wheel

    from stackcheck.probes.packages import find_distributions, package_facts
    from stackcheck.readers.fsview import HostView

    site = extract(fetch_wheel("sgl-deep-ep", release), tmp_path / "site-packages", lambda name: True)
    entry = package_facts("sgl-deep-ep", find_distributions({"sgl-deep-ep"}, [str(site)])["sgl-deep-ep"], HostView())
    assert entry["installed"] and entry["version"] == release and entry["location"] == str(site)
    binaries = probe_binaries({"packages": {"sgl-deep-ep": entry}})
    for cc, status in (("12.0", "blocked"), ("9.0", "ok")):
        facts = box(cc, sgl=unlisted)
        facts["packages"]["sgl-deep-ep"] = {**entry, "version": unlisted}
        assert verdict(tmp_path, facts)["status"] == "unknown"
        facts["binaries"] = binaries
        assert verdict(tmp_path, facts)["status"] == status, cc
