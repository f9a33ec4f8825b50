"""The gate end to end, as a user runs it: `stackcheck gate --facts FACTS [--dry-run] --format json -- python -m
sglang.launch_server ARGS` in a fresh process, from the repository root, with the SGLANG_ and STACKCHECK_
variables of the test run removed; its JSON decision (for the gate's refusal tests)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cli_process import stackcheck_json

ROOT = Path(__file__).resolve().parent.parent
LAUNCH = ["python", "-m", "sglang.launch_server"]

# model config.json documents the gate's refusal tests write into a model directory (the shape of the published
# checkpoints' configs, the keys the gate reads: architectures, model_type, the attention heads)
QWEN3_NEXT: dict[str, Any] = {
    "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "hidden_size": 2048,
    "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
}  # fmt: skip
LLAMA3: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
}  # fmt: skip
GPT_OSS: dict[str, Any] = {
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "num_attention_heads": 64,
    "num_key_value_heads": 8, "head_dim": 64, "hidden_size": 2880,
}  # fmt: skip
OLMO2: dict[str, Any] = {
    "architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2", "num_attention_heads": 32,
    "num_key_value_heads": 32, "hidden_size": 4096,
}  # fmt: skip
LLAMA4: dict[str, Any] = {
    "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
    "text_config": {"num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 5120},
}  # fmt: skip
DEEPSEEK_R1: dict[str, Any] = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
    "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    # (ifc65: the router keys DeepSeek-V3 / R1's published config.json states; SGLang reads them with no default)
    "topk_method": "noaux_tc", "scoring_func": "sigmoid", "moe_layer_freq": 1,
}  # fmt: skip
DEEPSEEK_V32: dict[str, Any] = {
    **DEEPSEEK_R1, "architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32",
    "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 64,
}  # fmt: skip
# what SGLang makes of it where transformers does not know deepseek_v32 (hf_transformers_utils' rewrite)
DSA_AS_V3: dict[str, Any] = {**DEEPSEEK_V32, "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3"}
# a small DeepSeek V2 (MLA; on SGLang's DeepSeek list for deterministic inference), written in the tests' shape
DEEPSEEK_V2_LITE: dict[str, Any] = {
    "architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "hidden_size": 2048,
    "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 512, "v_head_dim": 128,
    "topk_method": "greedy", "scoring_func": "softmax", "moe_layer_freq": 1,  # (ifc65: as DeepSeek-V2-Lite states)
}  # fmt: skip
EXAONE4: dict[str, Any] = {  # (rope_theta stated at SGLang's fallback, 1000000: igap53's rope-theta-file-default
    # leaves a config that states none unknown under transformers 5, whose default_theta is 10000)
    "architectures": ["Exaone4ForCausalLM"], "model_type": "exaone4", "hidden_size": 5120,
    "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "rope_theta": 1000000.0,
}  # fmt: skip
# an MLA model that SGLang counts as MLA only from 0.5.21 (configs/model_config.py); the dims are written for the
# tests in the DeepSeek shape (kv_lora_rank and the split head dims), not copied from a published checkpoint
GIGACHAT35: dict[str, Any] = {
    "architectures": ["GigaChat35ForCausalLM"], "model_type": "gigachat35", "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 32, "kv_lora_rank": 512, "q_lora_rank": 1536,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
}  # fmt: skip
#: every model config above, by name (the property test of the gate's advice runs each)
QWEN3_MOE: dict[str, Any] = {
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 4096,
    "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
    "num_experts_per_tok": 8, "moe_intermediate_size": 1536, "norm_topk_prob": True,
}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "qwen3-next": QWEN3_NEXT, "llama3": LLAMA3, "gpt-oss": GPT_OSS, "olmo2": OLMO2, "llama4": LLAMA4,
    "deepseek-r1": DEEPSEEK_R1, "deepseek-v3.2": DEEPSEEK_V32, "exaone4": EXAONE4, "gigachat3.5": GIGACHAT35,
}  # fmt: skip


def gate_json(facts: Path, *args: str, dry_run: bool = False, options: Sequence[str] = ()) -> dict[str, Any]:
    """`stackcheck gate --facts FACTS OPTIONS [--dry-run] --format json -- python -m sglang.launch_server ARGS` in a
    fresh process (cli_process.stackcheck_json): its JSON decision. OPTIONS: more of the gate's own (--manifests DIR,
    --assume-gpu NAME, --allow-unknown)."""
    gate_args = ["gate", "--facts", str(facts), *options, *(["--dry-run"] if dry_run else []), "--format", "json"]
    return stackcheck_json(*gate_args, "--", *LAUNCH, *args)


def model_dir(tmp_path: Path, name: str, config: dict[str, Any] | None) -> Path:
    """A model directory the gate's preflight reads: `config` as its config.json (None: no config.json)."""
    model = tmp_path / name
    model.mkdir(exist_ok=True)
    if config is not None:
        (model / "config.json").write_text(json.dumps(config))
    return model


