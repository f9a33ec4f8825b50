"""stackcheck/redact.py: what text from the box may be shown (issue 14, items 3-6 and 11).

Planted secrets never survive a redaction, harmless values do, and every terminal control becomes a
visible escape."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from stackcheck.redact import (
    MASK,
    field_safe,
    json_text,
    looks_secret,
    redact_argv,
    redact_env,
    redact_text,
    redact_tree,
    safe_tree,
    scrub_home,
    secret_flag,
    terminal_safe,
)

HOME = "/home/ann"


# ---- item 5: the environment ---------------------------------------------------------------------


def test_userinfo_is_split_on_the_last_at_sign() -> None:
    out = redact_env({"SGLANG_DB_URL_X": "postgres://dave:p@ssword42@db/x"}, home=HOME)
    assert out == {"SGLANG_DB_URL_X": "postgres://***@db/x"}
    assert "ssword42" not in str(out) and "dave" not in str(out)


def test_credentials_in_urls_under_any_name_even_with_a_slash_in_the_password() -> None:
    out = redact_env({"NCCL_IB_HCA": "https://eve:pa/ss55@host/"}, home=HOME)
    assert "pa/ss55" not in str(out) and "ss55" not in str(out)
    assert out == {"NCCL_IB_HCA": "https://***@host/"}


def test_a_user_name_alone_is_masked_too_tokens_travel_as_user_names() -> None:
    assert redact_env({"SGLANG_GIT": "https://ghtoken123@github.com/org/repo"}, home=HOME) == {
        "SGLANG_GIT": "https://***@github.com/org/repo"
    }


@pytest.mark.parametrize(
    "value",
    [
        "p@ssw0rd!Secret#2024",  # a password-like word with symbols
        "api_key=abc123def",  # an assignment inside a value
        "Zq8vN3kP0rT5yW2mB7cX9dF4gH6jL1sA",  # a long random token
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig",  # a JSON Web Token
        "glpat-abcdefghijklmnop",
        "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA",
    ],
)
def test_generic_names_holding_secret_looking_values_are_dropped(value: str) -> None:
    assert redact_env({"NCCL_SOCKET_IFNAME": value}, home=HOME) == {}


@pytest.mark.parametrize(
    "value",
    [
        "eth0",
        "^docker0,lo",
        "mlx5_0:1,mlx5_1:1",
        "8.0;9.0;10.0;12.0+PTX",
        "expandable_segments:True,garbage_collection_threshold:0.8",
        "/usr/local/cuda-13.0/lib64",
        "GPU-8f3a2b1c-1234-5678-9abc-def012345678",
        "http://host:8080/a@b",  # a port, and an '@' in the path: no userinfo
    ],
)
def test_harmless_values_are_kept(value: str) -> None:
    assert redact_env({"NCCL_X": value}, home=HOME) == {"NCCL_X": value}


def test_home_directory_is_replaced_anywhere_in_a_value() -> None:
    assert scrub_home("failed to read /home/ann/.venv/x: no", HOME) == "failed to read ~/.venv/x: no"
    assert scrub_home("/home/anna/x", HOME) == "/home/anna/x"


# ---- item 3: a command line -----------------------------------------------------------------------


def test_argv_values_of_secret_flags_are_masked_by_name_and_by_shape() -> None:
    argv = [
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "https://user:hunter2@hub.example/m",
        "--api-key",
        "plainvalue",
        "--admin-api-key=another",
        "--hf-token",
        "hf_abcdefghijklmnopqrstu",
        "--tokenizer-path",
        "/models/tok",
        "--max-total-tokens",
        "4096",
        "--served-model-name",
        "sk-live-0123456789abcdef",
        "HF_TOKEN=hf_x",
        "--tp",
        "8",
    ]
    out = redact_argv(argv)
    for secret in ("hunter2", "plainvalue", "another", "hf_abcdefghijkl", "0123456789abcdef", "hf_x"):
        assert secret not in " ".join(out), secret
    assert out[out.index("--api-key") + 1] == MASK
    assert "--admin-api-key=***" in out and "HF_TOKEN=***" in out
    assert out[out.index("--tokenizer-path") + 1] == "/models/tok"  # not a secret flag: TOKENIZER != TOKEN
    assert out[out.index("--max-total-tokens") + 1] == "4096"
    assert out[-2:] == ["--tp", "8"] and out[:3] == argv[:3]


@pytest.mark.parametrize(
    ("flag", "secret"),
    [
        ("--api-key", True),
        ("--admin-api-key", True),
        ("--hf-token", True),
        ("--ssl-keyfile-password", True),
        ("--tokenizer-path", False),
        ("--max-total-tokens", False),
        ("--kv-cache-dtype", False),
    ],
)
def test_secret_flags(flag: str, secret: bool) -> None:
    assert secret_flag(flag) is secret


# ---- item 4: free text (logs) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("ServerArgs(model_path='m', api_key='sk-abc123', max_total_tokens=8)", "sk-abc123"),
        ("pip: GET https://bob:hunter2@pypi.example/simple failed", "hunter2"),
        ("Using token hf_ABCDEFGHIJKLMNOP0123 for the hub", "ABCDEFGHIJKLMNOP0123"),
        ("export OPENAI_API_KEY=sk-proj-abcdefghijkl", "abcdefghijkl"),
        ('{"password": "correct horse"}', "correct horse"),
        ("Authorization: Bearer abcdefghijklmnopqrstuv", "abcdefghijklmnopqrstuv"),
        ("token: 9f8e7d6c5b4a", "9f8e7d6c5b4a"),
        ("twine upload -p pypi-AgEIcHlwaS5vcmcCJDEy dist/*", "AgEIcHlwaS5vcmcCJDEy"),
        ("TWINE_PASSWORD=pypi-AgEIcHlwaS5vcmcCJDEy", "AgEIcHlwaS5vcmcCJDEy"),
        ("https://__token__:pypi-AgEIcHlwaS5vcmcCJDEy@upload.pypi.org/legacy/", "AgEIcHlwaS5vcmcCJDEy"),
        ("uploading with (pypi-AgEIcHlwaS5vcmcCJDEy)", "AgEIcHlwaS5vcmcCJDEy"),
        # a PyPI token (a macaroon: base64 that starts `AgE`) after `/`, `.`, `_` or `-` is still one (irev3)
        ("--index-url https://host/simple/pypi-AgEIcHlwaS5vcmcCJDEy/", "AgEIcHlwaS5vcmcCJDEy"),
        ("UV_INDEX=https://host/pypi-AgEIcHlwaS5vcmcCJDEy", "AgEIcHlwaS5vcmcCJDEy"),
        ("read token from cfg.pypi-AgEIcHlwaS5vcmcCJDEy", "AgEIcHlwaS5vcmcCJDEy"),
        ("PYPI_UPLOAD_pypi-AgEIcHlwaS5vcmcCJDEy", "AgEIcHlwaS5vcmcCJDEy"),
        ("--token -pypi-AgENdGVzdC5weXBpLm9yZwIkZj", "AgENdGVzdC5weXBpLm9yZwIkZj"),
        # a Hugging Face or GitHub token is still one before `.`, `-`, `/` or the end of the text
        ("cp /secrets/hf_SEKRITpath123456.json .", "SEKRITpath123456"),
        ("HUB=hf_ABCDEFGHIJKLMNOP0123-old", "ABCDEFGHIJKLMNOP0123"),
        ("git push https://x/ghp_abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz0123456789"),
    ],
)
def test_text_secrets_are_masked(line: str, secret: str) -> None:
    out = redact_text(line)
    assert secret not in out and MASK in out


@pytest.mark.parametrize(
    "line",
    [
        "KeyError: 12",
        "max_total_tokens=4096 tokenizer_path='/m' hf_token=None",
        "task-list disk-cache",
        "RuntimeError: No supported CUDA architectures found for major versions [9, 10].",
        "see https://docs.flashinfer.ai/installation.html",
        # source ids that hold `-pypi-` inside a hyphenated name (iold's report: printed as `...-pypi-***`)
        "sources: sgl-kernel-0.3.5-pypi-wheel-sgl-kernel, triton-wheels-from-pypi-cp311-manylinux",
        # file and module names that start like a Hugging Face token but go on with `_` (iquant's report: the
        # gate printed `hf_***` for hf_quant_config.json); real hf_ and ghp_ tokens are letters and digits only
        "hf_quant_config.json: quantization.quant_algo = NVFP4",
        "File sglang/srt/utils/hf_transformers_utils.py, line 412, in get_config",
        "text_config read as hf_text_config (ghp_style_names_in_code)",
    ],
)
def test_ordinary_log_text_is_unchanged(line: str) -> None:
    assert redact_text(line) == line


def test_redact_tree_masks_every_string_and_keeps_the_shape() -> None:
    doc = {"a": ["x", {"url": "https://u:p4ss@h/"}], "n": 3, "k": None}
    assert redact_tree(doc) == {"a": ["x", {"url": "https://***@h/"}], "n": 3, "k": None}


def test_looks_secret_on_uuids_and_paths() -> None:
    assert not looks_secret("GPU-8f3a2b1c-1234-5678-9abc-def012345678")
    assert not looks_secret("/opt/nvidia/hpc_sdk/Linux_x86_64/25.1/lib")
    assert looks_secret("hf_AbCdEfGhIjKlMnOpQr")


# ---- item 6 and 11: terminals and encodings -------------------------------------------------------


def test_terminal_safe_neutralises_every_control() -> None:
    text = "GPU \x1b]0;pwned\x07\x1b[2J\x9b31m\x85\u202egnp.exe\ud800\x7f\r\tend\n"
    out = terminal_safe(text)
    for raw in ("\x1b", "\x07", "\x9b", "\x85", "\u202e", "\ud800", "\x7f", "\r"):
        assert raw not in out
    assert out.endswith("\tend\n")  # tabs and (here) newlines stay
    assert "\\x1b]0;pwned\\x07" in out and "\\ud800" in out
    assert field_safe("a\nb") == "a\\nb"
    out.encode("utf-8")  # always encodable


def test_safe_tree_is_iterative_and_covers_keys() -> None:
    deep: object = "\x1b"
    for _ in range(5000):  # deeper than the recursion limit
        deep = [deep]
    safe_tree(deep)
    assert safe_tree({"\x1bk": ["\x1b"]}) == {"\\x1bk": ["\\x1b"]}


def test_json_text_escapes_what_terminals_act_on_and_round_trips() -> None:
    value = {"hostname": "\ud800\x1b\x9b\u202e\u2028", "ok": "Blackwell ×8"}
    text = json_text(value)
    assert all(ch not in text for ch in ("\ud800", "\x1b", "\x9b", "\u202e", "\u2028"))
    assert "×" in text  # ordinary non-ASCII stays readable
    text.encode("utf-8")
    assert json.loads(text) == value


@pytest.mark.parametrize(
    "text",
    ["a_" * 32000, "a." * 32000, "a-" * 32000, "a_token" * 9000, "token=" * 10000, "https://" + "a:" * 32000 + "@",
     "a://b@" * 10000, "Bearer " * 9000, "'" * 64000],
    ids=lambda t: repr(t[:8]),
)  # fmt: skip
def test_redaction_is_linear_on_a_64_kib_line(text: str) -> None:
    """Found in the adversarial pass: a quantified key prefix in the assignment pattern made a 64 KiB log
    line of `a_a_a_...` take minutes (quadratic backtracking), hanging triage and --watch's report."""
    import time

    start = time.process_time()  # CPU time: backtracking is work, which a loaded box does not inflate
    redact_text(text)
    looks_secret(text)
    redact_argv([text])
    assert time.process_time() - start < 2.0


