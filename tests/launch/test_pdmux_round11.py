"""--enable-pdmux on a GPU SGLang's SM division does not know (real-world corpus, round eleven: sglang#32933,
RTX PRO 6000): the feature pd-multiplexing (audit and gate), its triage signature, and a quoted traceback frame
without its line number (issue threads often drop it) that triage must still read as a frame."""

from __future__ import annotations

import ast
import io
import json
from pathlib import Path
from typing import Any

import pytest
from registry_wheels import fetch_wheel, read_texts

from stackcheck.cli import main
from stackcheck.launch.triage import triage_stream
from stackcheck.render.triage import render_text

FRAME = '  File "/opt/conda/lib/python3.12/site-packages/sglang/srt/multiplex/pdmux_context.py"'
RAISE = '    raise ValueError(f"Unsupported compute capability: {major}.{minor}")\n'


def _log(frame: str) -> str:
    return (
        "[2026-07-30 03:41:12] Scheduler hit an exception: Traceback (most recent call last):\n"
        + frame
        + "\n"
        + RAISE
        + "ValueError: Unsupported compute capability: 12.0\n"
    )


def _root(text: str) -> Any:
    rc = triage_stream(io.BytesIO(text.encode())).root_cause
    assert rc is not None
    return rc


@pytest.mark.parametrize("frame", [FRAME + ", line 67, in get_arch_constraints", FRAME + ", in get_arch_constraints"])
def test_the_pdmux_refusal_is_named_with_or_without_the_frames_line_number(frame: str) -> None:
    rc = _root(_log(frame))
    assert rc.signature is not None and rc.signature.id == "pdmux-unsupported-compute-capability"
    assert rc.signature.feature == "pd-multiplexing"
    assert "--enable-pdmux" in rc.signature.fix
    assert rc.innermost is not None and rc.innermost.function == "get_arch_constraints"


def test_a_frame_without_its_line_number_is_printed_without_one() -> None:
    report = triage_stream(io.BytesIO(_log(FRAME + ", in get_arch_constraints").encode()))
    text = render_text(report)
    assert "pdmux_context.py in get_arch_constraints" in text
    assert ":None" not in text


def test_the_same_message_from_another_file_is_not_pdmux() -> None:
    # the ValueError text alone is not the cause: other libraries raise the same words
    log = _log('  File "/opt/venv/lib/python3.12/site-packages/mirage/persistent_kernel.py", line 88, in linear_layer')
    rc = _root(log)
    assert rc.signature is None or rc.signature.id != "pdmux-unsupported-compute-capability"


def _audit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cc: str, sglang: dict[str, Any], day: str | None = None
) -> dict[str, Any]:
    facts: dict[str, Any] = {"gpus": [{"index": 0, "name": "GPU", "compute_capability": cc}],
                             "packages": {"sglang": {"installed": True, **sglang}}}  # fmt: skip
    # a driver with the green-context API (CUDA 12.4+): test_pdmux_green_contexts.py judges older ones
    facts["driver"] = {"version": "580.159.04", "cuda": "13.0", "source": "nvml"}
    if day:
        facts["collected_at"] = day
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    main(["audit", "--facts", str(path), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    return next(f for f in report["features"] if f["id"] == "pd-multiplexing")


@pytest.mark.parametrize(
    ("cc", "sglang", "day", "status"),
    [
        ("12.0", {"version": "0.5.18"}, None, "blocked"),
        ("10.0", {"version": "0.5.23"}, None, "blocked"),
        ("12.1", {"version": "0.5.5"}, None, "blocked"),
        ("9.0", {"version": "0.5.18"}, None, "ok"),
        ("8.9", {"version": "0.5.10"}, None, "ok"),
        ("12.0", {"version": "0.5.24"}, None, "unknown"),  # a release not read: never ok
        ("9.0", {"version": "0.5.4"}, None, "unknown"),  # no multiplex module: not read further
        ("12.0", {"candidates": ["0.5.5", "0.5.9", "0.5.16"]}, "2026-07-30", "blocked"),  # sglang-32933's facts
    ],
)
def test_pd_multiplexing_by_gpu_major_and_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cc: str, sglang: dict[str, Any], day: str | None, status: str
) -> None:
    feature = _audit(tmp_path, capsys, cc, sglang, day)
    assert feature["status"] == status
    if status == "blocked":
        text = " ".join(r["message"] for r in feature["reasons"] if r["result"] == "fail")
        assert "--enable-pdmux" in text and f"major {cc.split('.', maxsplit=1)[0]}" in text


def _gate(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, str]:
    facts = {"gpus": [{"index": 0, "name": "GPU", "compute_capability": "12.0"}],
             "packages": {"sglang": {"installed": True, "version": "0.5.18"}}}  # fmt: skip
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    argv = ["python", "-m", "sglang.launch_server", "--model-path", "m", *flags]
    code = main(["gate", "--facts", str(path), "--", *argv])
    return code, capsys.readouterr().out


def test_the_gate_refuses_enable_pdmux_on_sm120(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _gate(tmp_path, capsys, "--enable-pdmux", "--chunked-prefill-size", "-1", "--disable-overlap-schedule")
    assert code != 0
    assert "REFUSE pd-multiplexing" in out


def test_without_the_flag_the_gate_does_not_need_pd_multiplexing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out = _gate(tmp_path, capsys)
    assert "pd-multiplexing" not in out


def _arch_table(source: str) -> set[int]:
    """The majors get_arch_constraints returns for (every `major == N` branch before its raise)."""
    tree = ast.parse(source)
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "get_arch_constraints")
    majors: set[int] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "major":
            for comp in node.comparators:
                if isinstance(comp, ast.Constant) and isinstance(comp.value, int):
                    majors.add(comp.value)
    return majors


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.5.5", "0.5.18", "0.5.23"])
def test_the_rule_is_the_wheels_table(version: str) -> None:
    wheel = fetch_wheel("sglang", version)
    texts = read_texts(wheel, lambda n: n.endswith("srt/multiplex/pdmux_context.py"))
    (source,) = texts.values()
    manifest = json.loads((Path(__file__).parents[2] / "manifests" / "features.json").read_text())
    feature = next(f for f in manifest["features"] if f["id"] == "pd-multiplexing")
    rule = next(r for r in feature["rules"] if r["id"] == "sm-division-majors")
    assert _arch_table(source) == set(rule["require"]["value"])
    assert "Unsupported compute capability" in source
