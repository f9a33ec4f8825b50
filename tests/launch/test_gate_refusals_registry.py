"""launch.json `refusals` against the real SGLang wheels: each rule's check is in the releases its ranges say it
applies to and absent from the others, and the attention backends the EAGLE top-k/page-size check accepts are
the ones the release's own code lists. A few releases by default; every release of the data with
STACKCHECK_REGISTRY_ALL=1."""

from __future__ import annotations

import ast
import json
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from registry_wheels import fetch_wheel, is_argument_source, read_texts, run_all

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import load

# a fragment of each rule's upstream message, to find the check in a wheel
CHECK_TEXT = {
    "eagle-topk-page-size": "with page_size > 1 is",
    # irev85: SGLang's start checks on --bf16-gemm-backend (unquant.initialize_bf16_gemm_config, CHECK_FILE)
    "bf16-gemm-cutedsl-deterministic": "is batch-size dependent and cannot",
    "bf16-gemm-cutedsl-sm10x": "cutedsl requires SM100/SM103",
    "bf16-gemm-gemv-arch": "--bf16-gemm-backend gemv requires SM90",
    "lmcache-disable-radix-cache": "requires radix cache to be enabled",
    # igap49: the other checks of the same LMCache block (0.5.21-0.5.23), and its DCP check, also in HiCache's DCP
    # resolution from 0.5.17 (ALSO_TEXT: its guard on the hierarchical cache)
    "lmcache-hierarchical-cache": '"--enable-lmcache and --enable-hierarchical-cache are "',
    "lmcache-unified-cache-external-linker": '"--enable-lmcache and --enable-unified-cache-external-linker "',
    "lmcache-speculative": "LMCacheUnifiedRadixCache does not yet support speculative decoding",
    "lmcache-dp-attention": "LMCacheUnifiedRadixCache does not yet support DP attention",
    "lmcache-dcp": "--enable-lmcache with --dcp-size > 1 is not supported",
    "lmcache-streaming-session": "LMCacheUnifiedRadixCache does not yet support streaming sessions",
    "lmcache-hicache-buffer-only": "--hicache-host-memory-mode=buffer_only is a HiCache-only mode",
    "lmcache-disaggregation": "LMCacheUnifiedRadixCache currently supports colocated",
    # ifc53: HiCache's host pool checked against the host's available memory as it is built (CHECK_FILE)
    "hicache-unified-memory-host-pool": "Not enough host memory available. Requesting",
    "hicache-host-pool-memory": "Not enough host memory available. Requesting",  # (igap55: any GPU but a GB10)
    # the unified memory pool's assertion: 0.5.15-0.5.20 with the hierarchical cache (CHECK_TEXT_ALSO: 0.5.21 on)
    "lmcache-unified-memory": "host-tiered KV cache (--enable-hierarchical-cache / --enable-lmcache)",
    # igap51: the same assertion with the hierarchical cache (0.5.15-0.5.20; 0.5.21 on assert LMCache alone), the
    # int8 mamba checkpoint's raises (the hierarchical cache 0.5.14 on, LMCache 0.5.21 on) and the NVFP4 KV cache's
    # host-pool raise on SM100 with trtllm_mha (0.5.21 on)
    "unified-memory-hierarchical-cache": "host-tiered KV cache (--enable-hierarchical-cache / --enable-lmcache)",
    "int8-mamba-checkpoint-hierarchical-cache": '"--enable-hierarchical-cache: the host-offload path "',
    "lmcache-int8-mamba-checkpoint": "LMCache is not int8-aware",
    "int8-mamba-checkpoint-radix-cache-backend": "is not int8-aware. Omit --radix-cache-backend.",  # irev72
    "nvfp4-kv-sm100-host-cache": "hierarchical KV cache or LMCache because their host pools",
    # igap51: the DWDP handler's assertions (0.5.17 on)
    "dwdp-constraints": "must equal tp_size (",
    "trtllm-mha-topk-one": "trtllm_mha backend only supports topk = 1",
    "standalone-dp-attention": "standalone speculative decoding does not support dp attention",
    "ngram-dp-attention": "ngram speculative decoding does not support dp attention",
    "flex-attention-speculative": "Speculative decoding is currently not supported with Flex Attention",
    # the Llama 4 assertion's message as 0.5.1-0.5.5 write it, before SGLang picks a backend (from 0.5.6 it picks
    # one first and the message goes on with ' but got ...')
    "llama4-attention-backend": 'is required for Llama4 model"',
    # the assert before SGLang's own choice of steps, top-k and draft tokens
    "spec-topk-without-steps": "speculative_eagle_topk is None",
    # the unguarded comparison of the top-k with 1 is the first operand of the top-k/page-size check
    "spec-steps-without-topk": "with page_size > 1 is",
    # checked when the trtllm_mha backend starts, in its own module (CHECK_FILE)
    "trtllm-mha-page-128-heads": "dynamic tokens-per-page kernels, which only",
    # asserted as the model loads, in the attention registry (CHECK_FILE); every release's wording ends so
    "hybrid-gdn-blackwell-backend": "on Blackwell GPUs for hybrid GDN models",
    # GPT-OSS's own list of attention backends, asserted in its model-specific adjustments
    "gpt-oss-attention-backend": "GptOssForCausalLM requires one of",
    "gemma4-attention-backend": "Gemma4 only supports",  # imodel2
    # Olmo2's assertion against flashinfer (its message names Olmo3)
    "olmo2-attention-backend": "FlashInfer backend can significantly degrade the performance of Olmo3",
    # the MLA list of 0.5.1-0.5.4, checked as the model runner starts (CHECK_FILE)
    "mla-attention-backend": "Invalid attention backend for MLA",
    # the Llama 4 assertion from 0.5.6, after SGLang's own pick (its message goes on with ' but got ...')
    "llama4-listed-attention-backend": "is required for Llama4 model but got",
    # deterministic inference's list (tests/launch/test_gate_deterministic_registry.py reads the rest)
    "deterministic-attention-backend": "attention backends are supported for deterministic inference",
    # Exaone 4's own list of attention backends, asserted in its model-specific adjustments (0.5.9 on)
    "exaone4-attention-backend": "is required for {model_arch}, but got",
    # the aiter package the AMD backend imports (its failed import only printed), in its own module (CHECK_FILE)
    "aiter-attention-backend-on-cuda": "from aiter import",
    # the backends of other devices, each in its own module (CHECK_FILE): Ascend's torch_npu, the CPU operator the
    # Intel AMX backend reads as it is built, the sgl-kernel-xpu name the Intel XPU backend imports from 0.5.11,
    # and AMD's wave_lang that the wave kernels import
    "ascend-attention-backend-on-cuda": "import torch_npu",
    "intel-amx-attention-backend-on-cuda": "torch.ops.sgl_kernel.decode_attention_cpu",
    "intel-xpu-attention-backend-on-cuda": "flash_mla_decode",
    "wave-attention-backend-on-cuda": "from wave_lang",
    # the MLA-only raises of two backends, in the attention registry (CHECK_FILE)
    "cutedsl-mla-mla-models-only": "cutedsl_mla backend can only be used with MLA models",
    "tokenspeed-mla-mla-models-only": "tokenspeed_mla backend can only be used with MLA models",
    # the DSA (NSA before 0.5.13) backend's assertion on the model, as it is built (CHECK_FILE)
    "dsa-attention-backend-dsa-models-only": "backend only supports DeepSeek",
    # the DeepSeek-V4 backend's assertion on the head size, as it is built (CHECK_FILE)
    "dsv4-attention-backend-dsv4-models-only": "DSV4 MQA head_dim = qk_nope_head_dim(448)",
    # the dual chunk check on the attention backend: in the model runner up to 0.5.4, then in the argument handling
    # (CHECK_FILE); the default pick's order against it is in the rule's sources
    "dual-chunk-model-other-backend": "Dual chunk attention is enabled, but attention backend is set to",
    "dual-chunk-model-default-backend": "Dual chunk attention is enabled, but attention backend is set to",
    # the cute-dsl MLA path SGLang builds for cutedsl_mla (its SM100 checks are FlashInfer's), and MiniCPM's sparse
    # backend's check of the model, each in its own module (CHECK_FILE)
    "cutedsl-mla-sm100-family": 'backend="cute-dsl"',
    "minicpm-sparse-backend-minicpm-models-only": "MiniCPM model must have sparse attention enabled",
    "llada2-cfg-flashinfer-non-mla-models-only": "LLaDA2 CFG attention does not use an MLA backend",
    # tokenspeed_mla's own argument checks (0.5.12-0.5.22), and 0.5.23's alias of it to cutedsl_mla
    "tokenspeed-mla-blackwell-fp8-kv": "tokenspeed_mla backend is only supported on Blackwell GPUs",
    "tokenspeed-mla-alias-cutedsl-mla": '"tokenspeed_mla": "cutedsl_mla"',
    # DeepSeek attention's fallback to triton's handler for a backend it has no handler for (CHECK_FILE), which
    # prefills torch_native / flex_attention as MHA against the MLA cache
    "torch-native-flex-attention-deepseek-mla": 'cls._handlers.get("triton")',
    # the DSA indexer's DeepGEMM call on CUDA (CHECK_FILE); the kernel's architecture dispatch is in the rule's sources
    "dsa-indexer-deepgemm-below-sm90": "paged_mqa_logits_metadata",
    # the MoE layer's reading of the runner flag (CHECK_FILE): FlashInfer's trtllm-gen MoE whenever it is chosen; the
    # kernel's SM100-family-only cubins are in the rule's sources (the sixteenth fact-check sample)
    "moe-runner-trtllm-gen-sm100-family": "flashinfer_trtllm",
    # the unquantized MoE method's DeepGEMM path (CHECK_FILE), from 0.5.12; where SGLang keeps DeepGEMM off is
    # DEEPGEMM_OFF_TEXT in the DeepGEMM configurer
    "moe-runner-deep-gemm-deepgemm-off": "use_deep_gemm",
    # the draft model's runner: 0.5.7-0.5.11's assertion on the flag, the context that hands the draft's MoE layers
    # the flag's runner (CHECK_FILE), and the same unquantized DeepGEMM path as the target's rule
    "spec-moe-runner-trtllm-asserted": "Currently speculative MoE runner backend",
    "spec-moe-runner-trtllm-gen-sm100-family": "def speculative_moe_backend_context",
    "spec-moe-runner-deep-gemm-deepgemm-off": "use_deep_gemm",
    # the import of deep_gemm under SGLang's DeepGEMM switch, which SGLANG_ENABLE_JIT_DEEPGEMM turns off (CHECK_FILE)
    "moe-runner-deep-gemm-jit-off": "if ENABLE_JIT_DEEPGEMM:\n    import deep_gemm",
    # 0.5.2-0.5.6's assertion on the quantization for the trtllm-gen MoE runner (TRTLLM_QUANT_RULES: its list)
    "moe-runner-trtllm-quantization": "quantization is required for Flashinfer TRTLLM MoE",
    "moe-runner-trtllm-no-quantization": "quantization is required for Flashinfer TRTLLM MoE",
    # the seventeenth fact-check sample: two-batch overlap's check against the all-to-all backend (0.5.7-0.5.14) and
    # its DP attention escape (0.5.15 on), PD multiplexing's assertions, FlashInfer all-to-all's DP attention
    # assertion (three wordings), and the Mooncake dispatcher's raise for normal dispatch (CHECK_FILE)
    "two-batch-overlap-a2a-none": "When enabling two batch overlap, moe_a2a_backend cannot be 'none'",
    "two-batch-overlap-a2a-none-dp-attention": "two batch overlap without an EP a2a backend",
    "pdmux-chunked-prefill-overlap-schedule": "PD-Multiplexing is not compatible with chunked prefill",
    "pdmux-pipeline-or-disaggregation": "PD-Multiplexing is not compatible with disaggregation mode",
    "pdmux-lora-triton-v2": '(cfg.enable_pdmux, "PD-multiplexing")',
    "pdmux-uno-tree": "UNO tree mode does not yet support PDMux.",
    "pdmux-elastic-ep-scale-up": "Elastic EP CUDA graph recapture does not support PDMux.",
    "moe-a2a-flashinfer-dp-attention": "Flashinfer MoE A2A is only supported with dp_size == tp_size",
    "moe-a2a-mooncake-normal-mode": "if self.deepep_mode.enable_normal():\n            raise NotImplementedError",
    "moe-a2a-flashinfer-moe-runner": "Flashinfer MoE A2A is only supported with flashinfer_cutlass",
    # igap2: 0.5.19-0.5.23's FlashInfer all-to-all runner assertion (after the runner resolution)
    "moe-a2a-flashinfer-runner-list": '"FlashInfer MoE A2A is supported with flashinfer_cutlass, "',
    "moe-runner-trtllm-checkpoint-quantization": "FlashInfer TRTLLM MOE supports only",
    # the block check of the FP8 MoE method's weights (CHECK_FILE), the gate and up projections' wording
    "fp8-block-moe-tp-split": "The output_size of gate's and up's weight = ",
    # the MoE method whose Triton kernel fails below sm_89 (the failing check is Triton's, read in its wheels)
    "fp8-moe-triton-below-sm89": "class Fp8MoEMethod(",
    # ischeme: the compressed-tensors FP8 W8A8 MoE method's Triton call on FP8 operands, and the int8 MoE refusals
    # (CHECK_FILE: the MoE module of 0.5.1-0.5.8, the config or the scheme's module from 0.5.9)
    "ct-fp8-moe-triton-below-sm89": "use_fp8_w8a8=True",
    "ct-int8-moe-cuda": "Unsupported FusedMoe scheme",
    # igap12: each config group's own format, read from 0.5.17 (before, a mixed-precision checkpoint's linear layers
    # stop first); test_gate_igap12_mixed_precision.py reads the WNA16 MoE scheme's test of the top-level one
    "ct-mixed-precision-packed-moe": 'group_format = quant_config.get("format")',
    "ct-fp8-w8a16-moe": "Unsupported FusedMoe scheme",
    # igap4: the draft's runner where none is given (flashinfer_trtllm for flashinfer_megamoe, 0.5.22 on), and the
    # FlashInfer MegaMoE all-to-all's SM100 check (0.5.20 on)
    "spec-moe-runner-megamoe-draft-trtllm": 'if default == "flashinfer_megamoe":',
    "moe-a2a-flashinfer-megamoe-sm100": "FlashInfer MegaMOE currently requires an SM100-family",
    # the MoE method's constructor refusing a platform other than ROCm (CHECK_FILE)
    "quark-int4fp8-moe-cuda": "if not _is_hip:\n            raise NotImplementedError(",
    "quant-act-dtype-float16-only": "supported_dtypes = quant_config.get_supported_act_dtypes()",
    "quant-act-dtype-float16-only-no-marlin": "if device_capability < 80:",
    # irev42: the bitsandbytes loader's refusal of a pre-quantized checkpoint under tensor parallelism (CHECK_FILE)
    "bnb-prequant-tp": "Prequant BitsAndBytes models with TP is not supported",
    # igap10: the SM100 branch that sets the draft's MoE backends under SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE (0.5.7-0.5.9;
    # from 0.5.10 the same block sits under is_hip()), and the MXFP8 MoE path's MegaMoE route (0.5.20 on, CHECK_FILE;
    # the architecture check that fails is FlashInfer's validate_mega_arch, read in its wheels)
    "spec-nvfp4-nextn-deepep-ep-below-tp": (
        'on sm100 for DeepseekV3ForCausalLM"\n                    )\n\n                if (\n'
        '                    self.quantization == "modelopt_fp4"\n'
        '                    and self.speculative_algorithm == "EAGLE"'
    ),
    "moe-runner-flashinfer-megamoe-quantized-sm100": (
        "elif self.use_mxfp8 and get_moe_a2a_backend().is_flashinfer_megamoe():"
    ),
    # the twenty-second fact-check sample: the explicit FP8 GEMM backends' GPU tests (CHECK_FILE), each range's
    # wording (flashinfer_trtllm off SM100 from 0.5.10; the Blackwell test of flashinfer_trtllm 0.5.7-0.5.9 and of
    # flashinfer_cutlass from 0.5.10, through get_platform() from 0.5.19; cutlass's two tests)
    "fp8-gemm-backend-flashinfer-trtllm-sm100": "FlashInfer TRTLLM FP8 GEMM requires SM100/SM103",
    "fp8-gemm-backend-flashinfer-blackwell": "is_blackwell_supported() and is_flashinfer_available()):",
    "fp8-gemm-backend-flashinfer-deepgemm-sm90": "This backend requires Hopper (SM90) GPUs",
    "fp8-gemm-backend-cutlass-sm90-plus": "if not _check_cutlass_block_fp8_hardware_support():",
    "fp8-gemm-backend-cutlass-sm120": "--fp8-gemm-backend=cutlass is deprecated on this hardware",
    # the value the explicit dispatch has no branch for (it ends in 'Unknown FP8 GEMM backend')
    "fp8-gemm-backend-cutedsl-block-fp8": 'FLASHINFER_CUTEDSL = "flashinfer_cutedsl"',
    # the DeepEP MoE layer's dead end for a layer it does not hand back to the fused runner (CHECK_FILE; from 0.5.12
    # the normal dispatch raises NotImplementedError first, the low-latency one keeps this assertion)
    "moe-a2a-deepep-unquantized-moe": 'assert False, "forward_deepgemm_masked is deprecated"',
    # the W8A8 INT8 linear method's kernel (CHECK_FILE; the failing dispatch is sgl-kernel's, read in its binaries)
    "w8a8-int8-gemm-sm100-plus": "from sgl_kernel import int8_scaled_mm",
    # the twenty-third fact-check sample: the bitsandbytes loader's raise for a quant state with no parameter of its
    # name (an unquantized checkpoint quantized on load into a model built without the bitsandbytes method), and its
    # refusal of another checkpoint quantization (CHECK_FILE)
    "bnb-loader-unquantized-checkpoint": "not found in the model.",
    "bnb-loader-other-quantization": "BitsAndBytes loader does not support",
    "fp8-gemm-backend-aiter-cuda": "AITER backend requested via --fp8-gemm-backend=aiter",
    # the twenty-fourth fact-check sample: the same dead end of the DeepEP MoE layer for a quantized layer it keeps (a
    # method other than fp8 / w4afp8, or fp8 with DeepGEMM off), and the SM120 test of the DeepGEMM configurer
    # (0.5.13-0.5.19; 0.5.20 probes deep_gemm instead) (CHECK_FILE)
    "moe-a2a-deepep-quantized-moe-method": 'assert False, "forward_deepgemm_masked is deprecated"',
    "moe-a2a-deepep-fp8-moe-below-sm90": 'assert False, "forward_deepgemm_masked is deprecated"',
    "moe-a2a-deepep-fp8-moe-sm120": "if sm_version == 120:\n        return False",
    # igap14: the bitsandbytes method reads the quant states only BitsAndBytesModelLoader sets; 0.5.1-0.5.4 take the
    # method from vllm (their quantization registry's import, CHECK_TEXT_ALSO), 0.5.5-0.5.7 have none
    "bnb-quantization-without-bnb-loader": "qweight.bnb_quant_state",
    # igap14: the DSA overrides' tilelang checks against an FP8 KV cache on CUDA (0.5.17-0.5.21, then 0.5.22 on)
    "dsa-tilelang-fp8-kv-cuda": "only support an fp8_e4m3 KV",
    "dsa-tilelang-fp8-kv-mixed": "CUDA TileLang FP8 KV requires both DSA backends to be tilelang",
    # igap14: the deepep_v2 branch of the MoE hook (0.5.19 on)
    "deepep-v2-moe-runner": "DeepEP v2 MoE currently supports only",
    "deepep-v2-overlap": "DeepEP v2 MoE has not implemented the TBO/SBO overlap hooks",
    "deepep-v2-shared-experts-fusion": "DeepEP v2 MoE has not validated fused shared experts",
    "deepep-v2-deterministic": "DeepEP v2 does not forward deterministic=True",
    "deepep-v2-model-architecture": "DeepEP v2 MoE is not validated for",
    "deepep-v2-direct-multinode": "is NVLink-only and cannot run across",
    # the twenty-seventh fact-check sample: FusedMoE's check of its MoE method for deepep_v2 (CHECK_FILE); 0.5.19-0.5.20
    # word it without the MXFP8 / BF16 forms that 0.5.21 on accept
    "deepep-v2-unquantized-moe": '"--moe-a2a-backend deepep_v2 requires 128x128 blockwise FP8 "',
    "deepep-v2-quantized-moe-method": '"--moe-a2a-backend deepep_v2 requires 128x128 blockwise FP8',
    # igap16: the DeepSeek family's DSA decode-context-parallel override (0.5.22 on), the tilelang FP8 KV check's
    # --dcp-size branch (0.5.22 on) and the HYV4 branch of the same model override (0.5.20 on)
    "dsa-dcp-hisparse-hicache": "DSA DCP does not support HiSparse or HiCache",
    "dsa-dcp-disaggregation": "DSA DCP does not support PD disaggregation",
    "dsa-dcp-eagle-topk": "DSA DCP requires --speculative-eagle-topk 1",
    "dsa-tilelang-fp8-kv-dcp": "CUDA TileLang FP8 KV does not support --dcp-size > 1",
    "hyv4-dcp": "is not supported for HYV4 because decode context",
    # igap16: HiSparse's radix-cache assertion (0.5.10-0.5.11 server_args, then arg_groups/hisparse_hook.py)
    "hisparse-radix-cache": "sparse attention currently requires --disable-radix-cache",
    # igap16: HiSparse's DSA backend lists by KV cache dtype (0.5.14 on; the lists checked against the wheel's dict)
    "hisparse-dsa-backend-bf16-kv": "HiSparse supports DSA",
    "hisparse-dsa-backend-fp8-kv": "HiSparse supports DSA",
    # igap16: the DSA backend's flashinfer_sparse_mla validation (0.5.17 on, in its own module: CHECK_FILE)
    "dsa-flashinfer-sparse-mla-glm-sm12-fp8-only": "flashinfer_sparse_mla supports only GLM DSA with FP8 KV cache",
    "dsa-glm-sm12-fp8-backends": "GLM DSA with FP8 KV cache on NVIDIA SM120/SM121 supports",
    # igap17, the same check (CHECK_FILE): its weight-block test (every deepep_v2 release), its MXFP8 refusal and
    # 0.5.19-0.5.20's wording (Quark's QuarkFusedMoEMethod there), 0.5.21 on's wording (Quark's block FP8 layers)
    "deepep-v2-fp8-moe-block-size": "weight_block_size={quant_method.weight_block_size}",
    "deepep-v2-mxfp8-moe": '"selected MXFP8 weights"',
    "deepep-v2-modelopt-moe-method": '"--moe-a2a-backend deepep_v2 requires 128x128 blockwise FP8',
    # igap18: W4AFP8 and ModelOpt MIXED_PRECISION experts, by the release's modelopt_mixed mapping (same check)
    "deepep-v2-w4afp8-moe": '"--moe-a2a-backend deepep_v2 requires 128x128 blockwise FP8',
    # ifc33: no check of their own (the weight load fails): ModelOptMixedPrecisionConfig itself (CHECK_FILE), whose
    # FusedMoE branch maps no W4A8_AWQ experts, and NemotronH's non-gated experts (CHECK_FILE) under W4AFp8MoEMethod
    "modelopt-mixed-unloadable-experts": "ModelOptMixedPrecisionConfig only supports MIXED_PRECISION",
    "w4afp8-non-gated-experts": "is_gated=False",
    # igap18: nvfp4_online off SM100 (the argument hook's raise), quark_mxfp4's online loader (CHECK_FILE; its MXFP4
    # functions are ROCm-only: tests/launch/test_gate_igap18_online_quantization.py reads that in each wheel)
    "nvfp4-online-sm100": "--quantization nvfp4_online is supported only on",
    # igap19: the runner list of the nvfp4_online branch, its CuteDSL DeepEP raise, 0.5.23's MegaMoE escape
    "nvfp4-online-moe-runner": '"--quantization nvfp4_online supports only "',
    "nvfp4-online-cutedsl-deepep": "flashinfer_cutedsl per-token NVFP4 activation requires",
    "nvfp4-online-megamoe-a2a": "use_megamoe_w4a16 = (",
    "quark-mxfp4-online-cuda": 'model_config.quantization == "quark_mxfp4"',
    "deepep-v2-quark-moe-method": '"--moe-a2a-backend deepep_v2 requires 128x128 blockwise FP8 "',
    "deepep-v2-quark-moe-block": '"--moe-a2a-backend deepep_v2 requires 128x128 blockwise FP8 or 1x32 MXFP8 "',
    # its FP4-experts refusal (CHECK_FILE), and ModelConfig's reading of MiMo-V2's store_dtype (0.5.20 on)
    "deepep-v2-fp4-routed-experts": '"selected FP4 experts"',
    "deepep-v2-dsv4-fp4-experts": '"selected FP4 experts"',
    "deepep-v2-mimo-fp4-experts": 'quantization_config.get("store_dtype")',
}
# the later wordings of a rule's check (any one found counts): FlashInfer all-to-all's in 0.5.22 and in 0.5.23
CHECK_TEXT_ALSO = {
    "bf16-gemm-cutedsl-sm10x": ("cutedsl requires an SM10x GPU", "{backend.value} requires"),  # 0.5.18, 0.5.19+
    "lmcache-unified-memory": ("--enable-unified-memory is not yet compatible with --enable-lmcache",),
    # 0.5.7-0.5.23's wording of the trtllm-gen MoE runner's quantization assertion (a list that admits None)
    "moe-runner-trtllm-quantization": ("FlashInfer TRTLLM MOE supports only",),
    "fp8-gemm-backend-flashinfer-blackwell": ("get_platform().is_blackwell and is_flashinfer_available()):",),
    "moe-a2a-flashinfer-dp-attention": (
        "Flashinfer MoE A2A is only supported with --attn-dp-size",
        "Flashinfer MoE A2A requires --attn-dp-size",
    ),
    "bnb-quantization-without-bnb-loader": ("quantization.bitsandbytes import BitsAndBytesConfig",),
}
TRTLLM_QUANT_RULES = (
    "moe-runner-trtllm-quantization", "moe-runner-trtllm-no-quantization", "moe-runner-trtllm-checkpoint-quantization"
)  # fmt: skip
# a rule checked outside the argument handling: the module of the wheel that holds its check
CHECK_FILE = {
    "bf16-gemm-cutedsl-deterministic": "sglang/srt/layers/quantization/unquant.py",
    "bf16-gemm-cutedsl-sm10x": "sglang/srt/layers/quantization/unquant.py",
    "bf16-gemm-gemv-arch": "sglang/srt/layers/quantization/unquant.py",
    "hicache-unified-memory-host-pool": (
        "sglang/srt/mem_cache/memory_pool_host.py",
        "sglang/srt/mem_cache/pool_host/base.py",
    ),
    "hicache-host-pool-memory": (
        "sglang/srt/mem_cache/memory_pool_host.py",
        "sglang/srt/mem_cache/pool_host/base.py",
    ),
    "quark-int4fp8-moe-cuda": "sglang/srt/layers/quantization/quark_int4fp8_moe.py",
    "quant-act-dtype-float16-only": "sglang/srt/model_loader/loader.py",
    "quant-act-dtype-float16-only-no-marlin": "sglang/srt/layers/quantization/marlin_utils.py",
    "bnb-prequant-tp": "sglang/srt/model_loader/loader.py",
    "bnb-loader-unquantized-checkpoint": "sglang/srt/model_loader/loader.py",
    "bnb-loader-other-quantization": "sglang/srt/model_loader/loader.py",
    "bnb-quantization-without-bnb-loader": (
        "sglang/srt/layers/quantization/bitsandbytes.py",
        "sglang/srt/layers/quantization/__init__.py",
    ),
    "moe-runner-flashinfer-megamoe-quantized-sm100": "sglang/srt/layers/quantization/fp8.py",
    "fp8-gemm-backend-flashinfer-trtllm-sm100": "sglang/srt/layers/quantization/fp8_utils.py",
    "fp8-gemm-backend-flashinfer-blackwell": "sglang/srt/layers/quantization/fp8_utils.py",
    "fp8-gemm-backend-flashinfer-deepgemm-sm90": "sglang/srt/layers/quantization/fp8_utils.py",
    "fp8-gemm-backend-cutlass-sm90-plus": "sglang/srt/layers/quantization/fp8_utils.py",
    "fp8-gemm-backend-cutlass-sm120": "sglang/srt/layers/quantization/fp8_utils.py",
    "fp8-gemm-backend-cutedsl-block-fp8": "sglang/srt/layers/quantization/fp8_utils.py",
    "fp8-gemm-backend-aiter-cuda": "sglang/srt/layers/quantization/fp8_utils.py",
    "moe-a2a-deepep-unquantized-moe": "sglang/srt/layers/moe/ep_moe/layer.py",
    "moe-a2a-deepep-quantized-moe-method": "sglang/srt/layers/moe/ep_moe/layer.py",
    "moe-a2a-deepep-fp8-moe-below-sm90": "sglang/srt/layers/moe/ep_moe/layer.py",
    "moe-a2a-deepep-fp8-moe-sm120": "sglang/srt/layers/deep_gemm_wrapper/configurer.py",
    "deepep-v2-unquantized-moe": "sglang/srt/layers/moe/fused_moe_triton/layer.py",
    "deepep-v2-quantized-moe-method": "sglang/srt/layers/moe/fused_moe_triton/layer.py",
    "deepep-v2-fp8-moe-block-size": "sglang/srt/layers/moe/fused_moe_triton/layer.py",
    "deepep-v2-mxfp8-moe": "sglang/srt/layers/moe/fused_moe_triton/layer.py",
    "deepep-v2-modelopt-moe-method": "sglang/srt/layers/moe/fused_moe_triton/layer.py",
    "deepep-v2-w4afp8-moe": "sglang/srt/layers/moe/fused_moe_triton/layer.py",
    "modelopt-mixed-unloadable-experts": "sglang/srt/layers/quantization/modelopt_quant.py",
    "w4afp8-non-gated-experts": "sglang/srt/models/nemotron_h.py",
    "quark-mxfp4-online-cuda": "sglang/srt/model_loader/weight_utils.py",
    "deepep-v2-quark-moe-method": "sglang/srt/layers/moe/fused_moe_triton/layer.py",
    "deepep-v2-quark-moe-block": "sglang/srt/layers/moe/fused_moe_triton/layer.py",
    "deepep-v2-fp4-routed-experts": "sglang/srt/layers/moe/fused_moe_triton/layer.py",
    "deepep-v2-dsv4-fp4-experts": "sglang/srt/layers/moe/fused_moe_triton/layer.py",
    "deepep-v2-mimo-fp4-experts": "sglang/srt/configs/model_config.py",
    "w8a8-int8-gemm-sm100-plus": "sglang/srt/layers/quantization/w8a8_int8.py",
    "trtllm-mha-page-128-heads": "sglang/srt/layers/attention/trtllm_mha_backend.py",
    "hybrid-gdn-blackwell-backend": "sglang/srt/layers/attention/attention_registry.py",
    "mla-attention-backend": "sglang/srt/model_executor/model_runner.py",
    "aiter-attention-backend-on-cuda": "sglang/srt/layers/attention/aiter_backend.py",
    # the module moved to hardware_backend/npu in 0.5.9 (0.5.1-0.5.3: layers/attention)
    "ascend-attention-backend-on-cuda": (
        "sglang/srt/layers/attention/ascend_backend.py",
        "sglang/srt/hardware_backend/npu/attention/ascend_backend.py",
    ),
    "intel-amx-attention-backend-on-cuda": "sglang/srt/layers/attention/intel_amx_backend.py",
    "intel-xpu-attention-backend-on-cuda": "sglang/srt/layers/attention/xpu_backend.py",
    "wave-attention-backend-on-cuda": "sglang/srt/layers/attention/wave_ops/decode_attention.py",
    "cutedsl-mla-mla-models-only": "sglang/srt/layers/attention/attention_registry.py",
    "tokenspeed-mla-mla-models-only": "sglang/srt/layers/attention/attention_registry.py",
    "dsa-attention-backend-dsa-models-only": (
        "sglang/srt/layers/attention/nsa_backend.py",
        "sglang/srt/layers/attention/dsa_backend.py",
    ),
    "dsv4-attention-backend-dsv4-models-only": "sglang/srt/layers/attention/deepseek_v4_backend.py",
    "dual-chunk-model-other-backend": (
        "sglang/srt/model_executor/model_runner.py",
        "sglang/srt/server_args.py",
        "sglang/srt/arg_groups/overrides.py",
    ),
    "dual-chunk-model-default-backend": ("sglang/srt/server_args.py", "sglang/srt/arg_groups/overrides.py"),
    # 0.5.13-0.5.16 build TRTLLMMLABackend(runner, backend="cute-dsl") in the registry, 0.5.17+ their own subclass
    "cutedsl-mla-sm100-family": (
        "sglang/srt/layers/attention/attention_registry.py",
        "sglang/srt/layers/attention/cutedsl_mla_backend.py",
    ),
    "minicpm-sparse-backend-minicpm-models-only": "sglang/srt/layers/attention/minicpm/backend.py",
    "llada2-cfg-flashinfer-non-mla-models-only": "sglang/srt/layers/attention/attention_registry.py",
    "torch-native-flex-attention-deepseek-mla": (
        "sglang/srt/models/deepseek_v2.py",
        "sglang/srt/models/deepseek_common/attention_backend_handler.py",
    ),
    "dsa-indexer-deepgemm-below-sm90": (
        "sglang/srt/layers/attention/nsa/nsa_indexer.py",
        "sglang/srt/layers/attention/dsa/dsa_indexer.py",
    ),
    "moe-runner-trtllm-gen-sm100-family": "sglang/srt/layers/moe/fused_moe_triton/layer.py",
    "moe-runner-deep-gemm-deepgemm-off": "sglang/srt/layers/quantization/unquant.py",
    "spec-moe-runner-trtllm-gen-sm100-family": "sglang/srt/layers/moe/utils.py",
    "spec-moe-runner-deep-gemm-deepgemm-off": "sglang/srt/layers/quantization/unquant.py",
    "moe-runner-deep-gemm-jit-off": "sglang/srt/layers/deep_gemm_wrapper/entrypoint.py",
    "moe-a2a-mooncake-normal-mode": "sglang/srt/layers/moe/token_dispatcher/mooncake.py",
    "fp8-block-moe-tp-split": "sglang/srt/layers/quantization/fp8.py",
    "fp8-moe-triton-below-sm89": "sglang/srt/layers/quantization/fp8.py",
    "ct-fp8-moe-triton-below-sm89": (
        "sglang/srt/layers/quantization/compressed_tensors/compressed_tensors_moe.py",
        "sglang/srt/layers/quantization/compressed_tensors/schemes/compressed_tensors_w8a8_fp8_moe.py",
    ),
    "ct-int8-moe-cuda": (
        "sglang/srt/layers/quantization/compressed_tensors/compressed_tensors_moe.py",
        "sglang/srt/layers/quantization/compressed_tensors/compressed_tensors.py",
    ),
    "ct-mixed-precision-packed-moe": "sglang/srt/layers/quantization/compressed_tensors/compressed_tensors.py",
    "ct-fp8-w8a16-moe": (
        "sglang/srt/layers/quantization/compressed_tensors/compressed_tensors_moe.py",
        "sglang/srt/layers/quantization/compressed_tensors/compressed_tensors.py",
    ),
    "dsa-flashinfer-sparse-mla-glm-sm12-fp8-only": "sglang/kernels/ops/attention/flash_mla_sm120.py",
    "dsa-glm-sm12-fp8-backends": "sglang/kernels/ops/attention/flash_mla_sm120.py",
}
# moe-runner-deep-gemm-deepgemm-off's GPU conditions (`also` on gpu_major): SGLang turns DeepGEMM off below SM90 in
# its configurer (and, 0.5.13-0.5.19, on sm 120), and imports deep_gemm only where it is on
DEEPGEMM_CONFIGURER = "sglang/srt/layers/deep_gemm_wrapper/configurer.py"
DEEPGEMM_ENTRYPOINT = "sglang/srt/layers/deep_gemm_wrapper/entrypoint.py"
DEEPGEMM_OFF_RULES = ("moe-runner-deep-gemm-deepgemm-off", "spec-moe-runner-deep-gemm-deepgemm-off")
DEEPGEMM_OFF_TEXT = {"below_sm90": "sm_version < 90", "sm120_off": "if sm_version == 120:\n        return False"}
# a rule no check of the wheel raises (the fifteenth fact-check sample): from 0.5.20 Qwen2 still builds the dual chunk
# rotary embedding (five query copies) from config.json, and the only backend that read them is gone
DUAL_CHUNK_NO_BACKEND = "dual-chunk-model-no-backend"
DUAL_CHUNK_ROPE = ("sglang/srt/layers/rotary_embedding.py", "sglang/srt/layers/rotary_embedding/factory.py")
DUAL_CHUNK_BACKEND = "sglang/srt/layers/attention/dual_chunk_flashattention_backend.py"
# a rule on a path the wheel lacks (ifc29): the DeepSeek MLA forward asks the decode attention for its output and LSE
# under decode context parallel, and SGLang's DSA backend has no DCP path (dsa/dsa_dcp.py) before 0.5.22
DSA_DCP_NO_PATH = "dsa-dcp-before-dsa-dcp-path"
DSA_DCP_FORWARD = "sglang/srt/models/deepseek_common/attention_forward_methods/forward_mla.py"
DSA_DCP_MODULE = "sglang/srt/layers/attention/dsa/dsa_dcp.py"
# ifc32: the DSA prefill side too, as long as the backend has no DCP code and the MLA KV store is DCP-sharded
DSA_BACKEND = ("sglang/srt/layers/attention/dsa_backend.py", "sglang/srt/layers/attention/nsa_backend.py")
MLA_DCP_STORE = ("sglang/srt/mem_cache/triton_ops/mla_buffer.py", "sglang/kernels/ops/kvcache/mla_buffer.py")
# a rule on a path the backend lacks (ifc32): the DeepSeek MLA forward unpacks an LSE under DCP from each backend of its
# absorb list, fa3 among them, and FlashAttention-3's backend has no DCP code (no DCP helper named in the file)
MLA_DCP_FA3 = "mla-dcp-fa3-decode-no-lse"
DEEPSEEK_UTILS = "sglang/srt/models/deepseek_common/utils.py"
FA3_BACKEND = "sglang/srt/layers/attention/flashattention_backend.py"
DCP_HELPERS = ("dcp_enabled", "get_attention_dcp", "attn_dcp", "dcp_world_size")
# ifc38: fa4 is the same FlashAttention class (fa_impl_ver=4): absorbed on SM100 / SM110 from 0.5.17, the MHA
# chunked-KV path elsewhere (the DeepSeek handler), neither with DCP code
MLA_DCP_FA4 = "mla-dcp-fa4-decode-no-lse"
# ifc39: 0.5.17's cutedsl_mla decodes under DCP with FlashInfer keywords (enable_dcp, ...) its pinned FlashInfer lacks
MLA_DCP_CUTEDSL = "mla-dcp-cutedsl-flashinfer-no-dcp"
CUTEDSL_BACKEND = "sglang/srt/layers/attention/cutedsl_mla_backend.py"
FLASHINFER_MLA = "flashinfer/mla/_core.py"
ATTENTION_REGISTRY = "sglang/srt/layers/attention/attention_registry.py"
DEEPSEEK_HANDLER = "sglang/srt/models/deepseek_common/attention_backend_handler.py"
FA4_IS_FA = (
    r'register_attention_backend\("fa4"\)\n(?:.*\n){0,12}?\s*return FlashAttentionBackend\(runner, fa_impl_ver=4\)'
)
# igap21: the same unpack from trtllm_mla and cutlass_mla, whose decode has no DCP code in some releases (their
# forward_decode read by ast: the backend class's own method)
MLA_DCP_OTHERS = "mla-dcp-decode-no-lse"
# igap21: on 0.5.22-0.5.23 the DSA backend returns the LSE under DCP from its trtllm kernel alone
DSA_DCP_SIDE = "dsa-dcp-side-no-lse"
# ifc34: flashmla and triton decode in forward_absorb_core's other branch, which sets no LSE for the DCP correction
MLA_DCP_UNABSORBED = "mla-dcp-unabsorbed-decode-no-lse"
MLA_PICK = (
    r'\s*if [\w.()]*is_hopper_with_cuda_12_3(?:\(\))?:\s*return "fa3"\s*'
    r'elif [\w.()]*is_sm100(?:_supported\(\))?:\s*return "flashinfer"\s*elif'
)
MLA_DCP_CLASSES = {
    "trtllm_mla": ("sglang/srt/layers/attention/trtllm_mla_backend.py", "TRTLLMMLABackend"),
    "cutlass_mla": ("sglang/srt/layers/attention/cutlass_mla_backend.py", "CutlassMLABackend"),
}
# ifc38: cutedsl_mla is whichever class the attention registry builds for it (TRTLLMMLABackend with the cute-dsl kernel
# in 0.5.15-0.5.16, CuteDslMLABackend from 0.5.17)
CUTEDSL_MODULES = {
    "TRTLLMMLABackend": "sglang/srt/layers/attention/trtllm_mla_backend.py",
    "CuteDslMLABackend": "sglang/srt/layers/attention/cutedsl_mla_backend.py",
}