def test_a_tree_is_masked_once_per_distinct_string_with_the_answer_of_each() -> None:
    """redact_tree and safe_tree ask their function once per distinct string (keys too): every place a
    string stands gets what the function gives for it."""
    from stackcheck.redact import _map_strings, redact_text

    token = "hf_" + "aB3" * 8
    doc = {"a": [token, "ok", "ok", {"ok": token}], token: ("ok", f"Bearer {token}"), "n": [1, None, True]}
    calls: list[str] = []

    def counted(text: str) -> str:
        calls.append(text)
        return redact_text(text)

    out = _map_strings(doc, counted)
    assert sorted(calls) == sorted({"a", token, "ok", "n", f"Bearer {token}"})
    masked = redact_text(token)
    assert masked != token
    assert out == {
        "a": [masked, "ok", "ok", {"ok": masked}],
        masked: ["ok", redact_text(f"Bearer {token}")],
        "n": [1, None, True],
    }


# ---- the marks tested before a pattern is searched (a fast path: it must mask exactly what the patterns do) --


def _examples(pattern: str) -> list[str]:
    """Short texts that the pattern matches, one per branch of every alternation (the product of them), each
    class filled with its first and, in a second set, its last character: every shape written in the
    pattern, as literally as it can be."""
    import importlib
    import itertools

    c: Any = importlib.import_module("re._constants")  # the parser of `re` itself (no type stubs)
    parser: Any = importlib.import_module("re._parser")

    def texts(items: list[tuple[Any, Any]], pick: int) -> list[str]:
        out = [""]
        for op, av in items:
            if op is c.LITERAL:
                parts = [chr(av)]
            elif op is c.IN and any(o is c.NEGATE for o, _ in av):
                parts = ["v"]  # in none of the negated classes of these patterns
            elif op is c.IN:
                categories = {c.CATEGORY_SPACE: " ", c.CATEGORY_DIGIT: "0", c.CATEGORY_WORD: "a"}
                chars = (
                    [chr(v) for o, v in av if o is c.LITERAL]
                    + [chr(v[pick]) for o, v in av if o is c.RANGE]
                    + [categories[v] for o, v in av if o is c.CATEGORY]
                )
                parts = [chars[pick] if chars else "x"]
            elif op is c.BRANCH:
                parts = [t for branch in av[1] for t in texts(list(branch), pick)]
            elif op is c.SUBPATTERN:
                parts = texts(list(av[-1]), pick)
            elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
                lo, _, sub = av
                parts = ["".join(p) for p in itertools.product(texts(list(sub), pick), repeat=max(lo, 1))]
            elif op in (c.ASSERT, c.ASSERT_NOT, c.AT):
                parts = [""]
            else:
                raise AssertionError(f"unexpected {op} in the pattern")
            out = [a + b for a in out for b in parts]
        return out

    parsed = list(parser.parse(pattern))
    return texts(parsed, 0) + texts(parsed, -1)


