"""--speculative-draft-attention-backend X with an EAGLE-family draft (EAGLE, EAGLE3, NEXTN, STANDALONE) was judged
only for X in trtllm_mla and flashmla: `--speculative-draft-attention-backend fa3` on an SM120 box was allowed with a
complete facts file, while SGLang's draft runner builds the draft's backend through attention_registry, whose FA3
assertion ('requires SM>=80 and SM<=90') ends the launch. Read in the sglang 0.5.7-0.5.23 wheels (launch.json
draft_attention_backend: the path, with sources): the draft runner builds that one backend for prefill and decode
through the registry (its checks run with the draft model), the draft worker's DraftBackendFactory builds the same
value's classes directly and refuses a value outside its map, and the backend's kernels are the target's. The gate
now judges the value's features against the draft's view of the launch (that backend, the draft model's MLA kind),
less the checks SGLang makes on the target's flags only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_cli import DEEPSEEK_R1, LLAMA3, gate_json, model_dir

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import Manifests
from stackcheck.launch.gate_preflight import DRAFT_JUDGED_BACKENDS, draft_launch_view

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = ROOT / "tests" / "cases"
SM120 = CASES / "writeup-after" / "facts.json"  # 8x RTX PRO 6000 (SM120), SGLang 0.5.9, FlashInfer 0.6.4
H200 = CASES / "h200-newest" / "facts.json"  # 8x H200 (SM90), SGLang 0.5.23
H100 = CASES / "h100-cpu-torch" / "facts.json"  # H100 (SM90), SGLang 0.5.9
NEWER = CASES / "sglang-newer-than-manifests" / "facts.json"  # SM120, SGLang 0.5.99
FLAG = "--speculative-draft-attention-backend"


def _draft(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The problems on the draft's backend (the flag is their subject)."""
    return [p for p in doc["derived"]["problems"] if str(p.get("subject", "")).startswith(FLAG)]


def _launch(tmp_path: Path, target: dict[str, Any], draft: dict[str, Any] | None, backend: str) -> list[str]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    args = ["--model-path", str(model_dir(tmp_path, "target", target)), "--speculative-algorithm", "EAGLE3"]
    args += ["--speculative-draft-model-path", str(model_dir(tmp_path, "draft", draft)), FLAG, backend]
    return args


def _gate_assumed(facts: Path, gpu: str, *args: str) -> dict[str, Any]:
    """gate_json with --assume-gpu (a what-if GPU on the facts' stack)."""
    return gate_json(facts, *args, dry_run=True, options=("--assume-gpu", gpu))


def test_a_draft_on_fa3_on_sm120_is_refused(tmp_path: Path) -> None:
    doc = gate_json(SM120, *_launch(tmp_path, LLAMA3, LLAMA3, "fa3"), "--tp", "8", dry_run=True)
    (p,) = _draft(doc)
    assert (p["status"], p["effect"]) == ("blocked", "crash")
    assert "rule fa3-majors" in p["message"] and "SM>=80 and SM<=90" in p["message"]
    assert doc["decision"] == "refuse"
    # the target is on flashinfer: fa3 is the draft's need, judged for the draft, not added as the target's
    assert "attention-fa3" not in {r["feature"] for r in doc["derived"]["required"]}


@pytest.mark.parametrize("facts", [H200, H100], ids=["h200-0.5.23", "h100-0.5.9"])
def test_a_draft_on_fa3_on_hopper_is_ok(tmp_path: Path, facts: Path) -> None:
    assert _draft(gate_json(facts, *_launch(tmp_path, LLAMA3, LLAMA3, "fa3"), dry_run=True)) == []


