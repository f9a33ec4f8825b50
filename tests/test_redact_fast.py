"""public_document's fast path (redact._strings' walk, masked_texts' joined searches of _LOWER_MARKS, secret_flag asked
once per flag) against the straightforward reference: redact_text on every string, the document rebuilt
(redact_document with redact_text, a top-level command line by redact_argv), over generated documents holding planted
secrets and terminal controls at random places: keys too, nested lists and dicts, non-ASCII text, tuples and scalars.
Derandomized in CI (tests/conftest.py)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck import redact

# ---- strategies -------------------------------------------------------------------------------------

_body = st.text("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789", min_size=6, max_size=20)
#: what a secret is planted as: each shape a rule of redact_text masks, and near-misses it must leave (a source id's
#: `-pypi-`, `--tokenizer-path`, a URL without a user, a mixed-case header name)
_PLANTS = st.sampled_from(
    ["hf_{}", "ghp_{}", "gho_{}", "github_pat_{}", "glpat-{}", "sk-{}", "sk_live_{}", "rk_live_{}", "xoxb-{}",
     "npm_{}", "pypi-{}", "pypi-AgE{}", "x-pypi-{}", "wheel-pypi-AgE{}", "AIza{}", "ya29.{}", "AKIA{}", "ASIA{}",
     "eyJ{}.eyJ{}.{}", "api_key={}", "API-KEY: {}", "token: '{}'", '"password": "{}"', "my_secret_key={}",
     "accessToken={}", "session_id = {}", "--api-key {}", "--hf-token\t{}", "--api-k {}", "--admin {}",
     "--tokenizer-path {}", "--quantization {}", "https://user:{}@host/x", "git+ssh://{}@h:22/r", "https://h/{}@x",
     "Authorization: Bearer {}", "authorization=token {}", "AUTHORIZATION: {}", "AuThOrIzAtIoN: {}", "Bearer {}",
     "Basic {}", "Token {}", "-----BEGIN RSA PRIVATE KEY-----{}", "\\x07hf_{}", "\\u202eapi_key={}", "ſecret={}",
     "paſſword: {}", "K{}=x"]
)  # fmt: skip
_CONTROLS = st.sampled_from(["\x1b[31m", "\x00", "\x07", "\x7f", "\x9b", "\u202e", "\u2028", "\ud800", "\n", "\t", "é"])
_planted = st.builds(lambda shape, body: shape.replace("{}", body), _PLANTS, _body)
_filler = st.text(st.characters(codec=None, exclude_categories=()), max_size=12) | st.text(
    "abcdefghijklmnopqrstuvwxyz0123456789 _-./:=@'\"", max_size=24
)
texts = st.lists(_planted | _filler | _CONTROLS, min_size=1, max_size=4).map("".join)
scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | texts
documents = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(texts | st.integers(0, 3), inner, max_size=4)
    ),
    max_leaves=24,
)
argv = st.lists(texts | st.sampled_from(["--api-key", "--hf-token", "--tp", "8", "HF_TOKEN=x", "--admin"]), max_size=5)
#: a report's shape: the facts' env, image labels and command, a top-level command line, beside any document
reports = st.fixed_dictionaries(
    {"facts": st.fixed_dictionaries({
        "system": st.fixed_dictionaries({"env": st.dictionaries(texts, texts, max_size=3)}),
        "image": st.fixed_dictionaries({"labels": st.dictionaries(texts, texts, max_size=3), "command": argv}),
        "other": documents})},
    optional={"command": argv, "given": argv, "rest": documents},
)  # fmt: skip


# ---- the reference ----------------------------------------------------------------------------------


def _every_string(value: Any, out: set[str]) -> set[str]:
    if isinstance(value, str):
        out.add(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            _every_string(k, out)
            _every_string(v, out)
    elif isinstance(value, list | tuple):
        for v in value:
            _every_string(v, out)
    return out


def _reference(doc: Any) -> Any:
    """The straightforward masking: redact_text on every string (redact_document's default), the top-level command
    line masked by redact_argv."""
    out = redact.redact_document(doc, redact.redact_text)
    if isinstance(doc, dict) and isinstance(out, dict):
        for key in ("command", "given"):
            if isinstance(doc.get(key), list):
                out[key] = redact.redact_argv([str(a) for a in doc[key]])
    return out


def _same(a: Any, b: Any) -> bool:
    """Equal as documents, and of the same types (a tuple is rebuilt as a list by both), keys in the same order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and a != a:
        return bool(b != b)
    return bool(a == b)


_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(documents)
def test_the_walk_finds_every_string_of_a_document(doc: Any) -> None:
    assert redact._strings(doc) == _every_string(doc, set())


@_SETTINGS
@given(st.lists(texts, max_size=30))
def test_masked_texts_answers_as_redact_text_on_each(listed: list[str]) -> None:
    given_texts = set(listed)
    expected = {t: shown for t in given_texts if (shown := redact.redact_text(t)) != t}
    assert redact.masked_texts(given_texts) == expected


@_SETTINGS
@given(documents)
def test_public_document_is_the_reference_on_any_document(doc: Any) -> None:
    expected = _reference(doc)
    shown = redact.public_document(doc)
    assert _same(shown, expected) or (shown is doc and _same(redact._map_strings(doc, lambda t: t), expected))


@_SETTINGS
@given(reports)
def test_public_document_is_the_reference_on_a_report(doc: dict[str, Any]) -> None:
    expected = _reference(doc)
    shown = redact.public_document(doc)
    assert _same(shown, expected) or (shown is doc and _same(redact._map_strings(doc, lambda t: t), expected))


def test_the_lower_case_marks_cover_every_mark() -> None:
    """Every text redact_text may change (a mark of _CHANGE_MARKS, a URL's `://` with an `@`, an assignment's word
    with its separator) holds a key of _LOWER_MARKS in lower case and what that key needs: masked_texts passes it."""
    for mark in redact._CHANGE_MARKS:
        if mark == "--":
            continue  # _FLAG_AHEAD's
        need = "@" if mark == "://" else ":" if mark == "@" else mark  # (`user:password@host` needs its ':')
        assert any(key in mark.lower() and need in needs for key, needs in redact._LOWER_MARKS.items()), mark
    for word in redact._ASSIGN_WORDS:
        assert any(key in word and "=" in needs for key, needs in redact._LOWER_MARKS.items()), word
    assert all(key == key.lower() for key in redact._LOWER_MARKS)


def test_the_pypi_word_reads_as_the_token_shape() -> None:
    """_pypi_word answers whether _TOKEN's PyPI alternative can start in a text: its own `pypi-` rule."""
    import random

    rng = random.Random(3)
    pieces = ["pypi-", "AgE", "_", "-", ".", "/", " ", "=", "a", "Z9", "wheel", "\x07", "é"]
    checked = 0
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) + "abcdefxy"  # (no other mark: `gh`)
        if (
            redact._TOKEN.search(text)
            and "pypi-" in text
            and not any(m in text for m in redact._TOKEN_MARKS if m != "pypi-")
        ):
            checked += 1
            assert redact._pypi_word(text), text
    assert checked > 1000
    assert not redact._pypi_word("sglang-0.5.9-wheel-pypi-sglang-srt") and redact._pypi_word("x-pypi-AgEabcdefgh")


