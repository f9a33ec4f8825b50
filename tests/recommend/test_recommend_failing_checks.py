"""`stackcheck recommend` never ends with "then launch" while a stack check the proposed line needs (as the gate
adds it: checks.json `required_by`) still fails on the stack the plan leaves: no line is proposed, `refused` names
the check (observed, required, its fix), the plan's `still_failing_checks` is shown, and it exits 1 (as for a line
the gate refuses). iadv: on b200-deepgemm-nvcc128 nvidia-nccl-cu12 and -cu13 are both installed ('undefined
symbol: ncclCommResume'), which no upgrade step removes; `stackcheck gate` refused the very line recommend gave."""

from __future__ import annotations

import json
from pathlib import Path

from recommend_cli import clean_recommend_env, recommend_json, run  # noqa: F401 (the autouse fixture)

ROOT = Path(__file__).resolve().parent.parent.parent
NCCL_BOTH = ROOT / "tests" / "cases" / "b200-deepgemm-nvcc128" / "facts.json"
P2P_HANG = ROOT / "tests" / "recommend" / "seed-after-p2p-hang" / "facts.json"


def _without_cu12(tmp_path: Path) -> Path:
    doc = json.loads(NCCL_BOTH.read_text(encoding="utf-8"))
    doc["facts"]["packages"]["nvidia-nccl-cu12"] = {"installed": False}
    out = tmp_path / "facts.json"
    out.write_text(json.dumps(doc), encoding="utf-8")
    return out


def test_no_launch_while_the_duplicate_nccl_wheels_stay_after_the_plan() -> None:
    rc, doc = recommend_json("--facts", str(NCCL_BOTH))
    assert rc == 1
    assert doc["command"] == []
    refused = {r["subject"]: r for r in doc["refused"]}
    assert "check nccl" in refused
    message = refused["check nccl"]["message"]
    assert "ncclCommResume" in message
    assert "observed True, required not True" in message
    assert "pip uninstall nvidia-nccl-cu12" in message
    assert [c["check"] for c in doc["plan"]["still_failing_checks"]] == ["nccl"]


def test_the_text_says_then_no_launch_and_shows_the_failing_check() -> None:
    rc, text = run("recommend", "--facts", str(NCCL_BOTH))
    assert rc == 1
    assert "then launch" not in text
    assert "then no launch" in text
    assert "refused by the gate: check nccl (blocked)" in text
    assert "still failing after the plan" in text
    rc, shell = run("recommend", "--facts", str(NCCL_BOTH), "--format", "shell")
    assert not any(line.startswith("python3 -m sglang.launch_server") for line in shell.splitlines())
    assert "# no launch: the gate would refuse it: check nccl" in shell


def test_without_the_stray_wheel_the_launch_is_proposed_and_the_gate_passes_it(tmp_path: Path) -> None:
    facts = _without_cu12(tmp_path)
    after = tmp_path / "after.json"
    rc, doc = recommend_json("--facts", str(facts), "--plan-facts", str(after))
    assert rc == 0
    assert doc["command"][:3] == ["python3", "-m", "sglang.launch_server"]
    assert "refused" not in doc
    assert "still_failing_checks" not in doc["plan"]
    line = [a if a != "MODEL" else "/nonexistent/model" for a in doc["command"]]
    rc, _ = run("gate", "--facts", str(after), "--dry-run", "--allow-unknown", "--", *line)
    assert rc == 0


def test_a_given_launch_is_refused_too() -> None:
    cmd = ["python3", "-m", "sglang.launch_server", "--model-path", "/nonexistent/m", "--tp-size", "8"]
    rc, doc = recommend_json("--facts", str(NCCL_BOTH), "--", *cmd)
    assert rc == 1
    assert doc["command"] == []
    assert "check nccl" in {r["subject"] for r in doc["refused"]}


def test_no_plan_judges_the_box_as_installed() -> None:
    rc, doc = recommend_json("--facts", str(NCCL_BOTH), "--no-plan")
    assert rc == 1
    assert doc["plan"] is None
    assert "check nccl" in {r["subject"] for r in doc["refused"]}


def test_a_failing_check_the_line_is_scoped_out_of_does_not_refuse_it() -> None:
    """pcie-p2p-path fails after the plan (the IOMMU translates), but it is needed only of a launch with custom
    all-reduce on or NCCL_P2P_DISABLE false: the line recommend makes turns both off, as the gate reads it, so it is
    proposed (the failing check is still shown with the plan)."""
    rc, doc = recommend_json("--facts", str(P2P_HANG), "--assume-p2p-hang")
    assert rc == 0
    assert "--disable-custom-all-reduce" in doc["command"]
    assert doc["env"].get("NCCL_P2P_DISABLE") == "1"
    assert "refused" not in doc
    assert "pcie-p2p-path" in [c["check"] for c in doc["plan"]["still_failing_checks"]]


IOMMU = ROOT / "tests" / "cases" / "rtxpro6000-pcie-iommu-translated" / "facts.json"


def test_a_translating_iommu_refuses_the_custom_all_reduce_line_and_takes_the_p2p_off_one() -> None:
    """pcie-p2p-path fails (the IOMMU translates the GPUs' DMA: P2P hangs). Before, recommend proposed a tp 2 line
    with custom all-reduce and P2P on, which the gate refuses; now none is proposed, and with --assume-p2p-hang the
    line that turns both off is."""
    rc, doc = recommend_json("--facts", str(IOMMU))
    assert rc == 1
    assert doc["command"] == []
    assert [r["subject"] for r in doc["refused"]] == ["check pcie-p2p-path"]
    rc, doc = recommend_json("--facts", str(IOMMU), "--assume-p2p-hang")
    assert rc == 0
    assert "--disable-custom-all-reduce" in doc["command"]
    assert doc["env"]["NCCL_P2P_DISABLE"] == "1"
