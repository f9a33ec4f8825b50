"""Read a server log and find the root cause of a crash: `stackcheck triage LOGFILE`.

The reader streams the log in chunks of bytes, so memory stays bounded whatever the size of the file:
at most `LINE_CAP` bytes of any one line are kept (the rest of a longer line is skipped and the line is
counted in `truncated_lines`), and at most `MAX_EVENTS` error blocks of each class are stored (the others
are counted). Bytes are decoded as UTF-8 with errors="replace"; CRLF and bare CR (progress bars) are
handled as line ends.

Speed: while no process has an open traceback, the reader does not look at lines one by one; it searches
each chunk with one compiled regular expression of cheap literal needles ("Error", "Traceback", "NCCL",
the signatures' `literal`s …) and only decodes and classifies the lines that contain one.

What is found
- Python tracebacks, with their chained causes ("The above exception was the direct cause …",
  "During handling of the above exception …"): one *block* per chain; its exception is the original one
  (printed first), its place the innermost frame of that traceback.
- One-line errors: CUDA errors, NCCL errors and warnings, exception-shaped lines ("RuntimeError: …"),
  logger lines at level ERROR/CRITICAL/FATAL, and any line that matches a signature.
- Lines are grouped by process: a prefix such as `[2026-01-02 10:00:00 TP0] `, `[TP3] `, `[rank1]: ` or
  `(TP0 pid=123) ` names the process; an unprefixed line continues the process whose traceback is open
  (SGLang logs a traceback as one record whose first line alone carries the prefix), otherwise it belongs
  to the "main" process, as do lines with a timestamp-only prefix.

Secondary failures (never the root cause): `--- Logging error ---` blocks and tracebacks through
logging/__init__.py, signal-handler noise (SIGQUIT/SIGTERM handlers, KeyboardInterrupt, "Received sigquit
from a child process"), follow-ups in the parent ("Rank N scheduler is dead", "Exit code: -9",
"Initialization failed. Please see the error messages above"), and "Killed".

The root-cause rule
1. Per process, the first non-secondary error is that process's root (a process's own errors are in order).
   A one-line error's record may go on over the next lines (a message with newlines in it, printed as one
   record): a *continuation* is a line directly after the record's previous line (no line between) that has
   no prefix of its own and does not start a record of its own (a level word or timestamp at its start, a
   traceback, a Python exception line "SomeError: ..."), when either the record's first line is at the margin
   and ends with ":" (a heading whose details follow, as an exception's message may be), or the record's
   first line is indented (a row of a listing, such as kubectl's events) and this line is indented less (the
   row's message wrapped back to the margin; a line as deep is the listing's next row).
   A line that merely follows a record (a warning or another program's output without a prefix) is not a
   continuation. A continuation belongs to the record's process and time; when the record's first line
   matches no signature and a continuation does, that continuation is the process's first error (the same
   message, named by its own words).
2. Over all processes, the earliest of these roots wins, except that when it matches no signature and
   another process's root that *does* match a signature happened at the same time, that one wins. "At the
   same time": both prefixes carry a time and they are at most `SIMULTANEOUS_SECONDS` apart; if either has
   no time, it starts at most `SIMULTANEOUS_LINES` log lines later.
3. Warning-level signature hits (e.g. "Device capability 12 not supported", which SGLang survives) are
   listed as warnings and never chosen.
4. A cause before its symptom: when the chosen root's signature is one that an earlier error's signature
   `explains` (signatures.json: torch's "sm_N is not compatible with the current PyTorch installation" explains
   the generic "no kernel image is available"), that earlier error is the root cause, if it is in the root's
   own process or in the log's unattributed lines (a Python warning printed to stderr carries no prefix).
If the log holds only secondary failures, there is no root cause: the real error is in another log.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, Literal, TypedDict

from stackcheck.errors import BadInputError, ManifestError
from stackcheck.facts.model import KERNEL_PACKAGES
from stackcheck.launch.server_args import MARK, is_server_args

SCHEMA_VERSION = 1
CHUNK_SIZE = 4 * 1024 * 1024
LINE_CAP = 64 * 1024  # bytes of one line that are kept; the rest is skipped
MAX_EVENTS = 1000  # stored error blocks per class (errors, secondary, warnings); the rest are counted
MAX_STREAMS = 4096  # distinct process prefixes; the rest are folded into "other"
MAX_FRAMES = 64  # frames kept per traceback: the first FRAMES_HEAD and the innermost ones
FRAMES_HEAD = 4
TAIL_BYTES = 16 * 1024  # the end of the log kept for the `at_end` signatures (a run that stopped: a hang)
TAIL_LINES = 8  # the last non-blank lines an `at_end` signature is looked for in
MAX_MESSAGE_LINES = 40  # continuation lines of a multi-line exception message (blank lines not counted)
MAX_OPEN_LINES = 5000  # a traceback open this long without its exception line is closed as truncated
SIMULTANEOUS_SECONDS = 2
SIMULTANEOUS_LINES = 200
MAIN = "main"

SecondaryReason = Literal["logging-error", "signal", "child-failed", "killed"]
EventKind = Literal["traceback", "cuda", "nccl", "error", "signature", "secondary", "stall"]

# ----------------------------------------------------------------------------------------------------------
# signatures


@dataclass(frozen=True)
class Cause:
    """One cause a generic error can have (signatures.json `caused_by`): a feature and/or a stack check whose
    failing verdict on the crashed box produces this error. `rules`: only these rules of the verdict count (empty:
    any); `gpus_differ_in`: the cause applies only where the facts' GPUs differ in this field (all read)."""

    feature: str | None
    check: str | None
    rules: tuple[str, ...] = ()
    gpus_differ_in: str | None = None
    source: Any = None

    @property
    def label(self) -> str:
        parts = [f"feature {self.feature}" if self.feature else "", f"check {self.check}" if self.check else ""]
        return " / ".join(p for p in parts if p)


@dataclass(frozen=True)
class Signature:
    id: str
    pattern: re.Pattern[str]
    where: re.Pattern[str] | None
    feature: str | None
    title: str
    explanation: str
    fix: str
    source: Any
    level: str = "error"  # error | warning
    literal: str | None = None
    check: str | None = None  # the stack check (checks.json) that sees this cause before launch
    # a log that stops: matched only in its last TAIL_LINES non-blank lines, when no process reports an error
    # (a hang); `after_not`: a later line of that tail that shows the run went on rules it out
    at_end: bool = False
    after_not: re.Pattern[str] | None = None
    # False: no upgrade removes this cause on the GPU the message names (triage names no plan step for it)
    stack_fix: bool = True
    # with `where`: the frame whose file matches must also be in a function this matches (one such frame)
    where_function: re.Pattern[str] | None = None
    # the signatures whose errors this one causes: an error of this one earlier in the log is their root cause
    explains: tuple[str, ...] = ()
    # the failing verdicts that produce this (generic) error: with facts, triage names the one failing on the box
    caused_by: tuple[Cause, ...] = ()

    def as_json(self) -> SignatureJSON:
        return {
            "id": self.id,
            "feature": self.feature,
            "check": self.check,
            "title": self.title,
            "explanation": self.explanation,
            "fix": self.fix,
            "level": self.level,
            "source": self.source,
        }


class SignatureJSON(TypedDict):
    id: str
    feature: str | None
    check: str | None
    title: str
    explanation: str
    fix: str
    level: str
    source: Any


def _frame_in(sig: Signature, f: Frame) -> bool:
    """The frame is where the signature's error comes from: its file matches `where` and, when the
    signature names one, its function matches `where_function`."""
    if sig.where is None or not sig.where.search(f.file):
        return False
    return sig.where_function is None or bool(sig.where_function.search(f.function or ""))


