"""The fifty-second fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md, "Fifty-second
sample"). Run:

    PYTHONPATH=.:tests python bench/factcheck52_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the fourteenth session's new rules where the gate allows (git log
fe036d1a..fd70b9a0 -- manifests stackcheck/launch): launches behind wrappers (irobust4, irev70, imend3), NIXL
disaggregation on CUDA 12 / 13 boxes (igap50), LMCache launches (igap47, igap49), transformers 5 beside SGLang 0.5.10+
(ifc49's rope rule stops at 0.5.9), SGLang 0.5.12+'s custom all-reduce (ifc51), 0.5.23's sgl-flash-mla / quack-kernels
/ tilelang (igap48) and post releases against the `==V` rules (irev69). A row equal to one an earlier sample drew is
left out.

Boxes: factcheck49_draw._box (tests/cases/h200-newest with the release's pins, the extra packages, libnuma; 8 H200).

(w) `gate` of Llama 3 behind each wrapper prefix of W_PREFIXES with `--tp 2` / `--tp 1` at 0.5.13 / 0.5.23: one row per
    allow;
(x) `gate --tp 8` of `--disaggregation-mode prefill|decode --disaggregation-transfer-backend nixl` (Llama 3) at 0.5.16
    / 0.5.23 with torch relabelled CUDA 12.9 / 13.0, nixl of X_NIXL, nixl-cu12 / nixl-cu13 of X_BACKENDS (at nixl's
    version) and libcudart.so.12 found / absent / not looked for (the NIXL system libraries found): one row per allow;
(l) `gate --tp 2` of `--enable-lmcache` with the flags of L_FLAGS behind the env prefixes of L_ENV at 0.5.13 / 0.5.17
    / 0.5.21 / 0.5.23 with LMCache 0.5.6 and transformers 5.4.0: one row per allow;
(t) `gate --tp 8` of the models of T_MODELS (rope fields as published models carry them) at T_RELEASES with transformers
    of T_TF: one row per allow;
(a) `gate --tp N` (Llama 3) on N of the H200s (N in 2, 4, 8) with their pairs on NVLink / a PCIe switch / the host
    bridge (peer access on), behind the prefixes of A_ENV, at 0.5.11-0.5.23: one row per allow whose custom-allreduce
    is ok;
(d) `gate` of the launches of D_LAUNCHES at 0.5.17 / 0.5.19 / 0.5.23 on the H200s (9.0) and the same box with B200s
    (10.0), with the launch's package as D_PACKAGES (Python 3.10 for the MiniCPM launches): one row per allow;
(p) `audit` at every post release PyPI lists from 0.5.3.post1 to 0.5.15.post1 (the final release's box with the post
    release's version; the gate refuses every launch there: sglang-pins does not know them) on the H200s and the same
    box with B200s: one row per distinct (GPU, ok feature or check, its reasons' rule / observed / result), labelled
    with the first post release that gives it.

Draw: random.Random(20270121); per population the rows sorted by JSON text, shuffled, the first k (w 3, x 3, l 3, t 2,
a 2, d 3, p 2), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck47_draw import _pkg
from factcheck49_draw import _box
from factcheck_draw import draw_undrawn, stackcheck_json_or_error, write_models
from factcheck_draw import write_box as _write
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V32, LLAMA3, MOONCAKE_SYSTEM_LIBS, NIXL_SYSTEM_LIBS, QWEN3_MOE

SEED = 20270121
# configs written here in the shape of the published ones (the keys the gate and SGLang's rope code read)
LLAMA3_ROPE: dict[str, Any] = {
    **LLAMA3, "rope_theta": 500000.0, "max_position_embeddings": 131072,
    "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192},
}  # fmt: skip
R1_ROPE: dict[str, Any] = {
    **DEEPSEEK_R1, "rope_theta": 10000, "max_position_embeddings": 163840,
    "rope_scaling": {"type": "yarn", "factor": 40, "beta_fast": 32, "beta_slow": 1, "mscale": 1.0,
                     "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096},
}  # fmt: skip
QWEN3_MOE_ROPE: dict[str, Any] = {**QWEN3_MOE, "rope_theta": 1000000.0, "max_position_embeddings": 40960}
DSV4: dict[str, Any] = {
    "architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4", "hidden_size": 7168,
    "num_attention_heads": 128, "num_key_value_heads": 1, "index_topk": 1024,
}  # fmt: skip
MINICPM_SALA: dict[str, Any] = {
    "architectures": ["MiniCPMSALAForCausalLM"], "model_type": "minicpm_sala", "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
    "sparse_config": {"kernel_size": 32, "kernel_stride": 16, "block_size": 64, "window_size": 2048, "topk": 64},
}  # fmt: skip
MODELS = {
    "llama3": LLAMA3, "llama3-rope": LLAMA3_ROPE, "deepseek-r1-rope": R1_ROPE, "qwen3-moe-rope": QWEN3_MOE_ROPE,
    "deepseek-v32": DEEPSEEK_V32, "deepseek-r1": DEEPSEEK_R1, "dsv4": DSV4, "minicpm-sala": MINICPM_SALA,
    }  # fmt: skip
LAUNCH = ["python3", "-m", "sglang.launch_server"]


def _line(out: Path, path: Path, prefix: list[str], model: str, *flags: str) -> list[str]:
    line = [*prefix, *LAUNCH, "--model-path", str(out / "models" / model), *flags]
    return ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]


def _gate(args: list[str]) -> dict[str, Any]:
    return stackcheck_json_or_error(args)


def _features(doc: dict[str, Any]) -> dict[str, str]:
    return {str(f.get("feature")): str(f.get("status")) for f in doc.get("features") or []}


# ---- (w) wrappers before the launch -------------------------------------------------------------------------------

_PATH = "PATH=/usr/local/bin:/usr/bin:/bin"
W_PREFIXES: dict[str, list[str]] = {
    "sudo-env-i": ["sudo", "env", "-i", _PATH],
    "sudo-u-env-i-home": ["sudo", "-u", "svc", "env", "-i", _PATH, "HOME=/home/svc"],
    "sudo-env-i-ld": ["sudo", "env", "-i", _PATH, "LD_LIBRARY_PATH=/usr/local/cuda-13.0/lib64"],
    "sudo-env-i-cuda-home": ["sudo", "env", "-i", _PATH, "CUDA_HOME=/usr/local/cuda-13.0"],
    "doas-env-i": ["doas", "env", "-i", _PATH],
    "doas-env-i-env": ["doas", "env", "-i", _PATH, "env", "NCCL_DEBUG=INFO"],
    "sudo-nohup-env-i": ["sudo", "nohup", "env", "-i", _PATH],
    "env-C": ["env", "-C", "/srv"],
    "env-C-nested": ["env", "-C", "/srv", "env", "-C", "run"],
    "env-C-i": ["env", "-C", "/srv", "-i", _PATH],
    "nohup": ["nohup"],
    "nohup-env": ["nohup", "env", "CUDA_VISIBLE_DEVICES=0,1"],
    "nohup-timeout": ["nohup", "timeout", "600"],
    "timeout": ["timeout", "600"],
    "timeout-k": ["timeout", "-k", "10", "600"],
    "timeout-signal": ["timeout", "--signal=KILL", "1h"],
    "timeout-env-ld": ["timeout", "600", "env", "LD_LIBRARY_PATH=/opt/nccl/lib"],
    "systemd-run-scope": ["systemd-run", "--scope"],
    "systemd-run-user-scope": ["systemd-run", "--user", "--scope"],
    "systemd-run-scope-setenv": ["systemd-run", "--scope", "--setenv=LD_LIBRARY_PATH=/opt/nccl/lib"],
    "systemd-run-scope-env": ["systemd-run", "--scope", "env", "NCCL_DEBUG=INFO"],
    "systemd-run-scope-unit": ["systemd-run", "--scope", "--unit=sglang", "-p", "MemoryMax=200G"],
    "env-i-no-path": ["env", "-i"],
}
W_FLAGS: dict[str, tuple[str, ...]] = {"tp2": ("--tp", "2"), "tp1": ("--tp", "1")}


def wrapper_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.13", "0.5.23"):
        path = _box(out, rel, None)
        for name, prefix in W_PREFIXES.items():
            for flags, words in W_FLAGS.items():
                if _gate(_line(out, path, prefix, "llama3", *words)).get("decision") == "allow":
                    rows.append({"pop": "w", "sglang": rel, "prefix": name, "flags": flags})
        print(f"w {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (x) NIXL disaggregation on CUDA 12 / 13 boxes ----------------------------------------------------------------

X_NIXL = ["0.6.1", "0.7.1", "1.0.1", "1.1.0", "1.5.2"]
X_BACKENDS: dict[str, tuple[bool, bool]] = {"cu12": (True, False), "cu13": (False, True), "both": (True, True),
                                            "none": (False, False)}  # fmt: skip
X_CUDART: dict[str, str | None] = {"found": "/usr/local/cuda-12.9/lib64/libcudart.so.12", "absent": None}


def nixl_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.16", "0.5.23"):
        for torch_cuda in ("12.9", "13.0"):
            for nixl in X_NIXL:
                for backends, (cu12, cu13) in X_BACKENDS.items():
                    for cudart in ("found", "absent", "not-looked-for"):
                        doc = json.loads(_box(out, rel, None).read_text())
                        facts = doc["facts"]
                        torch = facts["packages"]["torch"]
                        tag = "cu" + torch_cuda.replace(".", "")
                        torch.update(cuda=torch_cuda, variant=tag, version=f"{torch['dist_version']}+{tag}")
                        facts["packages"].update({
                            "nixl": _pkg(nixl),
                            "nixl-cu12": _pkg(nixl) if cu12 else {"installed": False},
                            "nixl-cu13": _pkg(nixl) if cu13 else {"installed": False},
                            "mooncake-transfer-engine": {"installed": False},
                        })  # fmt: skip
                        libs: dict[str, Any] = {**facts.get("cuda_libs", {}), "ld_cache": "file"}
                        libs.update({**MOONCAKE_SYSTEM_LIBS, **NIXL_SYSTEM_LIBS})
                        if cudart != "not-looked-for":
                            libs["libcudart.so.12"] = X_CUDART[cudart]
                        facts["cuda_libs"] = libs
                        path = _write(out, doc, f"x52-{rel}-{torch_cuda}-{nixl}-{backends}-{cudart}.json")
                        for mode in ("prefill", "decode"):
                            flags = ("--tp", "8", "--disaggregation-mode", mode,
                                     "--disaggregation-transfer-backend", "nixl")  # fmt: skip
                            if _gate(_line(out, path, [], "llama3", *flags)).get("decision") == "allow":
                                labels = {"torch_cuda": torch_cuda, "nixl": nixl, "backends": backends}
                                rows.append(
                                    {"pop": "x", "sglang": rel, **labels, "libcudart.so.12": cudart, "mode": mode}
                                )
        print(f"x {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (l) LMCache launches: flags and LMCACHE_* variables ----------------------------------------------------------

_CONFIG = ("--lmcache-config-file", "/etc/lmcache/mp.yaml")
L_FLAGS: dict[str, tuple[str, ...]] = {
    "plain": (),
    "config": _CONFIG,
    "config-page-64": (*_CONFIG, "--page-size", "64"),
    "config-dp-1": (*_CONFIG, "--enable-dp-attention", "--dp-size", "1"),
    "config-dcp-1": (*_CONFIG, "--dcp-size", "1"),
    "config-disagg-null": (*_CONFIG, "--disaggregation-mode", "null"),
    "config-spec-none": (*_CONFIG, "--speculative-algorithm", "NONE"),
    "config-hicache-mode": (*_CONFIG, "--hicache-host-memory-mode", "full"),
    "config-chunked-4096": (*_CONFIG, "--chunked-prefill-size", "4096"),
}
L_ENV: dict[str, list[str]] = {
    "none": [],
    "mp-host": ["env", "LMCACHE_MP_HOST=10.0.0.5"],
    "mp-host-port": ["env", "LMCACHE_MP_HOST=10.0.0.5", "LMCACHE_MP_PORT=5555"],
    "config-file-env": ["env", "LMCACHE_CONFIG_FILE=/etc/lmcache/mp.yaml"],
    "mp-host-localhost": ["env", "LMCACHE_MP_HOST=localhost"],
    "chunk-size": ["env", "LMCACHE_CHUNK_SIZE=256"],
    "mp-host-unset": ["env", "-u", "LMCACHE_MP_HOST"],
}


def lmcache_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.13", "0.5.17", "0.5.21", "0.5.23"):
        doc = json.loads(_box(out, rel, None).read_text())
        doc["facts"]["packages"]["lmcache"] = _pkg("0.5.6")
        doc["facts"]["packages"]["transformers"] = _pkg("5.4.0")
        path = _write(out, doc, f"l52-{rel}.json")
        for env, prefix in L_ENV.items():
            for name, words in L_FLAGS.items():
                flags = ("--tp", "2", "--enable-lmcache", *words)
                if _gate(_line(out, path, prefix, "llama3", *flags)).get("decision") == "allow":
                    rows.append({"pop": "l", "sglang": rel, "env": env, "flags": name})
        print(f"l {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (t) transformers 5 beside SGLang 0.5.10+ ---------------------------------------------------------------------

T_RELEASES = ["0.5.10", "0.5.11", "0.5.12", "0.5.14", "0.5.16", "0.5.19", "0.5.23"]
T_TF = ["4.57.1", "5.0.0", "5.2.0", "5.4.0", "5.18.0"]
T_MODELS = ["llama3-rope", "deepseek-r1-rope", "qwen3-moe-rope"]


def transformers_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in T_RELEASES:
        for tf in T_TF:
            doc = json.loads(_box(out, rel, None).read_text())
            doc["facts"]["packages"]["transformers"] = _pkg(tf)
            path = _write(out, doc, f"t52-{rel}-{tf}.json")
            for model in T_MODELS:
                if _gate(_line(out, path, [], model, "--tp", "8")).get("decision") == "allow":
                    rows.append({"pop": "t", "sglang": rel, "transformers": tf, "model": model})
        print(f"t {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (a) custom all-reduce on NVLink / PCIe from 0.5.11 ----------------------------------------------------------

A_LINKS = {
    "nvlink": ("nvlink", "NV18"),
    "pcie-switch": ("pcie-switch", "PIX"),
    "pcie-host-bridge": ("pcie-host-bridge", "PHB"),
}
A_ENV: dict[str, list[str]] = {
    "none": [],
    "v2-off": ["env", "SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2=0"],
    "v2-on": ["env", "SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2=1"],
}
A_RELEASES = ["0.5.11", "0.5.12", "0.5.13", "0.5.15", "0.5.18", "0.5.21", "0.5.23"]


def _topology_box(out: Path, rel: str, count: int, link: str) -> Path:
    doc = json.loads(_box(out, rel, None).read_text())
    facts = doc["facts"]
    facts["gpus"] = facts["gpus"][:count]
    interconnect, label = A_LINKS[link]
    pairs = []
    for a in range(count):
        for b in range(a + 1, count):
            pair: dict[str, Any] = {"a": a, "b": b, "p2p_read": "ok"}
            if link == "nvlink":
                pair.update(link="nvlink", nvlink_count=18, common_ancestor="internal")
            else:
                pair.update(link=label, common_ancestor=label)
            pairs.append(pair)
    facts["topology"] = {"interconnect": interconnect, "same_model": True, "gpu_count": count, "p2p": "all",
                         "nvswitch": link == "nvlink", "pairs": pairs}  # fmt: skip
    facts["system"].setdefault("env", {}).pop("SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2", None)
    return _write(out, doc, f"a52-{rel}-{count}-{link}.json")


def allreduce_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in A_RELEASES:
        for count in (2, 4, 8):
            for link in A_LINKS:
                path = _topology_box(out, rel, count, link)
                for env, prefix in A_ENV.items():
                    doc = _gate(_line(out, path, prefix, "llama3", "--tp", str(count)))
                    if doc.get("decision") == "allow" and _features(doc).get("custom-allreduce") == "ok":
                        rows.append({"pop": "a", "sglang": rel, "gpus": count, "link": link, "env": env})
        print(f"a {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (d) 0.5.23's sgl-flash-mla, quack-kernels and tilelang paths -------------------------------------------------

_FUSE = ["env", "SGLANG_MINICPM_FUSE_TOPK=1"]
# name: (package, model, prefix, flags)
D_LAUNCHES: dict[str, tuple[str, str, list[str], tuple[str, ...]]] = {
    "dsv4": ("sgl-flash-mla", "dsv4", [], ("--tp", "8")),
    "dsv4-dp": ("sgl-flash-mla", "dsv4", [], ("--tp", "8", "--enable-dp-attention", "--dp-size", "8")),
    "dsv32-flashmla-sparse": ("sgl-flash-mla", "deepseek-v32", [], ("--tp", "8", "--nsa-prefill-backend",
                                                                   "flashmla_sparse")),
    "fa4": ("quack-kernels", "llama3", [], ("--tp", "1", "--attention-backend", "fa4")),
    "fa4-prefill": ("quack-kernels", "llama3", [], ("--tp", "1", "--prefill-attention-backend", "fa4")),
    "fa4-decode": ("quack-kernels", "llama3", [], ("--tp", "1", "--decode-attention-backend", "fa4")),
    "minicpm-default": ("tilelang", "minicpm-sala", [], ("--tp", "1")),
    "minicpm-flashattn-fuse": ("tilelang", "minicpm-sala", _FUSE, ("--tp", "1", "--attention-backend",
                                                                    "minicpm_flashattn")),
    "minicpm-flashinfer": ("tilelang", "minicpm-sala", [], ("--tp", "1", "--attention-backend",
                                                             "minicpm_flashinfer")),
}  # fmt: skip
D_PACKAGES: dict[str, dict[str, dict[str, Any] | None]] = {
    "sgl-flash-mla": {"1.0.0": _pkg("1.0.0"), "not-installed": {"installed": False}, "not-listed": None},
    "quack-kernels": {"0.6.5": _pkg("0.6.5"), "not-installed": {"installed": False}, "not-listed": None},
    "tilelang": {"0.1.12": _pkg("0.1.12"), "not-installed": {"installed": False}, "not-listed": None},
}
D_GPUS = {"h200": ("NVIDIA H200", "9.0"), "b200": ("NVIDIA B200", "10.0")}


def kernel_package_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.17", "0.5.19", "0.5.23"):
        for gpu, (name, cc) in D_GPUS.items():
            for launch, (package, model, prefix, flags) in D_LAUNCHES.items():
                for state, pkg in D_PACKAGES[package].items():
                    doc = json.loads(_box(out, rel, None).read_text())
                    facts = doc["facts"]
                    for g in facts["gpus"]:
                        g.update(name=name, compute_capability=cc)
                    if model == "minicpm-sala":
                        facts["system"]["python"] = "3.10.14"
                    if pkg is None:
                        facts["packages"].pop(package, None)
                    else:
                        facts["packages"][package] = pkg
                    path = _write(out, doc, f"d52-{rel}-{gpu}-{launch}-{state}.json")
                    if _gate(_line(out, path, prefix, model, *flags)).get("decision") == "allow":
                        rows.append({"pop": "d", "sglang": rel, "gpu": gpu, "launch": launch, package: state})
        print(f"d {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (p) post releases against the ==V rules ----------------------------------------------------------------------

P_RELEASES = ["0.5.3.post1", "0.5.3.post2", "0.5.3.post3", "0.5.4.post1", "0.5.4.post2", "0.5.4.post3",
              "0.5.5.post1", "0.5.5.post2", "0.5.5.post3", "0.5.6.post1", "0.5.6.post2", "0.5.8.post1",
              "0.5.10.post1", "0.5.12.post1", "0.5.13.post1", "0.5.15.post1"]  # fmt: skip
P_GPUS = {"h200": ("NVIDIA H200", "9.0"), "b200": ("NVIDIA B200", "10.0")}


def post_release_rows(out: Path) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for gpu, (name, cc) in P_GPUS.items():
        for rel in P_RELEASES:
            final = rel.split(".post", maxsplit=1)[0]
            doc = json.loads(_box(out, final, None).read_text())
            for g in doc["facts"]["gpus"]:
                g.update(name=name, compute_capability=cc)
            doc["facts"]["packages"]["sglang"].update(version=rel, dist_version=rel)
            path = _write(out, doc, f"p52-{gpu}-{rel}.json")
            audit = stackcheck_json_or_error(["audit", "--facts", str(path), "--format", "json"])
            for kind, key in (("features", "feature"), ("checks", "check")):
                for e in audit.get(kind) or []:
                    if e.get("status") == "ok":
                        reasons = [[r.get("rule"), r.get("observed"), r.get("result")] for r in e.get("reasons") or []]
                        row = {"pop": "p", "gpu": gpu, key: e.get("id"), "reasons": reasons}
                        rows.setdefault(json.dumps(row, sort_keys=True), {**row, "sglang": rel})
        print(f"p {gpu}: {len(rows)}", file=sys.stderr, flush=True)
    return list(rows.values())


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    pops = [
        (3, wrapper_rows(out)),
        (3, nixl_rows(out)),
        (3, lmcache_rows(out)),
        (2, transformers_rows(out)),
        (2, allreduce_rows(out)),
        (3, kernel_package_rows(out)),
        (2, post_release_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck52_drawn.json")


if __name__ == "__main__":
    main()
