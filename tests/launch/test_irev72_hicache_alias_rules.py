"""irev72 (a review of igap51's --enable-hicache alias): 0.5.23 declares --enable-hicache as an alias of
--enable-hierarchical-cache (arg_groups/fields/memory.py:98-101, one dest), and its DSA model override raises ValueError
'DSA DCP does not support HiSparse or HiCache.' for enable_hierarchical_cache with --dcp-size > 1
(arg_groups/model_overrides/deepseek_v2.py:18-22). The rule dsa-dcp-hisparse-hicache named only the long spelling, so
`--enable-hicache --dcp-size 2` on a DSA model was allowed."""

from __future__ import annotations

from pathlib import Path

from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_V32, gate_checkpoint, reason_status

HICACHE = "refusal dsa-dcp-hisparse-hicache"


def test_the_alias_is_refused_with_dcp_on_a_dsa_model(tmp_path: Path) -> None:
    doc = gate_checkpoint(tmp_path, "0.5.23", "10.0", DEEPSEEK_V32, "--dcp-size", "2", "--enable-hicache")
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(HICACHE) == ("blocked", "crash"), reason_status(doc)


def test_the_alias_without_dcp_is_not_this_rule(tmp_path: Path) -> None:
    doc = gate_checkpoint(tmp_path, "0.5.23", "10.0", DEEPSEEK_V32, "--dcp-size", "1", "--enable-hicache")
    assert HICACHE not in reason_status(doc)
