"""triage for the causes of issue 16: messages that go on after blank lines, the specific undefined-symbol
forms ahead of the generic one, and a signature's stack check with its fix and plan step (--facts)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.launch.triage import load_signatures, triage_file, triage_stream, triage_with_plan
from stackcheck.render.triage import render_text

HERE = Path(__file__).parent.parent
LOGS = HERE / "data" / "logs"
CASES = HERE / "cases"


def root_sig(name: str) -> tuple[str | None, str | None, str | None]:
    rc = triage_file(LOGS / name).root_cause
    assert rc is not None
    sig = rc.signature
    return (sig.id, sig.feature, sig.check) if sig else (None, None, None)


def test_sgl_kernel_message_is_read_past_its_blank_lines() -> None:
    result = triage_file(LOGS / "sgl_kernel_common_ops_nvrtc.log")
    rc = result.root_cause
    assert rc is not None and rc.exception_type == "ImportError"
    lines = rc.parts[0].message_lines
    assert lines[0].startswith("[sgl_kernel] CRITICAL: Could not load any common_ops library")
    assert "- ImportError: libnvrtc.so.12: cannot open shared object file: No such file or directory" in lines
    assert rc.signature is not None and rc.signature.id == "kernel-load-missing-cuda-lib"
    assert result.check == "kernel-runtime-libs"
    # the detail lines are part of the root cause's message, not errors of their own
    assert not [e for e in result.errors if e is not rc]


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        ("undefined_symbols.log", ("nccl-undefined-symbol", None, "nccl")),
        ("green_ctx.log", ("driver-api-undefined-symbol", None, "driver-api")),
        ("triton_ptxas_sm121.log", ("triton-ptxas-unknown-arch", None, "triton-ptxas")),
        # FlashInfer's own warning names the cause before the misleading exception: it is the root
        ("flashinfer_sm75_old_nvcc.log", ("flashinfer-sm12x-needs-cuda129", None, "jit-toolchain")),
        ("cudnn_torch291.log", ("cudnn-torch-291-check", None, "cudnn-torch")),
        ("watchdog_timeout.log", ("nccl-watchdog-timeout", None, "pcie-p2p-path")),
    ],
)
def test_each_cause_is_named(log: str, expected: tuple[str, str | None, str]) -> None:
    assert root_sig(log) == expected


def test_the_misleading_flashinfer_error_alone_still_names_the_toolkit() -> None:
    lines = (LOGS / "flashinfer_sm75_old_nvcc.log").read_text().splitlines(keepends=True)
    text = "".join(line for line in lines if "requires CUDA >= 12.9" not in line)
    result = triage_stream(io.BytesIO(text.encode()), "<mem>", load_signatures())
    assert result.root_cause is not None and result.root_cause.signature is not None
    assert (result.root_cause.signature.id, result.check) == ("flashinfer-requires-sm75", "jit-toolchain")


def test_undefined_symbol_forms_are_told_apart() -> None:
    sigs = load_signatures()

    def first(text: str) -> str:
        return next(s.id for s in sigs if s.pattern.search(text))

    base = "ImportError: /v/sgl_kernel/common_ops.abi3.so: undefined symbol: "
    assert first(base + "ncclCommWindowRegister") == "nccl-undefined-symbol"
    assert first(base + "cuGreenCtxStreamCreate") == "driver-api-undefined-symbol"
    assert first(base + "_ZN3c104cuda9SetDeviceEa") == "kernel-torch-abi-mismatch"
    assert first(base + "cudaGetDriverEntryPointByVersion") == "extension-undefined-symbol"  # runtime API: no claim
    assert first(
        base + "_ZN5flash13run_mha_fwd_IN7cutlass6half_tELi64ELb0EEEvRNS_16Flash_fwd_paramsEP11CUstream_st"
    ) == ("extension-undefined-symbol")


def test_blank_lines_end_a_message_that_is_not_open() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app.py", line 3, in <module>\n'
        "ValueError: bad value\n"
        "\n"
        "Loading the next thing\n"
        "\n"
        "Traceback (most recent call last):\n"
        '  File "/srv/app.py", line 9, in <module>\n'
        "ImportError: \n"
        "the loader failed:\n"
        "\n"
        "- first cause\n"
        "\n"
        "INFO 12-01 10:00:00 something else\n"
    )
    result = triage_stream(io.BytesIO(log.encode()), "<mem>", load_signatures())
    errs = sorted(result.errors, key=lambda e: e.line)
    assert errs[0].parts[0].message_lines == []  # "Loading the next thing" is not part of the ValueError
    assert errs[1].parts[0].message_lines == ["the loader failed:", "- first cause"]  # a log record ends it


def test_warning_form_of_peer_access_is_not_a_root_cause() -> None:
    log = (
        "[2026-03-02 09:14:22 TP1] Setup Custom allreduce failed with CUDART error: peer access is not supported "
        "between these two devices. To silence this warning, specify --disable-custom-all-reduce explicitly.\n"
        "[2026-03-02 09:14:40 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/v/sglang/srt/managers/scheduler.py", line 2, in run\n'
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    )
    result = triage_stream(io.BytesIO(log.encode()), "<mem>", load_signatures())
    assert result.root_cause is not None and result.root_cause.signature is not None
    assert result.root_cause.signature.id == "cuda-oom"
    assert [w.signature.id for w in result.warnings if w.signature] == ["custom-allreduce-peer-access-warning"]


def test_check_fix_and_plan_step_from_a_report() -> None:
    result = triage_file(LOGS / "sgl_kernel_common_ops_nvrtc.log")
    checks = [
        {
            "id": "kernel-runtime-libs",
            "status": "failed",
            "reasons": [{"result": "fail", "message": "no libnvrtc.so.12"}],
            "fix": {"text": "install the CUDA 13 build", "component": "sgl-kernel"},
        }
    ]
    plan = {"steps": [{"component": "sglang-kernel", "from": "sgl-kernel 0.3.21", "to": "0.4.2", "commands": ["x"]}]}
    fix = triage_with_plan(result, plan, checks)
    assert fix is not None and fix["check"] == "kernel-runtime-libs" and fix["step"] == 1
    assert fix["message"] == "no libnvrtc.so.12" and fix["fix"]["component"] == "sgl-kernel"
    assert triage_with_plan(result, {}, []) is None


def triage_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stackcheck", "triage", *args], capture_output=True, text=True, timeout=120, cwd="/"
    )


def test_triage_with_facts_names_the_check_its_fix_and_the_plan_step() -> None:
    facts = CASES / "gb10-cu130-pypi-kernel" / "facts.json"
    proc = triage_cli(str(LOGS / "sgl_kernel_common_ops_nvrtc.log"), "--facts", str(facts))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "signature: kernel-load-missing-cuda-lib [check kernel-runtime-libs]" in out
    assert "check kernel-runtime-libs on this box: failed: the kernel package is a CUDA 12 build" in out
    assert "  fix: install the kernel package built for torch's CUDA" in out
    assert "plan: step" in out and "sglang-kernel" in out
    doc = json.loads(triage_cli(str(LOGS / "green_ctx.log"), "--facts", str(CASES / "a800-driver535-sglang049" /
                                 "facts.json"), "--format", "json").stdout)  # fmt: skip
    assert doc["root_cause"]["check"] == "driver-api"
    assert doc["fix"]["status"] == "failed" and doc["fix"]["fix"]["component"] == "driver"
    assert doc["fix"]["plan_step"]["component"] == "driver"


def test_rendered_text_shows_the_check() -> None:
    text = render_text(triage_file(LOGS / "triton_ptxas_sm121.log"))
    assert "[check triton-ptxas]" in text and "TRITON_PTXAS_PATH" in text


def test_the_prefilter_lets_every_signature_example_through() -> None:
    """A line the cheap prefilter skips is never classified: every example (a one-line error as it appears in a
    log) must contain a base needle or its signature's literal. Literals that start lower-case slow the
    prefilter about 3x, so they are left out where a base needle (Error, CUDA, NCCL, ...) is always there."""
    from stackcheck.launch.triage import Analyzer

    sigs = load_signatures()
    analyzer = Analyzer(sigs)
    for sig_doc in json.loads((HERE.parent / "manifests" / "signatures.json").read_text())["signatures"]:
        literal = sig_doc.get("literal")
        assert literal is None or literal[0].isupper() or not literal[0].isalpha(), sig_doc["id"]
        if sig_doc.get("at_end"):
            continue  # read in the log's last lines (Analyzer._stall), not through the prefilter
        for ex in sig_doc["examples"]:
            assert analyzer.needle_s.search(ex["text"]), (sig_doc["id"], ex["text"])


# ---- a run that stops without an error: the hang after NCCL's setup (signatures with at_end) ---------------
_HANG = (
    "[2026-05-01 10:00:00] server_args=ServerArgs(model_path='m', tp_size=2)\n"
    "[2026-05-01 10:00:04 TP0] Init torch distributed begin.\n"
    "gpu7:811:901 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n"
    "gpu7:811:902 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM\n"
    "gpu7:811:901 [0] NCCL INFO ncclCommInitRank comm 0x7f00 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n"
    "[2026-05-01 10:00:06 TP1] sglang is using nccl==2.27.3\n"
)


def _triage(text: str, chunk_size: int = 1 << 20) -> object:
    return triage_stream(io.BytesIO(text.encode()), "server.log", chunk_size=chunk_size)


def test_a_log_that_stops_after_nccls_setup_is_a_hang() -> None:
    result = _triage(_HANG)
    rc = result.root_cause  # type: ignore[attr-defined]
    assert rc is not None and rc.kind == "stall" and rc.line == 6 and rc.stream == "TP1"
    assert rc.signature.id == "nccl-hang-after-init" and result.check == "pcie-p2p-path"  # type: ignore[attr-defined]
    assert "the log stops here" in render_text(result)  # type: ignore[arg-type]
    # the same with CRLF line ends, no newline at the end, and read in chunks smaller than a line
    crlf = _triage(_HANG.replace("\n", "\r\n").rstrip("\r\n"), chunk_size=7).root_cause  # type: ignore[attr-defined]
    assert crlf is not None and crlf.kind == "stall" and crlf.line == 6


def test_a_hang_is_not_named_where_the_run_went_on_or_failed() -> None:
    went_on = _HANG + "[2026-05-01 10:00:30 TP0] Load weight end. type=LlamaForCausalLM\n"
    assert _triage(went_on).root_cause is None  # type: ignore[attr-defined]
    failed = _HANG.replace("Init torch distributed begin.", "RuntimeError: CUDA error: out of memory")
    rc = _triage(failed).root_cause  # type: ignore[attr-defined]
    assert rc is not None and rc.kind != "stall"
    # NCCL's setup far from the end (more than eight lines of other output after it): no hang named there
    later = _HANG + "".join(f"[2026-05-01 10:01:{i:02d}] Prefill batch. #new-seq: 1\n" for i in range(9))
    assert _triage(later).root_cause is None  # type: ignore[attr-defined]


def test_the_tail_of_a_long_log_is_numbered_right() -> None:
    filler = "".join(f"[2026-05-01 09:00:00] warming up {i}\n" for i in range(5000))  # > the 16 KiB tail
    rc = _triage(filler + _HANG, chunk_size=4096).root_cause  # type: ignore[attr-defined]
    assert rc is not None and rc.kind == "stall" and rc.line == 5006


def test_triage_with_facts_names_the_boxs_acs_for_a_hang() -> None:
    case = HERE / "realworld" / "nccl-2079-acs-p2p-hang-5880ada"
    proc = triage_cli(str(case / "server.log"), "--facts", str(case / "facts.json"), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["root_cause"]["kind"] == "stall"
    assert doc["fix"]["check"] == "pcie-p2p-path" and doc["fix"]["status"] == "failed"
    assert "ACS" in doc["fix"]["message"]


# ---- torch's cpp_extension without a toolkit: "CUDA_HOME environment variable is not set" (sglang#3952) ------
_NO_CUDA_HOME = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/utils/cpp_extension.py", line 2416, in _join_cuda_home\n'
    "    raise OSError('CUDA_HOME environment variable is not set. '\n"
    "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n"
)


@pytest.mark.parametrize(
    "text",
    [_NO_CUDA_HOME, "CUDA_HOME environment variable is not set\n"],
    ids=["torch-traceback", "the-words-alone"],
)
def test_torchs_missing_cuda_home_names_the_jit_toolchain(text: str) -> None:
    """torch.utils.cpp_extension raises this (torch 2.5.1 and 2.13.0 wheels, _join_cuda_home) when a build asks
    for the toolkit and _find_cuda_home found none: no CUDA_HOME/CUDA_PATH, no nvcc on PATH, no /usr/local/cuda."""
    rc = _triage(text).root_cause  # type: ignore[attr-defined]
    assert rc is not None and rc.signature is not None
    assert (rc.signature.id, rc.signature.check) == ("jit-nvcc-missing", "jit-toolchain")


_FA4_RANGE = (
    "[TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/opt/sglang/srt/managers/scheduler.py", line 4000, in run_scheduler_process\n'
    "  ...\n"
    '  File "/usr/lib/python3/dist-packages/flash_attn/cute/flash_fwd_sm100.py", line 162, in __init__\n'
    "AssertionError: Only SM 10.x and 11.x are supported\n"
)


def test_flash_attn_4s_architecture_assert_names_fa4() -> None:
    """flash-attn-4 4.0.0b9-4.0.0b14 (wheels read) assert in FlashAttentionForwardSm100 that the GPU's arch lies in
    the enum range sm_100 ... sm_110f; B300 (sm_103) fails it (sglang#25564). 4.0.0b15 checks the SM 10.x / 11.x
    families."""
    rc = _triage(_FA4_RANGE).root_cause  # type: ignore[attr-defined]
    assert rc is not None and rc.signature is not None
    assert (rc.signature.id, rc.signature.feature) == ("fa4-cute-arch-range", "attention-fa4")
    text = f"{rc.signature.title} {rc.signature.explanation} {rc.signature.fix}"
    assert "flash-attn-4" in text and "4.0.0b15" in text and "sm_103" in text


_RAY_WRAPPED = (
    "(Worker pid=77) [2025-09-18 11:02:13 DP1 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '(Worker pid=77)   File "/opt/site-packages/triton/backends/nvidia/compiler.py", line 297, in make_cubin\n'
    "(Worker pid=77)     raise RuntimeError(f'Internal Triton PTX codegen error: \\n{log}')\n"
    "(Worker pid=77) RuntimeError: Internal Triton PTX codegen error:\n"
    "(Worker pid=77) ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'\n"
)


def test_a_ray_prefixed_scheduler_traceback_is_one_process() -> None:
    """rlinf-92: Ray prefixes every line with "(Actor pid=N)"; SGLang's record puts "[... DP1 TP0]" on its first line
    only. Both name one process, so the frames and the exception belong to the traceback the header opened."""
    rc = _triage(_RAY_WRAPPED).root_cause  # type: ignore[attr-defined]
    assert rc is not None and rc.stream == "Worker pid=77"
    assert rc.exception_type == "RuntimeError" and rc.signature is not None
    assert rc.signature.id == "triton-ptxas-unknown-arch"


@pytest.mark.parametrize(
    ("text", "sig", "words"),
    [
        (
            "ValueError: The 'fa3' backend is not supported on Blackwell GPUs\n",
            "sglang-vision-fa3-blackwell",
            ("--mm-attention-backend", "Qwen3-VL", "major 10"),
        ),
        (
            "AssertionError: FP8 is only supported on SM100 (compute capability 10.x) for FA4 CuTe.\n",
            "fa4-cute-fp8-sm100-only",
            ("FP8", "4.0.0b10", "--kv-cache-dtype"),
        ),
        (
            '/x/cuda_toolkit.h:41:8: error: #error "CUDA compiler and CUDA toolkit headers are incompatible, please '
            'check your include paths"\n',
            "jit-nvcc-headers-mismatch",
            ("CUDART_VERSION", "nvidia-cuda-nvcc"),
        ),
        (
            "Exception: flashinfer with minimum required version 0.1.6 is not installed. Please reinstall.\n",
            "sglang-old-flashinfer-dist-name",
            ("flashinfer-python", "0.4.2.post2"),
        ),
        (
            "Exception: flashinfer_python with minimum required version 0.2.5 is not installed. Reinstall it.\n",
            "sglang-missing-pinned-package",
            ("install",),
        ),
    ],
)
def test_round_three_signatures_name_their_cause(text: str, sig: str, words: tuple[str, ...]) -> None:
    rc = _triage(text).root_cause  # type: ignore[attr-defined]
    assert rc is not None and rc.signature is not None and rc.signature.id == sig
    said = f"{rc.signature.title} {rc.signature.explanation} {rc.signature.fix}"
    assert all(w in said for w in words), said


# ---- ptxas's stderr line printed on its own, outside a traceback (icorpI, round six) -----------------------
# vLLM prints Triton's codegen failure as a banner ("Internal Triton PTX codegen error", the ptxas stderr, the
# repro command) without a traceback next to it; Inductor's logs can carry the ptxas line before the PTXASError
# one-liner. The line holds none of the prefilter's base needles, so the signature's literal has to let it in.
_PTXAS_BANNER = (
    "(EngineCore_DP0 pid=88) ================================================================\n"
    "(EngineCore_DP0 pid=88) Internal Triton PTX codegen error\n"
    "(EngineCore_DP0 pid=88) `ptxas` stderr:\n"
    "(EngineCore_DP0 pid=88) ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\n"
    "(EngineCore_DP0 pid=88)\n"
    "(EngineCore_DP0 pid=88) Repro command: /venv/lib/python3.12/site-packages/triton/backends/nvidia/bin/ptxas"
    " -lineinfo -v --gpu-name=sm_121a /tmp/t.ptx -o /tmp/t.ptx.o\n"
)
_PTXAS_BEFORE_EXC = (
    "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\n"
    "Internal Triton PTX codegen error\n"
    "\n"
    "triton.runtime.errors.PTXASError: PTXAS error: Internal Triton PTX codegen error\n"
)


@pytest.mark.parametrize("text", [_PTXAS_BANNER, _PTXAS_BEFORE_EXC], ids=["vllm-banner", "before-exception"])
def test_a_bare_ptxas_unknown_arch_line_names_the_bundled_ptxas(text: str) -> None:
    result = _triage(text)
    rc = result.root_cause  # type: ignore[attr-defined]
    assert rc is not None and rc.signature is not None, rc
    assert rc.signature.id == "triton-ptxas-unknown-arch" and result.check == "triton-ptxas"  # type: ignore[attr-defined]
    assert rc.text.startswith("ptxas fatal") or "ptxas fatal" in rc.text


# ---- a JIT build that ran hipcc on an NVIDIA box (sglang#30120; icorpI) -------------------------------------
# tvm-ffi 0.1.9-0.1.12 take a stray ROCm home (/opt/rocm) for ROCm; SGLang 0.5.9-0.5.17 build their JIT kernels
# through it, and its build_ninja raises RuntimeError('ninja exited with status N', then ninja's stdout).
_HIPCC_ON_CUDA = (
    "[2026-07-04 20:41:07] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/opt/venv/lib/python3.12/site-packages/sglang/jit_kernel/utils.py", line 307, in load_jit\n'
    "    return load_inline(\n"
    '  File "/opt/venv/lib/python3.12/site-packages/tvm_ffi/cpp/extension.py", line 542, in build_ninja\n'
    '    raise RuntimeError("\\n".join(msg))\n'
    "RuntimeError: ninja exited with status 1\n"
    "stdout:\n"
    "[1/2] /opt/rocm/bin/hipcc -D__HIP_PLATFORM_AMD__=1 --offload-arch=gfx1036 -c cuda.cu -o cuda.o\n"
    "FAILED: cuda.o\n"
    "/opt/rocm/bin/hipcc -D__HIP_PLATFORM_AMD__=1 --offload-arch=gfx1036 -c cuda.cu -o cuda.o\n"
    "/bin/sh: line 1: /opt/rocm/bin/hipcc: No such file or directory\n"
    "ninja: build stopped: subcommand failed.\n"
)


def test_a_jit_build_that_ran_a_missing_hipcc_names_tvm_ffis_backend_choice() -> None:
    for text in (_HIPCC_ON_CUDA, _HIPCC_ON_CUDA.replace("line 1: /opt/rocm/bin/hipcc: No such file or directory",
                                                        "1: /opt/rocm/bin/hipcc: not found")):  # fmt: skip
        result = _triage(text)
        rc = result.root_cause  # type: ignore[attr-defined]
        assert rc is not None and rc.signature is not None and rc.signature.id == "jit-hipcc-on-cuda", rc
        assert result.check == "jit-toolchain"  # type: ignore[attr-defined]
        words = f"{rc.signature.title} {rc.signature.explanation} {rc.signature.fix}"
        assert "tvm-ffi" in words and "TVM_FFI_GPU_BACKEND=cuda" in words and "/opt/rocm" in words


# ---- an old CUDA 11 NCCL wheel beside the newer one (icorpM, round eight; returnn#1802) ---------------------


def test_an_undefined_nccl_symbol_names_the_cuda_11_wheel_too() -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        '  File "/v/lib/python3.10/site-packages/torch/__init__.py", line 416, in <module>\n'
        "    from torch._C import *  # noqa: F403\n"
        "ImportError: /v/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclMemFree\n"
    )
    rc = _triage(text).root_cause  # type: ignore[attr-defined]
    assert rc is not None and rc.signature is not None and rc.signature.id == "nccl-undefined-symbol"
    said = f"{rc.signature.explanation} {rc.signature.fix}"
    assert "nvidia-nccl-cu11" in said and "uninstall" in said, said
