"""The documented fact paths: for each first part of a fact path (the keys of stackcheck.verdicts.context.FACT_PREFIXES,
its resolvers, in the same order) the paths it reads and what they are. manifests/README.md's table
(`fact_path_table`), the validator (`fact_path_documented`) and the tests read this one list. Pure, and it
imports nothing of stackcheck: the validator uses it without the evaluation context (no import cycle)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final, NamedTuple


class FactDoc(NamedTuple):
    """One row of the fact-path table: the paths (an UPPER-CASE part is a placeholder for one name, `*` for
    the rest of a path) and what they read (Markdown, one line)."""

    paths: tuple[str, ...]
    value: str


#: first part of a fact path -> the rows that document its paths; the order is the README table's
FACT_DOCS: Final[dict[str, tuple[FactDoc, ...]]] = {
    "gpu": (
        FactDoc(
            ("gpu.cc",),
            'a GPU\'s compute capability, `"12.0"` (rules over `gpu.*` are evaluated once per distinct GPU model)',
        ),
        FactDoc(
            ("gpu.cc_major", "gpu.sm", "gpu.name"), '`12`, `120`, `"NVIDIA RTX PRO 6000 Blackwell Server Edition"`'
        ),
        FactDoc(("gpu.count",), "number of visible GPUs"),
        FactDoc(
            ("gpu.fabric",),
            "the box's NVSwitch fabric registration (NVML's per-GPU `fabric`), worst GPU first: `completed`, "
            "`not-supported` (no GPU has a fabric: PCIe, or older than Hopper), else the GPU that is not registered, "
            "`in-progress (GPU 0)`; `assumed` for --assume-gpu; absent where a Hopper-or-newer GPU's state was not "
            "read, unknown (`exists` too) where the probe's read of it failed",
        ),
        FactDoc(
            ("gpu.min_cuda",),
            "the first CUDA toolkit that compiles for this GPU's architecture (architectures.json `min_cuda`)",
        ),
        FactDoc(
            ("gpu.proprietary_kmod",),
            "whether NVIDIA's proprietary kernel modules run this GPU: `yes`, `no` (open flavour required), "
            "`unknown` (architectures.json `proprietary_kernel_modules`)",
        ),
    ),
    "driver": (
        FactDoc(("driver.version", "driver.cuda"), '`"580.159.04"`, `"13.0"`'),
        FactDoc(
            ("driver.source",),
            "who answered for the driver: `nvml`, `nvidia-smi`, `proc` (the kernel module's "
            "/proc/driver/nvidia/version), `assumed` (--assume-driver), `plan` (a planned driver)",
        ),
        FactDoc(
            ("driver.kernel_modules",),
            "the loaded kernel modules' flavour from /proc/driver/nvidia/version: `open` (its line names the "
            "'Open Kernel Module') or `proprietary`; absent where not read",
        ),
        FactDoc(
            ("driver.userspace_version",),
            "the user-space driver's release: the version in the name of the real file behind the libnvidia-ml.so.1 "
            "the loader finds (`570.124.04`; stackcheck/probes/driver_libs.py)",
        ),
        FactDoc(
            ("driver.nvml_init_error",),
            "NVML's error when it could not start, nvidia-ml-py's class name without `NVMLError_` "
            "(`LibRmVersionMismatch`); absent where NVML started or the error is not one the probe knows",
        ),
    ),
    "pkg": (
        FactDoc(
            ("pkg.NAME.version",), "installed version of a distribution (normalised name), e.g. `pkg.sglang.version`"
        ),
        FactDoc(("pkg.NAME.installed",), "true or false"),
        FactDoc(
            ("pkg.NAME.listed",),
            "true when the packages list names the distribution (installed or not); false when a complete list (a "
            "packages probe's) does not, which a probe that did not look for it saved; unknown for a hand-written list",
        ),
        FactDoc(
            ("pkg.NAME.cuda", "pkg.NAME.variant"),
            "the CUDA build of a package: its local tag (`+cu130`), else the PyPI build the manifests record for "
            "that release",
        ),
        FactDoc(
            ("pkg.NAME.build_cuda_major",),
            "the CUDA major a prebuilt package's own build file names (sgl-deep-ep: deep_ep/_build_info.py; cupy, "
            "cupy-cuda12x / -cuda13x: cupy/.data/_wheel.json), read by the packages probe; absent where not read",
        ),
        FactDoc(
            ("pkg.NAME.torch_build",),
            "the torch release (`2.5`) an AOT wheel was compiled against, from its local tag (`+cu124torch2.5`, "
            "FlashInfer's cuXXX/torchX.Y indexes); absent for a build without such a tag (PyPI's)",
        ),
        FactDoc(
            ("pkg.NAME.archs",),
            "compiled targets of a package: the binary probe, else the manifest's variant (`archs_aarch64` on aarch64)",
        ),
        FactDoc(
            ("pkg.NAME.lib.LIB.archs",),
            "compiled targets of one shared library of a package (`kernel.lib.flashmla_ops.archs` for "
            "`sgl_kernel/flashmla_ops.abi3.so`): the binary probe's files (`--deep`), else the variant's `libs` in "
            "components.json",
        ),
        FactDoc(
            ("pkg.NAME.lib.LIB.missing_symbols",),
            "how many torch symbols and driver API functions an extension module of the kernel package "
            "(`kernel.lib.flash_ops.missing_symbols`) needs that the loader does not find (the kernel symbol probe's "
            "`modules`); absent where the probe did not look them up",
        ),
    ),
    "kernel": (
        FactDoc(("kernel.*",), "`pkg.*` of whichever kernel package is installed (`sglang-kernel`, else `sgl-kernel`)"),
    ),
    "torch": (
        FactDoc(
            ("torch.version", "torch.cuda", "torch.variant", "torch.archs"),
            "torch's own version (`2.11.0+cu130`), its CUDA build, `cu130`, the compiled targets (binary probe, else "
            "the manifest)",
        ),
        FactDoc(("torch.minor",), "torch's release as major.minor (`2.5` for `2.5.0a0+872d972e41.nv24.08`)"),
        FactDoc(
            ("torch.nccl", "torch.nccl_minor"),
            "the nvidia-nccl wheel release torch's CUDA build pins (components.json, its variant's `nccl`: "
            "`2.30.7` for 2.14.1+cu130) and that release's major.minor (`2.30`)",
        ),
        FactDoc(
            ("torch.ngc",),
            "true when torch is an NVIDIA container build (its local tag names the container release: "
            "`2.7.0a0+ecf3bae40a.nv25.02`), which links the container's libraries (NCCL) rather than nvidia-* wheels",
        ),
        FactDoc(
            ("torch.build_tag",),
            "the build torch's version names in its local tag the way PyTorch's own wheels (PyPI's included) write "
            "it in torch/version.py: `cu130` for `2.11.0+cu130`, `cpu`; `none` when the version carries no such tag "
            "(a conda or distribution build, an NVIDIA container's)",
        ),
    ),
    "toolkit": (
        FactDoc(("toolkit.cuda",), "the CUDA toolkit a build would use"),
        FactDoc(
            ("toolkit.found",),
            "whether that toolkit's directory exists ($CUDA_HOME or $CUDA_PATH, else the nvcc on PATH, else "
            "/usr/local/cuda; false when none of them does), from the toolkits probe",
        ),
    ),
    "topology": (
        FactDoc(
            ("topology.interconnect", "topology.p2p", "topology.same_model", "topology.nvswitch"),
            "see docs/design.md (`nvswitch`: every GPU has an NVLink to an NVSwitch, what NVLink multicast needs)",
        ),
    ),
    "launch": (
        FactDoc(("launch.tp",), "the tensor-parallel size (from the launch command in `gate`; else the GPU count)"),
        FactDoc(
            ("launch.pp",), "the pipeline-parallel size (`--pp-size`, default 1; from the launch command in `gate`)"
        ),
        FactDoc(
            (
                "launch.attention_backend",
                "launch.prefill_attention_backend",
                "launch.decode_attention_backend",
                "launch.dsa_prefill_backend",
                "launch.dsa_decode_backend",
                "launch.kv_cache_dtype",
                "launch.quantization",
                "launch.speculative_algorithm",
                "launch.moe_runner_backend",
                "launch.speculative_moe_runner_backend",
                "launch.fp8_gemm_backend",
                "launch.pdmux_config_path",
                "launch.lmcache_config_file",
                "launch.lmcache_config_file_env",
                "launch.lmcache_mp_host_env",
                "launch.lmcache_mp_host_env_set",
                "launch.deepep_mode",
                "launch.symm_mem",
                "launch.kv_cache_sharding",
                "launch.torchao_config",
            ),
            "from the launch command (`stackcheck gate`), as declared in launch.json (`symm_mem`: true where "
            "--enable-symm-mem is given, absent otherwise; `kv_cache_sharding` likewise for "
            "--enable-kv-cache-sharding; `lmcache_mp_host_env_set`: whether LMCACHE_MP_HOST is set at all, a "
            "launch.json `set_fact`)",
        ),
        FactDoc(
            ("launch.mla",),
            "whether the served model uses multi-head latent attention (DeepSeek, Kimi): read from its config.json "
            "by `recommend`, and by `gate` once the preflight has read the model; absent otherwise",
        ),
        FactDoc(
            ("launch.dual_chunk",),
            "true where the served model's config.json has dual_chunk_attention_config (Qwen2.5-1M), as `recommend` "
            "reads it (the gate's launch value model_dual_chunk); absent otherwise",
        ),
        FactDoc(
            ("launch.mla_kv_rope", "launch.mla_qk_nope_head_dim"),
            "the served model's MLA dims as its config.json states them (`mla_kv_rope`: "
            "'kv_lora_rank/qk_rope_head_dim', e.g. '512/64'; `mla_qk_nope_head_dim`: an integer), which the trtllm_mla "
            "and flashmla kernels check: read by `recommend`, and by `gate` once the preflight has read the model; "
            "absent otherwise, or where the file does not state them",
        ),
        FactDoc(
            ("launch.mla_prefill_dims",),
            "the served model's prefill head dims as its config.json states them ('QK/V': qk_nope_head_dim + "
            "qk_rope_head_dim, then v_head_dim, e.g. '192/128'), which trtllm_mla's ragged prefill kernel checks: read "
            "by `recommend`, and by `gate` once the preflight has read the model; absent otherwise",
        ),
        FactDoc(
            ("launch.mla_heads_per_gpu",),
            "the served model's query heads per GPU (config.json num_attention_heads over the attention TP size, tp "
            "// dp with DP attention), which FlashInfer's trtllm-gen MLA decode checks: read by `recommend`, and by "
            "`gate` once the preflight has read the model; absent otherwise, or where a flag that splits attention "
            "further leaves the count open",
        ),
        FactDoc(
            (
                "launch.draft_mla",
                "launch.draft_mla_kv_rope",
                "launch.draft_mla_qk_nope_head_dim",
                "launch.draft_mla_heads_per_gpu",
                "launch.draft_config_read",
                "launch.draft_attention_backend",
            ),
            "the speculative draft model's side (`gate` only): whether SGLang runs it as MLA, its MLA dims and query "
            "heads per GPU as its config.json states them (--speculative-draft-model-path; the target's when only "
            "the draft backend is given), whether that config.json was read, and --speculative-draft-attention-backend "
            "(absent: the draft runs on the target's backend); absent without speculative decoding or with NGRAM, "
            "DFLASH or DSPARK (their drafts never run trtllm_mla or flashmla)",
        ),
        FactDoc(
            ("launch.bf16_gemm_backend", "launch.deterministic_inference", "launch.rl_on_policy_target"),
            "from the launch command (`gate`), as declared in launch.json: --bf16-gemm-backend's value, true where "
            "--enable-deterministic-inference is given, --rl-on-policy-target's value (which turns deterministic "
            "inference on); absent where not given, and in the audit (the rules then judge SGLang's default, auto)",
        ),
        FactDoc(
            ("launch.fp4_gemm_backend",),
            "from the launch command (`gate`), as declared in launch.json: --fp4-gemm-backend's value; absent where "
            "not given, and in the audit (the rules on flashinfer_cutedsl then do not apply: SGLang's auto picks it on "
            "SM 10.x only)",
        ),
        FactDoc(
            ("launch.symm_mem_ignored",),
            "why the installed SGLang turns --enable-symm-mem back off for the served model (launch.json option "
            "ignored_for_models: Kimi hybrid models with CUDA graphs on, 0.5.17-0.5.18), as `gate`'s preflight read "
            "its config.json; absent otherwise (the flag kept)",
        ),
        FactDoc(
            ("launch.model_config_read",),
            "whether `gate`'s preflight read the served model's config.json (false: it names a model whose config it "
            "could not read, and the rules on the model's MLA dims are unknown); absent outside `gate`",
        ),
        FactDoc(
            ("launch.model_quant_method",),
            "the served model's own quantization as SGLang reads its checkpoint (config.json's quantization_config"
            ".quant_method, or hf_quant_config.json's ModelOpt quant_algo mapped by preflight.json, e.g. `fp8`, "
            "`modelopt_fp4`, `compressed-tensors`): read by `gate`'s preflight; absent otherwise, or where the "
            "checkpoint states none",
        ),
        FactDoc(
            ("launch.moe_runner_auto",),
            "the MoE runner SGLang picks itself for the served model where --moe-runner-backend is auto or not "
            "given (launch.json refusals.auto.moe_runner): `flashinfer_trtllm` for the DeepSeek family with an FP8 "
            "or ModelOpt checkpoint (or none) and no all-to-all backend, the Qwen3-MoE family's likewise (icubin3), "
            "`flashinfer_mxfp4` for a GPT-OSS MXFP4 checkpoint, `flashinfer_cutlass` for a BF16 Nemotron-H MoE "
            "under --moe-a2a-backend deepep (imoe6) "
            "(the DeepSeek and Qwen3-MoE picks 0.5.9-0.5.23, imoe5; the others 0.5.20-0.5.23; the GPU side is "
            "the rule's `when`), "
            "`unread` where an override not modelled may pick one, an all-to-all backend is set (but deepep with a "
            "BF16 checkpoint on 0.5.20-0.5.23 where no override picks under it, imoe6) or the model was not read, "
            "`auto` where SGLang picks none: set by `gate` once its preflight looked for the model; absent "
            "otherwise (a runner given, a release outside the entry's `read`, the audit)",
        ),
        FactDoc(
            ("launch.model_moe",),
            "whether the launch runs any MoE layer: true where the served model's config.json or its draft model's "
            "names routed experts, false where both were read as dense (stackcheck/launch/refusals.py "
            "launch_model_moe), for the rules on the MoE runner SGLang may pick itself: set by `gate`; absent "
            "otherwise (a model or draft not read, or its experts not told)",
        ),
        FactDoc(
            ("launch.draft_model_moe",),
            "whether the speculative draft model has routed experts: its config.json, the served model's where the "
            "command names no draft model (SGLang loads it for MTP / NEXTN), as the refusals' draft_model_moe reads "
            "it (stackcheck/launch/refusals.py launch_draft_model_moe), for the rules on "
            "--speculative-moe-runner-backend: set by `gate`; absent otherwise (not read, or its experts not told)",
        ),
        FactDoc(
            ("launch.model_moe_renormalize",),
            "whether the served model's routed top-k renormalizes its weights: config.json's norm_topk_prob, else the "
            "default of its model type's transformers config class (stackcheck/launch/refusals.py "
            "launch_model_moe_renormalize; qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3, glm4_moe; cohere2_moe from "
            "SGLang's own config class), which SGLang's BF16 trtllm-gen MoE asserts: set by `gate`; absent otherwise "
            "(not read, another model type)",
        ),
        FactDoc(
            ("launch.model_moe_topk_kept",),
            "whether SGLang 0.5.23 keeps the served model's routed top-k in SGLang on the trtllm-gen MoE runner "
            "when it does not renormalize (its routing method needs renormalize to hand it to FlashInfer), so the "
            "BF16 path's renormalize assertion is not reached (stackcheck/launch/refusals.py "
            "launch_model_moe_topk_kept: true for qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3, glm4_moe without "
            "a routing_method_type key, false for Llama 4; for cohere2_moe true where expert_selection_fn is sigmoid, "
            "false otherwise): set by `gate`; absent otherwise",
        ),
        FactDoc(
            ("launch.model_quant_loaded",),
            "the config class the installed SGLang loads the served model's ModelOpt MIXED_PRECISION checkpoint "
            "with, where the gate decides it (preflight.json model.w4afp8_moe): `modelopt_mixed` whatever "
            "--quantization says (the release maps it there, and the flag is absent or one it replaces; its minimum "
            "is the gate's check modelopt-mixed-min-cc), `w4afp8` where the release parses it to w4afp8 and the flag "
            "is absent or w4afp8 (rule quant-loader-sm90): read by `gate`'s preflight; absent otherwise",
        ),
        FactDoc(
            ("launch.model_quant_schemes",),
            "the schemes a compressed-tensors checkpoint's config_groups select (preflight.json "
            "model.compressed_tensors_schemes: `wna16`, `fp8-w8a8`, `fp8-block`, `fp8-w8a16`, `int8-w8a8`, "
            "`nvfp4-w4a4`, `nvfp4-w4a16`; `mixed-precision` beside a mixed-precision checkpoint's group schemes), "
            "or a Quark checkpoint's configs (model.quark_schemes: `quark-fp8-w8a8`, "
            "`quark-mxfp4`); `unknown` for a group or config the gate does not read; sorted: read by `gate`'s "
            "preflight where the checkpoint's quant_method is compressed-tensors or quark; absent otherwise",
        ),
        FactDoc(
            ("launch.model_kv_cache_fp8",),
            "whether a compressed-tensors checkpoint's kv_cache_scheme is static symmetric per-tensor FP8, the one "
            "SGLang's compressed-tensors KV-cache method takes (preflight.json model.compressed_tensors_schemes."
            "kv_cache_scheme_fp8), so that --kv-cache-dtype auto makes the KV cache fp8_e4m3 on releases whose "
            "config class reports it (0.5.19+): read by `gate`'s preflight where the quant_method is "
            "compressed-tensors; absent otherwise",
        ),
        FactDoc(
            ("launch.pcie_ipc_allreduce",),
            "whether SGLang's opt-in PCIe-IPC all-reduce is on (`SGLANG_ENABLE_PCIE_IPC_ALLREDUCE`, a launch.json "
            "`env` entry with a `fact`): the launch's environment in `gate`; in the audit the probed environment's "
            "value, else SGLang's default (off)",
        ),
        FactDoc(
            ("launch.flashmla_sparse_prefill",),
            "whether SGLang sends every DeepSeek-V4 prefill to FlashMLA's sparse kernel "
            "(`SGLANG_OPT_FLASHMLA_SPARSE_PREFILL`, a launch.json `env` entry with a `fact`): the launch's environment "
            "in `gate`; in the audit the probed environment's value, else SGLang 0.5.15's default (on)",
        ),
        FactDoc(
            ("launch.custom_all_reduce_v2",),
            "whether SGLang takes its JIT-compiled custom all-reduce (`SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2`, a "
            "launch.json `env` entry with a `fact`): the launch's environment in `gate`; in the audit the probed "
            "environment's value, else SGLang's default (on)",
        ),
        FactDoc(
            ("launch.jit_deepgemm",),
            "whether SGLang's DeepGEMM JIT kernels are on (`SGLANG_ENABLE_JIT_DEEPGEMM`, a launch.json `env` entry "
            "with a `fact`): off, `--fp8-gemm-backend auto` runs FlashInfer's trtllm-gen FP8 GEMM on major 10 "
            "(0.5.7+); the launch's environment in `gate`, in the audit the probed environment's value, else "
            "SGLang's default (on)",
        ),
        FactDoc(
            ("launch.jit_all_reduce",),
            "whether `SGLANG_USE_JIT_ALL_REDUCE` (the v2 all-reduce switch's old name, a launch.json `env` entry with "
            "a `fact`) is on: SGLang 0.5.10-0.5.11 take the JIT-compiled custom all-reduce only with it, 0.5.12-0.5.20 "
            "let it replace `SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2` where it is set; the launch's environment in `gate`, "
            "in the audit the probed environment's value, else off",
        ),
        FactDoc(
            ("launch.jit_all_reduce_set",),
            "whether `SGLANG_USE_JIT_ALL_REDUCE` is set at all (its launch.json `set_fact`): the launch's environment "
            "in `gate`, in the audit the probed environment's",
        ),
        FactDoc(
            ("launch.checkpoint_quantized",),
            "whether the served model's checkpoint carries a quantization (`gate` only, once its preflight read "
            "config.json: false where it holds none, so a --quantization is applied while loading); absent "
            "otherwise",
        ),
        FactDoc(
            ("launch.minicpm_fuse_topk",),
            "whether SGLang's MiniCPM sparse backend takes its fused TileLang top-k on every GPU "
            "(`SGLANG_MINICPM_FUSE_TOPK`, a launch.json `env` entry with a `fact`, read from 0.5.19): the launch's "
            "environment in `gate`; in the audit the probed environment's value, else SGLang's default (off)",
        ),
    ),
    "env": (FactDoc(("env.NAME",), "an allow-listed environment variable"),),
    "image": (
        FactDoc(
            ("image.nvidia_require_text",),
            "`--image`: the image config's `NVIDIA_REQUIRE_*` texts (absent when the image states none, or in a host "
            "audit)",
        ),
        FactDoc(
            ("image.nvidia_require",),
            '`--image`: `"met"`, or `"unmet: <requirement> (<why>)"`, as nvidia-container-toolkit judges those texts '
            "against `driver.*` and the GPUs (stackcheck/image/require.py); unknown when the driver is not known",
        ),
        FactDoc(
            ("image.started_by",),
            "how the audited image's container is started (`--started-by`: `docker-gpus`, `nvidia-runtime`, "
            "`cdi-device`); absent when not stated",
        ),
    ),
    "docker": (
        FactDoc(
            ("docker.read",),
            '`"read"` where the docker_daemon facts hold the host\'s Docker daemon; absent where there are none or the '
            "box audited has no Docker (stackcheck/probes/docker_daemon.py)",
        ),
        FactDoc(
            ("docker.runtime.NAME",),
            '`"registered"` where the host\'s dockerd has the OCI runtime NAME (stock, daemon.json `runtimes`, '
            '`--add-runtime`), `"not registered: ..."` where its whole list was read; unknown where dockerd\'s flags '
            "or its config file were not read (stackcheck/probes/docker_daemon.py)",
        ),
        FactDoc(
            ("docker.gpu_request",),
            '`"served"` where dockerd found nvidia-container-runtime-hook on its PATH as it started (`docker run '
            '--gpus`), `"not served: ..."` where neither it nor nvidia-cdi-hook is on the PATH read from its '
            "/proc/PID/environ; else unknown (stackcheck/probes/docker_daemon.py)",
        ),
        FactDoc(
            ("docker.cdi_kind.VENDOR.CLASS",),
            '`"found"` where a CDI spec in the spec directories (/etc/cdi, /var/run/cdi, or those configured) names '
            "the device kind VENDOR/CLASS (`docker.cdi_kind.nvidia.com.gpu`: the part after the last dot is the "
            "class) and daemon.json sets features.cdi true (a Docker before 28.2.0 injects no CDI device without it; "
            'its release is not read), `"none in ..."` where all were read; else unknown '
            "(stackcheck/probes/docker_daemon.py)",
        ),
    ),
    "jit": (
        FactDoc(
            (
                "jit.cuda",
                "jit.nvcc_found",
                "jit.fp8_header",
                "jit.fp4_header",
                "jit.curand_header",
                "jit.headers_cuda",
                "jit.toolkit",
                "jit.chosen_by",
                "jit.rocm_home",
                "jit.ninja_found",
                "jit.ninja",
                "jit.libnccl_so_found",
                "jit.libnccl_so",
                "jit.libnccl_so_dirs",
                "jit.libcudart_so_found",
                "jit.libcudart_so",
                "jit.libcudart_so_soname",
                "jit.cxx_found",
                "jit.cxx",
                "jit.cxx_cuda_runtime_h_found",
                "jit.cxx_nccl_h_found",
                "jit.cxx_quoted_found",
                "jit.cxx_split_found",
                "jit.nvcc_host_found",
                "jit.nvcc_host",
                "jit.nvcc_host_gnu_major",
                "jit.nvcc_host_gnu_max",
                "jit.nvcc_host_gnu_supported",
                "jit.nvcc_host_clang_major",
                "jit.nvcc_host_clang_max",
                "jit.nvcc_host_clang_supported",
                "jit.nccl_so_path",
                "jit.nccl_so_path_found",
                "jit.nccl_so_path_init_config",
                "jit.nccl_so_path_window",
                "jit.nccl_so_path_mem_alloc",
                "jit.nccl_so_path_version",
                "jit.nccl_so_path_cuda",
                "jit.nccl_so_path_cuda_major",
                "jit.flashinfer_host",
                "jit.flashinfer_allow_unsupported",
                "jit.cc_host_found",
                "jit.cc_host",
                "jit.cc_host_gnu_major",
                "jit.cc_host_gnu_max",
                "jit.cc_host_gnu_supported",
                "jit.cc_host_clang_major",
                "jit.cc_host_clang_max",
                "jit.cc_host_clang_supported",
                "jit.cc_host_one_program",
                "jit.pytorch_nvcc",
                "jit.pytorch_nvcc_found",
                "jit.pytorch_nvcc_same",
                "jit.nvcc_host_asan_header_found",
                "jit.cc_host_asan_header_found",
            ),
            "the toolkit a JIT build picks (CUDA_HOME, else the nvcc on PATH, else /usr/local/cuda), whether it has "
            "`bin/nvcc`, `include/cuda_fp8.h`, `include/cuda_fp4.h`, `include/curand_kernel.h`, and the CUDA "
            "version of the runtime headers it compiles against (`headers_cuda`: CUDART_VERSION); the ROCm home "
            "apache-tvm-ffi finds (`rocm_home`: ROCM_HOME, ROCM_PATH, the hipcc on PATH, or an existing /opt/rocm; "
            "absent when there is none; null where a relative PATH entry before any hipcc is the server's working "
            "directory, not known); whether a `ninja` executable is on the PATH the server runs with "
            "(`ninja_found`: null where a relative PATH entry comes first, which is the JIT build directory's) and its "
            "path (`ninja`: absent when there is none); whether a `-lnccl` link finds "
            "libnccl.so (or libnccl.a) in the directories torch's load_inline link searches (`libnccl_so_found`: "
            "null where one of them could not be read; torch's own lib directory first), the file (`libnccl_so`) "
            "and the directories read (`libnccl_so_dirs`); the same for torch's own `-lcudart` (`libcudart_so_found`, "
            "`libcudart_so`: libcudart.so or libcudart.a; the pip wheels' libcudart.so.12 / .13 is not taken) and that "
            "libcudart.so's DT_SONAME (`libcudart_so_soname`: absent for libcudart.a; a linker script followed to "
            "the library it names in its own directory, a bare name only under binutils 2.37+'s ld; null where it has "
            "none or the script is not followed); "
            "whether the C++ compiler torch's load_inline runs "
            "($CXX, else c++) is on that PATH (`cxx_found`: null where CXX has arguments or is relative; then "
            "`cxx_quoted_found`: whether one program of the whole value is there, as SGLang 0.5.18+ run it; "
            "`cxx_split_found`: whether the program the shell's split of it runs is there, as torch 2.8-2.12 run "
            "it) and its "
            "path (`cxx`: absent when there is none); whether that compile finds cuda_runtime.h and nccl.h in the "
            "directories it searches (`cxx_cuda_runtime_h_found`, `cxx_nccl_h_found`: null where one could not be "
            "read); whether the host compiler nvcc runs with no -ccbin (gcc on that PATH, then the toolkit's bin and "
            "nvvm/bin) is found (`nvcc_host_found`: absent where NVCC_CCBIN, NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS, "
            "nvcc.profile or a wrapper nvcc may name another; false for a gcc without cc1plus, no g++) and its path "
            "(`nvcc_host`), that gcc's major, the newest the toolkit's include/crt/host_config.h takes and whether it "
            "is within it (`nvcc_host_gnu_major`, `nvcc_host_gnu_max`, `nvcc_host_gnu_supported`: absent where the "
            "header's limit is not read or -allow-unsupported-compiler is in NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS; "
            "`nvcc_host_gnu_supported` null where the gcc's major is not read, as for a ccache link named gcc); "
            "SGLANG_NCCL_SO_PATH of the server's environment, the library SGLang's pynccl loads instead of "
            "libnccl.so.2 (`nccl_so_path`: absent where unset or empty), and whether that file exists and exports "
            "every function SGLang's pynccl binds in it, ncclGetVersion, ncclReduce, ... (`nccl_so_path_found`: null "
            "for a relative path, a bare name other than libnccl.so.2 that LD_LIBRARY_PATH, the ld.so cache and the "
            "default directories do not hold, or a file not read as an ELF shared library), "
            "and whether it exports ncclCommInitRankConfig, bound too from SGLang 0.5.17 "
            "(`nccl_so_path_init_config`), whether dlsym finds ncclCommWindowRegister there (`nccl_so_path_window`: "
            "an NCCL older than 2.27 has none) and, where it does, whether ncclMemAlloc and ncclMemFree are "
            "functions there, bound with it by SGLang 0.5.23 (`nccl_so_path_mem_alloc`; a function: a defined global "
            "or weak STT_FUNC symbol of the default version or none, what ctypes finds through dlsym), and the NCCL "
            "version that file was built as, read from its .rodata (`nccl_so_path_version`, X.Y.Z of NCCL's "
            '"NCCL version X.Y.Z+cudaA.B" string: null where not read, where the patch has more than one digit '
            "(a digit-led NCCL_SUFFIX runs into it) and for libnccl.so.2 itself) and the CUDA version of the same "
            'string\'s "+cudaA.B", the build of the CUDA runtime that library links statically (`nccl_so_path_cuda`, '
            '"13.0", and its major, `nccl_so_path_cuda_major`, 13: absent where the string is not read); the host '
            'compiler of FlashInfer\'s own JIT nvcc commands (`flashinfer_host`: "cc" where CC is set, FlashInfer '
            'passing -ccbin $CC; "nvcc-default" where not; null where FLASHINFER_NVCC or a -ccbin in '
            "FLASHINFER_EXTRA_CUDAFLAGS names another), whether -allow-unsupported-compiler reaches those commands "
            "(`flashinfer_allow_unsupported`), and for CC the same readings as for gcc (`cc_host_found`: null where "
            "CC is not one program or another -ccbin competes; `cc_host`, `cc_host_gnu_major`, `cc_host_gnu_max`, "
            "`cc_host_gnu_supported`: only where CC resolves to GCC's driver, gcc or g++), and whether the shell "
            "running FlashInfer's ninja command leaves CC one word (`cc_host_one_program`: false where the second word "
            "is no option, CC='ccache gcc'; null where the rest are options or CC is empty; absent where CC is unset); "
            "PYTORCH_NVCC of the server's environment, the nvcc FlashInfer before 0.5.0 compiles with in place of the "
            "toolkit's (`pytorch_nvcc`: absent where unset), whether the program it names is there "
            "(`pytorch_nvcc_found`: one program, or ccache / sccache and one; false where empty or missing; null where "
            "not read) and whether "
            "it is the toolkit's own bin/nvcc (`pytorch_nvcc_same`: null where it is another); for a clang that "
            "NVCC_CCBIN or CC names, its major and the newest the toolkit's host_config.h takes "
            "(`nvcc_host_clang_*`, `cc_host_clang_*`: `_supported` null where the clang's major is not read); "
            "whether the gcc of `nvcc_host` / `cc_host` finds sanitizer/asan_interface.h, which FlashInfer "
            "0.5.0-0.7.4's memoryUtils.cu includes unconditionally (`nvcc_host_asan_header_found`, "
            "`cc_host_asan_header_found`: CPATH / CPLUS_INCLUDE_PATH, the toolkit's include, the gcc's own "
            "PREFIX/lib/gcc/TRIPLET/N/include, the system directories; null where one of them is not known; absent "
            "where the gcc's major is not read) "
            "(stackcheck/probes/jit.py)",
        ),
    ),
    "cudalib": (
        FactDoc(
            ("cudalib.NAME.MAJOR",),
            "whether the dynamic loader finds `libNAME.so.MAJOR` (`cudalib.cudart.12`) on LD_LIBRARY_PATH, in the "
            "ld.so cache or the default directories (stackcheck/probes/cudalibs.py)",
        ),
    ),
    "pcie": (
        FactDoc(
            ("pcie.iommu", "pcie.acs"),
            "the IOMMU mode of the GPUs' groups (`off`, `passthrough`, `translated`, `mixed`) and whether ACS "
            "redirects peer traffic on the bridges above them (`enabled`, `disabled`, `unknown`: needs root) "
            "(stackcheck/probes/pcie.py)",
        ),
        FactDoc(
            ("pcie.gpus",),
            "the PCI addresses bound to the `nvidia` kernel module (/sys/bus/pci/drivers/nvidia/), seen even where "
            "NVML lists no GPU",
        ),
    ),
    "release": (
        FactDoc(
            ("release.NAME.FIELD",),
            "a field of components.json's record of the installed release of NAME "
            "(`release.sgl-deep-gemm.arch_majors`, `release.sglang.kernel_min_at_start`: the kernel package SGLang's "
            "engine checks at start)",
        ),
    ),
    "known": (
        FactDoc(
            ("known.NAME",),
            "where the installed NAME stands against the manifests' releases: `known`, `older` (than every one), "
            "`newer`, `unlisted`",
        ),
    ),
    "triton": (
        FactDoc(
            ("triton.version",), "the installed Triton's version (`triton`, else PyTorch's nightly `pytorch-triton`)"
        ),
        FactDoc(
            ("triton.ptxas_cuda",),
            "the CUDA release of the ptxas Triton runs for this GPU: the TRITON_PTXAS_* override's `--version`, else "
            "the bundled ptxas of the installed Triton, or the tool its `tool_min_sm` names for this SM "
            "(ptxas-blackwell; components.json `tools`)",
        ),
    ),
    "system": (
        FactDoc(("system.machine",), "the box's machine, `x86_64` or `aarch64` (facts.system.machine)"),
        FactDoc(("system.python",), "the Python that runs SGLang, as `3.12.3` (facts.system.python)"),
    ),
    "transfer": (
        FactDoc(
            ("transfer.BACKEND.package",),
            "true where `gate`'s check transfer-package passes for `--disaggregation-mode prefill "
            "--disaggregation-transfer-backend BACKEND` on these facts (`transfer.mooncake.package`: Mooncake "
            "installed and, where its release NEEDs a CUDA runtime library of another major than torch's or a "
            "system library no wheel brings, the loader finds it), else what the check observed (as `mooncake-"
            "transfer-engine 0.3.8 installed; libibverbs.so.1 not found by the loader`), judged by the gate's own "
            "function from preflight.json transfer_packages; unknown where the gate says unknown",
        ),
    ),
    "flashinfer_cubins": (
        FactDoc(
            ("flashinfer_cubins.ready.FAMILY",),
            "whether FlashInfer's cubin family FAMILY (`TRTLLM_GEN_FMHA`, `TRTLLM_GEN_BMM`, `TRTLLM_GEN_GEMM`, "
            "`DEEPGEMM`, `CUDNN_SDPA`: flashinfer/artifacts.py ArtifactPath; CUDNN_SDPA's three cubins named in "
            "data/csrc/cudnn_sdpa_kernel_launcher.cu) is on the box for the first kernel: true where the directory "
            "the installed release's `_get_cubin_dir` picks (FLASHINFER_CUBIN_DIR, the flashinfer-cubin package, the "
            "cache under FLASHINFER_WORKSPACE_BASE or HOME; the order per release), or a local "
            "FLASHINFER_CUBINS_REPOSITORY it copies from (into that directory, where it is writable), holds the "
            "family's checksums.txt with its sha256 and every file it lists as a loadable (regular, non-empty) file "
            "(their sha256, which the loader checks unless FLASHINFER_CUBIN_CHECKSUM_DISABLED is set, is not: "
            '`files` says "present, unverified"); false where that manifest is missing (or not the release\'s '
            "sha256) or lists only missing files and FLASHINFER_NO_DOWNLOAD is set on a release that reads it "
            "(0.6.8+: RuntimeError 'Artifact not found locally'), or where no fetch can succeed (a local repository "
            "lacking them, a file:// repository); unknown where a download would be tried (the network is not read), "
            "some listed files are missing under FLASHINFER_NO_DOWNLOAD, checksums.txt is not the release's sha256 and "
            "FLASHINFER_CUBIN_CHECKSUM_DISABLED is set (the loader takes it as it is, with another release's files), "
            "checksums.txt names a path outside the family's directory (absolute or with a `..` component), "
            "or the directory is not known; absent for "
            "FlashInfer outside 0.5.0-0.7.4, and unknown where the section's "
            "release is not the installed one (stackcheck/probes/flashinfer_cubins.py)",
        ),
        FactDoc(
            ("flashinfer_cubins.no_download", "flashinfer_cubins.dir_source"),
            "FLASHINFER_NO_DOWNLOAD set in the server's environment on FlashInfer 0.6.8+ (true/false), and where the "
            "cubin directory comes from: `FLASHINFER_CUBIN_DIR`, `flashinfer-cubin`, `cache`",
        ),
    ),
}


def documented_fact_paths() -> list[str]:
    """Every documented fact path pattern, in the table's order (`pkg.NAME.version`, `kernel.*`, ...)."""
    return [path for docs in FACT_DOCS.values() for doc in docs for path in doc.paths]


def fact_path_table() -> str:
    """The Markdown table of the fact paths that manifests/README.md shows ("Fact paths")."""
    lines = ["| path | value |", "|---|---|"]
    for docs in FACT_DOCS.values():
        for doc in docs:
            lines.append(f"| {', '.join(f'`{p}`' for p in doc.paths)} | {doc.value} |")
    return "\n".join(lines) + "\n"


def fact_path_documented(path: str) -> bool:
    """Whether a fact path matches a documented pattern: an UPPER-CASE part stands for one name (a distribution,
    library or variable name, dots allowed as in `pkg.NAME.version`), `*` for the rest of the path."""
    return any(pattern.match(path) for pattern in _fact_path_patterns())


@lru_cache(maxsize=1)
def _fact_path_patterns() -> tuple[re.Pattern[str], ...]:
    name = r"[A-Za-z0-9][A-Za-z0-9._-]*"

    def part(p: str) -> str:
        if p == "*":
            return r".+"
        return name if p.isupper() else re.escape(p)

    return tuple(re.compile(r"\A" + r"\.".join(map(part, p.split("."))) + r"\Z") for p in documented_fact_paths())
