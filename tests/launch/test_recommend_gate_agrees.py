"""Every launch `stackcheck recommend` proposes passes the gate's own judging on the stack it proposes (issue 16, zero
false passes). recommend used to judge its line with a subset of what the gate reads: the feature verdicts of
recommend.json's options and, for an option that sets an attention backend, only the refusal rules that are a
model's own assertions (model_backend_refused and the like). The other refusals (a Qwen2.5-1M config's dual chunk
check, ...), SGLang's own attention pick where no option held, and the kernel paths SGLang takes for a model whatever
the flags (a DeepSeek-V4 model's FlashMLA sparse prefill, a DSA model's kernels, the all-reduce fusion) were never
judged, so recommend proposed lines the gate refuses. It now judges each option and the final line with the gate's
refusal rules, auto picks and model kernel paths (launch.recommend.gate_problems), and where no line passes, proposes
none and names what the gate refuses.

Each proposed line is run through `stackcheck gate --facts AFTER --dry-run` (AFTER: the facts recommend's plan
leaves, --plan-facts), in process. A reason recommend could have avoided is any the gate gives that is no stack check
(checks.json: the plan's business, and the synthetic boxes below pair a release with another release's kernel
package): a refusal, a flag the release lacks, a feature the line or SGLang's own pick needs. The model configs are
written for the tests in the shape of the published ones."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V32, GPT_OSS, LLAMA3, cli_json

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"  # 8x H200, SGLang 0.5.23: its GPUs and release varied
CASES = ROOT / "tests" / "recommend"
_spec = importlib.util.spec_from_file_location("recommend_cases", CASES / "update_expected.py")
assert _spec is not None and _spec.loader is not None
_cases = importlib.util.module_from_spec(_spec)  # tests/recommend's own reader of its cases
_spec.loader.exec_module(_cases)
case_dirs, cli_args = _cases.case_dirs, _cases.cli_args

QWEN_1M: dict[str, Any] = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28,
    "num_key_value_heads": 4,
    "dual_chunk_attention_config": {
        "chunk_size": 131072, "local_size": 4096, "original_max_position_embeddings": 16384,
    },
}  # fmt: skip
MINICPM_SALA: dict[str, Any] = {
    "architectures": ["MiniCPMSALAForCausalLM"], "model_type": "minicpm_sala", "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
    "sparse_config": {"kernel_size": 32, "kernel_stride": 16, "block_size": 64, "window_size": 2048, "topk": 64},
}  # fmt: skip
DSV4: dict[str, Any] = {
    "architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4", "hidden_size": 7168,
    "num_attention_heads": 128, "num_key_value_heads": 1, "head_dim": 512, "index_topk": 1024,
}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "mla": DEEPSEEK_R1, "dsa": DEEPSEEK_V32, "qwen2.5-1m": QWEN_1M, "minicpm-sala": MINICPM_SALA, "gpt-oss": GPT_OSS,
    "deepseek-v4": DSV4, "llama": LLAMA3,
}  # fmt: skip
MAJORS = ("8.0", "9.0", "10.0", "12.0")


def _run(args: list[str]) -> tuple[int, dict[str, Any]]:
    return cli_json(args)


def _releases() -> list[str]:
    from stackcheck.knowledge.loader import load

    return [str(r["version"]) for r in load([], env={}).releases("sglang")]


def _avoidable(after: Path, rec: dict[str, Any]) -> list[tuple[str, str]]:
    """What the gate refuses in recommend's line on the facts its plan leaves, beyond the stack checks."""
    env = [f"{k}={v}" for k, v in (rec.get("env") or {}).items()]
    command = ["env", *env, *rec["command"]] if env else list(rec["command"])
    _, doc = _run(["gate", "--facts", str(after), "--dry-run", "--format", "json", "--", *command])
    return [(str(r["feature"]), str(r["status"])) for r in doc["reasons"] if not r.get("check")]


