"""irev78: the two readers of the extra config's @FILE (imend9's for a backend with no storage_configs entry, igap56's
for Mooncake) disagreed on a JSON file whose value the HiCache cache cannot take: a top-level array (or string, number,
null) was no verdict for the first (the gate allowed the launch) and unknown for the second, where every release
0.5.9-0.5.23 calls `extra_config.pop("prefetch_threshold", 256)` on it (a list's pop takes no default: TypeError; the
others have none: AttributeError) and then raises ValueError for a prefetch value of another type (0.5.9
hiradix_cache.py :542-568, 0.5.14 :653-688, 0.5.19 :746-781, 0.5.23 hybrid_cache/hybrid_cache_controller.py :404-430;
read in the wheels). Both fail now, by one reading (package_checks.cache_parse_problem)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.verdicts.package_checks import check_storage_config

STORE = {"master_server_address": "10.0.0.1:50051"}


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _status(backend: str, value: Any, data: Any, release: str = "0.5.23") -> str | None:
    got = check_storage_config(backend, "@/cfg/x.json", {}, data, release, lambda p: ("read", value))
    return None if got is None else got.status


BAD = [[], [STORE], "x", 3, None, True, {**STORE, "prefetch_threshold": "256"}, {**STORE, "prefetch_threshold": 2.5},
       {**STORE, "prefetch_timeout_base": None}, {**STORE, "prefetch_timeout_per_ki_token": "1"},
       {**STORE, "hicache_storage_pass_prefix_keys": 1}]  # fmt: skip


@pytest.mark.parametrize("backend", ["mooncake", "hf3fs", "file", "lmcache"])
@pytest.mark.parametrize("value", BAD, ids=[repr(v)[:40] for v in BAD])
def test_a_value_the_cache_raises_on_fails_for_every_backend(backend: str, value: Any, data: Any) -> None:
    assert _status(backend, value, data) == "fail"
    assert _status(backend, value, data, "0.5.9") == "fail"


@pytest.mark.parametrize("backend", ["mooncake", "hf3fs"])
def test_values_of_their_types_are_judged_as_before(backend: str, data: Any) -> None:
    good = {**STORE, "prefetch_threshold": True, "prefetch_timeout_base": 2, "prefetch_timeout_per_ki_token": 0.5,
            "hicache_storage_pass_prefix_keys": False}  # fmt: skip
    from stackcheck.verdicts.package_checks import cache_parse_problem

    assert cache_parse_problem(good) is None
    assert _status(backend, good, data) == ("ok" if backend == "mooncake" else None)
    assert _status(backend, good, data, "0.5.8") == ("unknown" if backend == "mooncake" else None)  # (no @FILE)
