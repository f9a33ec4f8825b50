"""The MLA (DeepSeek family) attention-backend data of launch.json read against the real SGLang wheels (issue 16):
refusals.auto.attention_backend.model_overrides' DeepSeek entries (trtllm_mla on SM100, the DSA backend nsa/dsa
for a config.json with index_topk) and the defaults' MLA entries (fa3 on Hopper, flashinfer on SM100, triton
elsewhere). Each wheel's code is searched for the assignments themselves, so a release that moves or changes them
fails here instead of leaving the gate's data stale."""

from __future__ import annotations

import re
import zipfile
from typing import Any

import pytest
from registry_wheels import fetch_wheel, is_argument_source, read_texts, run_all

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import load

ALL = ["0.5.1", "0.5.1.post3", *[f"0.5.{n}" for n in range(2, 24)]]
DEFAULT = ["0.5.1", "0.5.3", "0.5.4", "0.5.6", "0.5.9", "0.5.12", "0.5.13", "0.5.16", "0.5.19", "0.5.20", "0.5.23"]
THREE = ["--attention-backend", "--prefill-attention-backend", "--decode-attention-backend"]


def _versions() -> list[str]:
    return ALL if run_all() else DEFAULT


def _code(version: str) -> dict[str, str]:
    """server_args.py, arg_groups/**.py, model_runner.py and configs/model_config.py of the wheel."""
    also = ("sglang/srt/model_executor/model_runner.py", "sglang/srt/configs/model_config.py")
    return read_texts(fetch_wheel("sglang", version), lambda name: is_argument_source(name) or name in also)


@pytest.fixture(scope="module")
def auto() -> dict[str, Any]:
    return dict(load([], env={}).launch["refusals"]["auto"]["attention_backend"])


def _names(text: str) -> list[str]:
    return re.findall(r'"([A-Za-z0-9_]+)"', text)


def _enclosing_list(code: str, at: int) -> list[str]:
    """The architectures of the `model_arch in [...]` test or `@_register_for(...)` decorator that encloses `at`."""
    start = max(code.rfind("model_arch in [", 0, at), code.rfind("@_register_for(", 0, at))
    assert start >= 0
    close = "]" if code.startswith("model_arch in [", start) else ")\n"
    return _names(code[start : code.index(close, start)])


def trtllm_mla_override(code: dict[str, str]) -> dict[str, Any] | None:
    """The DeepSeek override's trtllm_mla assignment (not a prefill-only one): its architectures, whether it asks
    all three attention flags unset, and the GPU helper it asks."""
    pat = re.compile(r'(?<!prefill_)attention_backend(?:"\])? = "trtllm_mla"')
    for name, text in sorted(code.items()):
        if "kimi_k3" in name or "serving_hook" in name:
            continue  # Kimi-K3's own split picks and the deprecated-alias renames: other entries
        m = pat.search(text)
        if m is None:
            continue
        before = text[max(0, m.start() - 600) : m.start()]
        return {
            "file": name,
            "architectures": _enclosing_list(text, m.start()),
            "three_flags": all(f"{side}attention_backend is None" in before for side in ("", "prefill_", "decode_")),
            "sm100": bool(re.search(r"is_sm100_supported\(\)|get_platform\(\)\.is_sm100\b", before)),
        }
    return None


def dsa_override(code: dict[str, str]) -> dict[str, Any] | None:
    """The DSA branch: the backend it sets, whether it asks all three flags unset, and the architectures it holds
    for (is_deepseek_nsa/_dsa's list, narrowed to the enclosing DeepSeek block's list where it is nested)."""
    config = code.get("sglang/srt/configs/model_config.py", "")
    m = re.search(r"def is_deepseek_(?:nsa|dsa)\(config[^)]*\)[^:]*:(.*?)\n\n", config, re.S)
    if m is None:
        return None
    assert "index_topk" in m.group(1)
    listed = [n for n in _names(m.group(1)) if n not in ("architectures", "index_topk")]
    pat = re.compile(r'attention_backend(?:"\])? = "(nsa|dsa)"')
    for _name, text in sorted(code.items()):
        hit = pat.search(text)
        if hit is None:
            continue
        before = text[max(0, hit.start() - 400) : hit.start()]
        three = "is_attention_backend_not_set(" in before or all(
            f"{side}attention_backend is None" in before for side in ("", "prefill_", "decode_")
        )
        test = list(re.finditer(r"\n( *)if is_deepseek_(?:nsa|dsa)\(hf_config\)", text[: hit.start()]))[-1]
        block = text.rfind("model_arch in [", 0, test.start())
        line = text.rfind("\n", 0, block)
        indent = len(text[line + 1 : block]) - len(text[line + 1 : block].lstrip())
        defs = max(text.rfind("\n    def ", 0, hit.start()), text.rfind("\ndef ", 0, hit.start()))
        if text.rfind("@_register_for(", 0, hit.start()) > max(block, 0):
            nested = True  # the override function of the registered architectures
        else:
            nested = block > defs and indent < len(test.group(1))
        archs = [a for a in _enclosing_list(text, hit.start()) if a in listed] if nested else listed
        return {"backend": hit.group(1), "three_flags": three, "architectures": archs}
    return None


