"""igap46 (issue 16): LMCache's cupy from conda (rule lmcache-cupy-conda-cuda13-driver).

lmcache-cupy-cuda13-driver judged the pip distribution cupy-cuda13x only. conda-forge's cupy installs the
distribution `cupy` (its recipe builds PyPI's sdist with pip install .), and writes cupy/.data/_wheel.json with
"cuda": "13.x" for a CUDA 13 build (recipe/build_output.sh, preload_config/linux64_cuda13_wheel.json), as the pip
wheels do: a CUDA 13 conda cupy beside LMCache on a R570 driver passed unseen. The packages probe now reads that
file's CUDA major (packages.NAME.build_cuda_major) for cupy, cupy-cuda12x and cupy-cuda13x; a CUDA 13 build below a
CUDA 13 driver warns, a CUDA 12 build passes, a build that names none is unknown, never ok."""

from __future__ import annotations

import copy
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

MANIFESTS = load_manifests([])
CHECK = "lmcache-requires"
RULE = "lmcache-cupy-conda-cuda13-driver"


def _site(tmp_path: Path, dist: str, wheel_json: str | None) -> Path:
    sp = tmp_path / "lib" / "python3.12" / "site-packages"
    meta = sp / f"{dist.replace('-', '_')}-13.6.0.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 13.6.0\n")
    (meta / "INSTALLER").write_text("conda\n")
    (sp / "cupy").mkdir()
    (sp / "cupy" / "__init__.py").write_text("")
    if wheel_json is not None:
        (sp / "cupy" / ".data").mkdir()
        (sp / "cupy" / ".data" / "_wheel.json").write_text(wheel_json)
    return sp


def _probe(sp: Path, dist: str) -> dict[str, Any]:
    from stackcheck.probes.packages import find_distributions, package_facts
    from stackcheck.readers.fsview import HostView

    return package_facts(dist, find_distributions({dist}, [str(sp)])[dist], HostView())


def test_the_probe_reads_cupys_cuda_major(tmp_path: Path) -> None:
    # fails on the parent: cupy not probed, no build_cuda_major for any cupy
    from stackcheck.probes.packages import WANTED

    assert {"cupy", "cupy-cuda12x", "cupy-cuda13x"} <= set(WANTED)
    conda13 = _probe(_site(tmp_path / "a", "cupy", '{"packaging": "conda", "cuda": "13.x"}'), "cupy")
    assert conda13["installed"] is True and conda13["build_cuda_major"] == 13
    pip12 = _probe(_site(tmp_path / "b", "cupy-cuda12x", '{"cuda": "12.x", "packaging": "pip"}'), "cupy-cuda12x")
    assert pip12["build_cuda_major"] == 12
    source = _probe(_site(tmp_path / "c", "cupy", None), "cupy")  # a source build writes no _wheel.json
    assert "build_cuda_major" not in source and "_wheel.json" in source["error"]
    for odd in ('{"cuda": "13"}', '{"cuda": 13}', "[]", "{not json"):
        got = _probe(_site(tmp_path / f"d{len(odd)}{odd[:2]}", "cupy", odd), "cupy")
        assert "build_cuda_major" not in got, (odd, got)


def _verdict(driver_cuda: str | None, cupy: dict[str, Any] | None) -> dict[str, Any]:
    packages: dict[str, Any] = {
        "sglang": {"installed": True, "version": "0.5.9"},
        "torch": {"installed": True, "version": "2.8.0+cu128", "cuda": "12.8"},
        "lmcache": {"installed": True, "version": "0.5.6"},
        "transformers": {"installed": True, "version": "5.4.0"},
        "cupy-cuda13x": {"installed": False},
    }
    if cupy is not None:
        packages["cupy"] = cupy
    facts: dict[str, Any] = {"packages": packages, "packages_complete": True}
    if driver_cuda is not None:
        facts["driver"] = {"version": "570.172.08" if driver_cuda < "13" else "580.95.05", "cuda": driver_cuda}
    check = next(c for c in MANIFESTS.checks if c["id"] == CHECK)
    verdict = evaluate_check(check, Context(facts=copy.deepcopy(facts), manifests=MANIFESTS))  # type: ignore[arg-type]
    return dict(verdict)


def _rule(verdict: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in verdict["reasons"] if r.get("rule") == RULE), None)


CONDA13 = {"installed": True, "version": "13.6.0", "build_cuda_major": 13}
CONDA12 = {"installed": True, "version": "13.6.0", "build_cuda_major": 12}
UNREAD = {"installed": True, "version": "13.6.0", "error": "cupy/.data/_wheel.json: No such file or directory"}


def test_a_cuda13_conda_cupy_below_a_cuda13_driver_warns() -> None:
    verdict = _verdict("12.8", CONDA13)
    failing = _rule(verdict)
    assert failing is not None and failing["result"] == "fail" and failing["effect"] == "degraded", verdict
    assert verdict["status"] == "warning" and "cudaErrorInsufficientDriver" in str(failing["message"])


@pytest.mark.parametrize(
    ("driver_cuda", "cupy", "result"),
    [
        ("12.8", CONDA12, None),  # a CUDA 12 build: the driver of a CUDA 12 torch runs it
        ("13.0", CONDA13, None),  # a driver of CUDA 13
        ("13.0", UNREAD, None),  # a CUDA 13 driver runs either major
        ("12.8", UNREAD, "unknown"),  # its major not read, a driver below 13: never ok
        (None, CONDA13, "unknown"),  # the driver not read
    ],
)
def test_what_is_not_a_warning(driver_cuda: str | None, cupy: dict[str, Any], result: str | None) -> None:
    rule = _rule(_verdict(driver_cuda, cupy))
    assert (None if rule is None or rule["result"] == "pass" else rule["result"]) == result, rule


def test_an_older_list_without_cupy_leaves_the_rule_out() -> None:
    assert _rule(_verdict("12.8", None)) is None


@pytest.mark.registry
def test_the_real_wheels_name_their_cuda_major_as_the_probe_reads_it() -> None:
    from registry_wheels import cached

    from stackcheck.probes.packages import _wheel_json_cuda_major

    for dist, version, major in (("cupy-cuda13x", "14.2.0", 13), ("cupy-cuda12x", "13.6.0", 12)):
        wheel = cached(dist, version)
        if wheel is None:
            pytest.skip(f"{dist} {version} not cached")
        with zipfile.ZipFile(wheel) as z:
            text = z.read("cupy/.data/_wheel.json").decode()
        assert json.loads(text)["packaging"] == "pip" and _wheel_json_cuda_major(text) == major