def parse_signatures(doc: Any, origin: str) -> list[Signature]:
    """Build the signatures from a parsed signatures.json; every problem is a ManifestError (file: $.path)."""
    problems: list[str] = []
    out: list[Signature] = []
    items = doc.get("signatures") if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise ManifestError([f"{origin}: $.signatures: expected a list"])
    for i, item in enumerate(items):
        where = f"{origin}: $.signatures[{i}]"
        if not isinstance(item, dict):
            problems.append(f"{where}: expected an object")
            continue
        missing = [k for k in ("id", "pattern", "title", "explanation", "fix", "source") if k not in item]
        if missing:
            problems.append(f"{where}: missing {', '.join(missing)}")
            continue
        try:
            pattern = re.compile(str(item["pattern"]))
            where_rx = re.compile(str(item["where"])) if item.get("where") else None
            after_not = re.compile(str(item["after_not"])) if item.get("after_not") else None
            where_function = re.compile(str(item["where_function"])) if item.get("where_function") else None
        except re.error as exc:
            problems.append(f"{where}: invalid regular expression: {exc}")
            continue
        literal = item.get("literal")
        explains = item.get("explains", [])
        if not isinstance(explains, list) or not all(isinstance(x, str) and x for x in explains):
            problems.append(f"{where}.explains: expected a list of signature ids")
            continue
        causes = _parse_causes(item.get("caused_by", []), f"{where}.caused_by", problems)
        if causes is None:
            continue
        out.append(
            Signature(
                id=str(item["id"]),
                pattern=pattern,
                where=where_rx,
                feature=item.get("feature") if isinstance(item.get("feature"), str) else None,
                title=str(item["title"]),
                explanation=str(item["explanation"]),
                fix=str(item["fix"]),
                source=item["source"],
                level="warning" if item.get("level") == "warning" else "error",
                literal=literal if isinstance(literal, str) and literal else None,
                check=item.get("check") if isinstance(item.get("check"), str) else None,
                at_end=item.get("at_end") is True,
                after_not=after_not,
                stack_fix=item.get("stack_fix") is not False,
                where_function=where_function,
                explains=tuple(explains),
                caused_by=causes,
            )
        )
    ids = {s.id for s in out}
    for sig in out:
        unknown = [x for x in sig.explains if x not in ids]
        if unknown:
            problems.append(f"{origin}: signature {sig.id}: explains unknown signature {', '.join(unknown)}")
    if problems:
        raise ManifestError(problems)
    return out


def _parse_causes(items: Any, where: str, problems: list[str]) -> tuple[Cause, ...] | None:
    """A signature's `caused_by` list; None (and a problem) when it is malformed."""
    if not isinstance(items, list):
        problems.append(f"{where}: expected a list of causes")
        return None
    out: list[Cause] = []
    for j, c in enumerate(items):
        at = f"{where}[{j}]"
        if not isinstance(c, dict):
            problems.append(f"{at}: expected an object")
            return None
        feature, check, differ = c.get("feature"), c.get("check"), c.get("gpus_differ_in")
        rules = c.get("rules", [])
        if not (isinstance(feature, str) and feature) and not (isinstance(check, str) and check):
            problems.append(f"{at}: names neither a feature nor a check")
            return None
        if any(v is not None and not (isinstance(v, str) and v) for v in (feature, check, differ)):
            problems.append(f"{at}: feature, check and gpus_differ_in are non-empty strings")
            return None
        if not isinstance(rules, list) or not all(isinstance(r, str) and r for r in rules):
            problems.append(f"{at}.rules: expected a list of rule ids")
            return None
        if "source" not in c:
            problems.append(f"{at}: missing source")
            return None
        out.append(Cause(feature, check, tuple(rules), differ, c["source"]))
    return tuple(out)


@lru_cache(maxsize=1)
def _shipped_signatures() -> tuple[Signature, ...]:
    from importlib import resources

    origin = "signatures.json"
    try:
        text = (resources.files("stackcheck.manifests") / "signatures.json").read_text(encoding="utf-8")
        doc = json.loads(text)
    except (OSError, ModuleNotFoundError) as exc:
        raise ManifestError([f"{origin}: cannot read the shipped signatures: {exc}"]) from None
    except ValueError as exc:
        raise ManifestError([f"{origin}: not valid JSON: {exc}"]) from None
    return tuple(parse_signatures(doc, origin))


def load_signatures(path: Path | str | None = None) -> list[Signature]:
    """The shipped signatures (importlib.resources), or those of a given signatures.json file."""
    if path is None:
        return list(_shipped_signatures())
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ManifestError([f"{p}: cannot read: {exc.strerror or exc}"]) from None
    except ValueError as exc:
        raise ManifestError([f"{p}: not valid JSON: {exc}"]) from None
    return parse_signatures(doc, str(p))


# ----------------------------------------------------------------------------------------------------------
# patterns (compiled once)

TB_HEADER = "Traceback (most recent call last):"
LOGGING_ERROR = "--- Logging error ---"
# Literal needles of the prefilter. They start with an upper-case letter or "-" on purpose: the regular
# expression engine then skips most positions of a line at C speed (lower-case first letters make it ~3x slower).
_BASE_NEEDLES = (
    "Error", "ERROR", "Exception", "Traceback", "NCCL", "CUDA", "Killed", "SIGQUIT", "SIGTERM", "Received sig",
    "Interrupt", "Exit code", "FATAL", "CRITICAL", "--- Logging", "Child process", "Initialization failed",
    "-h] ",  # argparse's usage line ("usage: PROG [-h] ..."): its "PROG: error: ..." line follows (_USAGE)
)  # fmt: skip
_RANK_DEAD = r"Rank \d+ scheduler"
_MARK_B = MARK.encode()

_PREFIX_BRACKET = re.compile(r"\[([^\[\]]{1,80})\]:? ?")
_PREFIX_PAREN = re.compile(r"\(([A-Za-z_][\w.-]{0,60}) pid=(\d+)(?:, ip=[^)]{1,60})?\) ?")
_TS = re.compile(
    r"(?:(\d{4})-)?(\d{1,2})-(\d{1,2})[ T](\d{2}):(\d{2}):(\d{2})(?:[.,]\d+)?Z?"
    r"|(\d{2}):(\d{2}):(\d{2})(?:[.,]\d+)?"
)
_TAG = re.compile(r"\b((?:(?:DP|TP|PP|EP|CP|ATTN_DP|MOE_EP)\d+ ?)+|rank\d+|Rank \d+)\b")
# `, line N` may be missing: tracebacks quoted in issue threads are often edited down to the file and function
_FRAME = re.compile(r'\s*File "(?P<file>[^"]*)"(?:, line (?P<line>\d+))?(?:, in (?P<func>.*))?$')
_EXC = re.compile(r"(?P<type>[A-Za-z_][\w.]*)(?::(?: (?P<msg>.*))?)?$")

