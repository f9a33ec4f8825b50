"""triage for round twenty-six's FP8 cause: Triton's compiler refusing its float8_e4m3 type (fp8e4nv) on a GPU
below compute capability 8.9, where an FP8 checkpoint's MoE layers run SGLang's Triton fused MoE kernel
(MiniMax-M2 on A800s under SGLang 0.5.4.post3: sgl-project/sglang#13471). Triton 3.4.0 (torch 2.8.0's, so
SGLang 0.5.4.post3's) adds fp8e4nv to the supported FP8 types only for capability >= 89
(triton/backends/nvidia/compiler.py:168-172) and raises the ValueError at the type's lowering
(triton/language/core.py:590-594). The log had no signature before: nothing named the GPU's FP8 support."""

from __future__ import annotations

import io

from stackcheck.launch.triage import TriageResult, load_signatures, triage_stream


def _triage(log: str) -> TriageResult:
    return triage_stream(io.BytesIO(log.encode()), signatures=load_signatures())


def _text(rc: object) -> str:
    sig = rc.signature  # type: ignore[attr-defined]
    return " ".join((sig.title, sig.explanation, sig.fix))


MESSAGE = "type fp8e4nv not supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')"

# written for this test in the shape of Triton's errors under a serving engine's scheduler
RAISED = (
    "[2025-11-18 08:12:40 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.12/dist-packages/triton/language/core.py", line 593, in to_ir\n'
    "    raise ValueError(f'type {self} not supported in this architecture. '\n"
    f"ValueError: {MESSAGE}\n"
)
COMPILED = (
    "[2025-11-18 08:12:40 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.12/dist-packages/triton/compiler/compiler.py", line 300, in compile\n'
    "    module = src.make_ir(options, codegen_fns, module_map, context)\n"
    "triton.compiler.errors.CompilationError: at 1:0:\n"
    "def fused_moe_kernel(\n"
    "^\n"
    f'ValueError("{MESSAGE}")\n'
)


def test_the_raised_value_error_names_triton_fp8_below_sm89() -> None:
    rc = _triage(RAISED).root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "triton-fp8e4nv-below-sm89"
    assert rc.line == 1  # the traceback's first line
    text = _text(rc)
    assert "Triton" in text and "8.9" in text and "MoE" in text and "BF16" in text
    assert any("triton/language/core.py" in s["title"] for s in rc.signature.source)


def test_the_compilation_error_form_names_it_too() -> None:
    # Triton's code generator wraps the ValueError: the message stands under the kernel's source, not as 'X: msg'
    rc = _triage(COMPILED).root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "triton-fp8e4nv-below-sm89"


def test_a_supported_fp8_type_line_is_not_matched() -> None:
    log = "ValueError: type fp8e4b8 not supported in this architecture. The supported fp8 dtypes are ('fp8e5',)\n"
    rc = _triage(log).root_cause
    assert rc is None or rc.signature is None or rc.signature.id != "triton-fp8e4nv-below-sm89"