def rule_status(
    mapping: dict[str, Any],
    rule_id: str,
    version: str,
    majors: set[int] | None,
    arch: str | None,
    models: dict[str, Any],
    *flags: str,
    torch_cuda: str | None = "12.9",
) -> str:
    """The status of one refusal rule of launch.json (`rule_id`) for `python -m sglang.launch_server --model m FLAGS`
    with that SGLang release, GPU majors, model architecture and model reading, and torch's CUDA build (a CUDA
    12.9 torch unless given; None: not known); "ok" when the rule says nothing."""
    from stackcheck.launch import gate
    from stackcheck.launch.refusals import refusal_problems

    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *flags], mapping, {})
    found = refusal_problems(d, mapping, version, majors, arch, models, torch_cuda=torch_cuda)
    got = [p for p in found if p.subject == f"refusal {rule_id}"]
    return str(got[0].status) if got else "ok"


def config_rule_status(
    mapping: dict[str, Any],
    rule_id: str,
    version: str,
    majors: set[int] | None,
    config: dict[str, Any] | None,
    *flags: str,
    torch_cuda: str | None = "12.9",
) -> str:
    """rule_status for a model given by its config.json (None: a model whose config was not read): the architecture
    and attention keys are the ones the gate's preflight takes from it."""
    from stackcheck.launch.preflight.model import attention_keys

    arch = str(config["architectures"][0]) if config else None
    models = {"model": attention_keys(config) if config is not None else None}
    return rule_status(mapping, rule_id, version, majors, arch, models, *flags, torch_cuda=torch_cuda)


def mla_data_until_0_5_20(tmp_path: Path) -> Path:
    """A --manifests directory whose preflight.json has the MLA architecture table as if it stopped at SGLang 0.5.20
    (the releases read from 0.5.21 and the entries that start there dropped, ranges to 0.5.23 ending at 0.5.20):
    a user's copy of the data when the installed SGLang is newer than it."""
    shipped = json.loads((ROOT / "manifests" / "preflight.json").read_text())
    table = shipped["model"]["mla_architectures"]
    table["read"] = {"versions": ">=0.5.1,<=0.5.20", "releases": table["read"]["releases"][:-3]}
    table["entries"] = [e for e in table["entries"] if not e["versions"].startswith(">=0.5.21")]
    for e in table["entries"]:
        e["versions"] = e["versions"].replace("<=0.5.23", "<=0.5.20")
    over = tmp_path / "manifests"
    over.mkdir()
    (over / "preflight.json").write_text(json.dumps(shipped))
    return over


H200_NEWEST = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"


def release_box(tmp_path: Path, release: str, cc: str) -> Path:
    """tests/cases/h200-newest with SGLang `release` and every GPU at compute capability `cc`, as a facts file."""
    doc = json.loads(H200_NEWEST.read_text())
    for gpu in doc["facts"]["gpus"]:
        gpu["compute_capability"] = cc
    doc["facts"]["packages"]["sglang"].update(version=release, dist_version=release)
    # (icubin1: FlashInfer's trtllm-gen cubins stated as on the box, so a major-10 launch is judged on its other rules)
    families = ("TRTLLM_GEN_FMHA", "TRTLLM_GEN_BMM", "TRTLLM_GEN_GEMM", "DEEPGEMM")
    fi = doc["facts"]["packages"]["flashinfer-python"]["version"]
    doc["facts"]["flashinfer_cubins"] = {"release": fi, "ready": dict.fromkeys(families, True)}
    path = tmp_path / f"facts-{release}-{cc}.json"
    path.write_text(json.dumps(doc))
    return path


