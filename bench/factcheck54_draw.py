"""The fifty-fourth fact-check sample's populations and seeded draw (bench/factcheck54_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck54_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the fifteenth session's new rules where the gate allows or plan says ok
(git log --first-parent fd70b9a0..24bb7bf0): custom all-reduce at TP 3 / 5 / 7 on NVLink (imend4) with the v2 / JIT
variables and their SGL_ spellings (imend5), launches behind runners (irobust5, irev72's srun), the Mooncake HiCache
store's master given each way (igap51, irev72), NIXL >= 1.2.0 at 0.5.15+ (ifc52), the hierarchical cache on GB10
with a bound (ifc53, irev72), plans whose SGLang / torch step brings quack-kernels / tilelang / nvidia-mathdx or
removes an NCCL wheel (igap52). A row equal to one an earlier sample drew is left out.

Boxes: factcheck49_draw._box (tests/cases/h200-newest with the release's pins, the extra packages, libnuma; 8 H200);
the GB10 of factcheck51_draw.BOXES as factcheck27_draw._box builds it.

(a) `gate --tp N` (Llama 3) on N = 3 / 5 / 7 of the H200s, every pair on NVLink (peer access on), behind the prefixes
    of A_ENV, at A_RELEASES: one row per allow whose custom-allreduce is ok;
(r) `gate` of Llama 3 `--tp 2` / `--tp 1` behind each runner prefix of R_PREFIXES at 0.5.13 / 0.5.23: one row per
    allow;
(m) `gate --tp 8` of `--enable-hierarchical-cache --hicache-storage-backend mooncake` with the store's master given
    each way of M_WAYS, mooncake-transfer-engine of M_MOONCAKE (its system libraries found), at M_RELEASES: one row
    per allow;
(n) `gate --tp 8` of `--disaggregation-mode prefill|decode --disaggregation-transfer-backend nixl` (Llama 3) at
    0.5.15 / 0.5.19 / 0.5.23 (torch CUDA 13.0) with nixl of N_NIXL and nixl-cu13 / both backends at nixl's version,
    libcudart.so.12 found, the NIXL and Mooncake system libraries found: one row per allow;
(h) `gate` of Llama 3 `--enable-hierarchical-cache` (and 0.5.23's `--enable-hicache`) on the GB10 with each bound of
    H_BOUNDS at 0.5.11 / 0.5.18 / 0.5.23: one row per allow;
(p) plan_and_facts of the boxes of P_BOXES (SGLang, quack-kernels, tilelang, nvidia-mathdx not installed on the H200
    / B200 box; torch 2.9.1+cu128 with nvidia-nccl-cu12 planned to cu130) with the pins of P_PINS: one row per
    distinct (box, pins, ok feature or check of the facts after the plan, its reasons' rule / observed / result)
    whose reasons name quack, tilelang, mathdx or nccl, where the plan has a step.

Draw: random.Random(20270123); per population the rows sorted by JSON text, shuffled, the first k (a 4, r 3, m 3,
n 3, h 3, p 2), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck27_draw import _box as _box27
from factcheck47_draw import _pkg
from factcheck49_draw import _box
from factcheck51_draw import BOXES
from factcheck_draw import ROOT, draw_undrawn, stackcheck_json_or_error, write_models
from factcheck_draw import write_box as _write
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, NIXL_SYSTEM_LIBS

SEED = 20270123
MODELS = {"llama3": LLAMA3}
LAUNCH = ["python3", "-m", "sglang.launch_server"]


def _line(out: Path, path: Path, prefix: list[str], model: str, *flags: str) -> list[str]:
    line = [*prefix, *LAUNCH, "--model-path", str(out / "models" / model), *flags]
    return ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]


def _allowed(args: list[str]) -> dict[str, Any] | None:
    doc = stackcheck_json_or_error(args)
    return doc if doc.get("decision") == "allow" else None


def _features(doc: dict[str, Any]) -> dict[str, str]:
    return {str(f.get("feature")): str(f.get("status")) for f in doc.get("features") or []}


# ---- (a) custom all-reduce at odd world sizes on NVLink -----------------------------------------------------------

A_ENV: dict[str, list[str]] = {
    "none": [],
    "v2-on": ["env", "SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2=1"],
    "v2-off": ["env", "SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2=0"],
    "jit-on": ["env", "SGLANG_USE_JIT_ALL_REDUCE=1"],
    "jit-true": ["env", "SGLANG_USE_JIT_ALL_REDUCE=true"],
    "jit-off": ["env", "SGLANG_USE_JIT_ALL_REDUCE=0"],
    "sgl-v2-on": ["env", "SGL_OPT_USE_CUSTOM_ALL_REDUCE_V2=1"],
    "sgl-jit-on": ["env", "SGL_USE_JIT_ALL_REDUCE=1"],
}
A_RELEASES = ["0.5.10", "0.5.11", "0.5.12", "0.5.16", "0.5.20", "0.5.23"]


def _nvlink_box(out: Path, rel: str, count: int) -> Path:
    doc = json.loads(_box(out, rel, None).read_text())
    facts = doc["facts"]
    facts["gpus"] = facts["gpus"][:count]
    pairs = [{"a": a, "b": b, "p2p_read": "ok", "link": "nvlink", "nvlink_count": 18, "common_ancestor": "internal"}
             for a in range(count) for b in range(a + 1, count)]  # fmt: skip
    facts["topology"] = {"interconnect": "nvlink", "same_model": True, "gpu_count": count, "p2p": "all",
                         "nvswitch": True, "pairs": pairs}  # fmt: skip
    env = facts["system"].setdefault("env", {})
    for name in ("SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2", "SGLANG_USE_JIT_ALL_REDUCE", "SGL_OPT_USE_CUSTOM_ALL_REDUCE_V2",
                 "SGL_USE_JIT_ALL_REDUCE"):  # fmt: skip
        env.pop(name, None)
    return _write(out, doc, f"a54-{rel}-{count}.json")


def allreduce_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in A_RELEASES:
        for count in (3, 5, 7):
            path = _nvlink_box(out, rel, count)
            for env, prefix in A_ENV.items():
                doc = _allowed(_line(out, path, prefix, "llama3", "--tp", str(count)))
                if doc is not None and _features(doc).get("custom-allreduce") == "ok":
                    rows.append({"pop": "a", "sglang": rel, "gpus": count, "env": env})
        print(f"a {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (r) runners before the launch --------------------------------------------------------------------------------

R_PREFIXES: dict[str, list[str]] = {
    "nice": ["nice", "-n", "10"],
    "taskset": ["taskset", "-c", "0-31"],
    "numactl": ["numactl", "--cpunodebind=0", "--membind=0"],
    "numactl-interleave": ["numactl", "--interleave=all"],
    "srun-export-all": ["srun", "--export=ALL", "-N", "1"],
    "srun-export-all-vars": ["srun", "--export=ALL,NCCL_DEBUG=INFO"],
    "chrt": ["chrt", "-o", "0"],
    "ionice": ["ionice", "-c", "2", "-n", "7"],
    "stdbuf": ["stdbuf", "-oL", "-eL"],
    "setsid": ["setsid"],
    "time": ["time"],
    "flock": ["flock", "/tmp/sglang.lock"],
    "nice-taskset-numactl": ["nice", "taskset", "-c", "0-15", "numactl", "--membind=0"],
    "setsid-env": ["setsid", "env", "NCCL_DEBUG=INFO"],
}
R_FLAGS: dict[str, tuple[str, ...]] = {"tp2": ("--tp", "2"), "tp1": ("--tp", "1")}


def runner_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.13", "0.5.23"):
        path = _box(out, rel, None)
        for name, prefix in R_PREFIXES.items():
            for flags, words in R_FLAGS.items():
                if _allowed(_line(out, path, prefix, "llama3", *words)) is not None:
                    rows.append({"pop": "r", "sglang": rel, "prefix": name, "flags": flags})
        print(f"r {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (m) the Mooncake HiCache store's master ----------------------------------------------------------------------

M_MOONCAKE = ["0.3.9", "0.3.13.post1"]
M_RELEASES = ["0.5.7", "0.5.12", "0.5.18", "0.5.23"]
_STORE = ("--tp", "8", "--enable-hierarchical-cache", "--hicache-storage-backend", "mooncake")
_EXTRA = "--hicache-storage-backend-extra-config"


def _ways(out: Path) -> dict[str, tuple[list[str], tuple[str, ...]]]:
    conf = out / "mooncake"
    conf.mkdir(parents=True, exist_ok=True)
    full = conf / "full.json"
    full.write_text(json.dumps({"local_hostname": "10.0.0.3", "metadata_server": "P2PHANDSHAKE",
                                "master_server_address": "10.0.0.1:50051", "protocol": "rdma",
                                "device_name": "mlx5_0", "global_segment_size": "4gb"}))  # fmt: skip
    bare = conf / "master-only.json"
    bare.write_text(json.dumps({"master_server_address": "10.0.0.1:50051"}))
    tcp = {"master_server_address": "10.0.0.1:50051", "protocol": "tcp"}
    return {
        "extra-master": ([], (_EXTRA, json.dumps({"master_server_address": "10.0.0.1:50051"}))),
        "extra-master-protocol": ([], (_EXTRA, json.dumps(tcp))),
        "extra-client": ([], (_EXTRA, json.dumps({"client_server_address": "10.0.0.2:50052"}))),
        "config-file": (["env", f"SGLANG_HICACHE_MOONCAKE_CONFIG_PATH={full}"], ()),
        "config-file-master-only": (["env", f"SGLANG_HICACHE_MOONCAKE_CONFIG_PATH={bare}"], ()),
        "env-master": (["env", "MOONCAKE_MASTER=10.0.0.1:50051"], ()),
        "env-master-protocol": (["env", "MOONCAKE_MASTER=10.0.0.1:50051", "MOONCAKE_PROTOCOL=tcp"], ()),
        "env-client": (["env", "MOONCAKE_CLIENT=10.0.0.2:50052"], ()),
    }


def mooncake_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    ways = _ways(out)
    for rel in M_RELEASES:
        for version in M_MOONCAKE:
            doc = json.loads(_box(out, rel, None).read_text())
            facts = doc["facts"]
            facts["packages"]["mooncake-transfer-engine"] = _pkg(version)
            facts["cuda_libs"] = {**(facts.get("cuda_libs") or {}), "ld_cache": "file", **MOONCAKE_SYSTEM_LIBS,
                                  "liblzma.so.5": "/usr/lib/x86_64-linux-gnu/liblzma.so.5"}  # fmt: skip
            path = _write(out, doc, f"m54-{rel}-{version}.json")
            for way, (prefix, words) in ways.items():
                if _allowed(_line(out, path, prefix, "llama3", *_STORE, *words)) is not None:
                    rows.append({"pop": "m", "sglang": rel, "mooncake": version, "way": way})
        print(f"m {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (n) NIXL >= 1.2.0 at 0.5.15+ ---------------------------------------------------------------------------------

N_NIXL = ["1.2.0", "1.3.0", "1.4.0", "1.5.1"]
N_BACKENDS: dict[str, tuple[bool, bool]] = {"cu13": (False, True), "both": (True, True)}


def nixl_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.15", "0.5.19", "0.5.23"):
        for nixl in N_NIXL:
            for backends, (cu12, cu13) in N_BACKENDS.items():
                doc = json.loads(_box(out, rel, None).read_text())
                facts = doc["facts"]
                torch = facts["packages"]["torch"]
                torch.update(cuda="13.0", variant="cu130", version=f"{torch['dist_version']}+cu130")
                facts["packages"].update({
                    "nixl": _pkg(nixl),
                    "nixl-cu12": _pkg(nixl) if cu12 else {"installed": False},
                    "nixl-cu13": _pkg(nixl) if cu13 else {"installed": False},
                    "mooncake-transfer-engine": {"installed": False},
                })  # fmt: skip
                libs: dict[str, Any] = {**facts.get("cuda_libs", {}), "ld_cache": "file"}
                libs.update({**MOONCAKE_SYSTEM_LIBS, **NIXL_SYSTEM_LIBS})
                libs["libcudart.so.12"] = "/usr/local/cuda-12.9/lib64/libcudart.so.12"
                facts["cuda_libs"] = libs
                path = _write(out, doc, f"n54-{rel}-{nixl}-{backends}.json")
                for mode in ("prefill", "decode"):
                    flags = ("--tp", "8", "--disaggregation-mode", mode, "--disaggregation-transfer-backend", "nixl")
                    if _allowed(_line(out, path, [], "llama3", *flags)) is not None:
                        rows.append({"pop": "n", "sglang": rel, "nixl": nixl, "backends": backends, "mode": mode})
        print(f"n {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (h) the hierarchical cache on a GB10 with a bound -----------------------------------------------------------

H_BOUNDS: dict[str, tuple[str, ...]] = {
    "hicache-size-8": ("--hicache-size", "8"),
    "hicache-size-40": ("--hicache-size", "40"),
    "hicache-ratio-1.2": ("--hicache-ratio", "1.2"),
    "mem-fraction-0.4": ("--mem-fraction-static", "0.4"),
    "mem-fraction-0.8": ("--mem-fraction-static", "0.8"),
    "max-total-tokens": ("--max-total-tokens", "65536"),
}


def gb10_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.11", "0.5.18", "0.5.23"):
        path = _box27(out, rel, BOXES["gb10"])
        flags = ["--enable-hierarchical-cache"] + (["--enable-hicache"] if rel == "0.5.23" else [])
        for flag in flags:
            for bound, words in H_BOUNDS.items():
                if _allowed(_line(out, path, [], "llama3", flag, *words)) is not None:
                    rows.append({"pop": "h", "sglang": rel, "flag": flag, "bound": bound})
        print(f"h {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (p) plans whose steps bring quack-kernels / tilelang / nvidia-mathdx or remove an NCCL wheel --------------

P_GPUS = {"h200": ("NVIDIA H200", "9.0"), "b200": ("NVIDIA B200", "10.0")}
P_PINS: dict[str, dict[str, str]] = {
    "none": {},
    "sglang-0.5.17": {"sglang": "0.5.17"},
    "sglang-0.5.19": {"sglang": "0.5.19"},
    "sglang-0.5.21": {"sglang": "0.5.21"},
}
_NAMES = ("quack", "tilelang", "mathdx", "nccl")


def _plan_after(path: Path, pins: dict[str, str]) -> tuple[dict[str, Any], Any]:
    from stackcheck.facts.model import load_facts_file
    from stackcheck.knowledge.loader import load as load_manifests
    from stackcheck.plan.planner import plan_and_facts
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_all

    manifests = load_manifests([], env={})
    ctx = Context(facts=load_facts_file(str(path)), manifests=manifests)
    features, _ = evaluate_all(ctx)
    plan, after = plan_and_facts(ctx, features, pins=pins or None)
    return dict(plan.to_json()), (after, manifests)


def plan_rows(out: Path) -> list[dict[str, Any]]:
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_all

    boxes: dict[str, Path] = {}
    for gpu, (name, cc) in P_GPUS.items():
        doc = json.loads((ROOT / "tests" / "cases" / "h200-newest" / "facts.json").read_text())
        facts = doc["facts"]
        for g in facts["gpus"]:
            g.update(name=name, compute_capability=cc)
        for pkg in ("sglang", "quack-kernels", "tilelang", "nvidia-mathdx"):
            facts["packages"][pkg] = {"installed": False}
        boxes[f"{gpu}-no-sglang"] = _write(out, doc, f"p54-{gpu}-no-sglang.json")
    boxes["cu128-nccl-cu12"] = ROOT / "tests" / "plan_cases" / "writeup-before-default" / "facts.json"
    rows: dict[str, dict[str, Any]] = {}
    for box, path in boxes.items():
        for pin_name, pins in P_PINS.items():
            try:
                plan, (after, manifests) = _plan_after(path, pins)
            except Exception as e:  # a pin the planner refuses is no row
                print(f"p {box} {pin_name}: {type(e).__name__}", file=sys.stderr)
                continue
            if after is None or not plan.get("steps"):
                continue
            features, checks = evaluate_all(Context(facts=cast("Any", after), manifests=manifests))
            for kind, entries in (("feature", features), ("check", checks)):
                for e in entries:
                    j = dict(e) if isinstance(e, dict) else dict(e.to_json())  # type: ignore[attr-defined]
                    if j.get("status") != "ok":
                        continue
                    reasons = [[r.get("rule"), r.get("observed"), r.get("result")] for r in j.get("reasons") or []]
                    if not any(n in json.dumps(reasons).lower() for n in _NAMES):
                        continue
                    row = {"pop": "p", "box": box, "pins": pin_name, kind: j.get("id"), "reasons": reasons}
                    rows.setdefault(json.dumps(row, sort_keys=True), row)
        print(f"p {box}: {len(rows)}", file=sys.stderr, flush=True)
    return list(rows.values())


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    pops = [
        (4, allreduce_rows(out)),
        (3, runner_rows(out)),
        (3, mooncake_rows(out)),
        (3, nixl_rows(out)),
        (3, gb10_rows(out)),
        (2, plan_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck54_drawn.json")


if __name__ == "__main__":
    main()