def mla_default(code: dict[str, str]) -> list[tuple[str, str]]:
    """The MLA branch of the default picker: (condition helper, backend) in order."""
    for name in sorted(code):
        text = code[name]
        at = text.find("# MLA architecture")
        if at < 0:
            continue
        branch = text[at : at + 900]
        pairs = re.findall(
            r"(is_hopper_with_cuda_12_3|is_sm100_supported\(\)|is_sm100\b|is_hip|else)[^\n]*:\s*\n\s*"
            r'(?:server_args\.|self\.)?(?:attention_backend = |return )"(\w+)"',
            branch,
        )
        return [("is_sm100" if h.startswith("is_sm100") else h, b) for h, b in pairs]
    return []


def _entries(auto: dict[str, Any], version: str, **match: Any) -> list[dict[str, Any]]:
    return [
        e
        for e in auto["model_overrides"]
        if version_in(version, e["versions"]) is True and all(e.get(k) == v for k, v in match.items())
    ]


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_deepseek_overrides_are_what_the_wheel_sets(auto: dict[str, Any], version: str) -> None:
    code = _code(version)
    read = trtllm_mla_override(code)
    ours = [e for e in _entries(auto, version) if any(p.get("backend") == "trtllm_mla" for p in e["picks"])]
    if read is None:
        assert ours == [], version  # 0.5.1-0.5.3: no DeepSeek override; the default picker decides
    else:
        assert read["three_flags"] and read["sm100"], (version, read)
        assert len(ours) == 1, version
        entry = ours[0]
        assert entry["architectures"] == read["architectures"], version
        assert entry["unless_flags"] == THREE and entry["otherwise"] is None
        assert entry["picks"] == [{"majors": [10], "torch_cuda_min": "12.8", "backend": "trtllm_mla"}]
        assert any(f"sglang {version} wheel" in s["title"] for s in entry["source"]) or version not in (
            "0.5.4",
            "0.5.23",
        )
    dsa = dsa_override(code)
    keyed = _entries(auto, version, config_keys=["index_topk"])
    if dsa is None:
        assert keyed == [], version
        return
    assert len(keyed) == 1, version
    assert dsa["three_flags"], version
    assert keyed[0]["otherwise"] == dsa["backend"] and keyed[0]["picks"] == [], version
    assert keyed[0]["architectures"] == dsa["architectures"], version
    assert keyed[0]["unless_flags"] == THREE
    # the DSA entry comes first: the gate takes the first entry that matches a model
    overrides = auto["model_overrides"]
    if ours:
        assert overrides.index(keyed[0]) < overrides.index(ours[0])


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_mla_defaults_are_what_the_wheel_picks(auto: dict[str, Any], version: str) -> None:
    picked = mla_default(_code(version))
    assert picked[:2] == [("is_hopper_with_cuda_12_3", "fa3"), ("is_sm100", "flashinfer")], (version, picked)
    assert picked[-1] == ("else", "triton"), (version, picked)
    mla = {
        e["feature"]: e
        for e in auto["defaults"]
        if e.get("model") == "mla" and version_in(version, e["versions"]) is True and not e.get("when_flags")
    }  # the default picker's entries (those with when_flags are deterministic inference's fallback)
    assert sorted(mla) == ["attention-fa3", "attention-flashinfer", "attention-triton"], version
    assert (mla["attention-fa3"]["majors"], mla["attention-fa3"]["torch_cuda_min"]) == ([9], "12.3")
    assert (mla["attention-flashinfer"]["majors"], mla["attention-flashinfer"]["torch_cuda_min"]) == ([10], "12.8")
    assert set(mla["attention-triton"]["majors"]).isdisjoint({9, 10})