def allocator_box(tmp_path: Path, release: str, **jit: Any) -> Path:
    """tests/cases/h200-newest (torch 2.14.1+cu130) at `release` with every hop of `--enable-symm-mem`'s allocator
    build in place (libnccl.so, c++ and its headers, a CUDA 13.0 home's libcudart.so), then `jit`'s keys (a value
    None removes the key, as a facts document from before the probe read it). The -lcudart tests (igap24, igap29)."""
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    section = doc["facts"]["jit"]
    section.update(libnccl_so_found=True, libnccl_so="/usr/lib/x86_64-linux-gnu/libnccl.so", cxx_found=True,
                   cxx="/usr/bin/c++", cxx_cuda_runtime_h_found=True, cxx_nccl_h_found=True,
                   libcudart_so_found=True, libcudart_so="/usr/local/cuda-13.0/lib64/libcudart.so")  # fmt: skip
    for key, value in jit.items():
        if value is None:
            section.pop(key, None)
        else:
            section[key] = value
    path.write_text(json.dumps(doc))
    return path


def nccl_named_box(
    tmp_path: Path, release: str, named: str | None, torch_nccl: str, cuda: str, *flags: str,
    defined: Sequence[str] | None = None, wheel: str = "nvidia-nccl-cu13", driver_cuda: str | None = None,
) -> tuple[int, dict[str, str], list[dict[str, Any]]]:  # fmt: skip
    """The gate (--dry-run, JSON) of `python3 -m sglang.launch_server --model-path M FLAGS` (a Llama 3 config) on
    tests/cases/h200-newest at SGLang `release`, its nvidia-nccl-cu13 wheel at `torch_nccl`, every hop of the
    symmetric-memory allocator's build in place, and SGLANG_NCCL_SO_PATH naming a libnccl.so.2 of ours (in
    tmp_path/lib, read by the jit probe) whose version string says "NCCL version `named`+cuda`cuda`" (None: no such
    string). `defined`: the functions it exports (NCCL 2.27's shape where None: every function pynccl binds, the
    window pair, ncclMemAlloc / ncclMemFree). `wheel` "nvidia-nccl-cu12": torch a cu129 build with that wheel at
    `torch_nccl` in place of nvidia-nccl-cu13; `driver_cuda`: the CUDA version the driver supports (the case's 13.0
    where None). Its exit, {rule: result} and every reason (the igap36 / igap38 / igap40 tests)."""
    from elfwriter import build_so

    from stackcheck.probes.jit import PYNCCL_FUNCTIONS, PYNCCL_FUNCTIONS_0517, PYNCCL_WINDOW, nccl_so_path
    from stackcheck.readers.fsview import HostView

    box = release_box(tmp_path, release, "9.0")
    doc = json.loads(box.read_text())
    packages = doc["facts"]["packages"]
    if wheel == "nvidia-nccl-cu12":
        packages["nvidia-nccl-cu12"] = {**packages.pop("nvidia-nccl-cu13"), "installed": True}
        packages["nvidia-nccl-cu13"] = {"installed": False}
        packages["torch"].update(version=packages["torch"]["dist_version"] + "+cu129", cuda="12.9", variant="cu129")
    packages[wheel].update(version=torch_nccl, dist_version=torch_nccl)
    if driver_cuda is not None:
        doc["facts"]["driver"]["cuda"] = driver_cuda
    section = doc["facts"]["jit"]
    section.update(libnccl_so_found=True, libnccl_so="/usr/lib/x86_64-linux-gnu/libnccl.so", cxx_found=True,
                   cxx="/usr/bin/c++", cxx_cuda_runtime_h_found=True, cxx_nccl_h_found=True,
                   libcudart_so_found=True)  # fmt: skip
    if defined is None:
        defined = [*PYNCCL_FUNCTIONS, *PYNCCL_FUNCTIONS_0517, *PYNCCL_WINDOW, "ncclMemAlloc", "ncclMemFree"]
    lib = tmp_path / "lib" / "libnccl.so.2"
    lib.parent.mkdir(parents=True, exist_ok=True)
    tail = b"\0" + f"NCCL version {named}+cuda{cuda}".encode() + b"\0" if named else b""
    lib.write_bytes(build_so(defined=list(defined), soname="libnccl.so.2") + tail)
    section.update(nccl_so_path({"SGLANG_NCCL_SO_PATH": str(lib)}, HostView()))
    box.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3)), *flags]
    rc, out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    reasons = [x for r in out.get("reasons") or [] for x in r.get("reasons") or []]
    return rc, {str(x.get("rule")): str(x.get("result")) for x in reasons}, reasons


