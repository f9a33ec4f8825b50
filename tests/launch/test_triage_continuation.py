"""triage: a one-line error whose message goes on over the next lines (a continuation of the same record) is
named by the continuation line a signature matches; a line that merely follows is not part of it."""

from __future__ import annotations

import io

import pytest

from stackcheck.launch.triage import Event, TriageResult, triage_stream

# kubectl describe's events: rows indented under the header, an event's message with a newline in it goes
# on at the margin (written for this test in that shape)
EVENTS_HEAD = (
    "Events:\n"
    "  Type     Reason     Age                From     Message\n"
    "  Normal   Pulled     40s                kubelet  Container image already present on machine\n"
)
ROW = (
    "  Warning  Failed     12s (x3 over 40s)  kubelet  Error: failed to start the container: prestart hook #0 "
    "exited 1, stderr: detected runtime mode 'legacy'\n"
)
REQUIRE = (
    "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.9, please update your driver to a "
    "newer version, or use an earlier cuda container: unknown\n"
)
BACKOFF = "  Warning  BackOff    5s (x6 over 38s)   kubelet  Back-off restarting failed container server in pod p-1\n"


def triage(text: str, chunk_size: int | None = None) -> TriageResult:
    data = io.BytesIO(text.encode())
    return triage_stream(data, "<t>") if chunk_size is None else triage_stream(data, "<t>", chunk_size=chunk_size)


def root(text: str, chunk_size: int | None = None) -> Event:
    rc = triage(text, chunk_size).root_cause
    assert rc is not None
    return rc


def sig_id(ev: Event) -> str | None:
    return ev.signature.id if ev.signature is not None else None


@pytest.mark.parametrize("chunk_size", [None, 7, 64])
def test_an_indented_rows_message_wrapped_to_the_margin_is_named_by_its_continuation(chunk_size: int | None) -> None:
    rc = root(EVENTS_HEAD + ROW + REQUIRE + BACKOFF, chunk_size)
    assert sig_id(rc) == "nvidia-container-require-unsatisfied"
    assert rc.line == 5 and rc.stream == "main"
    assert rc.text.startswith("nvidia-container-cli: requirement error")


def test_a_continuation_line_without_a_needle_keeps_the_record_open() -> None:
    # the wrapped message runs over two lines at the margin; the first holds none of the reader's needles
    wrapped = ROW + "detected runtime mode 'legacy' (second line of stderr)\n" + REQUIRE
    rc = root(EVENTS_HEAD + wrapped + BACKOFF)
    assert sig_id(rc) == "nvidia-container-require-unsatisfied" and rc.line == 6


HEADING = "[2026-03-01 08:00:05] ERROR Worker failed to start the GPU container:\n"
DETAIL = "runtime hook #0 exited 1 (its output follows)\n"  # none of the reader's needles


@pytest.mark.parametrize("busy", [False, True])
def test_the_same_whether_or_not_another_process_has_a_traceback_open(busy: bool) -> None:
    # while a traceback is open every line is read, otherwise only lines with a needle and the lines of an open
    # record: the result must not depend on that
    tb = "[2026-03-01 08:00:04 TP3] Scheduler hit an exception: Traceback (most recent call last):\n"
    result = triage((tb if busy else "") + HEADING + DETAIL + REQUIRE)
    named = [e for e in result.errors if e.stream == "main"]
    assert [sig_id(e) for e in named] == [None, "nvidia-container-require-unsatisfied"]
    assert named[1].line == (4 if busy else 3)
    rc = result.root_cause
    assert rc is not None and sig_id(rc) == "nvidia-container-require-unsatisfied"


def test_the_next_row_of_a_listing_is_not_a_continuation_even_after_a_heading_row() -> None:
    # a row that ends with ":": a line as deep as the row is the listing's next row, even where it matches
    heading_row = "  Warning  Failed     12s (x3 over 40s)  kubelet  Error: the prestart hook failed with:\n"
    next_row = "  Warning  Failed     11s (x4 over 41s)  kubelet  " + REQUIRE
    rc = root(EVENTS_HEAD + heading_row + next_row)
    assert rc.line == 4 and rc.signature is None


