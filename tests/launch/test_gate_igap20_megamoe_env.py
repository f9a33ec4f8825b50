"""igap20 (2): nvfp4-online-megamoe-a2a reads SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16 from the launch's environment.

SGLang 0.5.23 (arg_groups/overrides.py _moe_runner_backend_quant_constraints) takes --moe-runner-backend
flashinfer_megamoe for --quantization nvfp4_online only where --moe-a2a-backend is flashinfer_megamoe and the
variable is on (EnvBool: true/1/yes/y; unset or any other value: off), else raises ValueError before the model loads.
On the parent (24c3e54) the rule was unknown with both flags whatever the variable said: refused unless
--allow-unknown although the launch with it on runs, and never blocked with it off."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gate_cli import QWEN3_MOE, cli_json, model_dir, release_box

RULE = "nvfp4-online-megamoe-a2a"
VAR = "SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16"
FLAGS = ("--quantization", "nvfp4_online", "--moe-runner-backend", "flashinfer_megamoe")
BOTH = (*FLAGS, "--moe-a2a-backend", "flashinfer_megamoe")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _status(tmp_path: Path, flags: tuple[str, ...], prefix: tuple[str, ...] = (), release: str = "0.5.23") -> str:
    facts = release_box(tmp_path, release, "10.0")
    line = [*prefix, "python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", QWEN3_MOE))]
    args = ["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line, "--tp", "8", *flags]
    doc = cli_json(args)[1]
    got = [r for r in doc.get("reasons") or [] if r.get("feature") == f"refusal {RULE}"]
    return str(got[0]["status"]) if got else "ok"


@pytest.mark.parametrize("value", ["1", "true", "YES", "y"])
def test_both_flags_with_the_variable_on_pass(tmp_path: Path, value: str) -> None:
    assert _status(tmp_path, BOTH, ("env", f"{VAR}={value}")) == "ok"


def test_the_variable_in_the_gates_own_environment_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VAR, "1")
    assert _status(tmp_path, BOTH) == "ok"


@pytest.mark.parametrize("value", ["1", "0"])
def test_a_shell_strings_assignment_is_read(tmp_path: Path, value: str) -> None:
    """`sh -c 'VAR=V python3 -m sglang.launch_server ...'`: the assignment before the command is its environment."""
    model = model_dir(tmp_path, "m", QWEN3_MOE)
    script = f"{VAR}={value} python3 -m sglang.launch_server --model-path {model} --tp 8 {' '.join(BOTH)}"
    facts = str(release_box(tmp_path, "0.5.23", "10.0"))
    doc = cli_json(["gate", "--facts", facts, "--dry-run", "--format", "json", "--", "sh", "-c", script])[1]
    got = [r["status"] for r in doc.get("reasons") or [] if r.get("feature") == f"refusal {RULE}"]
    assert got == ([] if value == "1" else ["blocked"]), got


@pytest.mark.parametrize("prefix", [(), ("env", f"{VAR}=0"), ("env", f"{VAR}=maybe")])
def test_both_flags_with_the_variable_off_are_blocked(tmp_path: Path, prefix: tuple[str, ...]) -> None:
    """Unset, false, or a value EnvBool does not take (EnvField.get warns and returns the default False): raises."""
    assert _status(tmp_path, BOTH, prefix) == "blocked"


def test_the_variable_alone_does_not_take_the_runner(tmp_path: Path) -> None:
    """No --moe-a2a-backend flashinfer_megamoe: the variable on does not help."""
    assert _status(tmp_path, FLAGS, ("env", f"{VAR}=1")) == "blocked"


def test_releases_without_the_rule(tmp_path: Path) -> None:
    assert _status(tmp_path, BOTH, ("env", f"{VAR}=1"), release="0.5.22") == "ok"