def _rewrites_v32(version: str) -> bool:
    """Whether the wheel reloads a deepseek_v32 config as DeepseekV3ForCausalLM (its _load_deepseek_v32_model)."""
    with zipfile.ZipFile(fetch_wheel("sglang", version)) as z:
        for name in z.namelist():
            if name.startswith("sglang/srt/utils/") and name.endswith(".py"):
                text = z.read(name).decode("utf-8", "replace")
                if "def _load_deepseek_v32_model" in text and (
                    'config_json["architectures"] = ["DeepseekV3ForCausalLM"]' in text
                ):
                    return True
    return False


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_deepseek_v32_alias_is_what_the_wheel_reloads(auto: dict[str, Any], version: str) -> None:
    aliases = [a for a in auto["architecture_aliases"] if version_in(version, a["versions"]) is True]
    if _rewrites_v32(version):
        got = [(a["model_type"], a["architecture"]) for a in aliases]
        assert got == [("deepseek_v32", "DeepseekV3ForCausalLM")], version
    else:
        assert aliases == [], version


@pytest.mark.registry
def test_the_pinned_transformers_does_not_know_deepseek_v32() -> None:
    """The alias holds because AutoConfig refuses model_type deepseek_v32 in the transformers the releases pin
    (0.5.9: 4.57.1; 0.5.11: 5.6.0), which is what sends SGLang to its reload."""
    for pin in ("4.57.1", "5.6.0"):
        with zipfile.ZipFile(fetch_wheel("transformers", pin)) as z:
            names = z.namelist()
            auto_map = "".join(  # 5.x moved the model_type table to auto_mappings.py
                z.read(n).decode() for n in names if n.startswith("transformers/models/auto/") and n.endswith(".py")
            )
        assert '"deepseek_v3"' in auto_map and "deepseek_v32" not in auto_map, pin
        assert not any("deepseek_v32" in n for n in names), pin


