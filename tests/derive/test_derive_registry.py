"""`stackcheck manifests derive` over real wheels from the registry, against the shipped hand-curated data,
and the audit of a real newest SGLang installed into a site directory with its entries hidden from the
data.

CI runs a few representative wheels (CI_SGLANG, CI_FLASHINFER: a few megabytes each). With
STACKCHECK_REGISTRY_ALL=1 every release in the issue's ranges runs: SGLang 0.5.1-0.5.23, FlashInfer
0.6.3-0.7.4, sglang-kernel 0.4.x and sgl-kernel 0.3.x (hundreds of megabytes each, streamed from the zip),
torch 2.11.0 and flashinfer-cubin 0.6.3 (5,363 cubins); with STACKCHECK_AGREEMENT_OUT=FILE the agreement
per kind of fact is written there.

Every comparison must agree with the data, or be listed in KNOWN with the reason derive and the data
differ there (and the reason it is not a fix to the data)."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from registry_wheels import fetch_wheel, run_all
from unhurried import LIMIT_S, unhurried

from stackcheck.derive.compare import KINDS, compare
from stackcheck.derive.release import derive_release
from stackcheck.derive.tree import open_releases
from stackcheck.knowledge.loader import load

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

SGLANG_ALL = [f"0.5.{n}" for n in range(1, 24)]
FLASHINFER_ALL = [
    "0.6.3", "0.6.4", "0.6.6", "0.6.7.post2", "0.6.8.post1", "0.6.9", "0.6.10", "0.6.11.post1", "0.6.12",
    "0.6.14", "0.6.15.post1", "0.6.16", "0.6.17", "0.6.18", "0.7.0", "0.7.1", "0.7.2", "0.7.4",
]  # fmt: skip
SGLANG_KERNEL_ALL = [
    "0.4.0", "0.4.1", "0.4.1.post1", "0.4.2", "0.4.2.post2", "0.4.3", "0.4.4", "0.4.5", "0.4.6", "0.4.6.post1",
    "0.4.7", "0.4.8", "0.4.9", "0.4.10",
]  # fmt: skip
SGL_KERNEL_ALL = ["0.3.5", "0.3.7", "0.3.9", "0.3.9.post2", "0.3.14.post1", "0.3.16.post3", "0.3.16.post5",
                  "0.3.18.post2", "0.3.20", "0.3.21"]  # fmt: skip
CI_SGLANG = ["0.5.1", "0.5.9", "0.5.14", "0.5.23"]
CI_FLASHINFER = ["0.6.3", "0.7.2"]

#: Where derive and the shipped data differ and the data is kept: (package, version, kind, key) -> why.
KNOWN: dict[tuple[str, str, str, str], str] = {}
#: Pins the data records that the wheels do not declare: the kernel/torch pairings, inferred and noted
#: in components.json (the kernel-torch-pair check needs them); derive is right that the wheel has none.
INFERRED_PAIRINGS = {"sgl-kernel", "sglang-kernel", "flashinfer-cubin"}

AGREEMENT: dict[str, dict[str, int]] = {k: {} for k in KINDS}


@pytest.fixture(scope="module")
def manifests() -> Any:
    return load()


@pytest.fixture(scope="module", autouse=True)
def agreement_out() -> Any:
    yield
    out = os.environ.get("STACKCHECK_AGREEMENT_OUT")
    if out:
        Path(out).write_text(json.dumps(AGREEMENT, indent=1, sort_keys=True) + "\n")


def cases() -> list[Any]:
    everything = run_all()
    out = []
    for versions, dist, ci in (
        (SGLANG_ALL, "sglang", CI_SGLANG),
        (FLASHINFER_ALL, "flashinfer-python", CI_FLASHINFER),
        (SGLANG_KERNEL_ALL, "sglang-kernel", []),
        (SGL_KERNEL_ALL, "sgl-kernel", []),
        (["2.11.0"], "torch", []),
        (["0.6.3"], "flashinfer-cubin", []),
    ):
        for version in versions:
            if everything or version in ci:
                marks = [pytest.mark.registry] + (
                    [pytest.mark.slow] if dist in ("sglang-kernel", "sgl-kernel", "torch") else []
                )
                out.append(pytest.param(dist, version, marks=marks, id=f"{dist}-{version}"))
    return out


def check_agreement(derived: dict[str, Any], manifests: Any) -> list[str]:
    cmp = compare(derived, manifests)
    problems = []
    for f in cmp.findings:
        AGREEMENT[f.kind][f.status] = AGREEMENT[f.kind].get(f.status, 0) + 1
        key = (cmp.package, cmp.version, f.kind, f.key)
        if f.status in ("same", "derived-only", "new") or key in KNOWN:
            continue
        if f.status == "shipped-only" and f.kind == "pins" and cmp.package in INFERRED_PAIRINGS:
            # the wheel declares no such pin: the data's pairing stands only while it is marked inferred
            if "the shipped entry is inferred" in (f.note or ""):
                continue
        problems.append(
            f"{cmp.package} {cmp.version} {f.kind} {f.key}: {f.status}: derived {f.derived!r}, "
            f"data {f.shipped!r} [{f.where}] {f.note or ''}"
        )
    return problems


@pytest.mark.parametrize(("dist", "version"), cases())
def test_derived_agrees_with_the_data(dist: str, version: str, manifests: Any) -> None:
    wheel = fetch_wheel(dist, version)
    (release,) = open_releases(wheel)
    try:
        derived = derive_release(release, manifests)
    finally:
        release.tree.close()
    assert derived["package"] == dist and derived["version"] == version
    assert not [p for p in derived["problems"] if not p.startswith("binary not read")], derived["problems"]
    problems = check_agreement(derived, manifests)
    assert not problems, "\n".join(problems)
    if dist == "sglang":
        # every flag launch.json maps is read (present or absent), each present one with its file and line
        options = derived["flags"]["options"]
        assert set(options) == {o["flag"] for o in manifests.launch["options"]}
        assert all(e.get("line") for e in options.values() if e["present"])


@pytest.mark.registry
def test_cli_against_the_shipped_data(tmp_path: Path) -> None:
    """The command on a real wheel: what it prints, and an output directory that validates."""
    wheel = fetch_wheel("sglang", "0.5.23")
    repo = Path(__file__).resolve().parent.parent.parent
    env = {**os.environ, "PYTHONPATH": str(repo)}
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", "manifests", "derive", str(wheel), "--against", str(repo / "manifests"),
         "--output", str(out)],
        capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip
    # a known release: nothing disagrees (facts the data lacks would be listed with "+" and exit 1)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert "    ≠ " not in proc.stdout
    assert "pins  16 same" in proc.stdout and "torch==2.14.1 (line 281)" in proc.stdout
    # (igap52: quack-kernels, tilelang and nvidia-mathdx, recorded as read)
    assert "quack-kernels==0.6.5 (line 264)" in proc.stdout and "tilelang==0.1.12 (line 277)" in proc.stdout
    assert "transformers==5.19.0 (line 287)" in proc.stdout  # (igap30: the transformers pin, recorded as read)
    valid = subprocess.run([sys.executable, "-m", "stackcheck", "manifests", "validate", str(out)],
                           capture_output=True, text=True, timeout=300, env=env, check=False)  # fmt: skip
    assert valid.returncode == 0, valid.stdout + valid.stderr
    shipped = json.loads((repo / "manifests" / "gates.json").read_text())
    if proc.returncode == 0:
        assert json.loads((out / "gates.json").read_text()) == shipped  # nothing to change for a known release


# -- the newest SGLang, installed, judged from its files with its entries hidden from the data -------------


def hide_release(manifests: Any, package: str, version: str, previous: str) -> Any:
    """The manifests as they were before `version`: its release gone, ranges that named it end at `previous`."""
    hidden = copy.deepcopy(manifests)
    pkg = hidden.docs["components.json"]["packages"][package]
    pkg["releases"] = [r for r in pkg["releases"] if r["version"] != version]
    text = json.dumps(hidden.docs["gates.json"]).replace(f"<={version}", f"<={previous}")
    hidden.docs["gates.json"] = json.loads(text)
    hidden.forget_indexes()
    return hidden


@pytest.fixture(scope="module")
def installed_newest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wheel = fetch_wheel("sglang", SGLANG_ALL[-1])
    site = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile", "--disable-pip-version-check", "-q",
         "--target", str(site), "--python-version", "3.12", "--platform", "manylinux_2_34_x86_64",
         "--only-binary=:all:", str(wheel)],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        pytest.skip(f"pip install --target failed: {proc.stderr.strip()[-300:]}")
    return site


def probe_site(site: Path, cc: str, manifests: Any, cache: Path, monkeypatch: pytest.MonkeyPatch) -> Facts:
    from stackcheck.probes.interface import ProbeContext
    from stackcheck.probes.runner import run_probes

    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(cache))
    # without the probes' own time limits (tests/unhurried.py): under load the 5 s of the gate-table probe ran out
    # and torch-symm-mem was judged from no table (stop 35); an overrun is now a hang the budget still ends
    budget = LIMIT_S
    facts, outcomes = run_probes(["packages"], ProbeContext(path_dirs=[str(site)]), budget, unhurried(["packages"]))
    assert all(o["status"] == "ok" for o in outcomes), outcomes
    facts["packages"].update(
        {
            "torch": {"installed": True, "version": "2.14.1+cu130", "cuda": "13.0", "variant": "cu130"},
            "flashinfer-python": {"installed": True, "version": "0.7.2"},
            "sglang-kernel": {"installed": True, "version": "0.4.10"},
            "cuda-python": {"installed": True, "version": "13.0.1"},
            "nvidia-cutlass-dsl": {"installed": True, "version": "4.8.0"},
            "sgl-deep-gemm": {"installed": True, "version": "0.2.3.post2"},
        }
    )
    facts["gpus"] = [{"index": i, "name": "GPU", "compute_capability": cc} for i in range(8)]
    facts["topology"] = {"interconnect": "nvlink", "p2p": "all", "same_model": True, "gpu_count": 8}
    ctx = ProbeContext(facts=facts, manifests=lambda: manifests, gates=lambda: manifests.gates)
    names = ["source_tables", "derived"]
    found, outcomes = run_probes(names, ctx, budget, unhurried(names))
    assert all(o["status"] == "ok" for o in outcomes), outcomes
    facts.update(found)
    return facts


@pytest.mark.registry
@pytest.mark.parametrize("cc", ["12.0", "10.0", "9.0"])
def test_newest_sglang_judged_from_its_installed_files(
    installed_newest: Path, cc: str, manifests: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_all

    newest, previous = SGLANG_ALL[-1], SGLANG_ALL[-2]
    hidden = hide_release(manifests, "sglang", newest, previous)
    facts = probe_site(installed_newest, cc, hidden, tmp_path / "cache", monkeypatch)
    assert facts["packages"]["sglang"]["version"] == newest
    assert set(facts["derived"]) == {"sglang"} and "error" not in facts["derived"]["sglang"]
    full_f, full_c = evaluate_all(Context(facts=facts, manifests=manifests, launch={"tp": 8}))
    hid_f, hid_c = evaluate_all(Context(facts=facts, manifests=hidden, launch={"tp": 8}))
    judged = []
    for full, derived in zip(full_f, hid_f, strict=True):
        assert full["id"] == derived["id"]
        if derived["status"] == "unknown" and any(
            "hand-written knowledge" in str(r.get("message")) or "none of this feature's rules" in str(r.get("message"))
            for r in derived["reasons"]
        ):
            continue  # what only hand-written knowledge decides stays unknown, with the reason
        assert (derived["status"], derived.get("effect")) == (full["status"], full.get("effect")), (cc, derived)
        if derived["reasons"] and derived["reasons"][0].get("rule") == "known-release":
            judged.append(derived["id"])
    assert "attention-cutlass-mla" in judged  # the removed --attention-backend choice, read from the release
    if cc == "12.0":
        assert "torch-symm-mem" in judged  # flag, size table and its lookup, read from the release
    else:  # SM90/SM100: the multicast world sizes per major were read by hand (no probe): unknown
        symm = next(f for f in hid_f if f["id"] == "torch-symm-mem")
        assert symm["status"] == "unknown" and "multimem_world_sizes" in json.dumps(symm["reasons"])
    pins_full = {c["id"]: c for c in full_c}["sglang-pins"]
    pins_hidden = {c["id"]: c for c in hid_c}["sglang-pins"]
    assert pins_hidden["status"] == pins_full["status"]
    # a dependency the newest release is the first to pin (sgl-flash-mla, 0.5.23) is not tracked by the manifests
    # before it (derive.release.tracked_dependencies), so its pin is not derived: every other pin judged alike
    from stackcheck.derive.release import tracked_dependencies

    tracked = tracked_dependencies(hidden, "sglang")

    def judged_pins(check: Any) -> list[tuple[str, str]]:
        pairs = [(str(r.get("requirement")), str(r["result"])) for r in check["reasons"]]
        return sorted((req, res) for req, res in pairs if re.split(r"[=<>!~ \[;]", req, maxsplit=1)[0] in tracked)

    assert judged_pins(pins_hidden) == judged_pins(pins_full)
    assert all(r.get("derived") for r in pins_hidden["reasons"])
