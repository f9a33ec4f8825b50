"""triage of the `-lcudart` hop of `--enable-symm-mem`'s allocator build (igap24; tests/data/logs/symm_mem_lcudart.log,
written for stackcheck in the shape of symm_mem_lnccl.log: CUDA_HOME at a pip wheel's nvidia/cu13, whose lib/ has
only libcudart.so.13). Before: no signature matched the linker's line, and the root cause was the traceback's generic
"Error building extension 'nccl_allocator'"."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from stackcheck.cli import main
from stackcheck.launch.triage import load_signatures, triage_file, triage_stream
from stackcheck.render.triage import render_text

HERE = Path(__file__).parent.parent
LOG = HERE / "data" / "logs" / "symm_mem_lcudart.log"


def test_the_linkers_line_is_the_root_cause() -> None:
    result = triage_file(LOG)
    rc = result.root_cause
    assert rc is not None and rc.line == 15
    assert rc.text == "/usr/bin/ld: cannot find -lcudart: No such file or directory"
    assert rc.signature is not None and rc.signature.id == "link-no-libcudart-so"
    text = render_text(result)
    assert "CUDA_HOME" in text and "LIBRARY_PATH" in text and "symm-mem-allocator-cudart-link" in text
    later = [e.signature.id if e.signature else None for e in result.errors if e is not rc]
    assert later == ["symm-mem-allocator-build-failed"]


def test_the_pattern_takes_the_library_and_not_its_neighbours() -> None:
    sig = next(s for s in load_signatures() if s.id == "link-no-libcudart-so")
    assert sig.pattern.search("/usr/bin/ld: cannot find -lcudart")
    assert sig.pattern.search("ld.lld: error: unable to find library -lcudart")
    assert not sig.pattern.search("/usr/bin/ld: cannot find -lcudart_static: No such file or directory")
    assert not sig.pattern.search("/usr/bin/ld: cannot find -lcudadevrt")
    assert not sig.pattern.search("/usr/bin/ld: cannot find -lnccl")


def test_with_libnccl_so_missing_too_the_first_line_wins() -> None:
    """ld reports -lnccl first (the caller's -lnccl comes first on torch's link line): that line is the root."""
    lines = LOG.read_text().splitlines(keepends=True)
    text = "".join([*lines[:14], "/usr/bin/ld: cannot find -lnccl: No such file or directory\n", *lines[14:]])
    rc = triage_stream(io.BytesIO(text.encode()), "<mem>", load_signatures()).root_cause
    assert rc is not None and rc.signature is not None and rc.signature.id == "nccl-link-no-libnccl-so"


def test_triage_with_facts_does_not_call_the_nccl_check_ok(tmp_path: Path) -> None:
    """The cause's rule is launch-only: `triage --facts` shows the nccl check as not judged for the launch."""
    doc = json.loads((HERE / "cases" / "h200-newest" / "facts.json").read_text())
    doc["facts"]["jit"]["libcudart_so_found"] = False
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(doc))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["triage", str(LOG), "--facts", str(facts)])
    assert "cannot find -lcudart" in out.getvalue()
    assert "check nccl on this box: ok" not in out.getvalue()
