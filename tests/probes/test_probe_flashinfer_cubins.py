"""The flashinfer_cubins probe (stackcheck/probes/flashinfer_cubins.py) on small trees written here in the shape of
FlashInfer's files (artifacts.py constants, a family's checksums.txt), and the rules that read it: a trtllm-gen
family whose manifest is missing under FLASHINFER_NO_DOWNLOAD is blocked, a download that would be tried is
unknown (never ok), a complete family is ok."""

from __future__ import annotations

import copy
import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests
from stackcheck.probes.flashinfer_cubins import (
    FlashinferCubinsProbe,
    family_status,
    no_download,
    parse_artifacts,
    probe_cubins,
    resolve_dir,
)
from stackcheck.probes.interface import ProbeContext
from stackcheck.readers.fsview import HostView
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_feature

FMHA = "0123abcd/fmha/trtllm-gen/"
BMM = "0123abcd/batched_gemm/"


def artifacts_text(fmha_sha: str, bmm_sha: str = "00") -> str:
    """An artifacts.py of the shape the releases have: a frozen dataclass of paths and one of hashes."""
    return (
        "from dataclasses import dataclass\n\n"
        "@dataclass(frozen=True)\nclass ArtifactPath:\n"
        f'    TRTLLM_GEN_FMHA: str = "{FMHA}"\n'
        f'    TRTLLM_GEN_BMM: str = (\n        "{BMM}"\n    )\n'
        '    TRTLLM_GEN_GEMM: str = "0123abcd/gemm/"\n'
        '    DEEPGEMM: str = "0123abcd/deep-gemm/"\n\n'
        "@dataclass(frozen=True)\nclass CheckSumHash:\n"
        f'    TRTLLM_GEN_FMHA: str = "{fmha_sha}"\n'
        f'    TRTLLM_GEN_BMM = "{bmm_sha}"\n'
        "    map_checksums: dict = {}\n"
    )


MANIFEST = b"aa kernel_one.cubin\nbb kernel_two.cubin\ncc include/meta_info.h\n"


def tree(tmp: Path, *, complete: bool, manifest: bool = True, release: str = "0.6.18") -> dict[str, Any]:
    """site-packages with flashinfer/artifacts.py, a home whose cache holds the FMHA family (all or part of it)."""
    site = tmp / "site"
    (site / "flashinfer").mkdir(parents=True)
    (site / "flashinfer" / "artifacts.py").write_text(artifacts_text(hashlib.sha256(MANIFEST).hexdigest()))
    fam = tmp / "home" / ".cache" / "flashinfer" / "cubins" / FMHA
    (fam / "include").mkdir(parents=True)
    if manifest:
        (fam / "checksums.txt").write_bytes(MANIFEST)
    (fam / "kernel_one.cubin").write_bytes(b"x")
    if complete:
        (fam / "kernel_two.cubin").write_bytes(b"x")
        (fam / "include" / "meta_info.h").write_bytes(b"x")
    return {"packages": {"flashinfer-python": {"installed": True, "version": release, "location": str(site)}}}


def test_parse_artifacts_reads_both_classes() -> None:
    paths, hashes = parse_artifacts(artifacts_text("ff", "ee"))
    assert paths["TRTLLM_GEN_FMHA"] == FMHA and paths["TRTLLM_GEN_BMM"] == BMM
    assert hashes == {"TRTLLM_GEN_FMHA": "ff", "TRTLLM_GEN_BMM": "ee"}
    with pytest.raises(ValueError):
        parse_artifacts("class Other:\n    X = 1\n")