def _cutedsl_class(version: str) -> tuple[str, str]:
    """(module, class) the release's attention registry returns for cutedsl_mla; ("", "") where it has none."""
    registry = "".join(module(version, ATTENTION_REGISTRY).values())
    built = re.search(r'register_attention_backend\("cutedsl_mla"\)\n(?:.*\n){0,12}?\s*return (\w+)\(runner', registry)
    cls = built.group(1) if built else ""
    return CUTEDSL_MODULES.get(cls, ""), cls


# a rule on a kernel with no check of its own (igap16): before SGLang 0.5.17 checked it, the tilelang DSA kernel's CUDA
# branch (tilelang_sparse_fwd without _is_hip) built the bfloat16-only kernel; the module moved twice
TILELANG_CUDA_KERNEL = "dsa-tilelang-fp8-kv-cuda-kernel"
TILELANG_KERNEL = (
    "sglang/srt/layers/attention/nsa/tilelang_kernel.py",
    "sglang/srt/layers/attention/dsa/tilelang_kernel.py",
    "sglang/kernels/ops/attention/dsa/tilelang_kernel.py",
)
# a rule judged unknown (igap16): deepep_v2's direct mode across nodes where the help text calls direct single-node
# NVLink and no check refuses it yet (0.5.19-0.5.21)
DIRECT_UNREAD = "deepep-v2-direct-multinode-unread"
# imend4: no check raises for it by name; argparse offers 'modelopt' while the quantization registry lacks the key
# (0.5.3.post1-0.5.3.post3), so ModelConfig's verification raises for an unknown method
MODELOPT_UNREGISTERED = "modelopt-unregistered-053-posts"
# igap53: no check of SGLang's refuses it; the EXAONE 4 model file reads config.rope_theta alone (no rope_parameters)
# in a release that pins transformers 5 (whose Exaone4Config keeps the base only in rope_parameters)
ROPE_THETA_FILE_DEFAULT = "rope-theta-file-default"
#: (imodel3) a DeepSeek-V2-style routing on the trtllm-gen runner: no argument check, the model file and the top-k
DSV2_SOFTMAX_ROUTING = "moe-trtllm-deepseek-softmax-routing"
#: (imodel4) Gemma 4's gelu experts on the trtllm-gen runner: no argument check, the model file and the runner's lists
GEMMA4_GELU_EXPERTS = "moe-trtllm-gelu-experts"
#: (ifc71) 0.5.11's BF16 trtllm-gen call asserts silu alone (the set _SUPPORTED_BF16_ACTIVATIONS from 0.5.12)
TRTLLM_BF16_SILU_ONLY = re.compile(r'assert \(\s*runner_config\.activation == "silu"\s*\), "Only silu is supported')
#: (ifc71) Gemma 4's gelu experts on the BF16 CUTLASS MoE (0.5.11-0.5.14): no check at all, the model file and the
#: unquantized method's activation choice (Relu2 for relu2, else SwiGLU)
GEMMA4_CUTLASS_GELU = "moe-cutlass-gelu-experts-as-swiglu"
#: (itfm1) Gemma 4's MoE through SGLang's Transformers backend: no check by name, the MoE mixin's top-k lookup (the
#: config's num_experts_per_tok or top_k, asserted) where transformers' Gemma 4 config names it top_k_experts
GEMMA4_TRANSFORMERS_MOE = "transformers-backend-gemma4-moe"
TRANSFORMERS_MOE_TOP_K = re.compile(
    r'top_k = _getattr_first\(text_config, \("num_experts_per_tok", "top_k"\)\)\n\s+'
    r'assert top_k is not None, "Cannot determine top_k from config\."'
)
CUTLASS_SWIGLU_ELSE = re.compile(
    r'ActivationType\.Relu2\s+if moe_runner_config\.activation == "relu2"\s+else ActivationType\.Swiglu'
)
#: (imend20) an MLA target verify on fa4: no argument check, the FlashAttention backend's FA3-only assert
MLA_FA4_VERIFY = "mla-fa4-speculative-verify-fa3-only"
#: (ifc72) the CuTe DSL BF16 GEMM under deterministic inference (0.5.15-0.5.17): no check, the linear's choice by m
BF16_CUTEDSL_BATCH_VARIANT = ("bf16-gemm-cutedsl-deterministic-batch-variant", "bf16-gemm-auto-cutedsl-deterministic")
BF16_AUTO_CUTEDSL_ALWAYS = re.compile(
    r'if backend_str == "auto" and is_sm100_supported\(\):\n\s+backend_str = "cutedsl"'
)
EXAONE4_FILE = "sglang/srt/models/exaone4.py"
QUANT_REGISTRY = "sglang/srt/layers/quantization/__init__.py"
DIRECT_HELP = "`direct` (single-node NVLink)"
TILELANG_ARG_CHECKS = ("only support an fp8_e4m3 KV", "CUDA TileLang FP8 KV requires both DSA backends to be tilelang")
# what a range's extra conditions (`also`) stand for in the wheel
ALSO_TEXT = {
    # igap49: the LMCache DP attention check's test, 0.5.21's flag, 0.5.22-0.5.23's attention DP groups, and the guard
    # of HiCache's DCP resolution (0.5.17-0.5.18 in server_args.py, then hicache_hook.py)
    "attention_dp_any": r'if cfg\.enable_dp_attention:\n\s+raise NotImplementedError\(\n\s+"LMCacheUnified',
    "attention_dp_groups": r'if attn_dp_enabled_of\(cfg\):\n\s+raise NotImplementedError\(\n\s+"LMCacheUnified',
    "hierarchical_cache": r"dcp_size <= 1 or not (cfg|self)\.enable_hierarchical_cache",
    "speculative_adaptive": "not cfg.speculative_adaptive and cfg.speculative_num_steps is None|"
    "not server_args.speculative_adaptive",
    "model_architecture": "def _handle_iquest_q1_mtp_draft",
    # flashinfer_trtllm_routed passes 0.5.7-0.5.11's assertion, which tests is_flashinfer_trtllm alone
    "speculative_moe_runner_backend": r"\)\.is_flashinfer_trtllm\(\), \"Currently speculative MoE runner",
    # igap2: the runner resolution by quantization that moe-a2a-flashinfer-runner-list leaves unknown (0.5.19 on)
    "quantization": r'if view\.quantization == "mxfp8" and not get_platform\(\)\.is_npu',
}
PAGE_TEXT = {  # the warning each backend logs when it forces its page size
    "flashmla": "FlashMLA only supports a page_size of 64",
    "cutlass_mla": "Cutlass MLA only supports a page_size of 128",
    "trtllm_mla": "TensorRT-LLM MLA only supports page_size",
    "trtllm_mha": "TensorRT-LLM MHA only supports page_size",
}
DEFAULT = ["0.5.1", "0.5.3", "0.5.9", "0.5.13", "0.5.23"]


