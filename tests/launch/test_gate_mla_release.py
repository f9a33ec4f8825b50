"""Whether the served model is MLA is decided per SGLang release (manifests/preflight.json model.mla_architectures,
read from each release's configs/model_config.py; tests/launch/test_mla_architectures_registry.py), and where it
is not known the MLA rules fail closed.

Before, one list read from SGLang 0.5.9 decided it for every release: GigaChat 3.5 (GigaChat35ForCausalLM, MLA
from 0.5.21) served by SGLang 0.5.23 was "not MLA", so `--attention-backend fa3` on an Ampere GPU passed the gate
although SGLang 0.5.23 builds the FA3 backend for it as an MLA model and asserts major 9 (attention-fa3
mla-needs-hopper), and without a flag the gate required trtllm_mha (the MHA default on SM100) instead of SGLang's
MLA pick."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import DEEPSEEK_R1, GIGACHAT35, LLAMA3, gate_json, mla_data_until_0_5_20, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch.preflight.model import mla_of

ROOT = Path(__file__).resolve().parent.parent.parent
H200_0523 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"  # SGLang 0.5.23, 8x H200
RUBIN = ROOT / "tests" / "cases" / "rubin-sm107-sglang0523" / "facts.json"  # SM 10.7, SGLang 0.5.23
H100_059 = ROOT / "tests" / "cases" / "h100-cpu-torch" / "facts.json"  # SGLang 0.5.9
FOO_MLA = {**GIGACHAT35, "architectures": ["FooMLAForCausalLM"], "model_type": "foo"}  # no release names it


@pytest.fixture(scope="module")
def table() -> dict[str, Any]:
    return dict(load([], env={}).preflight["model"]["mla_architectures"])


def ampere(tmp_path: Path, version: str = "0.5.23") -> Path:
    """The h200-newest box with A100s instead (cc 8.0) and SGLang `version`."""
    doc = json.loads(H200_0523.read_text())
    for gpu in doc["facts"]["gpus"]:
        gpu.update(name="NVIDIA A100-SXM4-80GB", compute_capability="8.0", memory_bytes=80 << 30)
    doc["facts"]["packages"]["sglang"]["version"] = version
    path = tmp_path / "a100.json"
    path.write_text(json.dumps(doc))
    return path


def gate_with(manifests: Path, facts: Path, *args: str) -> dict[str, Any]:
    """gate_json with --manifests DIR over the shipped manifests (--dry-run)."""
    return gate_json(facts, *args, dry_run=True, options=("--manifests", str(manifests)))


def blockers(doc: dict[str, Any]) -> dict[str, str]:
    return {str(b.get("feature")): str(b.get("status")) for b in doc.get("reasons") or []}


def test_mla_is_decided_by_the_release(table: dict[str, Any]) -> None:
    giga = ["GigaChat35ForCausalLM"]
    assert mla_of(table, giga, GIGACHAT35, "0.5.20")[0] is False
    assert mla_of(table, giga, GIGACHAT35, "0.5.21")[0] is True
    assert mla_of(table, giga, GIGACHAT35, "0.5.23+cu129")[0] is True  # a local tag is the release
    # newer than the releases read, or not known: MLA where some release makes it MLA
    assert mla_of(table, giga, GIGACHAT35, "0.5.30")[0] is True
    assert mla_of(table, giga, GIGACHAT35, None)[0] is True
    # conditions on the text config, as each release has them
    pixtral = ["PixtralForConditionalGeneration"]
    plain = {"architectures": pixtral, "text_config": {"hidden_size": 5120}}
    latent = {"architectures": pixtral, "text_config": {"kv_lora_rank": 512}}
    assert mla_of(table, pixtral, plain, "0.5.9")[0] is True  # 0.5.7-0.5.10: by the architecture alone
    assert mla_of(table, pixtral, plain, "0.5.11")[0] is False
    assert mla_of(table, pixtral, latent, "0.5.11")[0] is True
    vl2 = ["DeepseekVL2ForCausalLM"]
    assert mla_of(table, vl2, {"language_config": {"use_mla": False}}, "0.5.23")[0] is False
    assert mla_of(table, vl2, {"language_config": {"kv_lora_rank": 512}}, "0.5.23")[0] is True
    # kv_lora_rank alone is not MLA to a release that was read; to one that was not, it is not known
    assert mla_of(table, ["FooMLAForCausalLM"], FOO_MLA, "0.5.23")[0] is False
    got, why = mla_of(table, ["FooMLAForCausalLM"], FOO_MLA, "0.5.30")
    assert got is None and "kv_lora_rank" in why and "0.5.30" in why
    assert mla_of(table, ["LlamaForCausalLM"], LLAMA3, "0.5.30")[0] is False


def test_gigachat35_on_sglang_0_5_23_gets_the_mla_rules(tmp_path: Path) -> None:
    box = ampere(tmp_path)
    giga = model_dir(tmp_path, "giga", GIGACHAT35)
    doc = gate_json(box, "--model-path", str(giga), "--attention-backend", "fa3", dry_run=True)
    assert doc["derived"]["launch"]["model_mla"] is True
    assert doc["decision"] == "refuse"  # it was allowed: "not MLA" by 0.5.9's list
    assert blockers(doc).get("attention-fa3") == "blocked"
    fa3 = next(b for b in doc["reasons"] if b.get("feature") == "attention-fa3")
    assert any("major 9 only" in str(r.get("message")) for r in fa3["reasons"])
    # an MHA model keeps FA3 on Ampere
    llama = model_dir(tmp_path, "llama", LLAMA3)
    doc = gate_json(box, "--model-path", str(llama), "--attention-backend", "fa3", dry_run=True)
    assert "attention-fa3" not in blockers(doc)
    # without a flag on SM107: SGLang's MLA pick (flashinfer), not trtllm_mha, the MHA default it needed before
    doc = gate_json(RUBIN, "--model-path", str(giga), dry_run=True)
    needed = {r["feature"] for r in doc["derived"]["required"]}
    assert "attention-flashinfer" in needed and "attention-trtllm-mha" not in needed


def test_gigachat35_is_not_mla_to_a_release_before_0_5_21(tmp_path: Path) -> None:
    giga = model_dir(tmp_path, "giga", GIGACHAT35)
    doc = gate_json(H100_059, "--model-path", str(giga), dry_run=True)
    assert doc["derived"]["launch"]["model_mla"] is False
    doc = gate_json(ampere(tmp_path, "0.5.20"), "--model-path", str(giga), "--attention-backend", "fa3", dry_run=True)
    assert doc["derived"]["launch"]["model_mla"] is False and "attention-fa3" not in blockers(doc)


def test_an_mla_kind_not_known_fails_closed(tmp_path: Path) -> None:
    # the MLA data stops at 0.5.20 (a user's --manifests copy, as when SGLang is newer than the data): an
    # architecture no release read names, with kv_lora_rank, is not known to be MLA or not on 0.5.23
    over = mla_data_until_0_5_20(tmp_path)
    box = ampere(tmp_path)
    for name, config in (("foo", FOO_MLA), ("giga", GIGACHAT35)):
        model = model_dir(tmp_path, name, config)
        doc = gate_with(over, box, "--model-path", str(model), "--attention-backend", "fa3")
        assert "model_mla" not in doc["derived"]["launch"], name
        assert doc["decision"] == "refuse", name  # never ok because the kind is missing
        assert blockers(doc).get("attention-fa3") == "unknown", name
        fa3 = next(b for b in doc["reasons"] if b.get("feature") == "attention-fa3")
        assert any("MLA not known" in str(r.get("message")) for r in fa3["reasons"]), name
    # a DeepSeek model is MLA in every release read: MLA, and refused as before
    deepseek = model_dir(tmp_path, "deepseek", DEEPSEEK_R1)
    doc = gate_with(over, box, "--model-path", str(deepseek), "--attention-backend", "fa3")
    assert doc["derived"]["launch"]["model_mla"] is True and blockers(doc).get("attention-fa3") == "blocked"


def recommend_choices(
    facts: Path, model: Path, monkeypatch: pytest.MonkeyPatch, *extra: str
) -> tuple[dict[str, str], list[str]]:
    """`stackcheck recommend --facts F --model-path M --format json EXTRA`: (decision -> option, assumptions)."""
    import contextlib
    import io

    from stackcheck.cli import main

    for name in ("SGLANG_ENABLE_PCIE_IPC_ALLREDUCE", "SGLANG_ENABLE_JIT_DEEPGEMM", "NCCL_P2P_DISABLE",
                 "STACKCHECK_MANIFESTS"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["recommend", "--facts", str(facts), "--model-path", str(model), "--format", "json", *extra])
    doc = json.loads(out.getvalue())
    return {c["decision"]: c["option"] for c in doc["choices"]}, list(doc["assumptions"])


def test_recommend_judges_the_model_by_the_installed_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seed = ROOT / "tests" / "recommend" / "seed-after" / "facts.json"  # 8x RTX PRO 6000 (SM120), SGLang 0.5.23
    giga = model_dir(tmp_path, "giga", GIGACHAT35)
    choices, _ = recommend_choices(seed, giga, monkeypatch)
    assert choices["attention"] == "triton-sm12x"  # SGLang's MLA pick off Hopper/SM100; it said flashinfer before
    # SGLang newer than the MLA data and an architecture no release names, with kv_lora_rank: MLA not known, said,
    # and no option that holds for one kind of model only
    doc = json.loads(seed.read_text())
    doc["facts"]["packages"]["sglang"]["version"] = "0.5.30"
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(doc))
    foo = model_dir(tmp_path, "foo", FOO_MLA)
    choices, assumptions = recommend_choices(newer, foo, monkeypatch, "--no-plan")  # the stack as installed
    assert any("MLA not known" in a for a in assumptions)
    assert choices["attention"] == "triton-sm12x"  # not flashinfer-sm12x, which holds for MHA models only
    # with the plan, which installs a release the data covers, the model is read as that release reads it (imla2):
    # one that names no FooMLAForCausalLM does not run it as MLA, and the assumption says which release read it
    _, assumptions = recommend_choices(newer, foo, monkeypatch)
    assert not any("MLA not known" in a for a in assumptions)
    assert any("(the release the plan installs), not as the installed 0.5.30" in a for a in assumptions)


def test_sglangs_mla_picks_are_unknown_where_the_kind_is_not_known() -> None:
    from stackcheck.launch import gate
    from stackcheck.launch.refusals import auto_backend_unread

    mapping = dict(load([], env={}).launch)
    bare = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m"], mapping, {})
    arch = "FooMLAForCausalLM"
    got = {f for f, _ in auto_backend_unread(bare, mapping, "0.5.23", {12}, "12.8", arch, mla_only=True)}
    assert got == {"attention-triton"}  # the MLA default on SM12x; no model override (the architecture is read)
    mixed = {f for f, _ in auto_backend_unread(bare, mapping, "0.5.23", {10, 12}, "12.8", arch, mla_only=True)}
    assert mixed == {"attention-flashinfer", "attention-triton"}  # each major's MLA pick (flashinfer on SM100)
    assert auto_backend_unread(bare, mapping, "0.5.23", {12}, "12.8", arch) == []  # read: not the unread case
    named = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", "--attention-backend", "fa3"],
                        mapping, {})  # fmt: skip
    assert auto_backend_unread(named, mapping, "0.5.23", {12}, "12.8", arch, mla_only=True) == []


def test_an_unread_model_fails_closed_on_the_mla_rules(tmp_path: Path) -> None:
    # before: a model the gate could not read had no launch.mla, `launch.mla exists` dropped mla-needs-hopper, and
    # --attention-backend fa3 on an Ampere GPU was allowed for what may be an MLA model (SGLang asserts major 9)
    box = ampere(tmp_path)
    for model in (str(tmp_path / "absent"), str(model_dir(tmp_path, "no-config", None))):
        doc = gate_json(box, "--model-path", model, "--attention-backend", "fa3", dry_run=True)
        assert "model_mla" not in doc["derived"]["launch"], model
        assert doc["decision"] == "refuse", model
        assert blockers(doc).get("attention-fa3") == "unknown", model
        fa3 = next(b for b in doc["reasons"] if b.get("feature") == "attention-fa3")
        assert any("could not read the model" in str(r.get("message")) for r in fa3["reasons"]), model
    # where the kind does not matter (Hopper: FA3 serves MLA and MHA models) an unread model is not refused for it
    doc = gate_json(H200_0523, "--model-path", str(tmp_path / "absent"), "--attention-backend", "fa3", dry_run=True)
    assert "attention-fa3" not in blockers(doc)
