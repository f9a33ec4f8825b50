"""irobust11: a launch written whole inside one word of a program no reader places (`tmux new-session -d "python -m
sglang.launch_server ... --no-such-flag"`, `parallel ::: "..."`, `xterm -e "..."`) was read as an SGLang wrapper with
none of the string's flags and judged with SGLang's defaults: on a box where those pass (SGLang 0.5.14 facts, a model
read as Llama) it was allowed, while the same launch given directly is refused. It is unknown now, naming the
program; a wrapper script's own flags (`./serve.sh --tp 4`) are read as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import run_stackcheck, scrubbed_environ

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
         "num_key_value_heads": 8, "num_hidden_layers": 32, "intermediate_size": 14336, "vocab_size": 128256,
         "torch_dtype": "bfloat16", "max_position_embeddings": 8192}  # fmt: skip
PREFIXES = [["tmux", "new-session", "-d"], ["parallel", ":::"], ["xterm", "-e"]]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize("prefix", PREFIXES, ids=[p[0] for p in PREFIXES])
def test_a_launch_in_one_word_is_unknown(prefix: list[str], mapping: Any) -> None:
    d = gate.derive([*prefix, "python -m sglang.launch_server --model-path m --no-such-flag"], mapping, {})
    got = [p for p in d.problems if p.subject == prefix[0]]
    assert [p.status for p in got] == ["unknown"], d.problems


def test_a_wrapper_scripts_own_flags_are_still_read(mapping: Any) -> None:
    d = gate.derive(["./serve.sh", "--tp", "4", "--enable-torch-symm-mem"], mapping, {})
    assert d.entrypoint == "wrapper" and not [p for p in d.problems if p.status != "note"], d.problems


def test_the_gate_refuses_what_it_allowed(tmp_path: Path) -> None:
    doc = json.loads((CASES / "h200-newest" / "facts.json").read_text())
    facts = doc.get("facts", doc)
    facts["packages"]["sglang"]["version"] = "0.5.14"
    (tmp_path / "facts.json").write_text(json.dumps(doc))
    (tmp_path / "llama").mkdir()
    (tmp_path / "llama" / "config.json").write_text(json.dumps(LLAMA))
    line = f"python -m sglang.launch_server --model-path {tmp_path / 'llama'} --attention-backend triton --no-such-flag"
    r = run_stackcheck("gate", "--facts", str(tmp_path / "facts.json"), "--cwd", str(tmp_path), "--dry-run",
                       "--format", "json", "--", "tmux", "new-session", "-d", line)  # fmt: skip
    assert r.returncode == 1, (r.returncode, r.stderr)
    got = json.loads(r.stdout)
    assert got["decision"] == "refuse"
    assert any(p["subject"] == "tmux" and p["status"] == "unknown" for p in got["derived"]["problems"])
