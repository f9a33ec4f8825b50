"""The gate's GPU-count preflight on a launch with more ranks than any node has GPUs: it answers from the count
(ranks_on_node) instead of listing every rank's ordinal, which for `--tp 100000000` took minutes and gigabytes
(found in review 2, left open there)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from pathlib import Path

from stackcheck.launch.preflight.gpus import Layout, gpu_ordinals, ranks_on_node

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_count_is_the_length_of_the_ordinals() -> None:
    for tp, pp, dp, dp_attention, nnodes, node_rank in itertools.product(
        (1, 2, 3, 4, 8), (1, 2, 4), (1, 2, 3), (False, True), (1, 2, 4), (0, 1, 3)
    ):
        if node_rank >= nnodes:
            continue
        layout = Layout(tp=tp, pp=pp, dp=dp, dp_attention=dp_attention, nnodes=nnodes, node_rank=node_rank)
        assert ranks_on_node(layout) == len(gpu_ordinals(layout)), layout


def test_a_launch_of_a_hundred_million_ranks_is_refused_at_once() -> None:
    facts = ROOT / "tests" / "cases" / "b200" / "facts.json"
    start = time.monotonic()
    r = subprocess.run(
        [sys.executable, "-m", "stackcheck", "gate", "--facts", str(facts), "--dry-run", "--format", "json", "--",
         "python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "100000000"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert time.monotonic() - start < 30
    assert r.returncode == 1, r.stderr
    count = next(c for c in json.loads(r.stdout)["preflight"]["checks"] if c["check"] == "gpu-count")
    assert count["status"] == "fail" and "100000000 ranks on this node" in count["message"]
