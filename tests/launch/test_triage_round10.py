"""triage for two causes of the real-world corpus, round ten: FlashInfer 0.6.18's JIT flag '--compress-mode=size'
refused by the box's nvcc (flashinfer-5479: the JIT toolchain, not the ninja summary that follows), and an
older libnvJitLink loaded beside torch's pip cuSPARSE (pytorch-144244: not an extension built for another
torch)."""

from __future__ import annotations

import io

from stackcheck.launch.triage import triage_stream


def root(text: str) -> tuple[str | None, str | None, str]:
    rc = triage_stream(io.BytesIO(text.encode())).root_cause
    assert rc is not None
    sig = rc.signature
    return (sig.id, sig.check, sig.title + " " + sig.explanation) if sig else (None, None, "")


BUILD = (
    "[1/4] /usr/local/cuda/bin/nvcc -std=c++17 -use_fast_math -Xfatbin=-compress-all --compress-mode=size "
    "-gencode=arch=compute_86,code=sm_86 -c sampling.cu -o sampling.cuda.o\n"
)


def test_nvccs_refusal_of_compress_mode_names_the_jit_toolchain() -> None:
    log = (
        "INFO flashinfer.jit: Loading JIT ops: sampling\n"
        + BUILD
        + "FAILED: sampling.cuda.o\n"
        + "nvcc fatal   : Unknown option '--compress-mode=size'\n"
        + "ninja: build stopped: subcommand failed.\n"
        + "RuntimeError: Ninja build failed: ninja: build stopped: subcommand failed.\n"
    )
    sig_id, check, text = root(log)
    assert (sig_id, check) == ("nvcc-unknown-option-compress-mode", "jit-toolchain")
    assert "0.6.18" in text and "nvcc" in text


def test_the_flag_on_a_build_line_alone_is_not_a_failure() -> None:
    # the build line carries the flag in every JIT build, failing or not: only nvcc's refusal names the cause
    sig_id, _, _ = root(BUILD + "RuntimeError: Ninja build failed: ninja: build stopped: subcommand failed.\n")
    assert sig_id != "nvcc-unknown-option-compress-mode"


SITE = "/venv/lib/python3.10/site-packages"


def _import_error(message: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        f'  File "{SITE}/torch/__init__.py", line 367, in <module>\n'
        "    from torch._C import *  # noqa: F403\n"
        f"ImportError: {message}\n"
    )


def test_an_older_nvjitlink_beside_torchs_cusparse_is_named_as_such() -> None:
    log = _import_error(
        f"{SITE}/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: "
        "__nvJitLinkComplete_12_4, version libnvJitLink.so.12"
    )
    sig_id, check, text = root(log)
    assert sig_id == "torch-nvjitlink-older"
    assert check is None  # no pre-launch check reads which libnvJitLink the loader resolves
    assert "older" in text and "LD_LIBRARY_PATH" in text


def test_an_extension_built_for_another_torch_keeps_its_own_name() -> None:
    log = _import_error(f"{SITE}/sgl_kernel/common_ops.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEab")
    assert root(log)[0] != "torch-nvjitlink-older"
