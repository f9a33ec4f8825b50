"""Judging an installed release newer than the data from its own files (stackcheck.derive.installed and
.judge): the facts section `derived`, the per-file cache, and the verdicts, on releases installed into a
site directory by the test (tests/derive_fixtures.py). The same judgement over the real newest SGLang wheel
is in tests/derive/test_derive_registry.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from derive_fixtures import SERVER_ARGS, release_files, write_tree
from unhurried import LIMIT_S, unhurried

from stackcheck.derive.cache import Cache
from stackcheck.derive.installed import derive_installed, newer_than_data
from stackcheck.knowledge.loader import load
from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.runner import run_probes
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

FATBIN = Path(__file__).parent.parent / "data" / "fatbin"


@pytest.fixture(scope="module")
def manifests() -> Any:
    return load()


def box(site: Path, cc: str = "12.0", sglang: str = "0.5.24", **extra: Any) -> dict[str, Any]:
    packages: dict[str, Any] = {
        "sglang": {"installed": True, "version": sglang, "location": str(site)},
        "torch": {"installed": True, "version": "2.14.1+cu130", "cuda": "13.0", "variant": "cu130"},
        "flashinfer-python": {"installed": True, "version": "0.7.2"},
        "sglang-kernel": {"installed": True, "version": "0.4.10"},
        "cuda-python": {"installed": True, "version": "13.0.1"},
    }
    packages.update(extra)
    gpus = [{"index": i, "name": "GPU", "compute_capability": cc} for i in range(8)]
    topo = {"interconnect": "nvlink", "p2p": "all", "same_model": True, "gpu_count": 8}
    return {"packages": packages, "gpus": gpus, "topology": topo}


def probe(facts: dict[str, Any], manifests: Any, cache: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(cache))
    # the probes that read what the packages probe found, as the audit runs them (the runner, in waves), without
    # their own time limits: these tests check what is read, and under load the limits ran out (tests/unhurried.py)
    ctx = ProbeContext(facts=facts, manifests=lambda: manifests, gates=lambda: manifests.gates)
    names = ["source_tables", "derived"]
    found, outcomes = run_probes(names, ctx, LIMIT_S, unhurried(names))
    assert all(o["status"] == "ok" for o in outcomes), outcomes
    facts.update(found)
    return facts


def verdicts(facts: dict[str, Any], manifests: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    features, checks = evaluate_all(Context(facts=facts, manifests=manifests, launch={"tp": 8}))  # type: ignore[arg-type]
    return {f["id"]: f for f in features}, {c["id"]: c for c in checks}


def test_newer_release_judged_from_its_files(tmp_path: Path, manifests: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    site = write_tree(tmp_path / "site", release_files())
    facts = probe(box(site), manifests, tmp_path / "cache", monkeypatch)
    derived = facts["derived"]["sglang"]
    assert derived["version"] == "0.5.24" and derived["data_date"] == manifests.date
    assert derived["pins"]["requires"]["torch"] == "==2.14.1"
    assert "--enable-torch-symm-mem" in derived["flags"]["declared"]
    features, checks = verdicts(facts, manifests)
    symm = features["torch-symm-mem"]
    # read from the files: the flag exists, the size table has majors [9, 10] and is looked up with .get
    assert (symm["status"], symm["effect"]) == ("blocked", "disabled")
    by_rule = {r["rule"]: r for r in symm["reasons"]}
    assert by_rule["size-table-get"]["result"] == "fail" and by_rule["size-table-get"]["required"] == "one of [9, 10]"
    assert by_rule["sglang-has-flag"]["result"] == "pass"
    assert "exec_.py line" in by_rule["sglang-has-flag"]["source"]["title"]
    assert all("newer than the data of" in r["derived"] for r in symm["reasons"])
    # the release's --attention-backend has no cutlass_mla: read, a crash
    mla = features["attention-cutlass-mla"]
    assert (mla["status"], mla["effect"]) == ("blocked", "crash")
    assert {r["rule"]: r["result"] for r in mla["reasons"]}["choice-removed"] == "fail"
    # hand-written knowledge: unknown, with the reason
    fa3 = features["attention-fa3"]
    assert fa3["status"] == "unknown"
    # (attention-fa3's flash-ops-loads reads the kernel package only, so the feature is judged rule by rule now)
    assert any("sglang.fa3_majors has no probe" in str(r.get("message")) for r in fa3["reasons"]), fa3["reasons"]
    # features that hold for newer releases are judged as before
    assert (
        features["custom-allreduce"]["status"] == "ok" and "derived" not in features["custom-allreduce"]["reasons"][0]
    )
    pins = {r["rule"]: r for r in checks["sglang-pins"]["reasons"]}
    assert pins["sglang-pins:torch"]["result"] == "pass" and pins["sglang-pins:torch"]["derived"]
    assert pins["sglang-pins:flashinfer-python"]["result"] == "pass"
    assert "METADATA line" in pins["sglang-pins:torch"]["source"][0]["title"]


def test_multimem_rule_needs_hand_knowledge_only_where_it_applies(
    tmp_path: Path, manifests: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = write_tree(tmp_path / "site", release_files())
    facts = probe(box(site, cc="9.0"), manifests, tmp_path / "cache", monkeypatch)
    symm, _ = verdicts(facts, manifests)
    reasons = {r["rule"]: r for r in symm["torch-symm-mem"]["reasons"]}
    assert symm["torch-symm-mem"]["status"] == "unknown"  # SM90: the multimem world sizes were read by hand
    assert reasons["multimem-world-size-sm90"]["result"] == "unknown"
    assert "multimem-world-size-sm100" not in reasons  # its `when` (cc major 10) is false on this box
    assert reasons["size-table-get"]["result"] == "pass"


def test_release_without_the_flag(tmp_path: Path, manifests: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    files = release_files()
    files["sglang/srt/arg_groups/fields/exec_.py"] = files["sglang/srt/arg_groups/fields/exec_.py"].replace(
        "enable_torch_symm_mem", "enable_other_symm_mem"
    )
    site = write_tree(tmp_path / "site", files)
    facts = probe(box(site), manifests, tmp_path / "cache", monkeypatch)
    features, _ = verdicts(facts, manifests)
    flag = {r["rule"]: r for r in features["torch-symm-mem"]["reasons"]}["sglang-has-flag"]
    assert flag["result"] == "fail" and "declares no --enable-torch-symm-mem" in flag["observed"]
    assert features["torch-symm-mem"]["effect"] == "crash"


def test_known_release_is_not_derived(tmp_path: Path, manifests: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    site = write_tree(tmp_path / "site", release_files(version="0.5.23"))
    facts = probe(box(site, sglang="0.5.23"), manifests, tmp_path / "cache", monkeypatch)
    assert "derived" not in facts  # nothing newer than the data: no section, nothing read
    assert not newer_than_data(manifests, "sglang", "0.5.23+cu130")
    assert newer_than_data(manifests, "sglang", "0.5.24.dev1+local")


def test_without_derived_facts_the_newer_release_stays_unknown(tmp_path: Path, manifests: Any) -> None:
    facts = box(tmp_path)  # a saved report from before derive, say
    features, checks = verdicts(facts, manifests)
    assert features["torch-symm-mem"]["status"] == "unknown"
    assert "newer than the manifests" in features["torch-symm-mem"]["reasons"][0]["message"]
    assert checks["sglang-pins"]["status"] == "unknown"


def test_cache_per_file(tmp_path: Path, manifests: Any) -> None:
    site = write_tree(tmp_path / "site", release_files())
    facts = box(site)
    cache_dir = tmp_path / "cache"
    first = derive_installed(facts, manifests, cache_dir=cache_dir)
    entries = sorted(cache_dir.iterdir())
    assert len(entries) == 2 and all(oct(p.stat().st_mode)[-3:] == "600" for p in entries)
    assert not list(cache_dir.glob(".*.tmp"))
    second = derive_installed(facts, manifests, cache_dir=cache_dir)
    assert second == first
    # a warm run reads no source: make the sources unreadable and it still answers from the cache
    server_args = site / "sglang/srt/server_args.py"
    stat = server_args.stat()
    server_args.write_text(SERVER_ARGS.replace("--enable-old-thing", "--enable-new-thing"))
    os.utime(server_args, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a changed file: read again
    third = derive_installed(facts, manifests, cache_dir=cache_dir)
    assert "--enable-new-thing" in third["sglang"]["flags"]["declared"]
    assert "--enable-new-thing" not in first["sglang"]["flags"]["declared"]


def test_cache_hits_and_misses(tmp_path: Path) -> None:
    from stackcheck.derive.cache import current_key

    f = tmp_path / "f"
    f.write_text("x")
    key = current_key(f)
    assert key is not None
    cache = Cache(tmp_path / "c")
    assert cache.get("k", [key]) is None
    cache.put("k", [key], {"v": 1})
    assert cache.get("k", [key]) == {"v": 1}
    assert cache.get("other", [key]) is None
    (tmp_path / "c" / next((tmp_path / "c").iterdir()).name).write_text("{not json")
    assert cache.get("k", [key]) is None
    assert (cache.hits, cache.misses) == (1, 3)


def test_unwritable_cache_is_no_cache(tmp_path: Path, manifests: Any) -> None:
    site = write_tree(tmp_path / "site", release_files())
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    got = derive_installed(box(site), manifests, cache_dir=blocker / "cache")
    assert got["sglang"]["pins"]["requires"]["torch"] == "==2.14.1"


def test_missing_dist_info_is_an_error_entry(tmp_path: Path, manifests: Any) -> None:
    got = derive_installed(box(tmp_path / "nowhere"), manifests, cache_dir=tmp_path / "c")
    assert got["sglang"]["error"].startswith("no .dist-info of sglang found in")


def test_newer_kernel_package_archs_from_its_binaries(tmp_path: Path, manifests: Any) -> None:
    files: dict[str, str | bytes] = {
        "sglang_kernel-0.4.99.dist-info/METADATA": (
            "Name: sglang-kernel\nVersion: 0.4.99\nRequires-Dist: torch==2.14.1\n"
        ),
        "sgl_kernel/common_ops.abi3.so": (FATBIN / "libk.so").read_bytes(),
    }
    site = write_tree(tmp_path / "site", files)
    facts = box(tmp_path, sglang="0.5.23")
    facts["packages"]["sglang-kernel"] = {"installed": True, "version": "0.4.99", "location": str(site)}
    facts["derived"] = derive_installed(facts, manifests, cache_dir=tmp_path / "c")
    assert facts["derived"]["sglang-kernel"]["archs"]["sass"] == ["sm_90", "sm_103f"]
    _, checks = verdicts(facts, manifests)
    coverage = checks["kernel-arch"]["reasons"][0]
    assert coverage["result"] == "fail" and "binaries (newer than the data" in coverage["message"]
    pair = {r["rule"]: r for r in checks["sgl-kernel-torch-pair"]["reasons"]}["sglang-kernel-pins:torch"]
    assert pair["result"] == "pass" and pair["derived"]


def test_gate_reads_flag_presence_of_a_newer_release(tmp_path: Path, manifests: Any) -> None:
    """`stackcheck gate` for a release newer than the data: a flag launch.json knows is checked against the
    flags the release declares (read from its files), not against launch.json's open ranges."""
    import json
    import subprocess
    import sys

    from stackcheck.launch import gate

    files = release_files()
    site = write_tree(tmp_path / "site", files)
    facts = box(site)
    facts["derived"] = derive_installed(facts, manifests, cache_dir=tmp_path / "c")
    declared = facts["derived"]["sglang"]["flags"]
    assert "--enable-nccl-nvls" not in declared["declared"]  # the test release has no such flag
    d = gate.derive(["python", "-m", "sglang.launch_server", "--tp", "8", "--enable-nccl-nvls"], manifests.launch, {})
    assert gate.release_problems(d, manifests.launch, "0.5.24") == []  # launch.json's open range: assumed
    [problem] = gate.release_problems(d, manifests.launch, "0.5.24", declared)
    assert (problem.status, problem.effect) == ("blocked", "crash")
    assert "declares no --enable-nccl-nvls" in problem.message
    ok = gate.derive(
        ["python", "-m", "sglang.launch_server", "--tp", "8", "--enable-torch-symm-mem"], manifests.launch, {}
    )
    assert gate.release_problems(ok, manifests.launch, "0.5.24", declared) == []
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    repo = Path(__file__).resolve().parent.parent.parent
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", "gate", "--facts", str(path), "--dry-run", "--",
         "python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "8", "--enable-nccl-nvls"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(repo)}, check=False,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "declares no --enable-nccl-nvls" in proc.stdout + proc.stderr


