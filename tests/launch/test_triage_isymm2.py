"""triage of `--enable-symm-mem`'s failed allocator build (tests/data/logs/symm_mem_lnccl.log, written for stackcheck
in the shape of an SGLang 0.5.10 start whose torch 2.9.1 load_inline prints ninja's output on stdout): the linker's
'cannot find -lnccl' names the cause, before the traceback's "Error building extension 'nccl_allocator'", which alone
(a log of stderr only) names the allocator's build."""

from __future__ import annotations

import io
import json
from pathlib import Path

from stackcheck.launch.triage import load_signatures, triage_file, triage_stream
from stackcheck.render.triage import render_text

HERE = Path(__file__).parent.parent
LOG = HERE / "data" / "logs" / "symm_mem_lnccl.log"


def test_the_linkers_line_is_the_root_cause() -> None:
    result = triage_file(LOG)
    rc = result.root_cause
    assert rc is not None and rc.line == 17 and rc.stream == "main"
    assert rc.text == "/usr/bin/ld: cannot find -lnccl: No such file or directory"
    assert rc.signature is not None and rc.signature.id == "nccl-link-no-libnccl-so"
    text = render_text(result)
    assert "libnccl-dev" in text and "LIBRARY_PATH" in text and "--enable-symm-mem" in text
    # the traceback that follows is the same failure, named as the allocator's build
    later = [e for e in result.errors if e is not rc]
    assert [e.signature.id if e.signature else None for e in later] == ["symm-mem-allocator-build-failed"]


def test_without_the_build_output_the_traceback_names_the_build() -> None:
    """ninja's output goes to stdout: a log of stderr alone has only the traceback."""
    lines = LOG.read_text().splitlines(keepends=True)
    text = "".join(lines[:12] + lines[19:])
    result = triage_stream(io.BytesIO(text.encode()), "<stderr>", load_signatures())
    rc = result.root_cause
    assert rc is not None and rc.stream == "TP0"
    assert rc.signature is not None and rc.signature.id == "symm-mem-allocator-build-failed"
    assert "cannot find -lnccl" in rc.signature.explanation and "c++: not found" in rc.signature.explanation


def test_the_build_failed_signature_needs_the_allocators_frame() -> None:
    """Another extension's failed build (torch's own message) is not called the allocator's."""
    text = (
        "[2026-11-20 14:03:05 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/v/site-packages/some_pkg/build.py", line 40, in build\n'
        "    torch.utils.cpp_extension.load_inline(\n"
        "RuntimeError: Error building extension 'other_ext'\n"
    )
    rc = triage_stream(io.BytesIO(text.encode()), "<mem>", load_signatures()).root_cause
    assert rc is not None and rc.signature is None


def test_other_linker_forms_and_near_misses() -> None:
    sig = next(s for s in load_signatures() if s.id == "nccl-link-no-libnccl-so")
    assert sig.pattern.search("/usr/bin/ld: cannot find -lnccl")
    assert sig.pattern.search("ld.lld: error: unable to find library -lnccl")
    # another library of the same prefix is another cause
    assert not sig.pattern.search("/usr/bin/ld: cannot find -lnccl_static: No such file or directory")
    assert not sig.pattern.search("/usr/bin/ld: cannot find -lnccl-net")  # (NCCL's net plugin)
    assert sig.literal == "-lnccl"


def test_triage_with_facts_does_not_call_the_nccl_check_ok(tmp_path: Path) -> None:
    """The audit's nccl check does not judge the launch-only rule symm-mem-allocator-link: the signature names no
    check, so `triage --facts` prints no 'check nccl on this box: ok' beside a missing libnccl.so."""
    import contextlib

    from stackcheck.cli import main

    doc = json.loads((HERE / "cases" / "h200-newest" / "facts.json").read_text())
    doc["facts"]["jit"]["libnccl_so_found"] = False
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(doc))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["triage", str(LOG), "--facts", str(facts)])
    assert "cannot find -lnccl" in out.getvalue()
    assert "check nccl on this box" not in out.getvalue()