def test_every_credential_shape_holds_a_mark_so_no_token_is_skipped() -> None:
    from stackcheck import redact

    examples = _examples(redact._CREDENTIAL_SHAPES)
    assert len(examples) > 20
    for text in examples:
        assert re.fullmatch(redact._CREDENTIAL_SHAPES, text), text
        assert redact._has_token(text), f"{text!r} matches a credential shape but holds none of _TOKEN_MARKS"
        assert looks_secret(text) and MASK in redact_text(text), text
    keys = _examples(redact._ASSIGN._args[0])  # type: ignore[attr-defined]
    assert len(keys) > 20
    for text in keys:
        assert redact._ASSIGN.fullmatch(text), text
        assert redact._may_assign(text), f"{text!r} is a secret assignment that _ASSIGN_WORD does not find"
        assert redact._may_assign(text.upper()) and redact._may_assign(text.title()), text
    bearer = _examples(redact._BEARER._args[0])  # type: ignore[attr-defined]
    assert {t.split()[0] for t in bearer} == set(redact._BEARER_MARKS)


def _reference_redact_text(text: str) -> str:
    """redact_text as it was written before the marks: every pattern applied to every text."""
    from stackcheck import redact

    if not text:
        return text
    out = redact.redact_urls(text)
    out = _reference_tokens_masked(out)
    out = redact._ASSIGN.sub(redact._assign_masked, out)
    out = redact._BEARER.sub(redact._bearer_masked, out)
    if redact._PRIVATE_KEY.search(out):
        out = redact._PRIVATE_KEY.sub("-----BEGIN PRIVATE KEY----- " + MASK, out)
    return out


