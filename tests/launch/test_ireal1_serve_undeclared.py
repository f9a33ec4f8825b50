"""`sglang serve` hands every argument but its own `--model-type` to the LLM server's parser (prepare_server_args,
the parser of `python -m sglang.launch_server`) unless the model is a diffusion model: a flag the installed release
does not declare ends an LLM launch at once ('unrecognized arguments', exit status 2). The gate passed every such
flag of a `sglang serve` line unjudged (ireal1: a false pass; the same flag on `python -m sglang.launch_server` was
refused). Read in the sglang 0.5.9, 0.5.10, 0.5.11, 0.5.20 and 0.5.23 wheels' sglang/cli/serve.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

ROOT = Path(__file__).resolve().parents[2]
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"  # SGLang 0.5.23
GB10 = ROOT / "tests" / "cases" / "gb10-cu130-pypi-kernel" / "facts.json"  # SGLang 0.5.9
BASE = ["--model-path", "/models/llm", "--attention-backend", "fa3"]


def gate(facts: Path, *argv: str) -> dict[str, Any]:
    return stackcheck_json("gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *argv)


def refused(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {str(r["feature"]): r for r in doc["reasons"]}


@pytest.mark.parametrize(
    "extra",
    [
        ["--enable-deepep-moe"],  # declared 0.5.1 ... 0.5.4 only
        ["--cuda-graph-max-bs", "64"],  # 0.5.20+: a prefix of --cuda-graph-max-bs-decode and -prefill
        ["--num-gpus", "8"],  # a diffusion server's flag, no LLM server's
    ],
)
def test_serve_flag_the_llm_parser_rejects_is_not_passed(extra: list[str]) -> None:
    doc = gate(H200, "sglang", "serve", *BASE, *extra)
    assert doc["decision"] == "refuse"
    reason = refused(doc)[extra[0]]
    assert reason["status"] == "unknown"  # a diffusion model's parser would take it or pass over it
    assert "diffusion" in reason["reasons"][0]["message"]


def test_serve_model_type_llm_is_judged_as_launch_server() -> None:
    doc = gate(H200, "sglang", "serve", "--model-type", "llm", *BASE, "--cuda-graph-max-bs", "64")
    reason = refused(doc)["--cuda-graph-max-bs"]
    assert reason["status"] == "blocked" and "ambiguous option" in reason["reasons"][0]["message"]
    doc = gate(H200, "sglang", "serve", "--model-type=llm", *BASE, "--enable-deepep-moe")
    assert refused(doc)["--enable-deepep-moe"]["status"] == "unknown"  # (0.5.23 loads plugins first)


def test_serve_own_flags_are_not_undeclared(tmp_path: Path) -> None:
    # a model read from its config.json: /models/llm unread may be a Gemma 4 model, whose assertion refuses fa3
    model = tmp_path / "llm"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}))
    base = ["--model-path", str(model), *BASE[2:]]
    doc = gate(H200, "sglang", "serve", "--model-type", "llm", *base, "--tp", "8")
    assert "--model-type" not in refused(doc)
    assert doc["decision"] == "allow", doc["reasons"]
    # a diffusion launch: its parser passes over what it does not know (parse_known_args)
    doc = gate(H200, "sglang", "serve", "--model-type", "diffusion", *BASE, "--num-gpus", "8")
    assert "--num-gpus" not in refused(doc)


def test_serve_model_type_before_it_existed_goes_to_the_parser() -> None:
    # 0.5.9's serve has no --model-type: the LLM parser reads it (and declares no such flag)
    doc = gate(GB10, "sglang", "serve", "--model-type", "llm", *BASE)
    assert "--model-type" in refused(doc)


def test_serve_model_type_it_does_not_know_stops_it() -> None:
    doc = gate(H200, "sglang", "serve", "--model-type", "videogen", *BASE)
    assert refused(doc)["--model-type"]["status"] == "unknown"  # (0.5.23: a plugin's backend name, or an error)


@pytest.mark.parametrize(
    ("facts", "argv", "blocked"),
    [
        (GB10, ["--model", "/models/llm", "--attention-backend", "fa3"], True),  # 0.5.9 reads --model-path only
        (GB10, ["--model-pa", "/models/llm", "--attention-backend", "fa3"], True),  # never an abbreviation
        (GB10, ["/models/llm", "--attention-backend", "fa3"], True),  # no positional path before 0.5.16
        (GB10, ["--model-path=/models/llm", "--attention-backend", "fa3"], False),
        (H200, ["--model", "/models/llm", "--attention-backend", "fa3"], False),  # 0.5.11+
        (H200, ["/models/llm", "--attention-backend", "fa3"], False),  # 0.5.16+
        (H200, ["--attention-backend", "fa3", "--model-pa", "/models/llm"], True),
    ],
)
def test_serve_finds_its_model_path_itself(facts: Path, argv: list[str], blocked: bool) -> None:
    reason = refused(gate(facts, "sglang", "serve", *argv)).get("--model-path")
    assert (reason is not None and reason["status"] == "blocked") is blocked, reason