def _versions() -> list[str]:
    if not run_all():
        return DEFAULT
    return [str(v) for v in load([], env={}).launch["release_flags"]["releases"]]


def sources(wheel: Path) -> dict[str, str]:
    """The argument-handling sources of an SGLang wheel: server_args.py and arg_groups/*.py."""
    return read_texts(wheel, is_argument_source)


def module(version: str, name: str | Sequence[str]) -> dict[str, str]:
    """One module of an SGLang wheel, by its path in the wheel, or each of several paths it may have moved
    between ({} when the wheel has none)."""
    names = (name,) if isinstance(name, str) else tuple(name)
    with zipfile.ZipFile(fetch_wheel("sglang", version)) as z:
        there = set(z.namelist())
        return {n: z.read(n).decode("utf-8", "replace") for n in names if n in there}


def allowed_backends(code: str, at: int) -> list[str] | None:
    """The backends the top-k/page-size check accepts, read from the code just before its message."""
    window = code[max(0, at - 1500) : at]
    forms = [  # a single backend compared with !=, or a list, or the tuple of 0.5.13+
        r'attention_backend != "(\w+)"',
        r"attention_backend not in \[([^\]]*)\]",
        r"_PAGE_TREE_SPEC_BACKENDS = \(([^)]*)\)",
    ]
    found: list[tuple[int, list[str]]] = []
    for pattern in forms:
        for m in re.finditer(pattern, window):
            names = re.findall(r'"(\w+)"', m.group(1)) if '"' in m.group(1) else [m.group(1)]
            found.append((m.start(), names))
    return max(found)[1] if found else None