def _reference_tokens_masked(text: str) -> str:
    """Every credential shape masked in each piece between terminal control sequences (irev59: a token right after
    `\\x1b[31m`), every text split, not only those holding one of redact._CSI_MARKS."""
    from stackcheck import redact

    pieces = redact._CSI.split(text)
    sub = redact._TOKEN.sub
    return "".join(
        p if i % 2 else sub(lambda m: m.group(0)[: redact._prefix_len(m.group(0))] + MASK, p)
        for i, p in enumerate(pieces)
    )


def _reference_looks_secret(value: str) -> bool:
    from stackcheck import redact

    if _reference_tokens_masked(value) != value or redact._PRIVATE_KEY.search(value):
        return True
    if redact.redact_urls(value) != value:
        return True
    if any(redact._assign_masked(m) != m.group(0) for m in redact._ASSIGN.finditer(value)):
        return True
    return redact._any_random(value)  # (irobust8: a token inside shell punctuation read too)


def test_the_marks_change_nothing_against_the_patterns_applied_to_every_text() -> None:
    """Generated texts built from the pieces secrets are made of (every shape's prefix, near misses, the
    key words of assignments, Bearer, private-key headers, separators, random characters): redact_text and
    looks_secret answer exactly what they answered when every pattern searched every text."""
    import random

    from stackcheck import redact

    pieces = [*redact._TOKEN_MARKS, *_examples(redact._CREDENTIAL_SHAPES)[::3], "ghp", "sk", "Sk-", "hf-", "AKI",
              "eyj", "Bearer ", "bearer ", "Basic  ", "Token\t", "BEARER\x0c", "basic ", "TOKEN ", "\\x1b[0m",
              "\x1b[1;31m", "\\x9b2m", "\\u001b[0m", "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN ",
              "api_key", "token", "PassWord", "secret", "Session-ID", "cookie", "ſecret", "\u212aey",
              "=", ": ", "https://u:p@h/", " ", "/", "_", "-", ".", "'", '"', "\n"]  # fmt: skip
    rng = random.Random(21)
    alphabet = "aZ9_-.+/=~xkAIyJ"
    for _ in range(4000):
        parts = [rng.choice(pieces) if rng.random() < 0.5 else "".join(rng.choices(alphabet, k=rng.randint(1, 24)))
                 for _ in range(rng.randint(1, 6))]  # fmt: skip
        text = "".join(parts)
        assert redact_text(text) == _reference_redact_text(text), text
        assert looks_secret(text) == _reference_looks_secret(text), text


