"""bench/ab_run.sh (ab_run, the run both trees' rows share in bench/iperf15_h200.sh, iperf21_h200.sh and
iperf25_ab.sh) and bench/ab_outputs.py's --timing (iperf15's own set of fields aside), on two stand-in trees whose
`stackcheck` package is a few lines written here."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
MAIN = """import json, os, sys
count = os.path.join(os.environ["STACKCHECK_CACHE_DIR"], "runs")
os.makedirs(os.environ["STACKCHECK_CACHE_DIR"], exist_ok=True)
n = int(open(count).read()) + 1 if os.path.exists(count) else 1
open(count, "w").write(str(n))
print(json.dumps({"run": n, "cwd": os.getcwd(), "args": sys.argv[1:], "extra": os.environ.get("AB_EXTRA")}))
print("err", n, file=sys.stderr)
sys.exit(int(os.environ.get("AB_EXIT", "0")) + n)
"""


def _tree(path: Path) -> Path:
    (path / "stackcheck").mkdir(parents=True)
    (path / "stackcheck" / "__init__.py").write_text("")
    (path / "stackcheck" / "__main__.py").write_text(MAIN)
    return path


def _sh(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    sh = shutil.which("sh")
    if sh is None:
        pytest.skip("no sh")
    script = f"A={tmp_path / 'a'}\nB={tmp_path / 'b'}\npy={sys.executable}\n. {ROOT / 'bench' / 'ab_run.sh'}\n{body}"
    return subprocess.run([sh, "-c", script], capture_output=True, text=True, timeout=60, check=False)


def test_ab_run_runs_times_in_the_tree_and_keeps_the_last(tmp_path: Path) -> None:
    a, _ = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    out, err, cache = tmp_path / "o.json", tmp_path / "o.err", tmp_path / "cache-A"
    proc = _sh(tmp_path, f'ab_run A 2 {out} {err} {cache} AB_EXTRA=x AB_EXIT=3 -- -m stackcheck audit --format json\n'
                         'echo "rc=$?"')  # fmt: skip
    assert proc.stdout.strip() == "rc=5", proc  # (the second run's status: 3 + 2)
    doc = json.loads(out.read_text())
    assert doc == {"run": 2, "cwd": str(a), "args": ["audit", "--format", "json"], "extra": "x"}
    assert err.read_text().strip() == "err 2" and (cache / "runs").read_text() == "2"
    # tree B, once, no NAME=VALUE; the status of a run that exits 0 (AB_EXIT unset: 0 + 1 is 1)
    proc = _sh(tmp_path, f"ab_run B 1 {out} /dev/null {tmp_path / 'cache-B'} -- -m stackcheck gate\necho rc=$?")
    assert proc.stdout.strip() == "rc=1" and json.loads(out.read_text())["cwd"] == str(tmp_path / "b"), proc


def test_ab_outputs_timing_sets_aside_only_the_fields_named(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"facts": {"collected_at": "1", "duration_ms": 3}, "x": "/ta/y"}))
    b.write_text(json.dumps({"facts": {"collected_at": "2", "duration_ms": 4}, "x": "/tb/y"}))
    tool = str(ROOT / "bench" / "ab_outputs.py")
    plain = subprocess.run([sys.executable, tool, str(a), str(b), "/ta", "/tb", "r"], capture_output=True, text=True)
    assert plain.stdout.strip() == "output A == B (r): True", plain
    timing = ["--timing", "duration_ms,generated_at,elapsed_ms,ms"]
    own = subprocess.run([sys.executable, tool, *timing, str(a), str(b), "/ta", "/tb", "r"], capture_output=True,
                         text=True)  # fmt: skip
    assert own.stdout.strip() == "output A == B (r): False ['facts']", own
