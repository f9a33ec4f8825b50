"""stackcheck triage: root cause, secondary failures, signatures, streaming edge cases."""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import sys
import tracemalloc
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from stackcheck.commands import triage
from stackcheck.errors import BadInputError
from stackcheck.launch.triage import (
    _BASE_NEEDLES,
    LINE_CAP,
    TriageReport,
    TriageResult,
    load_signatures,
    result_json,
    triage_file,
    triage_stream,
    triage_with_plan,
)
from stackcheck.render import TRIAGE_FORMATS
from stackcheck.render.interface import RenderOptions
from stackcheck.render.triage import render_text

_BASE_NEEDLE = re.compile("|".join(re.escape(n) for n in _BASE_NEEDLES))


def render_json(result: TriageResult) -> str:
    """The JSON format of a triage without facts, as `stackcheck triage --format json` writes it."""
    return TRIAGE_FORMATS["json"](TriageReport(result), RenderOptions())


LOGS = Path(__file__).parent.parent / "data" / "logs"
ROOT = Path(__file__).parent.parent.parent


def tri(name: str):  # type: ignore[no-untyped-def]
    return triage_file(LOGS / name)


def tri_bytes(data: bytes, chunk_size: int = 4 * 1024 * 1024):  # type: ignore[no-untyped-def]
    return triage_stream(io.BytesIO(data), "<mem>", chunk_size=chunk_size)


# ---------------------------------------------------------------------------------------------- signatures


def test_signatures_validate_against_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from referencing import Registry, Resource

    schemas = {p.name: json.loads(p.read_text()) for p in (ROOT / "schemas").glob("*.schema.json")}
    schema = schemas["signatures.schema.json"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == "https://stackcheck.dev/schemas/signatures.schema.json"
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values() if "$id" in s)
    validator = jsonschema.Draft202012Validator(schema, registry=registry)
    doc = json.loads((ROOT / "manifests" / "signatures.json").read_text())
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]
    assert errors == []


def test_shipped_signatures_load_through_importlib_resources() -> None:
    text = (resources.files("stackcheck.manifests") / "signatures.json").read_text(encoding="utf-8")
    ids = [s["id"] for s in json.loads(text)["signatures"]]
    assert len(ids) == len(set(ids))
    assert [s.id for s in load_signatures()] == ids


def test_every_signature_matches_its_examples_and_literal() -> None:
    doc = json.loads((ROOT / "manifests" / "signatures.json").read_text())
    for item in doc["signatures"]:
        assert item.get("examples"), item["id"]
        for ex in item["examples"]:
            assert re.search(item["pattern"], ex["text"]), (item["id"], ex["text"])
            if item.get("literal"):
                # the literal is the prefilter's way in for matches without a base needle: an example either
                # holds it or holds a base needle (test_the_prefilter_lets_every_signature_example_through)
                assert item["literal"] in ex["text"] or _BASE_NEEDLE.search(ex["text"]), item["id"]
            if item.get("where"):
                assert re.search(item["where"], ex["file"]), item["id"]
            if item.get("where_function"):
                assert re.search(item["where_function"], ex["function"]), item["id"]


def test_required_signatures_present() -> None:
    sigs = {s.id: s for s in load_signatures()}
    texts = {
        "torch-symm-mem-keyerror": "KeyError: 11",
        "torch-symm-mem-unsupported-cc": "TorchSymmMemCommunicator: Device capability 12 not supported, x",
        "flashinfer-allreduce-fusion-jit-arch": "No supported CUDA architectures found for major versions [9, 10].",
        "no-kernel-image": "CUDA error: no kernel image is available for execution on the device",
        "torch-arch-not-compatible": (
            "GPU with CUDA capability sm_120 is not compatible with the current PyTorch installation."
        ),
        "attention-fa3-arch": "FlashAttention v3 Backend requires SM>=80 and SM<=90.",
        "nvrtc-missing": "libnvrtc.so.12: cannot open shared object file: No such file or directory",
        "extension-undefined-symbol": "common_ops.abi3.so: undefined symbol: _ZN3c10",
        "deepgemm-unknown-recipe": "Assertion error (layout.hpp:56): Unknown recipe",
        "nccl-unhandled-cuda": "ncclUnhandledCudaError: Call to CUDA function failed.",
        "nccl-internal": "ncclInternalError: Internal check failed.",
        "nccl-warn": "NCCL WARN Cuda failure",
        "cuda-oom": "torch.OutOfMemoryError: CUDA out of memory.",
        "flashinfer-allreduce-fusion-sm-gate": "FlashInfer allreduce fusion requires SM90 or SM10X NVIDIA GPUs.",
        "attention-trtllm-mha-sm100": "TRTLLM MHA backend is only supported on Blackwell GPUs (SM100).",
    }
    for sid, text in texts.items():
        assert sigs[sid].pattern.search(text), sid