def test_every_assignment_ends_as_the_tail_reads_it() -> None:
    """_ASSIGN_TAIL finds every match of _ASSIGN in an ASCII text's lower case: over generated texts made of its keys'
    words, separators, quotes and spaces, a text _ASSIGN matches is one _ASSIGN_TAIL matches (lower-cased)."""
    import random

    rng = random.Random(11)
    pieces = ["api", "_", "-", ".", "key", "KEY", "Token", "secret", "pass", "word", "wd", "phrase", "pwd",
              "credential", "s", "auth", "access", "private", "client", "session", "id", "cookie", "refresh", "my",
              "x9", "'", '"', " ", "\t", "=", ":", "\\x07", "v", "this ", ",", ")", "}", "0"]  # fmt: skip
    matched = 0
    for _ in range(30000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 7)))
        if redact._ASSIGN.search(text):
            matched += 1
            assert redact._ASSIGN_TAIL.search(text.lower()) and redact._assign_tail(text.lower()), text
    assert matched > 200


def test_the_tail_by_string_methods_is_the_pattern() -> None:
    """_assign_tail (masked_texts' reading, no pattern compiled) answers as _ASSIGN_TAIL's search on lower-case text."""
    import random

    rng = random.Random(13)
    pieces = ["api", "_", "-", ".", "key", "token", "secret", "pass", "word", "wd", "phrase", "pwd", "credential",
              "s", "auth", "access", "private", "session", "id", "cookie", "x9", "'", '"', " ", "\t", "\n",
              "\u00a0", "=", ":", ",", ")", "]", "}", ";", "v", "this ", "é", "0"]  # fmt: skip
    matched = 0
    for _ in range(60000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
        expected = redact._ASSIGN_TAIL.search(text) is not None
        assert redact._assign_tail(text) == expected, text
        matched += expected
    assert matched > 800


def test_the_tail_leaves_a_key_that_is_no_assignment() -> None:
    """A plain `key` (no `api`, `access`, `private` or `name_` before it), an `id` not after `session`, or a separator
    with no value after it is no match of _ASSIGN, and _ASSIGN_TAIL leaves it too: such a text is not searched by
    _ASSIGN (nor the pattern compiled); the same words as an assignment still are."""
    for text in ("No SGLang release has this key: the result is unknown", "pid: 42", "token=", "a key = , b"):
        assert not redact._ASSIGN.search(text), text
        assert not redact._ASSIGN_TAIL.search(text.lower()) and not redact._assign_tail(text.lower()), text
    for text in ("api_key: x", "apikey: x", "access-key=x", "private.key=x", "my_key: x", "session_id=x", "token: 'x'"):
        assert redact._ASSIGN_TAIL.search(text.lower()) and redact._assign_tail(text.lower()), text


def test_an_authorization_header_in_any_case_is_masked() -> None:
    """_AUTH_HEADER ignores case, and so must the checks in front of it (redact_text's and masked_texts'): a header
    written `AuThOrIzAtIoN:` was shown as written."""
    for text in ("AuThOrIzAtIoN: s3cretvalue99", "curl -H 'aUTHORIZATION: Bearer s3cretvalue99'"):
        assert "s3cretvalue99" not in redact.redact_text(text), text
        shown = redact.public_document({"reasons": [{"message": text}], text: 1})
        assert "s3cretvalue99" not in json.dumps(shown), text


@_SETTINGS
@given(reports)
def test_a_read_document_is_masked_as_redact_document_masks_it(doc: dict[str, Any]) -> None:
    """read_document_masked (a facts file or saved report just parsed: facts.model.read_document) gives what
    redact_document gives, planted secrets and all: the facts' env, labels and image command, every string; a top-level
    command line is left as redact_document leaves it."""
    parsed = json.loads(json.dumps(doc))  # (as parsed from a file: lists, string keys)
    expected = redact.redact_document(parsed)
    shown = redact.read_document_masked(parsed)
    assert _same(shown, expected)
    # the document itself where nothing was masked (a top-level command line that only public_document masks aside)
    assert shown is parsed or not _same(parsed, expected) or "command" in parsed or "given" in parsed


def test_a_read_document_with_nothing_to_mask_is_the_document_itself() -> None:
    doc = json.loads('{"schema_version": 1, "facts": {"system": {"env": {"CUDA_HOME": "/usr/local/cuda"}}}}')
    assert redact.read_document_masked(doc) is doc
    planted = json.loads(
        '{"facts": {"host": "h", "note": "HF_TOKEN=hf_abcdefgh12345", "system": {"env": {"HF_TOKEN": "x"}}}}'
    )
    shown = redact.read_document_masked(planted)
    assert "hf_abcdefgh12345" not in json.dumps(shown) and shown["facts"]["system"]["env"] == {}


def test_a_flags_words_are_the_splits() -> None:
    """secret_flag reads a flag's words as re.split(r"[-_.]+") would: the same answer on generated flags."""
    import random
    import re

    rng = random.Random(17)
    pieces = ["-", "_", ".", "api", "key", "token", "hf", "admin", "x", "KEY", "pat", "ı", "ß", "tokenizer"]
    for _ in range(20000):
        flag = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        words = [w for w in re.split(r"[-_.]+", flag.lstrip("-").upper()) if w]
        expected = any(w in redact.SECRET_FLAG_WORDS for w in words) or "APIKEY" in "".join(words)
        expected = expected or (
            flag.startswith("--") and len(flag) >= 4 and any(k.startswith(flag) for k in redact.KNOWN_SECRET_FLAGS)
        )
        assert redact.secret_flag(flag) == expected, flag