def test_terminal_safe_passes_printable_text_without_a_search() -> None:
    # the fast path (str.isprintable) is exact: no printable character is one the patterns escape, on every
    # code point, and a text of printable characters comes back as the same object
    from stackcheck import redact

    unsafe = [redact._UNSAFE_NL, redact._UNSAFE, redact._JSON_UNSAFE]  # (json_safe's fast path too)
    for code in range(0x110000):
        ch = chr(code)
        if ch.isprintable():
            assert not any(p.search(ch) for p in unsafe), hex(code)
    text = "torch 2.9.1+cu130 · sm_90 → ok ✓ (sglang-0.5.9:server_args.py +2)"
    assert redact.terminal_safe(text, newlines=False) is text
    assert redact.terminal_safe("a\x1b[31mb\u202ec") == "a\\x1b[31mb\\u202ec"
    json = '{\n  "box": "8\u00d7 GPU \u2192 ok"\n}'
    assert redact.json_safe(json) is json
    assert redact.json_safe('{"a": "x\u202ey\x85"}\n') == '{"a": "x\\u202ey\\u0085"}\n'


def test_the_ascii_prefilter_of_assignments_agrees_with_the_pattern() -> None:
    """_may_assign's lower-case search of an ASCII text answers as _ASSIGN_WORD's case-insensitive search."""
    import random

    from stackcheck import redact

    rng = random.Random(7)
    for _ in range(20000):
        text = "".join(rng.choice("kKeEyYtToOnNsScCrRpPaAwWdDiIlLuUhH:=_- x") for _ in range(rng.randint(0, 16)))
        expected = ("=" in text or ":" in text) and redact._ASSIGN_WORD.search(text) is not None
        assert redact._may_assign(text) == expected, text
    assert redact._may_assign("pa\u017fsword=x")  # a long s: not ASCII, the pattern decides (Unicode folding)


