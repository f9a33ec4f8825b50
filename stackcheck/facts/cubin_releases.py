"""The FlashInfer releases whose cubin loading was read, and the release tuple (the flashinfer_cubins probe's, shared
with the verdicts that read its section: the core imports no probe module, tests/test_import_graph.py)."""

from __future__ import annotations

import re

#: 0.6.16-0.6.17 split three families for GPU 10.7 (Rubin): `<F>_RUBIN` in ArtifactPath / CheckSumHash, loaded where
#: the device is (10, 7) (0.6.17 jit/fused_moe.py:246-256 with fused_moe/core.py:1428, jit/gemm/core.py:725-730 with
#: gemm/gemm_base.py:7150, deep_gemm.py:284-291); one family for every major-10 GPU again from 0.6.18 (artifacts.py
#: has no _RUBIN names in 0.6.18, 0.7.1, 0.7.4). They are read as families of their own where the release has them
RUBIN_SPLIT: tuple[str, ...] = ("TRTLLM_GEN_BMM", "TRTLLM_GEN_GEMM", "DEEPGEMM")
RUBIN_SPLIT_RELEASES = ((0, 6, 16), (0, 6, 17))
#: the releases whose cubin loading was read (0.5.0 read identical to 0.6.0; 0.7.3 does not exist)
FIRST_READ, LAST_READ = (0, 5, 0), (0, 7, 4)
#: FLASHINFER_NO_DOWNLOAD is read from 0.6.8 (get_artifact, cubin_loader.py:214) and in 0.6.7.post1-.post3 (no_download)
NO_DOWNLOAD_FROM = (0, 6, 8)
#: the GPU majors whose launches the manifests judge on the cubin probe's families: every rule that reads
#: flashinfer_cubins.ready.FAMILY (manifests/features.json, checks.json) has gpu.cc_major == 10 in the `all` of its
#: `when` (FlashInfer's trtllm-gen kernels are SM100 / SM103 ones), so on a box whose GPUs are all read and all of
#: another major no verdict reads a family and the probe does not check their files (iperf43: flashinfer-cubin
#: 0.6.13's 16,004 names, ~47 ms CPU each run); tests/probes/test_iperf43_cubin_gpu_scope.py holds the manifests to it
CUBIN_GPU_MAJORS: frozenset[int] = frozenset({10})
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)")


def release_tuple(version: str | None) -> tuple[int, int, int] | None:
    """(0, 6, 18) of "0.6.18", "0.6.15.post1", "0.7.2+cu130"; None where it does not start with X.Y.Z."""
    m = _VERSION.match(version or "")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None
