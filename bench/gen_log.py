"""Generate a realistic SGLang-style server log of N MB with a crash buried in the middle.

    python bench/gen_log.py --mb 1024 --out /tmp/big.log

Eight TP processes log decode batches and HTTP access lines; in the middle TP3 dies with the
torch-symm-mem KeyError traceback, followed by the parent's secondary failures; then normal lines resume.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

SP = "/opt/venv/lib/python3.12/site-packages"
CRASH = f"""[2026-01-02 10:30:00 TP3] Scheduler hit an exception: Traceback (most recent call last):
  File "{SP}/sglang/srt/managers/scheduler.py", line 2731, in run_scheduler_process
    scheduler = Scheduler(
  File "{SP}/sglang/srt/distributed/parallel_state.py", line 296, in __init__
    self.torch_symm_mem_comm = TorchSymmMemCommunicator(
  File "{SP}/sglang/srt/distributed/device_communicators/torch_symm_mem.py", line 58, in __init__
    self.max_size = TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES[self.device_capability][
KeyError: 12

[2026-01-02 10:30:00] Rank 3 scheduler is dead. Please check if there are relevant logs.
[2026-01-02 10:30:01] Received sigquit from a child process. It usually means the child failed.
"""


def _lines(rnd: random.Random) -> list[bytes]:
    out = []
    for i in range(2000):
        tp = i % 8
        sec = i % 60
        if i % 3 == 0:
            out.append(
                f"[2026-01-02 10:{sec // 10:02d}:{sec:02d}] INFO:     10.0.0.{i % 250}:{40000 + i} - "
                f'"POST /v1/chat/completions HTTP/1.1" 200 OK\n'.encode()
            )
        else:
            out.append(
                f"[2026-01-02 10:{sec // 10:02d}:{sec:02d} TP{tp}] Decode batch. #running-req: {rnd.randrange(1, 64)}, "
                f"#token: {rnd.randrange(1000, 90000)}, token usage: 0.{rnd.randrange(10, 99)}, cuda graph: True, "
                f"gen throughput (token/s): {rnd.randrange(500, 9000)}.{rnd.randrange(10, 99)}, "
                f"#queue-req: 0,\n".encode()
            )
    return out


def generate(path: Path, mb: int, seed: int = 1) -> int:
    rnd = random.Random(seed)
    block = b"".join(_lines(rnd))
    target = mb * 1024 * 1024
    written = 0
    crashed = False
    with path.open("wb") as f:
        while written < target:
            if not crashed and written >= target // 2:
                data = CRASH.encode()
                crashed = True
            else:
                data = block
            f.write(data)
            written += len(data)
        if not crashed:
            f.write(CRASH.encode())
            written += len(CRASH)
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=1024, help="size in MiB (default 1024)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    n = generate(args.out, args.mb)
    print(f"wrote {n} bytes to {args.out}")


if __name__ == "__main__":
    main()
