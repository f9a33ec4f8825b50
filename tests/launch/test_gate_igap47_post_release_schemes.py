"""igap47: the compressed-tensors rules split at 0.5.3 / 0.5.4 and 0.5.6 / 0.5.7 judged the real post releases
0.5.3.post1-3 and 0.5.6.post1-2 by neither side (`<=0.5.3` and `<=0.5.6` put a post release outside, imend2's
engine rule: unknown). Their wheels (pip download --no-deps, read 2026-12-06) decide it:

- 0.5.3.post1-3: compressed_tensors/compressed_tensors.py differs from 0.5.3's only in packed_modules_mapping's
  default (:89, :100) and the schemes/ folder is 0.5.3's (no compressed_tensors_wNa16.py, which 0.5.4 adds): WNA16
  and FP8 weight-only still need vLLM, as in 0.5.3 (`<0.5.4`);
- 0.5.6.post1-2: schemes/compressed_tensors_w8a8_int8.py still asks 89 (:37-39) and utils.py has no NVFP4 format
  (`<0.5.7`); but compressed_tensors.py's _is_fp8_w8a8 takes BLOCK weights (:317-345, BLOCK at :334) and
  _get_scheme_from_parts falls back below 8.9 to CompressedTensorsW8A16Fp8 (:419, :428), whose create_weights
  raises ValueError for a block strategy (schemes/compressed_tensors_w8a16_fp8.py:104-108): 0.5.7's behaviour
  (`>=0.5.6.post1`).

Before: each case below was unknown (a refusal with no named failure) where SGLang's loader decides it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import gate_checkpoint, quant_rules, quantized


def _args(num_bits: int, kind: str, strategy: str, dynamic: Any = False, **more: Any) -> dict[str, Any]:
    return {"num_bits": num_bits, "type": kind, "strategy": strategy, "symmetric": True, "dynamic": dynamic, **more}


def _ckpt(fmt: str, weights: dict[str, Any], inputs: dict[str, Any] | None) -> dict[str, Any]:
    group: dict[str, Any] = {"targets": ["Linear"], "weights": weights, "input_activations": inputs}
    qc = {"quant_method": "compressed-tensors", "format": fmt, "config_groups": {"group_0": group}}
    return quantized({**qc, "ignore": ["lm_head"], "kv_cache_scheme": None})


def fp8_dynamic() -> dict[str, Any]:
    return _ckpt("float-quantized", _args(8, "float", "channel"), _args(8, "float", "token", True))


def fp8_block() -> dict[str, Any]:
    weights = _args(8, "float", "block", block_structure=[128, 128])
    return _ckpt("float-quantized", weights, _args(8, "float", "group", True, group_size=128))


def w4a16() -> dict[str, Any]:
    return _ckpt("pack-quantized", _args(4, "int", "group", group_size=128, actorder="weight"), None)


def int8_w8a8() -> dict[str, Any]:
    return _ckpt("int-quantized", _args(8, "int", "channel"), _args(8, "int", "token", True))


def nvfp4() -> dict[str, Any]:
    weights = _args(4, "float", "tensor_group", group_size=16)
    return _ckpt("nvfp4-pack-quantized", weights, _args(4, "float", "tensor_group", "local", group_size=16))


@pytest.mark.parametrize(
    ("release", "cc", "config", "expected"),
    [
        # 0.5.3's code: WNA16 and the FP8 fallback below 8.9 need vLLM (not installed on the box): blocked
        ("0.5.3.post1", "8.0", w4a16, {"quant-ct-vllm-schemes": "fail"}),
        ("0.5.3.post3", "8.0", fp8_dynamic, {"quant-ct-fp8-w8a8-vllm": "fail"}),
        # 0.5.6's int8 W8A8 scheme asks 89
        ("0.5.6.post1", "8.0", int8_w8a8, {"quant-ct-int8-w8a8-89": "fail"}),
        ("0.5.6.post2", "8.6", int8_w8a8, {"quant-ct-int8-w8a8-89": "fail"}),
        # 0.5.7's block FP8: W8A8 FP8 from 8.9, the W8A16 fallback below has no block strategy
        ("0.5.6.post1", "8.0", fp8_block, {"quant-ct-fp8-block": "fail"}),
        ("0.5.6.post2", "8.0", fp8_block, {"quant-ct-fp8-block": "fail"}),
        ("0.5.6.post2", "9.0", fp8_block, {}),
        ("0.5.6.post1", "9.0", int8_w8a8, {}),
        # no NVFP4 compressed-tensors scheme before 0.5.7 (read, not run): unknown on every GPU, as 0.5.6
        ("0.5.6.post2", "10.0", nvfp4, {"quant-ct-nvfp4-none": "unknown"}),
        # 0.5.3.post1-3 have no block FP8 scheme either (0.5.3's _is_fp8_w8a8): unknown, as 0.5.3
        ("0.5.3.post2", "9.0", fp8_block, {"quant-ct-fp8-block-none": "unknown"}),
    ],
)
def test_a_post_release_is_judged_by_its_own_code(
    tmp_path: Path, release: str, cc: str, config: Any, expected: dict[str, str]
) -> None:
    doc = gate_checkpoint(tmp_path, release, cc, config())
    got = quant_rules(doc)
    assert got == expected, doc.get("reasons")
    quant = [r for r in doc.get("reasons") or [] if r.get("feature") == "sglang-gpu-min-cc"]
    assert not any("falls between" in str(r) for r in quant), quant
