"""The sixty-second fact-check sample's populations and seeded draw (bench/factcheck62_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck62_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the seventeenth session's later merges allow or call ok (git log
--first-parent 9e1b9f74..4563df08: icubin1 + irev77, imend9, irobust8, irev76): FlashInfer's trtllm-gen cubins judged
present on B200 / B300 / GB200 / Rubin boxes (flashinfer-cubin of the release, FLASHINFER_CUBIN_DIR, the cache, with
and without FLASHINFER_NO_DOWNLOAD), `gate --image` with NVIDIA's entrypoint script, @FILE storage configs for every
storage backend, `srun ... --node-rank $SLURM_NODEID`, and the prefixes irev76 / irobust8 read (systemd-run --scope,
run0, login shells, env chains). A row equal to one an earlier sample drew is left out.

(c) `gate --facts` of a launch reaching a trtllm-gen cubin family (C_LAUNCHES) on the H200 box (factcheck49._box)
    with the GPUs of C_GPUS in place of the H200s, SGLang's pins of C_RELEASES and the flashinfer_cubins section the
    probe reads (probe_cubins, run here on a tree written in OUT in the shape of FlashInfer's files: artifacts.py,
    each family's checksums.txt and files) for each cubin source of C_SOURCES: one row per allow;
(f) `gate --facts` of Llama 3 `--enable-hierarchical-cache --hicache-storage-backend B
    --hicache-storage-backend-extra-config @FILE` on the H200 box (factcheck49._box) with FILE each body of F_FILES at
    0.5.9 / 0.5.13 / 0.5.23: one row per allow;
(n) `gate --facts` of each srun form of N_FORMS (SLURM_NODEID / SLURM_PROCID as the node rank) at 0.5.13 / 0.5.23:
    one row per allow;
(l) `gate --facts` of Llama 3 `--tp 2` / `--tp 8` at 0.5.23 behind each prefix of L_PREFIXES: one row per allow.

`gate --image` with NVIDIA's entrypoint script (imend9) is not drawn: an image written here in the shape of
tests/image/test_imend9_nvidia_entrypoint.py (the wrapper and its entrypoint.d parts over a Python with sglang and
torch) is refused on the stack around the launch (sgl-kernel, the JIT toolchain, pybase64, transformers missing), so a
population of its allows is empty; the wrapper's reading is checked beside the sample instead
(bench/factcheck62_section.md).

Draw: random.Random(20270131); per population the rows sorted by JSON text, shuffled, the first k (c 8, f 4, n 2,
l 4), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck49_draw import _box
from factcheck_draw import draw_undrawn, stackcheck_json_or_error, write_models
from gate_cli import DEEPSEEK_R1, LLAMA3, QWEN3_MOE

SEED = 20270131
LAUNCH = ["python3", "-m", "sglang.launch_server"]
ROOT = Path(__file__).resolve().parent.parent


def _args(path: Path, line: list[str]) -> list[str]:
    return ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line]


def _allowed(args: list[str]) -> bool:
    return stackcheck_json_or_error(args).get("decision") == "allow"


# ---- (c) trtllm-gen cubins judged present (icubin1, irev77) -------------------------------------------------------

C_RELEASES = ["0.5.9", "0.5.10", "0.5.11", "0.5.17", "0.5.18", "0.5.20", "0.5.23"]
C_GPUS: dict[str, tuple[str, str]] = {
    "b200": ("NVIDIA B200", "10.0"),
    "b300": ("NVIDIA B300 SXM6 AC", "10.3"),
    "gb200": ("NVIDIA GB200", "10.0"),
    "rubin": ("NVIDIA Graphics Device", "10.7"),
}
#: name: (where the complete families lie: "pkg" / "dir" / "cache", the server's environment beyond HOME, whether a
#: flashinfer-cubin of the release is installed (its directory empty where the files lie elsewhere))
C_SOURCES: dict[str, tuple[str, dict[str, str], bool]] = {
    "pkg": ("pkg", {}, True),
    "pkg-nodl": ("pkg", {"FLASHINFER_NO_DOWNLOAD": "1"}, True),
    "dir": ("dir", {"FLASHINFER_CUBIN_DIR": "@DIR"}, False),
    "dir-beside-empty-pkg": ("dir", {"FLASHINFER_CUBIN_DIR": "@DIR"}, True),
    "pkg-beside-empty-dir": ("pkg", {"FLASHINFER_CUBIN_DIR": "@DIR"}, True),
    "cache": ("cache", {}, False),
    "cache-nodl": ("cache", {"FLASHINFER_NO_DOWNLOAD": "1"}, False),
    "workspace-base": ("cache", {"FLASHINFER_WORKSPACE_BASE": "@WS"}, False),
}
C_LAUNCHES: dict[str, tuple[str, tuple[str, ...]]] = {
    "trtllm-mha": ("llama3", ("--tp", "8", "--attention-backend", "trtllm_mha")),
    "trtllm-mla": ("deepseek-r1", ("--tp", "8", "--attention-backend", "trtllm_mla")),
    "fp8-gemm-trtllm": ("llama3", ("--tp", "8", "--quantization", "fp8", "--fp8-gemm-backend", "flashinfer_trtllm")),
    "fp8-moe-trtllm": (
        "qwen3-moe",
        ("--tp", "8", "--quantization", "fp8", "--moe-runner-backend", "flashinfer_trtllm"),
    ),
    "qwen3-moe-default": ("qwen3-moe", ("--tp", "8", "--quantization", "fp8")),
}
_FAMILIES = ("TRTLLM_GEN_FMHA", "TRTLLM_GEN_BMM", "TRTLLM_GEN_GEMM", "DEEPGEMM")
_MANIFEST = b"aa k_one.cubin\nbb k_two.cubin\ncc include/flashInferMetaInfo.h\n"


def _artifacts(rubin: bool) -> str:
    """An artifacts.py in the releases' shape (a class of paths, one of hashes); the _RUBIN families where asked."""
    names = [*_FAMILIES, *([f"{f}_RUBIN" for f in _FAMILIES[1:]] if rubin else [])]
    sha = hashlib.sha256(_MANIFEST).hexdigest()
    paths = "".join(f'    {n}: str = "0fc62/{n.lower()}/"\n' for n in names)
    hashes = "".join(f'    {n}: str = "{sha}"\n' for n in names)
    return f"class ArtifactPath:\n{paths}\n\nclass CheckSumHash:\n{hashes}"


