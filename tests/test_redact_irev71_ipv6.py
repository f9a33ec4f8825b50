"""irev71 (review of 4e0c101c / 1ac7598e / irev70's credentials without a scheme): a `user:password@host` whose host
is a bracketed IPv6 literal (`alice:pw@[::1]:6555`, as LMCACHE_MP_HOST or a Redis / Mooncake address may be written)
was printed whole by redact_text and so by public_document, which every output goes through: the host reader took
only a name or IPv4 address after the '@'. The URL form (`redis://alice:pw@[::1]:6379`) was masked already."""

from __future__ import annotations

import pytest

from stackcheck.redact import public_document, redact_text


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("LMCACHE_MP_HOST=alice:s3cret@[::1]:6555", "LMCACHE_MP_HOST=***@[::1]:6555"),
        ("master bob:pa:ss@[fd00::5]:50051 refused", "master ***@[fd00::5]:50051 refused"),
        ("carol:x/y@[fe80::1%eth0]", "***@[fe80::1%eth0]"),
    ],
)
def test_a_password_before_an_ipv6_host_is_masked(text: str, masked: str) -> None:
    # fails before irev71's fix: each text unchanged
    assert redact_text(text) == masked
    assert public_document({"reason": text, "argv": [text]}) == {"reason": masked, "argv": [masked]}
    assert redact_text(masked) == masked


@pytest.mark.parametrize("text", ["[::1]:6555", "user@[::1]", "a:b@[not-a-host]", "ns:tag@[]"])
def test_what_is_no_credential_before_a_bracket_is_kept(text: str) -> None:
    assert redact_text(text) == text
