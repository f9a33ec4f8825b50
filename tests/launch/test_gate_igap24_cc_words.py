"""igap24 (issue 16): a CC of several words for FlashInfer's JIT. FlashInfer adds `-ccbin $CC` as one list item and
writes it unquoted into its ninja file (flashinfer-python 0.5.0-0.7.2 flashinfer/jit/cpp_ext.py join_multiline), and
ninja's /bin/sh splits it: with CC='ccache gcc' nvcc gets `-ccbin ccache` and `gcc` as a second input file ('nvcc
fatal : A single input file is required for a non-link phase when an outputfile is specified', nvcc 13.0.88 run on
the helper's box). Before: jit.cc_host_found was null for such a CC and the gate said unknown; now rule
flashinfer-jit-cc-args (jit.cc_host_one_program) refuses it, and stays unknown where the extra words are options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import CUDA_128_HOME, LLAMA3, cli_json, model_dir, release_box, toolkit_128_facts, touch_exe

from stackcheck.probes.jit import cc_one_program, probe_jit
from stackcheck.readers.fsview import HostView

RULE = "flashinfer-jit-cc-args"
PATH = {"PATH": "/usr/bin"}


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("gcc", True),
        ("/usr/lib/ccache/gcc", True),
        ("'/opt/my gcc/bin/gcc'", True),  # one word once the shell removes the quotes
        ("ccache gcc", False),
        ("sccache /usr/bin/gcc-13", False),
        ("  distcc   gcc  -O2", False),
        ("gcc -m64", None),  # an option nvcc may take: not read
        ("", None),
        ("   ", None),
        ("'ccache gcc", None),  # an open quote: the shell's syntax error, not read
        ("$HOME/bin/gcc", None),  # ninja's own $ and the shell's expansions: not read
        ("gcc*", None),
    ],
)
def test_how_the_shell_splits_cc(value: str, want: bool | None) -> None:
    assert cc_one_program(value) is want


def _box(root: Path) -> HostView:
    touch_exe(root / CUDA_128_HOME.lstrip("/") / "bin/nvcc")
    touch_exe(root / "usr/bin/gcc-14")
    (root / "usr/bin/gcc").symlink_to("gcc-14")
    touch_exe(root / "usr/bin/ccache")
    touch_exe(root / "usr/bin/c++")
    for name in ("cc1", "cc1plus"):
        touch_exe(root / f"usr/lib/gcc/x86_64-linux-gnu/14/{name}")
    return HostView(str(root))


def test_the_probe_writes_it_only_where_cc_is_set(tmp_path: Path) -> None:
    view = _box(tmp_path)
    assert "cc_host_one_program" not in probe_jit(toolkit_128_facts(), PATH, view)
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "ccache gcc"}, view)
    assert jit["cc_host_one_program"] is False and jit["cc_host_found"] is None, jit
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "gcc"}, view)
    assert jit["cc_host_one_program"] is True and jit["cc_host_found"] is True, jit
    # another -ccbin competing does not remove the stray word from nvcc's command line
    jit = probe_jit(
        toolkit_128_facts(), {**PATH, "CC": "ccache gcc", "NVCC_PREPEND_FLAGS": "-ccbin /usr/bin/gcc"}, view
    )
    assert jit["cc_host_one_program"] is False, jit


def _gate(tmp_path: Path, env: dict[str, str], *, jit_cache: bool = False) -> dict[str, Any]:
    """gate of a Llama 3 launch on SGLang 0.5.5 with FlashInfer 0.5.3 (as test_gate_iccjit_flashinfer_host.py) with
    the probe's host-compiler keys for `env`, --allow-unknown."""
    host = probe_jit(toolkit_128_facts(), {**PATH, **env}, _box(tmp_path / "box"))
    path = release_box(tmp_path, "0.5.5", "9.0")
    doc = json.loads(path.read_text())
    packages = doc["facts"]["packages"]
    packages["flashinfer-python"].update(version="0.5.3", dist_version="0.5.3")
    packages["sgl-kernel"] = {"installed": True, "version": "0.3.16.post5", "location": "/x"}
    packages["sglang-kernel"] = {"installed": False}
    packages["torch"].update(version="2.8.0+cu128", dist_version="2.8.0")
    if jit_cache:
        packages["flashinfer-jit-cache"] = {"installed": True, "version": "0.5.3", "location": "/x"}
    keys = ("cxx", "nvcc_host", "flashinfer_host", "flashinfer_allow_unsupported", "cc_host")
    doc["facts"]["jit"].update({k: v for k, v in host.items() if k.startswith(keys) and not k.startswith("cxx_")})
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--allow-unknown", "--format", "json", "--", *line])[1]


def _results(doc: dict[str, Any]) -> dict[str, str]:
    return {
        str(x.get("rule")): str(x.get("result"))
        for r in [*(doc.get("reasons") or []), *(doc.get("warnings") or [])]
        if r.get("feature") == "jit-toolchain"
        for x in r.get("reasons") or []
    }


@pytest.mark.parametrize("cc", ["ccache gcc", "sccache gcc"])
def test_a_launcher_in_cc_is_refused(tmp_path: Path, cc: str) -> None:
    doc = _gate(tmp_path, {"CC": cc})
    assert doc["decision"] == "refuse" and _results(doc).get(RULE) == "fail", doc.get("reasons")
    reason = next(x for r in doc["reasons"] for x in r.get("reasons") or [] if x.get("rule") == RULE)
    assert "A single input file is required" in reason["message"] and reason["effect"] == "crash"
    # flashinfer-jit-cache: FlashInfer 0.5.3 loads its modules prebuilt, nothing is compiled
    cached = _gate(tmp_path / "cached", {"CC": cc}, jit_cache=True)
    assert cached["decision"] == "allow" and RULE not in _results(cached), cached.get("reasons")


def test_options_after_the_compiler_are_unknown_and_one_word_passes(tmp_path: Path) -> None:
    assert _results(_gate(tmp_path / "a", {"CC": "gcc -m64"})).get(RULE) == "unknown"
    for i, cc in enumerate(("gcc", "/usr/bin/gcc")):
        doc = _gate(tmp_path / f"b{i}", {"CC": cc})
        assert doc["decision"] == "allow" and RULE not in _results(doc), (cc, doc.get("reasons"))
