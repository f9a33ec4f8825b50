"""imend18: one integrity mark (readers.kept._mark, its salt a parameter) for kept answers and the plan cache's upstream
documents (plan_cache._marked_doc was its twin, salted b"upstream"). The format is pinned here from its definition
(BLAKE2b-256 of SALT, a newline and the body, in hex, as `{"mark":"HEX",` before the body's opening brace), so that a
file written before the merge still reads; an edited, cut or other-kind document is refused."""

from __future__ import annotations

import hashlib
import json

import pytest

from stackcheck.assembly import plan_cache
from stackcheck.readers import kept

BODY = json.dumps({"format": 1, "key": "k", "upstream": {"a": "b"}}, separators=(",", ":"))


def _written_before(salt: bytes, body: bytes) -> bytes:
    mark = hashlib.blake2b(salt + b"\n" + body, digest_size=32).hexdigest().encode()
    return b'{"mark":"' + mark + b'",' + body[1:]


@pytest.mark.parametrize(("salt", "write", "read"), [(b"kept", kept._marked, kept._unmarked),
                                                     (b"upstream", None, plan_cache._unmarked_doc)])  # fmt: skip
def test_a_document_written_before_still_reads(salt: bytes, write: object, read: object) -> None:
    old = _written_before(salt, BODY.encode())
    assert read(old) == BODY.encode()  # type: ignore[operator]
    new = plan_cache._marked_doc(BODY) if write is None else kept._marked(BODY.encode())
    assert new == old


def test_an_edited_cut_or_other_kind_document_is_refused() -> None:
    doc = plan_cache._marked_doc(BODY)
    assert plan_cache._unmarked_doc(doc.replace(b'"b"', b'"c"')) is None
    assert plan_cache._unmarked_doc(doc[:-2]) is None
    assert kept._unmarked(doc) is None and plan_cache._unmarked_doc(kept._marked(BODY.encode())) is None
    assert kept._unmarked(kept._marked(BODY.encode(), b"upstream")) is None


def test_the_plan_cache_keeps_no_mark_of_its_own() -> None:
    assert not hasattr(plan_cache, "_doc_mark")  # (failed before: the twin)