def cli_json(args: list[str]) -> tuple[int, dict[str, Any]]:
    """`stackcheck ARGS` in this process (stackcheck.cli.main), its exit (0 or 1) and its JSON output."""
    import contextlib
    import io

    from stackcheck.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        rc = main(args)
    assert rc in (0, 1), args
    doc: dict[str, Any] = json.loads(out.getvalue())
    return rc, doc


def gate_tp8(facts: Path, model: Path, *flags: str) -> dict[str, Any]:
    """In this process: `gate --facts FACTS --dry-run --format json -- python3 -m sglang.launch_server --model-path
    MODEL --tp 8 FLAGS`, its JSON decision."""
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "8", *flags]
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]


def reason_status(doc: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """A gate decision's blocking reasons: subject -> (status, effect)."""
    return {str(r.get("feature")): (str(r.get("status")), r.get("effect")) for r in doc.get("reasons") or []}


def choice_problems(mapping: dict[str, Any], version: str, *flags: str) -> list[tuple[str, str, str | None]]:
    """gate.release_choice_problems of `python -m sglang.launch_server --model m FLAGS` on SGLang `version` with
    launch.json `mapping`, as (subject, status, observed): the per-release choice tests' one reading."""
    from stackcheck.launch import gate

    d = gate.derive([*LAUNCH, "--model", "m", *flags], mapping, {})
    return [(p.subject, p.status, p.observed) for p in gate.release_choice_problems(d, mapping, version)]


def quantized(qc: dict[str, Any], base: dict[str, Any] = LLAMA3) -> dict[str, Any]:
    """A checkpoint's config.json: `base` with `qc` as its quantization_config (the quantization scheme tests)."""
    return {**base, "quantization_config": qc}


def gate_checkpoint(tmp_path: Path, release: str, cc: str, config: dict[str, Any], *flags: str) -> dict[str, Any]:
    """gate_tp8 of a model directory whose config.json is `config`, on tests/cases/h200-newest with SGLang `release`
    and every GPU at compute capability `cc` (release_box)."""
    return gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "m", config), *flags)


def feature_rules(doc: dict[str, Any], feature: str, warnings: bool = False) -> dict[str, str]:
    """The rules of one feature's reasons in a gate decision (`warnings`: and of its warnings): id -> result."""
    return {
        str(x.get("rule")): str(x.get("result"))
        for r in [*(doc.get("reasons") or []), *((doc.get("warnings") or []) if warnings else [])]
        if r.get("feature") == feature
        for x in r.get("reasons") or []
    }


def judged_rules(doc: dict[str, Any], keep: Callable[[str], bool]) -> dict[str, str]:
    """Every rule the reasons and warnings of a gate decision judged, of any feature, whose id `keep` accepts:
    id -> result."""
    return {
        str(x.get("rule")): str(x.get("result"))
        for r in [*(doc.get("reasons") or []), *(doc.get("warnings") or [])]
        for x in r.get("reasons") or []
        if keep(str(x.get("rule", "")))
    }


#: the jit section's keys of the probe's host-compiler readings (jit_host_gate)
JIT_HOST_KEYS = ("cxx", "nvcc_host", "flashinfer_host", "flashinfer_allow_unsupported", "cc_host")