_CUDA = re.compile(
    r"CUDA error|no kernel image is available|CUDA out of memory|CUDA driver error|cudaError[A-Z]\w*"
    r"|CUBLAS_STATUS_\w+|CUDNN_STATUS_\w+|illegal memory access"
)
_NCCL = re.compile(
    r"NCCL error|NCCL WARN|nccl(?:UnhandledCuda|Internal|System|InvalidUsage|InvalidArgument|Remote)Error"
    r"|Watchdog caught collective operation timeout|NCCL communicator was aborted"
)
_ERRORISH = re.compile(
    r"(?:^|[\s:\]|(])(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*)?(?:Error|Exception)(?::\s|:$|$)"
    r"|(?:^|[\s\[|:])(?:ERROR|CRITICAL|FATAL)(?:[\s:\]|]|$)"
    r"|\bhit an exception\b"
)
_SECONDARY_LINES: tuple[tuple[re.Pattern[str], SecondaryReason], ...] = (
    (re.compile(r"Received sigquit from a child proces|SIGQUIT received|Received SIG[A-Z]+|SIGTERM received"
                r"|received signal \w+|KeyboardInterrupt"), "signal"),
    (re.compile(r"\bRank \d+ scheduler is dead|Exit code: -?\d+|Child process unexpectedly failed"
                r"|Initialization failed\. Please see the error messages above"
                r"|Please check if there are relevant logs|\b(?:scheduler|detokenizer)\w* (?:is dead|died)\b"
                r"|EngineCore failed to start|Engine core initialization failed|WorkerProc hit an exception"),
     "child-failed"),
    (re.compile(r"^Killed\b|\bKilled$"), "killed"),
)  # fmt: skip
_CHILD_FAILED_EXC = _SECONDARY_LINES[1][0]
# A message goes on past blank lines only while it is "open": its exception line carries no text of its own
# (Python prints an exception whose message starts with a newline as "ImportError: " and the paragraphs
# below: sgl-kernel's "Could not load any common_ops library", with the real cause on its "Error details"
# lines) or its last line is a heading ending in ":". A line that starts like a log record ends it.
_RECORD_START = re.compile(r"(?:INFO|WARNING|WARN|DEBUG|ERROR|CRITICAL)\b|\d{4}-\d{2}-\d{2}[ T]\d|\d{2}:\d{2}:\d{2}\b")
_LEVEL_PREFIX = re.compile(
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d{2}-\d{2} \d{2}:\d{2}:\d{2})(?:\.\d+)? \[[^\]]{1,120}\] ?"
)
_EMPTY_EXC = re.compile(r"^[A-Za-z_][\w.]*:\s*$")
# a line that starts a Python exception report of its own ("RuntimeError: ...", "torch.AcceleratorError: ..."):
# never the continuation of another line's record
_OWN_EXCEPTION = re.compile(r"\s*[A-Za-z_][\w.]*(?:Error|Exception|Warning|Interrupt|Exit)\b:?")
_LOGGING_FILE = re.compile(r"(?:^|[/\\])logging[/\\]__init__\.py$")
_SIGNAL_FUNC = re.compile(r"^(?:\w*sig\w*_handler|signal_handler|_?handle_sig\w*|_?on_signal\w*)$")
_SIGNAL_EXC = {"KeyboardInterrupt", "SystemExit"}

# ----------------------------------------------------------------------------------------------------------
# results


@dataclass
class Frame:
    file: str
    line: int | None  # None: a quoted frame without its line number
    function: str | None


def _key_line(part: Part, line: str) -> str:
    """`line` as the message keeps it: masked while it is inside a private key that an earlier line of the message
    (or its exception) opened and no line has closed (irobust5: the key's body lines were kept, each one masked alone
    and none of them a secret to the masking; the BEGIN line's mask is redact's)."""
    last = part.message_lines[-1] if part.message_lines else part.exception or ""
    if ("PRIVATE KEY-----" in last and "-----END" not in last) or last == _KEY_BODY:
        return line if line.startswith("-----END") else _KEY_BODY
    return line


#: what stands for each line of a private key's body in a traceback's message
_KEY_BODY = "***"


@dataclass
class Part:
    """One traceback of a chain: frames and its exception."""

    line: int
    frames: list[Frame] = field(default_factory=list)
    frame_count: int = 0
    exception: str | None = None
    message_lines: list[str] = field(default_factory=list)
    relation: str | None = None  # "cause" | "context": how it follows the previous part

    def add_frame(self, frame: Frame) -> None:
        self.frame_count += 1
        if len(self.frames) >= MAX_FRAMES:
            del self.frames[FRAMES_HEAD]
        self.frames.append(frame)

    def text(self) -> str:
        return "\n".join([self.exception or "", *self.message_lines])


@dataclass
class Event:
    kind: EventKind
    line: int
    stream: str
    timestamp: str | None
    tsec: tuple[int | None, int] | None
    text: str = ""  # one-liners: the line; tracebacks: filled at close from the original exception
    header: str | None = None  # text before "Traceback" on its line, e.g. "Scheduler hit an exception:"
    parts: list[Part] = field(default_factory=list)
    secondary: SecondaryReason | None = None
    signature: Signature | None = None
    level: str = "error"
    logged_message: str | None = None  # a logging error: the record that could not be logged
    truncated: bool = False
    repeats: int = 0
    from_logging_error: bool = False

    @property
    def innermost(self) -> Frame | None:
        if self.parts and self.parts[0].frames:
            return self.parts[0].frames[-1]
        return None

    @property
    def exception_type(self) -> str | None:
        m = _EXC.match(self.text) if self.kind == "traceback" else None
        if m and (m.group("msg") is not None or self.text.endswith((m.group("type"), m.group("type") + ":"))):
            return m.group("type").rsplit(".", 1)[-1]
        return None


class ChainJSON(TypedDict):
    exception: str | None
    file: str | None
    file_line: int | None
    relation: str | None
    line: int


class EventJSON(TypedDict, total=False):
    kind: str
    line: int
    stream: str
    timestamp: str | None
    exception: str
    exception_type: str | None
    message: list[str]
    file: str | None
    file_line: int | None
    function: str | None
    header: str | None
    chain: list[ChainJSON]
    secondary: str | None
    signature: SignatureJSON | None
    feature: str | None
    check: str | None
    level: str
    logged_message: str | None
    repeats: int
    truncated: bool
    also_in: list[str]


class TriageJSON(TypedDict):
    schema_version: int
    log: str
    root_cause: EventJSON | None
    secondary: list[EventJSON]
    errors: list[EventJSON]
    warnings: list[EventJSON]
    lines_read: int
    bytes_read: int
    truncated_lines: int
    dropped: dict[str, int]


@dataclass
class TriageResult:
    log: str
    root_cause: Event | None
    also_in: list[str]
    errors: list[Event]
    secondary: list[Event]
    warnings: list[Event]
    lines_read: int
    bytes_read: int
    truncated_lines: int
    dropped: dict[str, int]
    #: (line number, the arguments' text) of the last line where SGLang logged its server arguments, if any
    server_args: tuple[int, str] | None = None

    @property
    def feature(self) -> str | None:
        """The feature id of the root cause's signature: the hook to map a crash to a plan step."""
        rc = self.root_cause
        return rc.signature.feature if rc is not None and rc.signature is not None else None

    @property
    def check(self) -> str | None:
        """The stack check of the root cause's signature (a cause that is not a serving feature)."""
        rc = self.root_cause
        return rc.signature.check if rc is not None and rc.signature is not None else None


# ----------------------------------------------------------------------------------------------------------
# the analyser (one per log)

_IDLE, _TB, _EXC_STATE, _CHAIN, _CALLSTACK, _LOGERR_WAIT, _USAGE = range(7)
USAGE = "usage: "
ARGPARSE_ERROR = ": error: "
MAX_USAGE_LINES = 4000  # SGLang's usage block lists every flag: ~600 flags fit in far fewer lines
MAX_RECORD_LINES = MAX_MESSAGE_LINES  # continuation lines a one-line error's record takes (a wrapped message)


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


@dataclass
class _Record:
    """The record of the last one-line error: its event, its process and the number of its last line."""

    event: Event
    stream: _Stream
    line: int
    indent: int  # of its first line (without a prefix)
    heading: bool  # its first line ends with ":" (its details follow on the next lines)
    first: int = 0  # the number of its first line


class _Stream:
    __slots__ = ("blanks", "event", "extra", "first", "logerr", "name", "open_lines", "part", "relation",
                 "state")  # fmt: skip

    def __init__(self, name: str) -> None:
        self.name = name
        self.state = _IDLE
        self.event: Event | None = None
        self.part: Part | None = None
        self.blanks = 0
        self.extra = 0
        self.open_lines = 0
        self.relation: str | None = None
        self.logerr = False
        self.first: Event | None = None  # this process's first non-secondary error


def _open_message(part: Part) -> bool:
    """Whether an exception's message may continue after a blank line (see _RECORD_START)."""
    if part.exception is not None and _EMPTY_EXC.match(part.exception):
        return True
    last = next((line for line in reversed(part.message_lines) if line.strip()), None)
    return last is not None and last.rstrip().endswith(":")


