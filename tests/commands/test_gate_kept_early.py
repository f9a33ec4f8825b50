"""A gate served from its kept decision (stackcheck.assembly.gate_cache) is found before the launch is read again
(stackcheck.commands.gate._kept): a hit parses no launch, feature or check table and imports no gate module nor
the preflight's checks (only its host readers, for the replay); a miss with an entry present decides as a gate
without one does, from the same facts and with one GPU usage reader."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1"]

CHILD = (
    "import sys\n"
    "from stackcheck.knowledge import loader\n"
    "parsed = []\n"
    "doc = loader.Manifests.doc\n"
    "def spy(self, name):\n"
    "    if name in self._unparsed:\n"
    "        parsed.append(name)\n"
    "    return doc(self, name)\n"
    "loader.Manifests.doc = spy\n"
    "from stackcheck.cli import main\n"
    "rc = main(sys.argv[1:])\n"
    "heavy = ('stackcheck.launch.gate', 'stackcheck.verdicts.engine', 'hashlib', 'stackcheck.launch.preflight.model',\n"
    "         'stackcheck.launch.preflight.gpus', 'stackcheck.launch.preflight.memory')\n"
    "mods = [m for m in heavy if m in sys.modules]\n"
    "print(rc, sorted(mods), sorted(parsed), file=sys.stderr)\n"
)


def test_a_live_hit_reads_no_launch_table_and_no_gate_module(tmp_path: Path) -> None:
    # (fails on the parent, a0d01cf: its hit derived the launch again, with launch.json, features.json and
    # checks.json parsed and stackcheck.launch.gate imported, and the python probe's cached answer was looked up
    # under a SHA-256 key, which imports hashlib and with it OpenSSL)
    env = {**os.environ, "STACKCHECK_PLAN_CACHE": "1", "STACKCHECK_CACHE_DIR": str(tmp_path / "c")}
    env["PYTHONPATH"] = str(ROOT)
    # the audited interpreter named (a compiled program: its answer is cached, as /usr/bin/python3's on a GPU box)
    argv = ["gate", "--dry-run", "--python", sys.executable, "--", *LAUNCH]
    runs = [subprocess.run([sys.executable, "-c", CHILD, *argv], capture_output=True, text=True, env=env, cwd=ROOT,
                           timeout=300) for _ in range(3)]  # fmt: skip
    assert runs[0].stdout and runs[0].stdout == runs[1].stdout == runs[2].stdout
    first, hit = runs[0].stderr.splitlines()[-1], runs[2].stderr.splitlines()[-1]
    assert "launch.json" in first and "stackcheck.launch.gate" in first  # (the first run decides)
    rc, rest = hit.split(" ", 1)
    assert rc == runs[0].stderr.splitlines()[-1].split(" ", 1)[0]
    assert rest.startswith("[] "), hit  # no gate module, no engine, no hashlib, no preflight check module
    parsed = rest[3:]
    for table in ("launch.json", "features.json", "checks.json", "preflight.json"):
        assert table not in parsed, hit


def test_a_miss_with_an_entry_decides_as_a_fresh_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # (a guard: passes on the parent too) the facts change between runs: the entry is found, its facts differ,
    # and the decision is made from this run's facts, with one GPU usage reader started per run
    from stackcheck.assembly import pipeline
    from stackcheck.commands import gate as gate_command
    from stackcheck.launch import gate_preflight, usage

    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "c"))
    gather = pipeline.gather
    tweak: list[Any] = []

    def probed(opts: Any, manifests: Any = None) -> Any:
        facts, outcomes, host = gather(opts, manifests)
        for t in tweak:
            t(facts)
        return facts, outcomes, host

    class Usage:
        def get(self) -> Any:
            from stackcheck.probes.gpu_usage import GpuUsage, UsageReading

            return UsageReading([GpuUsage(0, "H200", 150 << 30, 149 << 30, 1 << 30, 0)], None, 1.0)

    started: list[Any] = []

    def start_usage(facts_file: Any, command: Any) -> Any:
        started.append(command)
        return Usage() if command else None

    served: list[int] = []
    serve = gate_command.Kept.serve

    def spy(kept: Any, command: Any) -> int:
        served.append(1)
        return serve(kept, command)

    monkeypatch.setattr(gate_command.Kept, "serve", spy)
    monkeypatch.setattr(pipeline, "gather", probed)
    monkeypatch.setattr(gate_preflight, "start_usage", start_usage)
    monkeypatch.setattr(usage, "start_usage", start_usage)  # (a hit's replay starts it from launch.usage)

    def run() -> tuple[int, str, str]:
        started.clear()
        code = main(["gate", "--dry-run", "--", *LAUNCH])
        out = capsys.readouterr()
        return code, out.out, out.err

    first = run()
    assert run() == first and served == [1] and len(started) == 1  # a hit: the usage replayed, nothing decided
    tweak.append(lambda facts: facts.setdefault("system", {}).update(hostname_changed_for_the_test=True))
    missed = run()
    assert served == [1] and len(started) == 1 and started[0]  # a miss: one reader, the one _kept started
    with monkeypatch.context() as m:
        m.setenv("STACKCHECK_PLAN_CACHE", "0")
        assert run() == missed  # what a gate without the cache prints from the same facts
    assert run() == missed and served == [1, 1]  # the miss kept its decision: served next time


def test_the_probe_runner_imports_no_queue_module(tmp_path: Path) -> None:
    # (fails on the parent, a0d01cf) the runner waits on _queue.SimpleQueue, the C queue: `queue` imports heapq
    # and its pure-Python classes at every live audit and gate
    code = "import sys\nfrom stackcheck.cli import main\nmain(sys.argv[1:])\n"
    code += "print(sorted(m for m in ('queue', 'heapq') if m in sys.modules), file=sys.stderr)\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STACKCHECK_CACHE_DIR": str(tmp_path / "c")}
    argv = ["audit", "--root", str(tmp_path), "--format", "json"]
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, timeout=300)
    assert proc.stdout.startswith("{")
    assert proc.stderr.splitlines()[-1] == "[]"


def test_the_registry_stamp_imports_no_hashlib(tmp_path: Path) -> None:
    # (fails on the parent, a0d01cf) a kept gate of a box with SGLang replays its model-registry read, whose cache
    # stamp is a BLAKE2b digest: taken from _blake2, not hashlib (OpenSSL's start-up); the same digest hashlib's
    # blake2b gives over the same stamp (a guard)
    import hashlib

    (tmp_path / "a.py").write_text("x = 1\n")
    code = (
        "import sys\nfrom stackcheck.readers.entryclasses import _stamp\n"
        f"print(_stamp({str(tmp_path)!r}))\nprint('hashlib' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60).stdout
    stamp, imported = out.split()
    assert imported == "False"
    from stackcheck.readers.entryclasses import FORMAT, _stamp

    assert stamp == _stamp(str(tmp_path))
    st = (tmp_path / "a.py").stat()
    h = hashlib.blake2b(digest_size=20)
    h.update(f"{FORMAT}\0{tmp_path}\0".encode())
    fields = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)  # (irev40: ctime, inode, device)
    h.update(f"a.py\0{' '.join(map(str, fields))}\n".encode())
    assert stamp == h.hexdigest()
