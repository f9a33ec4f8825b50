"""The thirty-eighth fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md,
"Thirty-eighth sample").

    PYTHONPATH=.:tests python bench/factcheck38_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the fourth session's gate rules where they allow: SGLang 0.5.9+'s JIT
kernel build at the first forward pass (sglang-jit-cxx, -cxx-args, -nvcc-host, -nvcc-host-version) with the toolkit
side taken from real wheels, and `--dcp-size` launches of DeepSeek-family MLA models (mla-dcp-* rules) on 0.5.15-0.5.23.

Toolkits (TOOLKITS): include/crt/host_config.h of nvidia-cuda-nvcc-cu12 12.8.93 and 12.9.86 (those wheels ship no
nvcc: an ELF stub stands for it) and of nvidia-cuda-crt 13.0.88 / 13.1.115 beside bin/nvcc.profile of
nvidia-cuda-nvcc 13.0.88 / 13.1.115 (pip download --no-deps --only-binary=:all: --python-version 3.12 into the
shared cache, 2026-12-05), laid out under OUT/roots/... as /usr/local/cuda-X.Y; a small cuda_runtime_api.h of our own
with its CUDART_VERSION and empty cuda_fp8.h / cuda_fp4.h / curand_kernel.h beside them.

(j) `gate --dry-run --format json` of `--tp 1` (Llama 3 config) on factcheck27_draw._box (the H200 box) with every
    final release 0.5.9-0.5.23, its jit section the real probe's (probe_jit over the laid-out root and the HOSTS
    environment) for each toolkit and each host-compiler layout of HOSTS: one row per allow;
(d) `gate --dry-run --format json` of `--tp 8 --dcp-size 2` with no attention flag or `--attention-backend B`,
    `--decode-attention-backend B` or `--prefill-attention-backend B` for B in MLA_BACKENDS, on DeepSeek R1 (V3) and
    DeepSeek V2 Lite configs (tests/gate_cli.py), on A100 (8.0), H100 (9.0), B200 (10.0) and RTX PRO 6000 (12.0) x8
    boxes (factcheck27_draw._box) with every final release 0.5.15-0.5.23: one row per allow.

Draw: random.Random(20270107); per population its rows sorted by their JSON text, shuffled, the first k (j: 6,
d: 4), 10 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import os
import sys
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck23_draw import _v
from factcheck27_draw import _box
from factcheck_draw import (
    draw,
    final_releases,
    gate_allow_rows,
    model_flag_launches,
    stackcheck_json_or_error,
    write_models,
)
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V2_LITE, LLAMA3

SEED = 20270107
WHEELS = Path.home() / ".cache/stackcheck-tests/wheels"
# toolkit version -> (wheel with host_config.h, its path there, wheel with nvcc.profile or None, its path)
TOOLKITS: dict[str, tuple[str, str, str | None, str | None]] = {
    "12.8.93": (
        "nvidia_cuda_nvcc_cu12-12.8.93-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl",
        "nvidia/cuda_nvcc/include/crt/host_config.h",
        None,
        None,
    ),
    "12.9.86": (
        "nvidia_cuda_nvcc_cu12-12.9.86-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl",
        "nvidia/cuda_nvcc/include/crt/host_config.h",
        None,
        None,
    ),
    "13.0.88": (
        "nvidia_cuda_crt-13.0.88-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        "nvidia/cu13/include/crt/host_config.h",
        "nvidia_cuda_nvcc-13.0.88-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        "nvidia/cu13/bin/nvcc.profile",
    ),
    "13.1.115": (
        "nvidia_cuda_crt-13.1.115-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        "nvidia/cu13/include/crt/host_config.h",
        "nvidia_cuda_nvcc-13.1.115-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        "nvidia/cu13/bin/nvcc.profile",
    ),
}
DEB = "usr/lib/gcc/x86_64-linux-gnu"
RHEL = "usr/libexec/gcc/x86_64-redhat-linux"
STD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _deb(n: str) -> dict[str, Any]:
    """Debian / Ubuntu gcc-N and g++-N: /usr/bin/gcc -> gcc-N, c++ -> g++-N, cc1 and cc1plus in GCC's directory."""
    files = [f"usr/bin/gcc-{n}", f"usr/bin/g++-{n}", f"{DEB}/{n}/cc1", f"{DEB}/{n}/cc1plus"]
    links = {"usr/bin/gcc": f"gcc-{n}", "usr/bin/g++": f"g++-{n}", "usr/bin/c++": f"g++-{n}"}
    return {"files": files, "links": links, "env": {"PATH": STD_PATH}}


