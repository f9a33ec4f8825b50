"""What SGLang's --torchao-config runs, per value (the check extension-torch-abi-torchao, rule torchao-config).

SGLang's apply_torchao_config_to_model (sglang/srt/layers/torchao_utils.py, 0.5.1-0.5.17) picks a torchao config by
the first of these words the value contains: int8wo, int8dq, int4wo-GROUP, gemlite-... (0.5.1-0.5.6 only), fp8wo,
fp8dq-GRANULARITY; anything else raises ValueError('Unexpected config'). Read in torchao's wheels 0.9.0-0.15.0,
none of those configs calls one of torchao's own compiled ops (torchao/_C*.so): int8 weights run torch.mm and
torch._int_mm (or torchao's Triton int_mm), fp8 runs torch._scaled_mm (or fbgemm-gpu-genai's where it is installed),
int4 up to 0.13 runs torch's own tinygemm (aten._weight_int4pack_mm). So a torchao without its compiled libraries, or
with libraries torchao failed to load (it catches that), serves these configs. What does need a compiled library:
int4wo from torchao 0.14 on (Int4WeightOnlyConfig version 2, packing PLAIN, runs fbgemm-gpu-genai's kernels and
raises ImportError without it) and gemlite (the gemlite package). The packages probe lists both (igap25): where
it lists one not installed, the launch fails at model load (a crash); installed, or not named by the packages list
(an older stackcheck's), unknown: whether fbgemm-gpu-genai's kernels load into this torch and run on this GPU, and
whether gemlite's Triton kernels serve torchao's gemlite layout, were not read.
torchao 0.16 and later no longer export the function names SGLang imports: the check torchao-import judges that
(rule torchao-function-configs), and a torchao that is not installed (torchao-installed)."""

from __future__ import annotations

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.types import Reason

SGLANG_SOURCE: dict[str, str] = {
    "title": "sglang 0.5.1, 0.5.6, 0.5.7, 0.5.9 and 0.5.17 wheels, sglang/srt/layers/torchao_utils.py "
    "apply_torchao_config_to_model: the words tested in order, int8wo (0.5.1:65, 0.5.6:76, 0.5.7:58, 0.5.9-0.5.17:59), "
    "int8dq, int4wo (group size int(value.split('-')[-1]) asserted in [32, 64, 128, 256]: 0.5.9:63-70), gemlite "
    "(0.5.1:78, 0.5.6:89; gone in 0.5.7), fp8wo, fp8dq (granularity per_row or per_tensor asserted: 0.5.9:76-84), "
    "else ValueError('Unexpected config') (0.5.1:122, 0.5.6:133, 0.5.7:92, 0.5.9:93) (read 2026-12-05)",
    "url": "https://pypi.org/project/sglang/0.5.9/",
}
TORCHAO_SOURCE: dict[str, str] = {
    "title": "torchao 0.9.0, 0.13.0 and 0.15.0 wheels: int8 weight-only runs torch.mm "
    "(dtypes/uintx/plain_layout.py:208-224 in 0.9.0, :250 in 0.15.0), int8 dynamic runs kernel/intmm.py "
    "int_scaled_matmul (torch._int_mm, or the Triton op torchao registers in Python under TORCHAO_AUTOTUNER_ENABLE: "
    "0.13.0 intmm.py:102-145), fp8 runs torch._scaled_mm (float8/inference.py:79/90 in 0.9.0, :108/118 in 0.15.0) "
    "or fbgemm's f8f8bf16 where fbgemm-gpu-genai is installed (0.13.0 quantize_/workflows/float8/float8_tensor.py:"
    "253-289), "
    "int4 version 1 runs torch.ops.aten._weight_int4pack_mm (dtypes/uintx/tensor_core_tiled_layout.py:78 in 0.9.0, "
    ":104 in 0.13.0); no torchao.ops / torch.ops.torchao call on these paths (grep of each wheel, 2026-12-05)",
    "url": "https://pypi.org/project/torchao/0.15.0/",
}
INT4_FBGEMM_SOURCE: dict[str, str] = {
    "title": "torchao 0.14.0, 0.14.1 and 0.15.0 wheels: quantization/quant_api.py Int4WeightOnlyConfig "
    "int4_packing_format PLAIN, version 2 (0.14.0 and 0.14.1:1151/1155, 0.15.0:1126/1130; 0.13.0:1031 version 1), "
    "built by Int4Tensor.from_hp, which "
    "raises ImportError('Requires fbgemm-gpu-genai >= 1.2.0') without fbgemm_gpu (quantize_/workflows/int4/"
    "int4_tensor.py:23-26, :100-101) and runs torch.ops.fbgemm.bf16i4bf16_rowwise (:159) (read 2026-12-05)",
    "url": "https://pypi.org/project/torchao/0.14.1/",
}
GEMLITE_SOURCE: dict[str, str] = {
    "title": "sglang 0.5.1 and 0.5.6 wheels, sglang/srt/layers/torchao_utils.py apply_torchao_config_to_model: the "
    "gemlite branch runs `from gemlite.core import GemLiteLinearTriton` first (0.5.1:81, 0.5.6:92), no try; the "
    "gemlite distribution's name read in its 0.6.0.post2 sdist (PKG-INFO Name: gemlite) (read 2026-12-05)",
    "url": "https://pypi.org/project/sglang/0.5.6/",
}
FBGEMM = "fbgemm-gpu-genai"


