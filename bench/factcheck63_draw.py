"""The sixty-third fact-check sample's populations and seeded draw (bench/factcheck63_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck63_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the session's first-wave merges allow or call ok (git log
--first-parent 4563df08..d3726e12: iallow2, irev78, ireal2, icubin2, ifc62, iperf38): the runners before the launch
(coreutils timeout, sudo -u / -g / -C, pkexec, env -u / -C, nice / taskset / flock / srun / systemd-run --scope with
the interpreter after them), the MoE runner SGLang 0.5.20-0.5.23 picks on SM100 with the trtllm-gen cubins present
(flashinfer-cubin, FLASHINFER_CUBIN_DIR, SGLang's cache directory under SGLANG_CACHE_DIR or its default, a local
FLASHINFER_CUBINS_REPOSITORY), `--mm-attention-backend flashinfer_cudnn` with the cuDNN frontend, and the nixl / eic /
aibrix storage backends with their packages installed. A row equal to one an earlier sample drew is left out.

(p) `gate --facts` of Llama 3 `--tp 2` / `--tp 8` at 0.5.23 on the H200 box (factcheck49._box) behind each prefix of
    P_PREFIXES: one row per allow;
(m) `gate --facts` of a launch of M_LAUNCHES on the H200 box with the GPUs of M_GPUS, SGLang 0.5.20 / 0.5.23's pins
    and the flashinfer_cubins section the probe reads (probe_cubins over a tree written in OUT in FlashInfer's shape,
    bench/factcheck62_draw._artifacts / _fill) for each cubin place of M_SOURCES: one row per allow;
(f) `gate --facts` of Llama 3 `--tp 2 --enable-hierarchical-cache --hicache-storage-backend B
    --hicache-storage-backend-extra-config @FILE` at 0.5.13 / 0.5.23, B nixl / eic / aibrix with the backend's
    packages installed on the box: one row per allow.

`gate --image IMG -- CMD` (iallow2) is not drawn: factcheck62 found every image written in the test's shape refused
for the stack around the launch, so a population of its allows would be empty; the Entrypoint rule is checked beside
the sample (bench/factcheck63_section.md).

Draw: random.Random(20270201); per population the rows sorted by JSON text, shuffled, the first k (p 7, m 8, f 3),
18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck49_draw import _box
from factcheck62_draw import _artifacts, _fill
from factcheck_draw import draw_undrawn, stackcheck_json_or_error, write_models
from gate_cli import DEEPSEEK_R1, GPT_OSS, LLAMA3, QWEN3_MOE

SEED = 20270201
LAUNCH = ["python3", "-m", "sglang.launch_server"]


def _args(path: Path, line: list[str]) -> list[str]:
    return ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]


def _allowed(args: list[str]) -> bool:
    return stackcheck_json_or_error(args).get("decision") == "allow"


# ---- (p) the runners before the launch (iallow2, irev78) ---------------------------------------------------------

P_PREFIXES: dict[str, list[str]] = {
    "timeout-10h": ["timeout", "10h"],
    "timeout-k": ["timeout", "-k", "5", "1d"],
    "timeout-foreground": ["timeout", "--foreground", "0"],
    "timeout-s-kill": ["timeout", "-s", "KILL", "3600"],
    "timeout-float": ["timeout", "1.5e3"],
    "timeout-preserve": ["timeout", "--preserve-status", "2m"],
    "sudo-u": ["sudo", "-u", "svc"],
    "sudo-g": ["sudo", "-g", "gpu"],
    "sudo-C": ["sudo", "-C", "5"],
    "sudo-E-u": ["sudo", "-E", "-u", "svc"],
    "sudo-preserve-env": ["sudo", "--preserve-env=CUDA_VISIBLE_DEVICES", "-u", "svc"],
    "sudo-H-u": ["sudo", "-H", "-u", "svc"],
    "sudo-i": ["sudo", "-i"],
    "pkexec": ["pkexec"],
    "pkexec-user": ["pkexec", "--user", "svc"],
    "pkexec-keep-cwd": ["pkexec", "--keep-cwd"],
    "env-u": ["env", "-u", "HOME"],
    "env-C": ["env", "-C", "/srv"],
    "sh-env-u": ["sh", "-c", "env -u HOME"],
    "sh-env-C": ["sh", "-c", "env -C /srv"],
    "nice-n": ["nice", "-n", "5"],
    "taskset-c": ["taskset", "-c", "0-15"],
    "flock": ["flock", "/tmp/sg.lock"],
    "srun-N1": ["srun", "-N1"],
    "systemd-run-scope": ["systemd-run", "--scope"],
    "timeout-nice-taskset": ["timeout", "1d", "nice", "taskset", "-c", "0-7"],
    "sudo-u-timeout": ["sudo", "-u", "svc", "timeout", "1d"],
}


def prefix_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    path = _box(out, "0.5.23", None)
    for name, prefix in P_PREFIXES.items():
        for layout in ("tp2", "tp8"):
            launch = [*LAUNCH, "--model-path", str(out / "models" / "llama3"), "--tp", layout[2:]]
            if prefix[0] == "sh":  # (the last word of the prefix opens the -c string)
                line = [*prefix[:-1], f"{prefix[-1]} {shlex.join(launch)}"]
            else:
                line = [*prefix, *launch]
            if _allowed(_args(path, line)):
                rows.append({"pop": "p", "sglang": "0.5.23", "prefix": name, "layout": layout})
    print(f"p: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (m) the MoE runner on SM100 with the cubins present (ireal2, icubin2, ifc62) -----------------------------------

M_RELEASES = ["0.5.20", "0.5.23"]
M_GPUS: dict[str, tuple[str, str]] = {
    "b200": ("NVIDIA B200", "10.0"),
    "b300": ("NVIDIA B300 SXM6 AC", "10.3"),
    "gb200": ("NVIDIA GB200", "10.0"),
}
#: name: (where the complete families lie, the server's environment beyond HOME (@D: the place named), whether a
#: flashinfer-cubin of the release is installed (empty where the files lie elsewhere), nvidia-cudnn-frontend installed)
M_SOURCES: dict[str, tuple[str, dict[str, str], bool, bool]] = {
    "pkg": ("pkg", {}, True, False),
    "pkg-nodl-frontend": ("pkg", {"FLASHINFER_NO_DOWNLOAD": "1"}, True, True),
    "dir-nodl": ("dir", {"FLASHINFER_CUBIN_DIR": "@D", "FLASHINFER_NO_DOWNLOAD": "1"}, False, False),
    "sglang-default-cache": ("sgl-default", {}, False, False),
    "sglang-cache-dir": ("sgl-dir", {"SGLANG_CACHE_DIR": "@D"}, False, False),
    "sglang-cache-dir-nodl": ("sgl-dir", {"SGLANG_CACHE_DIR": "@D", "FLASHINFER_NO_DOWNLOAD": "1"}, False, True),
    "repo-local": ("repo", {"FLASHINFER_CUBINS_REPOSITORY": "@D"}, False, False),
    "repo-local-frontend": ("repo", {"FLASHINFER_CUBINS_REPOSITORY": "@D"}, False, True),
}
M_LAUNCHES: dict[str, tuple[str, tuple[str, ...]]] = {
    "deepseek-r1-default": ("deepseek-r1", ("--tp", "8")),
    "deepseek-r1-trtllm": ("deepseek-r1", ("--tp", "8", "--moe-runner-backend", "flashinfer_trtllm")),
    "gpt-oss-default": ("gpt-oss", ("--tp", "8")),
    "qwen3-moe-fp8": ("qwen3-moe", ("--tp", "8", "--quantization", "fp8")),
    "mm-cudnn": ("llama3", ("--tp", "8", "--mm-attention-backend", "flashinfer_cudnn")),
}


def _moe_box(out: Path, rel: str, gpu: str, source: str) -> Path:
    from stackcheck.facts.cubin_releases import RUBIN_SPLIT_RELEASES, release_tuple
    from stackcheck.probes.flashinfer_cubins import probe_cubins
    from stackcheck.readers.fsview import HostView

    where, env_in, pkg, frontend = M_SOURCES[source]
    doc = json.loads(_box(out, rel, None).read_text())
    facts = doc["facts"]
    name, cc = M_GPUS[gpu]
    for g in facts["gpus"]:
        g["name"], g["compute_capability"] = name, cc
    fi = facts["packages"]["flashinfer-python"]["version"]
    t = release_tuple(fi)
    rubin = t is not None and RUBIN_SPLIT_RELEASES[0] <= t <= RUBIN_SPLIT_RELEASES[1]
    top = out / "cubins" / f"{rel}-{gpu}-{source}"
    site = top / "site"
    (site / "flashinfer").mkdir(parents=True, exist_ok=True)
    (site / "flashinfer" / "artifacts.py").write_text(_artifacts(rubin))
    pkg_dir = site / "flashinfer_cubin" / "cubins"
    pkg_dir.mkdir(parents=True, exist_ok=True)
    home = top / "home"
    home.mkdir(exist_ok=True)
    named = top / "named"
    named.mkdir(exist_ok=True)
    env = {"HOME": str(home), **{k: v.replace("@D", str(named)) for k, v in env_in.items()}}
    target = {
        "pkg": pkg_dir,
        "dir": named,
        "sgl-default": home / ".cache/sglang/.cache/flashinfer/cubins",
        "sgl-dir": named / ".cache/flashinfer/cubins",
        "repo": named,
    }[where]
    _fill(target, rubin)
    facts["packages"]["flashinfer-python"]["location"] = str(site)
    if pkg:
        facts["packages"]["flashinfer-cubin"] = {"installed": True, "version": fi, "dist_version": fi,
                                                 "location": str(site), "editable": False, "copies": 1}  # fmt: skip
    else:
        facts["packages"]["flashinfer-cubin"] = {"installed": False}
    if frontend:
        facts["packages"]["nvidia-cudnn-frontend"] = {"installed": True, "version": "1.16.0",
                                                      "dist_version": "1.16.0", "location": str(site),
                                                      "editable": False, "copies": 1}  # fmt: skip
    facts["system"]["env"] = {**(facts["system"].get("env") or {}), **env}
    section = probe_cubins(facts, env, HostView())
    assert section is not None, (rel, fi)
    facts["flashinfer_cubins"] = section
    path = out / "boxes" / f"moe-{rel}-{gpu}-{source}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def moe_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in M_RELEASES:
        for gpu in M_GPUS:
            for source in M_SOURCES:
                path = _moe_box(out, rel, gpu, source)
                for launch, (model, flags) in M_LAUNCHES.items():
                    line = [*LAUNCH, "--model-path", str(out / "models" / model), *flags]
                    if _allowed(_args(path, line)):
                        rows.append({"pop": "m", "sglang": rel, "gpu": gpu, "source": source, "launch": launch})
        print(f"m {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (f) the nixl / eic / aibrix storage backends with their packages (ifc62) ---------------------------------------

F_PACKAGES: dict[str, dict[str, str]] = {
    "nixl": {"nixl": "0.6.1"},
    "nixl-cu12": {"nixl": "0.7.1", "nixl-cu12": "0.7.1"},
    "eic": {"eic": "1.0.0"},
    "aibrix": {"aibrix-kvcache": "0.4.0"},
}
F_FILES: dict[str, str] = {
    "empty-object": "{}",
    "prefetch-threshold": json.dumps({"prefetch_threshold": 256}),
    "mooncake-master": json.dumps({"master_server_address": "10.0.0.1:50051", "protocol": "tcp"}),
}


def storage_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    cfg = out / "storage"
    cfg.mkdir(parents=True, exist_ok=True)
    for name, body in F_FILES.items():
        (cfg / f"{name}.json").write_text(body)
    for rel in ("0.5.13", "0.5.23"):
        base = json.loads(_box(out, rel, None).read_text())
        for pkgs, installed in F_PACKAGES.items():
            doc = json.loads(json.dumps(base))
            for dist, version in installed.items():
                doc["facts"]["packages"][dist] = {"installed": True, "version": version, "dist_version": version,
                                                  "location": "/usr/lib/python3/dist-packages", "editable": False,
                                                  "copies": 1}  # fmt: skip
            path = out / "boxes" / f"storage-{rel}-{pkgs}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(doc))
            backend = pkgs.split("-")[0]
            for name in F_FILES:
                line = [*LAUNCH, "--model-path", str(out / "models" / "llama3"), "--tp", "2",
                        "--enable-hierarchical-cache", "--hicache-storage-backend", backend,
                        "--hicache-storage-backend-extra-config", f"@{cfg / name}.json"]  # fmt: skip
                if _allowed(_args(path, line)):
                    rows.append({"pop": "f", "sglang": rel, "packages": pkgs, "file": name})
        print(f"f {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, {"llama3": LLAMA3, "deepseek-r1": DEEPSEEK_R1, "qwen3-moe": QWEN3_MOE, "gpt-oss": GPT_OSS})
    pops = [
        (7, prefix_rows(out)),
        (8, moe_rows(out)),
        (3, storage_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck63_drawn.json")


if __name__ == "__main__":
    main()