def _rhel(system: str, toolset: str | None) -> dict[str, Any]:
    """RHEL-like: the system gcc in /usr (libexec), and gcc-toolset-N first on PATH where given."""
    files = ["usr/bin/gcc", "usr/bin/g++", "usr/bin/c++", f"{RHEL}/{system}/cc1", f"{RHEL}/{system}/cc1plus"]
    path = STD_PATH
    if toolset:
        top = f"opt/rh/gcc-toolset-{toolset}/root/usr"
        files += [f"{top}/bin/gcc", f"{top}/bin/g++", f"{top}/bin/c++"]
        programs = f"{top}/libexec/gcc/x86_64-redhat-linux/{toolset}"
        files += [f"{programs}/cc1", f"{programs}/cc1plus"]
        path = f"/{top}/bin:{STD_PATH}"
    return {"files": files, "links": {}, "env": {"PATH": path}}


def _with(base: dict[str, Any], **env: str) -> dict[str, Any]:
    return {**base, "env": {**base["env"], **env}}


def _two(default: str, other: str) -> dict[str, Any]:
    a, b = _deb(default), _deb(other)
    return {"files": a["files"] + b["files"], "links": a["links"], "env": a["env"]}


def _ccache(n: str) -> dict[str, Any]:
    base = _deb(n)
    files = [*base["files"], "usr/bin/ccache"]
    links = {**base["links"], "usr/lib/ccache/gcc": "../../bin/ccache", "usr/lib/ccache/g++": "../../bin/ccache"}
    return {"files": files, "links": links, "env": {"PATH": f"/usr/lib/ccache:{STD_PATH}"}}


HOSTS: dict[str, dict[str, Any]] = {
    **{f"deb-gcc-{n}": _deb(n) for n in ("9", "10", "11", "12", "13", "14", "15")},
    "deb-gcc-12-and-15": _two("12", "15"),
    "deb-gcc-15-and-12": _two("15", "12"),
    "deb-gcc-12-cxx-clang": _with(
        {**_deb("12"), "files": [*_deb("12")["files"], "usr/bin/clang++-19"]}, CXX="/usr/bin/clang++-19"
    ),
    "deb-gcc-12-cxx-ccache": _with({**_deb("12"), "files": [*_deb("12")["files"], "usr/bin/ccache"]}, CXX="ccache g++"),
    "deb-gcc-15-allow-unsupported": _with(_deb("15"), NVCC_APPEND_FLAGS="-allow-unsupported-compiler"),
    "deb-gcc-12-ccbin-15": _with(_two("12", "15"), NVCC_CCBIN="/usr/bin/gcc-15"),
    "ccache-gcc-14": _ccache("14"),
    "ccache-gcc-15": _ccache("15"),
    "rhel8-gcc-8": _rhel("8", None),
    "rhel8-toolset-13": _rhel("8", "13"),
    "rhel9-toolset-14": _rhel("11", "14"),
    "rhel9-toolset-15": _rhel("11", "15"),
}


def _touch(path: Path, body: bytes = b"\x7fELF") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    path.chmod(0o755)


def _root(out: Path, toolkit: str, host: str) -> Path:
    root = out / "roots" / f"{toolkit}--{host}"
    if root.exists():
        return root
    major, minor = toolkit.split(".")[:2]
    home = root / f"usr/local/cuda-{major}.{minor}"
    _touch(home / "bin/nvcc")
    wheel, member, pwheel, pmember = TOOLKITS[toolkit]
    with zipfile.ZipFile(WHEELS / wheel) as z:
        (home / "include/crt").mkdir(parents=True, exist_ok=True)
        (home / "include/crt/host_config.h").write_bytes(z.read(member))
    if pwheel and pmember:
        with zipfile.ZipFile(WHEELS / pwheel) as z:
            (home / "bin/nvcc.profile").write_bytes(z.read(pmember))
    cudart = int(major) * 1000 + int(minor) * 10
    (home / "include/cuda_runtime_api.h").write_text(f"#define CUDART_VERSION {cudart}\n")
    for name in ("cuda_fp8.h", "cuda_fp4.h", "curand_kernel.h", "cuda_runtime.h"):
        (home / "include" / name).write_text("")
    _touch(root / "usr/local/bin/ninja")
    spec = HOSTS[host]
    for f in spec["files"]:
        _touch(root / f)
    for link, target in spec["links"].items():
        (root / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, root / link)
    return root


