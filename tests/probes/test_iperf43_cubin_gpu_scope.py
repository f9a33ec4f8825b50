"""iperf43 (issue 21): the cubin probe reads its families' files (checksums.txt, and on a kept answer imend16's lstat
of every name: flashinfer-cubin 0.6.13's 16,004, ~47 ms CPU each audit / gate) only where a GPU the verdicts judge
may load them. Every rule that reads flashinfer_cubins.ready.FAMILY is scoped to gpu.cc_major == 10 (held here
against the manifests), so on a box whose GPUs are all read and all of another major the families are not read:
each `ready` null with the reason (unknown to any rule that reads it, never ready) and no verdict changes. On a
major-10 box (or GPUs not read, or --assume-gpu) the kept answer still sees a cubin truncated in place. Trees written
here in the shape of FlashInfer's files (no upstream file)."""

from __future__ import annotations

import copy
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report
from stackcheck.facts.cubin_releases import CUBIN_GPU_MAJORS
from stackcheck.probes import flashinfer_cubins as fc
from stackcheck.probes import lazy_registry
from stackcheck.probes.interface import ProbeContext, view_of
from stackcheck.readers import kept

ROOT = Path(__file__).resolve().parent.parent.parent
REL = "00ff/fmha/trtllm-gen/"
MANIFEST = b"aa one.cubin\nbb two.cubin\ncc kernels/three.cubin\n"
_CLOCK = [1_700_000_000_000_000_000]
H200 = [{"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0"}]
B200 = [{"index": 0, "name": "NVIDIA B200", "compute_capability": "10.0"}]


@pytest.fixture(autouse=True)
def _old_enough(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kept, "RACY_NS", 0)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")


def _touch(*paths: Path) -> None:
    for path in paths:
        _CLOCK[0] += 1_000_000_000
        os.utime(path, ns=(_CLOCK[0], _CLOCK[0]), follow_symlinks=False)


def _box(tmp_path: Path, gpus: Any) -> tuple[Path, dict[str, Any], dict[str, str]]:
    base = tmp_path / "cubins"
    fam = base / REL
    (fam / "kernels").mkdir(parents=True)
    (fam / "checksums.txt").write_bytes(MANIFEST)
    for name in ("one.cubin", "two.cubin", "kernels/three.cubin"):
        (fam / name).write_bytes(b"\x7fELF" * 8)
    _touch(*(fam / n for n in ("one.cubin", "two.cubin", "kernels/three.cubin", "checksums.txt")))
    _touch(fam / "kernels", fam)
    site = tmp_path / "site"
    (site / "flashinfer").mkdir(parents=True)
    (site / "flashinfer" / "artifacts.py").write_text(f'class ArtifactPath:\n    TRTLLM_GEN_FMHA: str = "{REL}"\n')
    pkg = {"installed": True, "version": "0.6.13", "location": str(site)}
    facts: dict[str, Any] = {"packages": {"flashinfer-python": pkg}, "python": {}}
    if gpus is not None:
        facts["gpus"] = gpus
    env = {"HOME": str(tmp_path), "FLASHINFER_CUBIN_DIR": str(base), "FLASHINFER_NO_DOWNLOAD": "1"}
    return base, facts, env


