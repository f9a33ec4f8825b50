"""Deterministic inference turns custom all-reduce off: with tp > 1 on CUDA, SGLang's deterministic handler sets
disable_custom_all_reduce (read in the 0.5.3, 0.5.5, 0.5.10, 0.5.12 and 0.5.15 wheels' server_args.py and the
0.5.20 and 0.5.23 wheels' arg_groups/attention_hook.py), and --rl-on-policy-target turns deterministic inference on
first (0.5.5 on). The gate required the custom-allreduce feature for such a launch all the same, and refused it
where custom all-reduce cannot run (a false block); now the default is off, as with --disable-custom-all-reduce."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_cli import gate_json

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

ROOT = Path(__file__).resolve().parent.parent.parent
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


@pytest.mark.parametrize(
    ("extra", "needed"),
    [
        ([], True),
        (["--enable-deterministic-inference"], False),
        (["--rl-on-policy-target", "fsdp"], False),
        (["--rl-on-policy-target=fsdp"], False),
        (["--disable-custom-all-reduce"], False),
    ],
)
def test_custom_allreduce_is_not_required_when_sglang_turns_it_off(
    mapping: dict[str, Any], extra: list[str], needed: bool
) -> None:
    d = gate.derive([*LAUNCH, "--tp", "2", *extra], mapping, {})
    assert ("custom-allreduce" in {r.feature for r in d.required}) is needed
    if not needed:
        assert any(o.startswith("custom-allreduce: off") for o in d.off)
        assert not d.unlisted  # the flags are parsed, not left as unknown ones


def test_one_gpu_never_needed_it(mapping: dict[str, Any]) -> None:
    d = gate.derive([*LAUNCH, "--enable-deterministic-inference"], mapping, {})
    assert "custom-allreduce" not in {r.feature for r in d.required}


def test_gate_end_to_end_leaves_custom_allreduce_out() -> None:
    facts = ROOT / "tests" / "cases" / "writeup-after" / "facts.json"
    plain = gate_json(facts, "--tp", "2", dry_run=True)
    det = gate_json(facts, "--tp", "2", "--enable-deterministic-inference", "--attention-backend", "fa3", dry_run=True)
    assert "custom-allreduce" in {f.get("feature") for f in plain["features"]}
    assert "custom-allreduce" not in {f.get("feature") for f in det["features"]}
    assert any("custom-allreduce: off" in o for o in det["derived"].get("off") or [])