def test_tvm_ffis_backend_override_is_recorded() -> None:
    """Check jit-toolchain (rule tvm-ffi-rocm-home) reads TVM_FFI_GPU_BACKEND: the probe must keep it."""
    assert redact_env({"TVM_FFI_GPU_BACKEND": "cuda", "TVM_FFI_OTHER": "x"}, home=HOME) == {
        "TVM_FFI_GPU_BACKEND": "cuda"
    }


def test_public_document_masks_what_redact_text_masks_in_every_string() -> None:
    """masked_texts joins a document's strings and searches each mark once: a text it leaves out is one redact_text
    leaves as it is, over generated texts built from the pieces secrets are made of (secret flags among other
    flags, URLs with and without a user, assignments, shapes), in one document, as keys and as values."""
    import random

    from stackcheck import redact

    pieces = [*redact._TOKEN_MARKS, *redact._CHANGE_MARKS, *_examples(redact._CREDENTIAL_SHAPES)[::3], "sk", "gh",
              "--api-key ", "--api-k\t", "--hf-token ", "--admin ", "--tokenizer-path ", "--quantization ", "--pat ",
              "--", "---", "api_key", "token", "PassWord", "secret", "ſecret", "=", ": ", "https://u:p@h/",
              "https://h/x@y", " ", "\t", "/", "_", "-", ".", "'", '"', "\n", "\x00", "é"]  # fmt: skip
    rng = random.Random(5)
    alphabet = "aZ9_-.+/=~xkAIyJ "
    texts = set()
    for _ in range(6000):
        parts = [rng.choice(pieces) if rng.random() < 0.5 else "".join(rng.choices(alphabet, k=rng.randint(1, 24)))
                 for _ in range(rng.randint(1, 6))]  # fmt: skip
        texts.add("".join(parts))
    expected = {t: redact_text(t) for t in texts}
    assert any(expected[t] != t for t in texts) and any(expected[t] == t for t in texts)
    assert redact.masked_texts(texts) == {t: shown for t, shown in expected.items() if shown != t}
    listed = sorted(texts)
    doc = {"facts": {"values": listed, "keys": dict.fromkeys(listed, 1)}}
    shown = redact.public_document(doc)
    assert shown["facts"]["values"] == [expected[t] for t in listed]
    assert list(shown["facts"]["keys"]) == list(dict.fromkeys(expected[t] for t in listed))
    clean = {"facts": {"values": [t for t in listed if expected[t] == t]}, "command": ["python", "-m", "x"]}
    assert redact.public_document(clean) is clean  # nothing masked: no copy


def test_public_document_masks_a_command_line_and_the_facts_env() -> None:
    from stackcheck import redact

    env = {"MY_TOKEN": "x"}
    doc: dict[str, Any] = {"command": ["sglang", "--api-key", "plainvalue"], "facts": {"system": {"env": env}}}
    shown = redact.public_document(doc)
    assert shown["command"] == ["sglang", "--api-key", MASK]
    assert shown["facts"]["system"]["env"] == {}
    assert doc["command"][-1] == "plainvalue" and doc["facts"]["system"]["env"] == {"MY_TOKEN": "x"}


def test_an_argument_holding_a_flag_and_its_value_is_masked_as_text() -> None:
    """One argv element holding a secret flag, a space and its value (an image's Cmd written as one string, a
    wrapper's `"--api-key 000000"`) is masked as the text it is; before, it was read as one flag named
    `--api-key 000000` whose value was the next argument, and printed as it was."""
    from stackcheck import redact as _redact

    assert _redact.redact_argv(["python", "--api-key 000000"]) == ["python", f"--api-key {_redact.MASK}"]
    masked = _redact.redact_argv(["--api-key 000000", "--port", "30000"])
    assert masked == [f"--api-key {_redact.MASK}", "--port", "30000"]
    doc = {"facts": {"image": {"command": ["--model-path /m --api-key sk-abc12345678"]}}}
    assert "sk-abc12345678" not in str(_redact.public_document(doc))


