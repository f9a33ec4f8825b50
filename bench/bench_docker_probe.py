"""The docker_daemon probe's cost (stackcheck/probes/docker_daemon.py): on this host as it is, on an empty root (no
Docker at all: the budget is well under 1 ms), and on host trees built in a temporary directory with Docker (a
daemon.json as nvidia-ctk writes it, a running dockerd's /proc entries, CDI specs: 2 and 64 of them). Run from a
checkout:

    python3 bench/bench_docker_probe.py [--runs 201] [--budget-ms 1.0]

It prints the median and 90th percentile of each (the first call, which compiles the module's regular expressions,
apart) and exits 1 where the median of the no-Docker root exceeds --budget-ms. Nothing outside the temporary
directory is written.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SPEC = 'cdiVersion: 0.5.0\nkind: "nvidia.com/gpu"\ndevices:\n- name: "{i}"\n  containerEdits: {{}}\n'


def build(root: Path, specs: int) -> None:
    """A host with Docker: daemon.json with runtimes.nvidia, a dockerd process, `specs` CDI spec files."""
    (root / "etc/docker").mkdir(parents=True)
    (root / "etc/docker/daemon.json").write_text(
        json.dumps({"runtimes": {"nvidia": {"path": "nvidia-container-runtime", "args": []}}})
    )
    os.utime(root / "etc/docker/daemon.json", (1_000_000, 1_000_000))
    (root / "usr/bin").mkdir(parents=True)
    (root / "usr/bin/dockerd").write_bytes(b"\x7fELF")
    (root / "var/run").mkdir(parents=True)
    (root / "var/run/docker.pid").write_text("4242\n")
    proc = root / "proc/4242"
    proc.mkdir(parents=True)
    (proc / "cmdline").write_bytes(b"/usr/bin/dockerd\0-H\0fd://\0--containerd=/run/containerd/containerd.sock\0")
    (proc / "stat").write_text("4242 (dockerd) S " + " ".join(["0"] * 18 + ["12345"] + ["0"] * 10) + "\n")
    (root / "proc/stat").write_text("cpu 1 2 3\nbtime 1700000000\n")
    (root / "etc/cdi").mkdir(parents=True)
    for i in range(specs):
        (root / f"etc/cdi/nvidia-{i}.yaml").write_text(SPEC.format(i=i))


def measure(root: str, runs: int) -> tuple[float, float]:
    from stackcheck.probes.docker_daemon import probe_docker_daemon
    from stackcheck.readers.fsview import HostView

    times = []
    for _ in range(runs):
        view = HostView(root)
        start = time.perf_counter()
        probe_docker_daemon(view, {})
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=201)
    parser.add_argument("--budget-ms", type=float, default=1.0)
    args = parser.parse_args()
    from stackcheck.probes.docker_daemon import probe_docker_daemon
    from stackcheck.readers.fsview import HostView

    start = time.perf_counter()
    probe_docker_daemon(HostView("/"), {})
    print(f"first call (regular expressions compiled): {(time.perf_counter() - start) * 1000:.3f} ms")
    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty"
        empty.mkdir()
        rows.append(("no Docker (empty root)", *measure(str(empty), args.runs)))
        rows.append(("this host", *measure("/", args.runs)))
        for specs in (2, 64):
            root = Path(tmp) / f"docker-{specs}"
            build(root, specs)
            rows.append((f"Docker, dockerd running, {specs} CDI specs", *measure(str(root), args.runs)))
    for name, median, p90 in rows:
        print(f"{name:42s} median {median:7.3f} ms  p90 {p90:7.3f} ms")
    if rows[0][1] > args.budget_ms:
        print(f"over budget: no Docker median {rows[0][1]:.3f} ms > {args.budget_ms} ms")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