def _split_prefix(text: str) -> tuple[str, str | None, str | None, bool]:
    """-> (body, process tag or None, timestamp or None, whether a prefix was found)."""
    tags: list[str] = []
    paren: list[str] = []
    ts: str | None = None
    pos = 0
    found = False
    for _ in range(4):
        if text.startswith("[", pos):
            m = _PREFIX_BRACKET.match(text, pos)
            if not m:
                break
            inner = m.group(1)
            tm = _TS.search(inner)
            tg = _TAG.search(inner)
            if tm is None and tg is None:
                break
            if tm is not None:
                ts = tm.group(0)
            if tg is not None:
                tags.append(tg.group(1).strip())
            pos = m.end()
            found = True
        elif text.startswith("(", pos):
            m = _PREFIX_PAREN.match(text, pos)
            if not m:
                break
            paren.append(f"{m.group(1)} pid={m.group(2)}")
            pos = m.end()
            found = True
        else:
            break
    if not found:
        return text, None, None, False
    if paren:
        # "(Actor pid=N)" names the process itself (Ray, vLLM): a bracket tag after it ("[... DP1 TP0]", on the
        # header line of SGLang's traceback record only) is that same process, so it does not split its lines
        # into two streams (the frames and exception follow under the bare "(Actor pid=N)" prefix)
        return text[pos:], " ".join(paren), ts, True
    return text[pos:], (" ".join(tags) if tags else None), ts, True


def _ts_seconds(ts: str | None) -> tuple[int | None, int] | None:
    if ts is None:
        return None
    m = _TS.search(ts)
    if m is None:
        return None
    if m.group(4) is not None:
        day = int(m.group(2)) * 31 + int(m.group(3))
        return day, int(m.group(4)) * 3600 + int(m.group(5)) * 60 + int(m.group(6))
    return None, int(m.group(7)) * 3600 + int(m.group(8)) * 60 + int(m.group(9))


