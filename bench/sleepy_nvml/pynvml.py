"""A stand-in `pynvml` for benches on a box without a driver: tests/fake_nvml.py's H200
(tests/data/nvml/h200-1x.json) whose nvmlInit is the driver's start: nvmlInitWithFlags(0) of the libnvidia-ml.so.1
the loader finds (bench/critical_path.py builds libnvml_stub.c as one, which takes $STACKCHECK_BENCH_NVML_INIT_MS
the first time in a process and then counts, as the driver does), else a sleep of that long (default 50 ms) with
the interpreter lock released. Put this directory first on PYTHONPATH; importing it (ctypes, the tests' fake) costs
about what importing the real module does on the 2-core box. For bench/critical_path.py and the like; never for
the product."""

import ctypes
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests"))
import fake_nvml

del sys.path[0]
_fake = fake_nvml.FakeNVML(fake_nvml.load_doc("h200-1x.json"))
_INIT_S = float(os.environ.get("STACKCHECK_BENCH_NVML_INIT_MS", "50")) / 1e3


try:
    _lib: ctypes.CDLL | None = ctypes.CDLL("libnvidia-ml.so.1")
except OSError:
    _lib = None


def nvmlInit() -> None:
    if _lib is not None:
        _lib.nvmlInitWithFlags(0)
    else:
        time.sleep(_INIT_S)
    _fake.nvmlInit()


def nvmlShutdown() -> None:
    _fake.nvmlShutdown()
    if _lib is not None:
        _lib.nvmlShutdown()


def __getattr__(name: str) -> object:
    return getattr(_fake, name)
