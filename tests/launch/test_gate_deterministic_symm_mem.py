"""Deterministic inference turns symmetric-memory all-reduce off from SGLang 0.5.18: with tp > 1 on CUDA the
deterministic handler sets enable_torch_symm_mem to False (0.5.18's server_args.py; a declaration in
arg_groups/attention_hook.py from 0.5.19, which the all-reduce flags read back), while 0.5.3-0.5.17 leave it as
given. The gate required torch-symm-mem for `--enable-torch-symm-mem` with `--enable-deterministic-inference` (or
`--rl-on-policy-target`) on every release, and refused such a launch where symmetric memory cannot run (a false
block). launch.json's need now depends on the release (a `release` condition), which the gate reads once the
facts say which SGLang is installed; a release not known, or outside the releases read, keeps the need."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from gate_cli import gate_json
from registry_wheels import fetch_wheel, read_texts, run_all

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

ROOT = Path(__file__).resolve().parent.parent.parent
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--enable-torch-symm-mem"]
DETERMINISTIC = ["--tp", "2", "--enable-deterministic-inference"]


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def needs_symm_mem(mapping: dict[str, Any], extra: list[str], release: str | None) -> gate.Derived:
    return gate.derive([*LAUNCH, *extra], mapping, {}, release=release)


def required(d: gate.Derived) -> set[str]:
    return {r.feature for r in d.required}


@pytest.mark.parametrize(
    ("release", "needed"),
    [
        ("0.5.3", True),
        ("0.5.10", True),
        ("0.5.17", True),
        ("0.5.18", False),
        ("0.5.19", False),
        ("0.5.20", False),
        ("0.5.23", False),
        ("0.5.24", True),  # newer than the releases read: not assumed
        (None, True),  # not known (before the facts are read): fail closed
    ],
)
def test_deterministic_tp2_needs_symm_mem_by_release(
    mapping: dict[str, Any], release: str | None, needed: bool
) -> None:
    d = needs_symm_mem(mapping, DETERMINISTIC, release)
    assert ("torch-symm-mem" in required(d)) is needed
    assert d.reads_release  # the caller derives again once the release is known
    off = [o for o in d.off if o.startswith("torch-symm-mem: off")]
    assert bool(off) is not needed
    if off:
        assert f"SGLang {release}" in off[0] and "--enable-deterministic-inference given" in off[0]


def test_rl_on_policy_target_turns_it_off_too(mapping: dict[str, Any]) -> None:
    d = needs_symm_mem(mapping, ["--tp", "2", "--rl-on-policy-target", "fsdp"], "0.5.20")
    assert "torch-symm-mem" not in required(d)


@pytest.mark.parametrize(
    "extra",
    [
        [],  # no deterministic inference
        ["--tp", "2"],
        ["--enable-deterministic-inference"],  # one GPU: SGLang's handler only acts for tp > 1
        ["--tp", "1", "--enable-deterministic-inference"],
    ],
)
def test_other_launches_still_need_it(mapping: dict[str, Any], extra: list[str]) -> None:
    d = needs_symm_mem(mapping, extra, "0.5.23")
    assert "torch-symm-mem" in required(d)
    assert not any(o.startswith("torch-symm-mem") for o in d.off)


def test_require_keeps_it_and_lists_no_off(mapping: dict[str, Any]) -> None:
    d = gate.derive([*LAUNCH, *DETERMINISTIC], mapping, {}, ("torch-symm-mem",), release="0.5.23")
    assert "torch-symm-mem" in required(d)
    assert not any(o.startswith("torch-symm-mem") for o in d.off)


def test_the_release_is_only_read_when_a_condition_needs_it(mapping: dict[str, Any]) -> None:
    assert not gate.derive([*LAUNCH], mapping, {}).reads_release  # the first alternative holds
    assert not gate.derive([*LAUNCH[:-1], "--tp", "2"], mapping, {}).reads_release


def _facts_at(tmp_path: Path, release: str) -> Path:
    doc = json.loads((ROOT / "tests" / "cases" / "rubin-sm107-sglang0523" / "facts.json").read_text())
    pkg = doc["facts"]["packages"]["sglang"]
    pkg["version"] = pkg["dist_version"] = release
    out = tmp_path / f"facts-{release}.json"
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize(("release", "needed"), [("0.5.17", True), ("0.5.23", False)])
def test_gate_end_to_end_reads_the_installed_release(tmp_path: Path, release: str, needed: bool) -> None:
    doc = gate_json(
        _facts_at(tmp_path, release),
        "--tp", "2", "--enable-torch-symm-mem", "--enable-deterministic-inference", "--attention-backend", "fa4",
        dry_run=True,
    )  # fmt: skip
    assert ("torch-symm-mem" in {f.get("feature") for f in doc["features"]}) is needed
    assert any(o.startswith("torch-symm-mem: off") for o in doc["derived"]["off"]) is not needed


# ---- the data against the real wheels ---------------------------------------------------------------------

ALL = [f"0.5.{n}" for n in range(3, 24)]
DEFAULT = ["0.5.3", "0.5.10", "0.5.17", "0.5.18", "0.5.19", "0.5.20", "0.5.23"]
_OFF = re.compile(r"enable_torch_symm_mem\s*=\s*False")


def _handler_turns_it_off(version: str) -> bool:
    """Whether the release's deterministic handler sets enable_torch_symm_mem to False in its tp > 1 CUDA branch
    (server_args.py's method, or arg_groups/attention_hook.py's function from 0.5.19)."""
    texts = read_texts(
        fetch_wheel("sglang", version),
        lambda n: n in ("sglang/srt/server_args.py", "sglang/srt/arg_groups/attention_hook.py"),
    )
    for text in texts.values():
        m = re.search(r"\n(    )?def _?handle_deterministic_inference\(", text)
        if m is None:
            continue
        body = text[m.end() :]
        end = re.search(r"\n(def |    def )", body)
        body = body[: end.start() if end else len(body)]
        tp = body.find("tp_size > 1")
        return tp >= 0 and bool(_OFF.search(body[tp:]))
    return False


@pytest.mark.registry
@pytest.mark.parametrize("version", ALL if run_all() else DEFAULT)
def test_the_release_range_matches_the_wheels(mapping: dict[str, Any], version: str) -> None:
    opt = next(o for o in mapping["options"] if o["flag"] == "--enable-torch-symm-mem")
    ranges = [
        c["release"] for r in opt["requires"] if isinstance(r, dict) for c in r["when"] if "release" in c
    ]  # fmt: skip
    assert len(ranges) == 1
    assert (version_in(version, ranges[0]) is True) is _handler_turns_it_off(version)