def jit_host_gate(tmp_path: Path, host: dict[str, Any], release: str = "0.5.5") -> dict[str, Any]:
    """gate of a Llama 3 launch on SGLang `release` (0.5.5: with FlashInfer 0.5.3 and no flashinfer-jit-cache, which
    JIT-builds its kernels with -ccbin $CC), the probe's host-compiler keys (JIT_HOST_KEYS) in the case's jit
    section; --allow-unknown (the case's other packages are not the release's), so that an unknown rule shows among
    the warnings."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    if release == "0.5.5":
        packages = doc["facts"]["packages"]
        packages["flashinfer-python"].update(version="0.5.3", dist_version="0.5.3")
        packages["sgl-kernel"] = {"installed": True, "version": "0.3.16.post5", "location": "/x"}
        packages["sglang-kernel"] = {"installed": False}
        packages["torch"].update(version="2.8.0+cu128", dist_version="2.8.0")
    keys = {k: v for k, v in host.items() if k.startswith(JIT_HOST_KEYS) and not k.startswith(("cxx_cuda", "cxx_nccl"))}
    doc["facts"]["jit"].update(keys)
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--allow-unknown", "--format", "json", "--", *line])[1]


def torchao_box(tmp_path: Path, sglang: str, torch: str, torchao: str, local: str) -> Path:
    """h200-newest with SGLang `sglang`, torch `torch`+`local` and torchao `torchao` installed: its facts file."""
    doc = json.loads(H200_NEWEST.read_text())
    packages = doc["facts"]["packages"]
    packages["sglang"].update(version=sglang, dist_version=sglang)
    packages["torch"].update(version=f"{torch}+{local}", dist_version=torch)
    packages["torchao"] = {"installed": True, "version": torchao, "location": "/opt/venv/lib/python3.12/site-packages"}
    path = tmp_path / f"facts-{sglang}-{torch}-{torchao}.json"
    path.write_text(json.dumps(doc))
    return path


#: the CUDA 12.8 toolkit the JIT host-compiler gate tests lay out under a temporary root (probe_jit reads it there)
CUDA_128_HOME = "/usr/local/cuda-12.8"


#: a GCC driver's name that says its major (gcc-14, g++-13, x86_64-linux-gnu-gcc-12)
_GCC_NAMED = re.compile(r"(?:[\w.+-]+-)?(?:gcc|g\+\+)-(\d+)")


def gcc_driver(major: int | str) -> bytes:
    """The bytes of an ELF program that reads as GCC `major`'s driver (the jit probe's _gcc_driver_major): GCC's
    driver strings and version string ("Configured with: %s\\n", "gcc version %s %s\\n", "N.1.0", NUL-delimited, the
    shape of Debian's gcc-12 driver's .rodata) after the tables of a minimal ELF with no section table."""
    from elfwriter import build_so

    return build_so(needed=["libc.so.6"]) + f"\0Configured with: %s\n\0gcc version %s %s\n\0{major}.1.0\0".encode()


def gnu_ld(path: Path, version: str = "2.40", package: str = "(GNU Binutils for Debian)") -> None:
    """An ELF program at `path` that reads as binutils `version`'s GNU ld (the jit probe's gnu_ld_version): GNU ld's
    --version format "GNU ld %s\\n" and its version string "PACKAGE VERSION", NUL-delimited (the shape of Debian
    12's x86_64-linux-gnu-ld.bfd's .rodata), after the tables of a minimal ELF with no section table."""
    from elfwriter import build_so

    touch_exe(path, build_so(needed=["libc.so.6"]) + f"\0GNU ld %s\n\0{package} {version}\0".encode())


#: the shape of CUDA 12.8's host_config.h tests (written here): GNU 14 at most, clang less than 20
HOST_CONFIG_128_CLANG = (
    "#if defined(__GNUC__)\n#if __GNUC__ > 14\n#error -- unsupported GNU version! later than 14\n#endif\n"
    "#if defined(__clang__) && !defined(__APPLE__)\n"
    "#if (__clang_major__ >= 20) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))\n"
    "#error -- unsupported clang version! clang version must be less than 20 and greater than 3.2 .\n#endif\n#endif\n"
)


def clang_toolkit_128(root: Path) -> None:
    """CUDA_128_HOME under `root`: a bin/nvcc and include/crt/host_config.h of HOST_CONFIG_128_CLANG's shape (GNU 14
    at most, clang less than 20)."""
    home = root / CUDA_128_HOME.lstrip("/")
    touch_exe(home / "bin/nvcc")
    (home / "include/crt").mkdir(parents=True, exist_ok=True)
    (home / "include/crt/host_config.h").write_text(HOST_CONFIG_128_CLANG)


def real_gcc() -> tuple[Path, int]:
    """This machine's gcc driver (the program its `gcc` resolves to) and its major (`gcc -dumpversion`); the test is
    skipped where there is none, or it is no ELF program."""
    import shutil
    import subprocess

    import pytest

    found = shutil.which("gcc")
    if found is None:
        pytest.skip("no gcc on this machine")
    real = Path(found).resolve()
    if real.read_bytes()[:4] != b"\x7fELF":
        pytest.skip(f"{real} is no ELF program")
    version = subprocess.run([str(real), "-dumpversion"], capture_output=True, text=True, check=True).stdout
    return real, int(version.strip().split(".")[0])


def touch_exe(path: Path, body: bytes | None = None) -> None:
    """An executable file at `path` (its directories made): `body`, else a GCC driver of the major its name says
    (gcc-N, g++-N, TRIPLET-gcc-N: igap34, an ELF's first bytes alone no longer read as a compiler), else an ELF
    file's first bytes."""
    if body is None:
        named = _GCC_NAMED.fullmatch(path.name)
        body = gcc_driver(named.group(1)) if named is not None else b"\x7fELF"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    path.chmod(0o755)


def clang_binary(
    path: Path, version: str | None = None, llvm: int | None = None, extra: bytes = b"", resource: bool = True
) -> None:
    """An ELF clang program at `path` (its directories made): needing LLVM `llvm`'s libraries where given
    (libclang-cpp.so.N.1 and libLLVM.so.N.1, as Debian's clang-19 binary does), and carrying `version` where given as
    a static clang does (" version X.Y.Z" and "Clang X.Y.Z", NUL-delimited, the shape of clang's Version.cpp strings;
    after the ELF's tables, which have no section table: the whole file is read), then `extra`."""
    from elfwriter import build_so

    needed = [f"libclang-cpp.so.{llvm}.1", f"libLLVM.so.{llvm}.1"] if llvm is not None else []
    body = build_so(needed=[*needed, "libc.so.6"])
    if version is not None:
        body += f"\0 version {version}\0Clang {version}\0".encode()
        if resource:  # its resource directory beside it, as an installation has (ifc44: a static clang needs it)
            include = path.parent.parent / "lib" / "clang" / version.split(".")[0] / "include"
            include.mkdir(parents=True, exist_ok=True)
            (include / "stddef.h").write_text("")
    touch_exe(path, body + extra)


def toolkit_128_facts() -> dict[str, Any]:
    """The facts probe_jit needs beside the view: CUDA_128_HOME as the build's toolkit, on x86_64."""
    tk = {"path": CUDA_128_HOME, "version": "12.8.93", "source": "/usr/local/cuda", "active_for_build": True}
    return {"cuda_toolkits": [tk], "system": {"machine": "x86_64"}}


def rule_results(doc: dict[str, Any], rule: str) -> list[tuple[str, str]]:
    """(the reason's status, the rule's result) of every reason of a gate decision that one rule `rule` judged."""
    return [
        (str(r.get("status")), str(x.get("result")))
        for r in doc.get("reasons") or []
        for x in r.get("reasons") or []
        if x.get("rule") == rule
    ]


def quant_rules(doc: dict[str, Any]) -> dict[str, str]:
    """The sglang-gpu-min-cc rules on quantization (ids quant-*) that did not pass in a gate decision: id -> result."""
    return {
        str(x.get("rule")): str(x.get("result"))
        for r in doc.get("reasons") or []
        if r.get("feature") == "sglang-gpu-min-cc"
        for x in r.get("reasons") or []
        if str(x.get("rule", "")).startswith("quant-")
    }


def scheme_table(key: str) -> dict[str, Any]:
    """manifests/preflight.json model.KEY: a quantization method's scheme table (compressed_tensors_schemes, ...)."""
    table: dict[str, Any] = json.loads((ROOT / "manifests" / "preflight.json").read_text())["model"][key]
    return table


#: the system libraries mooncake-transfer-engine 0.3.5-0.3.13.post1's engine.so links (preflight.json
#: system_libraries), found by the loader: a box whose Mooncake check is to pass on them
MOONCAKE_SYSTEM_LIBS = {
    name: f"/usr/lib/x86_64-linux-gnu/{name}"
    for name in ("libibverbs.so.1", "libnuma.so.1", "libcurl.so.4", "libmlx5.so.1")
}

#: OpenSSL 3's libraries, which the etcd client bundled in NIXL's wheels links (preflight.json, the nixl entry's
#: system_libraries, ifc45), found by the loader: a box whose NIXL check is to pass on them
NIXL_SYSTEM_LIBS = {name: f"/usr/lib/x86_64-linux-gnu/{name}" for name in ("libssl.so.3", "libcrypto.so.3")}