def auto_topk(code: dict[str, str]) -> dict[str, Any]:
    """SGLang's own top-k, read from (_)auto_choose_speculative_params' if/elif chain: STANDALONE's, each listed
    architecture's, and the last branch's (every other architecture)."""
    fn = next(
        node
        for body in code.values()
        if "auto_choose_speculative_params" in body
        for node in ast.walk(ast.parse(body))
        if isinstance(node, ast.FunctionDef) and node.name.lstrip("_") == "auto_choose_speculative_params"
    )
    out: dict[str, Any] = {"standalone": None, "architectures": {}, "otherwise": None}

    def topk(body: list[ast.stmt]) -> int:
        ret = next(b for b in body if isinstance(b, ast.Return))
        assert isinstance(ret.value, ast.Tuple)
        value = ret.value.elts[1]
        assert isinstance(value, ast.Constant) and isinstance(value.value, int)
        return value.value

    for stmt in fn.body:
        branch: ast.stmt | None = stmt if isinstance(stmt, ast.If) else None
        if isinstance(stmt, ast.Return):
            out["otherwise"] = topk([stmt])
        while isinstance(branch, ast.If):
            test = branch.test
            assert isinstance(test, ast.Compare)
            compared = test.comparators[0]
            if isinstance(compared, ast.Constant) and compared.value == "STANDALONE":
                out["standalone"] = topk(branch.body)
            else:
                assert isinstance(compared, ast.List)
                for name in compared.elts:
                    assert isinstance(name, ast.Constant)
                    out["architectures"][name.value] = topk(branch.body)
            nxt = branch.orelse
            branch = nxt[0] if len(nxt) == 1 and isinstance(nxt[0], ast.If) else None
            if nxt and branch is None:
                out["otherwise"] = topk(nxt)
    return out