def test_the_draft_models_mla_kind_decides_not_the_targets(tmp_path: Path) -> None:
    """FA3's registry assertion admits an MLA model on major 9 only, and it reads the draft runner's model: on an
    A100 an MLA draft is refused beside a non-MLA target, a non-MLA draft is not beside an MLA target, and a draft
    whose config.json cannot be read is unknown (never ok)."""
    mla_draft = _gate_assumed(H200, "8.0x8", *_launch(tmp_path / "a", LLAMA3, DEEPSEEK_R1, "fa3"))
    (p,) = _draft(mla_draft)
    assert (p["status"], p["effect"]) == ("blocked", "crash") and "rule mla-needs-hopper" in p["message"]
    assert _draft(_gate_assumed(H200, "8.0x8", *_launch(tmp_path / "b", DEEPSEEK_R1, LLAMA3, "fa3"))) == []
    unread = _gate_assumed(H200, "8.0x8", *_launch(tmp_path / "c", LLAMA3, None, "fa3"))
    (u,) = _draft(unread)
    assert u["status"] == "unknown" and "could not read the speculative draft model's config.json" in u["message"]
    assert unread["decision"] == "refuse"


def test_a_draft_on_trtllm_mha_on_sm90_is_judged_by_its_kernels(tmp_path: Path) -> None:
    """SGLang 0.5.9's trtllm_mha draft extend goes to trtllm-gen's context kernel (SM100 family only) on an H100,
    beside a target on flashinfer; the major checks SGLang makes at argument parsing read the target's backends
    only, so they are not what refuses it. With 0.5.23 SM90 prefill runs FMHAv2 and decode XQA: ok."""
    args = [*_launch(tmp_path / "a", LLAMA3, LLAMA3, "trtllm_mha"), "--attention-backend", "flashinfer"]
    problems = _draft(gate_json(H100, *args, dry_run=True))
    assert problems and all(p["status"] == "blocked" for p in problems)
    rules = {p["message"].split("rule ", 1)[1].split(")", 1)[0] for p in problems}
    assert "prefill-trtllm-gen" in rules and not rules & {"decode-majors", "prefill-majors"}
    args = [*_launch(tmp_path / "b", LLAMA3, LLAMA3, "trtllm_mha"), "--attention-backend", "flashinfer"]
    assert _draft(gate_json(H200, *args, dry_run=True)) == []


def test_a_target_only_check_that_would_fail_for_the_draft_is_unknown(tmp_path: Path) -> None:
    """SM120 FMHAv2 prefill with an fp8_e4m3 KV cache: SGLang refuses it for the target's backend at argument
    parsing; for the draft that check does not run and what the kernel does was not read: unknown."""
    args = [*_launch(tmp_path, LLAMA3, LLAMA3, "trtllm_mha"), "--kv-cache-dtype", "fp8_e4m3"]
    problems = _draft(_gate_assumed(H200, "12.0x8", *args, "--attention-backend", "flashinfer"))
    fp8 = [p for p in problems if "rule sm120-prefill-fp8-kv" in p["message"]]
    assert [p["status"] for p in fp8] == ["unknown"]


def test_a_draft_on_flashinfer_on_sm120_is_ok(tmp_path: Path) -> None:
    assert _draft(gate_json(SM120, *_launch(tmp_path, LLAMA3, LLAMA3, "flashinfer"), dry_run=True)) == []


def test_values_the_draft_factory_does_not_build(tmp_path: Path) -> None:
    """DraftBackendFactory raises ValueError for a value outside its map (torch_native: blocked); a value it
    builds that maps to no feature (aiter) is unknown; a release newer than the data read is unknown for a value
    outside the newest map read."""
    native = _draft(gate_json(H200, *_launch(tmp_path / "a", LLAMA3, LLAMA3, "torch_native"), dry_run=True))
    assert [(p["status"], p["effect"]) for p in native] == [("blocked", "crash")]
    assert "EAGLE is not supported in attention backend torch_native" in native[0]["message"]
    aiter = _draft(gate_json(H200, *_launch(tmp_path / "b", LLAMA3, LLAMA3, "aiter"), dry_run=True))
    assert [p["status"] for p in aiter] == ["unknown"]
    newer = _draft(gate_json(NEWER, *_launch(tmp_path / "c", LLAMA3, LLAMA3, "torch_native"), dry_run=True))
    assert [p["status"] for p in newer] == ["unknown"]


