"""triage rule 4: a cause before its symptom. torch's "not compatible with the current PyTorch installation"
warning, earlier in the root's process or in the log's unattributed lines, is the root cause of the generic
"no kernel image is available" error it explains (signatures.json `explains`)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from stackcheck.errors import ManifestError
from stackcheck.launch.triage import Event, load_signatures, parse_signatures, triage_stream

# torch's warning as Python's warnings module prints it to stderr (no logger prefix); written for this test
WARNING = (
    "/srv/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:240: UserWarning: \n"
    "NVIDIA GeForce RTX 5070 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
    "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n"
    "\n"
    "  warnings.warn(\n"
)
UNRELATED = "[2026-04-02 09:00:01] ERROR Could not load the optional plugin package 'fastpath'\n"


def crash(tag: str, message: str, second: int = 3) -> str:
    return (
        f"[2026-04-02 09:00:0{second} {tag}] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/srv/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 30, in run\n'
        "    boot()\n"
        '  File "/srv/venv/lib/python3.12/site-packages/sglang/srt/layers/rotary.py", line 12, in boot\n'
        "    cache = build()\n"
        f"RuntimeError: {message}\n"
    )


GENERIC = "CUDA error: no kernel image is available for execution on the device"
NORM = "RMSNorm failed with error code no kernel image is available for execution on the device"


def root(text: str) -> Event:
    rc = triage_stream(io.BytesIO(text.encode()), "<t>").root_cause
    assert rc is not None
    return rc


def sig_id(ev: Event) -> str | None:
    return ev.signature.id if ev.signature is not None else None


def test_torchs_earlier_warning_is_the_cause_of_the_generic_error() -> None:
    # the unattributed lines' first error is another one, so the warning is not a first error of its own
    rc = root(UNRELATED + WARNING + crash("TP0", GENERIC))
    assert sig_id(rc) == "torch-arch-not-compatible"
    assert rc.line == 3 and rc.stream == "main"


def test_the_shipped_torch_signature_explains_the_generic_one() -> None:
    by_id = {s.id: s for s in load_signatures()}
    assert "no-kernel-image" in by_id["torch-arch-not-compatible"].explains


@pytest.mark.parametrize(
    "log",
    [
        # the warning after the error: not its cause in this log (a record of its own ends the exception's message)
        UNRELATED + crash("TP0", GENERIC) + "[2026-04-02 09:00:04] Shutting down the server.\n" + WARNING,
        # a specific cause is not the one the warning explains (sgl-kernel's own norm kernels)
        UNRELATED + WARNING + crash("TP0", NORM),
    ],
)
def test_the_root_stays_where_the_warning_does_not_explain_it(log: str) -> None:
    rc = root(log)
    assert sig_id(rc) != "torch-arch-not-compatible"


def test_a_warning_of_another_process_does_not_explain_this_ones_error() -> None:
    log = (
        "[2026-04-02 09:00:02 TP1] ERROR Could not load the optional plugin package 'fastpath'\n"
        "[2026-04-02 09:00:02 TP1] NVIDIA GeForce RTX 5070 with CUDA capability sm_120 is not compatible with the "
        "current PyTorch installation.\n" + crash("TP0", GENERIC)
    )
    rc = root(log)
    assert rc.stream == "TP0" and sig_id(rc) == "no-kernel-image"


def _doc(explains: object) -> dict[str, object]:
    base = {"pattern": "x", "feature": None, "title": "t", "explanation": "e", "fix": "f", "source": "s"}
    return {"signatures": [{"id": "a", **base, "explains": explains}, {"id": "b", **base}]}


def test_explains_names_known_signatures(tmp_path: Path) -> None:
    assert parse_signatures(_doc(["b"]), "sig.json")[0].explains == ("b",)
    path = tmp_path / "sig.json"
    path.write_text(json.dumps(_doc(["nope"])))
    with pytest.raises(ManifestError, match=r"sig\.json: signature a: explains unknown signature nope"):
        load_signatures(path)
    with pytest.raises(ManifestError, match=r"sig\.json: \$\.signatures\[0\]\.explains: expected a list"):
        parse_signatures(_doc("b"), "sig.json")
