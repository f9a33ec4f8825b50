"""What text from the box may be shown: secrets out, home directories out, terminal controls neutralised.

This is the one module that decides it; every output path goes through it:

- `redact_env` keeps the allow-listed environment variables minus secrets (the report's `system.env`);
- `redact_argv` masks the values of secret-looking flags (by name: `--api-key`, `--hf-token`, ...; by the
  value's shape: `hf_...`, `sk-...`, long high-entropy strings), credentials in URLs and secret
  assignments (`HF_TOKEN=...` in an `env` prefix): the command line the gate prints;
- `redact_text` masks what can be recognised in free text (log lines, messages): credentials in URLs,
  known token shapes, `api_key=...` / `token: ...` assignments, `Bearer ...`; `redact_tree` applies it to
  every string of a JSON-like document;
- `scrub_home` replaces the home directory with `~`;
- `terminal_safe` neutralises C0/C1 control characters (ESC, so every escape sequence), DEL, lone
  surrogates (undecodable bytes from the box) and bidirectional overrides, as visible `\\xNN` / `\\uNNNN`
  escapes; `safe_tree` applies it to every string of a document before a human format renders it;
- `json_text` is `json.dumps` whose output is 7-bit-clean where it matters: C1 controls, DEL, lone
  surrogates, bidi overrides and U+2028/U+2029 are written as `\\uNNNN` escapes (still the same JSON value),
  so a report with a hostname of `"\\ud800"` can be written at all and never carries a raw control.

Redaction is lossy on purpose: a false mask costs a little diagnosis, a missed secret leaks a credential.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from stackcheck import lean_json
from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.paths import home_dir

if TYPE_CHECKING:
    from typing import Any

MASK = "***"


# (patterns compiled on first use: compiling this module's dozen patterns, some long, one case-insensitive, at
# import cost ~10 ms of every start, and a report from saved facts uses few of them)


def compile_patterns(names: tuple[str, ...] | None = None) -> None:
    """Compile this module's patterns named (by their names here; all when None) now: a caller with time to
    spare (the gate's loading thread, while the probes wait on the driver) so that masking a decision after the
    facts arrive compiles none. A name that is not a pattern here is skipped."""
    from stackcheck.lazy_re import _Pattern

    for name, value in list(globals().items()):
        if isinstance(value, _Pattern) and (names is None or name in names):
            value.pattern  # noqa: B018 - the first attribute read compiles it


# ---- what a secret looks like ---------------------------------------------------------------------

#: parts of an environment variable name that mark its value as a secret (matched as substrings)
SECRET_NAME_PARTS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "KEY", "CREDENTIAL", "AUTH", "COOKIE")
#: words of a command-line flag that mark its value as a secret (matched as whole words of the flag:
#: `--api-key` and `--hf-token` are, `--tokenizer-path` and `--max-total-tokens` are not)
SECRET_FLAG_WORDS = frozenset(
    {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "KEY", "APIKEY", "CREDENTIAL", "CREDENTIALS", "AUTH",
     "COOKIE", "PAT", "BEARER", "SIGNATURE"}
)  # fmt: skip

# known credential shapes (GitHub, Hugging Face, OpenAI/Anthropic-style, Slack, AWS, Google, GitLab, npm, PyPI)
_CREDENTIAL_SHAPES = (
    # Hugging Face and GitHub's classic tokens are letters and digits after the prefix: a name that goes on with
    # `_` (`hf_quant_config.json`, `hf_transformers_utils`) is a file or module, not a token
    r"(?:hf_|ghp_|gho_|ghs_|ghu_|ghr_)[A-Za-z0-9]{6,}(?![A-Za-z0-9_])"
    r"|(?:github_pat_|glpat-|sk-|sk_live_|rk_live_|xox[abprs]-|npm_|AIza|ya29\.)"
    r"[A-Za-z0-9_\-.]{6,}"
    # a PyPI token starts a word of its own (`=pypi-…`, `:pypi-…@`, a space before it): `pypi-` inside a
    # hyphenated name (a source id such as `sgl-kernel-0.3.5-pypi-wheel-…`) is not one; but one whose body is
    # a macaroon's base64 (`AgE`: bytes 02 01, every PyPI and TestPyPI token) is one wherever it stands (after
    # `/` in an index URL's path, `.`, `_`, `-`)
    r"|(?:(?<![_\-./])pypi-|pypi-(?=AgE))[A-Za-z0-9_\-.]{6,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{12,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"  # a JSON Web Token
)
#: the end of a backslash escape as repr() and terminal_safe write a control character (`\\x07`, `\\u202e`, `\\n`): a
#: word starts after one (`'\\x07hf_...'`, a refusal quoting a value from the command line with a control in it)
_AFTER_ESCAPE = r"(?<=\\x[0-9A-Fa-f]{2})|(?<=\\u[0-9A-Fa-f]{4})|(?<=\\U[0-9A-Fa-f]{8})|(?<=\\[abfnrtv])"
#: a token starts after no letter (`task-...`, `disk-...` are words), but may follow a digit: a build's free-text
#: suffix straight after a version number (NCCL's NCCL_SUFFIX in "NCCL version 2.27.7hf_...+cuda12.9", read from the
#: library SGLANG_NCCL_SO_PATH names) was shown whole (irobust)
_TOKEN = _lazy(r"(?:(?<![A-Za-z])|" + _AFTER_ESCAPE + r")(?:" + _CREDENTIAL_SHAPES + r")")
#: a terminal control sequence (CSI: ESC '[' or the C1 byte 0x9b, parameters, a final letter), raw or as
#: terminal_safe, repr() and JSON write it (`\x1b[31m`, `\u001b[31m`): a word starts after one, though its last
#: character is a letter (irev59: a token in a coloured log line, `\x1b[31mhf_...`, was not masked). Python's
#: lookbehind takes no pattern of varying width, so the text is masked piece by piece between these.
_CSI = _lazy(r"((?:\\x1[bB]\[|\\u001[bB]\[|\\x9[bB]|\\u009[bB]|\x1b\[|\x9b)[0-9;?]*[A-Za-z])")
_CSI_MARKS = ("\x1b[", "\x9b", "\\x1", "\\x9", "\\u00")
#: text every match of _TOKEN contains (each shape starts with one of these, case as written): a text with none of
#: them is not searched (nor the pattern compiled); tests/test_redact.py checks each shape against this list
_TOKEN_MARKS = ("hf_", "gh", "github_pat_", "glpat-", "sk", "rk_live_", "xox", "npm_", "pypi-", "AIza", "ya29.",
                "AKIA", "ASIA", "eyJ")  # fmt: skip
# (irobust5) the key's body too: up to its END line, or to the end of the text where that is not in it (a key printed
# on one line, its newlines written `\n` as JSON writes them: only the BEGIN line was masked, the body was shown)
_PRIVATE_KEY = _lazy(r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?:.*?-----END [A-Z ]*PRIVATE KEY-----|.*)", re.DOTALL)
_PRIVATE_KEY_MARK = "-----BEGIN "
_URL = _lazy(r"(?P<scheme>(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://)(?P<rest>[^\s\"'<>`]+)")
# `api_key=...`, `"token": "..."`, `password: ...`: a secret-looking key, `=` or `:`, then the value
# (the key word starts at a word boundary or right after a `_`, `-` or `.`: `hf_token`, `aws_secret_access_key`;
# no quantified prefix before it, which made a 64 KB line of `a_a_a_...` take minutes: quadratic backtracking)
_ASSIGN = _lazy(
    r"(?P<key>(?:(?<![A-Za-z0-9])|(?<=[_\-.])|" + _AFTER_ESCAPE + r")"
    r"(?:api[_\-]?key|token|secret|password|passwd|passphrase|pwd|credentials?|auth|access[_\-]?key|private[_\-]?key"
    r"|client[_\-]?secret|session[_\-]?id|cookie"
    # (irobust5) Azure connection strings' keys (`AccountKey=...;`, `SharedAccessKey=...`), camel case without a `_`
    r"|account[_\-]?key|shared[_\-]?access[_\-]?key"
    # a name ending in `_key` (`secret_key`, `OPENAI_KEY`, `signing-key`: one run of letters and digits before
    # it, so each candidate start is tried once) and the camel-case tokens (`accessToken`, `refreshToken`)
    # (a key and its value may be quoted with escaped quotes: a JSON text inside a JSON string, `{\"HF_TOKEN\": \"v\"}`)
    r"|[A-Za-z0-9]+[_\-.]key|(?:access|refresh|auth|id|session)[_\-]?token)(?![A-Za-z0-9])\\?[\"']?)"
    r"(?P<sep>\s*[=:]\s*)"
    # (irobust9) a JSON array or object after the key (`"password": ["v"]`, `"secret": {"value": "v"}`) is masked up to
    # its first closing bracket (a nested one's: past every string of the innermost), at most 1,000 characters so a
    # long line of unclosed brackets stays linear; it took the `[` alone and showed the secret after it
    r"(?P<value>\\\"[^\"\n]*\\\"|\"[^\"\n]*\"|'[^'\n]*'|\[[^\]\n]{0,1000}\]|\{[^}\n]{0,1000}\}|[^\s,;)\]}\"']+)",
    re.IGNORECASE,
)
#: a word every key of _ASSIGN holds, matched under the same IGNORECASE (so with the same case folding): a text
#: with no `=` or `:`, or none of these words, is not searched by _ASSIGN (tests/test_redact.py checks each key)
_ASSIGN_WORD = _lazy(r"key|token|secret|pass|pwd|credential|auth|session|cookie", re.IGNORECASE)
# a scheme and its credentials in any case and spacing (`bearer  abc`, `BASIC dXNl...`), escapes as terminal_safe and
# repr() write them kept between the two (`Bearer \x1b[0mabc...`: the value after them is the secret)
_BEARER = _lazy(
    r"(?P<head>(?:\b|" + _AFTER_ESCAPE + r")(?P<scheme>bearer|basic|token)\s+"
    r"(?:\\x1[bB]\[[0-9;?]*[A-Za-z]|\\x[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4})*)(?P<value>[A-Za-z0-9_\-.~+/=]{3,})",
    re.IGNORECASE,
)
_BEARER_MARKS = ("bearer", "basic", "token")  # every match of _BEARER holds one in its lower case
#: what \s matches in an ASCII text: a scheme of _BEARER_MARKS followed by one may start a match
_SPACES = frozenset(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")


def _bearer_masked(m: re.Match[str]) -> str:
    """`Bearer` (any case) names a credential: its value is masked from 3 characters. `Basic` and `Token` are also
    words of prose (`basic checks`, `Token indices`): 8 characters or more, and where not written as a scheme is
    (`Basic`, `Token`) a value that reads like a credential (a digit, a symbol, or both cases)."""
    scheme, value = m.group("scheme"), m.group("value")
    if value.lower() in _NOT_SECRET_VALUES:
        return m.group(0)
    if scheme.lower() != "bearer":
        if len(value) < 8:
            return m.group(0)
        plain = value.isalpha() and (value.islower() or value.isupper())
        if scheme not in ("Basic", "Token") and plain:
            return m.group(0)
    return m.group("head") + MASK


# an `Authorization:` header's credentials, whatever their scheme (`token ghp_...`, a raw key, `Digest ...`)
_AUTH_HEADER = _lazy(
    r"(?P<head>(?:\b|" + _AFTER_ESCAPE + r")authorization[\"']?\s*[:=]\s*[\"']?"
    r"(?:(?:bearer|basic|token|digest|apikey|negotiate)\s+)?)"
    r"(?P<value>[^\s\"',;]+)",
    re.IGNORECASE,
)
# a secret flag and its value, space-separated, in free text (a log that echoes the launch command line):
# `--api-key VALUE` (the `--api-key=VALUE` form is an assignment, above); secret_flag decides which flags
_FLAG_VALUE = _lazy(
    # (spaces, tabs and a shell's line continuations: `--api-key \` and the value on the next line of a script)
    r"(?<![^\s\"'(\[,])(?P<flag>--[A-Za-z][A-Za-z0-9_.\-]*)(?P<sep>(?:[ \t]|\\\r?\n)+)"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',)\]]+)"
)
_NOT_SECRET_VALUES = frozenset({"none", "null", "''", '""', "false", "true", "0", "", MASK, f"'{MASK}'", f'"{MASK}"'})

_TOKEN_SPLIT = _lazy(r"[,;:=\s]+")
_TOKEN_CHARS = _lazy(r"[A-Za-z0-9+/=_\-.]+")
_UUID = _lazy(r"(?:GPU-|MIG-)?[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
_SYMBOLS = set("!#$%&*?@^~|")


def _entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _random_looking(token: str) -> bool:
    """A token that reads like a generated credential, not like a path, an id list or a setting."""
    if len(token) < 12 or token[0] in "/~." or _UUID.fullmatch(token):
        return False
    lower = any(ch.islower() for ch in token)
    upper = any(ch.isupper() for ch in token)
    digit = any(ch.isdigit() for ch in token)
    symbol = any(ch in _SYMBOLS for ch in token)
    if len(token) >= 20 and _TOKEN_CHARS.fullmatch(token) and digit and (lower or upper) and _entropy(token) >= 3.5:
        return True  # the classic: a long base64/hex-ish blob
    # a password-like word: three kinds of characters, one of them a symbol, and no structure
    return symbol and (lower + upper + digit) >= 2 and _entropy(token) >= 3.0 and "/" not in token


#: (irobust8) the shell's quoting and grouping around a word: `$(echo TOKEN)`, `"TOKEN"`, `` `cat TOKEN` `` in a shell
#: string kept a random-looking token whole with them (`TOKEN)`), which no longer read as random, and showed it
_SHELL_PUNCT = _lazy(r"[()\[\]{}<>\"'`]+")


def _any_random(value: str) -> bool:
    """Whether a token of `value` (split at _TOKEN_SPLIT, then each also at _SHELL_PUNCT) reads as random."""
    for token in _TOKEN_SPLIT.split(value):
        if _random_looking(token):
            return True
        if any(c in token for c in "()[]{}<>\"'`") and any(_random_looking(t) for t in _SHELL_PUNCT.split(token)):
            return True
    return False


def looks_secret(value: str) -> bool:
    """True for values that look like credentials: known token shapes, credentials in a URL, a private key,
    a secret assignment, or a long random-looking string."""
    if _has_token(value) and _tokens_masked(value) != value:
        return True
    if _PRIVATE_KEY_MARK in value and _PRIVATE_KEY.search(value):
        return True
    if redact_urls(value) != value:
        return True
    if _may_assign(value) and any(_assign_masked(m) != m.group(0) for m in _ASSIGN.finditer(value)):
        return True
    return _any_random(value)


# ---- masking ----------------------------------------------------------------------------------------


def _mask_url(m: re.Match[str]) -> str:
    scheme, rest = m.group("scheme"), m.group("rest")
    end = len(rest)
    for sep in "/?#":
        i = rest.find(sep)
        if 0 <= i < end:
            end = i
    authority = rest[:end]
    at = authority.rfind("@")  # the userinfo ends at the LAST '@' of the authority: passwords hold '@'
    if at >= 0:
        return f"{scheme}{MASK}@{rest[at + 1 :]}"
    # `user:pa/ss@host`: a password with a '/' ends the authority early; a ':' that is not a port says so
    if ":" in authority and "@" in rest[end:]:
        port = authority.split(":", 1)[1]
        if not port.isdigit():
            last = rest.rfind("@")
            return f"{scheme}{MASK}@{rest[last + 1 :]}"
    return m.group(0)


def redact_urls(text: str) -> str:
    """`scheme://user:password@host/...` -> `scheme://***@host/...` (also a user name alone: tokens are
    often passed as one); `user:password@host` without a scheme -> `***@host` (_mask_userinfo)."""
    if "@" not in text:
        return text
    if "://" in text:
        text = _URL.sub(_mask_url, text)
    if ":" in text:
        text = _WORD_AT.sub(_mask_userinfo, text)
    return text


#: `user:password@host` with no scheme before it (`LMCACHE_MP_HOST=alice:pw@cache:6555`, a Redis or Mooncake address
#: in a log line), read per word (a run without spaces, quotes or `<>` and backquotes: _WORD_AT) that holds an '@':
#: the host follows the word's last '@' that a letter or digit follows (a password holds '@' too, as in a URL); the
#: user is the first run of _USER_CHARS before a ':' that starts the word or follows none of them nor `/`, `:`, `@`,
#: `*` (`scheme://` was masked before); the password is everything from that ':' to the '@' (':', '/', '@' and '='
#: included: irev70, such a password was printed whole), neither empty, nor starting with '/' (`http://...`), nor
#: the mask itself. An image reference pinned by digest (`name:tag@sha256:...`) has the same shape and is kept
#: (_DIGEST_ALGORITHMS). Each word is read once, left to right: linear in the text (a regular expression whose
#: password spans ':' backtracks quadratically on a long `a:b,a:b,...` line).
_WORD_AT = _lazy(r"(?<![^\s\"'<>`])[^\s\"'<>`]*@[^\s\"'<>`]*")  # (from a word's start only: linear)
#: a host name or IPv4 address, or a bracketed IPv6 literal with an optional zone (`[::1]`, `[fe80::1%eth0]`: irev71,
#: a password before one was printed whole)
_HOST = _lazy(r"[A-Za-z0-9][A-Za-z0-9.\-]*|\[(?=[0-9A-Fa-f.]*:)[0-9A-Fa-f:.]+(?:%[A-Za-z0-9._\-]+)?\]")
_USER_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
_NOT_BEFORE_USER = _USER_CHARS | frozenset("/:@*")
_DIGEST_ALGORITHMS = frozenset({"sha256", "sha384", "sha512"})


def _mask_userinfo(m: re.Match[str]) -> str:
    word = m.group(0)
    if ":" not in word:
        return word
    at = len(word)
    while True:  # (the last '@' a host follows)
        at = word.rfind("@", 0, at)
        if at < 0:
            return word
        host = _HOST.match(word, at + 1)
        if host is not None:
            break
    after = word[host.end() :]
    if after.startswith(":") and host.group(0).lower() in _DIGEST_ALGORITHMS:
        return word
    head, colon = word[:at], -1
    while True:  # (the first ':' with a user before it that starts there)
        colon = head.find(":", colon + 1)
        if colon < 0:
            return word
        user = colon
        while user > 0 and head[user - 1] in _USER_CHARS:
            user -= 1
        if user == colon or (user > 0 and head[user - 1] in _NOT_BEFORE_USER):
            continue
        password = head[colon + 1 :]
        if password and not password.startswith("/") and password != MASK:
            if _source_id_shape(password, host.group(0), after):
                return word
            return f"{head[:user]}{MASK}@{host.group(0)}{after}"


#: (irobust9) the id of a source that is a file in a repository (knowledge/sources.derived_id: `REPO:FILE@REF`,
#: `sglang:server_args.py@v0.5.9`, `sudo:env.c@main`) has the shape of `user:password@host`: every public output
#: showed such a citation as `***@v0.5.9`. Kept where the "password" is a source file's name (an extension of source
#: or text, or one of the extensionless names the manifests cite), the "host" a ref (a commit's 7-40 hex digits, a
#: `v` tag with an optional `NAME-` before it and `-N` after, main, master, HEAD: not a host name or an IPv4
#: address), and nothing but punctuation follows (not `:PORT`)
_SOURCE_FILE = _lazy(
    r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\.(?:py|pyi|pyx|go|c|h|cc|cpp|cxx|cu|cuh|hpp|hh|inc|sh|md|txt|rst|html|toml|ya?ml"
    r"|json|cmake|mk|in|cfg|ini|conf|bzl|rs)|Dockerfile|Makefile|control|\."
)
_SOURCE_REF = _lazy(r"(?:[0-9a-f]{7,40}|(?:[a-z]+-)?v\d+(?:\.\d+)*(?:-\d+)?|main|master|HEAD)\.?")


def _source_id_shape(password: str, host: str, after: str) -> bool:
    if after.strip(":,;).") or not _SOURCE_REF.fullmatch(host):
        return False
    return _SOURCE_FILE.fullmatch(password) is not None


def _assign_masked(m: re.Match[str]) -> str:
    value = m.group("value")
    bare = value.strip("'\"\\")  # (`\"none\"`: a value quoted with escaped quotes)
    if bare.lower() in _NOT_SECRET_VALUES or bare.startswith(("<", "${", "$(")):
        return m.group(0)
    quote = value[:2] if value.startswith('\\"') else value[0] if value[:1] in ("'", '"') else ""
    return f"{m.group('key')}{m.group('sep')}{quote}{MASK}{quote}"


def _flag_value_masked(m: re.Match[str]) -> str:
    value = m.group("value")
    if not secret_flag(m.group("flag")) or value.startswith("-") or value.strip("'\"").lower() in _NOT_SECRET_VALUES:
        return m.group(0)
    return f"{m.group('flag')}{m.group('sep')}{MASK}"


def _auth_masked(m: re.Match[str]) -> str:
    value = m.group("value")
    if value.lower() in _NOT_SECRET_VALUES or value.startswith(("<", "${", "$(")):
        return m.group(0)
    return m.group("head") + MASK


def redact_text(text: str) -> str:
    """Mask the secrets that can be recognised in free text (a log line, a message, an argument)."""
    if not text:
        return text
    out = redact_urls(text)
    if _has_token(out):
        out = _tokens_masked(out)
    if _may_assign(out):
        out = _ASSIGN.sub(_assign_masked, out)
    if "--" in out:
        out = _FLAG_VALUE.sub(_flag_value_masked, out)
    low = out.lower()  # (_AUTH_HEADER and _BEARER ignore case: `AuThOrIzAtIoN:`, `BEARER` are theirs too)
    if "uthorization" in low:
        out = _AUTH_HEADER.sub(_auth_masked, out)
    if any(mark in low for mark in _BEARER_MARKS):
        out = _BEARER.sub(_bearer_masked, out)
    if _PRIVATE_KEY_MARK in out and _PRIVATE_KEY.search(out):
        out = _PRIVATE_KEY.sub("-----BEGIN PRIVATE KEY----- " + MASK, out)
    return out


def _tokens_masked(text: str) -> str:
    """`text` with every match of _TOKEN masked, each piece between terminal control sequences (_CSI) read as a text
    of its own, so that a token right after one is matched."""

    def masked(piece: str) -> str:
        return _TOKEN.sub(lambda m: m.group(0)[: _prefix_len(m.group(0))] + MASK, piece)

    if not any(mark in text for mark in _CSI_MARKS):
        return masked(text)
    pieces = _CSI.split(text)  # (its group keeps each sequence, at the odd places)
    return "".join(piece if i % 2 else masked(piece) for i, piece in enumerate(pieces))


def _has_token(text: str) -> bool:
    """Whether `text` holds a text every credential shape of _TOKEN starts with: a necessary condition of a
    match, tested before the pattern. Most strings of a gate's decision hold none of _TOKEN_MARKS, and are
    not searched (its ~180 distinct strings were searched by four patterns each: ~3 ms of the gate with their
    compilation, ~1 ms now)."""
    return any(mark in text for mark in _TOKEN_MARKS)


#: _ASSIGN_WORD's words, for ASCII text (where IGNORECASE is ASCII case folding, str.lower()'s)
_ASSIGN_WORDS = ("key", "token", "secret", "pass", "pwd", "credential", "auth", "session", "cookie")


def _may_assign(text: str) -> bool:
    """Whether _ASSIGN can match `text` (a necessary condition: a separator and a key's word). An ASCII text
    is searched for the words in its lower case (~1 us where the case-insensitive pattern took ~8 us on a
    30-character `path:line`: a fleet's CSV has one per host); any other text by the pattern itself, whose
    Unicode case folding (`ſ`, `K`) str.lower() does not follow."""
    if "=" not in text and ":" not in text:
        return False
    if text.isascii():
        lower = text.lower()
        return any(word in lower for word in _ASSIGN_WORDS)
    return _ASSIGN_WORD.search(text) is not None


def _prefix_len(token: str) -> int:
    """How much of a recognised token is kept to say what it was ("hf_", "sk-", "AKIA"): never the secret."""
    for sep in ("_", "-", "."):
        i = token.find(sep)
        if 0 < i <= 10:
            return i + 1
    return min(4, len(token) // 4)


#: SGLang's flags whose value is a secret: argparse accepts any unique prefix of a flag (`--api-k`), so a
#: prefix of one of these is treated as the flag itself
KNOWN_SECRET_FLAGS = ("--api-key", "--admin-api-key", "--hf-token", "--ssl-keyfile-password", "--password")


def secret_flag(flag: str) -> bool:
    """`--api-key`, `--admin-api-key`, `--hf-token`, `--ssl-keyfile-password`: a flag whose value is a secret;
    also an abbreviation argparse would expand to one of the known ones (`--api-k`, `--admin`)."""
    # (the words between runs of `-`, `_` and `.`: re.split(r"[-_.]+")'s, without compiling it on a plan's first run)
    words = [w for w in flag.lstrip("-").upper().replace("_", "-").replace(".", "-").split("-") if w]
    if any(w in SECRET_FLAG_WORDS for w in words) or "APIKEY" in "".join(words):
        return True
    return flag.startswith("--") and len(flag) >= 4 and any(k.startswith(flag) for k in KNOWN_SECRET_FLAGS)


def secret_name(name: str) -> bool:
    """An environment variable name that holds a secret (HF_TOKEN, SGLANG_API_KEY, DB_PASSWORD, ...)."""
    upper = name.upper()
    return any(part in upper for part in SECRET_NAME_PARTS)


def redact_value(value: str) -> str:
    """One value of unknown meaning: recognised secrets masked; a value that still looks random, masked."""
    out = redact_text(value)
    if out == value and _any_random(value):
        return MASK
    return out


_ENV_ASSIGN = _lazy(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)$", re.DOTALL)


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line with secrets masked, for printing only (the command that runs is never changed)."""
    out: list[str] = []
    mask_next = False
    for arg in argv:
        if mask_next:
            mask_next = False
            if not arg.startswith("--"):
                out.append(MASK)
                continue
        if arg.startswith("-") and len(arg) > 1 and not any(c.isspace() for c in arg.partition("=")[0]):
            name, eq, value = arg.partition("=")
            if secret_flag(name):
                if eq:
                    out.append(f"{name}={MASK}")
                else:
                    out.append(arg)
                    mask_next = True
                continue
            out.append(f"{name}={redact_value(value)}" if eq else redact_value(arg))
            continue
        assign = _ENV_ASSIGN.match(arg)
        if assign:
            name = assign.group("name")
            if secret_name(name):
                out.append(f"{name}={MASK}")
            else:
                out.append(f"{name}={redact_value(assign.group('value'))}")
            continue
        out.append(redact_value(arg))
    return out


def redact_tree(value: Any, fn: Callable[[str], str] = redact_text) -> Any:
    """A copy of a JSON-like document with `fn` applied to every string (keys too)."""
    return _map_strings(value, fn)


def redact_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """An image's labels as a report may carry them: the value of a name with a secret's word masked (a build
    argument baked into a label: `hf_token`, `api.key`; by whole words, as for a flag, so that
    `org.opencontainers.image.authors` is kept), recognisable secrets masked in the others (a source URL with
    a token)."""
    return {redact_text(k): MASK if secret_flag(k) else redact_text(v) for k, v in labels.items()}


def _saved_env(env: Mapping[Any, Any]) -> dict[Any, Any]:
    """The `env` of a document read from a file, by the probe's rule for the box's own (redact_env) but for
    the allow-list: a hand-written document may name what a rule reads (TRITON_PTXAS_PATH)."""
    out: dict[Any, Any] = {}
    for name, value in env.items():
        if isinstance(name, str) and secret_name(name):
            continue
        shown = redact_urls(value) if isinstance(value, str) else value
        if isinstance(shown, str) and looks_secret(shown):
            continue
        out[name] = shown
    return out


def redact_document(doc: Any, texts: Callable[[str], str] = redact_text) -> Any:
    """A facts document or saved report read from a file (--facts, --host-facts, diff's inputs), as every
    command may show or write it again: recognisable secrets masked in every string (redact_tree: a host
    name, a tool's error, a version), the variables of `facts.system.env` and `facts.image.env` that the
    probes never record (a secret-looking name or value) dropped, the image's command (redact_argv) and
    labels (redact_labels) masked as the image reader masks them. A document written by stackcheck holds
    none of these, and comes back unchanged. `texts`: redact_text, or a function with its answers for the
    document's strings (public_document's)."""
    out = redact_tree(doc, texts)
    src = doc.get("facts") if isinstance(doc, dict) else None
    facts = out.get("facts") if isinstance(out, dict) else None
    if not isinstance(src, dict) or not isinstance(facts, dict):
        return out
    for section in ("system", "image"):
        given, shown = src.get(section), facts.get(section)
        if isinstance(given, dict) and isinstance(shown, dict) and isinstance(given.get("env"), dict):
            shown["env"] = redact_tree(_saved_env(given["env"]))
    given, shown = src.get("image"), facts.get("image")
    if isinstance(given, dict) and isinstance(shown, dict):
        labels, command = given.get("labels"), given.get("command")
        if isinstance(labels, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
            shown["labels"] = redact_labels(labels)
        if isinstance(command, list) and all(isinstance(a, str) for a in command):
            shown["command"] = redact_argv(command)
    return out


#: text that every change redact_text makes to an ASCII text needs (a necessary condition, case as written): a URL
#: (`://`), a flag (`--`), the start of every credential shape of _TOKEN (finer than _TOKEN_MARKS: `sk-` and `sk_`
#: where that has `sk`, which "skipped" and "disk" hold), an Authorization header, a bearer's scheme, a private key
#: (tests/test_redact.py checks public_document against redact_text over hostile and generated texts)
_CHANGE_MARKS = ("://", "--", "hf_", "ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_", "glpat-", "sk-", "sk_",
                 "rk_live_", "xox", "npm_", "pypi-", "AIza", "ya29.", "AKIA", "ASIA", "eyJ", "uthorization",
                 "UTHORIZATION", "Bearer", "Basic", "Token", _PRIVATE_KEY_MARK, "@")  # fmt: skip


#: _FLAG_VALUE's flag, and what must follow it (a space, a tab or a line continuation)
_FLAG_AHEAD = _lazy(r"(--[A-Za-z][A-Za-z0-9_.\-]*)(?:[ \t]|\\\r?\n)")


#: what masked_texts searches the joined texts' lower case for, once each (the key), and what a text holding it must
#: also hold, as written, to be passed to redact_text (any of the value). Every mark of _CHANGE_MARKS but `--` (found
#: by _FLAG_AHEAD) holds a key in lower case and is in its value (`gh` for the five classic GitHub prefixes, `sk` for
#: `sk-` and `sk_`); `://` needs an `@` (a URL is masked where it has a user); every word of _ASSIGN_WORDS is a key
#: whose value holds `=`, which stands for _ASSIGN_TAIL (a key's last word and its separator: `token:`, `id =`);
#: `pypi-` is tested as _TOKEN's shape reads it (_pypi_word). So a text redact_text changes is passed
#: (tests/test_redact_fast.py checks the cover). 28 searches of a report's ~60 KB of text where there were 36, and
#: the few texts holding a key tested for what that key needs alone
_LOWER_MARKS: dict[str, tuple[str, ...]] = {
    "://": ("@",), "hf_": ("hf_",), "gh": ("ghp_", "gho_", "ghs_", "ghu_", "ghr_"), "github_pat_": ("github_pat_",),
    "glpat-": ("glpat-",), "sk": ("sk-", "sk_"), "rk_live_": ("rk_live_",), "xox": ("xox",), "npm_": ("npm_",),
    "pypi-": ("pypi-",), "aiza": ("AIza",), "ya29.": ("ya29.",), "akia": ("AKIA",), "asia": ("ASIA",),
    "eyj": ("eyJ",), "uthorization": ("uthorization", "UTHORIZATION"), "bearer": ("Bearer",), "basic": ("Basic",),
    "token": ("Token", "="), "-----begin ": (_PRIVATE_KEY_MARK,), "key": ("=",), "secret": ("=",), "pass": ("=",),
    "pwd": ("=",), "credential": ("=",), "auth": ("=",), "session": ("=",), "cookie": ("=",),
    "@": (":",),  # (credentials without a scheme, `user:password@host`: _mask_userinfo)
}  # fmt: skip


#: how every match of _ASSIGN goes on from the last word of its key (each alternative of its key ends with one of these
#: words; a `key` comes after `api`, `access`, `private` or a letter or digit and one of `_-.`, an `id` after
#: `session`), in lower case: the word, an optional backslash and quote, the separator, the first character of a value.
#: An ASCII text holding a word of _ASSIGN_WORDS but no match of this is one _ASSIGN leaves (a report's `to_token_pool`
#: beside a `path:line`: ~60 us of redact_text each, eight of them, where this search takes ~2 us; a plan's "No SGLang
#: release has this key: ..." no longer compiles _ASSIGN, ~0.8 ms of a first run on the 2-core box)
_ASSIGN_TAIL = _lazy(
    r"(?:(?:(?:api|access|private)[_\-]?|[a-z0-9][_\-.])key|token|secret|password|passwd|passphrase|pwd|credentials?"
    r"|auth|session[_\-]?id|cookie)\\?[\"']?\s*[=:]\s*[^\s,;)\]}]"
)


#: the last words of _ASSIGN_TAIL's alternatives (`credentials?` as its two), and what must come before `key` and `id`
_TAIL_WORDS = ("key", "token", "secret", "password", "passwd", "passphrase", "pwd", "credential", "credentials",
               "auth", "id", "cookie")  # fmt: skip
_KEY_HEADS = ("api", "access", "private")


def _assign_tail(lower: str) -> bool:
    """`_ASSIGN_TAIL.search(lower) is not None`, by string methods (the pattern, ~0.2 ms to compile on the 2-core box,
    is then compiled by no plan): a word of _TAIL_WORDS (a `key` after `api`, `access` or `private` and an optional
    `_` or `-`, or after a letter or digit and one of `_-.`; an `id` after `session` and an optional `_` or `-`), an
    optional backslash, an optional quote, whitespace, `=` or `:`, whitespace, a character that is none of whitespace
    and `,;)]}`. tests/test_redact_fast.py holds the two equal on generated texts."""
    for word in _TAIL_WORDS:
        at = lower.find(word)
        while at >= 0:
            if _tail_head(lower, at, word) and _tail_rest(lower, at + len(word)):
                return True
            at = lower.find(word, at + 1)
    return False


def _tail_head(lower: str, at: int, word: str) -> bool:
    """Whether what stands before `word` at `at` is what _ASSIGN_TAIL's alternative ending with it needs there."""
    if word == "key":
        before = lower[:at]
        if before.endswith(_KEY_HEADS) or (before[-1:] in ("_", "-") and before[:-1].endswith(_KEY_HEADS)):
            return True
        return len(before) >= 2 and before[-1] in "_-." and _tail_alnum(before[-2])
    if word == "id":
        before = lower[:at]
        return before.endswith("session") or (before[-1:] in ("_", "-") and before[:-1].endswith("session"))
    return True


def _tail_alnum(ch: str) -> bool:
    return ch.isascii() and (ch.isdigit() or "a" <= ch <= "z")


def _tail_rest(lower: str, i: int) -> bool:
    """Whether _ASSIGN_TAIL's part after the word matches at `i`: an optional backslash, an optional quote,
    whitespace, `=` or `:`, whitespace, one character that is none of whitespace and `,;)]}`. (The optional backslash
    and quote tried first, then without them: each stands where the whitespace or separator would, so without it
    nothing can follow.)"""
    n = len(lower)
    if i < n and lower[i] == "\\":  # an escaped quote: a JSON text inside a JSON string (`{\"hf_token\": \"v\"}`)
        i += 1
    if i < n and lower[i] in "\"'":
        i += 1
    while i < n and lower[i].isspace():
        i += 1
    if i >= n or lower[i] not in "=:":
        return False
    i += 1
    while i < n and lower[i].isspace():
        i += 1
    return i < n and lower[i] not in ",;)]}"


def _spaced_after(lower: str, mark: str, at: int, end: int) -> bool:
    """Whether `mark` is followed by a character of _SPACES at `at` or at any later place before `end` (one text of
    masked_texts' joined ones): every place, not only the first (`tokenizer ...; TOKEN abcdefgh12` was not passed
    to redact_text, which masks it)."""
    n = len(mark)
    while 0 <= at < end:
        if lower[at + n : at + n + 1] in _SPACES:
            return True
        at = lower.find(mark, at + 1, end)
    return False


def _pypi_word(text: str) -> bool:
    """Whether `text` holds _TOKEN's PyPI shape's start: `pypi-` starting a word (not after `_`, `-`, `.` or `/`: a
    source id's `-pypi-wheel`), or a macaroon's `pypi-AgE` anywhere."""
    i = text.find("pypi-")
    while i >= 0:
        if i == 0 or text[i - 1] not in "_-./" or text.startswith("AgE", i + 5):
            return True
        i = text.find("pypi-", i + 1)
    return False


def _strings(value: Any) -> set[str]:
    """Every distinct string of a JSON-like value (keys too), iteratively: by each item's exact type first (a JSON
    document's are str, dict, list and the scalars; a subclass, or a tuple, takes the isinstance path), a dict's keys
    added by one set.update and its values pushed by one list.extend rather than tested one by one (a report's ~1,000
    distinct strings: ~0.45 ms, ~0.27 ms now). A key that is not a string is taken out at the end."""
    out: set[Any] = set()
    stack = [value]
    pop, add, update, extend = stack.pop, out.add, out.update, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind is str:
            add(item)
        elif kind is dict:
            update(item)
            extend(item.values())
        elif kind is list:
            extend(item)
        elif kind is int or kind is float or kind is bool or item is None:
            continue
        elif isinstance(item, str):
            add(item)
        elif isinstance(item, dict):
            update(item)
            extend(item.values())
        elif isinstance(item, list | tuple):
            extend(item)
    if all(type(text) is str for text in out):
        return out
    return {text for text in out if isinstance(text, str)}


def masked_texts(texts: set[str]) -> dict[str, str]:
    """redact_text of each text that it changes, the others left out: the same answers as calling it on each, at a
    fraction of the cost for a document's ~1,000 distinct strings (a report's: ~6 ms on the 2-core box), most of
    which hold nothing to mask. The ASCII texts are joined, and the joined text's lower case searched once per mark
    of _LOWER_MARKS: a text holding one is passed to redact_text where it also holds what that mark needs (its value
    there); a flag's value is found by _FLAG_AHEAD in the joined text, secret_flag asked once per distinct flag;
    every other text (not ASCII: Unicode case folding) is passed as it is."""
    from bisect import bisect_right

    plain = [t for t in texts if t.isascii()]
    candidates = {t for t in texts if not t.isascii()}
    joined = "\x00".join(plain)
    starts: list[int] = []
    at = 0
    for text in plain:
        starts.append(at)
        at += len(text) + 1
    ends = len(joined)
    lower = joined.lower()
    find, add = lower.find, candidates.add
    for mark, needs in _LOWER_MARKS.items():
        i = find(mark)
        while i >= 0:
            n = bisect_right(starts, i) - 1
            text = plain[n]
            if mark == "pypi-":
                if _pypi_word(text):
                    add(text)
            elif (
                mark == "uthorization"  # found in the lower case: _AUTH_HEADER ignores case, so any case is one
                or (mark in _BEARER_MARKS and _spaced_after(lower, mark, i, starts[n] + len(text)))  # `bearer  x`
                or any(need in text for need in needs if need != "=")
                or ("=" in needs and _assign_tail(text.lower()))
            ):
                add(text)
            i = find(mark, starts[n + 1] if n + 1 < len(starts) else ends)
    if "--" in joined:  # a flag's value is masked where the flag is a secret one and a space or tab follows it
        secret: dict[str, bool] = {}  # secret_flag's answer per flag (a report's ~85 flags are ~15 distinct ones)
        for m in _FLAG_AHEAD.finditer(joined):
            flag = m.group(1)
            is_secret = secret.get(flag)
            if is_secret is None:
                is_secret = secret[flag] = secret_flag(flag)
            if is_secret:
                candidates.add(plain[bisect_right(starts, m.start()) - 1])
    out: dict[str, str] = {}
    for text in candidates:
        shown = redact_text(text)
        if shown != text:
            out[text] = shown
    return out


def prepare_public() -> None:
    """What public_document's first call does whatever the document: masked_texts' bisect imported and its flag
    search (_FLAG_AHEAD: every report and decision holds a `--`) compiled. A command that will mask a document it is
    still making calls this while it waits (build_report's loading thread, beside the probes: ~0.3 ms of an audit's
    main thread after the facts on the 2-core box); public_document's answers are the same either way."""
    import bisect  # noqa: F401 - imported for masked_texts, which imports it again

    _FLAG_AHEAD.pattern  # noqa: B018 - the first attribute read compiles it


def public_document(doc: Any) -> Any:
    """A document as it may leave the process: every format of every document goes through this (stackcheck.render's
    registries), and the files a verb writes besides its output. redact_document's masking (every string: a probe's
    reason quoting a path, a tool's message, an environment value, a log line, a package's metadata; the facts' env,
    image labels and command) and a top-level `command` / `given` argument list masked as a command line
    (redact_argv: the value after `--api-key`). Never changes its argument; where nothing is masked, the argument
    itself is the answer (no copy: a report's ~1,000 strings), so a caller never changes the answer either."""
    masked = masked_texts(_strings(doc))
    if not masked and not _parts_masked(doc):
        return doc
    out = redact_document(doc, lambda text: masked.get(text, text))
    if isinstance(doc, dict) and isinstance(out, dict):
        for key in ("command", "given"):
            argv = doc.get(key)
            if isinstance(argv, list):
                out[key] = redact_argv([str(a) for a in argv])
    return out


def read_document_masked(doc: Any) -> Any:
    """redact_document(doc) of a document just parsed from a file (--facts, --host-facts, diff's inputs: a value the
    caller owns and may change), by public_document's search (masked_texts: the same answer per string as redact_text,
    ~0.07 ms where calling it on each of a facts file's ~120 distinct strings took ~0.3 ms on the 2-core box). Where
    nothing is masked (every string as redact_text leaves it, the facts' env, labels and command as redact_document
    leaves them), the document itself is the answer: redact_document's copy would be equal to it, and a parsed JSON
    document has no tuple or key that is not a string for the copy to turn into another value."""
    masked = masked_texts(_strings(doc))
    if not masked and not _parts_masked(doc):
        return doc
    return redact_document(doc, lambda text: masked.get(text, text))


def _parts_masked(doc: Any) -> bool:
    """Whether public_document masks more of `doc` than its strings one by one: a top-level command line, the facts'
    env (a secret-looking name or value dropped) or an image's labels and command."""
    if not isinstance(doc, dict):
        return False
    for key in ("command", "given"):
        argv = doc.get(key)
        if isinstance(argv, list) and redact_argv([str(a) for a in argv]) != argv:
            return True
    facts = doc.get("facts")
    if not isinstance(facts, dict):
        return False
    for section in ("system", "image"):
        part = facts.get(section)
        if isinstance(part, dict) and isinstance(part.get("env"), dict) and _saved_env(part["env"]) != part["env"]:
            return True
    image = facts.get("image")
    if isinstance(image, dict):
        labels, command = image.get("labels"), image.get("command")
        if isinstance(labels, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
            if redact_labels(labels) != labels:
                return True
        if isinstance(command, list) and all(isinstance(a, str) for a in command) and redact_argv(command) != command:
            return True
    return False


def message_safe(text: str) -> str:
    """One diagnostic line (an error, a warning, a note on stderr): recognisable secrets masked (a message
    quotes the value it could not read, a path, a line of a file) and every control escaped, newlines too."""
    return terminal_safe(redact_text(text), newlines=False)


def traceback_lines() -> list[str]:
    """The traceback of the exception being handled (STACKCHECK_DEBUG's), each line as message_safe shows it:
    the exception's text and the source lines it quotes may hold a value of the command line or of the box."""
    import traceback

    return [message_safe(line) for line in traceback.format_exc().splitlines()]


def shown_field(value: Any) -> str:
    """One value of a line that came from a file (a host name, a version of a fleet's report): recognisable
    secrets masked, every control escaped."""
    return field_safe(redact_text(str(value)))


# ---- environment and home directories ---------------------------------------------------------------

ENV_NAMES = frozenset(
    {
        "CUDA_VISIBLE_DEVICES",
        "CUDA_HOME",
        "CUDA_PATH",
        "LD_LIBRARY_PATH",
        "TORCH_CUDA_ARCH_LIST",
        "FLASHINFER_CUDA_ARCH_LIST",
        "PYTORCH_CUDA_ALLOC_CONF",
        "CUDA_LAUNCH_BLOCKING",
        "CUDA_MODULE_LOADING",
        "TVM_FFI_GPU_BACKEND",
        # where LMCache's multi-process connector finds its server (a path, a host name; rule lmcache-unified-mp-host):
        # not the LMCACHE_ prefix, whose other names hold remote store URLs with credentials
        "LMCACHE_CONFIG_FILE",
        "LMCACHE_MP_HOST",
    }
)
#: SGL_: SGLang 0.5.3+ reads SGL_X as SGLANG_X (stackcheck/facts/sgl_prefix.py)
ENV_PREFIXES = ("NCCL_", "FLASHINFER_", "SGLANG_", "SGL_", "TORCH_SYMM_MEM_", "NVSHMEM_")


def env_allowed(name: str) -> bool:
    return name in ENV_NAMES or name.startswith(ENV_PREFIXES)


def scrub_path(p: str, home: str | None = None) -> str:
    """Replace the user's home directory prefix with "~" ("/home/ann/venv" -> "~/venv")."""
    home = home if home is not None else home_dir()
    home = home.rstrip("/")
    if not home or home == "~":
        return p
    if p == home:
        return "~"
    if p.startswith(home + "/"):
        return "~" + p[len(home) :]
    return p


def scrub_home(text: str, home: str | None = None) -> str:
    """Every occurrence of the home directory in a text (paths in a message, a PATH-like list) -> "~"."""
    home = (home if home is not None else home_dir()).rstrip("/")
    if not home or home == "~" or home not in text:
        return text
    return re.sub(re.escape(home) + r"(?=/|$|:|,|;|\s|'|\")", "~", text)


def redact_env(env: Mapping[str, str], home: str | None = None) -> dict[str, str]:
    """The allow-listed environment variables, minus anything that looks like a secret.

    Names outside the allow-list are dropped; allowed names that mention TOKEN/SECRET/PASSWORD/KEY/...
    are dropped; credentials inside URLs (`user:password@`, split on the last `@`) are replaced by `***`
    whatever the name; values that still look like a secret (token shapes, secret assignments, long
    random-looking strings) are dropped. The home directory in values becomes "~".
    """
    if home is None:
        home = env.get("HOME") or home_dir()
    out: dict[str, str] = {}
    for name in sorted(env):
        if not env_allowed(name) or secret_name(name):
            continue
        value = redact_urls(str(env[name]))
        if looks_secret(value):
            continue
        out[name] = scrub_home(value, home)
    return out


# ---- terminal safety and JSON text ------------------------------------------------------------------

# C0 controls but tab and newline, DEL, C1 controls, lone surrogates, bidi embeddings/overrides/isolates,
# line and paragraph separators
_UNSAFE = _lazy("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
_UNSAFE_NL = _lazy("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
_JSON_UNSAFE = _lazy("[\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _escape(ch: str) -> str:
    code = ord(ch)
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str, newlines: bool = True) -> str:
    """`text` with every character a terminal would act on shown as an escape instead: ESC (so every escape
    sequence), the other C0 and C1 controls, DEL, lone surrogates and bidi overrides. Tabs stay; newlines
    stay when `newlines` (a whole rendered text), else become `\\n` (one field of a line). Every character the
    patterns escape is a control, a surrogate, a format character or a line or paragraph separator, none of
    which str.isprintable() admits: a printable text (nearly every field of a report) is returned as it is
    without a search (~1 ms of a text report's ~950 distinct fields)."""
    if text.isprintable():
        return text
    # ASCII text (every report the shipped manifests make): the patterns' only ASCII characters are the C0 controls
    # and DEL, none of which isprintable() admits, so with the newlines (and tabs, which stay) taken out a printable
    # text has nothing to escape, and neither large pattern is compiled (~0.5 ms each, their classes reach U+2069)
    if text.isascii():
        kept = text.replace("\t", "")
        if (kept.replace("\n", "") if newlines else kept).isprintable():
            return text
    pattern = _UNSAFE if newlines else _UNSAFE_NL
    if not pattern.search(text):
        return text
    return pattern.sub(lambda m: _escape(m.group(0)) if m.group(0) != "\t" else "\t", text)


def field_safe(value: Any) -> str:
    """One value of a line, as text: newlines and every control escaped."""
    return terminal_safe(str(value), newlines=False)


def safe_tree(value: Any) -> Any:
    """A copy of a JSON-like document with every string made terminal-safe (one-line fields: newlines too)."""
    return _map_strings(value, field_safe)


def json_text(value: Any, **kwargs: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, **kwargs)` with C1 controls, DEL, lone surrogates, bidi
    overrides and U+2028/U+2029 written as `\\uNNNN` escapes: the same JSON value, always encodable."""
    return json_safe(lean_json.dumps(value, ensure_ascii=False, **kwargs))


def json_safe(text: str) -> str:
    """JSON text written with `ensure_ascii=False`, its C1 controls, DEL, lone surrogates, bidi overrides and
    U+2028/U+2029 written as `\\uNNNN` escapes (json_text's second half, for a text written elsewhere)."""
    if text.isascii() and "\x7f" not in text:  # the pattern's one ASCII character: not compiled for ASCII text
        return text
    # every character the pattern escapes is one str.isprintable() refuses (a control, a surrogate, a format character,
    # a line or paragraph separator), and JSON text's only raw control is its indentation's newline: text that is
    # printable without its newlines (a report with a `→` or a `×`) has nothing to escape, and the pattern (~0.35 ms to
    # compile on the 2-core box, its class reaching U+2069) is not compiled for it (tests/test_redact.py)
    if text.replace("\n", "").isprintable():
        return text
    if not _JSON_UNSAFE.search(text):
        return text
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def _map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """Apply fn to every string of a JSON-like value, iteratively (a hostile document may be deep). fn is a
    function of the string alone (redact_text, field_safe): it runs once per distinct string, and a string
    seen again takes the same answer (a gate's decision holds ~740 strings, ~180 of them distinct: masking
    took ~7 ms of it, now ~2)."""
    if isinstance(value, str):
        return fn(value)
    if not isinstance(value, dict | list | tuple):
        return value
    answers: dict[str, str] = {}

    def once(text: str) -> str:
        out = answers.get(text)
        if out is None:
            out = answers[text] = fn(text)
        return out

    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]  # (source, destination container, key in it)
    while stack:
        src, dst, key = stack.pop()
        if isinstance(src, dict):
            new: dict[Any, Any] = {}
            dst[key] = new
            for k, v in src.items():
                nk = once(k) if isinstance(k, str) else k
                if isinstance(v, dict | list | tuple):
                    new[nk] = None
                    stack.append((v, new, nk))
                else:
                    new[nk] = once(v) if isinstance(v, str) else v
        elif isinstance(src, list | tuple):
            items: list[Any] = [None] * len(src)
            dst[key] = items
            for i, v in enumerate(src):
                if isinstance(v, dict | list | tuple):
                    stack.append((v, items, i))
                else:
                    items[i] = once(v) if isinstance(v, str) else v
    return root[0]
