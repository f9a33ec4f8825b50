"""irunner3: `ionice` values the kernel refuses. util-linux ionice sets the class and level with ioprio_set before it
execvp's its command and exits 1 ("ioprio_set failed") where the kernel refuses them, unless -t. A Linux kernel before
6.5 refuses a realtime / best-effort level outside 0-7 (EINVAL), 6.5 and later take 8-15 as a level with a hint; every
kernel refuses a class past 3; the realtime class needs CAP_SYS_NICE or CAP_SYS_ADMIN, which the facts do not hold.
The gate allowed all of them (a false pass): now blocked where facts.system.kernel says so, unknown where it is not read
or the user is not known. ionice's own `-c +2` / `-c -1` (no digit first: an unknown class name, exit 1) are unknown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, cli_json

from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "/m"]


def _gate(tmp_path: Path, kernel: str | None, prefix: list[str]) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "facts.json"
    doc = json.loads(H200_NEWEST.read_text())
    doc["facts"].setdefault("system", {})["kernel"] = kernel
    path.write_text(json.dumps(doc))
    return cli_json(["gate", "--facts", str(path), "--format", "json", "--", *prefix, *LAUNCH])


def _ionice(doc: dict[str, Any]) -> list[str]:
    return [r["status"] for r in doc["reasons"] + doc["warnings"] if r["feature"] == "ionice"]


@pytest.mark.parametrize(
    "prefix",
    [
        ["ionice", "-c2", "-n8"],
        ["ionice", "-n", "8"],
        ["ionice", "--classdata=9"],
        # (a negative level and a class above 3, refused by every kernel, are read_runner's unknown since irobust13 /
        # irev82: tests/launch/test_irobust13_ionice_ranges.py, test_irev82_ionice_class_level.py)
    ],
)
def test_a_level_a_kernel_before_6_5_refuses_is_blocked(tmp_path: Path, prefix: list[str]) -> None:
    rc, doc = _gate(tmp_path, "5.15.0-91-generic", prefix)
    assert rc == 1 and _ionice(doc) == ["blocked"], doc["reasons"]
    reason = next(r for r in doc["reasons"] if r["feature"] == "ionice")
    assert "ioprio_set" in reason["reasons"][0]["message"]  # (fails before: allowed)


def test_level_8_on_6_5_and_later_is_a_note_and_unknown_without_the_kernel(tmp_path: Path) -> None:
    _, doc = _gate(tmp_path, "6.8.0-45-generic", ["ionice", "-c2", "-n8"])
    assert _ionice(doc) == ["note"], doc["reasons"]
    _, doc = _gate(tmp_path, "6.8.0-45-generic", ["ionice", "-n", "99"])
    assert _ionice(doc) == ["unknown"]
    _, doc = _gate(tmp_path, None, ["ionice", "-c2", "-n8"])
    assert _ionice(doc) == ["unknown"]


@pytest.mark.parametrize(
    "prefix", [["ionice", "-c1"], ["ionice", "-c", "1", "-n", "0"], ["ionice", "--class=realtime"]]
)
def test_the_realtime_class_is_unknown_without_the_user(tmp_path: Path, prefix: list[str]) -> None:
    _, doc = _gate(tmp_path, "6.8.0-45-generic", prefix)
    assert _ionice(doc) == ["unknown"], doc["reasons"]


@pytest.mark.parametrize(
    "prefix",
    [["ionice", "-c2", "-n7"], ["ionice", "-c3", "-n8"], ["ionice", "-c", "0", "-n", "9"],
     ["ionice", "-t", "-c2", "-n8"], ["ionice", "-tc1"], ["ionice"], ["ionice", "-n0"]],
)  # fmt: skip
def test_what_the_kernel_takes_or_ionice_ignores_is_no_problem(tmp_path: Path, prefix: list[str]) -> None:
    _, doc = _gate(tmp_path, "5.15.0", prefix)
    assert _ionice(doc) == [], doc["reasons"]


def test_a_class_with_a_sign_is_an_unknown_name(tmp_path: Path) -> None:
    from stackcheck.knowledge.loader import load

    mapping = load([], env={}).launch
    for cls in ("+2", "-1"):
        d = gate.derive(["ionice", "-c", cls, *LAUNCH], mapping, {})
        assert ("ionice", "unknown") in [(p.subject, p.status) for p in d.problems], cls  # (fails before: judged)


def test_read_ionice() -> None:
    from stackcheck.launch.runners import read_ionice

    assert read_ionice(["ionice", "-c", "idle", "-n", "2", "x"], 0) == (3, 7, False)
    assert read_ionice(["ionice", "-tn9", "x"], 0) == (2, 9, True)
    assert read_ionice(["ionice", "-p", "1"], 0) is None