# ---------------------------------------------------------------------------------------------- sample logs


def test_writeup_case_symm_mem_keyerror() -> None:
    r = tri("symm_mem_keyerror.log")
    rc = r.root_cause
    assert rc is not None
    assert rc.text == "KeyError: 12"
    assert rc.signature is not None and rc.signature.id == "torch-symm-mem-keyerror"
    assert r.feature == "torch-symm-mem"
    assert rc.stream == "TP3" and rc.line == 12
    assert rc.innermost is not None
    assert rc.innermost.file.endswith("device_communicators/torch_symm_mem.py") and rc.innermost.line == 58
    assert any(f.function == "__init__" and "parallel_state" in f.file for f in rc.parts[0].frames)
    assert sorted(r.also_in) == ["TP0", "TP1", "TP2", "TP4", "TP5", "TP6", "TP7"]
    reasons = [e.secondary for e in r.secondary]
    assert reasons == ["child-failed", "child-failed", "signal", "logging-error"]
    last = r.secondary[-1]
    assert last.logged_message and "sigquit" in last.logged_message
    text = render_text(r)
    assert text.index("KeyError: 12") < text.index("secondary failures: 4")
    assert "torch_symm_mem.py:58" in text and "log line 12" in text and "--enable-torch-symm-mem" in text


def test_chained_capture_cuda_graph_root_is_original() -> None:
    r = tri("flashinfer_fusion_cuda_graph.log")
    rc = r.root_cause
    assert rc is not None
    assert rc.text.startswith("RuntimeError: No supported CUDA architectures found for major versions [9, 10]")
    assert rc.innermost is not None and rc.innermost.file.endswith("flashinfer/compilation_context.py")
    assert len(rc.parts) == 2 and rc.parts[1].relation == "context"
    outer = rc.parts[1].exception
    assert outer is not None and outer.startswith("Exception: Capture cuda graph failed")
    assert rc.signature is not None and rc.signature.feature == "flashinfer-allreduce-fusion"
    assert [e.secondary for e in r.secondary] == ["signal", "killed"]


def test_no_kernel_image() -> None:
    rc = tri("no_kernel_image.log").root_cause
    assert rc is not None and rc.signature is not None and rc.signature.id == "no-kernel-image"
    assert rc.parts[0].message_lines[0].startswith("CUDA kernel errors might be")


def test_sm120_warning_is_root_before_later_runtime_error() -> None:
    r = tri("sm120_torch_not_compatible.log")
    rc = r.root_cause
    assert rc is not None and rc.signature is not None and rc.signature.id == "torch-arch-not-compatible"
    assert r.feature == "torch-cuda-arch"
    assert any(e.signature and e.signature.id == "no-kernel-image" and e.stream == "TP1" for e in r.errors)


def test_oom() -> None:
    rc = tri("oom.log").root_cause
    assert rc is not None and rc.signature is not None and rc.signature.id == "cuda-oom"
    assert rc.exception_type == "OutOfMemoryError"


def test_nccl() -> None:
    r = tri("nccl.log")
    assert r.root_cause is not None and r.root_cause.signature is not None
    assert r.root_cause.signature.id == "nccl-warn"
    assert any(e.signature and e.signature.id == "nccl-unhandled-cuda" for e in r.errors)


def test_unknown_error_is_shown_plainly() -> None:
    r = tri("unknown_error.log")
    rc = r.root_cause
    assert rc is not None and rc.signature is None and rc.exception_type == "ValueError"
    text = render_text(r)
    assert "FancyNewForCausalLM" in text and "unknown error" in text
    assert result_json(r)["root_cause"]["signature"] is None  # type: ignore[index]


def test_clean_log() -> None:
    r = tri("clean.log")
    assert r.root_cause is None and r.errors == [] and r.secondary == []
    assert "no errors found" in render_text(r)
    assert r.lines_read == 88


