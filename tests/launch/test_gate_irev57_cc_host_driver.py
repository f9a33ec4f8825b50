"""irev57 (an adversarial review of iccjit's flashinfer_host_compiler): where CC is set FlashInfer's nvcc commands run
`-ccbin $CC` (flashinfer-python 0.5.0 flashinfer/jit/cpp_ext.py:138-140, 0.7.2 :207-209), and the jit probe judges
$CC's cc1plus and major only where its resolved name is GCC's driver. That test (_GCC_DRIVER) took one prefix word
without a hyphen, so the Debian / Ubuntu name a gcc resolves to, x86_64-linux-gnu-gcc-N (the layout irev56's tests
use: /usr/bin/gcc -> gcc-N -> x86_64-linux-gnu-gcc-N), and every g++ (CC=g++-15: nvcc runs GCC's C++ driver, whose
__GNUC__ host_config.h reads the same) were not read: jit.cc_host_found true with no cc_host_gnu_* keys, so
flashinfer-jit-cc-host-version did not apply and a gcc 15 beside CUDA 12.8 (host_config.h takes 14 at most), or a
gcc without its g++, was allowed although FlashInfer's first JIT build fails (a false pass). nvcc_host_compiler's
NVCC_CCBIN reading (_CCBIN_GNU) already took both names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import CUDA_128_HOME, LLAMA3, cli_json, model_dir, release_box, toolkit_128_facts, touch_exe

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HEADER = (
    "#if defined(__GNUC__)\n\n#if __GNUC__ > 14\n\n#error -- unsupported GNU version! gcc versions later than 14 are "
    "not supported!\n\n#endif\n"
)
PATH = {"PATH": "/usr/bin"}
TRIPLET = "x86_64-linux-gnu"


def _box(root: Path, major: str, *, cc1plus: bool = True, good_path_gcc: bool = True) -> HostView:
    """CUDA 12.8 (gcc 14 at most); gcc-`major` and g++-`major` as Debian installs them (gcc-N -> TRIPLET-gcc-N, the
    program itself; g++-N -> TRIPLET-g++-N), cc1 (and cc1plus) in /usr/lib/gcc/TRIPLET/`major`; /usr/bin/gcc -> a
    good gcc 14 (with its g++) where `good_path_gcc`, so the PATH's gcc passes and only CC is wrong."""
    home = root / CUDA_128_HOME.lstrip("/")
    touch_exe(home / "bin/nvcc")
    (home / "include/crt").mkdir(parents=True, exist_ok=True)
    (home / "include/crt/host_config.h").write_text(HEADER)
    touch_exe(root / "usr/bin/c++")
    versions = {major: cc1plus, **({"14": True} if good_path_gcc and major != "14" else {})}
    for version, cxx in versions.items():
        for driver in ("gcc", "g++"):
            touch_exe(root / f"usr/bin/{TRIPLET}-{driver}-{version}")
            (root / f"usr/bin/{driver}-{version}").symlink_to(f"{TRIPLET}-{driver}-{version}")
        for name in ("cc1", "cc1plus") if cxx else ("cc1",):
            touch_exe(root / f"usr/lib/gcc/{TRIPLET}/{version}/{name}")
    (root / "usr/bin/gcc").symlink_to("gcc-14" if good_path_gcc else f"gcc-{major}")
    return HostView(str(root))


def _facts() -> dict[str, Any]:
    return toolkit_128_facts()


@pytest.mark.parametrize("cc", ["gcc-15", "/usr/bin/gcc-15", "g++-15", f"{TRIPLET}-gcc-15", f"{TRIPLET}-g++-15"])
def test_a_debian_gcc_15_named_by_cc_is_read(tmp_path: Path, cc: str) -> None:
    jit = probe_jit(_facts(), {**PATH, "CC": cc}, _box(tmp_path, "15"))
    assert jit["flashinfer_host"] == "cc" and jit["cc_host_found"] is True, jit
    assert jit.get("cc_host_gnu_major") == 15 and jit.get("cc_host_gnu_supported") is False, jit
    # the PATH's gcc 14 (nvcc's default, not FlashInfer's host compiler here) is good
    assert jit["nvcc_host_gnu_supported"] is True, jit


def test_cc_gcc_resolving_to_the_triplet_name_without_its_g_plus_plus(tmp_path: Path) -> None:
    jit = probe_jit(_facts(), {**PATH, "CC": "gcc"}, _box(tmp_path, "14", cc1plus=False, good_path_gcc=False))
    assert jit["cc_host_found"] is False and "cc1plus" in jit["cc_host_reason"], jit


