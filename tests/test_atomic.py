"""Every file stackcheck writes goes through a temporary file and a rename: a reader never sees half of it,
and a failed write leaves the old file in place."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.atomic import write_atomic
from stackcheck.errors import OutputError

FACTS = str(Path(__file__).parent / "cases" / "writeup-after" / "facts.json")


def test_replaces_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "out.prom"
    target.write_text("old\n")
    write_atomic(target, "new\n" * 1000)
    assert target.read_text() == "new\n" * 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.prom"]


def test_failed_rename_keeps_old_file_and_removes_temporary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "out.json"
    target.write_text("old")

    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OutputError) as err:
        write_atomic(target, "new")
    assert "No space left on device" in err.value.message
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_unwritable_directory_is_exit_2_and_old_file_kept(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "stackcheck",
            "audit",
            "--facts",
            FACTS,
            "--format",
            "prometheus",
            "--output",
            str(not_a_dir / "stackcheck.prom"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "cannot write" in proc.stderr and "Traceback" not in proc.stderr
    assert not_a_dir.read_text() == "x"


@pytest.mark.parametrize("fmt", ["json", "prometheus", "nfd", "markdown", "text"])
def test_every_format_is_written_atomically(tmp_path: Path, fmt: str) -> None:
    target = tmp_path / f"out.{fmt}"
    target.write_text("old")
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", "audit", "--facts", FACTS, "--format", fmt, "--output", str(target)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert target.read_text() != "old" and target.read_text().strip()
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]


def test_oversized_facts_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as fh:  # sparse: 1 GiB on paper, no disk blocks
        fh.truncate(2**30)
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", "audit", "--facts", str(big)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and "larger than" in proc.stderr


def test_symlink_is_followed_and_mode_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.prom"
    real.write_text("old")
    real.chmod(0o600)
    link = tmp_path / "link.prom"
    link.symlink_to(real)
    write_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    assert (real.stat().st_mode & 0o777) == 0o600


def test_devices_are_written_in_place_not_replaced() -> None:
    write_atomic("/dev/null", "discarded")
    assert Path("/dev/null").is_char_device()
