"""irev57 (an adversarial review of igap23's triage signature jit-cxx-not-found): its pattern opened with an optional
path, (?:[^\\s:'"]*/)?, before 'c++: not found', so on a run of path characters and slashes the regular expression
engine tried every start and gave back every slash from each: quadratic in the line. Triage tests the signatures on
an error line's first 2,000 characters, ~70 ms each for a run of slashes, so a 6 MB log of such lines took 220 s on
the 2-core box (3.5 s now), a 48 MiB one half an hour. The path added nothing to whether a line matches: the '/'
before the compiler's name already satisfies the look-behind, and triage asks only whether a signature's pattern is
found in a line (launch/triage.py _match_text and finish: pattern.search). The pattern is now the compiler's name
with its look-behind alone; the same lines match (a generated comparison with the old pattern)."""

from __future__ import annotations

import re
import time
from pathlib import Path

from cli_process import run_stackcheck
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.launch.triage import load_signatures

#: the pattern igap23 shipped (manifests/signatures.json at 31e8a1db), the reference for which lines match
OLD = re.compile(r"(?<![\w.+-])(?:[^\s:'\"]*/)?(?:c|g|clang)\+\+: (?:command )?not found")


def _pattern() -> re.Pattern[str]:
    return next(s.pattern for s in load_signatures() if s.id == "jit-cxx-not-found")


@settings(max_examples=3000, deadline=None)
@given(
    st.lists(st.sampled_from([*"/ :'\"abcglnt+-._1\tdmo", "c++: ", "g++", "clang++: ", "not found", "command "])).map(
        "".join
    )
)
def test_the_same_lines_match(line: str) -> None:
    assert bool(_pattern().search(line)) == bool(OLD.search(line)), line


def test_a_long_line_of_slashes_is_read_in_linear_time() -> None:
    pattern = _pattern()
    for line in ("/" * 32768, "a/" * 16384, "/" * 32768 + " c++: not found"):
        start = time.perf_counter()
        pattern.search(line)
        assert time.perf_counter() - start < 2.0, line[:20]  # (the old pattern: ~12 s for 32 KiB of '/')


def test_triage_of_a_log_of_hostile_error_lines_finishes(tmp_path: Path) -> None:
    # an error line's text is cut at 2,000 characters before the signatures are tested (launch/triage.py), so each
    # line cost the old pattern ~70 ms: this 0.8 MB log took ~30 s (a 6 MB one 220 s against 3.5 s now)
    log = tmp_path / "hostile.log"
    log.write_text(("ERROR: " + "/" * 1990 + " c++: x\n") * 400)
    r = run_stackcheck("triage", str(log), timeout=15)
    assert r.returncode in (0, 1), r.stderr


#: igap24's two compiler signatures as they were merged (with igap23's optional path before the name)
IGAP24 = {
    "jit-cxx-versioned-not-found": re.compile(
        r"(?<![\w.+-])(?:[^\s:'\"]*/)?(?:(?:x86_64|aarch64|powerpc64le|ppc64le|s390x|i686)(?:-[a-z0-9_]+)+-)?"
        r"(?:c|g|clang)\+\+-\d+(?:\.\d+)*: (?:command )?not found"
    ),
    "nvcc-host-compiler-missing": re.compile(
        r"(?<![\w.+-])(?:[^\s:'\"]*/)?(?:(?:x86_64|aarch64|powerpc64le|ppc64le|s390x|i686)(?:-[a-z0-9_]+)+-)?"
        r"(?:gcc|cc|g\+\+|c\+\+|clang|clang\+\+)(?:-\d+(?:\.\d+)*)?: No such file or directory[ \t]*(?:$|\n)"
    ),
}


#: the pieces the generated lines are made of: path characters, compiler names with and without versions and triplets
WORDS = [*"/ :'\"abcglnt+-._1\tdmo", "g++-13: ", "x86_64-linux-gnu-", "gcc", "clang++", "-12", ": ", "not found"]
WORDS += ["No such file or directory", "command ", "\n"]


@settings(max_examples=2000, deadline=None)
@given(
    st.sampled_from(sorted(IGAP24)),
    st.lists(st.sampled_from(WORDS)).map("".join),
)
def test_igap24s_compiler_signatures_match_the_same_lines_without_the_path(sid: str, line: str) -> None:
    new = next(s.pattern for s in load_signatures() if s.id == sid)
    assert bool(new.search(line)) == bool(IGAP24[sid].search(line)), (sid, line)


def test_every_compiler_signature_reads_a_line_of_slashes_in_linear_time() -> None:
    for sig in load_signatures():
        if sig.id not in ("jit-cxx-not-found", *IGAP24):
            continue
        start = time.perf_counter()
        sig.pattern.search("/" * 32768 + " g++-13: x")
        assert time.perf_counter() - start < 2.0, sig.id  # (merged with the path group: ~25 s)