def test_two_newer_packages_and_an_unreadable_one(
    tmp_path: Path, manifests: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = write_tree(tmp_path / "site", release_files())
    fi_files = {"flashinfer_python-0.7.9.dist-info/METADATA": "Name: flashinfer-python\nVersion: 0.7.9\n"}
    write_tree(site, fi_files)
    facts = box(site)
    facts["packages"]["flashinfer-python"] = {"installed": True, "version": "0.7.9", "location": str(site)}
    facts = probe(facts, manifests, tmp_path / "c", monkeypatch)
    assert set(facts["derived"]) == {"sglang", "flashinfer-python"}
    features, _ = verdicts(facts, manifests)
    both = [
        f
        for f in manifests.features
        if {"sglang", "flashinfer-python"} <= set(f.get("needs") or []) and not f.get("assume_newer")
    ]
    assert both
    for feature in both:  # judged against both newer releases at once
        head = features[feature["id"]]["reasons"][0]
        assert head["rule"] == "known-release" and "sglang 0.5.24, flashinfer-python 0.7.9" in head["message"]
    symm = features["torch-symm-mem"]  # needs sglang and torch only: judged as before
    assert symm["status"] == "blocked" and "sglang 0.5.24" in symm["reasons"][0]["derived"]
    facts["derived"]["sglang"] = {"version": "0.5.24", "error": "cannot read METADATA"}
    features, _ = verdicts(facts, manifests)
    assert features["torch-symm-mem"]["status"] == "unknown"
    assert "could not be read: cannot read METADATA" in features["torch-symm-mem"]["reasons"][0]["message"]


def test_cache_entry_links_and_corrupt_entries(tmp_path: Path) -> None:
    """A link planted at an entry's name is neither read nor written through (before: the entry was written over
    the file it points to); a directory others may write is not used; an entry nested past the parser's depth is a
    miss (before: RecursionError)."""
    from stackcheck.derive.cache import current_key

    f = tmp_path / "f"
    f.write_text("x")
    key = current_key(f)
    assert key is not None
    cache = Cache(tmp_path / "c")
    cache.put("k", [key], {"v": 1})
    (entry,) = (tmp_path / "c").iterdir()
    entry.write_text("[" * 100_000)
    assert cache.get("k", [key]) is None
    victim = tmp_path / "victim"
    victim.write_text("the user's own file\n")
    entry.unlink()
    entry.symlink_to(victim)
    assert cache.get("k", [key]) is None
    cache.put("k", [key], {"v": 2})
    assert victim.read_text() == "the user's own file\n" and not entry.is_symlink()
    assert cache.get("k", [key]) == {"v": 2}
    (tmp_path / "c").chmod(0o777)
    try:
        assert cache.get("k", [key]) is None
    finally:
        (tmp_path / "c").chmod(0o700)