def _listed(ctx: Context, name: str) -> bool | None:
    """Whether the packages probe lists `name` installed (True) or not installed (False); None where its list does
    not name it (an older stackcheck's) or says neither."""
    entry = ctx.package(name)
    installed = entry.get("installed") if entry is not None else None
    return installed if isinstance(installed, bool) else None


#: the words apply_torchao_config_to_model tests, in its order (gemlite only in the releases that have it)
_GEMLITE_RELEASES = ">=0.5.1,<0.5.7"


def config_kind(value: str, sglang: str | None) -> tuple[str, str | None]:
    """The config SGLang's apply_torchao_config_to_model picks for `value`, and the error it raises instead (None:
    none). gemlite is tried where the release has it, or where the release is not known (fail closed: its
    verdict is unknown)."""
    from stackcheck.facts.versions import version_in

    words = ["int8wo", "int8dq", "int4wo", "gemlite", "fp8wo", "fp8dq"]
    if sglang is not None and version_in(sglang, _GEMLITE_RELEASES) is False:
        words.remove("gemlite")
    kind = next((w for w in words if w in value), None)
    last = value.rsplit("-", maxsplit=1)[-1]
    if kind is None:
        return "", f"ValueError: Unexpected config: {value}"
    if kind == "int4wo":
        # read as SGLang's int() reads it: '+128' and '1_28' are 128, and '²', a digit to str.isdigit, is no literal
        # (irev57: an isdigit test before int() ended the gate in an internal error on it and refused '+128')
        try:
            size = int(last)
        except ValueError:
            return kind, f"ValueError: invalid literal for int() with base 10: '{last}' (the group size)"
        if size not in (32, 64, 128, 256):
            return kind, "AssertionError: int4wo groupsize needs to be one of [32, 64, 128, 256]"
    if kind == "fp8dq" and last not in ("per_row", "per_tensor"):
        return kind, f"AssertionError: Supported granularity are per_row and per_tensor, got {last}"
    return kind, None


def torchao_config_reasons(ctx: Context, value: str) -> list[Reason]:
    """Rule torchao-config's reason for a launch whose --torchao-config is `value` (non-empty): fail (crash) where
    SGLang raises on the value, unknown where the config needs a package no probe reads, pass where it calls
    no compiled library of torchao. [] where torchao is not installed or its version not known (the rules
    of the check torchao-import, or this check's unknown, say that)."""
    from stackcheck.facts.versions import version_in, version_in_settled

    sglang = ctx.installed_version("sglang")
    kind, error = config_kind(value, sglang)
    base: Reason = {
        "rule": "torchao-config",
        "requirement": "the torchao config SGLang builds for --torchao-config runs with what is installed",
        "observed": f"--torchao-config {value}" + (f" ({kind})" if kind else ""),
        "source": [SGLANG_SOURCE],
    }
    if error is not None:
        return [
            {
                **base,
                "result": "fail",
                "effect": "crash",
                "required": "int8wo, int8dq, int4wo-32/64/128/256, fp8wo, fp8dq-per_row/per_tensor"
                + (", gemlite-..." if kind == "gemlite" or sglang is None else ""),
                "message": f"SGLang's apply_torchao_config_to_model raises '{error}' for --torchao-config {value} "
                "as it loads the model: the launch stops there; give one of int8wo, int8dq, int4wo-128 (group "
                "size 32, 64, 128 or 256), fp8wo, fp8dq-per_row or fp8dq-per_tensor",
            }
        ]
    torchao = ctx.installed_version("torchao")
    if torchao is None or version_in(torchao, "<0.16") is not True:
        return []  # not installed, not known, or 0.16+ (its import fails first): the rules and the check say it
    if kind == "gemlite":
        return [_gemlite_reason(ctx, base, value)]
    if kind == "int4wo" and version_in_settled(torchao, ">=0.14") is not False:  # (0.14.0rc1: judged as 0.14)
        return [_int4_fbgemm_reason(ctx, base, value, torchao)]
    runs = {
        "int8wo": "torch.mm on int8 weights",
        "int8dq": "torch._int_mm (or torchao's Triton int_mm)",
        "int4wo": "torch's own int4 tinygemm (aten._weight_int4pack_mm)",
        "fp8wo": "a dequantized fp8 weight in torch's linear",
        "fp8dq": "torch._scaled_mm (or fbgemm-gpu-genai's fp8 GEMM where it is installed)",
    }
    return [
        {
            **base,
            "result": "pass",
            "source": [SGLANG_SOURCE, TORCHAO_SOURCE],
            "message": f"--torchao-config {value} ({kind}) runs {runs[kind]} with torchao {torchao}: no compiled "
            "library of torchao's own (torchao/_C*.so) is called, so torchao's kernels loading or not does not "
            "decide this launch",
        }
    ]