def test_interleaved_processes_do_not_mix() -> None:
    r = tri("interleaved.log")
    rc = r.root_cause
    assert rc is not None and rc.stream == "TP1 pid=202" and rc.text == "KeyError: 12"
    assert rc.innermost is not None and rc.innermost.file.endswith("torch_symm_mem.py")
    other = [e for e in r.errors if e.stream == "TP0 pid=201"]
    assert len(other) == 1 and other[0].text.startswith("ValueError: unexpected message")
    assert all("symm_mem" not in f.file for f in other[0].parts[0].frames)


def test_only_secondary_failures_means_no_root_cause() -> None:
    data = (LOGS / "symm_mem_keyerror.log").read_bytes()
    tail = data[data.index(b"[2026-01-02 10:00:11] Rank 0") :]
    r = tri_bytes(tail)
    assert r.root_cause is None and len(r.secondary) == 4
    assert "no root cause in this log" in render_text(r)


def test_known_signature_preferred_over_unknown_at_same_time() -> None:
    log = (
        "[2026-01-02 10:00:11 TP1] RuntimeError: something unrelated broke\n"
        "[2026-01-02 10:00:12 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/x/device_communicators/torch_symm_mem.py", line 58, in __init__\n'
        "KeyError: 12\n"
        "[2026-01-02 10:09:00 TP2] RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    )
    r = tri_bytes(log.encode())
    assert r.root_cause is not None and r.root_cause.stream == "TP0"
    later = log.replace("10:00:12 TP0", "10:05:00 TP0")
    r2 = tri_bytes(later.encode())
    assert r2.root_cause is not None and r2.root_cause.stream == "TP1" and r2.root_cause.signature is None


def test_warning_signature_never_root() -> None:
    log = (
        "[2026-01-02 10:00:01 TP0] TorchSymmMemCommunicator: Device capability 12 not supported, "
        "communicator is not available.\n[2026-01-02 10:00:02 TP0] Decode batch. #running-req: 1\n"
    )
    r = tri_bytes(log.encode())
    assert r.root_cause is None and len(r.warnings) == 1
    assert r.warnings[0].signature is not None and r.warnings[0].signature.id == "torch-symm-mem-unsupported-cc"


def test_where_restricts_keyerror_signature() -> None:
    log = 'Traceback (most recent call last):\n  File "/app/config.py", line 3, in get\nKeyError: 12\n'
    rc = tri_bytes(log.encode()).root_cause
    assert rc is not None and rc.signature is None


# ---------------------------------------------------------------------------------------------- output & CLI


def test_json_output_shape() -> None:
    r = tri("symm_mem_keyerror.log")
    doc = json.loads(render_json(r))
    assert doc["schema_version"] == 1
    assert set(doc) >= {"schema_version", "log", "root_cause", "secondary", "errors", "lines_read", "bytes_read"}
    rc = doc["root_cause"]
    assert rc["exception"] == "KeyError: 12" and rc["file_line"] == 58 and rc["line"] == 12
    assert rc["feature"] == "torch-symm-mem" and rc["signature"]["fix"].startswith("run without")
    assert doc["bytes_read"] == (LOGS / "symm_mem_keyerror.log").stat().st_size
    assert doc["lines_read"] == 261


def _args(**kw: object) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    triage.add_arguments(parser)
    argv = [str(kw.pop("log"))]
    for k, v in kw.items():
        argv += [f"--{k}", str(v)]
    return parser.parse_args(argv)


def test_cmd_run_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert triage.run(_args(log=LOGS / "oom.log")) == 0
    assert "cuda-oom" in capsys.readouterr().out
    assert triage.run(_args(log=LOGS / "clean.log", format="json", facts="ignored.json")) == 0
    assert json.loads(capsys.readouterr().out)["root_cause"] is None


def test_cmd_unreadable_file_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInputError) as exc:
        triage.run(_args(log=tmp_path / "missing.log"))
    assert exc.value.exit_code == 2 and "missing.log" in exc.value.message
    with pytest.raises(BadInputError):
        triage.run(_args(log=tmp_path))