def tilelang_cuda_bf16_only(version: str) -> bool:
    """Whether the wheel's tilelang_sparse_fwd builds sparse_attention_fwd_kernel_v2 outside its _is_hip branch and that
    kernel's dtype is bfloat16 (FP8 kernels only on ROCm)."""
    for body in module(version, TILELANG_KERNEL).values():
        tree = ast.parse(body)
        fns = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        fwd, v2 = fns.get("tilelang_sparse_fwd"), fns.get("sparse_attention_fwd_kernel_v2")
        if fwd is None or v2 is None:
            continue
        hip = next((n for n in fwd.body if isinstance(n, ast.If) and "_is_hip" in ast.unparse(n.test)), None)
        cuda = "\n".join(ast.unparse(n) for n in (hip.orelse if hip is not None else []))
        if "sparse_attention_fwd_kernel_v2(" in cuda and "dtype = 'bfloat16'" in ast.unparse(v2):
            return True
    return False


def _decode_without_dcp(bodies: dict[str, str], cls: str) -> bool:
    """Whether the backend class `cls` in the module defines forward_decode with no DCP code in it (False where the
    module or the method is not there)."""
    for body in bodies.values():
        for node in ast.walk(ast.parse(body)):
            if isinstance(node, ast.ClassDef) and node.name == cls:
                for fn in node.body:
                    if isinstance(fn, ast.FunctionDef) and fn.name == "forward_decode":
                        return "dcp" not in ast.unparse(fn)
    return False


def _lse_only_in_absorbed_branch(bodies: dict[str, str]) -> bool:
    """Whether forward_absorb_core's `if self.current_attention_backend in FORWARD_ABSORB_CORE_ATTENTION_BACKENDS`
    assigns lse in its body only (not in its else branch) and the function reads lse after that statement."""
    for body in bodies.values():
        for node in ast.walk(ast.parse(body)):
            if not (isinstance(node, ast.FunctionDef) and node.name == "forward_absorb_core"):
                continue
            for n, stmt in enumerate(node.body):
                if isinstance(stmt, ast.If) and "FORWARD_ABSORB_CORE_ATTENTION_BACKENDS" in ast.unparse(stmt.test):
                    sets = [
                        any(isinstance(x, ast.Name) and x.id == "lse" and isinstance(x.ctx, ast.Store)
                            for s in part for x in ast.walk(s))
                        for part in (stmt.body, stmt.orelse)
                    ]  # fmt: skip
                    later = any(
                        isinstance(x, ast.Name) and x.id == "lse" and isinstance(x.ctx, ast.Load)
                        for s in node.body[n + 1 :]
                        for x in ast.walk(s)
                    )
                    return sets == [True, False] and later
    return False


def _pinned_flashinfer_mla(version: str) -> str:
    """flashinfer/mla/_core.py of the flashinfer-python release the sglang wheel's METADATA pins ('' where none)."""
    with zipfile.ZipFile(fetch_wheel("sglang", version)) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        pin = re.search(r"^Requires-Dist: flashinfer[_-]python(?:\[\w+\])?==([\w.]+)", z.read(meta).decode(), re.M)
    if pin is None:
        return ""
    with zipfile.ZipFile(fetch_wheel("flashinfer-python", pin.group(1))) as z:
        return z.read(FLASHINFER_MLA).decode() if FLASHINFER_MLA in z.namelist() else ""


