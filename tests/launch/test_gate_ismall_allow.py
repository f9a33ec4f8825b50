"""ismall, finding three: `--allow` reads feature and check ids as `--require` does (`_` for `-`, any case).

Before, `--require attention_fa3` was read as attention-fa3 while `--allow gpu_count` was a usage error (exit 2,
'unknown feature or check gpu_count')."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_process import clean_env, run_stackcheck

ROOT = Path(__file__).resolve().parents[2]
H200_8X = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
SM120 = ROOT / "tests" / "cases" / "writeup-after" / "facts.json"
LAUNCH = ["python", "-m", "sglang.launch_server"]
LLAMA3 = str(ROOT / "tests" / "data" / "models" / "llama3-8b")


def gate(*args: str) -> subprocess.CompletedProcess[str]:
    env = clean_env("HF_", "CUDA_", PYTHONPATH=str(ROOT))
    return run_stackcheck("gate", *args, env=env, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def h200_one(tmp_path_factory: pytest.TempPathFactory) -> Path:
    doc = json.loads(H200_8X.read_text())
    facts = doc.get("facts", doc)
    facts["gpus"] = facts["gpus"][:1]
    facts["topology"] = {"interconnect": "single-gpu", "same_model": True, "gpu_count": 1, "p2p": None, "pairs": []}
    out = tmp_path_factory.mktemp("facts") / "h200-1x-full.json"
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize("spelling", ["gpu_count", "GPU-Count", "eagle3,gpu_count"])
def test_allow_a_check_id_with_underscores(h200_one: Path, spelling: str) -> None:
    # --tp 2 on one GPU: the preflight check gpu-count fails; allowed on purpose however the id is spelled
    cmd = ["--", *LAUNCH, "--tp", "2", "--model-path", LLAMA3]
    refused = gate("--facts", str(h200_one), "--dry-run", *cmd)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    p = gate("--facts", str(h200_one), "--dry-run", "--allow", spelling, *cmd)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "allowed on purpose (--allow gpu-count)" in p.stdout


def test_allow_and_require_read_a_feature_id_alike() -> None:
    # eagle3 is only slower on the write-up box: --strict-features refuses it, --allow accepts it on purpose
    base = ["--facts", str(SM120), "--dry-run", "--allow-unknown", "--strict-features"]
    cmd = ["--", *LAUNCH, "--tp", "4", "--speculative-algorithm", "EAGLE3"]
    p = gate(*base, "--allow", "EAGLE3", *cmd)
    assert p.returncode == 0 and "allowed on purpose (--allow): eagle3" in p.stdout, p.stdout + p.stderr


def test_an_unknown_allow_value_is_named_as_written() -> None:
    cmd = ["--", *LAUNCH, "--tp", "4"]
    p = gate("--facts", str(SM120), "--dry-run", "--allow", "gpu_count,warp_drive", *cmd)
    assert p.returncode == 2
    assert "unknown feature or check warp_drive (" in p.stderr and len(p.stderr.strip().splitlines()) == 1