def test_trtllm_mla_and_flashmla_drafts_keep_their_own_rules(tmp_path: Path) -> None:
    """Their features' draft-* rules judge the draft (test_gate_mla_heads_draft.py); they are only checked against
    the factory here, so a draft on them is not judged twice."""
    for backend in DRAFT_JUDGED_BACKENDS:
        doc = gate_json(H200, *_launch(tmp_path / backend, DEEPSEEK_R1, DEEPSEEK_R1, backend), dry_run=True)
        assert _draft(doc) == []
        assert any(r["why"].startswith(f"{FLAG} {backend}") for r in doc["derived"]["required"])


def test_the_draft_view_takes_the_draft_models_facts() -> None:
    launch = {"tp": 8, "attention_backend": "flashinfer", "decode_attention_backend": "triton", "mla": True,
              "mla_kv_rope": [512, 64], "model_config_read": True, "draft_mla": False,
              "draft_config_read": True}  # fmt: skip
    view = draft_launch_view(launch, "fa3", {"draft_mla": False, "draft_config_read": True})
    assert view == {"tp": 8, "attention_backend": "fa3", "prefill_attention_backend": "fa3",
                    "decode_attention_backend": "fa3", "mla": False, "model_config_read": True}  # fmt: skip
    assert "mla" not in draft_launch_view(launch, "fa3", {})


def test_the_draft_data_names_what_exists(manifests: Manifests) -> None:
    """launch.json draft_attention_backend: every target-only rule is a rule of its feature; every release that
    declares the flag is in exactly one factory run; trtllm_mla and flashmla are built in every run."""
    spec = manifests.launch["draft_attention_backend"]
    rules = {str(f["id"]): {str(r["id"]) for r in f.get("rules") or []} for f in manifests.features}
    for entry in spec["target_only_rules"]:
        assert set(entry["rules"]) <= rules[entry["feature"]], entry
    flag_runs = manifests.launch["release_flags"]["flags"][FLAG]
    releases = [str(r) for r in manifests.launch["release_flags"]["releases"]]
    declared = [r for r in releases if any(_in_run(r, run) for run in flag_runs)]
    assert declared and declared[0] == "0.5.7"
    for release in declared:
        hits = [run for run in spec["factory"] if version_in(release, run["versions"]) is True]
        assert len(hits) == 1, release
        assert set(DRAFT_JUDGED_BACKENDS) <= set(hits[0]["backends"])
    assert all(hop.get("source") for hop in spec["path"])
    for entry in spec["own_list"]:
        assert entry["algorithm"] in ("DFLASH", "DSPARK") and set(entry["as_given"]) <= set(choices(manifests))


def choices(manifests: Manifests) -> list[str]:
    option = next(o for o in manifests.launch["options"] if o.get("flag") == "--attention-backend")
    return list(option["choices"])


def _in_run(release: str, run: str) -> bool:
    low, _, high = run.partition("-")
    return version_in(release, f">={low},<={high or low}") is True


def test_dflash_and_dspark_drafts_on_a_value_they_keep(tmp_path: Path) -> None:
    """DFLASH keeps fa3, fa4, flashinfer and triton as given in every release that has it (0.5.11-0.5.23) and its
    draft runner builds them through the registry: fa3 on SM120 is refused, on H200 ok. DSPARK keeps them too,
    except for a MoE draft (DSV4's backend), which the gate does not read: unknown, never ok. A value they replace
    (trtllm_mla: flashinfer on CUDA) is not judged as that value."""

    def launch(sub: str, algorithm: str, backend: str) -> list[str]:
        args = _launch(tmp_path / sub, LLAMA3, LLAMA3, backend)
        return [a if a != "EAGLE3" else algorithm for a in args]

    (p,) = _draft(_gate_assumed(H200, "12.0x8", *launch("a", "DFLASH", "fa3")))
    assert (p["status"], p["effect"]) == ("blocked", "crash") and "rule fa3-majors" in p["message"]
    assert _draft(gate_json(H200, *launch("b", "DFLASH", "fa3"), dry_run=True)) == []
    (d,) = _draft(_gate_assumed(H200, "12.0x8", *launch("c", "DSPARK", "fa3")))
    assert d["status"] == "unknown" and "MoE" in d["message"]
    assert _draft(_gate_assumed(H200, "12.0x8", *launch("d", "DFLASH", "trtllm_mla"))) == []