def test_a_heading_records_details_belong_to_its_process_and_time() -> None:
    log = (
        "[2026-03-01 08:00:00 TP0] Load weight begin.\n"
        "[2026-03-01 08:00:05 TP0] ERROR Worker failed to start the GPU container:\n"
        + REQUIRE
        + "[2026-03-01 08:00:06 TP1] Load weight begin.\n"
    )
    rc = root(log)
    assert sig_id(rc) == "nvidia-container-require-unsatisfied"
    assert rc.stream == "TP0" and rc.line == 3
    assert rc.timestamp == "2026-03-01 08:00:05"


@pytest.mark.parametrize(
    "log",
    [
        # not indented deeper than the line after it, and no heading: a line that merely follows
        "Error: failed to create the task: runtime hook exited 1\n" + REQUIRE,
        # a blank line between
        EVENTS_HEAD + ROW + "\n" + REQUIRE,
        # another line between (a row of the listing)
        EVENTS_HEAD + ROW + BACKOFF + REQUIRE,
        # the next line has a prefix of its own: a record of its own
        EVENTS_HEAD + ROW + "[2026-03-01 08:00:07] " + REQUIRE,
        # the heading's next line starts a record of its own (a level word, a Python exception line)
        "[2026-03-01 08:00:05] ERROR Worker failed to start:\nWARNING " + REQUIRE,
        "[2026-03-01 08:00:05] ERROR Worker failed to start:\nRuntimeError: " + REQUIRE,
    ],
)
def test_a_line_that_is_not_a_continuation_does_not_name_the_earlier_error(log: str) -> None:
    rc = root(log)
    assert rc.signature is None
    assert "requirement error" not in rc.text


def test_a_matched_first_line_is_not_replaced_by_its_continuation() -> None:
    # the record's own line is named already: its continuation does not take the root over
    first = "  Warning  Failed  9s  kubelet  CUDA error: no kernel image is available for execution on the device\n"
    rc = root(EVENTS_HEAD + first + REQUIRE)
    assert sig_id(rc) == "no-kernel-image" and rc.line == 4


def test_a_continuation_does_not_reorder_processes_that_failed_earlier() -> None:
    # the earliest process's matched error stays the root; the continuation only names its own record
    log = (
        "[2026-03-01 08:00:00 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/srv/venv/lib/python3.12/site-packages/sglang/srt/managers/scheduler.py", line 10, in run\n'
        "    boot()\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
        "[2026-03-01 08:00:30 TP0] ERROR Worker failed to start the GPU container:\n" + REQUIRE
    )
    result = triage(log)
    assert result.root_cause is not None and result.root_cause.stream == "TP1"
    tp0 = [e for e in result.errors if e.stream == "TP0"]
    assert [sig_id(e) for e in tp0] == [None, "nvidia-container-require-unsatisfied"]


def test_a_continuation_chain_is_bounded() -> None:
    """irev51: the chain had no bound, so a signature line 100k unbroken lines after an unnamed heading error
    replaced it as the root cause. A wrapped message is a few lines: past MAX_RECORD_LINES the record has ended,
    and the far line is an error of its own, after the heading's."""
    from stackcheck.launch.triage import MAX_RECORD_LINES

    near = ROW + "detail line\n" * (MAX_RECORD_LINES - 2) + REQUIRE
    assert sig_id(root(EVENTS_HEAD + near)) == "nvidia-container-require-unsatisfied"
    far = ROW + "detail line\n" * 2000 + REQUIRE
    rc = root(EVENTS_HEAD + far)
    assert sig_id(rc) is None and rc.line == 4, (rc.line, rc.text)