def _run(ctx: ProbeContext, calls: list[str]) -> dict[str, Any]:
    probe = fc.FlashinferCubinsProbe()
    probe.prepare(ctx)
    calls.append("run")
    got = probe.run(ctx).facts["flashinfer_cubins"]
    assert isinstance(got, dict)
    return got


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The threads in which a directory's names were lstat'ed (fc._scan), as they happen."""
    calls: list[str] = []
    real = fc._scan

    def spied(path: str) -> Any:
        calls.append(threading.current_thread().name)
        return real(path)

    monkeypatch.setattr(fc, "_scan", spied)
    return calls


def _cubin_rules() -> list[tuple[str, str, dict[str, Any]]]:
    out = []
    for name, key in (("features.json", "features"), ("checks.json", "checks")):
        for item in json.loads((ROOT / "manifests" / name).read_text())[key]:
            for rule in item.get("rules", []):
                if "flashinfer_cubins.ready." in json.dumps(rule):
                    out.append((item["id"], str(rule.get("id")), rule))
    return out


def test_every_rule_reading_a_family_is_for_the_majors_the_probe_reads() -> None:
    """Only features.json and checks.json rules read a family (no other manifest names the section), and each of
    them is for the majors the probe reads (a `when` that is false on any other GPU)."""
    for path in sorted((ROOT / "manifests").glob("*.json")):
        if path.name not in ("features.json", "checks.json"):
            assert "flashinfer_cubins" not in path.read_text(), path.name
    rules = _cubin_rules()
    assert len(rules) >= 20
    for item, rule_id, rule in rules:
        when = rule.get("when")
        scoped = [
            p.get("value")
            for p in (when.get("all", []) if isinstance(when, dict) else [])
            if isinstance(p, dict) and p.get("fact") == "gpu.cc_major" and p.get("op") == "=="
        ]
        assert scoped and set(scoped) <= CUBIN_GPU_MAJORS, (item, rule_id)


def test_the_cubin_probe_waits_for_the_gpus() -> None:
    assert "gpus" in lazy_registry()["flashinfer_cubins"].needs
    assert "gpus" in fc.FlashinferCubinsProbe.needs


@pytest.mark.parametrize(
    ("gpus", "read"),
    [
        (H200, False),
        ([{"compute_capability": "12.0"}, {"compute_capability": "8.0"}], False),
        (B200, True),
        ([*H200, {"compute_capability": "10.3"}], True),  # (one major-10 GPU among them)
        ([*H200, {"name": "GPU 1", "compute_capability": None}], True),  # (one not read: any architecture)
        ([], True),  # (NVML not read: which GPUs, not known)
        ({"error": "NVML: driver not loaded"}, True),
        (None, True),
    ],
)
def test_the_families_are_read_only_where_a_judged_gpu_may_load_them(
    tmp_path: Path, scans: list[str], gpus: Any, read: bool
) -> None:
    _base, facts, env = _box(tmp_path, gpus)
    ctx = ProbeContext(env={}, launch_env=env, facts=facts, cache_dir=str(tmp_path / "cache"))
    got = _run(ctx, scans)
    if read:
        assert got["ready"]["TRTLLM_GEN_FMHA"] is True and "families_unread" not in got
        assert got["families"]["TRTLLM_GEN_FMHA"]["missing"] == 0
    else:
        assert got["ready"]["TRTLLM_GEN_FMHA"] is None and got["families"] == {}
        assert "not checked" in got["ready_reason"]["TRTLLM_GEN_FMHA"] and got["families_unread"]
        assert scans == ["run"]
        assert got["dir"] and got["dir_source"] == "FLASHINFER_CUBIN_DIR" and got["no_download"] is True


def test_a_kept_answer_on_an_h200_scans_nothing_and_on_a_b200_sees_a_truncated_cubin(
    tmp_path: Path, scans: list[str]
) -> None:
    """The first runs keep the family (B200); on an H200 neither prepare nor run lstats a name (the kept document
    says the last run read none); back on the B200, a cubin truncated in place meanwhile is seen (prescan + run)."""
    base, facts, env = _box(tmp_path, B200)
    ctx = ProbeContext(env={}, launch_env=env, facts=facts, cache_dir=str(tmp_path / "cache"))
    first = _run(ctx, scans)
    assert first["ready"]["TRTLLM_GEN_FMHA"] is True
    assert _run(ctx, scans) == first
    h200 = ctx.replace(facts={**facts, "gpus": H200})
    _run(h200, scans)  # (the kept document now says: no family read)
    scans.clear()
    on_h200 = _run(h200, scans)
    assert scans == ["run"] and on_h200["ready"]["TRTLLM_GEN_FMHA"] is None
    os.truncate(base / REL / "two.cubin", 0)
    _touch(base / REL / "two.cubin")
    assert _run(h200, scans)["ready"]["TRTLLM_GEN_FMHA"] is None  # (not read: never ready)
    scans.clear()
    again = _run(ctx, scans)  # (the B200: prepare guessed from the H200 run, so run() scans itself)
    assert len(scans) > 1 and "probe-flashinfer-cubins-prescan" not in scans
    assert again["ready"]["TRTLLM_GEN_FMHA"] is not True
    assert again["families"]["TRTLLM_GEN_FMHA"]["missing_first"] == ["two.cubin"]
    assert again == fc.probe_cubins(facts, env, view_of(ctx))
    scans.clear()
    assert _run(ctx, scans) == again  # (and the next B200 run scans in prepare's thread again)
    assert sorted(scans) == ["probe-flashinfer-cubins-prescan"] * 2 + ["run"]


def test_host_facts_gpus_decide_and_assumed_gpus_read_every_family(tmp_path: Path, scans: list[str]) -> None:
    base, facts, env = _box(tmp_path, H200)  # (the live NVML's GPUs: an H200)
    ctx = ProbeContext(env={}, launch_env=env, facts=facts, cache_dir=str(tmp_path / "cache"))
    assert _run(ctx.replace(judged_gpus=B200), scans)["ready"]["TRTLLM_GEN_FMHA"] is True  # (--host-facts: a B200)
    assert _run(ctx.replace(judged_gpus=None), scans)["ready"]["TRTLLM_GEN_FMHA"] is True  # (--assume-gpu)
    os.truncate(base / REL / "one.cubin", 0)
    _touch(base / REL / "one.cubin")
    assert _run(ctx.replace(judged_gpus=None), scans)["ready"]["TRTLLM_GEN_FMHA"] is not True
    scans.clear()
    probe = fc.FlashinferCubinsProbe()
    probe.prepare(ctx.replace(judged_gpus=H200))  # (--host-facts: an H200: no thread at all)
    assert probe._early is None and scans == []
    assert probe.run(ctx.replace(judged_gpus=H200)).facts["flashinfer_cubins"]["ready"]["TRTLLM_GEN_FMHA"] is None


def _report(tmp_path: Path, name: str, doc: dict[str, Any]) -> dict[str, str]:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    report, _ = build_report(Options(facts_file=str(path)))
    got: dict[str, str] = {f"feature {f['id']}": str(f["status"]) for f in report["features"]}
    got.update({f"check {c['id']}": str(c["status"]) for c in report["checks"]})
    return got


def _unread(section: dict[str, Any], gpus: list[dict[str, Any]]) -> dict[str, Any]:
    why = fc.families_unread_for(gpus) or "not checked (test)"
    out = {k: v for k, v in section.items() if k not in ("families", "ready", "ready_reason")}
    out.update(families={}, families_unread=why, ready=dict.fromkeys(section["ready"]))
    out["ready_reason"] = {f: f"{f}'s files were {why}" for f in section["ready"]}
    return out


@pytest.mark.parametrize("case", ["b200-cubin-package", "b200-cubins-offline"])
def test_no_verdict_changes_on_other_gpus_and_none_passes_on_a_family_not_read(tmp_path: Path, case: str) -> None:
    doc = json.loads((ROOT / "tests" / "cases" / case / "facts.json").read_text())
    facts = doc["facts"]
    section = facts["flashinfer_cubins"]
    assert any(v is not None for v in section["ready"].values())
    # the same box with H200s: the section as read and as the probe now leaves it give the same verdicts
    other = copy.deepcopy(doc)
    for gpu in other["facts"]["gpus"]:
        gpu.update(name="NVIDIA H200", compute_capability="9.0")
    assert fc.families_unread_for(other["facts"]["gpus"]) is not None
    as_read = _report(tmp_path, "h200-read", other)
    other["facts"]["flashinfer_cubins"] = _unread(section, other["facts"]["gpus"])
    assert _report(tmp_path, "h200-unread", other) == as_read
    # on the B200 itself a section with no family read (were it given) passes nothing the read one did not
    assert fc.families_unread_for(facts["gpus"]) is None
    b200 = _report(tmp_path, "b200-read", doc)
    doc["facts"]["flashinfer_cubins"] = _unread(section, [{"compute_capability": "9.0"}])
    unread = _report(tmp_path, "b200-unread", doc)
    changed = {k: (b200[k], unread[k]) for k in b200 if b200[k] != unread[k]}
    assert changed  # (the rules read the families there)
    assert all(new != "ok" for _old, new in changed.values()), changed
