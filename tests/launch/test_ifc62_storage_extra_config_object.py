"""ifc62 (the sixty-second sample, population f): SGLang 0.5.9-0.5.23 parse --hicache-storage-backend-extra-config
(@FILE or JSON text) and at once pop its prefetch keys (`extra_config.pop("prefetch_threshold", 256)`: 0.5.9
hiradix_cache.py:542, 0.5.13 :653, 0.5.23 hybrid_cache/hybrid_cache_controller.py:404) before any backend is built.
A file holding a JSON array (or null, a number, a string) raises TypeError / AttributeError there, and text that is not
JSON raises in json.loads; imend9's reading passed any .json file that parsed, and JSON text for a backend without a
storage_configs entry was not judged."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.verdicts.package_checks import check_storage_config


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _status(text: str, parsed: Any, data: Any, release: str = "0.5.23", backend: str = "file",
            offload: bool = False) -> str | None:  # fmt: skip
    got = check_storage_config(backend, text, {}, data, release, lambda p: ("read", parsed), not offload)
    return None if got is None else got.status


@pytest.mark.parametrize("parsed", [[1, 2], None, 3, "x", True])
@pytest.mark.parametrize("backend", ["file", "hf3fs", "nixl", "eic"])
def test_a_file_whose_json_is_no_object_fails(parsed: Any, backend: str, data: Any) -> None:
    assert _status("@/cfg/x.json", parsed, data, backend=backend) == "fail"
    assert _status("@/cfg/x.json", parsed, data, "0.5.9", backend=backend) == "fail"


@pytest.mark.parametrize("text", ["[1, 2]", "null", "7", "not json", "{nope"])
def test_text_that_is_no_json_object_fails(text: str, data: Any) -> None:
    assert _status(text, None, data) == "fail"
    assert _status(text, None, data, "0.5.13", backend="aibrix") == "fail"


def test_objects_and_other_releases_are_as_before(data: Any) -> None:
    assert _status("@/cfg/x.json", {"prefetch_threshold": 256}, data) is None
    assert _status('{"a": 1}', None, data) is None
    assert _status("[1]", None, data, "0.5.8") is None  # (before 0.5.9: not read)
    assert _status("[1]", None, data, offload=True) is None  # (a PD decode offload: not this parse)
    assert _status("@/cfg/x.json", [1], data, backend="mooncake") == "fail"  # (its own entry: irev78's one reading)
