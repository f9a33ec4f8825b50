"""The forty-sixth fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md, "Forty-sixth
sample"). Run:

    PYTHONPATH=.:tests python bench/factcheck46_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the eleventh session's merges (git log 4f8873de..422d13dc -- manifests
stackcheck): the NCCL CUDA-build rule nccl-so-path-cuda-driver and symm-mem-nccl-so-path-same-nccl with the CUDA major
(jit.nccl_so_path_cuda / _cuda_major), collect2's ld in the link gcc's own prefix and at its --with-ld, `python -P` on
Python 3.10, `gate --root`'s model path and Hugging Face cache, torchao's fbgemm load ranges (fbgemm_loading),
lmcache-cupy-cuda13-driver, transformers 4.55's hub kernels per served architecture beside kernels, Mooncake local
builds and packages.NAME.candidates, NIXL's libssl.so.3 / libcrypto.so.3; and toward rows no sample has drawn (a row
equal to one of an earlier sample's bench/factcheck*_drawn.json is left out).

(d) `gate` of `--tp 2` with and without `--enable-symm-mem` (Llama 3) on tests/gate_cli.nccl_named_box
    (h200-newest, the allocator's build in place, torch's nvidia-nccl wheel cu13 or cu12 at 2.27.7) for D_RELEASES,
    SGLANG_NCCL_SO_PATH naming a library of our own whose string says "NCCL version 2.27.7+cudaC" (C of D_CUDA), the
    driver at each CUDA of D_DRIVER: one row per allow;
(l) `gate` of `--tp 2 --enable-symm-mem` on tests/gate_cli.allocator_box at L_RELEASES with the libcudart_so keys of
    the real probe (nccl_link) over a root whose CUDA 13.0 home's libcudart.so is a linker script (L_SCRIPTS) and whose
    link compiler is CXX of L_CXX (the system g++-12, a gcc-toolset-13 g++, a conda c++), its own linker as L_OWN_LD
    (none, binutils 2.35 / 2.41 in its tooldir, a real-ld in lib/gcc) and its configure line with or without
    --with-ld (L_WITH_LD): one row per allow;
(y) `gate` of `PYTHON -OPTIONS -m sglang.launch_server --tp 1` on factcheck27's H200 box with facts.python.version of
    Y_PYTHON, the interpreter words of Y_LINES, releases 0.5.9 / 0.5.23: one row per allow;
(r) `gate --root ROOT --host-facts tests/cases/writeup-after/facts.json` of `--tp 1` with the model path of R_CASES
    (absolute, relative, a repository id in the root's HF cache under ~, HF_HOME / HF_HUB_CACHE in the command's env
    prefix, an absolute symbolic link inside the root), ROOT tests/root_boxes.serving_root with those models, with and
    without an /etc/passwd naming uid 0's home: one row per model the gate found (its path, how, its architectures;
    the skeleton root's launch is refused for its missing packages, so the row is the model reading, not an allow);
(t) `gate` of `--tp 1` with `--torchao-config C` (none, int8wo, int4wo, fp8wo) on factcheck41's torchao box with
    torchao of T_TORCHAO (releases, pre-releases, dev and local builds about the fbgemm ranges), torch of T_TORCH,
    fbgemm-gpu-genai of T_FBGEMM, transformers 4.57.1, releases 0.5.9 / 0.5.16: one row per allow;
(c) check lmcache-requires (evaluate_check, as tests/verdicts/test_lmcache_cupy_driver.py does) over LMCache of
    C_LMCACHE, cupy of C_CUPY, the driver's CUDA of C_DRIVER, torch's CUDA of C_TORCH: one row per distinct ok verdict;
(h) `gate` of `--tp 1` on factcheck27's H200 box at H_RELEASES with transformers of H_TRANSFORMERS, kernels of
    H_KERNELS and a config.json of each architecture of H_ARCHS: one row per allow;
(m) `gate` of `--tp 8 --disaggregation-mode prefill` on factcheck27's H200 box at 0.5.9 / 0.5.23 with Mooncake as
    M_MOONCAKE (local builds, editable, source_install, candidates), torch relabelled CUDA 12.9 / 13.0, Mooncake's
    system libraries found, libcudart.so.12 found or not: one row per allow;
(x) `gate` of `--tp 8 --disaggregation-mode prefill --disaggregation-transfer-backend nixl` at 0.5.12 / 0.5.23 with
    nixl of X_NIXL and its CUDA wheel, OpenSSL 3 as X_SSL: one row per allow.

Draw: random.Random(20270115); per population the rows sorted by JSON text, shuffled, the first k (d 3, l 1, y 2, r 2,
t 2, c 2, h 2, m 2, x 2), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import copy
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck27_draw import _box
from factcheck41_draw import _tao_box
from factcheck42_draw import _write
from factcheck_draw import ROOT, draw_undrawn, gate_line, stackcheck_json_or_error, write_models
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, NIXL_SYSTEM_LIBS

SEED = 20270115
SITE = "/opt/venv/lib/python3.12/site-packages"


def _pkg(version: str, **extra: Any) -> dict[str, Any]:
    return {"installed": True, "version": version, "dist_version": version, "location": SITE, **extra}


def _allowed(args: list[str]) -> bool:
    return stackcheck_json_or_error(args).get("decision") == "allow"


# ---- (d) SGLANG_NCCL_SO_PATH's CUDA build and the driver ----------------------------------------------------------

D_RELEASES = ["0.5.1", "0.5.8", "0.5.17", "0.5.23"]
D_WHEELS = ["nvidia-nccl-cu13", "nvidia-nccl-cu12"]
D_CUDA = ["12.2", "12.9", "13.0", "13.1"]
D_DRIVER = ["12.4", "12.9", "13.0", "13.2"]


def nccl_cuda_rows(out: Path) -> list[dict[str, Any]]:
    from gate_cli import nccl_named_box

    rows: list[dict[str, Any]] = []
    for rel in D_RELEASES:
        for wheel in D_WHEELS:
            for cuda in D_CUDA:
                for driver in D_DRIVER:
                    for flags in ((), ("--enable-symm-mem",)):
                        where = out / "d" / f"{rel}-{wheel}-{cuda}-{driver}-{len(flags)}"
                        where.mkdir(parents=True, exist_ok=True)
                        rc, _, _ = nccl_named_box(where, rel, "2.27.7", "2.27.7", cuda, "--tp", "2", *flags,
                                                  wheel=wheel, driver_cuda=driver)  # fmt: skip
                        if rc == 0:
                            base = {"pop": "d", "sglang": rel, "torch_nccl": f"{wheel} 2.27.7", "nccl_cuda": cuda}
                            rows.append({**base, "driver_cuda": driver, "flags": " ".join(("--tp", "2", *flags))})
        print(f"d {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (l) collect2's ld in the link gcc's own prefix, --with-ld ----------------------------------------------------

L_RELEASES = ["0.5.5", "0.5.13", "0.5.23"]
L_HOME = "/usr/local/cuda-13.0"
L_SCRIPTS = {
    "input-bare-13": "INPUT(libcudart.so.13.0.96)",
    "as-needed-bare-13": "INPUT(AS_NEEDED(libcudart.so.13.0.96))",
    "group-abs-13": "GROUP ( {lib}/libcudart.so.13.0.96 )",
}
_TOOLSET = "opt/rh/gcc-toolset-13/root/usr"
_CONDA = "opt/conda/envs/srv"
L_CXX = {"system-g++-12": "g++-12", "toolset-13": f"/{_TOOLSET}/bin/g++", "conda": "x86_64-conda-linux-gnu-c++"}
L_OWN_LD = ["none", "tooldir-2.35", "tooldir-2.41", "real-ld-2.38"]
L_WITH_LD = [None, "/opt/binutils-2.41/bin/ld", "/opt/binutils-2.35/bin/ld", "/nowhere/bin/ld"]


def _prefix(cxx: str) -> tuple[str, str, str] | None:
    if cxx == "toolset-13":
        return _TOOLSET, "x86_64-redhat-linux", "13"
    if cxx == "conda":
        return _CONDA, "x86_64-conda-linux-gnu", "13.3.0"
    return None


def _ld_root(out: Path, script: str, cxx: str, own: str, with_ld: str | None) -> Path:
    from elfwriter import build_so, write_so
    from gate_cli import gnu_ld, touch_exe

    root = out / "lroots" / f"{script}--{cxx}--{own}--{L_WITH_LD.index(with_ld)}"
    if root.exists():
        return root
    lib = root / L_HOME.lstrip("/") / "lib64"
    lib.mkdir(parents=True)
    write_so(lib / "libcudart.so.13.0.96", defined=["cudaGetDeviceCount"], soname="libcudart.so.13")
    os.symlink("libcudart.so.13.0.96", lib / "libcudart.so.13")
    (lib / "libcudart.so").write_text(L_SCRIPTS[script].replace("{lib}", f"{L_HOME}/lib64"))
    gnu_ld(root / "usr/bin/ld", "2.40", "(GNU Binutils)")
    touch_exe(root / "usr/bin/g++-12")
    (root / "usr/lib/gcc/x86_64-linux-gnu/12").mkdir(parents=True)
    gnu_ld(root / "opt/binutils-2.41/bin/ld", "2.41", "(GNU Binutils)")
    gnu_ld(root / "opt/binutils-2.35/bin/ld", "2.35.2", "(GNU Binutils)")
    found = _prefix(cxx)
    if found is not None:
        prefix, triple, ver = found
        name = "bin/g++" if cxx == "toolset-13" else "bin/x86_64-conda-linux-gnu-c++"
        line = b"\0../configure --prefix=/" + prefix.encode()
        line += (b" --with-ld=" + with_ld.encode() if with_ld else b"") + b"\0"
        touch_exe(root / prefix / name, build_so(needed=["libc.so.6"]) + line)
        (root / prefix / f"libexec/gcc/{triple}/{ver}").mkdir(parents=True)
        (root / prefix / f"lib/gcc/{triple}/{ver}").mkdir(parents=True)
        if own.startswith("tooldir-"):
            v = own.split("-")[1]
            gnu_ld(root / prefix / f"{triple}/bin/ld", v + (".2" if v == "2.35" else ""), "(GNU Binutils)")
        elif own == "real-ld-2.38":
            gnu_ld(root / prefix / f"lib/gcc/{triple}/{ver}/real-ld", "2.38", "(GNU Binutils)")
    return root


def ld_rows(out: Path) -> list[dict[str, Any]]:
    from gate_cli import allocator_box

    from stackcheck.probes.jit import nccl_link
    from stackcheck.readers.fsview import HostView

    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for script in L_SCRIPTS:
        for cxx, cxx_env in L_CXX.items():
            for own in L_OWN_LD:
                for with_ld in L_WITH_LD:
                    if _prefix(cxx) is None and (own != "none" or with_ld is not None):
                        continue
                    root = _ld_root(out, script, cxx, own, with_ld)
                    path_env = "/usr/bin" if cxx != "conda" else f"/{_CONDA}/bin:/usr/bin"
                    env = {"PATH": path_env, "CXX": cxx_env}
                    got = nccl_link(env, HostView(str(root)), L_HOME, True, "x86_64")
                    read = {k: v for k, v in got.items() if k.startswith("libcudart_so") and not k.endswith("dirs")}
                    for rel in L_RELEASES:
                        where = out / "lboxes" / f"{root.name}--{rel}"
                        where.mkdir(parents=True, exist_ok=True)
                        path = allocator_box(where, rel)
                        doc = json.loads(path.read_text())
                        doc["facts"]["jit"].update(read)
                        path.write_text(json.dumps(doc))
                        if _allowed(gate_line(out, path, "--tp", "2", "--enable-symm-mem")):
                            row = {"pop": "l", "sglang": rel, "script": script, "cxx": cxx, "own_ld": own,
                                   "with_ld": with_ld, "jit": read}  # fmt: skip
                            key = json.dumps(row, sort_keys=True)
                            if key not in seen:
                                seen.add(key)
                                rows.append(row)
        print(f"l {script}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (y) python -P ------------------------------------------------------------------------------------------------

Y_PYTHON = ["3.10.13", "3.11.0a7", "3.11.0b1", "3.11.0", "3.12.3", "3.13.1", "3.14.0"]
Y_LINES = {
    "python -P": ["python", "-P"],
    "python3 -IP": ["python3", "-IP"],
    "python -X dev -P": ["python", "-X", "dev", "-P"],
    "python -W ignore -P": ["python", "-W", "ignore", "-P"],
    "python -WP": ["python", "-WP"],
    "python -OPu": ["python", "-OPu"],
    "python -I": ["python", "-I"],
    "env PYTHONSAFEPATH=1 python": ["env", "PYTHONSAFEPATH=1", "python"],
}


def python_p_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.9", "0.5.23"):
        for version in Y_PYTHON:
            doc = json.loads(_box(out, rel, None).read_text())
            doc["facts"]["python"] = {**(doc["facts"].get("python") or {}), "version": version}
            path = _write(out, doc, f"py46-{rel}-{version}.json")
            for name, words in Y_LINES.items():
                line = [*words, "-m", "sglang.launch_server", "--model-path", str(out / "models/llama3"), "--tp", "1"]
                if _allowed(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]):
                    rows.append({"pop": "y", "sglang": rel, "python": version, "line": name})
        print(f"y {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (r) gate --root: the model path and the HF cache inside the root -----------------------------------------------

_COMMIT = "0123456789abcdef0123456789abcdef01234567"
R_CASES: dict[str, tuple[list[str], str]] = {
    "absolute": ([], "/models/m"),
    "relative-from-slash": ([], "models/m"),
    "repo-id-root-home": ([], "org/in-root-home"),
    "repo-id-passwd-home": ([], "org/in-srv-home"),
    "hf-home-prefix": (["env", "HF_HOME=/data/hf"], "org/in-data"),
    "hf-hub-cache-prefix": (["env", "HF_HUB_CACHE=/data/hub"], "org/in-hub"),
    "absolute-link-inside": ([], "/models/link"),
    "relative-link-inside": ([], "/models/rlink"),
}


def _cached(hub: Path, repo: str) -> None:
    base = hub / ("models--" + repo.replace("/", "--"))
    (base / "refs").mkdir(parents=True, exist_ok=True)
    (base / "refs/main").write_text(_COMMIT)
    (base / "snapshots" / _COMMIT).mkdir(parents=True, exist_ok=True)
    (base / "snapshots" / _COMMIT / "config.json").write_text(json.dumps(LLAMA3))


def _serving_root(top: Path, passwd: bool) -> Path:
    from root_boxes import serving_root

    root = serving_root(top)
    (root / "models/m").mkdir(parents=True)
    (root / "models/m/config.json").write_text(json.dumps(LLAMA3))
    (root / "srv/m").mkdir(parents=True)
    (root / "srv/m/config.json").write_text(json.dumps(LLAMA3))
    os.symlink("/srv/m", root / "models/link")
    os.symlink("../srv/m", root / "models/rlink")
    _cached(root / "root/.cache/huggingface/hub", "org/in-root-home")
    _cached(root / "home/srv/.cache/huggingface/hub", "org/in-srv-home")
    _cached(root / "data/hf/hub", "org/in-data")
    _cached(root / "data/hub", "org/in-hub")
    if passwd:
        (root / "etc").mkdir(exist_ok=True)
        (root / "etc/passwd").write_text("root:x:0:0:root:/home/srv:/bin/sh\n")
    return root


def root_rows(out: Path) -> list[dict[str, Any]]:
    host = ROOT / "tests/cases/writeup-after/facts.json"
    rows: list[dict[str, Any]] = []
    for passwd in (False, True):
        root = out / "roots" / f"passwd-{int(passwd)}"
        if not root.exists():
            _serving_root(root, passwd)
        for case, (prefix, model) in R_CASES.items():
            line = [*prefix, "python3", "-m", "sglang.launch_server", "--model-path", model, "--tp", "1"]
            args = ["gate", "--host-facts", str(host), "--root", str(root), "--dry-run", "--format", "json"]
            doc = stackcheck_json_or_error([*args, "--", *line])
            models = [m for m in (doc.get("preflight") or {}).get("models") or [] if m.get("role") == "model"]
            if models and models[0].get("path"):
                found = [models[0]["path"], models[0].get("found_by"), models[0].get("architectures")]
                rows.append({"pop": "r", "case": case, "passwd_home": passwd, "model_path": model, "read": found})
        print(f"r passwd={passwd}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (t) torchao's fbgemm load ranges -----------------------------------------------------------------------------

T_RELEASES = ["0.5.9", "0.5.16"]
T_TORCHAO = ["0.13.0", "0.13.0rc2", "0.14.0", "0.14.1rc1", "0.14.1", "0.14.1+cu128", "0.15.0rc1",
             "0.15.0.dev20251001+cu128", "0.15.0", "0.15.0+git1a2b", "0.16.0.dev1", "0.16.0"]  # fmt: skip
T_TORCH = ["2.9.1", "2.10.0"]
T_FBGEMM = [None, "1.4.0"]
T_CONFIGS = ["", "int8wo", "int4wo", "fp8wo"]


def torchao_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in T_RELEASES:
        for torchao in T_TORCHAO:
            for torch in T_TORCH:
                for fbgemm in T_FBGEMM:
                    doc = json.loads(_tao_box(out, rel, torchao, torch, "4.57.1").read_text())
                    doc["facts"]["packages"]["fbgemm-gpu-genai"] = _pkg(fbgemm) if fbgemm else {"installed": False}
                    path = _write(out, doc, f"tao46-{rel}-{torchao}-{torch}-{fbgemm}.json")
                    for config in T_CONFIGS:
                        flags = ("--tp", "1", *(("--torchao-config", config) if config else ()))
                        if _allowed(gate_line(out, path, *flags)):
                            base = {"pop": "t", "sglang": rel, "torchao": torchao, "torch": torch}
                            rows.append({**base, "fbgemm-gpu-genai": fbgemm, "config": config})
        print(f"t {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (c) lmcache-cupy-cuda13-driver -------------------------------------------------------------------------------

C_LMCACHE = ["0.3.12", "0.4.4", "0.4.5", "0.5.6"]
C_CUPY: dict[str, dict[str, Any]] = {
    "none-listed": {},
    "cuda13x-14.2.0": {"cupy-cuda13x": {"installed": True, "version": "14.2.0"}, "cupy-cuda12x": {"installed": False}},
    "cuda12x-13.6.0": {"cupy-cuda12x": {"installed": True, "version": "13.6.0"}, "cupy-cuda13x": {"installed": False}},
    "both": {"cupy-cuda12x": {"installed": True, "version": "13.6.0"},
             "cupy-cuda13x": {"installed": True, "version": "14.2.0"}},
    "neither": {"cupy-cuda12x": {"installed": False}, "cupy-cuda13x": {"installed": False}},
}  # fmt: skip
C_DRIVER = ["12.4", "12.8", "13.0", "13.1", None]
C_TORCH = [("2.8.0+cu128", "12.8"), ("2.9.1+cu130", "13.0")]


def lmcache_rows(out: Path) -> list[dict[str, Any]]:
    from stackcheck.assembly.pipeline import load_manifests
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_check

    manifests = load_manifests([])
    check = next(c for c in manifests.checks if c["id"] == "lmcache-requires")
    seen: dict[str, dict[str, Any]] = {}
    for lmcache in C_LMCACHE:
        for cupy, cupy_pkgs in C_CUPY.items():
            for driver in C_DRIVER:
                for torch, torch_cuda in C_TORCH:
                    packages: dict[str, Any] = {
                        "sglang": {"installed": True, "version": "0.5.9"},
                        "torch": {"installed": True, "version": torch, "cuda": torch_cuda},
                        "lmcache": {"installed": True, "version": lmcache},
                        "transformers": {"installed": True, "version": "5.4.0"},
                        **copy.deepcopy(cupy_pkgs),
                    }
                    facts: dict[str, Any] = {"packages": packages, "packages_complete": True}
                    if driver is not None:
                        facts["driver"] = {"version": "570.172.08" if driver < "13" else "580.95.05", "cuda": driver}
                    got = dict(evaluate_check(check, Context(facts=facts, manifests=manifests)))  # type: ignore[arg-type]
                    if got.get("status") != "ok":
                        continue
                    reasons = [[r.get("rule"), r.get("observed"), r.get("result")] for r in got.get("reasons") or []]
                    row = {"pop": "c", "lmcache": lmcache, "cupy": cupy, "driver_cuda": driver, "torch": torch,
                           "reasons": reasons}  # fmt: skip
                    seen.setdefault(json.dumps(row, sort_keys=True), row)
    print(f"c: {len(seen)}", file=sys.stderr, flush=True)
    return list(seen.values())


# ---- (h) transformers 4.55's hub kernels per served architecture ---------------------------------------------------

H_RELEASES = ["0.5.1", "0.5.2"]
H_TRANSFORMERS = ["4.55.0", "4.55.2", "4.55.4", "4.56.1"]
H_KERNELS = [None, "0.14.1", "0.15.1", "0.16.0"]
H_ARCHS = {
    "LlamaForCausalLM": "llama", "Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3_moe", "MistralForCausalLM": "mistral", "MixtralForCausalLM": "mixtral",
    "Gemma3ForCausalLM": "gemma3_text", "Phi3ForCausalLM": "phi3", "GptOssForCausalLM": "gpt_oss",
    "Glm4ForCausalLM": "glm4", "Qwen2VLForConditionalGeneration": "qwen2_vl", "InternLM2ForCausalLM": "internlm2",
    "Olmo2ForCausalLM": "olmo2", "GraniteForCausalLM": "granite",
}  # fmt: skip


def hub_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {f"h-{a}": {**LLAMA3, "architectures": [a], "model_type": t} for a, t in H_ARCHS.items()})
    rows: list[dict[str, Any]] = []
    for rel in H_RELEASES:
        for tf in H_TRANSFORMERS:
            for kernels in H_KERNELS:
                doc = json.loads(_box(out, rel, None).read_text())
                packages = doc["facts"]["packages"]
                packages["transformers"] = _pkg(tf)
                packages["kernels"] = _pkg(kernels) if kernels else {"installed": False}
                path = _write(out, doc, f"hub46-{rel}-{tf}-{kernels}.json")
                for arch in H_ARCHS:
                    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(out / "models" / f"h-{arch}")]
                    args = ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line, "--tp", "1"]
                    if _allowed(args):
                        rows.append({"pop": "h", "sglang": rel, "transformers": tf, "kernels": kernels, "arch": arch})
        print(f"h {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (m) Mooncake local builds and candidates ---------------------------------------------------------------------

M_MOONCAKE: dict[str, dict[str, Any]] = {
    "0.3.6": {"version": "0.3.6"},
    "0.3.6+cu128": {"version": "0.3.6+cu128"},
    "0.3.5-editable": {"version": "0.3.5", "editable": True},
    "0.3.6.post1-dir": {"version": "0.3.6.post1", "source_install": "dir"},
    "0.3.6-vcs": {"version": "0.3.6", "source_install": "vcs"},
    "0.3.13.post1-dir": {"version": "0.3.13.post1", "source_install": "dir"},
    "0.3.8+local": {"version": "0.3.8+local"},
    "candidates-0.3.5-0.3.6.post1": {"version": None, "candidates": ["0.3.5", "0.3.6.post1"]},
    "candidates-0.3.6-0.3.8": {"version": None, "candidates": ["0.3.6", "0.3.8"]},
    "candidates-0.3.8-0.3.13.post1": {"version": None, "candidates": ["0.3.8", "0.3.13.post1"]},
    "candidates-given-0.3.6": {"version": "0.3.6", "candidates": ["0.3.8"]},
}
M_TORCH_CUDA = ["12.9", "13.0"]
M_CUDART12 = [None, "/usr/local/cuda-12.9/lib64/libcudart.so.12"]


def mooncake_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.9", "0.5.23"):
        for name, spec in M_MOONCAKE.items():
            for cuda in M_TORCH_CUDA:
                for cudart in M_CUDART12:
                    doc = json.loads(_box(out, rel, None).read_text())
                    facts = doc["facts"]
                    pkg: dict[str, Any] = {"installed": True, "location": SITE}
                    for key, value in spec.items():
                        if value is not None:
                            pkg[key] = value
                    if spec.get("version"):
                        pkg["dist_version"] = spec["version"]
                    facts["packages"]["mooncake-transfer-engine"] = pkg
                    torch = facts["packages"]["torch"]
                    tag = "cu" + cuda.replace(".", "")
                    torch.update(cuda=cuda, variant=tag, version=f"{torch['dist_version']}+{tag}")
                    facts.setdefault("cuda_libs", {}).update(MOONCAKE_SYSTEM_LIBS)
                    facts["cuda_libs"]["libcudart.so.12"] = cudart
                    path = _write(out, doc, f"moon46-{rel}-{name}-{cuda}-{M_CUDART12.index(cudart)}.json")
                    if _allowed(gate_line(out, path, "--tp", "8", "--disaggregation-mode", "prefill")):
                        base = {"pop": "m", "sglang": rel, "mooncake": name, "torch_cuda": cuda}
                        rows.append({**base, "libcudart.so.12": cudart})
        print(f"m {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (x) NIXL's OpenSSL 3 -----------------------------------------------------------------------------------------

X_NIXL: dict[str, tuple[str, str | None, str | None]] = {
    "0.6.1": ("0.6.1", None, None),
    "0.7.0": ("0.7.0", None, None),
    "0.7.1+cu12": ("0.7.1", "0.7.1", None),
    "0.7.1+cu13": ("0.7.1", None, "0.7.1"),
    "0.7.1+both": ("0.7.1", "0.7.1", "0.7.1"),
    "0.8.0+cu12": ("0.8.0", "0.8.0", None),
    "0.6.0": ("0.6.0", None, None),
}
X_SSL: dict[str, dict[str, str | None]] = {
    "found": dict(NIXL_SYSTEM_LIBS),
    "no-libssl": {**NIXL_SYSTEM_LIBS, "libssl.so.3": None},
    "not-probed": {},
    "other-dir": {n: f"/usr/lib64/{n}" for n in NIXL_SYSTEM_LIBS},
}
NIXL = ("--tp", "8", "--disaggregation-mode", "prefill", "--disaggregation-transfer-backend", "nixl")


def nixl_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.12", "0.5.23"):
        for name, (nixl, cu12, cu13) in X_NIXL.items():
            for ssl, libs in X_SSL.items():
                doc = json.loads(_box(out, rel, None).read_text())
                packages = doc["facts"]["packages"]
                packages.update({"nixl": _pkg(nixl), "mooncake-transfer-engine": {"installed": False},
                                 "nixl-cu12": _pkg(cu12) if cu12 else {"installed": False},
                                 "nixl-cu13": _pkg(cu13) if cu13 else {"installed": False}})  # fmt: skip
                cuda_libs = doc["facts"].setdefault("cuda_libs", {})
                for lib in NIXL_SYSTEM_LIBS:
                    cuda_libs.pop(lib, None)
                cuda_libs.update(MOONCAKE_SYSTEM_LIBS)
                cuda_libs.update(libs)
                path = _write(out, doc, f"nixl46-{rel}-{name}-{ssl}.json")
                if _allowed(gate_line(out, path, *NIXL)):
                    rows.append({"pop": "x", "sglang": rel, "nixl": name, "ssl": ssl})
        print(f"x {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    pops = [
        (3, nccl_cuda_rows(out)),
        (1, ld_rows(out)),
        (2, python_p_rows(out)),
        (2, root_rows(out)),
        (2, torchao_rows(out)),
        (2, lmcache_rows(out)),
        (2, hub_rows(out)),
        (2, mooncake_rows(out)),
        (2, nixl_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck46_drawn.json")


if __name__ == "__main__":
    main()