def test_a_draft_that_takes_the_targets_backend(tmp_path: Path) -> None:
    """Without the flag the draft takes the target's --attention-backend: the draft worker's factory must build it
    (torch_native: ValueError), and the draft model is judged on it where it differs from the target (an MLA draft
    on fa3 on an A100 beside a Llama target; a Llama draft beside a DeepSeek target adds nothing to the target's
    own refusal)."""

    def launch(sub: str, target: dict[str, Any], draft: dict[str, Any], backend: str) -> list[str]:
        args = _launch(tmp_path / sub, target, draft, "x")[:-2]
        return [*args, "--attention-backend", backend]

    def inherited(doc: dict[str, Any]) -> list[dict[str, Any]]:
        return [p for p in doc["derived"]["problems"] if "(the speculative draft's too)" in str(p.get("subject"))]

    native = inherited(gate_json(H200, *launch("a", LLAMA3, LLAMA3, "torch_native"), dry_run=True))
    assert [(p["status"], p["effect"]) for p in native] == [("blocked", "crash")]
    assert inherited(gate_json(H200, *launch("b", LLAMA3, LLAMA3, "fa3"), dry_run=True)) == []
    (p,) = inherited(_gate_assumed(H200, "8.0x8", *launch("c", LLAMA3, DEEPSEEK_R1, "fa3")))
    assert p["status"] == "blocked" and "rule mla-needs-hopper" in p["message"]
    assert inherited(_gate_assumed(H200, "8.0x8", *launch("d", DEEPSEEK_R1, LLAMA3, "fa3"))) == []


def test_a_draft_alone_on_trtllm_mla_or_flashmla_is_not_judged_on_the_targets_model(tmp_path: Path) -> None:
    """The draft alone on trtllm_mla (the target on flashinfer) requires attention-trtllm-mla; its target-model rule
    mla-models-only read the target's model (a Llama target refused with an MLA draft: a false refusal). Now it
    holds only where the target's own backend flags give trtllm_mla (or none); the draft-* rule judges the draft."""
    b200 = CASES / "b200-cubin-package" / "facts.json"  # 8x B200 (SM100), SGLang 0.5.20 (icubin1: cubins there)

    def trtllm_mla(doc: dict[str, Any]) -> tuple[str, list[str]]:
        verdict = next(f for f in doc["features"] if f["feature"] == "attention-trtllm-mla")
        blockers = [b for b in doc["reasons"] if b.get("feature") == "attention-trtllm-mla"]
        rules = [str(r.get("rule")) for b in blockers for r in b.get("reasons") or []]
        return str(verdict["status"]), rules

    mla_draft = [*_launch(tmp_path / "a", LLAMA3, DEEPSEEK_R1, "trtllm_mla"), "--attention-backend", "flashinfer"]
    assert trtllm_mla(gate_json(b200, *mla_draft, dry_run=True)) == ("ok", [])
    mha_draft = [*_launch(tmp_path / "b", LLAMA3, LLAMA3, "trtllm_mla"), "--attention-backend", "flashinfer"]
    assert trtllm_mla(gate_json(b200, *mha_draft, dry_run=True)) == ("blocked", ["draft-mla-models-only"])
    # the target itself on trtllm_mla: its own model is judged as before
    own = [*_launch(tmp_path / "c", LLAMA3, DEEPSEEK_R1, "trtllm_mla"), "--attention-backend", "trtllm_mla"]
    assert trtllm_mla(gate_json(b200, *own, dry_run=True)) == ("blocked", ["mla-models-only"])
