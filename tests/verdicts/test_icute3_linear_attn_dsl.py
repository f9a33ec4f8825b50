"""icute3 (icute2's leftovers on the CuTe DSL's linear-attention kernels).

1. linear-attn-cutedsl judged only nvidia-cutlass-dsl's own dist-info: a --no-deps install of that wheel without its
   library wheels was ok, though the GDN / KDA kernel module's unguarded `import cutlass` fails then, as attention-fa4's
   cutlass-dsl-libs-* rules say for FA4. The feature now carries the same rules (the 0.5.10-0.5.15 libs-base one as
   cutlass-dsl-libs-base-installed).
2. In the gate, the feature is scoped to launches whose model has linear-attention layers (below)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.types import FeatureVerdict

FEATURE = "linear-attn-cutedsl"
LIBS = ("nvidia-cutlass-dsl-libs-base", "nvidia-cutlass-dsl-libs-core", "nvidia-cutlass-dsl-libs-cu12",
        "nvidia-cutlass-dsl-libs-cu13")  # fmt: skip


def _verdict(sglang: str, dsl: str, libs: dict[str, str]) -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, "10.0x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
        "system": {"machine": "x86_64", "python": "3.12.3"},
    }
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    facts["packages_complete"] = True
    facts["packages"]["nvidia-cutlass-dsl"] = {"installed": True, "version": dsl}
    for name in LIBS:
        facts["packages"][name] = {"installed": True, "version": libs[name]} if name in libs else {"installed": False}
    ctx = Context(facts=facts, manifests=m, launch={"tp": 8, "linear_attn_backend": "cutedsl"})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == FEATURE), ctx)


def _results(v: FeatureVerdict) -> dict[str, str]:
    return {str(r.get("rule")): str(r.get("result")) for r in v["reasons"] if "libs" in str(r.get("rule"))}


@pytest.mark.parametrize(
    ("sglang", "dsl", "libs", "rule"),
    [
        ("0.5.23", "4.8.0", {}, "cutlass-dsl-libs-installed"),
        ("0.5.23", "4.8.0", {"nvidia-cutlass-dsl-libs-cu12": "4.8.0"}, "cutlass-dsl-libs-partial"),
        ("0.5.14", "4.5.2", {}, "cutlass-dsl-libs-base-installed"),
    ],
)
def test_the_dsl_without_its_library_wheels_blocks(sglang: str, dsl: str, libs: dict[str, str], rule: str) -> None:
    # fails before the fix: ok (only nvidia-cutlass-dsl's own dist-info was judged)
    v = _verdict(sglang, dsl, libs)
    assert v["status"] == "blocked", v
    reason = next((dict(r) for r in v["reasons"] if r.get("rule") == rule), None)
    assert reason is not None and reason["result"] == "fail" and reason["effect"] == "crash", v
    assert "linear-attention" in str(reason["message"]) and "FA4" not in str(reason["message"])


def test_a_complete_set_passes() -> None:
    full = {"nvidia-cutlass-dsl-libs-base": "4.8.0", "nvidia-cutlass-dsl-libs-core": "4.8.0",
            "nvidia-cutlass-dsl-libs-cu12": "4.8.0"}  # fmt: skip
    # fails before the fix: the library rules were not there to pass
    v = _verdict("0.5.23", "4.8.0", full)
    assert v["status"] == "ok", v
    results = _results(v)
    assert results.get("cutlass-dsl-libs-installed") == "pass" and results.get("cutlass-dsl-libs-partial") == "pass", v


# 2. The gate judged linear-attn-cutedsl for any model the flags were given with; SGLang builds the GDN / KDA backend,
#    whose kernel dispatcher imports the CuTe DSL module, only for a model whose config class is a hybrid GDN / KDA
#    one (attn_backend_wrapper under mambaish_config). launch.json's model_types_only drops the need where the
#    served model's config.json (and a loaded draft's) was read and states none of those model types.

QWEN3_NEXT = {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "hidden_size": 2048,
              "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
              "torch_dtype": "bfloat16", "vocab_size": 1024, "num_experts": 16, "moe_intermediate_size": 512,
              "num_experts_per_tok": 4, "full_attention_interval": 4}  # fmt: skip
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 1,
         "num_attention_heads": 16, "num_key_value_heads": 4, "intermediate_size": 8192, "torch_dtype": "bfloat16",
         "vocab_size": 1024}  # fmt: skip


def _gate(tmp_path: Path, capsys: pytest.CaptureFixture[str], model: dict[str, Any], *flags: str) -> dict[str, Any]:
    """An in-process `gate --dry-run` on tests/cases/h200-newest (SGLang 0.5.23) whose complete packages list says
    nvidia-cutlass-dsl is not installed; the served model's config.json is `model`."""
    from stackcheck.cli import main

    doc = json.loads((Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json").read_text())
    doc["facts"]["packages_complete"] = True
    doc["facts"]["packages"]["nvidia-cutlass-dsl"] = {"installed": False}
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(doc))
    target = tmp_path / f"model-{len(list(tmp_path.iterdir()))}"
    target.mkdir()
    (target / "config.json").write_text(json.dumps(model))
    capsys.readouterr()
    main(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", "python", "-m",
          "sglang.launch_server", "--model-path", str(target), "--tp", "8", *flags])  # fmt: skip
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def _judged(out: dict[str, Any]) -> list[str]:
    return [str(x.get("rule")) for r in out.get("reasons") or [] if r.get("feature") == FEATURE
            for x in r.get("reasons") or [] if x.get("result") == "fail"]  # fmt: skip


