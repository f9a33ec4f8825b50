"""The caches' code stamp is the code that runs: two copies of stackcheck that judge differently (an installed copy of
one commit, another commit's tree on PYTHONPATH, say), used in turn with one cache directory, never serve each other
a plan, kept verdicts, a plan answer or a gate decision: plan_cache._code_stamp reads the files of the `stackcheck`
package that was imported, whichever copy that is. Each copy here is the tree's package copied to a directory of its
own, the data files shared (hard links: the same stamps), so only the code tells their keys apart; the second copy's
engine marks every feature's title, reasons and missing effect, so an answer it printed from the other's entry
shows. (Taking the stamp from no source file at all fails the audit, plan and plan answer rows; the gate's key also
holds sys.path.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
WRITEUP = str(ROOT / "tests" / "cases" / "writeup-after" / "facts.json")
H200 = str(ROOT / "tests" / "cases" / "h200-newest" / "facts.json")
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "M", "--tp", "2"]
#: appended to the second copy's verdicts/engine.py: every feature verdict's title, reasons and a missing effect
#: marked (what the audit, the plan, the plan answer and the gate print of a feature)
MARK = """

_unmarked_feature = evaluate_feature


def evaluate_feature(*args, **kwargs):  # type: ignore[no-redef]  # (a test's copy: tests/assembly)
    out = _unmarked_feature(*args, **kwargs)
    out["title"] = "[B] " + str(out.get("title"))
    if out.get("effect") is None:  # (the gate's list of the features it checked shows each one's effect)
        out["effect"] = "[B]"
    out["reasons"] = [{**r, "message": "[B] " + str(r.get("message"))} for r in out.get("reasons") or []]
    return out
"""
COMMANDS = {
    "audit": ["audit", "--facts", WRITEUP, "--format", "json"],
    "plan": ["plan", "--facts", WRITEUP, "--format", "json"],
    "plan answer": ["plan", "--facts", WRITEUP],
    "gate": ["gate", "--dry-run", "--facts", H200, "--format", "json", "--", *LAUNCH],
}


def _copy(tmp: Path, name: str, marked: bool) -> Path:
    """The tree's package copied to tmp/NAME; its data (the manifests, the schemas) hard links of tmp/data's files,
    which every copy shares: the same stamps (size, times, inode, device) in every copy, so that only the code tells
    the copies' keys apart, as where two copies read one --manifests directory."""
    where = tmp / name
    data = tmp / "data"
    if not data.exists():
        for part in ("manifests", "schemas"):
            shutil.copytree(ROOT / "stackcheck" / part, data / part, ignore=shutil.ignore_patterns("__pycache__"))
    skip = shutil.ignore_patterns("__pycache__", "manifests", "schemas")
    shutil.copytree(ROOT / "stackcheck", where / "stackcheck", ignore=skip)
    for part in ("manifests", "schemas"):
        shutil.copytree(data / part, where / "stackcheck" / part, copy_function=os.link)
    if marked:
        with open(where / "stackcheck" / "verdicts" / "engine.py", "a", encoding="utf-8") as fh:
            fh.write(MARK)
    return where


def _run(tree: Path, cache: Path | None, argv: list[str]) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    if cache is None:
        env["STACKCHECK_PLAN_CACHE"] = "0"
    else:
        env.update(STACKCHECK_PLAN_CACHE="1", STACKCHECK_CACHE_DIR=str(cache))
    done = subprocess.run(
        [sys.executable, "-m", "stackcheck", *argv], capture_output=True, text=True, env=env, cwd=tree, timeout=120
    )
    assert not done.stderr.strip() or "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("copies")
    return _copy(tmp, "a", marked=False), _copy(tmp, "b", marked=True)


@pytest.mark.slow
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_two_copies_of_stackcheck_never_serve_each_other(
    tmp_path: Path, copies: tuple[Path, Path], command: str
) -> None:
    argv = COMMANDS[command]
    a, b = copies
    fresh = {name: _run(tree, None, argv) for name, tree in (("a", a), ("b", b))}
    assert fresh["a"][0] in (0, 1) and fresh["a"] != fresh["b"]  # (the copies judge differently: a stale answer shows)
    assert "[B]" in fresh["b"][1] and "[B]" not in fresh["a"][1]
    cache = tmp_path / "cache"
    for first, second in (("a", "b"), ("b", "a")):
        shutil.rmtree(cache, ignore_errors=True)
        trees = {"a": a, "b": b}
        assert _run(trees[first], cache, argv) == fresh[first]  # kept by the first copy
        for _ in range(2):  # the second copy's first run, then its repeat (its own entry, or its answer)
            assert _run(trees[second], cache, argv) == fresh[second]
        assert _run(trees[first], cache, argv) == fresh[first]  # and the first's entry is still its own
