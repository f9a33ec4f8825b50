"""Attention backends that launch.json mapped to no feature, so the gate judged a launch with them ok on any GPU
(issue 16, zero false passes). Each path was read in the real SGLang wheels (admission -> attention_registry ->
the backend's kernel and its own architecture check) and now requires a feature or meets a refusal:

- hpc_ops (0.5.18-0.5.23): HPCOpsAttnBackend raises ValueError off major 9 and ImportError without Tencent's
  `hpc` module (the hpc-ops distribution): attention-hpc-ops;
- dual_chunk_flash_attn (0.5.1-0.5.19): sgl-kernel's FA3, whose is_fa3_supported() admits majors 8 and 9 only:
  attention-dual-chunk;
- minicpm_flashattn / minicpm_flashinfer (0.5.19-0.5.23): FlashAttentionBackend with FA3 off Blackwell (majors 8
  and 9 only), FA4 on it (not judged: unknown): attention-minicpm-sparse (and attention-flashinfer);
- qsa (0.5.20-0.5.23): per-GPU kernels whose own checks were not read: attention-qsa, never ok;
- dsv4 and its deprecated alias compressed: the DeepSeek-V4 backend's FlashMLA sparse prefill,
  dsv4-flashmla-sparse-prefill (the feature SGLang's own pick for DeepSeek-V4 already requires);
- dsa / nsa: the backend asserts a DSA model (an architecture SGLang lists with index_topk in config.json), the
  refusal dsa-attention-backend-dsa-models-only; for a DSA model dsa_defaults judge its kernels as before.

torch_native (torch's scaled_dot_product_attention) and flex_attention (torch.nn.attention.flex_attention) stay
without a feature: no kernel of theirs checks the architecture beyond torch's own build (torch-cuda-arch, every
launch). The model configs are written for the tests in the shape of the published ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import DEEPSEEK_V32, LLAMA3, gate_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.refusals import refusal_problems

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"  # 8x H200, SGLang 0.5.23, complete packages list
RULE = "dsa-attention-backend-dsa-models-only"


def _facts(
    tmp_path: Path, sglang: str, cc: str, extra: dict[str, Any] | None = None, python: str | None = None
) -> Path:
    doc = json.loads(H200.read_text())
    facts = doc["facts"]
    if python is not None:  # the case's own is 3.12.3
        facts["system"]["python"] = python
    for g in facts["gpus"]:
        g["compute_capability"] = cc
    facts["packages"]["sglang"].update(version=sglang, dist_version=sglang)
    for name, record in (extra or {}).items():
        facts["packages"][name] = record
    path = tmp_path / f"facts-{sglang}-{cc}-{len(extra or {})}-{python}.json"
    path.write_text(json.dumps(doc))
    return path


def _feature(doc: dict[str, Any], fid: str) -> dict[str, Any]:
    return next(f for f in doc["features"] if f["feature"] == fid)


def _reasons(doc: dict[str, Any], subject: str) -> list[dict[str, Any]]:
    hits = [r for r in doc["reasons"] if r.get("feature") == subject]
    return [x for r in hits for x in r.get("reasons") or []]


HPC_OPS = {"installed": True, "version": "0.1.0", "dist_version": "0.1.0", "location": "/opt/venv", "editable": False}


def test_the_values_require_their_features() -> None:
    choices = next(o for o in load([], env={}).launch["options"] if o.get("flag") == "--attention-backend")["choices"]
    assert choices["hpc_ops"] == ["attention-hpc-ops"]
    assert choices["dual_chunk_flash_attn"] == ["attention-dual-chunk"]
    assert choices["minicpm_flashattn"] == ["attention-minicpm-sparse"]
    assert choices["minicpm_flashinfer"] == ["attention-minicpm-sparse", "attention-flashinfer"]
    assert choices["qsa"] == ["attention-qsa"]
    assert choices["dsv4"] == choices["compressed"] == ["dsv4-flashmla-sparse-prefill"]
    assert choices["torch_native"] == choices["flex_attention"] == []


@pytest.mark.parametrize(
    ("backend", "sglang", "cc", "extra", "status", "rule", "source"),
    [
        # HPC-Ops: major 9 only (SGLang's own check), and the hpc package
        ("hpc_ops", "0.5.23", "12.0", HPC_OPS, "blocked", "hpc-ops-hopper", "hpc_ops_backend.py"),
        ("hpc_ops", "0.5.23", "10.0", HPC_OPS, "blocked", "hpc-ops-hopper", "hpc_ops_backend.py"),
        ("hpc_ops", "0.5.18", "8.0", HPC_OPS, "blocked", "hpc-ops-hopper", "hpc_ops_backend.py"),
        ("hpc_ops", "0.5.23", "9.0", None, "blocked", "hpc-ops-package", "Tencent/hpc-ops"),
        ("hpc_ops", "0.5.23", "9.0", HPC_OPS, "ok", None, None),
        # dual chunk attention: sgl-kernel's FA3 (majors 8 and 9)
        ("dual_chunk_flash_attn", "0.5.19", "12.0", None, "blocked", "dual-chunk-fa3-majors", "flash_attn.py"),
        ("dual_chunk_flash_attn", "0.5.9", "10.0", None, "blocked", "dual-chunk-fa3-majors", "flash_attn.py"),
        ("dual_chunk_flash_attn", "0.5.19", "9.0", None, "ok", None, None),
        # MiniCPM sparse: FA3 off Blackwell, FA4 on it (not read); its InfLLM-V2 top-k library is a CPython 3.10
        # extension in sglang-kernel 0.4.6.post1-0.4.10, and this box runs Python 3.12 (the eighteenth sample)
        ("minicpm_flashattn", "0.5.23", "12.0", None, "blocked", "infllm-ops-python-310", "sglang-kernel 0.4.6"),
        ("minicpm_flashinfer", "0.5.23", "10.0", None, "unknown", "minicpm-blackwell-fa4", None),
        ("minicpm_flashattn", "0.5.23", "9.0", None, "blocked", "infllm-ops-python-310", "infllm_ops"),
        ("minicpm_flashattn", "0.5.19", "8.0", None, "blocked", "infllm-ops-python-310", "infllm_ops"),
        # qsa: never ok
        ("qsa", "0.5.23", "9.0", None, "unknown", "qsa-path-not-judged", None),
        ("qsa", "0.5.23", "12.0", None, "unknown", "qsa-path-not-judged", None),
        # dsv4 / compressed: the DeepSeek-V4 backend's FlashMLA sparse prefill (SM90a / SM100f, SM12x kept off it)
        ("dsv4", "0.5.23", "8.6", None, "blocked", "sgl-flash-mla-legacy-arch", "sglang"),
        ("compressed", "0.5.16", "8.0", None, "blocked", "sparse-prefill-skips-sm12x", "sglang"),
        ("compressed", "0.5.15", "12.0", None, "blocked", "sparse-prefill-every-prefill", "sglang"),
        ("dsv4", "0.5.16", "12.0", None, "ok", None, None),
    ],
)  # fmt: skip
def test_the_gate_follows_the_path_to_the_kernel(
    tmp_path: Path,
    backend: str,
    sglang: str,
    cc: str,
    extra: dict[str, Any] | None,
    status: str,
    rule: str | None,
    source: str | None,
) -> None:
    facts = _facts(tmp_path, sglang, cc, {"hpc-ops": extra} if extra else None)
    model = model_dir(tmp_path, "llama", LLAMA3)
    doc = gate_json(facts, "--model-path", str(model), "--attention-backend", backend, dry_run=True)
    fid = {
        "hpc_ops": "attention-hpc-ops", "dual_chunk_flash_attn": "attention-dual-chunk",
        "minicpm_flashattn": "attention-minicpm-sparse", "minicpm_flashinfer": "attention-minicpm-sparse",
        "qsa": "attention-qsa", "dsv4": "dsv4-flashmla-sparse-prefill", "compressed": "dsv4-flashmla-sparse-prefill",
    }[backend]  # fmt: skip
    assert _feature(doc, fid)["status"] == status, doc["reasons"]
    if status == "ok":
        assert fid not in {r.get("feature") for r in doc["reasons"]}
        return
    assert doc["decision"] == "refuse"
    judged = [r for r in _reasons(doc, fid) if r.get("rule") == rule]
    assert judged, _reasons(doc, fid)
    assert judged[0]["result"] == ("fail" if status == "blocked" else "unknown")
    if source is not None:  # the kernel's check, with the wheel or repository it was read in
        assert source in json.dumps(judged[0]["source"])


def test_hpc_ops_ok_only_where_the_whole_launch_is(tmp_path: Path) -> None:
    facts = _facts(tmp_path, "0.5.23", "9.0", {"hpc-ops": HPC_OPS})
    model = model_dir(tmp_path, "llama", LLAMA3)
    doc = gate_json(facts, "--model-path", str(model), "--attention-backend", "hpc_ops", dry_run=True)
    assert doc["decision"] == "allow", doc["reasons"]
    sm120 = _facts(tmp_path, "0.5.23", "12.0")
    doc = gate_json(sm120, "--model-path", str(model), "--attention-backend", "hpc_ops", dry_run=True)
    msg = json.dumps(_reasons(doc, "attention-hpc-ops"))
    assert "requires an SM90 (Hopper) GPU" in msg and "major-12" in msg


def test_minicpm_flashinfer_needs_flashinfer_too(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "llama", LLAMA3)
    doc = gate_json(_facts(tmp_path, "0.5.23", "9.0"), "--model-path", str(model), "--attention-backend",
                    "minicpm_flashinfer", dry_run=True)  # fmt: skip
    explicit = {f["feature"] for f in doc["features"] if f.get("kind") == "explicit"}
    assert {"attention-minicpm-sparse", "attention-flashinfer"} <= explicit


# ---- dsa / nsa: the backend's assertion on the model -------------------------------------------------------


@pytest.mark.parametrize(
    ("backend", "sglang", "text"),
    [("dsa", "0.5.23", "DSA backend only supports DeepSeek DSA"), ("nsa", "0.5.23", "DSA backend only supports"),
     ("nsa", "0.5.9", "NSA backend only supports DeepSeek NSA")],
)  # fmt: skip
def test_dsa_with_a_model_that_is_no_dsa_model_is_refused(tmp_path: Path, backend: str, sglang: str, text: str) -> None:
    model = model_dir(tmp_path, "llama", LLAMA3)
    doc = gate_json(_facts(tmp_path, sglang, "9.0"), "--model-path", str(model), "--attention-backend", backend,
                    dry_run=True)  # fmt: skip
    assert doc["decision"] == "refuse"
    hit = next(r for r in doc["reasons"] if r.get("feature") == f"refusal {RULE}")
    assert hit["status"] == "blocked" and hit["effect"] == "crash"
    assert text in json.dumps(hit)
    assert ("nsa_backend.py" if sglang == "0.5.9" else "dsa_backend.py") in json.dumps(hit)


def test_dsa_with_a_dsa_model_passes_the_refusal_and_meets_its_kernels(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "v32", DEEPSEEK_V32)
    on_h200 = gate_json(_facts(tmp_path, "0.5.23", "9.0"), "--model-path", str(model), "--attention-backend", "dsa",
                        dry_run=True)  # fmt: skip
    assert f"refusal {RULE}" not in {r.get("feature") for r in on_h200["reasons"]}
    assert on_h200["decision"] == "allow", on_h200["reasons"]
    on_sm120 = gate_json(_facts(tmp_path, "0.5.23", "12.0"), "--model-path", str(model), "--attention-backend", "dsa",
                         dry_run=True)  # fmt: skip
    assert _feature(on_sm120, "attention-dsa-trtllm")["status"] == "blocked"  # dsa_defaults, as before


def test_dsa_with_a_model_not_read_is_unknown_not_ok(tmp_path: Path) -> None:
    doc = gate_json(_facts(tmp_path, "0.5.23", "9.0"), "--model-path", str(tmp_path / "absent"),
                    "--attention-backend", "dsa", dry_run=True)  # fmt: skip
    hit = next(r for r in doc["reasons"] if r.get("feature") == f"refusal {RULE}")
    assert hit["status"] == "unknown"


def _rule_status(version: str, arch: str | None, keys: dict[str, Any] | None, *flags: str) -> str:
    mapping = dict(load([], env={}).launch)
    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *flags], mapping, {})
    models = {"model": keys} if keys is not None else None
    found = refusal_problems(d, mapping, version, {9}, arch, models)
    got = [p for p in found if p.subject == f"refusal {RULE}"]
    return str(got[0].status) if got else "ok"


def test_the_refusal_reads_index_topk_and_the_flags_as_given() -> None:
    llama = {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}
    v32 = {"architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32", "index_topk": 2048}
    assert _rule_status("0.5.23", "LlamaForCausalLM", llama, "--attention-backend", "dsa") == "blocked"
    assert _rule_status("0.5.23", "LlamaForCausalLM", llama, "--decode-attention-backend", "dsa") == "blocked"
    assert _rule_status("0.5.23", "DeepseekV32ForCausalLM", v32, "--attention-backend", "dsa") == "ok"
    # an index_topk beside an architecture the data does not list: SGLang's list decides, not known here
    odd = {"architectures": ["SomeNewForCausalLM"], "model_type": "x", "index_topk": 64}
    assert _rule_status("0.5.23", "SomeNewForCausalLM", odd, "--attention-backend", "dsa") == "unknown"
    # an index_topk in a text sub-config only is not taken for "no DSA model"
    nested = {"architectures": ["LlamaForCausalLM"], "model_type": "y", "text_config": {"index_topk": 64}}
    assert _rule_status("0.5.23", "LlamaForCausalLM", nested, "--attention-backend", "dsa") != "blocked"
    # no attention flag: SGLang picks dsa itself only for a DSA model, which the assertion takes
    assert _rule_status("0.5.23", None, None) == "ok"
    assert _rule_status("0.5.23", "LlamaForCausalLM", llama) == "ok"
    assert _rule_status("0.5.23", None, None, "--attention-backend", "dsa") == "unknown"
    # before 0.5.3 there is no nsa backend (and no such rule)
    assert _rule_status("0.5.2", "LlamaForCausalLM", llama, "--attention-backend", "nsa") == "ok"


# ---- a DSA model below major 10: FlashMLA's sparse prefill (dsa_defaults, attention-dsa-flashmla-sparse) --------


@pytest.mark.parametrize(
    ("cc", "flags", "status"),
    [
        ("8.0", [], "blocked"),  # SGLang's own pick: bfloat16 KV, flashmla_sparse prefill
        ("8.0", ["--attention-backend", "dsa"], "blocked"),
        ("8.6", ["--attention-backend", "nsa"], "blocked"),
        ("8.0", ["--attention-backend", "dsa", "--dsa-prefill-backend", "tilelang"], None),  # given: not this kernel
        ("8.0", ["--attention-backend", "triton"], None),  # another backend: SGLang does not build the DSA one
        ("9.0", [], None),  # Hopper: the kernel runs; not required
    ],
)  # fmt: skip
def test_a_dsa_model_on_ampere_meets_flashmla_sparse(
    tmp_path: Path, cc: str, flags: list[str], status: str | None
) -> None:
    model = model_dir(tmp_path, "v32", DEEPSEEK_V32)
    doc = gate_json(_facts(tmp_path, "0.5.23", cc), "--model-path", str(model), *flags, dry_run=True)
    got = {f["feature"]: f["status"] for f in doc["features"]}.get("attention-dsa-flashmla-sparse")
    assert got == status, doc["features"]
    if status == "blocked":
        assert doc["decision"] == "refuse"
        msg = json.dumps(_reasons(doc, "attention-dsa-flashmla-sparse"))
        assert "only supported on SM90a and SM100f" in msg and "dsa_backend.py" in msg


# ---- MiniCPM SALA: SGLang's own pick of its sparse backends (model_overrides) ------------------------------------

# a MiniCPM SALA config in the shape of the published one (keys the gate reads; sparse_config's values made up)
MINICPM_SALA: dict[str, Any] = {
    "architectures": ["MiniCPMSALAForCausalLM"], "model_type": "minicpm_sala", "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
    "sparse_config": {"kernel_size": 32, "kernel_stride": 16, "block_size": 64, "window_size": 2048, "topk": 64},
}  # fmt: skip


@pytest.mark.parametrize(
    ("cc", "config", "flags", "status"),
    [
        ("12.0", MINICPM_SALA, [], "unknown"),  # minicpm_flashinfer on Blackwell: FA4 path not read
        ("9.0", MINICPM_SALA, [], "blocked"),  # minicpm_flashattn: FA3 on Hopper, InfLLM-V2 on Python 3.10 only
        ("12.0", MINICPM_SALA, ["--attention-backend", "triton"], None),  # a flag given: no override
        ("12.0", {k: v for k, v in MINICPM_SALA.items() if k != "sparse_config"}, [], None),  # no sparse attention
    ],
)  # fmt: skip
def test_minicpm_sala_runs_on_sglangs_own_sparse_pick(
    tmp_path: Path, cc: str, config: dict[str, Any], flags: list[str], status: str | None
) -> None:
    model = model_dir(tmp_path, "sala", config)
    doc = gate_json(_facts(tmp_path, "0.5.23", cc), "--model-path", str(model), *flags, dry_run=True)
    got = {f["feature"]: f["status"] for f in doc["features"]}.get("attention-minicpm-sparse")
    assert got == status, doc["features"]
    if status == "unknown":
        assert doc["decision"] == "refuse"


@pytest.mark.parametrize(("sglang", "cc"), [("0.5.23", "9.0"), ("0.5.19", "8.0")])
def test_minicpm_flashattn_ok_with_python_310(tmp_path: Path, sglang: str, cc: str) -> None:
    """The FA3 path of MiniCPM's sparse backend runs on majors 8 and 9 where sglang-kernel's cp310 InfLLM-V2
    library loads: on Python 3.10."""
    model = model_dir(tmp_path, "llama", LLAMA3)
    facts = _facts(tmp_path, sglang, cc, python="3.10.14")
    doc = gate_json(facts, "--model-path", str(model), "--attention-backend", "minicpm_flashattn", dry_run=True)
    assert _feature(doc, "attention-minicpm-sparse")["status"] == "ok", doc["reasons"]
