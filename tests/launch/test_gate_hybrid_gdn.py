"""Hybrid GDN models on Blackwell (launch.json refusal `hybrid-gdn-blackwell-backend`, issue 16): SGLang's
attention registry asserts, as it loads a model it gives a hybrid GDN config (Qwen3-Next, Qwen3.5, ...), that the
attention backend is one it admits on Blackwell GPUs; the set changes by release and, from 0.5.16, between SM120
and the other Blackwell majors. The gate reads the model's config.json (model_type, through its preflight) and the
box's GPU majors and refuses such a launch (blocked, effect crash); it says unknown where it cannot read the model
(for a backend that would fail for a GDN model) or the GPU, and passes non-GDN models, admitted backends and
non-Blackwell GPUs.

The config.json files are written here with the keys the model cards publish: Qwen3-Next-80B-A3B (model_type
qwen3_next, 16 query / 2 KV heads, head_dim 256), Qwen3.5 (model_type qwen3_5_moe with a text_config), a Llama-3.1
8B (llama)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, QWEN3_NEXT, gate_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.refusals import refusal_problems

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = ROOT / "tests" / "cases"
B200 = CASES / "b200" / "facts.json"  # SGLang 0.5.20, cc 10.0
SM120_059 = CASES / "writeup-before" / "facts.json"  # SGLang 0.5.9, cc 12.0
SM120_0511 = CASES / "jit-distro-nvcc-sm120" / "facts.json"  # SGLang 0.5.11, cc 12.0
H200 = CASES / "h200-newest" / "facts.json"  # SGLang 0.5.23, cc 9.0
LAUNCH = ["python", "-m", "sglang.launch_server"]
RULE = "hybrid-gdn-blackwell-backend"

QWEN3_5_MOE = {
    "architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
    "text_config": {"model_type": "qwen3_5_moe_text", "num_attention_heads": 16, "num_key_value_heads": 2},
}  # fmt: skip
FLASHINFER = ["--model", "Qwen/Qwen3-Next-80B-A3B-Instruct", "--tp", "4", "--attention-backend", "flashinfer"]


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def judge(
    mapping: dict[str, Any], version: str, args: list[str], majors: set[int] | None, config: dict[str, Any] | None
) -> Any:
    d = gate.derive([*LAUNCH, *args], mapping, {})
    arch = str(config["architectures"][0]) if config else None
    models = {"model": attention_keys(config) if config is not None else None}
    got = {p.subject.removeprefix("refusal "): p for p in refusal_problems(d, mapping, version, majors, arch, models)}
    return got.get(RULE)


def status(mapping: dict[str, Any], version: str, args: list[str], majors: set[int] | None, config: Any) -> str:
    p = judge(mapping, version, args, majors, config)
    return "ok" if p is None else str(p.status)


# ---- the rule, over flag lines and config.json files --------------------------------------------------------


def test_flashinfer_for_qwen3_next_on_a_b200_is_refused_where_the_release_refuses_it(mapping: dict[str, Any]) -> None:
    p = judge(mapping, "0.5.20", FLASHINFER, {10}, QWEN3_NEXT)
    assert p is not None and (p.status, p.effect) == ("blocked", "crash")
    assert "model_type qwen3_next (a hybrid GDN model)" in (p.observed or "")
    assert "GPU majors 10" in (p.observed or "") and "attention backend flashinfer" in (p.observed or "")
    assert p.required == "SM10x: fa4, triton, trtllm_mha"
    assert "AssertionError" in p.message and "--attention-backend" in p.message
    assert any("0.5.20 wheel" in s["title"] and "attention_registry.py" in s["title"] for s in p.source)
    # per release: 0.5.9 admits only triton/trtllm_mha, 0.5.10-0.5.15 admit flashinfer, 0.5.16-0.5.20 refuse it on
    # SM100, 0.5.21+ admit it again; 0.5.1-0.5.2 have no such check; a release not read is silent
    want = {"0.5.2": "ok", "0.5.3": "blocked", "0.5.9": "blocked", "0.5.10": "ok", "0.5.15": "ok",
            "0.5.16": "blocked", "0.5.17": "blocked", "0.5.19": "blocked", "0.5.21": "ok", "0.5.23": "ok",
            "0.5.24": "ok"}  # fmt: skip
    got = {v: status(mapping, v, FLASHINFER, {10}, QWEN3_NEXT) for v in want}
    assert got == want


def test_qwen3_5_is_a_hybrid_gdn_model_from_0_5_9(mapping: dict[str, Any]) -> None:
    args = [*FLASHINFER[:4], "--attention-backend", "flashinfer"]
    assert status(mapping, "0.5.18", args, {10}, QWEN3_5_MOE) == "blocked"
    assert status(mapping, "0.5.9", args, {10}, QWEN3_5_MOE) == "blocked"
    # 0.5.4-0.5.8 give only Qwen3-Next (and, from 0.5.6, Jet) a hybrid GDN config: Qwen3.5 is not checked there
    assert status(mapping, "0.5.8", args, {10}, QWEN3_5_MOE) == "ok"
    assert status(mapping, "0.5.8", args, {10}, QWEN3_NEXT) == "blocked"


def test_non_gdn_models_admitted_backends_and_other_gpus_pass(mapping: dict[str, Any]) -> None:
    """Never a false block: a Llama on flashinfer, Qwen3-Next on triton/trtllm_mha/fa4 on SM100, on flashinfer on
    SM120 from 0.5.16, and anything on Hopper or Ampere."""
    assert status(mapping, "0.5.20", FLASHINFER, {10}, LLAMA3) == "ok"
    for backend in ("triton", "trtllm_mha", "fa4"):
        args = [*FLASHINFER[:4], "--attention-backend", backend]
        assert status(mapping, "0.5.20", args, {10}, QWEN3_NEXT) == "ok", backend
    assert status(mapping, "0.5.20", FLASHINFER, {12}, QWEN3_NEXT) == "ok"
    for majors in ({9}, {8}):
        assert status(mapping, "0.5.20", FLASHINFER, majors, QWEN3_NEXT) == "ok"
    # but fa4 is refused on SM120 0.5.16-0.5.23, and on SM110 (Thor) flashinfer as on SM100
    fa4 = [*FLASHINFER[:4], "--attention-backend", "fa4"]
    assert status(mapping, "0.5.23", fa4, {12}, QWEN3_NEXT) == "blocked"
    assert status(mapping, "0.5.18", FLASHINFER, {11}, QWEN3_NEXT) == "blocked"


def test_which_gpus_a_release_checks(mapping: dict[str, Any]) -> None:
    """is_blackwell() is major 10 in 0.5.3-0.5.4, 10 and 12 in 0.5.5-0.5.8, 10, 11 and 12 from 0.5.9."""
    trtllm = [*FLASHINFER[:4], "--attention-backend", "trtllm_mha"]
    assert status(mapping, "0.5.4", trtllm, {10}, QWEN3_NEXT) == "blocked"  # 0.5.4: only triton
    assert status(mapping, "0.5.4", trtllm, {12}, QWEN3_NEXT) == "ok"
    assert status(mapping, "0.5.5", trtllm, {12}, QWEN3_NEXT) == "blocked"
    assert status(mapping, "0.5.8", FLASHINFER, {11}, QWEN3_NEXT) == "ok"
    assert status(mapping, "0.5.9", FLASHINFER, {11}, QWEN3_NEXT) == "blocked"


def test_prefill_and_decode_backends_are_checked_as_each_release_reads_them(mapping: dict[str, Any]) -> None:
    split = [*FLASHINFER[:4], "--prefill-attention-backend", "triton", "--decode-attention-backend", "flashinfer"]
    assert status(mapping, "0.5.16", split, {10}, QWEN3_NEXT) == "blocked"  # both given: both checked
    assert status(mapping, "0.5.20", split, {10}, QWEN3_NEXT) == "blocked"
    # 0.5.16-0.5.17 check --attention-backend unless both split flags are given; 0.5.18+ fall back per side
    one = [*FLASHINFER[:4], "--attention-backend", "triton", "--decode-attention-backend", "flashinfer"]
    assert status(mapping, "0.5.17", one, {10}, QWEN3_NEXT) == "ok"
    p = judge(mapping, "0.5.18", one, {10}, QWEN3_NEXT)
    assert p is not None and p.status == "blocked"
    assert "prefill triton, decode flashinfer" in (p.observed or "")
    # 0.5.3-0.5.15 read only --attention-backend
    assert status(mapping, "0.5.9", one, {10}, QWEN3_NEXT) == "ok"


def test_what_the_gate_cannot_read_is_unknown_never_a_pass(mapping: dict[str, Any]) -> None:
    p = judge(mapping, "0.5.20", FLASHINFER, {10}, None)  # config.json not read
    assert p is not None and p.status == "unknown" and "config.json not read" in (p.observed or "")
    assert "model_type" in p.message
    p = judge(mapping, "0.5.20", FLASHINFER, None, QWEN3_NEXT)  # no GPU read
    assert p is not None and p.status == "unknown" and "GPU not known" in (p.observed or "")
    assert status(mapping, "0.5.20", FLASHINFER, {9, 10}, QWEN3_NEXT) == "unknown"  # GPUs of both kinds
    # a backend every Blackwell GPU admits needs neither: triton with the model not read, or no GPU read
    triton = [*FLASHINFER[:4], "--attention-backend", "triton"]
    assert status(mapping, "0.5.20", triton, {10}, None) == "ok"
    assert status(mapping, "0.5.20", triton, None, QWEN3_NEXT) == "ok"


def test_sglangs_own_backend_choice(mapping: dict[str, Any]) -> None:
    """Without --attention-backend SGLang picks triton or trtllm_mha for Qwen3-Next/Qwen3.5 on SM100 (0.5.10+),
    flashinfer or triton elsewhere: admitted, so the launch passes; where its pick may be refused (SM110 in
    0.5.16-0.5.20, any Blackwell GPU before 0.5.10) the gate says unknown."""
    bare = FLASHINFER[:4]
    for version in ("0.5.10", "0.5.16", "0.5.20", "0.5.23"):
        assert status(mapping, version, bare, {10}, QWEN3_NEXT) == "ok", version
        assert status(mapping, version, bare, {12}, QWEN3_NEXT) == "ok", version
    assert status(mapping, "0.5.18", bare, {11}, QWEN3_NEXT) == "unknown"
    assert status(mapping, "0.5.9", bare, {12}, QWEN3_NEXT) == "unknown"
    assert status(mapping, "0.5.20", bare, {10}, LLAMA3) == "ok"
    assert status(mapping, "0.5.20", bare, {10}, None) == "ok"  # nothing given, nothing read: not guessed


# ---- the gate end to end, over a model directory and a box's facts ----------------------------------------------


def run_gate(facts: Path, *args: str) -> dict[str, Any]:
    return gate_json(facts, *args, dry_run=True)


def refusal(doc: dict[str, Any], key: str = "reasons") -> dict[str, Any] | None:
    return next((b for b in doc[key] if b["feature"] == f"refusal {RULE}"), None)


def test_the_gate_refuses_qwen3_next_on_flashinfer_on_a_b200_and_passes_triton(tmp_path: Path) -> None:
    qn = model_dir(tmp_path, "qwen3-next", QWEN3_NEXT)
    doc = run_gate(B200, "--model-path", str(qn), "--tp", "8", "--attention-backend", "flashinfer")
    assert doc["decision"] == "refuse"
    b = refusal(doc)
    assert b is not None and (b["status"], b["effect"]) == ("blocked", "crash")
    reason = b["reasons"][0]
    assert "qwen3_next" in reason["observed"] and reason["required"] == "SM10x: fa4, triton, trtllm_mha"
    ok = run_gate(B200, "--model-path", str(qn), "--tp", "8", "--attention-backend", "triton")
    assert refusal(ok) is None and refusal(ok, "warnings") is None
    llama = model_dir(tmp_path, "llama", LLAMA3)
    other = run_gate(B200, "--model-path", str(llama), "--tp", "8", "--attention-backend", "flashinfer")
    assert refusal(other) is None and refusal(other, "warnings") is None


def test_the_gate_on_sm120_boxes_and_hopper(tmp_path: Path) -> None:
    qn = model_dir(tmp_path, "qwen3-next", QWEN3_NEXT)
    old = run_gate(SM120_059, "--model-path", str(qn), "--attention-backend", "flashinfer")  # 0.5.9 refuses it
    b = refusal(old)
    assert b is not None and b["status"] == "blocked"
    assert b["reasons"][0]["required"] == "SM12x: triton, trtllm_mha"
    newer = run_gate(SM120_0511, "--model-path", str(qn), "--attention-backend", "flashinfer")  # 0.5.11 admits it
    assert refusal(newer) is None and refusal(newer, "warnings") is None
    hopper = run_gate(H200, "--model-path", str(qn), "--tp", "8", "--attention-backend", "flashinfer")
    assert refusal(hopper) is None and refusal(hopper, "warnings") is None


# ---- triage after the fact ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("release", "line"),
    [  # the assertion as each release words it (0.5.4-0.5.5, 0.5.6-0.5.9, 0.5.10-0.5.15, 0.5.16+)
        ("0.5.5", "AssertionError: triton backend is the only supported backend on Blackwell GPUs for hybrid "
                  "GDN models"),
        ("0.5.9", "AssertionError: triton or trtllm_mha backend are the only supported backends on Blackwell GPUs "
                  "for hybrid GDN models"),
        ("0.5.13", "AssertionError: triton, trtllm_mha, fa4, or flashinfer backend are the only supported backends "
                   "on Blackwell GPUs for hybrid GDN models"),
        ("0.5.20", "AssertionError: Only {'triton', 'trtllm_mha', 'fa4'} backends are supported on Blackwell GPUs "
                   "for hybrid GDN models. Got prefill=flashinfer, decode=flashinfer."),
    ],
)  # fmt: skip
def test_triage_names_the_refusal_in_every_releases_wording(tmp_path: Path, release: str, line: str) -> None:
    from stackcheck.launch.triage import triage_file

    site = f"/opt/venv-{release}/lib/python3.12/site-packages/sglang/srt"
    log = tmp_path / "server.log"
    log.write_text(
        "[2026-12-02 09:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        f'  File "{site}/model_executor/model_runner.py", line 1900, in init_attention_backend\n'
        "    self.attn_backend = self._get_attention_backend()\n"
        f'  File "{site}/layers/attention/attention_registry.py", line 300, in attn_backend_wrapper\n'
        "    assert (\n"
        f"{line}\n"
    )
    rc = triage_file(log).root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "sglang-hybrid-gdn-blackwell-backend"
    assert "--attention-backend triton" in rc.signature.fix and "gate" in rc.signature.fix
