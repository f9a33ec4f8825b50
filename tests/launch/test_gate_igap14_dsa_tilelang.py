"""The tilelang DSA backend against the KV cache on CUDA (launch.json refusals dsa-tilelang-fp8-kv-cuda, SGLang
0.5.17-0.5.21, and dsa-tilelang-fp8-kv-mixed, 0.5.22-0.5.23).

SGLang's DSA overrides default a DSA model's KV cache to fp8_e4m3 on a GPU of major >= 10, fill the DSA side not
given, then check the pair: 0.5.17-0.5.21 refuse tilelang with an FP8 KV cache on CUDA (sglang 0.5.17
arg_groups/overrides.py:1554-1575), 0.5.22-0.5.23 only tilelang on one side (0.5.23 overrides.py:550-583). A DSA
flag on a model that is no DSA model is ignored there (the overrides return at once), and the gate lets it be.
The configs are the test helpers' DeepSeek V3.2 and Llama 3 shapes. On the parent 7 of these fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_V32, LLAMA3, gate_checkpoint, reason_status

CUDA = "refusal dsa-tilelang-fp8-kv-cuda"
MIXED = "refusal dsa-tilelang-fp8-kv-mixed"


def _status(tmp_path: Path, release: str, cc: str, config: dict[str, Any], *flags: str) -> dict[str, Any]:
    return reason_status(gate_checkpoint(tmp_path, release, cc, config, *flags))


@pytest.mark.parametrize(
    ("release", "cc", "rule", "flags"),
    [
        ("0.5.19", "10.0", CUDA, ["--dsa-prefill-backend", "tilelang", "--dsa-decode-backend", "tilelang"]),
        ("0.5.17", "9.0", CUDA, ["--nsa-decode-backend", "tilelang", "--kv-cache-dtype", "fp8_e4m3"]),
        ("0.5.21", "10.0", CUDA, ["--dsa-decode-backend=tilelang", "--kv-cache-dtype", "auto"]),
        ("0.5.23", "10.0", MIXED, ["--dsa-prefill-backend", "tilelang"]),  # decode filled with trtllm
        ("0.5.22", "9.0", MIXED, ["--dsa-decode-backend", "tilelang", "--kv-cache-dtype", "fp8_e4m3"]),
        ("0.5.23", "10.0", MIXED, ["--dsa-prefill-backend", "tilelang", "--dsa-decode-backend", "trtllm"]),
    ],
)
def test_tilelang_with_fp8_kv_refused(tmp_path: Path, release: str, cc: str, rule: str, flags: list[str]) -> None:
    # fails on the parent: allowed; SGLang raises ValueError while it reads its arguments
    status = _status(tmp_path, release, cc, DEEPSEEK_V32, *flags)
    assert status.get(rule) == ("blocked", "crash"), status


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags"),
    [
        ("0.5.19", "9.0", DEEPSEEK_V32, ["--dsa-prefill-backend", "tilelang"]),  # bfloat16 KV by default on Hopper
        ("0.5.19", "10.0", DEEPSEEK_V32, ["--dsa-prefill-backend", "tilelang", "--kv-cache-dtype", "bfloat16"]),
        ("0.5.23", "10.0", DEEPSEEK_V32, ["--dsa-prefill-backend", "tilelang", "--dsa-decode-backend", "tilelang"]),
        ("0.5.23", "10.0", DEEPSEEK_V32, ["--dsa-prefill-backend", "tilelang", "--enable-hisparse"]),  # not judged
        ("0.5.16", "10.0", DEEPSEEK_V32, ["--dsa-prefill-backend", "tilelang"]),  # no such check before 0.5.17
        ("0.5.23", "10.0", LLAMA3, ["--dsa-prefill-backend", "tilelang"]),  # no DSA model: SGLang ignores the flag
        ("0.5.19", "10.0", LLAMA3, ["--dsa-decode-backend", "tilelang", "--kv-cache-dtype", "fp8_e4m3"]),
    ],
)
def test_other_tilelang_launches_not_refused_so(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: list[str]
) -> None:
    status = _status(tmp_path, release, cc, config, *flags)
    assert CUDA not in status and MIXED not in status, status


def test_dsa_flag_on_another_model_allowed(tmp_path: Path) -> None:
    # passes on the parent too: the split-backend flags on a model SGLang does not run as DSA are ignored
    doc = gate_checkpoint(tmp_path, "0.5.23", "10.0", LLAMA3, "--dsa-prefill-backend", "tilelang")
    assert doc["decision"] == "allow", doc["reasons"]


def test_gpu_not_read_is_unknown(tmp_path: Path) -> None:
    # the KV cache SGLang picks depends on the GPU major: with no GPU read the launch is unknown, never ok
    import json

    from gate_cli import cli_json, model_dir, release_box

    box = release_box(tmp_path, "0.5.20", "10.0")
    doc = json.loads(box.read_text())
    doc["facts"]["gpus"] = []
    box.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", DEEPSEEK_V32)),
            "--tp", "8", "--dsa-prefill-backend", "tilelang"]  # fmt: skip
    out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]
    assert out["decision"] != "allow" and reason_status(out).get(CUDA, ("",))[0] == "unknown", out["reasons"]
