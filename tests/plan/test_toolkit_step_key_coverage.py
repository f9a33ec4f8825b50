"""Every jit fact path is either kept by a toolkit step or recomputed by it (irev63).

plan.hypothetical's toolkit step builds a new jit section: the keys the environment owns are copied as they are
(_KEPT_BY_TOOLKIT, a hand list), the rest are written by the step's own code (the new toolkit's, or left out where it
is not known). A key added to the jit probe and forgotten in both was silently dropped from the planned stack, and a
rule reading it was skipped there (irev63 found PYTORCH_NVCC's and the clang keys so). This test fails for a
documented jit fact path in neither list; RECOMPUTED names where the step handles each (read in
stackcheck/plan/hypothetical.py), so a new key needs a decision, not a default."""

from __future__ import annotations

from stackcheck.plan.hypothetical import _KEPT_BY_TOOLKIT
from stackcheck.verdicts.fact_paths import documented_fact_paths

#: jit keys the toolkit step writes or leaves out by its own code, and where
RECOMPUTED = {
    **dict.fromkeys(("toolkit", "chosen_by", "nvcc", "nvcc_found", "cuda", "fp8_header", "fp4_header",
                     "curand_header", "triton_ptxas"), "apply_choice: the new toolkit's (CUDA_HOME)"),
    "headers_cuda": "apply_choice: left out (the new toolkit's runtime headers are not read)",
    **dict.fromkeys(("rocm_home", "ninja_found", "ninja"), "apply_choice: copied from the old section"),
    **dict.fromkeys(("libnccl_so_found", "libnccl_so", "libnccl_so_dirs"), "_nccl_link_after_toolkit"),
    **dict.fromkeys(("libcudart_so_found", "libcudart_so", "libcudart_so_soname", "cxx_cuda_runtime_h_found",
                     "cxx_nccl_h_found"), "_compiler_after_toolkit: the new toolkit's lib64 and include"),
    **dict.fromkeys(("nvcc_host_found", "nvcc_host", "nvcc_host_gnu_major", "nvcc_host_gnu_max",
                     "nvcc_host_gnu_supported"), "_compiler_after_toolkit and _gnu_after_toolkit"),
    **dict.fromkeys(("cc_host_found", "cc_host", "cc_host_gnu_major", "cc_host_gnu_max", "cc_host_gnu_supported",
                     "cc_host_one_program"), "_cc_after_toolkit and _gnu_after_toolkit"),
    **dict.fromkeys(("nvcc_host_clang_major", "nvcc_host_clang_max", "nvcc_host_clang_supported", "cc_host_clang_major",
                     "cc_host_clang_max", "cc_host_clang_supported"), "_clang_after_toolkit"),
    **dict.fromkeys(("pytorch_nvcc", "pytorch_nvcc_found", "pytorch_nvcc_same"), "_pytorch_nvcc_after_toolkit"),
    "nvcc_host_asan_header_found": "_compiler_after_toolkit: kept with the gcc on the PATH (icov1)",
    "cc_host_asan_header_found": "_cc_after_toolkit: kept with CC's compiler (icov1)",
}  # fmt: skip


def _jit_paths() -> set[str]:
    return {p.removeprefix("jit.") for p in documented_fact_paths() if p.startswith("jit.")}


def test_every_jit_fact_path_is_kept_or_recomputed_by_a_toolkit_step() -> None:
    neither = sorted(_jit_paths() - set(_KEPT_BY_TOOLKIT) - set(RECOMPUTED))
    assert neither == [], (
        f"jit keys a toolkit step would drop unsaid (add to _KEPT_BY_TOOLKIT or RECOMPUTED): {neither}"
    )


def test_no_key_is_both_kept_and_recomputed() -> None:
    assert not set(_KEPT_BY_TOOLKIT) & set(RECOMPUTED)


def test_the_lists_name_only_jit_keys() -> None:
    # (a reason key is the probe's text beside a fact, not a fact path of its own)
    named = {k for k in [*_KEPT_BY_TOOLKIT, *RECOMPUTED] if not k.endswith("_reason")}
    assert sorted(named - _jit_paths() - {"triton_ptxas", "nvcc"}) == []