def _dsa_picker(code: dict[str, str]) -> str | None:
    """The body of the function that picks a DSA model's prefill/decode kernels when none is given."""
    pat = re.compile(r"\n( *)def (_set_default_(?:nsa|dsa)_backends|_dsa_split_backend_resolution)\(")
    bodies: list[str] = []
    for text in code.values():
        for m in pat.finditer(text):
            end = re.search(rf"\n {{0,{len(m.group(1))}}}(?:def |@|class )", text[m.end() :])
            body = text[m.end() : m.end() + (end.start() if end else len(text))]
            if '"trtllm"' in body or '"flashmla_kv"' in body:
                bodies.append(body)
    return bodies[0] if bodies else None


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_dsa_kernel_defaults_are_what_the_wheel_picks(auto: dict[str, Any], version: str) -> None:
    """launch.json dsa_defaults against the wheel's own picker: trtllm on major >= 10 for the FP8 KV cache (each
    side the user did not set; 0.5.10 without asking) and for bfloat16 decode; the default KV cache FP8 there; the
    hisparse, GLM-5 SM12 and learnable-sink ways out where the wheel has them."""
    code = _code(version)
    body = _dsa_picker(code)
    entries = [e for e in auto["dsa_defaults"] if version_in(version, e["versions"]) is True]
    # the trtllm entries (FlashMLA's: tests/launch/test_gate_factcheck9_registry.py)
    entries = [e for e in entries if e["feature"] == "attention-dsa-trtllm"]
    # the entry under --dcp-size > 1 comes from the DSA DCP model override (0.5.22+), not from this picker
    dcp = [e for e in entries if "dcp_size_above" in e]
    entries = [e for e in entries if "dcp_size_above" not in e]
    override = code.get("sglang/srt/arg_groups/model_overrides/deepseek_v2.py", "")
    dcp_trtllm = re.search(r"def _dsa_dcp_overrides\(", override) is not None and '"trtllm"' in override
    assert bool(dcp) == dcp_trtllm, version
    if body is None or '"trtllm"' not in body:
        assert entries == [], version  # no trtllm DSA kernel picked (0.5.8 and before)
        return
    assert len(entries) == 1, version
    entry = entries[0]
    assert entry["feature"] == "attention-dsa-trtllm" and entry["majors"] == [10, 11, 12], version
    flat = re.sub(r"\s+", " ", body)
    fp8 = flat[flat.index('kv_cache_dtype == "fp8_e4m3"') :]
    fp8_branch = fp8[: fp8.index("else:")] if "else:" in fp8 else fp8
    fp8_trtllm = '"trtllm"' in fp8_branch and "major >= 10" in fp8_branch
    clauses = entry["when_any"]
    fp8_clause = [c for c in clauses if c.get("kv_cache_dtype_not_in") == ["bf16", "bfloat16"]]
    assert bool(fp8_clause) == fp8_trtllm, version
    if fp8_trtllm:
        guarded = "not user_set_prefill" in fp8_branch[: fp8_branch.index('"trtllm"')] or (
            'default = "trtllm"' in fp8_branch and "if not user_set_prefill" in fp8_branch
        )
        assert bool(fp8_clause[0].get("flags_absent")) == guarded, version
    # bfloat16: decode to trtllm on major >= 10 unless the decode flag is given
    assert re.search(r'(?:dsa|nsa)_decode_backend"?\]? = "trtllm"|"trtllm" if major >= 10 else "fa3"', flat), version
    decode = [c for c in clauses if set(c.get("flags_absent") or []) & {"--nsa-decode-backend", "--dsa-decode-backend"}]
    assert decode, version
    assert ("hisparse" in flat) == ("--enable-hisparse" in entry.get("unless_flags", [])), version
    assert ("is_glm_sm12_fp8" in flat) == bool(entry.get("except")), version
    assert ('"learnable_sink"' in flat) == ("learnable_sink" in entry.get("unless_config_true", [])), version
    # the KV cache dtype SGLang defaults to for a DSA model on major >= 10 is FP8 (what the clauses assume)
    kv = "".join(code.values())
    assert re.search(r'"fp8_e4m3" if major >= 10', kv) or re.search(
        r"if major >= 10:\s*\n\s*\S*kv_cache_dtype = \"fp8_e4m3\"", kv
    )


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.5.1", "0.5.1.post3", "0.5.2", "0.5.3", "0.5.4", "0.5.5"])
def test_the_mla_backend_list_is_what_the_model_runner_checks(version: str) -> None:
    """launch.json refusal mla-attention-backend: the backends ModelRunner accepts for an MLA model's explicit
    --attention-backend (0.5.1-0.5.2 inline, 0.5.3-0.5.4 MLA_ATTENTION_BACKENDS) and the architectures
    configs/model_config.py makes MLA unconditionally (DeepseekVL2's use_mla branch left out)."""
    rule = next(r for r in load([], env={}).launch["refusals"]["rules"] if r["id"] == "mla-attention-backend")
    entry = next(e for e in rule["releases"] if version_in(version, e["versions"]) is True)
    code = _code(version)
    runner = code["sglang/srt/model_executor/model_runner.py"]
    at = runner.find("Invalid attention backend for MLA")
    assert (at >= 0) is entry["applies"], version
    if at < 0:
        return
    block = runner[runner.rfind("elif self.use_mla_backend", 0, at) : at]
    if "MLA_ATTENTION_BACKENDS" in block:
        start = runner.index("MLA_ATTENTION_BACKENDS = [")
        block = runner[start : runner.index("]", start)]
    listed = sorted(n for n in _names(block) if n != "cpu")
    assert listed == entry["model_backend"]["allowed"], version
    config = code["sglang/srt/configs/model_config.py"]
    mla: list[str] = []
    for m in re.finditer(r"self\.attention_arch = AttentionArch\.MLA", config):
        branch = config[
            max(config.rfind("\n        if ", 0, m.start()), config.rfind("\n        elif ", 0, m.start())) : m.start()
        ]
        if "use_mla" not in branch:
            mla += re.findall(r'"(\w+)" in self\.hf_config\.architectures', branch)
    assert sorted(mla) == sorted(entry["model_backend"]["architectures"]), version


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.5.19", "0.5.21", "0.5.22", "0.5.23"])
def test_the_exaone_override_is_what_the_wheel_picks(auto: dict[str, Any], version: str) -> None:
    """launch.json's Exaone model override: present exactly where exaone.py sets attention_backend, guarded by
    attention_backend alone, trtllm_mha on is_sm100, fa3 on device_sm >= 80, else triton."""
    code = _code(version)
    text = code.get("sglang/srt/arg_groups/model_overrides/exaone.py", "")
    entries = [e for e in _entries(auto, version) if "Exaone4ForCausalLM" in e["architectures"]]
    picks = re.findall(r'overrides\["attention_backend"\] = "(\w+)"', text)
    assert bool(picks) == bool(entries), version
    if not picks:
        return
    entry = entries[0]
    m = re.search(r"@_register_for\(([^)]*)\)", text)
    assert m is not None and _names(m.group(1)) == entry["architectures"], version
    assert "resolving_view(server_args).attention_backend is None" in text and entry["unless_flags"] == [
        "--attention-backend"
    ]
    assert "is_sm100" in text and "device_sm >= 80" in text, version
    assert picks == [p["backend"] for p in entry["picks"]] + [entry["otherwise"]], version
