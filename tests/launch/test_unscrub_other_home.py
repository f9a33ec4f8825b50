"""A "~" in facts this process did not probe (a facts file made by another user or on another host) is not
mapped to this user's home directory (issue 21): paths.unscrub_home gives None, and the checks that would read
the box again there are unknown, never a read of /home/<this user>/... for alice's ~/venv."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackcheck import paths
from stackcheck.launch.preflight.architecture import sglang_site

ALICE = {"packages": {"sglang": {"installed": True, "version": "0.5.9", "location": "~/venv/lib/site-packages"}}}


@pytest.fixture
def not_probed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """This process probed nothing (SCRUBBED_HOME empty); this user's home holds a ~/venv of its own."""
    monkeypatch.setattr(paths, "SCRUBBED_HOME", [])
    home = tmp_path / "bob"
    (home / "venv" / "lib" / "site-packages").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return home


def test_a_tilde_path_not_probed_here_is_not_openable(not_probed: Path) -> None:
    assert paths.unscrub_home("~/venv/lib/site-packages") is None
    assert paths.unscrub_home("~") is None
    assert paths.unscrub_home("/opt/venv") == "/opt/venv"  # (a path without "~" is as it was)


def test_sglang_site_of_another_users_facts_is_not_read(not_probed: Path) -> None:
    site, why = sglang_site(ALICE)
    assert site is None
    assert why is not None and "under a home directory this run did not probe" in why


def test_the_home_this_process_scrubbed_is_mapped_back(not_probed: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paths, "SCRUBBED_HOME", ["/home/alice"])
    assert paths.unscrub_home("~/venv") == "/home/alice/venv"
    assert sglang_site(ALICE) == ("/home/alice/venv/lib/site-packages", None)
    assert paths.unscrub_home("~/venv", "/srv/x/") == "/srv/x/venv"  # (a home given is used)


def test_the_live_probe_records_the_home_it_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from stackcheck.cli import main

    home = tmp_path / "h"
    home.mkdir()
    monkeypatch.setattr(paths, "SCRUBBED_HOME", [])
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    main(["audit", "--format", "json"])
    capsys.readouterr()
    assert [str(home)] == paths.SCRUBBED_HOME