def _judged(tmp_path: Path, facts: Path, extra: list[str]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    after = tmp_path / "after.json"
    _, rec = _run(["recommend", "--facts", str(facts), "--format", "json", "--plan-facts", str(after), *extra])
    if not rec["command"]:  # no line proposed: recommend says which refusal stands in its way
        assert rec["refused"] and all(r["subject"] in " ".join(rec["notes"]) for r in rec["refused"]), rec["notes"]
        return rec, []
    return rec, _avoidable(after, rec)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_line_recommend_proposes_passes_the_gate(tmp_path: Path, name: str) -> None:
    """Each SGLang release the manifests know, on a box of each GPU major, the model read: the line proposed for that
    release (--hold sglang keeps it as the plan's target) is one the gate passes, or none is proposed."""
    model = tmp_path / name
    model.mkdir()
    (model / "config.json").write_text(json.dumps(MODELS[name]))
    base = json.loads(H200.read_text())
    wrong: list[str] = []
    for release in _releases():
        for cc in MAJORS:
            doc = json.loads(json.dumps(base))
            for gpu in doc["facts"]["gpus"]:
                gpu["compute_capability"] = cc
            doc["facts"]["packages"]["sglang"].update(version=release, dist_version=release)
            facts = tmp_path / "facts.json"
            facts.write_text(json.dumps(doc))
            rec, avoidable = _judged(tmp_path, facts, ["--model-path", str(model), "--hold", "sglang"])
            if avoidable:
                wrong.append(f"{release} cc {cc}: {' '.join(rec['command'][3:])}: {avoidable}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("case", [p.name for p in case_dirs()])
def test_the_recommend_cases_propose_lines_the_gate_passes(tmp_path: Path, case: str) -> None:
    """The recommend cases name no model (MODEL): recommend assumes a standard MHA model and says so, and the gate,
    reading no config.json, leaves what depends on the model unknown; nothing it finds is blocked."""
    after = tmp_path / "after.json"
    _, rec = _run([*cli_args(CASES / case, after)])
    assert rec["command"], rec["notes"]  # every case box gets a line
    assert [r for r in _avoidable(after, rec) if r[1] == "blocked"] == [], rec["command"]


def _qwen_1m_box(tmp_path: Path, cc: str, release: str) -> tuple[Path, Path]:
    model = tmp_path / "q"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text(json.dumps(QWEN_1M))
    doc = json.loads(H200.read_text())
    for gpu in doc["facts"]["gpus"]:
        gpu["compute_capability"] = cc
    doc["facts"]["packages"]["sglang"].update(version=release, dist_version=release)
    facts = tmp_path / f"facts-{cc}.json"
    facts.write_text(json.dumps(doc))
    return facts, model


def test_qwen_1m_gets_dual_chunk_flash_attn_where_it_runs(tmp_path: Path) -> None:
    """ileft's find: SGLang 0.5.5-0.5.19 pick their default attention backend before the dual chunk check, which then
    raises; every backend but dual_chunk_flash_attn raises too. recommend proposed `--attention-backend fa3` on an
    H200 with 0.5.14 (refusal dual-chunk-model-other-backend); it now proposes dual_chunk_flash_attn, which the gate
    passes, and says why fa3 is out."""
    facts, model = _qwen_1m_box(tmp_path, "9.0", "0.5.14")
    rec, avoidable = _judged(tmp_path, facts, ["--model-path", str(model), "--hold", "sglang"])
    assert rec["command"][-2:] == ["--attention-backend", "dual_chunk_flash_attn"] and avoidable == []
    assert rec["launch"]["dual_chunk"] is True and "refused" not in rec
    fa3 = next(a for a in rec["alternatives"] if a["option"] == "fa3-hopper")
    assert fa3["status"] == "rejected" and "refusal dual-chunk-model-other-backend" in fa3["why"]
    fa3_line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--attention-backend", "fa3"]
    _, gate = _run(["gate", "--facts", str(tmp_path / "after.json"), "--dry-run", "--format", "json", "--", *fa3_line])
    assert [r["feature"] for r in gate["reasons"]] == ["refusal dual-chunk-model-other-backend"]


def test_qwen_1m_where_no_backend_runs_gets_no_line_and_the_refusal_named(tmp_path: Path) -> None:
    """On SM120 (0.5.14) dual_chunk_flash_attn's FA3 kernels do not run (attention-dual-chunk: majors 8 and 9), every
    other backend raises, and with none given the default pick raises: no line, the refusal named, exit 1."""
    facts, model = _qwen_1m_box(tmp_path, "12.0", "0.5.14")
    rc, rec = _run(["recommend", "--facts", str(facts), "--format", "json", "--model-path", str(model), "--hold",
                    "sglang"])  # fmt: skip
    assert rc == 1 and rec["command"] == [] and rec["env"] == {}
    assert [r["subject"] for r in rec["refused"]] == ["refusal dual-chunk-model-default-backend"]
    assert any(n.startswith("no launch proposed: ") and "dual-chunk-model-default-backend" in n for n in rec["notes"])
    dual = next(a for a in rec["alternatives"] if a["option"] == "dual-chunk-qwen-1m")
    assert dual["status"] == "rejected" and "attention-dual-chunk is blocked" in dual["why"]
    flashinfer = next(a for a in rec["alternatives"] if a["option"] == "flashinfer-sm12x")
    assert flashinfer["status"] == "rejected" and "dual-chunk-model-other-backend" in flashinfer["why"]
    text = _text(["recommend", "--facts", str(facts), "--model-path", str(model), "--hold", "sglang"])
    assert "refused by the gate: refusal dual-chunk-model-default-backend (blocked)" in text


def _text(args: list[str]) -> str:
    from stackcheck.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(args)
    return out.getvalue()