def test_a_good_debian_gcc_named_by_cc_is_read_as_good(tmp_path: Path) -> None:
    jit = probe_jit(_facts(), {**PATH, "CC": "gcc"}, _box(tmp_path, "14"))
    assert jit["cc_host_found"] is True and jit["cc_host"] == "/usr/bin/gcc", jit
    assert jit.get("cc_host_gnu_major") == 14 and jit.get("cc_host_gnu_supported") is True, jit


def test_names_that_are_no_gcc_driver_stay_unread(tmp_path: Path) -> None:
    view = _box(tmp_path, "14")
    for name in ("clang", "x86_64-linux-gnu-gcc-ar-14", "gcc-wrapper", "nvc++"):
        touch_exe(tmp_path / "usr/bin" / name)
        jit = probe_jit(_facts(), {**PATH, "CC": name}, view)
        assert jit["cc_host_found"] is True and not any(k.startswith("cc_host_gnu") for k in jit), (name, jit)


def _gate(tmp_path: Path, jit: dict[str, Any]) -> dict[str, Any]:
    """gate of a Llama 3 launch on SGLang 0.5.5 with FlashInfer 0.5.3 and no flashinfer-jit-cache (iccjit's test
    box), the jit section's host-compiler keys from the probe."""
    path = release_box(tmp_path, "0.5.5", "9.0")
    doc = json.loads(path.read_text())
    packages = doc["facts"]["packages"]
    packages["flashinfer-python"].update(version="0.5.3", dist_version="0.5.3")
    packages["sgl-kernel"] = {"installed": True, "version": "0.3.16.post5", "location": "/x"}
    packages["sglang-kernel"] = {"installed": False}
    packages["torch"].update(version="2.8.0+cu128", dist_version="2.8.0")
    keys = ("cxx", "nvcc_host", "flashinfer_host", "flashinfer_allow_unsupported", "cc_host")
    doc["facts"]["jit"].update({k: v for k, v in jit.items() if k.startswith(keys) and not k.startswith("cxx_")})
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--allow-unknown", "--format", "json", "--", *line])[1]


def _fails(doc: dict[str, Any], rule: str) -> bool:
    reasons = [x for r in doc.get("reasons") or [] for x in r.get("reasons") or []]
    return any(x.get("rule") == rule and x.get("result") == "fail" for x in reasons)


@pytest.mark.parametrize("cc", ["gcc-15", "g++-15"])
def test_the_gate_refuses_cc_naming_a_debian_gcc_15_beside_cuda_12_8(tmp_path: Path, cc: str) -> None:
    doc = _gate(tmp_path, probe_jit(_facts(), {**PATH, "CC": cc}, _box(tmp_path / "box", "15")))
    assert doc["decision"] == "refuse" and _fails(doc, "flashinfer-jit-cc-host-version"), doc.get("reasons")


def test_the_gate_refuses_cc_gcc_without_its_g_plus_plus(tmp_path: Path) -> None:
    view = _box(tmp_path / "box", "14", cc1plus=False, good_path_gcc=False)
    doc = _gate(tmp_path, probe_jit(_facts(), {**PATH, "CC": "gcc"}, view))
    assert doc["decision"] == "refuse" and _fails(doc, "flashinfer-jit-cc-host"), doc.get("reasons")


def test_the_gate_allows_cc_naming_the_good_debian_gcc(tmp_path: Path) -> None:
    doc = _gate(tmp_path, probe_jit(_facts(), {**PATH, "CC": "gcc"}, _box(tmp_path / "box", "14")))
    assert doc["decision"] == "allow", doc.get("reasons")


def test_an_empty_flashinfer_nvcc_is_not_read_as_the_toolkits(tmp_path: Path) -> None:
    """FlashInfer writes `nvcc = $FLASHINFER_NVCC` into its ninja file whenever the variable is set (0.5.0
    flashinfer/jit/cpp_ext.py:198, 0.7.2 :289: os.environ.get('FLASHINFER_NVCC', '$cuda_home/bin/nvcc')), so an
    empty one leaves its compile rule (0.7.2 :317 '$nvcc_launcher $nvcc --generate-dependencies-with-compile ...')
    without a compiler: the probe read it as unset (nvcc's default host compiler judged, the gate allowed)."""
    jit = probe_jit(_facts(), {**PATH, "FLASHINFER_NVCC": ""}, _box(tmp_path / "box", "14"))
    assert jit["flashinfer_host"] is None and "FLASHINFER_NVCC" in jit["flashinfer_host_reason"], jit
    doc = _gate(tmp_path, jit)
    rules = {x.get("rule"): x.get("result") for r in doc.get("warnings") or [] for x in r.get("reasons") or []}
    assert rules.get("flashinfer-jit-cc-host") == "unknown", doc.get("warnings")