def test_order_of_directories_per_release() -> None:
    env = {"FLASHINFER_CUBIN_DIR": "/mirror", "HOME": "/home/u"}
    pkg = ("/site/flashinfer_cubin/cubins", "0.6.15.post1")
    # before 0.6.16 the package wins over the variable
    assert resolve_dir((0, 6, 15), env, pkg, "/home/u", None, "0.6.15.post1")[:2] == (pkg[0], "flashinfer-cubin")
    # from 0.6.16 the variable wins
    pkg16 = ("/site/flashinfer_cubin/cubins", "0.6.16")
    assert resolve_dir((0, 6, 16), env, pkg16, "/home/u", None, "0.6.16")[:2] == ("/mirror", "FLASHINFER_CUBIN_DIR")
    # 0.7.2 ignores a mismatched package: the cache
    got = resolve_dir((0, 7, 2), {"HOME": "/home/u"}, ("/p", "0.7.1"), "/home/u", None, "0.7.2")
    assert got[:2] == ("/home/u/.cache/flashinfer/cubins", "cache")
    # 0.7.1 raises at import on a mismatch: no directory
    assert resolve_dir((0, 7, 1), {}, ("/p", "0.7.0"), "/home/u", None, "0.7.1")[0] is None
    # FLASHINFER_DISABLE_VERSION_CHECK takes the mismatched package
    assert (
        resolve_dir((0, 7, 1), {"FLASHINFER_DISABLE_VERSION_CHECK": "1"}, ("/p", "0.7.0"), None, None, "0.7.1")[0]
        == "/p"
    )
    # a relative workspace base without a known working directory: not known
    assert resolve_dir((0, 6, 18), {"FLASHINFER_WORKSPACE_BASE": "ws"}, None, "/h", None, "0.6.18")[0] is None
    assert resolve_dir((0, 6, 18), {"FLASHINFER_WORKSPACE_BASE": "ws"}, None, "/h", "/srv", "0.6.18")[0] == (
        "/srv/ws/.cache/flashinfer/cubins"
    )
    assert resolve_dir((0, 6, 18), {}, None, None, None, "0.6.18")[0] is None  # HOME not known


def test_no_download_per_release() -> None:
    assert no_download((0, 6, 8), {"FLASHINFER_NO_DOWNLOAD": "0"}) == (True, False)  # "0" is set too
    assert no_download((0, 6, 7), {"FLASHINFER_NO_DOWNLOAD": "1"}) == (False, True)  # not read before 0.6.8
    assert no_download((0, 7, 2), {"FLASHINFER_NO_DOWNLOAD": ""}) == (False, False)


def test_family_status_lists_missing(tmp_path: Path) -> None:
    tree(tmp_path, complete=False)
    base = str(tmp_path / "home" / ".cache" / "flashinfer" / "cubins")
    st = family_status(HostView(), base, FMHA, hashlib.sha256(MANIFEST).hexdigest())
    assert (st["manifest"], st["listed"], st["missing"]) == (True, 3, 2)
    assert st["missing_first"] == ["include/meta_info.h", "kernel_two.cubin"]
    assert family_status(HostView(), base, FMHA, "00")["manifest"] is False  # another release's manifest


@pytest.mark.parametrize(
    ("complete", "manifest", "env", "want"),
    [
        (True, True, {"FLASHINFER_CUBIN_CHECKSUM_DISABLED": "1"}, True),  # (the loader does not hash them either)
        (True, True, {}, True),  # present by name, their sha256 unverified: still ready (the merge of icubin2)
        (False, True, {}, None),  # a download would be tried
        (False, False, {"FLASHINFER_NO_DOWNLOAD": "1"}, False),
        (False, True, {"FLASHINFER_NO_DOWNLOAD": "1"}, None),  # some files missing: which a kernel needs not known
        (False, False, {}, None),
    ],
)
def test_ready(tmp_path: Path, complete: bool, manifest: bool, env: dict[str, str], want: bool | None) -> None:
    facts = tree(tmp_path, complete=complete, manifest=manifest)
    got = probe_cubins(facts, {"HOME": str(tmp_path / "home"), **env}, HostView())
    assert got is not None and got["dir_source"] == "cache"
    assert got["ready"]["TRTLLM_GEN_FMHA"] is want
    assert got["ready"]["TRTLLM_GEN_BMM"] in (None, False)  # no BMM files at all
    if want is not True:
        assert got["ready_reason"]["TRTLLM_GEN_FMHA"]
    if complete:
        assert got["families"]["TRTLLM_GEN_FMHA"]["files"] == "present, unverified"


def test_probe_class_reads_the_launch_env(tmp_path: Path) -> None:
    facts = tree(tmp_path, complete=False, manifest=False)
    ctx = ProbeContext(env={}, launch_env={"HOME": str(tmp_path / "home"), "FLASHINFER_NO_DOWNLOAD": "1"},
                       facts={**facts, "python": {}})  # fmt: skip
    res = FlashinferCubinsProbe().run(ctx)
    assert res.facts["flashinfer_cubins"]["ready"]["TRTLLM_GEN_FMHA"] is False
    # outside the releases read, or without flashinfer: left out
    old = tree(tmp_path / "o", complete=True, release="0.4.1")
    assert probe_cubins(old, {"HOME": "/h"}, HostView()) is None
    assert probe_cubins({"packages": {}}, {}, HostView()) is None
    assert os.path.isdir(tmp_path / "home")


