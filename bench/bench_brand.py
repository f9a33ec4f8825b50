"""Cost of the GPU brand (issue 16, image-nvidia-require): the NVML reading with and without nvmlDeviceGetBrand
(a fake NVML of 8 GPUs: the Python side only; a real driver's call is the lead's to time on a GPU box), the brand
name table built from the installed nvidia-ml-py's constants, and the image judgement with the shipped words.

    PYTHONPATH=$PWD:$PWD/tests python bench/bench_brand.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fake_nvml import FakeNVML, synthetic_doc  # type: ignore[import-not-found]

from stackcheck.image.require import judge_facts, parse_nvidia_require, shipped_brand_table
from stackcheck.probes.nvml_read import _Reader, read_nvml


class NoBrand(FakeNVML):  # type: ignore[misc]
    nvmlDeviceGetBrand = None  # an nvidia-ml-py without the call: the reading before this change


def _median_us(fn: Any, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def main() -> None:
    doc = synthetic_doc(8, nvswitch=False, name="NVIDIA H200", cc="9.0")
    for g in doc["facts"]["gpus"]:
        g["brand_code"] = 14
    with_brand, without = FakeNVML(doc), NoBrand(doc)
    with_brand.nvmlInit()
    without.nvmlInit()
    n = 300
    a = _median_us(lambda: read_nvml(without), n)
    b = _median_us(lambda: read_nvml(with_brand), n)
    print(f"read_nvml, fake 8 GPUs: without brand {a:.0f} us, with brand {b:.0f} us (+{b - a:.0f} us), median of {n}")
    try:
        import pynvml
    except ImportError:
        print("pynvml not installed: name table not timed")
    else:
        c = _median_us(lambda: _Reader(pynvml).brand_name(14), 200)
        print(f"brand name table from pynvml's constants (once per reading): {c:.0f} us")
    text = "cuda>=12.8 " + " ".join(
        f"brand={w},driver>={b},driver<{b + 1}"
        for b in (470, 535, 550, 560, 565)
        for w in ("unknown", "tesla", "nvidia", "quadrortx", "nvidiartx", "vcs")
    )
    image = {"nvidia_require": parse_nvidia_require({"NVIDIA_REQUIRE_CUDA": text}).to_facts()}
    gpus = [{"compute_capability": "9.0", "brand": "NVIDIA"}] * 8
    driver = {"version": "535.247.01", "cuda": "12.2"}
    t = time.perf_counter()
    table = shipped_brand_table()
    load_ms = (time.perf_counter() - t) * 1e3
    d = _median_us(lambda: judge_facts(image, driver, gpus, table), 200)
    print(f"shipped brand table (components.json parsed): {load_ms:.1f} ms once; judgement, 8 GPUs: {d:.0f} us")


if __name__ == "__main__":
    main()