def entry_for(rule: dict[str, Any], version: str) -> dict[str, Any] | None:
    return next((e for e in rule["releases"] if version_in(version, e["versions"]) is True), None)


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_refusal_rules_are_what_the_wheel_checks(version: str) -> None:
    table = load([], env={}).launch["refusals"]
    code = sources(fetch_wheel("sglang", version))
    assert code, f"no server_args.py in the sglang {version} wheel"
    for rule in table["rules"]:
        entry = entry_for(rule, version)
        assert entry is not None, (rule["id"], version)
        if rule["id"] == DUAL_CHUNK_NO_BACKEND:  # a check the wheel lacks: the rope there, its backend gone
            rope = module(version, DUAL_CHUNK_ROPE)
            gone = not module(version, DUAL_CHUNK_BACKEND)
            assert (gone and any("DualChunkRotaryEmbedding(" in b for b in rope.values())) is entry["applies"], version
            continue
        if rule["id"] == DSA_DCP_NO_PATH:  # --dcp-size declared, the forward's DCP decode, no DSA DCP path
            declared = any("dcp_size" in body for body in code.values())
            forward = any("for_dcp" in body for body in module(version, DSA_DCP_FORWARD).values())
            no_path = not module(version, DSA_DCP_MODULE)
            assert (declared and forward and no_path) is bool(entry["applies"]), version
            if entry["applies"]:  # the prefill side (ifc32): no DCP code in the backend, a sharded KV store
                assert not any("dcp" in body for body in module(version, DSA_BACKEND).values()), version
                assert any("// DCP_WORLD_SIZE" in body for body in module(version, MLA_DCP_STORE).values()), version
            continue
        if rule["id"] == MLA_DCP_FA3:  # --dcp-size declared, the forward's LSE unpack, fa3 absorbed, no DCP in fa3
            declared = any("dcp_size" in body for body in code.values())
            unpack = any("lse = self.attn_mqa_for_dcp_decode(" in b for b in module(version, DSA_DCP_FORWARD).values())
            absorb = list(module(version, DEEPSEEK_UTILS).values())
            absorbed = any(re.search(r'FORWARD_ABSORB_CORE_ATTENTION_BACKENDS = \[[^\]]*"fa3"', b) for b in absorb)
            fa3_bodies = list(module(version, FA3_BACKEND).values())
            no_dcp = bool(fa3_bodies) and not any(h in b for h in DCP_HELPERS for b in fa3_bodies)
            assert (declared and unpack and absorbed and no_dcp) is bool(entry["applies"]), version
            continue
        if rule["id"] == MLA_DCP_FA4:  # --dcp-size declared, the unpack, fa4 the FlashAttention class with no DCP code
            declared = any("dcp_size" in body for body in code.values())
            unpack = any("lse = self.attn_mqa_for_dcp_decode(" in b for b in module(version, DSA_DCP_FORWARD).values())
            fa4_is_fa = any(re.search(FA4_IS_FA, b) for b in module(version, ATTENTION_REGISTRY).values())
            fa_bodies = list(module(version, FA3_BACKEND).values())
            no_dcp = bool(fa_bodies) and not any(h in b for h in DCP_HELPERS for b in fa_bodies)
            handler = "".join(module(version, DEEPSEEK_HANDLER).values())
            at = handler.find("def handle_attention_fa4")
            mha_path = at >= 0 and "AttnForwardMethod.MHA_CHUNKED_KV" in handler[at : at + 800]
            assert (declared and unpack and fa4_is_fa and no_dcp and mha_path) is bool(entry["applies"]), version
            continue
        if rule["id"] == MLA_DCP_CUTEDSL:  # absorbed, the DCP keywords, and the pinned FlashInfer without them
            calls = any("enable_dcp=True" in b for b in module(version, CUTEDSL_BACKEND).values())
            utils = "".join(module(version, DEEPSEEK_UTILS).values())
            absorbed = bool(re.search(r'FORWARD_ABSORB_CORE_ATTENTION_BACKENDS = \[[^\]]*"cutedsl_mla"', utils))
            lacks = calls and "enable_dcp" not in _pinned_flashinfer_mla(version)
            assert (calls and absorbed and lacks) is bool(entry["applies"]), version
            continue
        if rule["id"] == DSA_DCP_SIDE:  # the DSA DCP path, the unpack, and the LSE only from the trtllm DCP helper
            dcp_module = list(module(version, DSA_DCP_MODULE).values())
            unpack = any("lse = self.attn_mqa_for_dcp_decode(" in b for b in module(version, DSA_DCP_FORWARD).values())
            assert (bool(dcp_module) and unpack) is bool(entry["applies"]), version
            if entry["applies"]:
                assert any("return_lse=True" in b for b in dcp_module), version
                backend = "".join(module(version, DSA_BACKEND).values())
                assert "dcp_trtllm_sparse_attention(" in backend and "return_lse=True" not in backend, version
            continue
        if rule["id"] == MLA_DCP_OTHERS:  # the unpack, and each backend absorbed whose forward_decode has no DCP code
            declared = any("dcp_size" in body for body in code.values())
            unpack = any("lse = self.attn_mqa_for_dcp_decode(" in b for b in module(version, DSA_DCP_FORWARD).values())
            utils = "".join(module(version, DEEPSEEK_UTILS).values())
            no_lse = sorted(
                name
                for name, (path, cls) in {**MLA_DCP_CLASSES, "cutedsl_mla": _cutedsl_class(version)}.items()
                if re.search(rf'FORWARD_ABSORB_CORE_ATTENTION_BACKENDS = \[[^\]]*"{name}"', utils)
                and _decode_without_dcp(module(version, path), cls)
            )
            assert (declared and unpack and bool(no_lse)) is bool(entry["applies"]), version
            if entry["applies"]:
                listed = next(
                    c
                    for c in [*(entry.get("also") or []), *reversed(rule["when"])]
                    if c.get("fact") == "mla_dcp_decode_backend"
                )
                assert sorted(listed["in"]) == no_lse, version
            continue
        if rule["id"] == MLA_DCP_UNABSORBED:  # --dcp-size declared, lse set only in the absorbed branch, not listed
            declared = any("dcp_size" in body for body in code.values())
            listing = re.search(
                r"FORWARD_ABSORB_CORE_ATTENTION_BACKENDS = \[([^\]]*)\]",
                "".join(module(version, DEEPSEEK_UTILS).values()),
            )
            absorbed_names = set(re.findall(r'"(\w+)"', listing.group(1))) if listing else set()
            named = next(c for c in rule["when"] if c.get("fact") == "mla_dcp_decode_backend")["in"]
            branches = _lse_only_in_absorbed_branch(module(version, DSA_DCP_FORWARD))
            assert (declared and bool(listing) and branches) is bool(entry["applies"]), version
            if entry["applies"]:
                assert not absorbed_names & set(named), (version, sorted(absorbed_names & set(named)))
                # no attention flag: judged off majors 9 / 10, where SGLang's MLA pick is fa3 / flashinfer
                mla_pick = [b.split("# MLA architecture", 1)[1] for b in code.values() if "# MLA architecture" in b]
                assert len(mla_pick) == 1, version
                assert re.match(MLA_PICK, mla_pick[0]), version
            continue
        if rule["id"] == DIRECT_UNREAD:  # documented single-node, with no check of its own
            help_text = any(DIRECT_HELP in body for body in code.values())
            checked = any(CHECK_TEXT["deepep-v2-direct-multinode"] in body for body in code.values())
            assert (help_text and not checked) is bool(entry["applies"]), version
            continue
        if rule["id"] == MODELOPT_UNREGISTERED:  # offered by argparse, not a key of the registry
            args = "".join(body for name, body in code.items() if name.endswith("server_args.py"))
            offered = re.search(r"QUANTIZATION_CHOICES = \[[^\]]*\"modelopt\",", args) is not None
            registered = '"modelopt": ' in "".join(module(version, QUANT_REGISTRY).values())
            assert (offered and not registered) is bool(entry["applies"]), version
            continue
        if rule["id"] == ROPE_THETA_FILE_DEFAULT:  # the bare read, in a release pinning transformers 5
            exaone = "".join(module(version, EXAONE4_FILE).values())
            bare = 'getattr(config, "rope_theta", 1000000)' in exaone and "rope_parameters" not in exaone
            with zipfile.ZipFile(fetch_wheel("sglang", version)) as z:
                meta = next(z.read(n).decode() for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            pin = re.search(r"^Requires-Dist: transformers==(\d+)\.", meta, re.M)
            assert (bare and pin is not None and int(pin.group(1)) >= 5) is bool(entry["applies"]), version
            continue
        if rule["id"] == DSV2_SOFTMAX_ROUTING:  # the bias only for noaux_tc, DeepSeek routing handed to the runner
            dsv2 = "".join(module(version, "sglang/srt/models/deepseek_v2.py").values())
            fp8 = "".join(module(version, "sglang/srt/layers/quantization/fp8.py").values())
            topk = "".join(module(version, "sglang/srt/layers/moe/topk.py").values())
            bias_for_noaux_only = 'topk_method == "noaux_tc"' in dsv2
            deepseek_routing = "RoutingMethodType.DeepSeekV3" in dsv2 or "routing_method_type=2" in fp8
            assert entry["applies"] and bias_for_noaux_only and deepseek_routing, version
            # 0.5.23 keeps a top-k FlashInfer's router cannot compute in SGLang (the entry's `right` quantizations)
            keeps_top_k = "_can_bypass_trtllm_routing" in topk
            assert bool(entry["trtllm_softmax_routing"]["right"]) is keeps_top_k, version
            continue
        if rule["id"] == GEMMA4_GELU_EXPERTS:  # the MoE built with gelu, and the runner's BF16 / FP4 lists
            gemma4 = "".join(module(version, "sglang/srt/models/gemma4_causal.py").values())
            runner = "".join(module(version, "sglang/srt/layers/moe/moe_runner/flashinfer_trtllm.py").values())
            gelu = 'activation="gelu"' in gemma4 or 'activation: str = "gelu"' in gemma4
            bf16 = re.search(r"_SUPPORTED_BF16_ACTIVATIONS = \{([^}]*)\}", runner)
            fp4 = re.search(r"_SUPPORTED_FP4_ACTIVATIONS = \{([^}]*)\}", runner)
            silu_only = TRTLLM_BF16_SILU_ONLY.search(runner)  # (ifc71: 0.5.11, before the set)
            refused = gelu and ((bf16 is not None and '"gelu"' not in bf16.group(1)) or silu_only is not None)
            assert refused is bool(entry["applies"]), version
            if entry["applies"]:
                fp4_takes = fp4 is not None and '"gelu"' in fp4.group(1)
                assert ("modelopt_fp4" in entry["trtllm_moe_activation"]["right"]) is fp4_takes, version
            continue
        if rule["id"] in BF16_CUTEDSL_BATCH_VARIANT:  # the DSL GEMM chosen by m, and no deterministic check
            unquant = "".join(module(version, "sglang/srt/layers/quantization/unquant.py").values())
            variant = (
                "_use_cutedsl_bf16_gemm(" in unquant and CHECK_TEXT["bf16-gemm-cutedsl-deterministic"] not in unquant
            )
            if rule["id"] == BF16_CUTEDSL_BATCH_VARIANT[1]:  # auto made cutedsl on SM100 whatever the setting (0.5.17)
                variant = variant and BF16_AUTO_CUTEDSL_ALWAYS.search(unquant) is not None
            assert variant is bool(entry["applies"]), (rule["id"], version)
            continue
        if rule["id"] == GEMMA4_CUTLASS_GELU:  # the MoE built with gelu, and the BF16 CUTLASS call's else-SwiGLU
            gemma4 = "".join(module(version, "sglang/srt/models/gemma4_causal.py").values())
            unquant = "".join(module(version, "sglang/srt/layers/quantization/unquant.py").values())
            gelu = 'activation="gelu"' in gemma4 or 'activation: str = "gelu"' in gemma4
            assert (gelu and CUTLASS_SWIGLU_ELSE.search(unquant) is not None) is bool(entry["applies"]), version
            continue
        if rule["id"] == GEMMA4_TRANSFORMERS_MOE:  # the mixin's top-k lookup; auto judged only with no own Gemma 4
            backend = "".join(module(version, "sglang/srt/models/transformers.py").values())
            own = bool(module(version, "sglang/srt/models/gemma4_causal.py"))
            lookup = TRANSFORMERS_MOE_TOP_K.search(backend) is not None and "top_k_experts" not in backend
            assert lookup is bool(entry["applies"]), version
            if entry["applies"]:
                assert ("auto" in entry["transformers_backend_moe"]["impls"]) is (not own), version
            continue
        if rule["id"] == MLA_FA4_VERIFY:  # the backend's absorbed MLA branch asserts FA3 where the rule applies
            asserts = any("Only FA3 support here" in b for b in module(version, FA3_BACKEND).values())
            if entry["applies"]:
                assert asserts, version
            elif version_in(version, ">=0.5.17") is True:
                assert not asserts, version  # the assert is gone: nothing refuses fa4's verify there
            continue  # (below 0.5.8 the rule was not read: it does not apply)
        if rule["id"] == TILELANG_CUDA_KERNEL:  # the kernel's CUDA branch, and no argument check before it
            checked = any(text in body for text in TILELANG_ARG_CHECKS for body in code.values())
            if entry["applies"]:
                assert tilelang_cuda_bf16_only(version) and not checked, version
            elif version_in(version, ">=0.5.17") is True:
                assert checked, version  # the argument checks refuse it first
            continue
        texts = (CHECK_TEXT[rule["id"]], *CHECK_TEXT_ALSO.get(rule["id"], ()))
        where = code if rule["id"] not in CHECK_FILE else module(version, CHECK_FILE[rule["id"]])
        hits = [(name, body.index(text)) for text in texts for name, body in where.items() if text in body]
        assert bool(hits) is bool(entry["applies"]), (rule["id"], version, [n for n, _ in hits])
        hisparse_kv = {"hisparse-dsa-backend-bf16-kv": "bfloat16", "hisparse-dsa-backend-fp8-kv": "fp8_e4m3"}
        if rule["id"] in hisparse_kv and entry["applies"]:  # the CUDA list of the KV cache dtype
            body = code["sglang/srt/arg_groups/hisparse_hook.py"]
            by_dtype = re.search(r"HISPARSE_CUDA_DSA_BACKENDS_BY_DTYPE = \{(.*?)\n\}", body, re.S)
            assert by_dtype, version
            row = re.search(rf'"{hisparse_kv[rule["id"]]}": \{{([^}}]*)\}}', by_dtype.group(1))
            assert row and sorted(re.findall(r'"(\w+)"', row.group(1))) == sorted(entry["allowed"]), version
        if rule["id"] == "dsa-glm-sm12-fp8-backends" and entry["applies"]:  # the backends its GLM case keeps
            kept = re.search(r"unsupported = selected - \{([^}]*)\}", next(iter(where.values())))
            assert kept and sorted(re.findall(r'"(\w+)"', kept.group(1))) == sorted(entry["allowed"]), version
        if rule["id"] in DEEPGEMM_OFF_RULES and entry["applies"]:
            configurer = "".join(module(version, DEEPGEMM_CONFIGURER).values())
            assert DEEPGEMM_OFF_TEXT["below_sm90"] in configurer, version
            guard = "".join(module(version, DEEPGEMM_ENTRYPOINT).values())
            assert "if ENABLE_JIT_DEEPGEMM:\n    import deep_gemm" in guard, version
            majors = json.dumps(entry.get("also"))
            assert ('"in": [12]' in majors) is (DEEPGEMM_OFF_TEXT["sm120_off"] in configurer or version == "0.5.12")
            continue
        if rule["id"] in TRTLLM_QUANT_RULES and hits and "supports only" in code[hits[0][0]][hits[0][1] :][:40]:
            name, at = hits[0]  # 0.5.7 on: `assert <view>.quantization in [...]`, None (BF16) among them
            window = code[name][max(0, at - 600) : at]
            literal = window[window.rindex("quantization in [") :].split("]")[0]
            listed = sorted(re.findall(r'"([\w-]+)"', literal)) + (["None"] if "None" in literal else [])
            facts = ("quantization", "model_quant_method")
            lists = [c["not_in"] for c in entry.get("also") or [] if c.get("fact") in facts and "not_in" in c]
            assert lists and all(sorted(str(x) for x in lst) == sorted(listed) for lst in lists), (version, listed)
            continue
        if rule["id"] in TRTLLM_QUANT_RULES and hits:  # the quantizations the assertion admits, as the rule says
            name, at = hits[0]
            admitted = sorted(re.findall(r'self\.quantization == "(\w+)"', code[name][max(0, at - 300) : at]))
            said = re.split(r", | or ", str(entry["required_value"]))
            assert admitted == sorted(said), (rule["id"], version, admitted)
            lists = [c["not_in"] for c in entry.get("also") or [] if c.get("fact") == "quantization"]
            assert all(sorted(x) == admitted for x in lists), (rule["id"], version)
            continue
        if rule["id"] == "bf16-gemm-gemv-arch" and entry["applies"]:  # the majors gemv's check lets through
            arch = re.search(
                r"get_device_capability\(\)\[0\] (?:!= (\d+)|not in \(([\d, ]+)\))", "".join(where.values())
            )
            assert arch, version
            lets = sorted(int(x) for x in re.findall(r"\d+", arch.group(1) or arch.group(2)))
            assert [c["not_in"] for c in entry["also"]] == [lets], version
            continue
        for cond in entry.get("also") or []:
            if "fact" not in cond:
                continue  # a flag the command gives: test_gate_deterministic_models_registry.py reads those
            pattern = ALSO_TEXT[cond["fact"]]
            assert any(re.search(pattern, body) for body in code.values()), (rule["id"], version, cond)
        if rule["id"] == "spec-topk-without-steps":  # the adaptive escape is there from the range that names it
            adaptive = any(re.search(ALSO_TEXT["speculative_adaptive"], body) for body in code.values())
            assert adaptive is any(c["fact"] == "speculative_adaptive" for c in entry.get("also") or []), version
            iquest = any(ALSO_TEXT["model_architecture"] in body for body in code.values())
            assert iquest is any(c["fact"] == "model_architecture" for c in entry.get("also") or []), version
        if rule["id"] == "moe-a2a-flashinfer-runner-list" and hits:  # the runners the assertion admits
            name, at = hits[0]
            window = code[name][max(0, at - 400) : at]
            literal = window[window.rindex("moe_runner_backend in [") :].split("]")[0]
            assert re.findall(r'"(\w+)"', literal) == entry["allowed"], (version, name)
        if rule["id"] == "nvfp4-online-moe-runner" and hits:  # the runners the nvfp4_online branch takes
            name, at = hits[0]
            window = code[name][max(0, at - 700) : at]
            literal = window[window.rindex("moe_runner_backend not in [") :].split("]")[0]
            taken = ["auto", *re.findall(r'"(\w+)"', literal)]
            if "use_megamoe_w4a16" in window:  # 0.5.23: flashinfer_megamoe with its all-to-all backend and variable
                taken.append("flashinfer_megamoe")
            assert taken == entry["allowed"], (version, name, taken)
        if rule["id"] == "eagle-topk-page-size" and hits:
            name, at = hits[0]
            assert allowed_backends(code[name], at) == entry["allowed"], (version, name)
        if rule["id"] == "llama4-attention-backend" and hits:  # the set literal the assertion tests
            name, at = hits[0]
            window = code[name][max(0, at - 400) : at]
            literal = window[window.rindex("assert self.attention_backend in {") :]
            assert re.findall(r'"(\w+)"', literal.split("}")[0]) == entry["allowed"], (version, name)
        if rule["id"] == "llama4-listed-attention-backend" and hits:  # the set literal the assertion tests
            name, at = hits[0]
            window = code[name][max(0, at - 600) : at]
            literal = window[window.rindex("attention_backend in {") :].split("}")[0]
            assert "prefill" not in window, (version, name)  # attention_backend alone is asserted
            assert sorted(re.findall(r'"(\w+)"', literal)) == entry["model_backend"]["allowed"], (version, name)
        if rule["id"] == "gemma4-attention-backend" and hits:  # imodel2: the tuple the assertion tests
            name, at = hits[0]
            window = code[name][max(0, at - 600) : at]
            literal = window[window.rindex("accepted_backends = (") :].split(")")[0]
            assert sorted(re.findall(r'"(\w+)"', literal)) == entry["model_backend"]["allowed"], (version, name)
    for backend, spec in table["auto"]["page_size"]["forced_by"].items():
        forced = any(PAGE_TEXT[backend] in body for body in code.values())
        assert forced is bool(version_in(version, spec["versions"])), (backend, version)


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_auto_top_k_is_what_the_wheel_picks(version: str) -> None:
    spec = load([], env={}).launch["refusals"]["auto"]["speculative_topk"]
    entry = entry_for({"releases": spec["by_release"]}, version)
    assert entry is not None
    read = auto_topk(sources(fetch_wheel("sglang", version)))
    assert read["otherwise"] == entry["otherwise"]
    assert read["standalone"] == entry.get("standalone")
    differ = {a: k for a, k in read["architectures"].items() if k != read["otherwise"]}
    assert differ == entry["architectures"]


# ---- trtllm-mha-page-128-heads: the check in trtllm_mha_backend.py and the model shapes it reads -------------

PAGE_128 = "trtllm-mha-page-128-heads"


def _derive_shapes_architectures(model_config: str) -> list[str]:
    """The architectures whose head dims _derive_model_shapes sets itself: those its long if/elif chain names
    before the generic branch."""
    fn = next(
        n
        for n in ast.walk(ast.parse(model_config))
        if isinstance(n, ast.FunctionDef) and n.name == "_derive_model_shapes"
    )
    for node in ast.walk(fn):
        branches: list[ast.If] = []
        chain: ast.stmt | None = node if isinstance(node, ast.If) else None
        while isinstance(chain, ast.If):
            branches.append(chain)
            chain = chain.orelse[0] if len(chain.orelse) == 1 and isinstance(chain.orelse[0], ast.If) else None
        if len(branches) > 3:
            return sorted(
                {
                    c.value
                    for b in branches
                    for c in ast.walk(b.test)
                    if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value[:1].isupper()
                }
            )
    return []


def _page_versions() -> list[str]:
    return _versions() if run_all() else ["0.5.16", "0.5.17", "0.5.20", "0.5.23"]


@pytest.mark.registry
@pytest.mark.parametrize("version", _page_versions())
def test_the_trtllm_mha_page_128_check_is_what_the_wheel_raises(version: str) -> None:
    """In the releases the rule applies to, trtllm_mha_backend.py raises for pages >= 128 off XQA (SM90, SM120)
    when q heads // kv heads per attention-TP rank <= 1 or the QK and V head dims differ; ModelConfig reads the KV
    heads from the attributes model_heads reads, in that order; the architectures whose shapes SGLang sets itself
    are the rule's; trtllm_mha keeps 128 from the same release. Before, none of it."""
    from stackcheck.launch.refusals import model_heads

    launch = load([], env={}).launch
    rule = next(r for r in launch["refusals"]["rules"] if r["id"] == PAGE_128)
    entry = entry_for(rule, version)
    assert entry is not None
    backend = next(iter(module(version, CHECK_FILE[PAGE_128]).values()))
    check = re.search(r"if self\.page_size >= (\d+) and not self\.is_xqa_impl:(.*?)raise ValueError", backend, re.S)
    assert bool(check) is entry["applies"], version
    keeps = launch["refusals"]["auto"]["page_size"]["forced_by"]["trtllm_mha"]
    kept = (entry_for({"releases": keeps.get("keeps_by_release") or []}, version) or keeps)["keeps"]
    assert (128 in kept) is entry["applies"], version  # pages of 128 reach trtllm_mha exactly where it checks them
    if not check:
        return
    assert int(check.group(1)) == 128
    body = check.group(2)
    assert "num_q_heads // num_kv_heads <= 1" in body and "config.head_dim != config.v_head_dim" in body
    assert "config.num_attention_heads // attn_tp_size" in body and "get_num_kv_heads(attn_tp_size)" in body
    xqa = re.search(r"self\.is_xqa_impl = (.*)", backend)
    assert xqa is not None
    majors = sorted(int(m) for m in re.findall(r"is_sm(\d+?)0", xqa.group(1)))
    assert majors == entry["trtllm_gen_heads"]["xqa_majors"], xqa.group(1)
    config = next(iter(module(version, "sglang/srt/configs/model_config.py").values()))
    assert _derive_shapes_architectures(config) == entry["trtllm_gen_heads"]["shapes_set_by_sglang"]
    attributes = re.search(r"attributes = \[(.*?)\]", config, re.S)
    assert attributes is not None
    order = re.findall(r'"(\w+)"', attributes.group(1))
    # model_heads takes the first of these that config.json states: a config giving two takes the earlier one
    for i, key in enumerate(order):
        cfg = {"num_attention_heads": 32, **{k: 4 * (j + 1) for j, k in enumerate(order[i:])}}
        assert model_heads(cfg, entry["trtllm_gen_heads"]) == (32, 4, None, None), key
    for model_type in entry["trtllm_gen_heads"]["kv_heads_elsewhere"]:
        assert f'"{model_type}"' in config, model_type
    # the model override that sets page 128 itself: in the argument hooks, next to its architectures
    own = entry["trtllm_gen_heads"]["model_page_size"]
    hooks = [
        body
        for body in sources(fetch_wheel("sglang", version)).values()
        if all(f'"{a}"' in body for a in own["architectures"])
    ]
    assert any(f'overrides["page_size"] = {own["value"]}' in body for body in hooks), version


# ---- hybrid-gdn-blackwell-backend: the backends attention_registry.py admits, the GPUs, the models ------------

GDN = "hybrid-gdn-blackwell-backend"


def _gdn_versions() -> list[str]:
    return _versions() if run_all() else ["0.5.2", "0.5.3", "0.5.5", "0.5.9", "0.5.13", "0.5.16", "0.5.20", "0.5.23"]


def _names(text: str) -> list[str]:
    return sorted(set(re.findall(r'"(\w+)"', text)))


def gdn_check(registry: str) -> dict[str, Any] | None:
    """The hybrid GDN check of attention_registry.py as the wheel writes it: the backends admitted on SM120 and on
    the other Blackwell GPUs, and which backends it reads."""
    at = registry.find(CHECK_TEXT[GDN])
    if at < 0:
        return None
    start = registry.rfind("if is_blackwell():", 0, at)
    block = registry[start:at]
    sm120 = re.search(r"if (?:is_sm120_supported\(\)|get_platform\(\)\.is_sm120):\s*allowed = (\{[^}]*\})", block)
    other = re.search(r"else:\s*(?:#[^\n]*\n\s*)*allowed = (\{[^}]*\}|\w+)", block)
    if sm120 and other:
        rest = other.group(1)
        if not rest.startswith("{"):  # a module constant
            const = re.search(rf"^{rest} = (\{{[^}}]*\}})", registry, re.M)
            assert const is not None, rest
            rest = const.group(1)
        admitted = {"sm120": _names(sm120.group(1)), "other": _names(rest)}
    else:
        names = _names(" ".join(re.findall(r'attention_backend == "\w+"', block)))
        admitted = {"sm120": names, "other": names}
    if "prefill_attention_backend_str" in block:
        mode = "prefill_decode"
    elif "if prefill_be and decode_be" in block:
        mode = "split_if_both"
    else:
        mode = "attention_backend"
    return {"admitted": admitted, "checks": mode}


def blackwell_majors(common: str) -> list[int]:
    """The compute-capability majors utils/common.py's is_blackwell() takes."""
    m = re.search(r"def is_blackwell\(\):.*?get_device_capability\(\)\[0\] (==|in) (\[[^\]]*\]|\d+)", common, re.S)
    if m is None:
        m = re.search(r"is_blackwell = lru_cache.*?device_capability_majors=(\[[^\]]*\])", common, re.S)
        assert m is not None
        return sorted(int(x) for x in re.findall(r"\d+", m.group(1)))
    return sorted(int(x) for x in re.findall(r"\d+", m.group(2)))


@pytest.mark.registry
@pytest.mark.parametrize("version", _gdn_versions())
def test_the_hybrid_gdn_check_is_what_the_wheel_asserts(version: str) -> None:
    """launch.json's backends per GPU major, GPU majors checked, backends read and hybrid GDN models are the
    wheel's: attention_registry.py's assert, utils/common.py's is_blackwell, the config classes of hybrid_gdn_config
    (their model_type) or, in 0.5.3, is_hybrid_gdn's architectures."""
    rule = next(r for r in load([], env={}).launch["refusals"]["rules"] if r["id"] == GDN)
    entry = entry_for(rule, version)
    assert entry is not None
    registry = next(iter(module(version, CHECK_FILE[GDN]).values()), "")
    read = gdn_check(registry)
    assert (read is not None) is bool(entry["applies"]), version
    if read is None:
        return
    spec = entry["hybrid_gdn"]
    common = next(iter(module(version, "sglang/srt/utils/common.py").values()))
    majors = blackwell_majors(common)
    assert majors == spec["blackwell_majors"], version
    for major in majors:
        want = read["admitted"]["sm120" if major == 12 else "other"]
        assert spec["allowed_by_major"][str(major)] == want, (version, major)
    assert spec["checks"] == read["checks"], version
    with zipfile.ZipFile(fetch_wheel("sglang", version)) as z:
        configs = {n: z.read(n).decode("utf-8", "replace") for n in z.namelist() if n.startswith("sglang/srt/")}
    # the draft runner's own backend (--speculative-draft-attention-backend) reaches the assert where the runner
    # resolves it and the assert reads the runner's strings (0.5.18+); before, it reads the shared server flags
    resolves = "def resolve_draft_attention_backend(" in configs.get("sglang/srt/model_executor/model_runner.py", "")
    assert bool(spec.get("draft_checked")) is (resolves and read["checks"] == "prefill_decode"), version
    if "architectures" in spec:  # 0.5.3: by the first architecture
        runner = configs["sglang/srt/model_executor/model_runner.py"]
        fn = re.search(r"def is_hybrid_gdn\(self\):.*? in \[(.*?)\]", runner, re.S)
        assert fn is not None and _names(fn.group(1)) == spec["architectures"]
        return
    fn = next(
        re.search(r"def hybrid_gdn_config\(.*?\):(.*?)return None", body, re.S)
        for body in configs.values()
        if "def hybrid_gdn_config(" in body
    )
    assert fn is not None
    classes = re.findall(r"\b(\w+Config)\b", fn.group(1))
    types = set(spec["model_types"])
    for cls in classes:  # each listed class's own model_type is in the rule's list
        body = next(b for b in configs.values() if f"class {cls}(" in b)
        own = re.search(rf"class {cls}\(.*?model_type(?:: str)? = \"(\w+)\"", body, re.S)
        assert own is not None and own.group(1) in types, (version, cls)
    for model_type in types:  # and each model_type of the list is one a config class of the wheel declares
        assert any(re.search(rf'model_type(?:: str)? = "{model_type}"', b) for b in configs.values()), model_type


# ---- GPT-OSS: the backends its assertion lists and the ones its override picks -------------------------------


def _oss_versions() -> list[str]:
    return _versions() if run_all() else ["0.5.1", "0.5.3", "0.5.4", "0.5.9", "0.5.16", "0.5.23"]


@pytest.mark.registry
@pytest.mark.parametrize("version", _oss_versions())
def test_the_gpt_oss_lists_are_what_the_wheel_asserts_and_picks(version: str) -> None:
    """launch.json's gpt-oss-attention-backend list and sides, and its model override (conditions and picks on
    CUDA), read from the wheel: the supported_backends list before the assertion's message, whether the sides are
    read (get_attention_backends / attention_backends_of), the override's guard and its SM100/SM90/else picks."""
    launch = load([], env={}).launch
    rule = next(r for r in launch["refusals"]["rules"] if r["id"] == "gpt-oss-attention-backend")
    entry = entry_for(rule, version)
    assert entry is not None and entry["applies"], version
    code = sources(fetch_wheel("sglang", version))
    name, body = next((n, b) for n, b in code.items() if CHECK_TEXT["gpt-oss-attention-backend"] in b)
    at = body.index(CHECK_TEXT["gpt-oss-attention-backend"])
    window = body[max(0, at - 1500) : at]
    listed = re.findall(r"supported_backends = \[([^\]]*)\]", window)
    assert listed, (version, name)
    assert sorted(_names(listed[-1])) == entry["model_backend"]["allowed"], version
    sides = any(
        s in window for s in ("get_attention_backends()", "attention_backends_of(", "_resolved_attention_backends")
    )
    assert entry["model_backend"]["checks"] == ("prefill_decode" if sides else "attention_backend"), version
    override = next(
        o
        for o in launch["refusals"]["auto"]["attention_backend"]["model_overrides"]
        if version_in(version, o["versions"]) is True and "GptOssForCausalLM" in o["architectures"]
    )
    pick = re.compile(
        r'(is_sm100|is_sm90)\w*(?:\(\))?:\s*(?:self\.attention_backend = |overrides\["attention_backend"\] = )"(\w+)"'
    )
    tags = ('_register_for("GptOssForCausalLM")', 'model_arch in ["GptOssForCausalLM"]')
    windows = [b[b.index(t) : b.index(t) + 1500] for b in code.values() for t in tags if t in b]
    where = next(w for w in windows if pick.search(w))  # the branch that sets the backend
    every = "is_attention_backend_not_set" in where or "prefill_attention_backend is None" in where
    assert len(override["unless_flags"]) == (3 if every else 1), version
    assert [p for _, p in pick.findall(where)[:2]] == [o["backend"] for o in override["picks"]], version
    assert '"triton"' in where and override["otherwise"] == "triton", version


@pytest.mark.registry
@pytest.mark.parametrize("version", _oss_versions())
def test_the_olmo2_override_is_what_the_wheel_picks(version: str) -> None:
    """launch.json's Olmo2 model override read from the wheel: present exactly where the wheel has an Olmo2 branch
    that sets the backend, guarded by attention_backend alone, and picking trtllm_mha on SM100, fa3 on any SM >= 80,
    else triton."""
    launch = load([], env={}).launch
    entries = [
        o
        for o in launch["refusals"]["auto"]["attention_backend"]["model_overrides"]
        if version_in(version, o["versions"]) is True and "Olmo2ForCausalLM" in o["architectures"]
    ]
    code = sources(fetch_wheel("sglang", version))
    pick = re.compile(
        r'(is_sm100|>= 80)\w*(?:\(\))?:\s*(?:self\.attention_backend = |overrides\["attention_backend"\] = )"(\w+)"'
    )
    tags = ('_register_for("Olmo2ForCausalLM")', 'model_arch in ["Olmo2ForCausalLM"]')
    windows = [b[b.index(t) : b.index(t) + 1500] for b in code.values() for t in tags if t in b]
    where = next((w for w in windows if pick.search(w)), None)
    assert (where is not None) == (len(entries) == 1), version
    if where is None:
        return
    override = entries[0]
    assert '"triton"' in where and override["otherwise"] == "triton", version
    where = where[: where.index('"triton"')]  # the branch up to its last pick, not the next model's
    assert "attention_backend is None" in where and "prefill_attention_backend" not in where, version
    assert override["unless_flags"] == ["--attention-backend"], version
    found = pick.findall(where)[:2]
    assert [c for c, _ in found] == ["is_sm100", ">= 80"], version
    assert [b for _, b in found] == [o["backend"] for o in override["picks"]], version
    assert override["picks"][0]["majors"] == [10] and override["picks"][0]["torch_cuda_min"] == "12.8", version
    assert override["picks"][1]["majors"] == [8, 9, 10, 11, 12] and "torch_cuda_min" not in override["picks"][1]


@pytest.mark.registry
@pytest.mark.parametrize("version", _oss_versions())
def test_the_llama4_override_is_what_the_wheel_picks(version: str) -> None:
    """launch.json's Llama 4 model override read from the wheel: present exactly where the wheel has the branch
    that picks a backend before the assertion ('Auto-select attention backend for Llama4'), guarded by
    attention_backend alone, picking trtllm_mha on SM100, fa3 on SM90, else (on CUDA) triton."""
    launch = load([], env={}).launch
    entries = [
        o
        for o in launch["refusals"]["auto"]["attention_backend"]["model_overrides"]
        if version_in(version, o["versions"]) is True and "Llama4ForCausalLM" in o["architectures"]
    ]
    code = sources(fetch_wheel("sglang", version))
    tag = "Auto-select attention backend for Llama4"
    windows = [b[b.index(tag) : b.index(tag) + 900] for b in code.values() if tag in b]
    assert (len(windows) == 1) == (len(entries) == 1), version
    if not windows:
        return
    where, override = windows[0], entries[0]
    assert "attention_backend is None" in where and "prefill_attention_backend" not in where, version
    assert override["unless_flags"] == ["--attention-backend"], version
    found = re.findall(
        r'(is_sm100|is_sm90)\w*(?:\(\))?:\s*(?:self\.attention_backend|backend), platform = "(\w+)"', where
    )
    assert [c for c, _ in found] == ["is_sm100", "is_sm90"], (version, found)
    assert [b for _, b in found] == [o["backend"] for o in override["picks"]], version
    assert [o["majors"] for o in override["picks"]] == [[10], [9]], version
    assert re.search(r'else:\s*(?:self\.attention_backend|backend), platform = "triton"', where), version
    assert override["otherwise"] == "triton", version
