"""irev57 (an adversarial review of igap23's --torchao-config reading): SGLang reads int4wo's group size as
int(value.split('-')[-1]) and asserts it is 32, 64, 128 or 256 (sglang 0.5.9 sglang/srt/layers/torchao_utils.py:63-70).
config_kind tested the last word with str.isdigit() first and then called int() on it: '²' is a digit to isdigit but
no literal to int(), so `--torchao-config int4wo-²` ended the gate in an internal error (exit 4, no decision); and
'+128', ' 128' or '1_28', which int() reads as 128 (SGLang serves them), were refused as an invalid literal. The
group size is now read as int() reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import run_stackcheck
from gate_cli import LAUNCH, LLAMA3, model_dir
from launch.test_gate_torchao_config import CHECK, _blocking, _facts

from stackcheck.verdicts.torchao_config import config_kind


def _python_reads(word: str) -> int | None:
    """What SGLang's int() makes of the group size word (None: it raises ValueError)."""
    try:
        return int(word)
    except ValueError:
        return None


@pytest.mark.parametrize("word", ["²", "①", "+128", " 128", "128 ", "1_28", "0128", "١٢٨", "-", "", "12a", "64"])
def test_the_group_size_is_read_as_int_reads_it(word: str) -> None:
    kind, error = config_kind(f"int4wo-{word}", "0.5.9")
    assert kind == "int4wo"
    size = _python_reads(word)
    if size is None:
        assert error is not None and error.startswith("ValueError: invalid literal for int()"), error
    elif size in (32, 64, 128, 256):
        assert error is None, error
    else:
        assert error is not None and error.startswith("AssertionError"), error


def test_the_gate_decides_on_a_group_size_int_refuses(tmp_path: Path) -> None:
    # torchao 0.9.0 without its _C (int4wo before 0.14 runs on torch's kernels): a _C resolving in full under this
    # torch 2.14.1 would be igap25's torchao-abi-abort, another rule than the one judged here
    facts = _facts(tmp_path, "0.5.9", "0.9.0", c_found=False)
    model = model_dir(tmp_path, "llama", LLAMA3)
    args = ("--dry-run", "--format", "json", "--", *LAUNCH, "--model-path", str(model), "--torchao-config")
    bad = run_stackcheck("gate", "--facts", str(facts), *args, "int4wo-²")
    assert bad.returncode == 1 and '"decision": "refuse"' in bad.stdout, (bad.returncode, bad.stderr)
    assert "internal error" not in bad.stderr, bad.stderr
    reasons = [r for f in json.loads(bad.stdout)["reasons"] if f.get("feature") == CHECK for r in f["reasons"]]
    assert [(r["rule"], r["result"]) for r in reasons] == [("torchao-config", "fail")], reasons
    # '+128' is 128 to int(): judged as int4wo-128 (torchao 0.9.0's tinygemm: nothing against the launch)
    good = run_stackcheck("gate", "--facts", str(facts), *args, "int4wo-+128")
    assert good.returncode in (0, 1), good.stderr
    assert _blocking(json.loads(good.stdout)) == [], good.stdout[-2000:]