def test_a_model_without_linear_attention_is_not_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # fails before the fix: the dense Llama launch was refused for the DSL it never imports
    out = _gate(tmp_path, capsys, LLAMA, "--linear-attn-prefill-backend", "cutedsl")
    assert (out["decision"], _judged(out)) == ("allow", []), out
    off = f"{FEATURE}: off (--linear-attn-prefill-backend cutedsl"
    assert any(o.startswith(off) for o in out["derived"]["off"]), out["derived"]
    # a hybrid GDN model is judged as before, and so is a config.json that states no model_type (not known: kept)
    out = _gate(tmp_path, capsys, QWEN3_NEXT, "--linear-attn-backend", "cutedsl")
    assert (out["decision"], _judged(out)) == ("refuse", ["cutlass-dsl-installed"]), out
    unstated = {k: v for k, v in LLAMA.items() if k != "model_type"}
    out = _gate(tmp_path, capsys, unstated, "--linear-attn-backend", "cutedsl")
    assert (out["decision"], _judged(out)) == ("refuse", ["cutlass-dsl-installed"]), out
    # a dense target whose loaded draft is a hybrid GDN model: the draft worker builds the backend too
    draft = tmp_path / "draft"
    draft.mkdir()
    (draft / "config.json").write_text(json.dumps(QWEN3_NEXT))
    out = _gate(tmp_path, capsys, LLAMA, "--linear-attn-backend", "cutedsl", "--speculative-algorithm", "EAGLE",
                "--speculative-draft-model-path", str(draft))  # fmt: skip
    assert (out["decision"], _judged(out)) == ("refuse", ["cutlass-dsl-installed"]), out


@pytest.mark.parametrize(
    ("algorithm", "decision"), [("EAGLE", "refuse"), ("NGRAM", "allow")], ids=["loaded-draft-not-read", "ngram"]
)
def test_a_draft_not_read_keeps_the_need_where_it_is_loaded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], algorithm: str, decision: str
) -> None:
    # the scope reads the same models as the architecture scope (gate_preflight.running_models): a draft SGLang
    # loads whose config.json was not read keeps the need (fail closed); NGRAM loads no draft model, so its path is
    # not read at all
    missing = tmp_path / "no-such-draft"
    out = _gate(tmp_path, capsys, LLAMA, "--linear-attn-backend", "cutedsl", "--speculative-algorithm", algorithm,
                "--speculative-draft-model-path", str(missing))  # fmt: skip
    judged = ["cutlass-dsl-installed"] if decision == "refuse" else []
    assert (out["decision"], _judged(out)) == (decision, judged), out


@pytest.mark.registry
@pytest.mark.parametrize("sglang", ["0.5.10", "0.5.23"])
def test_the_model_types_cover_the_wheels_linear_attention_configs(sglang: str) -> None:
    # fails before the fix: no model_types_only. Every config class SGLang's hybrid_gdn_config / kimi_linear_config
    # take (the GDN / KDA backends' models) has its model_type listed
    import re
    import zipfile

    from registry_wheels import fetch_wheel

    with zipfile.ZipFile(fetch_wheel("sglang", sglang)) as z:
        names = z.namelist()
        where = "sglang/srt/configs/hybrid_arch.py"
        body = z.read(where if where in names else "sglang/srt/model_executor/model_runner.py").decode()
        configs = "\n".join(
            z.read(n).decode() for n in names if n.startswith("sglang/srt/configs/") and n.endswith(".py")
        )
    classes: set[str] = set()
    for fn in ("hybrid_gdn_config", "kimi_linear_config"):
        found = re.search(rf"def {fn}\(.*?(?=\n\s*(?:@|def )|\Z)", body, re.S)
        assert found is not None, (sglang, fn)
        classes |= set(re.findall(r"\b([A-Z]\w*Config)\b", found.group(0))) - {"ModelConfig"}
    types = set()
    for name in classes:
        found = re.search(rf"class {name}\(.*?model_type(?:\s*:\s*str)?\s*=\s*\"([^\"]+)\"", configs, re.S)
        assert found is not None, (sglang, name)
        types.add(found.group(1))
    option = next(o for o in load().launch["options"] if o.get("flag") == "--linear-attn-backend")
    listed = {t for e in option["model_types_only"] for t in e["model_types"]}
    assert types and types <= listed, (sglang, types - listed)
