"""--moe-a2a-backend deepep_v2 in direct mode (the default) across nodes on SGLang 0.5.19-0.5.21 (launch.json
deepep-v2-direct-multinode-unread): those releases document direct as single-node NVLink (server_args.py 0.5.19
deepep_v2_mode's help), check nothing, and build DeepEP v2's ElasticBuffer with allow_hybrid_mode False; 0.5.22
refuses the launch (igap14's deepep-v2-direct-multinode). What DeepEP's runtime does then was not read: the gate
says unknown, never allow. The configs are the test helpers' DeepSeek R1 shape. On the parent the unknown tests
fail (the launches were allowed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_R1, gate_checkpoint, reason_status

UNREAD = "refusal deepep-v2-direct-multinode-unread"
READ = "refusal deepep-v2-direct-multinode"
V2 = ("--moe-a2a-backend", "deepep_v2")


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.19", [*V2, "--nnodes", "2", "--node-rank", "0"]),
        ("0.5.21", [*V2, "--deepep-v2-mode", "direct", "--nnodes", "4", "--node-rank", "1"]),
    ],
)
def test_direct_across_nodes_unknown(tmp_path: Path, release: str, flags: list[str]) -> None:
    # fails on the parent: allowed
    doc = gate_checkpoint(tmp_path, release, "9.0", DEEPSEEK_R1, *flags)
    assert doc["decision"] != "allow" and reason_status(doc).get(UNREAD) == ("unknown", None), doc["reasons"]
    reason = next(r for r in doc["reasons"] if r.get("feature") == UNREAD)["reasons"][0]
    assert "single-node NVLink" in reason["message"] and reason["required"].startswith("--deepep-v2-mode hybrid")


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.20", [*V2, "--deepep-v2-mode", "hybrid", "--nnodes", "2", "--node-rank", "0"]),
        ("0.5.20", [*V2]),  # one node: direct is what SGLang documents
        ("0.5.18", ["--nnodes", "2", "--node-rank", "0"]),
    ],
)
def test_other_launches_not_judged_so(tmp_path: Path, release: str, flags: list[str]) -> None:
    assert UNREAD not in reason_status(gate_checkpoint(tmp_path, release, "9.0", DEEPSEEK_R1, *flags))


def test_0_5_22_refuses_it_outright(tmp_path: Path) -> None:
    # passes on the parent too: igap14's rule, and this one not judged there
    status = reason_status(gate_checkpoint(tmp_path, "0.5.22", "9.0", DEEPSEEK_R1, *V2, "--nnodes", "2",
                                           "--node-rank", "0"))  # fmt: skip
    assert status.get(READ) == ("blocked", "crash") and UNREAD not in status, status
