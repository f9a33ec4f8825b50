"""irev77's review of the flashinfer_cubins probe (stackcheck/probes/flashinfer_cubins.py), on small trees written
here in the shape of FlashInfer's files: the false refusals and false passes found against the real wheels
(flashinfer-python 0.6.0-0.7.4, flashinfer-cubin 0.6.13)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes import flashinfer_cubins as fc
from stackcheck.probes.flashinfer_cubins import probe_cubins
from stackcheck.readers.fsview import HostView

FMHA = "0123abcd/fmha/trtllm-gen/"


def artifacts_text(fmha_sha: str) -> str:
    return (
        "from dataclasses import dataclass\n\n"
        "@dataclass(frozen=True)\nclass ArtifactPath:\n"
        f'    TRTLLM_GEN_FMHA: str = "{FMHA}"\n'
        '    TRTLLM_GEN_BMM: str = "0123abcd/batched_gemm/"\n\n'
        "@dataclass(frozen=True)\nclass CheckSumHash:\n"
        f'    TRTLLM_GEN_FMHA: str = "{fmha_sha}"\n'
    )


def package_tree(tmp: Path, manifest: bytes, files: list[str], release: str = "0.6.13") -> dict[str, Any]:
    """flashinfer-python's artifacts.py and a flashinfer-cubin package of the same release holding the FMHA family."""
    site = tmp / "site"
    (site / "flashinfer").mkdir(parents=True)
    (site / "flashinfer" / "artifacts.py").write_text(artifacts_text(hashlib.sha256(manifest).hexdigest()))
    fam = site / "flashinfer_cubin" / "cubins" / FMHA
    fam.mkdir(parents=True)
    (fam / "checksums.txt").write_bytes(manifest)
    for name in files:
        (fam / name).parent.mkdir(parents=True, exist_ok=True)
        (fam / name).write_bytes(b"x")
    pkg = {"installed": True, "version": release, "location": str(site)}
    return {"packages": {"flashinfer-python": dict(pkg), "flashinfer-cubin": dict(pkg)}}


def test_a_large_fmha_manifest_is_read(tmp_path: Path) -> None:
    # flashinfer-cubin 0.6.13's FMHA checksums.txt is 2,376,413 bytes (13,453 lines): over the first cap of 1 MiB,
    # which made the package's complete FMHA family 'missing' (blocked under FLASHINFER_NO_DOWNLOAD)
    names = [f"kernel_{i:05d}.cubin" for i in range(40)]
    lines = [f"{'ab' * 32} {names[i % len(names)]}\n" for i in range(30000)]
    manifest = "".join(lines).encode()
    assert len(manifest) > 2 * (1 << 20)
    facts = package_tree(tmp_path, manifest, names)
    env = {"HOME": "/root", "FLASHINFER_NO_DOWNLOAD": "1", "FLASHINFER_CUBIN_CHECKSUM_DISABLED": "1"}  # (icubin2)
    got = probe_cubins(facts, env, HostView())
    assert got is not None and got["dir_source"] == "flashinfer-cubin"
    assert got["ready"]["TRTLLM_GEN_FMHA"] is True
    assert got["families"]["TRTLLM_GEN_FMHA"]["listed"] == 30000


def test_a_manifest_over_the_cap_is_unknown_never_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = b"aa kernel_one.cubin\n" * 100
    facts = package_tree(tmp_path, manifest, ["kernel_one.cubin"])
    monkeypatch.setattr(fc, "_MANIFEST_LIMIT", 64)
    got = probe_cubins(facts, {"HOME": "/root", "FLASHINFER_NO_DOWNLOAD": "1"}, HostView())
    assert got is not None
    assert got["ready"]["TRTLLM_GEN_FMHA"] is None  # present but not read: not 'missing', never blocked
    assert "not read" in got["ready_reason"]["TRTLLM_GEN_FMHA"]
    from stackcheck.facts.minischema import is_valid
    from stackcheck.facts.schema_check import report_schema

    schema = report_schema()
    section_schema = schema["$defs"]["facts"]["properties"]["flashinfer_cubins"]
    assert is_valid(got, section_schema, schema)  # "manifest": null is a value the report schema takes


RUBIN_ARTIFACTS = (
    "class ArtifactPath:\n"
    '    TRTLLM_GEN_FMHA: str = "f1/fmha/trtllm-gen/"\n'
    '    TRTLLM_GEN_BMM: str = "b1/batched_gemm/"\n'
    '    TRTLLM_GEN_BMM_RUBIN: str = "b2/batched_gemm/"\n'
    '    TRTLLM_GEN_GEMM: str = "g1/gemm/"\n'
    "class CheckSumHash:\n"
    '    TRTLLM_GEN_BMM: str = "00"\n'
)


def rubin_split_tree(tmp: Path) -> dict[str, Any]:
    """0.6.16-0.6.17's shape: a BMM family for 10.0/10.3 and a TRTLLM_GEN_BMM_RUBIN one for 10.7; the cache holds
    only the first (a home shared with a B200 node, say)."""
    site = tmp / "site"
    (site / "flashinfer").mkdir(parents=True)
    manifest = b"aa kernel_one.cubin\n"
    (site / "flashinfer" / "artifacts.py").write_text(
        RUBIN_ARTIFACTS.replace('BMM: str = "00"', f'BMM: str = "{hashlib.sha256(manifest).hexdigest()}"')
    )
    fam = tmp / "home" / ".cache" / "flashinfer" / "cubins" / "b1" / "batched_gemm"
    fam.mkdir(parents=True)
    (fam / "checksums.txt").write_bytes(manifest)
    (fam / "kernel_one.cubin").write_bytes(b"x")
    return {"packages": {"flashinfer-python": {"installed": True, "version": "0.6.17", "location": str(site)}}}