class Analyzer:
    """Feed it lines (`feed`), then `finish()`. Keeps bounded state; see the module docstring."""

    def __init__(self, signatures: Sequence[Signature], log: str = "<log>") -> None:
        self.signatures = [s for s in signatures if not s.at_end]
        self.at_end = [s for s in signatures if s.at_end]  # looked for in the log's tail only, by finish()
        self.log = log
        needles = list(_BASE_NEEDLES) + [s.literal for s in self.signatures if s.literal]
        alternation = "|".join([*(re.escape(n) for n in dict.fromkeys(needles)), _RANK_DEAD])
        self.needle_s = re.compile(alternation)
        self.needle_b = re.compile(alternation.encode("utf-8"))
        self.streams: dict[str, _Stream] = {}
        self.main = self._stream(MAIN)
        self.last = self.main
        self.busy = 0  # number of streams not idle
        self.errors: list[Event] = []
        self.secondary: list[Event] = []
        self.warnings: list[Event] = []
        self.dropped = {"errors": 0, "secondary": 0, "warnings": 0}
        self._seen: dict[tuple[str, str, str | None, str], Event] = {}
        self._record_open: _Record | None = None  # the last one-line error's record (see _continues)
        self._continuing: _Record | None = None  # set while a continuation line of that record is handled
        self._line = ""  # the line being fed, with its prefix
        self.server_args: tuple[int, str] | None = None  # the last line logging SGLang's arguments (server_args.py)

    def take_server_args(self, buf: bytes, end: int, line0: int) -> None:
        """Keep the last line of `buf[:end]` (whole lines; the first numbered `line0`) where SGLang logs its server
        arguments (stackcheck.launch.server_args): found by bytes.find, outside the prefilter, whose needles start
        with an upper-case letter (a lower-case one costs every line of the log ~15 %)."""
        at = buf.rfind(_MARK_B, 0, end)
        while at >= 0:
            start = buf.rfind(b"\n", 0, at) + 1
            stop = buf.find(b"\n", at, end)
            text = buf[start : min(end if stop < 0 else stop, start + LINE_CAP)].decode("utf-8", "replace")
            first = is_server_args(text)
            if first >= 0:
                self.server_args = (line0 + buf.count(b"\n", 0, start), text[first:])
                return
            at = buf.rfind(_MARK_B, 0, start)

    # -- streams -------------------------------------------------------------------------------------------
    def _stream(self, name: str) -> _Stream:
        st = self.streams.get(name)
        if st is None:
            if len(self.streams) >= MAX_STREAMS:
                name = "other"
                st = self.streams.get(name)
                if st is not None:
                    return st
            st = _Stream(name)
            self.streams[name] = st
        return st

    def _set_state(self, st: _Stream, state: int) -> None:
        if (st.state == _IDLE) != (state == _IDLE):
            self.busy += 1 if state != _IDLE else -1
        st.state = state
        st.open_lines = 0

    # -- input ---------------------------------------------------------------------------------------------
    def feed(self, lineno: int, text: str) -> None:
        body, tag, ts, had_prefix = _split_prefix(text)
        self._line = text
        rec = self._record_open
        cont = rec is not None and not had_prefix and self._continues(rec, lineno, text)
        if tag is not None:
            st = self._stream(tag)
        elif had_prefix:
            st = self.main
        elif cont and rec is not None:
            st = rec.stream  # the record's own process: an unprefixed line of the same record
        else:
            st = self.last if self.last.state != _IDLE else self.main
        self.last = st
        if cont and rec is not None:
            rec.line = lineno
            self._continuing = rec
            try:
                self._handle(st, lineno, body, rec.event.timestamp, False)
            finally:
                self._continuing = None
            return
        if rec is not None and lineno != rec.line:
            self._record_open = None  # another line: the record ended
        # vLLM-style loggers print a traceback line by line, each as "ERROR 10-26 09:41:05 [core.py:708] ...":
        # inside a traceback (or where one starts) that record prefix is dropped so the frames are read. Elsewhere
        # the line stays whole, its level word being what marks it as an error.
        m = _LEVEL_PREFIX.match(body)
        if m is not None and st.state != _IDLE:
            body = body[m.end() :]  # a line of the record being read: not a new record
        elif m is not None and TB_HEADER in body:
            body = body[m.end() :]
            ts = ts or m.group(1)
        self._handle(st, lineno, body, ts, ts is not None)

    def _continues(self, rec: _Record, lineno: int, text: str) -> bool:
        """Whether an unprefixed line goes on the record of the last one-line error (module docstring, rule 1)."""
        if lineno != rec.line + 1 or rec.stream.state != _IDLE or self.last.state != _IDLE:
            return False
        if lineno - rec.first > MAX_RECORD_LINES:  # a wrapped message is a few lines, not a listing without end
            return False
        body = text.lstrip(" \t")
        if not body.strip() or TB_HEADER in body or body.startswith((LOGGING_ERROR, USAGE)):
            return False
        if _RECORD_START.match(body) or _LEVEL_PREFIX.match(body) or _OWN_EXCEPTION.match(body):
            return False
        if rec.indent:  # a row of an indented listing: a line as deep as it is the next row
            return _indent(text) < rec.indent
        return rec.heading

    def _handle(self, st: _Stream, lineno: int, s: str, ts: str | None, new_record: bool) -> None:
        for _ in range(3):  # a line that ends a block is handled again in the idle state
            state = st.state
            if state == _IDLE:
                self._idle(st, lineno, s, ts, logerr=False)
                return
            st.open_lines += 1
            if state == _LOGERR_WAIT:
                self._set_state(st, _IDLE)
                self._idle(st, lineno, s, ts, logerr=True)
                return
            if state == _USAGE:
                # argparse's usage block: indented continuation lines, then "PROG: error: MESSAGE" when it
                # rejected the command (a line the prefilter would skip: no Error, no Traceback in it)
                if (s[:1] in (" ", "\t") or not s.strip()) and st.open_lines <= MAX_USAGE_LINES:
                    return
                self._set_state(st, _IDLE)
                if ARGPARSE_ERROR in s and not s.startswith(" "):
                    self._one_liner(st, lineno, s, ts)
                    return
                continue
            if state == _TB:
                if self._in_traceback(st, s):
                    return
            elif state == _EXC_STATE:
                if self._after_exception(st, s, new_record):
                    return
            elif state == _CHAIN:
                if not s.strip():
                    return
                if TB_HEADER in s and st.event is not None:
                    st.part = Part(line=lineno, relation=st.relation)
                    st.event.parts.append(st.part)
                    self._set_state(st, _TB)
                    return
            elif state == _CALLSTACK:
                if s[:1] in (" ", "\t"):
                    m = _FRAME.match(s)
                    if m and st.event is not None and _SIGNAL_FUNC.match(m.group("func") or ""):
                        st.event.secondary = st.event.secondary or "signal"
                    return
                if s.startswith("Message: ") and st.event is not None:
                    st.event.logged_message = s[len("Message: ") :][:500]
                    return
                if s.startswith("Arguments: "):
                    self._close(st)
                    return
            self._close(st)

    def _idle(self, st: _Stream, lineno: int, s: str, ts: str | None, logerr: bool) -> None:
        i = s.find(TB_HEADER)
        if i >= 0:
            header = s[:i].strip() or None
            ev = Event("traceback", lineno, st.name, ts, _ts_seconds(ts), header=header)
            ev.from_logging_error = logerr
            st.event = ev
            st.part = Part(line=lineno)
            ev.parts.append(st.part)
            self._set_state(st, _TB)
            return
        if s.startswith(LOGGING_ERROR):
            self._set_state(st, _LOGERR_WAIT)
            return
        if s.startswith(USAGE) and "[-h]" in s:
            self._set_state(st, _USAGE)
            return
        if self.needle_s.search(s):
            self._one_liner(st, lineno, s, ts)

    def _in_traceback(self, st: _Stream, s: str) -> bool:
        part = st.part
        assert part is not None
        if s.startswith("  File ") or s.startswith("File "):
            m = _FRAME.match(s)
            if m:
                line = m.group("line")
                part.add_frame(Frame(m.group("file"), int(line) if line else None, m.group("func")))
                return True
        if not s.strip() or s[:1] in (" ", "\t"):
            if st.open_lines > MAX_OPEN_LINES and st.event is not None:
                st.event.truncated = True
                return False
            return True
        if TB_HEADER in s:
            if st.event is not None:
                st.event.truncated = True
            return False
        part.exception = s.strip()[:2000]
        self._set_state(st, _EXC_STATE)
        st.blanks = 0
        st.extra = 0
        return True

    def _after_exception(self, st: _Stream, s: str, new_record: bool) -> bool:
        stripped = s.strip()
        if not stripped:
            st.blanks += 1
            return st.blanks <= 2
        if stripped.startswith("The above exception was the direct cause"):
            st.relation = "cause"
            self._set_state(st, _CHAIN)
            return True
        if stripped.startswith("During handling of the above exception"):
            st.relation = "context"
            self._set_state(st, _CHAIN)
            return True
        if stripped == "Call stack:" and st.event is not None and st.event.from_logging_error:
            self._set_state(st, _CALLSTACK)
            return True
        if new_record or st.extra >= MAX_MESSAGE_LINES or TB_HEADER in s:
            return False
        if st.blanks and not (st.part is not None and _open_message(st.part) and not _RECORD_START.match(s)):
            return False
        if s.startswith(LOGGING_ERROR) or any(rx.search(s) for rx, _ in _SECONDARY_LINES):
            return False
        if st.part is not None:
            st.part.message_lines.append(_key_line(st.part, s.rstrip()[:2000]))
        st.extra += 1
        st.blanks = 0
        return True

    # -- events --------------------------------------------------------------------------------------------
    def _one_liner(self, st: _Stream, lineno: int, s: str, ts: str | None) -> None:
        text = s.strip()[:2000]
        for rx, reason in _SECONDARY_LINES:
            if rx.search(text):
                ev = Event("secondary", lineno, st.name, ts, _ts_seconds(ts), text=text, secondary=reason)
                self._record(st, ev)
                return
        sig = self._match_text(text, [])
        kind: EventKind | None = None
        if _NCCL.search(text):
            kind = "nccl"
        elif _CUDA.search(text):
            kind = "cuda"
        elif _ERRORISH.search(text):
            kind = "error"
        if kind is None and sig is None:
            return
        rec = self._continuing
        if rec is not None:  # a line of an earlier record: its time is that record's
            ev = Event(kind or "signature", lineno, st.name, rec.event.timestamp, rec.event.tsec, text=text,
                       signature=sig)  # fmt: skip
        else:
            ev = Event(kind or "signature", lineno, st.name, ts, _ts_seconds(ts), text=text, signature=sig)
        if kind is None and sig is not None and sig.level == "warning":
            ev.level = "warning"
        if rec is not None:
            if (st.first is rec.event and rec.event.signature is None and sig is not None
                    and ev.level != "warning"):  # fmt: skip
                st.first = ev  # the same message, named by the words of this line
            self._record(st, ev)
            return
        self._record(st, ev)
        if ev.level != "warning":
            self._record_open = _Record(ev, st, lineno, _indent(self._line), text.endswith(":"), lineno)

    def _match_text(self, text: str, frames: list[Frame]) -> Signature | None:
        for sig in self.signatures:
            if sig.pattern.search(text):
                if sig.where is None:
                    return sig
                if any(_frame_in(sig, f) for f in frames) or (not frames and sig.where.search(text)):
                    return sig
        return None

    def _close(self, st: _Stream) -> None:
        ev = st.event
        st.event = None
        st.part = None
        st.relation = None
        self._set_state(st, _IDLE)
        if ev is None:
            return
        first = ev.parts[0]
        if first.exception is None:
            ev.truncated = True
        ev.text = first.exception or "(traceback without its exception line)"
        # secondary?
        exc_type = ev.exception_type
        if ev.from_logging_error or any(_LOGGING_FILE.search(f.file) for f in first.frames):
            ev.secondary = "logging-error"
        elif (exc_type in _SIGNAL_EXC or any(_SIGNAL_FUNC.match(f.function or "") for f in first.frames)
              or ev.secondary == "signal"):  # fmt: skip
            ev.secondary = "signal"
        elif any(_CHILD_FAILED_EXC.search(p.text()) for p in ev.parts):
            ev.secondary = "child-failed"
        for part in ev.parts:
            if part.exception is None:
                continue
            sig = self._match_text(part.text(), part.frames)
            if sig is not None:
                ev.signature = sig
                break
        self._record(st, ev)

    def _record(self, st: _Stream, ev: Event) -> None:
        if ev.secondary is None and ev.level != "warning" and st.first is None:
            st.first = ev
        key = (st.name, ev.kind, ev.secondary, ev.text)
        seen = self._seen.get(key)
        if seen is not None:
            seen.repeats += 1
            return
        if ev.secondary is not None:
            bucket, name = self.secondary, "secondary"
        elif ev.level == "warning":
            bucket, name = self.warnings, "warnings"
        else:
            bucket, name = self.errors, "errors"
        if len(bucket) >= MAX_EVENTS:
            self.dropped[name] += 1
            return
        bucket.append(ev)
        self._seen[key] = ev

    # -- result --------------------------------------------------------------------------------------------
    def _stall(self, tail: Sequence[tuple[int, str]]) -> Event | None:
        """A run that stopped without an error: the newest of the log's last TAIL_LINES non-blank lines that an
        `at_end` signature matches, unless a later one matches its `after_not` (the run went on)."""
        last = [(n, t.strip()) for n, t in tail if t.strip()][-TAIL_LINES:]
        for i in range(len(last) - 1, -1, -1):
            lineno, text = last[i]
            for sig in self.at_end:
                if not sig.pattern.search(text):
                    continue
                if sig.after_not is not None and any(sig.after_not.search(t) for _, t in last[i + 1 :]):
                    continue
                _body, tag, ts, _ = _split_prefix(text)
                return Event("stall", lineno, tag or MAIN, ts, _ts_seconds(ts), text=text[:2000], signature=sig)
        return None

    def _explained(self, root: Event) -> Event:
        """The earliest error before the root whose signature explains the root's (module docstring, rule 4),
        in the root's process or in the unattributed lines; else the root."""
        sig = root.signature
        if sig is None or not any(s.explains for s in self.signatures):
            return root
        for ev in sorted(self.errors, key=lambda e: e.line):
            if ev.line >= root.line:
                break
            if (ev.signature is not None and sig.id in ev.signature.explains and ev.secondary is None
                    and ev.level != "warning" and ev.stream in (root.stream, MAIN)):  # fmt: skip
                return ev
        return root

    def finish(
        self, lines_read: int, bytes_read: int, truncated_lines: int, tail: Sequence[tuple[int, str]] = ()
    ) -> TriageResult:
        for st in list(self.streams.values()):
            if st.state == _TB and st.event is not None:
                st.event.truncated = True
            if st.state != _IDLE:
                self._close(st)
        firsts = sorted((st.first for st in self.streams.values() if st.first is not None), key=lambda e: e.line)
        root: Event | None = None
        if firsts:
            root = firsts[0]
            if root.signature is None:
                for cand in firsts[1:]:
                    if cand.signature is not None and _simultaneous(root, cand):
                        root = cand
                        break
        if root is not None and root.signature is not None:
            root = self._explained(root)
        if root is None and not self.errors and not self.secondary and self.at_end:
            root = self._stall(tail)
        also_in: list[str] = []
        if root is not None and root.kind != "stall":
            also_in = [
                e.stream for e in firsts
                if e is not root and (e.text == root.text or (
                    root.signature is not None and e.signature is not None and e.signature.id == root.signature.id))
            ]  # fmt: skip
        return TriageResult(
            log=self.log,
            root_cause=root,
            also_in=also_in,
            errors=sorted(self.errors, key=lambda e: e.line),
            secondary=sorted(self.secondary, key=lambda e: e.line),
            warnings=sorted(self.warnings, key=lambda e: e.line),
            lines_read=lines_read,
            bytes_read=bytes_read,
            truncated_lines=truncated_lines,
            dropped=dict(self.dropped),
            server_args=self.server_args,
        )


