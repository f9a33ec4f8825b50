"""imend12: an extra config the HiCache cache raises on at startup got one verdict as text or as @FILE (irev79), but
two wordings: read_extra_file's ("parses '/cfg/x.json' before it builds ... and raises at startup: ...") and
_any_backend_text's ("parses ... as JSON and pops its prefetch keys ...; the text is not JSON: ..."), the not-JSON
case a third way. One builder (package_checks._parse_raises) words both now: the same observation and message but for
where the content was given."""

from __future__ import annotations

import json
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.verdicts.package_checks import check_storage_config

FLAG = "--hicache-storage-backend-extra-config"
STORE = {"master_server_address": "10.0.0.1:50051"}
VALUES: list[Any] = [[], "x", None, {**STORE, "prefetch_threshold": "256"}]
BAD = [json.dumps(v) for v in VALUES] + ["{not json", "[1"]


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _file_reader(text: str) -> Any:
    def reader(_path: str) -> tuple[str, Any]:
        try:
            return "read", json.loads(text)
        except ValueError:
            return "missing", "not JSON"

    return reader


@pytest.mark.parametrize("backend", ["mooncake", "hf3fs"])
@pytest.mark.parametrize("text", BAD)
def test_text_and_file_are_worded_alike(backend: str, text: str, data: Any) -> None:
    inline = check_storage_config(backend, text, {}, data, "0.5.23", lambda p: ("unread", "not here"))
    at_file = check_storage_config(backend, "@/cfg/x.json", {}, data, "0.5.23", _file_reader(text))
    assert inline is not None and at_file is not None and inline.status == at_file.status == "fail"
    # fails before: the two messages said it in two ways ("; the text ..." against "and raises at startup: ...")
    assert inline.observed.replace(f"{FLAG} text", "WHERE") == at_file.observed.replace(
        f"{FLAG} '@/cfg/x.json'", "WHERE"
    )
    said = inline.message.replace("the text", "WHERE").replace("json.loads", "json.load")
    assert said == at_file.message.replace("'/cfg/x.json'", "WHERE")
    if text.startswith(("{not", "[1")):  # (the parse's own error, named for each reader)
        assert "json.loads raises JSONDecodeError" in inline.message and "json.load raises" in at_file.message
