"""irobust6: SGLang's SGL_ copy (launch/sgl_prefix.py) per release, at its edges. The release candidate 0.5.3rc2 (on
PyPI) already has sglang/srt/environ.py with the loop copying SGL_X over SGLANG_X (0.5.3rc0 has no environ.py), but the
range `>=0.5.3` leaves a pre-release of 0.5.3 out: on 0.5.3rc2 an SGL_ variable was not read."""

from __future__ import annotations

from stackcheck.facts.sgl_prefix import copies_sgl, sglang_environ


def test_the_release_candidate_that_copies_is_read_as_copying() -> None:
    env = {"SGL_ENABLE_X": "1"}
    # fails before: 0.5.3rc2 read as a release without the copy (SGLANG_ENABLE_X not set)
    assert sglang_environ(env, "0.5.3rc2") == ({**env, "SGLANG_ENABLE_X": "1"}, [])
    assert copies_sgl("0.5.3rc2") is True and copies_sgl("0.5.3rc2+cu130") is True


def test_the_releases_without_the_copy_stay_so() -> None:
    assert copies_sgl("0.5.3rc0") is False and copies_sgl("0.5.2") is False
    assert copies_sgl("0.5.3") is True and copies_sgl("0.5.3.post1") is True