def test_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    data = (LOGS / "oom.log").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert triage.run(_args(log="-", format="json")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["log"] == "<stdin>" and doc["root_cause"]["signature"]["id"] == "cuda-oom"


def test_triage_with_plan_hook() -> None:
    """The plan's shape: steps with `unblocks`, and `still_blocked` entries (stackcheck.plan.make_plan)."""
    r = tri("symm_mem_keyerror.log")
    plan = {
        "steps": [
            {"component": "driver", "unblocks": []},
            {"component": "sglang", "from": "0.5.9", "to": "0.5.23", "unblocks": ["deepgemm", "torch-symm-mem"]},
        ],
        "still_blocked": [],
    }
    step = triage_with_plan(r, plan)
    assert step is not None and step["step"] == 2 and step["component"] == "sglang"
    blocked = {"steps": [], "still_blocked": [{"feature": "torch-symm-mem", "why": "no key 12"}]}
    assert triage_with_plan(r, blocked) == {"still_blocked": True, "feature": "torch-symm-mem", "why": "no key 12"}
    assert triage_with_plan(tri("clean.log"), plan) is None


# ---------------------------------------------------------------------------------------------- edge cases


def test_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "empty.log"
    p.write_bytes(b"")
    r = triage_file(p)
    assert r.lines_read == 0 and r.bytes_read == 0 and r.root_cause is None
    assert "no errors found" in render_text(r)


def test_binary_garbage_does_not_crash() -> None:
    rnd = random.Random(7)
    data = bytes(rnd.randrange(256) for _ in range(300_000))
    r = tri_bytes(data)
    render_text(r)
    json.loads(render_json(r))
    assert r.bytes_read == len(data)


def test_non_utf8_is_replaced() -> None:
    log = b'Traceback (most recent call last):\n  File "/x/caf\xe9.py", line 1, in f\nValueError: bad \xff\xfe value\n'
    rc = tri_bytes(log).root_cause
    assert rc is not None and rc.text == "ValueError: bad \ufffd\ufffd value"
    assert rc.innermost is not None and rc.innermost.file == "/x/caf\ufffd.py"


def test_crlf_line_endings_same_result() -> None:
    data = (LOGS / "symm_mem_keyerror.log").read_bytes()
    a: dict[str, Any] = dict(result_json(tri_bytes(data)))
    b: dict[str, Any] = dict(result_json(tri_bytes(data.replace(b"\n", b"\r\n"))))
    a.pop("bytes_read")
    b.pop("bytes_read")
    a["log"] = b["log"] = "x"
    assert a == b


@pytest.mark.parametrize("chunk", [1, 7, 100, 4096])
def test_chunk_boundaries_do_not_matter(chunk: int) -> None:
    for name in ("symm_mem_keyerror.log", "flashinfer_fusion_cuda_graph.log", "interleaved.log", "clean.log"):
        data = (LOGS / name).read_bytes()
        assert result_json(tri_bytes(data, chunk)) == result_json(tri_bytes(data)), (name, chunk)


def test_no_trailing_newline_and_truncated_traceback() -> None:
    log = b'Traceback (most recent call last):\n  File "/x/torch_symm_mem.py", line 5, in f\n'
    r = tri_bytes(log)
    assert r.lines_read == 2
    assert r.root_cause is not None and r.root_cause.truncated


def test_very_long_line_bounded_memory() -> None:
    size = 50 * 1024 * 1024
    head = (
        b"[2026-01-02 10:00:00 TP0] RuntimeError: CUDA error: no kernel image is available for execution on the device "
    )
    data = b"before\n" + head + b"x" * size + b"\nafter Killed\n"
    stream = io.BytesIO(data)
    tracemalloc.start()
    try:
        r = triage_stream(stream, "<long>")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 24 * 1024 * 1024, peak
    assert r.truncated_lines == 1 and r.lines_read == 3
    assert r.root_cause is not None and r.root_cause.line == 2 and len(r.root_cause.text) <= LINE_CAP
    assert [e.secondary for e in r.secondary] == ["killed"]
    assert "over-long" in render_text(r)


def test_many_errors_are_capped() -> None:
    lines = [f"[TP{i % 4}] RuntimeError: failure number {i}" for i in range(3000)]
    r = tri_bytes(("\n".join(lines) + "\n").encode())
    assert len(r.errors) == 1000 and r.dropped["errors"] == 2000
    assert r.root_cause is not None and r.root_cause.line == 1


def test_repeats_are_counted() -> None:
    r = tri_bytes(b"RuntimeError: same\n" * 5)
    assert len(r.errors) == 1 and r.errors[0].repeats == 4


def test_bench_gen_log_buries_error(tmp_path: Path) -> None:
    import subprocess

    out = tmp_path / "gen.log"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gen_log.py"), "--mb", "2", "--out", str(out)],
        check=True,
        timeout=120,
        env={**os.environ},
    )
    r = triage_file(out)
    assert r.root_cause is not None and r.root_cause.signature is not None
    assert r.root_cause.signature.id == "torch-symm-mem-keyerror"
    assert r.lines_read > 10_000
