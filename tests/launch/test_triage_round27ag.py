"""triage for round twenty-seven's (icorpAG) FlashInfer cause: a flashinfer-cubin (or flashinfer-jit-cache) of
another release than flashinfer-python, which flashinfer-python 0.6.0-0.7.1 refuse when flashinfer is imported
(flashinfer/jit/env.py; 0.6.16.post3: the RuntimeError at :97-102, the jit-cache form at :132-137, run at module
level :110). flashinfer-ai/flashinfer#4781: a DGX Spark with flashinfer-python 0.6.16.post3 beside the
flashinfer-cubin 0.6.13 of an earlier install. The log had no signature before: the audit's check
flashinfer-cubin-match saw the pair, triage named nothing. The boxes below are not the case's (x86_64, H100 /
RTX 4090, other releases); the log lines are written for this test in the shape of a server's import traceback."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from stackcheck.launch.triage import TriageResult, load_signatures, triage_stream

SIG = "flashinfer-cubin-version-mismatch"


def _triage(log: str) -> TriageResult:
    return triage_stream(io.BytesIO(log.encode()), signatures=load_signatures())


def _text(rc: object) -> str:
    sig = rc.signature  # type: ignore[attr-defined]
    return " ".join((sig.title, sig.explanation, sig.fix))


CUBIN_TRACEBACK = (
    "[2026-10-02 14:03:11] Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/layers/sampler.py", line 20, in <module>\n'
    "    import flashinfer\n"
    '  File "/opt/venv/lib/python3.12/site-packages/flashinfer/jit/env.py", line 110, in <module>\n'
    "    FLASHINFER_CUBIN_DIR: pathlib.Path = _get_cubin_dir()\n"
    "RuntimeError: flashinfer-cubin version (0.6.8.post1) does not match flashinfer version (0.6.10). "
    "Please install the same version of both packages. "
    "Set FLASHINFER_DISABLE_VERSION_CHECK=1 to bypass this check.\n"
)

JIT_CACHE_LINE = (
    "RuntimeError: flashinfer-jit-cache version (0.6.1+cu129) does not match flashinfer version (0.6.3). "
    "Please install the same version of both packages.\n"
)

# FlashInfer 0.7.2 and later log the same comparison as a warning and go on (env.py :116-127): not a crash
WARNING_072 = (
    "[2026-11-20 09:41:07] WARNING env.py:123: Ignoring incompatible flashinfer-cubin package (cubins will be "
    "downloaded on demand to /root/.cache/flashinfer/cubins): flashinfer-cubin version (0.7.1) does not match "
    "flashinfer version (0.7.2). Set FLASHINFER_DISABLE_VERSION_CHECK=1 to use the installed version anyway.\n"
    "[2026-11-20 09:41:30] INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)\n"
)


def test_the_cubin_runtime_error_names_the_mismatched_pair() -> None:
    rc = _triage(CUBIN_TRACEBACK).root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == SIG
    assert rc.signature.check == "flashinfer-cubin-match"
    text = _text(rc)
    assert "flashinfer-cubin" in text and "flashinfer-python" in text and "same release" in text
    assert "0.7.2" in text  # the releases that only warn are told apart
    assert any("flashinfer/jit/env.py" in s["title"] for s in rc.signature.source)


def test_the_jit_cache_form_is_named_too() -> None:
    rc = _triage(JIT_CACHE_LINE).root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == SIG


def test_the_warning_of_0_7_2_is_not_a_root_cause() -> None:
    result = _triage(WARNING_072)
    rc = result.root_cause
    assert rc is None or rc.signature is None or rc.signature.id != SIG


def _cli(*argv: str) -> str:
    from stackcheck.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    assert code == 0, err.getvalue()
    return out.getvalue()


def _facts(path: Path, packages: dict[str, Any]) -> Path:
    doc = {
        "schema_version": 1,
        "facts": {
            "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}],
            "packages": packages,
            "system": {"machine": "x86_64", "python": "3.12"},
            "collected_at": "2026-10-02",
        },
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_with_facts_the_check_gives_the_box_s_own_pair(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(CUBIN_TRACEBACK, encoding="utf-8")
    facts = _facts(
        tmp_path / "facts.json",
        {
            "flashinfer-python": {"installed": True, "version": "0.6.10"},
            "flashinfer-cubin": {"installed": True, "version": "0.6.8.post1"},
        },
    )
    doc = json.loads(_cli("triage", str(log), "--facts", str(facts), "--format", "json"))
    assert doc["root_cause"]["signature"]["id"] == SIG
    fix = doc["fix"]
    assert fix is not None and fix.get("check") == "flashinfer-cubin-match"
    assert "0.6.8.post1" in json.dumps(fix) and "0.6.10" in json.dumps(fix)
