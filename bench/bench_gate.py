"""The gate's added latency before exec: process start to exec of /bin/true.

Rows (median and p90 of N runs, wall time of the whole process tree, measured from the parent):
  /bin/true alone;
  python -c pass (the interpreter's own start-up);
  python importing pynvml and initialising NVML (what any GPU check costs at least), if pynvml imports;
  stackcheck gate --facts F -- /bin/true (no SGLang flag: nothing to evaluate);
  stackcheck gate --facts F -- /bin/true --tp 8 --attention-backend flashinfer (an SGLang command line:
  derive, load the manifests and facts, evaluate, decide, exec);
  the same with a refusal (SM120 facts, --enable-torch-symm-mem: evaluation plus the plan).

With --live (on a GPU box), the gate as a launch meets it, probing this box, against the bare-NVML floor of
bench_audit.py (import pynvml, init, driver version, each GPU's capability):
  floor;
  gate --require torch-cuda-arch -- /bin/true (the probes, no preflight: the gate before issue 17);
  gate -- /bin/true --model-path DIR --port P (an SGLang-shaped command: the probes, the GPU-usage reading,
  the model's config.json and weight sizes read from DIR, the port bind, /dev/shm, the dependency check);
and, in this process, what each preflight reading costs (median of -n).

    python bench/bench_gate.py [-n 30] [--facts tests/cases/h200-newest/facts.json] [--live]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from floor import FLOOR, WRAPPER  # bench/floor.py: the NVML floor and the timing wrapper every bench shares

ROOT = Path(__file__).resolve().parent.parent
NVML = "import pynvml; pynvml.nvmlInit(); pynvml.nvmlDeviceGetCount(); pynvml.nvmlShutdown()"


def timed(cmd: list[str], n: int, ok: set[int]) -> tuple[float, float] | str:
    times = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_")}
    for _ in range(n):
        start = time.perf_counter()
        r = subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, env=env)
        times.append((time.perf_counter() - start) * 1000)
        if r.returncode not in ok:
            return f"exit {r.returncode}"
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.9))]


def model_dir(root: Path) -> Path:
    """A model directory shaped like a real one: config.json and four sparse 5 GB safetensors shards."""
    d = root / "model"
    d.mkdir()
    cfg = {
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": 8192,
        "num_hidden_layers": 80,
        "torch_dtype": "bfloat16",
    }
    (d / "config.json").write_text(json.dumps(cfg, indent=2))
    for i in range(4):
        with (d / f"model-0000{i + 1}-of-00004.safetensors").open("wb") as fh:
            fh.truncate(5 * 10**9)
    return d


def wall_and_cpu(argv: list[str], n: int, ok: set[int]) -> tuple[float, float, float] | str:
    walls, cpus = [], []
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_")}
    for i in range(n + 1):
        out = subprocess.run(
            [sys.executable, "-c", WRAPPER, *argv], check=False, capture_output=True, text=True, env=env
        )
        dt, cpu, rc = out.stdout.split()
        if int(rc) not in ok:
            return f"exit {rc}"
        if i:
            walls.append(float(dt) * 1000)
            cpus.append(float(cpu) * 1000)
    walls.sort()
    return statistics.median(walls), walls[min(len(walls) - 1, int(len(walls) * 0.9))], statistics.median(cpus)


def live(n: int) -> None:
    import socket
    import tempfile

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    true = shutil.which("true") or "/bin/true"
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        mdir = model_dir(Path(tmp))
        rows = [
            ("floor: import pynvml, init, driver + capabilities", [py, "-c", FLOOR], {0}),
            ("gate --require torch-cuda-arch -- /bin/true (no preflight)",
             [py, "-P", "-m", "stackcheck", "gate", "--require", "torch-cuda-arch", "--", true], {0, 1}),
            ("gate -- /bin/true --model-path DIR --port P (preflight)",
             [py, "-P", "-m", "stackcheck", "gate", "--", true, "--model-path", str(mdir), "--port", str(port)],
             {0, 1}),
        ]  # fmt: skip
        print(f"{'live (this box)':58} {'median ms':>10} {'p90 ms':>8} {'cpu ms':>8} {'÷floor':>7} {'cpu÷floor':>9}")
        floor: tuple[float, float, float] | None = None
        for name, cmd, ok in rows:
            res = wall_and_cpu(cmd, n, ok)
            if isinstance(res, str):
                print(f"{name:58} {'n/a':>10}   {res}")
                continue
            med, p90, cpu = res
            floor = floor or res
            print(f"{name:58} {med:10.1f} {p90:8.1f} {cpu:8.1f} {med / floor[0]:6.2f}x {cpu / floor[2]:8.2f}x")
        readings(mdir, port, n)


def readings(mdir: Path, port: int, n: int) -> None:
    """Each preflight reading on its own, in this process (after the imports), median of n."""
    sys.path.insert(0, str(ROOT))
    from stackcheck.knowledge.loader import load
    from stackcheck.launch.preflight.deps import check_dependencies
    from stackcheck.launch.preflight.host import port_free, read_memlock, read_shm
    from stackcheck.launch.preflight.model import read_model
    from stackcheck.probes.gpu_usage import read_gpu_usage
    from stackcheck.readers.fsview import HostView

    data = load([]).preflight
    view = HostView()
    steps = {
        "GPU usage (NVML init, memory, processes, compute mode)": read_gpu_usage,
        "model: config.json + weight sizes": lambda: read_model(
            view, str(mdir), "model", {}, {}, data, str(mdir.parent), str(Path.home())
        ),
        "dependencies (sys.path listing; METADATA when sglang is here)": lambda: check_dependencies(
            view, [p for p in sys.path if p], None, set()
        ),
        "port bind on loopback": lambda: port_free("127.0.0.1", port),
        "/dev/shm statvfs + ulimit -l": lambda: (read_shm(), read_memlock()),
    }
    print(f"{'preflight readings, in process':58} {'median ms':>10}")
    for name, fn in steps.items():
        times = []
        for _ in range(n):
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1000)
        print(f"{name:58} {statistics.median(times):10.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=30)
    ap.add_argument("--facts", default=str(ROOT / "tests" / "cases" / "h200-newest" / "facts.json"))
    ap.add_argument("--live", action="store_true", help="also time the gate probing this box (a GPU box)")
    args = ap.parse_args()
    true = shutil.which("true") or "/bin/true"
    py = sys.executable
    # -P: never the source tree in the working directory (it has no manifests), always the installed package
    gate = [py, "-P", "-m", "stackcheck", "gate", "--facts", args.facts, "--"]
    sm120 = str(ROOT / "tests" / "cases" / "writeup-after" / "facts.json")
    rows: list[tuple[str, list[str], set[int]]] = [
        ("/bin/true", [true], {0}),
        ("python -c pass", [py, "-c", "pass"], {0}),
        ("python: import pynvml, nvmlInit", [py, "-c", NVML], {0}),
        ("gate -- /bin/true", [*gate, true], {0}),
        (
            "gate -- /bin/true --tp 8 --attention-backend flashinfer",
            [*gate, true, "--tp", "8", "--attention-backend", "flashinfer"],
            {0},
        ),
        (
            "gate refusal (SM120, --enable-torch-symm-mem)",
            [
                py,
                "-P",
                "-m",
                "stackcheck",
                "gate",
                "--facts",
                sm120,
                "--",
                true,
                "--tp",
                "8",
                "--enable-torch-symm-mem",
            ],
            {1},
        ),
    ]
    print(f"{'command':58} {'median ms':>10} {'p90 ms':>8}   (n={args.n}, python {sys.version.split()[0]})")
    base = None
    for name, cmd, ok in rows:
        res = timed(cmd, args.n, ok)
        if isinstance(res, str):
            print(f"{name:58} {'n/a':>10} {'':>8}   {res}")
            continue
        med, p90 = res
        base = med if base is None else base
        print(f"{name:58} {med:10.1f} {p90:8.1f}   (+{med - base:.1f} over /bin/true)")
    if args.live:
        live(args.n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