def test_the_rubin_families_are_read(tmp_path: Path) -> None:
    # 0.6.16-0.6.17 load TRTLLM_GEN_BMM_RUBIN / _GEMM_RUBIN / DEEPGEMM_RUBIN on 10.7 (jit/fused_moe.py
    # gen_trtllm_gen_fused_moe_sm100_module(enable_rubin): 0.6.17 :246-256; fused_moe/core.py:1428)
    got = probe_cubins(rubin_split_tree(tmp_path), {"HOME": str(tmp_path / "home"), "FLASHINFER_NO_DOWNLOAD": "1",
                                                    "FLASHINFER_CUBIN_CHECKSUM_DISABLED": "1"},
                       HostView())  # fmt: skip
    assert got is not None
    assert got["ready"]["TRTLLM_GEN_BMM"] is True
    assert got["ready"]["TRTLLM_GEN_BMM_RUBIN"] is False
    assert got["artifacts"]["TRTLLM_GEN_BMM_RUBIN"] == "b2/batched_gemm/"


def _moe_on(manifests: Any, cc: str, section: dict[str, Any]) -> str:
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_feature

    facts = {
        "gpus": [{"index": 0, "name": "GPU", "compute_capability": cc}],
        "driver": {"version": "590.44.01", "cuda": "13.1"},
        "packages": {"sglang": {"installed": True, "version": "0.5.20"},
                     "flashinfer-python": {"installed": True, "version": section["release"]}},
        "flashinfer_cubins": section,
    }  # fmt: skip
    spec = next(f for f in manifests.features if f["id"] == "mxfp4-moe")
    ctx = Context(facts=facts, manifests=manifests, launch={"moe_runner_backend": "flashinfer_mxfp4"})  # type: ignore[arg-type]
    v = evaluate_feature(spec, ctx)
    return next(str(r["result"]) for r in v["reasons"] if r.get("rule") == "bmm-cubins")


def test_a_rubin_gpu_is_judged_on_the_rubin_family(manifests: Any) -> None:
    ready: dict[str, bool] = {"TRTLLM_GEN_BMM": True, "TRTLLM_GEN_BMM_RUBIN": False}
    section: dict[str, Any] = {"release": "0.6.17", "no_download": True, "ready": ready, "ready_reason": {}}
    assert _moe_on(manifests, "10.0", section) == "pass"
    assert _moe_on(manifests, "10.7", section) == "fail"  # was pass: the B200 family judged a Rubin launch
    ready["TRTLLM_GEN_BMM_RUBIN"] = True
    assert _moe_on(manifests, "10.7", section) == "pass"
    # a section read without the Rubin families (icubin1's probe): unknown on 10.7, never ok
    old = {"release": "0.6.16.post2", "no_download": True, "ready": {"TRTLLM_GEN_BMM": True}, "ready_reason": {}}
    assert _moe_on(manifests, "10.7", old) == "unknown"
    # 0.6.18 and later have one family for every major-10 GPU
    merged = {"release": "0.6.18", "no_download": True, "ready": {"TRTLLM_GEN_BMM": True}, "ready_reason": {}}
    assert _moe_on(manifests, "10.7", merged) == "pass"


def test_the_unknown_of_a_fresh_online_box_names_the_fix(manifests: Any) -> None:
    # a fresh online B200 (SGLang 0.5.18+, no flashinfer-cubin, cubins not downloaded yet): the trtllm_mha default
    # is unknown, and the reason says how to have the cubins on the box before the launch
    import json

    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_feature

    root = Path(__file__).resolve().parents[1] / "cases" / "b200" / "facts.json"
    facts = json.loads(root.read_text())["facts"]
    release = facts["packages"]["flashinfer-python"]["version"]
    reason = ("TRTLLM_GEN_FMHA's files are missing in /root/.cache/flashinfer/cubins (cache): FlashInfer downloads "
              "them at the first kernel, which needs the network (not read)")  # fmt: skip
    facts["flashinfer_cubins"] = {"release": release, "no_download": False, "ready": {"TRTLLM_GEN_FMHA": None},
                                  "ready_reason": {"TRTLLM_GEN_FMHA": reason}}  # fmt: skip
    spec = next(f for f in manifests.features if f["id"] == "attention-trtllm-mha")
    v = evaluate_feature(spec, Context(facts=facts, manifests=manifests, launch={}))
    rule = next(r for r in v["reasons"] if r.get("rule") == "fmha-cubins")
    assert rule["result"] == "unknown"
    text = json.dumps(rule)
    assert "python -m flashinfer download-cubin" in text and f"flashinfer-cubin=={release}" in text


@pytest.mark.parametrize(("version", "reads"), [("0.6.7", False), ("0.6.7.post1", True), ("0.6.7.post3", True),
                                                ("0.6.8", True), ("0.6.6", False)])  # fmt: skip
def test_no_download_from_0_6_7_post1(version: str, reads: bool) -> None:
    # get_artifact's FLASHINFER_NO_DOWNLOAD check is in 0.6.7.post1, .post2 and .post3 (cubin_loader.py:214), not 0.6.7
    from stackcheck.facts.cubin_releases import release_tuple
    from stackcheck.probes.flashinfer_cubins import no_download

    release = release_tuple(version)
    assert release is not None
    assert no_download(release, {"FLASHINFER_NO_DOWNLOAD": "1"}, version) == (reads, not reads)
