"""Round twenty-one's Mooncake cases (tests/realworld/mooncake-1298-cuda13-pip-libcudart12,
vllm-42511-image-cu13-mooncake-libcudart12): mooncake-transfer-engine 0.3.7-0.3.13.post1 from PyPI is a CUDA 12
build whose mooncake/engine.so NEEDs libcudart.so.12 with an RPATH of only its own directories, so beside a CUDA 13
torch (which loads no libcudart.so.12 first) `--disaggregation-mode prefill` fails at SGLang's
`from mooncake.engine import TransferEngine` unless the loader finds libcudart.so.12 (preflight.json
transfer_packages, the mooncake entry's runtime_library). On the parent the refused box here is allowed (the check
passes: Mooncake is installed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, gate_tp8, model_dir, release_box

CHECK = "transfer-package"
DIST = "mooncake-transfer-engine"
PREFILL = ("--disaggregation-mode", "prefill")
CUDART12 = "libcudart.so.12"


def _gate(
    tmp_path: Path,
    mooncake: dict[str, Any],
    torch_cuda: str | None,
    cudart12: str | bool | None,
    *flags: str,
) -> dict[str, Any]:
    """gate_tp8 of a Llama 3 on h200-newest at SGLang 0.5.23 with Mooncake `mooncake`, torch's CUDA build
    `torch_cuda` (None: left out) and the loader's libcudart.so.12 `cudart12` (a path: found; None: looked for and
    not found; False: not looked for)."""
    facts = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(facts.read_text())
    doc["facts"]["packages"][DIST] = mooncake
    torch = doc["facts"]["packages"]["torch"]
    if torch_cuda is None:
        torch.pop("cuda", None)
    else:
        torch["cuda"] = torch_cuda
    libs = doc["facts"].setdefault("cuda_libs", {})
    libs.update(MOONCAKE_SYSTEM_LIBS)  # (ifc44: engine.so's system libraries found; not what these tests judge)
    libs.pop(CUDART12, None)
    if cudart12 is not False:
        libs[CUDART12] = cudart12
    facts.write_text(json.dumps(doc))
    return gate_tp8(facts, model_dir(tmp_path, "m", LLAMA3), *flags)


def _check(doc: dict[str, Any]) -> dict[str, Any]:
    found = [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == CHECK]
    assert found, doc.get("preflight")
    check: dict[str, Any] = found[0]
    return check


def _mooncake(version: str | None) -> dict[str, Any]:
    return {"installed": True, "version": version} if version else {"installed": True}


@pytest.mark.parametrize("version", ["0.3.7", "0.3.8", "0.3.11.post1", "0.3.13.post1"])
def test_cuda12_mooncake_beside_cuda13_torch_without_cudart12_is_refused(tmp_path: Path, version: str) -> None:
    # fails on the parent: allowed (Mooncake installed, its libraries not judged)
    doc = _gate(tmp_path, _mooncake(version), "13.0", None, *PREFILL)
    check = _check(doc)
    assert check["status"] == "fail", check
    assert doc["decision"] == "refuse"
    assert CUDART12 in check["message"] and version in check["message"] and "CUDA 13" in check["message"]
    assert any("Mooncake/issues/1298" in str(s) for s in check["source"])


@pytest.mark.parametrize(
    ("version", "torch_cuda", "cudart12"),
    [
        ("0.3.13.post1", "13.0", "/usr/local/cuda-12.8/lib64/libcudart.so.12"),  # the loader finds it
        ("0.3.13.post1", "12.8", None),  # a CUDA 12 torch has loaded libcudart.so.12 before the import
        ("0.3.6.post1", "13.0", None),  # a release whose engine.so links no libcudart
        ("0.3.5", "13.0", False),
    ],
)
def test_mooncake_that_loads_passes(tmp_path: Path, version: str, torch_cuda: str, cudart12: str | bool | None) -> None:
    check = _check(_gate(tmp_path, _mooncake(version), torch_cuda, cudart12, *PREFILL))
    assert check["status"] == "ok", check


@pytest.mark.parametrize(
    ("version", "torch_cuda", "cudart12", "says"),
    [
        ("0.3.13.post1", None, None, "torch's CUDA build"),  # torch's CUDA build not given
        ("0.3.13.post1", "13.0", False, "not probed"),  # the loader's libraries not looked at
        (None, "13.0", None, "not given"),  # the release not given
        ("0.3.14", "13.0", None, "was not read"),  # a release not read
        ("0.3.4", "13.0", None, "was not read"),
    ],
)
def test_mooncake_not_decidable_is_unknown(
    tmp_path: Path, version: str | None, torch_cuda: str | None, cudart12: str | bool | None, says: str
) -> None:
    doc = _gate(tmp_path, _mooncake(version), torch_cuda, cudart12, *PREFILL)
    check = _check(doc)
    assert check["status"] == "unknown", check
    assert says in check["message"] and CUDART12 in check["message"]
    assert doc["decision"] == "refuse"


def test_launch_without_disaggregation_is_not_judged(tmp_path: Path) -> None:
    # Mooncake is imported only by PD disaggregation (and Mooncake EP): a plain launch on the same box is not refused
    # for it
    doc = _gate(tmp_path, _mooncake("0.3.13.post1"), "13.0", None)
    assert not [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == CHECK]


@pytest.mark.registry
@pytest.mark.parametrize(
    ("version", "links"),
    [("0.3.6.post1", False), ("0.3.7", True), ("0.3.8", True), ("0.3.13.post1", True)],
)
def test_wheels_engine_links_cudart12_where_the_entry_says(version: str, links: bool) -> None:
    """mooncake/engine.so's DT_NEEDED and RPATH in the PyPI wheel (cp311 x86_64, as read for the entry), against
    the entry's needs_versions."""
    import tempfile

    from registry_wheels import extract, fetch_wheel

    from stackcheck.facts.versions import version_in
    from stackcheck.knowledge.loader import load
    from stackcheck.readers.libs import read_object

    entry = next(e for e in load().preflight["transfer_packages"]["entries"] if e.get("transfer_backend") == "mooncake")
    lib = entry["runtime_library"]
    assert version_in(version, lib["read_versions"]) is True
    assert version_in(version, lib["needs_versions"]) is links
    wheel = fetch_wheel(DIST, version, "3.11")
    with tempfile.TemporaryDirectory() as tmp:
        root = extract(wheel, Path(tmp), lambda n: n == "mooncake/engine.so")
        obj = read_object(root / "mooncake" / "engine.so")
    assert (CUDART12 in obj.needed) is links, obj.needed
    assert not any("nvidia" in (p or "") for p in (obj.rpath, obj.runpath)), (obj.rpath, obj.runpath)