def _simultaneous(a: Event, b: Event) -> bool:
    if a.tsec is not None and b.tsec is not None:
        same_day = a.tsec[0] is None or b.tsec[0] is None or a.tsec[0] == b.tsec[0]
        return same_day and abs(a.tsec[1] - b.tsec[1]) <= SIMULTANEOUS_SECONDS
    return 0 <= b.line - a.line <= SIMULTANEOUS_LINES


# ----------------------------------------------------------------------------------------------------------
# the streaming reader


def _decode(raw: bytes) -> Iterator[str]:
    text = raw.decode("utf-8", errors="replace")
    if "\r" in text:
        for seg in text.split("\r"):
            if seg:
                yield seg
    else:
        yield text


def triage_stream(
    stream: IO[bytes],
    log: str = "<log>",
    signatures: Sequence[Signature] | None = None,
    chunk_size: int = CHUNK_SIZE,
) -> TriageResult:
    """Triage a log read from a binary stream; OSError while reading is the caller's to report."""
    sigs = load_signatures() if signatures is None else signatures
    an = Analyzer(sigs, log)
    needle = an.needle_b
    feed = an.feed
    lineno = 1  # number of the line that starts at the current position
    bytes_read = 0
    truncated = 0
    carry = b""
    skipping = False  # inside the rest of an over-long line
    tail = b""  # the log's last TAIL_BYTES, for the signatures of a run that stopped (Analyzer._stall)
    while True:
        chunk = stream.read(chunk_size)
        if not chunk:
            break
        bytes_read += len(chunk)
        tail = (tail + chunk)[-TAIL_BYTES:] if len(chunk) < TAIL_BYTES else chunk[-TAIL_BYTES:]
        if skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                continue
            skipping = False
            lineno += 1
            chunk = chunk[nl + 1 :]
        buf = carry + chunk if carry else chunk
        carry = b""
        pos = 0
        end = len(buf)
        if _MARK_B in buf:  # SGLang's arguments, in the whole lines of this buffer (each line is looked at once)
            an.take_server_args(buf, buf.rfind(b"\n") + 1, lineno)
        while pos < end:
            if not an.busy and an._record_open is None:  # an open record: its next line is read whole
                m = needle.search(buf, pos)
                if m is None:
                    last_nl = buf.rfind(b"\n", pos)
                    if last_nl >= 0:
                        lineno += buf.count(b"\n", pos, last_nl + 1)
                        pos = last_nl + 1
                    break
                start = buf.rfind(b"\n", pos, m.start()) + 1
                if start > pos:
                    lineno += buf.count(b"\n", pos, start)
                    pos = start
            nl = buf.find(b"\n", pos)
            if nl < 0:
                break
            raw = buf[pos:nl] if nl - pos <= LINE_CAP else buf[pos : pos + LINE_CAP]
            if nl - pos > LINE_CAP:
                truncated += 1
            for seg in _decode(raw):
                feed(lineno, seg)
            lineno += 1
            pos = nl + 1
        rest = buf[pos:]
        if len(rest) > LINE_CAP:
            # an over-long line without its end in this buffer: keep its head, skip the rest
            truncated += 1
            if an.busy or needle.search(rest, 0, LINE_CAP):
                for seg in _decode(rest[:LINE_CAP]):
                    feed(lineno, seg)
            skipping = True
        else:
            carry = rest
    if carry:
        if _MARK_B in carry:
            an.take_server_args(carry, len(carry), lineno)
        for seg in _decode(carry):
            feed(lineno, seg)
    elif skipping:
        pass
    else:
        lineno -= 1
    lines_read = lineno if bytes_read else 0
    return an.finish(lines_read, bytes_read, truncated, _tail_lines(tail, lines_read) if an.at_end else ())


def _tail_lines(tail: bytes, last_line: int) -> list[tuple[int, str]]:
    """(line number, text) of the whole lines in the log's last bytes, the last one numbered `last_line` (a bare
    CR ends a progress bar's line: the text after the last one is the line as shown)."""
    parts = tail.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()  # the log ends with a newline
    if len(tail) >= TAIL_BYTES and parts:
        parts.pop(0)  # cut in its middle
    first = last_line - len(parts) + 1
    return [(first + i, p.decode("utf-8", "replace").rsplit("\r", 1)[-1]) for i, p in enumerate(parts)]


def triage_file(path: Path | str, signatures: Sequence[Signature] | None = None) -> TriageResult:
    """Triage a log file; `-` reads standard input. Unreadable input is a BadInputError (exit 2).

    Never a hang on what a path can name besides a file: a character device (/dev/zero, /dev/urandom, a tty) never
    ends and is refused; a named pipe is opened without waiting for a writer and read as standard input is (to
    its writer's end) once something was written to it, refused where nothing was and no writer has it open."""
    if str(path) == "-":
        import sys

        if sys.stdin is None:
            raise BadInputError("<stdin>: standard input is closed")
        try:
            return triage_stream(sys.stdin.buffer, "<stdin>", signatures)
        except OSError as exc:
            raise BadInputError(f"<stdin>: cannot read: {exc.strerror or exc}") from None
    p = Path(path)
    try:
        with _open_log(p) as f:
            if f.read(2) == b"\x1f\x8b":  # a gzip-compressed log (rotated logs often are): read it streamed
                import gzip

                f.seek(0)
                with gzip.open(f) as z:
                    try:
                        return triage_stream(z, str(p), signatures)  # type: ignore[arg-type]
                    except (OSError, EOFError) as exc:
                        raise BadInputError(f"{p}: not a readable gzip file: {exc}") from None
            f.seek(0)
            return triage_stream(f, str(p), signatures)
    except FileNotFoundError:
        raise BadInputError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise BadInputError(f"{p}: is a directory, expected a log file") from None
    except OSError as exc:
        raise BadInputError(f"{p}: cannot read: {exc.strerror or exc}") from None


