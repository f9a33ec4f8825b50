"""triage for the real-world corpus, round eleven (sglang#36533): with --enable-memory-saver the scheduler's python
is started with torch_memory_saver's hook in LD_PRELOAD, and the loader stops it on the hook's libcudart.so.13: that is
named as the preloaded hook, while the same library missing for a kernel package's import stays the kernel package's
cause (cuda-runtime-lib-missing)."""

from __future__ import annotations

import io

from stackcheck.launch.triage import triage_stream


def _sig(text: str) -> tuple[str | None, str]:
    rc = triage_stream(io.BytesIO(text.encode())).root_cause
    sig = rc.signature if rc is not None else None
    return (sig.id, f"{sig.title} {sig.explanation} {sig.fix}") if sig else (None, "")


def test_the_python_loader_stopping_on_libcudart_names_the_preloaded_hook() -> None:
    log = (
        "/srv/app/.venv/bin/python: error while loading shared libraries: libcudart.so.13: "
        "cannot open shared object file: No such file or directory\n"
        "RuntimeError: Rank 0 scheduler died during initialization (exit code: 127).\n"
    )
    sig_id, text = _sig(log)
    assert sig_id == "memory-saver-preload-libcudart"
    assert "LD_PRELOAD" in text and "--enable-memory-saver" in text and "nvidia/cu13/lib" in text


def test_a_kernel_packages_import_of_libcudart_stays_the_kernel_packages_cause() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/.venv/lib/python3.12/site-packages/sgl_kernel/__init__.py", line 5, in <module>\n'
        "    from sgl_kernel import common_ops\n"
        "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n"
    )
    sig_id, _ = _sig(log)
    assert sig_id == "cuda-runtime-lib-missing"


def test_another_program_missing_libcudart_is_not_the_memory_saver() -> None:
    # a compiled tool (not the python interpreter) that links libcudart itself
    log = "./bench_gemm: error while loading shared libraries: libcudart.so.12: cannot open shared object file\n"
    sig_id, _ = _sig(log)
    assert sig_id != "memory-saver-preload-libcudart"
    sig_id, _ = _sig(log + "RuntimeError: the benchmark failed\n")
    assert sig_id != "memory-saver-preload-libcudart"