def _fill(base: Path, rubin: bool) -> None:
    names = [*_FAMILIES, *([f"{f}_RUBIN" for f in _FAMILIES[1:]] if rubin else [])]
    for n in names:
        fam = base / "0fc62" / n.lower()
        (fam / "include").mkdir(parents=True, exist_ok=True)
        (fam / "checksums.txt").write_bytes(_MANIFEST)
        for leaf in ("k_one.cubin", "k_two.cubin", "include/flashInferMetaInfo.h"):
            (fam / leaf).write_bytes(b"x")


def _cubin_box(out: Path, rel: str, gpu: str, source: str) -> Path:
    from stackcheck.facts.cubin_releases import RUBIN_SPLIT_RELEASES, release_tuple
    from stackcheck.probes.flashinfer_cubins import probe_cubins
    from stackcheck.readers.fsview import HostView

    where, env_in, pkg = C_SOURCES[source]
    doc = json.loads(_box(out, rel, None).read_text())
    facts = doc["facts"]
    name, cc = C_GPUS[gpu]
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
    env = {"HOME": str(top / "home")}
    for k, v in env_in.items():
        env[k] = v.replace("@DIR", str(top / "dir")).replace("@WS", str(top / "ws"))
    (top / "dir").mkdir(exist_ok=True)
    (top / "home").mkdir(exist_ok=True)
    cache = Path(env.get("FLASHINFER_WORKSPACE_BASE", env["HOME"])) / ".cache/flashinfer/cubins"
    target = {"pkg": pkg_dir, "dir": top / "dir", "cache": cache}[where]
    _fill(target, rubin)
    facts["packages"]["flashinfer-python"]["location"] = str(site)
    if pkg:
        facts["packages"]["flashinfer-cubin"] = {"installed": True, "version": fi, "dist_version": fi,
                                                 "location": str(site), "editable": False, "copies": 1}  # fmt: skip
    else:
        facts["packages"]["flashinfer-cubin"] = {"installed": False}
    facts["system"]["env"] = {**(facts["system"].get("env") or {}), **env}
    section = probe_cubins(facts, env, HostView())
    assert section is not None, (rel, fi)
    facts["flashinfer_cubins"] = section
    path = out / "boxes" / f"cubins-{rel}-{gpu}-{source}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def cubin_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in C_RELEASES:
        for gpu in C_GPUS:
            for source in C_SOURCES:
                path = _cubin_box(out, rel, gpu, source)
                for launch, (model, flags) in C_LAUNCHES.items():
                    line = [*LAUNCH, "--model-path", str(out / "models" / model), *flags]
                    if _allowed(_args(path, line)):
                        rows.append({"pop": "c", "sglang": rel, "gpu": gpu, "source": source, "launch": launch})
        print(f"c {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (f) @FILE storage configs for every storage backend (imend9) --------------------------------------------------

F_BACKENDS = ["mooncake", "hf3fs", "nixl", "file", "lmcache", "aibrix", "eic"]
F_FILES: dict[str, str] = {
    "empty-object": "{}",
    "mooncake-master": json.dumps(
        {
            "master_server_address": "10.0.0.1:50051",
            "protocol": "tcp",
            "metadata_server": "P2PHANDSHAKE",
            "global_segment_size": 4 << 30,
        }
    ),
    "prefetch-threshold": json.dumps({"prefetch_threshold": 256}),
    "list": "[1, 2]",
}


def storage_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    cfg = out / "storage"
    cfg.mkdir(parents=True, exist_ok=True)
    for name, body in F_FILES.items():
        (cfg / f"{name}.json").write_text(body)
    for rel in ("0.5.9", "0.5.13", "0.5.23"):
        path = _box(out, rel, None)
        for backend in F_BACKENDS:
            for name in F_FILES:
                line = [*LAUNCH, "--model-path", str(out / "models" / "llama3"), "--tp", "2",
                        "--enable-hierarchical-cache", "--hicache-storage-backend", backend,
                        "--hicache-storage-backend-extra-config", f"@{cfg / name}.json"]  # fmt: skip
                if _allowed(_args(path, line)):
                    rows.append({"pop": "f", "sglang": rel, "backend": backend, "file": name})
        print(f"f {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (n) srun's per-node rank (imend9) ----------------------------------------------------------------------------

_RANKED = "python3 -m sglang.launch_server --model-path {m} --tp 8 --nnodes 2 --dist-init-addr h:5000 --node-rank "
N_FORMS: dict[str, tuple[list[str], str]] = {
    "N2-nodeid": (["srun", "-N2", "bash", "-c"], "$SLURM_NODEID"),
    "N2-braced": (["srun", "-N2", "bash", "-c"], '"${SLURM_NODEID}"'),
    "N2-n2-procid": (["srun", "-N2", "-n2", "sh", "-c"], '"$SLURM_PROCID"'),
    "nodes2-tpn1": (["srun", "--nodes=2", "--ntasks-per-node=1", "bash", "-c"], "$SLURM_NODEID"),
    "N2-nodeid-tee": (["srun", "-N2", "bash", "-c"], "$SLURM_NODEID 2>&1 | tee log"),
    "N2-gpt8-nodeid": (["srun", "-N2", "--gpus-per-task=8", "bash", "-c"], "$SLURM_NODEID"),
    "N2-exclusive-nodeid": (["srun", "-N2", "--exclusive", "bash", "-c"], "$SLURM_NODEID"),
    "N2-dash-nodeid": (["srun", "-N2", "dash", "-c"], "$SLURM_NODEID"),
    "N2-localid": (["srun", "-N2", "bash", "-c"], "$SLURM_LOCALID"),
    "N2-nodeid-bash-e": (["srun", "-N2", "bash", "-e", "-c"], "$SLURM_NODEID"),
}


def node_rank_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for rel in ("0.5.13", "0.5.23"):
        path = _box(out, rel, None)
        for name, (prefix, rank) in N_FORMS.items():
            line = [*prefix, _RANKED.format(m=out / "models" / "llama3") + rank]
            if _allowed(_args(path, line)):
                rows.append({"pop": "n", "sglang": rel, "form": name})
        print(f"n {rel}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


# ---- (l) the prefixes irev76 / irobust8 read ----------------------------------------------------------------------

L_PREFIXES: dict[str, list[str]] = {
    "systemd-run-scope": ["systemd-run", "--scope"],
    "systemd-run-scope-q": ["systemd-run", "--scope", "-q"],
    "systemd-run-scope-unit": ["systemd-run", "--scope", "--unit=sg"],
    "systemd-run-scope-p": ["systemd-run", "--scope", "-p", "MemoryMax=900G"],
    "systemd-run-scope-slice": ["systemd-run", "--scope", "--slice=serve"],
    "systemd-run-sc": ["systemd-run", "--sc"],
    "run0": ["run0"],
    "run0-u": ["run0", "-u", "svc"],
    "run0-setenv": ["run0", "--setenv=CUDA_VISIBLE_DEVICES=0"],
    "bash-c": ["bash", "-c"],
    "bash-lc": ["bash", "-lc"],
    "bash-login-c": ["bash", "--login", "-c"],
    "bash-ic": ["bash", "-ic"],
    "sh-lc": ["sh", "-lc"],
    "env-chain": ["env", "A=1", "env", "B=2", "env", "C=3"],
    "env-chain-u": ["env", "A=1", "env", "-u", "HOME", "env", "B=2"],
    "env-S": ["env", "-S", "A=1 B=2"],
    "nohup-env-chain": ["nohup", "env", "A=1", "nohup", "env", "B=2"],
}


def prefix_rows(out: Path) -> list[dict[str, Any]]:
    import shlex

    rows: list[dict[str, Any]] = []
    path = _box(out, "0.5.23", None)
    for name, prefix in L_PREFIXES.items():
        for layout in ("tp2", "tp8"):
            launch = [*LAUNCH, "--model-path", str(out / "models" / "llama3"), "--tp", layout[2:]]
            line = [*prefix, shlex.join(launch)] if prefix[-1].endswith("c") and prefix[0] != "env" else [
                *prefix, *launch]  # fmt: skip
            if _allowed(_args(path, line)):
                rows.append({"pop": "l", "sglang": "0.5.23", "prefix": name, "layout": layout})
    print(f"l: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, {"llama3": LLAMA3, "deepseek-r1": DEEPSEEK_R1, "qwen3-moe": QWEN3_MOE})
    pops = [
        (8, cubin_rows(out)),
        (4, storage_rows(out)),
        (2, node_rank_rows(out)),
        (4, prefix_rows(out)),
    ]
    draw_undrawn(out, SEED, pops, "factcheck62_drawn.json")


if __name__ == "__main__":
    main()