class _PipeLog:
    """A named pipe's bytes, seekable back to its start until the first seek (the gzip sniff): the bytes read
    before that seek are kept and read again, the rest comes from the pipe."""

    def __init__(self, raw: IO[bytes], first: bytes) -> None:
        self._raw = raw
        self._kept = first
        self._pos = 0
        self._seeked = False

    def read(self, n: int = -1) -> bytes:
        if self._pos < len(self._kept):
            end = len(self._kept) if n < 0 else min(len(self._kept), self._pos + n)
            out = self._kept[self._pos : end]
            self._pos = end
            return out
        data = self._raw.read(n)
        if not self._seeked:
            self._kept += data
            self._pos += len(data)
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        if self._seeked or whence != 0 or not 0 <= offset <= self._pos:
            raise OSError(f"cannot seek a pipe to {offset}")
        self._seeked = True
        self._pos = offset
        return offset

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> _PipeLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_log(p: Path) -> IO[bytes]:
    """The log at `p`, opened for reading bytes; a character device or a writerless empty named pipe is a
    BadInputError, a named pipe is read from its first bytes on (no seek)."""
    import os
    import stat

    fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "Is a directory")
        if stat.S_ISCHR(mode):
            raise BadInputError(f"{p}: a character device, not a log file (a device such as /dev/zero never ends)")
        if not stat.S_ISFIFO(mode):
            return os.fdopen(fd, "rb")
        try:
            first = os.read(fd, CHUNK_SIZE)
        except BlockingIOError:
            first = b""  # a writer has it open and has written nothing yet
        else:
            if not first:
                raise BadInputError(f"{p}: a named pipe with nothing in it and no writer: start the writer first, "
                                    "or pipe the log to `stackcheck triage -`")  # fmt: skip
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return _PipeLog(os.fdopen(fd, "rb"), first)  # type: ignore[return-value]
    except BaseException:
        os.close(fd)
        raise


# ----------------------------------------------------------------------------------------------------------
# output


def event_json(ev: Event, also_in: list[str] | None = None) -> EventJSON:
    inner = ev.innermost
    out: EventJSON = {
        "kind": ev.kind,
        "line": ev.line,
        "stream": ev.stream,
        "timestamp": ev.timestamp,
        "exception": ev.text,
        "exception_type": ev.exception_type,
        "file": inner.file if inner else None,
        "file_line": inner.line if inner else None,
        "function": inner.function if inner else None,
        "secondary": ev.secondary,
        "signature": ev.signature.as_json() if ev.signature else None,
        "feature": ev.signature.feature if ev.signature else None,
        "check": ev.signature.check if ev.signature else None,
        "level": ev.level,
        "repeats": ev.repeats,
        "truncated": ev.truncated,
    }
    if ev.kind == "traceback":
        out["header"] = ev.header
        out["message"] = list(ev.parts[0].message_lines)
        chain: list[ChainJSON] = []
        for p in ev.parts:
            f = p.frames[-1] if p.frames else None
            chain.append({"exception": p.exception, "file": f.file if f else None,
                          "file_line": f.line if f else None, "relation": p.relation, "line": p.line})  # fmt: skip
        out["chain"] = chain
    if ev.logged_message is not None:
        out["logged_message"] = ev.logged_message
    if also_in is not None:
        out["also_in"] = also_in
    return out


def result_json(result: TriageResult) -> TriageJSON:
    rc = result.root_cause
    return {
        "schema_version": SCHEMA_VERSION,
        "log": result.log,
        "root_cause": event_json(rc, result.also_in) if rc is not None else None,
        "secondary": [event_json(e) for e in result.secondary],
        "errors": [event_json(e) for e in result.errors],
        "warnings": [event_json(e) for e in result.warnings],
        "lines_read": result.lines_read,
        "bytes_read": result.bytes_read,
        "truncated_lines": result.truncated_lines,
        "dropped": dict(result.dropped),
    }


