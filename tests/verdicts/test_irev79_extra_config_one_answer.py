"""irev79: one content, one answer, whether --hicache-storage-backend-extra-config gives it as text or as @FILE, and
for Mooncake (its storage_configs entry) as for any other backend. SGLang 0.5.9-0.5.23's HiCache cache reads the
text with json.loads (or the @FILE by its extension), then pops its prefetch keys and raises on a value of another
type before it builds whichever backend (0.5.9 hiradix_cache.py :512-568, 0.5.23
hybrid_cache/hybrid_cache_controller.py :385-430; read in the wheels). Before, Mooncake's inline text was read by the
entry's own reader alone: a store address beside a prefetch_threshold string was ok (a false pass: ValueError at
startup), text that is no JSON object unknown, where @FILE and every other backend's text failed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.verdicts.package_checks import check_storage_config

STORE = {"master_server_address": "10.0.0.1:50051"}
BAD: list[Any] = [[], [STORE], "x", 3, None, {**STORE, "prefetch_threshold": "256"},
                  {**STORE, "prefetch_timeout_base": None},
                  {**STORE, "hicache_storage_pass_prefix_keys": 1}]  # fmt: skip


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _inline(backend: str, text: str, data: Any, release: str = "0.5.23") -> str | None:
    got = check_storage_config(backend, text, {}, data, release, lambda p: ("unread", "not here"))
    return None if got is None else got.status


def _at_file(backend: str, text: str, data: Any, release: str = "0.5.23") -> str | None:
    def reader(_path: str) -> tuple[str, Any]:
        try:
            return "read", json.loads(text)
        except ValueError:
            return "missing", "not JSON"

    got = check_storage_config(backend, "@/cfg/x.json", {}, data, release, reader)
    return None if got is None else got.status


@pytest.mark.parametrize("release", ["0.5.9", "0.5.23"])
@pytest.mark.parametrize("backend", ["mooncake", "hf3fs"])
@pytest.mark.parametrize("text", [json.dumps(v) for v in BAD] + ["{not json", "[1"])
def test_text_the_cache_raises_on_fails_inline_and_as_a_file(backend: str, text: str, release: str, data: Any) -> None:
    assert _at_file(backend, text, data, release) == "fail"
    assert _inline(backend, text, data, release) == "fail"


def test_a_good_store_config_is_the_same_answer_both_ways(data: Any) -> None:
    good = json.dumps({**STORE, "prefetch_threshold": 64})
    assert _inline("mooncake", good, data) == _at_file("mooncake", good, data) == "ok"
    assert _inline("hf3fs", good, data) is None and _at_file("hf3fs", good, data) is None


def test_outside_the_read_releases_mooncake_text_is_judged_as_before(data: Any) -> None:
    assert _inline("mooncake", json.dumps({**STORE, "prefetch_threshold": "256"}), data, "0.5.8") == "ok"
    assert _inline("mooncake", "[1]", data, "0.5.8") == "unknown"