def _jit_box(out: Path, rel: str, toolkit: str, host: str) -> Path:
    from stackcheck.probes.jit import probe_jit
    from stackcheck.readers.fsview import HostView

    doc = json.loads(_box(out, rel, None).read_text())
    facts = doc["facts"]
    major, minor = toolkit.split(".")[:2]
    home = f"/usr/local/cuda-{major}.{minor}"
    tk = {"path": home, "version": toolkit, "source": "/usr/local/cuda", "nvcc": f"{home}/bin/nvcc"}
    facts["cuda_toolkits"] = [{**tk, "active_for_build": True, "active_for_torch": False}]
    facts["jit"] = probe_jit(facts, HOSTS[host]["env"], HostView(str(_root(out, toolkit, host))))
    path = out / "boxes" / f"jit-{rel}-{toolkit}-{host}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


JIT_KEYS = ("cxx_found", "cxx_quoted_found", "nvcc_host_found", "nvcc_host", "nvcc_host_reason", "nvcc_host_gnu_major",
            "nvcc_host_gnu_max", "nvcc_host_gnu_supported")  # fmt: skip


def jit_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    releases = [r for r in final_releases() if (0, 5, 9) <= _v(r) <= (0, 5, 23)]
    rows: list[dict[str, Any]] = []
    for toolkit in TOOLKITS:
        for host in HOSTS:
            for rel in releases:
                path = _jit_box(out, rel, toolkit, host)
                line = ["python3", "-m", "sglang.launch_server", "--model-path", str(out / "models" / "llama3")]
                args = ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line, "--tp", "1"]
                if stackcheck_json_or_error(args).get("decision") == "allow":
                    jit = json.loads(path.read_text())["facts"]["jit"]
                    probe = {k: jit[k] for k in JIT_KEYS if k in jit}
                    base = {"pop": "j", "sglang": rel, "toolkit": toolkit, "host": host}
                    rows.append({**base, "env": HOSTS[host]["env"], "jit": probe})
            print(f"j {toolkit} {host}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


_A100 = ("NVIDIA A100-SXM4-80GB", "8.0", "x86_64", 8)
_H100 = ("NVIDIA H100 80GB HBM3", "9.0", "x86_64", 8)
_B200 = ("NVIDIA B200", "10.0", "x86_64", 8)
_PRO6000 = ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", "x86_64", 8)
MLA_BACKENDS = [
    "flashinfer",
    "fa3",
    "fa4",
    "flashmla",
    "triton",
    "trtllm_mla",
    "cutlass_mla",
    "cutedsl_mla",
    "tokenspeed_mla",
]


def dcp_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"dsr1": DEEPSEEK_R1, "dsv2lite": DEEPSEEK_V2_LITE})
    table: dict[str, tuple[str, str]] = {}
    for model in ("dsr1", "dsv2lite"):
        table[f"{model}|none"] = (model, "--dcp-size 2")
        for side in ("", "decode-", "prefill-"):
            for b in MLA_BACKENDS:
                table[f"{model}|{side}{b}"] = (model, f"--dcp-size 2 --{side}attention-backend {b}")
    launches = model_flag_launches(table, "--tp", "8")
    boxes = {"a100": _A100, "h100": _H100, "b200": _B200, "pro6000": _PRO6000}
    releases = [r for r in final_releases() if (0, 5, 15) <= _v(r) <= (0, 5, 23)]
    return gate_allow_rows(out, boxes, releases, _box, launches, pop="d")


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    draw(out, SEED, [(6, jit_rows(out)), (4, dcp_rows(out))])


if __name__ == "__main__":
    main()