def _gemlite_reason(ctx: Context, base: Reason, value: str) -> Reason:
    """gemlite-...: SGLang imports gemlite.core before anything else of the branch."""
    listed = _listed(ctx, "gemlite")
    out: Reason = {**base, "source": [SGLANG_SOURCE, GEMLITE_SOURCE]}
    if listed is False:
        return {
            **out,
            "result": "fail",
            "effect": "crash",
            "required": "gemlite installed",
            "message": f"--torchao-config {value} quantizes with torchao's gemlite layout, and SGLang first runs "
            "'from gemlite.core import GemLiteLinearTriton' (sglang/srt/layers/torchao_utils.py), outside any try: "
            'gemlite is not installed, so the model load fails with "ModuleNotFoundError: No module named '
            "'gemlite'\"; pip install gemlite, or give int8wo, int8dq, int4wo-128, fp8wo or fp8dq-per_row",
        }
    state = (
        f"gemlite {ctx.installed_version('gemlite') or '(version not read)'} is installed, but whether its Triton "
        "kernels serve this torchao's gemlite layout was not read"
        if listed
        else "whether gemlite is installed was not read (the packages list does not name it)"
    )
    return {
        **out,
        "result": "unknown",
        "message": f"--torchao-config {value} quantizes with torchao's gemlite layout, which imports the gemlite "
        f"package (sglang/srt/layers/torchao_utils.py: from gemlite.core import GemLiteLinearTriton first): {state}",
    }


def _int4_fbgemm_reason(ctx: Context, base: Reason, value: str, torchao: str) -> Reason:
    """int4wo on torchao 0.14-0.15: Int4WeightOnlyConfig version 2, whose tensor needs fbgemm-gpu-genai."""
    listed = _listed(ctx, FBGEMM)
    out: Reason = {**base, "source": [SGLANG_SOURCE, INT4_FBGEMM_SOURCE]}
    what = (
        f"--torchao-config {value} builds torchao {torchao}'s Int4WeightOnlyConfig, version 2 from torchao 0.14 on, "
        "whose int4 tensor is packed and multiplied by fbgemm-gpu-genai's kernels (torchao imports "
        "fbgemm_gpu.experimental.gen_ai.quantize inside a bare try and raises 'ImportError: Requires "
        "fbgemm-gpu-genai >= 1.2.0' as it quantizes when that import failed)"
    )
    if listed is False:
        return {
            **out,
            "result": "fail",
            "effect": "crash",
            "required": "fbgemm-gpu-genai >= 1.2.0 installed",
            "message": f"{what}: fbgemm-gpu-genai is not installed, so the model load fails with that ImportError; "
            "pip install the fbgemm-gpu-genai release of the installed torch, or give int8wo, int8dq, fp8wo or "
            "fp8dq-per_row (none needs a package besides torchao and torch)",
        }
    state = (
        f"fbgemm-gpu-genai {ctx.installed_version(FBGEMM) or '(version not read)'} is installed, but whether its "
        "compiled kernels load into this torch (each release is built for one torch) and run on this GPU was not "
        "read"
        if listed
        else "whether fbgemm-gpu-genai is installed was not read (the packages list does not name it)"
    )
    return {**out, "result": "unknown", "message": f"{what}: {state}"}