@pytest.mark.parametrize("version", ["0.3.7rc1", "0.3.7.dev0", "0.3.7a2"])
def test_a_pre_release_in_the_read_range_is_unknown(tmp_path: Path, version: str) -> None:
    # irev64: `>=0.3.7` holds for no pre-release of 0.3.7 (PEP 440) while `>=0.3.5,<=0.3.13.post1` holds for it, so
    # a 0.3.7rc1 (a build of main between 0.3.6.post1, linking no libcudart, and 0.3.7, linking libcudart.so.12)
    # was taken for a read release that links none and allowed: no such build was read
    doc = _gate(tmp_path, _mooncake(version), "13.0", None, *PREFILL)
    check = _check(doc)
    assert check["status"] == "unknown", check
    assert version in check["message"] and CUDART12 in check["message"]
    assert doc["decision"] == "refuse"


def test_a_pre_release_found_by_the_loader_passes(tmp_path: Path) -> None:
    check = _check(
        _gate(tmp_path, _mooncake("0.3.7rc1"), "13.0", "/usr/local/cuda-12.8/lib64/libcudart.so.12", *PREFILL)
    )
    assert check["status"] == "ok", check


@pytest.mark.parametrize(
    ("mooncake", "kind"),
    [
        ({"installed": True, "version": "0.3.6+cu128"}, "a local build"),
        ({"installed": True, "version": "0.3.5", "editable": True}, "an editable install"),
        ({"installed": True, "version": "0.3.6.post1", "source_install": "dir"}, "built from a directory by pip"),
        # igap44: pip install ./mooncake_transfer_engine-0.3.6-....whl (a wheel built here, or any file: not read)
        ({"installed": True, "version": "0.3.6", "source_install": "file"}, "installed from a local file by pip"),
    ],
)
def test_a_local_build_of_a_release_read_not_to_link_it_is_unknown(
    tmp_path: Path, mooncake: dict[str, Any], kind: str
) -> None:
    # igap41: PyPI's 0.3.5-0.3.6.post1 link no libcudart, so those versions were passed beside a CUDA 13 torch without
    # libcudart.so.12; a build of its own (a local version part, an editable install) may be built with CUDA 12 and
    # link it: its engine.so was not read
    doc = _gate(tmp_path, mooncake, "13.0", None, *PREFILL)
    check = _check(doc)
    assert check["status"] == "unknown", check
    assert kind in check["message"] and CUDART12 in check["message"] and "was not read" in check["message"], check
    assert doc["decision"] == "refuse"
    # PyPI's own 0.3.6 is still passed, and a local build whose libcudart.so.12 the loader finds too
    assert _check(_gate(tmp_path, _mooncake("0.3.6"), "13.0", None, *PREFILL))["status"] == "ok"
    found = _gate(tmp_path, mooncake, "13.0", "/usr/local/cuda-12.8/lib64/libcudart.so.12", *PREFILL)
    assert _check(found)["status"] == "ok"
