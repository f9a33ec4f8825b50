"""triage for round thirteen's causes (issue 16): FlashMLA's own 'no kernel image' error, raised from the FlashMLA
that sgl-kernel builds (its path is sgl-kernel's build tree, `_deps/repo-flashmla-src/`), names sgl-kernel's FlashMLA
and the kernel-arch check even where the log has no sgl_kernel frame, while the same message from elsewhere stays
with the generic signature; nvidia-container-cli's 'requirement error: unsatisfied condition' (a lower-case line
with no usual needle) names the image-nvidia-require check."""

from __future__ import annotations

import io

from stackcheck.launch.triage import load_signatures, triage_stream

# written for this test in the shape of a multi-rank SGLang log (ranks interleaved, FlashMLA's CHECK line alone)
_FLASHMLA_ERROR = (
    "CUDA error (_deps/repo-flashmla-src/csrc/smxx/get_mla_metadata.cu:88): "
    "no kernel image is available for execution on the device\n"
)
FLASHMLA_LOG = (
    "[2026-03-02 10:14:05 DP2 TP2] Capture cuda graph begin. This can take up to several minutes. avail mem=6.80 GB\n"
    + _FLASHMLA_ERROR
    + "[2026-03-02 10:14:05 DP5 TP5] Capture cuda graph begin. This can take up to several minutes. avail mem=6.80 GB\n"
    + _FLASHMLA_ERROR
)

OTHER_LOG = """\
[2026-03-02 10:14:05 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=6.80 GB
CUDA error (/src/my_ext/kernels.cu:41): no kernel image is available for execution on the device
"""


def test_flashmla_no_kernel_image_names_sgl_kernels_flashmla() -> None:
    result = triage_stream(io.BytesIO(FLASHMLA_LOG.encode()), signatures=load_signatures())
    rc = result.root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "sgl-kernel-flashmla-no-kernel-image"
    assert result.check == "kernel-arch"
    text = " ".join((rc.signature.title, rc.signature.explanation, rc.signature.fix))
    assert "FlashMLA" in text and "sgl-kernel" in text and "sm_103" in text


def test_the_same_message_from_another_extension_stays_generic() -> None:
    result = triage_stream(io.BytesIO(OTHER_LOG.encode()), signatures=load_signatures())
    rc = result.root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "no-kernel-image"


def test_the_flashmla_signature_comes_before_the_generic_ones() -> None:
    ids = [s.id for s in load_signatures()]
    first = ids.index("sgl-kernel-flashmla-no-kernel-image")
    assert first < ids.index("sgl-kernel-no-kernel-image") < ids.index("no-kernel-image")


# ---- nvidia-container-cli refusing an image whose NVIDIA_REQUIRE_CUDA the driver does not meet ---------------

# written for this test in the shape of docker's output: the daemon's line, then the hook's own line
REQUIRE_LOG = (
    "$ docker compose up -d server\n"
    "Error response from daemon: failed to create task for container: OCI runtime create failed: error running "
    "prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
    "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=13.0, please update your driver to a "
    "newer version, or use an earlier cuda container: unknown\n"
)
REQUIRE_CDI_LOG = (
    "docker: Error response from daemon: failed to create task for container: failed to construct OCI spec "
    "modifier: requirements not met: unsatisfied condition: cuda>=12.9 (cuda=12.4): unknown\n"
)


def test_the_container_requirement_error_names_the_image_check() -> None:
    for log in (REQUIRE_LOG, REQUIRE_CDI_LOG):
        result = triage_stream(io.BytesIO(log.encode()), signatures=load_signatures())
        rc = result.root_cause
        assert rc is not None and rc.signature is not None, log
        assert rc.signature.id == "nvidia-container-require-unsatisfied"
        assert rc.kind != "stall"  # an error the log shows, not a run that stopped
        assert result.check == "image-nvidia-require"
        assert "NVIDIA_REQUIRE" in rc.signature.explanation and "driver" in rc.signature.fix