@pytest.mark.parametrize(
    "script",
    [
        "python -m sglang.launch_server --model-path /m --api-key \\\n  s3cretvalue123 --tp 8",
        "python -m sglang.launch_server \\\n  --api-key \\\n  s3cretvalue123 \\\n  --tp 8",
        "python -m sglang.launch_server --admin-api-key\t\\\r\n\ts3cretvalue123",
        "python -m sglang.launch_server --api-key\\\ns3cretvalue123",
    ],
)
def test_a_secret_flag_continued_on_the_next_line_is_masked(script: str) -> None:
    """A shell script's line continuation between a secret flag and its value (`bash -c` or an image's Cmd written
    as a script, `--api-key \\` then the value on the next line): the mask took the backslash for the value and the
    secret on the next line was printed as it was."""
    from stackcheck import redact as _redact

    assert "s3cretvalue123" not in _redact.redact_text(script)
    assert "s3cretvalue123" not in str(_redact.redact_argv(["bash", "-c", script]))
    assert "s3cretvalue123" not in str(_redact.public_document({"command": ["bash", "-c", script], "x": [script]}))


@pytest.mark.parametrize(
    "text",
    ["tokenizer loaded; TOKEN abcdefgh12", "basically: basic dXNlcjpwYXNzd29yZA==", "bearers, then bearer abc123"],
)
def test_a_scheme_after_the_same_word_elsewhere_is_masked_in_a_document(text: str) -> None:
    """public_document (masked_texts) passed a text to redact_text where the first `token`, `basic` or `bearer` in
    it was followed by a space: a later one that is a credential's scheme was printed as it was, though redact_text
    masks it (irel4's scheme in any case beside iperf13's one search per mark)."""
    from stackcheck import redact as _redact

    assert _redact.redact_text(text) != text
    assert _redact.public_document({"x": [text]}) == {"x": [_redact.redact_text(text)]}


# ---- credentials without a scheme ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("LMCACHE_MP_HOST=alice:hunter2pass@cachehost:6555", "LMCACHE_MP_HOST=***@cachehost:6555"),
        ("connecting to bob:s3cr3t@redis.internal failed", "connecting to ***@redis.internal failed"),
        ('{"master": "carol:pw-99@10.0.0.5:50051"}', '{"master": "***@10.0.0.5:50051"}'),
    ],
)
def test_user_and_password_without_a_scheme_are_masked_in_text(text: str, masked: str) -> None:
    assert redact_text(text) == masked


@pytest.mark.parametrize(
    "text",
    [
        "lmsysorg/sglang:v0.5.9-cu130@sha256:0123abcd",  # an image pinned by digest
        "sglang:latest@sha256:0123abcd",
        "git@github.com:sgl-project/sglang.git",  # no password before the '@'
        "http://host:8080/a@b",
        "user@host",
    ],
)
def test_digests_and_plain_addresses_are_kept(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        # irev70: a password holding ':', '/' or '@' (a Redis password, a base64 token) was printed whole, or its tail
        # taken for the host (fails before: each is unchanged or '***@ssword42@db:6379')
        ("LMCACHE_MP_HOST=alice:pa:ss@cache:6555", "LMCACHE_MP_HOST=***@cache:6555"),
        ("redis bob:ab/cd+e=@redis.internal refused", "redis ***@redis.internal refused"),
        ("dave:p@ssword42@db:6379", "***@db:6379"),
        ('{"master": "carol:x:y/z@10.0.0.5:50051"}', '{"master": "***@10.0.0.5:50051"}'),
    ],
)
def test_a_password_with_a_colon_slash_or_at_sign_is_masked_without_a_scheme(text: str, masked: str) -> None:
    assert redact_text(text) == masked
    assert redact_text(masked) == masked


def test_the_schemeless_reading_is_linear_on_a_long_line() -> None:
    import time

    for line in ("a:b," * 16000 + " @", "=a:b" * 16000 + "@", "x:" + "a/" * 30000 + "@", "a:" * 32000 + " a@b"):
        started = time.perf_counter()
        redact_text(line)
        assert time.perf_counter() - started < 2.0
