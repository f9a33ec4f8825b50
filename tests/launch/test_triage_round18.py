"""triage for round eighteen's cause (issue 16): a faulthandler dump whose frames include torchao/__init__.py (the
process died of a fatal signal while torchao loaded its C++ extension, pytorch/ao#2901) names torchao's build against
the installed torch; Python's own traceback through the same file (a catchable exception, 'line N, in <module>'), and
faulthandler frames of other packages keep their own verdicts."""

from __future__ import annotations

import io

from stackcheck.launch.triage import TriageResult, load_signatures, triage_stream


def _triage(log: str) -> TriageResult:
    return triage_stream(io.BytesIO(log.encode()), signatures=load_signatures())


# written for this test in the shape of a faulthandler dump: the header, then frames innermost first
FAULTHANDLER_TORCHAO = (
    "$ python -X faulthandler -m sglang.launch_server --model-path /models/m\n"
    "Fatal Python error: Aborted\n"
    "\n"
    "Thread 0x00007f00aa11b640 (most recent call first):\n"
    '  File "/venv/lib/python3.12/ctypes/__init__.py", line 379 in __init__\n'
    '  File "/venv/lib/python3.12/site-packages/torch/_ops.py", line 1480 in load_library\n'
    '  File "/venv/lib/python3.12/site-packages/torchao/__init__.py", line 51 in <module>\n'
)


def test_fatal_error_inside_torchao_init_names_torchao_against_torch() -> None:
    rc = _triage(FAULTHANDLER_TORCHAO).root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "torchao-load-library-abort"
    assert rc.line == 7
    text = " ".join((rc.signature.title, rc.signature.explanation, rc.signature.fix))
    assert "torchao" in text and "torch" in text and "ABI" in text
    assert any("2908" in s["title"] for s in rc.signature.source)


def test_python_tracebacks_and_other_packages_frames_are_not_a_torchao_abort() -> None:
    for log in (
        # Python's traceback format has a comma: an exception torchao's import raised, not a fatal signal
        "Traceback (most recent call last):\n"
        '  File "/venv/lib/python3.12/site-packages/torchao/__init__.py", line 51, in <module>\n'
        "    from torchao.quantization import quantize_\n"
        "ImportError: cannot import name 'quantize_'\n",
        # a faulthandler frame of another package
        "Fatal Python error: Segmentation fault\n"
        '  File "/venv/lib/python3.12/site-packages/torchvision/__init__.py", line 10 in <module>\n',
        # a package whose name only ends like torchao's
        'Fatal Python error: Aborted\n  File "/src/mytorchao/__init__.py", line 3 in <module>\n',
    ):
        rc = _triage(log).root_cause
        assert rc is None or rc.signature is None or rc.signature.id != "torchao-load-library-abort", log