def b200(ready: bool | None, reason: str = "not read") -> dict[str, Any]:
    facts: dict[str, Any] = {
        "gpus": [{"index": 0, "name": "NVIDIA B200", "compute_capability": "10.0"}],
        "driver": {"version": "580.95.05", "cuda": "13.0"},
        "packages": {
            "sglang": {"installed": True, "version": "0.5.9"},
            "flashinfer-python": {"installed": True, "version": "0.6.18"},
        },
    }
    if ready is not False or reason != "absent":
        facts["flashinfer_cubins"] = {
            "release": "0.6.18",
            "no_download": ready is False,
            "ready": {"TRTLLM_GEN_FMHA": ready, "TRTLLM_GEN_BMM": ready},
            "ready_reason": {} if ready is not None else {"TRTLLM_GEN_FMHA": reason, "TRTLLM_GEN_BMM": reason},
        }
    return facts


def rule_result(manifests: Manifests, feature: str, rule: str, facts: dict[str, Any], launch: Any = None) -> str:
    spec = next(f for f in manifests.features if f["id"] == feature)
    ctx = Context(facts=copy.deepcopy(facts), manifests=manifests, launch=launch or {})  # type: ignore[arg-type]
    v = evaluate_feature(spec, ctx)
    return next(str(r["result"]) for r in v["reasons"] if r.get("rule") == rule)


@pytest.mark.parametrize("feature", ["attention-trtllm-mha", "attention-trtllm-mla", "attention-dsa-trtllm"])
def test_fmha_rule(manifests: Manifests, feature: str) -> None:
    assert rule_result(manifests, feature, "fmha-cubins", b200(False)) == "fail"
    assert rule_result(manifests, feature, "fmha-cubins", b200(None, "would download")) == "unknown"
    assert rule_result(manifests, feature, "fmha-cubins", b200(True)) == "pass"
    facts = b200(True)
    del facts["flashinfer_cubins"]
    assert rule_result(manifests, feature, "fmha-cubins", facts) == "unknown"  # not probed: never ok
    facts = b200(True)
    facts["packages"]["flashinfer-python"]["version"] = "0.7.2"  # read for another release (a plan's)
    assert rule_result(manifests, feature, "fmha-cubins", facts) == "unknown"


def test_fmha_rule_blocks_the_feature(manifests: Manifests) -> None:
    spec = next(f for f in manifests.features if f["id"] == "attention-trtllm-mha")
    ctx = Context(facts=b200(False), manifests=manifests, launch={})  # type: ignore[arg-type]
    v = evaluate_feature(spec, ctx)
    assert (v["status"], v["effect"]) == ("blocked", "crash")
    assert any("Artifact not found locally" in str(r.get("message")) for r in v["reasons"])


def test_moe_rules(manifests: Manifests) -> None:
    # the default runner on major 10: a refused download is unknown (the model's runner not read), never ok
    assert rule_result(manifests, "mxfp4-moe", "bmm-cubins-default", b200(False)) == "unknown"
    assert rule_result(manifests, "mxfp4-moe", "bmm-cubins-default", b200(True)) == "pass"
    assert rule_result(manifests, "nvfp4", "bmm-cubins-default", b200(None, "would download")) == "unknown"


def test_moe_runner_given(manifests: Manifests) -> None:
    launch = {"moe_runner_backend": "flashinfer_mxfp4"}
    assert rule_result(manifests, "mxfp4-moe", "bmm-cubins", b200(False), launch) == "fail"
    assert rule_result(manifests, "mxfp4-moe", "bmm-cubins", b200(None, "would download"), launch) == "unknown"
    assert rule_result(manifests, "mxfp4-moe", "bmm-cubins", b200(True), launch) == "pass"


def test_gemm_rule_with_the_trtllm_fp8_backend(manifests: Manifests) -> None:
    facts = b200(False)
    facts["flashinfer_cubins"]["ready"]["TRTLLM_GEN_GEMM"] = False
    launch = {"fp8_gemm_backend": "flashinfer_trtllm"}
    assert rule_result(manifests, "fp8-block-gemm", "gemm-cubins", facts, launch) == "fail"
    facts["flashinfer_cubins"]["ready"]["TRTLLM_GEN_GEMM"] = True
    assert rule_result(manifests, "fp8-block-gemm", "gemm-cubins", facts, launch) == "pass"