@dataclass(frozen=True)
class TriageReport:
    """What `stackcheck triage` shows: the log's triage and, when facts were given (`asked`), the plan's
    answer for its root cause (`fix`, None: the plan says nothing about it) and, for a generic error, its
    causes that fail on the box (`cause`, from `name_causes`; `fix` is then the plan's answer for the one
    named, when it is alone)."""

    result: TriageResult
    fix: dict[str, Any] | None = None
    asked: bool = False
    #: the manifests' sources, read only when a format names every `source` by them (the JSON)
    sources: Callable[[], Mapping[str, Any]] | None = None
    #: with facts, the causes of a generic root cause that fail on the box (`name_causes`); None: none named
    cause: dict[str, Any] | None = None
    #: with facts, the launch judged where SGLang logged its arguments ({line, flags, facts}); None: the default one
    launch: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON document (schemas/triage.schema.json): secrets in the log's text masked, every `source`
        as [{id, title, url}]."""
        from stackcheck.knowledge.sources import normalize
        from stackcheck.redact import redact_tree

        doc: dict[str, Any] = redact_tree(result_json(self.result))
        if self.asked:
            doc["fix"] = redact_tree(self.fix)
            if self.cause is not None:
                doc["cause"] = redact_tree(self.cause)
            if self.launch is not None:
                doc["launch"] = redact_tree(self.launch)
        out: dict[str, Any] = normalize(doc, self.sources() if self.sources is not None else {})
        return out


def triage_with_plan(
    result: TriageResult,
    plan: Mapping[str, Any],
    checks: Sequence[Mapping[str, Any]] = (),
    launch_only: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any] | None:
    """What fixes the root cause, from a plan (stackcheck.plan.make_plan) and the box's stack checks.

    A feature's signature: the first step whose `unblocks` names the feature ({"step": N, ...the step}), or
    the plan's still-blocked entry for it ({"still_blocked": True, "why", "workaround"}); a signature with
    `stack_fix: false` (no upgrade removes that cause on the GPU it names) is still blocked whatever the plan. A check's
    signature: {"check": id, "status", "message" (the check's first failing reason on this box), "fix" (the
    check's fix), and "step"/the step when a plan step changes the fix's component}; a check ok on the facts whose
    rules read the launch (`launch_only`, launch_rules' map) is "unknown" with those rules `not_judged`. None when
    neither says anything about it."""
    sig = result.root_cause.signature if result.root_cause is not None else None
    return plan_answer(result.feature, result.check, sig, plan, checks, launch_only)


def _reads_launch(pred: Any, known: Collection[str] = ()) -> bool:
    """A condition (a rule's `when` or `require`, nested `all`/`any`/`not`) reads a launch fact (`launch.*`) that is
    not one of `known` (the facts the logged launch decides: `launch.tp` is known by "tp")."""
    if isinstance(pred, Mapping):
        fact = pred.get("fact")
        if isinstance(fact, str) and fact.startswith("launch.") and fact[7:].split(".", 1)[0] not in known:
            return True
        return any(_reads_launch(v, known) for v in pred.values() if isinstance(v, Mapping | list))
    if isinstance(pred, list):
        return any(_reads_launch(v, known) for v in pred)
    return False


def launch_rules(manifests: Any, known: Collection[str] = ()) -> dict[str, tuple[str, ...]]:
    """Per item ("check ID", "feature ID"), the ids of its rules whose `when` or `require` reads a launch fact
    (`launch.*`: the server's command line and its model) other than `known`. Without SGLang's logged arguments
    triage knows none of the command line that crashed, so the audit it builds judges these rules on no launch at
    all: a rule whose `when` needs a flag (`launch.symm_mem exists`) is left out, one that reads `launch.tp` takes the
    GPU count; with them (`known`: the facts they decide), what the line does not say (the model's config) is still
    not known. Such a verdict's "ok" says nothing about the launch that crashed; triage shows it as not judged
    (unknown), never ok."""
    out: dict[str, tuple[str, ...]] = {}
    for kind, items in (("feature", getattr(manifests, "features", ())), ("check", getattr(manifests, "checks", ()))):
        for item in items:
            if not isinstance(item, Mapping):
                continue
            rules = tuple(
                str(r.get("id"))
                for r in item.get("rules") or []
                if isinstance(r, Mapping)
                and (_reads_launch(r.get("when"), known) or _reads_launch(r.get("require"), known))
            )
            if rules:
                out[f"{kind} {item.get('id')}"] = rules
    return out


#: what triage says of a verdict that is ok on the facts but has rules only a launch decides (launch_rules)
LAUNCH_NOT_KNOWN = (
    "ok on the facts given, but not judged for the launch that crashed: rule(s) {rules} read the launch's options "
    "(its flags, its model), which triage does not know (a log and the box's facts hold no command line); "
    "`stackcheck gate --dry-run [--facts FILE] -- <the launch command>` judges them"
)


def plan_answer(
    feature: str | None,
    check: str | None,
    sig: Signature | None,
    plan: Mapping[str, Any],
    checks: Sequence[Mapping[str, Any]] = (),
    launch_only: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any] | None:
    """triage_with_plan's answer for a feature and/or a stack check (the root cause's signature's, or the cause
    `name_causes` named on the box); `sig`: the signature whose `stack_fix` applies to the feature. `launch_only`:
    launch_rules' map; a check that is ok on the facts but has such rules is "unknown" here (`not_judged`: those
    rules), never ok."""
    steps = plan.get("steps")
    numbered = list(enumerate(steps if isinstance(steps, list) else [], 1))
    if feature is not None and sig is not None and not sig.stack_fix:
        # the cause is a launch choice no release runs on this GPU: a step that makes the feature ok in general
        # (audit's default launch) does not fix it
        return {"still_blocked": True, "feature": feature, "why": sig.explanation, "upstream_supported": False}
    if feature is not None:
        for n, step in numbered:
            if isinstance(step, dict) and feature in (step.get("unblocks") or []):
                return {"step": n, **step}
        for entry in plan.get("still_blocked") or []:
            if isinstance(entry, dict) and entry.get("feature") == feature:
                return {"still_blocked": True, **entry}
    if check is None:
        return None
    verdict = next((c for c in checks if isinstance(c, Mapping) and c.get("id") == check), None)
    if verdict is None:
        return None
    out: dict[str, Any] = {"check": check, "status": verdict.get("status")}
    failing = [r for r in verdict.get("reasons") or [] if isinstance(r, Mapping) and r.get("result") == "fail"]
    if failing:
        out["message"] = failing[0].get("message")
    unjudged = list((launch_only or {}).get(f"check {check}") or ())
    if out["status"] == "ok" and unjudged:
        out.update(status="unknown", not_judged=unjudged,
                   message=LAUNCH_NOT_KNOWN.format(rules=", ".join(unjudged)))  # fmt: skip
    fix = verdict.get("fix")
    if isinstance(fix, Mapping):
        out["fix"] = dict(fix)
        component = str(fix.get("component") or "")
        names = {component, *(KERNEL_PACKAGES if component in KERNEL_PACKAGES else ())}
        for n, step in numbered:
            if isinstance(step, dict) and str(step.get("component")) in names:
                out.update({"step": n, "plan_step": step})
                break
    return out


def _counts(verdict: Mapping[str, Any] | None, kind: str) -> str:
    """A verdict as a cause: "fail" (a blocked feature; a check failed, or warning for a rule that only degrades),
    "unknown", or "ok" (anything else: ok, skipped, degraded by another rule's kind)."""
    if verdict is None:
        return "unknown"
    status = verdict.get("status")
    if status in (("blocked",) if kind == "feature" else ("failed", "warning")):
        return "fail"
    return "unknown" if status == "unknown" else "ok"


def _judge_cause(
    cause: Cause,
    features: Mapping[str, Mapping[str, Any]],
    checks: Mapping[str, Mapping[str, Any]],
    gpus: Sequence[Any],
    launch_only: Mapping[str, Sequence[str]] | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """(outcome, failing reasons) of one cause on the box: "fail" only where a named verdict fails by one of the
    cause's rules (any rule where it lists none) and its GPU condition holds; "unknown" where a verdict (or the
    condition) cannot be judged and none fails, or where it passes but one of those rules reads the launch
    (`launch_only`: launch_rules' map; the launch that crashed is not known); else "ok"."""
    reasons: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()
    outcomes: list[str] = []
    for kind, ident, table in (("feature", cause.feature, features), ("check", cause.check, checks)):
        if ident is None:
            continue
        verdict = table.get(ident)
        outcome = _counts(verdict, kind)
        mine = [
            r for r in (verdict or {}).get("reasons") or []
            if isinstance(r, Mapping) and (not cause.rules or r.get("rule") in cause.rules)
        ]  # fmt: skip
        if outcome == "fail":
            failing = [r for r in mine if r.get("result") == "fail"]
            if not failing:
                outcome = "unknown" if any(r.get("result") == "unknown" for r in mine) else "ok"
            for r in failing:
                key = (r.get("rule"), str(r.get("observed")), str(r.get("required")), r.get("message"))
                if key not in seen:
                    seen.add(key)
                    reasons.append({"in": f"{kind} {ident}", **{k: r[k] for k in _REASON_KEYS if k in r}})
        elif outcome == "ok" and cause.rules and any(r.get("result") == "unknown" for r in mine):
            outcome = "unknown"
        unjudged = (launch_only or {}).get(f"{kind} {ident}") or ()
        if outcome == "ok" and any(not cause.rules or r in cause.rules for r in unjudged):
            outcome = "unknown"
        outcomes.append(outcome)
    outcome = "fail" if "fail" in outcomes else "unknown" if "unknown" in outcomes else "ok"
    if outcome == "fail" and cause.gpus_differ_in is not None:
        values = [g.get(cause.gpus_differ_in) if isinstance(g, Mapping) else None for g in gpus]
        if len(values) < 2 or any(v is None for v in values):
            return ("unknown" if len(values) >= 2 else "ok"), []
        if len(set(map(str, values))) < 2:
            return "ok", []
    return outcome, reasons


_REASON_KEYS = ("rule", "observed", "required", "message", "gpu", "effect", "source", "inferred")


def name_causes(
    result: TriageResult,
    report: Mapping[str, Any],
    launch_only: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any] | None:
    """The causes of the root cause's generic error that fail on the box (its signature's `caused_by`, judged by
    the audit of the facts: `report`'s features, checks and facts.gpus). None when the signature lists no
    causes or none of them fails (an unknown verdict never names a cause). Otherwise {"signature", "causes":
    [{"feature", "check", "status" ("fail"), "reasons": the failing reasons (observed, required, message, source),
    "source": why this verdict causes this error}], "alone": whether exactly one fails (more: the log cannot tell
    them apart), "not_ruled_out": the causes not judged on these facts (a verdict that passes only by rules that
    read the launch, `launch_only`, among them: the launch is not known), "ruled_out": those that do not fail}."""
    rc = result.root_cause
    sig = rc.signature if rc is not None else None
    if sig is None or not sig.caused_by:
        return None
    features = {f["id"]: f for f in report.get("features") or [] if isinstance(f, Mapping) and "id" in f}
    checks = {c["id"]: c for c in report.get("checks") or [] if isinstance(c, Mapping) and "id" in c}
    facts = report.get("facts")
    gpus = facts.get("gpus") if isinstance(facts, Mapping) else None
    gpu_list = gpus if isinstance(gpus, list) else []
    named: list[dict[str, Any]] = []
    unknown: list[str] = []
    ok: list[str] = []
    launch: dict[str, list[str]] = {}
    for cause in sig.caused_by:
        outcome, reasons = _judge_cause(cause, features, checks, gpu_list, launch_only)
        if outcome == "fail" and reasons:
            entry: dict[str, Any] = {"feature": cause.feature, "check": cause.check, "status": "fail"}
            if cause.gpus_differ_in is not None:
                entry["gpus_differ_in"] = cause.gpus_differ_in
            entry.update({"reasons": reasons, "source": cause.source})
            named.append(entry)
        elif outcome in {"fail", "unknown"}:
            unknown.append(cause.label)
            reads = [
                r
                for k, i in (("feature", cause.feature), ("check", cause.check))
                if i is not None
                for r in (launch_only or {}).get(f"{k} {i}") or ()
                if not cause.rules or r in cause.rules
            ]
            if reads:
                launch.setdefault(cause.label, reads)
        else:
            ok.append(cause.label)
    if not named:
        return None
    out: dict[str, Any] = {"signature": sig.id, "causes": named, "alone": len(named) == 1, "not_ruled_out": unknown,
                           "ruled_out": ok}  # fmt: skip
    if launch:
        out["launch_rules"] = launch
    return out
