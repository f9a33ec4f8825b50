"""The intel_amx and wave attention backends on an NVIDIA box (launch.json refusals intel-amx-attention-backend-on-cuda
and wave-attention-backend-on-cuda). SGLang 0.5.1-0.5.23 accept both at argument parsing on CUDA and fail when the
model runner creates the backend: IntelAMXAttnBackend looks up torch.ops.sgl_kernel.decode_attention_cpu, an op only
sgl-kernel's CPU build registers (AttributeError); WaveAttnBackend imports its wave_ops kernels, which import the ROCm
package wave_lang (ModuleNotFoundError). The gate let both through before. aiter has its own rule
(aiter-attention-backend-on-cuda, from the eleventh fact-check sample): its module guards the aiter imports with
try/except ImportError and its __init__ uses none of them, so it fails at the first forward pass (inferred)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, config_rule_status, gate_json
from registry_wheels import fetch_wheel, read_texts, run_all

from stackcheck.knowledge.loader import load
from stackcheck.launch.refusals import backends_not_running

ROOT = Path(__file__).resolve().parent.parent.parent
AMX = "intel-amx-attention-backend-on-cuda"
WAVE = "wave-attention-backend-on-cuda"
RULES = {"intel_amx": AMX, "wave": WAVE}


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


@pytest.mark.parametrize("backend", ["intel_amx", "wave"])
@pytest.mark.parametrize("version", ["0.5.1", "0.5.2", "0.5.3", "0.5.9", "0.5.15", "0.5.23"])
@pytest.mark.parametrize(
    "where",
    [
        ["--attention-backend"],
        ["--prefill-attention-backend"],
        ["--attention-backend", "fa3", "--decode-attention-backend"],
    ],
)
def test_refused_in_every_release(mapping: dict[str, Any], backend: str, version: str, where: list[str]) -> None:
    for majors in ({8}, {9}, {10}, {12}, None):
        status = config_rule_status(mapping, RULES[backend], version, majors, LLAMA3, *where, backend)
        assert status == "blocked", (version, majors)


@pytest.mark.parametrize("version", ["0.5.1", "0.5.9", "0.5.23"])
def test_other_backends_and_sglangs_own_pick_are_not_touched(mapping: dict[str, Any], version: str) -> None:
    for flags in ([], ["--attention-backend", "fa3"], ["--prefill-attention-backend", "triton"],
                  ["--attention-backend", "aiter"]):  # fmt: skip
        for rule in (AMX, WAVE):
            assert config_rule_status(mapping, rule, version, {9}, LLAMA3, *flags) == "ok", (rule, flags)
            assert config_rule_status(mapping, rule, version, None, None, *flags) == "ok", (rule, flags)


def test_advice_leaves_them_out(mapping: dict[str, Any]) -> None:
    out = backends_not_running(mapping, {})
    assert {"intel_amx", "wave"} <= set(out)
    assert "aiter" in out  # a ROCm backend (other_platforms), refused by aiter-attention-backend-on-cuda


def test_gate_end_to_end_refuses_with_the_source() -> None:
    facts = ROOT / "tests" / "recommend" / "seed-after" / "facts.json"  # SM120, SGLang 0.5.23
    for backend, rule in RULES.items():
        doc = gate_json(facts, "--attention-backend", backend, dry_run=True)
        assert doc["decision"] == "refuse"
        hits = [r for r in doc["reasons"] if rule in str(r.get("subject") or r.get("feature") or "")]
        assert hits, doc["reasons"]
        assert "pypi.org/project/sglang" in str(hits[0])


# ---- the data against the real wheels ---------------------------------------------------------------------

ALL = [f"0.5.{n}" for n in range(1, 24)]
DEFAULT = ["0.5.1", "0.5.3", "0.5.9", "0.5.15", "0.5.23"]
_MODULES = (
    "sglang/srt/layers/attention/intel_amx_backend.py",
    "sglang/srt/layers/attention/wave_backend.py",
    "sglang/srt/layers/attention/wave_ops/decode_attention.py",
)


@pytest.mark.registry
@pytest.mark.parametrize("version", ALL if run_all() else DEFAULT)
def test_the_modules_fail_on_a_cuda_install(version: str) -> None:
    texts = read_texts(fetch_wheel("sglang", version), lambda n: n in _MODULES)
    amx, wave, wave_ops = (texts[name] for name in _MODULES)
    init = amx[amx.index("def __init__") :]
    init = init[: init.index("\n    def ", 1)]
    assert "torch.ops.sgl_kernel.decode_attention_cpu" in init
    wave_init = wave[wave.index("def __init__") :]
    assert "wave_ops.decode_attention import" in wave_init[: wave_init.index("super().__init__()")]
    assert re.search(r"^from wave_lang\.", wave_ops, re.M)


@pytest.mark.registry
@pytest.mark.parametrize(("dist", "version"), [("sgl-kernel", "0.3.21"), ("sglang-kernel", "0.4.10")])
def test_the_cuda_kernel_wheels_register_no_cpu_attention_ops(dist: str, version: str) -> None:
    import zipfile

    with zipfile.ZipFile(fetch_wheel(dist, version)) as zf:
        names = [n for n in zf.namelist() if n.startswith("sgl_kernel/") and n.endswith((".so", ".py"))]
        assert any(n.endswith(".so") for n in names)
        for name in names:
            data = zf.read(name)
            assert b"decode_attention_cpu" not in data and b"extend_attention_cpu" not in data, name
            if "common_ops" in name:
                assert b"merge_state_v2" in data  # the way op names appear in the library: the check reads them
